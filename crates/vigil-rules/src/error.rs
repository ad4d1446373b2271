//! The one error type for rules and their support files.

use crate::span::Span;
use std::fmt;
use std::sync::Arc;

/// What sort of problem a [`RuleError`] is, for counting and for tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorKind {
    /// The text is not a rule: header, option list, quoting, escapes.
    Syntax,
    /// An option name no keyword has.
    UnknownKeyword,
    /// A keyword's value does not parse or is out of range.
    Value,
    /// Keywords that parse alone but not together (modifier without
    /// content, conflicting modifiers, missing `sid`, ...).
    Semantic,
    /// A `$VAR` that is undefined, or whose value is bad.
    Variable,
    /// A gid:sid pair that an earlier rule already has.
    Duplicate,
    /// Valid Snort syntax that Suricata does not accept.
    Snort,
    /// A file that cannot be read.
    Io,
}

impl ErrorKind {
    /// A short stable name (`syntax`, `unknown-keyword`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Syntax => "syntax",
            ErrorKind::UnknownKeyword => "unknown-keyword",
            ErrorKind::Value => "value",
            ErrorKind::Semantic => "semantic",
            ErrorKind::Variable => "variable",
            ErrorKind::Duplicate => "duplicate",
            ErrorKind::Snort => "snort-only",
            ErrorKind::Io => "io",
        }
    }
}

/// Longest reason kept, in bytes.
const MAX_REASON: usize = 240;

/// A problem with one rule (or one line of a support file): where it is,
/// which keyword it concerns, and why.
///
/// Displays as `emerging-foo.rules:123:45: pcre: unknown flag 'Z'`, or
/// without the keyword part when the problem is not about one keyword.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleError {
    /// The file as it was named to the loader.
    pub file: Arc<str>,
    /// 1-based line; 0 when the problem is about the whole file.
    pub line: u32,
    /// 1-based column; 0 when unknown.
    pub column: u32,
    /// The keyword the problem is about, as written in the rule.
    pub keyword: Option<String>,
    /// What is wrong, in words.
    pub reason: String,
    /// What sort of problem this is.
    pub kind: ErrorKind,
    /// The rule's sid when it was known before the error.
    pub sid: Option<u32>,
}

impl RuleError {
    /// An error at `span` in `file`.
    pub fn at(file: &Arc<str>, span: Span, kind: ErrorKind, keyword: Option<&str>, reason: impl Into<String>) -> Self {
        let mut reason = reason.into();
        // Messages quote the offending text; a megabyte of it helps no one.
        if reason.len() > MAX_REASON {
            let mut cut = MAX_REASON;
            while !reason.is_char_boundary(cut) {
                cut -= 1;
            }
            reason.truncate(cut);
            reason.push_str("...");
        }
        let keyword = keyword.map(|k| k.chars().take(64).collect());
        RuleError { file: file.clone(), line: span.line, column: span.column, keyword, reason, kind, sid: None }
    }
}

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if self.line > 0 {
            write!(f, ":{}:{}", self.line, self.column)?;
        }
        match &self.keyword {
            Some(k) => write!(f, ": {}: {}", k, self.reason),
            None => write!(f, ": {}", self.reason),
        }
    }
}

impl std::error::Error for RuleError {}

/// A problem found while parsing one value: the byte offset inside the
/// value where it was seen, and why. The rule parser turns it into a
/// [`RuleError`] with a file position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueError {
    /// Byte offset inside the parsed text.
    pub at: usize,
    pub reason: String,
    pub kind: ErrorKind,
}

impl fmt::Display for ValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at byte {}: {}", self.at, self.reason)
    }
}

impl ValueError {
    pub(crate) fn new(at: usize, reason: impl Into<String>) -> Self {
        ValueError { at, reason: reason.into(), kind: ErrorKind::Value }
    }

    pub(crate) fn kind(mut self, kind: ErrorKind) -> Self {
        self.kind = kind;
        self
    }

    /// The same error, `by` bytes further into an enclosing value.
    pub(crate) fn shift(mut self, by: usize) -> Self {
        self.at += by;
        self
    }
}

/// The result of parsing one value.
pub type VResult<T> = Result<T, ValueError>;

pub(crate) fn verr<T>(at: usize, reason: impl Into<String>) -> VResult<T> {
    Err(ValueError::new(at, reason))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_with_and_without_keyword() {
        let file: Arc<str> = Arc::from("emerging-foo.rules");
        let span = Span { start: 0, end: 1, line: 123, column: 45 };
        let e = RuleError::at(&file, span, ErrorKind::Value, Some("pcre"), "unknown flag 'Z'");
        assert_eq!(e.to_string(), "emerging-foo.rules:123:45: pcre: unknown flag 'Z'");
        let e = RuleError::at(&file, span, ErrorKind::Syntax, None, "no options");
        assert_eq!(e.to_string(), "emerging-foo.rules:123:45: no options");
    }
}
