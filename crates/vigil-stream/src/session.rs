//! One TCP session: the handshake and teardown state machine, each
//! direction's sequence space mapped to stream offsets, acknowledgements,
//! and the reassembly of both directions.

use crate::config::StreamConfig;
use crate::counters::StreamCounters;
use crate::events::StreamEvent;
use crate::policy::Policy;
use crate::reassembly::Reassembly;
use std::net::IpAddr;
use vigil_types::{Direction, PerDir};

use flags::*;
/// TCP flag bits.
pub use vigil_wire::tcp::flags;

/// Rough bytes one session costs against `stream.memcap`.
pub const SESSION_COST: u64 = std::mem::size_of::<TcpSession>() as u64;

/// A TCP segment as the stream engine needs it.
#[derive(Debug, Clone, Copy)]
pub struct Segment<'a> {
    pub dir: Direction,
    pub flags: u8,
    pub seq: u32,
    pub ack: u32,
    pub payload: &'a [u8],
    /// The receiver of this segment, whose OS decides overlaps.
    pub dst: IpAddr,
    /// The timestamp option's (TSval, TSecr), when the segment has one.
    pub ts: Option<(u32, u32)>,
    /// The segment carries the TCP Fast Open option: a SYN's data is
    /// then the stream's first bytes (without it, a receiver ignores them).
    pub tfo: bool,
    /// The urgent pointer, when the URG flag is set.
    pub urg: Option<u16>,
}

impl<'a> Segment<'a> {
    /// The segment a decoded packet carries, travelling `dir` in its flow;
    /// `None` for anything but TCP over IP.
    pub fn from_packet(p: &vigil_decode::Packet<'a>, dir: Direction) -> Option<Segment<'a>> {
        let vigil_decode::Transport::Tcp { flags, seq, ack, .. } = p.transport else { return None };
        let (ts, tfo, urg) = options(p);
        let urg = urg.filter(|_| flags & vigil_wire::tcp::flags::URG != 0);
        Some(Segment { dir, flags, seq, ack, payload: p.payload(), dst: p.ip?.dst, ts, tfo, urg })
    }
}

/// The timestamp option of the packet's (innermost) TCP header, whether it
/// has the Fast Open option, and its urgent pointer.
fn options(p: &vigil_decode::Packet<'_>) -> (Option<(u32, u32)>, bool, Option<u16>) {
    use vigil_wire::tcp::{option_kind, Tcp, TcpOption};
    let Some(l) = p.layers().iter().rev().find(|l| l.kind == vigil_decode::LayerKind::Tcp) else {
        return (None, false, None);
    };
    let Some(h) = p.data.get(l.offset as usize..).and_then(|d| Tcp::new_checked(d).ok()) else {
        return (None, false, None);
    };
    let (mut ts, mut tfo) = (None, false);
    for o in h.options() {
        match o {
            TcpOption::Tlv { kind: option_kind::TIMESTAMP, data: &[a, b, c, d, e, f, g, h] } => {
                ts = Some((u32::from_be_bytes([a, b, c, d]), u32::from_be_bytes([e, f, g, h])));
            }
            TcpOption::Tlv { kind: option_kind::TFO, .. } => tfo = true,
            // The experimental form used before kind 34 was assigned (RFC 7413, section 4.1.1).
            TcpOption::Tlv { kind: 253 | 254, data: [0xf9, 0x89, ..] } => tfo = true,
            _ => {}
        }
    }
    (ts, tfo, Some(h.urgent_ptr()))
}

/// What a segment's urgent data does to what it puts in the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum UrgentCut {
    /// Nothing: no urgent data, or the `inline` policy.
    None,
    /// The byte at this index of the payload is taken out.
    Remove(usize),
    /// The byte at this index is left out as a hole.
    Hole(usize),
    /// The segment's data is left out (`drop`, or `gap` past its data).
    Skip { drop: bool },
}

/// The cut the urgent pointer `ptr` of a segment with `len` bytes asks for
/// under `cfg`: the urgent byte is the one before the pointer; a pointer
/// past the data (or 0) falls to the OOB limit policy.
fn urgent_cut(cfg: &crate::StreamConfig, ptr: u16, len: usize) -> UrgentCut {
    use crate::UrgentPolicy::*;
    if cfg.urgent == Inline {
        return UrgentCut::None;
    }
    let within = ptr >= 1 && usize::from(ptr) <= len;
    match (cfg.urgent, within) {
        (Drop, _) => UrgentCut::Skip { drop: true },
        (Oob, true) => UrgentCut::Remove(usize::from(ptr) - 1),
        (Gap, true) => UrgentCut::Hole(usize::from(ptr) - 1),
        (_, _) => match cfg.urgent_oob_limit {
            Inline | Oob => UrgentCut::None,
            Drop => UrgentCut::Skip { drop: true },
            Gap => UrgentCut::Skip { drop: false },
        },
    }
}

/// Session states, as EVE `tcp.state` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TcpState {
    SynSent,
    SynRecv,
    Established,
    FinWait1,
    FinWait2,
    Closing,
    CloseWait,
    LastAck,
    TimeWait,
    Closed,
}

