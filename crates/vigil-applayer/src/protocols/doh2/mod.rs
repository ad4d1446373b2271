//! DNS over HTTPS on HTTP/2 (RFC 8484) as Suricata's `doh2`: not probed,
//! but the name an HTTP/2 flow goes by once one of its streams carried a
//! DNS message (a request's `dns` query variable, or a body whose content
//! type is `application/dns-message`); the HTTP/2 parser reads on.
//!
//! Rules written for `doh2`, `http2`, `http` and `dns` all run on such a
//! flow: DNS rules on the streams' messages (each side its own), and a
//! `doh2` rule may mix HTTP and DNS keywords. A stream that carried DNS is
//! a `dns` record (the response's message, else the request's) with the
//! stream's `http` object beside it; the flow's other transactions are
//! `http` records. Both are written where the output lists `doh2`, as
//! Suricata's do. A DNS message longer than 65,535 bytes is not kept
//! (`http2.dns_request_too_long`, `http2.dns_response_too_long`).

use vigil_types::Direction;

use crate::proto::{Detection, Probe, ProbeCx, ProtoDef};
use crate::protocols::http2::frame;

fn probe(_dir: Direction, _data: &[u8], _cx: ProbeCx) -> Probe {
    Probe::NoMatch
}

/// A GET for example.com's address (its message in the `dns` variable),
/// answered with `application/dns-message`.
fn sample() -> Vec<(Direction, Vec<u8>)> {
    let frame = |kind: u8, flags: u8, stream: u32, payload: &[u8]| {
        let mut f = (payload.len() as u32).to_be_bytes()[1..].to_vec();
        f.extend_from_slice(&[kind, flags]);
        f.extend_from_slice(&stream.to_be_bytes());
        f.extend_from_slice(payload);
        f
    };
    // :method GET, :scheme http, then literal :path (indexed name 4) and content-type.
    let path = b"/dns-query?dns=AAABAAABAAAAAAAAB2V4YW1wbGUDY29tAAABAAE";
    let mut block = vec![0x82, 0x86, 0x04, path.len() as u8];
    block.extend_from_slice(path);
    let mut client = frame::PREFACE.to_vec();
    client.extend(frame(frame::SETTINGS, 0, 0, &[]));
    client.extend(frame(frame::HEADERS, frame::FLAG_END_HEADERS | frame::FLAG_END_STREAM, 1, &block));
    // :status 200, then literal content-type (indexed name 31).
    let ctype = b"application/dns-message";
    let mut block = vec![0x88, 0x0f, 0x10, ctype.len() as u8];
    block.extend_from_slice(ctype);
    let mut answer = b"\x00\x00\x81\x80\x00\x01\x00\x01\x00\x00\x00\x00\x07example\x03com\x00\x00\x01\x00\x01".to_vec();
    answer.extend_from_slice(b"\xc0\x0c\x00\x01\x00\x01\x00\x00\x00\x3c\x00\x04\xc6\x12\x00\x01");
    let mut server = frame(frame::SETTINGS, 0, 0, &[]);
    server.extend(frame(frame::HEADERS, frame::FLAG_END_HEADERS, 1, &block));
    server.extend(frame(frame::DATA, frame::FLAG_END_STREAM, 1, &answer));
    vec![(Direction::ToServer, client), (Direction::ToClient, server)]
}

