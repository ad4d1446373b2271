//! `fast.log` end to end: a `- fast:` output gets one line per alert, with
//! the packet's time and addresses, and what a drop rule did to the packet.

mod common;

use common::{spaced, tempdir, write_pcap};
use vigil_engine::{run_offline, RunOptions};
use vigil_wire::build::PacketBuilder;
use vigil_wire::tcp::flags::{ACK, PSH, SYN};

const C: [u8; 4] = [198, 18, 0, 1];
const S: [u8; 4] = [198, 18, 0, 2];

fn seg(to_server: bool, flags: u8, seq: u32, ack: u32, payload: &[u8]) -> Vec<u8> {
    let (b, sp, dp) =
        if to_server { (PacketBuilder::ipv4(C, S), 40000, 80) } else { (PacketBuilder::ipv4(S, C), 80, 40000) };
    b.tcp(sp, dp).tcp_flags(flags).tcp_seq_ack(seq, ack).payload(payload).build_ethernet()
}

/// The lines of fast.log after a run of `rules` over a short session that
/// says `hello` to the server and `hi` back.
fn fast_lines(name: &str, rules: &str, ips: bool) -> Vec<String> {
    let dir = tempdir("fast", name);
    let pcap = dir.join("in.pcap");
    let frames = [
        seg(true, SYN, 1000, 0, b""),
        seg(false, SYN | ACK, 5000, 1001, b""),
        seg(true, ACK, 1001, 5001, b""),
        seg(true, ACK | PSH, 1001, 5001, b"hello"),
        seg(false, ACK | PSH, 5001, 1006, b"hi"),
        seg(true, ACK, 1006, 5003, b""),
    ];
    write_pcap(&pcap, spaced(&frames));
    std::fs::write(dir.join("test.rules"), rules).unwrap();
    let yaml = "outputs:\n  - fast:\n      enabled: yes\n      filename: fast.log\n      append: no\n";
    std::fs::write(dir.join("vigil.yaml"), yaml).unwrap();
    let opts = RunOptions {
        inputs: vec![pcap],
        log_dir: Some(dir.clone()),
        config: Some(dir.join("vigil.yaml")),
        checksum: Some("none".into()),
        exclusive_rules: vec![dir.join("test.rules")],
        simulate_ips: ips,
        ..Default::default()
    };
    run_offline(&opts, &mut |_| {}).unwrap();
    let text = std::fs::read_to_string(dir.join("fast.log")).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    text.lines().map(str::to_string).collect()
}

#[test]
fn one_line_per_alert() {
    let rules = "alert tcp any any -> any any (msg:\"hello seen\"; content:\"hello\"; priority:1; sid:1; rev:2;)\n\
                 alert tcp any 80 -> any any (msg:\"reply\"; content:\"hi\"; sid:2;)\n";
    let lines = fast_lines("alerts", rules, false);
    assert_eq!(lines.len(), 2, "{lines:?}");
    // The stream raises the alert, on the client's packet after the server acknowledged `hello`.
    assert_eq!(
        lines[0],
        "11/14/2023-22:13:20.000005  [**] [1:1:2] hello seen [**] [Classification: (null)] [Priority: 1] \
         {TCP} 198.18.0.1:40000 -> 198.18.0.2:80"
    );
    assert!(lines[1].contains("[1:2:0] reply [**]"), "{lines:?}");
    assert!(lines[1].ends_with("{TCP} 198.18.0.2:80 -> 198.18.0.1:40000"), "{lines:?}");
}

#[test]
fn drop_rules_are_marked() {
    let rules = "drop tcp any any -> any any (msg:\"hello dropped\"; content:\"hello\"; sid:1;)\n";
    let ids = fast_lines("wdrop", rules, false);
    assert_eq!(ids.len(), 1, "{ids:?}");
    assert!(ids[0].contains("  [wDrop] [**] [1:1:0] hello dropped"), "{ids:?}");
    let ips = fast_lines("drop", rules, true);
    assert_eq!(ips.len(), 1, "{ips:?}");
    assert!(ips[0].contains("  [Drop] [**] [1:1:0] hello dropped"), "{ips:?}");
}
