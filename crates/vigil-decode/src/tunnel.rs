//! Tunnels: GRE (v0, v1), ERSPAN II/III (and type I), VXLAN, Geneve, Teredo.
//! Each enters the tunnel so the inner IP header becomes the packet's own
//! and the outer one is kept as its tunnel parent.

use crate::counters::Counter;
use crate::decoder::{Next, Step, Walk};
use crate::event::DecodeEvent as E;
use crate::packet::LayerKind;
use vigil_wire::erspan::Erspan;
use vigil_wire::ethertype as et;
use vigil_wire::geneve::Geneve;
use vigil_wire::gre::{self, Gre};
use vigil_wire::ipv6;
use vigil_wire::vxlan::{teredo_inner, Vxlan};

/// GRE version 1 only carries PPP (RFC 2637).
const GRE_PPP: u16 = 0x880b;

impl<'p, 'a> Walk<'p, 'a> {
    pub(crate) fn gre(&mut self, at: usize, end: usize) -> Step {
        self.c.incr(Counter::Gre);
        let b = self.bytes(at, end);
        let Ok(g) = Gre::new_checked(b) else {
            return self.invalid(E::GrePktTooSmall);
        };
        let mut hlen = g.fixed_len();
        match g.version() {
            0 => {
                if g.recursion() != 0 {
                    return self.invalid(E::GreVersion0Recur);
                }
                if g.second_byte() & 0xf8 != 0 {
                    return self.invalid(E::GreVersion0Flags);
                }
                if hlen > b.len() {
                    return self.invalid(E::GreVersion0HdrTooBig);
                }
                if g.has(gre::FLAG_ROUTING) {
                    match gre::skip_source_routes(b, hlen) {
                        Some(n) => hlen = n,
                        None => return self.invalid(E::GreVersion0MalformedSreHdr),
                    }
                }
            }
            1 => {
                let checks = [
                    (g.has(gre::FLAG_CHECKSUM), E::GreVersion1Chksum),
                    (g.has(gre::FLAG_ROUTING), E::GreVersion1Route),
                    (g.has(gre::FLAG_STRICT_ROUTE), E::GreVersion1Ssr),
                    (g.recursion() != 0, E::GreVersion1Recur),
                    (g.second_byte() & 0x78 != 0, E::GreVersion1Flags),
                    (!g.has(gre::FLAG_KEY), E::GreVersion1NoKey),
                    (g.protocol() != GRE_PPP, E::GreVersion1WrongProtocol),
                    (hlen > b.len(), E::GreVersion1HdrTooBig),
                ];
                if let Some(&(_, e)) = checks.iter().find(|(bad, _)| *bad) {
                    return self.invalid(e);
                }
            }
            _ => return self.invalid(E::GreWrongVersion),
        }
        if !self.layer(LayerKind::Gre, at, hlen) {
            return (Next::Done, at, end);
        }
        let body = at + hlen;
        let next = match g.protocol() {
            et::IPV4 => Next::Ipv4,
            et::IPV6 => Next::Ipv6,
            GRE_PPP => Next::Ppp,
            et::TRANS_ETHER_BRIDGING => Next::Ethernet,
            et::VLAN => Next::EtherType(et::VLAN),
            et::MPLS_UNICAST | et::MPLS_MULTICAST => Next::Mpls,
            // ERSPAN type II sets the sequence bit; without it the payload is a bare type I frame.
            et::ERSPAN_II if g.has(gre::FLAG_SEQ) => Next::ErspanII,
            et::ERSPAN_II if self.cfg.erspan_type1 => {
                self.c.incr(Counter::Erspan);
                Next::Ethernet
            }
            et::ERSPAN_III => Next::ErspanIII,
            _ => return (Next::Done, at, end),
        };
        self.tunnel_payload();
        (next, body, end)
    }

