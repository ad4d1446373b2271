//! The conformance ratchet: every suricata-verify test named in
//! `tests/conformance-passing.txt` must pass. The list only grows.

use std::path::Path;

#[test]
fn listed_conformance_tests_pass() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let suite = root.join("../shared/conformance/suricata-verify");
    assert!(suite.is_dir(), "conformance suite not found at {}", suite.display());
    let mut opts = vigil_verify::Options::new(suite);
    opts.vigil = Some(env!("CARGO_BIN_EXE_vigil").into());
    opts.list = Some(root.join("tests/conformance-passing.txt"));
    let summary = vigil_verify::run(&opts).expect("the runner starts");
    assert!(!summary.results.is_empty(), "the ratchet list selected no test");
    assert!(summary.all_passed(), "conformance regressions:\n{}", summary.result_lines());
}
