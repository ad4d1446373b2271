use super::*;
use Direction::{ToClient, ToServer};

fn run(convo: &[(Direction, Vec<u8>)]) -> PgsqlParser {
    let mut p = PgsqlParser::new(0, 64);
    for (dir, data) in convo {
        assert_eq!(p.parse(*dir, data), ParseResult::Done);
    }
    p
}

#[test]
fn a_session_gives_one_transaction_per_request() {
    let p = run(&sample());
    let recs: Vec<Value> = p.txs.iter().map(|t| t.eve_with(&RecordOptions { passwords: Some(true), ..RecordOptions::DEFAULT })).collect();
    assert_eq!(recs.len(), 5);
    assert_eq!(recs[0], serde_json::json!({"tx_id": 1, "request": {"message": "SSL Request"}, "response": {"ssl_accepted": false}}));
    assert_eq!(recs[1]["request"]["startup_parameters"]["user"], "rules");
    assert_eq!(recs[1]["request"]["startup_parameters"]["optional_parameters"][1]["application_name"], "psql");
    assert_eq!(recs[1]["response"]["authentication_md5_password"], "\u{1}\u{2}\u{3}\u{4}");
    assert_eq!(recs[2]["request"]["password"], "md5e4cfa9552468cae5d48ca2822ca36e22");
    assert_eq!(recs[2]["response"]["message"], "authentication_ok");
    assert_eq!(recs[2]["response"]["parameter_status"], serde_json::json!([{"client_encoding": "UTF8"}]));
    assert_eq!(recs[2]["response"]["process_id"], 61);
    assert_eq!(
        recs[3]["response"],
        serde_json::json!({"field_count": 1, "data_rows": 1, "data_size": 1, "command_completed": "SELECT 1"})
    );
    assert_eq!(recs[4]["request"]["message"], "termination_message");
    assert!(p.txs.iter().all(|t| t.complete));
    // Passwords are left out unless asked for.
    assert_eq!(p.txs[2].eve()["request"], serde_json::json!({"password_redacted": true}));
}

#[test]
fn rows_are_counted_without_being_held() {
    let mut p = PgsqlParser::new(0, 8);
    p.parse(ToServer, b"Q\x00\x00\x00\x0eSELECT 1;\x00");
    // One row of a single 100 000-byte column, cut in pieces, then the end.
    let mut row = b"D".to_vec();
    row.extend_from_slice(&(4u32 + 2 + 4 + 100_000).to_be_bytes());
    row.extend_from_slice(&[0, 1]);
    row.extend_from_slice(&100_000u32.to_be_bytes());
    row.resize(row.len() + 100_000, b'x');
    for chunk in row.chunks(1000) {
        p.parse(ToClient, chunk);
        assert!(p.sides.to_client.held.len() < 16);
    }
    p.parse(ToClient, b"C\x00\x00\x00\x0dSELECT 1\x00Z\x00\x00\x00\x05I");
    let r = p.txs[0].eve();
    assert_eq!((r["response"]["data_rows"].as_u64(), r["response"]["data_size"].as_u64()), (Some(1), Some(100_000)));
}

#[test]
fn copy_in_is_a_transaction_of_its_own() {
    let mut p = PgsqlParser::new(0, 8);
    p.parse(ToServer, b"Q\x00\x00\x00\x18COPY tmp FROM STDIN\x00");
    p.parse(ToClient, b"G\x00\x00\x00\x09\x00\x00\x01\x00\x00");
    p.parse(ToServer, b"d\x00\x00\x00\x08abcdc\x00\x00\x00\x04");
    p.parse(ToClient, b"C\x00\x00\x00\x0bCOPY 1\x00Z\x00\x00\x00\x05I");
    assert_eq!(p.txs[0].eve()["response"], serde_json::json!({"copy_in_response": {"columns": 1}}));
    assert_eq!(
        p.txs[1].eve(),
        serde_json::json!({"tx_id": 2, "request": {"copy_data_in": {"msg_count": 1, "data_size": 4}, "message": "copy_done"},
            "response": {"data_rows": 1, "data_size": 4, "command_completed": "COPY 1"}})
    );
}

#[test]
fn an_unknown_startup_code_is_a_malformed_request() {
    let mut p = PgsqlParser::new(0, 8);
    assert_eq!(p.parse(ToServer, &[0, 0, 0, 8, 0, 0xff, 0, 0xff]), ParseResult::Error);
    let mut out = Vec::new();
    p.drain_events(&mut out);
    assert_eq!(out[0].name, "pgsql.malformed_request");
    assert_eq!(p.txs[0].eve(), serde_json::json!({"tx_id": 1}));
}

#[test]
fn an_accepted_ssl_request_hands_the_flow_over() {
    let mut p = PgsqlParser::new(0, 8);
    p.parse(ToServer, &[0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]);
    assert_eq!(p.parse(ToClient, b"S\x16\x03\x01"), ParseResult::Incomplete { consumed: 1, needed: 1 });
    assert!(p.tunnel());
    assert_eq!(p.txs[0].eve()["response"]["ssl_accepted"], true);
}
