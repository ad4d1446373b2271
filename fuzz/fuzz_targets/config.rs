//! Arbitrary text as a suricata.yaml (and as a `--set` argument): loading and
//! typing must give errors, never a panic, a hang or unbounded memory.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vigil_config::{Config, ConfigTree};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (yaml, set) = text.split_once('\u{0}').unwrap_or((&text, ""));
    if let Ok(mut tree) = ConfigTree::parse_str(yaml, "fuzz.yaml") {
        let _ = tree.set_from_arg(set);
        let _ = Config::from_tree(&tree);
        let _ = tree.dump();
    }
});
