//! The application layer end to end: HTTP, DNS and TLS flows built with
//! vigil's packet builders, run offline, and the alerts and records they
//! give: protocol detection on any port, sticky buffers and legacy
//! modifiers, one alert per transaction, `http`/`dns`/`fileinfo` records,
//! `app_proto` in alerts and flows, and `app_layer.*` counters; DCE/RPC
//! and SMB, their records, and rules with payload keywords and their own.

mod common;

use common::{of_type, tcp_session};
use serde_json::Value;
use vigil_wire::build::PacketBuilder;
use vigil_wire::tcp::flags::{ACK, FIN, PSH, SYN};

const C: [u8; 4] = [198, 18, 0, 1];
const S: [u8; 4] = [198, 18, 0, 2];

/// Runs the frames under `rules` with the stock configuration; the EVE records.
fn run(name: &str, frames: &[Vec<u8>], rules: &str) -> Vec<Value> {
    common::run_rules("applayer", name, frames, rules)
}

fn sids(recs: &[Value]) -> Vec<u64> {
    let mut v: Vec<u64> = of_type(recs, "alert").iter().map(|r| r["alert"]["signature_id"].as_u64().unwrap()).collect();
    v.sort_unstable();
    v
}

const REQ: &[u8] = b"GET /download/evil.php?id=1 HTTP/1.1\r\nHost: Example.COM\r\nUser-Agent: vigil-test\r\n\r\n";
const RESP: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 11\r\n\r\nhello world";

const HTTP_RULES: &str = r#"
alert http any any -> any any (msg:"uri"; flow:established,to_server; http.uri; content:"/download/evil.php"; sid:1;)
alert http any any -> any any (msg:"host normalized"; http.host; content:"example.com"; bsize:11; sid:2;)
alert tcp any any -> any any (msg:"legacy modifier"; content:"vigil-test"; http_user_agent; sid:3;)
alert http any any -> any any (msg:"body"; flow:to_client; file.data; content:"hello"; startswith; sid:4;)
alert http any any -> any any (msg:"method with transform"; http.method; to_lowercase; content:"get"; sid:5;)
alert http any any -> any any (msg:"wrong method"; http.method; content:"POST"; sid:6;)
alert http any any -> any any (msg:"status"; http.stat_code; content:"200"; urilen:>5; sid:7;)
alert dns any any -> any any (msg:"dns rule on an http flow"; dns.query; content:"example"; sid:8;)
"#;

#[test]
fn http_buffers_alert_once_per_transaction_on_any_port() {
    // Two transactions on a port that is not 80: detection is by content.
    let recs = run("http", &tcp_session(8081, &[(REQ, RESP), (REQ, RESP)]), HTTP_RULES);
    assert_eq!(sids(&recs), vec![1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 7, 7]);
    for a in of_type(&recs, "alert") {
        assert_eq!(a["app_proto"], "http");
        assert_eq!(a["http"]["hostname"], "example.com", "{a}");
        // Records of a transaction are written client to server, whatever packet completed it.
        let to_client = a["alert"]["signature_id"] == 4 || a["alert"]["signature_id"] == 7;
        let want_src = if to_client { "198.18.0.2" } else { "198.18.0.1" };
        assert_eq!(a["src_ip"], want_src, "{a}");
    }
    let http = of_type(&recs, "http");
    assert_eq!(http.len(), 2);
    assert_eq!(http[1]["tx_id"], 1);
    assert_eq!(http[0]["http"]["url"], "/download/evil.php?id=1");
    assert_eq!(http[0]["http"]["status"], 200);
    assert_eq!(http[0]["src_ip"], "198.18.0.1");
    let files = of_type(&recs, "fileinfo");
    assert_eq!(files.len(), 2);
    assert_eq!(files[0]["fileinfo"]["filename"], "/download/evil.php");
    assert_eq!(files[0]["fileinfo"]["size"], 11);
    assert_eq!(files[0]["fileinfo"]["state"], "CLOSED");
    let flow = of_type(&recs, "flow");
    assert_eq!(flow[0]["app_proto"], "http");
    let stats = of_type(&recs, "stats");
    let app = &stats.last().unwrap()["stats"]["app_layer"];
    assert_eq!(app["flow"]["http"], 1, "{app}");
    assert_eq!(app["tx"]["http"], 2, "{app}");
}

