//! Throughput of the whole pipeline on one core, in one run, next to its
//! parts: decode only (in memory), then the engine on the real mixed capture
//! `../shared/bench/realistic-a.pcap` with flows and TCP streams but no
//! application layer and no rules, with the application layer, and with
//! every loadable ET Open rule (`../shared/rules/et-open`), all with the
//! alerts-only EVE configuration Suricata's reference numbers were measured
//! with (`../shared/reference/suricata-8.0/suricata-alerts-only.yaml`). Start-up (config
//! and rule loading) is timed apart and not counted in the throughput; each
//! configuration keeps the best of three passes, since the machine is shared.
//! Last, what detection costs against the raw prefilter scan: ET Open's
//! packet-level fast patterns in one matcher, run once over every packet's
//! payload, next to the time the rules add to the run.
//! `cargo bench -p vigil-engine --bench pipeline`.

// The vigil binary's allocator, so the bench measures what it runs.
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use vigil_capture::{PcapFile, Source};
use vigil_decode::{DecodeConfig, Decoder};
use vigil_engine::{run_setup, setup, RunOptions};
use vigil_types::{LinkType, Timestamp};

const PASSES: usize = 3;

type Frames = Vec<(LinkType, Timestamp, Vec<u8>)>;

fn shared(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared").join(rel)
}

/// Frames of the capture and their total size in bytes.
fn load(path: &Path) -> Option<(Frames, u64)> {
    let mut src = PcapFile::open(path).ok()?;
    let (mut v, mut bytes) = (Vec::new(), 0u64);
    while let Some(Ok(raw)) = src.next_packet() {
        bytes += raw.data.len() as u64;
        v.push((raw.linktype, raw.ts, raw.data.to_vec()));
    }
    Some((v, bytes))
}

fn best(mut f: impl FnMut()) -> Duration {
    (0..PASSES)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn line(name: &str, startup: Option<Duration>, d: Duration, pkts: u64, bytes: u64, base: Duration) {
    let s = d.as_secs_f64().max(1e-9);
    let start = startup.map_or("-".to_string(), |t| format!("{:.2}", t.as_secs_f64()));
    println!(
        "{name:<34} {start:>9} {:>9.3} {:>9.0} {:>10.0} {:>7.2}",
        s,
        pkts as f64 / s / 1e3,
        bytes as f64 * 8.0 / s / 1e6,
        s / base.as_secs_f64().max(1e-9)
    );
}

fn main() {
    let pcap = shared("bench/realistic-a.pcap");
    let Some((frames, bytes)) = load(&pcap) else {
        println!("skipped: {} not found", pcap.display());
        return;
    };
    let pkts = frames.len() as u64;
    println!("{pkts} packets, {bytes} bytes, best of {PASSES} passes, one core");
    println!("{:<34} {:>9} {:>9} {:>9} {:>10} {:>7}", "stage", "startup s", "run s", "kpps", "Mbit/s", "x dec");

    let mut dec = Decoder::new(DecodeConfig { validate_checksums: false, ..DecodeConfig::default() });
    let decode = best(|| {
        for (i, (lt, ts, f)) in frames.iter().enumerate() {
            std::hint::black_box(dec.decode(std::hint::black_box(f), *ts, *lt, i as u64));
        }
    });
    line("decode only (in memory)", None, decode, pkts, bytes, decode);

    let out = std::env::temp_dir().join(format!("vigil-bench-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    let no_app: Vec<String> = ["http.enabled", "tls.enabled", "dns.tcp.enabled", "dns.udp.enabled"]
        .iter()
        .map(|k| format!("app-layer.protocols.{k}=no"))
        .collect();
    let mut et: Vec<PathBuf> = std::fs::read_dir(shared("rules/et-open"))
        .map(|d| d.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "rules")).collect())
        .unwrap_or_default();
    et.sort();
    let classes = shared("reference/suricata-8.0/classification.config");
    let configs: [(&str, Vec<String>, Vec<PathBuf>); 3] = [
        ("decode + flow + stream, no rules", no_app, Vec::new()),
        ("+ app layer (http/dns/tls)", Vec::new(), Vec::new()),
        ("+ all loadable ET Open rules", vec![format!("classification-file={}", classes.display())], et),
    ];
    // (the run without rules, with the application layer; the ET Open run and its setup)
    let (mut app_run, mut et) = (None, None);
    for (name, sets, rules) in configs {
        let with_rules = !rules.is_empty();
        let opts = RunOptions {
            inputs: vec![pcap.clone()],
            config: Some(shared("reference/suricata-8.0/suricata-alerts-only.yaml")),
            log_dir: Some(out.clone()),
            checksum: Some("none".into()),
            disable_detection: rules.is_empty(),
            exclusive_rules: rules,
            sets,
            ..Default::default()
        };
        let t = Instant::now();
        let s = match setup(&opts) {
            Ok(s) => s,
            Err(e) => {
                println!("{name}: {e}");
                continue;
            }
        };
        let startup = t.elapsed();
        let run = best(|| {
            run_setup(&s, &opts, &mut |_| {}).unwrap();
        });
        line(name, Some(startup), run, pkts, bytes, decode);
        if with_rules {
            et = Some((run, s));
        } else if name.starts_with('+') {
            app_run = Some(run);
        }
    }
    if let (Some(app_run), Some((et_run, s))) = (app_run, et) {
        prefilter_against_detection(&frames, &s, et_run.saturating_sub(app_run));
    }
    let _ = std::fs::remove_dir_all(&out);
}

/// The raw scan of ET Open's packet-level fast patterns over every
/// payload, and how the time the rules add to a run compares with it.
fn prefilter_against_detection(frames: &Frames, s: &vigil_engine::Setup, detection: Duration) {
    use vigil_detect::prefilter::{Algo, Prefilter, Scratch};
    let Some(engine) = s.rules.engine.as_deref() else { return };
    let mut patterns: Vec<_> =
        engine.signatures().iter().filter(|s| s.tx.is_none()).filter_map(|s| s.fast_pattern.clone()).collect();
    patterns.sort_by(|a, b| (&a.bytes, a.nocase).cmp(&(&b.bytes, b.nocase)));
    patterns.dedup();
    let Ok(pf) = Prefilter::build(&patterns, Algo::best()) else { return };
    let mut dec = Decoder::new(DecodeConfig { validate_checksums: false, ..DecodeConfig::default() });
    let payloads: Vec<Vec<u8>> = frames
        .iter()
        .enumerate()
        .map(|(i, (lt, ts, f))| dec.decode(f, *ts, *lt, i as u64).payload().to_vec())
        .filter(|p| !p.is_empty())
        .collect();
    let payload_bytes: u64 = payloads.iter().map(|p| p.len() as u64).sum();
    let mut scratch = Scratch::default();
    let mut hits = 0u64;
    let scan = best(|| {
        for p in &payloads {
            pf.scan(&mut scratch, p, &mut |_| hits += 1);
        }
    });
    let secs = scan.as_secs_f64().max(1e-9);
    println!(
        "prefilter alone: {} packet fast patterns over {} payload bytes: {:.3} s ({:.0} Mbit/s)",
        patterns.len(),
        payload_bytes,
        secs,
        payload_bytes as f64 * 8.0 / secs / 1e6
    );
    println!(
        "detection (ET Open run - app-layer run): {:.3} s = {:.2}x the raw prefilter scan",
        detection.as_secs_f64(),
        detection.as_secs_f64() / secs
    );
}
