//! What the stream engine puts into EVE records, end to end: the session
//! state and regions of flow records, the `flow` object and `pkt_src` of
//! alerts, the handshake's last ACK counting as established when it carries
//! data, pass signatures that also alert, flows turned round when a
//! session is picked up from the server's SYN/ACK or its first data is the
//! server's answer, and stream events as
//! `stream-event` alerts and `anomaly` records.

mod common;

use common::{of_type, offline_opts, run_eve, spaced, tcp_seg as seg, tempdir, write_pcap};
use serde_json::{json, Value};
use vigil_engine::RunOptions;
use vigil_wire::tcp::flags::{ACK, FIN, PSH, SYN};
const CISN: u32 = 1000;
const SISN: u32 = 5000;

fn run(name: &str, frames: &[Vec<u8>], rules: &str) -> Vec<Value> {
    run_with(name, frames, rules, &[])
}

/// [`run`] with `--set` options.
fn run_with(name: &str, frames: &[Vec<u8>], rules: &str, sets: &[&str]) -> Vec<Value> {
    let dir = tempdir("stream-records", name);
    let pcap = dir.join("in.pcap");
    write_pcap(&pcap, spaced(frames));
    std::fs::write(dir.join("test.rules"), rules).unwrap();
    let opts = RunOptions { sets: sets.iter().map(|s| s.to_string()).collect(), ..offline_opts(&dir) };
    run_eve(&dir, &opts)
}

fn alerts(recs: &[Value], sid: u64) -> Vec<&Value> {
    of_type(recs, "alert").into_iter().filter(|r| r["alert"]["signature_id"] == sid).collect()
}

/// A handshake whose last ACK carries "hello", a reply, "tail" the server
/// never acknowledges, then the client closes and the server's FIN is left
/// unacknowledged.
fn session() -> Vec<Vec<u8>> {
    vec![
        seg(true, SYN, CISN, 0, b""),
        seg(false, SYN | ACK, SISN, CISN + 1, b""),
        seg(true, ACK | PSH, CISN + 1, SISN + 1, b"hello"),
        seg(false, ACK | PSH, SISN + 1, CISN + 6, b"hi"),
        seg(true, ACK | PSH, CISN + 6, SISN + 3, b"tail"),
        seg(true, FIN | ACK, CISN + 10, SISN + 3, b""),
        seg(false, FIN | ACK, SISN + 3, CISN + 6, b""),
    ]
}

#[test]
fn alerts_carry_the_flow_and_their_packet_source() {
    let rules = "alert tcp-pkt any any -> any any (flow:established,to_server; content:\"hello\"; sid:1;)\n\
                 alert tcp-stream any any -> any any (content:\"tail\"; sid:2;)\n";
    let recs = run("alerts", &session(), rules);
    // The ACK ending the handshake carries data: it belongs to the established session.
    let hello = alerts(&recs, 1);
    assert_eq!(hello.len(), 1, "{recs:?}");
    let a = hello[0];
    assert_eq!((&a["pcap_cnt"], &a["pkt_src"]), (&json!(3), &json!("wire/pcap")));
    let f = &a["flow"];
    assert_eq!((&f["pkts_toserver"], &f["pkts_toclient"]), (&json!(2), &json!(1)));
    assert_eq!((&f["src_ip"], &f["dest_port"]), (&json!("198.18.0.1"), &json!(80)));
    assert_eq!(f["start"], of_type(&recs, "flow")[0]["flow"]["start"]);
    // "tail" is never acknowledged: inspected when the flow ends, on a pseudo packet.
    let tail = alerts(&recs, 2);
    assert_eq!(tail.len(), 1, "{recs:?}");
    assert_eq!(tail[0]["pkt_src"], "stream (flow timeout)");
    assert!(tail[0].get("pcap_cnt").is_none());
}

#[test]
fn flow_records_carry_the_session_state() {
    let recs = run("state", &session(), "");
    let flows = of_type(&recs, "flow");
    assert_eq!(flows.len(), 1);
    let tcp = &flows[0]["tcp"];
    // Both sides sent FIN; the client never acknowledged the server's.
    assert_eq!(tcp["state"], "last_ack");
    assert_eq!((&tcp["ts_max_regions"], &tcp["tc_max_regions"]), (&json!(1), &json!(1)));
    assert!(tcp.get("ts_gap").is_none() && tcp.get("tc_gap").is_none());
    let mut closed = session();
    closed.push(seg(true, ACK, CISN + 11, SISN + 4, b""));
    let recs = run("closed", &closed, "");
    assert_eq!(of_type(&recs, "flow")[0]["tcp"]["state"], "closed");
}

#[test]
fn a_pass_signature_with_alert_alerts_and_passes() {
    // A match in the stream passes the flow (one on a packet alone, the packet).
    let rules = "pass tcp any any -> any any (flow:established,to_server; content:\"hello\"; alert; sid:1;)\n\
                 alert tcp-pkt any any -> any any (flow:to_client; flags:FA; sid:2;)\n";
    let recs = run("pass", &session(), rules);
    assert_eq!(alerts(&recs, 1).len(), 1, "{recs:?}");
    assert!(alerts(&recs, 2).is_empty(), "the server's FIN, after the match, is passed");
}

