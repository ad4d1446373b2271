//! HTTP/2 in the clear (RFC 9113), on any port, from the client's
//! connection preface (prior knowledge): frames read from each side's
//! stream, header blocks put back together across CONTINUATION frames and
//! decoded with each side's HPACK table (loona-hpack; the dynamic table
//! bounded at 64 KiB whatever the peer announces, a bigger size update
//! counted as `http2.header_integer_overflow` and the side's headers no
//! longer readable), each stream a transaction (closed by END_STREAM both
//! ways; a RST_STREAM ends nothing), and each frame of stream 0 but a
//! SETTINGS acknowledgement one of its own, as Suricata forms them.
//!
//! Records are EVE `http` with version `2`, the header lists and the
//! `http2` object (stream id, each side's settings, error code, priority).
//! Rules for `http` (and `http2`) see its streams through HTTP's buffers
//! (`http.uri` is `:path`, `http.host` the authority, `http.header` the
//! fields that are no pseudo-headers, `http.stat_msg` empty, ...), plus
//! `http2.header_name` and `http2.header`.
//!
//! An HTTP/1 upgrade to `h2c` the server accepts hands the flow over at
//! once ([`H2cUpgrade`]): the upgrading request is stream 1's, its
//! `HTTP2-Settings` a SETTINGS of stream 0, as Suricata forms them.
//!
//! The value keywords `http2.frametype`, `http2.errorcode`,
//! `http2.priority`, `http2.window`, `http2.size_update` and
//! `http2.settings` (in `checks.rs`).
//!
//! Each side's body is a file of the shared service (unnamed, as Suricata
//! 8's), decoded where its Content-Encoding says gzip, deflate or brotli
//! (HTTP/1's bounded decoder; brotli capped at the same limit), closed at
//! its END_STREAM, cut short by the flow's end.
//!
//! DNS over HTTPS (RFC 8484, where `doh2` is enabled): a request's `dns`
//! query variable, or a side's body whose content type is
//! `application/dns-message`, is that side's DNS message
//! ([`crate::protocols::dns::CarriedDns`]), and the flow goes by `doh2`
//! from then on (see that protocol's folder).
//!
//! Not yet: Range requests put back together.

mod body;
mod checks;
pub mod frame;
pub mod tx;

use vigil_types::Direction;

use crate::files::{File, FileConfig};
use crate::parser::{AppEvent, ParseResult};
use body::BodyDecoder;
use crate::progress::Progress;
use crate::proto::{BufferDef, Detection, ParserInit, ProbeCx, Probe, ProtoDef, ProtoParser, ProtoTx, SettingDef, Sides, TxQueue};
use frame::Header;
use tx::DnsBody;
pub use tx::{Http2Stream, Http2Tx};

/// The HTTP/1 request of an `h2c` upgrade the server accepted (RFC 7540
/// 3.2): stream 1's request, and its `HTTP2-Settings` the client's first settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct H2cUpgrade {
    pub method: Vec<u8>,
    pub uri: Vec<u8>,
    pub headers: Vec<(Vec<u8>, Vec<u8>)>,
}

/// A base64url value (padding optional), as `HTTP2-Settings` carries it.
fn base64url(v: &[u8]) -> Option<Vec<u8>> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'-' | b'+' => Some(62),
        b'_' | b'/' => Some(63),
        _ => None,
    };
    let mut out = Vec::with_capacity(v.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for &c in v.iter().filter(|c| !c.is_ascii_whitespace() && **c != b'=') {
        acc = (acc << 6) | u32::from(val(c)?);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}

/// The DNS message of a request's `dns` query variable (RFC 8484 4.1:
/// base64url without padding).
fn dns_variable(path: &[u8]) -> Option<Vec<u8>> {
    let query = &path[path.iter().position(|&c| c == b'?')? + 1..];
    let value = query.split(|&c| c == b'&').find_map(|kv| kv.strip_prefix(b"dns="))?;
    base64url(value).filter(|m| !m.is_empty())
}

/// Suricata's HTTP/2 events this parser raises.
pub const EVENTS: &[&str] = &[
    "invalid_frame_header",
    "invalid_client_magic",
    "invalid_frame_data",
    "invalid_header",
    "invalid_frame_length",
    "extra_header_data",
    "long_frame_data",
    "stream_id_reuse",
    "invalid_http1_settings",
    "failed_decompression",
    "invalid_range",
    "header_integer_overflow",
    "too_many_streams",
    "authority_host_mismatch",
    "userinfo_in_uri",
    "reassembly_limit_reached",
    "dns_request_too_long",
    "dns_response_too_long",
    "data_stream_reuse",
];
const INVALID_CLIENT_MAGIC: usize = 1;
const INVALID_HEADER: usize = 3;
const INVALID_FRAME_LENGTH: usize = 4;
const LONG_FRAME_DATA: usize = 6;
const FAILED_DECOMPRESSION: usize = 9;
const HEADER_INTEGER_OVERFLOW: usize = 11;
const TOO_MANY_STREAMS: usize = 12;
const INVALID_HTTP1_SETTINGS: usize = 8;
const AUTHORITY_HOST_MISMATCH: usize = 13;
const USERINFO_IN_URI: usize = 14;
const REASSEMBLY_LIMIT_REACHED: usize = 15;
const DNS_REQUEST_TOO_LONG: usize = 16;
const DNS_RESPONSE_TOO_LONG: usize = 17;

/// The largest dynamic table a side may have, whatever the settings say.
const MAX_TABLE: usize = 64 * 1024;
/// The largest frame other than DATA held whole; longer ones are skipped.
const MAX_FRAME: usize = 128 * 1024;
/// The largest header block put together from CONTINUATION frames.
const MAX_BLOCK: usize = 256 * 1024;
/// The decoded field bytes and fields kept of a side of a stream.
const MAX_HEADER_BYTES: usize = 256 * 1024;
const MAX_FIELDS: usize = 1024;
/// Bodies decoded at once on a flow; past it the oldest is given up.
const MAX_DECODERS: usize = 64;
/// Bodies kept as DNS messages at once on a flow (each up to 64 KiB).
const MAX_DNS_BODIES: usize = 16;

/// A header block waiting for its CONTINUATION frames.
#[derive(Debug)]
struct Pending {
    stream: u32,
    block: Vec<u8>,
    end_stream: bool,
    promised: Option<u32>,
}

/// What one side's stream is in the middle of.
struct Dir {
    hpack: loona_hpack::Decoder<'static>,
    /// The decoder failed: the table is out of step and no later block can be read.
    hpack_broken: bool,
    pending: Option<Pending>,
    /// Bytes of a DATA frame still to come: (stream, left, end_stream).
    data: Option<(u32, usize, bool)>,
    /// Bytes of an over-long frame, or of a DATA frame's padding, still to skip.
    skip: usize,
    /// The padding that follows the DATA frame being read.
    skip_after: usize,
}

impl std::fmt::Debug for Dir {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dir").field("hpack_broken", &self.hpack_broken).finish_non_exhaustive()
    }
}