pub static PROTO: ProtoDef = ProtoDef {
    name: "doh2",
    eve_name: Some("http"),
    detection: Detection { tcp: true, udp: false, ports: &[], ports_only: true, probe, counters_by_transport: false, answers_first: None },
    new_parser: super::http2::PROTO.new_parser,
    buffers: &[],
    checks: &[],
    events: &[],
    event: crate::proto::no_other_events,
    options: &[],
    settings: super::http2::SETTINGS,
    sample,
    sample_expected: None,
    files: true,
    transactions: true,
    aliases: &[],
    includes: &["http2", "http", "dns"],
    borrows: &[],
    base_need: crate::proto::HEADERS_BOTH,
    hooks: crate::proto::Hooks::GENERIC,
    off_by_default: false,
    stream_depth: None,
    frames: &[],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{AppConfig, Transport};
    use crate::proto::{kit, ParserInit, ProtoParser};

    fn parser(app: &AppConfig) -> Box<dyn ProtoParser> {
        (PROTO.new_parser)(&ParserInit {
            app,
            transport: Transport::Tcp,
            first_tx_id: 0,
            options: 0,
            settings: &[],
            expected: None,
            client: None,
        })
    }

    #[test]
    fn a_stream_that_carried_dns_renames_the_flow_and_is_a_dns_record() {
        let app = AppConfig::default();
        let mut p = parser(&app);
        let conv = sample();
        kit::feed(&mut *p, conv[0].0, &conv[0].1, 1000);
        // The request's `dns` variable was enough.
        assert_eq!(p.renamed(), Some("doh2"));
        kit::feed(&mut *p, conv[1].0, &conv[1].1, 1000);
        let t = (0..p.tx_count()).filter_map(|i| p.tx(i)).find(|t| t.record_type().is_some()).unwrap();
        assert_eq!(t.record_type(), Some("dns"));
        let rec = t.eve();
        assert_eq!((rec["type"].as_str(), rec["answers"][0]["rdata"].as_str()), (Some("response"), Some("198.18.0.1")));
        let http = t.eve_siblings(Default::default());
        assert_eq!(http[0].0, "http");
        assert_eq!(http[0].1["http2"]["stream_id"], 1);
        // DNS rules read each side's message.
        let dns = t.carried("dns").unwrap();
        let query = crate::protocols::dns::Buffer::Query as u8;
        assert_eq!(dns.buffer(Direction::ToServer, query, 0), Some(&b"example.com"[..]));
        assert!(t.carried("http").is_some() && t.carried("tls").is_none());
    }

    #[test]
    fn without_doh2_enabled_nothing_is_looked_for() {
        let mut app = AppConfig::default();
        app.table_enabled &= !(1 << crate::proto::index("doh2").unwrap());
        let mut p = parser(&app);
        for (dir, data) in sample() {
            kit::feed(&mut *p, dir, &data, 7);
        }
        assert_eq!(p.renamed(), None);
        assert!((0..p.tx_count()).filter_map(|i| p.tx(i)).all(|t| t.record_type().is_none()));
    }

    #[test]
    fn a_flow_keeps_so_many_dns_bodies_at_once() {
        let app = AppConfig::default();
        let mut p = parser(&app);
        let ctype = b"application/dns-message";
        // :method POST, :path /, literal content-type (indexed name 31), no END_STREAM.
        let mut block = vec![0x83, 0x84, 0x0f, 0x10, ctype.len() as u8];
        block.extend_from_slice(ctype);
        let mut client = frame::PREFACE.to_vec();
        for stream in (1u32..).step_by(2).take(20) {
            let mut f = (block.len() as u32).to_be_bytes()[1..].to_vec();
            f.extend_from_slice(&[frame::HEADERS, frame::FLAG_END_HEADERS]);
            f.extend_from_slice(&stream.to_be_bytes());
            f.extend_from_slice(&block);
            client.extend(f);
        }
        kit::feed(&mut *p, Direction::ToServer, &client, 4096);
        let mut ev = Vec::new();
        p.drain_events(&mut ev);
        let limited = ev.iter().filter(|e| e.name == "http2.reassembly_limit_reached").count();
        assert_eq!(limited, 4, "16 of the 20 bodies are kept as DNS: {ev:?}");
    }

    #[test]
    fn a_body_longer_than_a_dns_message_is_not_kept_and_says_so() {
        let app = AppConfig::default();
        let mut p = parser(&app);
        let frame = |kind: u8, flags: u8, payload: &[u8]| {
            let mut f = (payload.len() as u32).to_be_bytes()[1..].to_vec();
            f.extend_from_slice(&[kind, flags, 0, 0, 0, 1]);
            f.extend_from_slice(payload);
            f
        };
        // :method POST, :path /, then literal content-type application/dns-message.
        let ctype = b"application/dns-message";
        let mut block = vec![0x83, 0x84, 0x0f, 0x10, ctype.len() as u8];
        block.extend_from_slice(ctype);
        let mut client = frame::PREFACE.to_vec();
        client.extend(frame(frame::HEADERS, frame::FLAG_END_HEADERS, &block));
        for _ in 0..5 {
            client.extend(frame(frame::DATA, 0, &[0u8; 16_000]));
        }
        client.extend(frame(frame::DATA, frame::FLAG_END_STREAM, &[]));
        kit::feed(&mut *p, Direction::ToServer, &client, 1500);
        let mut ev = Vec::new();
        p.drain_events(&mut ev);
        let names: Vec<_> = ev.iter().map(|e| e.name).collect();
        assert_eq!(names, ["http2.dns_request_too_long"]);
        assert_eq!(p.renamed(), None);
    }
}
