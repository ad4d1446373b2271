//! The detection settings of the configuration: `mpm-algo` picks the
//! prefilter (same alerts either way), `detect.inspection-recursion-limit`
//! bounds each content inspection, and bad values are errors naming the key.

mod common;

use common::{of_type, offline_opts, run_eve, short_session, spaced, tempdir, write_pcap};
use serde_json::Value;
use vigil_engine::RunOptions;

fn run(name: &str, rules: &str, sets: &[&str]) -> Vec<Value> {
    let dir = tempdir("detect-config", name);
    write_pcap(&dir.join("in.pcap"), spaced(&short_session()));
    std::fs::write(dir.join("test.rules"), rules).unwrap();
    let sets = sets.iter().map(|s| s.to_string()).collect();
    run_eve(&dir, &RunOptions { sets, ..offline_opts(&dir) })
}

fn sids(recs: &[Value]) -> Vec<u64> {
    of_type(recs, "alert").iter().filter_map(|a| a["alert"]["signature_id"].as_u64()).collect()
}

#[test]
fn both_prefilters_raise_the_same_alerts() {
    let rules = "alert tcp any any -> any any (content:\"hello\"; sid:1;)\nalert tcp any any -> any any (content:\"hi\"; depth:2; sid:2;)\n";
    let ac = sids(&run("ac", rules, &["mpm-algo=ac"]));
    let auto = sids(&run("auto", rules, &["mpm-algo=auto"]));
    assert_eq!(ac, [1, 2]);
    assert_eq!(ac, auto);
}

#[test]
fn the_recursion_limit_bounds_each_inspection() {
    // Each "l" of "hello" must be retried before the relative "o" matches:
    // more steps than a limit of 2 allows.
    let rules = "alert tcp any any -> any any (content:\"l\"; content:\"o\"; within:1; sid:1;)\n";
    assert_eq!(sids(&run("unlimited", rules, &["detect.inspection-recursion-limit=0"])), [1]);
    assert_eq!(sids(&run("default", rules, &[])), [1]);
    assert!(sids(&run("tiny", rules, &["detect.inspection-recursion-limit=2"])).is_empty());
}

#[test]
fn a_bad_detection_setting_names_its_key() {
    let dir = tempdir("detect-config", "bad");
    write_pcap(&dir.join("in.pcap"), spaced(&short_session()));
    std::fs::write(dir.join("test.rules"), "").unwrap();
    let opts = RunOptions { sets: vec!["mpm-algo=turbo".into()], init_errors_fatal: true, ..offline_opts(&dir) };
    let err = vigil_engine::setup(&opts).err().expect("a fatal configuration error");
    assert!(err.to_string().contains("mpm-algo"), "{err}");
}
