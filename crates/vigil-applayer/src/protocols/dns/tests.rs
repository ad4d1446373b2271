//! DNS fixtures built with a tiny message builder, each annotated with what it exercises.

use serde_json::json;
use vigil_types::Direction::{self, ToClient, ToServer};

use super::name::{parse_name, MAX_NAME_LEN};
use super::*;
use crate::parser::ParseResult;

/// Builds a message byte by byte; names are written uncompressed unless given raw.
pub(crate) struct Msg(Vec<u8>);

impl Msg {
    /// Header: id, flags, then QD/AN/NS/AR counts.
    fn new(id: u16, flags: u16, counts: [u16; 4]) -> Self {
        let mut b = Vec::new();
        b.extend(id.to_be_bytes());
        b.extend(flags.to_be_bytes());
        for c in counts {
            b.extend(c.to_be_bytes());
        }
        Msg(b)
    }

    fn raw(mut self, bytes: &[u8]) -> Self {
        self.0.extend_from_slice(bytes);
        self
    }

    /// A question: name, type, class IN.
    fn q(self, name: &str, rrtype: u16) -> Self {
        self.qraw(&labels(name), rrtype)
    }

    fn qraw(self, name: &[u8], rrtype: u16) -> Self {
        self.raw(name).raw(&rrtype.to_be_bytes()).raw(&[0, 1])
    }

    /// A record with a raw (possibly compressed) owner name, class IN.
    fn rr(self, name: &[u8], rrtype: u16, ttl: u32, rdata: &[u8]) -> Self {
        let len = u16::try_from(rdata.len()).unwrap();
        self.raw(name)
            .raw(&rrtype.to_be_bytes())
            .raw(&[0, 1])
            .raw(&ttl.to_be_bytes())
            .raw(&len.to_be_bytes())
            .raw(rdata)
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        &self.0
    }

    /// With the TCP 2-byte length prefix.
    pub(crate) fn framed(&self) -> Vec<u8> {
        let mut v = u16::try_from(self.0.len()).unwrap().to_be_bytes().to_vec();
        v.extend_from_slice(&self.0);
        v
    }
}

/// `www.example.com` as labels ending in the root.
fn labels(name: &str) -> Vec<u8> {
    let mut v = Vec::new();
    for l in name.split('.').filter(|l| !l.is_empty()) {
        v.push(u8::try_from(l.len()).unwrap());
        v.extend_from_slice(l.as_bytes());
    }
    v.push(0);
    v
}

/// A compression pointer to `offset`.
fn ptr(offset: u16) -> [u8; 2] {
    (0xc000 | offset).to_be_bytes()
}

/// Offset of the first question name: right after the header.
const Q0: u16 = 12;

/// dig-style query: id 36146, RD, `www.suricata-ids.org` A.
pub(crate) fn query() -> Msg {
    Msg::new(36146, 0x0100, [1, 0, 0, 0]).q("www.suricata-ids.org", message::TYPE_A)
}

/// Its answer: CNAME to `suricata-ids.org` (written once, at offset 50, then pointed to), two A.
pub(crate) fn answer() -> Msg {
    let m = Msg::new(36146, 0x81a0, [1, 3, 0, 0]).q("www.suricata-ids.org", message::TYPE_A);
    // CNAME rdata is `suricata-ids.org` = pointer into the question, after "www".
    let cname = ptr(Q0 + 4);
    m.rr(&ptr(Q0), message::TYPE_CNAME, 3544, &cname).rr(&ptr(Q0 + 4), message::TYPE_A, 244, &[192, 0, 78, 24]).rr(
        &ptr(Q0 + 4),
        message::TYPE_A,
        244,
        &[192, 0, 78, 25],
    )
}

fn udp(msgs: &[(Direction, &[u8])]) -> DnsParser {
    let mut p = DnsParser::udp();
    for (dir, m) in msgs {
        p.parse(*dir, m);
    }
    p
}