impl Dir {
    fn new() -> Dir {
        let mut hpack = loona_hpack::Decoder::new();
        hpack.set_max_allowed_table_size(MAX_TABLE);
        Dir { hpack, hpack_broken: false, pending: None, data: None, skip: 0, skip_after: 0 }
    }
}

#[derive(Debug)]
pub struct Http2Parser {
    frames: crate::frames::FrameLog,
    txs: TxQueue<Http2Tx>,
    dirs: [Dir; 2],
    preface_done: bool,
    body_limit: usize,
    events: Vec<AppEvent>,
    files: FileConfig,
    /// Bodies being decoded: (stream, side, decoder).
    decoders: Vec<(u32, usize, BodyDecoder)>,
    decompress_limit: u64,
    decompress_ratio: u64,
    /// DNS over HTTPS is looked for (`doh2` is enabled).
    doh: bool,
    /// A stream carried DNS: the flow is `doh2` from now on.
    renamed: bool,
}

impl std::fmt::Debug for BodyDecoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BodyDecoder")
    }
}

fn side(dir: Direction) -> usize {
    usize::from(dir == Direction::ToClient)
}

fn event_name(i: usize) -> &'static str {
    const NAMES: [&str; 19] = [
        "http2.invalid_frame_header",
        "http2.invalid_client_magic",
        "http2.invalid_frame_data",
        "http2.invalid_header",
        "http2.invalid_frame_length",
        "http2.extra_header_data",
        "http2.long_frame_data",
        "http2.stream_id_reuse",
        "http2.invalid_http1_settings",
        "http2.failed_decompression",
        "http2.invalid_range",
        "http2.header_integer_overflow",
        "http2.too_many_streams",
        "http2.authority_host_mismatch",
        "http2.userinfo_in_uri",
        "http2.reassembly_limit_reached",
        "http2.dns_request_too_long",
        "http2.dns_response_too_long",
        "http2.data_stream_reuse",
    ];
    NAMES[i]
}

impl Http2Parser {
    fn raise(&mut self, stream: Option<u32>, i: usize) {
        let tx_id = stream.and_then(|s| self.find(s)).map(|k| {
            let t = &mut self.txs[k];
            t.events |= 1 << i;
            t.id
        });
        self.events.push(AppEvent { name: event_name(i), tx_id });
    }

    /// The place of the newest transaction of `stream`.
    fn find(&self, stream: u32) -> Option<usize> {
        (0..self.txs.len()).rev().find(|&i| self.txs[i].stream == stream)
    }

    /// The transaction of `stream`, made if it has none (a late frame on a
    /// stream whose transaction was logged and freed makes a new one, as
    /// in Suricata: a RST_STREAM after the end is a record of its own).
    fn stream_tx(&mut self, stream: u32) -> Option<usize> {
        if let Some(i) = self.find(stream) {
            return Some(i);
        }
        let before = self.txs.len();
        self.txs.push_with(|id| Http2Tx::new(id, stream));
        if self.txs.len() <= before {
            // The queue was full and dropped its oldest.
            self.raise(None, TOO_MANY_STREAMS);
        }
        Some(self.txs.len() - 1)
    }

    /// A new transaction of stream 0, whole at once: each frame of stream 0
    /// but a SETTINGS acknowledgement is one, as Suricata forms them (only
    /// SETTINGS and GOAWAY ones have something to log).
    fn stream0_tx(&mut self, fill: impl FnOnce(&mut Http2Tx)) {
        self.txs.push_with(|id| {
            let mut t = Http2Tx::new(id, 0);
            fill(&mut t);
            t.sides.to_server.done = true;
            t.sides.to_client.done = true;
            t
        });
    }

    /// A frame of type `kind` on stream 0 from side `dir`: its transaction.
    fn open0(&mut self, dir: Direction, kind: u8) {
        self.stream0_tx(|t| {
            if kind <= frame::CONTINUATION {
                t.side_mut(dir).frame_types |= 1 << kind;
            }
        });
    }

    /// The transaction a frame of stream 0 just opened.
    fn global(&mut self, h: &Header) -> Option<&mut Http2Tx> {
        let last = self.txs.len().checked_sub(1)?;
        Some(&mut self.txs[last]).filter(|t| h.stream == 0 && t.stream == 0)
    }

