//! How throughput grows with workers: the same captures through `single`,
//! through `autofp` and through `workers` with 1, 2 (and, where the machine
//! has the cores, 4) workers, with every loadable ET Open rule, in one run. Two captures: the
//! real mixed `../shared/bench/realistic-a.pcap` (a few elephant flows carry
//! much of it, so its spread over workers is uneven), and one generated here
//! with many equal HTTP flows, the case the workers are built for. Also
//! reports the tracking memory per 1,000 open flows (the flow, TCP session
//! and reassembly memuse gauges, over the flows open at that moment).
//! `cargo bench -p vigil-engine --bench scaling`.

// The vigil binary's allocator, so the bench measures what it runs.
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use vigil_capture::PcapWriter;
use vigil_engine::{run_setup, setup, RunOptions, Runmode, Setup};
use vigil_types::{LinkType, Timestamp};
use vigil_wire::build::PacketBuilder;

const PASSES: usize = 5;
/// Flows in the generated capture, all open until the last packets: enough
/// that a run lasts about a second, so thread start and the final flush (a
/// fixed cost) do not decide the speed-up. At most 65,536 (addresses).
const FLOWS: u32 = 64000;

fn shared(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared").join(rel)
}

/// `FLOWS` HTTP exchanges between distinct hosts of 198.18.0.0/15,
/// interleaved so every flow is open at once; FINs come last.
fn many_flows(path: &Path) {
    let mut w = PcapWriter::new(std::fs::File::create(path).unwrap(), LinkType::Ethernet).unwrap();
    let mut usec = 0u64;
    let host = |i: u32, side: u8| [198, 18 + side, (i >> 8) as u8, i as u8];
    let req = |i: u32| {
        format!("GET /item/{i}?q=search HTTP/1.1\r\nHost: shop{i}.example\r\nUser-Agent: bench\r\nAccept: */*\r\n\r\n")
    };
    let body = vec![b'x'; 1200];
    let resp = format!("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n", body.len() * 2);
    let (c_isn, s_isn) = (1000u32, 5000u32);
    let mut emit = |frame: Vec<u8>| {
        usec += 20;
        let ts = Timestamp::from_micros(1_700_000_000 + (usec / 1_000_000) as i64, (usec % 1_000_000) as u32);
        w.write_packet(ts, &frame).unwrap();
    };
    let c2s = |i: u32, flags: u8, seq: u32, ack: u32, data: &[u8]| {
        PacketBuilder::ipv4(host(i, 0), host(i, 1))
            .tcp(40000, 80)
            .tcp_flags(flags)
            .tcp_seq_ack(seq, ack)
            .payload(data)
            .build_ethernet()
    };
    let s2c = |i: u32, flags: u8, seq: u32, ack: u32, data: &[u8]| {
        PacketBuilder::ipv4(host(i, 1), host(i, 0))
            .tcp(80, 40000)
            .tcp_flags(flags)
            .tcp_seq_ack(seq, ack)
            .payload(data)
            .build_ethernet()
    };
    const SYN: u8 = 0x02;
    const ACK: u8 = 0x10;
    const PSH_ACK: u8 = 0x18;
    const FIN_ACK: u8 = 0x11;
    let q: Vec<u32> = (0..FLOWS).map(|i| req(i).len() as u32).collect();
    let r = (resp.len() + body.len() * 2) as u32;
    for step in 0..8 {
        for i in 0..FLOWS {
            let (c, s) = (c_isn + 1, s_isn + 1);
            let frame = match step {
                0 => c2s(i, SYN, c_isn, 0, b""),
                1 => s2c(i, SYN | ACK, s_isn, c, b""),
                2 => c2s(i, ACK, c, s, b""),
                3 => c2s(i, PSH_ACK, c, s, req(i).as_bytes()),
                4 => s2c(i, PSH_ACK, s, c + q[i as usize], &[resp.as_bytes(), &body].concat()),
                5 => s2c(i, PSH_ACK, s + (resp.len() + body.len()) as u32, c + q[i as usize], &body),
                6 => c2s(i, ACK, c + q[i as usize], s + r, b""),
                _ => c2s(i, FIN_ACK, c + q[i as usize], s + r, b""),
            };
            emit(frame);
        }
    }
}

