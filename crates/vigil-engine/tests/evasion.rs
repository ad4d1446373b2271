//! The evasion set: an attack string hidden by the tricks that beat naive
//! IDSes (segmentation, reordering, overlaps resolved differently by each
//! target OS, IP fragmentation), built with vigil's own packet builders and
//! run offline. Each case asserts the alert, or its absence where the
//! target host itself would see benign bytes.

mod common;

use common::{run_eve, spaced, tempdir, write_pcap};
use serde_json::Value;
use vigil_defrag::split;
use vigil_engine::RunOptions;
use vigil_wire::build::{self, PacketBuilder};
use vigil_wire::ethertype;
use vigil_wire::tcp::flags::{ACK, FIN, PSH, SYN};

const ATTACK: &[u8] = b"ATTACK-STRING";
const RULES: &str = "alert tcp any any -> any any (msg:\"attack in stream\"; content:\"ATTACK-STRING\"; sid:1;)\n\
alert tcp-pkt any any -> any any (msg:\"attack in one packet\"; content:\"ATTACK-STRING\"; sid:2;)\n";

/// Runs the frames under `rules` with the receiving host's OS set to `os`;
/// returns the EVE records.
fn run(name: &str, frames: &[Vec<u8>], os: &str, rules: &str) -> Vec<Value> {
    run_mode(name, frames, os, rules, false)
}

/// [`run`], inline (`--simulate-ips`) when `ips`.
fn run_mode(name: &str, frames: &[Vec<u8>], os: &str, rules: &str, ips: bool) -> Vec<Value> {
    let dir = tempdir("evasion", name);
    let pcap = dir.join("in.pcap");
    write_pcap(&pcap, spaced(frames));
    std::fs::write(dir.join("test.rules"), rules).unwrap();
    std::fs::write(
        dir.join("os.yaml"),
        format!("host-os-policy:\n  {os}: [0.0.0.0/0, \"::/0\"]\ndefrag:\n  timeout: 60\n"),
    )
    .unwrap();
    let opts = RunOptions {
        inputs: vec![pcap],
        log_dir: Some(dir.clone()),
        checksum: Some("none".into()),
        exclusive_rules: vec![dir.join("test.rules")],
        includes: vec![dir.join("os.yaml")],
        simulate_ips: ips,
        ..Default::default()
    };
    run_eve(&dir, &opts)
}

fn alerts_of(recs: &[Value], sid: u64) -> Vec<&Value> {
    recs.iter().filter(|r| r["event_type"] == "alert" && r["alert"]["signature_id"] == sid).collect()
}

/// The alert counts of sid 1 (stream) and sid 2 (single packet) under [`RULES`].
fn alerts(name: &str, frames: &[Vec<u8>], os: &str) -> (usize, usize) {
    let recs = run(name, frames, os, RULES);
    (alerts_of(&recs, 1).len(), alerts_of(&recs, 2).len())
}

/// A client/server pair and the TCP session between them.
struct Conn {
    v6: bool,
}

const C4: [u8; 4] = [198, 18, 0, 1];
const S4: [u8; 4] = [198, 18, 0, 2];
const C6: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
const S6: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];
const CISN: u32 = 0xffff_fff0; // the client's sequence numbers wrap mid-stream
const SISN: u32 = 5000;

impl Conn {
    fn builder(&self, to_server: bool) -> PacketBuilder {
        match (self.v6, to_server) {
            (false, true) => PacketBuilder::ipv4(C4, S4),
            (false, false) => PacketBuilder::ipv4(S4, C4),
            (true, true) => PacketBuilder::ipv6(C6, S6),
            (true, false) => PacketBuilder::ipv6(S6, C6),
        }
    }

    /// The IP datagram of a segment.
    fn ip(&self, to_server: bool, flags: u8, seq: u32, ack: u32, payload: &[u8]) -> Vec<u8> {
        let (sp, dp) = if to_server { (40000, 80) } else { (80, 40000) };
        self.builder(to_server).tcp(sp, dp).tcp_flags(flags).tcp_seq_ack(seq, ack).payload(payload).build_ip()
    }

