//! Tunnels and link layers, on frames built with vigil's own builders: the
//! inner packet is what the packet describes, its tunnel parent is recorded,
//! and each layer is counted.

use std::net::IpAddr;
use vigil_decode::{Counter, DecodeConfig, Decoder, LayerKind, Packet, Transport};
use vigil_types::{LinkType, Timestamp};
use vigil_wire::build::{self, PacketBuilder};
use vigil_wire::{ethertype, ip_proto};

const A: [u8; 4] = [198, 18, 0, 1];
const B: [u8; 4] = [198, 18, 0, 2];
const OUT_A: [u8; 4] = [198, 19, 0, 1];
const OUT_B: [u8; 4] = [198, 19, 0, 2];
const A6: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
const B6: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];

fn decode(dec: &mut Decoder, frame: &[u8], link: LinkType) -> Packet<'static> {
    let leaked: &'static [u8] = Box::leak(frame.to_vec().into_boxed_slice());
    dec.decode(leaked, Timestamp::default(), link, 1)
}

fn kinds(p: &Packet<'_>) -> Vec<LayerKind> {
    p.layers().iter().map(|l| l.kind).collect()
}

fn inner_tcp() -> PacketBuilder {
    PacketBuilder::ipv4(A, B).tcp(40000, 80).payload(b"inner")
}

fn outer(proto: u8, payload: &[u8]) -> Vec<u8> {
    PacketBuilder::ipv4(OUT_A, OUT_B).protocol(proto).payload(payload).build_ethernet()
}

fn assert_inner(p: &Packet<'_>, outer_proto: u8) {
    assert!(!p.invalid, "events: {:?}", p.events.iter().collect::<Vec<_>>());
    assert!(matches!(p.transport, Transport::Tcp { sport: 40000, dport: 80, .. }));
    assert_eq!(p.ip.unwrap().src, IpAddr::from(A));
    assert_eq!(p.payload(), b"inner");
    let t = p.tunnel.expect("tunnel parent");
    assert_eq!((t.src, t.dst, t.proto, t.depth), (IpAddr::from(OUT_A), IpAddr::from(OUT_B), outer_proto, 1));
}

#[test]
fn gre_ipv4() {
    let mut dec = Decoder::new(DecodeConfig::default());
    let f = outer(ip_proto::GRE, &build::gre(ethertype::IPV4, Some(9), Some(1), &inner_tcp().build_ip()));
    let p = decode(&mut dec, &f, LinkType::Ethernet);
    assert_eq!(kinds(&p), [LayerKind::Ethernet, LayerKind::Ipv4, LayerKind::Gre, LayerKind::Ipv4, LayerKind::Tcp]);
    assert_inner(&p, ip_proto::GRE);
    assert_eq!((dec.counters.get(Counter::Gre), dec.counters.get(Counter::Ipv4)), (1, 2));
}

#[test]
fn erspan_type2_and_type3() {
    for (gre, kind) in [
        (build::erspan2(5, 0, 1, &inner_tcp().build_ethernet()), 2),
        (build::erspan3(5, 0, 1, 77, &inner_tcp().build_ethernet()), 3),
    ] {
        let mut dec = Decoder::new(DecodeConfig::default());
        let p = decode(&mut dec, &outer(ip_proto::GRE, &gre), LinkType::Ethernet);
        assert!(kinds(&p).contains(&LayerKind::Erspan), "type {kind}");
        assert_inner(&p, ip_proto::GRE);
        assert_eq!(dec.counters.get(Counter::Erspan), 1);
    }
}

#[test]
fn erspan_vlan_is_recorded() {
    let mut dec = Decoder::new(DecodeConfig::default());
    let p = decode(
        &mut dec,
        &outer(ip_proto::GRE, &build::erspan2(5, 300, 1, &inner_tcp().build_ethernet())),
        LinkType::Ethernet,
    );
    assert_eq!(p.vlans(), [300]);
}