impl TcpState {
    pub const fn name(self) -> &'static str {
        match self {
            TcpState::SynSent => "syn_sent",
            TcpState::SynRecv => "syn_recv",
            TcpState::Established => "established",
            TcpState::FinWait1 => "fin_wait1",
            TcpState::FinWait2 => "fin_wait2",
            TcpState::Closing => "closing",
            TcpState::CloseWait => "close_wait",
            TcpState::LastAck => "last_ack",
            TcpState::TimeWait => "time_wait",
            TcpState::Closed => "closed",
        }
    }
}

/// One direction: the sender's sequence space and what the receiver kept.
#[derive(Debug, Clone, Default)]
pub struct TcpStream {
    /// Sequence number of stream offset 0 (the first byte after the SYN).
    base_seq: u32,
    /// A recent (sequence, offset) pair that offsets are computed from,
    /// so streams longer than 4 GiB keep counting.
    anchor: (u32, u64),
    known: bool,
    /// End of the highest data seen.
    pub seen_end: u64,
    /// Offset acknowledged by the receiver.
    pub acked: u64,
    /// Whether the receiver's acknowledgements are seen at all (both
    /// directions of the session are on the wire).
    pub acks_seen: bool,
    /// The sender's FIN, as an offset.
    pub fin: Option<u64>,
    pub reassembly: Reassembly,
    /// Raw (content rule) inspection has covered everything below this.
    pub raw_progress: u64,
    /// The application-layer parser has consumed everything below this.
    pub app_progress: u64,
    /// `stream.reassembly.depth` was reached.
    pub depth_reached: bool,
    /// The application layer saw a record of this direction end by this
    /// offset: raw inspection reaching it does not wait for a chunk of bytes
    /// (Suricata's trigger for raw reassembly). Cleared once inspection
    /// covers it.
    pub raw_trigger: Option<u64>,
    /// A hole the receiver acknowledged was skipped (EVE flow `ts_gap`/`tc_gap`).
    pub gap: bool,
    /// The sender's latest timestamp (TSval) accepted, for PAWS.
    pub last_ts: Option<u32>,
}

impl TcpStream {
    fn start(&mut self, isn: u32) {
        self.base_seq = isn.wrapping_add(1);
        self.anchor = (self.base_seq, 0);
        self.known = true;
    }

    /// Midstream: the first byte seen becomes offset 0.
    fn start_at(&mut self, seq: u32) {
        self.base_seq = seq;
        self.anchor = (seq, 0);
        self.known = true;
    }

    /// The stream offset of `seq` (negative: before the stream's start).
    pub fn offset(&self, seq: u32) -> i64 {
        let diff = seq.wrapping_sub(self.anchor.0) as i32 as i64;
        self.anchor.1 as i64 + diff
    }

    /// `seq` stands for stream offset `off` from now on, when that is
    /// further on (or as far, for a later `seq`: an urgent byte taken out
    /// of the stream left the offset where it was).
    fn advance_anchor(&mut self, seq: u32, off: u64) {
        let later = (seq.wrapping_sub(self.anchor.0) as i32) > 0;
        if off > self.anchor.1 || (off == self.anchor.1 && later) {
            self.anchor = (seq, off);
        }
    }
}

/// What handling one segment did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Handled {
    /// The payload went into reassembly (detection then inspects the stream,
    /// not the packet, for stream rules).
    pub stream_added: bool,
    /// The urgent policy (or its OOB limit policy) says to drop the packet
    /// (an IPS does; its data was left out of the stream).
    pub urgent_drop: bool,
}

/// A TCP session.
#[derive(Debug, Clone)]
pub struct TcpSession {
    pub state: TcpState,
    pub dirs: PerDir<TcpStream>,
    /// Seen midstream (no handshake).
    pub midstream: bool,
    /// Only one direction is on the wire.
    pub async_oneside: bool,
    /// A valid RST was seen.
    pub reset: bool,
    /// Who sent that RST, the state before it, and its offset in the
    /// sender's stream: if the sender goes on, the RST was not its own.
    reset_by: Option<(Direction, TcpState, i64)>,
    /// The application layer reads this session's stream: data is kept
    /// until it has consumed it.
    pub app_enabled: bool,
    /// A split handshake: the server answered the client's SYN with a SYN
    /// of its own, and the client sends the SYN/ACK.
    pub four_whs: bool,
    /// The client's SYN carried a timestamp option: its TSval. Replies
    /// during the handshake must echo it.
    pub client_ts: Option<u32>,
    /// Both ends use timestamps (the handshake had them both ways, or a
    /// session picked up mid-stream had one): PAWS applies (RFC 7323).
    pub timestamps: bool,
    /// The reassembly depth of this session when its application protocol
    /// has one of its own (`app-layer.protocols.<name>.stream-depth`; 0:
    /// all), else `stream.reassembly.depth`.
    pub depth: Option<u64>,
}

