//! The FTP parser against conversations whose records the reference
//! Suricata 8.0.6 wrote (replies in one segment each, where the two agree).

use std::net::IpAddr;

use serde_json::json;
use vigil_types::Direction::{self, ToClient, ToServer};

use super::*;
use crate::proto::{Expectation, ProtoTx};
use crate::protocols::ftp_data::DataChannel;

fn run(conv: &[(Direction, &str)], max_line: usize, client: Option<IpAddr>) -> FtpParser {
    let mut p = FtpParser::new(0, max_line, 1024, client);
    for (dir, text) in conv {
        ProtoParser::parse(&mut p, *dir, text.as_bytes());
    }
    p
}

fn eves(p: &FtpParser) -> Vec<serde_json::Value> {
    p.txs().map(ProtoTx::eve).collect()
}

#[test]
fn banner_login_and_listing_as_suricata_logs_them() {
    let p = run(
        &[
            (ToClient, "220 FTP Sandbox Ready.\r\n"),
            (ToServer, "USER bob\r\n"),
            (ToClient, "331 Please specify the password.\r\n"),
            (ToServer, "PORT 172,23,0,3,174,127\r\n"),
            (ToClient, "200 PORT command successful. Consider using PASV.\r\n"),
            (ToServer, "NLST\r\n"),
            (ToClient, "150 Here comes the directory listing.\r\n"),
            (ToClient, "226 Directory send OK.\r\n"),
            (ToServer, "QUIT\r\n"),
        ],
        4096,
        None,
    );
    let e = eves(&p);
    assert_eq!(
        e[0],
        json!({"completion_code": ["220"], "reply": ["FTP Sandbox Ready."], "reply_received": "yes", "reply_truncated": false})
    );
    assert_eq!(
        e[1],
        json!({"command": "USER", "command_data": "bob", "command_truncated": false, "completion_code": ["331"],
               "reply": ["Please specify the password."], "reply_received": "yes", "reply_truncated": false})
    );
    assert_eq!(
        e[2],
        json!({"command": "PORT", "command_data": "172,23,0,3,174,127", "command_truncated": false, "completion_code": ["200"],
               "reply": ["PORT command successful. Consider using PASV."], "dynamic_port": 44671, "mode": "active",
               "reply_received": "yes", "reply_truncated": false})
    );
    assert_eq!(
        e[3],
        json!({"command": "NLST", "completion_code": ["150", "226"], "reply": ["Here comes the directory listing.", "Directory send OK."],
               "reply_received": "yes", "reply_truncated": false})
    );
    assert_eq!(e[4], json!({"command": "QUIT", "reply_received": "no", "reply_truncated": false}));
    assert_eq!(p.txs().nth(3).unwrap().progress(ToClient), Progress::Complete);
    assert_eq!(p.txs().nth(4).unwrap().progress(ToClient), Progress::None);
}

#[test]
fn multi_line_replies_and_pipelined_commands_pair_in_order() {
    let p = run(
        &[
            (ToClient, "220-first line\r\n  indented\r\n220-more\r\n220 done\r\n"),
            (ToServer, "USER bob\r\nPASS x\r\n"),
            (ToClient, "331 pw\r\n"),
            (ToClient, "230-welcome\r\n230 ok\r\n"),
            (ToServer, "NOOP\r\n"),
            (ToClient, "200\r\n"),
            (ToClient, "421 unsolicited\n"),
        ],
        4096,
        None,
    );
    let e = eves(&p);
    assert_eq!(e[0]["reply"], json!(["220-first line", "  indented", "220-more", "done"]));
    assert_eq!(e[0]["completion_code"], json!(["220"]));
    assert_eq!((&e[1]["command"], &e[1]["reply"]), (&json!("USER"), &json!(["pw"])));
    assert_eq!((&e[2]["command"], &e[2]["reply"]), (&json!("PASS"), &json!(["230-welcome", "ok"])));
    assert_eq!(e[3]["reply"], json!(["200"]));
    assert!(e[3].get("completion_code").is_none(), "a code without text is not a completion code line");
    assert_eq!(e[4], json!({"completion_code": ["421"], "reply": ["unsolicited"], "reply_received": "yes", "reply_truncated": false}));
}

#[test]
fn unknown_commands_make_no_transaction() {
    let p = run(&[(ToServer, "FEAT\r\nAUTH TLS\r\nXCWD /pub\r\n"), (ToClient, "211 features\r\n")], 4096, None);
    let e = eves(&p);
    assert_eq!(e.len(), 1);
    assert_eq!((&e[0]["command"], &e[0]["command_data"]), (&json!("CWD"), &json!("/pub")));
}

#[test]
fn long_lines_are_cut_at_the_limit_with_an_event() {
    let long = format!("RETR {}\r\nRETR ok\r\n", "y".repeat(5000));
    let mut p = run(
        &[(ToClient, "220 hi\r\n"), (ToServer, "PASV\r\n"), (ToClient, &format!("227 {}\r\n", "z".repeat(5000))), (ToServer, &long)],
        4096,
        None,
    );
    let e = eves(&p);
    assert_eq!(e[1]["reply"][0].as_str().unwrap().len(), 4092);
    assert_eq!(e[1]["reply_truncated"], json!(true));
    assert_eq!(e[2]["command_data"].as_str().unwrap().len(), 4091);
    assert_eq!(e[2]["command_truncated"], json!(true));
    assert_eq!(e[3]["command_data"], json!("ok"));
    let mut events = Vec::new();
    p.drain_events(&mut events);
    let names: Vec<_> = events.iter().map(|e| (e.name, e.tx_id)).collect();
    assert!(names.contains(&("ftp.response_command_too_long", Some(1))), "{names:?}");
    assert!(names.contains(&("ftp.request_command_too_long", Some(2))), "{names:?}");
    // A line exactly at the limit is whole.
    let p = run(&[(ToServer, &format!("RETR {}\r\n", "y".repeat(4091)))], 4096, None);
    assert_eq!(eves(&p)[0]["command_truncated"], json!(false));
}

