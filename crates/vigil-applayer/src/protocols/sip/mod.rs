//! SIP (RFC 3261) over UDP and TCP: each request and each response is a
//! transaction of its own, on the side it travelled (as Suricata 8 forms
//! them), with its start line, header fields (compact forms read as their
//! full names); EVE `sip` records and the `sip.*` keywords. Over
//! TCP messages are framed by `Content-Length`. An `application/sdp` body
//! is read ([`sdp`]): the `sdp` object of records, the `sdp.*` buffers.
//!
//! ```
//! use vigil_applayer::protocols::sip::PROTO;
//! use vigil_applayer::proto::{ParserInit, ProbeCx, Probe};
//! use vigil_applayer::{AppConfig, Transport};
//! use vigil_types::Direction::ToServer;
//!
//! let msg = b"REGISTER sip:example.com SIP/2.0\r\nFrom: <sip:a@example.com>\r\n\r\n";
//! assert_eq!((PROTO.detection.probe)(ToServer, msg, ProbeCx::udp(5060, 5060)), Probe::Match);
//! let app = AppConfig::default();
//! let init = ParserInit { app: &app, transport: Transport::Udp, first_tx_id: 0, options: 0, settings: &[], expected: None, client: None };
//! let mut p = (PROTO.new_parser)(&init);
//! p.parse(ToServer, msg);
//! assert_eq!(p.tx(0).unwrap().eve()["method"], "REGISTER");
//! ```

pub mod sdp;

use std::any::Any;

use serde_json::{Map, Value};
use vigil_types::Direction;

use crate::codecs::header_block_end;
use crate::config::Transport;
use crate::parser::{AppEvent, ParseResult};
use crate::progress::Progress;
use crate::proto::eve_text as text;
use crate::proto::{BufferDef, Detection, ParserInit, ProbeCx, Probe, ProtoDef, ProtoParser, ProtoTx, SettingDef, Sides, TxQueue};

/// The buffers, numbered for [`ProtoTx::buffer`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Buffer {
    Method = 0,
    Uri = 1,
    RequestLine = 2,
    StatCode = 3,
    StatMsg = 4,
    ResponseLine = 5,
    Protocol = 6,
    From = 7,
    To = 8,
    Via = 9,
    UserAgent = 10,
    ContentType = 11,
    ContentLength = 12,
}

impl Buffer {
    fn from_id(id: u8) -> Option<Buffer> {
        use Buffer::*;
        [Method, Uri, RequestLine, StatCode, StatMsg, ResponseLine, Protocol, From, To, Via, UserAgent, ContentType, ContentLength]
            .into_iter()
            .find(|b| *b as u8 == id)
    }

    /// The header field a buffer reads (full name, lower case).
    const fn header(self) -> Option<&'static [u8]> {
        Some(match self {
            Buffer::From => b"from",
            Buffer::To => b"to",
            Buffer::Via => b"via",
            Buffer::UserAgent => b"user-agent",
            Buffer::ContentType => b"content-type",
            Buffer::ContentLength => b"content-length",
            _ => return None,
        })
    }
}

/// RFC 3261 7.3.3's compact forms.
const COMPACT: &[(u8, &str)] = &[
    (b'i', "call-id"),
    (b'm', "contact"),
    (b'e', "content-encoding"),
    (b'l', "content-length"),
    (b'c', "content-type"),
    (b'f', "from"),
    (b's', "subject"),
    (b'k', "supported"),
    (b't', "to"),
    (b'v', "via"),
];

/// Header fields kept per message; later ones are dropped.
const MAX_HEADERS: usize = 128;
/// The largest message read whole (a datagram, or a TCP message with its body).
const MAX_MESSAGE: usize = 64 * 1024;

/// One message.
#[derive(Debug, Clone, Default)]
pub struct SipTx {
    id: u64,
    dir: Option<Direction>,
    /// `(method, uri, version)` of a request.
    pub request: Option<Parts>,
    /// `(version, code, reason)` of a response.
    pub response: Option<Parts>,
    pub start_line: Vec<u8>,
    /// Header fields, full names in lower case, values trimmed.
    pub headers: Vec<(Vec<u8>, Vec<u8>)>,
    /// Its SDP body.
    pub sdp: Option<Box<sdp::Sdp>>,
}