    fn eth(&self, ip: &[u8]) -> Vec<u8> {
        let et = if self.v6 { ethertype::IPV6 } else { ethertype::IPV4 };
        build::ethernet(build::TEST_DST_MAC, build::TEST_SRC_MAC, et, ip)
    }

    fn seg(&self, to_server: bool, flags: u8, seq: u32, ack: u32, payload: &[u8]) -> Vec<u8> {
        self.eth(&self.ip(to_server, flags, seq, ack, payload))
    }

    /// Client data at stream offset `off`.
    fn data(&self, off: usize, payload: &[u8]) -> Vec<u8> {
        self.seg(true, ACK | PSH, CISN.wrapping_add(1 + off as u32), SISN + 1, payload)
    }

    /// A whole session around `middle` (the client's data packets), whose
    /// client stream is `len` bytes long.
    fn session(&self, middle: Vec<Vec<u8>>, len: usize) -> Vec<Vec<u8>> {
        let c = CISN.wrapping_add(1);
        let end = c.wrapping_add(len as u32);
        let mut f = vec![
            self.seg(true, SYN, CISN, 0, b""),
            self.seg(false, SYN | ACK, SISN, c, b""),
            self.seg(true, ACK, c, SISN + 1, b""),
        ];
        f.extend(middle);
        f.extend([
            self.seg(false, ACK, SISN + 1, end, b""),
            self.seg(true, FIN | ACK, end, SISN + 1, b""),
            self.seg(false, FIN | ACK, SISN + 1, end.wrapping_add(1), b""),
            self.seg(true, ACK, end.wrapping_add(1), SISN + 2, b""),
        ]);
        f
    }
}

#[test]
fn one_byte_segments_match_once_in_the_stream() {
    for v6 in [false, true] {
        let c = Conn { v6 };
        let middle = ATTACK.iter().enumerate().map(|(i, b)| c.data(i, &[*b])).collect();
        // Only the reassembled stream holds the string: the packet rule sees nothing.
        assert_eq!(alerts("tiny", &c.session(middle, ATTACK.len()), "bsd"), (1, 0), "v6 {v6}");
    }
}

#[test]
fn inline_a_pattern_split_over_packets_matches_once_on_the_packet_completing_it() {
    // Inline, each packet's stream bytes are inspected as they come, with the
    // bytes before them: the string is whole in the last byte's packet, and
    // the packet after it does not raise it again.
    let c = Conn { v6: false };
    let mut middle: Vec<_> = ATTACK.iter().enumerate().map(|(i, b)| c.data(i, &[*b])).collect();
    middle.push(c.data(ATTACK.len(), b"tail"));
    let frames = c.session(middle, ATTACK.len() + 4);
    let recs = run_mode("inline-tiny", &frames, "bsd", RULES, true);
    let hits = alerts_of(&recs, 1);
    assert_eq!(hits.len(), 1, "{recs:#?}");
    assert_eq!(hits[0]["pcap_cnt"], 3 + ATTACK.len() as u64, "the packet carrying the last byte");
    assert!(alerts_of(&recs, 2).is_empty());
    // The string again in the next packet is a match of its own.
    let twice = vec![c.data(0, ATTACK), c.data(ATTACK.len(), ATTACK)];
    let recs = run_mode("inline-twice", &c.session(twice, 2 * ATTACK.len()), "bsd", RULES, true);
    assert_eq!(alerts_of(&recs, 1).len(), 2, "{recs:#?}");
}

#[test]
fn segments_out_of_order_match_once() {
    let c = Conn { v6: false };
    let mut middle: Vec<_> = ATTACK.chunks(3).enumerate().map(|(i, ch)| c.data(i * 3, ch)).collect();
    middle.reverse();
    middle.swap(1, 3);
    assert_eq!(alerts("ooo", &c.session(middle, ATTACK.len()), "bsd").0, 1);
}

#[test]
fn a_whole_string_in_one_segment_alerts_once_per_rule() {
    let c = Conn { v6: false };
    assert_eq!(alerts("whole", &c.session(vec![c.data(0, ATTACK)], ATTACK.len()), "linux"), (1, 1));
}