/// CPU time of the process so far, every thread, user and system.
fn cpu_time() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
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

fn modes() -> Vec<Runmode> {
    // One mode alone, for profiling: `VIGIL_SCALING_MODE=single|1|2|4` (autofp) or `w1|w2|w4` (workers).
    match std::env::var("VIGIL_SCALING_MODE").as_deref() {
        Ok("single") => return vec![Runmode::Single],
        Ok(n) => {
            if let Some(Ok(workers)) = n.strip_prefix('w').map(str::parse) {
                return vec![Runmode::Workers { workers }];
            }
            if let Ok(workers) = n.parse() {
                return vec![Runmode::Autofp { workers }];
            }
        }
        Err(_) => {}
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut m = vec![
        Runmode::Single,
        Runmode::Autofp { workers: 1 },
        Runmode::Autofp { workers: 2 },
        Runmode::Workers { workers: 1 },
        Runmode::Workers { workers: 2 },
    ];
    if cpus >= 4 {
        m.push(Runmode::Autofp { workers: 4 });
        m.push(Runmode::Workers { workers: 4 });
    }
    m
}

/// What autofp's reader does alone, per pass over `path`: read each frame,
/// hash it to a worker, copy it into a batch.
fn reader_alone(path: &Path) -> Duration {
    use vigil_capture::{PcapFile, Source};
    best(|| {
        let mut src = PcapFile::open(path).unwrap();
        let mut batch: Vec<u8> = Vec::with_capacity(1 << 20);
        let mut spread = [0u64; 2];
        while let Some(Ok(raw)) = src.next_packet() {
            let i = ((u64::from(vigil_decode::dispatch_hash(raw.data, raw.linktype)) * 2) >> 32) as usize;
            spread[i] += 1;
            if batch.len() + raw.data.len() > batch.capacity() {
                batch.clear();
            }
            batch.extend_from_slice(raw.data);
        }
        std::hint::black_box((&batch, spread));
    })
}

fn measure(name: &str, base: &Setup, opts: &RunOptions) {
    let Ok(summary) = run_setup(base, opts, &mut |_| {}) else {
        println!("{name}: cannot be read");
        return;
    };
    let (pkts, bytes) = (summary.packets, summary.bytes);
    println!("{name}: {pkts} packets, {bytes} bytes, best of {PASSES} passes taken in turn");
    println!(
        "  {:<18} {:>8} {:>8} {:>9} {:>9} {:>12} {:>9}",
        "runmode", "run s", "cpu s", "kpps", "Mbit/s", "x 1 worker", "x single"
    );
    // The passes go round the modes (each mode once per pass) rather than
    // one mode's passes in a row: load from elsewhere on a shared machine
    // then falls on every mode alike, and the best of each is compared.
    let modes = modes();
    let setups: Vec<Setup> = modes.iter().map(|&runmode| Setup { runmode, ..base.clone() }).collect();
    // (wall time, CPU time) of each mode's fastest pass.
    let mut bests = vec![(Duration::MAX, Duration::ZERO); modes.len()];
    for _ in 0..PASSES {
        for (s, b) in setups.iter().zip(bests.iter_mut()) {
            let (t, cpu) = (Instant::now(), cpu_time());
            run_setup(s, opts, &mut |_| {}).unwrap();
            let run = (t.elapsed(), cpu_time().saturating_sub(cpu));
            *b = (*b).min(run);
        }
    }
    let (mut one, mut single) = (None, None);
    for (&mode, (d, cpu)) in modes.iter().zip(bests) {
        let secs = d.as_secs_f64().max(1e-9);
        match mode {
            Runmode::Autofp { workers: 1 } | Runmode::Workers { workers: 1 } => one = Some(secs),
            Runmode::Single => single = Some(secs),
            _ => {}
        }
        let label = match mode {
            Runmode::Single => "single".to_string(),
            Runmode::Autofp { workers } => format!("autofp, {workers} worker(s)"),
            Runmode::Workers { workers } => format!("workers, {workers}"),
        };
        let ratio = |base: Option<f64>| base.map_or("-".to_string(), |b| format!("{:.2}", b / secs));
        let (speedup, vs_single) = (ratio(one), ratio(single));
        println!(
            "  {label:<18} {secs:>8.3} {:>8.3} {:>9.0} {:>9.0} {speedup:>12} {vs_single:>9}",
            cpu.as_secs_f64(),
            pkts as f64 / secs / 1e3,
            bytes as f64 * 8.0 / secs / 1e6
        );
    }
    if let Some(input) = opts.inputs.first() {
        println!("  autofp's reader alone (read, hash, copy): {:.3} s", reader_alone(input).as_secs_f64());
    }
}

/// Tracking memory per 1,000 open flows: a stats record taken while every
/// generated flow is open (before the FINs), one worker.
fn memory(base: &Setup, opts: &RunOptions, out: &Path) {
    let s = Setup { runmode: Runmode::Single, ..base.clone() };
    let control = opts.control.clone();
    let open_until = u64::from(FLOWS) * 7;
    let mut asked = false;
    run_setup(&s, opts, &mut |p| {
        if !asked && p.packets + 4096 > open_until {
            asked = true;
            control.request_stats();
        }
    })
    .unwrap();
    let text = std::fs::read_to_string(out.join("eve.json")).unwrap_or_default();
    let stats = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|r| r["event_type"] == "stats");
    let Some(st) = stats.map(|r| r["stats"].clone()) else {
        println!("memory: no stats record (stats disabled in the configuration?)");
        return;
    };
    let g = |a: &str, b: &str| st[a][b].as_u64().unwrap_or(0);
    let open = g("flow", "active").max(1);
    let (flow, tcp, reasm) = (g("flow", "memuse"), g("tcp", "memuse"), g("tcp", "reassembly_memuse"));
    println!(
        "memory with {open} open flows: flow {} KiB, tcp sessions {} KiB, reassembly {} KiB: {:.0} KiB per 1,000 flows",
        flow / 1024,
        tcp / 1024,
        reasm / 1024,
        (flow + tcp + reasm) as f64 / 1024.0 / open as f64 * 1000.0
    );
}

