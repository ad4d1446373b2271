//! `vigil bench offline`: a capture read into memory once and inspected
//! `repeat` times on one thread, so file I/O stays out of the numbers.
//!
//! Throughput is given per wall second and per CPU second (user + system).
//! The split of time between stages is measured by running the same frames
//! again with stages switched off and subtracting:
//!
//! | run | what runs |
//! |---|---|
//! | decode only | the decoder |
//! | no app-layer, no detection | decode, defrag, flow, stream (app-layer parsers off by config) |
//! | no detection | ... and app-layer (`--disable-detection`) |
//! | full | ... and detection, alert output |
//!
//! decode = decode only; flow+stream = no-app − decode only; app-layer =
//! no-detection − no-app; detection = full − no-detection. Outputs (EVE
//! records) count with the stage that produces them. A difference below zero
//! (noise) is shown as 0.

use crate::cpu::process_cpu_time;
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use vigil_capture::{PcapFile, Source};
use vigil_engine::{run_frames, MemFrame, MemRun, RunOptions};

/// What to measure.
#[derive(Debug, Clone, Default)]
pub struct BenchOptions {
    pub input: PathBuf,
    /// `-S`: only these rule files (else the configuration's).
    pub rules: Vec<PathBuf>,
    pub config: Option<PathBuf>,
    pub sets: Vec<String>,
    /// `-k`.
    pub checksum: Option<String>,
    /// Passes per configuration (at least 1).
    pub repeat: u32,
    /// Also run the stage-split configurations.
    pub split: bool,
    /// Where the runs' outputs go (overwritten by each pass).
    pub log_dir: PathBuf,
}

/// The app-layer parsers vigil has, switched off for the no-app run.
pub const APP_LAYER_OFF: [&str; 4] = [
    "app-layer.protocols.http.enabled=no",
    "app-layer.protocols.tls.enabled=no",
    "app-layer.protocols.dns.tcp.enabled=no",
    "app-layer.protocols.dns.udp.enabled=no",
];

/// Time spent by one configuration over all its passes.
#[derive(Debug, Clone, Default)]
pub struct Measure {
    pub passes: u32,
    pub wall: Duration,
    pub cpu: Duration,
    /// The last pass's results.
    pub run: MemRun,
}

impl Measure {
    fn cpu_per_pass(&self) -> f64 {
        self.cpu.as_secs_f64() / f64::from(self.passes.max(1))
    }

    fn wall_per_pass(&self) -> f64 {
        self.wall.as_secs_f64() / f64::from(self.passes.max(1))
    }
}

/// CPU seconds per pass of each stage (by subtraction).
#[derive(Debug, Clone, Default)]
pub struct Split {
    pub decode: f64,
    pub flow_stream: f64,
    pub app_layer: f64,
    pub detection: f64,
    pub decode_only: Measure,
    pub no_app: Measure,
    pub no_detection: Measure,
}

#[derive(Debug, Clone, Default)]
pub struct BenchReport {
    pub input: PathBuf,
    pub packets: u64,
    pub bytes: u64,
    pub repeat: u32,
    pub full: Measure,
    pub split: Option<Split>,
    pub warnings: Vec<String>,
}

/// Every frame of a capture, in memory.
pub fn load(path: &std::path::Path) -> Result<Vec<MemFrame>, String> {
    let mut src = PcapFile::open(path).map_err(|e| e.to_string())?;
    let mut frames = Vec::new();
    while let Some(next) = src.next_packet() {
        let raw = next.map_err(|e| e.to_string())?;
        frames.push(MemFrame { ts: raw.ts, linktype: raw.linktype, data: raw.data.to_vec() });
    }
    Ok(frames)
}

/// Runs the benchmark.
pub fn run(opts: &BenchOptions) -> Result<BenchReport, String> {
    let frames = load(&opts.input).map_err(|e| format!("{}: {e}", opts.input.display()))?;
    std::fs::create_dir_all(&opts.log_dir).map_err(|e| format!("{}: {e}", opts.log_dir.display()))?;
    let repeat = opts.repeat.max(1);
    let base = RunOptions {
        log_dir: Some(opts.log_dir.clone()),
        config: opts.config.clone(),
        sets: opts.sets.clone(),
        checksum: opts.checksum.clone(),
        exclusive_rules: opts.rules.clone(),
        runmode: Some("single".into()),
        ..RunOptions::default()
    };
    let mut warnings = Vec::new();
    let full = measure(&base, &frames, false, repeat, &mut warnings)?;
    let split = if opts.split {
        let no_detection = RunOptions { disable_detection: true, ..base.clone() };
        let mut no_app = no_detection.clone();
        no_app.sets.extend(APP_LAYER_OFF.iter().map(|s| s.to_string()));
        let decode_only = measure(&base, &frames, true, repeat, &mut Vec::new())?;
        let no_app = measure(&no_app, &frames, false, repeat, &mut Vec::new())?;
        let no_detection = measure(&no_detection, &frames, false, repeat, &mut Vec::new())?;
        let d = decode_only.cpu_per_pass();
        let a = no_app.cpu_per_pass();
        let n = no_detection.cpu_per_pass();
        let f = full.cpu_per_pass();
        Some(Split {
            decode: d,
            flow_stream: (a - d).max(0.0),
            app_layer: (n - a).max(0.0),
            detection: (f - n).max(0.0),
            decode_only,
            no_app,
            no_detection,
        })
    } else {
        None
    };
    Ok(BenchReport {
        input: opts.input.clone(),
        packets: frames.len() as u64,
        bytes: frames.iter().map(|f| f.data.len() as u64).sum(),
        repeat,
        full,
        split,
        warnings,
    })
}