impl SipTx {
    fn direction(&self) -> Direction {
        self.dir.unwrap_or(Direction::ToServer)
    }

    fn header(&self, name: &[u8], index: usize) -> Option<&[u8]> {
        self.headers.iter().filter(|(n, _)| n == name).nth(index).map(|(_, v)| &v[..])
    }
}

impl ProtoTx for SipTx {
    fn id(&self) -> u64 {
        self.id
    }

    fn progress(&self, dir: Direction) -> Progress {
        if self.direction() == dir {
            Progress::Complete
        } else {
            Progress::None
        }
    }

    fn finished(&self) -> bool {
        true
    }

    fn buffer(&self, dir: Direction, id: u8, index: usize) -> Option<&[u8]> {
        if dir != self.direction() {
            return None;
        }
        fn one(b: &[u8], index: usize) -> Option<&[u8]> {
            (index == 0).then_some(b)
        }
        if let Some(sdp_id) = id.checked_sub(SDP_FIRST) {
            return self.sdp.as_ref()?.buffer(sdp_id, index);
        }
        let buffer = Buffer::from_id(id)?;
        if let Some(name) = buffer.header() {
            return self.header(name, index);
        }
        match (buffer, &self.request, &self.response) {
            (Buffer::Method, Some((m, _, _)), _) => one(m, index),
            (Buffer::Uri, Some((_, u, _)), _) => one(u, index),
            (Buffer::RequestLine, Some(_), _) => one(&self.start_line, index),
            (Buffer::Protocol, Some((_, _, v)), _) | (Buffer::Protocol, _, Some((v, _, _))) => one(v, index),
            (Buffer::StatCode, _, Some((_, c, _))) => one(c, index),
            (Buffer::StatMsg, _, Some((_, _, r))) => one(r, index),
            (Buffer::ResponseLine, _, Some(_)) => one(&self.start_line, index),
            _ => None,
        }
    }

    fn eve(&self) -> Value {
        let mut m = Map::new();
        if let Some((method, uri, version)) = &self.request {
            m.insert("method".into(), text(method));
            m.insert("uri".into(), text(uri));
            m.insert("version".into(), text(version));
            m.insert("request_line".into(), text(&self.start_line));
        }
        if let Some((version, code, reason)) = &self.response {
            m.insert("version".into(), text(version));
            m.insert("code".into(), text(code));
            m.insert("reason".into(), text(reason));
            m.insert("response_line".into(), text(&self.start_line));
        }
        // A request's body is logged; a response's is read for the `sdp.*`
        // keywords only, as Suricata 8.0.6 logs them (checked on realistic-a).
        if let Some(sdp) = self.sdp.as_ref().filter(|_| self.response.is_none()) {
            m.insert("sdp".into(), sdp.eve());
        }
        Value::Object(m)
    }

