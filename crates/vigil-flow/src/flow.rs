//! One flow: who talks to whom, since when, how much, and in what state.

use crate::config::Timeouts;
use vigil_types::{Direction, FlowKey, PerDir, Timestamp};
use vigil_wire::tcp::flags as tcp;

/// A flow's state, as EVE `flow.state` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlowState {
    New,
    Established,
    Closed,
}

impl FlowState {
    pub const fn name(self) -> &'static str {
        match self {
            FlowState::New => "new",
            FlowState::Established => "established",
            FlowState::Closed => "closed",
        }
    }
}

/// Why a flow ended, as EVE `flow.reason` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndReason {
    /// No packet for longer than its state's timeout.
    Timeout,
    /// Evicted to make room when the memcap was reached.
    Forced,
    /// Still open when the capture ended.
    Shutdown,
    /// A new TCP session reused the tuple of a closed one.
    TcpReuse,
}

impl EndReason {
    pub const fn name(self) -> &'static str {
        match self {
            EndReason::Timeout => "timeout",
            EndReason::Forced => "forced",
            EndReason::Shutdown => "shutdown",
            EndReason::TcpReuse => "tcp_reuse",
        }
    }
}

/// Handshake and teardown bits seen so far (a stand-in for the stream
/// engine's TCP state machine, which will replace it).
mod hs {
    pub const SYN: u8 = 1;
    pub const SYN_ACK: u8 = 2;
    pub const FIN_TS: u8 = 4;
    pub const FIN_TC: u8 = 8;
}

/// A flow. `E` is the slot later stages fill (the stream engine's TCP
/// session with its per-direction reassembly state); it is created with
/// `E::default()` with the flow and handed back with it when the flow ends.
#[derive(Debug, Clone)]
pub struct Flow<E = ()> {
    /// Oriented client to server: the first packet's source is the client.
    pub key: FlowKey,
    /// The first packet's VLAN ids (EVE `vlan`), whether or not they are
    /// part of the key.
    pub vlans: [u16; vigil_types::FLOW_KEY_VLANS],
    pub nvlans: u8,
    /// Suricata's EVE `flow_id`.
    pub id: u64,
    pub start: Timestamp,
    /// Time of the latest packet.
    pub last: Timestamp,
    pub state: FlowState,
    pub pkts: PerDir<u64>,
    pub bytes: PerDir<u64>,
    /// TCP flags seen in each direction (OR of all of them).
    pub tcp_flags: PerDir<u8>,
    /// The lowest and highest IP TTL (hop limit) seen each way (EVE `netflow`).
    pub ttl: PerDir<Option<(u8, u8)>>,
    /// The Ethernet addresses seen, where flows keep them (EVE `ether`).
    pub macs: Option<Box<MacSets>>,
    /// ICMP type and code of the first message each way.
    pub icmp: PerDir<Option<(u8, u8)>>,
    /// ESP security parameter index.
    pub spi: Option<u32>,
    /// The sequence number of the client's first SYN: a SYN with it again
    /// is that SYN retransmitted (or replayed), not a new session.
    pub syn_seq: Option<u32>,
    /// Set by detection when an alert fired on the flow.
    pub alerted: bool,
    /// Set when the flow ends.
    pub end_reason: Option<EndReason>,
    /// The flow ended while the table was in emergency mode.
    pub emergency: bool,
    hs: u8,
    /// The IPS dropped the flow: its state no longer follows its packets
    /// (they are dropped before the session sees them, as in Suricata).
    pub frozen: bool,
    pub ext: E,
}

/// Addresses kept per side at most (a flow through a load balancer or a
/// mirror may show a few; more is noise).
pub const MAX_MACS: usize = 16;

/// The Ethernet addresses of a flow's client side and server side, in the
/// order first seen.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MacSets {
    pub src: Vec<[u8; 6]>,
    pub dst: Vec<[u8; 6]>,
}

impl<E: Default> Flow<E> {
    pub(crate) fn new(key: FlowKey, hash: u32, now: Timestamp) -> Self {
        Flow {
            key,
            vlans: [0; vigil_types::FLOW_KEY_VLANS],
            nvlans: 0,
            id: flow_id(now, hash),
            start: now,
            last: now,
            state: FlowState::New,
            pkts: PerDir::default(),
            bytes: PerDir::default(),
            tcp_flags: PerDir::default(),
            ttl: PerDir::default(),
            macs: None,
            icmp: PerDir::default(),
            spi: None,
            syn_seq: None,
            alerted: false,
            end_reason: None,
            emergency: false,
            hs: 0,
            frozen: false,
            ext: E::default(),
        }
    }
}