    /// Takes over from HTTP/1 after an `h2c` upgrade: the client's settings
    /// from `HTTP2-Settings`, and its request as stream 1, whole.
    fn upgraded(&mut self, up: &H2cUpgrade) {
        let settings = up.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(b"http2-settings"));
        match settings.map(|(_, v)| base64url(v)) {
            Some(Some(payload)) => {
                let list = frame::settings(&payload);
                self.stream0_tx(|t| t.sides.to_server.settings = list);
            }
            Some(None) => self.raise(None, INVALID_HTTP1_SETTINGS),
            None => {}
        }
        let mut fields = vec![(b":method".to_vec(), up.method.clone()), (b":path".to_vec(), up.uri.clone())];
        for (n, v) in &up.headers {
            if n.eq_ignore_ascii_case(b"host") {
                fields.insert(2, (b":authority".to_vec(), v.clone()));
            } else if !n.eq_ignore_ascii_case(b"http2-settings") {
                fields.push((n.clone(), v.clone()));
            }
        }
        let Some(i) = self.stream_tx(1) else { return };
        let t = &mut self.txs[i];
        t.sides.to_server.add_headers(Vec::new(), fields);
        t.sides.to_server.done = true;
        t.headers_changed();
    }

    fn header_block(&mut self, dir: Direction, p: Pending) {
        let d = side(dir);
        if self.dirs[d].hpack_broken {
            return;
        }
        let (updates, _) = frame::size_updates(&p.block);
        // Every field is decoded, so the table stays in step, but only so
        // many bytes of them are kept: indexed references make a small
        // block decode to gigabytes.
        let mut fields = Vec::new();
        let mut kept = 0usize;
        let mut cut = false;
        let res = self.dirs[d].hpack.decode_with_cb(&p.block, |n, v| {
            kept += n.len() + v.len();
            if kept <= MAX_HEADER_BYTES && fields.len() < MAX_FIELDS {
                fields.push((n.into_owned(), v.into_owned()));
            } else {
                cut = true;
            }
        });
        if cut {
            self.raise(Some(p.stream), REASSEMBLY_LIMIT_REACHED);
        }
        if let Err(e) = res {
            self.dirs[d].hpack_broken = true;
            let ev = match e {
                loona_hpack::decoder::DecoderError::InvalidMaxDynamicSize => HEADER_INTEGER_OVERFLOW,
                _ => FAILED_DECOMPRESSION,
            };
            self.raise(Some(p.stream), ev);
            return;
        }
        // A promise's headers are the request of the promised stream.
        let (stream, tdir) = match p.promised {
            Some(s) => (s, Direction::ToServer),
            None => (p.stream, dir),
        };
        let Some(i) = self.stream_tx(stream) else { return };
        let t = &mut self.txs[i];
        let side = t.side_mut(tdir);
        if side.header_bytes() + fields.iter().map(|(n, v)| n.len() + v.len()).sum::<usize>() > MAX_HEADER_BYTES
            || side.headers.len() + fields.len() > MAX_FIELDS
        {
            self.raise(Some(stream), REASSEMBLY_LIMIT_REACHED);
        } else {
            side.add_headers(updates, fields);
            self.txs[i].headers_changed();
            if self.doh {
                self.doh_headers(i, tdir);
            }
        }
        if p.end_stream && p.promised.is_none() {
            self.side_ended(i, dir);
        }
        let t = &self.txs[i];
        if tdir == Direction::ToServer {
            let (userinfo, mismatch) = t.authority_checks();
            if userinfo {
                self.raise(Some(stream), USERINFO_IN_URI);
            }
            if mismatch {
                self.raise(Some(stream), AUTHORITY_HOST_MISMATCH);
            }
        }
    }

    /// DNS over HTTPS (RFC 8484), once side `dir` of transaction `i` has
    /// its headers: a side whose content type is `application/dns-message`
    /// has its body kept as a DNS message, and a request's `dns` query
    /// variable is the message itself.
    fn doh_headers(&mut self, i: usize, dir: Direction) {
        let wants = {
            let side = self.txs[i].sides.get(dir);
            side.dns_body == DnsBody::No && side.carries_dns()
        };
        if wants {
            // Each side held may grow to a whole DNS message: a flow holds
            // so many at once, the others' bodies are not taken as DNS.
            let collecting = |s: &tx::Side| matches!(s.dns_body, DnsBody::Collecting(_));
            let held = self.txs.iter().map(|t| usize::from(collecting(&t.sides.to_server)) + usize::from(collecting(&t.sides.to_client))).sum::<usize>();
            if held < MAX_DNS_BODIES {
                self.txs[i].side_mut(dir).dns_body = DnsBody::Collecting(Vec::new());
            } else {
                let stream = self.txs[i].stream;
                self.raise(Some(stream), REASSEMBLY_LIMIT_REACHED);
            }
        }
        let t = &mut self.txs[i];
        if dir != Direction::ToServer || t.dns().is_some_and(|d| d.side(dir).is_some()) {
            return;
        }
        if let Some(msg) = t.req().get(b":path").and_then(dns_variable) {
            if t.take_dns(dir, &msg) {
                self.renamed = true;
            }
        }
    }

    /// Notes a frame's type on the stream's side it came from, after the
    /// frame made the stream's transaction (stream 0's are noted as each
    /// opens its own, [`Self::open0`]).
    fn frame_kind(&mut self, dir: Direction, h: &Header) {
        if h.kind > frame::CONTINUATION || h.stream == 0 {
            return;
        }
        if let Some(i) = self.find(h.stream) {
            self.txs[i].side_mut(dir).frame_types |= 1 << h.kind;
        }
    }

    fn frame(&mut self, dir: Direction, h: Header, payload: &[u8]) {
        let d = side(dir);
        // A SETTINGS acknowledgement is no transaction (Suricata's tx ids
        // and keyword matches count none).
        if h.stream == 0 && !(h.kind == frame::SETTINGS && h.flags & frame::FLAG_ACK != 0) {
            self.open0(dir, h.kind);
        }
        match h.kind {
            frame::HEADERS | frame::PUSH_PROMISE => {
                let Some((block, weight, promised)) = frame::block_fragment(&h, payload) else {
                    self.raise(Some(h.stream), INVALID_FRAME_LENGTH);
                    return;
                };
                if let Some((w, i)) = weight.and_then(|w| Some((w, self.stream_tx(h.stream)?))) {
                    self.txs[i].side_mut(dir).add_priority(w);
                }
                if self.dirs[d].pending.take().is_some() {
                    // A block left without its CONTINUATION: the table cannot follow.
                    self.dirs[d].hpack_broken = true;
                    self.raise(Some(h.stream), INVALID_HEADER);
                }
                let end_stream = h.kind == frame::HEADERS && h.flags & frame::FLAG_END_STREAM != 0;
                let p = Pending { stream: h.stream, block, end_stream, promised };
                if h.flags & frame::FLAG_END_HEADERS != 0 {
                    self.header_block(dir, p);
                } else {
                    self.dirs[d].pending = Some(p);
                }
            }
            frame::CONTINUATION => {
                let Some(mut p) = self.dirs[d].pending.take() else { return };
                if p.stream != h.stream {
                    self.dirs[d].hpack_broken = true;
                    self.raise(Some(h.stream), INVALID_HEADER);
                    return;
                }
                if p.block.len() + payload.len() > MAX_BLOCK {
                    self.raise(Some(p.stream), REASSEMBLY_LIMIT_REACHED);
                    // The table cannot follow a block it did not read.
                    self.dirs[d].hpack_broken = true;
                    return;
                }
                p.block.extend_from_slice(payload);
                if h.flags & frame::FLAG_END_HEADERS != 0 {
                    self.header_block(dir, p);
                } else {
                    self.dirs[d].pending = Some(p);
                }
            }
            frame::SETTINGS if h.flags & frame::FLAG_ACK == 0 => {
                let list = frame::settings(payload);
                if let Some(t) = self.global(&h) {
                    t.side_mut(dir).settings = list;
                }
            }
            frame::RST_STREAM => {
                let Some(c) = payload.get(..4) else { return };
                let code = u32::from_be_bytes([c[0], c[1], c[2], c[3]]);
                // The stream stays open: what the peer had already sent
                // still comes, and ends it (as in Suricata, whose streams
                // close only with END_STREAM both ways).
                let Some(i) = self.stream_tx(h.stream) else { return };
                self.txs[i].side_mut(dir).add_error_code(code);
            }
            frame::GOAWAY => {
                let Some(c) = payload.get(4..8) else { return };
                let code = u32::from_be_bytes([c[0], c[1], c[2], c[3]]);
                if let Some(t) = self.global(&h) {
                    let s = t.side_mut(dir);
                    s.add_error_code(code);
                    s.goaway = true;
                }
            }
            frame::PRIORITY => {
                if let (Some(&w), true) = (payload.get(4), h.stream != 0) {
                    if let Some(i) = self.stream_tx(h.stream) {
                        self.txs[i].side_mut(dir).add_priority(w);
                    }
                }
            }
            frame::WINDOW_UPDATE => {
                let Some(c) = payload.get(..4) else { return };
                let window = Some(u32::from_be_bytes([c[0], c[1], c[2], c[3]]) & 0x7fff_ffff);
                if h.stream == 0 {
                    if let Some(t) = self.global(&h) {
                        t.side_mut(dir).window = window;
                    }
                } else if let Some(i) = self.find(h.stream) {
                    self.txs[i].side_mut(dir).window = window;
                }
            }
            _ => {}
        }
        self.frame_kind(dir, &h);
    }

    /// Body bytes of a DATA frame: the side's inspection window and its
    /// file (opened at the first bytes), both
    /// decoded where the side's Content-Encoding says gzip or deflate.
    fn data(&mut self, dir: Direction, stream: u32, bytes: &[u8], end: bool) {
        let d = side(dir);
        let Some(i) = self.find(stream) else { return };
        if !bytes.is_empty() && self.txs[i].sides.get(dir).files.is_empty() {
            let t = &self.txs[i];
            let enc = t.sides.get(dir).get(b"content-encoding");
            if let Some(dec) = enc.and_then(|e| BodyDecoder::for_encoding(e, self.decompress_limit, self.decompress_ratio)) {
                if self.decoders.len() == MAX_DECODERS {
                    self.decoders.remove(0);
                }
                self.decoders.push((stream, d, dec));
            }
            // Unnamed, as Suricata 8's HTTP/2 files are; an answer's part
            // of a larger file is put together with the other parts.
            let part = if dir == Direction::ToClient { t.range_part() } else { None };
            let file = match part {
                Some(p) => File::open_range(Vec::new(), p, &self.files),
                None => File::open(Vec::new(), 0, &self.files),
            };
            self.txs[i].side_mut(dir).files.push(file);
        }
        let (limit, cfg) = (self.body_limit, self.files);
        let k = self.decoders.iter().position(|x| x.0 == stream && x.1 == d);
        let s = self.txs[i].side_mut(dir);
        let collecting = matches!(s.dns_body, DnsBody::Collecting(_));
        let mut take = |out: &[u8]| s.take_body(out, limit, &cfg);
        let mut failed = false;
        match k {
            Some(k) => failed = !self.decoders[k].2.feed(bytes, &mut take),
            None => take(bytes),
        }
        if collecting && self.txs[i].sides.get(dir).dns_body == DnsBody::TooLong {
            let ev = if dir == Direction::ToServer { DNS_REQUEST_TOO_LONG } else { DNS_RESPONSE_TOO_LONG };
            self.raise(Some(stream), ev);
        }
        if end {
            self.side_ended(i, dir);
        }
        if failed {
            self.raise(Some(stream), FAILED_DECOMPRESSION);
        }
    }

    /// Side `dir` of transaction `i` ended (END_STREAM on DATA or on
    /// trailers): what its decoder holds is flushed, its file closed.
    fn side_ended(&mut self, i: usize, dir: Direction) {
        let (d, stream, cfg, limit) = (side(dir), self.txs[i].stream, self.files, self.body_limit);
        let s = self.txs[i].side_mut(dir);
        if let Some(k) = self.decoders.iter().position(|x| x.0 == stream && x.1 == d) {
            let (_, _, mut dec) = self.decoders.swap_remove(k);
            dec.finish(&mut |out: &[u8]| s.take_body(out, limit, &cfg));
        }
        if let Some(f) = s.files.first_mut() {
            f.close();
        }
        s.done = true;
        if let DnsBody::Collecting(msg) = std::mem::replace(&mut s.dns_body, DnsBody::Ended) {
            if !msg.is_empty() && self.txs[i].take_dns(dir, &msg) {
                self.renamed = true;
            }
        }
    }

    /// Files still open on side `dir` end here, cut short.
    fn truncate_files(&mut self, dir: Direction) {
        for i in 0..self.txs.len() {
            for f in self.txs[i].side_mut(dir).files.iter_mut().filter(|f| f.is_open()) {
                f.truncate();
            }
        }
    }
}

