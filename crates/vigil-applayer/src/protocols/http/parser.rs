//! The per-flow state machine: one side per direction walks start line,
//! headers and body, filling the transaction it is working on.
//!
//! A side consumes whole lines only (a partial line is left to the caller,
//! see [`ParseResult::Incomplete`]) and streams bodies as they come, so the
//! same bytes cut differently reach the same states. Every step either
//! consumes bytes or changes state; the driver loop in [`HttpParser::parse`]
//! repeats steps until the chunk is used up or a line is unfinished.

use std::mem;

use vigil_types::Direction;

use super::body::{abnormal_content_encoding, chunk_len_doomed, decoder_for, parse_chunk_len, ChunkLen};
use super::events::Ev;
use super::line::{
    chomp, is_blank, is_fold, is_token, next_line, next_response_line, starts_with_ci, trim_space, Line,
};
use super::request::{self, ReqBody};
use super::response::{self, looks_like_status_line, ResNext};
use super::side::{
    abandon, body_data, body_done, body_ended, finish_request, finish_response, flush_pending, leave_finalize,
    lose_body, raise, raise_all, truncate_file, Side, State, Step,
};
use super::tx::HttpTx;
use super::HttpConfig;
use crate::files::FileConfig;
use crate::parser::{AppEvent, ParseResult};

/// Pending anomalies beyond this many are counted and dropped until drained.
const MAX_PENDING_EVENTS: usize = 1024;

/// Junk before a status line longer than this is taken as body without
/// waiting for its end; shorter junk is skipped when a status line follows.
/// Deciding by length alone keeps the outcome independent of the cut.
const JUNK_LINE: usize = 32;

/// Consecutive steps that consume nothing; more means a state-machine bug,
/// and the direction is given up rather than spun on.
const MAX_IDLE_STEPS: u32 = 16;

/// Counters for every bound the parser enforces (rule 4 of the house).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HttpStats {
    /// Transactions dropped unpruned because `max_txs` were held.
    pub txs_evicted: u64,
    /// Lines longer than `max_header_bytes`, cut short.
    pub lines_truncated: u64,
    /// Headers left out of the table (header byte budget or count).
    pub headers_dropped: u64,
    /// Bodies whose decompression hit the cap.
    pub decompress_capped: u64,
    /// Capture gaps reported.
    pub gaps: u64,
    /// Anomalies dropped because the pending list was full.
    pub events_dropped: u64,
}

/// The streaming HTTP/1.x parser of one flow.
pub struct HttpParser {
    cfg: HttpConfig,
    txs: Vec<HttpTx>,
    next_id: u64,
    req: Side,
    res: Side,
    /// Stand-ins for transactions evicted while a side was still filling them.
    req_scratch: Option<HttpTx>,
    res_scratch: Option<HttpTx>,
    events: Vec<AppEvent>,
    tunnel: bool,
    /// The protocol the tunnel speaks, when the upgrade named one.
    tunnel_to: Option<&'static str>,
    /// What an `h2c` upgrade hands HTTP/2.
    handover: Option<crate::proto::Expected>,
    stats: HttpStats,
    pub(crate) frames: crate::frames::FrameLog,
    /// Each side's message frame (`request`, `response`) while its message
    /// is read: its handle, the bytes read of it, its transaction once known.
    msg_frame: vigil_types::PerDir<Option<(u32, u64, Option<u64>)>>,
}

/// A side's file settings: files nothing asked to store end at the side's
/// body limit too, as Suricata's do. Not where `filestore` rules may still
/// ask (files are held for them): vigil's file rules see a file once its
/// side is whole, later than Suricata's, and a file cut at the limit could
/// no longer be stored whole.
fn file_cfg(files: FileConfig, limit: u64) -> FileConfig {
    FileConfig { unstored_depth: if files.hold { 0 } else { limit }, ..files }
}

impl HttpParser {
    /// A parser for one new flow.
    pub fn new(cfg: HttpConfig) -> Self {
        // A line bound below a request line's worth would only cut valid traffic.
        let cfg = HttpConfig { max_header_bytes: cfg.max_header_bytes.max(64), max_txs: cfg.max_txs.max(1), ..cfg };
        HttpParser {
            cfg,
            txs: Vec::new(),
            next_id: 0,
            req: Side { request: true, files: file_cfg(cfg.files, cfg.request_file_limit), ..Side::default() },
            res: Side { files: file_cfg(cfg.files, cfg.response_file_limit), ..Side::default() },
            req_scratch: None,
            res_scratch: None,
            events: Vec::new(),
            tunnel: false,
            tunnel_to: None,
            handover: None,
            stats: HttpStats::default(),
            frames: crate::frames::FrameLog::default(),
            msg_frame: vigil_types::PerDir::default(),
        }
    }

