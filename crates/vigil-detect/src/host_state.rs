//! Host-keyed detection state, one for all workers: the trackers of
//! `threshold`, `detection_filter` and `rate_filter` (by source,
//! destination, address pair or rule), and `xbits`/`hostbits`.
//!
//! A flow belongs to one worker, a host does not: AF_PACKET fanout or the
//! autofp reader spreads one scanner's flows over every worker, so state
//! kept per worker lets a `limit 1` rule alert once per worker. Here every
//! table is split into shards, each behind its own lock, chosen by a hash of
//! the tracker; a lock is taken only when a signature with such state
//! matches (or, for `isset`, reaches that test), never for other packets.
//!
//! Offline, the same capture must give the same alerts whatever the runmode
//! and thread count. Workers run at their own pace, so without more the
//! first worker to reach a tracker would win it. A [`Sequencer`] puts every
//! access back in capture order: each worker publishes where it is (frame
//! number, then the frame's phase: time first, then the packet), and one
//! that needs host state waits until every other worker is past that point.
//! The earliest waiter never waits for a later one, so the wait always ends.
//! Live runs have no sequencer: what arrives first is first.
//!
//! ```
//! use vigil_detect::host_state::{Hosts, HostState};
//! let shared = HostState::new_shared();
//! let (a, b) = (Hosts::shared(shared.clone()), Hosts::shared(shared));
//! // Two workers' handles on one state.
//! # let _ = (a, b);
//! ```

use crate::hostbits::{HostBitOp, HostBits, Key as BitKey};
use crate::threshold::{Key as RateKey, MatchSubject, NewAction, RateFilter, RateFilterTable, RateRule, RateTable};
use std::hash::{BuildHasher, Hash};
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use vigil_rules::keywords::post::Track;
use vigil_types::Timestamp;

/// Locks per table: enough that workers rarely meet on one.
const SHARDS: usize = 16;

/// One table split over [`SHARDS`] locks.
struct Shards<T> {
    shards: Box<[Mutex<T>]>,
}

impl<T> Shards<T> {
    fn new(make: impl Fn() -> T) -> Self {
        Shards { shards: (0..SHARDS).map(|_| Mutex::new(make())).collect() }
    }

    fn lock(&self, hash: u64) -> MutexGuard<'_, T> {
        // A worker that panicked holding a lock left counts, not broken invariants.
        self.shards[(hash % SHARDS as u64) as usize].lock().unwrap_or_else(|e| e.into_inner())
    }

    fn sum(&self, f: impl Fn(&T) -> u64) -> u64 {
        self.shards.iter().map(|s| f(&s.lock().unwrap_or_else(|e| e.into_inner()))).sum()
    }
}

/// The tables every worker of a run shares.
pub struct HostState {
    rates: Shards<RateTable>,
    filters: Shards<RateFilterTable>,
    bits: Shards<HostBits>,
    /// Random keys: trackers are attacker-chosen addresses.
    hasher: std::collections::hash_map::RandomState,
}

impl std::fmt::Debug for HostState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostState").finish_non_exhaustive()
    }
}

impl HostState {
    /// Tables with the default bounds, split over the shards.
    pub fn new_shared() -> Arc<HostState> {
        let per = |n: usize| n.div_ceil(SHARDS);
        Arc::new(HostState {
            rates: Shards::new(|| RateTable::new(per(crate::threshold::DEFAULT_MAX_TRACKERS))),
            filters: Shards::new(|| RateFilterTable::new(per(crate::threshold::DEFAULT_MAX_TRACKERS))),
            bits: Shards::new(|| HostBits::with_capacity(per(crate::hostbits::DEFAULT_CAPACITY))),
            hasher: Default::default(),
        })
    }

    fn hash(&self, key: impl Hash) -> u64 {
        self.hasher.hash_one(key)
    }

    /// Matches not tracked because a table was full: (thresholds and rate
    /// filters, host bits).
    pub fn memcap_hits(&self) -> (u64, u64) {
        (self.rates.sum(|t| t.full) + self.filters.sum(|t| t.full), self.bits.sum(|t| t.memcap_hits))
    }
}

/// Where a worker is in the capture, as [`Sequencer::at`] takes it: a frame
/// is first the time it brings (flows timing out), then its packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Time = 0,
    Packet = 1,
}

/// Frame numbers past every real one: the end of the input, when each
/// worker's last flows end.
pub const END_FRAME: u64 = 1 << 47;

/// Workers beyond this share the last tie-break slot (order among them
/// is then not fixed, nothing else is lost).
const MAX_ORDERED_WORKERS: usize = 1 << 15;

fn order_key(frame: u64, phase: Phase, me: usize) -> u64 {
    (frame.min(END_FRAME) << 16) | ((phase as u64) << 15) | me.min(MAX_ORDERED_WORKERS - 1) as u64
}

