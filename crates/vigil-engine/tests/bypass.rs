//! Bypassed flows: a `bypass` match, or both directions past the
//! reassembly depth with `stream.bypass`, stop the flow's inspection from
//! the next packet on; its flow record says `bypassed`, and its later
//! packets and bytes are counted in `flow_bypassed.local_pkts`/`_bytes`.

mod common;

use common::{of_type, offline_opts, run_eve, short_session, spaced, tempdir, write_pcap};
use serde_json::Value;
use vigil_engine::RunOptions;

fn run(name: &str, rules: &str, sets: &[&str]) -> Vec<Value> {
    let dir = tempdir("bypass", name);
    write_pcap(&dir.join("in.pcap"), spaced(&short_session()));
    std::fs::write(dir.join("test.rules"), rules).unwrap();
    let yaml = "outputs:\n  - eve-log:\n      enabled: yes\n      filename: eve.json\n      types:\n        - alert\n        - flow\n        - stats:\n            null-values: yes\n";
    std::fs::write(dir.join("vigil.yaml"), yaml).unwrap();
    let sets = sets.iter().map(|s| s.to_string()).collect();
    run_eve(&dir, &RunOptions { config: Some(dir.join("vigil.yaml")), sets, ..offline_opts(&dir) })
}

fn counters(recs: &[Value]) -> (u64, u64) {
    let s = &of_type(recs, "stats").last().expect("a stats record")["stats"]["flow_bypassed"];
    (s["local_pkts"].as_u64().unwrap(), s["local_bytes"].as_u64().unwrap())
}

#[test]
fn a_bypass_match_stops_inspecting_the_flow() {
    // "hello" matches (on the stream, once acknowledged) and bypasses the
    // flow: "hi", inspected later, would match rule 2 but is not; every
    // packet after the match's is counted.
    let recs = run(
        "keyword",
        "alert tcp any any -> any any (content:\"hello\"; bypass; sid:1;)\nalert tcp any any -> any any (content:\"hi\"; sid:2;)\n",
        &[],
    );
    let sids: Vec<u64> = of_type(&recs, "alert").iter().map(|a| a["alert"]["signature_id"].as_u64().unwrap()).collect();
    assert_eq!(sids, vec![1]);
    assert_eq!(of_type(&recs, "flow")[0]["flow"]["state"], "bypassed");
    let at = of_type(&recs, "alert")[0]["pcap_cnt"].as_u64().unwrap();
    let (pkts, bytes) = counters(&recs);
    assert!(at < 8);
    assert_eq!(pkts, 8 - at);
    assert!(bytes >= pkts * 54, "{bytes}");
    // It ends counted as bypassed, not in its flow state.
    let end = &of_type(&recs, "stats").last().unwrap()["stats"]["flow"]["end"];
    assert_eq!(end["state"]["local_bypassed"], 1);
    assert_eq!(
        end["state"]["new"].as_u64().unwrap()
            + end["state"]["established"].as_u64().unwrap()
            + end["state"]["closed"].as_u64().unwrap(),
        0
    );
}

#[test]
fn stream_bypass_at_depth_and_nothing_without_it() {
    let rule = "alert tcp any any -> any any (content:\"zzz\"; sid:1;)\n";
    let recs = run("depth", rule, &["stream.reassembly.depth=1", "stream.bypass=yes"]);
    assert_eq!(of_type(&recs, "flow")[0]["flow"]["state"], "bypassed");
    assert!(counters(&recs).0 > 0);
    let recs = run("no-depth", rule, &["stream.reassembly.depth=1", "stream.bypass=no"]);
    assert_ne!(of_type(&recs, "flow")[0]["flow"]["state"], "bypassed");
    assert_eq!(counters(&recs), (0, 0));
    // The session's own end state, once.
    let tcp_state = &of_type(&recs, "stats").last().unwrap()["stats"]["flow"]["end"]["tcp_state"];
    let ended: u64 = tcp_state.as_object().unwrap().values().map(|v| v.as_u64().unwrap()).sum();
    assert_eq!(ended, 1, "{tcp_state}");
}
