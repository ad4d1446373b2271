//! The reassembler: datagrams in progress keyed by addresses and id, their
//! limits (trackers, fragments, memcap), and their timeouts.

use crate::config::DefragConfig;
use crate::counters::DefragCounters;
use crate::fragment::Fragment;
use crate::tracker::{RebuildError, Tracker, TRACKER_BASE};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use vigil_decode::{DecodeEvent, EventList, Packet};
use vigil_types::{Timestamp, FLOW_KEY_VLANS};

/// Which datagram a fragment belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    src: [u8; 16],
    dst: [u8; 16],
    id: u32,
    /// IPv4 only: fragments of another protocol are another datagram.
    proto: u8,
    ipv6: bool,
    recursion: u8,
    vlans: [u16; FLOW_KEY_VLANS],
}

fn addr16(a: std::net::IpAddr) -> [u8; 16] {
    match a {
        std::net::IpAddr::V4(v) => {
            let mut b = [0u8; 16];
            b[..4].copy_from_slice(&v.octets());
            b
        }
        std::net::IpAddr::V6(v) => v.octets(),
    }
}

/// What one fragment did.
#[derive(Debug, Clone, Copy, Default)]
pub struct Outcome {
    /// Events to add to the fragment's packet (`frag_overlap`, ...).
    pub events: EventList,
    /// The datagram is complete: the output buffer holds it, from the IP header on.
    pub reassembled: bool,
    /// The fragment could not be held within the memcap, even after
    /// evicting every other datagram (`defrag.memcap-policy` applies).
    pub memcap: bool,
}

/// Reassembles the fragmented IPv4 and IPv6 datagrams of one worker.
///
/// Memory is bounded three ways (`memcap`, `max_trackers`, `max_frags`) plus
/// a per-datagram fragment limit; reaching a limit drops the least recently
/// fed unfinished datagram and counts it, so a flood cannot pin the table.
pub struct Defragmenter {
    cfg: DefragConfig,
    index: HashMap<Key, u32, ahash::RandomState>,
    slots: Vec<Option<(Key, Tracker)>>,
    free: Vec<u32>,
    /// (deadline, slot, generation), earliest first; entries go stale when
    /// a tracker is fed (its deadline moves) or dropped, and are fixed up
    /// when they reach the top. One entry per live tracker.
    timers: BinaryHeap<Reverse<(i64, u32, u32)>>,
    generation: u32,
    frags: u64,
    counters: DefragCounters,
    /// QA simulation: a new datagram finds the memcap reached.
    refuse_next: bool,
}

impl Defragmenter {
    /// `hasher` seeds the tracker index: fragment ids and addresses are
    /// attacker-chosen, so the seed should be random (`RandomState::new()`).
    pub fn new(cfg: DefragConfig, hasher: ahash::RandomState) -> Self {
        Defragmenter {
            cfg,
            index: HashMap::with_hasher(hasher),
            slots: Vec::new(),
            free: Vec::new(),
            timers: BinaryHeap::new(),
            generation: 0,
            frags: 0,
            counters: DefragCounters::default(),
            refuse_next: false,
        }
    }

    /// QA simulation (Suricata's `--simulate-packet-defrag-memcap`): while
    /// `on`, a fragment of a new datagram finds the memcap reached with
    /// nothing to evict. The caller sets it around one packet.
    pub fn simulate_memcap(&mut self, on: bool) {
        self.refuse_next = on;
    }

    pub fn config(&self) -> &DefragConfig {
        &self.cfg
    }

    pub fn counters(&self) -> &DefragCounters {
        &self.counters
    }

    /// Datagrams in progress.
    pub fn trackers(&self) -> usize {
        self.index.len()
    }

    /// Fragments held.
    pub fn fragments(&self) -> u64 {
        self.frags
    }

    /// Feeds a decoded packet. Packets that are not fragments are ignored.
    /// When this fragment completes its datagram, `out` receives the whole
    /// datagram (IP header first) for the caller to decode and inspect.
    pub fn handle(&mut self, p: &Packet<'_>, out: &mut Vec<u8>) -> Outcome {
        match Fragment::from_packet(p) {
            Some(f) => self.insert(&f, p.ts, out),
            None => Outcome::default(),
        }
    }

