//! PostgreSQL (frontend/backend protocol 3.0) over TCP port 5432, off unless
//! `app-layer.protocols.pgsql.enabled` says yes, as in Suricata. Each
//! request is a transaction with the server's answers to it, as Suricata 8
//! forms them: SSL and GSSENC requests, the startup message, passwords and
//! SASL messages, simple queries (their rows counted, not kept), COPY in
//! both directions, cancel requests, termination. EVE `pgsql` records
//! (`passwords: yes` logs passwords, else `password_redacted`), the
//! `pgsql.query` buffer and Suricata's events. An accepted SSL request hands
//! the flow to TLS.
//!
//! Not yet: the extended query protocol's messages (Parse, Bind, Execute,
//! ...), which are skipped, as Suricata 8.0 skips them.
//!
//! ```
//! use vigil_applayer::protocols::pgsql::PROTO;
//! use vigil_applayer::proto::{ParserInit, ProbeCx, Probe};
//! use vigil_applayer::{AppConfig, Transport};
//! use vigil_types::Direction::{ToClient, ToServer};
//!
//! let query = b"Q\x00\x00\x00\x0eSELECT 1;\x00";
//! let app = AppConfig::default();
//! let init = ParserInit { app: &app, transport: Transport::Tcp, first_tx_id: 0, options: 0, settings: &[], expected: None, client: None };
//! let mut p = (PROTO.new_parser)(&init);
//! p.parse(ToServer, query);
//! p.parse(ToClient, b"C\x00\x00\x00\x0dSELECT 1\x00Z\x00\x00\x00\x05I");
//! let rec = p.tx(0).unwrap().eve();
//! assert_eq!(rec["request"]["simple_query"], "SELECT 1;");
//! assert_eq!(rec["response"]["command_completed"], "SELECT 1");
//! ```

pub mod message;

use std::any::Any;

use serde_json::{Map, Value};
use vigil_types::{Direction, PerDir};

use crate::parser::{AppEvent, ParseResult};
use crate::progress::Progress;
use crate::proto::eve_text as text;
use crate::proto::{
    BufferDef, Detection, ParserInit, ProbeCx, Probe, ProtoDef, ProtoParser, ProtoTx, RecordOptions, SettingDef, Sides,
    TxQueue,
};
use message::{Request, Response};

/// A message longer than this is skipped unread (`invalid_length`); rows
/// and copied data are counted without being held, whatever their size.
const MAX_MESSAGE: usize = 1 << 20;

pub const EVENTS: &[&str] = &["invalid_length", "malformed_request", "malformed_response", "too_many_transactions"];

/// One request and the server's answers to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgsqlTx {
    id: u64,
    pub request: Option<Request>,
    pub responses: Vec<Response>,
    pub complete: bool,
    events: u64,
}

impl PgsqlTx {
    fn request_json(&self, passwords: bool) -> Option<Value> {
        let mut m = Map::new();
        match self.request.as_ref()? {
            Request::SslRequest => {
                m.insert("message".into(), "SSL Request".into());
            }
            Request::GssEncRequest => {
                m.insert("message".into(), "GSSENC Request".into());
            }
            Request::Startup { major, minor, params } => {
                m.insert("protocol_version".into(), format!("{major}.{minor}").into());
                let mut sp = Map::new();
                let mut optional = Vec::new();
                for (k, v) in params {
                    if k == b"user" {
                        sp.insert("user".into(), text(v));
                    } else {
                        let mut o = Map::new();
                        o.insert(message::snake(k), text(v));
                        optional.push(Value::Object(o));
                    }
                }
                if !optional.is_empty() {
                    sp.insert("optional_parameters".into(), Value::Array(optional));
                }
                m.insert("startup_parameters".into(), Value::Object(sp));
            }
            Request::Cancel { pid, key } => {
                m.insert("message".into(), "cancel_request".into());
                m.insert("process_id".into(), (*pid).into());
                m.insert("secret_key".into(), (*key).into());
            }
            Request::Password(p) if passwords => {
                m.insert("password".into(), text(p));
            }
            Request::Password(_) => {
                m.insert("password_redacted".into(), true.into());
            }
            Request::SaslInitial { mechanism, param } => {
                m.insert("sasl_authentication_mechanism".into(), text(mechanism));
                m.insert("sasl_param".into(), text(param));
            }
            Request::SaslResponse(r) => {
                m.insert("sasl_response".into(), text(r));
            }
            Request::Query(q) => {
                m.insert("simple_query".into(), text(q));
            }
            Request::CopyIn { count, size, done } => {
                let mut c = Map::new();
                c.insert("msg_count".into(), (*count).into());
                c.insert("data_size".into(), (*size).into());
                m.insert("copy_data_in".into(), Value::Object(c));
                if *done {
                    m.insert("message".into(), "copy_done".into());
                }
            }
            Request::Terminate => {
                m.insert("message".into(), "termination_message".into());
            }
            Request::Unknown => return None,
        }
        Some(Value::Object(m))
    }