fn event_names(p: &mut DnsParser) -> Vec<&'static str> {
    p.take_events().into_iter().map(|e| e.name).collect()
}

#[test]
fn udp_query_and_answer_are_two_transactions() {
    let mut p = DnsParser::udp();
    assert_eq!(p.parse(ToServer, query().bytes()), ParseResult::Done);
    assert_eq!(p.parse(ToClient, answer().bytes()), ParseResult::Done);
    let txs = p.txs();
    assert_eq!(txs.len(), 2);
    let (q, a) = (&txs[0], &txs[1]);
    assert_eq!((q.id(), a.id()), (0, 1));
    assert!(!q.is_response() && a.is_response());
    assert_eq!(q.buffer(Buffer::Query, 0), Some(&b"www.suricata-ids.org"[..]));
    assert_eq!(q.buffer(Buffer::Query, 1), None);
    assert_eq!(a.buffer(Buffer::Query, 0), Some(&b"www.suricata-ids.org"[..]));
    assert_eq!(a.buffer(Buffer::AnswerName, 0), Some(&b"www.suricata-ids.org"[..]));
    assert_eq!(a.buffer(Buffer::AnswerName, 1), Some(&b"suricata-ids.org"[..]));
    assert_eq!(a.buffer(Buffer::AnswerName, 3), None);
    assert!(q.complete(ToServer) && q.complete(ToClient));
    assert_eq!(a.rrtypes().collect::<Vec<_>>(), vec![1]);
    assert_eq!((a.opcode(), a.rcode(), a.dns_id()), (0, 0, 36146));
    assert!(a.qr() && a.rd() && a.ra() && !a.aa() && !a.tc() && !a.z());
    assert_eq!(a.response_rrname(1), Some(&b"www.suricata-ids.org"[..]));
    assert_eq!(a.response_rrname(2), Some(&b"suricata-ids.org"[..]));
    assert!(p.take_events().is_empty());
}

#[test]
fn eve_request_matches_suricata() {
    let p = udp(&[(ToServer, query().bytes())]);
    let v = serde_json::to_value(p.txs()[0].eve()).unwrap();
    assert_eq!(
        v,
        json!({
            "version": 3, "type": "request", "tx_id": 0, "id": 36146, "flags": "100", "rd": true,
            "opcode": 0, "rcode": "NOERROR",
            "queries": [{"rrname": "www.suricata-ids.org", "rrtype": "A"}]
        })
    );
}

#[test]
fn eve_response_matches_suricata() {
    // The values of suricata-verify's dns-udp-eve-dig expectations.
    let p = udp(&[(ToServer, query().bytes()), (ToClient, answer().bytes())]);
    let v = serde_json::to_value(p.txs()[1].eve()).unwrap();
    assert_eq!(
        v,
        json!({
            "version": 3, "type": "response", "tx_id": 1, "id": 36146, "flags": "81a0",
            "qr": true, "rd": true, "ra": true, "opcode": 0, "rcode": "NOERROR",
            "queries": [{"rrname": "www.suricata-ids.org", "rrtype": "A"}],
            "answers": [
                {"rrname": "www.suricata-ids.org", "rrtype": "CNAME", "ttl": 3544, "rdata": "suricata-ids.org"},
                {"rrname": "suricata-ids.org", "rrtype": "A", "ttl": 244, "rdata": "192.0.78.24"},
                {"rrname": "suricata-ids.org", "rrtype": "A", "ttl": 244, "rdata": "192.0.78.25"}
            ],
            "grouped": {"A": ["192.0.78.24", "192.0.78.25"], "CNAME": ["suricata-ids.org"]}
        })
    );
    let alert = serde_json::to_value(p.txs()[1].eve_with(false)).unwrap();
    assert!(alert.get("grouped").is_none());
}

