//! The `pcap-log` output end to end: every packet, byte for byte; only an
//! alerted flow's packets from its alert on (`conditional: alerts`); only
//! tagged packets (`conditional: tag`); a file per worker in multi mode.

mod common;

use common::{offline_opts, short_session, spaced, tempdir, write_pcap};
use std::path::Path;
use vigil_capture::{PcapFile, Source};
use vigil_engine::{run_offline, RunOptions};

/// The frames of every pcap file in `dir` whose name starts with `prefix`, by file.
fn logged(dir: &Path, prefix: &str) -> Vec<(String, Vec<Vec<u8>>)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        if !name.starts_with(prefix) {
            continue;
        }
        let mut file = PcapFile::open(dir.join(&name)).unwrap();
        let mut frames = Vec::new();
        while let Some(r) = file.next_packet() {
            frames.push(r.unwrap().data.to_vec());
        }
        out.push((name, frames));
    }
    out.sort();
    out
}

/// The short session and, between its packets, a datagram of another flow.
fn frames() -> Vec<Vec<u8>> {
    use vigil_wire::build::PacketBuilder;
    let mut f = short_session();
    let other = PacketBuilder::ipv4([198, 18, 0, 7], [198, 18, 0, 8]).udp(5000, 6000).payload(b"x").build_ethernet();
    f.insert(5, other);
    f
}

fn run(name: &str, output: &str, rules: &str, runmode: &str) -> (std::path::PathBuf, Vec<Vec<u8>>) {
    let dir = tempdir("pcaplog", name);
    let frames = frames();
    write_pcap(&dir.join("in.pcap"), spaced(&frames));
    std::fs::write(dir.join("test.rules"), rules).unwrap();
    std::fs::write(dir.join("vigil.yaml"), format!("outputs:\n  - pcap-log:\n      enabled: yes\n{output}")).unwrap();
    let opts = RunOptions {
        config: Some(dir.join("vigil.yaml")),
        runmode: Some(runmode.into()),
        threads: Some(2),
        ..offline_opts(&dir)
    };
    run_offline(&opts, &mut |_| {}).unwrap();
    (dir, frames)
}

#[test]
fn every_packet_byte_for_byte_in_a_file_named_by_the_first() {
    let (dir, frames) = run("all", "", "", "single");
    let files = logged(&dir, "log.pcap");
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].0, "log.pcap.1700000000");
    assert_eq!(files[0].1, frames);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn alerts_log_an_alerted_flow_from_its_alert_on() {
    let rules = "alert tcp any any -> any any (msg:\"hello\"; dsize:5; sid:1;)\n";
    let (dir, frames) = run("alerts", "      conditional: alerts\n", rules, "single");
    let files = logged(&dir, "log.pcap");
    // The alert is on the client's "hello" (frame 3); the other flow's datagram (frame 5) is not written.
    let expected: Vec<Vec<u8>> =
        frames.iter().enumerate().filter(|(i, _)| *i >= 3 && *i != 5).map(|(_, f)| f.clone()).collect();
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].1, expected);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn tag_logs_the_tagged_packets_only() {
    let rules = "alert tcp any any -> any any (msg:\"hello\"; dsize:5; tag:session,3,packets; sid:1;)\n";
    let output = "      conditional: tag\n  - eve-log:\n      enabled: yes\n      filename: eve.json\n      types:\n        - alert:\n            tagged-packets: yes\n";
    let (dir, _) = run("tag", output, rules, "single");
    let eve = std::fs::read_to_string(dir.join("eve.json")).unwrap();
    let tagged = eve.lines().filter(|l| l.contains("\"event_type\":\"packet\"")).count();
    assert!(tagged > 0, "the rule tags packets: {eve}");
    let files = logged(&dir, "log.pcap");
    assert_eq!(files.iter().map(|(_, f)| f.len()).sum::<usize>(), tagged, "the tagged packets, as EVE lists them");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn multi_mode_writes_a_file_per_worker() {
    let (dir, frames) = run("multi", "      mode: multi\n      filename: log.%n.pcap\n", "", "autofp");
    let files = logged(&dir, "log.");
    assert!(files.iter().all(|(n, _)| n == "log.1.pcap" || n == "log.2.pcap"), "{files:?}");
    let mut all: Vec<Vec<u8>> = files.into_iter().flat_map(|(_, f)| f).collect();
    let mut want = frames;
    all.sort();
    want.sort();
    assert_eq!(all, want, "every packet once, in its worker's file");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_bpf_filter_keeps_only_its_frames() {
    if vigil_capture::compile_bpf("udp", 1).is_err() {
        eprintln!("skipped: libpcap cannot be loaded to compile filters");
        return;
    }
    let (dir, frames) = run("bpf", "      bpf-filter: udp\n", "", "single");
    let files = logged(&dir, "log.pcap");
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].1, vec![frames[5].clone()], "only the datagram");
    std::fs::remove_dir_all(&dir).unwrap();
}
