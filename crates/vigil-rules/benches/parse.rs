//! Parsing and loading all of ET Open (51 files, 37k rules).
//!
//! `cargo bench -p vigil-rules --bench parse`

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::sync::Arc;
use vigil_rules::{parse_text, Loader};

fn et_open() -> Vec<(String, String)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/rules/et-open");
    let mut files: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "rules"))
        .map(|p| (p.display().to_string(), std::fs::read_to_string(&p).unwrap()))
        .collect();
    files.sort();
    files
}

fn bench(c: &mut Criterion) {
    let files = et_open();
    let bytes: usize = files.iter().map(|(_, t)| t.len()).sum();
    let names: Vec<Arc<str>> = files.iter().map(|(n, _)| Arc::from(n.as_str())).collect();
    let mut g = c.benchmark_group("et-open");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(bytes as u64));
    g.bench_function("parse", |b| {
        b.iter(|| {
            let mut n = 0;
            for ((_, text), name) in files.iter().zip(&names) {
                n += parse_text(text, name).filter(|(r, _)| r.is_ok()).count();
            }
            assert!(n > 37_000);
            n
        })
    });
    g.bench_function("load", |b| {
        b.iter(|| {
            let mut n = 0;
            let loader = Loader::new();
            for (name, text) in &files {
                n += loader.load_str(text, name).unwrap().rules.len();
            }
            n
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
