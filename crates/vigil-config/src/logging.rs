//! `logging`: where vigil's own messages (rule errors, warnings, the rule
//! load summary) go besides the console. A `- file:` output of `type: json`
//! writes them as EVE `engine` records, which is how Suricata users collect
//! start-up problems next to their alerts.

use crate::read::{Errors, Section};

/// A message's level, in Suricata's order (most severe first).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    Error,
    Warning,
    Notice,
    Info,
    Perf,
    Config,
    Debug,
}

impl LogLevel {
    /// The level named `s` (`error`, `warning`, `notice`, `info`, `perf`,
    /// `config`, `debug`), case-insensitively.
    pub fn parse(s: &str) -> Option<LogLevel> {
        Some(match s.to_ascii_lowercase().as_str() {
            "error" => LogLevel::Error,
            "warning" => LogLevel::Warning,
            "notice" => LogLevel::Notice,
            "info" => LogLevel::Info,
            "perf" => LogLevel::Perf,
            "config" => LogLevel::Config,
            "debug" => LogLevel::Debug,
            _ => return None,
        })
    }

    /// The name EVE `engine` records carry in `log_level`.
    pub fn name(self) -> &'static str {
        match self {
            LogLevel::Error => "Error",
            LogLevel::Warning => "Warning",
            LogLevel::Notice => "Notice",
            LogLevel::Info => "Info",
            LogLevel::Perf => "Perf",
            LogLevel::Config => "Config",
            LogLevel::Debug => "Debug",
        }
    }
}

/// `logging`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Logging {
    /// `default-log-level`. Default `notice`.
    pub default_level: LogLevel,
    /// The enabled `- file:` outputs.
    pub files: Vec<LogFile>,
}

/// `logging.outputs` `- file:`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogFile {
    /// `filename`, relative to the log directory unless absolute.
    pub filename: String,
    /// `type: json`: EVE `engine` records; otherwise one line per message.
    pub json: bool,
    /// `level`, else the default level.
    pub level: LogLevel,
    /// `level` was given: `-v` leaves it as it is.
    pub level_given: bool,
}

impl Default for Logging {
    /// The stock file's: `suricata.log` in the log directory, at info.
    fn default() -> Self {
        Logging {
            default_level: LogLevel::Notice,
            files: vec![LogFile {
                filename: "suricata.log".into(),
                json: false,
                level: LogLevel::Info,
                level_given: true,
            }],
        }
    }
}

impl Logging {
    /// No file outputs: what a config without a `logging` section gets.
    pub fn none() -> Self {
        Logging { default_level: LogLevel::Notice, files: Vec::new() }
    }
}

impl Logging {
    pub(crate) fn read(sec: &Section<'_>, errs: &mut Errors) -> Logging {
        if sec.node.is_none() {
            return Logging::none();
        }
        let level = |s: &Section<'_>, key: &str, default: LogLevel, errs: &mut Errors| {
            s.convert(key, errs, |v| LogLevel::parse(v).ok_or_else(|| format!("unknown log level {v:?}")))
                .unwrap_or(default)
        };
        let default_level = level(sec, "default-log-level", LogLevel::Notice, errs);
        let mut files = Vec::new();
        for item in sec.child("outputs").children() {
            let Some(name) = item.node.and_then(|n| n.value()) else { continue };
            if name != "file" {
                continue;
            }
            let conf = item.child(name);
            if !conf.bool("enabled", false, errs) {
                continue;
            }
            let Some(filename) = conf.string("filename", errs) else {
                conf.error("filename", errs, "a file output needs a filename");
                continue;
            };
            let json = conf.string("type", errs).is_some_and(|t| t.eq_ignore_ascii_case("json"));
            let level_given = conf.child("level").node.is_some();
            files.push(LogFile { filename, json, level: level(&conf, "level", default_level, errs), level_given });
        }
        Logging { default_level, files }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Config, ConfigTree};

    fn logging(yaml: &str) -> Logging {
        let tree = ConfigTree::parse_str(yaml, "t.yaml").unwrap();
        let (config, errs, _) = Config::from_tree(&tree);
        assert!(errs.is_empty(), "{errs:?}");
        config.logging
    }

    #[test]
    fn a_json_file_output_is_read_with_its_level() {
        let l = logging(
            "%YAML 1.1\n---\nlogging:\n  default-log-level: info\n  outputs:\n  - console:\n      enabled: yes\n  - file:\n      enabled: yes\n      filename: eve.json\n      type: json\n  - file:\n      enabled: no\n      filename: off.log\n",
        );
        assert_eq!(l.default_level, LogLevel::Info);
        assert_eq!(
            l.files,
            vec![LogFile { filename: "eve.json".into(), json: true, level: LogLevel::Info, level_given: false }]
        );
    }

    #[test]
    fn the_file_level_overrides_the_default() {
        let l = logging("%YAML 1.1\n---\nlogging:\n  outputs:\n  - file:\n      enabled: yes\n      level: error\n      filename: s.log\n");
        assert_eq!(l.default_level, LogLevel::Notice);
        assert_eq!(l.files[0].level, LogLevel::Error);
        assert!(!l.files[0].json);
    }
}
