//! vigil's own messages for the `logging` file outputs: every rule that
//! failed to load (its reason, then the rule), the load summary, and the
//! configuration warnings. A `type: json` file gets EVE `engine` records,
//! so a Suricata user finds start-up problems where they look for them;
//! any other file gets one line per message. The console keeps its own
//! wording (`Setup::warnings`).

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use vigil_config::{LogLevel, Logging};
use vigil_rules::{ErrorKind, RuleError};
use vigil_types::Timestamp;

/// One message, with the part of the engine that speaks, in Suricata's
/// module names (`detect` for rule loading, `detect-content` for a content
/// problem, `config` for the configuration).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogRecord {
    pub level: LogLevel,
    pub module: String,
    pub message: String,
}

impl LogRecord {
    pub fn new(level: LogLevel, module: impl Into<String>, message: impl Into<String>) -> Self {
        LogRecord { level, module: module.into(), message: message.into() }
    }
}

/// A rule that failed to load, as the control socket's
/// `ruleset-failed-rules` lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FailedRule {
    /// The rule as written (its first line when it continues on others).
    pub rule: String,
    pub filename: String,
    pub line: u32,
}

/// Each failed rule's text, read again from its file (only files with a
/// failed rule are read); problems with a whole file have no rule and are left out.
pub(crate) fn failed_rules(errors: &[RuleError]) -> Vec<FailedRule> {
    let mut lines: HashMap<&str, Option<Vec<String>>> = HashMap::new();
    errors
        .iter()
        .filter(|e| e.line > 0)
        .map(|e| {
            let file = lines.entry(&e.file).or_insert_with(|| {
                std::fs::read_to_string(&*e.file).ok().map(|t| t.lines().map(str::to_string).collect())
            });
            let text = file.as_ref().and_then(|l| l.get(e.line as usize - 1)).map_or("", |l| l.trim());
            FailedRule { rule: text.to_string(), filename: e.file.to_string(), line: e.line }
        })
        .collect()
}

/// Two records per rule that failed, as Suricata logs them: the reason
/// (from the keyword's module) and the rule itself (from `detect`).
pub(crate) fn rule_error_records(errors: &[RuleError], failed: &[FailedRule]) -> Vec<LogRecord> {
    let mut texts = failed.iter();
    let mut out = Vec::with_capacity(errors.len() * 2);
    for e in errors {
        let module = match (&e.keyword, e.kind) {
            (_, ErrorKind::Duplicate | ErrorKind::Io) => "detect".to_string(),
            (Some(k), _) => format!("detect-{}", k.to_ascii_lowercase().replace(['_', '.'], "-")),
            (None, _) => "detect-parse".to_string(),
        };
        out.push(LogRecord::new(LogLevel::Error, module, e.reason.clone()));
        // `failed` holds the errors with a line, in the same order.
        if e.line == 0 {
            continue;
        }
        let Some(f) = texts.next() else { continue };
        out.push(LogRecord::new(
            LogLevel::Error,
            "detect",
            format!("error parsing signature \"{}\" from file {} at line {}", f.rule, f.filename, f.line),
        ));
    }
    out
}

/// The load summary, and a warning when rule files were named but nothing loaded.
pub(crate) fn load_summary_records(
    files: usize,
    loaded: usize,
    failed: usize,
    skipped: usize,
    unsupported: usize,
) -> Vec<LogRecord> {
    let mut summary = format!(
        "{files} rule files processed. {loaded} rules successfully loaded, {failed} rules failed, {skipped} rules skipped"
    );
    if unsupported > 0 {
        summary.push_str(&format!(", {unsupported} rules use keywords vigil does not run yet"));
    }
    let mut out = vec![LogRecord::new(LogLevel::Info, "detect", summary)];
    if files > 0 && loaded == 0 {
        out.push(LogRecord::new(
            LogLevel::Warning,
            "detect",
            format!("{files} rule files specified, but no rules were loaded!"),
        ));
    }
    out
}

/// Writes what Lua scripts raised while running (each message with its
/// level's name) to the `logging` outputs of `log` (outputs and their
/// directory) and, at warning and above, to the console: failures
/// (`Warning`) under `module` (`detect-lua`), a script's own
/// `suricata.log` lines under `lua-log`, as Suricata logs them.
pub(crate) fn write_lua(
    messages: Vec<(&'static str, String)>,
    module: &str,
    log: Option<&(Logging, std::path::PathBuf)>,
) {
    let records: Vec<LogRecord> = messages
        .into_iter()
        .map(|(level, m)| match level {
            "Warning" => LogRecord::new(LogLevel::Warning, module, m),
            other => LogRecord::new(LogLevel::parse(other).unwrap_or(LogLevel::Info), "lua-log", m),
        })
        .collect();
    for r in records.iter().filter(|r| r.level <= LogLevel::Warning) {
        let level = if r.level == LogLevel::Error { "error" } else { "warning" };
        eprintln!("vigil: {level}: {}: {}", r.module, r.message);
    }
    if let Some(log) = log {
        // A log file that cannot be written was warned about at start-up.
        let _ = write(&log.0, &log.1, &records);
    }
}

/// Appends `records` to every `logging` file output, each keeping the
/// records at or above its level. A relative file name is in `log_dir`.
/// A file that cannot be written is a warning, as in Suricata: the run
/// does not depend on its log files. Returns those warnings.
pub(crate) fn write(logging: &Logging, log_dir: &Path, records: &[LogRecord]) -> Vec<String> {
    let mut problems = Vec::new();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(Timestamp::default(), |d| Timestamp::from_micros(d.as_secs() as i64, d.subsec_micros()));
    for out in &logging.files {
        let path = log_path(log_dir, &out.filename);
        let mut text = String::new();
        for r in records.iter().filter(|r| r.level <= out.level) {
            if out.json {
                let rec = vigil_output::engine_record(now, r.level.name(), &r.module, &r.message);
                text.push_str(&rec.to_string());
            } else {
                text.push_str(&format!(
                    "{} - <{}> - {}: {}",
                    vigil_output::format_timestamp(now),
                    r.level.name(),
                    r.module,
                    r.message
                ));
            }
            text.push('\n');
        }
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| f.write_all(text.as_bytes()));
        if let Err(e) = written {
            problems.push(format!("logging: {}: {e}; this log file is not written", path.display()));
        }
    }
    problems
}

