//! Overlapping fragments with conflicting data, reassembled under each
//! target policy: the bytes each policy keeps are those Suricata's own
//! tests expect (the Sturges/Novak "Target-Based Fragmentation Reassembly"
//! scenario and the cases Suricata added for Linux and BSD).

mod common;

use common::*;
use vigil_decode::DecodeEvent;
use vigil_defrag::{split, Policy};
use vigil_wire::ip_proto;

/// (byte, length, offset, more) of the scenario's 17 fragments: nine
/// originals, then seven overlapping ones, then the last.
const NOVAK: [(u8, usize, usize, bool); 17] = [
    (b'A', 24, 0, true),
    (b'B', 16, 32, true),
    (b'C', 24, 48, true),
    (b'D', 8, 80, true),
    (b'E', 16, 104, true),
    (b'F', 24, 120, true),
    (b'G', 16, 144, true),
    (b'H', 16, 160, true),
    (b'I', 8, 176, true),
    (b'J', 32, 8, true),
    (b'K', 24, 48, true),
    (b'L', 24, 72, true),
    (b'M', 24, 96, true),
    (b'N', 8, 128, true),
    (b'O', 8, 152, true),
    (b'P', 8, 160, true),
    (b'Q', 16, 176, false),
];

/// The expected 192 bytes, one letter per 8-byte block.
fn expected(policy: Policy) -> &'static str {
    match policy {
        Policy::Bsd => "AAAJJBCCCLLLMMMFFFGGHHIQ",
        Policy::Linux => "AAAJJBKKKLLLMMMFFFGGPHQQ",
        Policy::Windows => "AAAJBBCCCLLLMEEFFFGGHHIQ",
        Policy::Solaris => "AAAJBBCCCLLLMMMFFFGGHHIQ",
        Policy::First => "AAAJBBCCCLDLMEEFFFGGHHIQ",
        Policy::Last => "AJJJJBKKKLLLMMMFNFGOPHQQ",
        // Nothing is trimmed: the copy order (by offset, then arrival)
        // decides, so the fragment further right always wins.
        Policy::BsdRight => "AJJJBBKKKLDLMEEFNFGOPHQQ",
    }
}

fn blocks(s: &str) -> Vec<u8> {
    s.bytes().flat_map(|c| std::iter::repeat_n(c, 8)).collect()
}

fn novak(policy: Policy, ipv6: bool) -> Vec<u8> {
    let mut h = Harness::with_policy(policy);
    let mut result = None;
    for (i, &(c, len, off, more)) in NOVAK.iter().enumerate() {
        let pkt = if ipv6 {
            split::ipv6_raw(SRC6, DST6, 1, ip_proto::ICMPV6, off, more, &fill(c, len))
        } else {
            split::ipv4_raw(SRC4, DST4, 1, ip_proto::ICMP, off, more, &fill(c, len))
        };
        let r = h.feed(&pkt);
        if i < 16 {
            assert!(r.is_none(), "{policy:?}: reassembled early at fragment {i}");
        } else {
            result = r;
        }
        if i < 9 {
            assert!(h.events.is_empty(), "{policy:?}: overlap reported for original fragment {i}");
        }
    }
    let ev = if ipv6 { DecodeEvent::Ipv6FragOverlap } else { DecodeEvent::Ipv4FragOverlap };
    assert!(h.saw(ev), "{policy:?}: no overlap event");
    let d = result.unwrap_or_else(|| panic!("{policy:?} ipv6={ipv6}: not reassembled"));
    let hlen = if ipv6 { 40 } else { 20 };
    let len =
        if ipv6 { u16::from_be_bytes([d[4], d[5]]) as usize + 40 } else { u16::from_be_bytes([d[2], d[3]]) as usize };
    assert_eq!(len, hlen + 192, "{policy:?}: datagram length");
    assert_eq!(d.len(), hlen + 192);
    d[hlen..].to_vec()
}

#[test]
fn sturges_novak_ipv4_every_policy() {
    for p in Policy::ALL {
        let got = novak(p, false);
        assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&blocks(expected(p))), "{p:?}");
    }
}

#[test]
fn sturges_novak_ipv6_every_policy() {
    for p in Policy::ALL {
        let got = novak(p, true);
        assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&blocks(expected(p))), "{p:?}");
    }
}

/// Policies really differ: the scenario tells every pair apart.
#[test]
fn policies_are_distinguishable() {
    let set: std::collections::HashSet<_> = Policy::ALL.iter().map(|&p| expected(p)).collect();
    assert_eq!(set.len(), Policy::ALL.len());
}

