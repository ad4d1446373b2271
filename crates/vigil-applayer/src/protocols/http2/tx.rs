//! One HTTP/2 stream (or one SETTINGS or GOAWAY of stream 0) as a
//! transaction: each side's decoded header list, body, settings, error
//! code and priority; its EVE `http` record as Suricata writes an HTTP/2
//! one; the `http.*` buffers served from it under HTTP's own numbers, and
//! the `http2.*` ones.

use std::any::Any;

use serde_json::{json, Map, Value};
use vigil_types::{Direction, PerDir};

use super::frame;
use crate::files::File;
use crate::progress::Progress;
use crate::proto::ProtoTx;
use crate::protocols::dns::{carried::MAX_MESSAGE, CarriedDns};
use crate::protocols::http::Buffer as Http;

/// What one side of a stream said.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Side {
    /// Decoded header fields in order (pseudo-headers first), trailers after.
    pub headers: Vec<(Vec<u8>, Vec<u8>)>,
    /// Dynamic table size updates at the start of its header blocks.
    pub size_updates: Vec<u64>,
    /// The body, decoded, up to the limit.
    pub body: Vec<u8>,
    pub settings: Vec<(u16, u32)>,
    /// The error codes of its RST_STREAM or GOAWAY frames, the first few.
    pub error_codes: Vec<u32>,
    /// The weights of its PRIORITY frames and prioritized HEADERS, the first few.
    pub priorities: Vec<u8>,
    /// The first field a second frame gave again, which EVE notes as
    /// `has_multiple` (the record keeps the first value).
    pub multiple: Option<&'static str>,
    pub window: Option<u32>,
    /// The frame types it sent on the stream, a bit each.
    pub frame_types: u16,
    /// Its body as a file (decoded when a Content-Encoding says so).
    pub files: Vec<File>,
    pub done: bool,
    /// Its error code came in a GOAWAY, which EVE writes as `NOERROR`, not `NoError`.
    pub goaway: bool,
    /// Its body as a DNS message (DNS over HTTPS), where its content type says so.
    pub(crate) dns_body: DnsBody,
    headers_seen: bool,
    /// Built once its headers are in: `http.header`, `http.header_names`,
    /// each `name: value`, each name.
    header_buf: Vec<u8>,
    header_names: Vec<u8>,
    lines: Vec<Vec<u8>>,
}

/// A side's body kept as a DNS message (its content type is
/// `application/dns-message`, RFC 8484).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) enum DnsBody {
    #[default]
    No,
    Collecting(Vec<u8>),
    /// Longer than a DNS message can be: no longer kept.
    TooLong,
    /// Ended and taken as the side's message (or found to be none).
    Ended,
}

/// The error codes and priorities a side keeps for its keywords.
const KEPT_VALUES: usize = 8;

impl Side {
    /// An error code from a RST_STREAM or GOAWAY frame.
    pub(crate) fn add_error_code(&mut self, code: u32) {
        Self::add(&mut self.error_codes, code, &mut self.multiple, "error_code");
    }

    /// A weight from a PRIORITY frame or a prioritized HEADERS.
    pub(crate) fn add_priority(&mut self, weight: u8) {
        Self::add(&mut self.priorities, weight, &mut self.multiple, "priority");
    }

    fn add<T>(values: &mut Vec<T>, v: T, multiple: &mut Option<&'static str>, name: &'static str) {
        if !values.is_empty() {
            multiple.get_or_insert(name);
        }
        if values.len() < KEPT_VALUES {
            values.push(v);
        }
    }

