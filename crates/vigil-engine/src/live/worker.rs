//! A live worker thread: it owns one capture socket (or queue) and one lane
//! of the pipeline, so a packet goes from the kernel to its verdict on one
//! thread. Between frames it answers the coordinator (counters, new rules,
//! stop). With no traffic it still moves its clock on, so flows time out on
//! a quiet link.

use super::source::{KernelCounters, Source};
use crate::error::EngineError;
use crate::lane::{Lane, LaneEnd};
use crate::rules::LoadedRules;
use crate::setup::Setup;
use crate::worker::ClockAt;
use std::sync::mpsc::{Receiver, Sender, TryRecvError};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use vigil_types::Timestamp;

/// How long a worker waits for a frame before it looks at its messages.
const POLL: Duration = Duration::from_millis(50);

pub(crate) type Counters = Vec<(String, u64)>;

pub(crate) enum Ctl {
    /// Send your counters (every frame read so far inspected).
    Report(Sender<(usize, Counters, KernelCounters)>),
    /// Inspect the frames after this with these rules.
    Rules(Arc<LoadedRules>),
    /// Stop reading: what the kernel already holds is inspected (and gets
    /// its verdict), then the lane ends.
    Stop,
}

pub(crate) struct LiveWorker {
    pub index: usize,
    pub lane: Lane,
    pub src: Source,
    /// Validate checksums (unless the kernel says they are not filled in).
    pub validate: bool,
    /// Where `reject` refusals go when the source cannot send them itself.
    pub raw: Option<Arc<vigil_capture::RawIpSender>>,
    /// `--reject-dev`: refusals go out of this interface at layer 2.
    pub reject_dev: Option<Arc<vigil_capture::AfPacketTx>>,
}

/// Bytes of a frame kept for a `--reject-dev` refusal's link header
/// (Ethernet with two VLAN tags fits).
const LINK_HEADER_COPY: usize = 64;

/// What a worker hands back when it ends.
pub(crate) struct WorkerEnd {
    pub lane: LaneEnd,
    pub kernel: KernelCounters,
}

impl LiveWorker {
    pub(crate) fn run(mut self, setup: &Setup, ctl: Receiver<Ctl>) -> Result<WorkerEnd, EngineError> {
        let mut tenth = 0i64;
        // The bridge sends on what it inspected: the frame is kept for that.
        let mut copy = Vec::new();
        loop {
            match ctl.try_recv() {
                Ok(Ctl::Report(to)) => {
                    let _ = to.send((self.index, self.lane.counters(setup), self.src.counters()));
                    continue;
                }
                Ok(Ctl::Rules(rules)) => {
                    self.lane.worker.swap_rules(rules);
                    continue;
                }
                Ok(Ctl::Stop) | Err(TryRecvError::Disconnected) => break,
                Err(TryRecvError::Empty) => {}
            }
            if !self.step(POLL, &mut tenth, &mut copy)? {
                // Quiet: the clock moves on anyway, and waiting records go out.
                self.src.flush()?;
                self.lane.worker.tick(ClockAt::at(wall_clock()), &mut self.lane.outputs)?;
                self.lane.outputs.poll()?;
            }
        }
        // Drain what the kernel already queued: inline, every packet gets a verdict.
        while self.step(Duration::ZERO, &mut tenth, &mut copy)? {}
        self.src.flush()?;
        let kernel = self.src.counters();
        let lane = self.lane.finish(setup, None)?;
        Ok(WorkerEnd { lane, kernel })
    }

    /// Reads and inspects one frame; false when none came within `wait`.
    /// `tenth`: the last tenth of a second (packet time) seen.
    fn step(&mut self, wait: Duration, tenth: &mut i64, copy: &mut Vec<u8>) -> Result<bool, EngineError> {
        let inline = self.src.inline();
        let Some(f) = self.src.next(wait)? else { return Ok(false) };
        let raw = f.raw;
        // Live packet time is the kernel's clock: it paces the flow clock and
        // the outputs' flush checks without reading a clock per packet.
        let now = raw.ts.secs() * 10 + i64::from(raw.ts.subsec_micros() / 100_000);
        if now > *tenth {
            if now / 10 > *tenth / 10 {
                self.lane.worker.tick(ClockAt::at(raw.ts), &mut self.lane.outputs)?;
            }
            *tenth = now;
            self.lane.outputs.poll()?;
        }
        // The bridge sends the frame on (and answers a refusal in its link
        // header); with `--reject-dev`, a refusal needs the link header too.
        if inline {
            copy.clear();
            copy.extend_from_slice(raw.data);
        } else if self.reject_dev.is_some() {
            copy.clear();
            copy.extend_from_slice(&raw.data[..raw.data.len().min(LINK_HEADER_COPY)]);
        }
        let validate = self.validate && !f.csum_not_ready;
        // Live frames have no number in a file: EVE leaves `pcap_cnt` out.
        self.lane.frame(raw.data, raw.ts, raw.linktype, 0, validate)?;
        let drop = self.lane.worker.detector.verdict_drop;
        let responses = std::mem::take(&mut self.lane.worker.detector.responses);
        if !responses.is_empty() {
            self.src.respond(copy, &responses, self.raw.as_deref(), self.reject_dev.as_deref());
        }
        self.src.done(copy, drop)?;
        Ok(true)
    }
}

fn wall_clock() -> Timestamp {
    let d = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    Timestamp::from_secs_nanos(d.as_secs() as i64, d.subsec_nanos())
}
