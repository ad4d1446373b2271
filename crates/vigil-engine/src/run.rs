//! Offline mode: read captures start to end, never dropping a packet.

use crate::checksum::ChecksumState;
use crate::control::Control;
use crate::error::EngineError;
use crate::inputs::{Feed, FeedOptions};
use crate::lane::{Dispatch, Lane, LaneEnd};
use crate::options::RunOptions;
use crate::outputs::{OutputMode, Outputs};
use crate::rules::LoadedRules;
use crate::runmode::Runmode;
use crate::setup::{setup, Setup};
use crate::socket::ControlSocket;
use crate::socket_commands::Facts;
use crate::stats::{with_capture, worker_name, write_stats};
use crate::summary::Summary;
use std::path::PathBuf;
use std::sync::mpsc::{channel, Receiver};
use std::sync::Arc;
use std::time::{Duration, Instant};
use vigil_capture::{PcapFile, RawPacket, Source};
use vigil_decode::{DecodeConfig, Decoder};
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
    // Thresholds and host bits start empty for each run, as flows do (the
    // unix-socket runmode and the benches run one setup many times).
    let setup = &Setup { hosts: vigil_detect::host_state::HostState::new_shared(), ..setup.clone() };
    let r = run_files(setup, opts, progress);
    crate::rules::save_datasets(&setup.rules);
    r
}

fn run_files(setup: &Setup, opts: &RunOptions, progress: &mut dyn FnMut(Progress)) -> Result<Summary, EngineError> {
    let feed_opts = FeedOptions::new(&setup.config.pcap_file, opts);
    let feed = Feed::new(&opts.inputs, feed_opts).map_err(EngineError::Input)?;
    let files: Vec<PathBuf> = feed.known().cloned().collect();
    let outputs = Outputs::open(setup, OutputMode::Offline)?;
    let _socket = control_socket(setup, &opts.control, Facts::offline(setup))?;
    let _metrics = metrics_server(setup, &opts.control)?;
    if let Some(a) = &setup.affinity {
        // One thread does everything in `single`: it goes where workers go.
        let cpu = match setup.runmode {
            Runmode::Single | Runmode::Workers { .. } => Some(a.worker(0)),
            Runmode::Autofp { .. } => a.reader.first().copied(),
        };
        if let Some(cpu) = cpu {
            crate::affinity::Affinity::pin(cpu);
        }
    }
    match setup.runmode {
        Runmode::Single => {
            let lane = Lane::new(setup, 1, outputs);
            read(setup, opts, feed, Box::new(Single { lane, setup }), progress)
        }
        Runmode::Autofp { workers } => std::thread::scope(|scope| {
            let dispatch = crate::autofp::Autofp::start(scope, setup, workers, outputs, opts.drop_when_full)?;
            read(setup, opts, feed, Box::new(dispatch), progress)
        }),
        // Every worker reads the whole list: files that arrive later
        // (continuous), files deleted once read (another worker may not have
        // read them yet), a BPF filter (run once, by the reader) and a full
        // ring dropping frames (the lab's live policy on a file) need
        // autofp's one reader.
        Runmode::Workers { workers }
            if !opts.drop_when_full && !feed_opts.continuous && !feed_opts.delete && opts.bpf_filter.is_none() =>
        {
            std::thread::scope(|scope| {
                let dispatch =
                    crate::workers::Workers::start(scope, setup, &files, workers, outputs, opts.control.clone())?;
                read(setup, opts, feed, Box::new(dispatch), progress)
            })
        }
        Runmode::Workers { workers } => std::thread::scope(|scope| {
            let dispatch = crate::autofp::Autofp::start(scope, setup, workers, outputs, opts.drop_when_full)?;
            read(setup, opts, feed, Box::new(dispatch), progress)
        }),
    }
}