impl ProtoParser for Http2Parser {
    fn parse(&mut self, dir: Direction, data: &[u8]) -> ParseResult {
        let d = side(dir);
        let mut at = 0;
        if dir == Direction::ToServer && !self.preface_done {
            let n = data.len().min(frame::PREFACE.len());
            if data[..n] != frame::PREFACE[..n] {
                if data.len() < frame::HEADER_LEN {
                    // Whether this is a frame is known at its ninth byte.
                    return ParseResult::Incomplete { consumed: 0, needed: frame::HEADER_LEN - data.len() };
                }
                // Picked up after the preface: frames from here.
                self.preface_done = true;
                if !data.is_empty() && frame::header(data).is_none_or(|h| h.kind > frame::CONTINUATION) {
                    self.raise(None, INVALID_CLIENT_MAGIC);
                }
            } else if n < frame::PREFACE.len() {
                return ParseResult::Incomplete { consumed: 0, needed: frame::PREFACE.len() - n };
            } else {
                self.preface_done = true;
                at = n;
            }
        }
        loop {
            let rest = &data[at..];
            if self.dirs[d].skip > 0 {
                let n = self.dirs[d].skip.min(rest.len());
                self.dirs[d].skip -= n;
                at += n;
                if self.dirs[d].skip > 0 {
                    return ParseResult::Done;
                }
                continue;
            }
            if let Some((stream, left, end)) = self.dirs[d].data {
                let n = left.min(rest.len());
                let last = n == left;
                self.data(dir, stream, &rest[..n], last && end);
                at += n;
                self.dirs[d].data = (!last).then_some((stream, left - n, end));
                if !last {
                    return ParseResult::Done;
                }
                self.dirs[d].skip = std::mem::take(&mut self.dirs[d].skip_after);
                continue;
            }
            let Some(h) = frame::header(rest) else {
                if rest.is_empty() {
                    return ParseResult::Done;
                }
                return ParseResult::Incomplete { consumed: at, needed: frame::HEADER_LEN - rest.len() };
            };
            if h.kind == frame::DATA {
                self.mark_frames(dir, at, h.len);
                let end = h.flags & frame::FLAG_END_STREAM != 0;
                // A padded frame's body is between its pad length and its padding.
                let (pad, lead) = if h.flags & frame::FLAG_PADDED != 0 {
                    let Some(&p) = rest.get(frame::HEADER_LEN) else {
                        return ParseResult::Incomplete { consumed: at, needed: frame::HEADER_LEN + 1 - rest.len() };
                    };
                    (usize::from(p), 1)
                } else {
                    (0, 0)
                };
                if h.stream == 0 {
                    self.open0(dir, h.kind);
                } else {
                    self.frame_kind(dir, &h);
                }
                at += frame::HEADER_LEN + lead.min(h.len);
                let Some(body) = h.len.checked_sub(lead + pad) else {
                    self.raise(Some(h.stream), INVALID_FRAME_LENGTH);
                    self.dirs[d].skip = h.len.saturating_sub(lead);
                    continue;
                };
                self.dirs[d].skip_after = pad;
                if body == 0 {
                    self.data(dir, h.stream, &[], end);
                    self.dirs[d].skip = std::mem::take(&mut self.dirs[d].skip_after);
                } else {
                    self.dirs[d].data = Some((h.stream, body, end));
                }
                continue;
            }
            if h.len > MAX_FRAME {
                self.mark_frames(dir, at, h.len);
                if h.stream == 0 {
                    self.open0(dir, h.kind);
                }
                self.raise(Some(h.stream), LONG_FRAME_DATA);
                at += frame::HEADER_LEN;
                self.dirs[d].skip = h.len;
                if h.kind == frame::HEADERS || h.kind == frame::CONTINUATION || h.kind == frame::PUSH_PROMISE {
                    self.dirs[d].hpack_broken = true;
                }
                continue;
            }
            let total = frame::HEADER_LEN + h.len;
            if rest.len() < total {
                return ParseResult::Incomplete { consumed: at, needed: total - rest.len() };
            }
            self.mark_frames(dir, at, h.len);
            self.frame(dir, h, &rest[frame::HEADER_LEN..total]);
            at += total;
        }
    }