/// "ATTACK-" then, out of order, a benign segment for the rest and the
/// attack's tail with the same extent: the receiver's OS decides which stays.
fn same_extent_overlap(c: &Conn) -> Vec<Vec<u8>> {
    c.session(vec![c.data(7, b"XXXXXX"), c.data(7, b"STRING"), c.data(0, b"ATTACK-")], ATTACK.len())
}

/// A benign tail held, then a segment starting two bytes earlier carrying
/// the attack's tail over it.
fn earlier_start_overlap(c: &Conn) -> Vec<Vec<u8>> {
    c.session(vec![c.data(7, b"XXXXXX"), c.data(5, b"K-STRING"), c.data(0, b"ATTACK-")], ATTACK.len())
}

#[test]
fn overlapping_segments_follow_the_target_policy() {
    let c = Conn { v6: false };
    // (host-os-policy name, alert on same-extent overlap, alert on earlier-start overlap)
    let cases = [
        ("first", 0, 0),
        ("last", 1, 1),
        ("bsd", 0, 1),
        ("windows", 0, 1),
        ("linux", 0, 1),
        ("old-linux", 1, 1),
        ("solaris", 1, 1),
        ("vista", 0, 0),
    ];
    for (os, same, earlier) in cases {
        assert_eq!(alerts("ovl-same", &same_extent_overlap(&c), os).0, same, "{os}: same extent");
        assert_eq!(alerts("ovl-early", &earlier_start_overlap(&c), os).0, earlier, "{os}: earlier start");
    }
}

/// One client segment carrying the whole attack, cut into IP fragments
/// (`cuts` are fragment boundaries within the IP payload, multiples of 8).
fn fragmented(c: &Conn, cuts: &[usize], id: u32) -> Vec<Vec<u8>> {
    let mut payload = ATTACK.to_vec();
    payload.resize(28, b'.');
    let d = c.ip(true, ACK | PSH, CISN.wrapping_add(1), SISN + 1, &payload);
    let hdr = if c.v6 { 40 } else { 20 };
    let body = d.len() - hdr;
    let mut bounds = vec![0];
    bounds.extend_from_slice(cuts);
    bounds.push(body);
    bounds
        .windows(2)
        .map(|w| {
            let more = w[1] < body;
            let ip = if c.v6 {
                split::ipv6_fragment(&d, id, w[0], w[1] - w[0], more)
            } else {
                split::ipv4_fragment(&d, w[0], w[1] - w[0], more)
            };
            c.eth(&ip)
        })
        .collect()
}

#[test]
fn tiny_first_fragments_are_reassembled_before_inspection() {
    for v6 in [false, true] {
        let c = Conn { v6 };
        // An 8-byte first fragment holds only part of the TCP header.
        let frames = c.session(fragmented(&c, &[8, 16, 24, 32], 7), 28);
        assert_eq!(alerts("tinyfrag", &frames, "bsd"), (1, 1), "v6 {v6}");
    }
}

#[test]
fn segments_split_across_fragments_and_segments() {
    let c = Conn { v6: false };
    // Two TCP segments, each fragmented; the string spans both segments.
    let seg = |off: usize, data: &[u8]| {
        let d = c.ip(true, ACK | PSH, CISN.wrapping_add(1 + off as u32), SISN + 1, data);
        let body = d.len() - 20;
        vec![c.eth(&split::ipv4_fragment(&d, 8, body - 8, false)), c.eth(&split::ipv4_fragment(&d, 0, 8, true))]
    };
    let mut middle = seg(0, b"ATTACK");
    middle.extend(seg(6, b"-STRING"));
    assert_eq!(alerts("fragseg", &c.session(middle, ATTACK.len()), "bsd"), (1, 0));
}