    /// A field by its name as sent: HTTP/2 names are lower case, and a
    /// `User-Agent` carried over from an HTTP/1 upgrade is not `user-agent`
    /// (Suricata looks them up so too).
    pub(crate) fn get(&self, name: &[u8]) -> Option<&[u8]> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_slice())
    }

    /// Decoded body bytes: into the inspection window (up to `limit`) and
    /// the side's file.
    pub(crate) fn take_body(&mut self, out: &[u8], limit: usize, cfg: &crate::files::FileConfig) {
        let room = limit.saturating_sub(self.body.len());
        self.body.extend_from_slice(&out[..out.len().min(room)]);
        if let Some(f) = self.files.first_mut() {
            f.append(out, cfg);
        }
        if let DnsBody::Collecting(v) = &mut self.dns_body {
            if v.len() + out.len() > MAX_MESSAGE {
                self.dns_body = DnsBody::TooLong;
            } else {
                v.extend_from_slice(out);
            }
        }
    }

    /// Whether its content type says its body is a DNS message.
    pub(crate) fn carries_dns(&self) -> bool {
        self.get(b"content-type").is_some_and(|t| {
            let media = t.split(|&c| c == b';').next().unwrap_or_default();
            media.trim_ascii().eq_ignore_ascii_case(b"application/dns-message")
        })
    }

    /// The bytes of the fields it holds.
    pub(crate) fn header_bytes(&self) -> usize {
        self.headers.iter().map(|(n, v)| n.len() + v.len()).sum()
    }

    /// Takes a decoded header block.
    pub fn add_headers(&mut self, updates: Vec<u64>, fields: Vec<(Vec<u8>, Vec<u8>)>) {
        self.size_updates.extend(updates);
        self.headers.extend(fields);
        self.headers_seen = true;
        self.header_buf.clear();
        self.header_names = b"\r\n".to_vec();
        self.lines.clear();
        for (n, v) in &self.headers {
            self.lines.push([&n[..], b": ", &v[..]].concat());
            if n.first() == Some(&b':') {
                continue;
            }
            self.header_names.extend_from_slice(n);
            self.header_names.extend_from_slice(b"\r\n");
            // Cookies are left out of `http.header`, as for HTTP/1.
            if n.eq_ignore_ascii_case(b"cookie") || n.eq_ignore_ascii_case(b"set-cookie") {
                continue;
            }
            self.header_buf.extend_from_slice(n);
            self.header_buf.extend_from_slice(b": ");
            self.header_buf.extend_from_slice(v);
            self.header_buf.extend_from_slice(b"\r\n");
        }
        self.header_names.extend_from_slice(b"\r\n");
    }

    fn object(&self) -> Option<Value> {
        let mut o = Map::new();
        if !self.settings.is_empty() {
            let list: Vec<Value> = self
                .settings
                .iter()
                .map(|(id, v)| json!({"settings_id": frame::setting_name(*id), "settings_value": v}))
                .collect();
            o.insert("settings".into(), list.into());
        }
        if let Some(&c) = self.error_codes.first() {
            let name = if self.goaway { frame::error_name(c).replace('_', "") } else { camel_error(c) };
            o.insert("error_code".into(), name.into());
        }
        if let Some(&p) = self.priorities.first() {
            o.insert("priority".into(), p.into());
        }
        if let Some(m) = self.multiple {
            o.insert("has_multiple".into(), m.into());
        }
        (!o.is_empty()).then_some(Value::Object(o))
    }

    fn header_list(&self) -> Vec<Value> {
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        let mut out: Vec<Value> = self.size_updates.iter().map(|s| json!({"table_size_update": s})).collect();
        out.extend(self.headers.iter().map(|(n, v)| json!({"name": text(n), "value": text(v)})));
        out
    }
}

/// Error codes in EVE: the RFC's names in the form Suricata writes them (`NoError`).
fn camel_error(code: u32) -> String {
    let name = frame::error_name(code);
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        return name;
    }
    name.split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next().map_or_else(String::new, |f| f.to_string() + &c.as_str().to_ascii_lowercase())
        })
        .collect()
}

/// The `http2.*` buffers, numbered past HTTP's.
pub const HEADER_NAME: u8 = 64;
pub const HEADER: u8 = 65;

/// A stream as HTTP rules see it: the transaction's data, under HTTP's
/// buffers, without HTTP/2's events (whose numbers are not HTTP's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Http2Stream {
    pub(crate) id: u64,
    pub stream: u32,
    pub sides: PerDir<Side>,
    /// `http.host`: the authority (or Host), lower case, port cut.
    host: Vec<u8>,
    request_line: Vec<u8>,
    response_line: Vec<u8>,
    cookies: Vec<u8>,
}

impl Http2Stream {
    pub fn new(id: u64, stream: u32) -> Http2Stream {
        Http2Stream {
            id,
            stream,
            sides: PerDir::default(),
            host: Vec::new(),
            request_line: Vec::new(),
            response_line: Vec::new(),
            cookies: Vec::new(),
        }
    }

    pub fn side_mut(&mut self, dir: Direction) -> &mut Side {
        self.sides.get_mut(dir)
    }

    pub(crate) fn req(&self) -> &Side {
        &self.sides.to_server
    }

