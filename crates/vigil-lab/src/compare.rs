//! `vigil bench offline --engine NAME=COMMAND`: vigil and another engine
//! (the reference Suricata, say) run on the same capture in turn, pass after
//! pass, each as a process of its own, and their processing compared.
//!
//! Start-up is measured apart: each pass also runs each engine on a capture
//! of the first packet alone (Suricata refuses one without packets), and
//! processing is the full run less that one, in wall time and in CPU time (user + system of the process and
//! its threads, from what the kernel counts for reaped children). Passes
//! alternate between the engines so load from elsewhere on a shared machine
//! falls on both alike; the best pass of each is reported (the least
//! disturbed), with the median beside it.
//!
//! COMMAND is run by `sh -c` with `{pcap}` replaced by the capture to read
//! and `{log}` by a fresh log directory; vigil is run as
//! `vigil -r {pcap} -l {log} -k none --runmode single --quiet` plus the
//! bench's `-c`, `-S`, `--set` and `-k`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// One engine's command template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineCmd {
    pub name: String,
    pub template: String,
}

impl EngineCmd {
    /// `NAME=COMMAND`.
    pub fn parse(s: &str) -> Result<EngineCmd, String> {
        let (name, template) = s.split_once('=').ok_or_else(|| format!("expected NAME=COMMAND, got {s:?}"))?;
        if name.is_empty() || template.trim().is_empty() {
            return Err(format!("expected NAME=COMMAND, got {s:?}"));
        }
        // The name becomes a log directory, emptied before each run.
        crate::capacity::check_engine_name(name)?;
        if !template.contains("{pcap}") {
            return Err(format!("{name}: the command must read {{pcap}}"));
        }
        Ok(EngineCmd { name: name.to_string(), template: template.to_string() })
    }

    fn command(&self, pcap: &Path, log: &Path) -> String {
        self.template.replace("{pcap}", &shell_quote(pcap)).replace("{log}", &shell_quote(log))
    }
}

fn shell_quote(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', "'\\''"))
}

/// Wall and CPU time of one run.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Times {
    pub wall: f64,
    pub cpu: f64,
}

/// One engine's passes: (full run, first-packet run) each.
#[derive(Debug, Clone, Default)]
pub struct EngineRuns {
    pub name: String,
    pub command: String,
    pub passes: Vec<(Times, Times)>,
    /// Alerts of the last full run, where it wrote an `eve.json` in `{log}`.
    pub alerts: Option<u64>,
}

impl EngineRuns {
    /// Processing (full less first-packet run) of each pass, best first.
    fn processing(&self) -> Vec<Times> {
        let mut v: Vec<Times> = self
            .passes
            .iter()
            .map(|(f, e)| Times { wall: (f.wall - e.wall).max(0.0), cpu: (f.cpu - e.cpu).max(0.0) })
            .collect();
        v.sort_by(|a, b| a.cpu.total_cmp(&b.cpu));
        v
    }

    fn startup(&self) -> Times {
        let n = self.passes.len().max(1) as f64;
        let (w, c) = self.passes.iter().fold((0.0, 0.0), |(w, c), (_, e)| (w + e.wall, c + e.cpu));
        Times { wall: w / n, cpu: c / n }
    }

    /// Best and median processing CPU time.
    pub fn cpu(&self) -> (f64, f64) {
        let p = self.processing();
        (p.first().map_or(0.0, |t| t.cpu), p.get(p.len() / 2).map_or(0.0, |t| t.cpu))
    }

    pub fn wall(&self) -> f64 {
        let mut p = self.processing();
        p.sort_by(|a, b| a.wall.total_cmp(&b.wall));
        p.first().map_or(0.0, |t| t.wall)
    }
}

/// The comparison's result.
#[derive(Debug, Clone, Default)]
pub struct Comparison {
    pub input: PathBuf,
    pub packets: u64,
    pub bytes: u64,
    pub engines: Vec<EngineRuns>,
}