#[test]
fn transfers_announce_their_data_channel() {
    let mut p = run(
        &[
            (ToServer, "PASV\r\n"),
            (ToClient, "227 Entering Passive Mode (172,23,0,2,82,11).\r\n"),
            (ToServer, "STOR index.html\r\n"),
            (ToServer, "EPRT |1|198.18.0.1|2000|\r\n"),
            (ToServer, "RETR a b.txt\r\n"),
        ],
        4096,
        None,
    );
    let mut out: Vec<Expectation> = Vec::new();
    p.take_expectations(&mut out);
    assert_eq!(out.len(), 2);
    assert_eq!((out[0].from, out[0].port, out[0].proto.name), (ToServer, 21003, "ftp-data"));
    let stor = out[0].data.downcast_ref::<DataChannel>().unwrap();
    assert_eq!(stor, &DataChannel { command: "STOR", file_name: Some(b"index.html".to_vec()), file_dir: ToServer });
    assert_eq!((out[1].from, out[1].port), (ToClient, 2000));
    let retr = out[1].data.downcast_ref::<DataChannel>().unwrap();
    assert_eq!((retr.file_name.as_deref(), retr.file_dir), (Some(&b"a b.txt"[..]), ToServer));
    assert_eq!(eves(&p)[0]["mode"], json!("passive"));
}

#[test]
fn transfers_without_a_port_or_a_name_raise_events() {
    let mut p = run(&[(ToServer, "LIST\r\nRETR\r\nSTOU\r\n")], 4096, None);
    let mut events = Vec::new();
    p.drain_events(&mut events);
    let names: Vec<_> = events.iter().map(|e| (e.name, e.tx_id)).collect();
    assert_eq!(names, [("ftp.file_before_port", Some(0)), ("ftp.file_without_name", Some(1)), ("ftp.file_before_port", Some(2))]);
    let mut none = Vec::new();
    p.take_expectations(&mut none);
    assert!(none.is_empty());
}

#[test]
fn a_port_elsewhere_than_the_client_is_a_bounce() {
    let client: IpAddr = "198.18.0.1".parse().unwrap();
    let p = run(&[(ToServer, "PORT 198,18,0,1,4,1\r\nPORT 2,2,2,3,0,80\r\nPORT 1,2,3\r\n")], 4096, Some(client));
    let bounce: Vec<bool> = p.txs().map(|t| t.bounce).collect();
    assert_eq!(bounce, [false, true, false]);
    assert_eq!(eves(&p)[2]["mode"], json!("passive"), "a PORT that gave no port is not active");
}

#[test]
fn buffers_answer_each_line_and_code() {
    let p = run(&[(ToServer, "LIST\r\n"), (ToClient, "150 go\r\n226 done\r\n")], 4096, None);
    let tx = p.txs().next().unwrap();
    let b = |id: Buffer, dir, i| tx.buffer(dir, id as u8, i);
    assert_eq!(b(Buffer::Command, ToServer, 0), Some(&b"LIST"[..]));
    assert_eq!(b(Buffer::CommandData, ToServer, 0), None);
    assert_eq!((b(Buffer::Reply, ToClient, 0), b(Buffer::Reply, ToClient, 1)), (Some(&b"go"[..]), Some(&b"done"[..])));
    assert_eq!(b(Buffer::CompletionCode, ToClient, 1), Some(&b"226"[..]));
    assert_eq!(b(Buffer::CompletionCode, ToClient, 2), None);
}

#[test]
fn held_transactions_stay_within_max_tx() {
    let mut p = FtpParser::new(0, 4096, 4, None);
    for _ in 0..10 {
        ProtoParser::parse(&mut p, ToServer, b"NOOP\r\n");
    }
    assert_eq!((p.tx_count(), p.txs_evicted()), (4, 6));
}

#[test]
fn detection_as_suricata() {
    let p = |dir, d: &[u8], port| (PROTO.detection.probe)(dir, d, ProbeCx::tcp(40000, port));
    assert_eq!(p(ToServer, b"USER x\r\n", 4000), Probe::Match);
    assert_eq!(p(ToServer, b"FEAT\r\n", 4000), Probe::Match);
    assert_eq!(p(ToServer, b"US", 4000), Probe::NeedMore);
    assert_eq!(p(ToServer, b"user x\r\n", 21), Probe::NoMatch);
    assert_eq!(p(ToServer, b"SYST\r\n", 21), Probe::NoMatch);
    assert_eq!(p(ToClient, b"220 hi\r\n", 21), Probe::Match);
    assert_eq!(p(ToClient, b"220-hi\r\n", 21), Probe::Match);
    assert_eq!(p(ToClient, b"220\r\n", 21), Probe::NoMatch);
    assert_eq!(p(ToClient, b"220 hi\r\n", 2121), Probe::NoMatch);
}
