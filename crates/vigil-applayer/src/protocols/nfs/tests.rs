use serde_json::json;
use vigil_types::Direction::{self, ToClient, ToServer};

use super::build::*;
use super::checks::NfsCheck;
use super::names::*;
use super::parser::NfsParser;
use super::*;
use crate::files::{FileConfig, FileState};
use crate::parser::ParseResult;
use crate::proto::{ProtoParser, TxCheck};

fn parser(tcp: bool) -> NfsParser {
    NfsParser::new(0, 1024, tcp, FileConfig { sha256: true, ..FileConfig::default() })
}

fn records(p: &NfsParser) -> Vec<serde_json::Value> {
    (0..p.tx_count()).map(|i| p.tx(i).unwrap().eve()).collect()
}

#[test]
fn a_session_is_logged_as_suricata_logs_it() {
    let mut p = parser(true);
    for (dir, data) in sample() {
        assert_eq!(p.parse(dir, &data), ParseResult::Done);
    }
    let r = records(&p);
    assert_eq!(r.len(), 4, "{r:#?}");
    assert_eq!(
        r[0],
        json!({"version": 3, "procedure": "LOOKUP", "filename": "notes.txt", "hhash": hhash(b"FILE0001"), "id": 1, "file_tx": false,
            "type": "response", "status": "OK"})
    );
    assert_eq!(
        r[1],
        json!({"version": 3, "procedure": "READ", "filename": "notes.txt", "hhash": hhash(b"FILE0001"), "id": 2, "file_tx": true,
            "type": "response", "status": "OK", "read": {"first": true, "last": true, "last_xid": 2, "chunks": 1}})
    );
    assert_eq!(r[2]["write"], json!({"first": true, "last": true, "last_xid": 3, "chunks": 0}));
    assert_eq!(r[3]["rename"], json!({"from": "a", "to": "b"}));
    let read = p.tx(1).unwrap();
    let f = &read.files(ToClient)[0];
    assert_eq!((f.size, f.state, f.name.as_slice()), (11, FileState::Closed, &b"notes.txt"[..]));
    assert_eq!(p.tx(2).unwrap().files(ToServer)[0].window, b"abcde");
    assert_eq!(p.tx(0).unwrap().eve_siblings(Default::default())[0].1, json!({"xid": 1, "status": "ACCEPTED", "auth_type": "UNIX",
        "creds": {"machine_name": "client", "uid": 1000, "gid": 1000}}));
    assert!((0..4).all(|i| p.tx(i).unwrap().finished() && p.tx(i).unwrap().writes_record()));
}

#[test]
fn procedures_match_by_number_and_by_name_in_their_version() {
    let mut p = parser(true);
    for (dir, data) in sample() {
        p.parse(dir, &data);
    }
    let write = p.tx(2).unwrap();
    assert!(NfsCheck::ProcedureNamed("WRITE".into()).matches(write, ToServer, 0));
    assert!(NfsCheck::Procedure(vigil_rules::IntCmp::Eq(7)).matches(write, ToServer, 0));
    assert!(!NfsCheck::ProcedureNamed("READ".into()).matches(write, ToServer, 0));
    assert!(NfsCheck::Version(vigil_rules::IntCmp::Eq(3)).matches(write, ToServer, 0));
    // Version 2 names its procedures its own way.
    let mut p = parser(false);
    p.parse(ToServer, &call(9, 2, 17, &[0; 32]));
    let statfs = p.tx(0).unwrap();
    assert!(NfsCheck::ProcedureNamed("STATFS".into()).matches(statfs, ToServer, 0));
    assert!(!NfsCheck::ProcedureNamed("READDIRPLUS".into()).matches(statfs, ToServer, 0));
    assert_eq!(statfs.eve()["procedure"], "STATFS");
}

