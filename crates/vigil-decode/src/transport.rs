//! TCP, UDP, SCTP, ICMPv4 and ICMPv6, with checksum validation when enabled.

use crate::counters::Counter;
use crate::decoder::{Next, Step, Walk};
use crate::event::DecodeEvent as E;
use crate::packet::{LayerKind, Transport};
use std::net::IpAddr;
use vigil_wire::icmp::{self, Icmp};
use vigil_wire::tcp::{fixed_option_len, option_kind, Tcp, TcpError, TcpOption};
use vigil_wire::udp::{Udp, UdpError};
use vigil_wire::{checksum, ip_proto};

impl<'p, 'a> Walk<'p, 'a> {
    pub(crate) fn tcp(&mut self, at: usize, end: usize) -> Step {
        self.c.incr(Counter::Tcp);
        let seg = self.bytes(at, end);
        let tcp = match Tcp::new_checked(seg) {
            Ok(t) => t,
            Err(TcpError::TooSmall) => return self.invalid(E::TcpPktTooSmall),
            Err(TcpError::HeaderTooSmall) => return self.invalid(E::TcpHlenTooSmall),
            Err(TcpError::HeaderPastEnd) => return self.invalid(E::TcpInvalidOptlen),
        };
        let hlen = tcp.header_len();
        if !self.layer(LayerKind::Tcp, at, hlen) {
            return (Next::Done, at, end);
        }
        let mut seen = crate::kindset::KindSet::default();
        for o in tcp.options() {
            match o {
                TcpOption::EndOfList | TcpOption::Nop => {}
                TcpOption::BadLength { .. } => return self.invalid(E::TcpOptInvalidLen),
                TcpOption::Tlv { kind, data } => {
                    if fixed_option_len(kind).is_some_and(|n| n != data.len())
                        || (kind == option_kind::SACK && (data.len() % 8 != 0 || data.len() > 32))
                        || (kind == option_kind::TFO && !data.is_empty() && !(4..=16).contains(&data.len()))
                    {
                        return self.invalid(E::TcpOptInvalidLen);
                    }
                    if !seen.insert(kind) {
                        self.event(E::TcpOptDuplicate);
                    }
                }
            }
        }
        if self.cfg.validate_checksums && !self.l4_checksum_ok(ip_proto::TCP, seg) {
            self.p.checksum.l4_bad = true;
        }
        self.p.transport = Transport::Tcp {
            sport: tcp.src_port(),
            dport: tcp.dst_port(),
            flags: tcp.flags(),
            seq: tcp.seq(),
            ack: tcp.ack(),
            window: tcp.window(),
        };
        self.p.set_payload(at + hlen, seg.len() - hlen);
        (Next::Done, at, end)
    }

    pub(crate) fn udp(&mut self, at: usize, end: usize) -> Step {
        self.c.incr(Counter::Udp);
        let seg = self.bytes(at, end);
        let udp = match Udp::new_checked(seg) {
            Ok(u) => u,
            Err(UdpError::TooSmall) => return self.invalid(E::UdpHlenTooSmall),
            Err(UdpError::Truncated) => return self.invalid(E::UdpPktTooSmall),
            Err(UdpError::LengthBelowHeader) => return self.invalid(E::UdpLenInvalid),
            Err(UdpError::LengthMismatch) => return self.invalid(E::UdpHlenInvalid),
        };
        if !self.layer(LayerKind::Udp, at, vigil_wire::udp::HEADER_LEN) {
            return (Next::Done, at, end);
        }
        // Zero means "no checksum" over IPv4 (RFC 768); IPv6 requires one.
        let checked = udp.checksum() != 0 || self.ip_version == 6;
        if self.cfg.validate_checksums && checked && !self.l4_checksum_ok(ip_proto::UDP, seg) {
            self.p.checksum.l4_bad = true;
        }
        let (sport, dport) = (udp.src_port(), udp.dst_port());
        self.p.transport = Transport::Udp { sport, dport };
        let body = at + vigil_wire::udp::HEADER_LEN;
        self.p.set_payload(body, end - body);
        if self.p.fragment || self.p.invalid {
            return (Next::Done, at, end);
        }
        if self.cfg.teredo.matches(sport) || self.cfg.teredo.matches(dport) {
            return (Next::Teredo, body, end);
        }
        if self.cfg.vxlan.matches(dport) {
            return (Next::Vxlan, body, end);
        }
        if self.cfg.geneve.matches(dport) {
            return (Next::Geneve, body, end);
        }
        (Next::Done, at, end)
    }