#[test]
fn nxdomain_soa_authority() {
    // NXDOMAIN for dne.oisf.net with the zone's SOA in the authority section.
    let mut soa = labels("ns-110.awsdns-13.com");
    soa.extend(labels("awsdns-hostmaster.amazon.com"));
    for v in [1u32, 7200, 900, 1_209_600, 86400] {
        soa.extend(v.to_be_bytes());
    }
    let m = Msg::new(7, 0x8183, [1, 0, 1, 0]).q("dne.oisf.net", 1).rr(&ptr(Q0 + 4), message::TYPE_SOA, 899, &soa);
    let p = udp(&[(ToClient, m.bytes())]);
    let tx = &p.txs()[0];
    assert_eq!(tx.rcode(), 3);
    let v = serde_json::to_value(tx.eve()).unwrap();
    assert_eq!(v["rcode"], "NXDOMAIN");
    assert!(v.get("answers").is_none() && v.get("grouped").is_none());
    assert_eq!(
        v["authorities"][0],
        json!({"rrname": "oisf.net", "rrtype": "SOA", "ttl": 899, "soa": {
            "mname": "ns-110.awsdns-13.com", "rname": "awsdns-hostmaster.amazon.com",
            "serial": 1, "refresh": 7200, "retry": 900, "expire": 1209600, "minimum": 86400}})
    );
    assert_eq!(tx.response_rrname(2), Some(&b"ns-110.awsdns-13.com"[..]));
}

#[test]
fn record_types_decode_and_log() {
    let n = ptr(Q0);
    let mut srv = vec![0, 20, 0, 1, 0x13, 0xc4];
    srv.extend(labels("sip-anycast-2.voice.google.com"));
    let mut mx = vec![0, 10];
    mx.extend(labels("mail.example.com"));
    let sshfp = [1u8, 1, 0x19, 0x8c, 0x34, 0xa9];
    let aaaa = [0x2a, 0x00, 0x14, 0x50, 0x40, 0x01, 0x08, 0x14, 0, 0, 0, 0, 0, 0, 0x20, 0x0e];
    let m = Msg::new(1, 0x8180, [1, 8, 0, 1])
        .q("example.com", 255)
        .rr(&n, message::TYPE_SRV, 60, &srv)
        .rr(&n, message::TYPE_MX, 60, &mx)
        // Two character-strings: Suricata logs one record per string.
        .rr(&n, message::TYPE_TXT, 60, b"\x06v=spf1\x04~all")
        .rr(&n, message::TYPE_SSHFP, 60, &sshfp)
        .rr(&n, message::TYPE_AAAA, 60, &aaaa)
        .rr(&n, message::TYPE_NULL, 60, b"abc")
        .rr(&n, message::TYPE_HINFO, 60, b"\x03x86\x05Linux")
        .rr(&n, 99 /* SPF, kept raw */, 60, b"\x01z")
        // OPT: root owner, UDP size 4096 in the class, one cookie option.
        .raw(&[0, 0, 41, 0x10, 0, 0, 0, 0, 0, 0, 12, 0, 10, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8]);
    let p = udp(&[(ToClient, m.bytes())]);
    let tx = &p.txs()[0];
    let msg = tx.message();
    assert_eq!(msg.answers.len(), 9);
    assert_eq!(msg.answers[7].rdata, RData::Hinfo { cpu: b"x86".to_vec(), os: b"Linux".to_vec() });
    assert_eq!(msg.answers[8].rdata, RData::Unknown(b"\x01z".to_vec()));
    let v = serde_json::to_value(tx.eve()).unwrap();
    let a = &v["answers"];
    assert_eq!(
        a[0]["srv"],
        json!({"priority": 20, "weight": 1, "port": 5060, "name": "sip-anycast-2.voice.google.com"})
    );
    assert_eq!(a[1]["rdata"], "mail.example.com");
    assert_eq!((a[2]["rdata"].as_str(), a[3]["rdata"].as_str()), (Some("v=spf1"), Some("~all")));
    assert_eq!(a[4]["sshfp"], json!({"fingerprint": "19:8c:34:a9", "algo": 1, "type": 1}));
    assert_eq!(a[5]["rdata"], "2a00:1450:4001:0814:0000:0000:0000:200e");
    assert_eq!(a[6]["rdata"], "abc");
    assert!(a[7].get("rdata").is_none());
    assert_eq!(a[8]["rrtype"], "SPF");
    assert_eq!(v["grouped"]["TXT"], json!(["v=spf1", "~all"]));
    assert_eq!(v["grouped"]["SSHFP"][0]["algo"], 1);
    assert!(v["grouped"].get("HINFO").is_none());
    assert_eq!(
        v["additionals"],
        json!([{"rrname": "", "rrtype": "OPT", "ttl": 0, "opt": [{"code": 10, "data": "0102030405060708"}]}])
    );
    assert_eq!(v["queries"][0]["rrtype"], "ANY");
}

