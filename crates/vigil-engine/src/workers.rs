//! The workers runmode for captures: every worker reads the files itself and
//! inspects the frames whose [`dispatch_hash`] is its own (the same split as
//! autofp: every packet of a flow, both directions, its fragments and its
//! tunnel reach one worker). No frame is handed from one core to another, and
//! no reader thread competes with the workers for the cores; each skips the
//! frames of the others after hashing them, which costs a small share of
//! what inspecting them does.
//!
//! The reading thread is worker 0: it keeps `run::read`'s duties (progress,
//! stats on the interval and on request, the control socket, rule reloads)
//! and asks the other workers, which answer between frames. Time moves as in
//! autofp: every worker sees every frame's time, and ticks its flows at each
//! new second of the capture, so flows end at the same packet whatever the
//! runmode. A stats record taken mid-run adds up what each worker had
//! inspected when it answered; the final one is exact.
//!
//! Host state (thresholds, host bits) is shared and taken in capture order
//! ([`vigil_detect::host_state::Sequencer`]): each worker says which frame
//! it is at, so one that reaches a threshold waits for the others to catch
//! up to that frame, and every thread count alerts alike.

use crate::checksum::ChecksumState;
use crate::error::EngineError;
use crate::lane::Dispatch;
use crate::lane::{spawn_worker, Ended, Lane, LaneEnd};
use crate::outputs::Outputs;
use crate::rules::LoadedRules;
use crate::setup::Setup;
use crate::stats;
use crate::stats::{with_capture, write_stats};
use crate::worker::ClockAt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread::{Scope, ScopedJoinHandle};
use vigil_capture::{PcapFile, RawPacket, Source};
use vigil_decode::{dispatch_hash, DecodeConfig, Decoder};
use vigil_detect::host_state::{Phase, Place, Sequencer, END_FRAME};
use vigil_types::Timestamp;

type Counters = Vec<(String, u64)>;

/// Frames between two looks at the message channel.
const POLL_EVERY: u64 = 256;

enum Msg {
    /// Send your counters.
    Report(Sender<(usize, Counters)>),
    /// Inspect from now on with these rules.
    Rules(Arc<LoadedRules>),
}

/// Which of `n` workers owns a frame.
fn owner(raw: &RawPacket<'_>, n: usize) -> usize {
    ((u64::from(dispatch_hash(raw.data, raw.linktype)) * n as u64) >> 32) as usize
}

/// A worker's clock: the capture clock (which a lone broken timestamp
/// does not move) and the second last ticked.
#[derive(Default)]
struct Clock {
    second: Option<u64>,
    /// The clock at the latest frame.
    latest: ClockAt,
    capture: vigil_flow::CaptureClock,
}

impl Clock {
    /// The frame's time; true when the clock enters a new second (time to tick).
    fn advance(&mut self, ts: Timestamp) -> bool {
        self.latest = ClockAt::observe(&mut self.capture, ts);
        let sec = self.latest.clock.secs() as u64;
        let tick = self.second.is_some_and(|s| sec > s);
        if self.second.is_none_or(|s| sec > s) {
            self.second = Some(sec);
        }
        tick
    }
}

/// The reading thread's side: its own lane, and the other workers.
pub(crate) struct Workers<'scope> {
    lane: Lane,
    workers: usize,
    clock: Clock,
    senders: Vec<Sender<Msg>>,
    handles: Vec<ScopedJoinHandle<'scope, Result<LaneEnd, EngineError>>>,
    /// Each worker's counters at the last report, for `stats.threads`.
    threads: Vec<(String, Counters)>,
    rules: Arc<LoadedRules>,
    setup: &'scope Setup,
    /// Where stats records go (the lanes write theirs through shares of it).
    outputs: Outputs,
    /// Worker 0's place in capture order, with several workers.
    place: Option<Place>,
    /// Each worker's counters as it last reported them, for a record taken
    /// while it waits for worker 0 to catch up (it cannot answer then).
    last_reports: Vec<Option<Counters>>,
}

