//! The one streaming contract every application-layer parser follows.

use vigil_types::Direction;

/// What a parser did with the bytes it was offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParseResult {
    /// Every byte was consumed.
    Done,
    /// The first `consumed` bytes were used; the rest is an unfinished unit
    /// (a header line, a record) that needs at least `needed` more bytes.
    /// The caller keeps `data[consumed..]` and offers it again, followed by
    /// new data, once it has grown. The caller bounds what it keeps.
    Incomplete { consumed: usize, needed: usize },
    /// The data does not follow the protocol; the parser will not make sense
    /// of this direction again and the caller stops feeding it.
    Error,
}

/// A parser for one flow. Bytes arrive in order, per direction, in chunks of
/// any size: the same stream cut differently yields the same transactions.
pub trait AppParser {
    type Tx: Transaction;

    /// Consumes a chunk of the `dir` byte stream.
    fn parse(&mut self, dir: Direction, data: &[u8]) -> ParseResult;

    /// `len` bytes of `dir` were lost (a capture gap). The parser resyncs
    /// where it safely can, or gives that direction up.
    fn on_gap(&mut self, dir: Direction, len: u64);

    /// The transactions still held, oldest first.
    fn txs(&self) -> &[Self::Tx];

    /// Frees transactions with an id below `id` (logged and inspected).
    fn prune(&mut self, id: u64);

    /// Anomalies seen so far (Suricata's app-layer event names), drained.
    fn take_events(&mut self) -> Vec<AppEvent>;
}

/// One request/response pair (HTTP), query/answer (DNS) or handshake (TLS).
pub trait Transaction {
    /// Ids start at 0 and grow by one per transaction of the flow.
    fn id(&self) -> u64;

    /// Whether the `dir` side of this transaction is complete (request
    /// fully parsed, response fully parsed, ...). Buffers of a direction are
    /// final once it is complete.
    fn complete(&self, dir: Direction) -> bool;

    /// The bytes of an inspection buffer. Buffers that hold several values
    /// (`dns.query` with several questions, `tls.certs`, ...) are indexed;
    /// single-valued buffers answer only index 0.
    fn buffer(&self, id: BufferId, index: usize) -> Option<&[u8]>;
}

/// An anomaly a parser found, under Suricata's event name (for
/// `app-layer-event` and EVE `anomaly` records), e.g. `http.request_field_too_long`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppEvent {
    pub name: &'static str,
    /// The transaction it belongs to, if any.
    pub tx_id: Option<u64>,
}

/// Every inspection buffer a rule can select with a sticky buffer keyword.
/// The name in the comment is Suricata's keyword.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BufferId {
    // HTTP request side.
    /// `http.uri`: normalized request URI (percent-decoded, path normalized).
    HttpUri,
    /// `http.uri.raw`: the request URI as sent.
    HttpUriRaw,
    /// `http.method`
    HttpMethod,
    /// `http.protocol`: e.g. `HTTP/1.1` (request side).
    HttpProtocol,
    /// `http.request_line`: method, URI and protocol as sent, without CRLF.
    HttpRequestLine,
    /// `http.host`: Host header value, lowercased, port stripped.
    HttpHost,
    /// `http.host.raw`: Host header value as sent.
    HttpHostRaw,
    /// `http.user_agent`
    HttpUserAgent,
    /// `http.cookie` (request `Cookie`, response `Set-Cookie`)
    HttpCookie,
    /// `http.referer`
    HttpReferer,
    /// `http.accept`
    HttpAccept,
    /// `http.accept_enc`
    HttpAcceptEnc,
    /// `http.accept_lang`
    HttpAcceptLang,
    /// `http.connection`
    HttpConnection,
    /// `http.content_type` (of the direction inspected)
    HttpContentType,
    /// `http.content_len` (of the direction inspected)
    HttpContentLen,
    /// `http.header`: normalized headers of the direction, `Name: value\r\n` each,
    /// excluding Cookie/Set-Cookie, as Suricata does.
    HttpHeader,
    /// `http.header.raw`: the header block as sent.
    HttpHeaderRaw,
    /// `http.header_names`: `\r\n` + each name + `\r\n` ... + `\r\n`.
    HttpHeaderNames,
    /// `http.request_body` (dechunked, decompressed, up to the body limit)
    HttpRequestBody,
    /// `http.start`: request line + headers (request side).
    HttpStart,
    // HTTP response side.
    /// `http.stat_code`
    HttpStatCode,
    /// `http.stat_msg`
    HttpStatMsg,
    /// `http.response_line`
    HttpResponseLine,
    /// `http.location`
    HttpLocation,
    /// `http.server`
    HttpServer,
    /// `http.response_body` / `file.data` on HTTP responses.
    HttpResponseBody,
    /// Response-side `http.header`.
    HttpResponseHeader,
    /// Response-side `http.header.raw`.
    HttpResponseHeaderRaw,
    /// Response-side `http.header_names`.
    HttpResponseHeaderNames,
    /// Response-side `http.start`.
    HttpResponseStart,
    /// Response-side `http.content_type`.
    HttpResponseContentType,
    /// Response-side `http.content_len`.
    HttpResponseContentLen,
    /// Response-side `http.protocol`.
    HttpResponseProtocol,
    /// Response-side `http.cookie` (Set-Cookie).
    HttpResponseCookie,
    /// Response-side `http.connection`.
    HttpResponseConnection,
    /// `http.request_header`: each request header as `Name: value` (repeats
    /// joined, cookies included). Indexed.
    HttpRequestHeaderItem,
    /// `http.response_header`: each response header as `Name: value`. Indexed.
    HttpResponseHeaderItem,
    /// `file.data`: the data of each file of the side inspected (an HTTP
    /// body, or each part of a multipart upload), as far as kept. Indexed.
    FileData,
    /// `file.name`: the name of each file of the side inspected, whatever
    /// the protocol (answered from the transaction's files). Indexed.
    FileName,
    /// A buffer of a protocol of the table, by that protocol's own number
    /// ([`crate::proto::BufferDef::id`]); which protocol is the transaction's.
    Proto(u8),
}