#[test]
fn forward_pointer_is_accepted() {
    // Question 0 points forward to question 1's name, as in suricata-verify's
    // dns-forward-pointer case.
    let second = Q0 + 2 + 4;
    let m = Msg::new(36356, 0x0100, [2, 0, 0, 0]).qraw(&ptr(second), 1).q("codemonkey.net", 1);
    let mut p = udp(&[(ToServer, m.bytes())]);
    let tx = &p.txs()[0];
    assert_eq!(tx.query_name(0), Some(&b"codemonkey.net"[..]));
    assert_eq!(tx.query_name(1), Some(&b"codemonkey.net"[..]));
    assert!(event_names(&mut p).is_empty());
}

#[test]
fn pointer_loops_are_bounded() {
    // Self pointer: the question name points at itself.
    let m = Msg::new(1, 0, [1, 0, 0, 0]).qraw(&ptr(Q0), 1);
    let mut p = udp(&[(ToServer, m.bytes())]);
    assert_eq!(event_names(&mut p), vec![EVENT_INFINITE_LOOP]);
    assert_eq!(p.txs()[0].message().questions[0].rrtype, 1);

    // Two labels pointing at each other: "a" -> "b" -> "a" ...
    let m = Msg::new(1, 0, [1, 0, 0, 0]).qraw(&[1, b'a', 0xc0, 16, 1, b'b', 0xc0, 12], 1);
    let name = parse_name(m.bytes(), 12, m.bytes().len()).unwrap().0;
    assert!(name.flags.infinite_loop);
    assert!(name.value.starts_with(b"a.b.a.b"));
    let mut p = udp(&[(ToServer, m.bytes())]);
    assert_eq!(event_names(&mut p), vec![EVENT_INFINITE_LOOP]);
    assert_eq!(p.txs().len(), 1);
}

#[test]
fn too_many_labels_and_too_long_names() {
    // 300 one-letter labels, uncompressed: the name is cut, the question still decodes.
    let long: String = vec!["x"; 300].join(".");
    let m = Msg::new(1, 0, [1, 0, 0, 0]).q(&long, 16);
    let mut p = udp(&[(ToServer, m.bytes())]);
    assert_eq!(event_names(&mut p), vec![EVENT_TOO_MANY_LABELS]);
    let q = &p.txs()[0].message().questions[0];
    assert_eq!((q.rrtype, q.name.value.len()), (16, 255 * 2 - 1));

    // Twenty 63-byte labels: 1279 bytes decoded, kept to MAX_NAME_LEN.
    let label = "y".repeat(63);
    let long = vec![label.as_str(); 20].join(".");
    let m = Msg::new(1, 0, [1, 0, 0, 0]).q(&long, 1);
    let mut p = udp(&[(ToServer, m.bytes())]);
    assert_eq!(event_names(&mut p), vec![EVENT_NAME_TOO_LONG]);
    let tx = &p.txs()[0];
    assert_eq!(tx.query_name(0).unwrap().len(), MAX_NAME_LEN);
    assert_eq!(serde_json::to_value(tx.eve()).unwrap()["queries"][0]["rrname_truncated"], true);
}