impl<'scope> Workers<'scope> {
    /// Starts workers 1..`workers` on `files`; the caller's thread is worker 0.
    pub(crate) fn start<'env: 'scope>(
        scope: &'scope Scope<'scope, 'env>,
        setup: &'env Setup,
        files: &'env [PathBuf],
        workers: usize,
        outputs: Outputs,
        control: crate::control::Control,
    ) -> Result<Self, EngineError> {
        let workers = workers.max(1);
        // A stop request reaches every worker at once (each stops at its next frame).
        let stop = control.stop_flag();
        let seq = (workers > 1).then(|| Sequencer::new(workers));
        // Every place exists before any worker starts: one that fails to
        // start drops its own (and worker 0's), so no other waits for it.
        let mut places: Vec<Option<Place>> =
            (0..workers).map(|i| seq.as_ref().map(|s| Place::new(s.clone(), i))).collect();
        let lane = |i: usize, place: Option<Place>| {
            let mut lane = Lane::new(setup, workers, outputs.share_for(i));
            if let Some(p) = &place {
                lane.worker.in_order(p.sequencer().clone(), i);
            }
            (lane, place)
        };
        let mut senders = Vec::new();
        let mut handles = Vec::new();
        for (i, slot) in places.iter_mut().enumerate().skip(1) {
            let (tx, rx) = channel();
            senders.push(tx);
            let (lane, place) = lane(i, slot.take());
            let stop = stop.clone();
            let handle =
                spawn_worker(scope, setup, i, move || read_own(setup, files, lane, place, i, workers, rx, &stop))?;
            handles.push(handle);
        }
        let (lane, place) = lane(0, places[0].take());
        Ok(Workers {
            lane,
            place,
            last_reports: vec![None; workers],
            workers,
            clock: Clock::default(),
            senders,
            handles,
            threads: Vec::new(),
            rules: setup.rules.clone(),
            setup,
            outputs,
        })
    }
}

/// Worker `me` of `n`: reads every file, inspects its own frames, answers
/// messages between frames, then (input done) until the reading thread is.
#[allow(clippy::too_many_arguments)]
fn read_own(
    setup: &Setup,
    files: &[PathBuf],
    mut lane: Lane,
    place: Option<Place>,
    me: usize,
    n: usize,
    rx: Receiver<Msg>,
    stop: &AtomicBool,
) -> Result<LaneEnd, EngineError> {
    let mut clock = Clock::default();
    // The same checksum decision as the reading thread: same frames, same order.
    let mut checksum = ChecksumState::new(setup.checksum);
    let mut sampler = Decoder::new(DecodeConfig { validate_checksums: true, ..setup.decode.clone() });
    let mut pcap_cnt = 0u64;
    let handle = |msg: Msg, lane: &mut Lane| match msg {
        Msg::Report(to) => {
            // The reading thread waits for every worker; it may only be gone on an error.
            let _ = to.send((me, lane.counters(setup)));
        }
        Msg::Rules(rules) => lane.worker.swap_rules(rules),
    };
    'files: for file in files {
        // The reading thread reports files it cannot read.
        let Ok(mut src) = PcapFile::open(file) else { continue };
        while let Some(Ok(raw)) = src.next_packet() {
            if stop.load(Ordering::Relaxed) {
                break 'files;
            }
            pcap_cnt += 1;
            if checksum.deciding() {
                let p = sampler.decode(raw.data, raw.ts, raw.linktype, pcap_cnt);
                checksum.observe(&p);
            }
            if let Some(p) = &place {
                p.at(pcap_cnt, Phase::Time);
            }
            if clock.advance(raw.ts) {
                lane.worker.tick(clock.latest, &mut lane.outputs)?;
            }
            if owner(&raw, n) == me {
                if let Some(p) = &place {
                    p.at(pcap_cnt, Phase::Packet);
                }
                lane.frame_at(raw.data, raw.ts, raw.linktype, pcap_cnt, checksum.validating, Some(clock.latest))?;
            }
            if pcap_cnt.is_multiple_of(POLL_EVERY) {
                while let Ok(msg) = rx.try_recv() {
                    handle(msg, &mut lane);
                }
            }
        }
    }
    // Input done: nothing before the end is left to this worker.
    if let Some(p) = &place {
        p.at(END_FRAME, Phase::Time);
    }
    for msg in rx {
        handle(msg, &mut lane);
    }
    lane.worker.tick(ClockAt::end(&clock.capture), &mut lane.outputs)?;
    lane.finish(setup, None)
}