/// An atomic on its own cache line: workers write theirs on every frame.
#[repr(align(128))]
#[derive(Default)]
struct Padded(AtomicU64);

/// Capture order for host state across the workers of an offline run.
pub struct Sequencer {
    progress: Box<[Padded]>,
    waiting: AtomicUsize,
}

impl Sequencer {
    pub fn new(workers: usize) -> Arc<Sequencer> {
        Arc::new(Sequencer {
            progress: (0..workers).map(|_| Padded::default()).collect(),
            waiting: AtomicUsize::new(0),
        })
    }

    /// Worker `me` is at `frame`'s `phase`: all it had to do before is done.
    /// Frames are numbered from 1 in capture order. A place behind the one
    /// already given is ignored: a worker never moves back (a reader may
    /// tell an idle worker a position more than once).
    pub fn at(&self, me: usize, frame: u64, phase: Phase) {
        self.progress[me].0.fetch_max(order_key(frame, phase, me), Ordering::AcqRel);
    }

    /// Worker `me` has nothing left to do: nobody waits for it any more.
    pub fn done(&self, me: usize) {
        self.progress[me].0.store(u64::MAX, Ordering::Release);
    }

    /// Some worker is waiting for its turn (a reader that holds frames
    /// back should hand them out).
    pub fn waiting(&self) -> bool {
        self.waiting.load(Ordering::Relaxed) > 0
    }

    fn others_past(&self, me: usize, mine: u64) -> bool {
        self.progress.iter().enumerate().all(|(i, p)| i == me || p.0.load(Ordering::Acquire) > mine)
    }

