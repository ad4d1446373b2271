//! One request/response exchange and the inspection buffers it answers.

use super::headers::{Header, HeaderItems, HeaderTable};
use crate::codecs::multipart::{Event, Multipart};
use crate::files::{File, FileConfig};
use super::Buffer;
use vigil_types::Direction;

/// The protocol token of a start line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Version {
    /// No protocol token at all (HTTP/0.9 requests, unmatched responses).
    #[default]
    Missing,
    /// Present but not `HTTP/x.y` with a version we know.
    Invalid,
    V09,
    V10,
    V11,
}

/// libhtp's reading: `HTTP`, `/`, then `1.1`, `1.0` or `.9` after any
/// leading zeros; blanks are tolerated around each part, nothing else.
pub(crate) fn parse_version(p: &[u8]) -> Version {
    fn skip(s: &[u8], f: impl Fn(u8) -> bool) -> &[u8] {
        let n = s.iter().take_while(|&&b| f(b)).count();
        s.get(n..).unwrap_or_default()
    }
    let s = skip(p, |b| b.is_ascii_whitespace());
    if !super::line::starts_with_ci(s, b"HTTP") {
        return Version::Invalid;
    }
    let s = skip(s.get(4..).unwrap_or_default(), |b| b.is_ascii_whitespace());
    let Some(s) = s.strip_prefix(b"/") else { return Version::Invalid };
    let s = skip(s, |b| b.is_ascii_whitespace() || b == b'0');
    let (version, rest) = if let Some(r) = s.strip_prefix(b"1.1") {
        (Version::V11, r)
    } else if let Some(r) = s.strip_prefix(b"1.0") {
        (Version::V10, r)
    } else if let Some(r) = s.strip_prefix(b".9") {
        (Version::V09, r)
    } else {
        return Version::Invalid;
    };
    if skip(rest, |b| b.is_ascii_whitespace()).is_empty() {
        version
    } else {
        Version::Invalid
    }
}

/// A message body as inspection sees it: the first `limit` decoded bytes,
/// and how much went by in all.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Body {
    pub(crate) kept: Vec<u8>,
    pub(crate) limit: usize,
    /// Decoded (dechunked, decompressed) bytes seen.
    pub(crate) len: u64,
    /// Bytes on the wire, chunk framing included (EVE `length`).
    pub(crate) wire_len: u64,
    /// Bytes lost to capture gaps.
    pub(crate) lost: u64,
    /// The body's files: the body itself (responses, PUT requests), or
    /// each part of a multipart upload that names a file.
    pub(crate) files: Vec<File>,
    pub(crate) file_cfg: FileConfig,
    /// A multipart upload's reader, and whether its open part is a file.
    pub(crate) multipart: Option<Box<Multipart>>,
    pub(crate) part_is_file: bool,
    /// A `filestore` asked for this body's files before they opened: the
    /// signature's id.
    pub(crate) store_for: Option<u32>,
    /// The body's file, opened when its first decoded byte (or a hole)
    /// comes: a body that decodes to nothing carries no file, as in
    /// Suricata, which opens files with their first data.
    pub(crate) pending_file: Option<File>,
}

/// Parts of one upload tracked as files; later ones are not (each file
/// costs its name and digest state, and a body may hold any number).
const MAX_PARTS: usize = 256;

impl Body {
    /// The body ended: a multipart part still open was cut short; a whole
    /// body's file is complete, if it had any byte.
    pub(crate) fn close_files(&mut self) {
        match &self.multipart {
            Some(_) => self.files.iter_mut().for_each(File::truncate),
            None => {
                self.pending_file = None;
                self.files.iter_mut().for_each(File::close);
            }
        }
    }

    /// `len` bytes lost: the file they belonged to has a gap.
    pub(crate) fn lose(&mut self, len: u64) {
        if let Some(f) = self.pending_file.take() {
            self.files.push(f);
        }
        let open = match &self.multipart {
            Some(mp) if mp.in_part() && self.part_is_file => self.files.last_mut(),
            Some(_) => None,
            None => self.files.first_mut(),
        };
        if let Some(f) = open {
            f.gap(len);
        }
    }

    fn new(limit: usize) -> Self {
        Body { limit, ..Body::default() }
    }

