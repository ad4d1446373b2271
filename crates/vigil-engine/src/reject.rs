//! The refusals `reject` rules send (Suricata's `rejectsrc`, `rejectdst`,
//! `rejectboth`): a TCP reset for TCP, an ICMP port unreachable for the
//! rest, addressed so the end host takes it as coming from its peer.
//!
//! A reset is only believed when its sequence number is exactly what the
//! receiver expects next (RFC 5961; Linux answers any other in-window reset
//! with a challenge ACK). The source expects the number it acknowledged; the
//! destination expects the refused segment's own first byte when the IPS
//! kept that segment from it, and the byte after it when it was delivered.

use std::net::IpAddr;
use vigil_decode::{Packet, Transport};
use vigil_detect::compile::RejectTo;
use vigil_wire::build::PacketBuilder;
use vigil_wire::tcp::flags::{ACK as TCP_ACK, FIN as TCP_FIN, RST as TCP_RST, SYN as TCP_SYN};
/// Bytes of the refused datagram an ICMPv4 error quotes: its header and the
/// first 8 bytes of what it carries (RFC 792), the part hosts match on.
const ICMP4_QUOTE_PAST_HEADER: usize = 8;
/// An ICMPv6 error quotes as much as fits in the minimum MTU (RFC 4443).
const ICMP6_MAX: usize = 1280 - 40 - 8;
const TTL: u8 = 64;

/// A datagram to send, and which end of the refused packet it goes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// Toward the refused packet's source (else its destination).
    pub to_src: bool,
    /// The whole IP datagram.
    pub ip: Vec<u8>,
}

/// The refusals for packet `p`; `delivered`: the packet went on to its
/// destination (IDS, or an inline verdict that let it pass).
pub fn responses(p: &Packet<'_>, to: RejectTo, delivered: bool) -> Vec<Response> {
    let mut out = Vec::new();
    // A reply inside a tunnel would need the tunnel rebuilt; a fragment has no
    // transport header to answer; an invalid packet has no peer to speak for.
    if p.tunnel.is_some() || p.fragment || p.invalid {
        return out;
    }
    let Some(ip) = p.ip else { return out };
    if to.to_src() {
        out.extend(one(p, ip.dst, ip.src, true, delivered));
    }
    if to.to_dst() {
        out.extend(one(p, ip.src, ip.dst, false, delivered));
    }
    out
}

/// One refusal from `from` to `to` (`to_src`: back to the packet's sender).
fn one(p: &Packet<'_>, from: IpAddr, to: IpAddr, to_src: bool, delivered: bool) -> Option<Response> {
    let base = match (from, to) {
        (IpAddr::V4(f), IpAddr::V4(t)) => PacketBuilder::ipv4(f.octets(), t.octets()),
        (IpAddr::V6(f), IpAddr::V6(t)) => PacketBuilder::ipv6(f.octets(), t.octets()),
        _ => return None,
    }
    .ttl(TTL);
    let ip = match p.transport {
        Transport::Tcp { sport, dport, flags, seq, ack, .. } => {
            // Never answer a reset with a reset.
            if flags & TCP_RST != 0 {
                return None;
            }
            let len = p.payload().len() as u32 + u32::from(flags & TCP_SYN != 0) + u32::from(flags & TCP_FIN != 0);
            let next = seq.wrapping_add(len);
            if to_src {
                // The sender expects what it acknowledged; a segment without
                // ACK (a SYN) gets sequence 0 and an acknowledgement of it.
                let s = if flags & TCP_ACK != 0 { ack } else { 0 };
                base.tcp(dport, sport).tcp_flags(TCP_RST | TCP_ACK).tcp_seq_ack(s, next).build_ip()
            } else {
                let s = if delivered { next } else { seq };
                base.tcp(sport, dport).tcp_flags(TCP_RST | TCP_ACK).tcp_seq_ack(s, ack).build_ip()
            }
        }
        // An ICMP error is never answered with one (RFC 1122); echo and the
        // like are, like UDP and the rest.
        Transport::Icmp { kind, .. } if is_icmp_error(p, kind) => return None,
        _ => {
            let start = p.ip.map_or(0, |i| i.offset as usize);
            let datagram = p.data.get(start..start + p.ip.map_or(0, |i| i.len as usize)).unwrap_or(&[]);
            match from {
                IpAddr::V4(_) => {
                    let ihl = datagram.first().map_or(20, |b| usize::from(b & 0x0f) * 4);
                    let quote = &datagram[..datagram.len().min(ihl + ICMP4_QUOTE_PAST_HEADER)];
                    // Destination unreachable, port unreachable.
                    base.icmp_error(3, 3).payload(quote).build_ip()
                }
                IpAddr::V6(_) => {
                    let quote = &datagram[..datagram.len().min(ICMP6_MAX)];
                    // Destination unreachable, port unreachable.
                    base.icmp_error(1, 4).payload(quote).build_ip()
                }
            }
        }
    };
    Some(Response { to_src, ip })
}