/// What a session ended with, as EVE flow records describe it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionSummary {
    pub state: TcpState,
    /// Per direction: a hole the receiver acknowledged was skipped.
    pub gap: PerDir<bool>,
    /// Per direction: the most disjoint regions of data held at once.
    pub max_regions: PerDir<u32>,
}

/// The per-worker side of the stream engine: configuration, memory in use,
/// counters.
#[derive(Debug, Clone, Default)]
pub struct StreamCtx {
    pub cfg: StreamConfig,
    pub counters: StreamCounters,
    /// Bytes of session state in use (`stream.memcap`).
    pub ssn_memuse: u64,
    /// Bytes of segment data held (`stream.reassembly.memcap`).
    pub reassembly_memuse: u64,
    /// QA simulation (Suricata's `--simulate-packet-tcp-*-memcap`): the
    /// packet in hand finds the session memcap, or the reassembly memcap,
    /// reached. The caller sets them around one packet.
    pub simulate_ssn_memcap: bool,
    pub simulate_reassembly_memcap: bool,
}

impl StreamCtx {
    pub fn new(cfg: StreamConfig) -> Self {
        StreamCtx { cfg, ..Default::default() }
    }

    /// Whether `seg` would start a session from the server's side: a
    /// SYN/ACK picked up with `midstream` or `async-oneside`. Its sender is
    /// the server, so a flow that took it for the client's must be turned
    /// round (as Suricata does) before [`StreamCtx::start`].
    pub fn starts_from_server(&self, seg: &Segment<'_>) -> bool {
        seg.flags & (SYN | ACK | RST) == SYN | ACK && (self.cfg.midstream || self.cfg.async_oneside)
    }

    /// Starts a session from a segment of a flow that has none: a SYN, with
    /// `midstream` any segment, with `async-oneside` a SYN/ACK. `None`: the
    /// segment starts nothing.
    pub fn start(&mut self, seg: &Segment<'_>) -> Option<TcpSession> {
        self.count_flags(seg.flags);
        let syn_only = seg.flags & (SYN | ACK | RST) == SYN;
        let synack = self.starts_from_server(seg);
        let midstream = !syn_only && (synack || self.cfg.midstream && seg.flags & RST == 0);
        if !syn_only && !midstream {
            return None;
        }
        if self.ssn_memuse + SESSION_COST > self.cfg.memcap || self.simulate_ssn_memcap {
            self.counters.ssn_memcap_drop += 1;
            return None;
        }
        self.ssn_memuse += SESSION_COST;
        self.counters.sessions += 1;
        self.counters.active_sessions += 1;
        let mut ssn = TcpSession {
            state: TcpState::SynSent,
            dirs: PerDir::default(),
            midstream,
            async_oneside: false,
            reset: false,
            reset_by: None,
            app_enabled: false,
            four_whs: false,
            client_ts: None,
            timestamps: false,
            depth: None,
        };
        let (me, peer) = split(&mut ssn.dirs, seg.dir);
        if syn_only {
            // A SYN means a peer that acknowledges: data (a Fast Open SYN's)
            // waits for it, unless the session turns out one-sided.
            me.acks_seen = true;
            peer.acks_seen = true;
            me.start(seg.seq);
            ssn.client_ts = seg.ts.map(|(val, _)| val);
            me.last_ts = ssn.client_ts;
            if seg.tfo && !seg.payload.is_empty() {
                // TCP Fast Open: the SYN's data is the stream's first bytes.
                let policy = self.cfg.policies.lookup(seg.dst);
                let i = me.reassembly.insert(0, seg.payload, policy, self.cfg.depth, budget(self));
                self.reassembly_memuse += i.added as u64;
                me.seen_end = seg.payload.len() as u64;
                me.anchor = (me.base_seq.wrapping_add(seg.payload.len() as u32), me.seen_end);
            }
        } else {
            self.counters.midstream_pickups += 1;
            ssn.timestamps = seg.ts.is_some();
            me.last_ts = seg.ts.map(|(val, _)| val);
            ssn.state = TcpState::Established;
            if seg.flags & SYN != 0 {
                // A SYN/ACK: the SYN's sender is the server, and the
                // handshake is still to be completed.
                ssn.state = TcpState::SynRecv;
                ssn.async_oneside = self.cfg.async_oneside;
                me.start(seg.seq);
                peer.start_at(seg.ack);
            } else {
                me.start_at(seg.seq);
                if seg.flags & ACK != 0 {
                    peer.start_at(seg.ack);
                }
            }
        }
        Some(ssn)
    }

    fn count_flags(&mut self, f: u8) {
        if f & (SYN | ACK) == SYN {
            self.counters.syn += 1;
        } else if f & (SYN | ACK) == SYN | ACK {
            self.counters.synack += 1;
        }
        if f & RST != 0 {
            self.counters.rst += 1;
        }
        if f & URG != 0 {
            self.counters.urg += 1;
        }
    }

