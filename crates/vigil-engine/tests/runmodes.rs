//! The autofp and workers runmodes give what the single runmode gives: the
//! conformance suite's captures, with their rules, through one thread, through
//! 1, 2 and 4 autofp workers and through 2 and 3 workers that each read the
//! capture, must write the same records (order aside), and every packet read
//! must be inspected. Thresholds, detection filters and host bits included:
//! their state is shared by the workers and taken in capture order.

mod common;

use common::{tempdir, write_pcap};
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
        let own_config = dir.join("suricata.yaml").exists();
        if !small || own_config || !rules.exists() {
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
        for (mode, threads) in [("autofp", 1), ("autofp", 2), ("autofp", 4), ("workers", 2), ("workers", 3)] {
            let (multi, multi_stats) = records(pcap, rules, mode, threads, name);
            if multi != single {
                differ.push(format!("{name} ({mode}, {threads} workers)"));
            }
            // Counters add up over workers to what one thread counts; gauges
            // (memory in use) and the flow manager's bookkeeping need not.
            for key in ["pkts", "bytes", "invalid", "ipv4", "ipv6", "tcp", "udp"] {
                assert_eq!(
                    multi_stats["stats"]["decoder"][key], single_stats["stats"]["decoder"][key],
                    "{name}: decoder.{key} with {mode}, {threads} workers"
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

/// Where `stats` sits in the default configuration's eve-log types (the
/// items of the first `types:` list, at its own indentation).
fn stats_item() -> usize {
    let mut lines = vigil_engine::DEFAULT_YAML.lines().skip_while(|l| l.trim() != "types:");
    let types = lines.next().unwrap();
    let item_indent = types.len() - types.trim_start().len() + 2;
    lines
        .filter(|l| l.len() - l.trim_start().len() == item_indent && l.trim_start().starts_with("- "))
        .position(|l| l.trim_start().starts_with("- stats"))
        .unwrap()
}

/// A run of `pcap` without rules, for stats and stop requests: per-thread
/// counters too (the stats item of the default eve-log types), and no
/// periodic records (a slow build could take long enough for one).
fn control_opts(pcap: &Path, dir: &Path, runmode: &str, threads: usize) -> RunOptions {
    RunOptions {
        inputs: vec![pcap.to_path_buf()],
        log_dir: Some(dir.to_path_buf()),
        checksum: Some("none".into()),
        runmode: Some(runmode.into()),
        threads: Some(threads),
        disable_detection: true,
        sets: vec![
            format!("outputs.1.eve-log.types.{}.stats.threads=yes", stats_item()),
            "stats.interval=86400".into(),
        ],
        ..RunOptions::default()
    }
}

/// A stats record asked for mid-run counts exactly the packets read before
/// it, whatever is in flight between reader and workers; a stop request ends
/// reading at once and still inspects and logs everything read.
#[test]
fn stats_on_request_and_stop_are_exact() {
    let pcap = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/bench/realistic-a.pcap");
    for (runmode, threads) in [("single", 1), ("autofp", 2)] {
        let threads_n = threads;
        let dir = tempdir("runmodes", &format!("control-{runmode}"));
        let opts = control_opts(&pcap, &dir, runmode, threads);
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
        for r in recs.iter().filter(|r| r["event_type"] == "stats") {
            let threads = r["stats"]["threads"].as_object().expect("per-thread counters");
            assert_eq!(threads.len(), threads_n, "{runmode}");
            let sum: u64 = threads.values().map(|t| t["decoder"]["pkts"].as_u64().unwrap_or(0)).sum();
            assert_eq!(sum, r["stats"]["decoder"]["pkts"].as_u64().unwrap(), "{runmode}: threads add up to the totals");
        }
        let flows = recs.iter().filter(|r| r["event_type"] == "flow").count() as u64;
        assert_eq!(flows, summary.flows, "{runmode}: every flow is logged at the stop");
        assert!(recs.iter().any(|r| r["flow"]["reason"] == "shutdown"));
    }
}

/// The workers runmode on request: stats records come with every worker's
/// counters (what each had inspected when it answered; received = inspected
/// in each), a stop ends every worker's reading, and every flow is logged.
#[test]
fn workers_answer_stats_and_stop() {
    let pcap = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/bench/realistic-a.pcap");
    let dir = tempdir("runmodes", "control-workers");
    let opts = control_opts(&pcap, &dir, "workers", 2);
    let control = opts.control.clone();
    let summary = run_offline(&opts, &mut |p| match p.packets {
        4096 => control.request_stats(),
        16384 => control.request_stop(),
        _ => {}
    })
    .unwrap();
    assert!(summary.interrupted);
    assert_eq!(summary.packets, 16384, "the reading thread stops at the request");
    let text = std::fs::read_to_string(dir.join("eve.json")).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let recs: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let stats: Vec<&Value> = recs.iter().filter(|r| r["event_type"] == "stats").collect();
    assert_eq!(stats.len(), 2, "one on request, one at the end");
    for r in &stats {
        let st = &r["stats"];
        assert_eq!(st["capture"]["kernel_packets"], st["decoder"]["pkts"], "received = inspected");
        let threads = st["threads"].as_object().expect("per-thread counters");
        assert_eq!(threads.len(), 2);
        let sum: u64 = threads.values().map(|t| t["decoder"]["pkts"].as_u64().unwrap_or(0)).sum();
        assert_eq!(sum, st["decoder"]["pkts"].as_u64().unwrap(), "threads add up to the totals");
    }
    // The other worker stops within a few frames of the reading thread.
    let last = stats[1]["stats"]["decoder"]["pkts"].as_u64().unwrap();
    assert!(last > 4096 && last < 180_000, "{last}");
    let flows = recs.iter().filter(|r| r["event_type"] == "flow").count() as u64;
    assert_eq!(flows, summary.flows, "every flow is logged at the stop");
}

/// Rules reloaded mid-capture: packets keep flowing while the new rules
/// build, every packet is inspected by exactly one of the two rule sets, the
/// switch happens at one packet for all workers, and flows keep their
/// flowbits. A rule file with an error is refused and the old rules stay.
#[test]
fn rules_reload_under_traffic() {
    let pcap = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/bench/realistic-a.pcap");
    for (runmode, threads) in [("single", 1), ("autofp", 2)] {
        let dir = tempdir("runmodes", &format!("reload-{runmode}"));
        let rules = dir.join("reload.rules");
        // Every TCP SYN, before and after; the bit set by the old rules is
        // tested by the new ones.
        std::fs::write(&rules, "alert tcp any any -> any any (msg:\"old\"; flags:S,CE; flowbits:set,seen; sid:1;)\n")
            .unwrap();
        let opts = RunOptions {
            inputs: vec![pcap.clone()],
            log_dir: Some(dir.clone()),
            checksum: Some("none".into()),
            runmode: Some(runmode.into()),
            threads: Some(threads),
            exclusive_rules: vec![rules.clone()],
            ..RunOptions::default()
        };
        let control = opts.control.clone();
        let summary = run_offline(&opts, &mut |p| match p.packets {
            8192 => {
                std::fs::write(&rules, "alert tcp any any -> any any (msg:\"bad\"; flags:S,CE; nonsense:1; sid:3;)\n")
                    .unwrap();
                control.request_reload();
            }
            40960 => {
                std::fs::write(
                    &rules,
                    "alert tcp any any -> any any (msg:\"new\"; flags:S,CE; flowbits:set,other; sid:2;)\n\
                     alert tcp any any -> any any (msg:\"bit\"; flags:A; flowbits:isset,seen; flowbits:unset,seen; sid:4;)\n",
                )
                .unwrap();
                control.request_reload();
            }
            _ => {}
        })
        .unwrap();
        assert_eq!((summary.rule_reloads, summary.rule_reloads_refused), (1, 1), "{runmode}");
        let text = std::fs::read_to_string(dir.join("eve.json")).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let recs: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let alerts = |sid: u64| -> Vec<u64> {
            let mut v: Vec<u64> = recs
                .iter()
                .filter(|r| r["event_type"] == "alert" && r["alert"]["signature_id"] == sid)
                .map(|r| r["pcap_cnt"].as_u64().unwrap())
                .collect();
            v.sort();
            v
        };
        let (old, new) = (alerts(1), alerts(2));
        assert!(alerts(3).is_empty(), "{runmode}: the refused rules never ran");
        // `seen` has another id in the new engine (`other` took the first):
        // flows marked before the swap are found by name.
        assert!(!alerts(4).is_empty(), "{runmode}: flowbits set under the old rules survive the reload");
        assert!(
            !old.is_empty() && !new.is_empty(),
            "{runmode}: both rule sets inspected ({} / {})",
            old.len(),
            new.len()
        );
        assert!(old.last() < new.first(), "{runmode}: one switch point for every worker");
        assert!(*old.last().unwrap() > 8192, "{runmode}: the refused reload left the old rules running");
        // Every SYN was inspected by one set or the other: the same count as
        // a run that never reloads.
        let dir = tempdir("runmodes", &format!("reload-base-{runmode}"));
        let rules = dir.join("syn.rules");
        std::fs::write(&rules, "alert tcp any any -> any any (msg:\"syn\"; flags:S,CE; sid:9;)\n").unwrap();
        let base = RunOptions { log_dir: Some(dir.clone()), exclusive_rules: vec![rules], ..opts.clone() };
        let base = run_offline(&base, &mut |_| {}).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!((old.len() + new.len()) as u64, base.alerts, "{runmode}: no packet escaped inspection");
        assert_eq!(summary.packets, base.packets);
    }
}

/// With live capture's policy (a full ring drops instead of waiting) and a
/// ring of one batch, frames are lost, and every stats record still adds up:
/// received (`capture.kernel_packets`) = inspected (`decoder.pkts`) +
/// dropped (`capture.kernel_drops`).
#[test]
fn live_policy_drops_are_counted() {
    let pcap = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/bench/realistic-a.pcap");
    let dir = tempdir("runmodes", "live-drops");
    let opts = RunOptions {
        inputs: vec![pcap],
        log_dir: Some(dir.clone()),
        checksum: Some("none".into()),
        runmode: Some("autofp".into()),
        threads: Some(2),
        // The smallest rings there are: one batch per worker.
        sets: vec!["max-pending-packets=1".into()],
        drop_when_full: true,
        ..RunOptions::default()
    };
    let control = opts.control.clone();
    let summary = run_offline(&opts, &mut |p| {
        if p.packets % 16384 == 0 {
            control.request_stats();
        }
    })
    .unwrap();
    let text = std::fs::read_to_string(dir.join("eve.json")).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(summary.dropped > 0, "a one-batch ring overflows");
    assert_eq!(summary.packets, 180_000);
    let records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["event_type"] == "stats")
        .collect();
    assert!(records.len() > 5);
    for r in &records {
        let st = &r["stats"];
        let (received, dropped, inspected) = (
            st["capture"]["kernel_packets"].as_u64().unwrap(),
            st["capture"]["kernel_drops"].as_u64().unwrap_or(0),
            st["decoder"]["pkts"].as_u64().unwrap(),
        );
        assert_eq!(received, inspected + dropped, "{st}");
    }
    let last = &records.last().unwrap()["stats"];
    assert_eq!(last["capture"]["kernel_drops"], serde_json::json!(summary.dropped));
    assert_eq!(last["capture"]["kernel_packets"], serde_json::json!(180_000));
}

/// One source's flows spread over every worker: thresholds by source and by
/// destination, a detection filter and an xbit set by one flow and read by
/// another come out as one thread gives them, alert for alert.
#[test]
fn host_state_is_one_for_all_workers_and_taken_in_capture_order() {
    use vigil_wire::build::PacketBuilder;
    let dir = tempdir("runmodes", "host-state");
    // 96 flows from one scanner, each a knock then, for the later half, a
    // second word; a few from other hosts in between.
    let mut frames = Vec::new();
    for i in 0..96u16 {
        let src = if i % 8 == 7 { [198, 18, 3, (i % 5) as u8 + 1] } else { [198, 18, 3, 99] };
        let udp =
            |data: &[u8]| PacketBuilder::ipv4(src, [198, 19, 0, 1]).udp(20000 + i, 7).payload(data).build_ethernet();
        frames.push(udp(b"knock"));
        if i >= 48 {
            frames.push(udp(b"again"));
        }
    }
    write_pcap(&dir.join("in.pcap"), common::spaced(&frames));
    let rules = dir.join("test.rules");
    std::fs::write(
        &rules,
        "alert udp any any -> any any (content:\"knock\"; threshold: type limit, track by_src, count 3, seconds 60; sid:1;)\n\
         alert udp any any -> any any (content:\"knock\"; threshold: type threshold, track by_dst, count 10, seconds 60; sid:2;)\n\
         alert udp any any -> any any (content:\"again\"; detection_filter: track by_src, count 40, seconds 60; sid:3;)\n\
         alert udp any any -> any any (content:\"knock\"; xbits: toggle, odd, track ip_src, expire 60; noalert; sid:4;)\n\
         alert udp any any -> any any (content:\"again\"; xbits: isset, odd, track ip_src; sid:5;)\n",
    )
    .unwrap();
    let pcap = dir.join("in.pcap");
    let alerts = |recs: &[String]| -> Vec<(u64, u64, String)> {
        let mut out: Vec<_> = recs
            .iter()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|v| v["event_type"] == "alert")
            .map(|v| {
                (
                    v["pcap_cnt"].as_u64().unwrap(),
                    v["alert"]["signature_id"].as_u64().unwrap(),
                    v["src_port"].to_string(),
                )
            })
            .collect();
        out.sort();
        out
    };
    let (single, _) = records(&pcap, &rules, "single", 1, "host-state");
    let single = alerts(&single);
    let count = |sid: u64| single.iter().filter(|a| a.1 == sid).count();
    // Three of the scanner's knocks, and all twelve of the other hosts'
    // (none of which knocks more than three times).
    assert_eq!(count(1), 3 + 12, "{single:?}");
    assert_eq!(count(2), 96 / 10);
    // The scanner says "again" 42 times: the last two pass the filter.
    assert_eq!(count(3), 2, "{single:?}");
    assert!(count(5) > 0);
    for (mode, threads) in [("autofp", 2), ("autofp", 4), ("workers", 2), ("workers", 3)] {
        let (multi, _) = records(&pcap, &rules, mode, threads, "host-state");
        assert_eq!(alerts(&multi), single, "{mode}, {threads} workers");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
