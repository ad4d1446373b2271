//! Fragmentation evasions and floods, built with vigil's own packet builders.

mod common;

use common::*;
use vigil_decode::{DecodeEvent, Transport};
use vigil_defrag::{split, DefragConfig, Policy};
use vigil_types::{LinkType, Timestamp};
use vigil_wire::build::{self, PacketBuilder};
use vigil_wire::{ethertype, ip_proto};

const ATTACK: &[u8] = b"GET /cgi-bin/../../../../etc/passwd HTTP/1.1\r\nHost: victim\r\n\r\n";

fn tcp_v4() -> Vec<u8> {
    PacketBuilder::ipv4([192, 0, 2, 1], [198, 51, 100, 2]).tcp(40000, 80).ident(777).payload(ATTACK).build_ip()
}

fn tcp_v6() -> Vec<u8> {
    let a = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
    let b = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];
    PacketBuilder::ipv6(a, b).tcp(40000, 80).payload(ATTACK).build_ip()
}

/// Cuts `d`'s payload into `size`-byte fragments (IPv4 or IPv6).
fn cut(d: &[u8], size: usize) -> Vec<Vec<u8>> {
    let ipv6 = d[0] >> 4 == 6;
    let body = if ipv6 { d.len() - 40 } else { d.len() - 20 };
    (0..body)
        .step_by(size)
        .map(|off| {
            let more = off + size < body;
            if ipv6 {
                split::ipv6_fragment(d, 0x1234, off, size, more)
            } else {
                split::ipv4_fragment(d, off, size, more)
            }
        })
        .collect()
}

fn assert_whole_tcp(h: &mut Harness, d: &[u8], original: &[u8]) {
    assert_eq!(d, original, "the reassembled datagram is the original one");
    let p = h.decode(d);
    assert!(!p.fragment && !p.invalid, "{:?}", p.events);
    assert!(matches!(p.transport, Transport::Tcp { sport: 40000, dport: 80, .. }));
    assert_eq!(p.payload(), ATTACK);
    assert!(!p.checksum.ipv4_bad && !p.checksum.l4_bad);
}

#[test]
fn tcp_payload_spread_over_fragments_decodes_whole() {
    for d in [tcp_v4(), tcp_v6()] {
        for size in [8, 16, 24, 48] {
            let mut h = Harness::with_policy(Policy::Bsd);
            let frags = cut(&d, size);
            assert!(frags.len() >= 2);
            let mut r = None;
            for f in &frags {
                assert!(r.is_none());
                r = h.feed(f);
            }
            let r = r.expect("reassembled");
            assert_whole_tcp(&mut h, &r, &d);
            assert!(h.events.is_empty(), "{:?}", h.events);
        }
    }
}

#[test]
fn out_of_order_and_reverse_order() {
    for d in [tcp_v4(), tcp_v6()] {
        let frags = cut(&d, 16);
        let mut orders: Vec<Vec<usize>> = vec![(0..frags.len()).rev().collect()];
        // Last fragment first, then the rest shuffled deterministically.
        let mut o: Vec<usize> = (0..frags.len()).collect();
        o.rotate_left(frags.len() - 1);
        o[1..].sort_by_key(|i| (i * 7) % 5);
        orders.push(o);
        for order in orders {
            let mut h = Harness::with_policy(Policy::Linux);
            let mut r = None;
            for (n, &i) in order.iter().enumerate() {
                let got = h.feed(&frags[i]);
                assert_eq!(got.is_some(), n + 1 == order.len(), "order {order:?}");
                r = got.or(r);
            }
            assert_whole_tcp(&mut h, &r.unwrap(), &d);
        }
    }
}

#[test]
fn tiny_first_fragment_still_reassembles_the_tcp_header() {
    // RFC 1858: an 8-byte first fragment holds only the ports; flags and
    // the rest of the header arrive in the second.
    for d in [tcp_v4(), tcp_v6()] {
        let ipv6 = d[0] >> 4 == 6;
        let body = d.len() - if ipv6 { 40 } else { 20 };
        let (first, rest) = if ipv6 {
            (split::ipv6_fragment(&d, 5, 0, 8, true), split::ipv6_fragment(&d, 5, 8, body, false))
        } else {
            (split::ipv4_fragment(&d, 0, 8, true), split::ipv4_fragment(&d, 8, body, false))
        };
        let mut h = Harness::with_policy(Policy::Bsd);
        let p = h.dec.decode(&first, h.now, LinkType::Raw, 1);
        assert!(p.fragment && matches!(p.transport, Transport::None), "the fragment is not inspected as TCP");
        assert!(h.feed(&first).is_none());
        let r = h.feed(&rest).expect("reassembled");
        assert_whole_tcp(&mut h, &r, &d);
    }
}