#[test]
fn a_session_picked_up_from_the_synack_turns_the_flow_round() {
    // The capture starts at the server's SYN/ACK; only the server speaks.
    let frames = [
        seg(false, SYN | ACK, SISN, CISN + 1, b""),
        seg(false, ACK | PSH, SISN + 1, CISN + 1, b"* OK ready"),
        seg(false, FIN | ACK, SISN + 11, CISN + 1, b""),
    ];
    let rules = "alert tcp any 80 -> any any (flow:to_client; flags:SA; sid:1;)\n\
                 alert tcp any any -> any any (flow:to_client; content:\"OK ready\"; sid:2;)\n";
    for set in ["stream.midstream=true", "stream.async-oneside=true"] {
        let recs = run_with("synack", &frames, rules, &[set]);
        assert_eq!((alerts(&recs, 1).len(), alerts(&recs, 2).len()), (1, 1), "{set}: {recs:?}");
        let f = of_type(&recs, "flow")[0];
        assert_eq!((&f["src_port"], &f["dest_port"]), (&json!(40000), &json!(80)), "{set}");
        assert_eq!((&f["flow"]["pkts_toserver"], &f["flow"]["pkts_toclient"]), (&json!(0), &json!(3)));
        assert_eq!(f["tcp"]["state"], "fin_wait1");
    }
    // Without either, nothing is picked up and the flow keeps its first packet's orientation.
    let recs = run("synack-ignored", &frames, rules);
    assert_eq!(of_type(&recs, "flow")[0]["src_port"], 80);
}

#[test]
fn a_session_picked_up_at_the_servers_answer_turns_the_flow_round() {
    // The capture starts with the server's ACK and its HTTP response; the
    // client's next request follows. Taken as the client at first, the
    // server is found out by its status line.
    let response = b"HTTP/1.1 200 OK\r\nServer: Apache\r\nContent-Length: 2\r\n\r\nok";
    let frames = [
        seg(false, ACK, SISN + 1, CISN + 1, b""),
        seg(false, ACK | PSH, SISN + 1, CISN + 1, response),
        seg(true, ACK | PSH, CISN + 1, SISN + 1 + response.len() as u32, b"GET /b HTTP/1.1\r\nHost: x\r\n\r\n"),
    ];
    let rules = "alert http any any -> any any (content:\"Server: \"; http_header; sid:1;)\n\
                 alert http any any -> any any (http.uri; content:\"/b\"; sid:2;)\n";
    let recs = run_with("answer-first", &frames, rules, &["stream.midstream=true"]);
    let f = of_type(&recs, "flow")[0];
    assert_eq!(
        (&f["src_port"], &f["dest_port"], &f["app_proto"]),
        (&json!(40000), &json!(80), &json!("http")),
        "{recs:?}"
    );
    assert_eq!((&f["flow"]["pkts_toserver"], &f["flow"]["pkts_toclient"]), (&json!(1), &json!(2)));
    // The response was parsed as one, with no request before it.
    let anomalies = of_type(&recs, "anomaly");
    assert!(anomalies.iter().any(|a| a["anomaly"]["event"] == "UNABLE_TO_MATCH_RESPONSE_TO_REQUEST"), "{anomalies:?}");
    // A rule naming no direction on a two-sided buffer sees the response's headers.
    let a = alerts(&recs, 1);
    assert_eq!(a.len(), 1, "{recs:?}");
    assert_eq!(a[0]["direction"], "to_client");
    assert_eq!(alerts(&recs, 2).len(), 1);
    // Without midstream pickup nothing is tracked, and the flow keeps its first packet's orientation.
    let recs = run("answer-first-ignored", &frames, rules);
    assert_eq!(of_type(&recs, "flow")[0]["src_port"], 80);
}

#[test]
fn stream_events_alert_and_log_on_the_packet_that_raised_them() {
    // The client answers its own SYN with a SYN/ACK: no split handshake
    // was started, so the SYN/ACK goes the wrong way.
    let frames = [
        seg(true, SYN, CISN, 0, b""),
        seg(true, SYN | ACK, CISN, SISN + 1, b""),
        seg(true, ACK, CISN + 1, SISN + 1, b""),
    ];
    let rules = "alert tcp any any -> any any (stream-event:3whs_synack_in_wrong_direction; sid:9;)\n";
    let on = ["outputs.1.eve-log.types.2.anomaly.types.stream=yes"];
    let recs = run_with("stream-events", &frames, rules, &on);
    let hits: Vec<&Value> = alerts(&recs, 9).into_iter().map(|a| &a["pcap_cnt"]).collect();
    assert_eq!(hits, [&json!(2)]);
    let anomalies = of_type(&recs, "anomaly");
    assert_eq!(anomalies.len(), 1, "{anomalies:?}");
    assert_eq!(anomalies[0]["pcap_cnt"], 2);
    assert_eq!(anomalies[0]["anomaly"], json!({ "type": "stream", "event": "stream.3whs_synack_in_wrong_direction" }));
    assert!(anomalies[0]["flow_id"].is_u64());
    // Stream anomalies are off unless asked for.
    let recs = run_with("stream-events-off", &frames, rules, &[]);
    assert!(of_type(&recs, "anomaly").is_empty());
    assert_eq!(alerts(&recs, 9).len(), 1);
}
