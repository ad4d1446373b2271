//! The SMTP parser against sessions whose records the reference Suricata
//! 8.0.6 wrote.

use md5::Digest;
use serde_json::json;
use vigil_types::Direction::{self, ToClient, ToServer};

use super::*;
use crate::codecs::mime::MimeConfig;
use crate::proto::ProtoTx;

fn run(conv: &[(Direction, &str)]) -> SmtpParser {
    let mut p = SmtpParser::new(0, 256, Some(MimeConfig::default()), crate::files::FileConfig::default());
    for (dir, text) in conv {
        ProtoParser::parse(&mut p, *dir, text.as_bytes());
    }
    p
}

const MAIL: &str = "From: A <a@x.org>\r\nTo: b@y.org, \"C, D\" <c@y.org>\r\nCc: e@z.org\r\nSubject: hi there\r\n\
Content-Type: multipart/mixed; boundary=\"BB\"\r\n\r\npreamble\r\n--BB\r\nContent-Type: text/plain\r\n\r\n\
see http://example.com/a and https://ex.org/b?c\r\n--BB\r\nContent-Type: application/octet-stream; name=\"f.bin\"\r\n\
Content-Disposition: attachment; filename=\"f.bin\"\r\nContent-Transfer-Encoding: base64\r\n\r\naGVsbG8gd29ybGQ=\r\n--BB--\r\n.\r\n";

#[test]
fn mails_rset_and_quit_make_transactions_as_suricata_logs_them() {
    let p = run(&[
        (ToClient, "220 mx ESMTP\r\n"),
        (ToServer, "EHLO client.example\r\n"),
        (ToClient, "250-mx\r\n250 PIPELINING\r\n"),
        (ToServer, "MAIL FROM:<a@x.org>\r\n"),
        (ToClient, "250 ok\r\n"),
        (ToServer, "RCPT TO:<b@y.org>\r\nRCPT TO:<c@y.org>\r\nDATA\r\n"),
        (ToClient, "250 ok\r\n250 ok\r\n354 go\r\n"),
        (ToServer, MAIL),
        (ToClient, "250 queued\r\n"),
        (ToServer, "MAIL FROM:<z@x.org>\r\nRSET\r\n"),
        (ToClient, "250 ok\r\n250 ok\r\n"),
        (ToServer, "NOOP\r\nQUIT\r\n"),
        (ToClient, "250 ok\r\n221 bye\r\n"),
    ]);
    let txs: Vec<&SmtpTx> = p.txs().collect();
    assert_eq!(txs.len(), 3);
    assert_eq!(txs[0].eve(), json!({"helo": "client.example", "mail_from": "<a@x.org>", "rcpt_to": ["<b@y.org>", "<c@y.org>"]}));
    assert_eq!(
        txs[0].eve_siblings(Default::default()),
        vec![(
            "email",
            json!({"from": "A <a@x.org>", "to": ["b@y.org", "\"C, D\" <c@y.org>"], "cc": ["e@z.org"], "status": "PARSE_DONE",
                   "attachment": ["f.bin"], "url": ["example.com/a"]})
        )]
    );
    assert_eq!(txs[0].files(ToServer)[0].size, 11);
    assert_eq!(txs[1].eve(), json!({"helo": "client.example", "mail_from": "<z@x.org>"}));
    assert_eq!(txs[2].eve(), json!({"helo": "client.example"}));
    assert!(txs.iter().all(|t| t.done));
    let b = |id: Buffer, i| txs[0].buffer(ToServer, id as u8, i);
    assert_eq!(b(Buffer::Subject, 0), Some(&b"hi there"[..]));
    assert_eq!(b(Buffer::RcptTo, 1), Some(&b"<c@y.org>"[..]));
    assert_eq!(b(Buffer::Url, 0), Some(&b"example.com/a"[..]));
}

#[test]
fn a_refused_data_goes_back_to_commands() {
    let mut p = run(&[
        (ToClient, "220 mx\r\n"),
        (ToServer, "EHLO h3\r\nMAIL FROM:<r@x.org>\r\nRCPT TO:<s@y.org>\r\nDATA\r\n"),
        (ToClient, "250 mx\r\n250 ok\r\n550 no\r\n554 no valid recipients\r\n"),
        (ToServer, "QUIT\r\n"),
        (ToClient, "221 bye\r\n"),
    ]);
    let mut events = Vec::new();
    p.drain_events(&mut events);
    assert_eq!(events.iter().map(|e| e.name).collect::<Vec<_>>(), ["smtp.data_command_rejected"]);
    let txs: Vec<&SmtpTx> = p.txs().collect();
    assert_eq!(txs.len(), 1);
    assert_eq!(txs[0].eve_siblings(Default::default())[0].1, json!({"status": "PARSE_DONE"}));
    assert!(txs[0].done, "QUIT was read as a command");
}