impl<E> Flow<E> {
    pub fn vlan_ids(&self) -> &[u16] {
        &self.vlans[..self.nvlans as usize]
    }

    /// Seconds between the first and the last packet (EVE `flow.age`).
    pub fn age(&self) -> i64 {
        self.last.secs() - self.start.secs()
    }

    /// The timeout of the flow's state, in seconds.
    pub fn timeout(&self, t: &Timeouts, emergency: bool) -> u32 {
        let p = t.for_proto(self.key.proto);
        match (self.state, emergency) {
            (FlowState::New, false) => p.new,
            (FlowState::Established, false) => p.established,
            (FlowState::Closed, false) => p.closed,
            (FlowState::New, true) => p.emergency_new,
            (FlowState::Established, true) => p.emergency_established,
            (FlowState::Closed, true) => p.emergency_closed,
        }
    }

    /// When the flow times out: its last packet's time plus its state's
    /// timeout (Suricata 8 compares full timestamps, not whole seconds).
    pub fn expires_at(&self, t: &Timeouts, emergency: bool) -> Timestamp {
        let ns = i64::from(self.timeout(t, emergency)) * 1_000_000_000;
        Timestamp::from_nanos(self.last.as_nanos().saturating_add(ns))
    }

    pub fn is_expired(&self, now: Timestamp, t: &Timeouts, emergency: bool) -> bool {
        now >= self.expires_at(t, emergency)
    }

    /// Turns the flow round: the first packet's destination was the client
    /// after all (a session picked up from the server's SYN/ACK). Counters
    /// and flags change sides with the endpoints; the id stays.
    pub fn reverse(&mut self) {
        fn swap<T>(d: &mut PerDir<T>) {
            std::mem::swap(&mut d.to_server, &mut d.to_client);
        }
        self.key = self.key.reversed();
        swap(&mut self.pkts);
        swap(&mut self.bytes);
        swap(&mut self.tcp_flags);
        swap(&mut self.ttl);
        if let Some(m) = self.macs.as_deref_mut() {
            std::mem::swap(&mut m.src, &mut m.dst);
        }
        swap(&mut self.icmp);
        // The handshake bits are the client's SYN and the server's SYN/ACK:
        // seen from the wrong side, they were not what they claimed.
        let fins = (self.hs & hs::FIN_TS != 0, self.hs & hs::FIN_TC != 0);
        self.hs = 0;
        if fins.0 {
            self.hs |= hs::FIN_TC;
        }
        if fins.1 {
            self.hs |= hs::FIN_TS;
        }
    }

    /// Keeps a packet's Ethernet source and destination, as the client's
    /// (`src`) and the server's (`dst`) side addresses.
    pub(crate) fn see_macs(&mut self, dir: Direction, (src, dst): ([u8; 6], [u8; 6])) {
        let m = self.macs.get_or_insert_with(Box::default);
        let (client, server) = if dir == Direction::ToServer { (src, dst) } else { (dst, src) };
        for (set, mac) in [(&mut m.src, client), (&mut m.dst, server)] {
            if !set.contains(&mac) && set.len() < MAX_MACS {
                set.push(mac);
            }
        }
    }

    /// Accounts one packet and advances the state.
    pub(crate) fn update(
        &mut self,
        dir: Direction,
        bytes: u64,
        now: Timestamp,
        tcp_flags: Option<u8>,
        icmp: Option<(u8, u8)>,
        ttl: Option<u8>,
    ) {
        *self.pkts.get_mut(dir) += 1;
        *self.bytes.get_mut(dir) += bytes;
        if let Some(t) = ttl {
            let seen = self.ttl.get_mut(dir);
            *seen = Some(seen.map_or((t, t), |(lo, hi)| (lo.min(t), hi.max(t))));
        }
        if now > self.last {
            self.last = now;
        }
        if let Some(ic) = icmp {
            self.icmp.get_mut(dir).get_or_insert(ic);
        }
        match tcp_flags {
            Some(f) => {
                *self.tcp_flags.get_mut(dir) |= f;
                self.tcp_state(dir, f);
            }
            None if self.key.proto != vigil_wire::ip_proto::TCP
                && self.state == FlowState::New
                && self.pkts.to_server > 0
                && self.pkts.to_client > 0 =>
            {
                self.state = FlowState::Established;
            }
            None => {}
        }
    }

