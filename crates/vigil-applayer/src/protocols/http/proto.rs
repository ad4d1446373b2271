//! HTTP/1.x as a protocol of the table: its buffers, numbered by
//! [`Buffer`], its definition, and the protocol API over [`HttpParser`] and
//! [`HttpTx`].

use serde_json::Value;
use vigil_types::Direction;

use super::{events, probe, HttpParser, HttpTx, Probe as HttpProbe};
use crate::files::File;
use crate::parser::{AppEvent, ParseResult};
use crate::progress::Progress;
use crate::proto::{
    BufferDef, Detection, EventDef, ParserInit, Probe, ProbeCx, ProtoDef, ProtoParser, ProtoTx, Sides, HEADERS_BOTH,
};

/// The buffers, numbered for [`ProtoTx::buffer`]. One that both sides have
/// (`http.header`) is one number, answered per side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Buffer {
    /// `http.uri`: the normalized request URI (percent-decoded, path normalized).
    Uri = 0,
    /// `http.uri.raw`: the request URI as sent.
    UriRaw,
    /// `http.method`.
    Method,
    /// `http.protocol`: `HTTP/1.1`, of either side.
    Protocol,
    /// `http.request_line`: method, URI and protocol as sent.
    RequestLine,
    /// `http.host`: the Host value, lower case, port stripped.
    Host,
    /// `http.host.raw`: the Host value as sent.
    HostRaw,
    /// `http.user_agent`.
    UserAgent,
    /// `http.cookie`: `Cookie` of requests, `Set-Cookie` of responses.
    Cookie,
    /// `http.referer`.
    Referer,
    /// `http.accept`.
    Accept,
    /// `http.accept_enc`.
    AcceptEnc,
    /// `http.accept_lang`.
    AcceptLang,
    /// `http.connection`, of either side.
    Connection,
    /// `http.content_type`, of either side.
    ContentType,
    /// `http.content_len`, of either side.
    ContentLen,
    /// `http.header`: the side's normalized headers, `Name: value\r\n`
    /// each, cookies left out as Suricata does.
    Header,
    /// `http.header.raw`: the side's header block as sent.
    HeaderRaw,
    /// `http.header_names`: `\r\n`, each name and `\r\n`, then `\r\n`.
    HeaderNames,
    /// `http.request_body`: dechunked, decompressed, up to the body limit.
    RequestBody,
    /// `http.start`: the side's start line and headers.
    Start,
    /// `http.stat_code`.
    StatCode,
    /// `http.stat_msg`.
    StatMsg,
    /// `http.response_line`.
    ResponseLine,
    /// `http.location`.
    Location,
    /// `http.server`.
    Server,
    /// `http.response_body`.
    ResponseBody,
    /// `http.request_header`: each request header as `Name: value`.
    RequestHeader,
    /// `http.response_header`: each response header as `Name: value`.
    ResponseHeader,
}

impl Buffer {
    const ALL: [Buffer; 29] = [
        Buffer::Uri,
        Buffer::UriRaw,
        Buffer::Method,
        Buffer::Protocol,
        Buffer::RequestLine,
        Buffer::Host,
        Buffer::HostRaw,
        Buffer::UserAgent,
        Buffer::Cookie,
        Buffer::Referer,
        Buffer::Accept,
        Buffer::AcceptEnc,
        Buffer::AcceptLang,
        Buffer::Connection,
        Buffer::ContentType,
        Buffer::ContentLen,
        Buffer::Header,
        Buffer::HeaderRaw,
        Buffer::HeaderNames,
        Buffer::RequestBody,
        Buffer::Start,
        Buffer::StatCode,
        Buffer::StatMsg,
        Buffer::ResponseLine,
        Buffer::Location,
        Buffer::Server,
        Buffer::ResponseBody,
        Buffer::RequestHeader,
        Buffer::ResponseHeader,
    ];

    pub fn from_id(id: u8) -> Option<Buffer> {
        Buffer::ALL.get(usize::from(id)).copied().filter(|b| *b as u8 == id)
    }
}

/// A buffer of the request, final with its headers.
const fn req(name: &'static str, id: Buffer) -> BufferDef {
    BufferDef {
        name,
        id: id as u8,
        sides: Sides::ToServer,
        default: Direction::ToServer,
        both_ways: false,
        need: Progress::Headers,
        multi: false,
    }
}

/// A buffer of the response, final with its headers.
const fn resp(name: &'static str, id: Buffer) -> BufferDef {
    BufferDef {
        name,
        id: id as u8,
        sides: Sides::ToClient,
        default: Direction::ToClient,
        both_ways: false,
        need: Progress::Headers,
        multi: false,
    }
}