#[test]
fn duplicate_fragments_are_harmless() {
    for d in [tcp_v4(), tcp_v6()] {
        let frags = cut(&d, 16);
        for p in Policy::ALL {
            let mut h = Harness::with_policy(p);
            // Every fragment but the last twice, then the last.
            for f in &frags[..frags.len() - 1] {
                assert!(h.feed(f).is_none());
                assert!(h.feed(f).is_none());
            }
            let r = h.feed(frags.last().unwrap()).expect("reassembled");
            assert_whole_tcp(&mut h, &r, &d);
            let ev = if d[0] >> 4 == 6 { DecodeEvent::Ipv6FragOverlap } else { DecodeEvent::Ipv4FragOverlap };
            assert!(h.saw(ev), "{p:?}: an exact duplicate is an overlap");
        }
    }
}

/// The classic overlap evasion: a benign copy and a malicious copy of the
/// same bytes. Which one the target sees depends on its OS, and the
/// reassembled datagram must hold the bytes of the policy configured for
/// that destination (as Suricata resolves them).
#[test]
fn conflicting_overwrite_follows_the_destination_policy() {
    let benign: &[u8; 32] = b"GET /index.html HTTP/1.1\r\n\r\n....";
    let evil: &[u8; 32] = b"GET /etc/passwd HTTP/1.1\r\n\r\n....";
    let mk =
        |payload: &[u8]| PacketBuilder::ipv4([192, 0, 2, 1], [10, 1, 2, 3]).tcp(40000, 80).payload(payload).build_ip();
    let (good, bad) = (mk(benign), mk(evil));
    // Body bytes: TCP header 0..20, payload 20..52. Arrival order: the
    // benign tail (32..52), a malicious copy from 24 on, the head (0..32).
    let tail_good = split::ipv4_fragment(&good, 32, 20, false);
    let overlap_bad = split::ipv4_fragment(&bad, 24, 28, false);
    let head = split::ipv4_fragment(&good, 0, 32, true);
    let cat = |a: &[u8], b: &[u8], c: &[u8]| [a, b, c].concat();
    // Head wins 24..32, the malicious copy wins 32..52.
    let head_then_evil = cat(&benign[..12], &evil[12..], &[]);
    // The malicious copy wins everywhere it reaches: it overwrites the
    // head, and as it ends the datagram the benign tail (at a later offset,
    // after the last fragment in copy order) is left out.
    let all_evil = cat(&benign[..4], &evil[4..], &[]);
    for (policy, want) in [
        (Policy::Bsd, &head_then_evil),
        (Policy::Linux, &head_then_evil),
        (Policy::Last, &head_then_evil),
        (Policy::Windows, &all_evil),
        (Policy::First, &all_evil),
        (Policy::BsdRight, &all_evil),
        (Policy::Solaris, &all_evil),
    ] {
        let mut h = Harness::new(DefragConfig {
            policies: vigil_defrag::HostPolicies::new(vec![("10.1.0.0".parse().unwrap(), 16, policy)], Policy::Bsd),
            ..DefragConfig::default()
        });
        assert!(h.feed(&tail_good).is_none());
        assert!(h.feed(&overlap_bad).is_none());
        let r = h.feed(&head).expect("reassembled");
        let p = h.decode(&r);
        assert_eq!(String::from_utf8_lossy(p.payload()), String::from_utf8_lossy(want), "{policy:?}");
        assert!(h.saw(DecodeEvent::Ipv4FragOverlap));
    }
}

#[test]
fn fragments_of_other_vlans_protocols_and_ids_do_not_mix() {
    let d = tcp_v4();
    let frags = cut(&d, 24);
    let eth: Vec<Vec<u8>> =
        frags.iter().map(|f| build::ethernet(build::TEST_DST_MAC, build::TEST_SRC_MAC, ethertype::IPV4, f)).collect();
    let mut h = Harness::with_policy(Policy::Bsd);
    let mut out = Vec::new();
    // First fragments on VLAN 10, the rest on VLAN 20: never one datagram.
    for (i, f) in eth.iter().enumerate() {
        let tagged = build::vlan_tag(f, ethertype::VLAN, &[if i == 0 { 10 } else { 20 }]);
        let p = h.dec.decode(&tagged, h.now, LinkType::Ethernet, 1);
        assert!(!h.defrag.handle(&p, &mut out).reassembled);
    }
    // Without VLAN tracking they meet.
    let mut h = Harness::new(DefragConfig { vlan_tracking: false, ..DefragConfig::default() });
    let mut done = false;
    for (i, f) in eth.iter().enumerate() {
        let tagged = build::vlan_tag(f, ethertype::VLAN, &[if i == 0 { 10 } else { 20 }]);
        let p = h.dec.decode(&tagged, h.now, LinkType::Ethernet, 1);
        done |= h.defrag.handle(&p, &mut out).reassembled;
    }
    assert!(done);
    // Suricata's DefragTestBadProto: same id, another protocol.
    let mut h = Harness::with_policy(Policy::Bsd);
    assert!(h.feed(&split::ipv4_raw(SRC4, DST4, 12, ip_proto::ICMP, 0, true, &fill(b'A', 8))).is_none());
    assert!(h.feed(&split::ipv4_raw(SRC4, DST4, 12, ip_proto::UDP, 8, true, &fill(b'B', 8))).is_none());
    assert!(h.feed(&split::ipv4_raw(SRC4, DST4, 12, ip_proto::ICMP, 16, false, &fill(b'C', 3))).is_none());
}