    /// Handshake → established, both FINs or a RST → closed. Without a SYN
    /// from the client there is no session to speak of and the flow stays
    /// new, as in Suricata without midstream pickup.
    fn tcp_state(&mut self, dir: Direction, f: u8) {
        if self.frozen {
            return;
        }
        let (syn, ack, fin, rst) = (f & tcp::SYN != 0, f & tcp::ACK != 0, f & tcp::FIN != 0, f & tcp::RST != 0);
        match dir {
            Direction::ToServer if syn && !ack => self.hs |= hs::SYN,
            Direction::ToClient if syn && ack && self.hs & hs::SYN != 0 => self.hs |= hs::SYN_ACK,
            Direction::ToServer if ack && !syn && self.hs & hs::SYN_ACK != 0 && self.state == FlowState::New => {
                self.state = FlowState::Established
            }
            _ => {}
        }
        if self.hs & hs::SYN == 0 || self.state == FlowState::Closed {
            return;
        }
        if rst {
            self.state = FlowState::Closed;
            return;
        }
        if fin {
            self.hs |= if dir == Direction::ToServer { hs::FIN_TS } else { hs::FIN_TC };
            if self.hs & (hs::FIN_TS | hs::FIN_TC) == hs::FIN_TS | hs::FIN_TC {
                self.state = FlowState::Closed;
            } else if self.hs & hs::SYN_ACK != 0 {
                // FIN_WAIT/CLOSE_WAIT are still established for the flow.
                self.state = FlowState::Established;
            }
        }
    }
}