/// CPU time of this process's reaped children so far: `cutime + cstime`
/// of `/proc/self/stat`, in the kernel's USER_HZ ticks (100 a second on
/// Linux's architectures).
fn children_cpu() -> Result<f64, String> {
    let stat = std::fs::read_to_string("/proc/self/stat").map_err(|e| format!("/proc/self/stat: {e}"))?;
    // The command name may hold spaces: fields count from after its ')'.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).ok_or("/proc/self/stat: no ')'")?;
    let f: Vec<&str> = rest.split_whitespace().collect();
    // After ')': field 3 (state) is f[0], so field N is f[N - 3].
    let tick = |n: usize| f.get(n - 3).and_then(|v| v.parse::<f64>().ok()).ok_or("/proc/self/stat: short");
    Ok((tick(16)? + tick(17)?) / 100.0)
}

fn timed(cmd: &str) -> Result<Times, String> {
    let c0 = children_cpu()?;
    let t0 = Instant::now();
    let out = Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("{cmd}: {e}"))?;
    let wall = t0.elapsed().as_secs_f64();
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = err.lines().rev().take(5).collect();
        return Err(format!("{cmd}: {} ({})", out.status, tail.into_iter().rev().collect::<Vec<_>>().join(" / ")));
    }
    Ok(Times { wall, cpu: children_cpu()? - c0 })
}

fn count_alerts(log: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(log.join("eve.json")).ok()?;
    Some(text.lines().filter(|l| l.contains("\"event_type\":\"alert\"")).count() as u64)
}