#[test]
fn overlapping_fragments_follow_the_target_policy() {
    for v6 in [false, true] {
        let c = Conn { v6 };
        let genuine = fragmented(&c, &[16, 32], 9);
        // A forged fragment with the same extent as the one holding most of
        // the string, but benign bytes.
        let mut forged_payload = b"ATTA".to_vec();
        forged_payload.resize(28, b'x');
        let d = c.ip(true, ACK | PSH, CISN.wrapping_add(1), SISN + 1, &forged_payload);
        let forged = if v6 {
            c.eth(&split::ipv6_fragment(&d, 9, 16, 16, true))
        } else {
            c.eth(&split::ipv4_fragment(&d, 16, 16, true))
        };
        // first: the forged copy (sent first) stays; last: the genuine one wins.
        let frames = |forged_first: bool| {
            let mut m = vec![genuine[0].clone()];
            if forged_first {
                m.extend([forged.clone(), genuine[1].clone()]);
            } else {
                m.extend([genuine[1].clone(), forged.clone()]);
            }
            m.push(genuine[2].clone());
            c.session(m, 28)
        };
        assert_eq!(alerts("frag-first", &frames(true), "first").0, 0, "v6 {v6}");
        assert_eq!(alerts("frag-last", &frames(true), "last").0, 1, "v6 {v6}");
        assert_eq!(alerts("frag-first2", &frames(false), "first").0, 1, "v6 {v6}");
        assert_eq!(alerts("frag-last2", &frames(false), "last").0, 0, "v6 {v6}");
    }
}

const STREAM_RULES: &str = "alert tcp-stream any any -> any any (content:\"ATTACK-STRING\"; sid:3;)\n\
alert tcp any any -> any any (flow:only_stream; content:\"ATTACK-STRING\"; sid:4;)\n\
alert tcp any any -> any any (flow:established,to_server; content:\"ATTACK-STRING\"; sid:5;)\n\
alert ip any any -> any any (msg:\"every packet\"; ttl:>0; sid:6;)\n";

#[test]
fn data_never_acknowledged_is_inspected_at_flow_end_by_a_pseudo_packet() {
    let c = Conn { v6: false };
    let c1 = CISN.wrapping_add(1);
    // The server acknowledges the handshake but never the data; the capture ends.
    let frames = vec![
        c.seg(true, SYN, CISN, 0, b""),
        c.seg(false, SYN | ACK, SISN, c1, b""),
        c.seg(true, ACK, c1, SISN + 1, b""),
        c.data(0, ATTACK),
    ];
    let recs = run("pseudo", &frames, "bsd", STREAM_RULES);
    for sid in [3, 4, 5] {
        let a = alerts_of(&recs, sid);
        assert_eq!(a.len(), 1, "sid {sid}");
        // Raised on the pseudo packet: it was never captured, so it has no pcap_cnt.
        assert!(a[0].get("pcap_cnt").is_none(), "{}", a[0]);
        assert_eq!(a[0]["dest_port"], 80);
    }
    // Pseudo packets run stream rules only: the per-packet rule saw the 4 captured packets.
    assert_eq!(alerts_of(&recs, 6).len(), 4);
    let stats = &recs.iter().rev().find(|r| r["event_type"] == "stats").unwrap()["stats"]["tcp"];
    assert_eq!(
        (stats["sessions"].as_u64(), stats["syn"].as_u64(), stats["synack"].as_u64()),
        (Some(1), Some(1), Some(1))
    );
    assert_eq!(stats["pseudo"], 1);
}

#[test]
fn a_reset_inspects_unacknowledged_data_on_a_still_established_session() {
    let c = Conn { v6: false };
    let c1 = CISN.wrapping_add(1);
    let end = c1.wrapping_add(ATTACK.len() as u32);
    let frames = vec![
        c.seg(true, SYN, CISN, 0, b""),
        c.seg(false, SYN | ACK, SISN, c1, b""),
        c.seg(true, ACK, c1, SISN + 1, b""),
        c.data(0, ATTACK),
        c.seg(true, vigil_wire::tcp::flags::RST, end, 0, b""),
    ];
    let recs = run("rst", &frames, "bsd", STREAM_RULES);
    // The reset closes the session, but the packet that does so still belongs
    // to the established session (flow:established), as in Suricata.
    for sid in [3, 4, 5] {
        let a = alerts_of(&recs, sid);
        assert_eq!(a.len(), 1, "sid {sid}");
        assert_eq!(a[0]["pcap_cnt"], 5, "sid {sid}: on the RST");
    }
}
