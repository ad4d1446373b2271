//! `vigil -T`: the exit status says whether the configuration and the rules
//! load; nothing is read and no output file is written.

use std::path::PathBuf;
use std::process::{Command, Output};

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("vigil-test-config-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `vigil -T -l <dir> -S <rules> <extra...>` on a fresh directory.
fn check(name: &str, rules: &str, extra: &[&str]) -> (Output, PathBuf) {
    let dir = scratch(name);
    let file = dir.join("test.rules");
    std::fs::write(&file, rules).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_vigil"))
        .arg("-T")
        .arg("-l")
        .arg(&dir)
        .arg("-S")
        .arg(&file)
        .args(extra)
        .output()
        .expect("vigil runs");
    (out, dir)
}

#[test]
fn good_and_unsupported_rules_pass_the_test() {
    let rules = "alert tcp any any -> any any (content:\"x\"; sid:1;)\n\
                 alert smtp any any -> any any (smtp.helo; content:\"a\"; sid:2;)\n";
    let (out, dir) = check("ok", rules, &["--strict-rule-keywords=content"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!dir.join("eve.json").exists(), "a test run writes no output");
    let (out, _) = check("ok-bare", rules, &["--strict-rule-keywords"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_rule_that_does_not_parse_fails_the_test() {
    let (out, _) = check("bad-rule", "alert tcp any any -> any any (content:\"|22 2 22|\"; sid:1;)\n", &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("1 of 1 rules failed to load"));
}

#[test]
fn a_regex_pcre_refuses_fails_the_test() {
    let (out, _) = check("bad-pcre", "alert tcp any any -> any any (pcre:\"/foo(/\"; sid:1;)\n", &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("pcre: invalid regex") && err.contains("1 of 1 rules failed to load"), "{err}");
}

#[test]
fn a_configuration_error_fails_the_test() {
    let (out, _) = check("bad-config", "", &["--init-errors-fatal", "--set", "stream.memcap=lots"]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_size_suricata_cannot_read_fails_the_test_and_the_run() {
    let dir = scratch("bad-size");
    std::fs::write(dir.join("c.yaml"), "flow:\n  memcap: lots\n").unwrap();
    let config = dir.join("c.yaml");
    let (out, _) = check("bad-size-t", "", &["-c", config.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("c.yaml:2:11: flow.memcap"));
    let run = Command::new(env!("CARGO_BIN_EXE_vigil"))
        .args(["-r", "/nonexistent.pcap", "-l"])
        .arg(&dir)
        .arg("-c")
        .arg(&config)
        .output()
        .unwrap();
    assert!(!run.status.success(), "a run refuses to start on it too");
    assert!(String::from_utf8_lossy(&run.stderr).contains("configuration error"));
}