    fn resp(&self) -> &Side {
        &self.sides.to_client
    }

    /// The request's host: its `Host` field, else `:authority` (Suricata
    /// takes the field when both are there and differ).
    fn authority(&self) -> Option<&[u8]> {
        self.req().get(b"host").or_else(|| self.req().get(b":authority"))
    }

    /// A `206` answer's part of a larger file, keyed as HTTP/1's parts are
    /// (host, a space, the path as sent), so parts from either version
    /// make one file; `None` for any other answer or a part that is the
    /// whole file.
    pub fn range_part(&self) -> Option<crate::files::RangePart> {
        if self.resp().get(b":status") != Some(b"206") {
            return None;
        }
        let range = self.resp().get(b"content-range").and_then(crate::files::ByteRange::parse)?;
        if range.is_whole() {
            return None;
        }
        let path = self.req().get(b":path").unwrap_or_default();
        let name = path.split(|&c| c == b'?').next().unwrap_or(path);
        Some(crate::files::RangePart {
            range,
            key: [&self.host[..], b" ", path].concat(),
            whole_name: name.to_vec(),
            // Suricata 8.0.6 writes no `start`/`end` for HTTP/2's parts.
            logged: false,
        })
    }

    /// Whether the request's authority carries user information, and
    /// whether it names another host than its `Host` field.
    pub fn authority_checks(&self) -> (bool, bool) {
        let r = self.req();
        let Some(a) = r.get(b":authority") else { return (false, false) };
        let mismatch = r.get(b"host").is_some_and(|h| !h.eq_ignore_ascii_case(a));
        (a.contains(&b'@'), mismatch)
    }

    /// Builds the derived buffers once a header block came.
    pub fn headers_changed(&mut self) {
        let authority = self.authority().map(<[u8]>::to_vec);
        self.host = authority
            .map(|a| {
                let a = a.rsplit(|&c| c == b'@').next().unwrap_or(&a).to_vec();
                let end = if a.first() == Some(&b'[') {
                    a.iter().position(|&c| c == b']').map_or(a.len(), |p| p + 1)
                } else {
                    a.iter().position(|&c| c == b':').unwrap_or(a.len())
                };
                a[..end].to_ascii_lowercase()
            })
            .unwrap_or_default();
        let r = &self.sides.to_server;
        if let (Some(m), Some(p)) = (r.get(b":method"), r.get(b":path")) {
            self.request_line = [m, b" ", p, b" HTTP/2"].concat();
        }
        if let Some(s) = self.sides.to_client.get(b":status") {
            self.response_line = [b"HTTP/2 ", s, b"\r\n"].concat();
        }
        let cookies: Vec<&[u8]> =
            r.headers.iter().filter(|(n, _)| n.eq_ignore_ascii_case(b"cookie")).map(|(_, v)| v.as_slice()).collect();
        self.cookies = cookies.join(&b"; "[..]);
    }

    fn record(&self) -> Value {
        let text = |b: &[u8]| Value::from(String::from_utf8_lossy(b).into_owned());
        let (rq, rs) = (self.req(), self.resp());
        let mut o = Map::new();
        o.insert("version".into(), "2".into());
        // Only a Host field is the hostname; `:authority` alone is not written.
        if let Some(a) = rq.get(b"host") {
            o.insert("hostname".into(), text(a));
        }
        if let Some(p) = rq.get(b":path") {
            o.insert("url".into(), text(p));
        }
        if let Some(u) = rq.get(b"user-agent") {
            o.insert("http_user_agent".into(), text(u));
        }
        if let Some(m) = rq.get(b":method") {
            o.insert("http_method".into(), text(m));
        }
        if let Some(s) = rs.get(b":status") {
            let status = std::str::from_utf8(s).ok().and_then(|s| s.parse::<u64>().ok());
            o.insert("status".into(), status.map_or_else(|| text(s), Value::from));
        }
        // The length the response announces, else the request's, as Suricata writes it.
        let length = |s: &Side| s.get(b"content-length").and_then(|v| std::str::from_utf8(v).ok()?.trim().parse::<u64>().ok());
        if let Some(n) = length(rs).or_else(|| length(rq)) {
            o.insert("length".into(), n.into());
        }
        if !rq.headers.is_empty() || !rq.size_updates.is_empty() {
            o.insert("request_headers".into(), rq.header_list().into());
        }
        if !rs.headers.is_empty() || !rs.size_updates.is_empty() {
            o.insert("response_headers".into(), rs.header_list().into());
        }
        let mut h2 = Map::new();
        h2.insert("stream_id".into(), self.stream.into());
        if let Some(x) = rq.object() {
            h2.insert("request".into(), x);
        }
        if let Some(x) = rs.object() {
            h2.insert("response".into(), x);
        }
        o.insert("http2".into(), Value::Object(h2));
        Value::Object(o)
    }

