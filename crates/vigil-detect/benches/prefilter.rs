//! Raw prefilter scan speed, Hyperscan against daachorse, over the frames of
//! `../shared/bench/realistic-a.pcap` with ET Open's content patterns:
//! `cargo bench -p vigil-detect --bench prefilter`. Throughput is in bytes
//! scanned (criterion prints it per second).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::path::Path;
use vigil_capture::{PcapFile, Source};
use vigil_detect::prefilter::{Algo, Pattern, Prefilter, Scratch};

fn et_contents() -> Vec<Pattern> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/rules/et-open");
    let mut set = std::collections::BTreeSet::new();
    let mut files: Vec<_> = std::fs::read_dir(dir).expect("ET Open").flatten().map(|e| e.path()).collect();
    files.sort();
    for f in files.iter().filter(|f| f.extension().is_some_and(|e| e == "rules")) {
        for line in std::fs::read_to_string(f).unwrap_or_default().lines().filter(|l| l.starts_with("alert")) {
            for part in line.split("content:\"").skip(1) {
                // Plain printable contents only: enough to measure scanning.
                if let Some(end) = part.find("\";") {
                    let c = &part[..end];
                    if c.len() >= 3 && !c.contains('|') && !c.contains('\\') {
                        set.insert((
                            c.as_bytes().to_vec(),
                            part[end..].split("content:").next().unwrap_or("").contains("nocase;"),
                        ));
                    }
                }
            }
        }
    }
    set.into_iter().map(|(b, n)| Pattern::new(b, n)).collect()
}

fn frames() -> Vec<Vec<u8>> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/bench/realistic-a.pcap");
    let mut src = PcapFile::open(p).expect("realistic-a.pcap");
    let mut v = Vec::new();
    while let Some(Ok(raw)) = src.next_packet() {
        if raw.data.len() > 64 {
            v.push(raw.data.to_vec());
        }
        if v.len() == 20_000 {
            break;
        }
    }
    v
}

fn bench(c: &mut Criterion) {
    let all = et_contents();
    let hays = frames();
    let bytes: u64 = hays.iter().map(|h| h.len() as u64).sum();
    let mut g = c.benchmark_group("prefilter");
    g.throughput(Throughput::Bytes(bytes));
    g.sample_size(10);
    for n in [100, 2_000, all.len()] {
        let set = &all[..n.min(all.len())];
        let mut algos = vec![Algo::AhoCorasick];
        if cfg!(feature = "hyperscan") {
            algos.insert(0, Algo::Hyperscan);
        }
        for algo in algos {
            let pf = Prefilter::build(set, algo).unwrap();
            let mut s = Scratch::default();
            g.bench_function(BenchmarkId::new(format!("{algo:?}"), set.len()), |b| {
                b.iter(|| {
                    let mut hits = 0usize;
                    for h in &hays {
                        pf.scan(&mut s, h, &mut |_| hits += 1);
                    }
                    hits
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
