//! The autofp runmode gives what the single runmode gives: the conformance
//! suite's captures, with their rules, through one thread and through 1, 2
//! and 4 workers, must write the same records (order aside), and every
//! packet read must be inspected.
//!
//! Left out: captures whose rules use thresholds or detection filters. Those
//! tracked by source, destination or rule count matches across flows, and
//! flows from one source spread over workers, each with a table of its own
//! (Suricata's thresholds vary between its own runs for the same reason).

mod common;

use common::tempdir;
use serde_json::Value;
use std::path::{Path, PathBuf};
use vigil_engine::{run_offline, RunOptions};

const SUITE: &str = "../../../shared/conformance/suricata-verify/tests";
/// Captures larger than this are left to the conformance runner.
const MAX_PCAP: u64 = 256 * 1024;

/// The ratchet's tests that run a capture with rules on the default configuration.
fn cases() -> Vec<(String, PathBuf, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let suite = root.join(SUITE);
    let ratchet = std::fs::read_to_string(root.join("../../tests/conformance-passing.txt")).unwrap();
    let mut out = Vec::new();
    for name in ratchet.lines().filter(|l| !l.is_empty() && !l.starts_with('#')) {
        let dir = suite.join(name);
        let (pcap, rules) = (dir.join("input.pcap"), dir.join("test.rules"));
        let small = std::fs::metadata(&pcap).is_ok_and(|m| m.len() <= MAX_PCAP);
        let own_config = dir.join("suricata.yaml").exists() || dir.join("threshold.config").exists();
        let Ok(text) = std::fs::read_to_string(&rules) else { continue };
        if !small || own_config || text.contains("threshold") || text.contains("detection_filter") {
            continue;
        }
        out.push((name.to_string(), pcap, rules));
    }
    out
}

/// Every record but stats (uptime is wall-clock), as sorted JSON lines.
fn records(pcap: &Path, rules: &Path, runmode: &str, threads: usize, name: &str) -> (Vec<String>, Value) {
    let dir = tempdir("runmodes", &format!("{}-{runmode}-{threads}", name.replace('/', "_")));
    let opts = RunOptions {
        inputs: vec![pcap.to_path_buf()],
        log_dir: Some(dir.clone()),
        exclusive_rules: vec![rules.to_path_buf()],
        checksum: Some("none".into()),
        runmode: Some(runmode.into()),
        threads: Some(threads),
        ..RunOptions::default()
    };
    let summary = run_offline(&opts, &mut |_| {}).unwrap();
    assert_eq!(summary.dropped, 0);
    let text = std::fs::read_to_string(dir.join("eve.json")).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let mut recs = Vec::new();
    let mut stats = Value::Null;
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        if v["event_type"] == "stats" {
            stats = v;
        } else {
            recs.push(line.to_string());
        }
    }
    recs.sort();
    assert_eq!(
        stats["stats"]["decoder"]["pkts"],
        serde_json::json!(summary.packets),
        "{name}: every packet read is decoded"
    );
    (recs, stats)
}

#[test]
fn autofp_writes_what_single_writes() {
    let cases = cases();
    assert!(cases.len() > 100, "the shared suite is missing ({} cases)", cases.len());
    let mut differ = Vec::new();
    for (name, pcap, rules) in &cases {
        let (single, single_stats) = records(pcap, rules, "single", 1, name);
        for threads in [1, 2, 4] {
            let (multi, multi_stats) = records(pcap, rules, "autofp", threads, name);
            if multi != single {
                differ.push(format!("{name} ({threads} workers)"));
            }
            // Counters add up over workers to what one thread counts; gauges
            // (memory in use) and the flow manager's bookkeeping need not.
            for key in ["pkts", "bytes", "invalid", "ipv4", "ipv6", "tcp", "udp"] {
                assert_eq!(
                    multi_stats["stats"]["decoder"][key], single_stats["stats"]["decoder"][key],
                    "{name}: decoder.{key} with {threads} workers"
                );
            }
            for key in ["alert", "alerts_suppressed"] {
                assert_eq!(
                    multi_stats["stats"]["detect"][key], single_stats["stats"]["detect"][key],
                    "{name}: detect.{key}"
                );
            }
        }
    }
    assert!(differ.is_empty(), "records differ between runmodes: {differ:?}");
}

/// A stats record asked for mid-run counts exactly the packets read before
/// it, whatever is in flight between reader and workers; a stop request ends
/// reading at once and still inspects and logs everything read.
#[test]
fn stats_on_request_and_stop_are_exact() {
    let pcap = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/bench/realistic-a.pcap");
    for (runmode, threads) in [("single", 1), ("autofp", 2)] {
        let dir = tempdir("runmodes", &format!("control-{runmode}"));
        let opts = RunOptions {
            inputs: vec![pcap.clone()],
            log_dir: Some(dir.clone()),
            checksum: Some("none".into()),
            runmode: Some(runmode.into()),
            threads: Some(threads),
            disable_detection: true,
            ..RunOptions::default()
        };
        let control = opts.control.clone();
        // Progress comes every 4096 packets, after the packet that made it.
        let summary = run_offline(&opts, &mut |p| match p.packets {
            4096 | 12288 => control.request_stats(),
            16384 => control.request_stop(),
            _ => {}
        })
        .unwrap();
        assert!(summary.interrupted);
        assert_eq!(summary.packets, 16384, "{runmode}: reading stops at the request");
        let text = std::fs::read_to_string(dir.join("eve.json")).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let recs: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let pkts: Vec<u64> = recs
            .iter()
            .filter(|r| r["event_type"] == "stats")
            .map(|r| r["stats"]["decoder"]["pkts"].as_u64().unwrap())
            .collect();
        assert_eq!(pkts, [4096, 12288, 16384], "{runmode}: each record counts every packet read before it");
        let flows = recs.iter().filter(|r| r["event_type"] == "flow").count() as u64;
        assert_eq!(flows, summary.flows, "{runmode}: every flow is logged at the stop");
        assert!(recs.iter().any(|r| r["flow"]["reason"] == "shutdown"));
    }
}
