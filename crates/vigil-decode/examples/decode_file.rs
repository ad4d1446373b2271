//! Decodes a capture (default: ../shared/bench/realistic-a.pcap) from memory
//! N times and prints packets per second: a driver for profilers such as
//! `valgrind --tool=callgrind`, whose instruction counts do not depend on
//! what else the machine is doing.
//!
//! `cargo run --release -p vigil-decode --example decode_file -- [PCAP] [REPEAT]`

use std::hint::black_box;
use std::time::Instant;
use vigil_capture::{PcapFile, Source};
use vigil_decode::{DecodeConfig, Decoder};

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/bench/realistic-a.pcap").into());
    let repeat: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(1);
    let mut src = PcapFile::open(&path).unwrap_or_else(|e| panic!("{e}"));
    let mut frames = Vec::new();
    while let Some(Ok(raw)) = src.next_packet() {
        frames.push((raw.linktype, raw.ts, raw.data.to_vec()));
    }
    let mut dec = Decoder::new(DecodeConfig { validate_checksums: false, ..DecodeConfig::default() });
    let start = Instant::now();
    for _ in 0..repeat {
        for (i, (lt, ts, f)) in frames.iter().enumerate() {
            let p = dec.decode(f, *ts, *lt, i as u64);
            black_box(&p);
        }
    }
    let n = (frames.len() * repeat) as f64;
    let secs = start.elapsed().as_secs_f64();
    println!("{} packets x{repeat}: {:.2} Mpps", frames.len(), n / secs / 1e6);
}