    pub(crate) fn push(&mut self, data: &[u8]) {
        match self.multipart.as_deref_mut() {
            Some(mp) => {
                let (files, cfg, is_file) = (&mut self.files, &self.file_cfg, &mut self.part_is_file);
                let (store_for, limit) = (self.store_for, self.limit);
                mp.feed(data, &mut |e| match e {
                    Event::Part(headers) => {
                        let name = part_header(headers, b"content-disposition").and_then(disposition_filename);
                        *is_file = name.is_some() && files.len() < MAX_PARTS;
                        if let (true, Some(name)) = (*is_file, name) {
                            let mut f = File::open(name, 0, cfg);
                            if let Some(sid) = store_for {
                                f.mark_store(sid);
                            }
                            files.push(f);
                        }
                    }
                    Event::Data(d) if *is_file => {
                        // The parts' windows share the body's inspection limit.
                        let used: usize = files.iter().map(|f| f.window.len()).sum();
                        let room = limit.saturating_sub(used).min(d.len());
                        if let Some(f) = files.last_mut() {
                            f.append(d, cfg);
                            f.window.extend_from_slice(&d[..room]);
                        }
                    }
                    Event::End if *is_file => files.last_mut().into_iter().for_each(File::close),
                    Event::Data(_) | Event::End => {}
                });
            }
            None => {
                if !data.is_empty() {
                    if let Some(f) = self.pending_file.take() {
                        self.files.push(f);
                    }
                }
                if let Some(f) = self.files.first_mut() {
                    f.append(data, &self.file_cfg);
                }
            }
        }
        self.len = self.len.saturating_add(data.len() as u64);
        let room = self.limit.saturating_sub(self.kept.len());
        self.kept.extend_from_slice(data.get(..room.min(data.len())).unwrap_or_default());
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Request {
    /// False for a transaction opened by a response nobody asked for.
    pub(crate) seen: bool,
    pub(crate) line: Option<Vec<u8>>,
    pub(crate) method: Option<Vec<u8>>,
    pub(crate) uri: Option<Vec<u8>>,
    pub(crate) uri_norm: Option<Vec<u8>>,
    pub(crate) protocol: Option<Vec<u8>>,
    pub(crate) version: Version,
    pub(crate) http09: bool,
    pub(crate) headers: HeaderTable,
    pub(crate) raw_headers: Vec<u8>,
    pub(crate) headers_done: bool,
    pub(crate) body: Body,
    pub(crate) complete: bool,
    /// Normalized host (URI authority wins over the Host header).
    pub(crate) host: Option<Vec<u8>>,
    pub(crate) host_raw: Option<Vec<u8>>,
    pub(crate) port: Option<u16>,
    pub(crate) uri_has_host: bool,
    pub(crate) header_buf: Vec<u8>,
    pub(crate) header_items: HeaderItems,
    pub(crate) names_buf: Vec<u8>,
    pub(crate) start_buf: Vec<u8>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Response {
    pub(crate) line: Option<Vec<u8>>,
    pub(crate) protocol: Option<Vec<u8>>,
    pub(crate) version: Version,
    pub(crate) status_raw: Option<Vec<u8>>,
    pub(crate) status: Option<u16>,
    pub(crate) message: Option<Vec<u8>>,
    pub(crate) headers: HeaderTable,
    pub(crate) raw_headers: Vec<u8>,
    pub(crate) headers_done: bool,
    pub(crate) body: Body,
    pub(crate) complete: bool,
    /// Interim `100 Continue` responses seen before the final one.
    pub(crate) continues: u32,
    pub(crate) header_buf: Vec<u8>,
    pub(crate) header_items: HeaderItems,
    pub(crate) names_buf: Vec<u8>,
    pub(crate) start_buf: Vec<u8>,
}

/// `line\r\n` then `Name: value\r\n` per header and a closing `\r\n` when
/// there are headers: Suricata's `http.start`.
fn start_buffer(line: Option<&[u8]>, headers: &HeaderTable) -> Vec<u8> {
    let Some(line) = line else { return Vec::new() };
    let mut out = Vec::with_capacity(line.len() + 4);
    out.extend_from_slice(line);
    out.extend_from_slice(b"\r\n");
    headers.normalized_into(None, &mut out);
    if headers.len() > 0 {
        out.extend_from_slice(b"\r\n");
    }
    out
}

impl Request {
    /// Builds the header-derived buffers; called again after trailers.
    pub(crate) fn build_buffers(&mut self) {
        self.header_buf = self.headers.normalized(Some(b"cookie"));
        self.header_items = self.headers.items();
        self.names_buf = self.headers.names();
        self.start_buf = start_buffer(self.line.as_deref(), &self.headers);
    }
}

impl Response {
    pub(crate) fn build_buffers(&mut self) {
        self.header_buf = self.headers.normalized(Some(b"set-cookie"));
        self.header_items = self.headers.items();
        self.names_buf = self.headers.names();
        self.start_buf = start_buffer(self.line.as_deref(), &self.headers);
    }

    /// Forgets an interim (1xx) response so the final one starts clean.
    pub(crate) fn reset_for_final(&mut self) {
        let continues = self.continues;
        let limit = self.body.limit;
        *self = Response { continues, body: Body::new(limit), ..Response::default() };
    }
}

/// One HTTP request and its response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpTx {
    id: u64,
    pub(crate) req: Request,
    pub(crate) res: Response,
    /// Anomalies already reported for this transaction (bit per event).
    pub(crate) events: u64,
}

fn non_empty(b: &[u8]) -> Option<&[u8]> {
    (!b.is_empty()).then_some(b)
}

impl HttpTx {
    pub(crate) fn new(id: u64, request_body_limit: usize, response_body_limit: usize) -> Self {
        HttpTx {
            id,
            req: Request { body: Body::new(request_body_limit), ..Request::default() },
            res: Response { body: Body::new(response_body_limit), ..Response::default() },
            events: 0,
        }
    }

    /// Whether the parser raised any of the events in `mask` (bits from
    /// [`event_bit`](super::event_bit)) on this transaction.
    pub fn has_events(&self, mask: u64) -> bool {
        self.events & mask != 0
    }

    /// Whether the `dir` side's start line and headers are parsed, so its
    /// header-derived buffers are final.
    pub fn headers_done(&self, dir: Direction) -> bool {
        match dir {
            Direction::ToServer => self.req.headers_done,
            Direction::ToClient => self.res.headers_done,
        }
    }

    /// The request method as sent.
    pub fn method(&self) -> Option<&[u8]> {
        self.req.method.as_deref()
    }

    /// The normalized request URI (`http.uri`).
    pub fn uri(&self) -> Option<&[u8]> {
        self.req.uri_norm.as_deref().and_then(non_empty)
    }

    /// The request URI as sent (`http.uri.raw`).
    pub fn raw_uri(&self) -> Option<&[u8]> {
        self.req.uri.as_deref()
    }

    /// Length of the normalized URI, what `urilen` compares by default.
    pub fn uri_len(&self) -> Option<usize> {
        self.uri().map(<[u8]>::len)
    }

    /// Length of the URI as sent (`urilen:...,raw`).
    pub fn raw_uri_len(&self) -> Option<usize> {
        self.raw_uri().map(<[u8]>::len)
    }

    /// The response status code, when it parsed as a number in 100..=999.
    pub fn status(&self) -> Option<u16> {
        self.res.status
    }

    /// The normalized host name (lowercase, no port), from the URI or the Host header.
    pub fn hostname(&self) -> Option<&[u8]> {
        self.req.host.as_deref()
    }

    /// The port given with the host (URI authority or Host header), if any.
    pub fn port(&self) -> Option<u16> {
        self.req.port
    }

    /// Whether the request was an HTTP/0.9 simple request (no protocol, no headers).
    pub fn is_http09(&self) -> bool {
        self.req.http09
    }

    /// The body of one side as kept (dechunked, decompressed, up to the
    /// body limit of its side).
    pub fn body(&self, dir: Direction) -> &[u8] {
        match dir {
            Direction::ToServer => &self.req.body.kept,
            Direction::ToClient => &self.res.body.kept,
        }
    }

    /// Decoded request body bytes seen (not only those kept for inspection),
    /// plus those lost to capture gaps: Suricata counts a file's gaps in its size.
    pub fn request_body_len(&self) -> u64 {
        self.req.body.len.saturating_add(self.req.body.lost)
    }

    /// Decoded response body bytes seen (decompression stops at the configured
    /// cap), plus those lost to capture gaps, as Suricata sizes files.
    pub fn response_body_len(&self) -> u64 {
        self.res.body.len.saturating_add(self.res.body.lost)
    }

    /// Response body bytes as they crossed the wire, chunk framing included.
    pub fn response_message_len(&self) -> u64 {
        self.res.body.wire_len
    }

    /// Request body bytes as they crossed the wire, chunk framing included.
    pub fn request_message_len(&self) -> u64 {
        self.req.body.wire_len
    }

    /// Body bytes lost to capture gaps, per direction.
    pub fn body_bytes_lost(&self, dir: Direction) -> u64 {
        match dir {
            Direction::ToServer => self.req.body.lost,
            Direction::ToClient => self.res.body.lost,
        }
    }

    /// The request header table (one entry per name, repeats joined).
    pub fn request_headers(&self) -> &[Header] {
        &self.req.headers.list
    }

    /// The response header table (one entry per name, repeats joined).
    pub fn response_headers(&self) -> &[Header] {
        &self.res.headers.list
    }

    /// The value of a request header, any case.
    pub fn request_header(&self, name: &str) -> Option<&[u8]> {
        self.req.headers.value(name.as_bytes())
    }

    /// The value of a response header, any case.
    pub fn response_header(&self, name: &str) -> Option<&[u8]> {
        self.res.headers.value(name.as_bytes())
    }

    /// The name a body of `dir` is logged under as a file: the
    /// `Content-Disposition` filename, else the request URI's decoded path
    /// (as Suricata names HTTP files).
    pub fn file_name(&self, dir: Direction) -> Option<Vec<u8>> {
        let disposition = match dir {
            Direction::ToServer => self.request_header("content-disposition"),
            Direction::ToClient => self.response_header("content-disposition"),
        };
        if let Some(name) = disposition.and_then(disposition_filename) {
            return Some(name);
        }
        // The path as decoded (`%20` a space), as Suricata names the file;
        // the raw one where the URI did not normalize.
        let uri = self.uri().or(self.raw_uri())?;
        let path = uri.split(|&c| c == b'?').next().unwrap_or(uri);
        (!path.is_empty()).then(|| path.to_vec())
    }

    /// The files of side `dir`: its body when that is a file.
    pub fn files(&self, dir: Direction) -> &[File] {
        match dir {
            Direction::ToServer => &self.req.body.files,
            Direction::ToClient => &self.res.body.files,
        }
    }

    /// `file.data` of side `dir`: the body (as far as kept) when it is one
    /// file, else each multipart part's window in turn.
    pub fn file_data(&self, dir: Direction, index: usize) -> Option<&[u8]> {
        let body = match dir {
            Direction::ToServer => &self.req.body,
            Direction::ToClient => &self.res.body,
        };
        let data = match &body.multipart {
            Some(_) => body.files.get(index).map(|f| f.window.as_slice()),
            // A request body is a file only when it is uploaded whole (PUT).
            None if dir == Direction::ToServer && body.files.is_empty() => None,
            None => (index == 0).then_some(body.kept.as_slice()),
        };
        data.filter(|d| !d.is_empty())
    }

    /// Marks side `dir`'s files for storage on behalf of `sid`: those it
    /// has, and those its body has yet to open.
    pub fn store_files(&mut self, dir: Direction, sid: u32) {
        let body = match dir {
            Direction::ToServer => &mut self.req.body,
            Direction::ToClient => &mut self.res.body,
        };
        body.files.iter_mut().chain(body.pending_file.as_mut()).for_each(|f| f.mark_store(sid));
        body.store_for = Some(sid);
    }

    /// Whether `dir`'s message is complete and whole: a body cut short, or
    /// with a hole from a capture gap, is logged as truncated (as Suricata
    /// logs a file with gaps).
    pub fn side_complete(&self, dir: Direction) -> bool {
        match dir {
            Direction::ToServer => self.req.complete && self.req.body.lost == 0,
            Direction::ToClient => self.res.complete && self.res.body.lost == 0,
        }
    }

    fn req_header(&self, name: &[u8]) -> Option<&[u8]> {
        self.req.headers_done.then(|| self.req.headers.value(name)).flatten()
    }

    fn res_header(&self, name: &[u8]) -> Option<&[u8]> {
        self.res.headers_done.then(|| self.res.headers.value(name)).flatten()
    }
}

impl HttpTx {
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The `dir` side's message is whole.
    pub fn complete(&self, dir: Direction) -> bool {
        match dir {
            Direction::ToServer => self.req.complete,
            Direction::ToClient => self.res.complete,
        }
    }

    /// The events raised on it, by [`event_bit`](super::event_bit).
    pub fn event_bits(&self) -> u64 {
        self.events
    }

    /// Value `index` of buffer `id` of side `dir`; a buffer of one side
    /// answers whichever side is asked.
    pub fn buffer(&self, dir: Direction, id: Buffer, index: usize) -> Option<&[u8]> {
        let (rq, rs) = (&self.req, &self.res);
        let request = dir == Direction::ToServer;
        // The per-header buffers are the indexed ones; they exist once the
        // headers are in, as the other header buffers.
        match id {
            Buffer::RequestHeader => return rq.header_items.get(index),
            Buffer::ResponseHeader => return rs.header_items.get(index),
            _ if index != 0 => return None,
            _ => {}
        }
        let side = if request { rq_side(rq) } else { rs_side(rs) };
        match id {
            Buffer::Uri => self.uri(),
            Buffer::UriRaw => self.raw_uri(),
            Buffer::Method => rq.method.as_deref(),
            Buffer::RequestLine => rq.line.as_deref(),
            Buffer::Host => rq.host.as_deref(),
            Buffer::HostRaw => rq.host_raw.as_deref(),
            Buffer::UserAgent => self.req_header(b"user-agent"),
            Buffer::Referer => self.req_header(b"referer"),
            Buffer::Accept => self.req_header(b"accept"),
            Buffer::AcceptEnc => self.req_header(b"accept-encoding"),
            Buffer::AcceptLang => self.req_header(b"accept-language"),
            Buffer::RequestBody => non_empty(&rq.body.kept),
            Buffer::StatCode => rs.status_raw.as_deref(),
            Buffer::StatMsg => rs.message.as_deref(),
            Buffer::ResponseLine => rs.line.as_deref(),
            Buffer::Location => self.res_header(b"location"),
            Buffer::Server => self.res_header(b"server"),
            Buffer::ResponseBody => non_empty(&rs.body.kept),
            Buffer::Protocol => side.protocol,
            Buffer::Header => non_empty(side.header_buf),
            Buffer::HeaderRaw => non_empty(side.raw_headers),
            Buffer::HeaderNames => non_empty(side.names_buf),
            Buffer::Start => non_empty(side.start_buf),
            Buffer::Cookie if request => self.req_header(b"cookie"),
            Buffer::Cookie => self.res_header(b"set-cookie"),
            Buffer::Connection if request => self.req_header(b"connection"),
            Buffer::Connection => self.res_header(b"connection"),
            Buffer::ContentType if request => self.req_header(b"content-type"),
            Buffer::ContentType => self.res_header(b"content-type"),
            Buffer::ContentLen if request => self.req_header(b"content-length"),
            Buffer::ContentLen => self.res_header(b"content-length"),
            Buffer::RequestHeader | Buffer::ResponseHeader => None,
        }
    }
}

/// The buffers both sides build, of one side.
struct SideBufs<'a> {
    protocol: Option<&'a [u8]>,
    header_buf: &'a [u8],
    raw_headers: &'a [u8],
    names_buf: &'a [u8],
    start_buf: &'a [u8],
}

fn rq_side(rq: &Request) -> SideBufs<'_> {
    SideBufs {
        protocol: rq.protocol.as_deref(),
        header_buf: &rq.header_buf,
        raw_headers: &rq.raw_headers,
        names_buf: &rq.names_buf,
        start_buf: &rq.start_buf,
    }
}