    /// Frees a session's memory (its flow ended).
    pub fn end(&mut self, ssn: &mut TcpSession) {
        for d in [Direction::ToServer, Direction::ToClient] {
            self.reassembly_memuse -= ssn.dirs.get_mut(d).reassembly.clear() as u64;
        }
        self.ssn_memuse = self.ssn_memuse.saturating_sub(SESSION_COST);
        self.counters.active_sessions = self.counters.active_sessions.saturating_sub(1);
    }
}

fn split(dirs: &mut PerDir<TcpStream>, dir: Direction) -> (&mut TcpStream, &mut TcpStream) {
    match dir {
        Direction::ToServer => (&mut dirs.to_server, &mut dirs.to_client),
        Direction::ToClient => (&mut dirs.to_client, &mut dirs.to_server),
    }
}

/// Segments this far beyond what the sender has sent so far are not
/// believed: beyond any window a receiver would accept.
const MAX_AHEAD: u64 = 1 << 30;

impl TcpSession {
    /// Turns the session round before its first data: it was picked up
    /// mid-stream and that data shows the side taken for the client is the
    /// server (it answers first). Each direction's stream keeps its sender
    /// and receiver, so its state simply changes sides.
    pub fn reverse(&mut self) {
        std::mem::swap(&mut self.dirs.to_server, &mut self.dirs.to_client);
        if let Some((dir, _, _)) = self.reset_by.as_mut() {
            *dir = dir.flip();
        }
    }

    /// Established, and neither data nor a FIN seen either way yet: the
    /// session can still be turned round without its state changing sides.
    pub fn untouched(&self) -> bool {
        let (c, s) = (&self.dirs.to_server, &self.dirs.to_client);
        self.state == TcpState::Established && c.seen_end == 0 && s.seen_end == 0 && c.fin.is_none() && s.fin.is_none()
    }

    /// Handles one segment of the session (the one that started it included:
    /// call this for every segment). Anomalies go to `event`.
    pub fn handle(&mut self, ctx: &mut StreamCtx, seg: &Segment<'_>, event: &mut dyn FnMut(StreamEvent)) -> Handled {
        let mut out = Handled::default();
        let starting_syn = self.state == TcpState::SynSent
            && seg.dir == Direction::ToServer
            && seg.flags & (SYN | ACK) == SYN
            && self.dirs.get(seg.dir).offset(seg.seq) == -1;
        if starting_syn {
            // Counted by `start`, which also put its data (TCP Fast Open)
            // into the stream.
            out.stream_added = seg.tfo && !seg.payload.is_empty();
        } else {
            ctx.count_flags(seg.flags);
        }
        if self.reset {
            match self.reset_by {
                // The reset's sender goes on sending data from where the
                // reset was: the reset came from the path (Suricata's
                // suspected injection), and the receiver, which took the
                // data, is followed on. (An ACK alone may be one reordered
                // behind the reset.)
                Some((by, before, at))
                    if by == seg.dir
                        && seg.flags & RST == 0
                        && !seg.payload.is_empty()
                        && self.dirs.get(seg.dir).offset(seg.seq) >= at =>
                {
                    event(StreamEvent::SuspectedRstInject);
                    self.reset = false;
                    self.reset_by = None;
                    self.state = before;
                }
                _ => {
                    if !seg.payload.is_empty() {
                        event(StreamEvent::DataAfterRst);
                    }
                    return out;
                }
            }
        }
        match self.state {
            TcpState::SynSent if starting_syn => {}
            TcpState::SynSent => self.on_syn_sent(ctx, seg, event),
            TcpState::SynRecv => {
                if seg.flags & SYN != 0 {
                    return out;
                }
                // A split handshake ends with the server's ACK; a session
                // picked up from its SYN/ACK with whichever side speaks
                // next (the client's ACK may never be seen).
                let completes = seg.dir == Direction::ToServer || self.four_whs || self.midstream;
                if completes && seg.flags & ACK != 0 {
                    self.state = TcpState::Established;
                } else if seg.dir == Direction::ToClient && seg.flags & ACK != 0 && seg.payload.is_empty() {
                    event(StreamEvent::AckInWrongDir);
                }
            }
            _ => {}
        }
        if self.state == TcpState::SynSent || (seg.flags & SYN != 0 && !self.midstream) {
            return out;
        }
        if !self.paws_ok(ctx, seg) {
            // A segment the receiver would discard (RFC 7323 PAWS): a
            // reset or data carrying it would fool an IDS that took it.
            event(StreamEvent::PktInvalidTimestamp);
            return out;
        }
        if seg.flags & RST != 0 {
            return self.on_rst(seg, event, out);
        }
        // The acknowledgement covers the other direction's data.
        if seg.flags & ACK != 0 {
            let peer = self.dirs.get_mut(seg.dir.flip());
            if peer.known {
                let off = peer.offset(seg.ack);
                if off > peer.acked as i64 && (off as u64) <= peer.seen_end + 1 + u64::from(peer.fin.is_some()) {
                    peer.acked = off as u64;
                }
                peer.acks_seen = true;
            }
        }
        let me = self.dirs.get_mut(seg.dir);
        if !me.known {
            me.start_at(seg.seq);
        }
        let off = me.offset(seg.seq);
        let new_fin = seg.flags & FIN != 0 && me.fin.is_none();
        let len = seg.payload.len();
        // The stream's length after this segment: an urgent byte taken out shortens it.
        let mut stream_len = len;
        if len > 0 {
            let cut = seg.urg.map_or(UrgentCut::None, |ptr| urgent_cut(&ctx.cfg, ptr, len));
            let end = off + len as i64;
            out.stream_added = match cut {
                UrgentCut::None => self.add_data(ctx, seg, seg.payload, off, end, event),
                UrgentCut::Remove(i) => {
                    ctx.counters.urgent_oob_data += 1;
                    stream_len -= 1;
                    if len == 1 {
                        // Nothing but the urgent byte: the stream's place moves on without it.
                        let me = self.dirs.get_mut(seg.dir);
                        if off >= 0 {
                            me.advance_anchor(seg.seq.wrapping_add(1), off as u64);
                        }
                        false
                    } else {
                        let mut data = seg.payload.to_vec();
                        data.remove(i);
                        self.add_data(ctx, seg, &data, off, end - 1, event)
                    }
                }
                UrgentCut::Hole(i) => {
                    ctx.counters.urgent_oob_data += 1;
                    let a = i > 0 && self.add_data(ctx, seg, &seg.payload[..i], off, end, event);
                    let rest = &seg.payload[i + 1..];
                    let b = !rest.is_empty() && self.add_data(ctx, seg, rest, off + i as i64 + 1, end, event);
                    a || b
                }
                UrgentCut::Skip { drop } => {
                    if seg.urg.is_some_and(|p| p == 0 || usize::from(p) > len) {
                        ctx.counters.urgent_oob_limit_reached += 1;
                    }
                    out.urgent_drop = drop;
                    false
                }
            };
        }
        if seg.flags & FIN != 0 {
            self.on_fin(off, stream_len, seg.dir);
        }
        self.advance_close(seg, off, new_fin);
        out
    }