    fn response_json(&self) -> Option<Value> {
        let mut m = Map::new();
        for r in &self.responses {
            match r {
                Response::Ssl(accepted) => {
                    m.insert("ssl_accepted".into(), (*accepted).into());
                }
                Response::Auth(5, salt) => {
                    m.insert("authentication_md5_password".into(), crate::proto::escaped_text(salt).into());
                }
                Response::Auth(10, mechs) => {
                    let list = mechs.split(|&c| c == 0).filter(|s| !s.is_empty()).map(text).collect();
                    m.insert("sasl_authentication_mechanisms".into(), Value::Array(list));
                }
                Response::Auth(11, challenge) => {
                    m.insert("sasl_challenge".into(), text(challenge));
                }
                Response::Auth(12, last) => {
                    m.insert("authentication_sasl_final".into(), text(last));
                }
                Response::Auth(code, _) => {
                    m.insert("message".into(), message::auth_name(*code).into());
                }
                Response::ParameterStatus(..) => {
                    if !m.contains_key("parameter_status") {
                        let all = self
                            .responses
                            .iter()
                            .filter_map(|r| match r {
                                Response::ParameterStatus(k, v) => {
                                    let mut o = Map::new();
                                    o.insert(message::snake(k), text(v));
                                    Some(Value::Object(o))
                                }
                                _ => None,
                            })
                            .collect();
                        m.insert("parameter_status".into(), Value::Array(all));
                    }
                }
                Response::BackendKey { pid, key } => {
                    m.insert("process_id".into(), (*pid).into());
                    m.insert("secret_key".into(), (*key).into());
                }
                Response::RowDescription(n) => {
                    m.insert("field_count".into(), (*n).into());
                }
                Response::DataRows { rows, size } => {
                    m.insert("data_rows".into(), (*rows).into());
                    m.insert("data_size".into(), (*size).into());
                }
                Response::CommandComplete(c) => {
                    m.insert("command_completed".into(), text(c));
                }
                Response::Fields(fields) => {
                    for (t, v) in fields {
                        if let Some(name) = message::field_name(*t) {
                            m.insert(name.into(), text(v));
                        }
                    }
                }
                Response::CopyIn(columns) | Response::CopyOut(columns) => {
                    let key = if matches!(r, Response::CopyIn(_)) { "copy_in_response" } else { "copy_out_response" };
                    let mut c = Map::new();
                    c.insert("columns".into(), (*columns).into());
                    m.insert(key.into(), Value::Object(c));
                }
                Response::CopyDataOut { rows, size } => {
                    let mut c = Map::new();
                    c.insert("row_count".into(), (*rows).into());
                    c.insert("data_size".into(), (*size).into());
                    m.insert("copy_data_out".into(), Value::Object(c));
                }
                Response::CopyDone => {
                    m.insert("message".into(), "copy_done".into());
                }
                Response::Notification { pid, channel, payload } => {
                    m.insert("pid".into(), (*pid).into());
                    m.insert("channel_name".into(), text(channel));
                    m.insert("payload".into(), text(payload));
                }
                Response::ReadyForQuery | Response::Other(_) => {}
            }
        }
        (!m.is_empty()).then_some(Value::Object(m))
    }

    fn record(&self, passwords: bool) -> Value {
        let mut m = Map::new();
        // Suricata counts its transactions from 1.
        m.insert("tx_id".into(), (self.id + 1).into());
        if let Some(r) = self.request_json(passwords) {
            m.insert("request".into(), r);
        }
        if let Some(r) = self.response_json() {
            m.insert("response".into(), r);
        }
        Value::Object(m)
    }
}