/// A configured file name, relative to the log directory unless absolute.
pub(crate) fn log_path(log_dir: &std::path::Path, filename: &str) -> std::path::PathBuf {
    if std::path::Path::new(filename).is_absolute() {
        std::path::Path::new(filename).to_path_buf()
    } else {
        log_dir.join(filename)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn rule_error(file: &Arc<str>, line: u32, keyword: Option<&str>, kind: ErrorKind) -> RuleError {
        RuleError {
            file: file.clone(),
            line,
            column: 1,
            keyword: keyword.map(str::to_string),
            reason: "why".into(),
            kind,
            sid: None,
        }
    }

    #[test]
    fn a_failed_rule_gives_its_reason_then_the_rule() {
        let dir = std::env::temp_dir().join(format!("vigil-log-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.rules");
        std::fs::write(&path, "# c\n  alert tcp any any -> any any (within:3; sid:1;)\n").unwrap();
        let file: Arc<str> = path.display().to_string().into();
        let errors = [
            rule_error(&file, 2, Some("within"), ErrorKind::Semantic),
            rule_error(&file, 0, None, ErrorKind::Io),
            rule_error(&file, 2, None, ErrorKind::Syntax),
            rule_error(&file, 2, Some("sid"), ErrorKind::Duplicate),
        ];
        let failed = failed_rules(&errors);
        assert_eq!(failed.len(), 3, "a whole-file problem names no rule");
        assert_eq!(
            (failed[0].rule.as_str(), failed[0].filename.as_str(), failed[0].line),
            ("alert tcp any any -> any any (within:3; sid:1;)", &*file, 2)
        );
        let recs = rule_error_records(&errors, &failed);
        let modules: Vec<&str> = recs.iter().map(|r| r.module.as_str()).collect();
        assert_eq!(modules, ["detect-within", "detect", "detect", "detect-parse", "detect", "detect", "detect"]);
        assert_eq!(
            recs[1].message,
            format!("error parsing signature \"alert tcp any any -> any any (within:3; sid:1;)\" from file {file} at line 2")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn nothing_loaded_is_warned_about() {
        let recs = load_summary_records(1, 0, 2, 0, 0);
        assert_eq!(recs.len(), 2);
        assert_eq!(
            recs[0].message,
            "1 rule files processed. 0 rules successfully loaded, 2 rules failed, 0 rules skipped"
        );
        assert_eq!(recs[1].level, LogLevel::Warning);
        assert_eq!(load_summary_records(1, 3, 0, 0, 1).len(), 1);
    }

    #[test]
    fn an_unwritable_file_is_a_warning() {
        let logging = Logging {
            default_level: LogLevel::Info,
            files: vec![vigil_config::LogFile {
                level_given: true,
                filename: "/nonexistent/dir/s.log".into(),
                json: false,
                level: LogLevel::Info,
            }],
        };
        let problems = write(&logging, Path::new("."), &[LogRecord::new(LogLevel::Error, "detect", "bad")]);
        assert_eq!(problems.len(), 1);
        assert!(problems[0].starts_with("logging: /nonexistent/dir/s.log:"), "{problems:?}");
    }

    #[test]
    fn files_keep_records_at_their_level() {
        let dir = std::env::temp_dir().join(format!("vigil-logw-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let logging = Logging {
            default_level: LogLevel::Info,
            files: vec![
                vigil_config::LogFile {
                    filename: "e.json".into(),
                    json: true,
                    level: LogLevel::Info,
                    level_given: true,
                },
                vigil_config::LogFile {
                    filename: "w.log".into(),
                    json: false,
                    level: LogLevel::Warning,
                    level_given: true,
                },
            ],
        };
        let recs = [LogRecord::new(LogLevel::Error, "detect", "bad"), LogRecord::new(LogLevel::Info, "detect", "sum")];
        assert!(write(&logging, &dir, &recs).is_empty());
        let json = std::fs::read_to_string(dir.join("e.json")).unwrap();
        let lines: Vec<serde_json::Value> = json.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["engine"]["message"], "bad");
        assert_eq!(lines[0]["log_level"], "Error");
        let text = std::fs::read_to_string(dir.join("w.log")).unwrap();
        assert_eq!(text.lines().count(), 1);
        assert!(text.contains("<Error> - detect: bad"), "{text}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
