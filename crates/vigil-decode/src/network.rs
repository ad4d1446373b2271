//! IPv4 and IPv6 (with extension headers), and the dispatch on the protocol
//! they carry, including IP-in-IP tunnels.

use crate::counters::Counter;
use crate::decoder::{Next, Step, Walk};
use crate::event::DecodeEvent as E;
use crate::packet::{IpInfo, LayerKind};
use std::net::IpAddr;
use vigil_wire::checksum;
use vigil_wire::ip_proto as proto;
use vigil_wire::ipv4::{Ipv4, Ipv4Error, Ipv4Option};
use vigil_wire::ipv6::{AuthHeader, ExtHeader, FragmentHeader, Ipv6, Ipv6Error, Ipv6Option, Ipv6Options};

/// IPv4 option kinds with a defined meaning (IANA "IP Option Numbers").
mod opt {
    pub const RR: u8 = 7;
    pub const QS: u8 = 25;
    pub const TS: u8 = 68;
    pub const SEC: u8 = 130;
    pub const LSRR: u8 = 131;
    pub const CIPSO: u8 = 134;
    pub const SID: u8 = 136;
    pub const SSRR: u8 = 137;
    pub const RTRALT: u8 = 148;
}

impl<'p, 'a> Walk<'p, 'a> {
    pub(crate) fn ipv4(&mut self, at: usize, end: usize) -> Step {
        self.c.incr(Counter::Ipv4);
        let ip = match Ipv4::new_checked(self.bytes(at, end)) {
            Ok(ip) => ip,
            Err(Ipv4Error::TooSmall) => return self.invalid(E::Ipv4PktTooSmall),
            Err(Ipv4Error::WrongVersion(_)) => return self.invalid(E::Ipv4WrongIpVersion),
            Err(Ipv4Error::HeaderTooSmall) => return self.invalid(E::Ipv4HlenTooSmall),
            Err(Ipv4Error::TotalBelowHeader) => return self.invalid(E::Ipv4IplenSmallerThanHlen),
            Err(Ipv4Error::Truncated) => return self.invalid(E::Ipv4TruncPkt),
        };
        let hlen = ip.header_len();
        if !self.layer(LayerKind::Ipv4, at, hlen) {
            return (Next::Done, at, end);
        }
        if hlen > vigil_wire::ipv4::MIN_HEADER_LEN && !self.ipv4_options(&ip) {
            return (Next::Done, at, end);
        }
        if self.cfg.validate_checksums && !checksum::verify(ip.header()) {
            self.p.checksum.ipv4_bad = true;
        }
        self.begin_ip();
        self.ip_version = 4;
        self.p.ip = Some(IpInfo {
            src: IpAddr::V4(ip.src()),
            dst: IpAddr::V4(ip.dst()),
            ttl: ip.ttl(),
            offset: at as u32,
            len: ip.total_len() as u32,
        });
        self.p.proto = ip.protocol();
        let body_end = at + ip.total_len() as usize;
        if ip.is_fragment() {
            self.p.fragment = true;
            return (Next::Done, at + hlen, body_end);
        }
        (Next::IpProto(ip.protocol()), at + hlen, body_end)
    }

    /// Checks IPv4 options; false when they are malformed enough to stop decoding.
    fn ipv4_options(&mut self, ip: &Ipv4<'a>) -> bool {
        let mut seen = crate::kindset::KindSet::default();
        for o in ip.options() {
            match o {
                Ipv4Option::EndOfList | Ipv4Option::Nop => {}
                Ipv4Option::BadLength { .. } => {
                    self.invalid(E::Ipv4OptInvalidLen);
                    return false;
                }
                Ipv4Option::Tlv { kind, data } => {
                    if !seen.insert(kind) {
                        self.invalid(E::Ipv4OptDuplicate);
                        return false;
                    }
                    let len = data.len() + 2;
                    let well_formed = match kind {
                        // Route records: a pointer byte then whole addresses.
                        opt::RR | opt::LSRR | opt::SSRR => len >= 3 && (len - 3) % 4 == 0,
                        opt::TS => len >= 4,
                        opt::QS => len == 8,
                        opt::SEC => len == 11 || len >= 3,
                        opt::CIPSO => len >= 6,
                        opt::SID | opt::RTRALT => len == 4,
                        _ => {
                            self.event(E::Ipv4OptUnknown);
                            true
                        }
                    };
                    if !well_formed {
                        self.invalid(E::Ipv4OptMalformed);
                        return false;
                    }
                }
            }
        }
        true
    }

