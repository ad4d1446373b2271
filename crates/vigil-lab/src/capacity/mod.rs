//! `vigil bench capacity`: the experiment of the published IDS studies,
//! automated. It makes two network namespaces joined by a veth pair (its
//! own; no other host or interface is touched), runs the engine live on the
//! receiving end, and replays a capture from the sending end at each offered
//! rate for a set time, counting exactly what was sent. Per step it reads
//! the engine's own counters (its EVE stats: received, inspected, dropped by
//! the kernel), its CPU time and peak memory, and writes a table (text, CSV,
//! JSON), plots as SVG and PNG, and an HTML report. Another engine runs in the same
//! harness through a command template (`--engine "suricata -i {iface} -l
//! {logdir} ..."`), so two engines meet the same traffic in one run.

mod plot;
mod report;
mod send;
mod watch;

pub use plot::{html, png, svg, Plot};
pub use report::{zero_drop, Step};
pub use send::{load_frames, send, Sent};
pub use watch::LiveCounters;
use watch::Watch;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// An engine to measure.
#[derive(Debug, Clone, PartialEq)]
pub enum Engine {
    /// This vigil, with `workers` worker threads.
    Vigil { workers: usize },
    /// Any command; `{iface}` and `{logdir}` are filled in. It must write EVE
    /// stats records (Suricata's counter names) to `{logdir}/eve.json`, and
    /// say it is capturing in a file of `{logdir}` ([`CapacityOptions::ready_text`]).
    Command { name: String, template: String },
}

