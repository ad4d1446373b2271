//! `vigil bench capacity` (the zero-drop capacity sweep) and `vigil bench
//! send` (its paced sender, run inside the sending namespace).

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;
use vigil_lab::capacity::{self, CapacityOptions, Engine, Event};

/// Measure the highest rate this machine inspects without losing a frame:
/// replay traffic over a veth pair in namespaces of its own at each offered
/// rate, with vigil (and any other engine) capturing live on the other end.
///
/// Default sweep:      vigil bench capacity -o capacity/
/// Own traffic/rules:  vigil bench capacity -r traffic.pcap -S rules.rules --workers 1,2
/// Against Suricata:   vigil bench capacity --engine 'suricata=suricata -i {iface} -l {logdir} -S r.rules'
#[derive(Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct CapacityArgs {
    /// Traffic to replay (default: `vigil gen` mixed traffic, written to the output directory).
    #[arg(short = 'r', value_name = "PCAP")]
    pub read: Option<PathBuf>,
    /// Rules for vigil (default: the generated traffic's ground-truth rules; none with -r).
    #[arg(short = 'S', value_name = "FILE")]
    pub rules: Option<PathBuf>,
    /// Configuration for vigil (default: its built-in one, every EVE type);
    /// give the other engine's outputs to compare like with like.
    #[arg(short = 'c', value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Offered rates in Mbit/s, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = [100.0, 300.0, 500.0, 700.0, 900.0, 1100.0, 1300.0])]
    pub rates: Vec<f64>,
    /// Seconds each step sends.
    #[arg(long, default_value_t = 5.0)]
    pub duration: f64,
    /// vigil worker counts to measure (one line each).
    #[arg(long, value_delimiter = ',', default_values_t = [1usize])]
    pub workers: Vec<usize>,
    /// Another engine: NAME=COMMAND, with {iface} and {logdir} filled in (repeatable).
    #[arg(long = "engine", value_name = "NAME=CMD")]
    pub engines: Vec<String>,
    /// What another engine writes to a file of its {logdir} once it captures;
    /// each step waits for it before sending (vigil: its control socket).
    #[arg(long, value_name = "TEXT", default_value = vigil_lab::capacity::READY_TEXT)]
    pub ready_text: String,
    /// Seconds an engine may take to be ready (rule loading included).
    #[arg(long, value_name = "SECS", default_value_t = 180.0)]
    pub ready_timeout: f64,
    /// Seconds between an engine being ready and the sender starting (reported).
    #[arg(long, value_name = "SECS", default_value_t = 1.0)]
    pub warmup: f64,
    /// Also sweep a receiver that only counts frames (`bench null`): what the
    /// sender and the veth pair carry on this machine. Steps where it lost
    /// frames, or the sender fell short of the offered rate, are marked
    /// harness-limited for every engine.
    #[arg(long)]
    pub self_check: bool,
    /// Ring size (frames per worker) for vigil's AF_PACKET capture.
    #[arg(long, default_value_t = 2048)]
    pub ring_size: u32,
    /// MTU of the veth pair.
    #[arg(long, default_value_t = 1500)]
    pub mtu: u32,
    /// Sweep one more parameter, one line per value, like the studies did:
    /// `size=fixed:64,fixed:512,fixed:1400`, `mtu=1500,9000` (traffic
    /// fragmented at that MTU, veth MTU set), `ip=v4,v6`,
    /// `encap=none,vxlan,erspan2`, `malicious=0,10,50`, `profile=mixed,synscan`
    /// (these regenerate the traffic: not with -r), `ring-size=256,4096`,
    /// `workers=1,2`.
    #[arg(long, value_name = "KEY=V1,V2,...")]
    pub vary: Option<String>,
    /// Output directory: per-step logs, capacity.{txt,csv,json,html}, drop.{svg,png}, cpu.{svg,png}.
    #[arg(short = 'o', value_name = "DIR", default_value = "vigil-capacity")]
    pub out: PathBuf,
}

/// Send a capture out of an interface at a set rate for a set time (used by
/// `bench capacity` inside its sending namespace); prints what was sent as JSON.
#[derive(Args, Debug)]
pub struct SendArgs {
    #[arg(long)]
    pub iface: String,
    #[arg(short = 'r', value_name = "PCAP")]
    pub read: PathBuf,
    /// Mbit/s (0: as fast as possible).
    #[arg(long, default_value_t = 0.0)]
    pub rate: f64,
    /// Seconds.
    #[arg(long, default_value_t = 1.0)]
    pub duration: f64,
}