    /// An `http.*` buffer of side `dir`, by HTTP's number.
    fn http_buffer(&self, dir: Direction, b: Http, index: usize) -> Option<&[u8]> {
        fn one(v: Option<&[u8]>, index: usize) -> Option<&[u8]> {
            if index == 0 {
                v
            } else {
                None
            }
        }
        let side = self.sides.get(dir);
        let (rq, rs) = (self.req(), self.resp());
        match b {
            Http::Uri | Http::UriRaw => one(rq.get(b":path"), index),
            Http::Method => one(rq.get(b":method"), index),
            Http::Protocol => one(Some(b"HTTP/2"), index),
            Http::RequestLine => one(Some(&self.request_line).filter(|l| !l.is_empty()).map(Vec::as_slice), index),
            Http::Host => one(Some(&self.host).filter(|h| !h.is_empty()).map(Vec::as_slice), index),
            Http::HostRaw => one(self.authority(), index),
            Http::UserAgent => one(rq.get(b"user-agent"), index),
            Http::Cookie => match dir {
                Direction::ToServer => one(Some(&self.cookies).filter(|c| !c.is_empty()).map(Vec::as_slice), index),
                Direction::ToClient => one(rs.get(b"set-cookie"), index),
            },
            Http::Referer => one(rq.get(b"referer"), index),
            Http::Accept => one(rq.get(b"accept"), index),
            Http::AcceptEnc => one(rq.get(b"accept-encoding"), index),
            Http::AcceptLang => one(rq.get(b"accept-language"), index),
            Http::Connection => one(side.get(b"connection"), index),
            Http::ContentType => one(side.get(b"content-type"), index),
            Http::ContentLen => one(side.get(b"content-length"), index),
            Http::Header | Http::HeaderRaw => one(Some(&side.header_buf).filter(|_| side.headers_seen).map(Vec::as_slice), index),
            Http::HeaderNames => one(Some(&side.header_names).filter(|_| side.headers_seen).map(Vec::as_slice), index),
            Http::RequestBody => one(Some(&rq.body).filter(|b| !b.is_empty()).map(Vec::as_slice), index),
            Http::ResponseBody => one(Some(&rs.body).filter(|b| !b.is_empty()).map(Vec::as_slice), index),
            Http::StatCode => one(rs.get(b":status"), index),
            // HTTP/2 has no reason phrase: an empty buffer, as Suricata's.
            Http::StatMsg => one(Some(&b""[..]), index),
            Http::ResponseLine => one(Some(&self.response_line).filter(|l| !l.is_empty()).map(Vec::as_slice), index),
            Http::Location => one(rs.get(b"location"), index),
            Http::Server => one(rs.get(b"server"), index),
            Http::RequestHeader => rq.lines.get(index).map(Vec::as_slice),
            Http::ResponseHeader => rs.lines.get(index).map(Vec::as_slice),
            Http::Start => None,
        }
    }
}

impl ProtoTx for Http2Stream {
    fn id(&self) -> u64 {
        self.id
    }

    fn progress(&self, dir: Direction) -> Progress {
        let s = self.sides.get(dir);
        if s.done {
            Progress::Complete
        } else if s.headers_seen {
            Progress::Headers
        } else {
            Progress::None
        }
    }

    fn buffer(&self, dir: Direction, id: u8, index: usize) -> Option<&[u8]> {
        let side = self.sides.get(dir);
        match id {
            HEADER_NAME => side.headers.get(index).map(|(n, _)| n.as_slice()),
            HEADER => side.lines.get(index).map(Vec::as_slice),
            _ => self.http_buffer(dir, Http::from_id(id)?, index),
        }
    }

    fn eve(&self) -> Value {
        self.record()
    }

    fn files(&self, dir: Direction) -> &[File] {
        &self.sides.get(dir).files
    }