/// The Prometheus endpoint when `stats.prometheus` is enabled.
pub(crate) fn metrics_server(
    setup: &Setup,
    control: &Control,
) -> Result<Option<crate::metrics::MetricsServer>, EngineError> {
    let Some(cfg) = &setup.config.stats.prometheus else { return Ok(None) };
    crate::metrics::MetricsServer::start(cfg, control.clone())
        .map(Some)
        .map_err(|error| EngineError::Output { path: format!("stats.prometheus.listen {}", cfg.listen), error })
}

/// The `unix-command` socket when enabled (`auto`: on for live capture,
/// off for files, as in Suricata); a relative filename is placed in the log
/// directory.
pub(crate) fn control_socket(
    setup: &Setup,
    control: &Control,
    facts: Facts,
) -> Result<Option<ControlSocket>, EngineError> {
    let cfg = &setup.config.runtime.unix_command;
    let live = facts.capture_mode != "PCAP_FILE";
    if !cfg.enabled.unwrap_or(live) {
        return Ok(None);
    }
    control.rules_in_use(&setup.rules, false);
    let path = crate::socket::socket_path(cfg.filename.as_deref());
    match ControlSocket::start(&path, control.clone(), facts) {
        Ok(s) => Ok(Some(s)),
        Err(error) if cfg.enabled.is_none() => {
            // `auto` asked for no socket in particular: the run goes on without one.
            eprintln!("vigil: warning: control socket {}: {error}; running without it", path.display());
            Ok(None)
        }
        Err(error) => Err(EngineError::Output { path: path.display().to_string(), error }),
    }
}

