//! The flow table: hash rows of flows chained by slot index, a slab of
//! flows bounded by the memcap, timers, emergency mode and eviction.

use crate::config::FlowConfig;
use crate::counters::FlowCounters;
use crate::flow::{EndReason, Flow, FlowState};
use crate::key::{FlowPacket, Tracking};
use crate::timers::{Entry, Wheel};
use vigil_decode::Packet;
use vigil_types::{Direction, Timestamp};
use vigil_wire::ip_proto;

const NIL: u32 = u32::MAX;

/// Slots examined per packet-second for emergency timeouts.
const EMERGENCY_SWEEP: usize = 8192;
/// Candidates compared when a flow must be evicted to make room.
const EVICT_SAMPLE: usize = 8;

struct Slot<E> {
    flow: Option<Flow<E>>,
    /// Bumped when the slot's flow ends: handles to it go stale.
    gen: u32,
    /// Bumped when the flow's timer is refiled: older timer entries go stale.
    tag: u32,
}

/// A slot's place in its hash row, kept apart from the flows so a lookup
/// walks a small dense array and touches a flow only when its hash matches.
#[derive(Debug, Clone, Copy)]
struct Link {
    /// Next slot in the same row.
    next: u32,
    hash: u32,
}

/// A packet's flow for the rest of its processing: which flow, and which
/// way the packet goes in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowHandle {
    slot: u32,
    gen: u32,
    pub dir: Direction,
    /// The flow's EVE `flow_id`.
    pub id: u64,
    /// This packet started the flow.
    pub created: bool,
}

/// One worker's flows.
///
/// Each packet is looked up by its symmetric key; a miss creates a flow
/// (oriented from the packet's source, the client). Flows end by timeout
/// (packet time), by eviction when the memcap is reached, by TCP tuple
/// reuse, or at [`flush`](FlowTable::flush). Ended flows wait in a queue
/// until [`drain_ended`](FlowTable::drain_ended), which the caller should
/// call after every packet to log them.
///
/// Memory is fixed by `flow.memcap`: the hash rows plus at most
/// [`capacity`](FlowTable::capacity) flows. Packets that need a new flow
/// when all are taken put the table in emergency mode (shorter timeouts,
/// counted) and evict the least recently seen of a few sampled flows.
pub struct FlowTable<E = ()> {
    cfg: FlowConfig,
    hasher: ahash::RandomState,
    rows: Vec<u32>,
    slots: Vec<Slot<E>>,
    links: Vec<Link>,
    free: Vec<u32>,
    max_flows: usize,
    emergency: bool,
    wheel: Wheel,
    last_tick: Option<i64>,
    ended: Vec<Flow<E>>,
    expired: Vec<u32>,
    counters: FlowCounters,
    sweep_cursor: usize,
    evict_cursor: usize,
    /// QA simulation: the next flow to be created finds the memcap reached.
    refuse_next: bool,
}

impl<E: Default> FlowTable<E> {
    /// `hasher` seeds the flow hash: keys are attacker-chosen, so the seed
    /// should be random (`ahash::RandomState::new()`).
    pub fn new(cfg: FlowConfig, hasher: ahash::RandomState) -> Self {
        // Rows may take at most half the memcap (a hostile hash-size must
        // not allocate gigabytes).
        let rows = (cfg.hash_size as u64).clamp(1, (cfg.memcap / 8).clamp(1, 1 << 26)) as usize;
        let row_bytes = rows as u64 * 4;
        let max_flows = (cfg.memcap.saturating_sub(row_bytes) / Self::flow_bytes() as u64).min(u32::MAX as u64 - 1);
        let max_flows = max_flows as usize;
        // Preallocation is a speed-up, not a promise: a hostile prealloc
        // with a huge memcap must not reserve gigabytes up front.
        let mut slots = Vec::new();
        slots.reserve_exact((cfg.prealloc as usize).min(max_flows).min(1 << 20));
        let mut t = FlowTable {
            cfg,
            hasher,
            rows: vec![NIL; rows],
            slots,
            links: Vec::new(),
            free: Vec::new(),
            max_flows,
            emergency: false,
            wheel: Wheel::new(),
            last_tick: None,
            ended: Vec::new(),
            expired: Vec::new(),
            counters: FlowCounters::default(),
            sweep_cursor: 0,
            evict_cursor: 0,
            refuse_next: false,
        };
        t.update_gauges();
        t
    }