#[test]
fn a_request_split_byte_by_byte_alerts_the_same() {
    let seg = |to_server: bool, flags: u8, seq: u32, ack: u32, data: &[u8]| {
        let b =
            if to_server { PacketBuilder::ipv4(C, S).tcp(40001, 80) } else { PacketBuilder::ipv4(S, C).tcp(80, 40001) };
        b.tcp_flags(flags).tcp_seq_ack(seq, ack).payload(data).build_ethernet()
    };
    let mut f = vec![seg(true, SYN, 0, 0, b""), seg(false, SYN | ACK, 0, 1, b""), seg(true, ACK, 1, 1, b"")];
    for (i, b) in REQ.iter().enumerate() {
        f.push(seg(true, ACK | PSH, 1 + i as u32, 1, &[*b]));
        f.push(seg(false, ACK, 1, 2 + i as u32, b""));
    }
    let end = 1 + REQ.len() as u32;
    f.push(seg(false, ACK | PSH, 1, end, RESP));
    f.push(seg(true, FIN | ACK, end, 1 + RESP.len() as u32, b""));
    let recs = run("bytes", &f, HTTP_RULES);
    assert_eq!(sids(&recs), vec![1, 2, 3, 4, 5, 7]);
}

fn dns_query(id: u16, name: &str) -> Vec<u8> {
    let mut m = vec![(id >> 8) as u8, id as u8, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0];
    for label in name.split('.') {
        m.push(label.len() as u8);
        m.extend_from_slice(label.as_bytes());
    }
    m.extend_from_slice(&[0, 0, 1, 0, 1]);
    m
}

#[test]
fn dns_over_udp_with_transforms_and_records() {
    let rules = r#"
alert dns any any -> any any (msg:"suffix"; dns.query; dotprefix; content:".evil.example"; endswith; sid:1;)
alert udp any any -> any any (msg:"legacy name"; dns_query; content:"www"; depth:3; sid:2;)
alert dns any any -> any any (msg:"not this"; dns.query; content:"benign"; sid:3;)
"#;
    let q = |id, name| PacketBuilder::ipv4(C, S).udp(5353 + id, 53).payload(&dns_query(id, name)).build_ethernet();
    let recs = run("dns", &[q(1, "www.evil.example"), q(2, "evil.example.org")], rules);
    assert_eq!(sids(&recs), vec![1, 2]);
    let dns = of_type(&recs, "dns");
    assert_eq!(dns.len(), 2);
    assert_eq!(dns[0]["dns"]["queries"][0]["rrname"], "www.evil.example");
    assert!(of_type(&recs, "flow").iter().all(|f| f["app_proto"] == "dns"));
}

#[test]
fn a_port_53_flow_that_is_not_dns_fails_detection() {
    let rules = "alert dns any any -> any any (msg:\"any dns\"; sid:1;)\n";
    let junk = PacketBuilder::ipv4(C, S).udp(4000, 53).payload(b"not a dns message at all").build_ethernet();
    let recs = run("junk", &[junk], rules);
    assert!(sids(&recs).is_empty());
    assert_eq!(of_type(&recs, "flow")[0]["app_proto"], "failed");
}

