//! Both prefilter matchers give exactly the candidate set a naive search
//! gives: on random patterns and buffers, and on ET Open's content patterns
//! over real traffic.

use proptest::prelude::*;
use std::collections::BTreeSet;
use std::path::Path;
use vigil_capture::{PcapFile, Source};
use vigil_detect::prefilter::{Algo, Pattern, Prefilter, Scratch};

fn naive(patterns: &[Pattern], hay: &[u8]) -> Vec<u32> {
    let mut out = Vec::new();
    for (i, p) in patterns.iter().enumerate() {
        let found =
            hay.windows(p.bytes.len()).any(|w| if p.nocase { w.eq_ignore_ascii_case(&p.bytes) } else { w == p.bytes });
        if found {
            out.push(i as u32);
        }
    }
    out
}

fn algos() -> Vec<Algo> {
    if cfg!(feature = "hyperscan") {
        vec![Algo::Hyperscan, Algo::AhoCorasick]
    } else {
        vec![Algo::AhoCorasick]
    }
}

fn byte() -> impl Strategy<Value = u8> {
    prop_oneof![Just(b'a'), Just(b'b'), Just(b'A'), Just(b'B'), Just(0u8), Just(0xff), Just(b'|')]
}

proptest! {
    #[test]
    fn matchers_agree_with_naive_search(
        patterns in proptest::collection::vec((proptest::collection::vec(byte(), 1..6), any::<bool>()), 1..40),
        hays in proptest::collection::vec(proptest::collection::vec(byte(), 0..300), 1..5),
    ) {
        let patterns: Vec<Pattern> = patterns.into_iter().map(|(b, n)| Pattern::new(b, n)).collect();
        for algo in algos() {
            let pf = Prefilter::build(&patterns, algo).unwrap();
            let mut s = Scratch::default();
            for hay in &hays {
                prop_assert_eq!(pf.matches(&mut s, hay), naive(&patterns, hay), "{:?}", algo);
            }
        }
    }
}

#[test]
fn empty_patterns_are_refused_and_empty_sets_match_nothing() {
    assert!(Prefilter::build(&[Pattern::new(Vec::new(), false)], Algo::AhoCorasick).is_err());
    let pf = Prefilter::build(&[], Algo::best()).unwrap();
    assert!(pf.matches(&mut Scratch::default(), b"anything").is_empty());
}

#[test]
fn one_scratch_serves_several_prefilters() {
    let a = Prefilter::build(&[Pattern::new(*b"abc", false)], Algo::best()).unwrap();
    let b = Prefilter::build(&[Pattern::new(*b"xyz", true), Pattern::new(*b"q", false)], Algo::best()).unwrap();
    let mut s = Scratch::default();
    for _ in 0..3 {
        assert_eq!(a.matches(&mut s, b"..abc..XYZ"), vec![0]);
        assert_eq!(b.matches(&mut s, b"..abc..XYZ q"), vec![0, 1]);
    }
}

/// Content patterns of ET Open rules: `content:"..."` with `|hex|` parts; a
/// `nocase;` before the next content makes it case-insensitive.
fn et_patterns(limit: usize) -> Vec<Pattern> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/rules/et-open");
    let mut files: Vec<_> = std::fs::read_dir(&dir).expect("ET Open rules").flatten().map(|e| e.path()).collect();
    files.sort();
    let mut set = BTreeSet::new();
    for f in files.iter().filter(|f| f.extension().is_some_and(|e| e == "rules")) {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        for line in text.lines().filter(|l| l.starts_with("alert")) {
            let parts: Vec<&str> = line.split("content:\"").skip(1).collect();
            for part in parts {
                let Some(end) = part.find("\";") else { continue };
                let Some(bytes) = unescape(&part[..end]) else { continue };
                let tail = &part[end..];
                let nocase = tail.split("content:").next().unwrap_or("").contains("nocase;");
                if !bytes.is_empty() {
                    set.insert((bytes, nocase));
                }
            }
        }
    }
    set.into_iter().take(limit).map(|(b, n)| Pattern::new(b, n)).collect()
}

fn unescape(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut hex = false;
    let mut chars = s.bytes().peekable();
    while let Some(c) = chars.next() {
        match c {
            b'|' => hex = !hex,
            b'\\' => out.push(chars.next()?),
            _ if hex => {
                if c == b' ' {
                    continue;
                }
                let d = chars.next()?;
                out.push(u8::from_str_radix(std::str::from_utf8(&[c, d]).ok()?, 16).ok()?);
            }
            _ => out.push(c),
        }
    }
    Some(out)
}

#[test]
fn hyperscan_and_aho_corasick_agree_on_et_open_patterns() {
    let patterns = et_patterns(8_000);
    assert!(patterns.len() > 5_000, "expected ET Open's content patterns, got {}", patterns.len());
    let pcap = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/bench/realistic-a.pcap");
    let mut src = PcapFile::open(pcap).expect("realistic-a.pcap");
    let mut hays = Vec::new();
    while let Some(Ok(raw)) = src.next_packet() {
        if hays.len() == 1500 {
            break;
        }
        hays.push(raw.data.to_vec());
    }
    let built: Vec<Prefilter> = algos().into_iter().map(|a| Prefilter::build(&patterns, a).unwrap()).collect();
    let mut scratch = Scratch::default();
    let mut hits = 0;
    for hay in &hays {
        let sets: Vec<Vec<u32>> = built.iter().map(|pf| pf.matches(&mut scratch, hay)).collect();
        for s in &sets[1..] {
            assert_eq!(s, &sets[0]);
        }
        hits += sets[0].len();
    }
    // Spot-check against the naive search on a sample.
    for hay in hays.iter().step_by(500) {
        assert_eq!(built[0].matches(&mut scratch, hay), naive(&patterns, hay));
    }
    assert!(hits > 0, "no pattern matched at all: the test would prove nothing");
}
