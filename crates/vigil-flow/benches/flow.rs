//! Packets per second on one core: decode only, against decode plus the
//! flow table (lookup or create, counters, state, timeouts by packet time,
//! ended flows drained as the engine does), over the real mixed capture
//! `../shared/bench/realistic-a.pcap` held in memory:
//! `cargo bench -p vigil-flow --bench flow`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use std::path::Path;
use vigil_capture::{PcapFile, Source};
use vigil_decode::{DecodeConfig, Decoder};
use vigil_flow::{FlowConfig, FlowTable};
use vigil_types::{LinkType, Timestamp};

type Frames = Vec<(LinkType, Timestamp, Vec<u8>)>;

fn realistic() -> Option<Frames> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/bench/realistic-a.pcap");
    let mut src = PcapFile::open(path).ok()?;
    let mut v = Vec::new();
    while let Some(Ok(raw)) = src.next_packet() {
        v.push((raw.linktype, raw.ts, raw.data.to_vec()));
    }
    Some(v)
}

fn decoder() -> Decoder {
    Decoder::new(DecodeConfig { validate_checksums: false, ..DecodeConfig::default() })
}

fn decode_only(dec: &mut Decoder, frames: &Frames) {
    for (i, (lt, ts, f)) in frames.iter().enumerate() {
        let p = dec.decode(black_box(f), *ts, *lt, i as u64);
        black_box(&p);
    }
}

fn decode_and_flow(dec: &mut Decoder, frames: &Frames) -> u64 {
    let mut flows: FlowTable = FlowTable::new(FlowConfig::default(), ahash::RandomState::with_seeds(1, 2, 3, 4));
    let mut ended = 0u64;
    for (i, (lt, ts, f)) in frames.iter().enumerate() {
        let p = dec.decode(black_box(f), *ts, *lt, i as u64);
        black_box(flows.handle_packet(&p, true));
        ended += flows.drain_ended().count() as u64;
    }
    flows.flush();
    ended + flows.drain_ended().count() as u64
}

fn bench(c: &mut Criterion) {
    let Some(frames) = realistic() else {
        eprintln!("realistic-a.pcap not found: nothing to measure");
        return;
    };
    let mut dec = decoder();
    let flows = decode_and_flow(&mut dec, &frames);
    eprintln!("realistic-a: {} packets, {} flows", frames.len(), flows);
    let mut g = c.benchmark_group("flow");
    g.sample_size(10);
    g.throughput(Throughput::Elements(frames.len() as u64));
    g.bench_function("realistic-a/decode-only", |b| b.iter(|| decode_only(&mut dec, &frames)));
    g.bench_function("realistic-a/decode+flow", |b| b.iter(|| decode_and_flow(&mut dec, &frames)));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