pub fn send(args: &SendArgs) -> ExitCode {
    let result = capacity::load_frames(&args.read)
        .and_then(|frames| capacity::send(&args.iface, &frames, args.rate, Duration::from_secs_f64(args.duration)));
    match result {
        Ok(sent) => {
            println!("{}", sent.to_json());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("vigil bench send: {e}");
            ExitCode::FAILURE
        }
    }
}

pub fn capacity(args: &CapacityArgs) -> ExitCode {
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("vigil bench capacity: {e}");
            ExitCode::FAILURE
        }
    }
}

/// One value of `--vary`: the traffic and settings it stands for.
struct Variant {
    label: Option<String>,
    pcap: PathBuf,
    rules: Option<PathBuf>,
    workers: Vec<usize>,
    ring_size: u32,
    mtu: u32,
}

fn variants(args: &CapacityArgs) -> Result<Vec<Variant>, String> {
    use vigil_lab::gen::options::GenOptions;
    let generate = |name: &str, opts: &GenOptions| -> Result<(PathBuf, Option<PathBuf>), String> {
        opts.validate()?;
        let paths = vigil_lab::gen::OutputPaths::beside(&args.out.join(format!("{name}.pcap")), None, None);
        vigil_lab::gen::write_files(opts, &paths).map_err(|e| format!("generating traffic: {e}"))?;
        Ok((paths.pcap, args.rules.clone().or(Some(paths.rules))))
    };
    let base_gen = GenOptions { malicious: 1.0, ..GenOptions::default() };
    let base = |label: Option<String>, (pcap, rules): (PathBuf, Option<PathBuf>)| Variant {
        label,
        pcap,
        rules,
        workers: args.workers.clone(),
        ring_size: args.ring_size,
        mtu: args.mtu,
    };
    let traffic = |opts: &GenOptions, name: &str| match &args.read {
        Some(p) => Ok((p.clone(), args.rules.clone())),
        None => generate(name, opts),
    };
    let Some(spec) = &args.vary else { return Ok(vec![base(None, traffic(&base_gen, "traffic")?)]) };
    let (key, values) = spec.split_once('=').ok_or_else(|| format!("--vary {spec:?}: give KEY=V1,V2,..."))?;
    let mut out = Vec::new();
    for (i, v) in values.split(',').map(str::trim).filter(|v| !v.is_empty()).enumerate() {
        let label = Some(format!("{key}={v}"));
        let bad = |e: String| format!("--vary {key}={v}: {e}");
        let num = |v: &str| v.parse::<u32>().map_err(|e| bad(e.to_string()));
        let mut g = base_gen.clone();
        let regen = |g: &GenOptions| {
            if args.read.is_some() {
                return Err(format!("--vary {key} makes its own traffic: leave out -r"));
            }
            generate(&format!("traffic-{i}"), g)
        };
        let var = match key {
            "size" => {
                g.size = v.parse().map_err(bad)?;
                base(label, regen(&g)?)
            }
            "ip" => {
                g.ip = v.parse().map_err(bad)?;
                base(label, regen(&g)?)
            }
            "encap" => {
                g.encap = v.parse().map_err(bad)?;
                base(label, regen(&g)?)
            }
            "profile" => {
                g.profile = v.parse().map_err(bad)?;
                base(label, regen(&g)?)
            }
            "malicious" => {
                g.malicious = v.parse().map_err(|e: std::num::ParseFloatError| bad(e.to_string()))?;
                base(label, regen(&g)?)
            }
            "mtu" => {
                g.mtu = num(v)? as usize;
                // Tunnel headers ride on top of the IP MTU: the link gets room for them.
                Variant { mtu: num(v)? + 100, ..base(label, regen(&g)?) }
            }
            "ring-size" => Variant { ring_size: num(v)?, ..base(label, traffic(&base_gen, "traffic")?) },
            "workers" => Variant { workers: vec![num(v)? as usize], ..base(label, traffic(&base_gen, "traffic")?) },
            other => {
                return Err(format!(
                    "--vary {other}: not a parameter (size, mtu, ip, encap, malicious, profile, ring-size, workers)"
                ))
            }
        };
        out.push(var);
    }
    if out.is_empty() {
        return Err(format!("--vary {spec:?}: no values"));
    }
    Ok(out)
}

