//! SMTP (RFC 5321) with its messages read as MIME: the commands and
//! replies of a session, each mail a transaction, the message's header
//! fields, URLs and attachments (files), EVE `smtp` records with the
//! `email` object beside, Suricata 8's `smtp.*` and `email.*` keywords and
//! its SMTP and MIME events; STARTTLS hands the flow to TLS.
//!
//! Detection follows Suricata's: a client opening with `EHLO`, `HELO` or
//! `QUIT` (any case) on any port, a server's `220` greeting on ports 25
//! and 465 (SMTP over TLS: a client that opens with a TLS hello there
//! makes a flow of TLS to the server and SMTP back, as Suricata names it).
//!
//! ```
//! use vigil_applayer::protocols::smtp::PROTO;
//! use vigil_applayer::proto::{ParserInit, ProbeCx, Probe};
//! use vigil_applayer::{AppConfig, Transport};
//! use vigil_types::Direction::{ToClient, ToServer};
//!
//! assert_eq!((PROTO.detection.probe)(ToServer, b"ehlo client\r\n", ProbeCx::tcp(40000, 2525)), Probe::Match);
//! let app = AppConfig::default();
//! let init = ParserInit { app: &app, transport: Transport::Tcp, first_tx_id: 0, options: 0, settings: &[], expected: None, client: None };
//! let mut p = (PROTO.new_parser)(&init);
//! p.parse(ToClient, b"220 mx ESMTP\r\n");
//! p.parse(ToServer, b"EHLO client\r\nMAIL FROM:<a@x.org>\r\nRCPT TO:<b@y.org>\r\nDATA\r\n");
//! p.parse(ToServer, b"Subject: hi\r\n\r\nhello\r\n.\r\n");
//! let eve = p.tx(0).unwrap().eve();
//! assert_eq!(eve, serde_json::json!({"helo": "client", "mail_from": "<a@x.org>", "rcpt_to": ["<b@y.org>"]}));
//! ```

mod parser;
#[cfg(test)]
mod tests;
mod tx;

use crate::progress::Progress;
use crate::proto::{BufferDef, Detection, ParserInit, ProbeCx, Probe, ProtoDef, ProtoParser, SettingDef, Sides};
use vigil_types::{Direction, PerDir};

pub use parser::SmtpParser;
pub use tx::{addresses, SmtpTx};

/// The buffers, numbered for [`crate::proto::ProtoTx::buffer`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Buffer {
    /// `smtp.helo`: the HELO or EHLO name.
    Helo = 0,
    /// `smtp.mail_from`: what follows `MAIL FROM:`.
    MailFrom = 1,
    /// `smtp.rcpt_to`: what follows each `RCPT TO:`.
    RcptTo = 2,
    /// `email.from` and the other message header fields, as sent (unfolded).
    From = 3,
    To = 4,
    Cc = 5,
    Subject = 6,
    Date = 7,
    MessageId = 8,
    XMailer = 9,
    /// `email.url`: each URL of the text parts, as logged.
    Url = 10,
    /// `email.received`: each `Received` field.
    Received = 11,
}

impl Buffer {
    fn from_id(id: u8) -> Option<Buffer> {
        use Buffer::*;
        [Helo, MailFrom, RcptTo, From, To, Cc, Subject, Date, MessageId, XMailer, Url, Received]
            .into_iter()
            .find(|b| *b as u8 == id)
    }
}

/// A buffer of the client's side, final once the side reached `need`.
const fn buffer(name: &'static str, id: Buffer, need: Progress, multi: bool) -> BufferDef {
    BufferDef { name, id: id as u8, sides: Sides::ToServer, default: Direction::ToServer, both_ways: false, need, multi }
}

/// Suricata's SMTP events, its MIME decoder's among them.
pub const EVENTS: &[&str] = &[
    "invalid_reply",
    "unable_to_match_reply_with_request",
    "max_command_line_len_exceeded",
    "max_reply_line_len_exceeded",
    "invalid_pipelined_sequence",
    "bdat_chunk_len_exceeded",
    "no_server_welcome_message",
    "tls_rejected",
    "data_command_rejected",
    "failed_protocol_change",
    "mime_parse_failed",
    "mime_malformed_msg",
    "mime_invalid_base64",
    "mime_invalid_qp",
    "mime_long_line",
    "mime_long_enc_line",
    "mime_long_header_name",
    "mime_long_header_value",
    "mime_long_boundary",
    "mime_long_filename",
    "duplicate_fields",
    "unparsable_content",
    "truncated_data",
    "truncated_line",
    "invalid_bdat",
];