impl Dispatch for Workers<'_> {
    fn frame(&mut self, raw: &RawPacket<'_>, pcap_cnt: u64, validate: bool) -> Result<(), EngineError> {
        if let Some(p) = &self.place {
            p.at(pcap_cnt, Phase::Time);
        }
        if self.clock.advance(raw.ts) {
            self.lane.worker.tick(self.clock.latest, &mut self.lane.outputs)?;
        }
        if owner(raw, self.workers) == 0 {
            if let Some(p) = &self.place {
                p.at(pcap_cnt, Phase::Packet);
            }
            self.lane.frame_at(raw.data, raw.ts, raw.linktype, pcap_cnt, validate, Some(self.clock.latest))?;
        }
        Ok(())
    }

    fn counters(&mut self, _received: u64) -> Result<Counters, EngineError> {
        let (to, reports) = channel();
        for s in &self.senders {
            // A worker that stopped (its outputs failed) says why when joined.
            let _ = s.send(Msg::Report(to.clone()));
        }
        drop(to);
        let mut fresh: Vec<Option<Counters>> = vec![None; self.workers];
        fresh[0] = Some(self.lane.counters(self.setup));
        let mut missing = self.workers - 1;
        let mut waited_out = false;
        while missing > 0 {
            match reports.recv_timeout(std::time::Duration::from_millis(5)) {
                Ok((i, c)) => {
                    fresh[i] = Some(c);
                    missing -= 1;
                }
                // A worker waiting for this one to reach a later frame
                // cannot answer before it does: it counts as it last did
                // (nothing yet, if it never answered).
                Err(RecvTimeoutError::Timeout) if self.place.as_ref().is_some_and(|p| p.sequencer().waiting()) => {
                    waited_out = true;
                    break;
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        let zeros: Counters = fresh[0].iter().flatten().map(|(k, _)| (k.clone(), 0)).collect();
        let mut by_worker: Vec<(usize, Counters)> = Vec::new();
        for (i, c) in fresh.into_iter().enumerate() {
            match c {
                Some(c) => {
                    self.last_reports[i] = Some(c.clone());
                    by_worker.push((i, c));
                }
                None if waited_out => {
                    by_worker.push((i, self.last_reports[i].clone().unwrap_or_else(|| zeros.clone())))
                }
                // It stopped: gathering says so.
                None => {}
            }
        }
        let (all, threads) = stats::gather(by_worker, self.workers)?;
        self.threads = threads;
        // Each worker counts the frames it inspected: what was received is
        // what they add up to (nothing is dropped reading files).
        let inspected = stats::get(&all, "decoder.pkts");
        Ok(with_capture(all, inspected, 0))
    }

    fn threads(&self) -> Vec<(String, Counters)> {
        self.threads.clone()
    }

    fn dropped(&self) -> u64 {
        0
    }

    fn stats(&mut self, ts: Timestamp, uptime: u64, received: u64) -> Result<(), EngineError> {
        let all = self.counters(received)?;
        write_stats(&mut self.outputs, &all, &self.threads, ts, uptime, &self.rules)?;
        self.outputs.finish().map(|_| ())
    }

    fn swap_rules(&mut self, rules: Arc<LoadedRules>) -> Result<(), EngineError> {
        for s in &self.senders {
            let _ = s.send(Msg::Rules(rules.clone()));
        }
        self.lane.worker.swap_rules(rules.clone());
        self.rules = rules;
        Ok(())
    }

    fn finish(self: Box<Self>, ts: Timestamp, uptime: u64, _received: u64) -> Result<LaneEnd, EngineError> {
        let Workers { mut lane, clock, senders, handles, rules, setup, mut outputs, place, .. } = *self;
        drop(senders);
        if let Some(p) = &place {
            p.at(END_FRAME, Phase::Time);
        }
        // The latest time reaches this worker's flows, as it reaches the others'.
        let ticked = lane.worker.tick(ClockAt::end(&clock.capture), &mut lane.outputs);
        let mut ended = Ended::default();
        ended.add(0, Ok(ticked.and_then(|()| lane.finish(setup, None))));
        drop(place);
        for (i, h) in handles.into_iter().enumerate() {
            ended.add(i + 1, h.join());
        }
        let Ended { mut end, threads, error } = ended;
        if let Some(e) = error {
            return Err(e);
        }
        let inspected = stats::get(&end.counters, "decoder.pkts");
        write_stats(&mut outputs, &with_capture(end.counters.clone(), inspected, 0), &threads, ts, uptime, &rules)?;
        end.records += outputs.finish()?;
        outputs.close_sinks();
        Ok(end)
    }
}