    fn on_gap(&mut self, dir: Direction, _len: u64) -> bool {
        // Frames cannot be found again after a hole, nor can the table follow.
        let d = &mut self.dirs[side(dir)];
        d.hpack_broken = true;
        false
    }

    fn close(&mut self, dir: Direction, _held: &[u8]) {
        self.truncate_files(dir);
    }

    fn store_files(&mut self, tx: Option<u64>, dirs: &[Direction], sid: u32) {
        for i in 0..self.txs.len() {
            let t = &mut self.txs[i];
            if tx.is_some_and(|id| t.s.id != id) {
                continue;
            }
            for dir in [Direction::ToServer, Direction::ToClient] {
                if dirs.is_empty() || dirs.contains(&dir) {
                    t.side_mut(dir).files.iter_mut().for_each(|f| f.mark_store(sid));
                }
            }
        }
    }

    crate::proto::delegate_txs!(txs);

    fn prune(&mut self, id: u64) {
        let done = |t: &Http2Tx| t.progress(Direction::ToServer) == Progress::Complete && t.progress(Direction::ToClient) == Progress::Complete;
        self.txs.prune_while(id, done);
    }

    fn drain_events(&mut self, out: &mut Vec<AppEvent>) {
        out.append(&mut self.events);
    }

    fn renamed(&self) -> Option<&'static str> {
        self.renamed.then_some("doh2")
    }

    fn take_frames(&mut self, out: &mut Vec<crate::frames::Mark>) -> u8 {
        self.frames.drain(out);
        self.frames.tx_base()
    }
}