    pub(crate) fn sctp(&mut self, at: usize, end: usize) -> Step {
        self.c.incr(Counter::Sctp);
        let b = self.bytes(at, end);
        if b.len() < 12 {
            return self.invalid(E::SctpPktTooSmall);
        }
        if !self.layer(LayerKind::Sctp, at, 12) {
            return (Next::Done, at, end);
        }
        self.p.transport =
            Transport::Sctp { sport: u16::from_be_bytes([b[0], b[1]]), dport: u16::from_be_bytes([b[2], b[3]]) };
        self.p.set_payload(at + 12, b.len() - 12);
        (Next::Done, at, end)
    }

    pub(crate) fn icmpv4(&mut self, at: usize, end: usize) -> Step {
        self.c.incr(Counter::Icmpv4);
        let msg = self.bytes(at, end);
        let Ok(h) = Icmp::new_checked(msg) else {
            return self.invalid(E::Icmpv4PktTooSmall);
        };
        if !self.layer(LayerKind::Icmpv4, at, icmp::HEADER_LEN) {
            return (Next::Done, at, end);
        }
        let (kind, code) = (h.kind(), h.code());
        self.p.transport = Transport::Icmp { kind, code };
        let mut hlen = icmp::HEADER_LEN;
        use icmp::v4::*;
        // Types and code ranges of RFC 792 and its successors; errors quote the offending datagram.
        let quote = match kind {
            DEST_UNREACH => self.icmp_code_max(code, 15),
            REDIRECT => self.icmp_code_max(code, 3),
            TIME_EXCEEDED => self.icmp_code_max(code, 1),
            SOURCE_QUENCH | PARAMETER_PROBLEM => self.icmp_code_max(code, 0),
            ECHO_REPLY | ECHO | INFO_REQUEST | INFO_REPLY | ADDRESS | ADDRESS_REPLY => {
                self.icmp_code_max(code, 0);
                false
            }
            TIMESTAMP | TIMESTAMP_REPLY => {
                self.icmp_code_max(code, 0);
                // Originate, receive and transmit timestamps.
                if msg.len() < icmp::HEADER_LEN + 12 {
                    self.event(E::Icmpv4Ipv4TruncPkt);
                } else {
                    hlen += 12;
                }
                false
            }
            ROUTER_ADVERT => {
                let (naddr, size) = (msg[4] as usize, msg[5] as usize);
                let advert = naddr * size * 4;
                if msg.len() < icmp::HEADER_LEN + advert {
                    self.event(E::Icmpv4Ipv4TruncPkt);
                } else {
                    hlen += advert;
                }
                false
            }
            _ => {
                self.event(E::Icmpv4UnknownType);
                false
            }
        };
        if quote && msg.len() > icmp::HEADER_LEN {
            let inner = &msg[icmp::HEADER_LEN..];
            if inner.len() < vigil_wire::ipv4::MIN_HEADER_LEN {
                self.event(E::Icmpv4Ipv4TruncPkt);
            } else if inner[0] >> 4 != 4 {
                self.event(E::Icmpv4Ipv4UnknownVer);
            }
        }
        if self.cfg.validate_checksums && !checksum::verify(msg) {
            self.p.checksum.l4_bad = true;
        }
        self.p.set_payload(at + hlen, msg.len() - hlen);
        (Next::Done, at, end)
    }