#[test]
fn a_v2_read_over_udp_ends_at_the_files_size() {
    let mut p = parser(false);
    let fh = [7u8; 32];
    p.parse(ToServer, &call(5, 2, V2_READ, &[fh.to_vec(), word(0), word(8192), word(0)].concat()));
    assert_eq!(p.tx_count(), 0, "a read makes its transaction with its answer");
    let mut attrs = vec![0u8; 68];
    attrs[20..24].copy_from_slice(&4u32.to_be_bytes());
    p.parse(ToClient, &reply(5, &[word(0), attrs, opaque(b"data")].concat()));
    let t = p.tx(0).unwrap();
    let e = t.eve();
    assert_eq!((e["procedure"].clone(), e["read"].clone()), (json!("READ"), json!({"first": true, "last": true, "last_xid": 5, "chunks": 0})));
    assert_eq!(t.eve_siblings(Default::default())[0].1["auth_type"], "NULL", "the file transaction has no caller of its own");
    assert_eq!(t.files(ToClient)[0].state, FileState::Closed);
    assert_eq!(t.record_dir(), ToClient);
}

#[test]
fn a_write_too_big_to_hold_is_streamed_into_its_file() {
    let mut p = parser(true);
    let data = vec![0x5a; 300 * 1024];
    let args = [opaque(b"BIGFILE1"), vec![0; 8], word(data.len() as u32), word(2), opaque(&data)].concat();
    let m = framed(&call(11, 3, V3_WRITE, &args));
    let held = crate::proto::kit::feed(&mut p, ToServer, &m, 1460);
    assert!(held <= 4 + crate::tail::HEAD, "the record is never held whole");
    let f = &p.tx(0).unwrap().files(ToServer)[0];
    assert_eq!((f.size, f.gaps, f.state), (data.len() as u64, false, FileState::Closed));
}

#[test]
fn reads_answered_out_of_order_make_the_whole_file() {
    let mut p = parser(false);
    let fh = opaque(b"FILE0003");
    let read = |xid: u32, offset: u64| call(xid, 3, V3_READ, &[fh.clone(), offset.to_be_bytes().to_vec(), word(4)].concat());
    let answer = |xid: u32, eof: u32, d: &[u8]| reply(xid, &[word(0), word(0), word(d.len() as u32), word(eof), opaque(d)].concat());
    p.parse(ToServer, &read(1, 0));
    p.parse(ToServer, &read(2, 4));
    p.parse(ToClient, &answer(2, 1, b"BBBB"));
    p.parse(ToClient, &answer(1, 0, b"AAAA"));
    let t = p.tx(0).unwrap();
    let f = &t.files(ToClient)[0];
    assert_eq!((f.size, f.gaps, f.state), (8, false, FileState::Closed));
    assert_eq!(f.window, b"AAAABBBB");
}

#[test]
fn names_learnt_by_handle_name_later_calls() {
    let mut p = parser(false);
    p.parse(ToServer, &call(1, 3, V3_LOOKUP, &[opaque(b"DIR"), opaque(b"report.pdf")].concat()));
    p.parse(ToClient, &reply(1, &[word(0), opaque(b"HANDLE42"), word(0), word(0)].concat()));
    p.parse(ToServer, &call(2, 3, V3_ACCESS, &[opaque(b"HANDLE42"), word(1)].concat()));
    p.parse(ToClient, &reply(2, &[word(0), word(0), word(1)].concat()));
    let e = p.tx(1).unwrap().eve();
    assert_eq!((e["procedure"].clone(), e["filename"].clone()), (json!("ACCESS"), json!("report.pdf")));
    // A lookup that failed has no handle of its own.
    p.parse(ToServer, &call(3, 3, V3_LOOKUP, &[opaque(b"DIR"), opaque(b"gone")].concat()));
    p.parse(ToClient, &reply(3, &[word(2), word(0)].concat()));
    let e = p.tx(2).unwrap().eve();
    assert_eq!((e["status"].clone(), e.get("hhash")), (json!("ERR_NOENT"), None));
}

