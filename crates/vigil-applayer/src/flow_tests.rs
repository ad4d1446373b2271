//! Whole flows through [`AppFlow`]: detection, replay into the parser,
//! pending bytes, tunnels. Stream flows are run whole, byte by byte and in
//! random chunks: every cut must give the same transactions and events.

use vigil_types::AppProto;
use vigil_types::Direction::{self, ToClient, ToServer};

use crate::dns::tests::{answer, query};
use crate::http::HttpConfig;
use crate::protocols::dns::Buffer as DnsBuffer;
use crate::protocols::http::Buffer as HttpBuffer;
use crate::protocols::tls::sample::tls12_flights;
use crate::protocols::tls::Buffer as TlsBuffer;
use crate::{AppConfig, AppFlow, BufferId, Progress, Transport, TxRef};

const HTTP: AppProto = AppProto::Plugin("http");
const TLS: AppProto = AppProto::Plugin("tls");

fn hb(b: HttpBuffer) -> BufferId {
    BufferId::Proto(b as u8)
}
const DNS: AppProto = AppProto::Plugin("dns");
const DNS_QUERY: BufferId = BufferId::Proto(DnsBuffer::Query as u8);
const DNS_ANSWER_NAME: BufferId = BufferId::Proto(DnsBuffer::AnswerName as u8);
const TLS_SNI: BufferId = BufferId::Proto(TlsBuffer::Sni as u8);
const TLS_ALPN: BufferId = BufferId::Proto(TlsBuffer::Alpn as u8);
const TLS_CERTS: BufferId = BufferId::Proto(TlsBuffer::Certs as u8);

#[derive(Clone)]
enum Seg {
    Data(Direction, Vec<u8>),
    Gap(Direction, u64),
    Close(Direction),
}

fn c2s(s: impl AsRef<[u8]>) -> Seg {
    Seg::Data(ToServer, s.as_ref().to_vec())
}

fn s2c(s: impl AsRef<[u8]>) -> Seg {
    Seg::Data(ToClient, s.as_ref().to_vec())
}

#[derive(Clone, Copy, Debug)]
enum Cut {
    Whole,
    Bytes,
    /// Pieces of 1..=max bytes from a xorshift stream seeded with the value.
    Random(u64, usize),
}

const CUTS: [Cut; 5] = [Cut::Whole, Cut::Bytes, Cut::Random(7, 5), Cut::Random(99, 37), Cut::Random(12345, 700)];

/// What a flow ended with, in a form two runs can be compared by.
#[derive(Debug, PartialEq)]
struct Outcome {
    proto: AppProto,
    txs: Vec<String>,
    events: Vec<(&'static str, Option<u64>)>,
    no_inspection: bool,
}

fn describe(tx: TxRef<'_>) -> String {
    format!("{tx:?} {:?}/{:?}", tx.progress(ToServer), tx.progress(ToClient))
}

fn run_flow(cfg: &AppConfig, ports: (u16, u16), segs: &[Seg], cut: Cut) -> (AppFlow, Outcome) {
    let mut flow = AppFlow::new(cfg, Transport::Tcp, ports.0, ports.1);
    let mut events = Vec::new();
    let mut rng = match cut {
        Cut::Random(seed, _) => seed | 1,
        _ => 1,
    };
    for seg in segs {
        match seg {
            Seg::Data(dir, bytes) => {
                let mut rest = bytes.as_slice();
                while !rest.is_empty() {
                    let n = match cut {
                        Cut::Whole => rest.len(),
                        Cut::Bytes => 1,
                        Cut::Random(_, max) => {
                            rng ^= rng << 13;
                            rng ^= rng >> 7;
                            rng ^= rng << 17;
                            1 + (rng % max as u64) as usize
                        }
                    };
                    let (head, tail) = rest.split_at(n.min(rest.len()));
                    flow.feed(*dir, head);
                    // Every kind of read between feeds must be harmless.
                    let _ = flow.txs().map(describe).count();
                    rest = tail;
                }
            }
            Seg::Gap(dir, len) => flow.gap(*dir, *len),
            Seg::Close(dir) => flow.close(*dir),
        }
        events.extend(flow.take_events().into_iter().map(|e| (e.name, e.tx_id)));
    }
    events.sort();
    let out = Outcome {
        proto: flow.proto(),
        txs: flow.txs().map(describe).collect(),
        events,
        no_inspection: flow.no_inspection(),
    };
    (flow, out)
}

/// Runs every cut, checks they agree, and returns the flow fed whole.
fn check(cfg: &AppConfig, ports: (u16, u16), segs: &[Seg]) -> AppFlow {
    let (flow, whole) = run_flow(cfg, ports, segs, Cut::Whole);
    for cut in CUTS {
        let (other, out) = run_flow(cfg, ports, segs, cut);
        assert_eq!(whole, out, "{cut:?} gave a different outcome");
        assert_eq!(flow.counters(), other.counters(), "{cut:?} gave different counters");
    }
    flow
}

fn buf<'a>(tx: TxRef<'a>, dir: Direction, id: BufferId) -> Option<&'a str> {
    tx.buffer(dir, id, 0).map(|b| std::str::from_utf8(b).expect("test buffers are text"))
}