    pub(crate) fn ipv6(&mut self, at: usize, end: usize) -> Step {
        self.c.incr(Counter::Ipv6);
        let ip = match Ipv6::new_checked(self.bytes(at, end)) {
            Ok(ip) => ip,
            Err(Ipv6Error::TooSmall) => return self.invalid(E::Ipv6PktTooSmall),
            Err(Ipv6Error::WrongVersion(_)) => return self.invalid(E::Ipv6WrongIpVersion),
            Err(Ipv6Error::Truncated) => return self.invalid(E::Ipv6TruncPkt),
        };
        if !self.layer(LayerKind::Ipv6, at, vigil_wire::ipv6::HEADER_LEN) {
            return (Next::Done, at, end);
        }
        self.begin_ip();
        self.ip_version = 6;
        let total = vigil_wire::ipv6::HEADER_LEN + ip.payload_len() as usize;
        self.p.ip = Some(IpInfo {
            src: IpAddr::V6(ip.src()),
            dst: IpAddr::V6(ip.dst()),
            ttl: ip.hop_limit(),
            offset: at as u32,
            len: total as u32,
        });
        self.p.proto = ip.next_header();
        self.ipv6_ext_headers(ip.next_header(), at + vigil_wire::ipv6::HEADER_LEN, at + total)
    }

    /// Walks extension headers to the upper-layer protocol.
    fn ipv6_ext_headers(&mut self, mut nh: u8, mut at: usize, end: usize) -> Step {
        let (mut hh, mut rh, mut fh, mut ah) = (false, false, false, false);
        let mut dh = 0u8;
        let mut first = true;
        loop {
            match nh {
                proto::HOPOPTS | proto::DSTOPTS | proto::ROUTING | proto::MOBILITY | 139 | 140 => {
                    let Ok(h) = ExtHeader::new_checked(self.bytes(at, end)) else {
                        return self.invalid(E::Ipv6TruncExthdr);
                    };
                    match nh {
                        proto::HOPOPTS => {
                            // RFC 8200: hop-by-hop options only directly after the IPv6 header.
                            if hh || !first {
                                self.event(E::Ipv6ExthdrDuplHh);
                            }
                            hh = true;
                            if !self.ipv6_options(h.data(), E::Ipv6HopoptsUnknownOpt, E::Ipv6HopoptsOnlyPadding) {
                                return (Next::Done, at, end);
                            }
                        }
                        proto::DSTOPTS => {
                            // Allowed twice: before a routing header and before the upper layer.
                            dh += 1;
                            if dh > 2 {
                                self.event(E::Ipv6ExthdrDuplDh);
                            }
                            if !self.ipv6_options(h.data(), E::Ipv6DstoptsUnknownOpt, E::Ipv6DstoptsOnlyPadding) {
                                return (Next::Done, at, end);
                            }
                        }
                        proto::ROUTING => {
                            if rh {
                                self.event(E::Ipv6ExthdrDuplRh);
                            }
                            rh = true;
                            if h.data().first() == Some(&0) {
                                self.event(E::Ipv6RhType0);
                            }
                        }
                        _ => {}
                    }
                    if !self.layer_ext(LayerKind::Ipv6Ext, nh, at, h.len()) {
                        return (Next::Done, at, end);
                    }
                    nh = h.next_header();
                    at += h.len();
                }
                proto::FRAGMENT => {
                    let Ok(f) = FragmentHeader::new_checked(self.bytes(at, end)) else {
                        return self.invalid(E::Ipv6TruncExthdr);
                    };
                    if fh {
                        self.event(E::Ipv6ExthdrDuplFh);
                    }
                    fh = true;
                    if f.reserved() != 0 || f.reserved_bits() != 0 {
                        self.event(E::Ipv6FhNonZeroReservedField);
                    }
                    if !self.layer_ext(LayerKind::Ipv6Ext, nh, at, FragmentHeader::LEN) {
                        return (Next::Done, at, end);
                    }
                    at += FragmentHeader::LEN;
                    if f.offset() == 0 && !f.more_fragments() {
                        // An atomic fragment: a whole datagram in one piece; decode on.
                        self.event(E::Ipv6ExthdrUselessFh);
                        nh = f.next_header();
                        continue;
                    }
                    self.p.fragment = true;
                    self.p.proto = f.next_header();
                    return (Next::Done, at, end);
                }
                proto::AH => {
                    let Ok(h) = AuthHeader::new_checked(self.bytes(at, end)) else {
                        return self.invalid(E::Ipv6TruncExthdr);
                    };
                    if ah {
                        self.event(E::Ipv6ExthdrDuplAh);
                    }
                    ah = true;
                    if h.reserved() != 0 {
                        self.event(E::Ipv6ExthdrAhResNotNull);
                    }
                    if !self.layer_ext(LayerKind::Ipv6Ext, nh, at, h.len()) {
                        return (Next::Done, at, end);
                    }
                    nh = h.next_header();
                    at += h.len();
                }
                // ESP ends decoding: what follows is encrypted.
                proto::ESP => {
                    self.p.proto = proto::ESP;
                    return (Next::IpProto(proto::ESP), at, end);
                }
                proto::NONE => {
                    if end > at {
                        self.event(E::Ipv6DataAfterNoneHeader);
                    }
                    self.p.proto = proto::NONE;
                    return (Next::Done, at, end);
                }
                _ => {
                    self.p.proto = nh;
                    return (Next::IpProto(nh), at, end);
                }
            }
            first = false;
        }
    }

