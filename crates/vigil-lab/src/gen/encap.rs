//! How an IP packet reaches the capture: plain Ethernet, an 802.1Q tag, or
//! a tunnel (GRE, ERSPAN II/III, VXLAN) between two fixed endpoints in
//! 198.19.255.0/24. The MTU applies to the inner packet; tunnel headers come
//! on top, as on an underlay with a larger MTU.

use super::options::Encap;
use vigil_wire::build::{self, PacketBuilder, TEST_DST_MAC, TEST_SRC_MAC};
use vigil_wire::{ethertype, ip_proto};

/// The tunnel endpoints.
pub const TUNNEL_SRC: [u8; 4] = [198, 19, 255, 1];
pub const TUNNEL_DST: [u8; 4] = [198, 19, 255, 2];
/// The VLAN of `vlan`, the VXLAN VNI and the ERSPAN session.
pub const VLAN_ID: u16 = 100;
pub const VXLAN_VNI: u32 = 4242;
pub const ERSPAN_SESSION: u16 = 7;

/// Wraps packets one after another (tunnel sequence numbers and outer IP
/// identifications advance per frame).
#[derive(Debug, Clone)]
pub struct Encapsulator {
    encap: Encap,
    seq: u32,
}

impl Encapsulator {
    pub fn new(encap: Encap) -> Self {
        Encapsulator { encap, seq: 0 }
    }

    /// The frame for the IP packet `ip`; `flow`: a per-flow number that
    /// VXLAN spreads over its UDP source ports, as switches do.
    pub fn frame(&mut self, ip: &[u8], flow: u64) -> Vec<u8> {
        let et = if ip[0] >> 4 == 6 { ethertype::IPV6 } else { ethertype::IPV4 };
        let eth = || build::ethernet(TEST_DST_MAC, TEST_SRC_MAC, et, ip);
        self.seq = self.seq.wrapping_add(1);
        let outer = || PacketBuilder::ipv4(TUNNEL_SRC, TUNNEL_DST).ident(self.seq as u16);
        match self.encap {
            Encap::None => eth(),
            Encap::Vlan => build::vlan_tag(&eth(), ethertype::VLAN, &[VLAN_ID]),
            Encap::Gre => outer().protocol(ip_proto::GRE).payload(&build::gre(et, None, None, ip)).build_ethernet(),
            Encap::Erspan2 => outer()
                .protocol(ip_proto::GRE)
                .payload(&build::erspan2(ERSPAN_SESSION, 0, self.seq, &eth()))
                .build_ethernet(),
            Encap::Erspan3 => outer()
                .protocol(ip_proto::GRE)
                .payload(&build::erspan3(ERSPAN_SESSION, 0, self.seq, self.seq, &eth()))
                .build_ethernet(),
            Encap::Vxlan => {
                let sport = 49152 + (flow % 16384) as u16;
                outer().udp(sport, 4789).payload(&build::vxlan(VXLAN_VNI, &eth())).build_ethernet()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_encapsulation_wraps_the_packet_whole() {
        let ip = PacketBuilder::ipv4([198, 18, 0, 1], [198, 19, 0, 1]).udp(1, 2).payload(b"inner").build_ip();
        for (encap, overhead) in [
            (Encap::None, 14),
            (Encap::Vlan, 18),
            (Encap::Gre, 14 + 20 + 4),
            (Encap::Erspan2, 14 + 20 + 8 + 8 + 14),
            (Encap::Erspan3, 14 + 20 + 8 + 12 + 14),
            (Encap::Vxlan, 14 + 20 + 8 + 8 + 14),
        ] {
            let f = Encapsulator::new(encap).frame(&ip, 3);
            assert_eq!(f.len(), ip.len() + overhead, "{encap:?}");
            assert_eq!(&f[f.len() - ip.len()..], &ip[..], "{encap:?}");
        }
    }
}
