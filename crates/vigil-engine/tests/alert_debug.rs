//! `alert-debug.log` end to end: a block per alert with the packet, its
//! flow, the alert and hex dumps of the packet and its payload.

mod common;

use common::{offline_opts, short_session, spaced, tempdir, write_pcap};
use vigil_engine::{run_offline, RunOptions};

#[test]
fn a_block_per_alert_with_the_packet_the_flow_and_the_payload() {
    let dir = tempdir("alertdebug", "blocks");
    write_pcap(&dir.join("in.pcap"), spaced(&short_session()));
    std::fs::write(
        dir.join("test.rules"),
        "alert tcp any any -> any any (msg:\"hello sent\"; dsize:5; classtype:bad-unknown; sid:7; rev:3;)\n",
    )
    .unwrap();
    std::fs::write(dir.join("vigil.yaml"), "outputs:\n  - alert-debug:\n      enabled: yes\n      append: no\n")
        .unwrap();
    let opts = RunOptions { config: Some(dir.join("vigil.yaml")), ..offline_opts(&dir) };
    run_offline(&opts, &mut |_| {}).unwrap();
    let text = std::fs::read_to_string(dir.join("alert-debug.log")).unwrap();
    assert_eq!(text.matches("+================\n").count(), 1, "{text}");
    for line in [
        "PCAP PKT NUM:      4",
        "SRC IP:            198.18.0.1",
        "SRC PORT:          40000",
        "TCP SEQ:           1001",
        "FLOW:              to_server: TRUE, to_client: FALSE",
        "FLOW PKTS TODST:   3",
        "ALERT MSG [00]:      hello sent",
        "ALERT SID [00]:      7",
        "ALERT REV [00]:      3",
        "ALERT FOUND IN [00]: PACKET",
        "PAYLOAD LEN:         5",
        " 0000  68 65 6C 6C 6F",
    ] {
        assert!(text.lines().any(|l| l.starts_with(line)), "no {line:?} in:\n{text}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
