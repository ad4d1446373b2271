//! Malformed frames raise Suricata's named decode events; decoding stops
//! (the packet is "invalid") only where it cannot go on.

use vigil_decode::{Counter, DecodeConfig, DecodeEvent as E, Decoder};
use vigil_types::{LinkType, Timestamp};
use vigil_wire::build::{self, PacketBuilder};
use vigil_wire::ethertype;

const A: [u8; 4] = [198, 18, 0, 1];
const B: [u8; 4] = [198, 18, 0, 2];

fn events(frame: &[u8], link: LinkType) -> (Vec<E>, bool) {
    let mut dec = Decoder::new(DecodeConfig::default());
    let p = dec.decode(frame, Timestamp::default(), link, 1);
    for e in p.events.iter() {
        assert_eq!(dec.counters.event_count(e), 1);
    }
    assert_eq!(dec.counters.get(Counter::Invalid), p.invalid as u64);
    (p.events.iter().collect(), p.invalid)
}

fn tcp_ip() -> Vec<u8> {
    PacketBuilder::ipv4(A, B).tcp(1, 2).payload(b"0123456789").build_ip()
}

#[test]
fn short_ethernet() {
    assert_eq!(events(&[0; 13], LinkType::Ethernet), (vec![E::EthernetPktTooSmall], true));
}

#[test]
fn ipv4_header_checks() {
    let ip = tcp_ip();
    assert_eq!(events(&ip[..19], LinkType::Ipv4), (vec![E::Ipv4PktTooSmall], true));
    let mut v = ip.clone();
    v[0] = 0x35;
    assert_eq!(events(&v, LinkType::Ipv4), (vec![E::Ipv4WrongIpVersion], true));
    let mut h = ip.clone();
    h[0] = 0x44;
    assert_eq!(events(&h, LinkType::Ipv4), (vec![E::Ipv4HlenTooSmall], true));
    let mut t = ip.clone();
    t[2..4].copy_from_slice(&19u16.to_be_bytes());
    assert_eq!(events(&t, LinkType::Ipv4), (vec![E::Ipv4IplenSmallerThanHlen], true));
    assert_eq!(events(&ip[..ip.len() - 1], LinkType::Ipv4), (vec![E::Ipv4TruncPkt], true));
}

#[test]
fn raw_link_needs_an_ip_version() {
    assert_eq!(events(&[0x50; 40], LinkType::Raw), (vec![E::IprawInvalidIpVersion], true));
}

#[test]
fn tcp_header_checks() {
    let ip = tcp_ip();
    let mut short = ip[..20 + 19].to_vec();
    let len = short.len() as u16;
    short[2..4].copy_from_slice(&len.to_be_bytes());
    assert_eq!(events(&short, LinkType::Ipv4).0, vec![E::TcpPktTooSmall]);
    let mut off = ip.clone();
    off[32] = 0xf0; // data offset 60 in a 30-byte segment
    assert_eq!(events(&off, LinkType::Ipv4).0, vec![E::TcpInvalidOptlen]);
}

#[test]
fn udp_length_checks() {
    let ip = PacketBuilder::ipv4(A, B).udp(1, 2).payload(b"abcd").build_ip();
    let mut trailing = ip.clone();
    trailing[24..26].copy_from_slice(&10u16.to_be_bytes()); // UDP says 10, IP carries 12
    assert_eq!(events(&trailing, LinkType::Ipv4), (vec![E::UdpHlenInvalid], true));
    let mut long = ip.clone();
    long[24..26].copy_from_slice(&14u16.to_be_bytes());
    assert_eq!(events(&long, LinkType::Ipv4), (vec![E::UdpPktTooSmall], true));
}

#[test]
fn icmp_types_and_codes() {
    let unknown_type = PacketBuilder::ipv4(A, B).icmp(42, 0).build_ip();
    assert_eq!(events(&unknown_type, LinkType::Ipv4), (vec![E::Icmpv4UnknownType], false));
    let bad_code = PacketBuilder::ipv4(A, B).icmp(8, 1).build_ip();
    assert_eq!(events(&bad_code, LinkType::Ipv4), (vec![E::Icmpv4UnknownCode], false));
    let short_quote = PacketBuilder::ipv4(A, B).icmp(3, 1).payload(&[0x45; 10]).build_ip();
    assert_eq!(events(&short_quote, LinkType::Ipv4), (vec![E::Icmpv4Ipv4TruncPkt], false));
    let icmp6_over_v4 = PacketBuilder::ipv4(A, B).protocol(58).payload(&[128, 0, 0, 0, 0, 0, 0, 0]).build_ip();
    assert_eq!(events(&icmp6_over_v4, LinkType::Ipv4).0, vec![E::Ipv4Icmpv6]);
}

