//! The human report (one line per test, a table per theme, a closing count line) and
//! the JSON one.
//!
//! The pass rate is over tests that ran (passed + failed): a skipped test says
//! nothing about the engine. Negative-only tests are counted apart because an engine
//! that emits nothing passes them.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::{Status, Summary, TestResult};

#[derive(Default, Clone, Copy)]
struct Tally {
    passed: usize,
    failed: usize,
    skipped: usize,
    neg_passed: usize,
    neg_total: usize,
}

impl Tally {
    fn add(&mut self, r: &TestResult) {
        match r.status {
            Status::Pass => self.passed += 1,
            Status::Fail => self.failed += 1,
            Status::Skip => self.skipped += 1,
        }
        if r.negative_only {
            self.neg_total += 1;
            self.neg_passed += usize::from(r.status == Status::Pass);
        }
    }

    fn total(&self) -> usize {
        self.passed + self.failed + self.skipped
    }
}

fn percent(part: usize, whole: usize) -> String {
    if whole == 0 {
        "-".to_string()
    } else {
        format!("{:.1}%", 100.0 * part as f64 / whole as f64)
    }
}

impl Summary {
    /// `PASS name`, `FAIL name: reason`, `SKIP name: reason`, one per test.
    pub fn result_lines(&self) -> String {
        let mut out = String::new();
        for r in &self.results {
            match &r.reason {
                Some(reason) if r.status != Status::Pass => {
                    let _ = writeln!(out, "{} {}: {}", r.status, r.name, reason);
                }
                _ => {
                    let _ = writeln!(out, "{} {}", r.status, r.name);
                }
            }
        }
        out
    }

    /// Per-theme counts, pass rate and negative-only column, then the totals.
    pub fn theme_table(&self) -> String {
        let mut by_theme: BTreeMap<&str, Tally> = BTreeMap::new();
        let mut all = Tally::default();
        for r in &self.results {
            by_theme.entry(r.theme.as_str()).or_default().add(r);
            all.add(r);
        }
        let width = by_theme.keys().map(|t| t.len()).chain([5]).max().unwrap_or(5);
        let mut out = String::new();
        let header = ["passed", "failed", "skipped", "total", "pass%", "neg-only"];
        let _ = writeln!(
            out,
            "{:<width$}  {:>7}  {:>7}  {:>7}  {:>7}  {:>7}  {:>9}",
            "theme", header[0], header[1], header[2], header[3], header[4], header[5]
        );
        let row = |out: &mut String, name: &str, t: &Tally| {
            let _ = writeln!(
                out,
                "{:<width$}  {:>7}  {:>7}  {:>7}  {:>7}  {:>7}  {:>9}",
                name,
                t.passed,
                t.failed,
                t.skipped,
                t.total(),
                percent(t.passed, t.passed + t.failed),
                format!("{}/{}", t.neg_passed, t.neg_total),
            );
        };
        for (theme, tally) in &by_theme {
            row(&mut out, theme, tally);
        }
        row(&mut out, "all", &all);
        let _ = writeln!(out, "pass% = passed / (passed + failed); neg-only = negative-only tests passed/total");
        let neg_failed = self.results.iter().filter(|r| r.negative_only && r.status == Status::Fail).count();
        let (p, f) = (all.passed - all.neg_passed, all.failed - neg_failed);
        let _ = writeln!(
            out,
            "negative-only tests (every check expects count 0): {} of {} passed; without them: {} passed, {} failed ({})",
            all.neg_passed,
            all.neg_total,
            p,
            f,
            percent(p, p + f)
        );
        out
    }

    /// `N passed, N failed, N skipped`.
    pub fn closing_line(&self) -> String {
        format!(
            "{} passed, {} failed, {} skipped",
            self.count(Status::Pass),
            self.count(Status::Fail),
            self.count(Status::Skip)
        )
    }

    /// The whole report: result lines, a blank line, the table, the closing line.
    pub fn render(&self) -> String {
        format!("{}\n{}{}\n", self.result_lines(), self.theme_table(), self.closing_line())
    }

    /// Per-test results as a JSON array of
    /// `{name, theme, status, reason, duration_ms, negative_only}`.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(&self.results).unwrap_or_else(|_| "[]".to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(name: &str, theme: &str, status: Status, neg: bool) -> TestResult {
        TestResult {
            name: name.into(),
            theme: theme.into(),
            status,
            reason: (status != Status::Pass).then(|| "why".to_string()),
            duration_ms: 1,
            negative_only: neg,
        }
    }

    #[test]
    fn lines_table_and_closing() {
        let s = Summary {
            results: vec![
                r("a/one", "http", Status::Pass, false),
                r("a/two", "http", Status::Fail, false),
                r("b", "dns", Status::Skip, false),
                r("c", "dns", Status::Pass, true),
            ],
        };
        assert_eq!(s.result_lines(), "PASS a/one\nFAIL a/two: why\nSKIP b: why\nPASS c\n");
        let table = s.theme_table();
        let rows: Vec<&str> = table.lines().collect();
        assert!(rows[0].starts_with("theme"), "{table}");
        assert!(rows[1].starts_with("dns ") && rows[1].contains("100.0%") && rows[1].ends_with("1/1"), "{table}");
        assert!(rows[2].starts_with("http") && rows[2].contains("50.0%"), "{table}");
        assert!(rows[3].starts_with("all") && rows[3].contains("66.7%"), "{table}");
        assert!(table.contains("1 of 1 passed; without them: 1 passed, 1 failed (50.0%)"), "{table}");
        assert_eq!(s.closing_line(), "2 passed, 1 failed, 1 skipped");
        assert!(s.render().ends_with("2 passed, 1 failed, 1 skipped\n"));
        let json: serde_json::Value = serde_json::from_str(&s.to_json()).unwrap();
        assert_eq!(json[1]["status"], "fail");
        assert_eq!(json[1]["reason"], "why");
        assert_eq!(json[0]["duration_ms"], 1);
    }
}
