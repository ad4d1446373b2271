//! Link layers and the headers that sit between them and IP: Ethernet, VLAN,
//! 802.1ah, VN-Tag, MPLS, PPPoE, PPP, ARP, and the capture pseudo-headers.

use crate::counters::Counter;
use crate::decoder::{Next, Step, Walk};
use crate::event::DecodeEvent as E;
use crate::packet::LayerKind;
use vigil_wire::ethernet::{Ethernet, VlanTag};
use vigil_wire::ethertype as et;
use vigil_wire::link::{ppp_proto, CiscoHdlc, Null, NullFamily, Ppp, PppoeSession, Sll, Sll2};
use vigil_wire::mpls::{self, MplsLabel};

/// EtherTypes below this are IEEE 802.3 length fields, not protocol numbers.
const MIN_ETHERTYPE: u16 = 0x0600;

impl<'p, 'a> Walk<'p, 'a> {
    pub(crate) fn ethernet(&mut self, at: usize, end: usize) -> Step {
        self.c.incr(Counter::Ethernet);
        let Ok(eth) = Ethernet::new_checked(self.bytes(at, end)) else {
            return self.invalid(E::EthernetPktTooSmall);
        };
        if !self.layer(LayerKind::Ethernet, at, Ethernet::HEADER_LEN) {
            return (Next::Done, at, end);
        }
        (Next::EtherType(eth.ethertype()), at + Ethernet::HEADER_LEN, end)
    }

    pub(crate) fn ethertype(&mut self, t: u16, at: usize, end: usize) -> Step {
        match t {
            et::IPV4 => (Next::Ipv4, at, end),
            et::IPV6 => (Next::Ipv6, at, end),
            et::VLAN | et::QINQ | et::QINQ_OLD => self.vlan(at, end),
            et::PPPOE_SESSION => self.pppoe_session(at, end),
            et::PPPOE_DISCOVERY => {
                self.c.incr(Counter::Pppoe);
                if end - at < PppoeSession::HEADER_LEN {
                    return self.invalid(E::PppoePktTooSmall);
                }
                (Next::Done, at, end)
            }
            et::MPLS_UNICAST | et::MPLS_MULTICAST => (Next::Mpls, at, end),
            et::ARP => self.arp(at, end),
            et::IEEE8021AH => self.ieee8021ah(at, end),
            et::VNTAG => self.vntag(at, end),
            et::NSH => {
                self.c.incr(Counter::Nsh);
                if end - at < 8 {
                    return self.invalid(E::NshHeaderTooSmall);
                }
                (Next::Done, at, end)
            }
            et::TRANS_ETHER_BRIDGING => (Next::Ethernet, at, end),
            t if t < MIN_ETHERTYPE => (Next::Done, at, end),
            _ => {
                self.c.incr(Counter::UnknownEthertype);
                self.event(E::EthernetUnknownEthertype);
                (Next::Done, at, end)
            }
        }
    }

    fn vlan(&mut self, at: usize, end: usize) -> Step {
        match self.p.vlan_count() {
            0 => self.c.incr(Counter::Vlan),
            1 => self.c.incr(Counter::VlanQinq),
            2 => self.c.incr(Counter::VlanQinqinq),
            _ => {}
        }
        let Ok(tag) = VlanTag::new_checked(self.bytes(at, end)) else {
            return self.invalid(E::VlanHeaderTooSmall);
        };
        if !self.p.push_vlan(tag.vid()) {
            return self.invalid(E::VlanTooManyLayers);
        }
        if !self.layer(LayerKind::Vlan, at, VlanTag::HEADER_LEN) {
            return (Next::Done, at, end);
        }
        let inner = tag.ethertype();
        if inner < MIN_ETHERTYPE {
            self.event(E::VlanUnknownType);
            return (Next::Done, at, end);
        }
        (Next::EtherType(inner), at + VlanTag::HEADER_LEN, end)
    }

