//! One SMTP transaction: a mail (MAIL FROM to the end of its data, or to
//! RSET, QUIT, a new HELO), or the commands between mails; with the
//! message's MIME reading when it had data.

use std::any::Any;

use md5::{Digest, Md5};
use serde_json::{Map, Value};
use vigil_types::Direction;

use super::Buffer;
use crate::codecs::mime::Mime;
use crate::files::File;
use crate::progress::Progress;
use crate::proto::eve_text as text;
use crate::proto::ProtoTx;

#[derive(Debug, Default)]
pub struct SmtpTx {
    pub(super) id: u64,
    pub helo: Option<Vec<u8>>,
    pub mail_from: Option<Vec<u8>>,
    pub rcpt_to: Vec<Vec<u8>>,
    /// DATA or BDAT was sent: the message was (or would have been) read.
    pub data: bool,
    /// The message, as far as it came.
    pub(super) mime: Option<Box<Mime>>,
    pub(super) files: Vec<File>,
    /// Its message ended; it is done once the server answers.
    pub(super) ended: bool,
    /// RSET was sent: it is done once the server answers.
    pub(super) reset: bool,
    /// Nothing more will be added.
    pub done: bool,
    /// The server answered DATA with 354 (or the client sent BDAT): the
    /// answer's side is in its `response_data` state.
    pub(super) go_ahead: bool,
    /// MAIL FROM commands it had (a firewall evaluates its request side
    /// again at each).
    pub(super) envelopes: u64,
    /// The body's MD5 so far (`body-md5`), over its lines as sent.
    pub(super) body_md5: Option<Md5>,
    pub(super) events: u64,
}

impl SmtpTx {
    pub fn mime(&self) -> Option<&Mime> {
        self.mime.as_deref()
    }

    /// The `email` object Suricata logs beside `smtp` once a message was
    /// sent, with the `custom` header fields and the digests an output
    /// asks for.
    fn email(&self, opts: crate::proto::SiblingOptions<'_>) -> Option<Value> {
        let custom = opts.custom;
        // Without MIME reading (`decode-mime: no`) there is nothing to say.
        if !self.data || self.mime.is_none() {
            return None;
        }
        let mut m = Map::new();
        if let Some(mime) = self.mime() {
            if let Some(from) = mime.header(b"from") {
                m.insert("from".into(), text(from));
            }
            for key in ["to", "cc"] {
                let list: Vec<Value> = mime.header(key.as_bytes()).map(addresses).unwrap_or_default().into_iter().map(text).collect();
                if !list.is_empty() {
                    m.insert(key.into(), Value::Array(list));
                }
            }
        }
        m.insert("status".into(), "PARSE_DONE".into());
        if !self.files.is_empty() {
            m.insert("attachment".into(), self.files.iter().map(|f| text(&f.name)).collect());
        }
        let asked = |f: &str| custom.is_some_and(|c| c.iter().any(|x| x == f));
        // A custom list names every field beyond the usual ones, URLs included.
        if let Some(mime) = self.mime().filter(|m| !m.urls().is_empty() && (custom.is_none() || asked("url"))) {
            // Last found first, as Suricata lists them.
            m.insert("url".into(), mime.urls().iter().rev().map(|u| text(u)).collect());
        }
        if let Some(mime) = self.mime().filter(|_| custom.is_some()) {
            for field in CUSTOM_FIELDS.iter().filter(|f| asked(f)) {
                let key = field.replace('-', "_");
                if *field == "received" {
                    let all: Vec<Value> = mime.headers(b"received").map(text).collect();
                    if !all.is_empty() {
                        m.insert(key, Value::Array(all));
                    }
                } else if let Some(v) = mime.header(field.as_bytes()) {
                    m.insert(key, text(v));
                }
            }
        }
        let md5 = |what: &str| opts.md5.iter().any(|x| x == what);
        if let Some(subject) = self.mime().and_then(|m| m.header(b"subject")).filter(|_| md5("subject")) {
            m.insert("subject_md5".into(), crate::files::hex(&Md5::digest(subject)).into());
        }
        // Only a body read to its end has one.
        if let Some(h) = self.body_md5.as_ref().filter(|_| md5("body") && self.ended) {
            m.insert("body_md5".into(), crate::files::hex(&h.clone().finalize()).into());
        }
        Some(Value::Object(m))
    }
}

/// The header fields an output may add to `email` (`custom`), in the order
/// Suricata writes them.
const CUSTOM_FIELDS: &[&str] = &[
    "reply-to",
    "bcc",
    "message-id",
    "subject",
    "x-mailer",
    "user-agent",
    "received",
    "x-originating-ip",
    "in-reply-to",
    "references",
    "importance",
    "priority",
    "sensitivity",
    "organization",
    "content-md5",
    "date",
];

