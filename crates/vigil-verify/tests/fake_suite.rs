//! End to end: a tiny suite in a temp dir, run against a fake `vigil` shell script
//! that writes a canned eve.json into its `-l` directory.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

const FAKE_VIGIL: &str = r#"#!/bin/sh
out=""; pcap=""; ips=0
while [ $# -gt 0 ]; do
  case "$1" in
    -l) out="$2"; shift ;;
    -r) pcap="$2"; shift ;;
    --simulate-ips) ips=1 ;;
  esac
  shift
done
case "$pcap" in *slow.pcap) sleep 30 ;; esac
[ -n "$out" ] || exit 9
printf '%s\n' '{"event_type":"alert","alert":{"signature_id":1}}' \
  '{"event_type":"stats","stats":{"decoder":{"pkts":3}}}' > "$out/eve.json"
if [ $ips = 1 ]; then echo '{"event_type":"ips"}' >> "$out/eve.json"; fi
exit 0
"#;

const ALERT_AND_STATS: &str = "
checks:
  - filter:
      count: 1
      match:
        event_type: alert
        alert.signature_id: 1
  - stats:
      decoder.pkts: 3
";

struct Suite {
    root: PathBuf,
}

impl Drop for Suite {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.root);
    }
}

impl Suite {
    fn test(&self, name: &str, yaml: &str, files: &[&str]) {
        let dir = self.root.join("suite/tests").join(name);
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("test.yaml"), yaml).unwrap();
        for f in files {
            fs::write(dir.join(f), "").unwrap();
        }
    }

    fn vigil(&self) -> PathBuf {
        self.root.join("bin/vigil")
    }

    fn suite_root(&self) -> PathBuf {
        self.root.join("suite")
    }
}

fn build_suite(tag: &str) -> Suite {
    let root = std::env::temp_dir().join(format!("vigil-verify-it-{}-{tag}", std::process::id()));
    let _ = fs::remove_dir_all(&root);
    let suite = Suite { root };
    fs::create_dir_all(suite.root.join("bin")).unwrap();
    fs::write(suite.vigil(), FAKE_VIGIL).unwrap();
    fs::set_permissions(suite.vigil(), fs::Permissions::from_mode(0o755)).unwrap();
    fs::create_dir_all(suite.root.join("suite/etc")).unwrap();
    fs::write(suite.root.join("suite/etc/classification.config"), "").unwrap();
    fs::write(
        suite.root.join("suite/manifest.json"),
        r#"{"tests": [{"name": "alpha/pass-one", "theme": "http"}, {"name": "alpha/fail-one", "theme": "http"}]}"#,
    )
    .unwrap();

    suite.test("alpha/pass-one", &format!("args:\n  - -k none\n{ALERT_AND_STATS}"), &["input.pcap", "test.rules"]);
    suite.test(
        "alpha/fail-one",
        "checks:\n  - filter:\n      count: 2\n      match:\n        event_type: alert\n",
        &["input.pcap"],
    );
    suite.test("beta-skip", "requires:\n  min-version: 9\n", &["input.pcap"]);
    suite.test("gamma-unsupported", "args:\n  - --unix-socket\n", &["input.pcap"]);
    suite.test(
        "delta-cmd",
        &format!("command: |\n  ${{SRCDIR}}/src/suricata -k none -l ${{OUTPUT_DIR}} \\\n    -r ${{TEST_DIR}}/input.pcap\n{ALERT_AND_STATS}"),
        &["input.pcap"],
    );
    suite.test("epsilon-slow", ALERT_AND_STATS, &["slow.pcap"]);
    suite.test(
        "neg-only",
        "checks:\n  - filter:\n      count: 0\n      match:\n        alert.signature_id: 99\n",
        &["input.pcap"],
    );
    suite.test(
        "zeta-ips",
        "checks:\n  - filter:\n      count: 1\n      match:\n        event_type: ips\n",
        &["input.pcap"],
    );
    suite.test("bad-yaml", "checks: [\n", &["input.pcap"]);
    suite
}

fn run_cli(suite: &Suite, extra: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_vigil-verify"))
        .arg(suite.suite_root())
        .args(["--vigil", suite.vigil().to_str().unwrap(), "--jobs", "3", "--timeout", "2", "--quiet"])
        .args(extra)
        .output()
        .unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8(out.stdout).unwrap())
}

