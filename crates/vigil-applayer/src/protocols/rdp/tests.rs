//! The parser against connection sequences built here: standard RDP
//! security in the clear, TLS up to the certificates, negotiation failure,
//! and the bounds on what is held.

use serde_json::json;
use vigil_types::Direction::{self, ToClient, ToServer};

use super::build::{request, confirm, tpkt};
use super::*;
use crate::codecs::ber::tlv;
use crate::config::AppConfig;
use crate::proto::kit;
use crate::Transport;

fn data(payload: &[u8]) -> Vec<u8> {
    tpkt(&[&[2, 0xf0, 0x80], payload].concat())
}

fn app(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut v = tlv(0x30, content);
    v.splice(0..1, [0x7f, tag]);
    v
}

fn per_len(n: usize) -> Vec<u8> {
    if n < 0x80 {
        vec![u8::try_from(n).unwrap()]
    } else {
        u16::try_from(n | 0x8000).unwrap().to_be_bytes().to_vec()
    }
}

fn utf16(s: &str, bytes: usize) -> Vec<u8> {
    let mut v: Vec<u8> = s.encode_utf16().flat_map(u16::to_le_bytes).collect();
    v.resize(bytes, 0);
    v
}

fn block(ty: u16, body: &[u8]) -> Vec<u8> {
    [ty.to_le_bytes().to_vec(), u16::try_from(body.len() + 4).unwrap().to_le_bytes().to_vec(), body.to_vec()].concat()
}

/// A core data block of an RDP 5 client on Windows XP, with the
/// optional fields up to the connection type.
fn core_xp_fields() -> Vec<u8> {
    let mut b = Vec::new();
    b.extend(0x0008_0004u32.to_le_bytes());
    b.extend(1152u16.to_le_bytes());
    b.extend(864u16.to_le_bytes());
    b.extend(0xca01u16.to_le_bytes());
    b.extend(0xaa03u16.to_le_bytes());
    b.extend(0x409u32.to_le_bytes());
    b.extend(2600u32.to_le_bytes());
    b.extend(utf16("WS-01", 32));
    b.extend(4u32.to_le_bytes());
    b.extend(0u32.to_le_bytes());
    b.extend(12u32.to_le_bytes());
    b.extend(utf16("", 64));
    b.extend(0xca01u16.to_le_bytes());
    b.extend(1u16.to_le_bytes());
    b.extend(0u32.to_le_bytes());
    b.extend(15u16.to_le_bytes());
    b.extend(7u16.to_le_bytes());
    b.extend(0x0001u16.to_le_bytes());
    b.extend(utf16("55274-OEM-0011903-00107", 64));
    b.extend([0, 0]);
    b
}

fn core_xp() -> Vec<u8> {
    block(0xc001, &core_xp_fields())
}

/// Network data naming `channels`.
fn net(channels: &[&str]) -> Vec<u8> {
    let mut b = u32::try_from(channels.len()).unwrap().to_le_bytes().to_vec();
    for c in channels {
        let mut name = c.as_bytes().to_vec();
        name.resize(8, 0);
        b.extend(name);
        b.extend(0x8080_0000u32.to_le_bytes());
    }
    block(0xc003, &b)
}

/// An MCS Connect Initial carrying `blocks` in its GCC conference create request.
fn connect_initial(blocks: &[u8]) -> Vec<u8> {
    let ccr = [&[0, 8, 0, 0x10, 0, 1, 0xc0, 0][..], b"Duca", &per_len(blocks.len()), blocks].concat();
    let gcc = [&[0, 5, 0, 0x14, 0x7c, 0, 1][..], &per_len(ccr.len()), &ccr].concat();
    let params = tlv(0x30, &[tlv(2, &[0x22]), tlv(2, &[2])].concat());
    let body = [tlv(4, &[1]), tlv(4, &[1]), tlv(1, &[0xff]), params.clone(), params.clone(), params, tlv(4, &gcc)].concat();
    data(&app(0x65, &body))
}