    /// 802.1ah provider backbone bridging: a 4-byte I-TAG, then a whole customer frame.
    fn ieee8021ah(&mut self, at: usize, end: usize) -> Step {
        self.c.incr(Counter::Ieee8021ah);
        if end - at < 4 + Ethernet::HEADER_LEN {
            return self.invalid(E::Ieee8021ahHeaderTooSmall);
        }
        if !self.layer(LayerKind::Ieee8021ah, at, 4) {
            return (Next::Done, at, end);
        }
        (Next::Ethernet, at + 4, end)
    }

    /// Cisco VN-Tag: 4 bytes of tag, then the EtherType.
    fn vntag(&mut self, at: usize, end: usize) -> Step {
        self.c.incr(Counter::Vntag);
        let b = self.bytes(at, end);
        if b.len() < 6 {
            return self.invalid(E::VntagHeaderTooSmall);
        }
        if !self.layer(LayerKind::Vntag, at, 6) {
            return (Next::Done, at, end);
        }
        (Next::EtherType(u16::from_be_bytes([b[4], b[5]])), at + 6, end)
    }

    fn arp(&mut self, at: usize, end: usize) -> Step {
        self.c.incr(Counter::Arp);
        // The fixed part: hardware/protocol types and sizes, opcode.
        if end - at < 8 {
            return self.invalid(E::ArpPktTooSmall);
        }
        self.layer(LayerKind::Arp, at, end - at);
        (Next::Done, at, end)
    }

    pub(crate) fn mpls(&mut self, mut at: usize, end: usize) -> Step {
        self.c.incr(Counter::Mpls);
        loop {
            let Ok(l) = MplsLabel::new_checked(self.bytes(at, end)) else {
                return self.invalid(E::MplsHeaderTooSmall);
            };
            if !self.layer(LayerKind::Mpls, at, MplsLabel::HEADER_LEN) {
                return (Next::Done, at, end);
            }
            at += MplsLabel::HEADER_LEN;
            if !l.bottom_of_stack() {
                continue;
            }
            let label = l.label();
            return match label {
                mpls::LABEL_IPV4_EXPLICIT_NULL => (Next::Ipv4, at, end),
                mpls::LABEL_IPV6_EXPLICIT_NULL => (Next::Ipv6, at, end),
                mpls::LABEL_ROUTER_ALERT => self.invalid(E::MplsBadLabelRouterAlert),
                mpls::LABEL_IMPLICIT_NULL => self.invalid(E::MplsBadLabelImplicitNull),
                l if l <= mpls::LABEL_MAX_RESERVED => self.invalid(E::MplsBadLabelReserved),
                _ => {
                    // No label says what follows: guess from the first nibble, as routers do.
                    let Some(&first) = self.bytes(at, end).first() else {
                        return self.invalid(E::MplsPktTooSmall);
                    };
                    match first >> 4 {
                        4 => (Next::Ipv4, at, end),
                        6 => (Next::Ipv6, at, end),
                        // A pseudowire control word (first nibble 0) precedes an Ethernet frame.
                        0 if end - at >= 4 + 14 => (Next::Ethernet, at + 4, end),
                        _ => {
                            self.event(E::MplsUnknownPayloadType);
                            (Next::Done, at, end)
                        }
                    }
                }
            };
        }
    }

    fn pppoe_session(&mut self, at: usize, end: usize) -> Step {
        self.c.incr(Counter::Pppoe);
        let Ok(s) = PppoeSession::new_checked(self.bytes(at, end)) else {
            return self.invalid(E::PppoePktTooSmall);
        };
        if s.code() != 0 {
            return self.invalid(E::PppoeWrongCode);
        }
        let Ok(ppp) = Ppp::new_checked(s.payload()) else {
            return self.invalid(E::PppoePktTooSmall);
        };
        let hlen = (end - at) - ppp.payload().len();
        if !self.layer(LayerKind::Pppoe, at, hlen) {
            return (Next::Done, at, end);
        }
        self.ppp_protocol(ppp.protocol(), at + hlen, end)
    }

    pub(crate) fn ppp(&mut self, at: usize, end: usize) -> Step {
        self.c.incr(Counter::Ppp);
        let Ok(ppp) = Ppp::new_checked(self.bytes(at, end)) else {
            return self.invalid(E::PppPktTooSmall);
        };
        let hlen = (end - at) - ppp.payload().len();
        if !self.layer(LayerKind::Ppp, at, hlen) {
            return (Next::Done, at, end);
        }
        self.ppp_protocol(ppp.protocol(), at + hlen, end)
    }