#[test]
fn starttls_accepted_hands_the_rest_over() {
    let mut p = run(&[(ToClient, "220 mx\r\n"), (ToServer, "EHLO h4\r\nSTARTTLS\r\n"), (ToClient, "250 mx\r\n")]);
    assert_eq!(ProtoParser::parse(&mut p, ToClient, b"220 go ahead\r\n\x16\x03\x01"), crate::ParseResult::Incomplete { consumed: 14, needed: 1 });
    assert!(p.tunnel());
}

#[test]
fn bdat_chunks_carry_the_message() {
    let p = run(&[
        (ToClient, "220 mx\r\n"),
        (ToServer, "EHLO h\r\nMAIL FROM:<a@x>\r\nRCPT TO:<b@y>\r\nBDAT 21\r\nSubject: one\r\n\r\nab"),
        (ToServer, "c\r\nBDAT 5 LAST\r\nd\r\nef"),
        (ToClient, "250 mx\r\n250 ok\r\n250 ok\r\n250 21 bytes\r\n"),
    ]);
    assert!(!p.txs().next().unwrap().done, "the last chunk is not answered yet");
    let mut p = p;
    ProtoParser::parse(&mut p, ToClient, b"250 queued\r\n");
    ProtoParser::parse(&mut p, ToServer, b"QUIT\r\n");
    let txs: Vec<&SmtpTx> = p.txs().collect();
    assert_eq!(txs.len(), 1, "QUIT after a finished mail opens none");
    assert_eq!(txs[0].mime().and_then(|m| m.header(b"subject")), Some(&b"one"[..]));
    assert!(txs[0].done);
}

#[test]
fn long_command_lines_are_cut_with_an_event() {
    let mut p = run(&[(ToServer, &format!("EHLO {}\r\nQUIT\r\n", "x".repeat(5000)))]);
    let mut events = Vec::new();
    p.drain_events(&mut events);
    assert!(events.iter().any(|e| e.name == "smtp.truncated_line"));
    assert_eq!(p.txs().next().unwrap().helo.as_ref().map(Vec::len), Some(MAX_LINE_FOR_TEST - 5));
}

const MAX_LINE_FOR_TEST: usize = parser::MAX_COMMAND_LINE;

#[test]
fn addresses_split_outside_quotes() {
    assert_eq!(addresses(b"b@y.org, \"C, D\" <c@y.org>,,"), vec![&b"b@y.org"[..], b"\"C, D\" <c@y.org>"]);
    assert_eq!(addresses(b"<a,b@x>"), vec![&b"<a,b@x>"[..]]);
}

#[test]
fn detection_as_suricata() {
    let p = |dir, d: &[u8], port| (PROTO.detection.probe)(dir, d, ProbeCx::tcp(40000, port));
    assert_eq!(p(ToServer, b"ehlo x\r\n", 2525), Probe::Match);
    assert_eq!(p(ToServer, b"QUIT\r\n", 2525), Probe::Match);
    assert_eq!(p(ToServer, b"EH", 2525), Probe::NeedMore);
    assert_eq!(p(ToServer, b"MAIL FROM:<a@b>\r\n", 25), Probe::NoMatch);
    assert_eq!(p(ToClient, b"220 mx\r\n", 25), Probe::Match);
    assert_eq!(p(ToClient, b"220 mx\r\n", 2525), Probe::NoMatch);
}

#[test]
fn a_message_cut_by_the_end_of_the_stream_leaves_its_attachment_unfinished() {
    let files = crate::files::FileConfig { sha256: true, md5: true, ..crate::files::FileConfig::default() };
    let mut p = SmtpParser::new(0, 256, Some(MimeConfig::default()), files);
    for (dir, text) in [
        (ToClient, "220 mx ESMTP\r\n"),
        (ToServer, "EHLO c\r\nMAIL FROM:<a@x.org>\r\nRCPT TO:<b@y.org>\r\nDATA\r\n"),
        (ToClient, "250 mx\r\n250 ok\r\n250 ok\r\n354 go\r\n"),
        // The stream ends inside a line of the attachment.
        (ToServer, "Content-Disposition: attachment; filename=\"f.bin\"\r\nContent-Transfer-Encoding: base64\r\n\r\naGVsbG8g\r\nd29y"),
    ] {
        ProtoParser::parse(&mut p, dir, text.as_bytes());
    }
    ProtoParser::close(&mut p, ToServer, b"");
    ProtoParser::close(&mut p, ToClient, b"");
    let tx = p.txs().next().unwrap();
    let f = &tx.files(ToServer)[0];
    // The unfinished line is read as far as it came ("wor"), and the file
    // is truncated without digests, as Suricata leaves a file its flow's
    // end finds open.
    assert_eq!((f.size, f.state), (9, crate::files::FileState::Truncated));
    assert_eq!((f.hashes.md5, f.hashes.sha256), (None, None));
}

