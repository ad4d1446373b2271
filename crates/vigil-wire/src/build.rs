//! Packet builders: write headers with correct lengths and checksums.
//!
//! Used by tests (hand-made fixtures), fuzzing and the traffic lab. Builders
//! allocate; nothing on the inspection path uses them.

use crate::bytes::{put16, put32};
use crate::{checksum, ethertype, ip_proto};

/// The network layer of a packet being built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ip {
    V4 { src: [u8; 4], dst: [u8; 4] },
    V6 { src: [u8; 16], dst: [u8; 16] },
}

/// The transport layer of a packet being built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum L4 {
    /// No transport header: the payload follows IP under this protocol number.
    None,
    Raw(u8),
    Tcp {
        sport: u16,
        dport: u16,
        seq: u32,
        ack: u32,
        flags: u8,
        window: u16,
    },
    Udp {
        sport: u16,
        dport: u16,
    },
    Icmp {
        kind: u8,
        code: u8,
        ident: u16,
        seq: u16,
    },
}

/// Builds one IP packet, then optionally wraps it in Ethernet.
#[derive(Debug, Clone)]
pub struct PacketBuilder {
    ip: Ip,
    l4: L4,
    ttl: u8,
    ident: u16,
    dont_fragment: bool,
    payload: Vec<u8>,
}

impl PacketBuilder {
    pub fn ipv4(src: [u8; 4], dst: [u8; 4]) -> Self {
        Self::new(Ip::V4 { src, dst })
    }

    pub fn ipv6(src: [u8; 16], dst: [u8; 16]) -> Self {
        Self::new(Ip::V6 { src, dst })
    }

    pub fn new(ip: Ip) -> Self {
        PacketBuilder { ip, l4: L4::None, ttl: 64, ident: 1, dont_fragment: false, payload: Vec::new() }
    }

    /// A TCP segment with only ACK set; change flags with [`PacketBuilder::tcp_flags`].
    pub fn tcp(mut self, sport: u16, dport: u16) -> Self {
        self.l4 = L4::Tcp { sport, dport, seq: 1, ack: 0, flags: crate::tcp::flags::ACK, window: 65535 };
        self
    }

    pub fn tcp_flags(mut self, f: u8) -> Self {
        if let L4::Tcp { ref mut flags, .. } = self.l4 {
            *flags = f;
        }
        self
    }

    pub fn tcp_seq_ack(mut self, s: u32, a: u32) -> Self {
        if let L4::Tcp { ref mut seq, ref mut ack, .. } = self.l4 {
            *seq = s;
            *ack = a;
        }
        self
    }

    pub fn udp(mut self, sport: u16, dport: u16) -> Self {
        self.l4 = L4::Udp { sport, dport };
        self
    }

    /// ICMPv4 over IPv4, ICMPv6 over IPv6.
    pub fn icmp(mut self, kind: u8, code: u8) -> Self {
        self.l4 = L4::Icmp { kind, code, ident: 1, seq: 1 };
        self
    }

    /// An ICMP error message (destination unreachable, ...): its second word
    /// is zero; the payload is the datagram it refers to.
    pub fn icmp_error(mut self, kind: u8, code: u8) -> Self {
        self.l4 = L4::Icmp { kind, code, ident: 0, seq: 0 };
        self
    }

    /// No transport header; the payload is carried under protocol `proto`.
    pub fn protocol(mut self, proto: u8) -> Self {
        self.l4 = L4::Raw(proto);
        self
    }

    pub fn ttl(mut self, ttl: u8) -> Self {
        self.ttl = ttl;
        self
    }

    pub fn ident(mut self, ident: u16) -> Self {
        self.ident = ident;
        self
    }

    pub fn dont_fragment(mut self, df: bool) -> Self {
        self.dont_fragment = df;
        self
    }

    pub fn payload(mut self, p: &[u8]) -> Self {
        self.payload = p.to_vec();
        self
    }