    /// Returns once every other worker is past where `me` is.
    fn wait_turn(&self, me: usize) {
        let mine = self.progress[me].0.load(Ordering::Relaxed);
        if self.others_past(me, mine) {
            return;
        }
        self.waiting.fetch_add(1, Ordering::Relaxed);
        let mut spins = 0u32;
        while !self.others_past(me, mine) {
            spins += 1;
            if spins < 64 {
                std::hint::spin_loop();
            } else if spins < 128 {
                std::thread::yield_now();
            } else {
                std::thread::sleep(std::time::Duration::from_micros(20));
            }
        }
        self.waiting.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A worker's place in a [`Sequencer`]. Dropping it (the worker ended, or
/// failed) lets the others by.
pub struct Place {
    seq: Arc<Sequencer>,
    me: usize,
}

impl Place {
    pub fn new(seq: Arc<Sequencer>, me: usize) -> Place {
        Place { seq, me }
    }

    /// See [`Sequencer::at`].
    pub fn at(&self, frame: u64, phase: Phase) {
        self.seq.at(self.me, frame, phase);
    }

    pub fn sequencer(&self) -> &Arc<Sequencer> {
        &self.seq
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        self.seq.done(self.me);
    }
}

/// A worker's handle on the host state: the shared tables and, offline
/// with several workers, its place in the [`Sequencer`].
#[derive(Clone)]
pub struct Hosts {
    state: Arc<HostState>,
    turn: Option<(Arc<Sequencer>, usize)>,
}

impl Default for Hosts {
    /// State of its own (one worker, tests).
    fn default() -> Self {
        Hosts::shared(HostState::new_shared())
    }
}

impl Hosts {
    pub fn shared(state: Arc<HostState>) -> Hosts {
        Hosts { state, turn: None }
    }

    /// Takes the state in capture order, as worker `me` of `seq`.
    pub fn in_order(self, seq: Arc<Sequencer>, me: usize) -> Hosts {
        Hosts { turn: Some((seq, me)), ..self }
    }

    pub fn state(&self) -> &Arc<HostState> {
        &self.state
    }

    fn turn(&self) {
        if let Some((seq, me)) = &self.turn {
            seq.wait_turn(*me);
        }
    }

    /// A signature's `threshold`/`detection_filter` counts a match; true
    /// when it alerts.
    pub fn allow(&self, rule: &RateRule, sid: u32, gid: u32, m: MatchSubject) -> bool {
        let key = RateKey::new(rule.track, false, sid, gid, &m);
        // A flow's matches all come from the worker that owns it, in order
        // (packets without a flow, id 0, come from every worker).
        if rule.track != Track::ByFlow || m.flow == 0 {
            self.turn();
        }
        self.state.rates.lock(self.state.hash(key)).allow_at(key, rule, m)
    }

    /// A `rate_filter` counts a match; the action it takes instead, if any.
    pub fn filter(&self, f: &RateFilter, sid: u32, gid: u32, m: MatchSubject) -> Option<NewAction> {
        let key = RateKey::new(f.track, true, sid, gid, &m);
        if f.track != Track::ByFlow || m.flow == 0 {
            self.turn();
        }
        self.state.filters.lock(self.state.hash(key)).apply_at(key, f, m)
    }

    /// Every `isset`/`isnotset` in `tests` holds for a packet from `src` to `dst`.
    pub fn bits_hold(&self, tests: &[HostBitOp<u64>], src: IpAddr, dst: IpAddr, ts: Timestamp) -> bool {
        self.turn();
        tests.iter().all(|t| {
            let shard = self.state.hash(BitKey::of(t, src, dst).host());
            self.state.bits.lock(shard).test(t, src, dst, ts)
        })
    }

    /// Applies a matching signature's `set`/`unset`/`toggle`s.
    pub fn apply_bits(&self, actions: &[HostBitOp<u64>], src: IpAddr, dst: IpAddr, ts: Timestamp) {
        self.turn();
        for a in actions {
            let shard = self.state.hash(BitKey::of(a, src, dst).host());
            self.state.bits.lock(shard).apply(a, src, dst, ts);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::threshold::RateKind;

    fn subject(src: u8, ts: i64) -> MatchSubject {
        MatchSubject {
            src: Some(IpAddr::from([198, 18, 0, src])),
            dst: Some(IpAddr::from([198, 18, 1, 1])),
            flow: u64::from(src),
            ts: Timestamp::from_micros(ts, 0),
        }
    }

    #[test]
    fn two_workers_count_in_one_tracker() {
        let shared = HostState::new_shared();
        let (a, b) = (Hosts::shared(shared.clone()), Hosts::shared(shared));
        let limit = RateRule { kind: RateKind::Limit, track: Track::BySrc, count: 1, seconds: 60, multiplier: 1 };
        assert!(a.allow(&limit, 1, 1, subject(1, 0)));
        assert!(!b.allow(&limit, 1, 1, subject(1, 1)), "the other worker's match counted");
        assert!(b.allow(&limit, 1, 1, subject(2, 1)), "another source");
    }

    #[test]
    fn a_bit_set_by_one_worker_is_seen_by_another() {
        let shared = HostState::new_shared();
        let (a, b) = (Hosts::shared(shared.clone()), Hosts::shared(shared));
        let op = |cmd| HostBitOp {
            name: crate::hostbits::bit_id("x"),
            track: crate::hostbits::Track::Src,
            cmd,
            expire_secs: 30,
        };
        let (src, dst) = (IpAddr::from([198, 18, 0, 1]), IpAddr::from([198, 18, 0, 2]));
        let t = Timestamp::from_micros(5, 0);
        use vigil_rules::keywords::flow::BitCmd;
        assert!(!b.bits_hold(&[op(BitCmd::IsSet)], src, dst, t));
        a.apply_bits(&[op(BitCmd::Set)], src, dst, t);
        assert!(b.bits_hold(&[op(BitCmd::IsSet)], src, dst, t));
    }

    #[test]
    fn the_sequencer_hands_out_turns_in_capture_order() {
        // Two threads race over frames 1..=400, each owning every other one,
        // and log each frame's turn; the log must come out in frame order.
        let seq = Sequencer::new(2);
        let shared = HostState::new_shared();
        let log = Arc::new(Mutex::new(Vec::new()));
        std::thread::scope(|s| {
            for me in 0..2usize {
                let (seq, log) = (seq.clone(), log.clone());
                let hosts = Hosts::shared(shared.clone()).in_order(seq.clone(), me);
                s.spawn(move || {
                    for frame in 1..=400u64 {
                        seq.at(me, frame, Phase::Time);
                        if frame as usize % 2 == me {
                            seq.at(me, frame, Phase::Packet);
                            if me == 1 && frame % 7 == 0 {
                                // The odd worker dawdles now and then.
                                std::thread::sleep(std::time::Duration::from_micros(200));
                            }
                            hosts.turn();
                            log.lock().unwrap().push(frame);
                        }
                    }
                    seq.done(me);
                });
            }
        });
        let log = log.lock().unwrap();
        assert_eq!(*log, (1..=400).collect::<Vec<u64>>());
        assert!(!seq.waiting());
    }

    #[test]
    fn a_worker_never_moves_back() {
        let seq = Sequencer::new(2);
        seq.at(1, 11, Phase::Time);
        // A reader's late word about an earlier frame changes nothing.
        seq.at(1, 10, Phase::Time);
        seq.at(0, 10, Phase::Packet);
        assert!(seq.others_past(0, order_key(10, Phase::Packet, 0)));
    }

    #[test]
    fn a_worker_done_holds_nobody_back() {
        let seq = Sequencer::new(3);
        seq.at(0, 10, Phase::Packet);
        seq.done(1);
        seq.at(2, 10, Phase::Time);
        // Worker 2 is at an earlier phase of frame 10: worker 0 waits for it.
        assert!(!seq.others_past(0, order_key(10, Phase::Packet, 0)));
        seq.at(2, 11, Phase::Time);
        assert!(seq.others_past(0, order_key(10, Phase::Packet, 0)));
        assert!(order_key(END_FRAME + 5, Phase::Time, 0) > order_key(END_FRAME - 1, Phase::Packet, 9));
    }
}
