//! Packets per second on one core, in one run: decode only, decode plus the
//! flow table, and decode plus flows plus TCP tracking and reassembly (with
//! the raw stream read out as detection would), over the real mixed
//! capture `../shared/bench/realistic-a.pcap` held in memory:
//! `cargo bench -p vigil-stream --bench stream`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use std::path::Path;
use vigil_capture::{PcapFile, Source};
use vigil_decode::{DecodeConfig, Decoder};
use vigil_flow::{FlowConfig, FlowTable};
use vigil_stream::{Segment, StreamConfig, StreamCtx, TcpSession};
use vigil_types::{Direction, LinkType, Timestamp};

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
        black_box(dec.decode(black_box(f), *ts, *lt, i as u64));
    }
}

fn decode_and_flow(dec: &mut Decoder, frames: &Frames) -> u64 {
    let mut flows: FlowTable = FlowTable::new(FlowConfig::default(), ahash::RandomState::with_seeds(1, 2, 3, 4));
    let mut ended = 0u64;
    for (i, (lt, ts, f)) in frames.iter().enumerate() {
        let p = dec.decode(black_box(f), *ts, *lt, i as u64);
        flows.tick(p.ts);
        black_box(flows.handle_packet(&p, true));
        ended += flows.drain_ended().count() as u64;
    }
    flows.flush();
    ended + flows.drain_ended().count() as u64
}

/// Returns the stream bytes read out for inspection.
fn decode_flow_stream(dec: &mut Decoder, frames: &Frames) -> u64 {
    let mut flows: FlowTable<Option<Box<TcpSession>>> =
        FlowTable::new(FlowConfig::default(), ahash::RandomState::with_seeds(1, 2, 3, 4));
    let mut ctx = StreamCtx::new(StreamConfig::default());
    let mut buf = Vec::new();
    let mut inspected = 0u64;
    let drain = |flows: &mut FlowTable<Option<Box<TcpSession>>>, ctx: &mut StreamCtx, buf: &mut Vec<u8>| {
        let mut n = 0;
        for mut f in flows.drain_ended() {
            if let Some(mut s) = f.ext.take() {
                for d in [Direction::ToServer, Direction::ToClient] {
                    while let Some((a, b)) = s.raw_ready(ctx, d, true) {
                        buf.clear();
                        s.read(d, a, b, buf);
                        n += buf.len() as u64;
                        s.raw_done(ctx, d, b);
                    }
                }
                ctx.end(&mut s);
            }
        }
        n
    };
    for (i, (lt, ts, f)) in frames.iter().enumerate() {
        let p = dec.decode(black_box(f), *ts, *lt, i as u64);
        flows.tick(p.ts);
        if let Some(h) = flows.handle_packet(&p, true) {
            if let (Some(seg), Some(fl)) = (Segment::from_packet(&p, h.dir), flows.get_mut(h)) {
                if fl.ext.is_none() {
                    fl.ext = ctx.start(&seg).map(Box::new);
                }
                if let Some(s) = fl.ext.as_deref_mut() {
                    s.handle(&mut ctx, &seg, &mut |_| {});
                    if let Some((a, b)) = s.raw_ready(&mut ctx, h.dir, s.reset) {
                        buf.clear();
                        s.read(h.dir, a, b, &mut buf);
                        inspected += black_box(&buf).len() as u64;
                        s.raw_done(&mut ctx, h.dir, b);
                    }
                }
            }
        }
        inspected += drain(&mut flows, &mut ctx, &mut buf);
    }
    flows.flush();
    inspected + drain(&mut flows, &mut ctx, &mut buf)
}

fn bench(c: &mut Criterion) {
    let Some(frames) = realistic() else {
        eprintln!("realistic-a.pcap not found: nothing to measure");
        return;
    };
    let mut dec = decoder();
    let bytes = decode_flow_stream(&mut dec, &frames);
    eprintln!("realistic-a: {} packets, {} stream bytes inspected", frames.len(), bytes);
    let mut g = c.benchmark_group("stream");
    g.sample_size(10);
    g.throughput(Throughput::Elements(frames.len() as u64));
    g.bench_function("realistic-a/decode-only", |b| b.iter(|| decode_only(&mut dec, &frames)));
    g.bench_function("realistic-a/decode+flow", |b| b.iter(|| decode_and_flow(&mut dec, &frames)));
    g.bench_function("realistic-a/decode+flow+stream", |b| b.iter(|| decode_flow_stream(&mut dec, &frames)));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
