//! Captures built with vigil's own builders, run offline: flow records,
//! `flow_id` on anomaly records, reassembled datagrams inspected once, and
//! the `flow.*`/`defrag.*` counters.

mod common;

use common::{of_type, run_eve, tempdir, write_pcap};
use serde_json::Value;
use vigil_defrag::split;
use vigil_engine::RunOptions;
use vigil_types::Timestamp;
use vigil_wire::build::{self, PacketBuilder};
use vigil_wire::ethertype;
use vigil_wire::tcp::flags::{ACK, FIN, PSH, SYN};

fn run(name: &str, frames: &[(i64, Vec<u8>)], sets: &[&str]) -> Vec<Value> {
    let dir = tempdir("engine-flows", name);
    let pcap = dir.join("in.pcap");
    let at = |secs: i64| Timestamp::from_micros(1_700_000_000 + secs, 0);
    write_pcap(&pcap, frames.iter().map(|(secs, f)| (at(*secs), f.clone())));
    let mut all_sets = vec!["outputs.1.eve-log.types.2.anomaly.types.decode=yes".to_string()];
    all_sets.extend(sets.iter().map(|s| s.to_string()));
    let opts = RunOptions {
        inputs: vec![pcap],
        log_dir: Some(dir.clone()),
        checksum: Some("none".into()),
        sets: all_sets,
        ..Default::default()
    };
    run_eve(&dir, &opts)
}

fn last_stats(recs: &[Value]) -> &Value {
    &of_type(recs, "stats").last().expect("a stats record")["stats"]
}

const C: [u8; 4] = [192, 0, 2, 10];
const S: [u8; 4] = [198, 51, 100, 20];

fn tcp(from: [u8; 4], to: [u8; 4], sp: u16, dp: u16, flags: u8, payload: &[u8]) -> Vec<u8> {
    PacketBuilder::ipv4(from, to).tcp(sp, dp).tcp_flags(flags).payload(payload).build_ethernet()
}

#[test]
fn a_tcp_session_is_one_flow_record() {
    // Real sequence numbers: the flow's state is its TCP session's.
    let seg = |from, to, sp, dp, flags, seq, ack, payload: &[u8]| {
        PacketBuilder::ipv4(from, to)
            .tcp(sp, dp)
            .tcp_flags(flags)
            .tcp_seq_ack(seq, ack)
            .payload(payload)
            .build_ethernet()
    };
    let frames = vec![
        (0, seg(C, S, 40000, 80, SYN, 100, 0, b"")),
        (0, seg(S, C, 80, 40000, SYN | ACK, 500, 101, b"")),
        (1, seg(C, S, 40000, 80, ACK, 101, 501, b"")),
        (1, seg(C, S, 40000, 80, ACK | PSH, 101, 501, b"GET / HTTP/1.1\r\n\r\n")),
        (2, seg(S, C, 80, 40000, ACK | PSH, 501, 119, b"HTTP/1.1 200 OK\r\n\r\n")),
        (3, seg(C, S, 40000, 80, FIN | ACK, 119, 520, b"")),
        (3, seg(S, C, 80, 40000, FIN | ACK, 520, 120, b"")),
    ];
    let recs = run("tcp", &frames, &[]);
    let flows = of_type(&recs, "flow");
    assert_eq!(flows.len(), 1, "{flows:?}");
    let f = flows[0];
    assert_eq!(f["src_ip"], "192.0.2.10");
    assert_eq!(f["src_port"], 40000);
    assert_eq!(f["dest_ip"], "198.51.100.20");
    assert_eq!(f["dest_port"], 80);
    assert_eq!(f["proto"], "TCP");
    assert_eq!(f["flow"]["pkts_toserver"], 4);
    assert_eq!(f["flow"]["pkts_toclient"], 3);
    let bytes_ts: usize = frames.iter().filter(|(_, d)| d[26..30] == C).map(|(_, d)| d.len()).sum();
    assert_eq!(f["flow"]["bytes_toserver"], bytes_ts);
    assert_eq!(f["flow"]["state"], "closed");
    assert_eq!(f["flow"]["reason"], "shutdown");
    assert_eq!(f["flow"]["age"], 3);
    assert_eq!(f["flow"]["alerted"], false);
    assert_eq!(f["tcp"]["syn"], true);
    assert_eq!(f["tcp"]["fin"], true);
    assert!(f["flow_id"].as_u64().unwrap() > 0);
    let st = last_stats(&recs);
    assert_eq!(st["flow"]["total"], 1);
    assert_eq!(st["flow"]["tcp"], 1);
    assert_eq!(st["flow"]["end"]["state"]["closed"], 1);
}