    fn on_syn_sent(&mut self, ctx: &mut StreamCtx, seg: &Segment<'_>, event: &mut dyn FnMut(StreamEvent)) {
        if !self.reply_timestamp_valid(seg) {
            // A reply no real server would send (an evasion: the IDS would
            // take its RST or FIN, the client drops it): ignored.
            event(StreamEvent::PktInvalidTimestamp);
            return;
        }
        let f = seg.flags & (SYN | ACK | RST);
        if seg.dir == Direction::ToClient && f & RST != 0 {
            // The server refuses the connection: a reset answering the SYN
            // closes the session (the flow too, so a new SYN on the tuple
            // starts afresh). One that does not answer it is not believed.
            if self.dirs.to_server.offset(seg.ack) == 0 {
                self.reset = true;
                self.state = TcpState::Closed;
            }
            return;
        }
        if seg.dir == Direction::ToClient && f == SYN | ACK {
            let client = &mut self.dirs.to_server;
            let acked = client.offset(seg.ack);
            // With TCP Fast Open the SYN/ACK may acknowledge the SYN's data too.
            if acked != 0 && acked != client.seen_end as i64 {
                event(StreamEvent::SynAckWithWrongAck);
                return;
            }
            client.acked = acked as u64;
            self.dirs.to_client.start(seg.seq);
            self.timestamps = self.client_ts.is_some() && seg.ts.is_some();
            self.dirs.to_client.last_ts = seg.ts.map(|(val, _)| val);
            // Both sides are on the wire: data waits for its acknowledgement.
            self.dirs.to_client.acks_seen = true;
            self.dirs.to_server.acks_seen = true;
            self.state = TcpState::SynRecv;
        } else if seg.dir == Direction::ToServer && f == SYN | ACK {
            self.on_split_synack(seg, event);
        } else if seg.dir == Direction::ToServer && f == SYN {
            let client = &mut self.dirs.to_server;
            if client.offset(seg.seq) != -1 {
                event(StreamEvent::SynResendDiffSeq);
            }
        } else if seg.dir == Direction::ToClient && f == SYN {
            // The server opens too (a split handshake): its SYN is answered
            // by the client's SYN/ACK.
            self.four_whs = true;
            self.dirs.to_client.start(seg.seq);
        } else if seg.dir == Direction::ToServer && f == ACK && ctx.cfg.async_oneside {
            // The server's side never shows: only the client's half is on this wire.
            self.async_oneside = true;
            self.state = TcpState::Established;
            self.dirs.to_server.acks_seen = false;
            let server = &mut self.dirs.to_client;
            server.acks_seen = false;
            server.start_at(seg.ack);
        }
    }