#[test]
fn ipv6_extension_header_events() {
    let a6 = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
    // Hop-by-hop header holding only padding, then no next header.
    let hop = [59u8, 0, 1, 4, 0, 0, 0, 0];
    let ip = PacketBuilder::ipv6(a6, a6).protocol(0).payload(&hop).build_ip();
    assert_eq!(events(&ip, LinkType::Ipv6), (vec![E::Ipv6HopoptsOnlyPadding], false));
    // Routing header type 0 (deprecated by RFC 5095).
    let rh0 = [59u8, 0, 0, 0, 0, 0, 0, 0];
    let ip = PacketBuilder::ipv6(a6, a6).protocol(43).payload(&rh0).build_ip();
    assert_eq!(events(&ip, LinkType::Ipv6).0, vec![E::Ipv6RhType0]);
    // An extension header running past the packet.
    let cut = [6u8, 4, 0, 0];
    let ip = PacketBuilder::ipv6(a6, a6).protocol(0).payload(&cut).build_ip();
    assert_eq!(events(&ip, LinkType::Ipv6), (vec![E::Ipv6TruncExthdr], true));
    // An unknown upper-layer protocol.
    let ip = PacketBuilder::ipv6(a6, a6).protocol(253).payload(b"x").build_ip();
    assert_eq!(events(&ip, LinkType::Ipv6).0, vec![E::Ipv6UnknownNextHeader]);
}

#[test]
fn vlan_and_gre_events() {
    let frame = PacketBuilder::ipv4(A, B).udp(1, 2).build_ethernet();
    let four = build::vlan_tag(&frame, ethertype::VLAN, &[1, 2, 3, 4]);
    assert_eq!(events(&four, LinkType::Ethernet), (vec![E::VlanTooManyLayers], true));
    let gre_v2 = PacketBuilder::ipv4(A, B).protocol(47).payload(&[0, 2, 8, 0, 0, 0]).build_ip();
    assert_eq!(events(&gre_v2, LinkType::Ipv4), (vec![E::GreWrongVersion], true));
    let gre_recur = PacketBuilder::ipv4(A, B).protocol(47).payload(&[1, 0, 8, 0]).build_ip();
    assert_eq!(events(&gre_recur, LinkType::Ipv4), (vec![E::GreVersion0Recur], true));
    let gre_v1_no_key = PacketBuilder::ipv4(A, B).protocol(47).payload(&[0, 1, 0x88, 0x0b]).build_ip();
    assert_eq!(events(&gre_v1_no_key, LinkType::Ipv4), (vec![E::GreVersion1NoKey], true));
}

#[test]
fn unknown_ethertype_is_counted() {
    let f = build::ethernet(build::TEST_DST_MAC, build::TEST_SRC_MAC, 0x88cc, b"lldp");
    let mut dec = Decoder::new(DecodeConfig::default());
    let p = dec.decode(&f, Timestamp::default(), LinkType::Ethernet, 1);
    assert_eq!(p.events.iter().collect::<Vec<_>>(), vec![E::EthernetUnknownEthertype]);
    assert_eq!(dec.counters.get(Counter::UnknownEthertype), 1);
}

#[test]
fn checksums_flag_but_never_stop_a_packet() {
    let mut ip = tcp_ip();
    ip[20 + 16] ^= 0xff; // TCP checksum
    let mut dec = Decoder::new(DecodeConfig::default());
    let p = dec.decode(&ip, Timestamp::default(), LinkType::Ipv4, 1);
    assert!(p.checksum.l4_bad && !p.checksum.ipv4_bad && !p.invalid && p.events.is_empty());
    assert_eq!(p.payload(), b"0123456789");
    let mut dec = Decoder::new(DecodeConfig { validate_checksums: false, ..DecodeConfig::default() });
    assert!(!dec.decode(&ip, Timestamp::default(), LinkType::Ipv4, 1).checksum.l4_bad);
}