fn http_exchange() -> Vec<Seg> {
    vec![
        c2s("GET /a/../index.html?q=1 HTTP/1.1\r\nHost: Example.com\r\nUser-Agent: test\r\n\r\n"),
        s2c("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nServer: x\r\n\r\nhello"),
        c2s("POST /form HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"),
        s2c("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"),
    ]
}

#[test]
fn http_exchange_is_the_same_however_cut() {
    let flow = check(&AppConfig::default(), (40000, 8080), &http_exchange());
    assert_eq!(flow.proto(), HTTP);
    let txs: Vec<_> = flow.txs().collect();
    assert_eq!(txs.iter().map(TxRef::id).collect::<Vec<_>>(), [0, 1]);
    assert_eq!(buf(txs[0], ToServer, hb(HttpBuffer::Uri)), Some("/index.html?q=1"));
    assert_eq!(buf(txs[0], ToServer, hb(HttpBuffer::Host)), Some("example.com"));
    assert_eq!(buf(txs[0], ToClient, hb(HttpBuffer::ResponseBody)), Some("hello"));
    assert_eq!(buf(txs[1], ToServer, hb(HttpBuffer::RequestBody)), Some("abc"));
    assert_eq!(buf(txs[1], ToClient, hb(HttpBuffer::StatCode)), Some("404"));
    assert!(txs.iter().all(|t| t.proto() == HTTP && t.progress(ToClient) == Progress::Complete));
    assert_eq!(flow.counters(), crate::AppCounters::default());
    assert!(!flow.no_inspection());
}