/// `repeat` passes of one configuration (the setup, rules included, is made
/// once, outside the measurement).
fn measure(
    opts: &RunOptions,
    frames: &[MemFrame],
    decode_only: bool,
    repeat: u32,
    warnings: &mut Vec<String>,
) -> Result<Measure, String> {
    let setup = vigil_engine::setup(opts).map_err(|e| e.to_string())?;
    warnings.extend(setup.warnings.iter().cloned());
    let mut m = Measure::default();
    for _ in 0..repeat {
        let (w0, c0) = (Instant::now(), process_cpu_time());
        m.run = run_frames(&setup, frames, decode_only).map_err(|e| e.to_string())?;
        m.cpu += process_cpu_time().saturating_sub(c0);
        m.wall += w0.elapsed();
        m.passes += 1;
    }
    Ok(m)
}

/// `x` per second of `secs`, or 0 when no time was measured.
fn rate(x: f64, secs: f64) -> f64 {
    if secs > 0.0 {
        x / secs
    } else {
        0.0
    }
}

impl BenchReport {
    fn totals(&self) -> (f64, f64) {
        let n = f64::from(self.repeat);
        (self.packets as f64 * n, self.bytes as f64 * 8.0 * n)
    }

    /// The report as a text table.
    pub fn table(&self) -> String {
        let (pkts, bits) = self.totals();
        let (wall, cpu) = (self.full.wall.as_secs_f64(), self.full.cpu.as_secs_f64());
        let mut s = String::new();
        let _ = writeln!(
            s,
            "vigil bench offline: {} ({} packets, {} bytes), {} pass(es), one thread, frames in memory",
            self.input.display(),
            self.packets,
            self.bytes,
            self.repeat
        );
        let _ = writeln!(s, "  {:<22} {:>14} {:>14}", "", "per wall-sec", "per CPU-sec");
        let _ = writeln!(s, "  {:<22} {:>14.0} {:>14.0}", "packets", rate(pkts, wall), rate(pkts, cpu));
        let _ = writeln!(s, "  {:<22} {:>14.3} {:>14.3}", "Gbit", rate(bits, wall) / 1e9, rate(bits, cpu) / 1e9);
        let _ = writeln!(
            s,
            "  {:<22} {:>14.3} {:>14.3}",
            "seconds per pass",
            self.full.wall_per_pass(),
            self.full.cpu_per_pass()
        );
        let _ = writeln!(s, "  alerts per pass        {}", self.full.run.alerts);
        let _ = writeln!(s, "  flows per pass         {}", self.full.run.flows);
        if let Some(sp) = &self.split {
            let total = sp.decode + sp.flow_stream + sp.app_layer + sp.detection;
            let _ = writeln!(
                s,
                "  stage split (CPU time per pass, measured by running the same input with stages switched off and subtracting):"
            );
            for (name, v) in [
                ("decode", sp.decode),
                ("defrag+flow+stream", sp.flow_stream),
                ("app-layer", sp.app_layer),
                ("detection", sp.detection),
            ] {
                let pct = if total > 0.0 { v / total * 100.0 } else { 0.0 };
                let _ = writeln!(s, "    {:<20} {:>10.3} ms {:>6.1} %", name, v * 1e3, pct);
            }
        }
        for w in &self.warnings {
            let _ = writeln!(s, "  warning: {w}");
        }
        s
    }

    /// The report as JSON.
    pub fn to_json(&self) -> Value {
        let (pkts, bits) = self.totals();
        let m = |m: &Measure| {
            json!({
                "passes": m.passes,
                "wall_secs": m.wall.as_secs_f64(),
                "cpu_secs": m.cpu.as_secs_f64(),
                "alerts": m.run.alerts,
                "flows": m.run.flows,
            })
        };
        let (wall, cpu) = (self.full.wall.as_secs_f64(), self.full.cpu.as_secs_f64());
        let mut v = json!({
            "input": self.input.display().to_string(),
            "packets": self.packets,
            "bytes": self.bytes,
            "repeat": self.repeat,
            "threads": 1,
            "packets_per_sec": rate(pkts, wall),
            "gbit_per_sec": rate(bits, wall) / 1e9,
            "packets_per_cpu_sec": rate(pkts, cpu),
            "gbit_per_cpu_sec": rate(bits, cpu) / 1e9,
            "alerts_per_pass": self.full.run.alerts,
            "full": m(&self.full),
            "warnings": self.warnings,
        });
        if let Some(sp) = &self.split {
            v["stage_split"] = json!({
                "method": "CPU seconds per pass, measured by running the same input with stages switched off and subtracting: decode = decode-only run; flow_stream = (no app-layer, no detection) - decode-only; app_layer = (no detection) - (no app-layer, no detection); detection = full - (no detection); negative differences shown as 0",
                "decode_cpu_secs": sp.decode,
                "flow_stream_cpu_secs": sp.flow_stream,
                "app_layer_cpu_secs": sp.app_layer,
                "detection_cpu_secs": sp.detection,
                "runs": {
                    "decode_only": m(&sp.decode_only),
                    "no_app_layer_no_detection": m(&sp.no_app),
                    "no_detection": m(&sp.no_detection),
                },
            });
        }
        v
    }
}