#[test]
fn calls_long_unanswered_are_given_up() {
    let mut p = parser(false);
    p.parse(ToServer, &call(1, 3, V3_ACCESS, &[opaque(b"H"), word(1)].concat()));
    for xid in 2..100 {
        p.parse(ToServer, &call(xid, 3, V3_ACCESS, &[opaque(b"H"), word(1)].concat()));
        p.parse(ToClient, &reply(xid, &[word(0), word(0), word(1)].concat()));
    }
    let first = p.tx(0).unwrap();
    assert!(first.finished() && !first.writes_record(), "given up, and not logged over UDP");
    // A file committed is logged though its commit is never answered.
    p.parse(ToServer, &call(200, 3, V3_WRITE, &[opaque(b"F"), vec![0; 8], word(3), word(0), opaque(b"abc")].concat()));
    p.parse(ToServer, &call(201, 3, V3_COMMIT, &[opaque(b"F"), vec![0; 8], word(0)].concat()));
    let w = (0..p.tx_count()).map(|i| p.tx(i).unwrap()).find(|t| t.eve()["procedure"] == "WRITE").unwrap();
    assert!(w.finished() && w.writes_record());
    assert_eq!(w.eve()["write"], json!({"first": true, "last": true, "last_xid": 201, "chunks": 1}));
    assert_eq!(w.files(ToServer)[0].state, FileState::Closed);
}

#[test]
fn a_compound_makes_a_transaction_only_for_what_suricata_logs() {
    let mut p = parser(true);
    let head = |n: u32| [opaque(b""), word(1), word(n)].concat();
    let open = [head(2), word(V4_PUTFH), opaque(b"ROOT"), word(V4_LOOKUP), opaque(b"x")].concat();
    p.parse(ToServer, &framed(&call(1, 4, 1, &open)));
    assert_eq!(p.tx_count(), 0);
    let remove = [head(2), word(V4_PUTFH), opaque(b"ROOT"), word(V4_REMOVE), opaque(b"old.txt")].concat();
    p.parse(ToServer, &framed(&call(2, 4, 1, &remove)));
    let removed = [word(0), opaque(b""), word(2), word(V4_PUTFH), word(0), word(V4_REMOVE), word(0), vec![0; 20]].concat();
    p.parse(ToClient, &framed(&reply(2, &removed)));
    let e = p.tx(0).unwrap().eve();
    assert_eq!((e["procedure"].clone(), e["filename"].clone(), e["status"].clone()), (json!("REMOVE"), json!("old.txt"), json!("OK")));
    assert_eq!(p.tx(0).unwrap().record_dir(), Direction::ToClient);
}

#[test]
fn a_v4_file_written_whole_is_logged_when_the_flow_ends() {
    let mut p = parser(true);
    let head = [opaque(b""), word(1), word(2)].concat();
    let write = [head, word(V4_PUTFH), opaque(b"FH"), word(V4_WRITE), vec![0; 16], vec![0; 8], word(2), opaque(b"hello")].concat();
    p.parse(ToServer, &framed(&call(7, 4, 1, &write)));
    let w = p.tx(0).unwrap();
    assert_eq!(w.files(ToServer)[0].state, FileState::Closed, "a FILE_SYNC write of its whole ends the file");
    assert!(!w.finished(), "but not the transaction, before the flow ends");
    p.close(ToServer, &[]);
    assert!(!p.tx(0).unwrap().finished(), "one side's end is not the flow's");
    p.close(ToClient, &[]);
    let w = p.tx(0).unwrap();
    assert!(w.finished() && w.writes_record());
    assert_eq!(w.eve()["write"], json!({"first": true, "last": true, "last_xid": 7, "chunks": 0}));
}

#[test]
fn hostile_lengths_stay_bounded() {
    let mut p = parser(true);
    assert_eq!(p.parse(ToServer, &[0xff, 0xff, 0xff, 0xff, 1, 2, 3]), ParseResult::Done);
    let mut p = parser(false);
    p.parse(ToServer, &call(1, 3, V3_WRITE, &[opaque(b"H"), vec![0; 8], word(u32::MAX), word(2), word(u32::MAX)].concat()));
    assert_eq!(p.tx_count(), 0);
}
