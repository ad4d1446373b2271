//! `-f` on capture files: frames the BPF filter rejects are never seen
//! (no counters, no `pcap_cnt`), as in Suricata's pcap-file mode. The
//! expression is compiled by the system's libpcap; skipped, and says so,
//! where it cannot be loaded.

mod common;

use common::{of_type, offline_opts, run_eve, short_session, spaced, tempdir, write_pcap};
use vigil_engine::{run_offline, RunOptions};
use vigil_wire::build::PacketBuilder;

fn libpcap() -> bool {
    vigil_capture::compile_bpf("udp", 1).is_ok()
}

fn write(dir: &std::path::Path) {
    let mut frames = short_session();
    let dns = PacketBuilder::ipv4([198, 18, 0, 7], [198, 18, 0, 8]).udp(5000, 53).payload(b"x").build_ethernet();
    frames.insert(2, dns);
    write_pcap(&dir.join("in.pcap"), spaced(&frames));
    std::fs::write(dir.join("test.rules"), "alert udp any any -> any any (msg:\"udp\"; sid:1;)\n").unwrap();
}

#[test]
fn only_the_frames_the_filter_keeps_are_seen() {
    if !libpcap() {
        eprintln!("skipped: libpcap cannot be loaded to compile filters");
        return;
    }
    let dir = tempdir("bpffile", "udp");
    write(&dir);
    let opts = RunOptions { bpf_filter: Some("udp".into()), ..offline_opts(&dir) };
    let recs = run_eve(&dir, &opts);
    let stats = of_type(&recs, "stats").last().map(|r| r["stats"].clone()).unwrap();
    assert_eq!(stats["decoder"]["pkts"], 1, "the TCP session is not seen");
    assert_eq!(stats["flow"]["total"], 1);
    let alerts = of_type(&recs, "alert");
    assert_eq!(alerts.len(), 1);
    assert_eq!(alerts[0]["pcap_cnt"], 1, "frames are numbered after the filter");
}

#[test]
fn an_expression_libpcap_refuses_fails_the_run() {
    if !libpcap() {
        eprintln!("skipped: libpcap cannot be loaded to compile filters");
        return;
    }
    let dir = tempdir("bpffile", "bad");
    write(&dir);
    let opts = RunOptions { bpf_filter: Some("port (".into()), ..offline_opts(&dir) };
    let err = run_offline(&opts, &mut |_| {}).unwrap_err().to_string();
    assert!(err.contains("BPF filter \"port (\""), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
