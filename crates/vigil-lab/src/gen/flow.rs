//! The two ends of a flow and the packets between them: a TCP conversation
//! (handshake, data acknowledged by the other side, FIN close) or datagrams.

use vigil_wire::build::PacketBuilder;
use vigil_wire::tcp::flags::{ACK, FIN, PSH, RST, SYN};
use vigil_wire::{checksum, ip_proto};

/// One IP datagram to write, before fragmentation and encapsulation.
#[derive(Debug, Clone)]
pub struct Dgram {
    pub packet: PacketBuilder,
    /// The flow it belongs to (VXLAN's source port entropy).
    pub flow: u64,
    /// The marker it carries, as an index into `truth::MARKERS`.
    pub marker: Option<usize>,
}

/// An address of either family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Addr {
    V4([u8; 4]),
    V6([u8; 16]),
}

/// Client and server of a flow (same family).
#[derive(Debug, Clone, Copy)]
pub struct Ends {
    pub client: Addr,
    pub server: Addr,
    pub flow: u64,
}

impl Ends {
    /// A packet builder in one direction.
    pub fn ip(&self, to_server: bool) -> PacketBuilder {
        let (s, d) = if to_server { (self.client, self.server) } else { (self.server, self.client) };
        match (s, d) {
            (Addr::V4(s), Addr::V4(d)) => PacketBuilder::ipv4(s, d),
            (Addr::V6(s), Addr::V6(d)) => PacketBuilder::ipv6(s, d),
            _ => unreachable!("the ends of a flow share a family"),
        }
    }

    pub fn v6(&self) -> bool {
        matches!(self.client, Addr::V6(_))
    }

    /// IP header bytes of this family.
    pub fn ip_header(&self) -> usize {
        if self.v6() {
            40
        } else {
            20
        }
    }

    /// An ICMP (ICMPv6 over IPv6) echo message with its identifier and
    /// sequence number (the builder's own ICMP header fixes both at 1).
    pub fn icmp(&self, to_server: bool, kind: u8, ident: u16, seq: u16, data: &[u8]) -> PacketBuilder {
        let mut m = vec![kind, 0, 0, 0];
        m.extend_from_slice(&ident.to_be_bytes());
        m.extend_from_slice(&seq.to_be_bytes());
        m.extend_from_slice(data);
        let (s, d) = if to_server { (self.client, self.server) } else { (self.server, self.client) };
        let (proto, sum) = match (s, d) {
            (Addr::V6(s), Addr::V6(d)) => (ip_proto::ICMPV6, checksum::l4_v6(s, d, ip_proto::ICMPV6, &m)),
            _ => (ip_proto::ICMP, checksum::compute(&m)),
        };
        m[2..4].copy_from_slice(&sum.to_be_bytes());
        self.ip(to_server).protocol(proto).payload(&m)
    }

    pub fn dgram(&self, packet: PacketBuilder, marker: Option<usize>) -> Dgram {
        Dgram { packet, flow: self.flow, marker }
    }
}

/// A TCP conversation being written: sequence numbers advance with data,
/// every segment acknowledges what the other side sent.
pub struct TcpFlow<'a> {
    ends: Ends,
    sport: u16,
    dport: u16,
    /// Next sequence number of client and server.
    seq: [u32; 2],
    out: &'a mut Vec<Dgram>,
}

impl<'a> TcpFlow<'a> {
    pub fn new(ends: Ends, sport: u16, dport: u16, isn: [u32; 2], out: &'a mut Vec<Dgram>) -> Self {
        TcpFlow { ends, sport, dport, seq: isn, out }
    }

    fn segment(&mut self, to_server: bool, flags: u8, payload: &[u8], marker: Option<usize>) {
        let (me, peer) = if to_server { (0, 1) } else { (1, 0) };
        let (sp, dp) = if to_server { (self.sport, self.dport) } else { (self.dport, self.sport) };
        let ack = if flags & ACK != 0 { self.seq[peer] } else { 0 };
        let p = self.ends.ip(to_server).tcp(sp, dp).tcp_flags(flags).tcp_seq_ack(self.seq[me], ack).payload(payload);
        self.out.push(self.ends.dgram(p, marker));
        let used = payload.len() as u32 + u32::from(flags & (SYN | FIN) != 0);
        self.seq[me] = self.seq[me].wrapping_add(used);
    }

    /// SYN, SYN-ACK, ACK.
    pub fn handshake(&mut self) {
        self.segment(true, SYN, b"", None);
        self.segment(false, SYN | ACK, b"", None);
        self.segment(true, ACK, b"", None);
    }

    /// One data segment.
    pub fn send(&mut self, to_server: bool, payload: &[u8], marker: Option<usize>) {
        self.segment(to_server, PSH | ACK, payload, marker);
    }

    /// A bare acknowledgement.
    pub fn ack(&mut self, to_server: bool) {
        self.segment(to_server, ACK, b"", None);
    }

    /// The client closes: FIN, FIN, ACK.
    pub fn close(&mut self) {
        self.segment(true, FIN | ACK, b"", None);
        self.segment(false, FIN | ACK, b"", None);
        self.segment(true, ACK, b"", None);
    }

    /// A SYN probe and its answer: RST-ACK from a closed port, or SYN-ACK
    /// then the prober's RST from an open one (what nmap -sS leaves behind).
    pub fn probe(&mut self, open: bool) {
        self.segment(true, SYN, b"", None);
        if open {
            self.segment(false, SYN | ACK, b"", None);
            self.segment(true, RST, b"", None);
        } else {
            self.segment(false, RST | ACK, b"", None);
        }
    }
}
