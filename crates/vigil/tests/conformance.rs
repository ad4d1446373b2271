//! The conformance ratchet: every suricata-verify test named in
//! `tests/conformance-passing.txt` must pass. The list only grows.

use std::path::{Path, PathBuf};

#[test]
fn listed_conformance_tests_pass() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let suite = root.join("../shared/conformance/suricata-verify");
    assert!(suite.is_dir(), "conformance suite not found at {}", suite.display());
    let mut opts = vigil_verify::Options::new(suite);
    opts.vigil = Some(env!("CARGO_BIN_EXE_vigil").into());
    opts.list = Some(root.join("tests/conformance-passing.txt"));
    let summary = vigil_verify::run(&opts).expect("the runner starts");
    assert!(!summary.results.is_empty(), "the ratchet list selected no test");
    assert!(summary.all_passed(), "conformance regressions:\n{}", summary.result_lines());
}

/// An alert as compared: (test, sid, packet, source, transaction).
type AlertKey = (String, Option<u64>, Option<u64>, String, Option<u64>);

/// The alerts of every test's eve.json under `root`, sorted.
fn alerts_under(root: &Path) -> Vec<AlertKey> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<AlertKey>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for e in entries.flatten() {
            let path = e.path();
            if path.is_dir() {
                walk(&path, root, out);
            } else if path.file_name().is_some_and(|n| n == "eve.json") {
                let test = path.parent().unwrap().strip_prefix(root).unwrap().display().to_string();
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                for rec in text.lines().filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok()) {
                    if rec["event_type"] == "alert" {
                        let src = format!("{}:{}", rec["src_ip"], rec["src_port"]);
                        out.push((
                            test.clone(),
                            rec["alert"]["signature_id"].as_u64(),
                            rec["pcap_cnt"].as_u64(),
                            src,
                            rec["tx_id"].as_u64(),
                        ));
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out.sort();
    out
}

#[test]
fn both_prefilters_raise_the_same_alerts_on_the_listed_tests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let suite = root.join("../shared/conformance/suricata-verify");
    let scratch = std::env::temp_dir().join(format!("vigil-prefilters-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();
    // vigil with the pure-Rust prefilter, whatever the configuration says.
    let ac = scratch.join("vigil-ac");
    std::fs::write(&ac, format!("#!/bin/sh\nexec '{}' \"$@\" --set mpm-algo=ac\n", env!("CARGO_BIN_EXE_vigil")))
        .unwrap();
    std::fs::set_permissions(&ac, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut runs = Vec::new();
    for (name, vigil) in [("default", PathBuf::from(env!("CARGO_BIN_EXE_vigil"))), ("ac", ac)] {
        let mut opts = vigil_verify::Options::new(&suite);
        opts.vigil = Some(vigil);
        opts.list = Some(root.join("tests/conformance-passing.txt"));
        opts.keep_output = Some(scratch.join(name));
        let summary = vigil_verify::run(&opts).expect("the runner starts");
        assert!(summary.all_passed(), "{name}:\n{}", summary.result_lines());
        runs.push(alerts_under(&scratch.join(name)));
    }
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(runs[0].len() > 1000, "too few alerts to compare: {}", runs[0].len());
    let differ: Vec<_> = runs[0].iter().zip(&runs[1]).filter(|(a, b)| a != b).take(5).collect();
    assert!(runs[0] == runs[1], "the prefilters disagree ({} vs {} alerts): {differ:?}", runs[0].len(), runs[1].len());
}
