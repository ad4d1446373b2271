//! Live mode: capture from interfaces (AF_PACKET) or an inline queue
//! (NFQUEUE), in Suricata's `workers` runmode: every capture socket is read
//! by its own worker thread, which runs the whole pipeline for the packets
//! the kernel's fanout hash gives it (both directions of a flow alike), and,
//! inline, decides their verdicts. Nothing waits on anything else: a worker
//! that falls behind loses packets in its ring, where the kernel counts them
//! (`capture.kernel_drops`).
//!
//! The calling thread coordinates: stats records on the interval and on
//! SIGUSR1 (each worker reports between two packets), rule reloads, the
//! control socket, and a clean stop that drains what the kernel holds.

mod source;
mod worker;

use crate::error::EngineError;
use crate::lane::{Lane, LaneEnd};
use crate::options::{LiveInput, RunOptions};
use crate::outputs::{OutputMode, Outputs};
use crate::run::Reload;
use crate::setup::Setup;
use crate::stats;
use crate::stats::{with_capture, worker_name, write_stats};
use crate::summary::Summary;
use source::{KernelCounters, Side, Source};
use std::sync::mpsc::{channel, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use vigil_capture::{AfPacket, AfPacketConfig, AfPacketTx, Fanout, FanoutKind, NfQueue, NfqMode, NfqOptions};
use vigil_config::ChecksumMode;
use vigil_types::Timestamp;
use worker::{Counters, Ctl, LiveWorker, WorkerEnd};

/// Where the coordinator looks for requests between reports.
const TICK: Duration = Duration::from_millis(20);

/// What a live run reports while it runs (the CLI's status line).
#[derive(Debug, Clone, Copy, Default)]
pub struct LiveStatus {
    pub received: u64,
    pub dropped: u64,
    pub inspected: u64,
    pub alerts: u64,
}

/// Runs live until stopped (SIGINT/SIGTERM, or `opts.control`).
pub fn run_live(setup: &Setup, opts: &RunOptions, status: &mut dyn FnMut(LiveStatus)) -> Result<Summary, EngineError> {
    let r = capture(setup, opts, status);
    crate::rules::save_datasets(&setup.rules);
    r
}

fn capture(setup: &Setup, opts: &RunOptions, status: &mut dyn FnMut(LiveStatus)) -> Result<Summary, EngineError> {
    vigil_capture::check_log_dir(&setup.log_dir).map_err(EngineError::Usage)?;
    let outputs = Outputs::open(setup, OutputMode::Live)?;
    let sources = open_sources(setup, opts)?;
    // The socket appears once capture is open: its existence says vigil is listening.
    let ifaces = live_ifaces(setup, opts).into_iter().cloned().collect();
    let facts = crate::socket_commands::Facts {
        running_mode: if single(setup, opts) { "single" } else { "workers" },
        ..crate::socket_commands::Facts::live(setup, ifaces)
    };
    let _socket = crate::run::control_socket(setup, &opts.control, facts)?;
    let _metrics = crate::run::metrics_server(setup, &opts.control)?;
    // `reject` refusals the host routes (a bridge sends its own at layer 2).
    // Send-only sockets: they cost nothing when no rule rejects.
    let raw = vigil_capture::RawIpSender::open().ok().map(Arc::new);
    let reject_dev = match opts.reject_dev.as_deref() {
        Some(dev) => Some(Arc::new(
            vigil_capture::AfPacketTx::open(dev).map_err(|e| EngineError::Usage(format!("--reject-dev {dev}: {e}")))?,
        )),
        None => None,
    };
    // Capture is open and the workers start below: a Type=notify service is
    // up, and the log says so in Suricata's words (tools wait for them),
    // written while the log files are still ours to write.
    crate::notify::notify("READY=1\nSTATUS=capturing");
    let started = crate::log::LogRecord::new(
        vigil_config::LogLevel::Notice,
        "threads",
        format!("Threads created -> W: {} Engine started.", sources.len()),
    );
    // A file that cannot be written was warned about at start-up.
    let _ = crate::log::write(&setup.config.logging, &setup.log_dir, &[started]);
    // Sockets and log files are open: nothing more needs root.
    if opts.user.is_some() || opts.group.is_some() {
        vigil_capture::drop_privileges(opts.user.as_deref(), opts.group.as_deref()).map_err(EngineError::Usage)?;
    }
    let validate = setup.checksum != ChecksumMode::Disabled;
    let n = sources.len();
    let start = Instant::now();
    std::thread::scope(|scope| {
        let mut ctls: Vec<Sender<Ctl>> = Vec::with_capacity(n);
        let mut handles = Vec::with_capacity(n);
        for (index, src) in sources.into_iter().enumerate() {
            let (tx, rx) = channel();
            ctls.push(tx);
            let mut lane = Lane::new(setup, n, outputs.share_for(index));
            lane.worker.detector.respond = true;
            let w = LiveWorker { index, lane, src, validate, raw: raw.clone(), reject_dev: reject_dev.clone() };
            let h = std::thread::Builder::new()
                .name(worker_name(index))
                .spawn_scoped(scope, move || {
                    if let Some(a) = &setup.affinity {
                        crate::affinity::Affinity::pin(a.worker(index));
                    }
                    w.run(setup, rx)
                })
                .map_err(|e| EngineError::Usage(format!("cannot start worker thread {}: {e}", index + 1)))?;
            handles.push(h);
        }
        let mut coord = Coordinator { ctls, outputs, threads: Vec::new(), rules: setup.rules.clone() };
        let result = coord.serve(setup, opts, start, status);
        for c in &coord.ctls {
            let _ = c.send(Ctl::Stop);
        }
        let mut end = LaneEnd::default();
        let mut kernel = KernelCounters::default();
        let mut threads = Vec::new();
        let mut first_error = None;
        for (i, h) in handles.into_iter().enumerate() {
            match h.join() {
                Ok(Ok(WorkerEnd { lane, kernel: k })) => {
                    threads.push((worker_name(i), with_kernel(lane.counters.clone(), &k)));
                    kernel.add(&k);
                    end.add(lane);
                }
                Ok(Err(e)) => {
                    first_error.get_or_insert(e);
                }
                Err(_) => {
                    first_error.get_or_insert(EngineError::Usage(format!("worker {} panicked", i + 1)));
                }
            }
        }
        let mut summary = result?;
        if let Some(e) = first_error {
            return Err(e);
        }
        let totals = with_kernel(end.counters.clone(), &kernel);
        let uptime = start.elapsed().as_secs();
        write_stats(&mut coord.outputs, &totals, &threads, wall_clock(), uptime, &coord.rules)?;
        summary.eve_records = end.records + coord.outputs.finish()?;
        coord.outputs.close_sinks();
        // Inspected: frames the kernel delivered that vigil read (a bridge's own
        // forwarded frames, which come back as outgoing ones, are skipped).
        summary.packets = stats::get(&end.counters, "decoder.pkts");
        summary.dropped = kernel.drops;
        summary.invalid = end.invalid;
        summary.decode_events = end.decode_events;
        summary.flows = end.flows;
        summary.reassembled = end.reassembled;
        summary.alerts = end.alerts;
        summary.bytes = stats::get(&end.counters, "decoder.bytes");
        summary.rules = (!setup.rules.files.is_empty()).then(|| setup.rules.summary_line());
        summary.wall = start.elapsed();
        summary.live = true;
        Ok(summary)
    })
}

/// The capture counters a source adds to a worker's (or the run's) counters.
fn with_kernel(counters: Counters, k: &KernelCounters) -> Counters {
    let mut all = with_capture(counters, k.packets, k.drops);
    all.push(("ips.accepted".into(), k.accepted));
    all.push(("ips.blocked".into(), k.blocked));
    all
}

struct Coordinator {
    ctls: Vec<Sender<Ctl>>,
    outputs: Outputs,
    threads: Vec<(String, Counters)>,
    rules: Arc<crate::rules::LoadedRules>,
}

impl Coordinator {
    /// Serves requests until a stop is asked for (or a worker stopped).
    fn serve(
        &mut self,
        setup: &Setup,
        opts: &RunOptions,
        start: Instant,
        status: &mut dyn FnMut(LiveStatus),
    ) -> Result<Summary, EngineError> {
        let control = &opts.control;
        let interval = Duration::from_secs(setup.config.stats.interval.max(1) as u64);
        let mut last_stats = Instant::now();
        let mut last_status = Instant::now();
        let mut summary = Summary { runmode: setup.runmode, ..Summary::default() };
        let mut reload = Reload::default();
        while !control.stopping() {
            std::thread::sleep(TICK);
            if let Some(rules) = reload.poll(setup, &mut summary) {
                for c in &self.ctls {
                    c.send(Ctl::Rules(rules.clone())).map_err(|_| stopped())?;
                }
                self.rules = rules;
            }
            if control.take_reload() {
                reload.start(setup, opts);
            }
            if control.take_reopen() {
                // The files are shared with the workers: they write to the new ones too.
                self.outputs.reopen()?;
            }
            self.outputs.poll()?;
            let stats_due = last_stats.elapsed() >= interval || control.take_stats();
            let status_due = last_status.elapsed() >= Duration::from_secs(1);
            if stats_due || status_due || control.counters_wanted() {
                let totals = self.report()?;
                if control.counters_wanted() {
                    control.answer_counters_of(&totals, &self.threads);
                }
                if stats_due {
                    last_stats = Instant::now();
                    write_stats(
                        &mut self.outputs,
                        &totals,
                        &self.threads,
                        wall_clock(),
                        start.elapsed().as_secs(),
                        &self.rules,
                    )?;
                    self.outputs.finish()?;
                }
                if status_due {
                    last_status = Instant::now();
                    status(LiveStatus {
                        received: stats::get(&totals, "capture.kernel_packets"),
                        dropped: stats::get(&totals, "capture.kernel_drops"),
                        inspected: stats::get(&totals, "decoder.pkts"),
                        alerts: stats::get(&totals, "detect.alert"),
                    });
                }
            }
        }
        crate::notify::notify("STOPPING=1");
        summary.interrupted = true;
        Ok(summary)
    }

    /// Every worker's counters, merged, with the kernel's.
    fn report(&mut self) -> Result<Counters, EngineError> {
        let (to, from) = channel();
        for c in &self.ctls {
            c.send(Ctl::Report(to.clone())).map_err(|_| stopped())?;
        }
        drop(to);
        let mut by_worker: Vec<(usize, Counters, KernelCounters)> = from.iter().collect();
        if by_worker.len() != self.ctls.len() {
            return Err(stopped());
        }
        by_worker.sort_by_key(|(i, ..)| *i);
        let mut all = Counters::new();
        let mut kernel = KernelCounters::default();
        for (_, c, k) in &by_worker {
            stats::merge(&mut all, c);
            kernel.add(k);
        }
        self.threads = by_worker.into_iter().map(|(i, c, k)| (worker_name(i), with_kernel(c, &k))).collect();
        Ok(with_kernel(all, &kernel))
    }
}

fn stopped() -> EngineError {
    EngineError::Usage("a worker stopped".into())
}

fn wall_clock() -> Timestamp {
    let d = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    Timestamp::from_secs_nanos(d.as_secs() as i64, d.subsec_nanos())
}

/// The AF_PACKET interfaces of the run.
fn live_ifaces<'a>(setup: &'a Setup, opts: &'a RunOptions) -> Vec<&'a String> {
    let mut ifaces: Vec<&String> = Vec::new();
    for l in &opts.live {
        match l {
            // `--af-packet` alone: every interface the section lists.
            LiveInput::AfPacket(i) if i.is_empty() => {
                ifaces.extend(setup.config.af_packet.interfaces.iter().map(|c| &c.interface))
            }
            LiveInput::AfPacket(i) => ifaces.push(i),
            LiveInput::Nfq(_) => {}
        }
    }
    ifaces.dedup();
    ifaces
}

/// Live, Suricata's default is `workers`: one thread only when `single` is asked for.
fn single(setup: &Setup, opts: &RunOptions) -> bool {
    opts.runmode.as_deref().or(setup.config.runtime.runmode.as_deref()) == Some("single")
}

/// Opens the capture: for each worker, one socket on every interface (each
/// interface a fanout group, the worker the same member of each), and the
/// queues. Every interface gets the same number of workers: the largest
/// `threads` asked for (`--threads` over the configuration).
fn open_sources(setup: &Setup, opts: &RunOptions) -> Result<Vec<Source>, EngineError> {
    let ifaces = live_ifaces(setup, opts);
    let mut sources = open_queues(setup, opts)?;
    if ifaces.is_empty() {
        if sources.is_empty() {
            return Err(EngineError::Usage("nothing to capture from: give -i <interface> or -q <queue>".into()));
        }
        return Ok(sources);
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let configs: Vec<_> = ifaces.iter().map(|i| setup.config.af_packet.for_iface(i)).collect();
    let workers = if single(setup, opts) {
        1
    } else {
        opts.threads.or_else(|| configs.iter().filter_map(|c| c.threads).max()).unwrap_or(cpus).max(1)
    };
    let mut plans = Vec::new();
    for (n, cfg) in configs.iter().enumerate() {
        let iface = &cfg.interface;
        let listed = setup.config.af_packet.interfaces.iter().any(|i| &i.interface == iface);
        let kind = FanoutKind::parse(&cfg.cluster_type).unwrap_or(FanoutKind::Hash);
        // Interfaces not listed share the default item: each gets a group of its own.
        let id = if listed { cfg.cluster_id } else { cfg.cluster_id.wrapping_add(n as u16) };
        let bpf = match opts.bpf_filter.as_deref().or(cfg.bpf_filter.as_deref()) {
            Some(expr) => Some(vigil_capture::compile_bpf(expr, 1).map_err(EngineError::Usage)?),
            None => None,
        };
        let inline = cfg.copy_mode.as_deref() == Some("ips");
        if inline && cfg.copy_iface.is_none() {
            return Err(EngineError::Usage(format!("af-packet {iface}: copy-mode ips needs copy-iface")));
        }
        let capture = AfPacketConfig {
            fanout: (workers > 1).then_some(Fanout { id, kind, defrag: cfg.defrag }),
            use_mmap: cfg.use_mmap,
            mmap_locked: cfg.mmap_locked,
            ring_frames: cfg.ring_size,
            block_size: cfg.block_size,
            block_timeout_ms: cfg.block_timeout,
            promisc: !cfg.disable_promisc,
            buffer_size: cfg.buffer_size,
            bpf,
            // The bridge's own forwarded frames come back as outgoing ones.
            ignore_outgoing: cfg.copy_mode.is_some(),
            ..AfPacketConfig::new(iface)
        };
        plans.push((capture, cfg.copy_mode.as_ref().and(cfg.copy_iface.clone())));
    }
    let input = |e: vigil_capture::AfPacketError| EngineError::Input(e.to_string());
    // Worker by worker, interface by interface: worker i is member i of every group.
    for _ in 0..workers {
        let mut sides = Vec::with_capacity(plans.len());
        for (capture, peer) in &plans {
            let cap = AfPacket::open(capture).map_err(input)?;
            let (peer, back) = match peer {
                Some(out) => (
                    Some(AfPacketTx::open(out).map_err(input)?),
                    Some(AfPacketTx::open(&capture.iface).map_err(input)?),
                ),
                None => (None, None),
            };
            sides.push(Side { cap, peer, back });
        }
        sources.push(Source::AfPacket { sides, turn: 0, last: 0, accepted: 0, blocked: 0 });
    }
    Ok(sources)
}

/// One worker per `-q` queue, with the `nfq` section's mode and limits.
fn open_queues(setup: &Setup, opts: &RunOptions) -> Result<Vec<Source>, EngineError> {
    let cfg = &setup.config.nfq;
    let mode = match cfg.mode.as_str() {
        "repeat" => NfqMode::Repeat { mark: cfg.repeat_mark, mask: cfg.repeat_mask },
        "route" => NfqMode::Route { next_queue: cfg.route_queue },
        _ => NfqMode::Accept,
    };
    let mut sources = Vec::new();
    for l in &opts.live {
        let LiveInput::Nfq(queue) = l else { continue };
        let nfq = NfqOptions {
            queue: *queue,
            fail_open: cfg.fail_open,
            max_len: cfg.queue_maxlen,
            batch: cfg.batchcount,
            mode,
        };
        let q = NfQueue::open(&nfq).map_err(|e| EngineError::Input(format!("nfq {queue}: {e}")))?;
        sources.push(Source::Nfq { q: Box::new(q), last: None });
    }
    Ok(sources)
}