    /// QA simulation (Suricata's `--simulate-packet-flow-memcap`): while
    /// `on`, a packet that needs a new flow finds the memcap reached, with
    /// nothing to evict. The caller sets it around one packet.
    pub fn simulate_memcap(&mut self, on: bool) {
        self.refuse_next = on;
    }

    /// Memory one flow takes (its slot and its timer entry).
    pub const fn flow_bytes() -> usize {
        std::mem::size_of::<Slot<E>>() + std::mem::size_of::<Link>() + std::mem::size_of::<Entry>()
    }

    /// The most flows the memcap allows.
    pub fn capacity(&self) -> usize {
        self.max_flows
    }

    pub fn config(&self) -> &FlowConfig {
        &self.cfg
    }

    pub fn tracking(&self) -> Tracking {
        Tracking { vlan: self.cfg.vlan_tracking, recursion: self.cfg.recursion_tracking, macs: self.cfg.keep_macs }
    }

    pub fn counters(&self) -> &FlowCounters {
        &self.counters
    }

    pub fn in_emergency(&self) -> bool {
        self.emergency
    }

    /// Open flows.
    pub fn len(&self) -> usize {
        self.counters.active as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, h: FlowHandle) -> Option<&Flow<E>> {
        self.slots.get(h.slot as usize).filter(|s| s.gen == h.gen).and_then(|s| s.flow.as_ref())
    }

    pub fn get_mut(&mut self, h: FlowHandle) -> Option<&mut Flow<E>> {
        self.slots.get_mut(h.slot as usize).filter(|s| s.gen == h.gen).and_then(|s| s.flow.as_mut())
    }

    /// Open flows, in slot order.
    pub fn iter(&self) -> impl Iterator<Item = &Flow<E>> {
        self.slots.iter().filter_map(|s| s.flow.as_ref())
    }

    /// Every live flow, to change what it carries (a rule reload renumbers
    /// its detection state).
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut Flow<E>> {
        self.slots.iter_mut().filter_map(|s| s.flow.as_mut())
    }