    fn ppp_protocol(&mut self, proto: u16, at: usize, end: usize) -> Step {
        match proto {
            ppp_proto::IPV4 => {
                if end - at < vigil_wire::ipv4::MIN_HEADER_LEN {
                    return self.invalid(E::PppIp4PktTooSmall);
                }
                (Next::Ipv4, at, end)
            }
            ppp_proto::IPV6 => {
                if end - at < vigil_wire::ipv6::HEADER_LEN {
                    return self.invalid(E::PppIp6PktTooSmall);
                }
                (Next::Ipv6, at, end)
            }
            ppp_proto::VJ_UNCOMPRESSED => {
                if end - at < vigil_wire::ipv4::MIN_HEADER_LEN {
                    return self.invalid(E::PppVjuPktTooSmall);
                }
                // Van Jacobson "uncompressed" replaces the IPv4 protocol byte with a slot id.
                self.event(E::PppUnsupProto);
                (Next::Done, at, end)
            }
            // Link and network control protocols, authentication, compression: valid PPP, not inspected.
            0x0001..=0x3fff | 0x8001..=0xbfff | 0xc021..=0xc4ff => {
                self.event(E::PppUnsupProto);
                (Next::Done, at, end)
            }
            _ => self.invalid(E::PppWrongType),
        }
    }

    pub(crate) fn null(&mut self, at: usize, end: usize) -> Step {
        self.c.incr(Counter::Null);
        let Ok(n) = Null::new_checked(self.bytes(at, end)) else {
            return self.invalid(E::LtnullPktTooSmall);
        };
        if !self.layer(LayerKind::Null, at, Null::HEADER_LEN) {
            return (Next::Done, at, end);
        }
        match n.family() {
            NullFamily::Ipv4 => (Next::Ipv4, at + Null::HEADER_LEN, end),
            NullFamily::Ipv6 => (Next::Ipv6, at + Null::HEADER_LEN, end),
            NullFamily::Other(_) => self.invalid(E::LtnullUnsupportedType),
        }
    }

    pub(crate) fn sll(&mut self, at: usize, end: usize) -> Step {
        self.c.incr(Counter::Sll);
        let Ok(s) = Sll::new_checked(self.bytes(at, end)) else {
            return self.invalid(E::SllPktTooSmall);
        };
        if !self.layer(LayerKind::Sll, at, Sll::HEADER_LEN) {
            return (Next::Done, at, end);
        }
        (Next::EtherType(s.protocol()), at + Sll::HEADER_LEN, end)
    }

    pub(crate) fn sll2(&mut self, at: usize, end: usize) -> Step {
        self.c.incr(Counter::Sll2);
        let Ok(s) = Sll2::new_checked(self.bytes(at, end)) else {
            return self.invalid(E::Sll2PktTooSmall);
        };
        if !self.layer(LayerKind::Sll2, at, Sll2::HEADER_LEN) {
            return (Next::Done, at, end);
        }
        (Next::EtherType(s.protocol()), at + Sll2::HEADER_LEN, end)
    }

    pub(crate) fn chdlc(&mut self, at: usize, end: usize) -> Step {
        self.c.incr(Counter::Chdlc);
        let Ok(h) = CiscoHdlc::new_checked(self.bytes(at, end)) else {
            return self.invalid(E::ChdlcPktTooSmall);
        };
        if !self.layer(LayerKind::CiscoHdlc, at, CiscoHdlc::HEADER_LEN) {
            return (Next::Done, at, end);
        }
        (Next::EtherType(h.protocol()), at + CiscoHdlc::HEADER_LEN, end)
    }

    pub(crate) fn raw_ip(&mut self, at: usize, end: usize) -> Step {
        match self.bytes(at, end).first().map(|b| b >> 4) {
            Some(4) => (Next::Ipv4, at, end),
            Some(6) => (Next::Ipv6, at, end),
            _ => self.invalid(E::IprawInvalidIpVersion),
        }
    }
}
