//! Decode-only throughput, in packets per second on one core:
//! `cargo bench -p vigil-decode --bench decode`.
//!
//! Cases: one Ethernet/IPv4/TCP frame (the common case the issue sets a
//! 5 Mpps goal for), a mix built with vigil's own builders (IPv6, VLAN,
//! UDP, GRE), and the real mixed capture `../shared/bench/realistic-a.pcap`,
//! each with checksum validation off (`-k none`) and on.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::hint::black_box;
use std::path::Path;
use vigil_capture::{PcapFile, Source};
use vigil_decode::{DecodeConfig, Decoder};
use vigil_types::{LinkType, Timestamp};
use vigil_wire::build::{self, PacketBuilder};
use vigil_wire::{ethertype, ip_proto};

fn built_frames() -> Vec<(LinkType, Vec<u8>)> {
    let a = [198, 18, 0, 1];
    let b = [198, 18, 0, 2];
    let a6 = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
    let b6 = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];
    let payload = vec![b'x'; 512];
    let tcp = PacketBuilder::ipv4(a, b).tcp(40000, 80).payload(&payload).build_ethernet();
    let udp = PacketBuilder::ipv4(a, b).udp(53000, 53).payload(&payload[..60]).build_ethernet();
    let v6 = PacketBuilder::ipv6(a6, b6).tcp(40000, 443).payload(&payload).build_ethernet();
    let vlan = build::vlan_tag(&tcp, ethertype::VLAN, &[100]);
    let inner = PacketBuilder::ipv4(a, b).tcp(40001, 80).payload(&payload[..200]).build_ip();
    let gre = PacketBuilder::ipv4([198, 19, 0, 1], [198, 19, 0, 2])
        .protocol(ip_proto::GRE)
        .payload(&build::gre(ethertype::IPV4, None, None, &inner))
        .build_ethernet();
    [tcp, udp, v6, vlan, gre].into_iter().map(|f| (LinkType::Ethernet, f)).collect()
}

fn realistic() -> Option<Vec<(LinkType, Vec<u8>)>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/bench/realistic-a.pcap");
    let mut src = PcapFile::open(path).ok()?;
    let mut v = Vec::new();
    while let Some(Ok(raw)) = src.next_packet() {
        v.push((raw.linktype, raw.data.to_vec()));
    }
    Some(v)
}

fn run(dec: &mut Decoder, frames: &[(LinkType, Vec<u8>)]) {
    for (i, (lt, f)) in frames.iter().enumerate() {
        let p = dec.decode(black_box(f), Timestamp::default(), *lt, i as u64);
        black_box(&p);
    }
}

fn bench(c: &mut Criterion) {
    let single: Vec<_> = std::iter::repeat_n(built_frames().remove(0), 1000).collect();
    let mixed: Vec<_> = built_frames().into_iter().cycle().take(1000).collect();
    let mut cases = vec![("eth-ipv4-tcp", single), ("built-mix", mixed)];
    if let Some(r) = realistic() {
        cases.push(("realistic-a", r));
    } else {
        eprintln!("realistic-a.pcap not found: skipping that case");
    }
    let mut g = c.benchmark_group("decode");
    for (name, frames) in &cases {
        g.throughput(Throughput::Elements(frames.len() as u64));
        for checksums in [false, true] {
            let id = BenchmarkId::new(*name, if checksums { "checksums" } else { "no-checksums" });
            let mut dec = Decoder::new(DecodeConfig { validate_checksums: checksums, ..DecodeConfig::default() });
            g.bench_function(id, |bch| bch.iter(|| run(&mut dec, frames)));
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
