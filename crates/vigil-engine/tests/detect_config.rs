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
    // The anchored content matches the reply's packet, then again in its stream.
    assert_eq!(ac, [2, 1, 2]);
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
    let err = vigil_engine::setup(&opts).expect_err("a fatal configuration error");
    assert!(err.to_string().contains("mpm-algo"), "{err}");
}

#[test]
fn alerts_list_their_references_when_asked() {
    // Each run removes its directory: every run sets up its own.
    let with = |metadata: &str| {
        let dir = tempdir("detect-config", &format!("references-{metadata}"));
        write_pcap(&dir.join("in.pcap"), spaced(&short_session()));
        let rule = "alert tcp any any -> any any (content:\"hello\"; reference:url,example.test/advisory; reference:cve,2014-0160; reference:nosuch,x; sid:1;)\n";
        std::fs::write(dir.join("test.rules"), rule).unwrap();
        let refs = "config reference: url https://\nconfig reference: cve https://cve.example.test/\n";
        std::fs::write(dir.join("reference.config"), refs).unwrap();
        let yaml = format!("outputs:\n  - eve-log:\n      enabled: yes\n      filename: eve.json\n      types:\n        - alert:\n            metadata:\n              rule:\n                reference: {metadata}\n");
        std::fs::write(dir.join("vigil.yaml"), yaml).unwrap();
        let sets = vec![format!("reference-config-file={}", dir.join("reference.config").display())];
        run_eve(&dir, &RunOptions { config: Some(dir.join("vigil.yaml")), sets, ..offline_opts(&dir) })
    };
    let recs = with("yes");
    let alert = &of_type(&recs, "alert")[0]["alert"];
    // Each known system's URL prefix before the id; an unknown system is left out.
    assert_eq!(
        alert["references"],
        serde_json::json!(["https://example.test/advisory", "https://cve.example.test/2014-0160"])
    );
    let recs = with("no");
    assert!(of_type(&recs, "alert")[0]["alert"].get("references").is_none());
}