#[test]
fn truncated_messages_are_malformed() {
    let full = answer();
    for cut in 12..full.bytes().len() {
        let mut p = DnsParser::udp();
        let r = p.parse(ToClient, &full.bytes()[..cut]);
        // Either the cut falls where counts no longer fit (not DNS), or it is malformed.
        match r {
            ParseResult::Error => assert_eq!(event_names(&mut p), vec![EVENT_MALFORMED_DATA]),
            ParseResult::Done => assert!(p.txs().is_empty() && p.take_events().is_empty()),
            ParseResult::Incomplete { .. } => panic!("UDP never returns Incomplete"),
        }
        assert!(p.txs().is_empty());
    }
}

#[test]
fn impossible_counts_are_not_dns() {
    // 65535 questions in a 29-byte message: UDP skips it silently, TCP gives up.
    let m = Msg::new(1, 0, [0xffff, 0xffff, 0xffff, 0xffff]).q("a.b", 1);
    let mut p = DnsParser::udp();
    assert_eq!(p.parse(ToServer, m.bytes()), ParseResult::Done);
    assert!(p.txs().is_empty() && p.take_events().is_empty());
    assert_eq!(probe_udp(m.bytes()), DnsProbe::NotDns);
    let mut t = DnsParser::tcp();
    assert_eq!(t.parse(ToServer, &m.framed()), ParseResult::Error);
    // Counts that fit but point past the end: malformed.
    let m = Msg::new(1, 0, [3, 0, 0, 0]).q("a.b", 1);
    let mut p = DnsParser::udp();
    assert_eq!(p.parse(ToServer, m.bytes()), ParseResult::Error);
    assert_eq!(event_names(&mut p), vec![EVENT_MALFORMED_DATA]);
}

#[test]
fn header_flag_events() {
    // QR set on a to-server message: no transaction.
    let mut p = DnsParser::udp();
    assert_eq!(p.parse(ToServer, answer().bytes()), ParseResult::Error);
    assert_eq!(event_names(&mut p), vec![EVENT_NOT_REQUEST]);
    assert!(p.txs().is_empty());
    // QR clear on a to-client message: still a transaction.
    assert_eq!(p.parse(ToClient, query().bytes()), ParseResult::Done);
    assert_eq!(p.txs()[0].events(), &[EVENT_NOT_RESPONSE]);
    // Z bit and opcode 9 (as suricata-verify's dns-invalid-opcode).
    let m = Msg::new(1, 0x4840, [1, 0, 0, 0]).q("suricata.io", 1);
    assert_eq!(p.parse(ToServer, m.bytes()), ParseResult::Done);
    let tx = &p.txs()[1];
    assert_eq!(tx.opcode(), 9);
    assert_eq!(tx.events(), &[EVENT_Z_FLAG_SET, EVENT_INVALID_OPCODE]);
    assert_eq!(serde_json::to_value(tx.eve()).unwrap()["z"], true);
    let ev = p.take_events();
    assert_eq!(ev.last().map(|e| (e.name, e.tx_id)), Some((EVENT_INVALID_OPCODE, Some(1))));
}

#[test]
fn broken_authority_and_additional_sections() {
    // Answer fine, additional record runs past the end: the message stands, flagged.
    let m = answer();
    let mut bytes = m.bytes().to_vec();
    bytes[11] = 1; // ARCOUNT = 1
    bytes.extend_from_slice(&[0, 0, 1, 0, 1]); // root, A, IN, then nothing
    let mut p = udp(&[(ToClient, &bytes)]);
    assert_eq!(event_names(&mut p), vec![EVENT_INVALID_ADDITIONALS]);
    assert_eq!(p.txs()[0].message().answers.len(), 3);
    // Same for the authority section, which also drops the additionals.
    bytes[9] = 1; // NSCOUNT = 1
    let mut p = udp(&[(ToClient, &bytes)]);
    assert_eq!(event_names(&mut p), vec![EVENT_INVALID_AUTHORITIES]);
    assert!(p.txs()[0].message().additionals.is_empty());
}