#[test]
fn idle_flows_time_out_by_packet_time() {
    let q = PacketBuilder::ipv4(C, S).udp(5353, 53).payload(b"q").build_ethernet();
    // The same tuple 31 s later is a second flow; the first timed out (udp new 30 s).
    let frames = vec![(0, q.clone()), (31, q.clone()), (32, q)];
    let recs = run("timeout", &frames, &[]);
    let flows = of_type(&recs, "flow");
    assert_eq!(flows.len(), 2);
    assert_eq!(flows[0]["flow"]["reason"], "timeout");
    assert_eq!(flows[0]["flow"]["pkts_toserver"], 1);
    assert_eq!(flows[1]["flow"]["reason"], "shutdown");
    assert_eq!(flows[1]["flow"]["pkts_toserver"], 2);
    assert_ne!(flows[0]["flow_id"], flows[1]["flow_id"]);
}

#[test]
fn anomalies_carry_their_flow_id() {
    // A TCP SYN with a duplicated option: an anomaly on a packet of a flow.
    let mut f = tcp(C, S, 40000, 443, SYN, b"");
    // Rewrite the TCP header to carry two NOP+window-scale options (duplicate).
    let ip_at = 14;
    let tcp_at = ip_at + 20;
    let mut opts = vec![1, 3, 3, 7, 1, 3, 3, 7];
    let payload = f.split_off(tcp_at + 20);
    f[tcp_at + 12] = (5 + 2) << 4;
    f.append(&mut opts);
    f.extend_from_slice(&payload);
    let total = (f.len() - ip_at) as u16;
    f[ip_at + 2..ip_at + 4].copy_from_slice(&total.to_be_bytes());
    let recs = run("anomaly", &[(0, f), (1, tcp(S, C, 443, 40000, SYN | ACK, b""))], &[]);
    let anomalies = of_type(&recs, "anomaly");
    assert_eq!(anomalies.len(), 1, "{recs:?}");
    let a = anomalies[0];
    let keys: Vec<&str> = a.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(&keys[..2], ["timestamp", "flow_id"]);
    let flow = of_type(&recs, "flow")[0];
    assert_eq!(a["flow_id"], flow["flow_id"]);
    assert_eq!(flow["flow"]["pkts_toclient"], 1);
}

#[test]
fn fragmented_datagram_is_reassembled_and_inspected_once() {
    let payload = b"GET /cgi-bin/evil HTTP/1.1\r\nHost: x\r\n\r\n";
    let d = PacketBuilder::ipv4(C, S).tcp(40000, 80).tcp_flags(ACK | PSH).payload(payload).build_ip();
    let eth = |ip: &[u8]| build::ethernet(build::TEST_DST_MAC, build::TEST_SRC_MAC, ethertype::IPV4, ip);
    let body = d.len() - 20;
    // Out of order, with a duplicate: a tiny first fragment, the rest.
    let frames = vec![
        (0, eth(&split::ipv4_fragment(&d, 16, body, false))),
        (0, eth(&split::ipv4_fragment(&d, 8, 8, true))),
        (0, eth(&split::ipv4_fragment(&d, 8, 8, true))),
        (0, eth(&split::ipv4_fragment(&d, 0, 8, true))),
        (1, tcp(S, C, 80, 40000, ACK, b"")),
    ];
    let recs = run("defrag", &frames, &[]);
    let flows = of_type(&recs, "flow");
    assert_eq!(flows.len(), 1, "{flows:?}");
    // The reassembled datagram counts once (fragments themselves do not),
    // with the bytes of its frame: Ethernet header plus datagram.
    assert_eq!(flows[0]["flow"]["pkts_toserver"], 1);
    assert_eq!(flows[0]["flow"]["bytes_toserver"], 14 + d.len());
    assert_eq!(flows[0]["flow"]["pkts_toclient"], 1);
    let st = last_stats(&recs);
    assert_eq!(st["defrag"]["ipv4"]["fragments"], 4);
    assert_eq!(st["defrag"]["ipv4"]["reassembled"], 1);
    assert_eq!(st["decoder"]["event"]["ipv4"]["frag_overlap"], 1);
    // The duplicate raised an overlap anomaly, on the fragment (no flow).
    let overlap: Vec<_> = of_type(&recs, "anomaly")
        .into_iter()
        .filter(|a| a["anomaly"]["event"] == "decoder.ipv4.frag_overlap")
        .collect();
    assert_eq!(overlap.len(), 1);
    assert!(overlap[0].get("flow_id").is_none());
}