    fn file_size(&self, dir: Direction) -> Option<(u64, bool)> {
        let f = self.sides.get(dir).files.first()?;
        (!f.is_open()).then_some((f.size, !f.gaps))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// One stream (or a SETTINGS or GOAWAY of stream 0), with its events; to
/// HTTP rules it is its [`Http2Stream`] ([`ProtoTx::carried`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Http2Tx {
    pub(crate) s: Http2Stream,
    pub(crate) events: u64,
    /// The DNS its sides carried (DNS over HTTPS), once one did.
    pub(crate) dns: Option<Box<CarriedDns>>,
}

impl Http2Tx {
    pub fn new(id: u64, stream: u32) -> Http2Tx {
        Http2Tx { s: Http2Stream::new(id, stream), events: 0, dns: None }
    }

    /// Takes `msg` as the DNS message of side `dir`; false when it is none.
    pub(crate) fn take_dns(&mut self, dir: Direction, msg: &[u8]) -> bool {
        let id = self.s.id;
        let dns = self.dns.get_or_insert_with(|| Box::new(CarriedDns::new(id)));
        dns.take(dir, msg)
    }

    /// The DNS it carries, where a side carried a message.
    pub fn dns(&self) -> Option<&CarriedDns> {
        self.dns.as_deref().filter(|d| !d.is_empty())
    }
}

impl std::ops::Deref for Http2Tx {
    type Target = Http2Stream;
    fn deref(&self) -> &Http2Stream {
        &self.s
    }
}

impl std::ops::DerefMut for Http2Tx {
    fn deref_mut(&mut self) -> &mut Http2Stream {
        &mut self.s
    }
}

impl ProtoTx for Http2Tx {
    fn id(&self) -> u64 {
        self.s.id
    }

    fn progress(&self, dir: Direction) -> Progress {
        self.s.progress(dir)
    }

    fn buffer(&self, dir: Direction, id: u8, index: usize) -> Option<&[u8]> {
        self.s.buffer(dir, id, index)
    }

    /// A stream that carried DNS is a `dns` record (the message, its HTTP
    /// object beside), as Suricata writes DNS over HTTP/2.
    fn eve(&self) -> Value {
        match self.dns() {
            Some(d) => d.eve(),
            None => self.s.record(),
        }
    }

    fn record_type(&self) -> Option<&'static str> {
        self.dns().map(|_| "dns")
    }

    fn eve_metadata(&self, opts: Option<&crate::proto::RecordOptions>) -> Value {
        match self.dns() {
            Some(d) => d.eve_brief(),
            None => opts.map_or_else(|| self.eve(), |o| self.eve_with(o)),
        }
    }

    fn record_has_tx_id(&self) -> bool {
        false
    }

    fn eve_siblings(&self, _opts: crate::proto::SiblingOptions<'_>) -> Vec<(&'static str, Value)> {
        match self.dns() {
            Some(_) => vec![("http", self.s.record())],
            None => Vec::new(),
        }
    }

    /// A frame of stream 0 other than SETTINGS and GOAWAY (PING,
    /// WINDOW_UPDATE) is a transaction with nothing to write, as Suricata
    /// forms and logs them; so is a stream that only saw such frames.
    fn writes_record(&self) -> bool {
        let says = |s: &Side| !s.headers.is_empty() || !s.size_updates.is_empty() || s.object().is_some();
        says(&self.s.sides.to_server) || says(&self.s.sides.to_client)
    }

    fn events(&self) -> u64 {
        self.events
    }

    /// Its events change as its frames come (a DATA frame can raise one
    /// long after the headers): `app-layer-event` rules are run again on
    /// each new one.
    fn detect_updates(&self, _dir: Direction) -> Option<u64> {
        Some(u64::from(self.events.count_ones()))
    }

    fn files(&self, dir: Direction) -> &[File] {
        self.s.files(dir)
    }

    fn file_size(&self, dir: Direction) -> Option<(u64, bool)> {
        self.s.file_size(dir)
    }

    fn carried(&self, proto: &str) -> Option<&dyn ProtoTx> {
        match proto {
            "http" => Some(&self.s),
            "http2" => Some(self),
            "dns" => self.dns().map(|d| d as &dyn ProtoTx),
            _ => None,
        }
    }

    fn logs_out_of_order(&self) -> bool {
        true
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_codes_as_eve_writes_them() {
        assert_eq!(camel_error(0), "NoError");
        assert_eq!(camel_error(13), "Http11Required");
        assert_eq!(camel_error(77), "77");
    }
}