    /// Raises `unknown_code` when `code` is above `max`; true when the code is valid.
    fn icmp_code_max(&mut self, code: u8, max: u8) -> bool {
        if code > max {
            let e = if self.ip_version == 6 { E::Icmpv6UnknownCode } else { E::Icmpv4UnknownCode };
            self.event(e);
            return false;
        }
        true
    }

    pub(crate) fn icmpv6(&mut self, at: usize, end: usize) -> Step {
        self.c.incr(Counter::Icmpv6);
        let msg = self.bytes(at, end);
        let Ok(h) = Icmp::new_checked(msg) else {
            return self.invalid(E::Icmpv6PktTooSmall);
        };
        if !self.layer(LayerKind::Icmpv6, at, icmp::HEADER_LEN) {
            return (Next::Done, at, end);
        }
        let (kind, code) = (h.kind(), h.code());
        self.p.transport = Transport::Icmp { kind, code };
        use icmp::v6::*;
        let quote = match kind {
            DEST_UNREACH => self.icmp_code_max(code, 7),
            PACKET_TOO_BIG => self.icmp_code_max(code, 0),
            TIME_EXCEEDED => self.icmp_code_max(code, 1),
            PARAM_PROBLEM => self.icmp_code_max(code, 3),
            ECHO_REQUEST | ECHO_REPLY | ROUTER_SOLICIT | ROUTER_ADVERT | NEIGHBOR_SOLICIT | NEIGHBOR_ADVERT
            | REDIRECT => {
                self.icmp_code_max(code, 0);
                false
            }
            MLD_QUERY | MLD_REPORT | MLD_DONE | MLD_V2_REPORT => {
                self.icmp_code_max(code, 0);
                // RFC 2710: MLD messages are link-local, sent with hop limit 1.
                if self.p.ip.is_some_and(|ip| ip.ttl != 1) {
                    self.event(E::Icmpv6MldMessageWithInvalidHl);
                }
                false
            }
            // Router renumbering, node information, and the later ND/MIP/RPL family.
            138 => {
                if !matches!(code, 0 | 1 | 255) {
                    self.event(E::Icmpv6UnknownCode);
                }
                false
            }
            139 | 140 => {
                self.icmp_code_max(code, 2);
                false
            }
            141..=142 | 144..=161 => false,
            100 | 101 | 200 | 201 => {
                self.event(E::Icmpv6ExperimentationType);
                false
            }
            5..=99 | 102..=126 | 162..=199 | 202..=254 => {
                self.event(E::Icmpv6UnassignedType);
                false
            }
            _ => {
                self.event(E::Icmpv6UnknownType);
                false
            }
        };
        if quote && msg.len() > icmp::HEADER_LEN {
            let inner = &msg[icmp::HEADER_LEN..];
            if inner.len() < vigil_wire::ipv6::HEADER_LEN {
                self.event(E::Icmpv6Ipv6TruncPkt);
            } else if inner[0] >> 4 != 6 {
                self.event(E::Icmpv6Ipv6UnknownVersion);
            }
        }
        if self.cfg.validate_checksums && !self.l4_checksum_ok(ip_proto::ICMPV6, msg) {
            self.p.checksum.l4_bad = true;
        }
        self.p.set_payload(at + icmp::HEADER_LEN, msg.len() - icmp::HEADER_LEN);
        (Next::Done, at, end)
    }

    fn l4_checksum_ok(&self, proto: u8, seg: &[u8]) -> bool {
        match self.p.ip.map(|ip| (ip.src, ip.dst)) {
            Some((IpAddr::V4(s), IpAddr::V4(d))) => checksum::verify_l4_v4(s.octets(), d.octets(), proto, seg),
            Some((IpAddr::V6(s), IpAddr::V6(d))) => checksum::verify_l4_v6(s.octets(), d.octets(), proto, seg),
            _ => true,
        }
    }
}