    /// True once a CONNECT succeeded or a `101 Switching Protocols` went by:
    /// the flow no longer speaks HTTP/1.x and `parse` ignores further bytes
    /// (`Done`). Bytes after the HTTP message in the chunk that switched are
    /// left unconsumed (`Incomplete`) for the caller to hand to protocol
    /// detection, as Suricata re-detects what runs inside the tunnel.
    pub fn tunnel(&self) -> bool {
        self.tunnel
    }

    /// The protocol the tunnel speaks, when the upgrade named it.
    pub fn tunnel_to(&self) -> Option<&'static str> {
        self.tunnel_to
    }

    /// The request an `h2c` upgrade carried, for HTTP/2's parser.
    pub fn handover(&self) -> Option<crate::proto::Expected> {
        self.handover.clone()
    }

    /// Numbers transactions from `id` on. A parser that takes over a flow from
    /// another (inside an HTTP tunnel) continues its ids, keeping them unique
    /// within the flow.
    pub(crate) fn with_first_tx_id(mut self, id: u64) -> Self {
        self.next_id = id;
        self.res.next_res = id;
        self
    }

    /// The id the next transaction will get.
    pub(crate) fn next_tx_id(&self) -> u64 {
        self.next_id
    }

    /// The limits in force (after clamping nonsensical ones).
    pub fn config(&self) -> &HttpConfig {
        &self.cfg
    }

    /// Marks the files of transaction `tx` on the sides in `dirs` for
    /// storage; with `tx` `None`, the bodies still to come on those sides
    /// (not those of transactions already held).
    pub fn store_files(&mut self, tx: Option<u64>, dirs: &[Direction], sid: u32) {
        if let Some(id) = tx {
            for t in self.txs.iter_mut().filter(|t| t.id() == id) {
                for &dir in dirs {
                    t.store_files(dir, sid);
                }
            }
        } else {
            for &dir in dirs {
                match dir {
                    Direction::ToServer => self.req.files.store_all = true,
                    Direction::ToClient => self.res.files.store_all = true,
                }
            }
        }
    }

    /// How often each bound was hit so far.
    pub fn stats(&self) -> HttpStats {
        self.stats
    }

    /// The `dir` stream ended (FIN/RST). `unconsumed` is what the caller kept
    /// from the last `Incomplete` of that direction: an unfinished line in it
    /// counts as finished now. Whatever message the end cut short is
    /// completed, as libhtp does (a body delimited by the close included).
    pub fn close(&mut self, dir: Direction, unconsumed: &[u8]) {
        if self.tunnel {
            return;
        }
        let mut side = self.take_side(dir);
        if side.eof {
            self.put_side(dir, side);
            return;
        }
        side.eof = true;
        let mut pos = 0usize;
        let mut idle = 0u32;
        while let Some(rest) = unconsumed.get(pos..).filter(|r| !r.is_empty()) {
            if self.tunnel || idle > MAX_IDLE_STEPS {
                break;
            }
            match self.step(&mut side, rest) {
                Step::Consumed(0) => idle += 1,
                Step::Consumed(n) => {
                    idle = 0;
                    pos = pos.saturating_add(n);
                }
                Step::NeedMore => break,
            }
        }
        if let Some(id) = side.tx {
            let cfg = self.cfg;
            let tx = self.tx_mut(side.request, id);
            match side.state {
                State::Headers | State::Trailers => {
                    flush_pending(&mut side, tx, &cfg);
                    abandon(&mut side, tx);
                }
                State::Close => body_done(&mut side, tx),
                // The close cut a framed body short: its file is not whole.
                State::Length(_) | State::ChunkSize | State::ChunkData(_) | State::ChunkEnd => {
                    truncate_file(&side, tx);
                    body_done(&mut side, tx);
                }
                State::Finalize => leave_finalize(&mut side, Some(tx)),
                State::Line | State::ConnectWait | State::Resync => {}
            }
        }
        self.put_side(dir, side);
    }

    /// Whether a message of `dir` ended since the last call.
    pub(crate) fn take_raw_trigger(&mut self, dir: Direction) -> bool {
        let side = match dir {
            Direction::ToServer => &mut self.req,
            Direction::ToClient => &mut self.res,
        };
        std::mem::take(&mut side.raw_trigger)
    }

    fn take_side(&mut self, dir: Direction) -> Side {
        match dir {
            Direction::ToServer => mem::take(&mut self.req),
            Direction::ToClient => mem::take(&mut self.res),
        }
    }

    fn put_side(&mut self, dir: Direction, mut side: Side) {
        for ev in side.raised.drain(..) {
            if self.events.len() < MAX_PENDING_EVENTS {
                self.events.push(ev);
            } else {
                self.stats.events_dropped += 1;
            }
        }
        let s = mem::take(&mut side.stats);
        self.stats.lines_truncated += s.lines_truncated;
        self.stats.headers_dropped += s.headers_dropped;
        self.stats.decompress_capped += s.decompress_capped;
        match dir {
            Direction::ToServer => self.req = side,
            Direction::ToClient => self.res = side,
        }
    }

    fn tx_mut(&mut self, request: bool, id: u64) -> &mut HttpTx {
        let idx = self.txs.first().and_then(|f| id.checked_sub(f.id())).and_then(|d| usize::try_from(d).ok());
        if let Some(i) = idx {
            if self.txs.get(i).is_some_and(|t| t.id() == id) {
                if let Some(t) = self.txs.get_mut(i) {
                    return t;
                }
            }
        }
        let (rq, rs) = (self.cfg.request_body_limit, self.cfg.response_body_limit);
        let scratch = if request { &mut self.req_scratch } else { &mut self.res_scratch };
        if scratch.as_ref().map(HttpTx::id) != Some(id) {
            *scratch = None;
        }
        scratch.get_or_insert_with(|| HttpTx::new(id, rq, rs))
    }

    fn find_tx(&self, id: u64) -> Option<&HttpTx> {
        let first = self.txs.first()?.id();
        let idx = usize::try_from(id.checked_sub(first)?).ok()?;
        self.txs.get(idx).filter(|t| t.id() == id)
    }

    fn new_tx(&mut self) -> u64 {
        if self.txs.len() >= self.cfg.max_txs {
            self.txs.remove(0);
            self.stats.txs_evicted += 1;
        }
        let id = self.next_id;
        self.next_id += 1;
        self.txs.push(HttpTx::new(id, self.cfg.request_body_limit, self.cfg.response_body_limit));
        id
    }

    fn open_request(&mut self, side: &mut Side) -> u64 {
        let id = self.new_tx();
        self.tx_mut(true, id).req.seen = true;
        side.tx = Some(id);
        side.reset_message();
        id
    }

    /// The transaction the next response belongs to; a response nobody
    /// asked for gets a transaction of its own, as libhtp does.
    fn open_response(&mut self, side: &mut Side) -> u64 {
        let id = if side.next_res < self.next_id {
            side.next_res
        } else {
            let id = self.new_tx();
            let tx = self.tx_mut(false, id);
            tx.req.complete = true;
            tx.req.headers_done = true;
            raise(side, tx, Ev::UnableToMatchResponseToRequest);
            side.next_res = id;
            id
        };
        side.tx = Some(id);
        side.reset_message();
        id
    }

    fn run(&mut self, dir: Direction, data: &[u8]) -> ParseResult {
        if self.tunnel {
            return ParseResult::Done;
        }
        let mut side = self.take_side(dir);
        if side.eof {
            // Nothing follows the end of a stream; bytes "after" it are not ours.
            self.put_side(dir, side);
            return ParseResult::Done;
        }
        let mut pos = 0usize;
        let mut idle = 0u32;
        let result = loop {
            let rest = data.get(pos..).unwrap_or_default();
            if self.tunnel {
                break if rest.is_empty() {
                    ParseResult::Done
                } else {
                    ParseResult::Incomplete { consumed: pos, needed: 1 }
                };
            }
            if rest.is_empty() {
                break ParseResult::Done;
            }
            let at_line = side.state == State::Line && !side.skip_line;
            match self.step(&mut side, rest) {
                Step::Consumed(0) => {
                    idle += 1;
                    if idle > MAX_IDLE_STEPS {
                        break ParseResult::Error;
                    }
                }
                Step::Consumed(n) => {
                    idle = 0;
                    if self.frames.is_on() {
                        let read = &rest[..n.min(rest.len())];
                        self.message_frame(dir, &side, pos, read, at_line);
                    }
                    pos = pos.saturating_add(n).min(data.len());
                }
                Step::NeedMore => break ParseResult::Incomplete { consumed: pos, needed: 1 },
            }
        };
        self.put_side(dir, side);
        result
    }

    /// `read` (at `pos` of the data offered) of `dir` were consumed
    /// (`at_line`: before a message's start line): the message's frame
    /// starts at its first byte that is no blank line, learns its
    /// transaction when there is one, and has its length once that side of
    /// the transaction is whole.
    fn message_frame(&mut self, dir: Direction, side: &Side, pos: usize, read: &[u8], at_line: bool) {
        let open = self.msg_frame.get_mut(dir);
        match open.as_mut() {
            None if at_line && !read.iter().all(|b| matches!(b, b'\r' | b'\n')) => {
                let skip = read.iter().take_while(|b| matches!(b, b'\r' | b'\n')).count();
                let kind = if side.request { 0 } else { 1 };
                let handle = self.frames.add(dir, pos + skip, None, kind, side.tx);
                *open = Some((handle, (read.len() - skip) as u64, side.tx));
            }
            None => return,
            Some((handle, len, tx)) => {
                *len += read.len() as u64;
                if tx.is_none() && side.tx.is_some() {
                    *tx = side.tx;
                    self.frames.set_tx(dir, *handle, side.tx.unwrap_or_default());
                }
            }
        }
        let Some((handle, len, Some(tx))) = *self.msg_frame.get(dir) else { return };
        let done = self.find_tx(tx).is_none_or(|t| if side.request { t.req.complete } else { t.res.complete });
        if done {
            self.frames.set_len(dir, handle, len);
            *self.msg_frame.get_mut(dir) = None;
        }
    }

    fn step(&mut self, side: &mut Side, data: &[u8]) -> Step {
        if side.skip_line {
            return match data.iter().position(|&b| b == b'\n') {
                Some(i) => {
                    side.skip_line = false;
                    Step::Consumed(i + 1)
                }
                None => Step::Consumed(data.len()),
            };
        }
        match side.state {
            State::Line if side.request => self.request_line(side, data),
            State::Line => self.status_line(side, data),
            State::Headers | State::Trailers => self.header_line(side, data),
            State::Length(left) => self.body_bytes(side, data, left, false),
            State::ChunkData(left) => self.body_bytes(side, data, left, true),
            State::ChunkSize => self.chunk_size(side, data),
            State::ChunkEnd => self.chunk_end(side, data),
            State::Close => {
                if let Some(id) = side.tx {
                    let tx = self.tx_mut(side.request, id);
                    body_data(side, tx, data);
                }
                Step::Consumed(data.len())
            }
            State::ConnectWait => {
                let answered = side.tx.and_then(|id| self.find_tx(id)).is_none_or(|t| t.res.complete);
                if !answered {
                    return Step::NeedMore;
                }
                side.tx = None;
                side.state = State::Line;
                Step::Consumed(0)
            }
            State::Resync => self.resync(side, data),
            State::Finalize => self.finalize(side, data),
        }
    }

    /// libhtp's `RES_FINALIZE`: the next line, unless it may start a status
    /// line, is more of the body of the response that just ended.
    fn finalize(&mut self, side: &mut Side, data: &[u8]) -> Step {
        let next_is_http09 = self.find_tx(side.next_res).is_some_and(|t| t.req.http09 && !t.res.complete);
        let Some(id) = side.tx.filter(|_| !next_is_http09) else {
            // An HTTP/0.9 answer has no status line: its bytes are its own.
            let tx = side.tx.map(|id| self.tx_mut(false, id));
            leave_finalize(side, tx);
            return Step::Consumed(0);
        };
        let max = self.cfg.max_header_bytes;
        let (line, len) = match at_eof(side, next_line(data, max), data) {
            Line::Partial => return Step::NeedMore,
            Line::TooLong => (data.get(..max).unwrap_or_default(), max),
            Line::Complete { len, .. } => (data.get(..len).unwrap_or_default(), len),
        };
        if looks_like_status_line(line) {
            leave_finalize(side, Some(self.tx_mut(false, id)));
            return Step::Consumed(0);
        }
        let tx = self.tx_mut(false, id);
        body_data(side, tx, line);
        Step::Consumed(len)
    }

    fn request_line(&mut self, side: &mut Side, data: &[u8]) -> Step {
        let max = self.cfg.max_header_bytes;
        match at_eof(side, next_line(data, max), data) {
            Line::Partial => {
                // Open the transaction as soon as a request shows, so that a
                // response racing the rest of the line still finds it.
                if side.tx.is_none() && !is_blank(data) {
                    self.open_request(side);
                }
                Step::NeedMore
            }
            Line::TooLong => {
                self.apply_request_line(side, data.get(..max).unwrap_or_default(), true);
                side.skip_line = true;
                side.stats.lines_truncated += 1;
                Step::Consumed(max)
            }
            Line::Complete { raw, len } => {
                let line = chomp(raw);
                if !is_blank(line) {
                    self.apply_request_line(side, line, false);
                }
                Step::Consumed(len)
            }
        }
    }

    fn apply_request_line(&mut self, side: &mut Side, line: &[u8], truncated: bool) {
        let id = match side.tx {
            Some(id) => id,
            None => self.open_request(side),
        };
        let tx = self.tx_mut(true, id);
        let mut evs = Vec::new();
        if truncated {
            evs.push(Ev::RequestFieldTooLong);
        }
        request::apply_line(&mut tx.req, line, truncated, &mut |e| evs.push(e));
        raise_all(side, tx, evs);
        if tx.req.http09 {
            tx.req.headers_done = true;
            tx.req.build_buffers();
            finish_request(side, tx);
        } else {
            side.state = State::Headers;
        }
    }

    fn status_line(&mut self, side: &mut Side, data: &[u8]) -> Step {
        // An HTTP/0.9 request gets a bare body back, blank lines and all.
        let target = side.tx.unwrap_or(side.next_res);
        if self.find_tx(target).is_some_and(|t| t.req.http09 && !t.res.complete) {
            side.tx = Some(target);
            let tx = self.tx_mut(false, target);
            tx.res.headers_done = true;
            side.state = State::Close;
            return Step::Consumed(0);
        }
        let max = self.cfg.max_header_bytes;
        let line = at_eof(side, next_response_line(data, max, false), data);
        let (text, len, truncated) = match line {
            // A long run that cannot become `HTTP`: a body without a status
            // line, whether or not a line end comes (HTTP/0.9 servers).
            Line::Partial if data.len() > JUNK_LINE && !may_become_status_line(data) => (data, 0, true),
            Line::Partial => return Step::NeedMore,
            Line::Complete { raw, len } => {
                let text = chomp(raw);
                if is_blank(text) {
                    return Step::Consumed(len);
                }
                (text, len, false)
            }
            Line::TooLong => (data.get(..max).unwrap_or_default(), max, true),
        };
        let status = looks_like_status_line(text);
        if !status && !truncated && text.len() <= JUNK_LINE {
            // libhtp skips a stray line when it is short or when the next
            // line starts with `H` (the real status line, presumably).
            match data.get(len) {
                _ if text.len() <= 2 => return Step::Consumed(len),
                Some(b'H') => return Step::Consumed(len),
                None if !side.eof => return Step::NeedMore,
                _ => {}
            }
        }
        let id = match side.tx {
            Some(id) => id,
            None => self.open_response(side),
        };
        let tx = self.tx_mut(false, id);
        if !status {
            // Not a status line: libhtp takes everything from here as body.
            tx.res.headers_done = true;
            side.state = State::Close;
            return Step::Consumed(0);
        }
        let mut evs = Vec::new();
        if truncated {
            evs.push(Ev::ResponseFieldTooLong);
            side.skip_line = true;
            side.stats.lines_truncated += 1;
        }
        response::apply_line(&mut tx.res, text, &mut |e| evs.push(e));
        raise_all(side, tx, evs);
        side.state = State::Headers;
        Step::Consumed(len)
    }

    fn header_line(&mut self, side: &mut Side, data: &[u8]) -> Step {
        let cfg = self.cfg;
        let max = cfg.max_header_bytes;
        let Some(id) = side.tx else {
            side.state = State::Resync;
            return Step::Consumed(0);
        };
        let tx = self.tx_mut(side.request, id);
        let line = if side.request { next_line(data, max) } else { next_response_line(data, max, true) };
        let line = at_eof(side, line, data);
        match line {
            Line::Partial => Step::NeedMore,
            Line::TooLong => {
                if data.first().is_some_and(|&b| !is_fold(b)) {
                    flush_pending(side, tx, &cfg);
                }
                let ev = side.ev(Ev::RequestFieldTooLong, Ev::ResponseFieldTooLong);
                raise(side, tx, ev);
                side.skip_line = true;
                side.stats.lines_truncated += 1;
                Step::Consumed(max)
            }
            Line::Complete { raw, len } => {
                let line = chomp(raw);
                let eol_len = len.saturating_sub(line.len());
                let lone_fold = matches!(line, [b] if is_fold(*b)) && eol_len == 1;
                if lone_fold && data.get(len).is_none() && !side.eof {
                    // Whether this ends the headers depends on the next byte.
                    return Step::NeedMore;
                }
                if side.state == State::Headers {
                    let raw_buf = if side.request { &mut tx.req.raw_headers } else { &mut tx.res.raw_headers };
                    let room = max.saturating_sub(raw_buf.len());
                    raw_buf.extend_from_slice(data.get(..len.min(room)).unwrap_or_default());
                }
                // Trailer lines are not counted in the message's length, as
                // libhtp counts it (Suricata's `length` of a chunked body ends
                // with its last chunk's size line).
                let first_line = side.pending.is_none() && side.header_count == 0;
                let end = match line.split_first() {
                    // A lone CR right after the status line is not the end of
                    // the headers for libhtp, only an empty field.
                    None if first_line && data.first() == Some(&b'\r') && eol_len == 1 => false,
                    None => true,
                    // An empty continuation ended by a bare line end is, for
                    // libhtp, the blank line that ends the headers, unless a
                    // blank line follows it anyway.
                    Some(_) if lone_fold => data.get(len) != Some(&b'\n'),
                    Some((&b, rest)) if is_fold(b) && (side.request || !starts_new_field(rest)) => {
                        match side.pending.as_mut() {
                            Some(p) if p.len().saturating_add(line.len()) <= max => p.extend_from_slice(line),
                            Some(_) => {
                                let ev = side.ev(Ev::RequestFieldTooLong, Ev::ResponseFieldTooLong);
                                raise(side, tx, ev);
                            }
                            None => {
                                let ev = side.ev(Ev::InvalidRequestFieldFolding, Ev::InvalidResponseFieldFolding);
                                raise(side, tx, ev);
                                side.pending = Some(line.to_vec());
                            }
                        }
                        false
                    }
                    Some(_) => {
                        flush_pending(side, tx, &cfg);
                        side.pending = Some(line.to_vec());
                        false
                    }
                };
                if end {
                    flush_pending(side, tx, &cfg);
                    let trailers = side.state == State::Trailers;
                    self.end_of_headers(side, id, trailers);
                }
                Step::Consumed(len)
            }
        }
    }

    fn end_of_headers(&mut self, side: &mut Side, id: u64, trailers: bool) {
        let cfg = self.cfg;
        let tx = self.tx_mut(side.request, id);
        if trailers {
            if side.request {
                tx.req.build_buffers();
            } else {
                tx.res.build_buffers();
            }
            body_ended(side, tx);
            return;
        }
        let mut evs = Vec::new();
        if side.request {
            tx.req.headers_done = true;
            let next = request::after_headers(&mut tx.req, &mut |e| evs.push(e));
            if abnormal_content_encoding(&tx.req.headers) {
                evs.push(Ev::AbnormalCeHeader);
            }
            tx.req.build_buffers();
            side.decoder = match next {
                ReqBody::None => None,
                _ => decoder_for(&tx.req.headers, &cfg, cfg.request_body_limit).unwrap_or_else(|e| {
                    evs.push(e);
                    None
                }),
            };
            raise_all(side, tx, evs);
            match next {
                ReqBody::None => finish_request(side, tx),
                ReqBody::Length(n) => side.state = State::Length(n),
                ReqBody::Chunked => side.state = State::ChunkSize,
            }
            return;
        }
        tx.res.headers_done = true;
        tx.res.build_buffers();
        let next = response::after_headers(&tx.req, &mut tx.res, &mut |e| evs.push(e));
        side.decoder = match next {
            ResNext::Length(_) | ResNext::Chunked | ResNext::Close => {
                decoder_for(&tx.res.headers, &cfg, cfg.response_body_limit).unwrap_or_else(|e| {
                    evs.push(e);
                    None
                })
            }
            _ => None,
        };
        raise_all(side, tx, evs);
        let refused = tx.res.status.is_some_and(|s| (400..500).contains(&s));
        let expected = tx.req.headers.value(b"expect") == Some(b"100-continue") && tx.req.body.wire_len == 0;
        match next {
            ResNext::Interim => {
                tx.res.reset_for_final();
                side.reset_message();
                side.state = State::Line;
            }
            ResNext::Tunnel => {
                // An upgrade to WebSocket the server accepted: no detection needed.
                let asked = tx.req.headers.value(b"upgrade").is_some_and(|u| u.eq_ignore_ascii_case(b"websocket"));
                let websocket = tx.res.status == Some(101) && asked;
                let h2c = tx.res.status == Some(101)
                    && tx.req.headers.value(b"upgrade").is_some_and(|u| u.eq_ignore_ascii_case(b"h2c"));
                // HTTP/2 takes over at once, the upgrading request its stream 1.
                let handover: Option<crate::proto::Expected> = h2c.then(|| {
                    let headers = tx.req.headers.list.iter().map(|h| (h.name.clone(), h.value.clone())).collect();
                    std::sync::Arc::new(crate::protocols::http2::H2cUpgrade {
                        method: tx.req.method.clone().unwrap_or_default(),
                        uri: tx.req.uri.clone().unwrap_or_default(),
                        headers,
                    }) as crate::proto::Expected
                });
                finish_response(side, tx);
                self.tunnel = true;
                if websocket {
                    self.tunnel_to = Some("websocket");
                } else if h2c {
                    self.tunnel_to = Some("http2");
                    self.handover = handover;
                }
            }
            ResNext::None => body_ended(side, tx),
            ResNext::Length(n) => side.state = State::Length(n),
            ResNext::Chunked => side.state = State::ChunkSize,
            ResNext::Close => side.state = State::Close,
        }
        if refused && expected {
            self.drop_expected_body(id);
        }
    }

    /// A client that sent `Expect: 100-continue` and got a 4xx instead will
    /// not send its body: the request is over (as libhtp decides).
    fn drop_expected_body(&mut self, id: u64) {
        if self.req.tx != Some(id) || !matches!(self.req.state, State::Length(_)) {
            return;
        }
        let Some(first) = self.txs.first().map(HttpTx::id) else { return };
        let Some(idx) = id.checked_sub(first).and_then(|d| usize::try_from(d).ok()) else { return };
        if let Some(tx) = self.txs.get_mut(idx) {
            finish_request(&mut self.req, tx);
        }
    }

    fn body_bytes(&mut self, side: &mut Side, data: &[u8], left: u64, chunked: bool) -> Step {
        let Some(id) = side.tx else {
            side.state = State::Resync;
            return Step::Consumed(0);
        };
        let tx = self.tx_mut(side.request, id);
        let take = usize::try_from(left).unwrap_or(usize::MAX).min(data.len());
        body_data(side, tx, data.get(..take).unwrap_or_default());
        let left = left.saturating_sub(take as u64);
        side.state = match (left, chunked) {
            (0, true) => State::ChunkEnd,
            (0, false) => {
                body_ended(side, tx);
                side.state
            }
            (n, true) => State::ChunkData(n),
            (n, false) => State::Length(n),
        };
        Step::Consumed(take)
    }

    fn chunk_size(&mut self, side: &mut Side, data: &[u8]) -> Step {
        let Some(id) = side.tx else {
            side.state = State::Resync;
            return Step::Consumed(0);
        };
        let max = self.cfg.max_header_bytes;
        let tx = self.tx_mut(side.request, id);
        let bad = side.ev(Ev::InvalidRequestChunkLen, Ev::InvalidResponseChunkLen);
        let (len, size) = match at_eof(side, next_line(data, max), data) {
            Line::Partial if chunk_len_doomed(data) => (0, ChunkLen::Invalid),
            Line::Partial => return Step::NeedMore,
            Line::TooLong => (0, ChunkLen::Invalid),
            Line::Complete { raw, len } => (len, parse_chunk_len(chomp(raw))),
        };
        let body = if side.request { &mut tx.req.body } else { &mut tx.res.body };
        match size {
            ChunkLen::Invalid => {
                // The framing is lost: what follows (this line included) is
                // taken as body until the connection closes.
                raise(side, tx, bad);
                side.state = State::Close;
                return Step::Consumed(0);
            }
            ChunkLen::Blank => {}
            ChunkLen::Len(0) => {
                side.state = State::Trailers;
                side.pending = None;
            }
            ChunkLen::Len(n) => side.state = State::ChunkData(n),
        }
        body.wire_len = body.wire_len.saturating_add(len as u64);
        Step::Consumed(len)
    }

    fn chunk_end(&mut self, side: &mut Side, data: &[u8]) -> Step {
        let max = self.cfg.max_header_bytes;
        let consumed = match at_eof(side, next_line(data, max), data) {
            Line::Partial => return Step::NeedMore,
            Line::TooLong => {
                side.skip_line = true;
                max
            }
            Line::Complete { len, .. } => len,
        };
        if let Some(id) = side.tx {
            let tx = self.tx_mut(side.request, id);
            let body = if side.request { &mut tx.req.body } else { &mut tx.res.body };
            body.wire_len = body.wire_len.saturating_add(consumed as u64);
        }
        side.state = State::ChunkSize;
        Step::Consumed(consumed)
    }

    fn resync(&mut self, side: &mut Side, data: &[u8]) -> Step {
        match at_eof(side, next_line(data, self.cfg.max_header_bytes), data) {
            Line::Partial => Step::NeedMore,
            Line::TooLong => {
                side.skip_line = true;
                Step::Consumed(self.cfg.max_header_bytes)
            }
            Line::Complete { raw, len } => {
                let line = chomp(raw);
                let starts = if side.request {
                    request::looks_like_request(line)
                } else {
                    starts_with_ci(trim_space(line), b"HTTP/")
                };
                if starts {
                    side.state = State::Line;
                    Step::Consumed(0)
                } else {
                    Step::Consumed(len)
                }
            }
        }
    }

    fn gap(&mut self, dir: Direction, len: u64) {
        self.stats.gaps += 1;
        if self.tunnel {
            return;
        }
        let mut side = self.take_side(dir);
        side.skip_line = false;
        let lost_framing = match (side.state, side.tx) {
            (State::Length(left) | State::ChunkData(left), Some(id)) => {
                let chunked = matches!(side.state, State::ChunkData(_));
                let lost = len.min(left);
                let tx = self.tx_mut(side.request, id);
                lose_body(&mut side, tx, lost);
                match (left - lost, chunked) {
                    (0, false) => body_done(&mut side, tx),
                    (0, true) => side.state = State::ChunkEnd,
                    (n, true) => side.state = State::ChunkData(n),
                    (n, false) => side.state = State::Length(n),
                }
                len > left
            }
            (State::Close, Some(id)) => {
                let tx = self.tx_mut(side.request, id);
                lose_body(&mut side, tx, len);
                false
            }
            (State::ConnectWait, _) => false,
            (State::Finalize, id) => {
                // The response is complete; only where the next one starts is lost.
                let tx = id.map(|id| self.tx_mut(false, id));
                leave_finalize(&mut side, tx);
                true
            }
            (State::Line | State::Resync, None) => true,
            _ => true,
        };
        if lost_framing {
            if let Some(id) = side.tx {
                let tx = self.tx_mut(side.request, id);
                abandon(&mut side, tx);
            }
            side.reset_message();
            side.state = State::Resync;
        }
        self.put_side(dir, side);
    }
}

