//! One lane of the pipeline: a worker with its share of the outputs. The
//! single runmode runs one lane on the reading thread; autofp runs one per
//! worker thread.

use crate::error::EngineError;
use crate::outputs::Outputs;
use crate::rules::LoadedRules;
use crate::setup::Setup;
use crate::stats;
use crate::worker::Worker;
use std::sync::Arc;
use vigil_capture::RawPacket;
use vigil_types::{LinkType, Timestamp};

pub(crate) struct Lane {
    pub worker: Worker,
    pub outputs: Outputs,
}

/// What a lane reports when its input ends.
#[derive(Default)]
pub(crate) struct LaneEnd {
    /// Every counter, zeros included, in stats order.
    pub counters: Vec<(String, u64)>,
    pub records: u64,
    pub alerts: u64,
    pub flows: u64,
    pub reassembled: u64,
    pub invalid: u64,
    pub decode_events: u64,
}

impl Lane {
    /// A lane of a run with `lanes` of them.
    pub(crate) fn new(setup: &Setup, lanes: usize, outputs: Outputs) -> Lane {
        Lane { worker: Worker::new(setup, lanes), outputs }
    }

    /// Decodes and inspects one captured frame. `validate`: whether its
    /// checksums are checked (the reader's `auto` decision so far).
    pub(crate) fn frame(
        &mut self,
        data: &[u8],
        ts: Timestamp,
        linktype: LinkType,
        pcap_cnt: u64,
        validate: bool,
    ) -> Result<(), EngineError> {
        self.frame_at(data, ts, linktype, pcap_cnt, validate, None)
    }

    /// [`Lane::frame`] with the capture clock of a reader that sees every
    /// frame (`clock`), so a worker that sees only some of them times flows
    /// out as a single thread would.
    pub(crate) fn frame_at(
        &mut self,
        data: &[u8],
        ts: Timestamp,
        linktype: LinkType,
        pcap_cnt: u64,
        validate: bool,
        clock: Option<crate::worker::ClockAt>,
    ) -> Result<(), EngineError> {
        self.worker.decoder.set_validate_checksums(validate);
        let mut p = self.worker.decoder.decode(data, ts, linktype, pcap_cnt);
        self.worker.packet(&mut p, clock, &mut self.outputs)
    }

    /// Every counter of this lane (zeros included).
    pub(crate) fn counters(&self, setup: &Setup) -> Vec<(String, u64)> {
        let w = &self.worker;
        let all = stats::Counters {
            decode: &w.decoder.counters,
            flow: w.flows.counters(),
            defrag: w.defrag.counters(),
            stream: &w.stream,
            stream_events: &w.stream_events,
            app: &w.app_stats,
            detect: [w.detector.alerts, w.alert_queue_overflow(), w.detector.suppressed],
            lua: w.detector.scratch.lua.stats,
            exceptions: &w.detector.exceptions,
            drop_reasons: setup.ips.then_some(&w.detector.drop_reasons),
            ips_verdicts: setup.simulated_ips.then_some(w.ips_verdicts),
            firewall: setup.rules.firewall.is_some().then_some(w.detector.fw),
            file_store: self.outputs.file_store_counts(),
            byterange: self.outputs.byterange_counts(),
            sinks: self.outputs.sink_counts(),
            file_hold: self.outputs.hold_counts(),
            bypassed: w.bypassed,
            flow_ends: &w.flow_ends,
            memcap_pressure: {
                let now = w.memcap_pressure();
                w.pressure_max.set(w.pressure_max.get().max(now));
                (now, w.pressure_max.get())
            },
        };
        stats::counters(&all, &setup.config.stats, true)
    }

    /// End of input: every open flow ends and is logged, the outputs are
    /// flushed. `stats`: write a final stats record of this lane's counters
    /// (time, uptime, frames received) first.
    pub(crate) fn finish(
        mut self,
        setup: &Setup,
        stats: Option<(Timestamp, u64, u64)>,
    ) -> Result<LaneEnd, EngineError> {
        self.worker.finish(&mut self.outputs)?;
        let counters = self.counters(setup);
        if let Some((ts, uptime, received)) = stats {
            let all = crate::stats::with_capture(counters.clone(), received, 0);
            let threads = [(crate::stats::worker_name(0), counters.clone())];
            crate::stats::write_stats(&mut self.outputs, &all, &threads, ts, uptime, self.worker.detector.rules())?;
        }
        let records = self.outputs.finish()?;
        if stats.is_some() {
            // The run's last record is written: sinks may stop.
            self.outputs.close_sinks();
        }
        let w = &self.worker;
        Ok(LaneEnd {
            counters,
            records,
            alerts: w.detector.alerts,
            flows: w.flows.counters().total,
            reassembled: w.defrag.counters().ipv4_reassembled + w.defrag.counters().ipv6_reassembled,
            invalid: w.decoder.counters.get(vigil_decode::Counter::Invalid),
            decode_events: vigil_decode::DecodeEvent::ALL.iter().map(|&e| w.decoder.counters.event_count(e)).sum(),
        })
    }
}