fn main() {
    let out = std::env::temp_dir().join(format!("vigil-scaling-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    let gen = out.join("many-flows.pcap");
    many_flows(&gen);
    let mut et: Vec<PathBuf> = std::fs::read_dir(shared("rules/et-open"))
        .map(|d| d.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "rules")).collect())
        .unwrap_or_default();
    et.sort();
    let classes = shared("reference/suricata-8.0/classification.config");
    let opts_for = |input: PathBuf| RunOptions {
        inputs: vec![input],
        config: Some(shared("reference/suricata-8.0/suricata-alerts-only.yaml")),
        log_dir: Some(out.clone()),
        checksum: Some("none".into()),
        disable_detection: et.is_empty(),
        exclusive_rules: et.clone(),
        sets: vec![format!("classification-file={}", classes.display())],
        ..Default::default()
    };
    let gen_opts = opts_for(gen.clone());
    let t = Instant::now();
    let base = match setup(&gen_opts) {
        Ok(s) => s,
        Err(e) => {
            println!("setup failed: {e}");
            return;
        }
    };
    println!("start-up with {} rule files: {:.2} s", et.len(), t.elapsed().as_secs_f64());
    measure("generated, many equal HTTP flows", &base, &gen_opts);
    measure("realistic-a.pcap", &base, &opts_for(shared("bench/realistic-a.pcap")));
    // Stats on, for the memory record.
    let mem_opts = RunOptions { config: None, ..opts_for(gen) };
    if let Ok(s) = setup(&mem_opts) {
        memory(&s, &mem_opts, &out);
    }
    let _ = std::fs::remove_dir_all(&out);
}