/// A buffer each side has: a rule naming no direction inspects both, as
/// Suricata registers these buffers for both.
const fn both(name: &'static str, id: Buffer) -> BufferDef {
    BufferDef {
        name,
        id: id as u8,
        sides: Sides::Both,
        default: Direction::ToServer,
        both_ways: true,
        need: Progress::Headers,
        multi: false,
    }
}

const fn complete(mut d: BufferDef) -> BufferDef {
    d.need = Progress::Complete;
    d
}

const fn multi(mut d: BufferDef) -> BufferDef {
    d.multi = true;
    d
}

const BUFFERS: &[BufferDef] = &[
    req("http.uri", Buffer::Uri),
    req("http.uri.raw", Buffer::UriRaw),
    req("http.method", Buffer::Method),
    req("http.request_line", Buffer::RequestLine),
    complete(req("http.request_body", Buffer::RequestBody)),
    complete(resp("http.response_body", Buffer::ResponseBody)),
    both("http.header", Buffer::Header),
    both("http.header.raw", Buffer::HeaderRaw),
    both("http.header_names", Buffer::HeaderNames),
    both("http.cookie", Buffer::Cookie),
    both("http.content_type", Buffer::ContentType),
    both("http.content_len", Buffer::ContentLen),
    both("http.start", Buffer::Start),
    both("http.protocol", Buffer::Protocol),
    req("http.user_agent", Buffer::UserAgent),
    req("http.host", Buffer::Host),
    req("http.host.raw", Buffer::HostRaw),
    req("http.accept", Buffer::Accept),
    req("http.accept_enc", Buffer::AcceptEnc),
    req("http.accept_lang", Buffer::AcceptLang),
    req("http.referer", Buffer::Referer),
    both("http.connection", Buffer::Connection),
    multi(req("http.request_header", Buffer::RequestHeader)),
    multi(resp("http.response_header", Buffer::ResponseHeader)),
    resp("http.stat_code", Buffer::StatCode),
    resp("http.stat_msg", Buffer::StatMsg),
    resp("http.response_line", Buffer::ResponseLine),
    resp("http.server", Buffer::Server),
    resp("http.location", Buffer::Location),
];

fn probe_http(dir: Direction, data: &[u8], _cx: ProbeCx) -> Probe {
    match probe(data, dir) {
        HttpProbe::Match => Probe::Match,
        HttpProbe::NeedMore => Probe::NeedMore,
        HttpProbe::NoMatch => Probe::NoMatch,
    }
}

/// A status line where a request should be.
fn answers_first(data: &[u8]) -> bool {
    probe(data, Direction::ToClient) == HttpProbe::Match && probe(data, Direction::ToServer) == HttpProbe::NoMatch
}

fn new_parser(init: &ParserInit<'_>) -> Box<dyn ProtoParser> {
    let mut p = HttpParser::new(init.app.http).with_first_tx_id(init.first_tx_id);
    p.frames = crate::frames::FrameLog::new(init.app.frames);
    Box::new(p)
}

/// Where an event is raised: response events on the response; those
/// raised while a body is decoded are only final once that side is whole.
/// The rest are inspected on the rule's side, as Suricata matches them on
/// either.
fn event(name: &str) -> Option<EventDef> {
    let full = format!("http.{name}");
    let bit = events::event_bit(&full)?;
    let response = name.contains("response") || name == "100_continue_already_seen";
    let in_body = ["chunk_len", "gzip", "compression_bomb", "too_many_encoding_layers"].iter().any(|w| name.contains(w));
    Some(EventDef {
        bit,
        side: response.then_some(Direction::ToClient),
        need: if in_body { Progress::Complete } else { Progress::Headers },
    })
}

pub static PROTO: ProtoDef = ProtoDef {
    name: "http",
    eve_name: None,
    detection: Detection {
        tcp: true,
        udp: false,
        ports: &[80],
        ports_only: false,
        probe: probe_http,
        counters_by_transport: false,
        answers_first: Some(answers_first),
    },
    new_parser,
    buffers: BUFFERS,
    checks: &[],
    events: &[],
    event,
    options: &[],
    settings: &[],
    sample: super::sample::conversation,
    sample_expected: None,
    files: true,
    transactions: true,
    aliases: &["http1"],
    includes: &[],
    borrows: &[],
    base_need: HEADERS_BOTH,
    hooks: crate::proto::Hooks {
        to_server: &[
            "request_started",
            "request_line",
            "request_headers",
            "request_body",
            "request_trailer",
            "request_complete",
        ],
        to_client: &[
            "response_started",
            "response_line",
            "response_headers",
            "response_body",
            "response_trailer",
            "response_complete",
        ],
    },
    off_by_default: false,
    stream_depth: None,
    frames: &["request", "response"],
};

impl ProtoParser for HttpParser {
    fn parse(&mut self, dir: Direction, data: &[u8]) -> ParseResult {
        HttpParser::parse(self, dir, data)
    }

