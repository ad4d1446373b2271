//! Exception policies end to end: a TCP session that cannot start because
//! `stream.memcap` is reached, under each kind of policy, and what the drop
//! and flow records and the counters say of it; then the reassembly and
//! flow memcaps, sessions picked up mid-stream, application-layer errors, and
//! the QA simulation switches that pretend a limit was reached.

mod common;

use common::{of_type, offline_opts, run_eve, short_session, spaced, tcp_seg, tempdir, write_pcap};
use serde_json::Value;
use vigil_engine::{RunOptions, Simulation};
use vigil_types::PerDir;
use vigil_wire::tcp::flags::{ACK, FIN, PSH, SYN};

/// One run with no room for any TCP session, `policy` for that case.
fn run(name: &str, policy: &str, ips: bool) -> Vec<Value> {
    run_with(name, &["stream.memcap=1".into(), format!("stream.memcap-policy={policy}")], ips)
}

/// One run of the session with `--set` options.
fn run_with(name: &str, sets: &[String], ips: bool) -> Vec<Value> {
    run_frames(name, &short_session(), sets, ips, |o| o)
}

/// One run of `frames` with `--set` options, the options edited by `edit`.
fn run_frames(
    name: &str,
    frames: &[Vec<u8>],
    sets: &[String],
    ips: bool,
    edit: impl FnOnce(RunOptions) -> RunOptions,
) -> Vec<Value> {
    let dir = tempdir("exception", name);
    let pcap = dir.join("in.pcap");
    write_pcap(&pcap, spaced(frames));
    std::fs::write(dir.join("test.rules"), "alert tcp any any -> any any (content:\"hello\"; sid:1;)\n").unwrap();
    let yaml = "outputs:\n  - eve-log:\n      enabled: yes\n      filename: eve.json\n      types:\n        - alert\n        - drop:\n            flows: all\n        - http\n        - flow:\n            exception-policy: true\n        - stats\nstats:\n  exception-policy:\n    per-app-proto-errors: true\n";
    std::fs::write(dir.join("vigil.yaml"), yaml).unwrap();
    let opts = RunOptions {
        config: Some(dir.join("vigil.yaml")),
        sets: sets.to_vec(),
        simulate_ips: ips,
        ..offline_opts(&dir)
    };
    run_eve(&dir, &edit(opts))
}