impl Http2Parser {
    /// An HTTP/2 frame whose header is at `at` of the data offered: the
    /// whole frame, its header and its payload.
    fn mark_frames(&mut self, dir: Direction, at: usize, len: usize) {
        if self.frames.is_on() {
            let (hdr, len) = (frame::HEADER_LEN as u64, len as u64);
            self.frames.add(dir, at, Some(hdr + len), 2, None);
            self.frames.add(dir, at, Some(hdr), 0, None);
            self.frames.add(dir, at + frame::HEADER_LEN, Some(len), 1, None);
        }
    }
}

pub const SETTINGS: &[SettingDef] =
    &[SettingDef { key: "max-tx", default: 4096, size: false }, SettingDef { key: "body-limit", default: 4096, size: true }];

fn new_parser(init: &ParserInit) -> Box<dyn ProtoParser> {
    let max_tx = init.setting(&PROTO, 0).clamp(1, 1 << 16) as usize;
    let body_limit = init.setting(&PROTO, 1).min(1 << 24) as usize;
    let mut p = Http2Parser {
        frames: crate::frames::FrameLog::counted_from_one(init.app.frames),
        txs: TxQueue::new(init.first_tx_id, max_tx),
        dirs: [Dir::new(), Dir::new()],
        preface_done: false,
        body_limit,
        events: Vec::new(),
        files: init.app.http.files,
        decoders: Vec::new(),
        decompress_limit: init.app.http.decompress_limit as u64,
        decompress_ratio: init.app.http.decompress_ratio_cap,
        doh: crate::proto::index("doh2").is_some_and(|i| i < 64 && init.app.table_enabled & (1 << i) != 0),
        renamed: false,
    };
    if let Some(up) = init.expected.and_then(|e| e.downcast_ref::<H2cUpgrade>()) {
        p.upgraded(up);
    }
    Box::new(p)
}

/// The client's connection preface; from the server, a SETTINGS frame
/// (what it must send first).
fn probe(dir: Direction, data: &[u8], _cx: ProbeCx) -> Probe {
    if dir != Direction::ToServer {
        // A SETTINGS payload is short (its length's high byte is 0) and of type 4.
        let fits = data.first().is_none_or(|&b| b == 0) && data.get(3).is_none_or(|&t| t == frame::SETTINGS);
        return match frame::header(data) {
            None if fits => Probe::NeedMore,
            None => Probe::NoMatch,
            Some(h) if h.kind == frame::SETTINGS && h.stream == 0 && h.len % 6 == 0 && h.flags & !frame::FLAG_ACK == 0 => {
                Probe::Match
            }
            _ => Probe::NoMatch,
        };
    }
    let n = data.len().min(frame::PREFACE.len());
    if data[..n] != frame::PREFACE[..n] {
        Probe::NoMatch
    } else if n < frame::PREFACE.len() {
        Probe::NeedMore
    } else {
        Probe::Match
    }
}

/// A request for `/index.html` and its answer, with each side's SETTINGS.
fn sample() -> Vec<(Direction, Vec<u8>)> {
    let frame = |kind: u8, flags: u8, stream: u32, payload: &[u8]| {
        let mut f = (payload.len() as u32).to_be_bytes()[1..].to_vec();
        f.extend_from_slice(&[kind, flags]);
        f.extend_from_slice(&stream.to_be_bytes());
        f.extend_from_slice(payload);
        f
    };
    let mut client = frame::PREFACE.to_vec();
    client.extend(frame(frame::SETTINGS, 0, 0, &[0, 2, 0, 0, 0, 0]));
    // :method GET, :scheme http, :path /index.html, :authority www.example.com (RFC 7541 C.3.1).
    let block = [
        0x82, 0x86, 0x85, 0x41, 0x0f, b'w', b'w', b'w', b'.', b'e', b'x', b'a', b'm', b'p', b'l', b'e', b'.', b'c', b'o', b'm',
    ];
    client.extend(frame(frame::HEADERS, frame::FLAG_END_HEADERS | frame::FLAG_END_STREAM, 1, &block));
    let mut server = frame(frame::SETTINGS, 0, 0, &[0, 3, 0, 0, 0, 100]);
    // :status 200, then a literal server: vigil.
    let block = [0x88, 0x76, 0x05, b'v', b'i', b'g', b'i', b'l'];
    server.extend(frame(frame::HEADERS, frame::FLAG_END_HEADERS, 1, &block));
    server.extend(frame(frame::DATA, frame::FLAG_END_STREAM, 1, b"hello"));
    vec![(Direction::ToServer, client), (Direction::ToClient, server)]
}

const fn buffer(name: &'static str, id: u8) -> BufferDef {
    BufferDef { name, id, sides: Sides::Both, default: Direction::ToServer, both_ways: true, need: Progress::Headers, multi: true }
}

pub static PROTO: ProtoDef = ProtoDef {
    name: "http2",
    eve_name: Some("http"),
    detection: Detection { tcp: true, udp: false, ports: &[], ports_only: false, probe, counters_by_transport: false, answers_first: None },
    new_parser,
    buffers: &[buffer("http2.header_name", tx::HEADER_NAME), buffer("http2.header", tx::HEADER)],
    checks: checks::CHECKS,
    events: EVENTS,
    event: crate::proto::no_other_events,
    options: &[],
    settings: SETTINGS,
    sample,
    sample_expected: None,
    files: true,
    transactions: true,
    aliases: &[],
    includes: &["http"],
    borrows: &[],
    base_need: crate::proto::HEADERS_BOTH,
    hooks: crate::proto::Hooks::GENERIC,
    off_by_default: false,
    stream_depth: None,
    frames: &["hdr", "data", "pdu"],
};