/// The reading loop, whatever the runmode: frames are numbered, checksum
/// `auto` is decided here (on the first packets, in capture order, so every
/// runmode decides alike), and stats records are written on the interval.
fn read(
    setup: &Setup,
    opts: &RunOptions,
    mut feed: Feed,
    mut dispatch: Box<dyn Dispatch + '_>,
    progress: &mut dyn FnMut(Progress),
) -> Result<Summary, EngineError> {
    let mut bytes_total: u64 = feed.known().filter_map(|f| std::fs::metadata(f).ok()).map(|m| m.len()).sum();
    let mut checksum = ChecksumState::new(setup.checksum);
    // Decodes the sample `auto` looks at; the lanes decode every frame for real.
    let mut sampler = Decoder::new(DecodeConfig { validate_checksums: true, ..setup.decode.clone() });
    let start = Instant::now();
    let interval = Duration::from_secs(setup.config.stats.interval.max(1) as u64);
    let mut last_stats = start;
    let mut summary = Summary::default();
    let mut bytes_done = 0u64;
    let mut last_ts = Timestamp::default();
    let mut result = Ok(());
    let control = &opts.control;
    let mut reload = Reload::default();
    let mut filter = opts.bpf_filter.as_deref().map(crate::frame_filter::FrameFilter::new);

    'files: loop {
        // Waiting for files to arrive (continuous), requests are still answered.
        let packets = summary.packets;
        let mut stopped = false;
        let next = feed.next(&mut || {
            if control.stopping() {
                stopped = true;
                return false;
            }
            if let Err(e) = dispatch.idle() {
                result = Err(e);
                return false;
            }
            if control.counters_wanted() {
                match dispatch.counters(packets) {
                    Ok(c) => control.answer_counters_of(&c, &dispatch.threads()),
                    Err(e) => {
                        result = Err(e);
                        return false;
                    }
                }
            }
            // Stats records go on while no file comes, on the interval and on request.
            if control.take_stats() || last_stats.elapsed() >= interval {
                last_stats = Instant::now();
                if let Err(e) = dispatch.stats(last_ts, start.elapsed().as_secs(), packets) {
                    result = Err(e);
                    return false;
                }
            }
            true
        });
        summary.interrupted |= stopped;
        let Some(file) = next else { break };
        if result.is_err() {
            break;
        }
        summary.files += 1;
        let mut src = match PcapFile::open(&file) {
            Ok(s) => s,
            Err(e) => {
                summary.capture_errors.push(e.to_string());
                continue;
            }
        };
        let mut complete = true;
        while let Some(next) = src.next_packet() {
            let raw = match next {
                Ok(raw) => raw,
                Err(e) => {
                    summary.capture_errors.push(e.to_string());
                    complete = false;
                    break;
                }
            };
            if control.stopping() {
                summary.interrupted = true;
                break 'files;
            }
            if let Some(f) = filter.as_mut() {
                match f.accepts(raw.linktype, raw.data) {
                    Ok(true) => {}
                    Ok(false) => {
                        summary.filtered += 1;
                        continue;
                    }
                    Err(e) => {
                        result = Err(e);
                        break 'files;
                    }
                }
            }
            summary.packets += 1;
            summary.bytes += raw.data.len() as u64;
            bytes_done += raw.data.len() as u64 + RECORD_OVERHEAD;
            last_ts = raw.ts;
            let validate = checksum.validating;
            if checksum.deciding() {
                let p = sampler.decode(raw.data, raw.ts, raw.linktype, summary.packets);
                summary.checksum_auto_disabled |= checksum.observe(&p);
            }
            if let Some(rules) = reload.poll(setup, &mut summary) {
                if let Err(e) = dispatch.swap_rules(rules) {
                    result = Err(e);
                    break 'files;
                }
            }
            if let Err(e) = dispatch.frame(&raw, summary.packets, validate) {
                result = Err(e);
                break 'files;
            }
            // A requested record comes after the packet in hand; periodic
            // ones are checked for every few thousand packets.
            let periodic = summary.packets.is_multiple_of(CHECK_EVERY) && {
                progress(Progress { bytes_done, bytes_total, packets: summary.packets });
                last_stats.elapsed() >= interval
            };
            if control.counters_wanted() {
                match dispatch.counters(summary.packets) {
                    Ok(c) => control.answer_counters_of(&c, &dispatch.threads()),
                    Err(e) => {
                        result = Err(e);
                        break 'files;
                    }
                }
            }
            if control.take_reload() {
                reload.start(setup, opts);
            }
            if periodic || control.take_stats() {
                last_stats = Instant::now();
                if let Err(e) = dispatch.stats(last_ts, start.elapsed().as_secs(), summary.packets) {
                    result = Err(e);
                    break 'files;
                }
            }
        }
        // Only a file read to its end is deleted: one that failed stays for a look.
        if complete {
            if let Err(e) = feed.done(&file) {
                summary.capture_errors.push(e);
            }
        }
        bytes_total = bytes_total.max(bytes_done);
    }
    progress(Progress {
        bytes_done: bytes_total.max(bytes_done),
        bytes_total: bytes_total.max(bytes_done),
        packets: summary.packets,
    });
    // Workers finish (and are joined) even when reading stopped on an error.
    summary.dropped = dispatch.dropped();
    let end = dispatch.finish(last_ts, start.elapsed().as_secs(), summary.packets);
    result?;
    let end = end?;
    summary.eve_records = end.records;
    summary.invalid = end.invalid;
    summary.decode_events = end.decode_events;
    summary.flows = end.flows;
    summary.reassembled = end.reassembled;
    summary.alerts = end.alerts;
    summary.rules = (!setup.rules.files.is_empty()).then(|| setup.rules.summary_line());
    summary.runmode = setup.runmode;
    summary.wall = start.elapsed();
    // A directory may hold other files: Suricata skips what is not a
    // capture there. Only captures named one by one fail the run when none opens.
    let named_only = opts.inputs.iter().all(|i| !i.is_dir());
    if named_only
        && summary.packets == 0
        && !summary.capture_errors.is_empty()
        && summary.capture_errors.len() == summary.files
    {
        return Err(EngineError::Input(summary.capture_errors.join("; ")));
    }
    Ok(summary)
}

/// The single runmode: the reading thread is the worker.
struct Single<'s> {
    lane: Lane,
    setup: &'s Setup,
}

/// A rule reload in progress: the new rules are built on a thread of their
/// own while packets keep flowing, and swapped in between two packets.
#[derive(Default)]
pub(crate) struct Reload {
    building: Option<Receiver<Result<LoadedRules, EngineError>>>,
    /// Told how each reload ends.
    control: Control,
}