#[test]
fn reassembled_datagram_keeps_vlan_context() {
    let d = tcp_v4();
    let frags = cut(&d, 32);
    let mut h = Harness::with_policy(Policy::Bsd);
    let mut out = Vec::new();
    let mut frames = Vec::new();
    for f in &frags {
        let e = build::ethernet(build::TEST_DST_MAC, build::TEST_SRC_MAC, ethertype::IPV4, f);
        frames.push(build::vlan_tag(&e, ethertype::VLAN, &[42]));
    }
    for (i, f) in frames.iter().enumerate() {
        let p = h.dec.decode(f, h.now, LinkType::Ethernet, 7);
        if h.defrag.handle(&p, &mut out).reassembled {
            assert_eq!(i + 1, frames.len());
            let before = h.dec.counters.get(vigil_decode::Counter::Pkts);
            // The completing fragment's Ethernet and VLAN headers, then the datagram.
            let ip_at = p.ip.unwrap().offset as usize;
            let frame = [&f[..ip_at], &out[..]].concat();
            let whole = h.dec.decode_reassembled(&frame, &p);
            assert_eq!(whole.vlans(), &[42]);
            assert_eq!(whole.layers()[0].kind, vigil_decode::LayerKind::Ethernet);
            assert_eq!(whole.data.len(), 18 + d.len());
            assert_eq!(whole.pcap_cnt, 7);
            assert_eq!(whole.payload(), ATTACK);
            assert_eq!(h.dec.counters.get(vigil_decode::Counter::Pkts), before, "not a captured packet");
        }
    }
}

#[test]
fn oversized_and_malformed_fragments_raise_events() {
    // Suricata's DefragTooLargeIpv4Test: offset 8183*8 + 71 bytes > 65535.
    let mut h = Harness::with_policy(Policy::Bsd);
    assert!(h.feed(&split::ipv4_raw(SRC4, DST4, 1, ip_proto::ICMP, 8183 * 8, false, &fill(b'A', 71))).is_none());
    assert!(h.saw(DecodeEvent::Ipv4FragPktTooLarge));
    assert_eq!(h.defrag.fragments(), 0);

    let mut h = Harness::with_policy(Policy::Bsd);
    h.feed(&split::ipv6_raw(SRC6, DST6, 1, ip_proto::ICMPV6, 65528, false, &fill(b'A', 16)));
    assert!(h.saw(DecodeEvent::Ipv6FragPktTooLarge));

    let mut h = Harness::with_policy(Policy::Bsd);
    h.feed(&split::ipv6_raw(SRC6, DST6, 1, ip_proto::ICMPV6, 0, true, &fill(b'A', 13)));
    assert!(h.saw(DecodeEvent::Ipv6FragInvalidLength));
    assert_eq!(h.defrag.fragments(), 0);

    // Suricata's DefragNoDataIpv4Test: no data, nothing held.
    let mut h = Harness::with_policy(Policy::Bsd);
    assert!(h.feed(&split::ipv4_raw(SRC4, DST4, 1, ip_proto::ICMP, 8, false, &[])).is_none());
    assert_eq!(h.defrag.fragments(), 0);
    assert_eq!(h.defrag.trackers(), 0);
}

#[test]
fn timeouts_follow_packet_time() {
    let d = tcp_v4();
    let frags = cut(&d, 24);
    let mut h = Harness::with_policy(Policy::Bsd);
    h.feed(&frags[0]);
    assert_eq!(h.defrag.trackers(), 1);
    // 60 s later exactly: still waiting.
    h.now = Timestamp::from_micros(1_700_000_060, 0);
    h.defrag.expire(h.now);
    assert_eq!(h.defrag.trackers(), 1);
    // Just past the timeout: gone, and the rest no longer completes it.
    h.now = Timestamp::from_micros(1_700_000_060, 1);
    for f in &frags[1..] {
        assert!(h.feed(f).is_none());
    }
    assert_eq!(h.defrag.counters().ipv4_timeouts, 1);
    assert_eq!(h.defrag.counters().tracker_timeout, 1);
    // A tracker that keeps getting fragments does not time out.
    let mut h = Harness::with_policy(Policy::Bsd);
    for (i, f) in frags.iter().enumerate() {
        h.now = Timestamp::from_micros(1_700_000_000 + 50 * i as i64, 0);
        let r = h.feed(f);
        assert_eq!(r.is_some(), i + 1 == frags.len());
    }
}