impl Engine {
    pub fn name(&self) -> String {
        match self {
            Engine::Vigil { workers } => format!("vigil-{workers}w"),
            Engine::Command { name, .. } => name.clone(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct CapacityOptions {
    /// The traffic to replay.
    pub pcap: PathBuf,
    pub rules: Option<PathBuf>,
    /// `-c` for vigil.
    pub config: Option<PathBuf>,
    /// Offered rates, Mbit/s.
    pub rates_mbps: Vec<f64>,
    /// How long each step sends.
    pub duration: Duration,
    pub engines: Vec<Engine>,
    /// `af-packet` `ring-size` for vigil (frames per worker).
    pub ring_size: u32,
    /// MTU of the veth pair.
    pub mtu: u32,
    /// Where step directories, tables and plots go.
    pub out_dir: PathBuf,
    /// The vigil binary (the sender and the default engine).
    pub vigil: PathBuf,
    /// Set on Ctrl-C: the sweep stops after the current step, cleaning up.
    pub stop: Arc<AtomicBool>,
    /// What another engine writes to a file of its log directory once it
    /// captures (Suricata's `Engine started`); the step waits for it.
    pub ready_text: String,
    /// How long an engine may take to get there (rules loading included).
    pub ready_timeout: Duration,
    /// Time between an engine being ready and the sender starting.
    pub warmup: Duration,
}

/// Suricata's words once its threads run (vigil writes them too).
pub const READY_TEXT: &str = "Engine started";

/// An engine's name names its log directories (emptied before each run):
/// letters, digits, `-`, `_` and `.`, not starting with a dot.
pub fn check_engine_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && !name.starts_with('.')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(format!("engine name {name:?}: use letters, digits, '-', '_' and '.' (it names a directory)"))
    }
}

/// The namespaces of a run, deleted on drop (the veth pair goes with them).
struct Lab {
    /// Sending and receiving namespaces.
    tx: String,
    rx: String,
    /// The veth ends in them.
    tx_if: String,
    rx_if: String,
}

impl Lab {
    fn new(mtu: u32) -> Result<Lab, String> {
        let id = std::process::id();
        let lab = Lab {
            tx: format!("vlab-tx-{id}"),
            rx: format!("vlab-rx-{id}"),
            tx_if: format!("vtx{id}"),
            rx_if: format!("vrx{id}"),
        };
        for cmd in [
            format!("ip netns add {}", lab.tx),
            format!("ip netns add {}", lab.rx),
            format!("ip link add {} netns {} type veth peer name {} netns {}", lab.tx_if, lab.tx, lab.rx_if, lab.rx),
            format!("ip -n {} link set {} mtu {mtu} up", lab.tx, lab.tx_if),
            format!("ip -n {} link set {} mtu {mtu} up", lab.rx, lab.rx_if),
            // No IPv6 and no addresses: the only frames on the wire are the sender's.
            format!("ip netns exec {} sysctl -q -w net.ipv6.conf.all.disable_ipv6=1", lab.tx),
            format!("ip netns exec {} sysctl -q -w net.ipv6.conf.all.disable_ipv6=1", lab.rx),
        ] {
            sh(&cmd)?;
        }
        // Best effort: offloads off, so frames arrive as they were sent.
        for (ns, dev) in [(&lab.tx, &lab.tx_if), (&lab.rx, &lab.rx_if)] {
            let _ = sh(&format!("ip netns exec {ns} ethtool -K {dev} tx off rx off tso off gso off gro off"));
        }
        Ok(lab)
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        let _ = sh(&format!("ip netns del {}", self.tx));
        let _ = sh(&format!("ip netns del {}", self.rx));
    }
}

fn sh(cmd: &str) -> Result<(), String> {
    let mut parts = cmd.split_whitespace();
    let prog = parts.next().unwrap_or_default();
    let out = Command::new(prog).args(parts).output().map_err(|e| format!("{cmd}: {e}"))?;
    if !out.status.success() {
        return Err(format!("{cmd}: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(())
}

/// What a sweep reports as it goes (the CLI draws a progress bar per step).
#[derive(Debug, Clone, Copy)]
pub enum Event<'a> {
    /// A step starts sending.
    Start { engine: &'a str, rate_mbps: f64, duration: Duration },
    /// A few times a second while the step sends: time so far, and the
    /// engine's counters when it answers on its control socket (vigil does).
    Tick { elapsed: Duration, live: Option<LiveCounters> },
    /// A step's result.
    Done(&'a Step),
}

/// How often a running step is reported.
const TICK: Duration = Duration::from_millis(250);

/// Runs the sweep: every engine at every rate, reporting each step to `progress`.
pub fn run(opts: &CapacityOptions, progress: &mut dyn FnMut(Event)) -> Result<Vec<Step>, String> {
    let lab = Lab::new(opts.mtu)?;
    std::fs::create_dir_all(&opts.out_dir).map_err(|e| format!("{}: {e}", opts.out_dir.display()))?;
    let mut steps = Vec::new();
    for engine in &opts.engines {
        for &rate in &opts.rates_mbps {
            if opts.stop.load(Ordering::Relaxed) {
                return Ok(steps);
            }
            let dir = opts.out_dir.join(format!("{}-{rate:.0}", engine.name()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            let name = engine.name();
            progress(Event::Start { engine: &name, rate_mbps: rate, duration: opts.duration });
            let step = one_step(opts, &lab, engine, rate, &dir, progress)?;
            progress(Event::Done(&step));
            steps.push(step);
        }
    }
    drop(lab);
    write_reports(opts, &steps)?;
    Ok(steps)
}

/// Writes `capacity.txt`, `.csv`, `.json`, the plots (`drop`, `cpu`) as SVG
/// and PNG, and `capacity.html`.
pub fn write_reports(opts: &CapacityOptions, steps: &[Step]) -> Result<(), String> {
    let about = format!(
        "{} replayed for {:.1} s per step, veth MTU {}, ring {} frames per worker",
        opts.pcap.display(),
        opts.duration.as_secs_f64(),
        opts.mtu,
        opts.ring_size
    );
    let files: [(&str, Vec<u8>); 8] = [
        ("capacity.txt", report::text(steps).into_bytes()),
        ("capacity.csv", report::csv(steps).into_bytes()),
        ("capacity.json", serde_json::to_string_pretty(&report::json(steps)).unwrap_or_default().into_bytes()),
        ("drop.svg", svg(steps, Plot::Drop)?.into_bytes()),
        ("cpu.svg", svg(steps, Plot::Cpu)?.into_bytes()),
        ("drop.png", png(steps, Plot::Drop)?),
        ("cpu.png", png(steps, Plot::Cpu)?),
        ("capacity.html", html(steps, &about)?.into_bytes()),
    ];
    for (name, bytes) in files {
        let p = opts.out_dir.join(name);
        std::fs::write(&p, bytes).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    Ok(())
}

struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

fn one_step(
    opts: &CapacityOptions,
    lab: &Lab,
    engine: &Engine,
    rate: f64,
    dir: &Path,
    progress: &mut dyn FnMut(Event),
) -> Result<Step, String> {
    let spawned = Instant::now();
    let mut child = Running(start_engine(opts, lab, engine, dir)?);
    let startup_secs = spawned.elapsed().as_secs_f64();
    std::thread::sleep(opts.warmup);
    let pid = child.0.id();
    let cpu_before = cpu_ticks(pid);
    let started = Instant::now();
    let mut sender = Command::new("ip")
        .args(["netns", "exec", &lab.tx])
        .arg(&opts.vigil)
        .args(["bench", "send", "--iface", &lab.tx_if, "-r"])
        .arg(&opts.pcap)
        .args(["--rate", &format!("{rate}"), "--duration", &format!("{}", opts.duration.as_secs_f64())])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("sender: {e}"))?;
    let mut watch = match engine {
        Engine::Vigil { .. } => Watch::connect(&dir.join("vigil-command.socket")),
        Engine::Command { .. } => None,
    };
    loop {
        match sender.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) => {}
            Err(e) => {
                let _ = sender.kill();
                let _ = sender.wait();
                return Err(format!("sender: {e}"));
            }
        }
        std::thread::sleep(TICK);
        let live = watch.as_mut().and_then(Watch::counters);
        progress(Event::Tick { elapsed: started.elapsed(), live });
    }
    // The sender has exited: its pipes hold all it wrote (a line of JSON).
    let out = sender.wait_with_output().map_err(|e| format!("sender: {e}"))?;
    if !out.status.success() {
        return Err(format!("sender failed: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    let sent: Value = serde_json::from_slice(&out.stdout).map_err(|e| format!("sender output: {e}"))?;
    let sent = Sent::from_json(&sent).ok_or("sender output: missing fields")?;
    // The last frames reach the ring and are inspected.
    std::thread::sleep(Duration::from_millis(300));
    let busy = cpu_ticks(pid).saturating_sub(cpu_before) as f64 / clock_ticks();
    let wall = started.elapsed().as_secs_f64();
    let rss = peak_rss_mb(pid);
    let _ = Command::new("kill").args(["-TERM", &pid.to_string()]).status();
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.0.try_wait().map_err(|e| e.to_string())?.is_none() {
        if Instant::now() > deadline {
            return Err(format!("{} did not stop within 30 s of SIGTERM", engine.name()));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let stats = last_stats(&dir.join("eve.json"))
        .ok_or_else(|| format!("{}: no stats record in {}", engine.name(), dir.join("eve.json").display()))?;
    // The same counters the progress line showed, now final.
    let c = LiveCounters::from_stats(&stats);
    Ok(Step {
        engine: engine.name(),
        offered_mbps: rate,
        sent_mbps: sent.bytes as f64 * 8.0 / sent.secs.max(1e-9) / 1e6,
        sent_packets: sent.packets,
        received: c.received,
        inspected: c.inspected,
        // Frames the capture never saw are lost too.
        dropped: c.dropped + sent.packets.saturating_sub(c.received),
        alerts: c.alerts,
        cpu_percent: 100.0 * busy / wall.max(1e-9),
        peak_rss_mb: rss,
        startup_secs,
        warmup_secs: opts.warmup.as_secs_f64(),
        harness_limited: false,
    })
}

/// Whether a file of `dir` (its first MiB) holds `text`.
fn says(dir: &Path, text: &str) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else { return false };
    entries.filter_map(Result::ok).any(|e| {
        let Ok(f) = std::fs::File::open(e.path()) else { return false };
        let mut head = Vec::new();
        use std::io::Read;
        f.take(1 << 20).read_to_end(&mut head).is_ok() && head.windows(text.len()).any(|w| w == text.as_bytes())
    })
}

fn start_engine(opts: &CapacityOptions, lab: &Lab, engine: &Engine, dir: &Path) -> Result<Child, String> {
    let rx_if = &lab.rx_if;
    let mut cmd = Command::new("ip");
    cmd.args(["netns", "exec", &lab.rx]);
    match engine {
        Engine::Vigil { workers } => {
            let include = dir.join("capture.yaml");
            // The control socket goes in the run's own directory, not the
            // shared run directory, so runs side by side keep their own.
            let yaml = format!(
                "%YAML 1.1\n---\naf-packet:\n  - interface: {rx_if}\n    threads: {workers}\n    ring-size: {}\nunix-command:\n  enabled: yes\n  filename: {}\n",
                opts.ring_size,
                dir.join("vigil-command.socket").display()
            );
            std::fs::write(&include, yaml).map_err(|e| e.to_string())?;
            cmd.arg(&opts.vigil).args(["-i", rx_if, "--runmode", "workers", "--threads", &workers.to_string()]);
            cmd.arg("--include").arg(&include).arg("-l").arg(dir).args(["-k", "none", "--quiet"]);
            if let Some(c) = &opts.config {
                cmd.arg("-c").arg(c);
            }
            match &opts.rules {
                Some(r) => {
                    cmd.arg("-S").arg(r);
                }
                None => {
                    cmd.arg("--disable-detection");
                }
            }
        }
        Engine::Command { template, .. } => {
            let line = template.replace("{iface}", rx_if).replace("{logdir}", &dir.display().to_string());
            cmd.args(["sh", "-c", &format!("exec {line}")]);
        }
    }
    let mut child =
        cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn().map_err(|e| format!("{}: {e}", engine.name()))?;
    // vigil's control socket appears once its capture is open; another
    // engine says so in its log (rules loading can take many seconds).
    let ready = dir.join("vigil-command.socket");
    let deadline = Instant::now() + opts.ready_timeout;
    loop {
        if let Ok(Some(st)) = child.try_wait() {
            return Err(format!("{} exited before the step ({st})", engine.name()));
        }
        let is_ready = match engine {
            Engine::Vigil { .. } => ready.exists(),
            // Suricata's words always do (the self-check's receiver says them too).
            Engine::Command { .. } => says(dir, &opts.ready_text) || says(dir, READY_TEXT),
        };
        if is_ready {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(match engine {
                Engine::Vigil { .. } => format!("vigil did not open its capture in {:?}", opts.ready_timeout),
                Engine::Command { name, .. } => format!(
                    "{name} did not write {:?} to a file of its log directory in {:?} (is its log there?)",
                    opts.ready_text, opts.ready_timeout
                ),
            });
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(child)
}

/// The last EVE stats record of a file.
fn last_stats(eve: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(eve).ok()?;
    text.lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["event_type"] == "stats")
        .map(|mut v| v["stats"].take())
}

/// User + system CPU ticks of a process so far (`/proc/<pid>/stat`).
fn cpu_ticks(pid: u32) -> u64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return 0 };
    // The command name may hold spaces: fields count from after its ')'.
    let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else { return 0 };
    let f: Vec<&str> = rest.split_whitespace().collect();
    let num = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    // utime and stime are fields 14 and 15 of the whole line: 11 and 12 after the name.
    num(11) + num(12)
}

fn clock_ticks() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(100.0)
}

/// Peak resident memory (`VmHWM`), MB.
fn peak_rss_mb(pid: u32) -> f64 {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else { return 0.0 };
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_cpu_fields_past_a_name_with_spaces() {
        // Our own process: the numbers exist and do not go backwards.
        let me = std::process::id();
        let a = cpu_ticks(me);
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = x.wrapping_add(i * i);
        }
        assert!(x > 0);
        assert!(cpu_ticks(me) >= a);
        assert!(peak_rss_mb(me) > 0.0);
    }
}