#[cfg(test)]
mod tests {
    use super::*;

    fn parser() -> Http2Parser {
        Http2Parser {
            frames: crate::frames::FrameLog::default(),
            txs: TxQueue::new(0, 64),
            dirs: [Dir::new(), Dir::new()],
            preface_done: false,
            body_limit: 4096,
            events: Vec::new(),
            files: FileConfig::default(),
            decoders: Vec::new(),
            decompress_limit: 1 << 20,
            decompress_ratio: 2048,
                doh: true,
            renamed: false,
        }
    }

    #[test]
    fn a_request_and_its_answer() {
        let mut p = parser();
        for (dir, d) in sample() {
            assert_eq!(p.parse(dir, &d), ParseResult::Done);
        }
        assert_eq!(p.txs.len(), 3, "two SETTINGS and a stream");
        let s = p.txs[1].eve();
        assert_eq!(s["url"], "/index.html");
        // `:authority` alone makes no hostname in the record (as Suricata), but is `http.host`.
        assert_eq!(s.get("hostname"), None);
        // No content-length announced: no length, as Suricata writes it.
        assert_eq!((s["status"].as_u64(), s.get("length")), (Some(200), None));
        assert_eq!(s["http2"], serde_json::json!({"stream_id": 1}));
        assert_eq!(s["response_headers"][1], serde_json::json!({"name": "server", "value": "vigil"}));
        assert_eq!(p.txs[0].eve()["http2"]["request"]["settings"][0]["settings_id"], "SETTINGSENABLEPUSH");
        let t = &p.txs[1];
        let http = |b: crate::protocols::http::Buffer, dir| crate::proto::ProtoTx::buffer(t, dir, b as u8, 0);
        use crate::protocols::http::Buffer as B;
        assert_eq!(http(B::Uri, Direction::ToServer), Some(&b"/index.html"[..]));
        assert_eq!(http(B::Host, Direction::ToServer), Some(&b"www.example.com"[..]));
        assert_eq!(http(B::RequestLine, Direction::ToServer), Some(&b"GET /index.html HTTP/2"[..]));
        assert_eq!(http(B::ResponseLine, Direction::ToClient), Some(&b"HTTP/2 200\r\n"[..]));
        assert_eq!(http(B::Header, Direction::ToClient), Some(&b"server: vigil\r\n"[..]));
        assert_eq!(http(B::ResponseBody, Direction::ToClient), Some(&b"hello"[..]));
        assert_eq!(crate::proto::ProtoTx::progress(t, Direction::ToClient), Progress::Complete);
    }

    #[test]
    fn any_cut_gives_the_same_streams() {
        let whole = {
            let mut p = parser();
            for (dir, d) in sample() {
                p.parse(dir, &d);
            }
            (0..p.txs.len()).map(|i| p.txs[i].eve()).collect::<Vec<_>>()
        };
        for cut in [1usize, 7, 13] {
            let mut p = parser();
            for (dir, d) in sample() {
                let mut held: Vec<u8> = Vec::new();
                for chunk in d.chunks(cut) {
                    held.extend_from_slice(chunk);
                    match p.parse(dir, &held) {
                        ParseResult::Done => held.clear(),
                        ParseResult::Incomplete { consumed, .. } => {
                            held.drain(..consumed);
                        }
                        ParseResult::Error => panic!("error"),
                    }
                }
            }
            let got: Vec<_> = (0..p.txs.len()).map(|i| p.txs[i].eve()).collect();
            assert_eq!(got, whole, "cut {cut}");
        }
    }

    #[test]
    fn an_oversized_table_is_refused_and_counted() {
        let mut p = parser();
        p.parse(Direction::ToServer, frame::PREFACE);
        // A size update to 1 MiB: 0x3f then 1048576 - 31 in 7-bit groups.
        let mut block = vec![0x3f];
        let mut v = (1u64 << 20) - 31;
        while v >= 128 {
            block.push((v as u8 & 0x7f) | 0x80);
            v >>= 7;
        }
        block.extend_from_slice(&[v as u8, 0x82]);
        let mut f = (block.len() as u32).to_be_bytes()[1..].to_vec();
        f.extend_from_slice(&[frame::HEADERS, frame::FLAG_END_HEADERS, 0, 0, 0, 1]);
        f.extend_from_slice(&block);
        p.parse(Direction::ToServer, &f);
        let mut ev = Vec::new();
        p.drain_events(&mut ev);
        assert_eq!(ev.iter().map(|e| e.name).collect::<Vec<_>>(), vec!["http2.header_integer_overflow"]);
    }

    fn headers_frame(flags: u8, stream: u32, block: &[u8]) -> Vec<u8> {
        let mut f = (block.len() as u32).to_be_bytes()[1..].to_vec();
        f.extend_from_slice(&[frame::HEADERS, flags, 0, 0, 0, 0]);
        f[5..9].copy_from_slice(&stream.to_be_bytes());
        f.extend_from_slice(block);
        f
    }

    #[test]
    fn indexed_references_cannot_blow_up_the_headers() {
        let mut p = parser();
        p.parse(Direction::ToServer, frame::PREFACE);
        // A 4,000-byte literal added to the table (name "x"), then 500
        // one-byte references to it: 2 MB decoded from 4.5 KB.
        let mut block = vec![0x40, 0x01, b'x', 0x7f, 0xa1, 0x1e];
        block.extend(std::iter::repeat_n(b'v', 4000));
        block.extend(std::iter::repeat_n(0xbe, 500));
        p.parse(Direction::ToServer, &headers_frame(frame::FLAG_END_HEADERS, 1, &block));
        let t = &p.txs[0];
        assert!(t.sides.to_server.header_bytes() <= MAX_HEADER_BYTES);
        let mut ev = Vec::new();
        p.drain_events(&mut ev);
        assert!(ev.iter().any(|e| e.name == "http2.reassembly_limit_reached"), "{ev:?}");
        // The table stayed in step: a later block still decodes.
        p.parse(Direction::ToServer, &headers_frame(frame::FLAG_END_HEADERS | frame::FLAG_END_STREAM, 3, &[0x82, 0x84]));
        assert_eq!(p.txs[1].eve()["url"], "/");
    }

