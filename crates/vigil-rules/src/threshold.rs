//! `threshold.config`: global `threshold`/`event_filter`, `suppress` and
//! `rate_filter` lines.
//!
//! ```text
//! threshold gen_id 1, sig_id 2404000, type limit, track by_dst, count 1, seconds 10
//! suppress gen_id 1, sig_id 2009557, track by_src, ip 217.110.97.128/25
//! rate_filter gen_id 1, sig_id 1000001, track by_rule, count 1, seconds 60, new_action drop, timeout 10
//! ```
//!
//! A bad line is reported as `threshold.config:12:5: suppress: ...` and
//! skipped.

use crate::address::{parse_address, AddrExpr};
use crate::error::{ErrorKind, RuleError};
use crate::intcmp::parse_u64;
use crate::keywords::post::{finish_threshold, key_value, threshold_item, Threshold, ThresholdItems, Track};
use crate::span::Span;
use std::sync::Arc;

/// One line of a threshold file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ThresholdEntry {
    /// `threshold` or `event_filter` (the same thing).
    Threshold { gid: u32, sid: u32, threshold: Threshold },
    /// `suppress`: all alerts of the rule, or those with `ip` on the
    /// tracked side.
    Suppress { gid: u32, sid: u32, track: Option<Track>, ip: Option<AddrExpr> },
    /// `rate_filter`: change the action once the rate is exceeded.
    RateFilter { gid: u32, sid: u32, track: Track, count: u32, seconds: u32, new_action: String, timeout: u32 },
}

/// A parsed threshold file: entries with their 1-based line numbers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ThresholdConfig {
    pub entries: Vec<(u32, ThresholdEntry)>,
}

/// Splits at commas outside brackets (suppress `ip [a,b]`).
fn split_items(s: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push((start, &s[start..i]));
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push((start, &s[start..]));
    out
}

struct LineErr {
    col: usize,
    reason: String,
}

fn lerr<T>(col: usize, reason: impl Into<String>) -> Result<T, LineErr> {
    Err(LineErr { col, reason: reason.into() })
}

impl ThresholdConfig {
    /// Parses a threshold file's text.
    pub fn parse(text: &str, file_name: &str) -> (ThresholdConfig, Vec<RuleError>) {
        let file: Arc<str> = Arc::from(file_name);
        let mut out = ThresholdConfig::default();
        let mut errors = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let t = line.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            let lead = line.len() - line.trim_start().len();
            let word = t.split_whitespace().next().unwrap_or("");
            match parse_line(t) {
                Ok(e) => out.entries.push((i as u32 + 1, e)),
                Err(e) => {
                    let span = Span { start: 0, end: 0, line: i as u32 + 1, column: (lead + e.col + 1) as u32 };
                    let kw = matches!(word, "threshold" | "event_filter" | "suppress" | "rate_filter").then_some(word);
                    errors.push(RuleError::at(&file, span, ErrorKind::Syntax, kw, e.reason));
                }
            }
        }
        (out, errors)
    }
}