impl ProtoTx for PgsqlTx {
    fn id(&self) -> u64 {
        self.id
    }

    fn progress(&self, _dir: Direction) -> Progress {
        if self.complete {
            Progress::Complete
        } else {
            Progress::Headers
        }
    }

    fn buffer(&self, _dir: Direction, id: u8, index: usize) -> Option<&[u8]> {
        match (&self.request, id, index) {
            (Some(Request::Query(q)), 0, 0) => Some(q),
            _ => None,
        }
    }

    fn eve(&self) -> Value {
        self.record(false)
    }

    fn eve_with(&self, opts: &RecordOptions) -> Value {
        self.record(opts.passwords.unwrap_or(false))
    }

    fn events(&self) -> u64 {
        self.events
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Where a direction stands in its stream of messages.
#[derive(Debug, Default)]
struct Side {
    held: Vec<u8>,
    /// Bytes of the current message still to come unread.
    skip: u64,
}

#[derive(Debug)]
pub struct PgsqlParser {
    txs: TxQueue<PgsqlTx>,
    sides: PerDir<Side>,
    /// The client still sends untyped startup-phase messages.
    startup: bool,
    /// The server asked for SASL: the client's `p` messages are SASL's.
    sasl: bool,
    sasl_started: bool,
    /// The server accepted SSL: what follows is TLS.
    tunnel: bool,
    events: Vec<AppEvent>,
    closed: PerDir<bool>,
}

impl PgsqlParser {
    pub fn new(first_tx_id: u64, max_tx: usize) -> Self {
        PgsqlParser {
            txs: TxQueue::new(first_tx_id, max_tx),
            sides: PerDir::default(),
            startup: true,
            sasl: false,
            sasl_started: false,
            tunnel: false,
            events: Vec::new(),
            closed: PerDir::default(),
        }
    }

    fn raise(&mut self, name: &'static str) {
        let bit = EVENTS.iter().position(|e| Some(*e) == name.strip_prefix("pgsql.")).map_or(0, |i| 1 << i);
        let tx = self.txs.back_mut();
        let tx_id = tx.map(|t| {
            t.events |= bit;
            t.id
        });
        self.events.push(AppEvent { name, tx_id });
    }

    fn open(&mut self, request: Request) {
        if let Some(last) = self.txs.back_mut() {
            // A new request ends what the server left unanswered (a cancelled query's).
            last.complete = true;
        }
        self.txs.push_with(|id| PgsqlTx { id, request: Some(request), responses: Vec::new(), complete: false, events: 0 });
    }

    /// The transaction the server's messages answer: the newest still open.
    fn answering(&mut self) -> Option<&mut PgsqlTx> {
        self.txs.back_mut().filter(|t| !t.complete)
    }

    fn on_request(&mut self, r: Request) {
        match r {
            Request::Cancel { .. } | Request::Terminate => {
                self.open(r);
                if let Some(t) = self.txs.back_mut() {
                    t.complete = true;
                }
            }
            _ => self.open(r),
        }
    }

    /// CopyData or CopyDone from the client: the COPY's own transaction.
    fn copy_in(&mut self, size: Option<u64>) {
        let open = matches!(self.txs.back().map(|t| (&t.request, t.complete)), Some((Some(Request::CopyIn { done: false, .. }), _)));
        if !open {
            self.open(Request::CopyIn { count: 0, size: 0, done: false });
        }
        if let Some(PgsqlTx { request: Some(Request::CopyIn { count, size: total, done }), .. }) = self.txs.back_mut() {
            match size {
                Some(n) => {
                    *count += 1;
                    *total += n;
                }
                None => *done = true,
            }
        }
    }

    fn on_response(&mut self, r: Response) {
        let ends = match &r {
            Response::Ssl(accepted) => {
                self.tunnel = *accepted;
                true
            }
            // A request for a password or SASL data waits for the client's answer.
            Response::Auth(code, _) => {
                if *code == 10 {
                    self.sasl = true;
                }
                !matches!(code, 0 | 12)
            }
            Response::CopyIn(_) | Response::ReadyForQuery => true,
            // An error during startup ends the session.
            Response::Fields(f) => self.startup_error(f),
            _ => false,
        };
        // Nothing asked (an asynchronous notice or notification, or an answer to the extended
        // query protocol, which is not logged): Suricata keeps no record of it either.
        let Some(tx) = self.answering() else { return };
        // Rows and copied data add up in one entry.
        match (tx.responses.last_mut(), &r) {
            (Some(Response::DataRows { rows, size }), Response::DataRows { size: n, .. }) => {
                *rows += 1;
                *size += n;
            }
            (Some(Response::CopyDataOut { rows, size }), Response::CopyDataOut { size: n, .. }) => {
                *rows += 1;
                *size += n;
            }
            _ => tx.responses.push(r),
        }
        tx.complete |= ends;
        if matches!(tx.request, Some(Request::CopyIn { .. })) {
            // Suricata counts the copied data among the rows of the COPY's answer.
            if let Some(PgsqlTx { request: Some(Request::CopyIn { count, size, .. }), responses, .. }) = self.txs.back_mut() {
                if !responses.iter().any(|r| matches!(r, Response::DataRows { .. })) {
                    responses.insert(0, Response::DataRows { rows: *count, size: *size });
                }
            }
        }
    }

    fn startup_error(&self, fields: &[(u8, Vec<u8>)]) -> bool {
        let fatal = fields.iter().any(|(t, v)| *t == b'S' && (v == b"FATAL" || v == b"PANIC"));
        fatal && matches!(self.txs.back().and_then(|t| t.request.as_ref()), Some(Request::Startup { .. }))
    }

    /// One whole message of `dir`: its type (0 for an untyped one) and bytes.
    fn message(&mut self, dir: Direction, kind: u8, msg: &[u8]) -> Result<(), ()> {
        match dir {
            Direction::ToServer if kind == 0 => match message::startup(msg) {
                Some(Request::Unknown) | None => {
                    self.open(Request::Unknown);
                    self.raise("pgsql.malformed_request");
                    return Err(());
                }
                Some(r) => {
                    if matches!(r, Request::Startup { .. } | Request::Cancel { .. }) {
                        self.startup = false;
                    }
                    self.on_request(r);
                }
            },
            Direction::ToServer => {
                self.startup = false;
                let body = &msg[5..];
                match kind {
                    b'c' => self.copy_in(None),
                    // The extended query protocol and function calls are not logged.
                    b'P' | b'B' | b'E' | b'D' | b'S' | b'C' | b'H' | b'F' | b'f' => {}
                    _ => match message::request(kind, body, self.sasl, !self.sasl_started) {
                        Some(r) => {
                            if matches!(r, Request::SaslInitial { .. }) {
                                self.sasl_started = true;
                            }
                            self.on_request(r);
                        }
                        None => {
                            self.raise("pgsql.malformed_request");
                            return Err(());
                        }
                    },
                }
            }
            Direction::ToClient if kind == 0 => {
                // The one-byte answer to an SSL or GSSENC request.
                self.on_response(Response::Ssl(msg == b"S" || msg == b"G"));
            }
            Direction::ToClient => {
                match message::response(kind, &msg[5..]) {
                    Some(r) => self.on_response(r),
                    None => {
                        self.raise("pgsql.malformed_response");
                        return Err(());
                    }
                }
            }
        }
        Ok(())
    }

    /// Whether the next message of `dir` is an untyped one.
    fn untyped(&self, dir: Direction, data: &[u8]) -> bool {
        match dir {
            Direction::ToServer => self.startup && data.first() == Some(&0),
            // The answer to an SSL or GSSENC request is one byte.
            Direction::ToClient => matches!(
                self.txs.back().map(|t| (&t.request, t.complete)),
                Some((Some(Request::SslRequest | Request::GssEncRequest), false))
            ),
        }
    }
}

/// The bytes a DataRow's values or a CopyData's payload hold, from the
/// message's first bytes: a row's body is its column count, then each
/// column's length and value (a NULL has no value), so its values are what
/// is left after those lengths. `None` until those first bytes are here.
fn counted_size(kind: u8, len: u32, rest: &[u8]) -> Option<u64> {
    let body = u64::from(len).saturating_sub(4);
    if kind != b'D' {
        return Some(body);
    }
    let columns = u64::from(u16::from_be_bytes([*rest.get(5)?, *rest.get(6)?]));
    Some(body.saturating_sub(2 + 4 * columns))
}

impl PgsqlParser {
    fn parse_messages(&mut self, dir: Direction, data: &[u8]) -> ParseResult {
        if self.tunnel {
            return ParseResult::Done;
        }
        let mut owned = std::mem::take(&mut self.sides.get_mut(dir).held);
        let from_held = !owned.is_empty();
        let before = owned.len();
        if from_held {
            owned.extend_from_slice(data);
        }
        let mut at = 0usize;
        let keep_from = loop {
            let buf: &[u8] = if from_held { &owned } else { data };
            let side = self.sides.get_mut(dir);
            if side.skip > 0 {
                let n = side.skip.min((buf.len() - at) as u64);
                side.skip -= n;
                at += n as usize;
            }
            let rest = &buf[at..];
            if self.tunnel {
                // What follows the server's yes is TLS: handed back for detection.
                return ParseResult::Incomplete { consumed: at.saturating_sub(before).min(data.len()), needed: 1 };
            }
            if rest.is_empty() {
                break None;
            }
            let untyped = self.untyped(dir, rest);
            if untyped && dir == Direction::ToClient {
                self.message(dir, 0, &rest[..1]).ok();
                at += 1;
                continue;
            }
            let (kind, header) = if untyped { (0, 0) } else { (rest[0], 1) };
            let Some(len) = message::u32_at(rest, header) else { break Some(at) };
            let total = header + len as usize;
            if (len as usize) < 4 || (untyped && len < 8) {
                self.raise("pgsql.invalid_length");
                return ParseResult::Error;
            }
            // Rows and copied data are counted from their header, never held.
            let counted = !untyped && matches!((dir, kind), (Direction::ToClient, b'D' | b'd') | (Direction::ToServer, b'd'));
            if counted {
                let Some(size) = counted_size(kind, len, rest) else { break Some(at) };
                match (dir, kind) {
                    (Direction::ToServer, _) => self.copy_in(Some(size)),
                    (_, b'D') => self.on_response(Response::DataRows { rows: 1, size }),
                    _ => self.on_response(Response::CopyDataOut { rows: 1, size }),
                }
                let have = rest.len().min(total);
                self.sides.get_mut(dir).skip = (total - have) as u64;
                at += have;
                continue;
            }
            if total > MAX_MESSAGE {
                self.raise("pgsql.invalid_length");
                let have = rest.len().min(total);
                self.sides.get_mut(dir).skip = (total - have) as u64;
                at += have;
                continue;
            }
            if rest.len() < total {
                break Some(at);
            }
            if self.message(dir, kind, &rest[..total]).is_err() {
                return ParseResult::Error;
            }
            at += total;
        };
        if let Some(k) = keep_from {
            let held = if from_held {
                owned.drain(..k);
                owned
            } else {
                data[k..].to_vec()
            };
            self.sides.get_mut(dir).held = held;
        }
        ParseResult::Done
    }

}

impl ProtoParser for PgsqlParser {
    fn parse(&mut self, dir: Direction, data: &[u8]) -> ParseResult {
        let result = self.parse_messages(dir, data);
        if result == ParseResult::Error {
            // Nothing more will be read: what is open is as complete as it gets.
            for tx in self.txs.iter_mut() {
                tx.complete = true;
            }
        }
        result
    }

    fn on_gap(&mut self, _dir: Direction, _len: u64) -> bool {
        false
    }

    fn close(&mut self, dir: Direction, _held: &[u8]) {
        *self.closed.get_mut(dir) = true;
        // The server may still answer what the client sent before it closed.
        if self.closed.to_server && self.closed.to_client {
            for tx in self.txs.iter_mut() {
                tx.complete = true;
            }
        }
    }

    crate::proto::delegate_txs!(txs);

    fn prune(&mut self, id: u64) {
        self.txs.prune_while(id, |t| t.complete);
    }

    fn drain_events(&mut self, out: &mut Vec<AppEvent>) {
        out.append(&mut self.events);
    }

    fn tunnel(&self) -> bool {
        self.tunnel
    }
}

pub const SETTINGS: &[SettingDef] = &[SettingDef { key: "max-tx", default: 1024, size: false }];

fn new_parser(init: &ParserInit) -> Box<dyn ProtoParser> {
    let max_tx = init.setting(&PROTO, 0).clamp(1, 1 << 16) as usize;
    Box::new(PgsqlParser::new(init.first_tx_id, max_tx))
}

/// A client's startup-phase message (a length, then a code or the protocol
/// version), or a typed message of a session picked up in its middle; weak,
/// so probed on the port only.
fn probe(dir: Direction, data: &[u8], _cx: ProbeCx) -> Probe {
    if data.len() < 8 {
        return Probe::NeedMore;
    }
    let Some(len) = message::u32_at(data, 0) else { return Probe::NoMatch };
    match dir {
        Direction::ToServer if (8..=10_000).contains(&len) => Probe::Match,
        Direction::ToServer => {
            let typed = message::u32_at(data, 1).is_some_and(|l| (4..=MAX_MESSAGE as u32).contains(&l));
            if typed && matches!(data[0], b'Q' | b'P' | b'X' | b'p' | b'B' | b'd') {
                Probe::Match
            } else {
                Probe::NoMatch
            }
        }
        Direction::ToClient => {
            let typed = message::u32_at(data, 1).is_some_and(|l| (4..=MAX_MESSAGE as u32).contains(&l));
            if typed && matches!(data[0], b'R' | b'E' | b'S' | b'Z' | b'C' | b'T' | b'D') {
                Probe::Match
            } else {
                Probe::NoMatch
            }
        }
    }
}

fn sample() -> Vec<(Direction, Vec<u8>)> {
    use Direction::{ToClient, ToServer};
    let mut startup = vec![0, 0, 0, 0, 0, 3, 0, 0];
    startup.extend_from_slice(b"user\0rules\0database\0rules\0application_name\0psql\0\0");
    let len = startup.len() as u32;
    startup[..4].copy_from_slice(&len.to_be_bytes());
    vec![
        (ToServer, vec![0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]),
        (ToClient, b"N".to_vec()),
        (ToServer, startup),
        (ToClient, b"R\x00\x00\x00\x0c\x00\x00\x00\x05\x01\x02\x03\x04".to_vec()),
        (ToServer, b"p\x00\x00\x00\x28md5e4cfa9552468cae5d48ca2822ca36e22\x00".to_vec()),
        (
            ToClient,
            b"R\x00\x00\x00\x08\x00\x00\x00\x00S\x00\x00\x00\x19client_encoding\x00UTF8\x00K\x00\x00\x00\x0c\x00\x00\x00\x3d\xbb\xd5\x7e\xaeZ\x00\x00\x00\x05I"
                .to_vec(),
        ),
        (ToServer, b"Q\x00\x00\x00\x0eSELECT 1;\x00".to_vec()),
        (
            ToClient,
            b"T\x00\x00\x00\x21\x00\x01?column?\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x17\x00\x04\xff\xff\xff\xff\x00\x00D\x00\x00\x00\x0b\x00\x01\x00\x00\x00\x011C\x00\x00\x00\x0dSELECT 1\x00Z\x00\x00\x00\x05I"
                .to_vec(),
        ),
        (ToServer, b"X\x00\x00\x00\x04".to_vec()),
    ]
}

pub static PROTO: ProtoDef = ProtoDef {
    name: "pgsql",
    eve_name: None,
    detection: Detection { tcp: true, udp: false, ports: &[5432], ports_only: true, probe, counters_by_transport: false, answers_first: None },
    new_parser,
    buffers: &[BufferDef {
        name: "pgsql.query",
        id: 0,
        sides: Sides::ToServer,
        default: Direction::ToServer,
        both_ways: false,
        need: Progress::Complete,
        multi: false,
    }],
    checks: &[],
    events: EVENTS,
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
    base_need: PerDir { to_server: Progress::Complete, to_client: Progress::Complete },
    hooks: crate::proto::Hooks::GENERIC,
    off_by_default: true,
    stream_depth: None,
    frames: &[],
};

#[cfg(test)]
mod tests;