#[test]
fn fragment_flood_is_bounded_by_the_memcap() {
    let memcap = 256 * 1024;
    let mut h = Harness::new(DefragConfig { memcap, ..DefragConfig::default() });
    // 20,000 first fragments of distinct datagrams, never completed.
    for id in 0..20_000u32 {
        let f = split::ipv4_raw(SRC4, DST4, id as u16, ip_proto::UDP, 0, true, &fill(b'x', 1024));
        h.feed(&f);
        assert!(h.defrag.counters().memuse <= memcap, "memuse {} at {id}", h.defrag.counters().memuse);
    }
    let c = h.defrag.counters().clone();
    assert_eq!(c.ipv4_fragments, 20_000);
    assert!(c.tracker_hard_reuse > 15_000, "{c:?}");
    assert!(h.defrag.trackers() < 300);
    // The table still works: a real datagram completes despite the flood.
    let d = tcp_v4();
    let mut r = None;
    for f in cut(&d, 24) {
        r = h.feed(&f);
    }
    assert_whole_tcp(&mut h, &r.expect("reassembled under pressure"), &d);
}

#[test]
fn tracker_and_fragment_limits_are_counted() {
    let mut h = Harness::new(DefragConfig { max_trackers: 16, max_frags: 40, ..DefragConfig::default() });
    for id in 0..100u16 {
        h.feed(&split::ipv4_raw(SRC4, DST4, id, ip_proto::UDP, 0, true, &fill(b'x', 8)));
        assert!(h.defrag.trackers() <= 16);
    }
    assert!(h.defrag.counters().max_trackers_reached >= 84);
    // One datagram with many small fragments hits max-frags; older
    // datagrams make way for it.
    for off in 0..60usize {
        h.feed(&split::ipv4_raw(SRC4, DST4, 999, ip_proto::UDP, 8 + off * 8, true, &fill(b'y', 8)));
        assert!(h.defrag.fragments() <= 40);
    }
    assert!(h.defrag.counters().max_frags_reached > 0);
    // The per-datagram limit ignores the fragment and says so.
    let mut h = Harness::new(DefragConfig { max_frags_per_datagram: 4, ..DefragConfig::default() });
    for off in 0..6usize {
        h.feed(&split::ipv4_raw(SRC4, DST4, 5, ip_proto::UDP, off * 8, true, &fill(b'z', 8)));
    }
    assert_eq!(h.defrag.fragments(), 4);
    assert!(h.saw(DecodeEvent::Ipv4FragIgnored));
}

#[test]
fn overlapping_flood_within_one_datagram_stays_bounded() {
    // Thousands of overlapping copies under bsd-right (which trims nothing):
    // the per-datagram limit and the memcap hold.
    let mut h = Harness::new(DefragConfig {
        memcap: 1 << 20,
        policies: vigil_defrag::HostPolicies::uniform(Policy::BsdRight),
        ..DefragConfig::default()
    });
    for i in 0..20_000usize {
        h.feed(&split::ipv4_raw(SRC4, DST4, 1, ip_proto::UDP, (i % 64) * 8, true, &fill(b'o', 64)));
    }
    assert!(h.defrag.counters().memuse <= 1 << 20);
    assert!(h.defrag.fragments() <= 8192);
}

#[test]
fn a_datagram_the_memcap_cannot_hold_is_reported_for_the_memcap_policy() {
    let frags = cut(&tcp_v4(), 16);
    let outcome = |h: &mut Harness, ip: &[u8]| {
        let p = h.dec.decode(ip, h.now, LinkType::Raw, 1);
        h.defrag.handle(&p, &mut h.out)
    };
    // Room for no datagram at all: the first fragment is refused as a memcap case.
    let mut h = Harness::new(DefragConfig { memcap: 1, ..DefragConfig::default() });
    let o = outcome(&mut h, &frags[0]);
    assert!(o.memcap && !o.reassembled);
    // A simulated memcap refuses the datagram the fragment would start; later ones go on.
    let mut h = Harness::new(DefragConfig::default());
    h.defrag.simulate_memcap(true);
    assert!(outcome(&mut h, &frags[0]).memcap);
    h.defrag.simulate_memcap(false);
    let last = frags.iter().map(|f| outcome(&mut h, f)).last().unwrap();
    assert!(last.reassembled && !last.memcap);
}
