//! One direction of a flow: where its state machine stands, and what it
//! does to the transaction it is filling (headers into the table, body bytes
//! into the window, completion).

use super::body::deliver;
use super::decompress::{Decoder, Outcome};
use super::events::Ev;
use super::headers::{name_is, parse_field, Added};
use super::parser::HttpStats;
use super::tx::HttpTx;
use super::HttpConfig;
use crate::codecs::multipart::{boundary, Multipart};
use crate::files::{ByteRange, File, FileConfig};
use crate::parser::AppEvent;
use vigil_types::Direction;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) enum State {
    /// Request or status line (blank lines before it are skipped).
    #[default]
    Line,
    Headers,
    Length(u64),
    ChunkSize,
    ChunkData(u64),
    /// The line ending after chunk data.
    ChunkEnd,
    Trailers,
    /// Body until the connection closes.
    Close,
    /// Response side, after a response ended (libhtp's `RES_FINALIZE`): lines
    /// that cannot start a status line still belong to its body (servers
    /// that send more than they announced, a stray CRLF after the body).
    /// The response is already complete, so its logging and inspection do
    /// not wait for the next one; what is appended in the same chunk is seen
    /// by them, as with libhtp, and whatever comes later lands in the same
    /// place whatever the cut. `tx` still names the response.
    Finalize,
    /// After a CONNECT request: wait for the response before reading on.
    ConnectWait,
    /// After a gap outside a body: skip lines until one starts a message.
    Resync,
}

pub(super) enum Step {
    Consumed(usize),
    NeedMore,
}

#[derive(Default)]
pub(super) struct Side {
    pub(super) request: bool,
    pub(super) state: State,
    /// Dropping the rest of an overlong line, up to its LF.
    pub(super) skip_line: bool,
    /// The stream of this direction ended: unfinished lines are final.
    pub(super) eof: bool,
    /// The transaction being filled.
    pub(super) tx: Option<u64>,
    /// The current header line, with folded continuations appended.
    pub(super) pending: Option<Vec<u8>>,
    pub(super) header_bytes: usize,
    pub(super) header_count: usize,
    pub(super) decoder: Option<Decoder>,
    /// Response side: the transaction the next response answers.
    pub(super) next_res: u64,
    pub(super) raised: Vec<AppEvent>,
    pub(super) stats: HttpStats,
    /// What the file service does with this side's bodies.
    pub(super) files: FileConfig,
    /// A message ended since raw stream inspection was last asked for:
    /// Suricata inspects the raw stream at each request's and response's end.
    pub(super) raw_trigger: bool,
}

impl Side {
    pub(super) fn reset_message(&mut self) {
        self.pending = None;
        self.header_bytes = 0;
        self.header_count = 0;
        self.decoder = None;
    }

    pub(super) fn ev(&self, req: Ev, res: Ev) -> Ev {
        Ev::sided(self.request, req, res)
    }
}

/// Reports `ev` once per transaction.
pub(super) fn raise(side: &mut Side, tx: &mut HttpTx, ev: Ev) {
    if tx.events & ev.bit() == 0 {
        tx.events |= ev.bit();
        side.raised.push(AppEvent { name: ev.name(), tx_id: Some(tx.id()) });
    }
}

pub(super) fn raise_all(side: &mut Side, tx: &mut HttpTx, evs: Vec<Ev>) {
    for ev in evs {
        raise(side, tx, ev);
    }
}

/// Body bytes into the transaction, with decoder anomalies.
pub(super) fn body_data(side: &mut Side, tx: &mut HttpTx, data: &[u8]) {
    if !data.is_empty() {
        open_file(side, tx);
    }
    let body = if side.request { &mut tx.req.body } else { &mut tx.res.body };
    let outcome = deliver(body, side.decoder.as_mut(), data);
    report(side, tx, outcome);
}

/// The body is over: what the decoder still held back goes into it.
fn release_decoder(side: &mut Side, tx: &mut HttpTx) {
    let Some(d) = side.decoder.as_mut() else { return };
    let body = if side.request { &mut tx.req.body } else { &mut tx.res.body };
    let outcome = d.finish(&mut |out| body.push(out));
    report(side, tx, outcome);
}

