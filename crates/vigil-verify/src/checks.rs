//! The `checks:` list: `filter`, `stats`, `shell` and `file-compare` (an
//! output file byte for byte against one of the test's) are evaluated
//! here, each after its own requirements, so a check that does not apply
//! to the claimed version is skipped.
//!
//! A test passes when no check fails and at least one ran; when every check was
//! skipped by its own `requires:`, the test is skipped, as upstream counts it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use serde_json::Value;

use crate::matching::{compare_found, count_matches, find_value, match_key};
use crate::requires::{check_level_requires, check_requires, ReqContext, Verdict};
use crate::yaml::Yaml;

/// The outcome of a test's checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChecksOutcome {
    Pass,
    Skip(String),
    Fail(String),
}

/// Output files of one run, each parsed once however many checks read it.
pub struct Outputs {
    dir: PathBuf,
    parsed: HashMap<PathBuf, Rc<Result<Vec<Value>, String>>>,
}

impl Outputs {
    pub fn new(dir: &Path) -> Outputs {
        Outputs { dir: dir.to_path_buf(), parsed: HashMap::new() }
    }

    /// The JSON lines of `name` (relative to the output directory). As in upstream,
    /// every line must be JSON, blank ones included.
    fn json_lines(&mut self, name: &str) -> Rc<Result<Vec<Value>, String>> {
        let path = self.dir.join(name);
        self.parsed.entry(path.clone()).or_insert_with(|| Rc::new(parse_json_lines(&path, name))).clone()
    }
}