#[test]
fn http_progress_along_an_exchange() {
    let mut flow = AppFlow::new(&AppConfig::default(), Transport::Tcp, 40000, 80);
    let progress = |flow: &AppFlow| {
        let tx = flow.txs().next().expect("a transaction");
        (tx.progress(ToServer), tx.progress(ToClient))
    };
    flow.feed(ToServer, b"POST /up HTTP/1.1\r\nHost: h\r\nCont");
    assert_eq!(flow.proto(), HTTP);
    assert_eq!(progress(&flow), (Progress::None, Progress::None));
    flow.feed(ToServer, b"ent-Length: 6\r\n\r\nabc");
    assert_eq!(progress(&flow), (Progress::Headers, Progress::None));
    assert_eq!(buf(flow.txs().next().unwrap(), ToServer, hb(HttpBuffer::Method)), Some("POST"));
    flow.feed(ToServer, b"def");
    assert_eq!(progress(&flow), (Progress::Complete, Progress::None));
    flow.feed(ToClient, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n");
    assert_eq!(progress(&flow), (Progress::Complete, Progress::Headers));
    flow.feed(ToClient, b"ok");
    assert_eq!(progress(&flow), (Progress::Complete, Progress::Complete));
    flow.prune(1);
    assert_eq!(flow.txs().count(), 0);
}

#[test]
fn body_delimited_by_close_completes_at_close() {
    let flow = check(
        &AppConfig::default(),
        (40000, 80),
        &[c2s("GET / HTTP/1.0\r\n\r\n"), s2c("HTTP/1.0 200 OK\r\n\r\nuntil the end"), Seg::Close(ToClient)],
    );
    let tx = flow.txs().next().unwrap();
    assert_eq!(tx.progress(ToClient), Progress::Complete);
    assert_eq!(buf(tx, ToClient, hb(HttpBuffer::ResponseBody)), Some("until the end"));
}

#[test]
fn a_response_first_still_decides_http() {
    // The capture started after the request: the response alone says HTTP.
    let flow = check(&AppConfig::default(), (40000, 80), &[s2c("HTTP/1.1 204 No Content\r\n\r\n")]);
    assert_eq!(flow.proto(), HTTP);
    assert_eq!(flow.txs().count(), 1);
}

#[test]
fn bytes_held_during_detection_reach_the_parser_in_order() {
    // The server's junk is kept while the client has not decided, then replayed.
    let flow = check(
        &AppConfig::default(),
        (40000, 80),
        &[s2c("\x00\x01junk"), c2s("GET /late HTTP/1.1\r\nHost: h\r\n\r\n"), s2c("HTTP/1.1 200 OK\r\n\r\n")],
    );
    assert_eq!(flow.proto(), HTTP);
    let uris: Vec<_> = flow.txs().filter_map(|t| buf(t, ToServer, hb(HttpBuffer::Uri))).collect();
    assert_eq!(uris, ["/late"]);
}

#[test]
fn tls_is_found_on_any_port() {
    let flights: Vec<Seg> = tls12_flights().into_iter().map(|(dir, bytes)| Seg::Data(dir, bytes)).collect();
    let flow = check(&AppConfig::default(), (50000, 8443), &flights);
    assert_eq!(flow.proto(), TLS);
    let tx = flow.txs().next().unwrap();
    assert_eq!((tx.id(), tx.proto()), (0, TLS));
    assert_eq!(buf(tx, ToServer, TLS_SNI), Some("example.com"));
    assert_eq!(tx.buffer(ToServer, TLS_ALPN, 1), Some(&b"http/1.1"[..]));
    assert_eq!(tx.buffer(ToClient, TLS_ALPN, 0), Some(&b"h2"[..]));
    assert_eq!((tx.progress(ToServer), tx.progress(ToClient)), (Progress::Complete, Progress::Complete));
    // Both sides sent ChangeCipherSpec: what follows is ciphertext.
    assert!(flow.no_inspection());

    // The ClientHello alone: the server side has not started.
    let mut flow = AppFlow::new(&AppConfig::default(), Transport::Tcp, 50000, 8443);
    flow.feed(ToServer, &tls12_flights()[0].1);
    let tx = flow.txs().next().unwrap();
    assert_eq!((tx.progress(ToServer), tx.progress(ToClient)), (Progress::Complete, Progress::None));
    assert!(!flow.no_inspection());

    // Disabled, it is not detected.
    let mut cfg = AppConfig::default();
    cfg.set_enabled("tls", false);
    let flow = check(&cfg, (50000, 443), &flights);
    assert_eq!(flow.proto(), AppProto::Failed);
    assert_eq!(flow.txs().count(), 0);
}

#[test]
fn dns_over_udp_needs_port_53() {
    let (q, a) = (query(), answer());
    let mut flow = AppFlow::new(&AppConfig::default(), Transport::Udp, 40000, 53);
    flow.feed(ToServer, q.bytes());
    assert_eq!(flow.proto(), DNS);
    flow.feed(ToClient, a.bytes());
    // A datagram that is not DNS does not spoil the next one.
    flow.feed(ToClient, b"\x12\x34\x81\x80\x00\x01\x00\x01\x00\x00\x00\x00\x03bad");
    flow.feed(ToServer, q.bytes());
    let txs: Vec<_> = flow.txs().collect();
    assert_eq!(txs.iter().map(TxRef::id).collect::<Vec<_>>(), [0, 1, 2]);
    assert_eq!(buf(txs[0], ToServer, DNS_QUERY), Some("www.suricata-ids.org"));
    assert_eq!(txs[1].buffer(ToClient, DNS_ANSWER_NAME, 1), Some(&b"suricata-ids.org"[..]));
    assert_eq!((txs[0].progress(ToServer), txs[0].progress(ToClient)), (Progress::Complete, Progress::None));
    assert_eq!((txs[1].progress(ToServer), txs[1].progress(ToClient)), (Progress::None, Progress::Complete));
    assert_eq!(flow.counters().parser_errors, 1);
    flow.prune(2);
    assert_eq!(flow.txs().map(|t| t.id()).collect::<Vec<_>>(), [2]);

    // The same query to another port is not DNS (ports are a hint DNS needs;
    // on 5353 it would be mDNS, a protocol of its own).
    let mut flow = AppFlow::new(&AppConfig::default(), Transport::Udp, 40000, 5354);
    flow.feed(ToServer, q.bytes());
    // The other side's first datagram may still decide.
    assert_eq!(flow.proto(), AppProto::Unknown);
    flow.feed(ToClient, a.bytes());
    assert_eq!(flow.proto(), AppProto::Failed);
    assert_eq!(flow.txs().count(), 0);
    assert_eq!(flow.counters().detect_failed, 1);

    // The source port counts too (the flow may have been seen from the
    // server first) with midstream pick-up on, as in Suricata; off, only
    // the destination port.
    let midstream = AppConfig { udp_source_port: true, ..AppConfig::default() };
    let mut flow = AppFlow::new(&midstream, Transport::Udp, 53, 40000);
    flow.feed(ToServer, a.bytes());
    assert_eq!(flow.proto(), DNS);
    let mut flow = AppFlow::new(&AppConfig::default(), Transport::Udp, 53, 40000);
    flow.feed(ToServer, a.bytes());
    flow.feed(ToClient, q.bytes());
    assert_eq!(flow.proto(), AppProto::Failed);
}

#[test]
fn each_udp_side_is_probed_on_its_first_datagram() {
    let (q, a) = (query(), answer());
    let junk = [0xde, 0xad, 0xbe, 0xef].repeat(10);
    // A junk first request: the server's answer decides, and the client's
    // later datagrams are read, as Suricata reads them.
    let mut flow = AppFlow::new(&AppConfig::default(), Transport::Udp, 40000, 53);
    flow.feed(ToServer, &junk);
    assert_eq!(flow.proto(), AppProto::Unknown);
    flow.feed(ToServer, q.bytes());
    assert_eq!(flow.txs().count(), 0, "a side that failed is not probed again");
    flow.feed(ToClient, a.bytes());
    assert_eq!((flow.proto(), flow.dir_proto(ToServer), flow.dir_proto(ToClient)), (DNS, Some(AppProto::Failed), None));
    flow.feed(ToServer, q.bytes());
    assert_eq!(flow.txs().count(), 2);
    // Junk both ways fails at once; junk one way fails when the flow ends.
    let mut flow = AppFlow::new(&AppConfig::default(), Transport::Udp, 40000, 53);
    flow.feed(ToServer, &junk);
    flow.feed(ToClient, &junk);
    assert_eq!(flow.proto(), AppProto::Failed);
    let mut flow = AppFlow::new(&AppConfig::default(), Transport::Udp, 40000, 53);
    flow.feed(ToServer, &junk);
    flow.ended();
    assert_eq!((flow.proto(), flow.counters().detect_failed), (AppProto::Failed, 1));
}

#[test]
fn dns_over_tcp_on_port_53() {
    let flow = check(&AppConfig::default(), (40000, 53), &[c2s(query().framed()), s2c(answer().framed())]);
    assert_eq!(flow.proto(), DNS);
    let txs: Vec<_> = flow.txs().collect();
    assert_eq!(txs.len(), 2);
    assert_eq!(buf(txs[1], ToClient, DNS_QUERY), Some("www.suricata-ids.org"));
}

#[test]
fn other_protocols_fail_detection() {
    // A version exchange of a protocol vigil does not parse.
    let unknown = [c2s("ZZP 003.008 hello\n"), s2c("ZZP 003.008 ready\n")];
    let flow = check(&AppConfig::default(), (40000, 5999), &unknown);
    assert_eq!(flow.proto(), AppProto::Failed);
    assert_eq!(flow.counters().detect_failed, 1);
    assert_eq!(flow.txs().count(), 0);

    // One side says no: the other may still decide; if it ends without a
    // word, the flow stays unknown, as Suricata leaves it (checked on its
    // oracle with junk one way, either way, and this greeting).
    let flow = check(&AppConfig::default(), (40000, 119), &[s2c("200 NNTP service ready\r\n")]);
    assert_eq!(flow.proto(), AppProto::Unknown);
    let flow = check(&AppConfig::default(), (40000, 119), &[s2c("200 NNTP service ready\r\n"), Seg::Close(ToServer)]);
    assert_eq!((flow.proto(), flow.counters().detect_failed), (AppProto::Unknown, 0));

    // A flow without payload stays unknown.
    let flow = check(&AppConfig::default(), (40000, 80), &[Seg::Close(ToServer), Seg::Close(ToClient)]);
    assert_eq!(flow.proto(), AppProto::Unknown);

    // A gap hides the start of the stream: that side can no longer be probed.
    let flow = check(
        &AppConfig::default(),
        (40000, 80),
        &[Seg::Gap(ToServer, 100), c2s("GET / HTTP/1.1\r\n\r\n"), s2c("\x01\x02")],
    );
    assert_eq!(flow.proto(), AppProto::Failed);
}

#[test]
fn waiting_for_more_ends_at_the_detection_limit() {
    let cfg = AppConfig { detect_limit: 4, ..AppConfig::default() };
    // "OPTI" could still become "OPTIONS ", but the limit is reached.
    let flow = check(&cfg, (40000, 80), &[c2s("OPTIONS * HTTP/1.1\r\n\r\n"), s2c("\x01")]);
    assert_eq!(flow.proto(), AppProto::Failed);
}

#[test]
fn pending_is_bounded_with_a_1mb_header_line() {
    let mut line = b"GET / HTTP/1.1\r\nX-Long: ".to_vec();
    line.resize(line.len() + 1024 * 1024, b'a');
    line.extend_from_slice(b"\r\nHost: h\r\n\r\n");

    // HTTP cuts the line at its own bound: nothing is held past it, nothing overflows.
    let cfg = AppConfig::default();
    let mut flow = AppFlow::new(&cfg, Transport::Tcp, 40000, 80);
    for chunk in line.chunks(16 * 1024) {
        flow.feed(ToServer, chunk);
        assert!(flow.pending(ToServer) <= cfg.http.max_header_bytes);
    }
    assert_eq!(flow.counters().pending_overflows, 0);
    assert!(flow.take_events().iter().any(|e| e.name == "http.request_field_too_long"));
    assert_eq!(flow.txs().next().unwrap().progress(ToServer), Progress::Complete);

    // A parser that would hold it all is stopped by max_pending: the excess becomes a gap.
    let cfg = AppConfig {
        http: HttpConfig { max_header_bytes: 4 * 1024 * 1024, ..HttpConfig::default() },
        max_pending: 64 * 1024,
        ..AppConfig::default()
    };
    let mut flow = AppFlow::new(&cfg, Transport::Tcp, 40000, 80);
    for chunk in line.chunks(16 * 1024) {
        flow.feed(ToServer, chunk);
        assert!(flow.pending(ToServer) <= cfg.max_pending);
    }
    let c = flow.counters();
    assert!(c.pending_overflows >= 1 && c.bytes_dropped > 0, "{c:?}");
    // After the gap HTTP resyncs on the next request.
    flow.feed(ToServer, b"GET /next HTTP/1.1\r\nHost: h\r\n\r\n");
    assert!(flow.txs().any(|t| buf(t, ToServer, hb(HttpBuffer::Uri)) == Some("/next")));
}

#[test]
fn starttls_names_the_protocol_that_asked_for_tls() {
    let [hello, server1, client2, server2] = tls12_flights();
    let segs = [
        s2c("220 mx.example.com ESMTP\r\n"),
        c2s("EHLO client.example.com\r\n"),
        s2c("250-mx.example.com\r\n250 STARTTLS\r\n"),
        c2s("STARTTLS\r\n"),
        s2c("220 2.0.0 Ready to start TLS\r\n"),
        Seg::Data(hello.0, hello.1.clone()),
        Seg::Data(server1.0, server1.1),
        Seg::Data(client2.0, client2.1),
        Seg::Data(server2.0, server2.1),
    ];
    let flow = check(&AppConfig::default(), (40000, 25), &segs);
    assert_eq!(flow.proto(), TLS);
    assert_eq!(flow.upgraded_from().map(|p| p.name()), Some("smtp"));
}

#[test]
fn connect_tunnel_is_detected_again() {
    let [hello, server1, client2, server2] = tls12_flights();
    let segs = [
        c2s("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"),
        s2c("HTTP/1.1 200 Connection established\r\n\r\n"),
        Seg::Data(hello.0, hello.1.clone()),
        Seg::Data(server1.0, server1.1),
        Seg::Data(client2.0, client2.1),
        Seg::Data(server2.0, server2.1),
    ];
    let flow = check(&AppConfig::default(), (40000, 3128), &segs);
    assert_eq!(flow.proto(), TLS);
    assert_eq!(flow.orig_proto(), Some(HTTP));
    assert_eq!(flow.upgraded_from(), None, "a CONNECT is no request for TLS");
    let txs: Vec<_> = flow.txs().collect();
    assert_eq!(txs.iter().map(|t| (t.id(), t.proto())).collect::<Vec<_>>(), [(0, HTTP), (1, TLS)]);
    assert_eq!(buf(txs[0], ToServer, hb(HttpBuffer::Method)), Some("CONNECT"));
    assert_eq!(buf(txs[1], ToServer, TLS_SNI), Some("example.com"));
    assert!(flow.no_inspection());
    assert_eq!(flow.counters().tunnels, 1);

    let mut flow = flow;
    flow.prune(1);
    assert_eq!(flow.txs().map(|t| t.id()).collect::<Vec<_>>(), [1]);
    flow.prune(2);
    assert_eq!(flow.txs().count(), 0);

    // The client may send its hello before the proxy answers: it is held, then detected.
    let segs = [
        c2s("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"),
        Seg::Data(hello.0, hello.1),
        s2c("HTTP/1.1 200 Connection established\r\n\r\n"),
    ];
    let flow = check(&AppConfig::default(), (40000, 3128), &segs);
    assert_eq!(flow.proto(), TLS);
    assert_eq!(flow.txs().filter_map(|t| buf(t, ToServer, TLS_SNI)).collect::<Vec<_>>(), ["example.com"]);

    // An accepted upgrade to WebSocket needs no detection: WebSocket's parser takes the frames.
    let segs = [
        c2s("GET /chat HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"),
        s2c(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n\x81\x05hello"),
        c2s(b"\x81\x85\x00\x00\x00\x00hello"),
    ];
    let flow = check(&AppConfig::default(), (40000, 80), &segs);
    let websocket = crate::protocols::websocket::PROTO.app_proto();
    assert_eq!((flow.proto(), flow.orig_proto()), (websocket, Some(HTTP)));
    assert_eq!(flow.txs().count(), 3, "the upgrade and a frame each way");
    assert_eq!(flow.counters().detect_failed, 0);
}

#[test]
fn an_h2c_upgrade_hands_its_request_to_http2() {
    // RFC 7540 3.2: the upgrading request is stream 1's; its settings (here
    // ENABLE_PUSH 0, base64url `AAIAAAAA`) a SETTINGS of stream 0.
    let mut server = b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n".to_vec();
    server.extend_from_slice(&[0, 0, 0, 4, 0, 0, 0, 0, 0]);
    // Stream 1's answer: HEADERS with :status 200 (static index 8), then its end.
    server.extend_from_slice(&[0, 0, 1, 1, 5, 0, 0, 0, 1, 0x88]);
    let segs = [
        c2s("GET /robots.txt HTTP/1.1\r\nHost: h\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAIAAAAA\r\n\r\n"),
        s2c(&server),
        c2s(crate::protocols::http2::frame::PREFACE),
    ];
    let flow = check(&AppConfig::default(), (40000, 80), &segs);
    let http2 = crate::protocols::http2::PROTO.app_proto();
    assert_eq!((flow.proto(), flow.orig_proto()), (http2, Some(HTTP)));
    let records: Vec<serde_json::Value> = flow.txs().map(|t| t.tx.eve()).collect();
    assert_eq!(records.len(), 4, "the upgrade, the client's settings, the server's, stream 1: {records:#?}");
    assert_eq!(records[1]["http2"]["request"]["settings"][0]["settings_id"], "SETTINGSENABLEPUSH");
    let stream1 = records.iter().find(|r| r["http2"]["stream_id"] == 1).unwrap();
    assert_eq!((stream1["url"].as_str(), stream1["status"].as_u64()), (Some("/robots.txt"), Some(200)));
    assert_eq!(stream1["request_headers"][2], serde_json::json!({"name": ":authority", "value": "h"}));
}

#[test]
fn a_failed_tunnel_remembers_http_however_pruned() {
    // suricata-verify http-connect-fail: the proxy answers, then sends what no parser knows.
    let mut flow = AppFlow::new(&AppConfig::default(), Transport::Tcp, 51479, 8001);
    flow.feed(ToServer, b"CONNECT abc:443 HTTP/1.1\r\nUser-Agent: Victor/1.0\r\n\r\n");
    assert_eq!((flow.proto(), flow.orig_proto()), (HTTP, None));
    flow.feed(ToClient, b"HTTP/1.1 200 OK\r\nServer: VictorServer/1.0\r\n\r\n");
    // Detecting the tunnel the flow is still HTTP: nothing to tell apart yet.
    assert_eq!((flow.proto(), flow.orig_proto(), flow.counters().tunnels), (HTTP, None, 1));
    // The CONNECT transaction was logged and freed before detection gave up: that must not
    // decide what the flow is.
    flow.prune(1);
    assert_eq!(flow.txs().count(), 0);
    flow.feed(ToClient, b"\x05\x00\x00\x05\x00");
    flow.close(ToServer);
    flow.close(ToClient);
    assert_eq!((flow.proto(), flow.orig_proto()), (AppProto::Failed, Some(HTTP)));
    assert_eq!(flow.counters().detect_failed, 1);

    // A plain flow that fails detection has no original protocol.
    let flow = check(&AppConfig::default(), (40000, 5999), &[c2s("ZZP 003.008 hello\n"), s2c("ZZP 003.008 ready\n")]);
    assert_eq!((flow.proto(), flow.orig_proto()), (AppProto::Failed, None));
}

#[test]
fn http_inside_connect_continues_the_ids() {
    let segs = [
        c2s("CONNECT example.com:80 HTTP/1.1\r\nHost: example.com:80\r\n\r\n"),
        s2c("HTTP/1.1 200 OK\r\n\r\n"),
        c2s("GET /inner HTTP/1.1\r\nHost: example.com\r\n\r\n"),
        s2c("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx"),
    ];
    let flow = check(&AppConfig::default(), (40000, 3128), &segs);
    let ids: Vec<_> = flow.txs().map(|t| (t.id(), buf(t, ToServer, hb(HttpBuffer::UriRaw)))).collect();
    assert_eq!(ids, [(0, Some("example.com:80")), (1, Some("/inner"))]);
}

#[test]
fn a_parser_error_gives_the_direction_up() {
    let [hello, ..] = tls12_flights();
    let mut flow = AppFlow::new(&AppConfig::default(), Transport::Tcp, 40000, 443);
    flow.feed(ToServer, &hello.1);
    flow.feed(ToServer, b"\x63 not a record");
    flow.feed(ToServer, b"more");
    let c = flow.counters();
    assert_eq!((c.parser_errors, c.bytes_dropped), (1, 4));
    assert_eq!(buf(flow.txs().next().unwrap(), ToServer, TLS_SNI), Some("example.com"));
}

#[test]
fn hostile_input_never_panics() {
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let prefixes: [&[u8]; 4] =
        [b"GET / HTTP/1.1\r\n", b"HTTP/1.1 200 OK\r\n", b"\x16\x03\x01\x00\x30\x01", b"\x00\x20"];
    for round in 0..200 {
        let transport = if round % 5 == 0 { Transport::Udp } else { Transport::Tcp };
        let mut flow = AppFlow::new(&AppConfig::default(), transport, 40000, 53);
        for _ in 0..20 {
            let r = next();
            let dir = if r & 1 == 0 { ToServer } else { ToClient };
            let mut data = prefixes[(r >> 1) as usize % 4].to_vec();
            data.extend((0..(r >> 8) % 300).map(|_| next() as u8));
            match (r >> 4) % 16 {
                0 => flow.gap(dir, r >> 32),
                1 => flow.close(dir),
                _ => flow.feed(dir, &data),
            }
            for tx in flow.txs() {
                let _ = (tx.id(), tx.progress(ToServer), tx.progress(ToClient));
                for id in [hb(HttpBuffer::Uri), DNS_QUERY, TLS_SNI, TLS_CERTS] {
                    let _ = tx.buffer(dir, id, 0);
                }
            }
            let _ = (flow.take_events(), flow.no_inspection(), flow.counters());
            assert!(flow.pending(ToServer) <= 256 * 1024 && flow.pending(ToClient) <= 256 * 1024);
        }
    }
}

#[test]
fn an_error_stops_parsing_both_ways_and_is_counted_for_the_error_policy() {
    let [hello, server1, ..] = tls12_flights();
    // Simulated at the to-server stream's first byte: nothing is parsed.
    let cfg = AppConfig {
        simulate_error_at: vigil_types::PerDir { to_server: Some(0), to_client: None },
        ..AppConfig::default()
    };
    let mut flow = AppFlow::new(&cfg, Transport::Tcp, 50000, 443);
    flow.feed(ToServer, &hello.1);
    flow.feed(ToClient, &server1.1);
    assert_eq!(flow.proto(), TLS, "detected before the parser failed");
    assert!(flow.txs().all(|t| !t.writes_record()));
    let c = flow.counters();
    assert_eq!((c.parser_errors, c.policy_errors), (1, 1));
    // Past the offset given, the error comes later: the hello is parsed first.
    let at = hello.1.len() as u64;
    let cfg = AppConfig {
        simulate_error_at: vigil_types::PerDir { to_server: Some(at), to_client: None },
        ..AppConfig::default()
    };
    let mut flow = AppFlow::new(&cfg, Transport::Tcp, 50000, 443);
    flow.feed(ToServer, &hello.1);
    assert_eq!(flow.counters().policy_errors, 0);
    flow.feed(ToServer, b"\x16\x03\x03\x00\x01\x00");
    assert_eq!(flow.counters().policy_errors, 1);
    assert!(flow.txs().any(|t| buf(t, ToServer, TLS_SNI) == Some("example.com")));

    // TLS cannot resume after a gap: an error; HTTP can, and it is none.
    let mut flow = AppFlow::new(&AppConfig::default(), Transport::Tcp, 50000, 443);
    flow.feed(ToServer, &hello.1);
    flow.gap(ToServer, 10);
    flow.feed(ToClient, &server1.1);
    let c = flow.counters();
    assert_eq!((c.gaps, c.gap_errors, c.parser_errors, c.policy_errors), (1, 1, 0, 1));
    assert!(flow.txs().all(|t| t.progress(ToClient) == Progress::None), "the server side is not parsed");
    let mut flow = AppFlow::new(&AppConfig::default(), Transport::Tcp, 40000, 80);
    flow.feed(ToServer, b"GET / HTTP/1.1\r\n\r\n");
    flow.gap(ToServer, 10);
    flow.feed(ToServer, b"GET /next HTTP/1.1\r\n\r\n");
    let c = flow.counters();
    assert_eq!((c.gaps, c.gap_errors, c.policy_errors), (1, 0, 0));
}

#[test]
fn dcerpc_follows_its_pdus_and_detected_only_protocols_want_data_while_undecided() {
    let mut pdu = vec![5, 0, 11, 3, 0x10, 0, 0, 0, 20, 0, 0, 0, 1, 0, 0, 0];
    pdu.extend_from_slice(&[0; 4]);
    // DCE/RPC: its PDUs are followed, and a finished one asks for inspection.
    let flow = check(&AppConfig::default(), (40000, 135), &[c2s(&pdu)]);
    assert_eq!(flow.proto(), crate::protocols::dcerpc::PROTO.app_proto());
    assert!(flow.wants_data());
    let mut flow = AppFlow::new(&AppConfig::default(), Transport::Tcp, 40000, 135);
    flow.feed(ToServer, &pdu);
    assert!(flow.take_raw_trigger(ToServer) && !flow.take_raw_trigger(ToServer));
    // After a gap the parser looks for the next PDU header and goes on.
    flow.gap(ToServer, 10);
    assert!(flow.wants_data());
    flow.feed(ToServer, &[&b"tail of a lost PDU"[..], &pdu].concat());
    assert!(flow.take_raw_trigger(ToServer));
    // SMB: parsed, so it wants the rest once both directions are detected.
    let smb = b"\x00\x00\x00\x08\xffSMBrest";
    let flow = check(&AppConfig::default(), (40000, 445), &[c2s(smb)]);
    assert_eq!(flow.proto(), crate::protocols::smb::PROTO.app_proto());
    assert!(flow.wants_data());
    let flow = check(&AppConfig::default(), (40000, 445), &[c2s(smb), s2c(smb)]);
    assert!(flow.wants_data());
    assert_eq!((flow.dir_proto(ToServer), flow.dir_proto(ToClient)), (None, None));
    // Telnet: any bytes on port 23, each direction on its own.
    let telnet = crate::protocols::telnet::PROTO.app_proto();
    let flow = check(&AppConfig::default(), (40000, 23), &[c2s(b"\xff\xfd\x03"), s2c(b"\xff\xfb\x03")]);
    assert_eq!((flow.proto(), flow.dir_proto(ToClient)), (telnet, None));
    assert!(!flow.wants_data());
    assert_ne!(check(&AppConfig::default(), (40000, 2323), &[c2s(b"\xff\xfd\x03")]).proto(), telnet);
    // HTTP is parsed: it wants the rest.
    assert!(check(&AppConfig::default(), (40000, 80), &http_exchange()).wants_data());
}

/// As [`check`], comparing outcomes only: a parser's error on bytes of
/// another protocol counts the bytes it drops by the cut.
fn check_outcome(ports: (u16, u16), segs: &[Seg]) -> AppFlow {
    let (flow, whole) = run_flow(&AppConfig::default(), ports, segs, Cut::Whole);
    for cut in CUTS {
        assert_eq!(run_flow(&AppConfig::default(), ports, segs, cut).1, whole, "{cut:?}");
    }
    flow
}

fn detect_events(segs: &[Seg]) -> Vec<&'static str> {
    let (_, out) = run_flow(&AppConfig::default(), (40000, 8080), segs, Cut::Whole);
    out.events.iter().map(|(n, _)| *n).filter(|n| n.starts_with("applayer_")).collect()
}

#[test]
fn each_direction_is_detected_on_its_own() {
    // Both sides speak HTTP: nothing to say.
    let flow = check(&AppConfig::default(), (40000, 8080), &http_exchange());
    assert!(detect_events(&http_exchange()).is_empty());
    assert_eq!((flow.side_proto(ToServer), flow.side_proto(ToClient)), (None, None));

    // An HTTP request answered by an SSH banner: the flow stays HTTP, its
    // answering side is recorded as SSH, and the mismatch is raised once.
    let segs = [c2s("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), s2c("SSH-2.0-OpenSSH_8.0\r\n"), Seg::Close(ToClient)];
    let flow = check_outcome((40000, 8080), &segs);
    assert_eq!(flow.proto(), HTTP);
    assert_eq!(flow.side_proto(ToClient).map(AppProto::name), Some("ssh"));
    assert_eq!(detect_events(&segs), ["applayer_mismatch_protocol_both_directions"]);

    // A TLS hello answered by bytes no protocol has: only one direction.
    let hello = tls12_flights()[0].1.clone();
    let segs = [c2s(&hello), s2c(b"\x00\x07not a protocol at all\r\n"), Seg::Close(ToClient)];
    let flow = check_outcome((40000, 8443), &segs);
    assert_eq!(flow.proto(), TLS);
    assert_eq!(flow.side_proto(ToClient), Some(AppProto::Failed));
    assert_eq!(detect_events(&segs), ["applayer_detect_protocol_only_one_direction"]);

    // A side that never speaks is not judged.
    let segs = [c2s("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), Seg::Close(ToClient), Seg::Close(ToServer)];
    let flow = check(&AppConfig::default(), (40000, 8080), &segs);
    assert!(detect_events(&segs).is_empty());
    assert_eq!(flow.side_proto(ToClient), None);
}