    /// Checks hop-by-hop / destination options; false when malformed.
    fn ipv6_options(&mut self, data: &[u8], unknown: E, only_padding: E) -> bool {
        let mut padding_only = true;
        for o in Ipv6Options::new(data) {
            match o {
                Ipv6Option::Pad1 => {}
                Ipv6Option::PadN { len } => {
                    if len == 0 {
                        self.event(E::Ipv6ZeroLenPadn);
                    }
                }
                Ipv6Option::BadLength => {
                    self.invalid(E::Ipv6ExthdrInvalidOptlen);
                    return false;
                }
                Ipv6Option::Other { kind, .. } => {
                    padding_only = false;
                    // Router alert, jumbo payload, home address: the options RFCs define.
                    if !matches!(kind, 0x05 | 0xc2 | 0xc9) {
                        self.event(unknown);
                    }
                }
            }
        }
        if padding_only {
            self.event(only_padding);
        }
        true
    }

    pub(crate) fn ip_proto(&mut self, p: u8, at: usize, end: usize) -> Step {
        match (p, self.ip_version) {
            (proto::TCP, _) => self.tcp(at, end),
            (proto::UDP, _) => self.udp(at, end),
            (proto::ICMP, 4) => self.icmpv4(at, end),
            (proto::ICMP, _) => {
                self.event(E::Ipv6Icmpv4);
                (Next::Done, at, end)
            }
            (proto::ICMPV6, 6) => self.icmpv6(at, end),
            (proto::ICMPV6, _) => {
                self.event(E::Ipv4Icmpv6);
                (Next::Done, at, end)
            }
            (proto::SCTP, _) => self.sctp(at, end),
            (proto::ESP, _) => {
                self.c.incr(Counter::Esp);
                if end - at < 8 {
                    return self.invalid(E::EspPktTooSmall);
                }
                self.layer(LayerKind::Esp, at, 8);
                (Next::Done, at, end)
            }
            (proto::GRE, _) => self.gre(at, end),
            (proto::IPIP, v) => self.ip_in_ip(4, v, at, end),
            (proto::IPV6, v) => self.ip_in_ip(6, v, at, end),
            (_, 6) => {
                self.event(E::Ipv6UnknownNextHeader);
                (Next::Done, at, end)
            }
            _ => (Next::Done, at, end),
        }
    }

    fn ip_in_ip(&mut self, inner: u8, outer: u8, at: usize, end: usize) -> Step {
        let b = self.bytes(at, end);
        if outer == 6 {
            let (min, too_small, wrong) = if inner == 4 {
                (vigil_wire::ipv4::MIN_HEADER_LEN, E::Ipv6Ipv4InIpv6TooSmall, E::Ipv6Ipv4InIpv6WrongVersion)
            } else {
                (vigil_wire::ipv6::HEADER_LEN, E::Ipv6Ipv6InIpv6TooSmall, E::Ipv6Ipv6InIpv6WrongVersion)
            };
            if b.len() < min {
                return self.invalid(too_small);
            }
            if b[0] >> 4 != inner {
                return self.invalid(wrong);
            }
        }
        self.c.incr(match (inner, outer) {
            (4, 4) => Counter::Ipv4InIpv4,
            (6, 4) => Counter::Ipv6InIpv4,
            (4, _) => Counter::Ipv4InIpv6,
            _ => Counter::Ipv6InIpv6,
        });
        self.tunnel_payload();
        (if inner == 4 { Next::Ipv4 } else { Next::Ipv6 }, at, end)
    }
}