#[test]
fn empty_record_data_is_skipped() {
    let m =
        Msg::new(1, 0x8180, [1, 2, 0, 0]).q("a.example", 1).rr(&ptr(Q0), 1, 5, &[]).rr(&ptr(Q0), 1, 5, &[10, 0, 0, 1]);
    let mut p = udp(&[(ToClient, m.bytes())]);
    assert!(p.take_events().is_empty());
    let answers = &p.txs()[0].message().answers;
    assert_eq!(answers.len(), 1);
    assert_eq!(answers[0].rdata, RData::A(vec![10, 0, 0, 1]));
}

/// Feeds `stream` to `dir` in chunks of the given sizes the way the flow layer does: keep what
/// was not consumed and offer it again with the next chunk.
fn feed(p: &mut DnsParser, dir: Direction, stream: &[u8], sizes: &mut dyn FnMut() -> usize) -> bool {
    let mut pending = Vec::new();
    let mut off = 0;
    while off < stream.len() {
        let n = sizes().clamp(1, stream.len() - off);
        pending.extend_from_slice(&stream[off..off + n]);
        off += n;
        match p.parse(dir, &pending) {
            ParseResult::Done => pending.clear(),
            ParseResult::Incomplete { consumed, needed } => {
                assert!(needed > 0);
                pending.drain(..consumed);
            }
            ParseResult::Error => return false,
        }
    }
    pending.is_empty()
}

/// Small deterministic generator for chunk sizes and junk.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

#[test]
fn tcp_same_transactions_for_any_chunking() {
    let to_server = [query().framed(), vec![0, 0] /* empty message */, query().framed()].concat();
    let to_client = [answer().framed(), answer().framed()].concat();
    let run = |sizes: &mut dyn FnMut() -> usize| {
        let mut p = DnsParser::tcp();
        assert!(feed(&mut p, ToServer, &to_server, sizes));
        assert!(feed(&mut p, ToClient, &to_client, sizes));
        p.txs().to_vec()
    };
    let whole = run(&mut || usize::MAX);
    assert_eq!(whole.len(), 4);
    assert_eq!(whole.iter().map(DnsTx::is_response).collect::<Vec<_>>(), vec![false, false, true, true]);
    assert_eq!(run(&mut || 1), whole);
    for seed in 1..20 {
        let mut rng = Lcg(seed);
        assert_eq!(run(&mut || (rng.next() % 40) as usize + 1), whole);
    }
}

#[test]
fn tcp_incomplete_reports_what_is_needed() {
    let mut p = DnsParser::tcp();
    let f = query().framed();
    assert_eq!(p.parse(ToServer, &f[..1]), ParseResult::Incomplete { consumed: 0, needed: 1 });
    assert_eq!(p.parse(ToServer, &f[..5]), ParseResult::Incomplete { consumed: 0, needed: f.len() - 5 });
    let two = [f.clone(), f[..3].to_vec()].concat();
    assert_eq!(p.parse(ToServer, &two), ParseResult::Incomplete { consumed: f.len(), needed: f.len() - 3 });
    assert_eq!(p.txs().len(), 1);
}

#[test]
fn tcp_gap_resyncs_on_next_message() {
    let mut p = DnsParser::tcp();
    p.on_gap(ToServer, 100);
    // The rest of a lost message: dropped, not an error.
    assert_eq!(p.parse(ToServer, b"\xff\xff\xffjunk that is not dns"), ParseResult::Done);
    assert!(p.txs().is_empty());
    assert_eq!(p.parse(ToServer, &query().framed()), ParseResult::Done);
    assert_eq!(p.txs().len(), 1);
    // UDP ignores gaps.
    let mut u = DnsParser::udp();
    u.on_gap(ToServer, 10);
    assert_eq!(u.parse(ToServer, query().bytes()), ParseResult::Done);
}