#[test]
fn vxlan_and_geneve() {
    let mut dec = Decoder::new(DecodeConfig::default());
    let vx =
        PacketBuilder::ipv4(OUT_A, OUT_B).udp(50000, 4789).payload(&build::vxlan(7, &inner_tcp().build_ethernet()));
    let p = decode(&mut dec, &vx.build_ethernet(), LinkType::Ethernet);
    assert_inner(&p, ip_proto::UDP);
    assert_eq!((p.tunnel.unwrap().sport, p.tunnel.unwrap().dport), (Some(50000), Some(4789)));
    assert_eq!(dec.counters.get(Counter::Vxlan), 1);

    let gv = PacketBuilder::ipv4(OUT_A, OUT_B).udp(50000, 6081).payload(&build::geneve(
        7,
        ethertype::TRANS_ETHER_BRIDGING,
        &inner_tcp().build_ethernet(),
    ));
    let p = decode(&mut dec, &gv.build_ethernet(), LinkType::Ethernet);
    assert_inner(&p, ip_proto::UDP);
    assert_eq!(dec.counters.get(Counter::Geneve), 1);
}

#[test]
fn vxlan_can_be_disabled() {
    let mut cfg = DecodeConfig::default();
    cfg.vxlan.enabled = false;
    let mut dec = Decoder::new(cfg);
    let vx =
        PacketBuilder::ipv4(OUT_A, OUT_B).udp(50000, 4789).payload(&build::vxlan(7, &inner_tcp().build_ethernet()));
    let p = decode(&mut dec, &vx.build_ethernet(), LinkType::Ethernet);
    assert!(p.tunnel.is_none());
    assert!(matches!(p.transport, Transport::Udp { dport: 4789, .. }));
}

#[test]
fn ip_in_ip_all_four() {
    let inner4 = inner_tcp().build_ip();
    let inner6 = PacketBuilder::ipv6(A6, B6).tcp(40000, 80).payload(b"inner").build_ip();
    let cases = [
        (
            PacketBuilder::ipv4(OUT_A, OUT_B).protocol(ip_proto::IPIP).payload(&inner4).build_ethernet(),
            Counter::Ipv4InIpv4,
        ),
        (
            PacketBuilder::ipv4(OUT_A, OUT_B).protocol(ip_proto::IPV6).payload(&inner6).build_ethernet(),
            Counter::Ipv6InIpv4,
        ),
        (PacketBuilder::ipv6(B6, A6).protocol(ip_proto::IPIP).payload(&inner4).build_ethernet(), Counter::Ipv4InIpv6),
        (PacketBuilder::ipv6(B6, A6).protocol(ip_proto::IPV6).payload(&inner6).build_ethernet(), Counter::Ipv6InIpv6),
    ];
    for (frame, counter) in cases {
        let mut dec = Decoder::new(DecodeConfig::default());
        let p = decode(&mut dec, &frame, LinkType::Ethernet);
        assert!(!p.invalid && p.tunnel.is_some(), "{counter:?}");
        assert!(matches!(p.transport, Transport::Tcp { dport: 80, .. }), "{counter:?}");
        assert_eq!(dec.counters.get(counter), 1);
    }
}

#[test]
fn teredo_needs_an_exact_ipv6_packet() {
    let mut dec = Decoder::new(DecodeConfig::default());
    let inner6 = PacketBuilder::ipv6(A6, B6).udp(1000, 2000).payload(b"x").build_ip();
    let f = PacketBuilder::ipv4(OUT_A, OUT_B).udp(3544, 40000).payload(&inner6).build_ethernet();
    let p = decode(&mut dec, &f, LinkType::Ethernet);
    assert!(matches!(p.transport, Transport::Udp { sport: 1000, dport: 2000 }));
    assert_eq!(dec.counters.get(Counter::Teredo), 1);
    // Not IPv6 inside: ordinary UDP on port 3544.
    let f =
        PacketBuilder::ipv4(OUT_A, OUT_B).udp(3544, 40000).payload(b"not teredo at all, just data").build_ethernet();
    let p = decode(&mut dec, &f, LinkType::Ethernet);
    assert!(p.tunnel.is_none() && matches!(p.transport, Transport::Udp { sport: 3544, .. }));
}