impl Reload {
    /// Whether a reload is being built.
    pub(crate) fn busy(&self) -> bool {
        self.building.is_some()
    }

    /// Starts building (a request while one builds is folded into it).
    pub(crate) fn start(&mut self, setup: &Setup, opts: &RunOptions) {
        if self.building.is_some() {
            return;
        }
        self.control = opts.control.clone();
        let (tx, rx) = channel();
        let (opts, config) = (opts.clone(), setup.config.clone());
        let sets = Arc::clone(&setup.rules.datasets);
        let built = std::thread::Builder::new().name("rule-reload".into()).spawn(move || {
            let vars = vigil_rules::Vars::new(&config.vars.address_groups, &config.vars.port_groups);
            let algo = crate::setup::mpm_algo(&config, &mut Vec::new());
            let _ = tx.send(crate::rules::load_keeping(&opts, &config, vars, algo, Some(sets)));
        });
        match built {
            Ok(_) => self.building = Some(rx),
            Err(e) => {
                eprintln!("vigil: rule reload: cannot start: {e}");
                self.control.reload_refused(format!("cannot start: {e}"));
            }
        }
    }

    /// The new rules once built and sound. Rules with errors are refused:
    /// the old ones stay, and the operator is told why.
    pub(crate) fn poll(&mut self, setup: &Setup, summary: &mut Summary) -> Option<Arc<LoadedRules>> {
        let rx = self.building.as_ref()?;
        let outcome = match rx.try_recv() {
            Ok(outcome) => outcome,
            Err(std::sync::mpsc::TryRecvError::Empty) => return None,
            Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                Err(EngineError::Usage("the rule loading thread stopped".into()))
            }
        };
        self.building = None;
        let refused = match outcome {
            Ok(rules) if rules.failed == 0 && (rules.engine.is_some() || setup.rules.engine.is_none()) => {
                eprintln!("vigil: rules reloaded: {}", rules.summary_line());
                summary.rule_reloads += 1;
                self.control.rules_in_use(&rules, true);
                return Some(Arc::new(rules));
            }
            Ok(rules) => {
                let why: Vec<&str> = rules.messages.iter().map(String::as_str).take(5).collect();
                format!("{} rule(s) failed: {}", rules.failed, why.join("; "))
            }
            Err(e) => e.to_string(),
        };
        eprintln!("vigil: rule reload refused, the running rules stay: {refused}");
        self.control.reload_refused(refused);
        summary.rule_reloads_refused += 1;
        None
    }
}

impl Dispatch for Single<'_> {
    fn counters(&mut self, received: u64) -> Result<Vec<(String, u64)>, EngineError> {
        Ok(with_capture(self.lane.counters(self.setup), received, 0))
    }

    fn dropped(&self) -> u64 {
        0
    }

    fn threads(&self) -> Vec<(String, Vec<(String, u64)>)> {
        vec![(worker_name(0), self.lane.counters(self.setup))]
    }

    fn frame(&mut self, raw: &RawPacket<'_>, pcap_cnt: u64, validate: bool) -> Result<(), EngineError> {
        self.lane.frame(raw.data, raw.ts, raw.linktype, pcap_cnt, validate)
    }

    fn stats(&mut self, ts: Timestamp, uptime: u64, received: u64) -> Result<(), EngineError> {
        let counters = self.counters(received)?;
        let threads = [(worker_name(0), self.lane.counters(self.setup))];
        write_stats(&mut self.lane.outputs, &counters, &threads, ts, uptime, self.lane.worker.detector.rules())?;
        // As the other runmodes: a record asked for reaches its file now.
        self.lane.outputs.finish().map(|_| ())
    }

    fn swap_rules(&mut self, rules: Arc<LoadedRules>) -> Result<(), EngineError> {
        self.lane.worker.swap_rules(rules);
        Ok(())
    }

    fn finish(self: Box<Self>, ts: Timestamp, uptime: u64, received: u64) -> Result<LaneEnd, EngineError> {
        self.lane.finish(self.setup, Some((ts, uptime, received)))
    }
}
