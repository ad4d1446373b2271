//! Frames held in memory through the pipeline, for the traffic lab's offline
//! benchmark: a capture is read once and inspected many times, so file I/O
//! stays out of the measurement.

use crate::checksum::ChecksumState;
use crate::error::EngineError;
use crate::lane::Lane;
use crate::outputs::{OutputMode, Outputs};
use crate::setup::Setup;
use vigil_decode::{DecodeConfig, Decoder};
use vigil_types::{LinkType, Timestamp};

/// One captured frame, owned.
#[derive(Debug, Clone)]
pub struct MemFrame {
    pub ts: Timestamp,
    pub linktype: LinkType,
    pub data: Vec<u8>,
}

/// What one pass over the frames did.
#[derive(Debug, Clone, Default)]
pub struct MemRun {
    pub packets: u64,
    pub bytes: u64,
    pub alerts: u64,
    pub flows: u64,
    /// IP datagrams rebuilt from fragments.
    pub reassembled: u64,
    /// Every counter (zeros included) under its stats name, e.g. `decoder.vxlan`.
    pub counters: Vec<(String, u64)>,
}

/// Runs `frames` once through the pipeline as `run_setup` would a capture
/// holding them: one lane on the calling thread (the `single` runmode,
/// whatever `setup.runmode` says), checksums as `setup.checksum` says,
/// outputs (EVE, a last stats record) where `setup` puts them.
///
/// `decode_only`: frames are only decoded (the decoder's counters are
/// returned; no defrag, flow, stream, app-layer, detection or output).
pub fn run_frames(setup: &Setup, frames: &[MemFrame], decode_only: bool) -> Result<MemRun, EngineError> {
    // Each pass starts with empty thresholds and host bits, as a run does.
    let setup = &Setup { hosts: vigil_detect::host_state::HostState::new_shared(), ..setup.clone() };
    let bytes = frames.iter().map(|f| f.data.len() as u64).sum();
    let packets = frames.len() as u64;
    if decode_only {
        let mut decoder = Decoder::new(setup.decode.clone());
        for (i, f) in frames.iter().enumerate() {
            let p = decoder.decode(&f.data, f.ts, f.linktype, i as u64 + 1);
            std::hint::black_box(&p);
        }
        let counters = vigil_decode::Counter::ALL
            .iter()
            .map(|&c| (format!("decoder.{}", c.name()), decoder.counters.get(c)))
            .collect();
        return Ok(MemRun { packets, bytes, counters, ..MemRun::default() });
    }
    let mut lane = Lane::new(setup, 1, Outputs::open(setup, OutputMode::Offline)?);
    let mut checksum = ChecksumState::new(setup.checksum);
    let mut sampler = Decoder::new(DecodeConfig { validate_checksums: true, ..setup.decode.clone() });
    let mut last_ts = Timestamp::default();
    for (i, f) in frames.iter().enumerate() {
        let cnt = i as u64 + 1;
        if checksum.deciding() {
            let p = sampler.decode(&f.data, f.ts, f.linktype, cnt);
            checksum.observe(&p);
        }
        lane.frame(&f.data, f.ts, f.linktype, cnt, checksum.validating)?;
        last_ts = f.ts;
    }
    let end = lane.finish(setup, Some((last_ts, 0, packets)))?;
    Ok(MemRun {
        packets,
        bytes,
        alerts: end.alerts,
        flows: end.flows,
        reassembled: end.reassembled,
        counters: crate::stats::with_capture(end.counters, packets, 0),
    })
}
