//! Property tests: what the builders write, the views read back, and an
//! independent parser (etherparse) agrees on lengths, addresses, ports and
//! checksums.

use etherparse::{NetSlice, SlicedPacket, TransportSlice};
use proptest::prelude::*;
use vigil_wire::build::{self, PacketBuilder};
use vigil_wire::ethernet::{Ethernet, VlanTag};
use vigil_wire::ipv4::Ipv4;
use vigil_wire::ipv6::Ipv6;
use vigil_wire::tcp::Tcp;
use vigil_wire::udp::Udp;
use vigil_wire::{checksum, ethertype};

#[derive(Debug, Clone)]
enum L4 {
    Tcp { sport: u16, dport: u16, seq: u32, ack: u32, flags: u8 },
    Udp { sport: u16, dport: u16 },
}

fn l4() -> impl Strategy<Value = L4> {
    prop_oneof![
        (any::<u16>(), any::<u16>(), any::<u32>(), any::<u32>(), any::<u8>())
            .prop_map(|(sport, dport, seq, ack, flags)| L4::Tcp { sport, dport, seq, ack, flags }),
        (any::<u16>(), any::<u16>()).prop_map(|(sport, dport)| L4::Udp { sport, dport }),
    ]
}

fn with_l4(b: PacketBuilder, l: &L4) -> PacketBuilder {
    match *l {
        L4::Tcp { sport, dport, seq, ack, flags } => b.tcp(sport, dport).tcp_flags(flags).tcp_seq_ack(seq, ack),
        L4::Udp { sport, dport } => b.udp(sport, dport),
    }
}

fn check_l4(seg: &[u8], l: &L4, payload: &[u8]) {
    match *l {
        L4::Tcp { sport, dport, seq, ack, flags } => {
            let t = Tcp::new_checked(seg).unwrap();
            assert_eq!((t.src_port(), t.dst_port(), t.seq(), t.ack(), t.flags()), (sport, dport, seq, ack, flags));
            assert_eq!(t.payload(), payload);
        }
        L4::Udp { sport, dport } => {
            let u = Udp::new_checked(seg).unwrap();
            assert_eq!((u.src_port(), u.dst_port()), (sport, dport));
            assert_eq!(u.payload(), payload);
        }
    }
}

proptest! {
    #[test]
    fn ipv4_roundtrip(src: [u8; 4], dst: [u8; 4], ttl: u8, ident: u16, l in l4(),
                      payload in proptest::collection::vec(any::<u8>(), 0..1400)) {
        let frame = with_l4(PacketBuilder::ipv4(src, dst).ttl(ttl).ident(ident), &l).payload(&payload).build_ethernet();
        let eth = Ethernet::new_checked(&frame).unwrap();
        prop_assert_eq!(eth.ethertype(), ethertype::IPV4);
        let ip = Ipv4::new_checked(eth.payload()).unwrap();
        prop_assert_eq!((ip.src_bytes(), ip.dst_bytes(), ip.ttl(), ip.ident()), (src, dst, ttl, ident));
        prop_assert!(checksum::verify(ip.header()));
        prop_assert!(checksum::verify_l4_v4(src, dst, ip.protocol(), ip.payload()));
        check_l4(ip.payload(), &l, &payload);

        let sliced = SlicedPacket::from_ethernet(&frame).unwrap();
        let Some(NetSlice::Ipv4(v4)) = sliced.net else { panic!("etherparse: no IPv4") };
        prop_assert_eq!(v4.header().total_len() as usize, frame.len() - 14);
        match (sliced.transport, &l) {
            (Some(TransportSlice::Tcp(t)), L4::Tcp { sport, dport, .. }) => {
                prop_assert_eq!((t.source_port(), t.destination_port()), (*sport, *dport));
                let theirs = t.to_header().calc_checksum_ipv4_raw(src, dst, t.payload()).unwrap();
                prop_assert_eq!(theirs, t.checksum());
            }
            (Some(TransportSlice::Udp(u)), L4::Udp { sport, dport }) => {
                prop_assert_eq!((u.source_port(), u.destination_port()), (*sport, *dport));
            }
            (t, l) => prop_assert!(false, "etherparse saw {:?} for {:?}", t.is_some(), l),
        }
    }

    #[test]
    fn ipv6_roundtrip(src: [u8; 16], dst: [u8; 16], hops: u8, l in l4(),
                      payload in proptest::collection::vec(any::<u8>(), 0..1400)) {
        let frame = with_l4(PacketBuilder::ipv6(src, dst).ttl(hops), &l).payload(&payload).build_ethernet();
        let ip = Ipv6::new_checked(&frame[14..]).unwrap();
        prop_assert_eq!((ip.src_bytes(), ip.dst_bytes(), ip.hop_limit()), (src, dst, hops));
        prop_assert!(checksum::verify_l4_v6(src, dst, ip.next_header(), ip.payload()));
        check_l4(ip.payload(), &l, &payload);
        let sliced = SlicedPacket::from_ethernet(&frame).unwrap();
        prop_assert!(matches!(sliced.net, Some(NetSlice::Ipv6(_))));
    }

    #[test]
    fn vlan_tags_roundtrip(vids in proptest::collection::vec(0u16..4096, 1..4), sport: u16, dport: u16) {
        let frame = PacketBuilder::ipv4([198, 18, 0, 1], [198, 18, 0, 2]).udp(sport, dport).build_ethernet();
        let tagged = build::vlan_tag(&frame, ethertype::QINQ, &vids);
        let mut rest = Ethernet::new_checked(&tagged).unwrap().payload();
        for vid in &vids {
            let tag = VlanTag::new_checked(rest).unwrap();
            prop_assert_eq!(tag.vid(), *vid);
            rest = tag.payload();
        }
        prop_assert_eq!(rest, &frame[14..]);
    }
}
