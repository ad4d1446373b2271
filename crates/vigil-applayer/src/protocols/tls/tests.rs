//! TLS fixtures built by hand: records, hellos and a self-made certificate (assembled as DER
//! below; x509-parser does not check signatures, so the signature is a placeholder).

use serde_json::json;
use vigil_types::Direction::{self, ToClient, ToServer};

use super::cert::format_time;
use super::sample::*;
use super::*;
use crate::parser::ParseResult;

// ---- driving the parser like the flow layer ----

/// Feeds `stream` in chunks, keeping unconsumed bytes like the flow layer; returns the last
/// result.
fn feed(p: &mut TlsParser, dir: Direction, stream: &[u8], sizes: &mut dyn FnMut() -> usize) -> ParseResult {
    let mut pending: Vec<u8> = Vec::new();
    let mut off = 0;
    let mut last = ParseResult::Done;
    while off < stream.len() {
        let n = sizes().clamp(1, stream.len() - off);
        pending.extend_from_slice(&stream[off..off + n]);
        off += n;
        last = p.parse(dir, &pending);
        match last {
            ParseResult::Done => pending.clear(),
            ParseResult::Incomplete { consumed, needed } => {
                assert!(needed > 0);
                pending.drain(..consumed);
            }
            ParseResult::Error => return last,
        }
    }
    last
}

struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

fn run_flights(flights: &[(Direction, Vec<u8>)], sizes: &mut dyn FnMut() -> usize) -> TlsParser {
    let mut p = TlsParser::new();
    for (dir, bytes) in flights {
        assert_eq!(feed(&mut p, *dir, bytes, sizes), ParseResult::Done);
    }
    p
}

// ---- tests ----