/// A connection-oriented DCE/RPC PDU of `ptype` carrying `stub`.
fn dce_pdu(ptype: u8, stub: &[u8]) -> Vec<u8> {
    let len = 24 + stub.len() as u16;
    let mut p = vec![5, 0, ptype, 3, 0x10, 0, 0, 0];
    p.extend_from_slice(&len.to_le_bytes());
    p.extend_from_slice(&[0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    p.extend_from_slice(stub);
    p
}

#[test]
fn dcerpc_is_detected_and_each_request_inspected_on_its_own() {
    // Two small requests, far below a chunk: each ends a PDU, so the
    // stream is inspected after each, and the rule alerts twice.
    let bind = dce_pdu(11, b"");
    let frames = tcp_session(
        49444,
        &[
            (&bind, &dce_pdu(12, b"")),
            (&dce_pdu(0, b"cmd.exe /Q /c whoami"), &dce_pdu(2, b"ok")),
            (&dce_pdu(0, b"cmd.exe /Q /c hostname"), &dce_pdu(2, b"ok")),
        ],
    );
    let rules = "alert dcerpc any any -> any any (flow:established,to_server; content:\"cmd.exe /Q /c\"; sid:1;)\n\
                 alert smb any any -> any any (content:\"cmd.exe\"; sid:2;)\n";
    let recs = run("dcerpc", &frames, rules);
    assert_eq!(sids(&recs), [1, 1], "{recs:?}");
    let flow = &of_type(&recs, "flow")[0];
    assert_eq!(flow["app_proto"], "dcerpc");
}

#[test]
fn dce_byte_order_is_the_calls_own_and_old_names_run() {
    // The same stub in a little-endian and a big-endian call: `dce` reads
    // 00 37 as 0x3700 in the first and 0x37 in the second.
    let be = |ptype: u8, stub: &[u8]| {
        let mut p = dce_pdu(ptype, stub);
        p[4] = 0;
        let len = u16::from_le_bytes([p[8], p[9]]);
        p[8..10].copy_from_slice(&len.to_be_bytes());
        p
    };
    let bind = dce_pdu(11, b"");
    let frames = tcp_session(
        49444,
        &[
            (&bind, &dce_pdu(12, b"")),
            (&dce_pdu(0, b"\\\x00\x37"), &dce_pdu(2, b"ok")),
            (&be(0, b"\\\x00\x37"), &be(2, b"ok")),
        ],
    );
    let rules = "alert dcerpc any any -> any any (flow:to_server; dce_opnum:0; dce_stub_data; content:\"|5c|\"; byte_test:2,=,14080,0,relative,dce; sid:1;)\n\
                 alert dcerpc any any -> any any (flow:to_server; dce_opnum:0; dce_stub_data; content:\"|5c|\"; byte_test:2,=,55,0,relative,dce; sid:2;)\n";
    let recs = run("dcerpc-dce", &frames, rules);
    // Without a DCE/RPC buffer, `dce` still makes the rule a DCE/RPC one: it
    // looks at this flow's stream (big-endian there) and not at a plain one's.
    let raw =
        "alert tcp any any -> any any (flow:to_server; content:\"|5c|\"; byte_test:2,=,55,0,relative,dce; sid:3;)\n";
    let plain = tcp_session(49555, &[(b"\\\x00\x37", b"ok")]);
    assert_eq!(sids(&run("dcerpc-dce-raw", &frames, raw)), [3, 3], "both requests' stubs in the stream");
    assert!(sids(&run("dcerpc-dce-plain", &plain, raw)).is_empty(), "not a DCE/RPC flow");
    let alerts: Vec<(u64, u64)> = of_type(&recs, "alert")
        .iter()
        .map(|a| (a["alert"]["signature_id"].as_u64().unwrap(), a["tx_id"].as_u64().unwrap()))
        .collect();
    assert_eq!(alerts, [(1, 1), (2, 2)], "{recs:?}");
}

/// A big-endian connectionless DCE/RPC datagram of `ptype` for interface
/// 12345778-1234-abcd-ef00-0123456789ab 1.0, operation 4, sequence number 0.
fn dce_datagram(ptype: u8, body: &[u8]) -> Vec<u8> {
    let mut d = vec![4, ptype, 0, 0, 0, 0, 0, 0];
    d.extend([0x11; 16]);
    d.extend([0x12, 0x34, 0x57, 0x78, 0x12, 0x34, 0xab, 0xcd, 0xef, 0x00, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab]);
    d.extend([0xaa; 16]);
    d.extend([0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 4, 0xff, 0xff, 0xff, 0xff]);
    d.extend((body.len() as u16).to_be_bytes());
    d.extend([0, 0, 0, 0]);
    d.extend_from_slice(body);
    d
}

#[test]
fn dcerpc_over_udp_is_parsed_on_any_port_and_its_calls_inspected() {
    let rules = r#"
alert dcerpc any any -> any any (msg:"call"; dcerpc.iface:12345778-1234-abcd-ef00-0123456789ab; dcerpc.opnum:4; sid:1;)
alert udp any any -> any any (msg:"stub"; dce_iface:12345778-1234-abcd-ef00-0123456789ab,=1; dce_opnum:4; dce_stub_data; content:"AB"; byte_test:2,=,0x4344,0,relative,dce; sid:2;)
alert dcerpc any any -> any any (msg:"other operation"; dcerpc.opnum:5; sid:3;)
"#;
    let dg = |from: [u8; 4], to: [u8; 4], sp: u16, dp: u16, ptype: u8, body: &[u8]| {
        PacketBuilder::ipv4(from, to).udp(sp, dp).payload(&dce_datagram(ptype, body)).build_ethernet()
    };
    // A second call never answered: logged when the flow ends, on a UDP pseudo-packet.
    let frames = [dg(C, S, 40001, 4000, 0, b"ABCD"), dg(S, C, 4000, 40001, 2, b"ok"), dg(C, S, 40001, 4000, 0, b"ZZ")];
    let recs = run("dcerpc-udp", &frames, rules);
    // A rule that names no direction inspects the call on each side, as Suricata's does.
    assert_eq!(sids(&recs), [1, 1, 1, 2], "{recs:?}");
    let open = &of_type(&recs, "dcerpc")[1];
    assert_eq!((open["proto"].as_str(), open["dcerpc"]["response"].as_str()), (Some("UDP"), Some("UNREPLIED")));
    let call = &of_type(&recs, "dcerpc")[0]["dcerpc"];
    assert_eq!(call["response"], "RESPONSE");
    assert_eq!(call["req"]["stub_data_size"], 4);
    assert_eq!(
        (call["rpc_version"].as_str(), call["activityuuid"].as_str()),
        (Some("4.0"), Some("aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"))
    );
    assert_eq!(of_type(&recs, "flow")[0]["app_proto"], "dcerpc");
}

#[test]
fn offset_and_depth_count_from_each_stream_window() {
    // Two requests of a chunk and more each, each answered before the next:
    // each is the start of a window, where `depth:8` finds its header.
    let request = |n: u8| [b"\x00\x00\x0c\x00HDR".to_vec(), vec![n; 3000]].concat();
    let (one, two) = (request(b'a'), request(b'b'));
    let frames = tcp_session(9999, &[(&one, b"ok"), (&two, b"ok")]);
    let rules = "alert tcp any any -> any any (flow:to_server,only_stream; content:\"HDR\"; depth:8; sid:1;)\n\
                 alert tcp any any -> any any (flow:to_server,only_stream; content:\"HDR\"; offset:4; depth:3; content:\"bbb\"; distance:0; sid:2;)\n";
    let recs = run("stream-windows", &frames, rules);
    assert_eq!(sids(&recs), [1, 1, 2], "{recs:?}");
}

#[test]
fn rdp_records_go_the_way_of_the_packet_that_writes_them() {
    let cookie = b"Cookie: mstshash=eve\r\n";
    let mut cr = vec![3, 0, 0, (11 + cookie.len()) as u8, (6 + cookie.len()) as u8, 0xe0, 0, 0, 0x12, 0x34, 0];
    cr.extend_from_slice(cookie);
    let cc = [3, 0, 0, 11, 6, 0xd0, 0, 0, 0x12, 0x34, 0];
    let recs = run("rdp-dir", &tcp_session(3389, &[(&cr, &cc)]), "");
    let rdp: Vec<(&str, u64)> = of_type(&recs, "rdp")
        .iter()
        .map(|r| (r["rdp"]["event_type"].as_str().unwrap(), r["src_port"].as_u64().unwrap()))
        .collect();
    // The request is read on the server's packet that acknowledges it, the answer on the client's.
    assert_eq!(rdp, [("initial_request", 3389), ("initial_response", 40000)], "{recs:?}");
}

/// A BER element with a short length.
fn tlv(tag: u8, v: &[u8]) -> Vec<u8> {
    [vec![tag, v.len() as u8], v.to_vec()].concat()
}

#[test]
fn ldap_responses_are_inspected_as_each_comes_and_match_once() {
    let message = |id: u8, op: u8, v: &[u8]| tlv(0x30, &[tlv(0x02, &[id]), tlv(op, v)].concat());
    let search = message(
        2,
        0x63,
        &[
            tlv(0x04, b"dc=example,dc=com"),
            tlv(0x0a, &[2]),
            tlv(0x0a, &[0]),
            tlv(0x02, &[0]),
            tlv(0x02, &[0]),
            tlv(0x01, &[0]),
            tlv(0x87, b"objectClass"),
            tlv(0x30, &tlv(0x04, b"cn")),
        ]
        .concat(),
    );
    let entry = |dn: &[u8]| message(2, 0x64, &[tlv(0x04, dn), tlv(0x30, b"")].concat());
    let done = message(2, 0x65, &[tlv(0x0a, &[0]), tlv(0x04, b""), tlv(0x04, b"")].concat());
    // Each response in a segment of its own, each acknowledged before the next.
    let frames = tcp_session(
        389,
        &[(&search, &entry(b"cn=a,dc=example,dc=com")), (b"", &entry(b"cn=b,dc=example,dc=com")), (b"", &done)],
    );
    let rules = r#"
alert ldap any any -> any any (msg:"any response"; ldap.responses.count:>0; sid:1;)
alert ldap any any -> any any (msg:"the last is the end"; ldap.responses.operation:search_result_done,-1; sid:2;)
alert ldap any any -> any any (msg:"two so far"; ldap.responses.count:2; sid:3;)
alert ldap any any -> any any (msg:"an entry's name"; ldap.responses.dn; content:"cn=b,"; sid:4;)
alert ldap any any -> any any (msg:"all of them ends"; ldap.responses.operation:search_result_done,all; sid:5;)
"#;
    let recs = run("ldap-each-response", &frames, rules);
    let alerts: Vec<(u64, usize)> = of_type(&recs, "alert")
        .iter()
        .map(|a| (a["alert"]["signature_id"].as_u64().unwrap(), a["ldap"]["responses"].as_array().map_or(0, Vec::len)))
        .collect();
    // Each alert once, with the responses there were when it matched.
    assert_eq!(alerts, [(1, 1), (3, 2), (4, 2), (2, 3)], "{recs:?}");
}

#[test]
fn smb_is_detected_and_dcerpc_rules_apply_to_it() {
    let mut negotiate = vec![0, 0, 0, 0x2f];
    negotiate.extend_from_slice(b"\xffSMBr");
    negotiate.resize(0x2f + 4, 0);
    let mut write = vec![0, 0, 0, 0x40];
    write.extend_from_slice(b"\xffSMB/");
    write.extend_from_slice(b"\\PIPE\\svcctl cmd.exe");
    write.resize(0x40 + 4, 0);
    let frames = tcp_session(445, &[(&negotiate, &negotiate), (&write, &negotiate)]);
    let rules = "alert smb any any -> any any (flow:to_server; content:\"|ff|SMB/\"; sid:1;)\n\
                 alert dcerpc any any -> any any (flow:to_server; content:\"svcctl\"; sid:2;)\n\
                 alert tls any any -> any any (content:\"svcctl\"; sid:3;)\n";
    let recs = run("smb", &frames, rules);
    assert_eq!(sids(&recs), [1, 2], "{recs:?}");
    assert_eq!(of_type(&recs, "flow")[0]["app_proto"], "smb");
}

#[test]
fn smb_records_its_commands_and_dcerpc_keywords_run_on_calls_through_pipes() {
    use vigil_types::Direction::ToServer;
    // The SMB parser's own sample: a pipe opened on IPC$, a bind and a call (opnum 15) through it.
    let sample = (vigil_applayer::protocols::smb::PROTO.sample)();
    let pairs: Vec<(&[u8], &[u8])> = sample
        .chunks(2)
        .map(|p| {
            assert_eq!(p[0].0, ToServer);
            (&p[0].1[..], &p[1].1[..])
        })
        .collect();
    let frames = tcp_session(445, &pairs);
    let rules = "alert smb any any -> any any (flow:to_server; dcerpc.iface:4b324fc8-1670-01d3-1278-5a47bf6ee188; dcerpc.opnum:15; sid:1;)\n\
                 alert smb any any -> any any (dcerpc.opnum:16; sid:2;)\n\
                 alert smb any any -> any any (smb.named_pipe; content:\"IPC$\"; sid:3;)\n\
                 alert smb any any -> any any (smb.share; content:\"IPC$\"; sid:4;)\n\
                 alert smb any any -> any any (dcerpc.stub_data; content:\"ABCD\"; startswith; sid:5;)\n\
                 alert dcerpc any any -> any any (flow:to_server; dcerpc.opnum:15; sid:6;)\n\
                 alert smb any any -> any any (smb.version:1; sid:7;)\n\
                 alert smb any any -> any any (flow:to_server; smb.version:2; smb.named_pipe; content:\"IPC$\"; sid:8;)\n";
    let recs = run("smb-pipe", &frames, rules);
    assert_eq!(sids(&recs), [1, 3, 5, 6, 8], "{recs:?}");
    let smb = of_type(&recs, "smb");
    assert_eq!(smb.len(), 6);
    assert_eq!(smb[1]["smb"]["named_pipe"], "\\\\host\\IPC$");
    assert_eq!(smb[4]["smb"]["dcerpc"]["opnum"], 15);
    // The call's alert names the SMB command's transaction.
    let alert = of_type(&recs, "alert").into_iter().find(|a| a["alert"]["signature_id"] == 1).unwrap();
    assert_eq!(alert["tx_id"], smb[4]["tx_id"]);
}

/// DNS over HTTPS on HTTP/2 (the `doh2` definition's own sample: a GET
/// whose `dns` variable is the query, answered with
/// `application/dns-message`): the flow is `doh2` (from `http2`), DNS,
/// HTTP/2 and `doh2` rules all run on it, a `doh2` rule mixes HTTP and
/// DNS keywords, and the stream is a `dns` record with its `http` object.
#[test]
fn dns_over_http2_is_doh2_and_runs_dns_http2_and_mixed_rules() {
    use vigil_types::Direction::{ToClient, ToServer};
    let sample = (vigil_applayer::proto::find("doh2").unwrap().sample)();
    assert_eq!((sample[0].0, sample[1].0), (ToServer, ToClient));
    let frames = tcp_session(8443, &[(&sample[0].1, &sample[1].1)]);
    let rules = "alert dns any any -> any any (dns.query; content:\"example.com\"; sid:1;)\n\
                 alert doh2 any any -> any any (dns.opcode:0; http.uri; content:\"/dns-query\"; sid:2;)\n\
                 alert http2 any any -> any any (http.uri; content:\"/dns-query\"; sid:3;)\n\
                 alert dns any any -> any any (flow:to_client; dns.answers.rrname; content:\"example\"; sid:4;)\n\
                 alert doh2 any any -> any any (dns.opcode:1; http.uri; content:\"/dns-query\"; sid:5;)\n\
                 alert http1 any any -> any any (http.uri; content:\"/dns-query\"; sid:6;)\n";
    let recs = run("doh2", &frames, rules);
    assert_eq!(sids(&recs), [1, 2, 3, 4], "{recs:?}");
    let flow = of_type(&recs, "flow");
    assert_eq!((flow[0]["app_proto"].as_str(), flow[0]["app_proto_orig"].as_str()), (Some("doh2"), Some("http2")));
    for a in of_type(&recs, "alert") {
        assert_eq!((a["app_proto"].as_str(), a["app_proto_orig"].as_str()), (Some("doh2"), Some("http2")), "{a}");
        // Alerts carry the DNS message without its grouped answers.
        assert!(a["dns"].is_object() && a["dns"].get("grouped").is_none(), "{a}");
    }
    let dns = of_type(&recs, "dns");
    assert_eq!(dns.len(), 1);
    assert_eq!(dns[0]["dns"]["type"], "response");
    assert_eq!(dns[0]["dns"]["grouped"]["A"][0], "198.18.0.1");
    assert_eq!(dns[0]["http"]["url"], "/dns-query?dns=AAABAAABAAAAAAAAB2V4YW1wbGUDY29tAAABAAE");
    // HTTP/2 records carry no tx_id, as Suricata's.
    assert!(dns[0].get("tx_id").is_none());
    // The SETTINGS of stream 0 stay `http` records.
    assert!(of_type(&recs, "http").iter().all(|h| h["http"]["http2"]["stream_id"] == 0));
}

/// Flow variables in EVE, as Suricata writes them: once a signature set a
/// flowbit or counter, or a `pcre` captured into a flow variable, every
/// later record of the flow carries them as `metadata` (alerts, protocol
/// records, the flow record); packet variables are the alert's
/// `metadata.pktvars`, alert variables its `alert.context`.
#[test]
fn flow_variables_and_captures_are_the_records_metadata() {
    let rules = r#"
alert http any any -> any any (http.user_agent; pcre:"/^(?P<alert_tool>[a-z]+)-(?P<pkt_kind>[a-z]+)/"; flowbits:set,tested; flowint:hits,=,1; sid:1;)
alert http any any -> any any (http.host; pcre:"/^([a-z]+)\./,flow:site"; sid:2;)
"#;
    let recs = run("vars", &tcp_session(8081, &[(REQ, RESP)]), rules);
    assert_eq!(sids(&recs), vec![1, 2]);
    let alert = of_type(&recs, "alert").into_iter().find(|a| a["alert"]["signature_id"] == 1).unwrap();
    assert_eq!(alert["alert"]["context"], serde_json::json!({"tool": "vigil"}));
    assert_eq!(alert["metadata"]["pktvars"], serde_json::json!([{"kind": "test"}]));
    assert_eq!(alert["metadata"]["flowbits"], serde_json::json!(["tested"]));
    assert_eq!(alert["metadata"]["flowints"], serde_json::json!({"hits": 1}));
    let want = serde_json::json!({"flowbits": ["tested"], "flowints": {"hits": 1}, "flowvars": [{"site": "example"}]});
    assert_eq!(of_type(&recs, "http")[0]["metadata"], want);
    assert_eq!(of_type(&recs, "flow")[0]["metadata"], want);
}