    /// Feeds one fragment at packet time `now`.
    pub fn insert(&mut self, f: &Fragment<'_>, now: Timestamp, out: &mut Vec<u8>) -> Outcome {
        let mut o = Outcome::default();
        let (overlap_ev, too_large_ev, ignored_ev) = if f.ipv6 {
            (DecodeEvent::Ipv6FragOverlap, DecodeEvent::Ipv6FragPktTooLarge, DecodeEvent::Ipv6FragIgnored)
        } else {
            (DecodeEvent::Ipv4FragOverlap, DecodeEvent::Ipv4FragPktTooLarge, DecodeEvent::Ipv4FragIgnored)
        };
        if f.ipv6 {
            self.counters.ipv6_fragments += 1;
        } else {
            self.counters.ipv4_fragments += 1;
        }
        self.expire(now);
        if f.offset == 0 && !f.more {
            return o;
        }
        let data_len = f.data.len() as u64;
        let limit = if f.ipv6 { 65_535 } else { 65_535 - 20 };
        if u64::from(f.offset) + data_len > limit {
            o.events.push(too_large_ev);
            return o;
        }
        if f.ipv6 && f.more && !data_len.is_multiple_of(8) {
            // RFC 8200: every fragment but the last carries a multiple of 8 bytes.
            o.events.push(DecodeEvent::Ipv6FragInvalidLength);
            return o;
        }
        if data_len == 0 {
            return o;
        }

        let key = self.key_of(f);
        let slot = match self.index.get(&key) {
            Some(&s) => s,
            None => match self.new_tracker(key, f, now) {
                Ok(s) => s,
                Err(memcap) => {
                    o.memcap = memcap;
                    o.events.push(ignored_ev);
                    return o;
                }
            },
        };
        if let Err(memcap) = self.make_room(slot, f) {
            o.memcap = memcap;
            o.events.push(ignored_ev);
            return o;
        }
        let deadline = now.secs().saturating_add(i64::from(self.cfg.timeout_secs));
        let Some((_, t)) = self.slots[slot as usize].as_mut() else { return o };
        t.deadline = deadline;
        let r = t.insert(f);
        t.mem = t.mem + r.added - r.freed;
        self.counters.memuse = self.counters.memuse + r.added as u64 - r.freed as u64;
        self.frags = self.frags + u64::from(r.stored) - u64::from(r.removed);
        if r.overlap {
            o.events.push(overlap_ev);
        }
        if r.stored && t.complete() {
            let result = t.rebuild(out);
            let ipv6 = t.ipv6;
            self.remove(slot);
            match result {
                Ok(()) => {
                    o.reassembled = true;
                    if ipv6 {
                        self.counters.ipv6_reassembled += 1;
                    } else {
                        self.counters.ipv4_reassembled += 1;
                    }
                }
                Err(RebuildError::TooLarge) => o.events.push(too_large_ev),
                Err(RebuildError::Malformed) => {}
            }
        }
        o
    }

    /// Drops datagrams whose last fragment is older than the timeout.
    pub fn expire(&mut self, now: Timestamp) {
        while let Some(&Reverse((deadline, slot, generation))) = self.timers.peek() {
            if now <= Timestamp::from_secs_nanos(deadline, 0) {
                return;
            }
            self.timers.pop();
            let Some((_, t)) = self.slots.get(slot as usize).and_then(|s| s.as_ref()) else { continue };
            if t.generation != generation {
                continue;
            }
            if t.deadline > deadline {
                self.timers.push(Reverse((t.deadline, slot, generation)));
                continue;
            }
            if t.ipv6 {
                self.counters.ipv6_timeouts += 1;
            } else {
                self.counters.ipv4_timeouts += 1;
            }
            self.counters.tracker_timeout += 1;
            self.remove(slot);
        }
    }

    fn key_of(&self, f: &Fragment<'_>) -> Key {
        let vlans = if self.cfg.vlan_tracking { f.vlans } else { [0u16; FLOW_KEY_VLANS] };
        Key {
            src: addr16(f.src),
            dst: addr16(f.dst),
            id: f.id,
            proto: if f.ipv6 { 0 } else { f.proto },
            ipv6: f.ipv6,
            recursion: if self.cfg.recursion_tracking { f.recursion } else { 0 },
            vlans,
        }
    }