    /// PAWS as Suricata checks it: with timestamps in use, a segment whose
    /// TSval is older than the sender's latest (by serial arithmetic; Linux
    /// receivers allow one less) is invalid, and so is a TSval of 0 except
    /// for receivers that accept it. An accepted in-order segment moves the
    /// sender's latest TSval on.
    fn paws_ok(&mut self, ctx: &StreamCtx, seg: &Segment<'_>) -> bool {
        let Some((ts, _)) = seg.ts.filter(|_| self.timestamps) else { return true };
        // The receiver's OS matters only in the rare cases below: looked up there.
        let policy = || ctx.cfg.policies.lookup(seg.dst);
        let me = self.dirs.get_mut(seg.dir);
        if ts == 0 && !matches!(policy(), Policy::OldLinux | Policy::Solaris) {
            return false;
        }
        if let Some(last) = me.last_ts {
            let diff = ts.wrapping_sub(last) as i32;
            if diff < 0 && !(diff == -1 && policy() == Policy::Linux) {
                return false;
            }
        }
        if me.offset(seg.seq) == me.seen_end as i64 || me.last_ts.is_none() {
            me.last_ts = Some(ts);
        }
        true
    }

    /// Whether a segment answering the client's SYN echoes its timestamp:
    /// the client's TSval when its SYN had one (an echo of 0 passes), no
    /// echo at all when it had none. Segments without the option pass.
    fn reply_timestamp_valid(&self, seg: &Segment<'_>) -> bool {
        let Some((_, echo)) = seg.ts.filter(|_| seg.dir == Direction::ToClient) else { return true };
        match self.client_ts {
            Some(sent) => sent == 0 || echo == 0 || echo == sent,
            None => echo == 0,
        }
    }

    /// The client's SYN/ACK of a split handshake: it must acknowledge the
    /// server's SYN and repeat the client's own first sequence number.
    fn on_split_synack(&mut self, seg: &Segment<'_>, event: &mut dyn FnMut(StreamEvent)) {
        if !self.four_whs {
            event(StreamEvent::SynAckInWrongDirection);
            return;
        }
        let (client, server) = (&mut self.dirs.to_server, &mut self.dirs.to_client);
        if server.offset(seg.ack) != 0 {
            event(StreamEvent::FourWhsSynAckWithWrongAck);
            return;
        }
        if client.offset(seg.seq) != -1 {
            event(StreamEvent::FourWhsSynAckWithWrongSyn);
            return;
        }
        server.acked = 0;
        client.acks_seen = true;
        server.acks_seen = true;
        self.state = TcpState::SynRecv;
    }

    fn on_rst(&mut self, seg: &Segment<'_>, event: &mut dyn FnMut(StreamEvent), out: Handled) -> Handled {
        let me = self.dirs.get(seg.dir);
        let off = me.offset(seg.seq);
        // A reset far from anything the sender could have sent is not believed.
        if me.known && (off < me.reassembly.base() as i64 - MAX_AHEAD as i64 || off > (me.seen_end + MAX_AHEAD) as i64)
        {
            event(StreamEvent::RstInvalid);
            return Handled::default();
        }
        self.reset = true;
        self.reset_by = Some((seg.dir, self.state, off));
        self.state = TcpState::Closed;
        out
    }

    /// Puts `payload` (the segment's, or what its urgent data left of it)
    /// at stream offset `off`; the sequence number after the segment then
    /// stands for stream offset `seg_end` (an urgent byte taken out makes
    /// the stream one shorter than the sequence space).
    fn add_data(
        &mut self,
        ctx: &mut StreamCtx,
        seg: &Segment<'_>,
        payload: &[u8],
        off: i64,
        seg_end: i64,
        event: &mut dyn FnMut(StreamEvent),
    ) -> bool {
        let policy = ctx.cfg.policies.lookup(seg.dst);
        let depth = self.depth.unwrap_or(ctx.cfg.depth);
        let budget = if ctx.simulate_reassembly_memcap { 0 } else { budget(ctx) };
        let async_oneside = self.async_oneside;
        let me = self.dirs.get_mut(seg.dir);
        let end = off + payload.len() as i64;
        if end <= 0 || end <= me.reassembly.base() as i64 {
            event(StreamEvent::SegmentBeforeBaseSeq);
            return false;
        }
        if off > (me.seen_end + MAX_AHEAD) as i64 {
            event(StreamEvent::PacketOutOfWindow);
            return false;
        }
        let (start, data) = if off < 0 { (0u64, &payload[(-off) as usize..]) } else { (off as u64, payload) };
        if me.depth_reached {
            return false;
        }
        let before_end = me.seen_end;
        let i = me.reassembly.insert(start, data, policy, depth, budget);
        ctx.reassembly_memuse += i.added as u64;
        let end = start + data.len() as u64;
        if i.overlap {
            ctx.counters.overlap += 1;
            if end <= before_end && !i.different {
                event(StreamEvent::PacketRetransmission);
            }
        }
        if i.different {
            ctx.counters.overlap_diff_data += 1;
            event(StreamEvent::OverlapDifferentData);
        }
        if i.depth_reached && !me.depth_reached {
            me.depth_reached = true;
            ctx.counters.stream_depth_reached += 1;
            event(StreamEvent::DepthReached);
        }
        // Nothing stored of a segment that reached the store: its new bytes
        // did not fit the reassembly memcap.
        if i.stored == 0 && i.overlap {
            ctx.counters.insert_data_overlap_fail += 1;
        }
        if i.stored == 0 && !i.overlap && !i.depth_reached && start >= me.reassembly.base() {
            ctx.counters.insert_data_normal_fail += 1;
            ctx.counters.segment_memcap_drop += 1;
            event(StreamEvent::MemcapDrop);
        }
        me.seen_end = me.seen_end.max(end);
        if seg_end > 0 {
            me.advance_anchor(seg.seq.wrapping_add(seg.payload.len() as u32), seg_end as u64);
        }
        if async_oneside {
            // No acknowledgement will come: what was sent before this
            // segment counts as received (Suricata's one-sided `last_ack`).
            me.acked = me.acked.max(start);
        }
        i.stored > 0 || i.overlap
    }

