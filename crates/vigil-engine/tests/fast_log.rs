//! `fast.log` end to end: a `- fast:` output gets one line per alert, with
//! the packet's time and addresses, and what a drop rule did to the packet.

mod common;

use common::{offline_opts, spaced, tcp_seg as seg, tempdir, write_pcap};
use vigil_engine::{run_offline, RunOptions};
use vigil_wire::tcp::flags::{ACK, PSH, SYN};

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
    let opts = RunOptions { config: Some(dir.join("vigil.yaml")), simulate_ips: ips, ..offline_opts(&dir) };
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

/// An alert of a transaction signature written from another side than its
/// packet's (here the request's URI and the response's status, inspected
/// from the response side, decided on the flow's last pseudo packet, which
/// goes to the server) gives the same source and destination in fast.log
/// as in its EVE record.
#[test]
fn a_transaction_alert_is_written_the_way_eve_writes_it() {
    let dir = tempdir("fast", "swap");
    let req = b"GET /x HTTP/1.1\r\nHost: h\r\n\r\n";
    let resp = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
    let frames = [
        seg(true, SYN, 1000, 0, b""),
        seg(false, SYN | ACK, 5000, 1001, b""),
        seg(true, ACK, 1001, 5001, b""),
        seg(true, ACK | PSH, 1001, 5001, req),
        seg(false, ACK | PSH, 5001, 1001 + req.len() as u32, resp),
    ];
    write_pcap(&dir.join("in.pcap"), spaced(&frames));
    let rule = "alert http any any -> any any (msg:\"uri and status\"; http.uri; content:\"/x\"; http.stat_code; content:\"200\"; sid:3;)\n";
    std::fs::write(dir.join("test.rules"), rule).unwrap();
    let yaml = "outputs:\n  - fast:\n      enabled: yes\n      filename: fast.log\n  - eve-log:\n      enabled: yes\n      filename: eve.json\n      types:\n        - alert\n";
    std::fs::write(dir.join("vigil.yaml"), yaml).unwrap();
    let opts = RunOptions { config: Some(dir.join("vigil.yaml")), ..offline_opts(&dir) };
    run_offline(&opts, &mut |_| {}).unwrap();
    let fast = std::fs::read_to_string(dir.join("fast.log")).unwrap();
    let eve = std::fs::read_to_string(dir.join("eve.json")).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let alert: serde_json::Value = eve
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .find(|v: &serde_json::Value| v["event_type"] == "alert")
        .unwrap();
    // Decided on a packet to the server, written from the server's side ...
    assert_eq!(alert["pkt_src"], "stream (flow timeout)", "{alert}");
    assert_eq!(alert["direction"], "to_client", "{alert}");
    assert_eq!((&alert["src_ip"], &alert["src_port"]), (&serde_json::json!("198.18.0.2"), &serde_json::json!(80)));
    // ... in both files.
    let line = fast.lines().next().unwrap();
    assert!(line.ends_with("{TCP} 198.18.0.2:80 -> 198.18.0.1:40000"), "{line}");
}