#[test]
fn tls12_handshake_fields_and_buffers() {
    let flights = tls12_flights();
    let mut p = TlsParser::new();
    assert_eq!(p.parse(ToServer, &flights[0].1), ParseResult::Done);
    {
        let tx = &p.txs()[0];
        assert!(tx.complete(ToServer) && !tx.complete(ToClient));
        assert_eq!(tx.sni(), Some(&b"example.com"[..]));
        assert_eq!(tx.client_version(), Some(0x0303));
    }
    assert_eq!(p.parse(ToClient, &flights[1].1), ParseResult::Done);
    assert!(!p.encrypted());
    let tx = &p.txs()[0];
    assert!(tx.complete(ToClient));
    assert_eq!(tx.version_name(), "TLS 1.2");
    assert_eq!(tx.buffer(Buffer::Sni, 0), Some(&b"example.com"[..]));
    assert_eq!(tx.buffer(Buffer::Sni, 1), None);
    assert_eq!(tx.buffer(Buffer::Ja3String, 0), Some(&b"771,49199-47,0-16-10-11,23,0"[..]));
    assert_eq!(tx.buffer(Buffer::Ja3sString, 0), Some(&b"771,49199,65281-0-11-16-23"[..]));
    // The JA3S hash suricata-verify's tls-ja3s case expects for that string.
    assert_eq!(tx.buffer(Buffer::Ja3sHash, 0), Some(&b"5d79edf64e03689ff559a54e9d9487bc"[..]));
    assert_eq!(tx.buffer(Buffer::Alpn, 1), Some(&b"http/1.1"[..]));
    assert_eq!(tx.buffer_dir(ToClient, Buffer::Alpn, 0), Some(&b"h2"[..]));
    assert_eq!(tx.buffer(Buffer::Certs, 0), Some(server_cert().as_slice()));
    assert_eq!(tx.buffer(Buffer::Certs, 1), Some(ca_cert().as_slice()));
    assert_eq!(tx.buffer(Buffer::Certs, 2), None);
    assert_eq!(tx.buffer(Buffer::CertSubject, 0), Some(&b"C=US, O=Example, CN=example.com"[..]));
    assert_eq!(tx.buffer(Buffer::CertIssuer, 0), Some(&b"C=FR, ST=IDF, O=Stamus, CN=SELKS"[..]));
    assert_eq!(tx.buffer(Buffer::CertSerial, 0), Some(&b"00:C7:D4:28"[..]));
    let fp = std::str::from_utf8(tx.buffer(Buffer::CertFingerprint, 0).unwrap()).unwrap();
    assert_eq!(fp, cert::fingerprint(&server_cert()));
    assert_eq!(fp.len(), 59);
    assert!(fp.bytes().all(|b| b == b':' || b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
    assert_eq!(tx.buffer_dir(ToServer, Buffer::CertSubject, 0), None);
    let c = tx.server_cert().unwrap();
    assert_eq!(c.sans, vec!["example.com", "www.example.com", "10.0.0.1"]);
    assert_eq!(tx.cert_validity(), Some((1_475_280_000, 1_790_812_800)));
    assert!(tx.cert_valid(1_600_000_000) && !tx.cert_expired(1_600_000_000));
    assert!(tx.cert_expired(1_800_000_000) && !tx.cert_valid(1_800_000_000));

    assert_eq!(p.parse(ToServer, &flights[2].1), ParseResult::Done);
    assert!(!p.encrypted());
    assert_eq!(p.parse(ToClient, &flights[3].1), ParseResult::Done);
    assert!(p.encrypted());
    assert!(!p.txs()[0].session_resumed());
    // Anything after: no look.
    assert_eq!(p.parse(ToClient, b"\x01\x02 not even a record"), ParseResult::Done);
    assert!(p.take_events().is_empty());
}

#[test]
fn same_transaction_for_any_chunking() {
    let flights = tls12_flights();
    let whole = run_flights(&flights, &mut || usize::MAX);
    let bytewise = run_flights(&flights, &mut || 1);
    assert_eq!(bytewise.tx(), whole.tx());
    assert!(bytewise.encrypted());
    for seed in 1..15 {
        let mut rng = Lcg(seed);
        let p = run_flights(&flights, &mut || (rng.next() % 90) as usize + 1);
        assert_eq!(p.tx(), whole.tx());
    }
}

#[test]
fn eve_record() {
    let p = run_flights(&tls12_flights(), &mut || usize::MAX);
    let v = serde_json::to_value(p.txs()[0].eve()).unwrap();
    assert_eq!(
        v,
        json!({
            "subject": "C=US, O=Example, CN=example.com",
            "issuerdn": "C=FR, ST=IDF, O=Stamus, CN=SELKS",
            "serial": "00:C7:D4:28",
            "fingerprint": cert::fingerprint(&server_cert()),
            "notbefore": "2016-10-01T00:00:00",
            "notafter": "2026-10-01T00:00:00",
            "subjectaltname": ["example.com", "www.example.com", "10.0.0.1"],
            "sni": "example.com",
            "version": "TLS 1.2",
            "ja3": {"hash": ja3::ja3(p.tx().client_hello().unwrap()).hash, "string": "771,49199-47,0-16-10-11,23,0"},
            "ja3s": {"hash": "5d79edf64e03689ff559a54e9d9487bc", "string": "771,49199,65281-0-11-16-23"},
            "ja4": super::ja4::ja4(p.tx().client_hello().unwrap(), super::ja4::Transport::Tcp),
            "client_alpns": ["h2", "http/1.1"],
            "server_alpns": ["h2"]
        })
    );
    let full = serde_json::to_value(p.txs()[0].eve_with(TlsEveOptions::default().with(
        TlsEveOptions::CERTIFICATE
            | TlsEveOptions::CHAIN
            | TlsEveOptions::CLIENT_CERTIFICATE
            | TlsEveOptions::CLIENT_CHAIN
            | TlsEveOptions::CLIENT_HANDSHAKE
            | TlsEveOptions::SERVER_HANDSHAKE,
    )))
    .unwrap();
    assert_eq!(full["chain"].as_array().unwrap().len(), 2);
    assert_eq!(full["certificate"], full["chain"][0]);
    assert_eq!(
        full["client_handshake"],
        json!({"version": "TLS 1.2", "ciphers": [49199, 47], "exts": [0, 16, 10, 11]})
    );
    assert_eq!(
        full["server_handshake"],
        json!({"version": "TLS 1.2", "cipher": 49199, "exts": [65281, 0, 11, 16, 23]})
    );
    // Before anything: only the version placeholder.
    assert_eq!(serde_json::to_value(TlsParser::new().tx().eve()).unwrap(), json!({"version": "UNDETERMINED"}));
}

#[test]
fn ja3_skips_grease() {
    let mut p = TlsParser::new();
    assert_eq!(p.parse(ToServer, &record(22, 1, &hs(1, &draft28_hello()))), ParseResult::Done);
    let j = p.txs()[0].ja3().unwrap();
    // Suricata-verify's tls13-draft28 expectation.
    assert_eq!(j.string, "771,4866-4867-4865-4868-49196-52393-49325-49162-49195-49324-49161-49200-52392-49172-49199-49171-157-49309-53-156-49308-47-159-52394-49311-57-158-49310-51,5-10-11-13-22-23-35-51-43-65281-0-45,23,0");
    assert_eq!(j.hash, "43202faa1c8c1760d6f7f4bd9adde4ab");
    let ch = p.txs()[0].client_hello().unwrap();
    assert_eq!(ch.supported_versions, vec![0x7f1c, 0x0303]);
    assert_eq!(ch.sig_algs, vec![0x0403, 0x0804]);
    assert!(ja3::is_grease(0xfafa) && !ja3::is_grease(0x0a0b) && !ja3::is_grease(0x1a2a));
}

#[test]
fn tls13_server_hello_starts_encryption() {
    let mut p = TlsParser::new();
    p.parse(ToServer, &record(22, 1, &hs(1, &draft28_hello())));
    let sh = server_hello(0x0303, &[5; 32], &[0x22; 32], 4865, &[(43, u16s(&[0x0304])), (51, vec![0, 29, 0, 0])]);
    let flight = [record(22, 3, &hs(2, &sh)), record(20, 3, &[1]), record(23, 3, &[0xaa; 100])].concat();
    assert_eq!(p.parse(ToClient, &flight), ParseResult::Done);
    assert!(p.encrypted());
    let tx = &p.txs()[0];
    assert_eq!(tx.version_name(), "TLS 1.3");
    assert_eq!(tx.server_version(), Some(0x0304));
    assert_eq!(tx.ja3s().unwrap().string, "771,4865,43-51");
    assert!(tx.complete(ToServer) && tx.complete(ToClient));
    assert!(!tx.session_resumed());
}

#[test]
fn tls13_hello_retry_keeps_reading() {
    let mut p = TlsParser::new();
    p.parse(ToServer, &record(22, 1, &hs(1, &draft28_hello())));
    let retry_random: [u8; 32] = [
        0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91, 0xc2, 0xa2,
        0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c,
    ];
    let hrr = server_hello(0x0303, &retry_random, &[0x22; 32], 4865, &[(43, u16s(&[0x0304]))]);
    p.parse(ToClient, &record(22, 3, &hs(2, &hrr)));
    assert!(!p.encrypted());
    // The second ClientHello is still plaintext; the first one's JA3 stays.
    let ja3_first = p.txs()[0].ja3().cloned();
    p.parse(ToServer, &record(22, 3, &hs(1, &client_hello(&[4865], &[]))));
    assert_eq!(p.txs()[0].ja3().cloned(), ja3_first);
    let sh = server_hello(0x0303, &[6; 32], &[0x22; 32], 4865, &[(43, u16s(&[0x0304]))]);
    p.parse(ToClient, &record(22, 3, &hs(2, &sh)));
    assert!(p.encrypted());
}

#[test]
fn tls13_draft14_server_hello() {
    // Draft versions before 22 carry 0x7fNN in the ServerHello, without session id or compression.
    let body = [vec![0x7f, 0x0e], vec![7; 32], u16s(&[0x1301]), exts(&[(40, vec![0, 23, 0, 0])])].concat();
    let mut p = TlsParser::new();
    assert_eq!(p.parse(ToClient, &record(22, 1, &hs(2, &body))), ParseResult::Done);
    let tx = &p.txs()[0];
    assert_eq!(tx.version_name(), "TLS 1.3 draft-<16");
    assert_eq!(tx.ja3s().unwrap().string, "32526,4865,40");
    assert!(p.dirs.to_client.encrypted);
}

#[test]
fn session_resumption() {
    let mut p = TlsParser::new();
    p.parse(ToServer, &record(22, 1, &hs(1, &client_hello(&[47], &[]))));
    let sh = server_hello(0x0303, &[1; 32], &[0x22; 32], 47, &[]);
    p.parse(ToClient, &[record(22, 3, &hs(2, &sh)), record(20, 3, &[1]), record(22, 3, &[0x42; 40])].concat());
    let tx = &p.txs()[0];
    assert!(tx.session_resumed() && tx.complete(ToClient));
    assert_eq!(serde_json::to_value(tx.eve()).unwrap()["session_resumed"], true);
}

#[test]
fn client_certificate() {
    let mut p = TlsParser::new();
    let client_cert = make_cert(
        &[7],
        &[(OID_O, "Client"), (OID_CN, "alice")],
        tlv(0x17, b"200101000000Z"),
        tlv(0x17, b"300101000000Z"),
    );
    p.parse(ToServer, &record(22, 1, &hs(1, &client_hello(&[47], &[]))));
    p.parse(ToServer, &record(22, 3, &hs(11, &certificate_msg(std::slice::from_ref(&client_cert)))));
    let tx = &p.txs()[0];
    assert_eq!(tx.buffer_dir(ToServer, Buffer::CertSubject, 0), Some(&b"O=Client, CN=alice"[..]));
    assert_eq!(tx.buffer_dir(ToServer, Buffer::Certs, 0), Some(client_cert.as_slice()));
    assert_eq!(tx.buffer(Buffer::CertSubject, 0), None);
    let v = serde_json::to_value(tx.eve()).unwrap();
    assert_eq!(v["client"]["serial"], "07");
    assert_eq!(v["client"]["notbefore"], "2020-01-01T00:00:00");
}

#[test]
fn sslv2_client_hello_then_tls_server() {
    // SSLv2 CLIENT-HELLO offering TLS 1.0: one TLS suite (00 00 2f), one SSLv2-only suite.
    let mut body = vec![1, 0x03, 0x01, 0, 6, 0, 0, 0, 16, 0x00, 0x00, 0x2f, 0x01, 0x00, 0x80];
    body.extend([0xab; 16]);
    let mut rec = vec![0x80, u8::try_from(body.len()).unwrap()];
    rec.extend(&body);
    assert_eq!(probe(&rec), TlsProbe::Tls);
    let mut p = TlsParser::new();
    assert_eq!(p.parse(ToServer, &rec), ParseResult::Done);
    let ch = p.txs()[0].client_hello().unwrap();
    assert!(ch.sslv2);
    assert_eq!((ch.version, ch.ciphers.as_slice(), ch.random.len()), (0x0301, &[0x2f][..], 16));
    assert!(p.txs()[0].complete(ToServer) && p.txs()[0].ja3().is_none());
    let sh = server_hello(0x0301, &[1; 32], &[], 0x2f, &[]);
    p.parse(ToClient, &record(22, 1, &[hs(2, &sh), hs(11, &certificate_msg(&[server_cert()]))].concat()));
    assert_eq!(p.txs()[0].version_name(), "TLSv1");
    assert_eq!(p.txs()[0].server_cert().unwrap().serial, "00:C7:D4:28");
}

#[test]
fn sslv2_server_hello_carries_certificate() {
    let cert = ca_cert();
    let mut body = vec![4, 0, 1, 0x00, 0x02];
    body.extend(u16s(&[u16::try_from(cert.len()).unwrap(), 3, 16]));
    body.extend(&cert);
    body.extend([1, 0, 0x80]);
    body.extend([9; 16]);
    let mut rec = vec![0x80 | (body.len() >> 8) as u8, body.len() as u8];
    rec.extend(&body);
    let mut p = TlsParser::new();
    assert_eq!(p.parse(ToClient, &rec), ParseResult::Done);
    assert!(p.encrypted());
    let tx = &p.txs()[0];
    assert_eq!(tx.version_name(), "SSLv2");
    let v = serde_json::to_value(tx.eve()).unwrap();
    assert_eq!((v["serial"].as_str(), v["notbefore"].as_str()), (Some("32"), Some("1969-12-31T00:00:00")));
    assert_eq!(v["notafter"], "2038-12-31T00:10:03");
}

#[test]
fn bad_records_give_up_the_direction() {
    let cases: [(&[u8], &str); 4] = [
        (b"\x19\x03\x01\x00\x01\x00", EVENT_INVALID_RECORD_TYPE),
        (b"\x16\x05\x01\x00\x01\x00", EVENT_INVALID_RECORD_VERSION),
        (b"\x16\x03\x01\x50\x00", EVENT_INVALID_RECORD_LENGTH),
        (b"\x80\x00", EVENT_INVALID_SSLV2_HEADER),
    ];
    for (bytes, event) in cases {
        let mut p = TlsParser::new();
        assert_eq!(p.parse(ToServer, bytes), ParseResult::Error, "{event}");
        assert_eq!(p.take_events().iter().map(|e| e.name).collect::<Vec<_>>(), vec![event]);
        assert_eq!(p.parse(ToServer, &record(22, 1, &hs(1, &client_hello(&[47], &[])))), ParseResult::Error);
        // The other direction is unaffected.
        assert_eq!(p.parse(ToClient, &record(21, 3, &[2, 40])), ParseResult::Done);
    }
}

#[test]
fn bad_handshake_messages() {
    // Unknown handshake type.
    let mut p = TlsParser::new();
    assert_eq!(p.parse(ToServer, &record(22, 1, &hs(99, &[1, 2]))), ParseResult::Error);
    assert_eq!(p.take_events()[0].name, EVENT_INVALID_HANDSHAKE_MESSAGE);
    // A 16 MiB handshake message is refused from its header on, before anything is buffered.
    let mut p = TlsParser::new();
    assert_eq!(p.parse(ToClient, &record(22, 3, &[11, 0xff, 0xff, 0xff, 0, 0])), ParseResult::Error);
    assert_eq!(p.take_events()[0].name, EVENT_HANDSHAKE_INVALID_LENGTH);
    // Under a small limit, a certificate spread over records stops at the limit.
    let mut p = TlsParser::with_max_handshake(1000);
    let big = hs(11, &certificate_msg(&[vec![0x30; 3000]]));
    let recs: Vec<u8> = big.chunks(500).flat_map(|c| record(22, 3, c)).collect();
    assert_eq!(feed(&mut p, ToClient, &recs, &mut || 100), ParseResult::Error);
    assert!(p.dirs.to_client.hs.is_empty());
    // A hello that does not decode, and a certificate that is not X.509.
    let mut p = TlsParser::new();
    assert_eq!(p.parse(ToServer, &record(22, 1, &hs(1, &[3, 3, 0]))), ParseResult::Done);
    let junk_cert = vec![0x30, 0x03, 0x02, 0x01, 0x01];
    assert_eq!(
        p.parse(ToClient, &record(22, 3, &hs(11, &certificate_msg(std::slice::from_ref(&junk_cert))))),
        ParseResult::Done
    );
    assert_eq!(p.parse(ToClient, &record(22, 3, &hs(11, &[0, 0, 9, 1]))), ParseResult::Done);
    let names: Vec<_> = p.take_events().into_iter().map(|e| e.name).collect();
    assert_eq!(
        names,
        vec![EVENT_INVALID_HANDSHAKE_MESSAGE, EVENT_INVALID_CERTIFICATE, EVENT_CERTIFICATE_INVALID_LENGTH]
    );
    assert_eq!(p.txs()[0].buffer(Buffer::Certs, 0), Some(junk_cert.as_slice()));
    assert_eq!(p.txs()[0].buffer(Buffer::CertSubject, 0), None);
}

#[test]
fn sni_anomalies() {
    let two = client_hello(&[47], &[(0, sni("a.example")), (0, sni("b.example"))]);
    let bad_type = client_hello(&[47], &[(0, l16(&[vec![1], l16(b"x")].concat()))]);
    let bad_len = client_hello(&[47], &[(0, vec![0, 9, 0])]);
    for (hello, event, sni) in [
        (two, EVENT_MULTIPLE_SNI_EXTENSIONS, Some(&b"a.example"[..])),
        (bad_type, EVENT_INVALID_SNI_TYPE, None),
        (bad_len, EVENT_INVALID_SNI_LENGTH, None),
    ] {
        let mut p = TlsParser::new();
        assert_eq!(p.parse(ToServer, &record(22, 1, &hs(1, &hello))), ParseResult::Done);
        assert_eq!(p.take_events().iter().map(|e| e.name).collect::<Vec<_>>(), vec![event]);
        assert_eq!(p.txs()[0].sni(), sni);
    }
}

#[test]
fn heartbeat_events() {
    let mut p = TlsParser::new();
    // Claims 0x4000 bytes of payload in a 3-byte message: Heartbleed.
    assert_eq!(p.parse(ToServer, &record(24, 2, &[1, 0x40, 0x00])), ParseResult::Done);
    let names: Vec<_> = p.take_events().into_iter().map(|e| e.name).collect();
    assert_eq!(names, vec![EVENT_HEARTBEAT, EVENT_OVERFLOW_HEARTBEAT]);
    let mut ok = vec![1, 0, 2, 0xaa, 0xbb];
    ok.extend([0; 16]);
    p.parse(ToServer, &record(24, 2, &ok));
    assert_eq!(p.take_events().len(), 1);
}

#[test]
fn gap_gives_up_direction_quietly() {
    let mut p = TlsParser::new();
    p.on_gap(ToClient, 1000);
    assert!(p.txs()[0].complete(ToClient));
    assert_eq!(p.parse(ToClient, b"middle of some record"), ParseResult::Done);
    assert_eq!(p.parse(ToServer, &record(22, 1, &hs(1, &client_hello(&[47], &[])))), ParseResult::Done);
    assert!(p.txs()[0].client_hello().is_some());
    p.prune(0);
    assert_eq!(p.txs().len(), 1);
    p.prune(1);
    assert!(p.txs().is_empty());
    assert!(p.tx().client_hello().is_some());
}

#[test]
fn incomplete_asks_for_the_rest_of_the_record() {
    let mut p = TlsParser::new();
    let rec = record(22, 1, &hs(1, &client_hello(&[47], &[])));
    assert_eq!(p.parse(ToServer, &rec[..3]), ParseResult::Incomplete { consumed: 0, needed: 2 });
    assert_eq!(p.parse(ToServer, &rec[..10]), ParseResult::Incomplete { consumed: 0, needed: rec.len() - 10 });
    let two = [record(21, 1, &[1, 0]), rec[..7].to_vec()].concat();
    assert_eq!(p.parse(ToServer, &two), ParseResult::Incomplete { consumed: 7, needed: rec.len() - 7 });
}

#[test]
fn probes() {
    let hello = record(22, 1, &hs(1, &client_hello(&[47], &[])));
    assert_eq!(probe(&hello), TlsProbe::Tls);
    assert_eq!(probe(&hello[..3]), TlsProbe::NeedMore);
    assert_eq!(probe(&[]), TlsProbe::NeedMore);
    assert_eq!(probe(b"\x16\x03\x01\x00\x10\x0b"), TlsProbe::NotTls);
    // A server's alert refusing the hello.
    assert_eq!(probe(b"\x15\x03\x01\x00\x02\x02\x46"), TlsProbe::Tls);
    assert_eq!(probe(b"\x15\x03\x01\x00"), TlsProbe::NeedMore);
    assert_eq!(probe(b"\x15\x03\x01\x00\x05\x02"), TlsProbe::NotTls);
    assert_eq!(probe(b"\x16\x02\x01"), TlsProbe::NotTls);
    assert_eq!(probe(b"GET / HTTP/1.1\r\n"), TlsProbe::NotTls);
    // SSLv2: a CLIENT-HELLO; a SERVER-HELLO only with its version 0.2 (a
    // binary protocol whose third byte is 4 is not TLS).
    assert_eq!(probe(b"\x80\x2e\x01\x03\x01\x00\x15"), TlsProbe::Tls);
    assert_eq!(probe(b"\x83\x5c\x04\x00\x01\x00\x02\x03\x4d"), TlsProbe::Tls);
    assert_eq!(probe(b"\x83\x5c\x04\x00\x01"), TlsProbe::NeedMore);
    assert_eq!(probe(b"\xaa\x31\x04\x0a\x00\x01\x59\xc1"), TlsProbe::NotTls);
    assert_eq!(probe(b"\x80\x2e\x01\x00\x02"), TlsProbe::Tls);
    assert_eq!(probe(b"\x80\x2e\x07\x00\x02"), TlsProbe::NotTls);
}

#[test]
fn version_names() {
    let names: Vec<_> = [0, 2, 0x300, 0x301, 0x302, 0x303, 0x304, 0x7f0e, 0x7f12, 0x7f1c, 0xfb17, 0x1234]
        .iter()
        .map(|&v| version_name(v).into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "UNDETERMINED",
            "SSLv2",
            "SSLv3",
            "TLSv1",
            "TLS 1.1",
            "TLS 1.2",
            "TLS 1.3",
            "TLS 1.3 draft-<16",
            "TLS 1.3 draft-18",
            "TLS 1.3 draft-28",
            "TLS 1.3 draft-23-fb",
            "4660"
        ]
    );
}

#[test]
fn certificate_dates() {
    assert_eq!(format_time(0), "1970-01-01T00:00:00");
    assert_eq!(format_time(-1), "1969-12-31T23:59:59");
    assert_eq!(format_time(951_782_400), "2000-02-29T00:00:00");
    assert_eq!(format_time(2_147_483_647), "2038-01-19T03:14:07");
    assert_eq!(format_time(253_402_300_799), "9999-12-31T23:59:59");
    assert_eq!(base64(b"Ma"), "TWE=");
    assert_eq!(base64(b"Man!"), "TWFuIQ==");
}

#[test]
fn random_input_never_panics() {
    let mut rng = Lcg(3);
    let good: Vec<u8> = tls12_flights().iter().flat_map(|(_, b)| b.clone()).collect();
    for i in 0..2000 {
        let data: Vec<u8> = if i % 2 == 0 {
            (0..rng.next() % 200).map(|_| rng.next() as u8).collect()
        } else {
            let mut d = good.clone();
            for _ in 0..4 {
                let at = rng.next() as usize % d.len();
                d[at] = rng.next() as u8;
            }
            d
        };
        let mut p = TlsParser::new();
        let dir = if i % 4 < 2 { ToServer } else { ToClient };
        feed(&mut p, dir, &data, &mut || (rng.next() % 64) as usize + 1);
        let _ = probe(&data);
        let _ = serde_json::to_string(&p.tx().eve_with(TlsEveOptions::default().with(
            TlsEveOptions::CERTIFICATE
                | TlsEveOptions::CHAIN
                | TlsEveOptions::CLIENT_CERTIFICATE
                | TlsEveOptions::CLIENT_CHAIN
                | TlsEveOptions::CLIENT_HANDSHAKE
                | TlsEveOptions::SERVER_HANDSHAKE,
        )))
        .unwrap();
    }
}

#[test]
fn pre_draft16_server_hello_with_tls13_legacy_version() {
    // Drafts before 16 sent 0x0304 itself in the ServerHello, with the draft layout (no session
    // id, no compression) and no supported_versions.
    let body = [vec![0x03, 0x04], vec![7; 32], u16s(&[0x1301]), exts(&[(40, vec![0, 23, 0, 0])])].concat();
    let mut p = TlsParser::new();
    assert_eq!(p.parse(ToClient, &record(22, 1, &hs(2, &body))), ParseResult::Done);
    let tx = &p.txs()[0];
    assert_eq!(tx.version_name(), "TLS 1.3 draft-<16");
    assert_eq!(tx.server_hello().unwrap().cipher, 0x1301);
    assert!(p.encrypted());
}

#[test]
fn random_and_subjectaltname_buffers_follow_the_side() {
    let p = run_flights(&tls12_flights(), &mut || usize::MAX);
    let tx = &p.txs()[0];
    assert_eq!(tx.buffer_dir(ToServer, Buffer::Random, 0), Some(&[0x11; 32][..]));
    assert_eq!(tx.buffer_dir(ToClient, Buffer::Random, 0), Some(&[0x33; 32][..]));
    assert_eq!(tx.buffer_dir(ToServer, Buffer::RandomTime, 0), Some(&[0x11; 4][..]));
    assert_eq!(tx.buffer_dir(ToClient, Buffer::RandomBytes, 0), Some(&[0x33; 28][..]));
    assert_eq!(tx.buffer_dir(ToClient, Buffer::Random, 1), None);
    // Without a side: the client's.
    assert_eq!(tx.buffer(Buffer::RandomTime, 0), Some(&[0x11; 4][..]));
    // The server's names; the client sent no certificate.
    assert_eq!(tx.buffer_dir(ToClient, Buffer::SubjectAltName, 2), Some(&b"10.0.0.1"[..]));
    assert_eq!(tx.buffer_dir(ToServer, Buffer::SubjectAltName, 0), None);
    // An SSLv2 challenge is no TLS random.
    let mut ch = ClientHello { sslv2: true, random: vec![1; 32], ..ClientHello::default() };
    let tx = TlsTx { client_hello: Some(ch.clone()), ..TlsTx::default() };
    assert_eq!(tx.buffer_dir(ToServer, Buffer::Random, 0), None);
    ch.sslv2 = false;
    let tx = TlsTx { client_hello: Some(ch), ..TlsTx::default() };
    assert_eq!(tx.buffer_dir(ToServer, Buffer::Random, 0), Some(&[1; 32][..]));
}

#[test]
fn subjectaltname_buffer_lists_each_name() {
    let leaf = CertInfo {
        subject: String::new(),
        issuer: String::new(),
        serial: String::new(),
        fingerprint: String::new(),
        not_before: 0,
        not_after: 0,
        sans: vec!["a.example".into(), "10.0.0.1".into()],
    };
    let tx = TlsTx { server_certs: CertChain { certs: vec![vec![0]], leaf: Some(leaf) }, ..TlsTx::default() };
    assert_eq!(tx.buffer(Buffer::SubjectAltName, 0), Some(&b"a.example"[..]));
    assert_eq!(tx.buffer_dir(ToClient, Buffer::SubjectAltName, 1), Some(&b"10.0.0.1"[..]));
    assert_eq!(tx.buffer_dir(ToClient, Buffer::SubjectAltName, 2), None);
    assert_eq!(tx.buffer_dir(ToServer, Buffer::SubjectAltName, 0), None);
}

#[test]
fn certificate_request_waits_for_the_client_certificate() {
    let mut p = TlsParser::new();
    p.parse(ToServer, &record(22, 1, &hs(1, &client_hello(&[47], &[]))));
    assert!(p.txs()[0].complete(ToServer));
    let sh = server_hello(0x0303, &[1; 32], &[0x22; 32], 47, &[]);
    let flight = [hs(2, &sh), hs(11, &certificate_msg(&[server_cert()])), hs(13, &[1, 1, 0, 0]), hs(14, &[])].concat();
    p.parse(ToClient, &record(22, 3, &flight));
    // The server asked for a certificate: the client's side is open again until it comes.
    assert!(p.txs()[0].complete(ToClient) && !p.txs()[0].complete(ToServer));
    p.parse(ToServer, &record(22, 3, &hs(11, &certificate_msg(&[ca_cert()]))));
    let tx = &p.txs()[0];
    assert!(tx.complete(ToServer));
    assert_eq!(serde_json::to_value(tx.eve()).unwrap()["client"]["subject"], "CN=SELKS");

    // A client that goes on to ChangeCipherSpec without one completes as well.
    let mut p = TlsParser::new();
    p.parse(ToServer, &record(22, 1, &hs(1, &client_hello(&[47], &[]))));
    p.parse(ToClient, &record(22, 3, &flight));
    p.parse(ToServer, &record(20, 3, &[1]));
    assert!(p.txs()[0].complete(ToServer));
}

#[test]
fn eve_field_selection() {
    let p = run_flights(&tls12_flights(), &mut || usize::MAX);
    let tx = &p.txs()[0];
    // Suricata's default without `extended`: subject, issuer, subjectaltname.
    let (basic, unknown) = TlsEveOptions::from_config(false, None, false);
    assert!(unknown.is_empty());
    let v = serde_json::to_value(tx.eve_with(basic)).unwrap();
    let want = json!({"subject": "C=US, O=Example, CN=example.com", "issuerdn": "C=FR, ST=IDF, O=Stamus, CN=SELKS",
                      "subjectaltname": ["example.com", "www.example.com", "10.0.0.1"]});
    assert_eq!(v, want);
    // A custom list replaces the set; names are case-insensitive, unknown ones reported.
    let (custom, unknown) = TlsEveOptions::from_config(true, Some(&["SNI", "chain", "client_chain", "bogus"]), true);
    assert_eq!(unknown, vec!["bogus"]);
    assert!(custom.has(TlsEveOptions::CLIENT) && custom.has(TlsEveOptions::SESSION_RESUMED));
    let v = serde_json::to_value(tx.eve_with(custom)).unwrap();
    assert_eq!(v["sni"], "example.com");
    assert_eq!(v["chain"].as_array().unwrap().len(), 2);
    assert!(v.get("version").is_none() && v.get("subject").is_none() && v.get("certificate").is_none());
    // The default is the extended set.
    assert_eq!(TlsEveOptions::default(), TlsEveOptions::from_config(true, None, true).0);
}

#[test]
fn version_without_a_server_hello() {
    // A TLS 1.0 client alone (suricata-verify bug-5713-01): its hello's version.
    let hello = record(22, 1, &hs(1, &[vec![3, 1], client_hello(&[0x2f], &[])[2..].to_vec()].concat()));
    let mut p = TlsParser::new();
    p.parse(ToServer, &hello);
    assert_eq!(p.tx().version_name(), "TLSv1");
    // The server refuses with an alert: its record layer's version wins.
    p.parse(ToClient, &record(21, 3, &[2, 40]));
    assert_eq!(p.tx().version_name(), "TLS 1.2");
    // Bytes that are no TLS at all name what their "record header" says, in decimal.
    let mut p = TlsParser::new();
    p.parse(ToServer, &hello);
    p.parse(ToClient, b"220 smtp.example.org ESMTP\r\n");
    assert_eq!(p.tx().version_name(), "12848");
}

#[test]
fn fingerprints_follow_the_switches() {
    use crate::proto::ParserInit;
    let app = crate::AppConfig::default();
    let hello = record(22, 1, &hs(1, &client_hello(&[0x2f], &[])));
    let fingerprints = |options: u32| {
        let init = ParserInit {
            app: &app,
            transport: crate::Transport::Tcp,
            first_tx_id: 0,
            options,
            settings: &[],
            expected: None,
            client: None,
        };
        let mut p = (PROTO.new_parser)(&init);
        p.parse(ToServer, &hello);
        let t = p.tx(0).unwrap();
        (t.buffer(ToServer, Buffer::Ja3Hash as u8, 0).is_some(), t.buffer(ToServer, Buffer::Ja4Hash as u8, 0).is_some())
    };
    // Suricata 8's defaults: JA4 on, JA3 only when set or asked for by a rule.
    assert_eq!(fingerprints(0b10), (false, true));
    assert_eq!(fingerprints(0b01), (true, false));
    assert_eq!(proto::OPTIONS.iter().map(|o| (o.key, o.default)).collect::<Vec<_>>(), [("ja3-fingerprints", false), ("ja4-fingerprints", true)]);
}