/// A mail whose body has a dot-stuffed line and bare LF line ends.
const STUFFED: [(Direction, &str); 4] = [
    (ToServer, "EHLO c\r\nMAIL FROM:<a@x.org>\r\nRCPT TO:<b@y.org>\r\nDATA\r\n"),
    (ToClient, "220 mx\r\n250 mx\r\n250 ok\r\n250 ok\r\n354 go\r\n"),
    (ToServer, "Subject: sums\r\n\r\nline one\r\n..dotted\nbare lf\r\n.\r\n"),
    (ToClient, "250 queued\r\n"),
];

#[test]
fn the_body_md5_is_over_the_body_as_sent() {
    let mime = MimeConfig { body_md5: true, ..MimeConfig::default() };
    let mut p = SmtpParser::new(0, 256, Some(mime), crate::files::FileConfig::default());
    for (dir, text) in STUFFED {
        ProtoParser::parse(&mut p, dir, text.as_bytes());
    }
    let tx = p.txs().next().unwrap();
    let md5 = ["body".to_string(), "subject".to_string()];
    let email = &tx.eve_siblings(crate::proto::SiblingOptions { custom: None, md5: &md5 })[0].1;
    // The lines after the header block, the stuffing dot and each line's
    // own end kept, as Suricata's digest is taken.
    let body = crate::files::hex(&md5::Md5::digest(b"line one\r\n..dotted\nbare lf\r\n"));
    assert_eq!(email["body_md5"], json!(body));
    assert_eq!(email["subject_md5"], json!(crate::files::hex(&md5::Md5::digest(b"sums"))));
    // Not asked for, not written.
    assert!(tx.eve_siblings(Default::default())[0].1.get("body_md5").is_none());
}

#[test]
fn raw_extraction_makes_the_message_a_file() {
    let mut p = SmtpParser::new(0, 256, None, crate::files::FileConfig::default());
    p.raw_extraction = true;
    for (dir, text) in STUFFED {
        ProtoParser::parse(&mut p, dir, text.as_bytes());
    }
    let tx = p.txs().next().unwrap();
    let f = &tx.files(ToServer)[0];
    assert_eq!((&f.name[..], f.state), (&b"rawmsg"[..], crate::files::FileState::Closed));
    assert_eq!(f.size, "Subject: sums\r\n\r\nline one\r\n..dotted\nbare lf\r\n".len() as u64);
    // Without MIME reading, no `email` object, as Suricata.
    assert!(tx.eve_siblings(Default::default()).is_empty());
}

#[test]
fn a_command_whose_line_end_does_not_fit_is_cut() {
    // "HELO " and a name that leaves room for the CR but not the LF: the
    // line is cut at 4,096 bytes, its CR kept, as Suricata cuts it.
    let name = "x".repeat(parser::MAX_COMMAND_LINE - 6);
    let helo = format!("HELO {name}\r\nMAIL FROM:<a@x.org>\r\n");
    let mut p = run(&[(ToClient, "220 mx\r\n"), (ToServer, &helo), (ToClient, "250 mx\r\n250 ok\r\n")]);
    let tx = p.txs().next().unwrap();
    assert_eq!(tx.helo.as_deref(), Some(format!("{name}\r").as_bytes()));
    assert_eq!(tx.mail_from.as_deref(), Some(&b"<a@x.org>"[..]));
    let mut events = Vec::new();
    p.drain_events(&mut events);
    let names: Vec<&str> = events.iter().map(|e| e.name).collect();
    assert_eq!(names, ["smtp.truncated_line"]);
    // One byte shorter, it fits.
    let name = "x".repeat(parser::MAX_COMMAND_LINE - 7);
    let p = run(&[(ToServer, &format!("HELO {name}\r\n"))]);
    assert_eq!(p.txs().next().unwrap().helo.as_deref(), Some(name.as_bytes()));
}

#[test]
fn a_greeting_is_smtp_on_ports_25_and_465() {
    use crate::proto::{Probe, ProbeCx};
    let greet = |port| (PROTO.detection.probe)(ToClient, b"220 mx ESMTP\r\n", ProbeCx::tcp(40000, port));
    assert_eq!((greet(25), greet(465)), (Probe::Match, Probe::Match));
    assert_eq!((greet(587), greet(2525)), (Probe::NoMatch, Probe::NoMatch));
}
