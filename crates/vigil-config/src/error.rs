//! Source positions and the one error type of this crate.

use std::fmt;
use std::sync::Arc;

/// Where a node or a problem comes from: a file (as it was named when
/// loaded), a 1-based line and a 1-based column.
///
/// Values given on the command line (`--set`) have no line; their `file` is
/// `"--set"` and `line`/`column` are 0.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Position {
    /// The file name as given to the loader (or `--set`, `<string>`).
    pub file: Arc<str>,
    /// 1-based line; 0 when the source has no lines (command line).
    pub line: u32,
    /// 1-based column; 0 when unknown.
    pub column: u32,
}

impl Position {
    /// A position inside `file`.
    pub fn new(file: Arc<str>, line: u32, column: u32) -> Self {
        Position { file, line, column }
    }

    /// The position given to values that come from `--set key=value`.
    pub fn command_line() -> Self {
        Position { file: Arc::from("--set"), line: 0, column: 0 }
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}", self.file)
        } else {
            write!(f, "{}:{}:{}", self.file, self.line, self.column)
        }
    }
}

/// A configuration problem: where, which key (when there is one), and why.
///
/// Displays as `suricata.yaml:123:7: stats.interval: expected an integer, got "ten"`,
/// or without the key part for problems that are not about one key (YAML
/// syntax, unreadable include).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// Where the problem is.
    pub position: Position,
    /// The full dotted key (`outputs.1.eve-log.filetype`), when the problem is
    /// about a key's value.
    pub key: Option<String>,
    /// What is wrong, in words.
    pub reason: String,
    /// Suricata refuses to start on this one (a size it cannot read, an
    /// output module it does not have), so vigil refuses too; the others
    /// are warnings, the key keeping its default.
    pub fatal: bool,
}

impl ConfigError {
    /// A problem that is not tied to one key (syntax, I/O, includes).
    pub fn at(position: Position, reason: impl Into<String>) -> Self {
        ConfigError { position, key: None, reason: reason.into(), fatal: false }
    }

    /// A problem with the value of `key`.
    pub fn key(position: Position, key: impl Into<String>, reason: impl Into<String>) -> Self {
        ConfigError { position, key: Some(key.into()), reason: reason.into(), fatal: false }
    }

    /// The same problem, one Suricata refuses to start on.
    pub fn fatal(self) -> Self {
        ConfigError { fatal: true, ..self }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.position)?;
        if let Some(key) = &self.key {
            write!(f, "{key}: ")?;
        }
        f.write_str(&self.reason)
    }
}

impl std::error::Error for ConfigError {}
