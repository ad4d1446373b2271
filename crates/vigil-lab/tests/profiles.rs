//! The profiles look like what they are named for.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use vigil_lab::gen::options::{IpMix, Profile};

/// (protocol, source port, destination port, IP length) of each IPv4 frame (no encapsulation, no fragments).
fn v4_packets(frames: &[(vigil_types::Timestamp, Vec<u8>)]) -> Vec<(u8, u16, u16, usize, [u8; 4])> {
    frames
        .iter()
        .map(|(_, f)| {
            let ip = &f[14..];
            assert_eq!(u16::from_be_bytes([ip[6], ip[7]]) & 0x3fff, 0, "no fragments here");
            let l4 = &ip[20..];
            let src = [ip[12], ip[13], ip[14], ip[15]];
            (ip[9], u16::from_be_bytes([l4[0], l4[1]]), u16::from_be_bytes([l4[2], l4[3]]), ip.len(), src)
        })
        .collect()
}

#[test]
fn enterprise_bytes_follow_the_study_mix_roughly() {
    let o = common::opts(4000, |o| {
        o.profile = Profile::Enterprise;
        o.seed = 5;
    });
    let (frames, _) = vigil_lab::gen::frames(&o).unwrap();
    let mut by: BTreeMap<&str, usize> = BTreeMap::new();
    for (proto, sp, dp, len, _) in v4_packets(&frames) {
        let kind = match (proto, sp.min(dp)) {
            (6, 80 | 443 | 135) => "web",
            (17, p) if p >= 16384 => "rtp",
            (6, 1494 | 2598) => "citrix",
            (6, 25) => "smtp",
            (17, 53) => "dns",
            (6, 1521) => "oracle",
            other => panic!("unexpected {other:?}"),
        };
        *by.entry(kind).or_default() += len;
    }
    let total: usize = by.values().sum();
    let share = |k: &str| by[k] as f64 * 100.0 / total as f64;
    // HTTP, HTTPS and Exchange (TLS to 443, DCE/RPC to 135): 77.5 + 4.3; the rest as in the study.
    for (kind, want, tolerance) in [
        ("web", 81.8, 6.0),
        ("rtp", 13.2, 5.0),
        ("citrix", 2.2, 1.5),
        ("smtp", 1.1, 0.8),
        ("dns", 1.1, 0.8),
        ("oracle", 0.7, 0.6),
    ] {
        assert!((share(kind) - want).abs() <= tolerance, "{kind}: {:.2} % (want about {want} %)", share(kind));
    }
}

#[test]
fn synscan_is_one_source_probing_many_ports() {
    let o = common::opts(500, |o| {
        o.profile = Profile::Synscan;
        o.ip = IpMix::V4;
    });
    let (frames, truth) = vigil_lab::gen::frames(&o).unwrap();
    let pkts = v4_packets(&frames);
    let scanner = pkts[0].4;
    let probes: Vec<_> = pkts.iter().filter(|p| p.4 == scanner).collect();
    let ports: BTreeSet<u16> = probes.iter().map(|p| p.2).collect();
    assert_eq!(ports.len(), 500, "every probe a new port");
    assert_eq!(probes.iter().map(|p| p.1).collect::<BTreeSet<_>>().len(), 1, "one source port");
    // Each probe: SYN + RST-ACK (closed) or SYN + SYN-ACK + RST (open).
    let syns = frames.iter().filter(|(_, f)| f[14 + 20 + 13] == 0x02).count();
    assert_eq!(syns as u64, truth.flows);
    assert!(frames.iter().any(|(_, f)| f[14 + 20 + 13] == 0x12), "some port answers SYN-ACK");
}

#[test]
fn mixed_tcp_flows_open_with_a_handshake_and_carry_http_tls_dns() {
    let o = common::opts(200, |o| o.seed = 11);
    let (frames, _) = vigil_lab::gen::frames(&o).unwrap();
    let has = |needle: &[u8]| frames.iter().any(|(_, f)| f.windows(needle.len()).any(|w| w == needle));
    assert!(has(b"GET /objects/") && has(b"HTTP/1.1 200 OK"));
    assert!(has(b".example.net"), "a TLS SNI");
    assert!(has(b"\x07example\x03com\x00"), "a DNS name");
    // The first TCP packet of every flow is a SYN.
    let mut seen = BTreeSet::new();
    for (proto, sp, dp, _, src) in v4_packets(&frames) {
        if proto == 6 && seen.insert((src, sp, dp)) && sp >= 10_000 {
            let f = &frames
                .iter()
                .find(|(_, f)| f[14 + 12..14 + 16] == src && f[14 + 20..14 + 22] == sp.to_be_bytes())
                .unwrap()
                .1;
            assert_eq!(f[14 + 20 + 13], 0x02, "flow from port {sp} starts with SYN");
        }
    }
}