fn rs_side(rs: &Response) -> SideBufs<'_> {
    SideBufs {
        protocol: rs.protocol.as_deref(),
        header_buf: &rs.header_buf,
        raw_headers: &rs.raw_headers,
        names_buf: &rs.names_buf,
        start_buf: &rs.start_buf,
    }
}

/// `filename=` of a `Content-Disposition` value, quotes removed.
/// The value of header `name` (lower case) in a raw header block.
fn part_header<'a>(block: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    block.split(|&b| b == b'\n').find_map(|line| {
        let colon = line.iter().position(|&b| b == b':')?;
        line[..colon].trim_ascii().eq_ignore_ascii_case(name).then(|| line[colon + 1..].trim_ascii())
    })
}

fn disposition_filename(v: &[u8]) -> Option<Vec<u8>> {
    for part in v.split(|&c| c == b';') {
        let part = part.trim_ascii();
        let Some(eq) = part.iter().position(|&c| c == b'=') else { continue };
        if !part[..eq].trim_ascii().eq_ignore_ascii_case(b"filename") {
            continue;
        }
        let value = part[eq + 1..].trim_ascii();
        let value = value.strip_prefix(b"\"").map_or(value, |v| v.strip_suffix(b"\"").unwrap_or(v));
        return (!value.is_empty()).then(|| value.to_vec());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert_eq!(parse_version(b"HTTP/1.1"), Version::V11);
        assert_eq!(parse_version(b"http/1.0"), Version::V10);
        assert_eq!(parse_version(b"HTTP/2.0"), Version::Invalid);
        assert_eq!(parse_version(b"FOO"), Version::Invalid);
        assert_eq!(parse_version(b"HTTP/0.9"), Version::V09);
        assert_eq!(parse_version(b"HTTP / 01.1"), Version::V11);
        assert_eq!(parse_version(b"HTTP/1.01"), Version::Invalid);
    }

    #[test]
    fn body_keeps_only_the_limit_but_counts_all() {
        let mut b = Body::new(4);
        b.push(b"abc");
        b.push(b"def");
        assert_eq!((b.kept.as_slice(), b.len), (&b"abcd"[..], 6));
    }
}
