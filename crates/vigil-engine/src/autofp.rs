//! The autofp runmode for captures: the reading thread spreads frames over
//! worker threads by [`dispatch_hash`] (every packet of a flow, both
//! directions, its fragments and its tunnel reach one worker), in batches
//! over bounded rings. A full ring makes the reader wait: offline, no packet
//! is ever dropped.
//!
//! Workers keep packet time as the single runmode does: when the capture
//! enters a new second, every worker is told (a tick, in ring order after the
//! frames before it), so flows time out at the same packet on every runmode
//! and thread count, not whenever a quiet worker happens to see traffic.
//!
//! Host state (thresholds, host bits) is shared and taken in capture order
//! ([`vigil_detect::host_state::Sequencer`]). A worker with nothing queued
//! cannot say it is past a frame by itself: while one waits for its turn,
//! the reader hands out what it holds and tells idle workers how far the
//! capture has been read.

use crate::error::EngineError;
use crate::lane::Dispatch;
use crate::lane::{spawn_worker, Ended, Lane, LaneEnd};
use crate::outputs::Outputs;
use crate::rules::LoadedRules;
use crate::setup::Setup;
use crate::stats;
use crate::stats::{with_capture, write_stats};
use crate::worker::ClockAt;
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender, TrySendError};
use std::sync::Arc;
use std::thread::{Scope, ScopedJoinHandle};
use vigil_capture::RawPacket;
use vigil_decode::dispatch_hash;
use vigil_detect::host_state::{Phase, Place, Sequencer, END_FRAME};
use vigil_types::{LinkType, Timestamp};

/// Frames per batch: enough that ring traffic costs little per packet.
const BATCH_FRAMES: usize = 64;
/// Bytes per batch, for captures of large frames.
const BATCH_BYTES: usize = 256 * 1024;

struct Frame {
    at: usize,
    len: usize,
    ts: Timestamp,
    /// The reader's capture clock when it read the frame.
    clock: ClockAt,
    linktype: LinkType,
    pcap_cnt: u64,
    validate: bool,
}

/// Frames bound for one worker, their bytes in one buffer (reused).
#[derive(Default)]
struct Batch {
    data: Vec<u8>,
    frames: Vec<Frame>,
}

enum Msg {
    Frames(Batch),
    /// The capture's clock reached this time, at this frame.
    Tick(ClockAt, u64),
    /// Every frame for you before this one was sent.
    Pos(u64),
    /// Send your counters: every frame sent before this has been inspected.
    Report(Sender<(usize, Counters)>),
    /// Inspect the frames after this with these rules.
    Rules(Arc<LoadedRules>),
}

type Counters = Vec<(String, u64)>;

pub(crate) struct Autofp<'scope> {
    rings: Vec<SyncSender<Msg>>,
    filling: Vec<Batch>,
    /// Emptied batches coming back from the workers.
    spare: Receiver<Batch>,
    workers: Vec<ScopedJoinHandle<'scope, Result<LaneEnd, EngineError>>>,
    /// For stats records, which merge every worker's counters.
    outputs: Outputs,
    second: Option<u64>,
    /// The capture clock (captures are not always in order, and one broken
    /// timestamp does not move it).
    clock: vigil_flow::CaptureClock,
    /// Live capture's policy: a full ring drops the batch (counted) instead
    /// of making the reader wait.
    drop_when_full: bool,
    dropped: u64,
    /// Each worker's counters at the last report, for `stats.threads`.
    threads: Vec<(String, Counters)>,
    /// The rules the workers run, for the stats record's rule counts.
    rules: Arc<LoadedRules>,
    /// Capture order for host state, with several workers.
    seq: Option<Arc<Sequencer>>,
    /// The frame being dispatched (or the last one, between frames).
    frame_no: u64,
}