    /// A tracker for a new datagram; `Err(true)` when the memcap left no
    /// room, `Err(false)` for the tracker limit.
    fn new_tracker(&mut self, key: Key, f: &Fragment<'_>, now: Timestamp) -> Result<u32, bool> {
        if std::mem::take(&mut self.refuse_next) {
            return Err(true);
        }
        let tracker_mem = TRACKER_BASE as u64;
        if self.index.len() as u64 >= u64::from(self.cfg.max_trackers) {
            self.counters.max_trackers_reached += 1;
            if !self.evict_oldest(None) {
                return Err(false);
            }
        }
        while self.counters.memuse + tracker_mem > self.cfg.memcap {
            if !self.evict_oldest(None) {
                return Err(true);
            }
        }
        self.generation = self.generation.wrapping_add(1);
        let deadline = now.secs().saturating_add(i64::from(self.cfg.timeout_secs));
        let t = Tracker::new(self.cfg.policies.lookup(f.dst), f.ipv6, deadline, self.generation);
        self.counters.memuse += t.mem as u64;
        let slot = match self.free.pop() {
            Some(s) => {
                self.slots[s as usize] = Some((key, t));
                s
            }
            None => {
                self.slots.push(Some((key, t)));
                (self.slots.len() - 1) as u32
            }
        };
        self.index.insert(key, slot);
        self.timers.push(Reverse((deadline, slot, self.generation)));
        if self.timers.len() > 2 * self.index.len() + 1024 {
            self.rebuild_timers();
        }
        Ok(slot)
    }

    /// Makes room for `f` in tracker `slot`; `Err(true)` when the memcap
    /// left none, `Err(false)` for a fragment limit.
    fn make_room(&mut self, slot: u32, f: &Fragment<'_>) -> Result<(), bool> {
        let count = self.slots[slot as usize].as_ref().map_or(0, |(_, t)| t.frag_count());
        if count as u64 >= u64::from(self.cfg.max_frags_per_datagram) {
            self.counters.max_frags_reached += 1;
            return Err(false);
        }
        if self.frags >= u64::from(self.cfg.max_frags) {
            self.counters.max_frags_reached += 1;
            while self.frags >= u64::from(self.cfg.max_frags) {
                if !self.evict_oldest(Some(slot)) {
                    return Err(false);
                }
            }
        }
        let need = Tracker::cost(f) as u64;
        while self.counters.memuse + need > self.cfg.memcap {
            if !self.evict_oldest(Some(slot)) {
                return Err(true);
            }
        }
        Ok(())
    }

    /// Drops the least recently fed datagram other than `keep`.
    fn evict_oldest(&mut self, keep: Option<u32>) -> bool {
        let mut kept = None;
        let mut evicted = false;
        while let Some(Reverse((deadline, slot, generation))) = self.timers.pop() {
            let Some((_, t)) = self.slots.get(slot as usize).and_then(|s| s.as_ref()) else { continue };
            if t.generation != generation {
                continue;
            }
            if t.deadline > deadline {
                self.timers.push(Reverse((t.deadline, slot, generation)));
                continue;
            }
            if Some(slot) == keep {
                kept = Some(Reverse((deadline, slot, generation)));
                continue;
            }
            self.counters.tracker_hard_reuse += 1;
            self.remove(slot);
            evicted = true;
            break;
        }
        if let Some(k) = kept {
            self.timers.push(k);
        }
        evicted
    }

    /// Drops stale timer entries (of datagrams already finished), which
    /// would otherwise pile up until their deadlines pass.
    fn rebuild_timers(&mut self) {
        let live = self
            .slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|(_, t)| Reverse((t.deadline, i as u32, t.generation))));
        self.timers = live.collect();
    }

    fn remove(&mut self, slot: u32) {
        if let Some((key, t)) = self.slots.get_mut(slot as usize).and_then(Option::take) {
            self.index.remove(&key);
            self.counters.memuse = self.counters.memuse.saturating_sub(t.mem as u64);
            self.frags = self.frags.saturating_sub(t.frag_count() as u64);
            debug_assert_eq!(t.mem, t.frags_mem() + TRACKER_BASE);
            self.free.push(slot);
        }
    }
}