/// A capture of `first` alone: what start-up costs (Suricata refuses a
/// capture without packets).
fn first_packet_capture(first: Option<&vigil_engine::MemFrame>, out: &Path) -> Result<(), String> {
    let file = std::fs::File::create(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let linktype = first.map_or(vigil_types::LinkType::Ethernet, |f| f.linktype);
    let mut w = vigil_capture::PcapWriter::new(file, linktype).map_err(|e| format!("{}: {e}", out.display()))?;
    if let Some(f) = first {
        w.write_packet(f.ts, &f.data).map_err(|e| format!("{}: {e}", out.display()))?;
    }
    Ok(())
}

/// vigil's own command for the comparison.
pub fn vigil_command(exe: &Path, opts: &crate::offline::BenchOptions) -> EngineCmd {
    let mut t = format!("{} -r {{pcap}} -l {{log}} --runmode single --quiet", shell_quote(exe));
    t.push_str(&format!(" -k {}", opts.checksum.as_deref().unwrap_or("none")));
    if let Some(c) = &opts.config {
        t.push_str(&format!(" -c {}", shell_quote(c)));
    }
    for r in &opts.rules {
        t.push_str(&format!(" -S {}", shell_quote(r)));
    }
    for s in &opts.sets {
        t.push_str(&format!(" --set '{}'", s.replace('\'', "'\\''")));
    }
    EngineCmd { name: "vigil".into(), template: t }
}

/// Runs every engine `repeat` times, in turn.
pub fn compare(input: &Path, engines: &[EngineCmd], repeat: u32, log_dir: &Path) -> Result<Comparison, String> {
    std::fs::create_dir_all(log_dir).map_err(|e| format!("{}: {e}", log_dir.display()))?;
    // A directory is read as both engines read one: its files in name order.
    let files: Vec<PathBuf> = if input.is_dir() {
        let mut v: Vec<PathBuf> = std::fs::read_dir(input)
            .map_err(|e| format!("{}: {e}", input.display()))?
            .filter_map(|d| d.ok().map(|d| d.path()))
            .filter(|p| p.is_file())
            .collect();
        v.sort();
        v
    } else {
        vec![input.to_path_buf()]
    };
    let (mut packets, mut bytes, mut first) = (0u64, 0u64, None);
    for f in &files {
        let frames = crate::offline::load(f)?;
        packets += frames.len() as u64;
        bytes += frames.iter().map(|f| f.data.len() as u64).sum::<u64>();
        if first.is_none() {
            first = frames.into_iter().next();
        }
    }
    let empty = log_dir.join("first-packet.pcap");
    first_packet_capture(first.as_ref(), &empty)?;
    let mut runs: Vec<EngineRuns> =
        engines.iter().map(|e| EngineRuns { name: e.name.clone(), ..EngineRuns::default() }).collect();
    for _ in 0..repeat.max(1) {
        for (e, r) in engines.iter().zip(runs.iter_mut()) {
            let log = log_dir.join(&e.name);
            let fresh = |p: &Path| {
                let _ = std::fs::remove_dir_all(p);
                std::fs::create_dir_all(p).map_err(|err| format!("{}: {err}", p.display()))
            };
            fresh(&log)?;
            let full = timed(&e.command(input, &log))?;
            r.alerts = count_alerts(&log);
            fresh(&log)?;
            let none = timed(&e.command(&empty, &log))?;
            r.command = e.command(input, &log);
            r.passes.push((full, none));
        }
    }
    Ok(Comparison { input: input.to_path_buf(), packets, bytes, engines: runs })
}

impl Comparison {
    pub fn table(&self) -> String {
        let mut s = String::new();
        let passes = self.engines.first().map_or(0, |e| e.passes.len());
        let _ = writeln!(
            s,
            "vigil bench offline --engine: {} ({} packets, {} bytes), {passes} pass(es) each, in turn",
            self.input.display(),
            self.packets,
            self.bytes
        );
        let _ = writeln!(
            s,
            "  {:<12} {:>11} {:>11} {:>11} {:>11} {:>11} {:>9}",
            "engine", "proc CPU s", "median", "proc wall s", "start-up s", "kpkt/CPU-s", "alerts"
        );
        for e in &self.engines {
            let (best, median) = e.cpu();
            let kpps = if best > 0.0 { self.packets as f64 / best / 1e3 } else { 0.0 };
            let alerts = e.alerts.map_or("-".to_string(), |a| a.to_string());
            let _ = writeln!(
                s,
                "  {:<12} {:>11.3} {:>11.3} {:>11.3} {:>11.3} {:>11.1} {:>9}",
                e.name,
                best,
                median,
                e.wall(),
                e.startup().wall,
                kpps,
                alerts
            );
        }
        if let [first, rest @ ..] = self.engines.as_slice() {
            for other in rest {
                let (a, b) = (first.cpu().0, other.cpu().0);
                if a > 0.0 {
                    let _ = writeln!(
                        s,
                        "  {} per CPU-second of processing: {:.2}x {} (best passes; medians {:.2}x)",
                        first.name,
                        b / a,
                        other.name,
                        if first.cpu().1 > 0.0 { other.cpu().1 / first.cpu().1 } else { 0.0 }
                    );
                }
            }
        }
        for e in &self.engines {
            let _ = writeln!(s, "  {}: {}", e.name, e.command);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_commands_are_parsed_and_filled() {
        let e = EngineCmd::parse("suricata=suricata -r {pcap} -l {log} -k none").unwrap();
        assert_eq!(e.name, "suricata");
        assert_eq!(e.command(Path::new("/t/a b.pcap"), Path::new("/l")), "suricata -r '/t/a b.pcap' -l '/l' -k none");
        assert!(EngineCmd::parse("suricata").is_err());
        assert!(EngineCmd::parse("x=run without capture").is_err());
        assert!(EngineCmd::parse("../x=run {pcap}").is_err(), "a name that leaves the log directory");
    }

    #[test]
    fn children_cpu_counts_a_busy_child() {
        let before = children_cpu().unwrap();
        let t = timed("i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done").unwrap();
        assert!(t.cpu > 0.0 && children_cpu().unwrap() > before, "{t:?}");
        assert!(t.wall >= t.cpu * 0.5, "{t:?}");
    }

    #[test]
    fn processing_is_the_full_run_less_the_start_up_run() {
        let r = EngineRuns {
            passes: vec![
                (Times { wall: 3.0, cpu: 2.5 }, Times { wall: 1.0, cpu: 1.0 }),
                (Times { wall: 2.6, cpu: 2.2 }, Times { wall: 1.0, cpu: 0.9 }),
            ],
            ..EngineRuns::default()
        };
        assert_eq!(r.cpu().0, 2.2 - 0.9);
        assert!((r.wall() - 1.6).abs() < 1e-9);
        assert_eq!(r.startup(), Times { wall: 1.0, cpu: 0.95 });
    }
}