fn parse_line(t: &str) -> Result<ThresholdEntry, LineErr> {
    let (word, rest) = t.split_once(char::is_whitespace).unwrap_or((t, ""));
    let base = word.len() + (t.len() - word.len() - rest.len());
    if !matches!(word, "threshold" | "event_filter" | "suppress" | "rate_filter") {
        return lerr(0, format!("unknown directive '{word}' (threshold, event_filter, suppress, rate_filter)"));
    }
    let (mut gid, mut sid) = (None, None);
    let mut items = ThresholdItems::default();
    let mut ip = None;
    let mut new_action = None;
    let mut timeout = None;
    for (at, item) in split_items(rest) {
        let (o, k, v) = key_value(item);
        let col = base + at + o;
        let vcol = col + k.len() + 1;
        let num = |v: &str| parse_u64(v, u32::MAX as u64).map(|n| n as u32).or_else(|e| lerr(vcol + e.at, e.reason));
        match k {
            "gen_id" => gid = Some(num(v)?),
            "sig_id" => sid = Some(num(v)?),
            "ip" if word == "suppress" => {
                ip = Some(parse_address(v).or_else(|e| lerr(vcol + e.at, format!("ip: {}", e.reason)))?);
            }
            "new_action" if word == "rate_filter" => {
                if !matches!(v, "alert" | "drop" | "pass" | "reject" | "rejectsrc" | "rejectdst" | "rejectboth") {
                    return lerr(vcol, format!("unknown new_action '{v}'"));
                }
                new_action = Some(v.to_string());
            }
            "timeout" if word == "rate_filter" => timeout = Some(num(v)?),
            "type" if word == "rate_filter" || word == "suppress" => {
                return lerr(col, format!("'type' is not used by {word}"))
            }
            _ => {
                let known = threshold_item(&mut items, k, v, vcol).or_else(|e| lerr(e.at, e.reason))?;
                if !known {
                    return lerr(col, format!("unknown option '{k}'"));
                }
            }
        }
    }
    let gid = gid.ok_or(()).or_else(|_| lerr(0, "missing 'gen_id'"))?;
    let sid = sid.ok_or(()).or_else(|_| lerr(0, "missing 'sig_id'"))?;
    match word {
        "suppress" => {
            if items.count.is_some() || items.seconds.is_some() || items.multiplier.is_some() {
                return lerr(0, "suppress takes only gen_id, sig_id, track and ip");
            }
            if items.track.is_some() != ip.is_some() {
                return lerr(0, "suppress needs both 'track' and 'ip', or neither");
            }
            if matches!(items.track, Some(Track::ByRule | Track::ByFlow | Track::ByBoth)) {
                return lerr(0, "suppress track must be by_src, by_dst or by_either");
            }
            Ok(ThresholdEntry::Suppress { gid, sid, track: items.track, ip })
        }
        "rate_filter" => {
            let track = items.track.ok_or(()).or_else(|_| lerr(0, "missing 'track'"))?;
            let count = items.count.ok_or(()).or_else(|_| lerr(0, "missing 'count'"))?;
            let seconds = items.seconds.ok_or(()).or_else(|_| lerr(0, "missing 'seconds'"))?;
            let new_action = new_action.ok_or(()).or_else(|_| lerr(0, "missing 'new_action'"))?;
            let timeout = timeout.ok_or(()).or_else(|_| lerr(0, "missing 'timeout'"))?;
            Ok(ThresholdEntry::RateFilter { gid, sid, track, count, seconds, new_action, timeout })
        }
        _ => {
            let threshold = finish_threshold(items, true).or_else(|m| lerr(0, m))?;
            Ok(ThresholdEntry::Threshold { gid, sid, threshold })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conformance_files_parse() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/conformance/suricata-verify/tests");
        let mut n = 0;
        let mut stack = vec![std::path::PathBuf::from(root)];
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.file_name().is_some_and(|f| f == "threshold.config") {
                    let text = std::fs::read_to_string(&p).unwrap();
                    let (c, errs) = ThresholdConfig::parse(&text, &p.display().to_string());
                    assert!(errs.is_empty(), "{errs:?}");
                    n += c.entries.len();
                }
            }
        }
        assert!(n >= 30, "{n}");
    }

    #[test]
    fn lines() {
        let text = "threshold gen_id 1, sig_id 2, type limit, track by_src, count 1, seconds 60\n\
                    suppress gen_id 1, sig_id 3, track by_either, ip [1.2.3.4,$SUPPRESS]\n\
                    suppress gen_id 1, sig_id 4\n\
                    rate_filter gen_id 1, sig_id 5, track by_rule, count 1, seconds 60, new_action drop, timeout 10\n\
                    event_filter gen_id 1, sig_id 6, type both, track by_dst, count 2, seconds 5\n";
        let (c, errs) = ThresholdConfig::parse(text, "threshold.config");
        assert!(errs.is_empty(), "{errs:?}");
        assert_eq!(c.entries.len(), 5);
    }

    #[test]
    fn errors_name_file_line_and_directive() {
        let text = "# x\nsuppress gen_id 1, sig_id 3, track by_src\nthreshold gen_id 1, sig_id 2, type limit, track by_src, count 1\n\
                    rate_filter gen_id 1, sig_id 5, track by_rule, count x, seconds 60\nlimit gen_id 1\n\
                    threshold gen_id 1, sig_id 2, type limit, track by_src, count 1, seconds 1, colour red\n";
        let (_, errs) = ThresholdConfig::parse(text, "threshold.config");
        let msgs: Vec<String> = errs.iter().map(|e| e.to_string()).collect();
        assert_eq!(
            msgs,
            vec![
                "threshold.config:2:1: suppress: suppress needs both 'track' and 'ip', or neither",
                "threshold.config:3:1: threshold: missing 'seconds'",
                "threshold.config:4:54: rate_filter: expected a number, got 'x'",
                "threshold.config:5:1: unknown directive 'limit' (threshold, event_filter, suppress, rate_filter)",
                "threshold.config:6:77: threshold: unknown option 'colour'",
            ]
        );
    }
}