#[test]
fn held_transactions_are_bounded_and_pruned() {
    let mut p = DnsParser::udp().with_max_txs(4);
    for _ in 0..10 {
        p.parse(ToServer, query().bytes());
    }
    assert_eq!(p.txs().len(), 4);
    assert_eq!(p.dropped_txs(), 6);
    assert_eq!(p.txs()[0].id(), 6);
    p.prune(8);
    assert_eq!(p.txs().iter().map(|t| t.id()).collect::<Vec<_>>(), vec![8, 9]);
    p.prune(100);
    assert!(p.txs().is_empty());
    p.parse(ToServer, query().bytes());
    assert_eq!(p.txs()[0].id(), 10);
}

#[test]
fn probes() {
    assert_eq!(probe_udp(query().bytes()), DnsProbe::Request);
    assert_eq!(probe_udp(answer().bytes()), DnsProbe::Response);
    assert_eq!(probe_udp(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"), DnsProbe::NotDns);
    assert_eq!(probe_udp(&query().bytes()[..20]), DnsProbe::NotDns);
    assert_eq!(probe_udp(b"\x00\x01"), DnsProbe::NotDns);
    let f = answer().framed();
    assert_eq!(probe_tcp(&f), DnsProbe::Response);
    assert_eq!(probe_tcp(&f[..1]), DnsProbe::NeedMore);
    assert_eq!(probe_tcp(&f[..8]), DnsProbe::NeedMore);
    // Header there, rest still coming: judged on the header alone.
    assert_eq!(probe_tcp(&f[..20]), DnsProbe::Response);
    assert_eq!(probe_tcp(b"\x00\x05abcde"), DnsProbe::NotDns);
    assert_eq!(probe_tcp(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\x00\x00\x00\x00\x00"), DnsProbe::NotDns);
}

#[test]
fn json_strings_escape_like_suricata() {
    assert_eq!(json_string(b"plain"), "plain");
    assert_eq!(json_string("h\u{e9}".as_bytes()), "h\u{e9}");
    assert_eq!(json_string(b"a\xffb\x01"), "a\\xffb\u{1}");
    assert_eq!(address(&[1, 2, 3]), "");
    assert_eq!(rrtype_name(4242), "4242");
    assert_eq!(rcode_name(15), "15");
}

#[test]
fn random_input_never_panics() {
    let mut rng = Lcg(7);
    let base = answer().bytes().to_vec();
    for i in 0..3000 {
        // Half pure junk, half a valid message with a few bytes flipped.
        let data: Vec<u8> = if i % 2 == 0 {
            (0..rng.next() % 80).map(|_| rng.next() as u8).collect()
        } else {
            let mut d = base.clone();
            for _ in 0..3 {
                let at = rng.next() as usize % d.len();
                d[at] = rng.next() as u8;
            }
            d
        };
        let mut u = DnsParser::udp();
        u.parse(ToServer, &data);
        u.parse(ToClient, &data);
        let _ = probe_udp(&data);
        let _ = probe_tcp(&data);
        let mut t = DnsParser::tcp();
        t.parse(ToClient, &data);
        for tx in u.txs().iter().chain(t.txs()) {
            let _ = serde_json::to_string(&tx.eve()).unwrap();
        }
    }
}

#[test]
fn response_rrname_buffer_walks_names_and_record_data() {
    let p = udp(&[(ToServer, query().bytes()), (ToClient, answer().bytes())]);
    let a = &p.txs()[1];
    // The question, then the CNAME's owner and target, then each A owner.
    let names: Vec<_> = (0..).map_while(|i| a.buffer(Buffer::ResponseRrname, i)).collect();
    assert_eq!(
        names,
        vec![
            &b"www.suricata-ids.org"[..],
            b"www.suricata-ids.org",
            b"suricata-ids.org",
            b"suricata-ids.org",
            b"suricata-ids.org"
        ]
    );
}

#[test]
fn truncated_edns_option_invalidates_the_additionals() {
    // An OPT record whose one byte of data cannot hold an option header (seen in the wild).
    let m = Msg::new(7, 0x8180, [1, 0, 0, 1]).q("example.com", message::TYPE_A).rr(&[0], message::TYPE_OPT, 0, &[2]);
    let mut p = udp(&[(ToClient, m.bytes())]);
    assert_eq!(event_names(&mut p), vec![EVENT_INVALID_ADDITIONALS]);
    assert!(p.txs()[0].message().additionals.is_empty());
    // A whole option still decodes.
    let m = Msg::new(7, 0x8180, [1, 0, 0, 1]).q("example.com", message::TYPE_A).rr(
        &[0],
        message::TYPE_OPT,
        0,
        &[0, 10, 0, 2, 0xab, 0xcd],
    );
    let mut p = udp(&[(ToClient, m.bytes())]);
    assert!(event_names(&mut p).is_empty());
    assert_eq!(p.txs()[0].message().additionals.len(), 1);
}

#[test]
fn version2_records() {
    // Z set on the query: it is logged on each query record.
    let two = Msg::new(5, 0x0140, [2, 0, 0, 0]).q("a.example", message::TYPE_A).q("b.example", message::TYPE_AAAA);
    let p = udp(&[(ToServer, two.bytes()), (ToClient, answer().bytes())]);
    let queries: Vec<_> = p.txs()[0].eve_v2().iter().map(|r| serde_json::to_value(r).unwrap()).collect();
    assert_eq!(
        queries,
        vec![
            json!({"version": 2, "type": "query", "id": 5, "rrname": "a.example", "rrtype": "A", "tx_id": 0,
                   "z": true, "opcode": 0}),
            json!({"version": 2, "type": "query", "id": 5, "rrname": "b.example", "rrtype": "AAAA", "tx_id": 0,
                   "z": true, "opcode": 0}),
        ]
    );
    let answers = p.txs()[1].eve_v2();
    assert_eq!(answers.len(), 1);
    let v = serde_json::to_value(&answers[0]).unwrap();
    assert_eq!(v["type"], "answer");
    assert_eq!(v["version"], 2);
    assert_eq!(v["flags"], "81a0");
    assert_eq!(v["rrname"], "www.suricata-ids.org");
    assert_eq!(v["rrtype"], "A");
    assert_eq!(v["rcode"], "NOERROR");
    assert_eq!(v["answers"][0]["rdata"], "suricata-ids.org");
    assert_eq!(v["grouped"]["A"], json!(["192.0.78.24", "192.0.78.25"]));
    assert!(v.get("tx_id").is_none());
    // A request without questions has no query record.
    let empty = Msg::new(6, 0x0100, [0, 0, 0, 0]);
    assert!(udp(&[(ToServer, empty.bytes())]).txs()[0].eve_v2().is_empty());
}

#[test]
fn a_message_over_tcp_has_its_side_inspected_at_once() {
    use crate::proto::ProtoParser;
    let mut p = DnsParser::tcp();
    let framed = query().framed();
    // Half a message asks nothing; the whole one asks once, for its side.
    assert!(matches!(ProtoParser::parse(&mut p, ToServer, &framed[..5]), ParseResult::Incomplete { .. }));
    assert!(!p.take_raw_trigger(ToServer));
    assert_eq!(ProtoParser::parse(&mut p, ToServer, &framed), ParseResult::Done);
    assert!(p.take_raw_trigger(ToServer));
    assert!(!p.take_raw_trigger(ToServer) && !p.take_raw_trigger(ToClient));
}
