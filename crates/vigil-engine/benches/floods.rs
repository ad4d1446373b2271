//! Memory under floods: a SYN flood from a million sources and a flood of
//! first fragments that never complete, each run in a child process of its
//! own so its peak RSS (`VmHWM`) is its own. Reported against the memcaps
//! configured for the run: what the flood adds to the process must stay
//! within them (plus allocator slack), however many flows or datagrams it
//! starts. `cargo bench -p vigil-engine --bench floods`.

// The vigil binary's allocator, so the bench measures what it runs.
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;
use vigil_capture::PcapWriter;
use vigil_engine::{run_setup, setup, RunOptions};
use vigil_types::{LinkType, Timestamp};
use vigil_wire::build::PacketBuilder;

const SYNS: u32 = 1_000_000;
const FRAGMENTS: u32 = 300_000;
/// The caps of every run, in MiB: flow, stream (sessions), reassembly, defrag.
const CAPS: [(&str, u64); 4] =
    [("flow.memcap", 32), ("stream.memcap", 32), ("stream.reassembly.memcap", 64), ("defrag.memcap", 16)];

fn shared(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared").join(rel)
}

fn ts(i: u32) -> Timestamp {
    // 100,000 packets a second: every flow and datagram is still open at the end.
    Timestamp::from_micros(1_700_000_000 + i64::from(i / 100_000), (i % 100_000) * 10)
}

/// SYNs from distinct source addresses and ports of 198.18.0.0/16 to one server.
fn syn_flood(path: &Path) {
    let mut w = PcapWriter::new(std::fs::File::create(path).unwrap(), LinkType::Ethernet).unwrap();
    let n = std::env::var("VIGIL_FLOOD_PACKETS").ok().and_then(|v| v.parse().ok()).unwrap_or(SYNS);
    for i in 0..n {
        let src = [198, 18, (i >> 8) as u8, i as u8];
        let frame = PacketBuilder::ipv4(src, [198, 19, 0, 1])
            .tcp(1024 + (i >> 16) as u16, 80)
            .tcp_flags(0x02)
            .tcp_seq_ack(i, 0)
            .build_ethernet();
        w.write_packet(ts(i), &frame).unwrap();
    }
}

/// First fragments (more to come, never sent) of distinct datagrams.
fn fragment_flood(path: &Path) {
    let mut w = PcapWriter::new(std::fs::File::create(path).unwrap(), LinkType::Raw).unwrap();
    let payload = vec![0x41u8; 1000];
    for i in 0..FRAGMENTS {
        let src = [198, 18, (i >> 16) as u8, (i >> 8) as u8];
        let d = PacketBuilder::ipv4(src, [198, 19, 0, 1]).udp(5000, 5001).ident(i as u16).payload(&payload).build_ip();
        w.write_packet(ts(i), &vigil_defrag::split::ipv4_fragment(&d, 0, 504, true)).unwrap();
    }
}

/// `VmRSS` or `VmHWM` of this process, KiB.
fn status_kib(key: &str) -> u64 {
    let text = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    text.lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// The child: one flood through `single`, its memory before and at peak.
fn child(kind: &str, dir: &Path) {
    let pcap = dir.join(format!("{kind}.pcap"));
    match kind {
        "syn" => syn_flood(&pcap),
        _ => fragment_flood(&pcap),
    }
    let mut sets: Vec<String> = CAPS.iter().map(|(k, mib)| format!("{k}={mib}mb")).collect();
    // As many trackers and fragments as the flood brings: only the memcap limits them.
    sets.extend(["defrag.trackers=1000000".into(), "defrag.max-frags=1000000".into()]);
    // More `--set`s for experiments, space-separated.
    sets.extend(std::env::var("VIGIL_FLOOD_SETS").unwrap_or_default().split_whitespace().map(String::from));
    let opts = RunOptions {
        inputs: vec![pcap.clone()],
        config: Some(shared("reference/suricata-8.0/suricata-alerts-only.yaml")),
        log_dir: Some(dir.to_path_buf()),
        checksum: Some("none".into()),
        disable_detection: true,
        sets,
        ..Default::default()
    };
    let s = setup(&opts).expect("setup");
    let before = status_kib("VmRSS:");
    let t = Instant::now();
    let summary = run_setup(&s, &opts, &mut |_| {}).expect("run");
    let secs = t.elapsed().as_secs_f64();
    let peak = status_kib("VmHWM:");
    // The caps this flood can reach: flows and sessions, or datagrams.
    let in_play: &[&str] = if kind == "syn" { &["flow.memcap", "stream.memcap"] } else { &["defrag.memcap"] };
    let caps: u64 = CAPS.iter().filter(|(k, _)| in_play.contains(k)).map(|(_, m)| m * 1024).sum();
    println!(
        "{kind:<10} {:>9} packets {:>8.0} kpps  flows {:>8}  RSS before {:>7} KiB  peak {:>7} KiB  \
         growth {:>7} KiB  against {} = {caps} KiB",
        summary.packets,
        summary.packets as f64 / secs / 1e3,
        summary.flows,
        before,
        peak,
        peak.saturating_sub(before),
        in_play.join(" + ")
    );
    let _ = std::fs::remove_file(pcap);
}

fn main() {
    let dir = std::env::temp_dir().join(format!("vigil-floods-{}", std::process::id()));
    if let Ok(kind) = std::env::var("VIGIL_FLOOD") {
        let dir = PathBuf::from(std::env::var("VIGIL_FLOOD_DIR").unwrap_or_default());
        return child(&kind, &dir);
    }
    std::fs::create_dir_all(&dir).unwrap();
    let exe = std::env::current_exe().unwrap();
    println!("caps (MiB): {CAPS:?}");
    for kind in ["syn", "fragments"] {
        let out = Command::new(&exe).env("VIGIL_FLOOD", kind).env("VIGIL_FLOOD_DIR", &dir).output().unwrap();
        print!("{}", String::from_utf8_lossy(&out.stdout));
        if !out.status.success() {
            println!("{kind}: failed: {}", String::from_utf8_lossy(&out.stderr));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