/// After the stream ended, an unfinished line is all the line there will be.
fn at_eof<'a>(side: &Side, line: Line<'a>, data: &'a [u8]) -> Line<'a> {
    match line {
        Line::Partial if side.eof && !data.is_empty() => Line::Complete { raw: data, len: data.len() },
        other => other,
    }
}

/// Whether an unfinished response line could still turn into a status line
/// (blanks or NULs, then `HTTP` in any case).
fn may_become_status_line(partial: &[u8]) -> bool {
    let start = partial.iter().position(|&b| !super::line::is_space(b) && b != 0).unwrap_or(partial.len());
    let rest = partial.get(start..).unwrap_or_default();
    let n = rest.len().min(4);
    rest.get(..n).is_some_and(|p| starts_with_ci(b"HTTP", p))
}

/// libhtp's response-side test for an indented line that is a header of
/// its own rather than a continuation: optional blanks, a token, optional
/// blanks, a colon.
fn starts_new_field(rest: &[u8]) -> bool {
    let rest = trim_start_lws(rest);
    let token_len = rest.iter().take_while(|&&b| is_token(b)).count();
    token_len > 0 && trim_start_lws(rest.get(token_len..).unwrap_or_default()).first() == Some(&b':')
}

fn trim_start_lws(s: &[u8]) -> &[u8] {
    let start = s.iter().position(|&b| b != b' ' && b != b'\t').unwrap_or(s.len());
    s.get(start..).unwrap_or_default()
}

impl HttpParser {
    /// The next bytes of `dir`, in any chunking (the streaming contract of
    /// [`ProtoParser`](crate::proto::ProtoParser)).
    pub fn parse(&mut self, dir: Direction, data: &[u8]) -> ParseResult {
        self.run(dir, data)
    }

    /// `len` bytes of `dir` were lost.
    pub fn on_gap(&mut self, dir: Direction, len: u64) {
        self.gap(dir, len);
    }

    pub fn txs(&self) -> &[HttpTx] {
        &self.txs
    }

    /// Frees transactions with an id below `id`.
    pub fn prune(&mut self, id: u64) {
        let keep_from = self.txs.iter().position(|t| t.id() >= id).unwrap_or(self.txs.len());
        self.txs.drain(..keep_from);
    }

    pub fn take_events(&mut self) -> Vec<AppEvent> {
        mem::take(&mut self.events)
    }
}