/// An HTTP request and its answer, as a whole session.
fn http_session() -> Vec<Vec<u8>> {
    let req = b"GET /index.html HTTP/1.1\r\nHost: example.test\r\n\r\n";
    let resp = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi";
    let (c, s) = (1001 + req.len() as u32, 5001 + resp.len() as u32);
    vec![
        tcp_seg(true, SYN, 1000, 0, b""),
        tcp_seg(false, SYN | ACK, 5000, 1001, b""),
        tcp_seg(true, ACK, 1001, 5001, b""),
        tcp_seg(true, ACK | PSH, 1001, 5001, req),
        tcp_seg(false, ACK | PSH, 5001, c, resp),
        tcp_seg(true, ACK | FIN, c, s, b""),
        tcp_seg(false, ACK | FIN, s, c + 1, b""),
        tcp_seg(true, ACK, c + 1, s + 1, b""),
    ]
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
    // The SYN/ACK then meets a flow without a session: mid-stream, ignored here.
    let sets =
        ["stream.memcap=1".into(), "stream.memcap-policy=drop-packet".into(), "stream.midstream-policy=ignore".into()];
    let recs = run_with("drop-packet", &sets, true);
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

#[test]
fn a_session_met_mid_stream_is_dropped_by_an_ips_that_does_not_pick_it_up() {
    // No SYN: `exception-policy: auto` in IPS mode, midstream off, drops the flow.
    let frames = &short_session()[2..];
    let recs = run_frames("midstream", frames, &["exception-policy=auto".into()], true, |o| o);
    let drops = of_type(&recs, "drop");
    assert_eq!(drops.len(), frames.len(), "{recs:#?}");
    assert_eq!(drops[0]["drop"]["reason"], "stream midstream");
    let flow = of_type(&recs, "flow")[0];
    assert_eq!(flow["flow"]["action"], "drop");
    assert_eq!(flow["flow"]["exception_policy"][0]["target"], "stream_midstream");
    assert_eq!(stats(&recs)["exception_policy"]["tcp"]["midstream"]["drop_flow"], 1);
    // An IDS lets it through, and its flow lists the policy it ignored.
    let ids = run_frames("midstream-ids", frames, &["exception-policy=auto".into()], false, |o| o);
    assert!(of_type(&ids, "drop").is_empty());
    assert_eq!(of_type(&ids, "flow")[0]["flow"]["exception_policy"][0]["policy"], "ignore");
}

#[test]
fn simulated_limits_act_as_real_ones_at_the_packet_named() {
    let sim = |s: Simulation| move |o: RunOptions| RunOptions { simulate: s, ..o };
    // Packet 4 carries "hello": the reassembly memcap refuses it.
    let set = ["stream.reassembly.memcap-policy=drop-flow".into()];
    let s = Simulation { tcp_reassembly_memcap: Some(4), ..Simulation::default() };
    let recs = run_frames("sim-reassembly", &short_session(), &set, true, sim(s));
    let drops = of_type(&recs, "drop");
    assert_eq!((drops.len(), &drops[0]["drop"]["reason"]), (5, &Value::from("stream reassembly")), "{recs:#?}");
    assert_eq!(drops[0]["pcap_cnt"], 4);
    assert_eq!(stats(&recs)["tcp"]["segment_memcap_drop"], 1);
    // Packet 1, the SYN, finds no room for a session.
    let set = ["stream.memcap-policy=drop-flow".into()];
    let s = Simulation { tcp_ssn_memcap: Some(1), ..Simulation::default() };
    let recs = run_frames("sim-ssn", &short_session(), &set, true, sim(s));
    assert_eq!(of_type(&recs, "drop")[0]["drop"]["reason"], "stream memcap");
    assert_eq!(stats(&recs)["tcp"]["ssn_memcap_drop"], 1);
    // Packet 2 is of a flow that exists: no new flow, nothing happens.
    let set = ["flow.memcap-policy=drop-packet".into()];
    let s = Simulation { flow_memcap: Some(2), ..Simulation::default() };
    let recs = run_frames("sim-flow-none", &short_session(), &set, true, sim(s));
    assert!(of_type(&recs, "drop").is_empty(), "{recs:#?}");
    // Packet 1 would start it (and the SYN/ACK then starts it mid-stream, ignored here).
    let set = [set[0].clone(), "stream.midstream-policy=ignore".into()];
    let s = Simulation { flow_memcap: Some(1), ..Simulation::default() };
    let recs = run_frames("sim-flow", &short_session(), &set, true, sim(s));
    let drops = of_type(&recs, "drop");
    assert_eq!((drops.len(), &drops[0]["drop"]["reason"]), (1, &Value::from("flow memcap")), "{recs:#?}");
    assert_eq!(stats(&recs)["flow"]["memcap"], 1);
}

#[test]
fn a_parser_error_applies_the_app_layer_error_policy_and_stops_parsing() {
    let sets = ["app-layer.error-policy=drop-flow".into()];
    let at_request =
        |o: RunOptions| RunOptions { simulate_applayer_error: PerDir { to_server: Some(0), to_client: None }, ..o };
    let recs = run_frames("applayer-error", &http_session(), &sets, true, at_request);
    let drops = of_type(&recs, "drop");
    assert_eq!(drops[0]["drop"]["reason"], "applayer error", "{recs:#?}");
    assert_eq!(drops[0]["pcap_cnt"], 4);
    assert!(drops[1..].iter().all(|d| d["drop"]["reason"] == "flow drop"));
    assert!(of_type(&recs, "http").is_empty(), "nothing was parsed");
    let flow = of_type(&recs, "flow")[0];
    assert_eq!((&flow["app_proto"], &flow["flow"]["action"]), (&Value::from("http"), &Value::from("drop")));
    assert_eq!(flow["flow"]["exception_policy"][0]["target"], "app_layer_error");
    let st = stats(&recs);
    assert_eq!(st["exception_policy"]["app_layer"]["error"]["drop_flow"], 1, "{st}");
    assert_eq!(st["app_layer"]["error"]["http"]["exception_policy"]["drop_flow"], 1, "{st}");
    assert_eq!(st["app_layer"]["error"]["tls"]["exception_policy"]["drop_flow"], 0, "{st}");
    assert_eq!(st["app_layer"]["error"]["http"]["parser"], 1, "{st}");
    // With pass-packet the session goes on, unparsed both ways.
    let sets = ["app-layer.error-policy=pass-packet".into()];
    let recs = run_frames("applayer-error-pass", &http_session(), &sets, true, at_request);
    assert!(of_type(&recs, "drop").is_empty() && of_type(&recs, "http").is_empty(), "{recs:#?}");
    assert_eq!(stats(&recs)["exception_policy"]["app_layer"]["error"]["pass_packet"], 1);
    // Without the error, the same session is parsed and logged.
    let recs = run_frames("applayer-ok", &http_session(), &[], true, |o| o);
    assert_eq!(of_type(&recs, "http").len(), 1, "{recs:#?}");
}

#[test]
fn bypass_stops_tracking_and_marks_the_flow_bypassed() {
    let sets = ["stream.reassembly.memcap-policy=bypass".into()];
    let s = Simulation { tcp_reassembly_memcap: Some(4), ..Simulation::default() };
    let recs = run_frames("bypass", &http_session(), &sets, true, |o| RunOptions { simulate: s, ..o });
    assert!(of_type(&recs, "drop").is_empty() && of_type(&recs, "http").is_empty(), "{recs:#?}");
    let flow = of_type(&recs, "flow")[0];
    assert_eq!((&flow["flow"]["state"], &flow["flow"]["bypass"]), (&Value::from("bypassed"), &Value::from("local")));
    assert!(flow["flow"].get("action").is_none());
}

#[test]
fn flow_records_list_exception_policies_unless_told_not_to() {
    let run = |flow_type: &str, name: &str| {
        let dir = tempdir("exception", name);
        write_pcap(&dir.join("in.pcap"), spaced(&short_session()));
        std::fs::write(dir.join("test.rules"), "").unwrap();
        let yaml =
            format!("outputs:\n  - eve-log:\n      enabled: yes\n      filename: eve.json\n      types:\n{flow_type}");
        std::fs::write(dir.join("vigil.yaml"), yaml).unwrap();
        let sets = vec!["stream.memcap=1".into(), "stream.memcap-policy=pass-flow".into()];
        run_eve(&dir, &RunOptions { config: Some(dir.join("vigil.yaml")), sets, ..offline_opts(&dir) })
    };
    // Suricata 8 lists them by default.
    let recs = run("        - flow\n", "listed");
    let flow = of_type(&recs, "flow")[0];
    assert_eq!(flow["flow"]["action"], "pass");
    assert_eq!(flow["flow"]["exception_policy"][0]["target"], "stream_memcap", "{flow}");
    let recs = run("        - flow:\n            exception-policy: false\n", "not-listed");
    let flow = of_type(&recs, "flow")[0];
    assert_eq!(flow["flow"]["action"], "pass");
    assert!(flow["flow"].get("exception_policy").is_none(), "{flow}");
}