/// An MCS Connect Response (its contents are not read).
fn connect_response() -> Vec<u8> {
    data(&app(0x66, &[tlv(0x0a, &[0]), tlv(2, &[0]), tlv(4, b"McDn")].concat()))
}

/// An MCS Erect Domain Request, which makes no transaction.
fn erect_domain() -> Vec<u8> {
    data(&[4, 1, 0, 1, 0])
}

fn parser() -> Box<dyn ProtoParser> {
    let app = AppConfig::default();
    new_parser(&ParserInit { app: &app, transport: Transport::Tcp, first_tx_id: 0, options: 0, settings: &[], expected: None, client: None })
}

fn records(flights: &[(Direction, Vec<u8>)]) -> Vec<Value> {
    let mut p = parser();
    for (dir, data) in flights {
        assert_eq!(p.parse(*dir, data), ParseResult::Done);
    }
    (0..p.tx_count()).map(|i| p.tx(i).unwrap().eve()).collect()
}

/// Standard RDP security: nothing is encrypted until the security exchange,
/// so the client's data blocks are read.
fn standard_security() -> Vec<(Direction, Vec<u8>)> {
    let blocks = [core_xp(), block(0xc004, &[9, 0, 0, 0, 0, 0, 0, 0]), block(0xc002, &[0; 8]), net(&["rdpdr", "cliprdr", "rdpsnd"])].concat();
    vec![
        (ToServer, request(b"Cookie: mstshash=A70067\r\n", None)),
        (ToClient, confirm(None)),
        (ToServer, connect_initial(&blocks)),
        (ToClient, connect_response()),
        // Erect domain, then fast-path input (no TPKT) before another TPKT.
        (ToServer, [erect_domain(), vec![0x44, 0x05, 1, 2, 3], vec![0x44, 0x80, 0x04, 9], erect_domain()].concat()),
    ]
}

#[test]
fn standard_security_is_logged_as_suricata_logs_it() {
    let recs = records(&standard_security());
    assert_eq!(recs.len(), 4, "{recs:#?}");
    assert_eq!(recs[0], json!({"tx_id": 1, "event_type": "initial_request", "cookie": "A70067"}));
    assert_eq!(recs[1], json!({"tx_id": 2, "event_type": "initial_response"}));
    assert_eq!(
        recs[2],
        json!({"tx_id": 3, "event_type": "connect_request",
            "client": {"version": "v5", "desktop_width": 1152, "desktop_height": 864, "color_depth": 15,
                "keyboard_layout": "en-US", "build": "Windows XP", "client_name": "WS-01", "keyboard_type": "enhanced",
                "function_keys": 12, "product_id": 1, "capabilities": ["support_errinfo_pdf"], "id": "55274-OEM-0011903-00107"},
            "channels": ["rdpdr", "cliprdr", "rdpsnd"]})
    );
    assert_eq!(recs[3], json!({"tx_id": 4, "event_type": "connect_response"}));
}

#[test]
fn tls_is_read_up_to_the_certificates() {
    let recs = records(&sample());
    assert_eq!(recs.len(), 3, "{recs:#?}");
    assert_eq!(recs[0], json!({"tx_id": 1, "event_type": "initial_request", "cookie": "alice"}));
    assert_eq!(recs[1], json!({"tx_id": 2, "event_type": "initial_response", "server_supports": ["extended_client_data"], "protocol": "hybrid"}));
    // The sample's chain: the server's serial 00c7d428 (its leading zero
    // byte is not written), then the CA's.
    assert_eq!(recs[2], json!({"tx_id": 3, "event_type": "tls_handshake", "x509_serials": ["c7d428", "32"]}));
}

#[test]
fn a_refusal_says_why() {
    let recs = records(&[
        (ToServer, request(b"", Some((0x08, 0)))),
        (ToClient, confirm(Some((3, 0, 5)))),
    ]);
    assert_eq!(recs[0], json!({"tx_id": 1, "event_type": "initial_request", "flags": ["correlation_info_present"]}));
    assert_eq!(recs[1], json!({"tx_id": 2, "event_type": "initial_response", "error_code": 5, "reason": "hybrid required by server"}));
}