fn report(side: &mut Side, tx: &mut HttpTx, outcome: Outcome) {
    if outcome.failed {
        raise(side, tx, Ev::GzipDecompressionFailed);
    }
    if outcome.bomb {
        side.stats.decompress_capped += 1;
        raise(side, tx, Ev::CompressionBomb);
    }
}

/// A body is a file when it is a response's or a POST or PUT request's; a
/// POST or PUT of `multipart/*` instead carries a file per part that names
/// one.
/// Files open with the body's first byte, named by `Content-Disposition`,
/// else by the URI path.
fn open_file(side: &Side, tx: &mut HttpTx) {
    let body = if side.request { &tx.req.body } else { &tx.res.body };
    if !body.files.is_empty() || body.pending_file.is_some() || body.multipart.is_some() {
        return;
    }
    if side.request {
        let method = tx.req.method.as_deref();
        let upload = matches!(method, Some(b"POST" | b"PUT"));
        let boundary = tx.req.headers.value(b"content-type").and_then(boundary);
        if let (true, Some(b)) = (upload, boundary) {
            tx.req.body.multipart = Some(Box::new(Multipart::new(&b)));
            tx.req.body.file_cfg = side.files;
            return;
        }
        // Any other POST or PUT body is a file, named by the URI path, as
        // Suricata's HTTP parser opens one.
        if !upload {
            return;
        }
    }
    let dir = if side.request { Direction::ToServer } else { Direction::ToClient };
    let name = tx.file_name(dir).unwrap_or_default();
    // A `206` part of a larger file: the part it is, so the parts of
    // several transfers can be put together.
    let range = (!side.request && tx.res.status == Some(206))
        .then(|| tx.res.headers.value(b"content-range").and_then(ByteRange::parse))
        .flatten()
        .filter(|r| !r.is_whole());
    let part = range.map(|range| crate::files::RangePart {
        range,
        key: [tx.hostname().unwrap_or_default(), b" ", tx.raw_uri().unwrap_or_default()].concat(),
        whole_name: name.clone(),
        logged: true,
    });
    let body = if side.request { &mut tx.req.body } else { &mut tx.res.body };
    let mut file = match part {
        Some(p) => File::open_range(name, p, &side.files),
        None => File::open(name, 0, &side.files),
    };
    if let Some(sid) = body.store_for {
        file.mark_store(sid);
    }
    body.pending_file = Some(file);
    body.file_cfg = side.files;
}

/// The body's files, if any, end short.
pub(super) fn truncate_file(side: &Side, tx: &mut HttpTx) {
    let body = if side.request { &mut tx.req.body } else { &mut tx.res.body };
    body.files.iter_mut().for_each(File::truncate);
}

pub(super) fn lose_body(side: &mut Side, tx: &mut HttpTx, lost: u64) {
    // A body lost from its first byte is still a file, with a gap.
    if lost > 0 {
        open_file(side, tx);
    }
    let body = if side.request { &mut tx.req.body } else { &mut tx.res.body };
    body.lose(lost);
    body.lost = body.lost.saturating_add(lost);
    body.wire_len = body.wire_len.saturating_add(lost);
    // Inflating past a hole would only produce garbage.
    if let Some(d) = side.decoder.as_mut() {
        d.stop();
    }
}