#[test]
fn link_layers() {
    let ip = inner_tcp().build_ip();
    let mut sll = vec![0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0, 0x08, 0x00];
    sll.extend_from_slice(&ip);
    let mut sll2 = vec![0x08, 0x00, 0, 0, 0, 0, 0, 2, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0];
    sll2.extend_from_slice(&ip);
    let mut null = vec![2, 0, 0, 0];
    null.extend_from_slice(&ip);
    let mut ppp = vec![0xff, 0x03, 0x00, 0x21];
    ppp.extend_from_slice(&ip);
    let mut pppoe = vec![0x11, 0, 0, 1, 0, (ip.len() + 2) as u8, 0x00, 0x21];
    pppoe.extend_from_slice(&ip);
    let pppoe = build::ethernet(build::TEST_DST_MAC, build::TEST_SRC_MAC, ethertype::PPPOE_SESSION, &pppoe);
    let mut mpls = vec![0x00, 0x01, 0x01, 0x40]; // label 16, bottom of stack
    mpls.extend_from_slice(&ip);
    let mpls = build::ethernet(build::TEST_DST_MAC, build::TEST_SRC_MAC, ethertype::MPLS_UNICAST, &mpls);
    let cases: [(Vec<u8>, LinkType, Counter); 8] = [
        (sll, LinkType::LinuxSll, Counter::Sll),
        (sll2, LinkType::LinuxSll2, Counter::Sll2),
        (null, LinkType::Null, Counter::Null),
        (ppp, LinkType::Ppp, Counter::Ppp),
        (ip.clone(), LinkType::Raw, Counter::Raw),
        (ip.clone(), LinkType::Ipv4, Counter::Raw),
        (pppoe, LinkType::Ethernet, Counter::Pppoe),
        (mpls, LinkType::Ethernet, Counter::Mpls),
    ];
    for (frame, link, counter) in cases {
        let mut dec = Decoder::new(DecodeConfig::default());
        let p = decode(&mut dec, &frame, link);
        assert!(!p.invalid, "{counter:?}: {:?}", p.events.iter().collect::<Vec<_>>());
        assert!(matches!(p.transport, Transport::Tcp { dport: 80, .. }), "{counter:?}");
        assert_eq!(dec.counters.get(counter), 1, "{counter:?}");
    }
}

#[test]
fn qinq_counts_each_depth() {
    let mut dec = Decoder::new(DecodeConfig::default());
    let f = build::vlan_tag(&inner_tcp().build_ethernet(), ethertype::QINQ, &[10, 20, 30]);
    let p = decode(&mut dec, &f, LinkType::Ethernet);
    assert_eq!(p.vlans(), [10, 20, 30]);
    for c in [Counter::Vlan, Counter::VlanQinq, Counter::VlanQinqinq] {
        assert_eq!(dec.counters.get(c), 1, "{c:?}");
    }
}

#[test]
fn layer_cap_stops_nested_tunnels() {
    let mut frame = inner_tcp().build_ip();
    for _ in 0..10 {
        let gre = build::gre(ethertype::IPV4, None, None, &frame);
        frame = PacketBuilder::ipv4(OUT_A, OUT_B).protocol(ip_proto::GRE).payload(&gre).build_ip();
    }
    let mut dec = Decoder::new(DecodeConfig::default());
    let p = decode(&mut dec, &frame, LinkType::Raw);
    assert!(p.invalid);
    assert_eq!(p.layers().len(), 16);
    assert_eq!(dec.counters.get(Counter::TooManyLayers), 1);
}