impl<'scope> Autofp<'scope> {
    /// Starts `workers` worker threads in `scope`.
    pub(crate) fn start<'env>(
        scope: &'scope Scope<'scope, 'env>,
        setup: &'env Setup,
        workers: usize,
        outputs: Outputs,
        drop_when_full: bool,
    ) -> Result<Self, EngineError> {
        let workers = workers.max(1);
        // `max-pending-packets` bounds what is in flight, shared over the rings.
        let ring = (setup.config.runtime.max_pending_packets as usize / BATCH_FRAMES / workers).clamp(1, 1024);
        let (give_back, spare) = channel();
        let seq = (workers > 1).then(|| Sequencer::new(workers));
        // Every place exists before any worker starts: one that fails to
        // start drops its own, so no other waits for it.
        let mut places: Vec<Option<Place>> =
            (0..workers).map(|i| seq.as_ref().map(|s| Place::new(s.clone(), i))).collect();
        let mut rings = Vec::with_capacity(workers);
        let mut handles = Vec::with_capacity(workers);
        for (i, slot) in places.iter_mut().enumerate() {
            let (tx, rx) = sync_channel(ring);
            rings.push(tx);
            let mut lane = Lane::new(setup, workers, outputs.share_for(i));
            let place = slot.take();
            if let Some(s) = &seq {
                lane.worker.in_order(s.clone(), i);
            }
            let give_back = give_back.clone();
            let handle = spawn_worker(scope, setup, i, move || work(setup, lane, place, rx, give_back, i))?;
            handles.push(handle);
        }
        Ok(Autofp {
            rings,
            filling: (0..workers).map(|_| Batch::default()).collect(),
            spare,
            workers: handles,
            outputs,
            second: None,
            clock: vigil_flow::CaptureClock::default(),
            drop_when_full,
            dropped: 0,
            threads: Vec::new(),
            rules: setup.rules.clone(),
            seq,
            frame_no: 0,
        })
    }

    fn send(&mut self, i: usize, msg: Msg) -> Result<(), EngineError> {
        // A worker that stopped (its outputs failed) says why when joined.
        let stopped = || EngineError::Usage(format!("worker {} stopped", i + 1));
        let Some(seq) = self.seq.clone() else {
            return self.rings[i].send(msg).map_err(|_| stopped());
        };
        // Worker i's ring is full. It may be waiting for its turn behind a
        // worker that is idle only because of what this reader holds: the
        // reader must not just block.
        let mut msg = msg;
        let mut tries = 0u32;
        loop {
            match self.rings[i].try_send(msg) {
                Ok(()) => return Ok(()),
                Err(TrySendError::Disconnected(_)) => return Err(stopped()),
                Err(TrySendError::Full(m)) => msg = m,
            }
            if seq.waiting() {
                self.nudge(Some(i));
            }
            tries += 1;
            if tries < 16 {
                std::thread::yield_now();
            } else {
                std::thread::sleep(std::time::Duration::from_micros(50));
            }
        }
    }

    /// Hands each worker but `skip` what it has pending and, where that
    /// went, tells it every frame of its before the one in hand was sent;
    /// never waits on a ring.
    fn nudge(&mut self, skip: Option<usize>) {
        for j in 0..self.rings.len() {
            if Some(j) == skip {
                continue;
            }
            if !self.filling[j].frames.is_empty() {
                let fresh = self.spare.try_recv().unwrap_or_default();
                let batch = std::mem::replace(&mut self.filling[j], fresh);
                if let Err(TrySendError::Full(Msg::Frames(b)) | TrySendError::Disconnected(Msg::Frames(b))) =
                    self.rings[j].try_send(Msg::Frames(batch))
                {
                    // Still queued: it is busy, not idle.
                    let spare = std::mem::replace(&mut self.filling[j], b);
                    drop(spare);
                    continue;
                }
            }
            // A full ring is a worker with work to do.
            let _ = self.rings[j].try_send(Msg::Pos(self.frame_no));
        }
    }

    fn send_batch(&mut self, i: usize) -> Result<(), EngineError> {
        if self.filling[i].frames.is_empty() {
            return Ok(());
        }
        let fresh = self.spare.try_recv().unwrap_or_default();
        let batch = std::mem::replace(&mut self.filling[i], fresh);
        if !self.drop_when_full {
            return self.send(i, Msg::Frames(batch));
        }
        match self.rings[i].try_send(Msg::Frames(batch)) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(Msg::Frames(mut lost))) => {
                self.dropped += lost.frames.len() as u64;
                lost.frames.clear();
                lost.data.clear();
                self.filling[i] = lost;
                Ok(())
            }
            Err(_) => Err(EngineError::Usage(format!("worker {} stopped", i + 1))),
        }
    }

    /// Every worker gets what is pending, then the time (at `frame`).
    fn tick(&mut self, at: ClockAt, frame: u64) -> Result<(), EngineError> {
        for i in 0..self.rings.len() {
            self.send_batch(i)?;
            self.send(i, Msg::Tick(at, frame))?;
        }
        Ok(())
    }
}

/// A worker thread: frames, ticks and reports in ring order, then its flows end.
fn work(
    setup: &Setup,
    mut lane: Lane,
    place: Option<Place>,
    rx: Receiver<Msg>,
    give_back: Sender<Batch>,
    index: usize,
) -> Result<LaneEnd, EngineError> {
    let at = |frame: u64, phase: Phase| {
        if let Some(p) = &place {
            p.at(frame, phase);
        }
    };
    for msg in rx {
        match msg {
            Msg::Tick(clock, frame) => {
                at(frame, Phase::Time);
                lane.worker.tick(clock, &mut lane.outputs)?;
            }
            Msg::Pos(frame) => at(frame, Phase::Time),
            Msg::Rules(rules) => lane.worker.swap_rules(rules),
            Msg::Report(to) => {
                // The reader waits for every worker; it may only be gone on an error.
                let _ = to.send((index, lane.counters(setup)));
            }
            Msg::Frames(mut batch) => {
                for f in &batch.frames {
                    at(f.pcap_cnt, Phase::Packet);
                    let data = &batch.data[f.at..f.at + f.len];
                    lane.frame_at(data, f.ts, f.linktype, f.pcap_cnt, f.validate, Some(f.clock))?;
                }
                batch.data.clear();
                batch.frames.clear();
                // The reader may be gone already; the batch is then just freed.
                let _ = give_back.send(batch);
            }
        }
    }
    at(END_FRAME, Phase::Time);
    lane.finish(setup, None)
}

