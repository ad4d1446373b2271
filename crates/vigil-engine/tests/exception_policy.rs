//! Exception policies end to end: a TCP session that cannot start because
//! `stream.memcap` is reached, under each kind of policy, and what the drop
//! and flow records and the counters say of it; then the reassembly and
//! flow memcaps.

mod common;

use common::{of_type, offline_opts, run_eve, short_session, spaced, tempdir, write_pcap};
use serde_json::Value;
use vigil_engine::RunOptions;

/// One run with no room for any TCP session, `policy` for that case.
fn run(name: &str, policy: &str, ips: bool) -> Vec<Value> {
    run_with(name, &["stream.memcap=1".into(), format!("stream.memcap-policy={policy}")], ips)
}

/// One run of the session with `--set` options.
fn run_with(name: &str, sets: &[String], ips: bool) -> Vec<Value> {
    let dir = tempdir("exception", name);
    let pcap = dir.join("in.pcap");
    write_pcap(&pcap, spaced(&short_session()));
    std::fs::write(dir.join("test.rules"), "alert tcp any any -> any any (content:\"hello\"; sid:1;)\n").unwrap();
    let yaml = "outputs:\n  - eve-log:\n      enabled: yes\n      filename: eve.json\n      types:\n        - alert\n        - drop:\n            flows: all\n        - flow\n        - stats\n";
    std::fs::write(dir.join("vigil.yaml"), yaml).unwrap();
    let opts = RunOptions {
        config: Some(dir.join("vigil.yaml")),
        sets: sets.to_vec(),
        simulate_ips: ips,
        ..offline_opts(&dir)
    };
    run_eve(&dir, &opts)
}

fn stats(recs: &[Value]) -> &Value {
    &of_type(recs, "stats").last().expect("a stats record")["stats"]
}

#[test]
fn drop_flow_drops_the_whole_flow_and_says_why() {
    let recs = run("drop-flow", "drop-flow", true);
    let drops = of_type(&recs, "drop");
    assert_eq!(drops.len(), 8, "{recs:#?}");
    assert_eq!(drops[0]["drop"]["reason"], "stream memcap");
    assert!(drops[1..].iter().all(|d| d["drop"]["reason"] == "flow drop"));
    assert!(of_type(&recs, "alert").is_empty(), "nothing of a dropped flow is inspected");
    let flow = of_type(&recs, "flow")[0];
    assert_eq!(flow["flow"]["action"], "drop");
    assert_eq!(flow["flow"]["exception_policy"][0]["target"], "stream_memcap");
    assert_eq!(flow["flow"]["exception_policy"][0]["policy"], "drop_flow");
    let st = stats(&recs);
    assert_eq!(st["exception_policy"]["tcp"]["ssn_memcap"]["drop_flow"], 1, "{st}");
    assert_eq!(st["ips"]["drop_reason"]["stream_memcap"], 1, "{st}");
    assert_eq!(st["ips"]["drop_reason"]["flow_drop"], 7, "{st}");
}

#[test]
fn pass_flow_leaves_the_flow_uninspected_and_ignore_does_not() {
    let passed = run("pass-flow", "pass-flow", false);
    assert!(of_type(&passed, "alert").is_empty() && of_type(&passed, "drop").is_empty(), "{passed:#?}");
    let flow = of_type(&passed, "flow")[0];
    assert_eq!(flow["flow"]["action"], "pass");
    assert_eq!(flow["flow"]["exception_policy"][0]["policy"], "pass_flow");
    assert_eq!(stats(&passed)["exception_policy"]["tcp"]["ssn_memcap"]["pass_flow"], 1);
    // Ignored (the IDS default): the packets are inspected as they come.
    let ignored = run("ignore", "ignore", false);
    assert_eq!(of_type(&ignored, "alert").len(), 1, "{ignored:#?}");
    let flow = of_type(&ignored, "flow")[0];
    assert!(flow["flow"].get("action").is_none());
    assert_eq!(flow["flow"]["exception_policy"][0]["policy"], "ignore");
    assert!(stats(&ignored).get("exception_policy").is_none());
}

#[test]
fn drop_packet_drops_only_the_packet_that_met_the_limit() {
    let recs = run("drop-packet", "drop-packet", true);
    let drops = of_type(&recs, "drop");
    assert_eq!(drops.len(), 1, "{recs:#?}");
    assert_eq!(drops[0]["drop"]["reason"], "stream memcap");
    assert_eq!(of_type(&recs, "alert").len(), 1, "the rest is inspected");
    assert!(of_type(&recs, "flow")[0]["flow"].get("action").is_none());
}

#[test]
fn reassembly_memcap_drops_the_flow_from_the_segment_it_could_not_hold() {
    let sets = ["stream.reassembly.memcap=1".into(), "stream.reassembly.memcap-policy=drop-flow".into()];
    let recs = run_with("reassembly", &sets, true);
    let drops = of_type(&recs, "drop");
    // The handshake passes; "hello" finds no room and ends the flow.
    assert_eq!(drops.len(), 5, "{recs:#?}");
    assert_eq!(drops[0]["drop"]["reason"], "stream reassembly");
    assert!(of_type(&recs, "alert").is_empty());
    let flow = of_type(&recs, "flow")[0];
    assert_eq!(flow["flow"]["exception_policy"][0]["target"], "stream_reassembly_memcap");
    assert_eq!(stats(&recs)["exception_policy"]["tcp"]["reassembly"]["drop_flow"], 1);
}

#[test]
fn flow_memcap_drops_packets_that_find_no_flow() {
    // drop-flow means drop-packet where there is no flow to drop.
    let sets = ["flow.memcap=1".into(), "flow.memcap-policy=drop-flow".into()];
    let recs = run_with("flow-memcap", &sets, true);
    let drops = of_type(&recs, "drop");
    assert_eq!(drops.len(), 8, "{recs:#?}");
    assert!(drops.iter().all(|d| d["drop"]["reason"] == "flow memcap"));
    let st = stats(&recs);
    assert_eq!(st["exception_policy"]["flow"]["memcap"]["drop_packet"], 8, "{st}");
    assert_eq!(st["ips"]["drop_reason"]["flow_memcap"], 8, "{st}");
}
