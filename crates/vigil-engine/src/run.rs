//! Offline mode: read captures start to end, never dropping a packet.

use crate::checksum::ChecksumState;
use crate::error::EngineError;
use crate::inputs;
use crate::options::RunOptions;
use crate::outputs::Outputs;
use crate::setup::{setup, Setup};
use crate::stats;
use crate::summary::Summary;
use crate::worker::Worker;
use std::time::{Duration, Instant};
use vigil_capture::{PcapFile, Source};
use vigil_output::stats_record;
use vigil_types::Timestamp;

/// Where a run stands, reported every few thousand packets.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Bytes of the input files consumed so far (record headers included).
    pub bytes_done: u64,
    /// Total size of the input files.
    pub bytes_total: u64,
    pub packets: u64,
}

/// Bytes a classic pcap record header adds to each packet, for progress only.
const RECORD_OVERHEAD: u64 = 16;
/// How often (in packets) the wall clock is consulted for progress and stats.
const CHECK_EVERY: u64 = 4096;

/// Reads every input capture through the pipeline and writes the outputs.
/// `progress` is called periodically (the CLI draws its bar from it).
pub fn run_offline(opts: &RunOptions, progress: &mut dyn FnMut(Progress)) -> Result<Summary, EngineError> {
    let setup = setup(opts)?;
    run_setup(&setup, opts, progress)
}

/// [`run_offline`] with a [`Setup`] already made (rules loaded once), for
/// callers that show its warnings first.
pub fn run_setup(setup: &Setup, opts: &RunOptions, progress: &mut dyn FnMut(Progress)) -> Result<Summary, EngineError> {
    let files = inputs::expand(&opts.inputs).map_err(EngineError::Input)?;
    let bytes_total = files.iter().filter_map(|f| std::fs::metadata(f).ok()).map(|m| m.len()).sum();
    let mut worker = Worker::new(setup);
    let mut outputs = Outputs::open(setup)?;
    let mut checksum = ChecksumState::new(setup.checksum);
    let start = Instant::now();
    let interval = Duration::from_secs(setup.config.stats.interval.max(1) as u64);
    let mut last_stats = start;
    let mut summary = Summary { files: files.len(), ..Summary::default() };
    let mut bytes_done = 0u64;
    let mut last_ts = Timestamp::default();

    for file in &files {
        let mut src = match PcapFile::open(file) {
            Ok(s) => s,
            Err(e) => {
                summary.capture_errors.push(e.to_string());
                continue;
            }
        };
        while let Some(next) = src.next_packet() {
            let raw = match next {
                Ok(raw) => raw,
                Err(e) => {
                    summary.capture_errors.push(e.to_string());
                    break;
                }
            };
            summary.packets += 1;
            summary.bytes += raw.data.len() as u64;
            bytes_done += raw.data.len() as u64 + RECORD_OVERHEAD;
            last_ts = raw.ts;
            let mut p = worker.decoder.decode(raw.data, raw.ts, raw.linktype, summary.packets);
            if checksum.observe(&p) {
                worker.decoder.set_validate_checksums(false);
                summary.checksum_auto_disabled = true;
            }
            worker.packet(&mut p, &mut outputs)?;
            if summary.packets.is_multiple_of(CHECK_EVERY) {
                progress(Progress { bytes_done, bytes_total, packets: summary.packets });
                if last_stats.elapsed() >= interval {
                    last_stats = Instant::now();
                    write_stats(&mut outputs, setup, &worker, last_ts, start)?;
                }
            }
        }
    }
    progress(Progress { bytes_done: bytes_total, bytes_total, packets: summary.packets });
    worker.finish(&mut outputs)?;
    write_stats(&mut outputs, setup, &worker, last_ts, start)?;
    summary.eve_records = outputs.finish()?;
    summary.invalid = worker.decoder.counters.get(vigil_decode::Counter::Invalid);
    summary.decode_events =
        vigil_decode::DecodeEvent::ALL.iter().map(|&e| worker.decoder.counters.event_count(e)).sum();
    summary.flows = worker.flows.counters().total;
    summary.reassembled = worker.defrag.counters().ipv4_reassembled + worker.defrag.counters().ipv6_reassembled;
    summary.alerts = worker.detector.alerts;
    summary.rules = (!setup.rules.files.is_empty()).then(|| setup.rules.summary_line());
    summary.wall = start.elapsed();
    if summary.packets == 0 && !summary.capture_errors.is_empty() && summary.capture_errors.len() == files.len() {
        return Err(EngineError::Input(summary.capture_errors.join("; ")));
    }
    Ok(summary)
}

fn write_stats(
    outputs: &mut Outputs,
    setup: &Setup,
    worker: &Worker,
    ts: Timestamp,
    start: Instant,
) -> Result<(), EngineError> {
    let uptime = start.elapsed().as_secs();
    let all = stats::Counters {
        decode: &worker.decoder.counters,
        flow: worker.flows.counters(),
        defrag: worker.defrag.counters(),
        stream: &worker.stream,
        stream_events: &worker.stream_events,
        app: &worker.app_stats,
        detect: [worker.detector.alerts, worker.alert_queue_overflow(), worker.detector.suppressed],
    };
    outputs.stats(|null_values| {
        let counters = stats::counters(&all, &setup.config.stats, null_values);
        stats_record(ts, uptime, &counters)
    })
}