    fn on_fin(&mut self, off: i64, len: usize, dir: Direction) {
        let me = self.dirs.get_mut(dir);
        let end = (off + len as i64).max(0) as u64;
        if me.fin.is_none() {
            me.fin = Some(end);
            me.seen_end = me.seen_end.max(end);
        }
    }

    /// What `stream_size` compares for `dir`: Suricata's `next_seq - isn`,
    /// so the SYN counts one (midstream, the byte before the first seen
    /// stands in for it) and a side not seen yet is 0. Wraps as Suricata's
    /// 32-bit sequence arithmetic does.
    pub fn stream_size(&self, dir: Direction) -> u32 {
        let s = self.dirs.get(dir);
        if s.known {
            (s.seen_end as u32).wrapping_add(1)
        } else {
            0
        }
    }

    pub fn summary(&self) -> SessionSummary {
        let (c, s) = (&self.dirs.to_server, &self.dirs.to_client);
        SessionSummary {
            state: self.state,
            gap: PerDir { to_server: c.gap, to_client: s.gap },
            max_regions: PerDir { to_server: c.reassembly.max_regions(), to_client: s.reassembly.max_regions() },
        }
    }

    /// Whether `dir`'s sender has finished (FIN or RST): its data is final.
    pub fn closing(&self, dir: Direction) -> bool {
        self.reset || self.dirs.get(dir).fin.is_some()
    }

    /// The range of `dir`'s stream ready for raw inspection: acknowledged
    /// (or everything held, with `flush`), contiguous from the raw progress,
    /// and at least a chunk unless the stream is closing. Holes the receiver
    /// acknowledged (data the capture missed) are skipped and counted; holes
    /// skipped only because the stream is flushed or reset are not, as the
    /// data may never have been sent.
    pub fn raw_ready(&mut self, ctx: &mut StreamCtx, dir: Direction, flush: bool) -> Option<(u64, u64)> {
        let chunk = match dir {
            Direction::ToServer => ctx.cfg.toserver_chunk,
            Direction::ToClient => ctx.cfg.toclient_chunk,
        } as u64;
        let closing = self.closing(dir) || self.closing(dir.flip());
        let inline = ctx.cfg.inline;
        let async_oneside = self.async_oneside;
        let s = self.dirs.get_mut(dir);
        if s.raw_trigger.is_some_and(|t| s.raw_progress >= t) {
            s.raw_trigger = None;
        }
        // A one-sided session's stream counts as acknowledged as it arrives
        // (`add_data`), and waits for a chunk like any other.
        let paced = s.acks_seen || async_oneside;
        let limit = if flush || inline || !paced { u64::MAX } else { s.acked };
        let mut start = s.raw_progress.max(s.reassembly.base());
        let mut end = s.reassembly.contiguous_end(start).min(limit);
        if end <= start {
            // A hole: skip it once the data after it is acknowledged.
            let next = s.reassembly.next_data(start)?;
            if next >= limit {
                return None;
            }
            if !paced || s.acked > start {
                ctx.counters.reassembly_gap += 1;
                s.gap = true;
            }
            s.raw_progress = next;
            start = next;
            end = s.reassembly.contiguous_end(start).min(limit);
        }
        let triggered = s.raw_trigger.is_some_and(|t| end >= t);
        let wait_for_more = !flush && !inline && !closing && !s.depth_reached && paced && !triggered;
        if end <= start || (wait_for_more && end - start < chunk) {
            return None;
        }
        if triggered {
            s.raw_trigger = None;
        }
        Some((start, end))
    }

    /// The range of `dir`'s stream ready for the application layer, as
    /// `(skipped, start, end)`: contiguous from the app progress and, in IDS
    /// mode, acknowledged by the receiver (Suricata hands data to the parser
    /// once the receiver has it). `skipped` bytes before `start` were lost
    /// (a hole the receiver acknowledged, or data released before).
    pub fn app_ready(&self, ctx: &StreamCtx, dir: Direction, flush: bool) -> Option<(u64, u64, u64)> {
        if !self.app_enabled {
            return None;
        }
        let s = self.dirs.get(dir);
        // Past the reassembly depth the application layer gets nothing
        // more, not even what came within the depth but was not yet
        // acknowledged, as Suricata stops its application reassembly there.
        if s.depth_reached && !ctx.cfg.inline {
            return None;
        }
        let limit = if flush || ctx.cfg.inline || !s.acks_seen { u64::MAX } else { s.acked };
        let mut start = s.app_progress.max(s.reassembly.base());
        let mut end = s.reassembly.contiguous_end(start).min(limit);
        if end <= start {
            let next = s.reassembly.next_data(start)?;
            if next >= limit {
                return None;
            }
            start = next;
            end = s.reassembly.contiguous_end(start).min(limit);
        }
        (end > start).then_some((start - s.app_progress, start, end))
    }

