use super::*;

fn parser() -> QuicParser {
    QuicParser {
        txs: TxQueue::new(0, 64),
        keys: None,
        retried: false,
        sides: [Side::default(), Side::default()],
        crypto_limit: 64 * 1024,
        events: Vec::new(),
    }
}

#[test]
fn the_hellos_are_read_and_then_nothing() {
    let mut p = parser();
    let s = sample();
    for (dir, d) in &s {
        assert_eq!(p.parse(*dir, d), ParseResult::Done);
    }
    assert_eq!(p.txs.len(), 2);
    let client = p.txs[0].eve();
    assert_eq!(client["sni"], "quic.example");
    assert_eq!(client["ja3"]["string"], "771,4865-4866,0-16-13-43,,");
    assert_eq!(client["extensions"][0], json!({"name": "server_name", "type": 0, "values": ["quic.example"]}));
    assert_eq!(client["extensions"][2]["values"], json!(["1027", "2052"]));
    assert_eq!(client["extensions"][3]["values"], json!(["Tls13"]));
    let server = p.txs[1].eve();
    assert_eq!(server["ja3s"]["string"], "771,4865,43");
    assert_eq!(server.get("sni"), None);
    // Both sides are done: a repeat makes no transaction.
    p.parse(s[0].0, &s[0].1);
    assert_eq!(p.txs.len(), 2);
    let mut ev = Vec::new();
    p.drain_events(&mut ev);
    assert!(ev.is_empty(), "{ev:?}");
}

#[test]
fn a_damaged_initial_is_a_failed_decrypt() {
    let mut p = parser();
    let mut d = sample()[0].1.clone();
    let n = d.len();
    d[n - 20] ^= 1;
    p.parse(Direction::ToServer, &d);
    assert_eq!(p.txs[0].eve(), json!({"version": "1"}));
    let mut ev = Vec::new();
    p.drain_events(&mut ev);
    assert_eq!(ev, vec![AppEvent { name: "quic.failed_decrypt", tx_id: Some(0) }]);
}

#[test]
fn a_short_header_ends_its_side() {
    let mut p = parser();
    p.parse(Direction::ToClient, &[0x40, 1, 2, 3, 4, 5]);
    assert!(p.txs.is_empty());
    p.parse(Direction::ToClient, &sample()[1].1);
    assert!(p.txs.is_empty());
    p.parse(Direction::ToServer, &sample()[0].1);
    assert_eq!(p.txs.len(), 1);
}

#[test]
fn after_a_retry_the_client_starts_over() {
    let mut p = parser();
    let first = sample()[0].1.clone();
    p.parse(Direction::ToServer, &first);
    // Retry: type 3, version 1, dcid 4, scid 4, token, integrity tag.
    let mut retry = vec![0xf0, 0, 0, 0, 1, 4, 1, 2, 3, 4, 4, 9, 9, 9, 9];
    retry.extend_from_slice(&[0xaa; 24]);
    p.parse(Direction::ToClient, &retry);
    assert_eq!(p.txs.len(), 2);
    // The same Initial again (same connection id) is still past the hello.
    p.parse(Direction::ToServer, &first);
    assert_eq!(p.txs.len(), 2);
    // An Initial to a new connection id is read from scratch (its keys
    // differ, so it does not open: a record with the version only).
    let mut other = first.clone();
    other[6] ^= 0xff;
    p.parse(Direction::ToServer, &other);
    assert_eq!(p.txs.len(), 3);
    assert_eq!(p.txs[2].eve(), json!({"version": "1"}));
}

#[test]
fn google_quic_hello_in_the_clear() {
    // Q046 long header: Initial type, dcid 8 (nibble 5), 4-byte packet number, 12-byte hash.
    let mut d = vec![0xc3, b'Q', b'0', b'4', b'6', 0x50, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 1];
    d.extend_from_slice(&[0; 12]);
    let mut chlo = b"CHLO".to_vec();
    chlo.extend_from_slice(&[2, 0, 0, 0]);
    chlo.extend_from_slice(b"SNI\0");
    chlo.extend_from_slice(&7u32.to_le_bytes());
    chlo.extend_from_slice(b"UAID");
    chlo.extend_from_slice(&9u32.to_le_bytes());
    chlo.extend_from_slice(b"a.exampleua");
    d.extend_from_slice(&[0xa0, 0x01]);
    d.extend_from_slice(&(chlo.len() as u16).to_be_bytes());
    d.extend_from_slice(&chlo);
    assert_eq!(probe(Direction::ToServer, &d, ProbeCx::udp(50000, 443)), Probe::Match);
    let mut p = parser();
    p.parse(Direction::ToServer, &d);
    let r = p.txs[0].eve();
    assert_eq!((r["version"].as_str(), r["sni"].as_str(), r["ua"].as_str()), (Some("Q046"), Some("a.examp"), Some("le")));
    assert_eq!(r["cyu"][0]["string"], "46,SNI-UAID");
    assert_eq!(p.txs[0].buffer(Direction::ToServer, VERSION, 0), Some(&b"Q046"[..]));
    assert_eq!(p.txs[0].buffer(Direction::ToClient, VERSION, 0), None);
}


#[test]
fn a_junk_initial_first_does_not_take_the_keys() {
    let mut p = parser();
    // A spoofed Initial to another connection id that does not open.
    let mut junk = sample()[0].1.clone();
    junk[6] ^= 0xff;
    let n = junk.len();
    junk[n - 1] ^= 1;
    p.parse(Direction::ToServer, &junk);
    assert!(p.keys.is_none());
    // The real one still gives its hello.
    p.parse(Direction::ToServer, &sample()[0].1);
    assert_eq!(p.txs[1].eve()["sni"], "quic.example");
}