/// The addresses of a `To` or `Cc` value: split at the commas outside
/// quotes and angle brackets, each trimmed.
pub fn addresses(value: &[u8]) -> Vec<&[u8]> {
    let (mut out, mut start, mut quoted, mut angle) = (Vec::new(), 0, false, false);
    for (i, &c) in value.iter().enumerate() {
        match c {
            b'"' => quoted = !quoted,
            b'<' if !quoted => angle = true,
            b'>' if !quoted => angle = false,
            b',' if !quoted && !angle => {
                out.push(value[start..i].trim_ascii());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(value[start..].trim_ascii());
    out.retain(|a| !a.is_empty());
    out
}

impl ProtoTx for SmtpTx {
    fn id(&self) -> u64 {
        self.id
    }

    fn events(&self) -> u64 {
        self.events
    }

    /// The client's side has its headers once its message's header block
    /// was read (or it ended): the `email.*` fields are final. Both sides
    /// are whole when the mail is done (the server answered its message):
    /// the envelope, the URLs and the files are then, and it is logged.
    fn progress(&self, dir: Direction) -> Progress {
        match dir {
            _ if self.done => Progress::Complete,
            Direction::ToServer if self.ended || self.mime.as_ref().is_some_and(|m| m.headers_done()) => {
                Progress::Headers
            }
            _ => Progress::None,
        }
    }

    /// Suricata 8.0.7's states: a side is at `request_started` or
    /// `response_started` until DATA (or BDAT) and the 354; in
    /// `request_data`/`response_data` until the message ends and is
    /// answered. A mail given up before its message (RSET, QUIT, a new
    /// HELO) never reaches the data states, nor the complete ones.
    fn hook_state(&self, dir: Direction) -> Option<u8> {
        Some(match dir {
            Direction::ToServer if self.data && self.ended => 2,
            Direction::ToServer if self.data => 1,
            Direction::ToClient if self.data && self.done => 2,
            Direction::ToClient if self.go_ahead => 1,
            _ => 0,
        })
    }

    fn updates(&self, dir: Direction) -> Option<u64> {
        (dir == Direction::ToServer).then_some(self.envelopes)
    }

    fn buffer(&self, dir: Direction, id: u8, index: usize) -> Option<&[u8]> {
        if dir != Direction::ToServer {
            return None;
        }
        fn one(b: Option<&[u8]>, index: usize) -> Option<&[u8]> {
            b.filter(|_| index == 0)
        }
        let header = |name: &[u8]| one(self.mime().and_then(|m| m.header(name)), index);
        match Buffer::from_id(id)? {
            Buffer::Helo => one(self.helo.as_deref(), index),
            Buffer::MailFrom => one(self.mail_from.as_deref(), index),
            Buffer::RcptTo => self.rcpt_to.get(index).map(Vec::as_slice),
            Buffer::From => header(b"from"),
            Buffer::To => header(b"to"),
            Buffer::Cc => header(b"cc"),
            Buffer::Subject => header(b"subject"),
            Buffer::Date => header(b"date"),
            Buffer::MessageId => header(b"message-id"),
            Buffer::XMailer => header(b"x-mailer"),
            Buffer::Url => self.mime().and_then(|m| m.urls().get(index)).map(Vec::as_slice),
            Buffer::Received => self.mime().and_then(|m| m.headers(b"received").nth(index)),
        }
    }

    fn eve(&self) -> Value {
        let mut m = Map::new();
        if let Some(h) = &self.helo {
            m.insert("helo".into(), text(h));
        }
        if let Some(f) = &self.mail_from {
            m.insert("mail_from".into(), text(f));
        }
        if !self.rcpt_to.is_empty() {
            m.insert("rcpt_to".into(), self.rcpt_to.iter().map(|r| text(r)).collect());
        }
        Value::Object(m)
    }

    fn eve_siblings(&self, opts: crate::proto::SiblingOptions<'_>) -> Vec<(&'static str, Value)> {
        self.email(opts).map(|e| vec![("email", e)]).unwrap_or_default()
    }

    fn files(&self, dir: Direction) -> &[File] {
        match dir {
            Direction::ToServer => &self.files,
            Direction::ToClient => &[],
        }
    }

    fn file_size(&self, dir: Direction) -> Option<(u64, bool)> {
        let f = self.files(dir).first()?;
        self.done.then_some((f.size, !f.gaps))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