#[test]
fn long_records_are_passed_over_without_being_held() {
    let mut p = parser();
    assert_eq!(p.parse(ToServer, &request(b"", Some((0, 1)))), ParseResult::Done);
    assert_eq!(p.parse(ToClient, &confirm(Some((2, 0, 1)))), ParseResult::Done);
    // Application data of 16 KiB in pieces: nothing waits for the whole record.
    let app = super::super::tls::sample::record(23, 3, &[0x5a; 16 * 1024]);
    for piece in app.chunks(1000) {
        assert_eq!(p.parse(ToServer, piece), ParseResult::Done);
    }
    // A server handshake that never ends stops being held at the bound.
    let endless = [11, 0xff, 0xff, 0xff];
    let mut first = super::super::tls::sample::record(22, 3, &[&endless[..], &[0; 16000]].concat());
    assert_eq!(p.parse(ToClient, &first), ParseResult::Done);
    for _ in 0..4 {
        first = super::super::tls::sample::record(22, 3, &[0; 16000]);
        assert_eq!(p.parse(ToClient, &first), ParseResult::Done);
    }
    assert!(!p.wants_data(), "past the bound the rest is passed over");
    assert_eq!(p.tx_count(), 2);
}

#[test]
fn other_bytes_are_refused() {
    let mut p = parser();
    assert_eq!(p.parse(ToServer, b"GET / HTTP/1.1\r\n\r\n"), ParseResult::Error);
    let short = tpkt(&[2]);
    assert_eq!(probe(ToServer, &short, ProbeCx::tcp(40000, 3389)), Probe::NoMatch, "a TPKT too short for X.224");
    assert_eq!(probe(ToClient, &confirm(None), ProbeCx::tcp(3389, 40000)), Probe::Match);
}

#[test]
fn cut_anywhere_the_sequence_reads_the_same() {
    let whole = records(&standard_security());
    for cut in [1, 3, 7, 50] {
        let mut p = parser();
        for (dir, data) in standard_security() {
            let held = kit::feed(p.as_mut(), dir, &data, cut);
            assert!(held <= data.len(), "cut {cut}");
        }
        let recs: Vec<Value> = (0..p.tx_count()).map(|i| p.tx(i).unwrap().eve()).collect();
        assert_eq!(recs, whole, "cut {cut}");
    }
}

#[test]
fn physical_size_counts_only_within_its_range() {
    let core = |extra: &[u8]| {
        let blocks = block(0xc001, &[core_xp_fields(), 0u32.to_le_bytes().to_vec(), extra.to_vec()].concat());
        let mut p = parser();
        assert_eq!(p.parse(ToServer, &connect_initial(&blocks)), ParseResult::Done);
        p.tx(0).unwrap().eve()["client"].clone()
    };
    let fields = |w: u32, h: u32, r: u16, f: u32, d: u32| {
        [w.to_le_bytes().to_vec(), h.to_le_bytes().to_vec(), r.to_le_bytes().to_vec(), f.to_le_bytes().to_vec(), d.to_le_bytes().to_vec()].concat()
    };
    let c = core(&fields(344, 194, 90, 140, 180));
    assert_eq!((c["physical_width"].clone(), c["physical_height"].clone()), (json!(344), json!(194)));
    assert_eq!((c["desktop_orientation"].clone(), c["scale_factor"].clone(), c["device_scale_factor"].clone()), (json!(90), json!(140), json!(180)));
    let c = core(&fields(0, 0, 0, 0, 0));
    assert!(c.get("physical_width").is_none() && c.get("desktop_orientation").is_none(), "{c}");
    let c = core(&fields(344, 194, 45, 99, 150));
    assert!(c.get("physical_width").is_some() && c.get("desktop_orientation").is_none() && c.get("scale_factor").is_none() && c.get("device_scale_factor").is_none(), "{c}");
}