/// ICMPv4 types 3, 4, 5, 11, 12 and ICMPv6 types below 128 are errors.
fn is_icmp_error(p: &Packet<'_>, kind: u8) -> bool {
    match p.ip.map(|i| i.src) {
        Some(IpAddr::V6(_)) => kind < 128,
        _ => matches!(kind, 3 | 4 | 5 | 11 | 12),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vigil_decode::{DecodeConfig, Decoder};
    use vigil_types::{LinkType, Timestamp};

    const C4: [u8; 4] = [198, 18, 0, 1];
    const S4: [u8; 4] = [198, 19, 0, 2];

    fn decode(frame: &[u8], linktype: LinkType) -> Packet<'_> {
        Decoder::new(DecodeConfig { validate_checksums: true, ..DecodeConfig::default() }).decode(
            frame,
            Timestamp::default(),
            linktype,
            1,
        )
    }

    fn bad(p: &Packet<'_>) -> bool {
        p.checksum.ipv4_bad || p.checksum.l4_bad
    }

    fn tcp(p: &Packet<'_>) -> (u16, u16, u8, u32, u32) {
        match p.transport {
            Transport::Tcp { sport, dport, flags, seq, ack, .. } => (sport, dport, flags, seq, ack),
            t => panic!("not TCP: {t:?}"),
        }
    }

    #[test]
    fn resets_carry_the_sequence_each_end_expects() {
        let frame = PacketBuilder::ipv4(C4, S4)
            .tcp(40000, 80)
            .tcp_flags(TCP_ACK | 0x08)
            .tcp_seq_ack(1000, 5000)
            .payload(b"GET /etc/passwd HTTP/1.1\r\n\r\n")
            .build_ethernet();
        let p = decode(&frame, LinkType::Ethernet);
        let r = responses(&p, RejectTo::Both, false);
        assert_eq!(r.len(), 2);
        let back = decode(&r[0].ip, LinkType::Raw);
        assert!(r[0].to_src && !back.invalid && !bad(&back), "{back:?}");
        assert_eq!(back.ip.unwrap().src, IpAddr::from(S4));
        assert_eq!(back.ip.unwrap().dst, IpAddr::from(C4));
        // To the client: from the server's port, at the number the client acknowledged.
        assert_eq!(tcp(&back), (80, 40000, TCP_RST | TCP_ACK, 5000, 1000 + 28));
        let fwd = decode(&r[1].ip, LinkType::Raw);
        assert!(!r[1].to_src && !bad(&fwd));
        // To the server, which never got the dropped segment: at its first byte.
        assert_eq!(tcp(&fwd), (40000, 80, TCP_RST | TCP_ACK, 1000, 5000));
        // Delivered (IDS): the server expects the byte after it.
        let ids = responses(&p, RejectTo::Dst, true);
        assert_eq!(tcp(&decode(&ids[0].ip, LinkType::Raw)).3, 1000 + 28);
    }

    #[test]
    fn a_syn_is_refused_with_an_acknowledging_reset_and_a_reset_is_not_answered() {
        let syn = PacketBuilder::ipv4(C4, S4).tcp(40000, 22).tcp_flags(TCP_SYN).tcp_seq_ack(77, 0).build_ethernet();
        let r = responses(&decode(&syn, LinkType::Ethernet), RejectTo::Src, false);
        assert_eq!(tcp(&decode(&r[0].ip, LinkType::Raw)), (22, 40000, TCP_RST | TCP_ACK, 0, 78));
        let rst = PacketBuilder::ipv4(C4, S4).tcp(40000, 22).tcp_flags(TCP_RST).build_ethernet();
        assert!(responses(&decode(&rst, LinkType::Ethernet), RejectTo::Both, false).is_empty());
    }

    #[test]
    fn udp_gets_a_port_unreachable_quoting_the_datagram() {
        let frame = PacketBuilder::ipv4(C4, S4).udp(5353, 53).payload(&[0xab; 40]).build_ethernet();
        let p = decode(&frame, LinkType::Ethernet);
        let r = responses(&p, RejectTo::Src, false);
        let icmp = decode(&r[0].ip, LinkType::Raw);
        assert!(!bad(&icmp));
        assert!(matches!(icmp.transport, Transport::Icmp { kind: 3, code: 3, .. }), "{:?}", icmp.transport);
        // The quote: the refused datagram's IP header and its UDP header.
        assert_eq!(&r[0].ip[28..], &frame[14..14 + 28]);
        // ICMP errors are not answered.
        assert!(responses(&icmp, RejectTo::Both, false).is_empty());
    }

    #[test]
    fn ipv6_gets_icmpv6_and_tcp_resets_too() {
        let (c6, s6) = (
            [0x20, 1, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
            [0x20, 1, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2],
        );
        let udp = PacketBuilder::ipv6(c6, s6).udp(5353, 53).payload(b"q").build_ethernet();
        let r = responses(&decode(&udp, LinkType::Ethernet), RejectTo::Src, false);
        let icmp = decode(&r[0].ip, LinkType::Raw);
        assert!(!bad(&icmp));
        assert!(matches!(icmp.transport, Transport::Icmp { kind: 1, code: 4, .. }), "{:?}", icmp.transport);
        let seg = PacketBuilder::ipv6(c6, s6).tcp(1, 2).tcp_flags(TCP_ACK).tcp_seq_ack(9, 10).build_ethernet();
        let r = responses(&decode(&seg, LinkType::Ethernet), RejectTo::Src, false);
        assert_eq!(tcp(&decode(&r[0].ip, LinkType::Raw)), (2, 1, TCP_RST | TCP_ACK, 10, 9));
    }
}