    fn record_dir(&self) -> Direction {
        self.direction()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

const METHODS: &[&[u8]] = &[
    b"INVITE", b"ACK", b"BYE", b"CANCEL", b"OPTIONS", b"REGISTER", b"PRACK", b"SUBSCRIBE", b"NOTIFY", b"PUBLISH",
    b"INFO", b"REFER", b"MESSAGE", b"UPDATE",
];

/// A start line's three parts.
type Parts = (Vec<u8>, Vec<u8>, Vec<u8>);

/// A message's start line: a request's or a response's.
fn start_line(line: &[u8]) -> Option<(Option<Parts>, Option<Parts>)> {
    let mut parts = line.splitn(3, |&c| c == b' ');
    let (a, b, c) = (parts.next()?, parts.next()?, parts.next().unwrap_or_default());
    if a.starts_with(b"SIP/") {
        if b.len() != 3 || !b.iter().all(u8::is_ascii_digit) {
            return None;
        }
        return Some((None, Some((a.to_vec(), b.to_vec(), c.to_vec()))));
    }
    if METHODS.contains(&a) && c.starts_with(b"SIP/") {
        return Some((Some((a.to_vec(), b.to_vec(), c.to_vec())), None));
    }
    None
}

/// Splits a message: its transaction, and its length when whole (`None`:
/// more is needed; `Some(Err)`: not SIP).
fn message(data: &[u8], stream: bool) -> Option<Result<(SipTx, usize), ()>> {
    let head_end = header_block_end(data).map(|(len, blank)| (len, len + blank));
    let Some((head_len, body_at)) = head_end else {
        // A datagram is whole: no blank line means no body.
        return if stream { if data.len() > MAX_MESSAGE { Some(Err(())) } else { None } } else { message_head(data, data.len()) };
    };
    let Some(Ok((tx, _))) = message_head(&data[..head_len], head_len) else { return Some(Err(())) };
    let len: usize = tx
        .header(b"content-length", 0)
        .and_then(|v| std::str::from_utf8(v).ok()?.trim().parse().ok())
        .unwrap_or(if stream { 0 } else { data.len() - body_at });
    if stream && data.len() < body_at + len {
        return if body_at + len > MAX_MESSAGE { Some(Err(())) } else { None };
    }
    let mut tx = tx;
    let end = if stream { body_at + len } else { data.len() };
    let is_sdp = tx.header(b"content-type", 0).is_some_and(|t| {
        let t = t.split(|&c| c == b';').next().unwrap_or_default().trim_ascii();
        t.eq_ignore_ascii_case(b"application/sdp")
    });
    if is_sdp {
        tx.sdp = data.get(body_at..end).and_then(sdp::parse).map(Box::new);
    }
    Some(Ok((tx, end)))
}

fn message_head(head: &[u8], consumed: usize) -> Option<Result<(SipTx, usize), ()>> {
    let mut lines = head.split(|&c| c == b'\n').map(|l| l.strip_suffix(b"\r").unwrap_or(l));
    let first = lines.next()?;
    let Some((request, response)) = start_line(first) else { return Some(Err(())) };
    let mut tx = SipTx { request, response, start_line: first.to_vec(), ..SipTx::default() };
    for line in lines {
        if line.is_empty() {
            break;
        }
        if matches!(line[0], b' ' | b'\t') {
            if let Some((_, v)) = tx.headers.last_mut() {
                v.push(b' ');
                v.extend_from_slice(line.trim_ascii());
            }
            continue;
        }
        let Some(colon) = line.iter().position(|&c| c == b':') else { continue };
        if tx.headers.len() >= MAX_HEADERS {
            continue;
        }
        let name = line[..colon].trim_ascii().to_ascii_lowercase();
        let name = match &name[..] {
            [c] => COMPACT.iter().find(|(k, _)| k == c).map_or(name.clone(), |(_, full)| full.as_bytes().to_vec()),
            _ => name,
        };
        tx.headers.push((name, line[colon + 1..].trim_ascii().to_vec()));
    }
    Some(Ok((tx, consumed)))
}

#[derive(Debug)]
pub struct SipParser {
    txs: TxQueue<SipTx>,
    stream: bool,
    frames: crate::frames::FrameLog,
}

impl SipParser {
    fn push(&mut self, tx: SipTx, dir: Direction) -> u64 {
        let at = self.txs.push_with(|id| SipTx { id, dir: Some(dir), ..tx });
        self.txs[at].id
    }

    /// The frames of message `msg`, at `at` of the data offered: the whole
    /// message, its start line, its header fields (up to the last one's
    /// line end) and its body, each of a request or of a response.
    fn mark_frames(&mut self, dir: Direction, at: usize, msg: &[u8], tx: u64) {
        if !self.frames.is_on() {
            return;
        }
        let tx = Some(tx);
        self.frames.add(dir, at, Some(msg.len() as u64), 0, tx);
        let first = if msg.starts_with(b"SIP/2.0 ") { 4 } else { 1 };
        let Some(line) = msg.iter().position(|&b| b == b'\n').map(|p| p + 1) else { return };
        self.frames.add(dir, at, Some(line as u64), first, tx);
        let end = msg.windows(4).position(|w| w == b"\r\n\r\n").map(|p| (p + 2, p + 4));
        let (head_end, body) = end.unwrap_or((msg.len(), msg.len()));
        if head_end > line {
            self.frames.add(dir, at + line, Some((head_end - line) as u64), first + 1, tx);
        }
        if body < msg.len() {
            self.frames.add(dir, at + body, Some((msg.len() - body) as u64), first + 2, tx);
        }
    }
}

impl ProtoParser for SipParser {
    fn parse(&mut self, dir: Direction, data: &[u8]) -> ParseResult {
        if !self.stream {
            return match message(data, false) {
                // Requests go to the server and responses to the client: the
                // other way round, Suricata's SIP parser reads neither.
                Some(Ok(_)) if !fits(dir, data) => ParseResult::Error,
                Some(Ok((tx, _))) => {
                    let id = self.push(tx, dir);
                    self.mark_frames(dir, 0, data, id);
                    ParseResult::Done
                }
                _ => ParseResult::Error,
            };
        }
        let mut at = 0;
        while at < data.len() {
            // Blank lines between messages (keep-alives) are skipped.
            if matches!(data[at], b'\r' | b'\n') {
                at += 1;
                continue;
            }
            match message(&data[at..], true) {
                Some(Ok(_)) if !fits(dir, &data[at..]) => return ParseResult::Error,
                Some(Ok((tx, len))) => {
                    let id = self.push(tx, dir);
                    let end = (at + len).min(data.len());
                    self.mark_frames(dir, at, &data[at..end], id);
                    at += len.max(1);
                }
                Some(Err(())) => return ParseResult::Error,
                None => return ParseResult::Incomplete { consumed: at, needed: 1 },
            }
        }
        ParseResult::Done
    }

    fn on_gap(&mut self, _dir: Direction, _len: u64) -> bool {
        // A stream cannot find the next message's start after a hole.
        !self.stream
    }

    fn close(&mut self, _dir: Direction, _held: &[u8]) {}

    crate::proto::delegate_txs!(txs);

    fn prune(&mut self, id: u64) {
        self.txs.prune_while(id, |_| true);
    }

    fn drain_events(&mut self, _out: &mut Vec<AppEvent>) {}

    fn take_frames(&mut self, out: &mut Vec<crate::frames::Mark>) -> u8 {
        self.frames.drain(out);
        self.frames.tx_base()
    }
}

/// `app-layer.protocols.sip.*`.
pub const SETTINGS: &[SettingDef] = &[SettingDef { key: "max-tx", default: 1024, size: false }];

fn new_parser(init: &ParserInit) -> Box<dyn ProtoParser> {
    Box::new(SipParser {
        txs: TxQueue::new(init.first_tx_id, init.setting(&PROTO, 0).clamp(1, 1 << 16) as usize),
        stream: init.transport == Transport::Tcp,
        frames: crate::frames::FrameLog::counted_from_one(init.app.frames),
    })
}

/// Whether message `msg` goes the way its kind does: a response to the
/// client, a request to the server.
fn fits(dir: Direction, msg: &[u8]) -> bool {
    msg.starts_with(b"SIP/2.0 ") == (dir == Direction::ToClient)
}

/// A request line of a SIP method, or a status line.
fn probe(_dir: Direction, data: &[u8], _cx: ProbeCx) -> Probe {
    // Suricata takes bytes opening with a SIP method's name (upper case)
    // for SIP, whatever follows (UPnP's `NOTIFY * HTTP/1.1` included); the
    // two HTTP shares, OPTIONS and UPDATE, only with a SIP start line.
    if METHODS.iter().any(|m| !matches!(*m, b"OPTIONS" | b"UPDATE") && data.starts_with(m)) {
        return Probe::Match;
    }
    let line_end = data.iter().position(|&c| c == b'\n');
    let line = &data[..line_end.unwrap_or(data.len())];
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line_end.is_none() {
        // Could it still become one?
        let starts = METHODS.iter().any(|m| {
            let n = line.len().min(m.len());
            line[..n] == m[..n]
        }) || b"SIP/2.0 ".starts_with(&line[..line.len().min(8)]);
        return if starts && data.len() < 256 { Probe::NeedMore } else { Probe::NoMatch };
    }
    if start_line(line).is_some() {
        Probe::Match
    } else {
        Probe::NoMatch
    }
}

fn sample() -> Vec<(Direction, Vec<u8>)> {
    let msg = |t: &str| t.as_bytes().to_vec();
    vec![
        (
            Direction::ToServer,
            msg("INVITE sip:bob@example.com SIP/2.0\r\nVia: SIP/2.0/UDP 198.18.0.1:5060\r\nf: <sip:alice@example.com>\r\n\
t: <sip:bob@example.com>\r\nUser-Agent: vigil-test\r\nContent-Type: application/sdp\r\nContent-Length: 4\r\n\r\nv=0\n"),
        ),
        (Direction::ToClient, msg("SIP/2.0 180 Ringing\r\nVia: SIP/2.0/UDP 198.18.0.1:5060\r\nContent-Length: 0\r\n\r\n")),
    ]
}

/// A buffer of a message; a header field's holds each occurrence of it
/// (compact forms included), any of which may match.
const fn buffer(name: &'static str, id: Buffer, sides: Sides) -> BufferDef {
    let default = match sides {
        Sides::ToClient => Direction::ToClient,
        Sides::ToServer | Sides::Both => Direction::ToServer,
    };
    let both_ways = matches!(sides, Sides::Both);
    let multi = id.header().is_some();
    BufferDef { name, id: id as u8, sides, default, both_ways, need: Progress::Complete, multi }
}

/// The number of the first `sdp.*` buffer ([`sdp::BUFFERS`] follow in order).
const SDP_FIRST: u8 = 13;

const fn sdp_buffer(i: usize) -> BufferDef {
    let (name, multi) = sdp::BUFFERS[i];
    BufferDef {
        name,
        id: SDP_FIRST + i as u8,
        sides: Sides::Both,
        default: Direction::ToServer,
        both_ways: true,
        need: Progress::Complete,
        multi,
    }
}

pub static PROTO: ProtoDef = ProtoDef {
    name: "sip",
    eve_name: None,
    detection: Detection { tcp: true, udp: true, ports: &[5060], ports_only: false, probe, counters_by_transport: true, answers_first: None },
    new_parser,
    buffers: &[
        buffer("sip.method", Buffer::Method, Sides::ToServer),
        buffer("sip.uri", Buffer::Uri, Sides::ToServer),
        buffer("sip.request_line", Buffer::RequestLine, Sides::ToServer),
        buffer("sip.stat_code", Buffer::StatCode, Sides::ToClient),
        buffer("sip.stat_msg", Buffer::StatMsg, Sides::ToClient),
        buffer("sip.response_line", Buffer::ResponseLine, Sides::ToClient),
        buffer("sip.protocol", Buffer::Protocol, Sides::Both),
        buffer("sip.from", Buffer::From, Sides::Both),
        buffer("sip.to", Buffer::To, Sides::Both),
        buffer("sip.via", Buffer::Via, Sides::Both),
        buffer("sip.user_agent", Buffer::UserAgent, Sides::Both),
        buffer("sip.content_type", Buffer::ContentType, Sides::Both),
        buffer("sip.content_length", Buffer::ContentLength, Sides::Both),
        sdp_buffer(0),
        sdp_buffer(1),
        sdp_buffer(2),
        sdp_buffer(3),
        sdp_buffer(4),
        sdp_buffer(5),
        sdp_buffer(6),
        sdp_buffer(7),
        sdp_buffer(8),
        sdp_buffer(9),
        sdp_buffer(10),
        sdp_buffer(11),
        sdp_buffer(12),
        sdp_buffer(13),
        sdp_buffer(14),
        sdp_buffer(15),
        sdp_buffer(16),
    ],
    checks: &[],
    events: &[],
    event: crate::proto::no_other_events,
    options: &[],
    settings: SETTINGS,
    sample,
    sample_expected: None,
    files: false,
    transactions: true,
    aliases: &[],
    includes: &[],
    borrows: &[],
    base_need: crate::proto::HEADERS_BOTH,
    hooks: crate::proto::Hooks::GENERIC,
    off_by_default: false,
    stream_depth: None,
    frames: &["pdu", "request.line", "request.headers", "request.body", "response.line", "response.headers", "response.body"],
};

#[cfg(test)]
mod tests {
    use super::*;
    use vigil_types::Direction::{ToClient, ToServer};

    #[test]
    fn a_sip_method_opening_the_bytes_is_sip_except_those_http_shares() {
        let cx = ProbeCx::tcp(40000, 2869);
        let p = |d: &[u8]| probe(ToServer, d, cx);
        // UPnP's eventing is SIP to Suricata, whatever version follows.
        assert_eq!(p(b"NOTIFY /upnp/x HTTP/1.1\r\n"), Probe::Match);
        assert_eq!(p(b"BYE\r\n"), Probe::Match);
        assert_eq!(p(b"notify /x HTTP/1.1\r\n"), Probe::NoMatch);
        assert_eq!(p(b"OPTIONS /x HTTP/1.1\r\n"), Probe::NoMatch);
        assert_eq!(p(b"UPDATE /x HTTP/1.1\r\n"), Probe::NoMatch);
        assert_eq!(p(b"OPTIONS sip:a SIP/2.0\r\n"), Probe::Match);
    }

    #[test]
    fn requests_and_responses_are_transactions_of_their_side() {
        let mut p = new_parser(&ParserInit {
            app: &crate::AppConfig::default(),
            transport: Transport::Tcp,
            first_tx_id: 0,
            options: 0,
            settings: &[],
            expected: None,
            client: None,
        });
        let conv = sample();
        // Over TCP, cut anywhere, two messages in one chunk.
        let all: Vec<u8> = conv[0].1.iter().chain(conv[0].1.iter()).copied().collect();
        crate::proto::kit::feed(p.as_mut(), ToServer, &all, 7);
        p.parse(ToClient, &conv[1].1);
        assert_eq!(p.tx_count(), 3);
        let invite = p.tx(0).unwrap();
        let b = |tx: &dyn ProtoTx, dir, id: Buffer| tx.buffer(dir, id as u8, 0).map(|v| String::from_utf8_lossy(v).into_owned());
        assert_eq!(b(invite, ToServer, Buffer::Method).as_deref(), Some("INVITE"));
        assert_eq!(b(invite, ToServer, Buffer::From).as_deref(), Some("<sip:alice@example.com>"), "compact form");
        assert_eq!(b(invite, ToClient, Buffer::From), None, "a request is the client's side");
        let ringing = p.tx(2).unwrap();
        assert_eq!(b(ringing, ToClient, Buffer::StatCode).as_deref(), Some("180"));
        assert_eq!(b(ringing, ToClient, Buffer::Protocol).as_deref(), Some("SIP/2.0"));
        assert_eq!(
            ringing.eve(),
            serde_json::json!({"version": "SIP/2.0", "code": "180", "reason": "Ringing", "response_line": "SIP/2.0 180 Ringing"})
        );
        assert_eq!(invite.eve()["request_line"], "INVITE sip:bob@example.com SIP/2.0");
    }

    #[test]
    fn what_is_not_sip_is_refused() {
        assert_eq!(probe(ToServer, b"GET / HTTP/1.1\r\n", ProbeCx::udp(1, 5060)), Probe::NoMatch);
        assert_eq!(probe(ToServer, b"REGIS", ProbeCx::udp(1, 5060)), Probe::NeedMore);
        assert_eq!(probe(ToClient, b"SIP/2.0 200 OK\r\n", ProbeCx::udp(1, 5060)), Probe::Match);
        assert!(matches!(message(b"HELLO\r\n\r\n", false), Some(Err(()))));
    }
}