    /// Flows that ended since the last call, to log and drop.
    pub fn drain_ended(&mut self) -> std::vec::Drain<'_, Flow<E>> {
        self.ended.drain(..)
    }

    /// Ends every open flow (reason "shutdown"), e.g. at the end of a capture.
    pub fn flush(&mut self) {
        let mut from = 0;
        while let Some(next) = self.flush_some(from, usize::MAX) {
            from = next;
        }
    }

    /// Ends up to `max` open flows (reason "shutdown") from slot `from` on,
    /// so that a caller can log them before ending more: the ended flows are
    /// then never all held twice. `Some(next)`: call again from `next`;
    /// `None`: every flow has ended.
    pub fn flush_some(&mut self, from: usize, max: usize) -> Option<usize> {
        let mut ended = 0;
        for i in from..self.slots.len() {
            if ended == max {
                return Some(i);
            }
            if self.slots[i].flow.is_some() {
                self.end(i as u32, EndReason::Shutdown);
                ended += 1;
            }
        }
        self.wheel.clear();
        self.update_gauges();
        None
    }

    /// Hands over the ended flows without copying them; give the emptied
    /// vector back with [`give_back_ended`](Self::give_back_ended) to reuse it.
    pub fn take_ended(&mut self) -> Vec<Flow<E>> {
        std::mem::take(&mut self.ended)
    }

    /// Returns the vector [`take_ended`](Self::take_ended) handed over, once
    /// emptied (a large one is freed: it held a burst, not the usual few).
    pub fn give_back_ended(&mut self, mut v: Vec<Flow<E>>) {
        v.clear();
        if self.ended.is_empty() && v.capacity() <= 1024 {
            self.ended = v;
        }
    }

    /// The packet's flows: the UDP flow of a tunnel it came in (for
    /// captured packets, `root`), then its own, whose handle is returned.
    /// The table's clock is the caller's to advance ([`FlowTable::tick`];
    /// the engine ticks with a [`crate::CaptureClock`], so one packet's
    /// broken time cannot end every flow); the packet's own flows go by
    /// its own time.
    pub fn handle_packet(&mut self, p: &Packet<'_>, root: bool) -> Option<FlowHandle> {
        let t = self.tracking();
        if root {
            if let Some(outer) = FlowPacket::tunnel_outer(p, &t) {
                self.update(&outer, p.ts);
            }
        }
        let fp = FlowPacket::inner(p, &t)?;
        self.update(&fp, p.ts)
    }

    /// Advances the clock: flows whose timeout passed end (reason "timeout").
    pub fn tick(&mut self, now: Timestamp) {
        let sec = now.secs();
        if self.last_tick.is_some_and(|t| sec <= t) {
            return;
        }
        self.last_tick = Some(sec);
        let FlowTable { wheel, slots, expired, counters, cfg, emergency, .. } = self;
        let (timeouts, emergency) = (&cfg.timeouts, *emergency);
        wheel.advance(sec, |(slot, tag), _| {
            let s = slots.get(slot as usize)?;
            if s.tag != tag {
                return None;
            }
            let f = s.flow.as_ref()?;
            counters.mgr_flows_checked += 1;
            let due = f.expires_at(timeouts, emergency);
            if now >= due {
                expired.push(slot);
                None
            } else {
                counters.mgr_flows_notimeout += 1;
                Some(due.secs())
            }
        });
        let mut expired = std::mem::take(&mut self.expired);
        for slot in expired.drain(..) {
            self.counters.mgr_flows_timeout += 1;
            self.counters.mgr_flows_evicted += 1;
            self.end(slot, EndReason::Timeout);
        }
        self.expired = expired;
        if self.emergency {
            self.sweep(now, EMERGENCY_SWEEP);
        }
        self.update_gauges();
    }

    /// Looks up the flow of `fp` (creating it when allowed) and accounts
    /// the packet in it.
    pub fn update(&mut self, fp: &FlowPacket, now: Timestamp) -> Option<FlowHandle> {
        let hash = self.hasher.hash_one(fp.key) as u32;
        let row = self.row_of(hash);
        let mut cur = self.rows[row];
        let mut walked = 0u64;
        let mut found = None;
        while cur != NIL {
            walked += 1;
            let link = self.links[cur as usize];
            if link.hash == hash {
                if let Some(f) = self.slots[cur as usize].flow.as_ref() {
                    if f.key == fp.key {
                        if f.is_expired(now, &self.cfg.timeouts, self.emergency) {
                            self.counters.wrk_flows_evicted += 1;
                            self.end(cur, EndReason::Timeout);
                        } else if f.key.proto == ip_proto::TCP
                            && f.state == FlowState::Closed
                            && fp.tcp_flags.is_some_and(|fl| fl & 0x12 == 0x02)
                            && (f.syn_seq.is_none() || fp.tcp_seq != f.syn_seq)
                        {
                            // A SYN on a closed session's tuple starts a new
                            // session, unless it is the session's own first
                            // SYN again (Suricata takes that for a retransmission).
                            self.counters.tcp_reuse += 1;
                            self.counters.wrk_flows_evicted += 1;
                            self.end(cur, EndReason::TcpReuse);
                        } else {
                            found = Some(cur);
                            break;
                        }
                    }
                }
            }
            cur = link.next;
        }
        self.counters.mgr_rows_maxlen = self.counters.mgr_rows_maxlen.max(walked);
        let (slot, created) = match found {
            Some(s) => (s, false),
            None => {
                if !fp.may_create {
                    return None;
                }
                let s = self.create(fp, hash, row, now)?;
                (s, true)
            }
        };
        let (timeouts, emergency) = (self.cfg.timeouts, self.emergency);
        let s = &mut self.slots[slot as usize];
        let gen = s.gen;
        let f = s.flow.as_mut()?;
        let dir = match fp.sender {
            Some(ip) => {
                if f.key.src_ip() == ip {
                    Direction::ToServer
                } else {
                    Direction::ToClient
                }
            }
            None if f.key.is_forward(&fp.key) => Direction::ToServer,
            None => Direction::ToClient,
        };
        let before = f.timeout(&timeouts, emergency);
        if dir == Direction::ToServer && f.syn_seq.is_none() && fp.tcp_flags.is_some_and(|fl| fl & 0x12 == 0x02) {
            f.syn_seq = fp.tcp_seq;
        }
        f.update(dir, fp.bytes, now, fp.tcp_flags, fp.icmp, fp.ttl);
        if let Some(m) = fp.macs {
            f.see_macs(dir, m);
        }
        let id = f.id;
        self.retime(slot, before);
        Some(FlowHandle { slot, gen, dir, id, created })
    }

    /// Sets the flow's state from its TCP session, which knows it better
    /// than the flags `update` goes by (Suricata's flow state is the
    /// session's); its timeout follows.
    pub fn set_state(&mut self, h: FlowHandle, state: FlowState) {
        let (timeouts, emergency) = (self.cfg.timeouts, self.emergency);
        let Some(f) = self.get_mut(h) else { return };
        if f.state == state {
            return;
        }
        let before = f.timeout(&timeouts, emergency);
        f.state = state;
        self.retime(h.slot, before);
    }

    /// A flow that now times out sooner than its timer says (closed) gets
    /// a new timer; the old entry goes stale. One that times out later is
    /// put back when its timer fires.
    fn retime(&mut self, slot: u32, before: u32) {
        let (timeouts, emergency) = (self.cfg.timeouts, self.emergency);
        let s = &mut self.slots[slot as usize];
        let Some(f) = s.flow.as_ref() else { return };
        if f.timeout(&timeouts, emergency) >= before {
            return;
        }
        let due = f.expires_at(&timeouts, emergency).secs();
        s.tag = s.tag.wrapping_add(1);
        let tag = s.tag;
        self.wheel.insert((slot, tag), due);
        self.compact_timers();
    }

    fn create(&mut self, fp: &FlowPacket, hash: u32, row: usize, now: Timestamp) -> Option<u32> {
        let slot = self.alloc(now)?;
        let mut f: Flow<E> = Flow::new(fp.key, crate::flow::id_hash(&fp.key), now);
        f.vlans = fp.vlans;
        f.nvlans = fp.nvlans;
        f.spi = fp.spi;
        let due = f.expires_at(&self.cfg.timeouts, self.emergency).secs();
        let s = &mut self.slots[slot as usize];
        s.flow = Some(f);
        s.tag = s.tag.wrapping_add(1);
        self.links[slot as usize] = Link { next: self.rows[row], hash };
        self.rows[row] = slot;
        self.wheel.insert((slot, s.tag), due);
        self.compact_timers();
        let c = &mut self.counters;
        c.total += 1;
        c.active += 1;
        match fp.key.proto {
            ip_proto::TCP => c.tcp += 1,
            ip_proto::UDP => c.udp += 1,
            ip_proto::ICMP => c.icmpv4 += 1,
            ip_proto::ICMPV6 => c.icmpv6 += 1,
            _ => {}
        }
        Some(slot)
    }

    /// A free slot: a spare one, a new one within the memcap, or one freed
    /// by emergency timeouts or eviction.
    fn alloc(&mut self, now: Timestamp) -> Option<u32> {
        if std::mem::take(&mut self.refuse_next) {
            self.counters.memcap += 1;
            return None;
        }
        if let Some(s) = self.free.pop() {
            return Some(s);
        }
        if self.slots.len() < self.max_flows {
            if self.slots.len() == self.slots.capacity() {
                // Grow in steps that never pass the memcap.
                let step = self.slots.capacity().max(1024).min(self.max_flows - self.slots.len());
                self.slots.reserve_exact(step);
            }
            if self.links.len() == self.links.capacity() {
                self.links.reserve_exact(self.slots.capacity() - self.links.len());
            }
            self.slots.push(Slot { flow: None, gen: 0, tag: 0 });
            self.links.push(Link { next: NIL, hash: 0 });
            self.update_gauges();
            return Some((self.slots.len() - 1) as u32);
        }
        if self.max_flows == 0 {
            self.counters.memcap += 1;
            return None;
        }
        self.counters.memcap += 1;
        if !self.emergency {
            self.emergency = true;
            self.counters.emerg_mode_entered += 1;
            // One full pass with the emergency timeouts.
            self.sweep(now, self.slots.len());
            if let Some(s) = self.free.pop() {
                return Some(s);
            }
        }
        let victim = self.pick_victim()?;
        self.counters.get_used += 1;
        self.end(victim, EndReason::Forced);
        self.free.pop()
    }

    /// The least recently seen of a few flows (approximate LRU, as sampled
    /// eviction in caches does), so eviction costs the same under any load.
    fn pick_victim(&mut self) -> Option<u32> {
        let n = self.slots.len();
        let mut best: Option<(Timestamp, u32)> = None;
        let mut live = 0;
        for _ in 0..n.min(EVICT_SAMPLE * 8) {
            let i = self.evict_cursor % n;
            self.evict_cursor = (i + 1) % n;
            if let Some(f) = self.slots[i].flow.as_ref() {
                live += 1;
                if best.is_none_or(|(t, _)| f.last < t) {
                    best = Some((f.last, i as u32));
                }
                if live >= EVICT_SAMPLE {
                    break;
                }
            }
        }
        best.map(|(_, i)| i)
    }

    /// Ends flows timed out under the current timeouts among `budget` slots
    /// from the sweep cursor, and leaves emergency mode once enough flows
    /// are gone.
    fn sweep(&mut self, now: Timestamp, budget: usize) {
        let n = self.slots.len();
        for _ in 0..budget.min(n) {
            let i = self.sweep_cursor;
            self.sweep_cursor = (i + 1) % n;
            if self.sweep_cursor == 0 {
                self.counters.mgr_full_hash_pass += 1;
            }
            let expired =
                self.slots[i].flow.as_ref().is_some_and(|f| f.is_expired(now, &self.cfg.timeouts, self.emergency));
            if expired {
                self.counters.mgr_flows_timeout += 1;
                self.counters.mgr_flows_evicted += 1;
                self.end(i as u32, EndReason::Timeout);
            }
        }
        let keep = self.max_flows as u64 * u64::from(100 - self.cfg.emergency_recovery.min(100)) / 100;
        if self.emergency && self.counters.active <= keep {
            self.emergency = false;
            self.counters.emerg_mode_over += 1;
        }
    }

    fn end(&mut self, slot: u32, reason: EndReason) {
        let emergency = self.emergency;
        let s = &mut self.slots[slot as usize];
        let Some(mut f) = s.flow.take() else { return };
        s.gen = s.gen.wrapping_add(1);
        s.tag = s.tag.wrapping_add(1);
        let Link { next, hash } = self.links[slot as usize];
        self.links[slot as usize].next = NIL;
        let row = self.row_of(hash);
        // Unlink from its row.
        if self.rows[row] == slot {
            self.rows[row] = next;
        } else {
            let mut cur = self.rows[row];
            while cur != NIL {
                let n = self.links[cur as usize].next;
                if n == slot {
                    self.links[cur as usize].next = next;
                    break;
                }
                cur = n;
            }
        }
        self.free.push(slot);
        f.end_reason = Some(reason);
        f.emergency = emergency;
        let c = &mut self.counters;
        c.active -= 1;
        match f.state {
            FlowState::New => c.end_new += 1,
            FlowState::Established => c.end_established += 1,
            FlowState::Closed => c.end_closed += 1,
        }
        self.ended.push(f);
    }

    /// Ended flows leave their timer entries behind until due; when those
    /// outnumber the live ones, refile only the live flows.
    fn compact_timers(&mut self) {
        if self.wheel.len() <= 2 * self.counters.active as usize + 4096 {
            return;
        }
        self.wheel.clear();
        let (timeouts, emergency) = (&self.cfg.timeouts, self.emergency);
        for (i, s) in self.slots.iter_mut().enumerate() {
            if let Some(f) = s.flow.as_ref() {
                s.tag = s.tag.wrapping_add(1);
                self.wheel.insert((i as u32, s.tag), f.expires_at(timeouts, emergency).secs());
            }
        }
    }

    #[inline]
    fn row_of(&self, hash: u32) -> usize {
        let n = self.rows.len();
        // A mask when the size allows (the stock 65536 does): no division per packet.
        if n.is_power_of_two() {
            hash as usize & (n - 1)
        } else {
            hash as usize % n
        }
    }

    fn update_gauges(&mut self) {
        let c = &mut self.counters;
        c.memuse = (self.rows.len() * 4 + self.slots.capacity() * Self::flow_bytes()) as u64;
        c.spare = (self.free.len() + self.slots.capacity() - self.slots.len()) as u64;
    }
}