#[test]
fn fragments_in_a_vlan_are_reassembled_in_it() {
    let d = PacketBuilder::ipv6(
        [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
        [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2],
    )
    .udp(5000, 53)
    .payload(&[0x55; 100])
    .build_ip();
    let frame = |ip: &[u8]| {
        let e = build::ethernet(build::TEST_DST_MAC, build::TEST_SRC_MAC, ethertype::IPV6, ip);
        build::vlan_tag(&e, ethertype::VLAN, &[7])
    };
    let frames = vec![
        (0, frame(&split::ipv6_fragment(&d, 9, 0, 48, true))),
        (0, frame(&split::ipv6_fragment(&d, 9, 48, 100, false))),
    ];
    let recs = run("defrag6", &frames, &[]);
    let flows = of_type(&recs, "flow");
    assert_eq!(flows.len(), 1);
    assert_eq!(flows[0]["vlan"], serde_json::json!([7]));
    assert_eq!(flows[0]["proto"], "UDP");
    assert_eq!(flows[0]["dest_port"], 53);
    let st = last_stats(&recs);
    assert_eq!(st["defrag"]["ipv6"]["reassembled"], 1);
    assert_eq!(st["flow"]["udp"], 1);
}

#[test]
fn flow_records_can_be_switched_off() {
    let q = PacketBuilder::ipv4(C, S).udp(5353, 53).payload(b"q").build_ethernet();
    let recs = run("noflow", &[(0, q)], &["outputs.1.eve-log.types.31.flow.enabled=no"]);
    assert!(of_type(&recs, "flow").is_empty());
    assert_eq!(last_stats(&recs)["flow"]["total"], 1);
}

/// One frame stamped five hours ahead (a broken capture, a hostile
/// sender) changes nothing for the other flows: they are not timed out by
/// it, and the run gives the same flow records as without that frame.
#[test]
fn one_frame_from_the_future_does_not_end_every_flow() {
    let udp = |sp: u16, payload: &[u8]| PacketBuilder::ipv4(C, S).udp(sp, 53).payload(payload).build_ethernet();
    let mut frames: Vec<(i64, Vec<u8>)> = Vec::new();
    for i in 0..20i64 {
        // Twenty flows, each a packet at i and one at i + 20 (UDP flows
        // time out 30 s after their last packet).
        frames.push((i, udp(40000 + i as u16, b"first")));
    }
    for i in 0..20i64 {
        frames.push((20 + i, udp(40000 + i as u16, b"second")));
    }
    let mut with_outlier = frames.clone();
    with_outlier.insert(20, (5 * 3600, udp(50000, b"from the future")));
    let reasons = |recs: &[Value]| {
        let mut v: Vec<(u64, String)> = of_type(recs, "flow")
            .iter()
            .filter(|f| f["src_port"] != 50000)
            .map(|f| (f["src_port"].as_u64().unwrap(), f["flow"]["reason"].as_str().unwrap().to_string()))
            .collect();
        v.sort();
        v
    };
    let plain = reasons(&run("clock-plain", &frames, &[]));
    let odd = reasons(&run("clock-outlier", &with_outlier, &[]));
    assert_eq!(plain.len(), 20);
    assert!(plain.iter().all(|(_, r)| r == "shutdown"), "{plain:?}");
    assert_eq!(odd, plain);
}