impl Dispatch for Autofp<'_> {
    fn frame(&mut self, raw: &RawPacket<'_>, pcap_cnt: u64, validate: bool) -> Result<(), EngineError> {
        self.frame_no = pcap_cnt;
        if self.seq.as_ref().is_some_and(|s| s.waiting()) {
            self.nudge(None);
        }
        // The capture clock, which one broken timestamp does not move.
        let now = ClockAt::observe(&mut self.clock, raw.ts);
        let sec = now.clock.secs() as u64;
        if self.second.is_some_and(|s| sec > s) {
            self.tick(now, pcap_cnt)?;
        }
        if self.second.is_none_or(|s| sec > s) {
            self.second = Some(sec);
        }
        let n = self.rings.len() as u64;
        let i = ((u64::from(dispatch_hash(raw.data, raw.linktype)) * n) >> 32) as usize;
        let b = &mut self.filling[i];
        b.frames.push(Frame {
            at: b.data.len(),
            len: raw.data.len(),
            ts: raw.ts,
            clock: now,
            linktype: raw.linktype,
            pcap_cnt,
            validate,
        });
        b.data.extend_from_slice(raw.data);
        if b.frames.len() >= BATCH_FRAMES || b.data.len() >= BATCH_BYTES {
            self.send_batch(i)?;
        }
        Ok(())
    }

    fn counters(&mut self, received: u64) -> Result<Counters, EngineError> {
        // Every worker drains what it was sent, then reports: the counters
        // count each packet read so far exactly once.
        let (to, reports) = channel();
        for i in 0..self.rings.len() {
            self.send_batch(i)?;
            // Past every frame read: a worker waiting for its turn gets it,
            // and so reports.
            self.send(i, Msg::Pos(self.frame_no + 1))?;
            self.send(i, Msg::Report(to.clone()))?;
        }
        drop(to);
        let (all, threads) = stats::gather(reports.iter().collect(), self.rings.len())?;
        self.threads = threads;
        Ok(with_capture(all, received, self.dropped))
    }

    fn threads(&self) -> Vec<(String, Counters)> {
        self.threads.clone()
    }

    fn dropped(&self) -> u64 {
        self.dropped
    }

    fn idle(&mut self) -> Result<(), EngineError> {
        // A worker waiting for its turn behind an idle one would otherwise
        // hold its alerts until the next file comes.
        if self.seq.as_ref().is_some_and(|s| s.waiting()) {
            for i in 0..self.rings.len() {
                self.send_batch(i)?;
                self.send(i, Msg::Pos(self.frame_no + 1))?;
            }
        }
        Ok(())
    }

    fn stats(&mut self, ts: Timestamp, uptime: u64, received: u64) -> Result<(), EngineError> {
        let all = self.counters(received)?;
        write_stats(&mut self.outputs, &all, &self.threads, ts, uptime, &self.rules)?;
        self.outputs.finish().map(|_| ())
    }

    fn swap_rules(&mut self, rules: Arc<LoadedRules>) -> Result<(), EngineError> {
        // Every worker switches at the same frame: the one after this point.
        for i in 0..self.rings.len() {
            self.send_batch(i)?;
            self.send(i, Msg::Rules(rules.clone()))?;
        }
        self.rules = rules;
        Ok(())
    }

    fn finish(mut self: Box<Self>, ts: Timestamp, uptime: u64, received: u64) -> Result<LaneEnd, EngineError> {
        // The end drains cleanly: what was read and is still pending is
        // delivered, whatever the live policy did with full rings before.
        self.drop_when_full = false;
        // The end of the capture reaches every worker, as it would one thread.
        let sent = self.tick(ClockAt::end(&self.clock), END_FRAME);
        let Autofp { rings, workers, mut outputs, dropped, rules, .. } = *self;
        drop(rings);
        let mut ended = Ended::default();
        for (i, w) in workers.into_iter().enumerate() {
            ended.add(i, w.join());
        }
        let Ended { mut end, threads, error } = ended;
        if let Some(e) = error {
            return Err(e);
        }
        sent?;
        write_stats(
            &mut outputs,
            &with_capture(end.counters.clone(), received, dropped),
            &threads,
            ts,
            uptime,
            &rules,
        )?;
        end.records += outputs.finish()?;
        outputs.close_sinks();
        Ok(end)
    }
}