fn run(args: &CapacityArgs) -> Result<(), String> {
    if !(0.1..=3600.0).contains(&args.duration) {
        return Err("--duration: give 0.1 to 3600 seconds".into());
    }
    std::fs::create_dir_all(&args.out).map_err(|e| format!("{}: {e}", args.out.display()))?;
    let variants = variants(args)?;
    let stop = Arc::new(AtomicBool::new(false));
    // Ctrl-C (or a closed terminal) ends the sweep after the step in hand;
    // the namespaces are removed.
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM, signal_hook::consts::SIGHUP] {
        let _ = signal_hook::flag::register(sig, stop.clone());
    }
    let mut steps = Vec::new();
    let mut last = None;
    for v in variants {
        let mut engines = Vec::new();
        if args.self_check {
            let exe = std::env::current_exe().map_err(|e| e.to_string())?;
            engines.push(Engine::Command {
                name: HARNESS.into(),
                template: format!(
                    "'{}' bench null --iface {{iface}} -l {{logdir}} --ring-size {}",
                    exe.display().to_string().replace('\'', "'\\''"),
                    v.ring_size
                ),
            });
        }
        engines.extend(v.workers.iter().map(|&w| Engine::Vigil { workers: w.max(1) }));
        for e in &args.engines {
            let (name, template) = e.split_once('=').ok_or_else(|| format!("--engine {e:?}: give NAME=COMMAND"))?;
            capacity::check_engine_name(name).map_err(|why| format!("--engine: {why}"))?;
            engines.push(Engine::Command { name: name.into(), template: template.into() });
        }
        let opts = CapacityOptions {
            pcap: v.pcap,
            rules: v.rules,
            config: args.config.clone(),
            rates_mbps: args.rates.clone(),
            duration: Duration::from_secs_f64(args.duration),
            engines,
            ring_size: v.ring_size,
            mtu: v.mtu,
            out_dir: args.out.clone(),
            vigil: std::env::current_exe().map_err(|e| e.to_string())?,
            stop: stop.clone(),
            ready_text: args.ready_text.clone(),
            ready_timeout: Duration::from_secs_f64(args.ready_timeout),
            warmup: Duration::from_secs_f64(args.warmup),
        };
        let prefix = v.label.as_ref().map_or(String::new(), |l| format!("[{l}] "));
        let mut bar = StepBar::new(prefix);
        let mut these = capacity::run(&opts, &mut |event| bar.show(event))?;
        if let Some(label) = &v.label {
            for s in &mut these {
                s.engine = format!("{} {label}", s.engine);
            }
        }
        steps.extend(these);
        last = Some(opts);
    }
    if args.self_check {
        mark_harness_limited(&mut steps);
    }
    // One report over every line of the sweep.
    if let Some(opts) = &last {
        capacity::write_reports(opts, &steps)?;
    }
    for (engine, rate) in capacity::zero_drop(&steps) {
        match rate {
            Some(r) => println!("{engine}: zero-drop capacity {r:.1} Mbit/s"),
            None => println!("{engine}: lost frames at every rate tried"),
        }
    }
    println!("report: {}", args.out.join("capacity.html").display());
    Ok(())
}

/// The self-check's engine name.
const HARNESS: &str = "harness";

/// Marks every step at a rate (and variant) where the count-only receiver
/// lost frames, or the sender did not reach 95% of the offered rate: there
/// the harness, not the engine, set the limit.
fn mark_harness_limited(steps: &mut [capacity::Step]) {
    // A variant's label follows the engine name ("harness size=fixed:64").
    let variant = |engine: &str| engine.split_once(' ').map_or(String::new(), |(_, v)| v.to_string());
    let limited: Vec<(String, u64)> = steps
        .iter()
        .filter(|s| s.engine.split(' ').next() == Some(HARNESS))
        .filter(|s| s.dropped > 0 || s.sent_mbps < 0.95 * s.offered_mbps)
        .map(|s| (variant(&s.engine), s.offered_mbps.to_bits()))
        .collect();
    for s in steps.iter_mut() {
        s.harness_limited = limited.contains(&(variant(&s.engine), s.offered_mbps.to_bits()));
    }
}

/// `bench null`: a receiver that only counts frames, for the self-check.
#[derive(Args, Debug)]
pub struct NullArgs {
    #[arg(long)]
    pub iface: String,
    /// Where its stats record (`eve.json`) and its ready line (`null.log`) go.
    #[arg(short = 'l', value_name = "DIR")]
    pub log_dir: PathBuf,
    #[arg(long, default_value_t = 2048)]
    pub ring_size: u32,
}

