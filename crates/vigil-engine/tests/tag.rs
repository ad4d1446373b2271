//! `tag` end to end: the packets after an alert, of its session or of one of
//! its hosts, logged as EVE `packet` records when the alert output asks.

mod common;

use common::{of_type, offline_opts, run_eve, short_session, spaced, tcp_seg, tempdir, write_pcap, SERVER};
use serde_json::Value;
use vigil_engine::RunOptions;
use vigil_wire::build::PacketBuilder;
use vigil_wire::tcp::flags::SYN;

fn run(name: &str, rule: &str, frames: &[Vec<u8>], tagged_packets: bool) -> Vec<Value> {
    let dir = tempdir("tag", name);
    write_pcap(&dir.join("in.pcap"), spaced(frames));
    std::fs::write(dir.join("test.rules"), format!("{rule}\n")).unwrap();
    let yaml = format!(
        "outputs:\n  - eve-log:\n      enabled: yes\n      filename: eve.json\n      types:\n        - alert:\n            tagged-packets: {tagged_packets}\n"
    );
    std::fs::write(dir.join("vigil.yaml"), yaml).unwrap();
    run_eve(&dir, &RunOptions { config: Some(dir.join("vigil.yaml")), ..offline_opts(&dir) })
}

#[test]
fn a_session_tag_logs_the_next_packets_of_the_flow() {
    let rule = "alert tcp any any -> any any (flags:S; tag:session,3,packets; sid:1;)";
    let recs = run("session", rule, &short_session(), true);
    assert_eq!(of_type(&recs, "alert").len(), 1);
    let packets = of_type(&recs, "packet");
    // Three packets counting the SYN that alerted: the two after it.
    assert_eq!(packets.len(), 2, "{recs:#?}");
    assert_eq!((&packets[0]["pcap_cnt"], &packets[1]["pcap_cnt"]), (&Value::from(2), &Value::from(3)));
    assert_eq!(packets[0]["flow_id"], of_type(&recs, "alert")[0]["flow_id"]);
    assert!(packets[0]["packet"].as_str().is_some_and(|s| !s.is_empty()));
    assert_eq!(packets[0]["packet_info"]["linktype"], 1);
    // The default is the whole session (256 packets).
    let recs =
        run("session-default", "alert tcp any any -> any any (flags:S; tag:session; sid:1;)", &short_session(), true);
    assert_eq!(of_type(&recs, "packet").len(), 7);
    // Without `tagged-packets`, nothing is logged.
    let recs = run("session-off", rule, &short_session(), false);
    assert!(of_type(&recs, "packet").is_empty());
}

#[test]
fn a_host_tag_logs_the_hosts_other_flows() {
    let other = PacketBuilder::ipv4(SERVER, [198, 18, 0, 9]).udp(5000, 53).payload(b"x").build_ethernet();
    let unrelated = PacketBuilder::ipv4([198, 18, 0, 7], [198, 18, 0, 9]).udp(5000, 53).payload(b"x").build_ethernet();
    let frames = vec![tcp_seg(true, SYN, 1000, 0, b""), unrelated, other];
    // The alert's destination (the server) is tagged: its UDP packet is logged, the unrelated one not.
    let recs = run("host", "alert tcp any any -> any any (flags:S; tag:host,10,packets,dst; sid:1;)", &frames, true);
    let packets = of_type(&recs, "packet");
    assert_eq!(packets.len(), 1, "{recs:#?}");
    assert_eq!((&packets[0]["pcap_cnt"], &packets[0]["proto"]), (&Value::from(3), &Value::from("UDP")));
    // The source (the client) is in neither.
    let recs =
        run("host-src", "alert tcp any any -> any any (flags:S; tag:host,10,packets,src; sid:1;)", &frames, true);
    assert!(of_type(&recs, "packet").is_empty());
}