/// Suricata's `DefragTestJeremyLinux`.
#[test]
fn linux_overlap_spanning_two_fragments() {
    let mut h = Harness::with_policy(Policy::Linux);
    let frags = [(b'A', 24, 0, true), (b'B', 48, 40, true), (b'C', 48, 24, true), (b'D', 14, 88, false)];
    let mut r = None;
    for (c, len, off, more) in frags {
        r = h.feed(&split::ipv4_raw(SRC4, DST4, 1, ip_proto::ICMP, off, more, &fill(c, len)));
    }
    let d = r.expect("reassembled");
    let want = [&b"AAAAAAAAAAAAAAAAAAAAAAAA"[..], &[b'C'; 48], &[b'B'; 16], &[b'D'; 14]].concat();
    assert_eq!(&d[20..], &want[..]);
}

/// Suricata's `DefragBsdFragmentAfterNoMf{Ipv4,Ipv6}Test`: data that arrives
/// after the last fragment still counts, in BSD order.
#[test]
fn bsd_fragment_after_the_last_one() {
    for ipv6 in [false, true] {
        let mut h = Harness::with_policy(Policy::Bsd);
        let frags = [(b'A', 16, 24, false), (b'B', 16, 8, true), (b'C', 16, 16, true), (b'D', 8, 0, true)];
        let mut r = None;
        for (c, len, off, more) in frags {
            let pkt = if ipv6 {
                split::ipv6_raw(SRC6, DST6, 0x96, ip_proto::ICMPV6, off, more, &fill(c, len))
            } else {
                split::ipv4_raw(SRC4, DST4, 0x96, ip_proto::ICMP, off, more, &fill(c, len))
            };
            r = h.feed(&pkt);
        }
        let d = r.expect("reassembled");
        let hlen = if ipv6 { 40 } else { 20 };
        assert_eq!(&d[hlen..], &blocks("DBBCA")[..], "ipv6={ipv6}");
    }
}

/// Suricata's `DefragBsdSubsequentOverlapsStartOfOriginal*`.
#[test]
fn bsd_later_fragment_covering_the_start_of_an_earlier_one() {
    for ipv6 in [false, true] {
        let mk = |id: u32, off: usize, more: bool, data: &[u8]| {
            if ipv6 {
                split::ipv6_raw(SRC6, DST6, id, ip_proto::ICMPV6, off, more, data)
            } else {
                split::ipv4_raw(SRC4, DST4, id as u16, ip_proto::ICMP, off, more, data)
            }
        };
        let hlen = if ipv6 { 40 } else { 20 };
        let mut h = Harness::with_policy(Policy::Bsd);
        assert!(h.feed(&mk(1, 8, false, &fill(b'E', 24))).is_none());
        let d = h.feed(&mk(1, 0, true, &fill(b'M', 24))).expect("reassembled");
        assert_eq!(&d[hlen..], &blocks("MMME")[..]);

        let mut h = Harness::with_policy(Policy::Bsd);
        h.feed(&mk(6, 16, true, b"AABBCCDDAABBDDCC"));
        h.feed(&mk(6, 8, true, b"AACCBBDDAACCDDBB"));
        h.feed(&mk(6, 0, true, b"ZZZZZZZZ"));
        let d = h.feed(&mk(6, 32, false, b"DDCCBBAA")).expect("reassembled");
        assert_eq!(&d[hlen + 8..], b"AACCBBDDAACCDDBBAABBDDCCDDCCBBAA");
    }
}

/// Suricata's `DefragMf{Ipv4,Ipv6}Test`: a fragment past the last one is not
/// part of the datagram.
#[test]
fn data_beyond_the_last_fragment_is_left_out() {
    let mut h = Harness::with_policy(Policy::Bsd);
    h.feed(&split::ipv4_raw(SRC4, DST4, 9, ip_proto::ICMP, 16, true, &fill(b'C', 8)));
    h.feed(&split::ipv4_raw(SRC4, DST4, 9, ip_proto::ICMP, 0, true, &fill(b'A', 8)));
    let d = h.feed(&split::ipv4_raw(SRC4, DST4, 9, ip_proto::ICMP, 8, false, &fill(b'B', 8))).unwrap();
    assert_eq!(u16::from_be_bytes([d[2], d[3]]), 36);
    assert_eq!(&d[20..], b"AAAAAAAABBBBBBBB");

    let mut h = Harness::with_policy(Policy::Bsd);
    h.feed(&split::ipv6_raw(SRC6, DST6, 9, ip_proto::ICMPV6, 16, true, &fill(b'C', 8)));
    h.feed(&split::ipv6_raw(SRC6, DST6, 9, ip_proto::ICMPV6, 0, true, &fill(b'A', 8)));
    let d = h.feed(&split::ipv6_raw(SRC6, DST6, 9, ip_proto::ICMPV6, 8, false, &fill(b'B', 8))).unwrap();
    assert_eq!(u16::from_be_bytes([d[4], d[5]]), 16);
    assert_eq!(&d[40..], b"AAAAAAAABBBBBBBB");
    // The fragment header is gone and the IPv6 header names ICMPv6.
    assert_eq!(d[6], ip_proto::ICMPV6);
}