fn parse_json_lines(path: &Path, name: &str) -> Result<Vec<Value>, String> {
    if !path.exists() {
        return Err(format!("{name} does not exist"));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {name}: {e}"))?;
    let text = String::from_utf8(bytes).map_err(|_| format!("{name} is not valid UTF-8"))?;
    text.lines()
        .enumerate()
        .map(|(i, line)| serde_json::from_str(line).map_err(|e| format!("{name} line {}: invalid JSON: {e}", i + 1)))
        .collect()
}

/// Evaluates a test's `checks:` against its output directory. `ctx` is used for
/// check-level requirements (scripts run in the output directory, as upstream's do).
pub fn run_checks(checks: Option<&Yaml>, outputs: &mut Outputs, ctx: &ReqContext<'_>) -> ChecksOutcome {
    let list = match checks {
        None | Some(Yaml::Null) => return ChecksOutcome::Pass,
        Some(Yaml::Seq(list)) => list,
        Some(other) => return ChecksOutcome::Fail(format!("checks: expected a list, got {other}")),
    };
    let mut ran = 0usize;
    let mut first_skip: Option<String> = None;
    for (i, check) in list.iter().enumerate() {
        let n = i + 1;
        let Some(entries) = check.as_map() else {
            return ChecksOutcome::Fail(format!("check {n}: expected a mapping, got {check}"));
        };
        for (kind, body) in entries {
            let kind = kind.py_str();
            let verdict = match kind.as_str() {
                "filter" | "stats" | "shell" | "file-compare" => check_requires(&check_level_requires(body), ctx),
                _ => return ChecksOutcome::Fail(format!("check {n}: unknown check type: {kind}")),
            };
            match verdict {
                Verdict::Met => {}
                Verdict::Unmet(reason) => {
                    first_skip.get_or_insert(reason);
                    continue;
                }
                Verdict::Fail(reason) => return ChecksOutcome::Fail(format!("check {n}: {reason}")),
            }
            let result = match kind.as_str() {
                "filter" => filter_check(body, outputs),
                "stats" => stats_check(body, outputs),
                "shell" => shell_check(body, ctx),
                _ => file_compare(body, ctx),
            };
            if let Err(reason) = result {
                return ChecksOutcome::Fail(format!("check {n} ({kind}): {reason}"));
            }
            ran += 1;
        }
    }
    match first_skip {
        Some(reason) if ran == 0 => ChecksOutcome::Skip(format!("all checks skipped: {reason}")),
        _ => ChecksOutcome::Pass,
    }
}

/// `file-compare:` the output file `filename` must hold exactly the bytes
/// of the test's `expected` file.
fn file_compare(body: &Yaml, ctx: &ReqContext<'_>) -> Result<(), String> {
    let name = body.get("filename").map(Yaml::py_str).ok_or("file-compare check has no filename")?;
    let expected = body.get("expected").map(Yaml::py_str).ok_or("file-compare check has no expected file")?;
    let test_dir = ctx.env.iter().find(|(k, _)| k == "TEST_DIR").map(|(_, v)| std::path::Path::new(v.as_str()));
    let want = std::fs::read(test_dir.unwrap_or(ctx.cwd).join(&expected))
        .map_err(|e| format!("cannot read the expected file {expected}: {e}"))?;
    let got = std::fs::read(ctx.cwd.join(&name)).map_err(|e| format!("cannot read {name}: {e}"))?;
    if got == want {
        Ok(())
    } else {
        Err(format!("{name} differs from {expected}"))
    }
}

/// `shell:` runs `args` in the output directory, as upstream does: the
/// command must succeed and, with `expect:`, print that value (trimmed).
fn shell_check(body: &Yaml, ctx: &ReqContext<'_>) -> Result<(), String> {
    let args = body.get("args").map(Yaml::py_str).ok_or("shell check has no args")?;
    let (exit, output) = crate::process::shell_output(&args, ctx.cwd, ctx.env, ctx.timeout)
        .map_err(|e| format!("cannot run the shell check: {e}"))?;
    match exit {
        crate::process::Exit::Code(0) => {}
        crate::process::Exit::Code(c) => return Err(format!("shell command failed with status {c}: {}", args.trim())),
        crate::process::Exit::TimedOut => return Err(format!("shell command timed out: {}", args.trim())),
    }
    match body.get("expect") {
        Some(want) if want.py_str() != output.trim() => {
            Err(format!("shell command printed {:?}, expected {:?}: {}", output.trim(), want.py_str(), args.trim()))
        }
        _ => Ok(()),
    }
}

/// `filter:` counts the JSON lines of a file that match every `match:` entry.
fn filter_check(body: &Yaml, outputs: &mut Outputs) -> Result<(), String> {
    let filename = body.get("filename").map(Yaml::py_str).unwrap_or_else(|| "eve.json".to_string());
    let lines = outputs.json_lines(&filename);
    let lines = lines.as_ref().as_ref().map_err(Clone::clone)?;
    let criteria = body.get("match");
    let mut count = 0usize;
    for event in lines {
        if event_matches(criteria, event)? {
            count += 1;
        }
    }
    let expected = body.get("count").ok_or("filter has no count")?;
    if count_matches(count, expected) {
        return Ok(());
    }
    match body.get("comment") {
        Some(comment) => Err(format!("{}: expected {expected}, got {count}", comment.py_str())),
        None => Err(format!(
            "expected {expected} matches; got {count} for {}",
            criteria.map(Yaml::to_string).unwrap_or_default()
        )),
    }
}

/// Whether one event satisfies every entry of a `match:` mapping, in file order
/// (order matters: an entry that raises is only reached when the ones before it hold).
pub fn event_matches(criteria: Option<&Yaml>, event: &Value) -> Result<bool, String> {
    let Some(Yaml::Map(entries)) = criteria else {
        return Err("filter has no match mapping".to_string());
    };
    for (key, expected) in entries {
        let Some(key) = key.as_str() else {
            return Err(format!("match key {key} is not a string"));
        };
        let holds = match key {
            // One field name, or a list of them that must all be present (absent).
            "has-key" | "not-has-key" => {
                let paths = match expected {
                    Yaml::Seq(items) => items.iter().collect(),
                    one => vec![one],
                };
                let mut holds = true;
                for path in paths {
                    let Some(path) = path.as_str() else {
                        return Err(format!("{key}: expected a field name, got {expected}"));
                    };
                    let present = find_value(path, event)?.is_some_and(|v| !v.is_null());
                    if present != (key == "has-key") {
                        holds = false;
                        break;
                    }
                }
                holds
            }
            _ => match_key(key, expected, event)?,
        };
        if !holds {
            return Ok(false);
        }
    }
    Ok(true)
}

/// `stats:` compares counters of the last `event_type: stats` record of eve.json.
fn stats_check(body: &Yaml, outputs: &mut Outputs) -> Result<(), String> {
    let lines = outputs.json_lines("eve.json");
    let lines = lines.as_ref().as_ref().map_err(Clone::clone)?;
    let stats = last_stats(lines)?;
    for (key, expected) in body.as_map().unwrap_or_default() {
        let Some(key) = key.as_str() else {
            return Err(format!("stats key {key} is not a string"));
        };
        if key == "requires" {
            continue;
        }
        let found = find_value(key, stats)?;
        if !compare_found(key, found.as_deref(), expected)? {
            let got = match found.as_deref() {
                None | Some(Value::Null) => "None".to_string(),
                Some(v) => crate::clip(&v.to_string(), 60),
            };
            return Err(format!("stats.{key}: expected {expected}; got {got}"));
        }
    }
    Ok(())
}

/// Upstream reads `event["event_type"]` of every line, so a line without one is an
/// error, not something to skip over.
fn last_stats(lines: &[Value]) -> Result<&Value, String> {
    let mut last = None;
    for (i, event) in lines.iter().enumerate() {
        let kind = event.get("event_type").ok_or_else(|| format!("eve.json line {} has no event_type", i + 1))?;
        if kind == "stats" {
            last =
                Some(event.get("stats").ok_or_else(|| format!("eve.json line {}: stats record without stats", i + 1))?);
        }
    }
    last.ok_or_else(|| "no stats record in eve.json".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::requires::Claims;
    use std::time::Duration;

    struct Dir(PathBuf);
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn scratch(name: &str, files: &[(&str, &str)]) -> Dir {
        let dir = std::env::temp_dir().join(format!("vigil-verify-checks-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (file, text) in files {
            std::fs::write(dir.join(file), text).unwrap();
        }
        Dir(dir)
    }

    const EVE: &str = concat!(
        r#"{"event_type":"flow","src_ip":"10.0.0.1","dest_port":53}"#,
        "\n",
        r#"{"event_type":"alert","src_ip":"10.0.0.1","dest_port":53,"alert":{"signature_id":1,"metadata":{"tag":["a","b"]}}}"#,
        "\n",
        r#"{"event_type":"alert","src_ip":"10.0.0.2","dest_port":80,"alert":{"signature_id":2}}"#,
        "\n",
        r#"{"event_type":"stats","stats":{"decoder":{"pkts":5,"bytes":100}}}"#,
        "\n",
        r#"{"event_type":"dns","dns":{"query":[{"rrname":"example.com"}]}}"#,
        "\n",
        r#"{"event_type":"stats","stats":{"decoder":{"pkts":10,"bytes":300},"flow":{"tcp":2}}}"#,
        "\n",
    );

    fn outcome(dir: &Dir, checks: &str) -> ChecksOutcome {
        let claims = Claims::default();
        let ctx = ReqContext { claims: &claims, cwd: &dir.0, env: &[], timeout: Duration::from_secs(10) };
        let checks = Yaml::parse(checks).unwrap();
        run_checks(Some(&checks), &mut Outputs::new(&dir.0), &ctx)
    }

    fn fails(o: ChecksOutcome, needle: &str) {
        match o {
            ChecksOutcome::Fail(msg) => assert!(msg.contains(needle), "{msg:?} lacks {needle:?}"),
            other => panic!("expected a failure with {needle:?}, got {other:?}"),
        }
    }

    #[test]
    fn filter_counts_matching_lines() {
        let d = scratch("filter", &[("eve.json", EVE)]);
        assert_eq!(outcome(&d, "- filter: {count: 2, match: {event_type: alert}}"), ChecksOutcome::Pass);
        assert_eq!(
            outcome(&d, "- filter: {count: 1, match: {event_type: alert, dest_port: 53, alert.signature_id: 1}}"),
            ChecksOutcome::Pass
        );
        // 53 is not "53".
        assert_eq!(outcome(&d, "- filter: {count: 0, match: {dest_port: \"53\"}}"), ChecksOutcome::Pass);
        assert_eq!(outcome(&d, "- filter: {count: 1, match: {'alert.metadata.tag[1]': b}}"), ChecksOutcome::Pass);
        assert_eq!(outcome(&d, "- filter: {count: 1, match: {alert.metadata.tag.__len: 2}}"), ChecksOutcome::Pass);
        assert_eq!(
            outcome(&d, "- filter: {count: 1, match: {event_type: dns, 'dns.query[0].rrname.__endswith': .com}}"),
            ChecksOutcome::Pass
        );
        fails(
            outcome(&d, "- filter: {count: 3, match: {event_type: alert}}"),
            "check 1 (filter): expected 3 matches; got 2 for {event_type: alert}",
        );
        fails(
            outcome(&d, "- filter: {count: 3, comment: two alerts, match: {event_type: alert}}"),
            "two alerts: expected 3, got 2",
        );
    }

    #[test]
    fn has_key_and_not_has_key() {
        let d = scratch("haskey", &[("eve.json", EVE)]);
        assert_eq!(outcome(&d, "- filter: {count: 2, match: {has-key: alert.signature_id}}"), ChecksOutcome::Pass);
        assert_eq!(outcome(&d, "- filter: {count: 4, match: {not-has-key: alert}}"), ChecksOutcome::Pass);
        assert_eq!(
            outcome(&d, "- filter: {count: 2, match: {has-key: [alert.signature_id, alert]}}"),
            ChecksOutcome::Pass
        );
        assert_eq!(outcome(&d, "- filter: {count: 4, match: {not-has-key: [alert, flow_x]}}"), ChecksOutcome::Pass);
    }

    #[test]
    fn key_order_decides_whether_a_raising_entry_is_reached() {
        let d = scratch("order", &[("eve.json", EVE)]);
        // Only dns records reach the __find entry: fine.
        assert_eq!(
            outcome(
                &d,
                "- filter:\n    count: 1\n    match:\n      event_type: dns\n      dns.query[0].rrname.__find: example"
            ),
            ChecksOutcome::Pass
        );
        // Every record reaches it, and None.find raises: the check fails.
        fails(
            outcome(
                &d,
                "- filter:\n    count: 1\n    match:\n      dns.query[0].rrname.__find: example\n      event_type: dns",
            ),
            "needs a string field",
        );
    }

    #[test]
    fn filename_is_relative_to_the_output_dir() {
        let d = scratch("filename", &[("eve.json", EVE), ("other.json", "{\"x\": 1}\n")]);
        assert_eq!(outcome(&d, "- filter: {filename: other.json, count: 1, match: {x: 1}}"), ChecksOutcome::Pass);
        fails(outcome(&d, "- filter: {filename: nope.json, count: 0, match: {x: 1}}"), "nope.json does not exist");
    }

    #[test]
    fn bad_json_fails_the_check() {
        let d = scratch("badjson", &[("eve.json", "{\"a\": 1}\n\n{\"a\": 2}\n")]);
        fails(outcome(&d, "- filter: {count: 0, match: {a: 3}}"), "line 2: invalid JSON");
    }

    #[test]
    fn stats_reads_the_last_stats_record() {
        let d = scratch("stats", &[("eve.json", EVE)]);
        assert_eq!(outcome(&d, "- stats: {decoder.pkts: 10, flow.tcp: 2}"), ChecksOutcome::Pass);
        assert_eq!(outcome(&d, "- stats: {decoder.bytes.__gte: 300, decoder.pkts.__lt: 11}"), ChecksOutcome::Pass);
        fails(outcome(&d, "- stats: {decoder.pkts: 5}"), "stats.decoder.pkts: expected 5; got 10");
        fails(outcome(&d, "- stats: {decoder.nope: 0}"), "stats.decoder.nope: expected 0; got None");
        let d = scratch("nostats", &[("eve.json", "{\"event_type\":\"alert\"}\n")]);
        fails(outcome(&d, "- stats: {decoder.pkts: 1}"), "no stats record");
    }

    #[test]
    fn check_level_requires_skip_checks() {
        let d = scratch("checkreq", &[("eve.json", EVE)]);
        // A failing check that does not apply is ignored.
        assert_eq!(
            outcome(&d, "- filter: {requires: {min-version: 9}, count: 9, match: {event_type: alert}}\n- filter: {count: 2, match: {event_type: alert}}"),
            ChecksOutcome::Pass
        );
        assert_eq!(
            outcome(&d, "- filter: {lt-version: 8, count: 9, match: {event_type: alert}}"),
            ChecksOutcome::Skip("all checks skipped: for version less than 8".into())
        );
        // Shell checks are skipped when they do not apply, failed otherwise.
        assert_eq!(
            outcome(&d, "- shell: {min-version: 9, args: 'true'}\n- filter: {count: 2, match: {event_type: alert}}"),
            ChecksOutcome::Pass
        );
        assert_eq!(outcome(&d, "- shell: {args: 'true'}"), ChecksOutcome::Pass);
        assert_eq!(outcome(&d, "- shell: {args: 'echo 3', expect: 3}"), ChecksOutcome::Pass);
        fails(
            outcome(&d, "- shell: {args: 'echo 2', expect: 3}"),
            "check 1 (shell): shell command printed \"2\", expected \"3\": echo 2",
        );
        fails(outcome(&d, "- shell: {args: 'false'}"), "check 1 (shell): shell command failed with status 1: false");
        std::fs::write(d.0.join("a"), "same\n").unwrap();
        std::fs::write(d.0.join("b"), "same\n").unwrap();
        std::fs::write(d.0.join("c"), "other\n").unwrap();
        assert_eq!(outcome(&d, "- file-compare: {filename: a, expected: b}"), ChecksOutcome::Pass);
        fails(outcome(&d, "- file-compare: {filename: a, expected: c}"), "check 1 (file-compare): a differs from c");
        fails(outcome(&d, "- file-compare: {filename: z, expected: c}"), "check 1 (file-compare): cannot read z");
        fails(outcome(&d, "- bogus: {}"), "unknown check type: bogus");
    }

    #[test]
    fn no_checks_pass() {
        let d = scratch("none", &[]);
        assert_eq!(outcome(&d, ""), ChecksOutcome::Pass);
        assert_eq!(outcome(&d, "[]"), ChecksOutcome::Pass);
    }
}
