//! Random rules compiled and run on random packets: the input is drawn into
//! a few rules (mostly well formed, from the keywords detection runs) and a
//! few frames. Whatever compiles must run without a panic or a hang; the
//! content inspection budget and PCRE's limits bound the work per packet.
#![no_main]

#[path = "../../crates/vigil-detect/tests/random/gen.rs"]
mod gen;

use libfuzzer_sys::fuzz_target;
use vigil_decode::{DecodeConfig, Decoder};
use vigil_detect::prefilter::Algo;
use vigil_detect::{compile, DetectEngine, DetectScratch};
use vigil_rules::{Classifications, Loader};
use vigil_types::{LinkType, Timestamp};

fuzz_target!(|data: &[u8]| {
    let mut d = gen::Draw::new(data);
    let rules: Vec<String> = (0..1 + d.below(8)).map(|i| gen::rule(&mut d, i as u32 + 1)).collect();
    let frames: Vec<Vec<u8>> = (0..1 + d.below(4)).map(|_| gen::frame(&mut d)).collect();
    let Ok(set) = Loader::new().load_str(&rules.join("\n"), "fuzz.rules") else { return };
    let classes = Classifications::default();
    let sigs: Vec<_> = set.rules.iter().filter_map(|r| compile(r, &classes).ok()).collect();
    let Ok(engine) = DetectEngine::build(sigs, Algo::AhoCorasick) else { return };
    let mut dec = Decoder::new(DecodeConfig::default());
    let mut scratch = DetectScratch::default();
    for (i, f) in frames.iter().enumerate() {
        let p = dec.decode(f, Timestamp::from_micros(1_700_000_000, i as u32), LinkType::Ethernet, i as u64 + 1);
        engine.inspect(&p, None, None, &mut scratch, &mut |_| {});
    }
});