    /// The application layer consumed `dir` up to `to`.
    pub fn app_done(&mut self, ctx: &mut StreamCtx, dir: Direction, to: u64) {
        let raw_keep = raw_keep(ctx, dir, self.dirs.get(dir));
        let s = self.dirs.get_mut(dir);
        s.app_progress = s.app_progress.max(to);
        let keep = raw_keep.min(s.app_progress);
        ctx.reassembly_memuse -= s.reassembly.release(keep) as u64;
    }

    /// The application layer stops reading: data is kept for raw inspection only.
    pub fn app_disable(&mut self, ctx: &mut StreamCtx) {
        self.app_enabled = false;
        for dir in [Direction::ToServer, Direction::ToClient] {
            let keep = raw_keep(ctx, dir, self.dirs.get(dir));
            ctx.reassembly_memuse -= self.dirs.get_mut(dir).reassembly.release(keep) as u64;
        }
    }

    /// Copies `[start, end)` of `dir`'s stream to `out`.
    pub fn read(&self, dir: Direction, start: u64, end: u64, out: &mut Vec<u8>) {
        self.dirs.get(dir).reassembly.read_into(start, end, out);
    }

    /// What `dir`'s stream still holds, as a stream alert's payload shows
    /// it (Suricata's): the bytes from the oldest held on, each hole written
    /// as `[N bytes missing]`.
    pub fn read_logged(&self, dir: Direction, out: &mut Vec<u8>) {
        let s = self.dirs.get(dir);
        let r = &s.reassembly;
        let mut at = r.base();
        while at < s.seen_end {
            let end = r.contiguous_end(at).min(s.seen_end);
            if end > at {
                r.read_into(at, end, out);
                at = end;
                continue;
            }
            let Some(next) = r.next_data(at).filter(|&n| n < s.seen_end) else { break };
            out.extend_from_slice(format!("[{} bytes missing]", next - at).as_bytes());
            at = next;
        }
    }

    /// Raw inspection covered `dir` up to `to`, nothing freed yet (see
    /// [`raw_done`](Self::raw_done)).
    pub fn raw_seen(&mut self, dir: Direction, to: u64) {
        let s = self.dirs.get_mut(dir);
        s.raw_progress = s.raw_progress.max(to);
    }

    /// Inline, where the inspection of what [`raw_ready`](Self::raw_ready)
    /// gave from `start` begins: up to a chunk of the bytes before `start`
    /// that are still held come along, so a pattern split over packets is
    /// found in the packet that completes it. Otherwise `start`.
    pub fn raw_window(&self, ctx: &StreamCtx, dir: Direction, start: u64) -> u64 {
        if !ctx.cfg.inline {
            return start;
        }
        let s = self.dirs.get(dir);
        let from = start.saturating_sub(raw_lookback(ctx, dir)).max(s.reassembly.base());
        // Only bytes contiguous with `start`.
        s.reassembly.contiguous_start(start).max(from)
    }

    /// Raw inspection covered `dir` up to `to`; data no consumer needs is
    /// freed (inline, a chunk before `to` is kept for the next window).
    pub fn raw_done(&mut self, ctx: &mut StreamCtx, dir: Direction, to: u64) {
        let app = self.app_enabled;
        let s = self.dirs.get_mut(dir);
        s.raw_progress = s.raw_progress.max(to);
        let raw_keep = raw_keep(ctx, dir, s);
        let keep = if app { raw_keep.min(s.app_progress) } else { raw_keep };
        ctx.reassembly_memuse -= s.reassembly.release(keep) as u64;
    }
}

/// What raw inspection still needs of `s`, the stream of `dir`: what it has
/// not inspected, and inline the window before that.
fn raw_keep(ctx: &StreamCtx, dir: Direction, s: &TcpStream) -> u64 {
    if ctx.cfg.inline {
        s.raw_progress.saturating_sub(raw_lookback(ctx, dir))
    } else {
        s.raw_progress
    }
}

/// The inline inspection window of `dir`: its chunk size.
fn raw_lookback(ctx: &StreamCtx, dir: Direction) -> u64 {
    u64::from(match dir {
        Direction::ToServer => ctx.cfg.toserver_chunk,
        Direction::ToClient => ctx.cfg.toclient_chunk,
    })
}

fn budget(ctx: &StreamCtx) -> usize {
    ctx.cfg.reassembly_memcap.saturating_sub(ctx.reassembly_memuse).min(usize::MAX as u64) as usize
}