#[test]
fn cli_prints_results_table_and_closing_line() {
    let suite = build_suite("cli");
    let json = suite.root.join("results.json");
    let (code, stdout) = run_cli(&suite, &["--json", json.to_str().unwrap()]);
    assert_eq!(code, 1, "{stdout}");

    let lines: Vec<&str> = stdout.lines().collect();
    let results: Vec<&str> = lines.iter().copied().take_while(|l| !l.is_empty()).collect();
    assert_eq!(results.len(), 9, "{stdout}");
    assert_eq!(results[0], "FAIL alpha/fail-one: check 1 (filter): expected 2 matches; got 1 for {event_type: alert}");
    assert_eq!(results[1], "PASS alpha/pass-one");
    assert!(results[2].starts_with("FAIL bad-yaml: test.yaml: "), "{stdout}");
    assert_eq!(results[3], "SKIP beta-skip: requires at least version 9");
    assert_eq!(results[4], "PASS delta-cmd");
    assert_eq!(results[5], "FAIL epsilon-slow: timeout");
    assert_eq!(results[6], "FAIL gamma-unsupported: unsupported argument: --unix-socket");
    assert_eq!(results[7], "PASS neg-only");
    assert_eq!(results[8], "PASS zeta-ips");

    let table = stdout.lines().skip(results.len() + 1).collect::<Vec<_>>();
    assert!(table[0].starts_with("theme"), "{stdout}");
    let row = |theme: &str| {
        table
            .iter()
            .find(|l| l.split_whitespace().next() == Some(theme))
            .unwrap_or_else(|| panic!("no {theme} row in {stdout}"))
            .split_whitespace()
            .collect::<Vec<_>>()
    };
    assert_eq!(row("http"), ["http", "1", "1", "0", "2", "50.0%", "0/0"]);
    assert_eq!(row("beta-skip"), ["beta-skip", "0", "0", "1", "1", "-", "0/0"]);
    assert_eq!(row("neg-only"), ["neg-only", "1", "0", "0", "1", "100.0%", "1/1"]);
    assert_eq!(row("all"), ["all", "4", "4", "1", "9", "50.0%", "1/1"]);
    assert!(stdout.contains("without them: 3 passed, 4 failed (42.9%)"), "{stdout}");
    assert_eq!(*lines.last().unwrap(), "4 passed, 4 failed, 1 skipped");

    let json: serde_json::Value = serde_json::from_str(&fs::read_to_string(&json).unwrap()).unwrap();
    let first = &json[0];
    assert_eq!(first["name"], "alpha/fail-one");
    assert_eq!(first["theme"], "http");
    assert_eq!(first["status"], "fail");
    assert!(first["duration_ms"].is_u64());
}

#[test]
fn filters_select_tests_and_exit_zero_without_failures() {
    let suite = build_suite("filter");
    let (code, stdout) = run_cli(&suite, &["--filter", "pass-one", "--filter", "beta"]);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.starts_with("PASS alpha/pass-one\nSKIP beta-skip: requires at least version 9\n\n"), "{stdout}");
    assert!(stdout.ends_with("1 passed, 0 failed, 1 skipped\n"), "{stdout}");
}

#[test]
fn library_run_with_a_list_reports_missing_tests() {
    let suite = build_suite("lib");
    let list = suite.root.join("passing.txt");
    fs::write(&list, "# ratchet\nalpha/pass-one\ndelta-cmd  # via command:\nno/such-test\n").unwrap();
    let keep = suite.root.join("kept");
    let mut opts = vigil_verify::Options::new(suite.suite_root());
    opts.vigil = Some(suite.vigil());
    opts.list = Some(list);
    opts.keep_output = Some(keep.clone());
    opts.jobs = 2;
    let summary = vigil_verify::run(&opts).unwrap();
    let names: Vec<_> = summary.results.iter().map(|r| (r.name.as_str(), r.status)).collect();
    use vigil_verify::Status::*;
    assert_eq!(names, [("alpha/pass-one", Pass), ("delta-cmd", Pass), ("no/such-test", Fail)]);
    assert_eq!(summary.get("no/such-test").unwrap().reason.as_deref(), Some("not found in suite"));
    assert!(!summary.all_passed());
    // Kept outputs hold the eve.json and the command line that made it.
    assert!(keep.join("alpha/pass-one/eve.json").is_file());
    let cmdline = fs::read_to_string(keep.join("alpha/pass-one/cmdline")).unwrap();
    assert!(
        cmdline.contains("-k none") && cmdline.contains("--init-errors-fatal") && cmdline.contains("-S "),
        "{cmdline}"
    );
    assert!(cmdline.contains("classification-file="), "{cmdline}");
}

#[test]
fn usage_errors_exit_2() {
    let out = Command::new(env!("CARGO_BIN_EXE_vigil-verify")).arg("/nonexistent/suite").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = Command::new(env!("CARGO_BIN_EXE_vigil-verify")).arg("--bogus").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let empty = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let out = Command::new(env!("CARGO_BIN_EXE_vigil-verify")).arg(empty).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "a directory without tests/ is a usage error");
}