    /// Inside a body only the lost bytes are counted; elsewhere the side
    /// skips to the next line that starts a message.
    fn on_gap(&mut self, dir: Direction, len: u64) -> bool {
        HttpParser::on_gap(self, dir, len);
        true
    }

    fn close(&mut self, dir: Direction, held: &[u8]) {
        HttpParser::close(self, dir, held);
    }

    fn tx_count(&self) -> usize {
        self.txs().len()
    }

    fn take_raw_trigger(&mut self, dir: Direction) -> bool {
        HttpParser::take_raw_trigger(self, dir)
    }

    fn tx(&self, i: usize) -> Option<&dyn ProtoTx> {
        self.txs().get(i).map(|t| t as &dyn ProtoTx)
    }

    fn prune(&mut self, id: u64) {
        HttpParser::prune(self, id);
    }

    fn drain_events(&mut self, out: &mut Vec<AppEvent>) {
        out.append(&mut self.take_events());
    }

    fn take_frames(&mut self, out: &mut Vec<crate::frames::Mark>) -> u8 {
        self.frames.drain(out);
        self.frames.tx_base()
    }

    fn next_tx_id(&self) -> u64 {
        HttpParser::next_tx_id(self)
    }

    fn txs_evicted(&self) -> u64 {
        self.stats().txs_evicted
    }

    fn tunnel(&self) -> bool {
        HttpParser::tunnel(self)
    }

    fn tunnel_to(&self) -> Option<&'static str> {
        HttpParser::tunnel_to(self)
    }

    fn handover(&self) -> Option<crate::proto::Expected> {
        HttpParser::handover(self)
    }

    fn store_files(&mut self, tx: Option<u64>, dirs: &[Direction], sid: u32) {
        HttpParser::store_files(self, tx, dirs, sid);
    }
}

impl ProtoTx for HttpTx {
    fn id(&self) -> u64 {
        HttpTx::id(self)
    }

    /// `Headers` once that side's start line and headers are parsed.
    fn progress(&self, dir: Direction) -> Progress {
        if self.complete(dir) {
            Progress::Complete
        } else if self.headers_done(dir) {
            Progress::Headers
        } else {
            Progress::None
        }
    }

    fn hook_state(&self, dir: Direction) -> Option<u8> {
        // The parser knows a side started, has its headers, or is
        // complete: a side with headers is in its body until complete.
        // (A request transaction exists once its line came.)
        Some(if self.complete(dir) {
            5
        } else if self.headers_done(dir) {
            3
        } else if dir == Direction::ToServer {
            1
        } else {
            0
        })
    }

    fn buffer(&self, dir: Direction, id: u8, index: usize) -> Option<&[u8]> {
        HttpTx::buffer(self, dir, Buffer::from_id(id)?, index)
    }

    fn eve(&self) -> Value {
        serde_json::to_value(HttpTx::eve(self)).unwrap_or(Value::Null)
    }

    /// `custom`: those header fields too, in `request_headers` and
    /// `response_headers` (wherever the transaction has them). Without
    /// `extended: yes` the record has Suricata's basic set: the referer,
    /// method, protocol, status, redirect and length are left out (alerts
    /// always carry them: [`ProtoTx::eve`]).
    fn eve_with(&self, opts: &crate::proto::RecordOptions) -> Value {
        let mut v = match &opts.custom {
            Some(custom) => serde_json::to_value(HttpTx::eve_custom(self, custom)).unwrap_or(Value::Null),
            None => ProtoTx::eve(self),
        };
        if let (false, Value::Object(m)) = (opts.extended, &mut v) {
            for k in ["http_refer", "http_method", "protocol", "status", "redirect", "length"] {
                m.remove(k);
            }
        }
        v
    }

    /// Alerts carry the extended set whatever an output's records say.
    fn eve_metadata(&self, opts: Option<&crate::proto::RecordOptions>) -> Value {
        match opts {
            Some(o) => ProtoTx::eve_with(self, &crate::proto::RecordOptions { extended: true, ..o.clone() }),
            None => ProtoTx::eve(self),
        }
    }

    fn events(&self) -> u64 {
        self.event_bits()
    }

    fn files(&self, dir: Direction) -> &[File] {
        HttpTx::files(self, dir)
    }

    fn file_data(&self, dir: Direction, index: usize) -> Option<&[u8]> {
        HttpTx::file_data(self, dir, index)
    }

    /// The side's body, when it has one: whole unless cut short or holed.
    fn file_size(&self, dir: Direction) -> Option<(u64, bool)> {
        let size = match dir {
            Direction::ToServer => self.request_body_len(),
            Direction::ToClient => self.response_body_len(),
        };
        (size > 0 && self.complete(dir)).then(|| (size, self.side_complete(dir)))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
