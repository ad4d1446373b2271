//! Frames end to end: an HTTP/1 session built with vigil's packet builders,
//! `frame:` rules on its requests, responses and whole streams, and the
//! EVE `frame` records an output asks for, with their payload cut at
//! `payload-buffer-size`.

mod common;

use common::{of_type, offline_opts, run_eve, spaced, tcp_session, tempdir, write_pcap};
use serde_json::Value;
use vigil_engine::RunOptions;

const REQ: &[u8] = b"GET /download/evil.php?id=1 HTTP/1.1\r\nHost: example.com\r\n\r\n";
const RESP: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello world";

const RULES: &str = r#"
alert http any any -> any any (frame:http1.request; content:"GET /download"; startswith; sid:1;)
alert http any any -> any any (frame:http1.response; content:"hello world"; endswith; sid:2;)
alert tcp any any -> any any (frame:http1.stream; content:"Host:"; sid:3;)
alert http any any -> any any (frame:http1.request; content:"POST"; sid:4;)
"#;

const CONFIG: &str = "%YAML 1.1\n---\noutputs:\n  - eve-log:\n      enabled: yes\n      filename: eve.json\n      types:\n        - alert\n        - frame:\n            payload-buffer-size: 16\n";

fn run(name: &str) -> Vec<Value> {
    let dir = tempdir("frames", name);
    write_pcap(&dir.join("in.pcap"), spaced(&tcp_session(8081, &[(REQ, RESP), (REQ, RESP)])));
    std::fs::write(dir.join("test.rules"), RULES).unwrap();
    std::fs::write(dir.join("vigil.yaml"), CONFIG).unwrap();
    let opts = RunOptions { config: Some(dir.join("vigil.yaml")), ..offline_opts(&dir) };
    run_eve(&dir, &opts)
}

fn frame_of(r: &Value) -> (&str, &str, u64, u64, u64) {
    let f = &r["frame"];
    let n = |k: &str| f[k].as_u64().unwrap_or(u64::MAX);
    (f["type"].as_str().unwrap(), f["direction"].as_str().unwrap(), n("id"), n("stream_offset"), n("length"))
}

#[test]
fn frame_rules_alert_on_their_frames_and_records_show_them() {
    let recs = run("http");
    let alerts = of_type(&recs, "alert");
    let by_sid =
        |sid: u64| -> Vec<&Value> { alerts.iter().copied().filter(|a| a["alert"]["signature_id"] == sid).collect() };
    let (req, resp) = (REQ.len() as u64, RESP.len() as u64);
    // Each request and each response is a frame of its own, numbered per
    // direction after the whole-stream frame, and belongs to its transaction.
    let requests: Vec<_> = by_sid(1).iter().map(|a| (frame_of(a), a["frame"]["tx_id"].clone())).collect();
    assert_eq!(
        requests,
        [(("request", "toserver", 2, 0, req), 0.into()), (("request", "toserver", 3, req, req), 1.into())]
    );
    for a in by_sid(1) {
        assert_eq!(a["http"]["url"], "/download/evil.php?id=1", "{a}");
        assert_eq!(a["tx_id"], a["frame"]["tx_id"], "{a}");
    }
    let responses: Vec<_> = by_sid(2).iter().map(|a| frame_of(a)).collect();
    assert_eq!(responses, [("response", "toclient", 2, 0, resp), ("response", "toclient", 3, resp, resp)]);
    // An alert on a response frame goes the frame's way.
    assert!(by_sid(2).iter().all(|a| a["src_ip"] == "198.18.0.2" && a["direction"] == "to_client"));
    // The client's whole stream holds the Host header; the server's does not.
    let streams: Vec<_> = by_sid(3).iter().map(|a| frame_of(a)).collect();
    assert_eq!(streams, [("stream", "toserver", 1, 0, 2 * req)]);
    assert!(by_sid(4).is_empty());
    // Records: every frame once, its payload cut at 16 bytes.
    let frames = of_type(&recs, "frame");
    let count = |t: &str| frames.iter().filter(|r| r["frame"]["type"] == t).count();
    assert_eq!((count("request"), count("response"), count("stream")), (2, 2, 2));
    for r in &frames {
        assert_eq!(r["app_proto"], "http");
        assert_eq!(r["frame"]["complete"], true, "{r}");
        assert_eq!(r["frame"]["payload_printable"].as_str().unwrap().len(), 16, "{r}");
    }
    let first = frames.iter().find(|r| r["frame"]["type"] == "request").unwrap();
    assert_eq!(first["frame"]["payload_printable"], "GET /download/ev");
    assert_eq!(first["src_ip"], "198.18.0.1");
}

#[test]
fn without_frame_rules_or_output_no_frame_is_marked() {
    let dir = tempdir("frames", "none");
    write_pcap(&dir.join("in.pcap"), spaced(&tcp_session(8081, &[(REQ, RESP)])));
    std::fs::write(dir.join("test.rules"), "alert http any any -> any any (http.uri; content:\"evil\"; sid:9;)\n")
        .unwrap();
    let recs = run_eve(&dir, &offline_opts(&dir));
    assert_eq!(of_type(&recs, "alert").len(), 1);
    assert!(recs.iter().all(|r| r.get("frame").is_none()), "no frame object anywhere");
}