    fn proto_number(&self) -> u8 {
        match self.l4 {
            L4::None => ip_proto::NONE,
            L4::Raw(p) => p,
            L4::Tcp { .. } => ip_proto::TCP,
            L4::Udp { .. } => ip_proto::UDP,
            L4::Icmp { .. } => match self.ip {
                Ip::V4 { .. } => ip_proto::ICMP,
                Ip::V6 { .. } => ip_proto::ICMPV6,
            },
        }
    }

    /// The transport segment with its checksum filled in.
    fn segment(&self) -> Vec<u8> {
        let mut seg = match self.l4 {
            L4::None | L4::Raw(_) => Vec::new(),
            L4::Tcp { sport, dport, seq, ack, flags, window } => {
                let mut h = vec![0u8; 20];
                put16(&mut h, 0, sport);
                put16(&mut h, 2, dport);
                put32(&mut h, 4, seq);
                put32(&mut h, 8, ack);
                h[12] = 5 << 4;
                h[13] = flags;
                put16(&mut h, 14, window);
                h
            }
            L4::Udp { sport, dport } => {
                let mut h = vec![0u8; 8];
                put16(&mut h, 0, sport);
                put16(&mut h, 2, dport);
                put16(&mut h, 4, (8 + self.payload.len()) as u16);
                h
            }
            L4::Icmp { kind, code, ident, seq } => {
                let mut h = vec![0u8; 8];
                h[0] = kind;
                h[1] = code;
                put16(&mut h, 4, ident);
                put16(&mut h, 6, seq);
                h
            }
        };
        seg.extend_from_slice(&self.payload);
        let proto = self.proto_number();
        let at = match self.l4 {
            L4::Tcp { .. } => Some(16),
            L4::Udp { .. } | L4::Icmp { .. } => Some(if matches!(self.l4, L4::Udp { .. }) { 6 } else { 2 }),
            _ => None,
        };
        if let Some(at) = at {
            let sum = match (self.ip, self.l4) {
                (Ip::V4 { .. }, L4::Icmp { .. }) => checksum::compute(&seg),
                (Ip::V4 { src, dst }, _) => checksum::l4_v4(src, dst, proto, &seg),
                (Ip::V6 { src, dst }, _) => checksum::l4_v6(src, dst, proto, &seg),
            };
            // UDP sends an all-zero checksum as all ones (RFC 768).
            let sum = if sum == 0 && matches!(self.l4, L4::Udp { .. }) { 0xffff } else { sum };
            put16(&mut seg, at, sum);
        }
        seg
    }

    /// The IP packet: header, transport header, payload.
    pub fn build_ip(&self) -> Vec<u8> {
        let seg = self.segment();
        match self.ip {
            Ip::V4 { src, dst } => {
                let mut p = vec![0u8; 20];
                p[0] = 0x45;
                put16(&mut p, 2, (20 + seg.len()) as u16);
                put16(&mut p, 4, self.ident);
                if self.dont_fragment {
                    p[6] = 0x40;
                }
                p[8] = self.ttl;
                p[9] = self.proto_number();
                p[12..16].copy_from_slice(&src);
                p[16..20].copy_from_slice(&dst);
                let sum = checksum::compute(&p);
                put16(&mut p, 10, sum);
                p.extend_from_slice(&seg);
                p
            }
            Ip::V6 { src, dst } => {
                let mut p = vec![0u8; 40];
                p[0] = 0x60;
                put16(&mut p, 4, seg.len() as u16);
                p[6] = self.proto_number();
                p[7] = self.ttl;
                p[8..24].copy_from_slice(&src);
                p[24..40].copy_from_slice(&dst);
                p.extend_from_slice(&seg);
                p
            }
        }
    }

    /// The IP packet in an Ethernet II frame between two fixed test MACs.
    pub fn build_ethernet(&self) -> Vec<u8> {
        let et = match self.ip {
            Ip::V4 { .. } => ethertype::IPV4,
            Ip::V6 { .. } => ethertype::IPV6,
        };
        ethernet(TEST_DST_MAC, TEST_SRC_MAC, et, &self.build_ip())
    }
}

