//! Arbitrary text as a rule file (and as the support files): loading must
//! give errors, never a panic, a hang or unbounded memory; and every rule
//! that loads must print to text that parses back to the same rule.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vigil_rules::{Classifications, Loader, References, Rule, ThresholdConfig};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(set) = Loader::new().load_str(&text, "fuzz.rules") else { return };
    for rule in set.rules.iter().chain(&set.disabled) {
        let printed = rule.to_string();
        let again = match Rule::parse(&printed) {
            Ok(r) => r,
            Err(e) => panic!("printed rule does not parse: {e}\n{printed}"),
        };
        let (mut a, mut b) = (rule.clone(), again);
        a.clear_spans();
        b.clear_spans();
        a.resolved = None;
        assert_eq!(a, b, "round trip changed the rule:\n{printed}");
    }
    let _ = Classifications::parse(&text, "classification.config");
    let _ = References::parse(&text, "reference.config");
    let _ = ThresholdConfig::parse(&text, "threshold.config");
});