/// Counts frames on `--iface` until SIGTERM/SIGINT, then writes one EVE
/// stats record with Suricata's capture counters.
pub fn null(args: &NullArgs) -> ExitCode {
    match null_run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("vigil bench null: {e}");
            ExitCode::FAILURE
        }
    }
}

fn null_run(args: &NullArgs) -> Result<(), String> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone()).map_err(|e| e.to_string())?;
    }
    let mut cfg = vigil_capture::AfPacketConfig::new(&args.iface);
    cfg.ring_frames = args.ring_size;
    let mut sock = vigil_capture::AfPacket::open(&cfg).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(&args.log_dir).map_err(|e| e.to_string())?;
    // The capture is open: the harness may send.
    std::fs::write(args.log_dir.join("null.log"), format!("vigil bench null: {}\n", capacity::READY_TEXT))
        .map_err(|e| e.to_string())?;
    let mut seen = 0u64;
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        if sock.next(Duration::from_millis(100)).map_err(|e| e.to_string())?.is_some() {
            seen += 1;
        }
    }
    // What is still in the ring was received too.
    while sock.next(Duration::ZERO).map_err(|e| e.to_string())?.is_some() {
        seen += 1;
    }
    let k = sock.stats();
    let rec = serde_json::json!({
        "event_type": "stats",
        "stats": {
            "capture": {"kernel_packets": k.packets, "kernel_drops": k.drops},
            "decoder": {"pkts": seen},
            "detect": {"alert": 0},
        }
    });
    std::fs::write(args.log_dir.join("eve.json"), format!("{rec}\n")).map_err(|e| e.to_string())
}

/// A progress bar per step (on a terminal), with the engine's live counters
/// beside it, and a line per finished step (always).
struct StepBar {
    prefix: String,
    tty: bool,
    bar: Option<ProgressBar>,
}

impl StepBar {
    fn new(prefix: String) -> StepBar {
        StepBar { prefix, tty: std::io::stderr().is_terminal(), bar: None }
    }

    fn show(&mut self, event: Event) {
        match event {
            Event::Start { engine, rate_mbps, duration } if self.tty => {
                let b = ProgressBar::new(duration.as_millis() as u64);
                b.set_style(
                    ProgressStyle::with_template("{prefix} {bar:30} {msg}")
                        .unwrap_or_else(|_| ProgressStyle::default_bar()),
                );
                b.set_prefix(format!("{}{engine:<10} {rate_mbps:>6.0} Mbit/s", self.prefix));
                self.bar = Some(b);
            }
            Event::Start { .. } => {}
            Event::Tick { elapsed, live } => {
                if let Some(b) = &self.bar {
                    b.set_position(elapsed.as_millis() as u64);
                    if let Some(c) = live {
                        b.set_message(format!(
                            "received {}  inspected {}  dropped {}  alerts {}",
                            c.received, c.inspected, c.dropped, c.alerts
                        ));
                    }
                }
            }
            Event::Done(step) => {
                if let Some(b) = self.bar.take() {
                    b.finish_and_clear();
                }
                eprintln!(
                    "{}{:<10} offered {:>7.0} Mbit/s  sent {:>8.1}  received {:>9}  dropped {:>7} ({:.2}%)  cpu {:>5.1}%",
                    self.prefix,
                    step.engine,
                    step.offered_mbps,
                    step.sent_mbps,
                    step.received,
                    step.dropped,
                    step.drop_percent(),
                    step.cpu_percent
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(engine: &str, offered: f64, sent: f64, dropped: u64) -> capacity::Step {
        capacity::Step {
            engine: engine.into(),
            offered_mbps: offered,
            sent_mbps: sent,
            dropped,
            ..capacity::Step::default()
        }
    }

    #[test]
    fn steps_where_the_harness_fell_short_are_marked_for_every_engine() {
        let mut steps = vec![
            step("harness", 100.0, 100.0, 0),
            step("harness", 500.0, 420.0, 0),
            step("harness", 900.0, 890.0, 12),
            step("vigil-1w", 100.0, 100.0, 0),
            step("vigil-1w", 500.0, 420.0, 3),
            step("vigil-1w", 900.0, 890.0, 40),
            step("harness mtu=9000", 900.0, 900.0, 0),
            step("vigil-1w mtu=9000", 900.0, 900.0, 5),
        ];
        mark_harness_limited(&mut steps);
        let marked: Vec<bool> = steps.iter().map(|s| s.harness_limited).collect();
        assert_eq!(marked, [false, true, true, false, true, true, false, false]);
    }
}
