//! Random rules on random packets, bounded: whatever compiles runs without
//! a panic, and both prefilters raise the same alerts. The same generator
//! drives the `detect` fuzz target for unbounded runs.

#[path = "random/gen.rs"]
mod gen;

use gen::Draw;
use vigil_decode::{DecodeConfig, Decoder};
use vigil_detect::prefilter::Algo;
use vigil_detect::{compile, DetectEngine, DetectScratch};
use vigil_rules::{Classifications, Loader};
use vigil_types::{LinkType, Timestamp};

/// A xorshift stream: the same rules on every run.
fn noise(seed: u64, n: usize) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// (signatures that compiled, (frame, sid) of each alert).
fn alerts(rules: &str, frames: &[Vec<u8>], algo: Algo) -> Option<(usize, Vec<(usize, u32)>)> {
    let set = Loader::new().load_str(rules, "random.rules").ok()?;
    let classes = Classifications::default();
    let sigs: Vec<_> = set.rules.iter().filter_map(|r| compile(r, &classes).ok()).collect();
    let n = sigs.len();
    let engine = DetectEngine::build(sigs, algo).ok()?;
    let mut dec = Decoder::new(DecodeConfig::default());
    let mut scratch = DetectScratch::default();
    let mut out = Vec::new();
    for (i, f) in frames.iter().enumerate() {
        let p = dec.decode(f, Timestamp::from_micros(1_700_000_000, i as u32), LinkType::Ethernet, i as u64 + 1);
        engine.inspect(&p, None, None, &mut scratch, &mut |s| out.push((i, s.sid)));
    }
    Some((n, out))
}

#[test]
fn random_rules_run_and_both_prefilters_agree() {
    let algos: Vec<Algo> =
        if cfg!(feature = "hyperscan") { vec![Algo::Hyperscan, Algo::AhoCorasick] } else { vec![Algo::AhoCorasick] };
    let (mut compiled, mut fired) = (0, 0);
    for seed in 1..=300u64 {
        let data = noise(seed, 4096);
        let mut d = Draw::new(&data);
        let rules: Vec<String> = (0..1 + d.below(12)).map(|i| gen::rule(&mut d, i as u32 + 1)).collect();
        let frames: Vec<Vec<u8>> = (0..1 + d.below(6)).map(|_| gen::frame(&mut d)).collect();
        let text = rules.join("\n");
        let runs: Vec<_> = algos.iter().map(|&a| alerts(&text, &frames, a)).collect();
        if let Some(Some((n, first))) = runs.first() {
            compiled += n;
            fired += first.len();
        }
        assert!(runs.windows(2).all(|w| w[0] == w[1]), "prefilters disagree on seed {seed}:\n{text}");
    }
    // The generator must reach the engine, not only the parser's errors.
    assert!(compiled > 300 && fired > 50, "compiled {compiled}, fired {fired}");
}