/// The hash `flow_id` embeds: FNV-1a over the key, with fixed constants, so
/// the same capture gives the same ids on every run (the table's own hash
/// is randomly seeded, against hash flooding, and must not leak into output).
pub(crate) fn id_hash(key: &FlowKey) -> u32 {
    struct Fnv(u64);
    impl std::hash::Hasher for Fnv {
        fn finish(&self) -> u64 {
            self.0
        }
        fn write(&mut self, bytes: &[u8]) {
            for &b in bytes {
                self.0 = (self.0 ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
    }
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    std::hash::Hash::hash(key, &mut h);
    let v = std::hash::Hasher::finish(&h);
    (v ^ (v >> 32)) as u32
}

/// Suricata's `flow_id`: 16 bits of the start second, 16 bits of its
/// microseconds and the 32-bit flow hash, kept to 51 bits because JSON
/// readers lose precision above 2^53.
pub fn flow_id(start: Timestamp, hash: u32) -> u64 {
    let secs = (start.secs() as u64) & 0xffff;
    let usecs = u64::from(start.subsec_micros()) & 0xffff;
    (secs << 48 | usecs << 32 | u64::from(hash)) & 0x7_ffff_ffff_ffff
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> FlowKey {
        FlowKey::new("10.0.0.1".parse().unwrap(), 1000, "10.0.0.2".parse().unwrap(), 80, 6)
    }

    #[test]
    fn macs_are_kept_by_side_and_follow_a_reversal() {
        let mut f: Flow = Flow::new(key(), 1, Timestamp::from_micros(0, 0));
        let (a, b, c) = ([1; 6], [2; 6], [3; 6]);
        f.see_macs(Direction::ToServer, (a, b));
        f.see_macs(Direction::ToClient, (b, a));
        f.see_macs(Direction::ToClient, (c, a));
        let m = f.macs.as_deref().unwrap();
        assert_eq!((m.src.clone(), m.dst.clone()), (vec![a], vec![b, c]));
        f.reverse();
        assert_eq!(f.macs.as_deref().unwrap().src, vec![b, c]);
        for i in 0..40u8 {
            f.see_macs(Direction::ToServer, ([i; 6], a));
        }
        assert_eq!(f.macs.as_deref().unwrap().src.len(), MAX_MACS, "bounded");
    }

    #[test]
    fn handshake_then_both_fins() {
        let mut f: Flow = Flow::new(key(), 7, Timestamp::from_micros(100, 0));
        let t = Timestamp::from_micros(100, 0);
        f.update(Direction::ToServer, 60, t, Some(tcp::SYN), None, None);
        assert_eq!(f.state, FlowState::New);
        f.update(Direction::ToClient, 60, t, Some(tcp::SYN | tcp::ACK), None, None);
        f.update(Direction::ToServer, 60, t, Some(tcp::ACK), None, None);
        assert_eq!(f.state, FlowState::Established);
        f.update(Direction::ToServer, 60, t, Some(tcp::FIN | tcp::ACK), None, None);
        assert_eq!(f.state, FlowState::Established);
        f.update(Direction::ToClient, 60, t, Some(tcp::FIN | tcp::ACK), None, None);
        assert_eq!(f.state, FlowState::Closed);
        assert_eq!(f.tcp_flags.to_server, tcp::SYN | tcp::ACK | tcp::FIN);
        assert_eq!((f.pkts.to_server, f.pkts.to_client, f.bytes.to_server), (3, 2, 180));
    }

    #[test]
    fn rst_closes_and_midstream_stays_new() {
        let t = Timestamp::from_micros(5, 0);
        let mut f: Flow = Flow::new(key(), 7, t);
        f.update(Direction::ToServer, 60, t, Some(tcp::SYN), None, None);
        f.update(Direction::ToClient, 60, t, Some(tcp::RST | tcp::ACK), None, None);
        assert_eq!(f.state, FlowState::Closed);
        let mut g: Flow = Flow::new(key(), 7, t);
        g.update(Direction::ToServer, 60, t, Some(tcp::ACK), None, None);
        g.update(Direction::ToClient, 60, t, Some(tcp::ACK), None, None);
        g.update(Direction::ToClient, 60, t, Some(tcp::RST), None, None);
        assert_eq!(g.state, FlowState::New);
    }

    #[test]
    fn reversing_swaps_the_sides() {
        let t = Timestamp::from_micros(5, 0);
        let mut f: Flow = Flow::new(key(), 7, t);
        // The server's SYN/ACK came first and was taken for the client's packet.
        f.update(Direction::ToServer, 60, t, Some(tcp::SYN | tcp::ACK), None, None);
        let id = f.id;
        f.reverse();
        assert_eq!((f.key.src_ip(), f.key.sport, f.key.dport), ("10.0.0.2".parse().unwrap(), 80, 1000));
        assert_eq!((f.pkts.to_server, f.pkts.to_client, f.bytes.to_client), (0, 1, 60));
        assert_eq!((f.tcp_flags.to_server, f.tcp_flags.to_client), (0, tcp::SYN | tcp::ACK));
        assert_eq!((f.id, f.key, f.state), (id, key(), FlowState::New), "the same flow, keyed alike");
    }

    #[test]
    fn udp_established_when_both_sides_spoke() {
        let t = Timestamp::from_micros(5, 0);
        let udp = FlowKey::new("10.0.0.1".parse().unwrap(), 1000, "10.0.0.2".parse().unwrap(), 53, 17);
        let mut f: Flow = Flow::new(udp, 7, t);
        f.update(Direction::ToServer, 60, t, None, None, None);
        assert_eq!(f.state, FlowState::New);
        f.update(Direction::ToClient, 60, t, None, None, None);
        assert_eq!(f.state, FlowState::Established);
    }

    #[test]
    fn timeouts_by_state_and_seconds() {
        let t = Timeouts::default();
        let f: Flow = Flow::new(key(), 7, Timestamp::from_micros(100, 999_999));
        assert_eq!(f.timeout(&t, false), 60);
        assert_eq!(f.timeout(&t, true), 5);
        assert!(!f.is_expired(Timestamp::from_micros(160, 999_998), &t, false));
        assert!(f.is_expired(Timestamp::from_micros(160, 999_999), &t, false));
    }

    #[test]
    fn flow_id_layout() {
        let id = flow_id(Timestamp::from_micros(0x1_2345, 0x6789), 0xdead_beef);
        assert_eq!(id, (0x2345u64 << 48 | 0x6789 << 32 | 0xdead_beef) & 0x7_ffff_ffff_ffff);
        assert!(id < 1 << 51);
    }
}