    #[test]
    fn a_block_cut_off_by_another_breaks_the_table_and_says_so() {
        let mut p = parser();
        p.parse(Direction::ToServer, frame::PREFACE);
        p.parse(Direction::ToServer, &headers_frame(0, 1, &[0x82]));
        p.parse(Direction::ToServer, &headers_frame(frame::FLAG_END_HEADERS, 3, &[0x82, 0x84]));
        let mut ev = Vec::new();
        p.drain_events(&mut ev);
        assert_eq!(ev.iter().map(|e| e.name).collect::<Vec<_>>(), vec!["http2.invalid_header"]);
        assert!(p.dirs[0].hpack_broken);
    }

    /// Random frames of every type, lengths and flags, in random cuts: no
    /// panic, and what is held stays bounded.
    #[test]
    fn random_frames_never_panic() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..300 {
            let mut p = parser();
            let mut stream = frame::PREFACE.to_vec();
            for _ in 0..(next() % 40) {
                let kind = (next() % 12) as u8;
                let len = (next() % 64) as usize;
                let mut f = (len as u32).to_be_bytes()[1..].to_vec();
                f.extend_from_slice(&[kind, next() as u8]);
                f.extend_from_slice(&((next() % 8) as u32).to_be_bytes());
                f.extend((0..len).map(|_| next() as u8));
                stream.extend(f);
            }
            let mut held: Vec<u8> = Vec::new();
            let mut at = 0;
            while at < stream.len() {
                let n = 1 + (next() % 50) as usize;
                let end = (at + n).min(stream.len());
                held.extend_from_slice(&stream[at..end]);
                at = end;
                let dir = if next() % 3 == 0 { Direction::ToClient } else { Direction::ToServer };
                match p.parse(dir, &held) {
                    ParseResult::Incomplete { consumed, .. } => {
                        held.drain(..consumed);
                    }
                    _ => held.clear(),
                }
                assert!(held.len() < 256 * 1024);
            }
            for i in 0..p.txs.len() {
                let _ = p.txs[i].eve();
            }
        }
    }

    #[test]
    fn a_late_reset_on_a_freed_stream_is_a_transaction_of_its_own() {
        let mut p = parser();
        for (dir, d) in sample() {
            p.parse(dir, &d);
        }
        let next = p.txs[p.txs.len() - 1].s.id + 1;
        p.prune(next);
        assert_eq!(p.txs.len(), 0);
        // Two RST_STREAMs (STREAM_CLOSED) on stream 1, finished and freed.
        let rst = [0, 0, 4, frame::RST_STREAM, 0, 0, 0, 0, 1, 0, 0, 0, 5];
        p.parse(Direction::ToClient, &[rst, rst].concat());
        assert_eq!(p.txs.len(), 1);
        assert_eq!(
            p.txs[0].eve()["http2"],
            serde_json::json!({"stream_id": 1, "response": {"error_code": "StreamClosed", "has_multiple": "error_code"}})
        );
    }

    #[test]
    fn a_reset_stream_still_takes_what_was_on_its_way() {
        let mut p = parser();
        let (client, server) = (sample()[0].1.clone(), sample()[1].1.clone());
        p.parse(Direction::ToServer, &client);
        // The client gives up on stream 1 (CANCEL) before the answer comes.
        p.parse(Direction::ToServer, &[0, 0, 4, frame::RST_STREAM, 0, 0, 0, 0, 1, 0, 0, 0, 8]);
        let t = p.txs.iter().find(|t| t.stream == 1).unwrap();
        assert_ne!(crate::proto::ProtoTx::progress(t, Direction::ToClient), Progress::Complete);
        p.parse(Direction::ToClient, &server);
        let t = p.txs.iter().find(|t| t.stream == 1).unwrap();
        assert_eq!(t.eve()["status"], 200);
        assert_eq!(t.eve()["http2"]["request"]["error_code"], "Cancel");
        assert!(crate::proto::ProtoTx::finished(t));
    }

    #[test]
    fn every_frame_of_stream_0_but_a_settings_ack_is_a_transaction_only_settings_and_goaway_log() {
        let mut p = parser();
        p.parse(Direction::ToServer, frame::PREFACE);
        let frame0 = |kind: u8, flags: u8, payload: &[u8]| {
            let mut f = (payload.len() as u32).to_be_bytes()[1..].to_vec();
            f.extend_from_slice(&[kind, flags, 0, 0, 0, 0]);
            f.extend_from_slice(payload);
            f
        };
        let mut b = frame0(frame::SETTINGS, 0, &[0, 3, 0, 0, 0, 100]);
        b.extend(frame0(frame::SETTINGS, frame::FLAG_ACK, &[]));
        b.extend(frame0(frame::PING, 0, &[0; 8]));
        b.extend(frame0(frame::WINDOW_UPDATE, 0, &[0, 0, 0x10, 0]));
        b.extend(frame0(frame::GOAWAY, 0, &[0, 0, 0, 1, 0, 0, 0, 0]));
        p.parse(Direction::ToServer, &b);
        assert_eq!(p.txs.len(), 4, "the acknowledgement makes none");
        let logged: Vec<bool> = p.txs.iter().map(crate::proto::ProtoTx::writes_record).collect();
        assert_eq!(logged, [true, false, false, true]);
        assert_eq!(p.txs[1].sides.to_server.frame_types, 1 << frame::PING);
        assert_eq!(p.txs[2].sides.to_server.window, Some(0x1000));
    }
}