/// `app-layer.protocols.smtp.*`, in [`ParserInit::setting`]'s order.
pub const SETTINGS: &[SettingDef] = &[SettingDef { key: "max-tx", default: 256, size: false }];

fn probe(dir: Direction, data: &[u8], cx: ProbeCx) -> Probe {
    let openings: &[&[u8]] = match dir {
        Direction::ToServer => &[b"EHLO", b"HELO", b"QUIT"],
        Direction::ToClient if cx.has(25) || cx.has(465) => &[b"220 ", b"220-"],
        Direction::ToClient => return Probe::NoMatch,
    };
    crate::proto::probe_openings(data, openings, true)
}

fn new_parser(init: &ParserInit) -> Box<dyn ProtoParser> {
    let max_tx = init.setting(&PROTO, 0).min(1 << 16) as usize;
    let mime = &init.app.smtp_mime;
    let reader = mime.decode_mime.then(|| mime.reader.clone());
    let mut p = SmtpParser::new(init.first_tx_id, max_tx, reader, init.app.http.files);
    p.raw_extraction = mime.raw_extraction && !mime.decode_mime;
    p.frames = crate::frames::FrameLog::new(init.app.frames);
    Box::new(p)
}

/// A session with one mail carrying a text part and an attachment.
fn sample() -> Vec<(Direction, Vec<u8>)> {
    let s = |t: &str| (Direction::ToServer, t.as_bytes().to_vec());
    let c = |t: &str| (Direction::ToClient, t.as_bytes().to_vec());
    vec![
        c("220 mx.example ESMTP\r\n"),
        s("EHLO client.example\r\n"),
        c("250-mx.example\r\n250 PIPELINING\r\n"),
        s("MAIL FROM:<a@example.org>\r\nRCPT TO:<b@example.net>\r\nDATA\r\n"),
        c("250 ok\r\n250 ok\r\n354 go ahead\r\n"),
        s("From: A <a@example.org>\r\nTo: b@example.net\r\nSubject: report\r\n\
MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n--b1\r\n\
Content-Type: text/plain\r\n\r\nsee http://example.com/r\r\n..dot-stuffed\r\n--b1\r\n\
Content-Disposition: attachment; filename=\"r.txt\"\r\nContent-Transfer-Encoding: base64\r\n\r\n\
cmVwb3J0\r\n--b1--\r\n.\r\n"),
        c("250 queued\r\n"),
        s("QUIT\r\n"),
        c("221 bye\r\n"),
    ]
}

pub static PROTO: ProtoDef = ProtoDef {
    name: "smtp",
    eve_name: None,
    detection: Detection { tcp: true, udp: false, ports: &[25, 465], ports_only: false, probe, counters_by_transport: false, answers_first: None },
    new_parser,
    buffers: &[
        buffer("smtp.helo", Buffer::Helo, Progress::Complete, false),
        buffer("smtp.mail_from", Buffer::MailFrom, Progress::Complete, false),
        buffer("smtp.rcpt_to", Buffer::RcptTo, Progress::Complete, true),
        buffer("email.from", Buffer::From, Progress::Headers, false),
        buffer("email.to", Buffer::To, Progress::Headers, false),
        buffer("email.cc", Buffer::Cc, Progress::Headers, false),
        buffer("email.subject", Buffer::Subject, Progress::Headers, false),
        buffer("email.date", Buffer::Date, Progress::Headers, false),
        buffer("email.message_id", Buffer::MessageId, Progress::Headers, false),
        buffer("email.x_mailer", Buffer::XMailer, Progress::Headers, false),
        buffer("email.url", Buffer::Url, Progress::Complete, true),
        buffer("email.received", Buffer::Received, Progress::Headers, true),
    ],
    checks: &[],
    events: EVENTS,
    event: crate::proto::no_other_events,
    options: &[],
    settings: SETTINGS,
    sample,
    sample_expected: None,
    files: true,
    transactions: true,
    aliases: &[],
    includes: &[],
    borrows: &[],
    base_need: PerDir { to_server: Progress::Headers, to_client: Progress::Complete },
    hooks: crate::proto::Hooks {
        to_server: &["request_started", "request_data", "request_complete"],
        to_client: &["response_started", "response_data", "response_complete"],
    },
    off_by_default: false,
    stream_depth: None,
    frames: &["command_line", "data", "response_line"],
};