pub(super) fn flush_pending(side: &mut Side, tx: &mut HttpTx, cfg: &HttpConfig) {
    let Some(line) = side.pending.take() else { return };
    let f = parse_field(&line);
    if f.missing_colon {
        let ev = side.ev(Ev::RequestFieldMissingColon, Ev::ResponseFieldMissingColon);
        raise(side, tx, ev);
    }
    if f.leading_ws {
        let ev = side.ev(Ev::InvalidRequestFieldFolding, Ev::InvalidResponseFieldFolding);
        raise(side, tx, ev);
    }
    if f.invalid {
        let ev = side.ev(Ev::RequestHeaderInvalid, Ev::ResponseHeaderInvalid);
        raise(side, tx, ev);
    }
    // Framing headers are kept past the budgets: dropping them would
    // misframe the body, and repeats of them are bounded by the table.
    let framing =
        [&b"content-length"[..], b"transfer-encoding", b"content-encoding"].iter().any(|n| name_is(f.name, n));
    side.header_count += 1;
    if !framing {
        let cost = f.name.len().saturating_add(f.value.len());
        let over = if side.header_count > cfg.max_headers {
            Some(side.ev(Ev::RequestTooManyHeaders, Ev::ResponseTooManyHeaders))
        } else if side.header_bytes.saturating_add(cost) > cfg.max_header_bytes {
            Some(side.ev(Ev::RequestFieldTooLong, Ev::ResponseFieldTooLong))
        } else {
            None
        };
        if let Some(ev) = over {
            side.stats.headers_dropped += 1;
            raise(side, tx, ev);
            return;
        }
        side.header_bytes += cost;
    }
    let table = if side.request { &mut tx.req.headers } else { &mut tx.res.headers };
    let added = table.add(f.name, f.value, cfg.max_header_bytes);
    // A header's first repeat is libhtp's "Repetition for header", as a
    // repeat past the cap is.
    let repetition = matches!(
        added,
        Added::Joined { first: true } | Added::RepeatedLength { first: true, .. } | Added::Dropped
    );
    if repetition {
        let ev = side.ev(Ev::RequestHeaderRepetition, Ev::ResponseHeaderRepetition);
        raise(side, tx, ev);
    }
    if let Added::RepeatedLength { agrees: false, .. } = added {
        let ev = side.ev(Ev::DuplicateContentLengthFieldInRequest, Ev::DuplicateContentLengthFieldInResponse);
        raise(side, tx, ev);
    }
}

pub(super) fn finish_request(side: &mut Side, tx: &mut HttpTx) {
    release_decoder(side, tx);
    tx.req.body.close_files();
    tx.req.complete = true;
    side.raw_trigger = true;
    side.decoder = None;
    side.pending = None;
    if tx.req.method.as_deref() == Some(b"CONNECT") {
        side.state = State::ConnectWait;
    } else {
        side.state = State::Line;
        side.tx = None;
    }
}

pub(super) fn finish_response(side: &mut Side, tx: &mut HttpTx) {
    release_decoder(side, tx);
    close_response_file(tx);
    tx.res.complete = true;
    side.raw_trigger = true;
    side.decoder = None;
    side.pending = None;
    side.state = State::Line;
    side.tx = None;
    side.next_res = tx.id().saturating_add(1);
}

pub(super) fn body_done(side: &mut Side, tx: &mut HttpTx) {
    if side.request {
        finish_request(side, tx);
    } else {
        finish_response(side, tx);
    }
}

/// A message not delimited by the close ended. A response completes but
/// keeps taking what follows as body until a status line shows (see
/// [`State::Finalize`]); its decoder stays, as libhtp's does.
pub(super) fn body_ended(side: &mut Side, tx: &mut HttpTx) {
    if side.request {
        finish_request(side, tx);
        return;
    }
    release_decoder(side, tx);
    let decoder = side.decoder.take();
    // What follows until a status line still extends the file.
    let files = std::mem::take(&mut tx.res.body.files);
    finish_response(side, tx);
    tx.res.body.files = files;
    side.decoder = decoder;
    side.tx = Some(tx.id());
    side.state = State::Finalize;
}

fn close_response_file(tx: &mut HttpTx) {
    tx.res.body.close_files();
}

/// Leaves [`State::Finalize`]: the response it extended is over for good
/// (`tx`: that response's transaction, whose file closes now).
pub(super) fn leave_finalize(side: &mut Side, tx: Option<&mut HttpTx>) {
    if let Some(tx) = tx {
        close_response_file(tx);
    }
    side.tx = None;
    side.decoder = None;
    side.state = State::Line;
}

/// Gives up the message a gap cut through: what was parsed stays visible.
pub(super) fn abandon(side: &mut Side, tx: &mut HttpTx) {
    if side.request {
        if !tx.req.headers_done {
            tx.req.headers_done = true;
            tx.req.build_buffers();
        }
        finish_request(side, tx);
        side.tx = None;
    } else {
        if !tx.res.headers_done {
            tx.res.headers_done = true;
            tx.res.build_buffers();
        }
        finish_response(side, tx);
    }
}