pub const TEST_SRC_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x01];
pub const TEST_DST_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x02];

/// An Ethernet II frame.
pub fn ethernet(dst: [u8; 6], src: [u8; 6], ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(14 + payload.len());
    f.extend_from_slice(&dst);
    f.extend_from_slice(&src);
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

/// Inserts 802.1Q tags (outermost first) after an Ethernet frame's MACs; the
/// first tag uses `tpid` (0x8100 or 0x88a8), inner ones 0x8100.
pub fn vlan_tag(frame: &[u8], tpid: u16, vids: &[u16]) -> Vec<u8> {
    let mut f = frame[..12].to_vec();
    let inner_type = &frame[12..14];
    for (i, vid) in vids.iter().enumerate() {
        let t = if i == 0 { tpid } else { ethertype::VLAN };
        f.extend_from_slice(&t.to_be_bytes());
        f.extend_from_slice(&(vid & 0x0fff).to_be_bytes());
    }
    f.extend_from_slice(inner_type);
    f.extend_from_slice(&frame[14..]);
    f
}

/// A GRE version 0 header with optional key and sequence, then the payload.
pub fn gre(protocol: u16, key: Option<u32>, seq: Option<u32>, payload: &[u8]) -> Vec<u8> {
    let mut flags = 0u8;
    if key.is_some() {
        flags |= crate::gre::FLAG_KEY;
    }
    if seq.is_some() {
        flags |= crate::gre::FLAG_SEQ;
    }
    let mut g = vec![flags, 0];
    g.extend_from_slice(&protocol.to_be_bytes());
    if let Some(k) = key {
        g.extend_from_slice(&k.to_be_bytes());
    }
    if let Some(s) = seq {
        g.extend_from_slice(&s.to_be_bytes());
    }
    g.extend_from_slice(payload);
    g
}

/// GRE (with sequence number, as ERSPAN requires) + ERSPAN type II + the mirrored frame.
pub fn erspan2(session: u16, vlan: u16, seq: u32, frame: &[u8]) -> Vec<u8> {
    let mut h = vec![0u8; crate::erspan::TYPE2_LEN];
    put16(&mut h, 0, 0x1000 | (vlan & 0x0fff));
    put16(&mut h, 2, session & 0x03ff);
    h.extend_from_slice(frame);
    gre(ethertype::ERSPAN_II, None, Some(seq), &h)
}

/// GRE + ERSPAN type III (no platform subheader) + the mirrored frame.
pub fn erspan3(session: u16, vlan: u16, seq: u32, timestamp: u32, frame: &[u8]) -> Vec<u8> {
    let mut h = vec![0u8; crate::erspan::TYPE3_LEN];
    put16(&mut h, 0, 0x2000 | (vlan & 0x0fff));
    put16(&mut h, 2, session & 0x03ff);
    put32(&mut h, 4, timestamp);
    h.extend_from_slice(frame);
    gre(ethertype::ERSPAN_III, None, Some(seq), &h)
}

/// A VXLAN header (I flag set) + the inner Ethernet frame: the payload of a UDP datagram to port 4789.
pub fn vxlan(vni: u32, frame: &[u8]) -> Vec<u8> {
    let mut h = vec![0x08, 0, 0, 0];
    h.extend_from_slice(&(vni << 8).to_be_bytes());
    h.extend_from_slice(frame);
    h
}

/// A Geneve header without options + the payload of EtherType `protocol`.
pub fn geneve(vni: u32, protocol: u16, payload: &[u8]) -> Vec<u8> {
    let mut h = vec![0, 0];
    h.extend_from_slice(&protocol.to_be_bytes());
    h.extend_from_slice(&(vni << 8).to_be_bytes());
    h.extend_from_slice(payload);
    h
}