    pub(crate) fn erspan(&mut self, kind: u8, at: usize, end: usize) -> Step {
        self.c.incr(Counter::Erspan);
        let b = self.bytes(at, end);
        let Ok(h) = Erspan::new_checked(b) else {
            return self.invalid(E::ErspanHeaderTooSmall);
        };
        let expected = if kind == 2 { 1 } else { 2 };
        if h.version() != expected {
            return self.invalid(E::ErspanUnsupportedVersion);
        }
        let Some(hlen) = h.header_len().filter(|&n| n <= b.len()) else {
            return self.invalid(E::ErspanHeaderTooSmall);
        };
        if h.vlan() != 0 && !self.p.push_vlan(h.vlan()) {
            return self.invalid(E::ErspanTooManyVlanLayers);
        }
        if !self.layer(LayerKind::Erspan, at, hlen) {
            return (Next::Done, at, end);
        }
        (Next::Ethernet, at + hlen, end)
    }

    pub(crate) fn vxlan(&mut self, at: usize, end: usize) -> Step {
        let b = self.bytes(at, end);
        // Anything not shaped like VXLAN (flags other than I, short) stays plain UDP.
        let Ok(v) = Vxlan::new_checked(b) else { return (Next::Done, at, end) };
        if v.flags() != 0x08 || b.len() < vigil_wire::vxlan::HEADER_LEN + 14 {
            return (Next::Done, at, end);
        }
        self.c.incr(Counter::Vxlan);
        if !self.layer(LayerKind::Vxlan, at, vigil_wire::vxlan::HEADER_LEN) {
            return (Next::Done, at, end);
        }
        let inner = at + vigil_wire::vxlan::HEADER_LEN;
        let ethertype = u16::from_be_bytes([b[20], b[21]]);
        if !matches!(ethertype, et::IPV4 | et::IPV6 | et::ARP | et::VLAN | et::QINQ) {
            self.event(E::VxlanUnknownPayloadType);
        }
        self.tunnel_payload();
        (Next::Ethernet, inner, end)
    }

    pub(crate) fn geneve(&mut self, at: usize, end: usize) -> Step {
        let Ok(g) = Geneve::new_checked(self.bytes(at, end)) else { return (Next::Done, at, end) };
        if g.version() != 0 {
            return (Next::Done, at, end);
        }
        self.c.incr(Counter::Geneve);
        if !self.layer(LayerKind::Geneve, at, g.header_len()) {
            return (Next::Done, at, end);
        }
        let inner = at + g.header_len();
        let next = match g.protocol() {
            et::TRANS_ETHER_BRIDGING => Next::Ethernet,
            et::IPV4 => Next::Ipv4,
            et::IPV6 => Next::Ipv6,
            _ => {
                self.event(E::GeneveUnknownPayloadType);
                return (Next::Done, at, end);
            }
        };
        self.tunnel_payload();
        (next, inner, end)
    }

    /// Teredo is only believed when an exact IPv6 packet follows; otherwise
    /// the datagram is ordinary UDP on port 3544.
    pub(crate) fn teredo(&mut self, at: usize, end: usize) -> Step {
        let b = self.bytes(at, end);
        let Some(inner) = teredo_inner(b) else { return (Next::Done, at, end) };
        let fits = inner.len() >= ipv6::HEADER_LEN
            && inner[0] >> 4 == 6
            && ipv6::HEADER_LEN + u16::from_be_bytes([inner[4], inner[5]]) as usize == inner.len()
            // A bare IPv6 header with no next header is a Teredo bubble: nothing to inspect.
            && !(inner[6] == vigil_wire::ip_proto::NONE && inner.len() == ipv6::HEADER_LEN);
        if !fits {
            return (Next::Done, at, end);
        }
        self.c.incr(Counter::Teredo);
        let skipped = b.len() - inner.len();
        if !self.layer(LayerKind::Teredo, at, skipped) {
            return (Next::Done, at, end);
        }
        self.tunnel_payload();
        (Next::Ipv6, at + skipped, end)
    }
}