impl LaneEnd {
    /// Adds another lane's results (counters matched by name).
    pub(crate) fn add(&mut self, other: LaneEnd) {
        stats::merge(&mut self.counters, &other.counters);
        self.records += other.records;
        self.alerts += other.alerts;
        self.flows += other.flows;
        self.reassembled += other.reassembled;
        self.invalid += other.invalid;
        self.decode_events += other.decode_events;
    }
}

/// What the lanes of a multi-threaded run ended with, gathered as they are
/// joined: their results merged, each worker's counters (for
/// `stats.threads`), and the first error, if any.
#[derive(Default)]
pub(crate) struct Ended {
    pub end: LaneEnd,
    pub threads: Vec<(String, Vec<(String, u64)>)>,
    pub error: Option<EngineError>,
}

impl Ended {
    /// Adds worker `i`'s (0-based) result, as its thread's join gave it.
    pub(crate) fn add(&mut self, i: usize, joined: std::thread::Result<Result<LaneEnd, EngineError>>) {
        match joined {
            Ok(Ok(lane)) => {
                self.threads.push((crate::stats::worker_name(i), lane.counters.clone()));
                self.end.add(lane);
            }
            Ok(Err(e)) => {
                self.error.get_or_insert(e);
            }
            Err(_) => {
                self.error.get_or_insert(EngineError::Usage(format!("worker {} panicked", i + 1)));
            }
        }
    }
}

/// Starts worker `i`'s (0-based) thread in `scope`, named as Suricata names
/// its workers and pinned where `threading` says.
pub(crate) fn spawn_worker<'scope, 'env, T: Send + 'scope>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    setup: &'env Setup,
    i: usize,
    work: impl FnOnce() -> T + Send + 'scope,
) -> Result<std::thread::ScopedJoinHandle<'scope, T>, EngineError> {
    std::thread::Builder::new()
        .name(crate::stats::worker_name(i))
        .spawn_scoped(scope, move || {
            if let Some(a) = &setup.affinity {
                crate::affinity::Affinity::pin(a.worker(i));
            }
            work()
        })
        .map_err(|e| EngineError::Usage(format!("cannot start worker thread {}: {e}", i + 1)))
}

/// Where the reader sends frames: a lane on its own thread, or workers.
pub(crate) trait Dispatch {
    /// One frame, numbered `pcap_cnt`; `validate`: check its checksums.
    fn frame(&mut self, raw: &RawPacket<'_>, pcap_cnt: u64, validate: bool) -> Result<(), EngineError>;
    /// Every counter so far, of every packet dispatched before, none in
    /// flight; `received`: frames read so far.
    fn counters(&mut self, received: u64) -> Result<Vec<(String, u64)>, EngineError>;
    /// Writes a stats record of every counter so far.
    fn stats(&mut self, ts: Timestamp, uptime: u64, received: u64) -> Result<(), EngineError>;
    /// Frames dropped because a worker ring was full (live policy only).
    fn dropped(&self) -> u64;
    /// Each worker's counters as the last [`Dispatch::counters`] had them.
    fn threads(&self) -> Vec<(String, Vec<(String, u64)>)>;
    /// Nothing to read for now (waiting for the next file): whatever is
    /// held back goes out, so no worker waits on it.
    fn idle(&mut self) -> Result<(), EngineError> {
        Ok(())
    }
    /// Inspects every frame dispatched from now on with `rules`.
    fn swap_rules(&mut self, rules: Arc<LoadedRules>) -> Result<(), EngineError>;
    /// End of input: every lane finishes, a last stats record is written
    /// (packet time, uptime); the lanes' results, merged.
    fn finish(self: Box<Self>, ts: Timestamp, uptime: u64, received: u64) -> Result<LaneEnd, EngineError>;
}
