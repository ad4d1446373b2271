//! `classification.config` (`config classification: name,description,priority`)
//! and `reference.config` (`config reference: system URL-prefix`).
//!
//! Bad lines are reported with file:line and skipped; the rest loads.

use crate::error::{ErrorKind, RuleError};
use crate::span::Span;
use std::collections::HashMap;
use std::sync::Arc;

/// One classtype.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Classtype {
    pub name: String,
    pub description: String,
    pub priority: u8,
}

/// The classtypes of a `classification.config`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Classifications {
    by_name: HashMap<String, Classtype>,
}

fn line_error(file: &Arc<str>, line: usize, column: usize, reason: String) -> RuleError {
    let span = Span { start: 0, end: 0, line: line as u32, column: column as u32 };
    RuleError::at(file, span, ErrorKind::Syntax, None, reason)
}

/// The lines of a config file that carry `config <what>:`, with their
/// 1-based line numbers and the text after the colon.
fn config_lines<'a>(
    text: &'a str,
    what: &'a str,
    file: &'a Arc<str>,
    errors: &'a mut Vec<RuleError>,
) -> impl Iterator<Item = (usize, usize, &'a str)> + 'a {
    text.lines().enumerate().filter_map(move |(i, line)| {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            return None;
        }
        let lead = line.len() - line.trim_start().len();
        let rest = t.strip_prefix("config").map(str::trim_start);
        match rest.and_then(|r| r.strip_prefix(what)).map(str::trim_start).and_then(|r| r.strip_prefix(':')) {
            Some(body) => {
                let b = body.trim_start();
                Some((i + 1, lead + (t.len() - b.len()) + 1, b.trim_end()))
            }
            None => {
                errors.push(line_error(file, i + 1, lead + 1, format!("expected 'config {what}: ...', got '{t}'")));
                None
            }
        }
    })
}

impl Classifications {
    /// Parses a classification file's text. Returns the classtypes and the
    /// problems (a later definition of a name replaces the earlier one).
    pub fn parse(text: &str, file_name: &str) -> (Classifications, Vec<RuleError>) {
        let file: Arc<str> = Arc::from(file_name);
        let mut errors = Vec::new();
        let mut out = Classifications::default();
        let mut lines_errors = Vec::new();
        for (line, col, body) in config_lines(text, "classification", &file, &mut lines_errors) {
            let parts: Vec<&str> = body.split(',').map(str::trim).collect();
            if parts.len() != 3 || parts[0].is_empty() {
                errors.push(line_error(
                    &file,
                    line,
                    col,
                    format!("expected 'name,description,priority', got '{body}'"),
                ));
                continue;
            }
            let priority = match parts[2].parse::<u8>() {
                Ok(p) if p > 0 => p,
                _ => {
                    errors.push(line_error(&file, line, col, format!("invalid priority '{}' (1-255)", parts[2])));
                    continue;
                }
            };
            let ct = Classtype { name: parts[0].to_string(), description: parts[1].to_string(), priority };
            out.by_name.insert(ct.name.to_ascii_lowercase(), ct);
        }
        errors.extend(lines_errors);
        errors.sort_by_key(|e| e.line);
        (out, errors)
    }

    /// The classtype `name` (case-insensitive, as Suricata looks it up).
    pub fn get(&self, name: &str) -> Option<&Classtype> {
        self.by_name.get(&name.to_ascii_lowercase())
    }

    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }
}

/// The reference systems of a `reference.config`: system → URL prefix.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct References {
    by_system: HashMap<String, String>,
}

impl References {
    /// Parses a reference file's text.
    pub fn parse(text: &str, file_name: &str) -> (References, Vec<RuleError>) {
        let file: Arc<str> = Arc::from(file_name);
        let mut errors = Vec::new();
        let mut out = References::default();
        let mut lines_errors = Vec::new();
        for (line, col, body) in config_lines(text, "reference", &file, &mut lines_errors) {
            match body.split_once(char::is_whitespace) {
                Some((sys, url)) if !url.trim().is_empty() => {
                    out.by_system.insert(sys.to_ascii_lowercase(), url.trim().to_string());
                }
                _ => errors.push(line_error(&file, line, col, format!("expected 'system URL', got '{body}'"))),
            }
        }
        errors.extend(lines_errors);
        errors.sort_by_key(|e| e.line);
        (out, errors)
    }

    /// The URL prefix of `system` (case-insensitive).
    pub fn url(&self, system: &str) -> Option<&str> {
        self.by_system.get(&system.to_ascii_lowercase()).map(String::as_str)
    }

    pub fn len(&self) -> usize {
        self.by_system.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_system.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_copy_parses() {
        let text = include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/reference/suricata-8.0/classification.config"
        ));
        let (c, errs) = Classifications::parse(text, "classification.config");
        assert!(errs.is_empty(), "{errs:?}");
        let t = c.get("trojan-activity").unwrap();
        assert_eq!((t.description.as_str(), t.priority), ("A Network Trojan was detected", 1));
        let text = include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/reference/suricata-8.0/reference.config"
        ));
        let (r, errs) = References::parse(text, "reference.config");
        assert!(errs.is_empty(), "{errs:?}");
        assert_eq!(r.url("cve"), Some("https://cve.mitre.org/cgi-bin/cvename.cgi?name="));
    }

    #[test]
    fn bad_lines_name_file_and_line() {
        let (c, errs) = Classifications::parse(
            "# c\nconfig classification: a,A,1\nconfig classification: b,B\nconfig classify: c,C,1\nconfig classification: d,D,x\n",
            "cls.config",
        );
        assert_eq!(c.len(), 1);
        let msgs: Vec<String> = errs.iter().map(|e| e.to_string()).collect();
        assert_eq!(
            msgs,
            vec![
                "cls.config:3:24: expected 'name,description,priority', got 'b,B'",
                "cls.config:4:1: expected 'config classification: ...', got 'config classify: c,C,1'",
                "cls.config:5:24: invalid priority 'x' (1-255)",
            ]
        );
    }
}
