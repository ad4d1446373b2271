//! POP3 (RFC 1939, RFC 2449, RFC 5034): each command and its answer a
//! transaction (the greeting one of its own), the answer's status line
//! and, for the commands that get one, its multi-line data (dot-stuffing
//! undone); EVE `pop3` records as Suricata 8 writes them. A SASL exchange
//! after AUTH is read as Suricata reads it: the server's `+` continuation
//! answers AUTH, the client's reply is a command named `<SASL DATA>`.
//! STLS accepted hands the flow to TLS.
//!
//! A message's lines (RETR) are skipped as they pass, not kept, and its
//! record has no answer, as Suricata 8's. TOP's lines are kept, as
//! Suricata keeps them.
//!
//! ```
//! use vigil_applayer::protocols::pop3::PROTO;
//! use vigil_applayer::proto::{ParserInit, ProbeCx, Probe};
//! use vigil_applayer::{AppConfig, Transport};
//! use vigil_types::Direction::{ToClient, ToServer};
//!
//! assert_eq!((PROTO.detection.probe)(ToClient, b"+OK ready\r\n", ProbeCx::tcp(40000, 110)), Probe::Match);
//! let app = AppConfig::default();
//! let init = ParserInit { app: &app, transport: Transport::Tcp, first_tx_id: 0, options: 0, settings: &[], expected: None, client: None };
//! let mut p = (PROTO.new_parser)(&init);
//! p.parse(ToClient, b"+OK ready\r\n");
//! p.parse(ToServer, b"LIST\r\n");
//! p.parse(ToClient, b"+OK 2 messages\r\n1 120\r\n2 200\r\n.\r\n");
//! assert_eq!(p.tx(1).unwrap().eve()["response"]["data"], serde_json::json!(["1 120", "2 200"]));
//! ```

use std::any::Any;

use serde_json::{json, Map, Value};
use vigil_types::{Direction, PerDir};

use crate::codecs::lines::Lines;
use crate::parser::{AppEvent, ParseResult};
use crate::progress::Progress;
use crate::proto::eve_text as text;
use crate::proto::{Detection, ParserInit, ProbeCx, Probe, ProtoDef, ProtoParser, ProtoTx, SettingDef, TxQueue};

/// A line's limit; the rest of a longer one is dropped.
const MAX_LINE: usize = 4096;
/// Data lines kept of one answer (a listing); later ones are dropped.
const MAX_DATA_LINES: usize = 4096;

#[derive(Debug, Clone, Default)]
pub struct Pop3Response {
    pub success: bool,
    pub status: &'static str,
    pub header: Vec<u8>,
    pub data: Vec<Vec<u8>>,
}

#[derive(Debug, Clone, Default)]
pub struct Pop3Tx {
    id: u64,
    /// The command as sent (upper case), or `<SASL DATA>`; none for the greeting.
    pub command: Option<Vec<u8>>,
    pub args: Vec<Vec<u8>>,
    pub response: Option<Pop3Response>,
    /// Its answer came whole (or nothing more will).
    done: bool,
}

impl ProtoTx for Pop3Tx {
    fn id(&self) -> u64 {
        self.id
    }

    fn progress(&self, dir: Direction) -> Progress {
        match dir {
            Direction::ToServer => Progress::Complete,
            Direction::ToClient if self.done => Progress::Complete,
            Direction::ToClient => Progress::None,
        }
    }

    fn buffer(&self, _dir: Direction, _id: u8, _index: usize) -> Option<&[u8]> {
        None
    }

    fn eve(&self) -> Value {
        let mut m = Map::new();
        if let Some(c) = &self.command {
            m.insert("request".into(), json!({"command": text(c), "args": self.args.iter().map(|a| text(a)).collect::<Vec<_>>()}));
        }
        if let Some(r) = &self.response {
            m.insert(
                "response".into(),
                json!({"success": r.success, "status": r.status, "header": text(&r.header),
                       "data": r.data.iter().map(|d| text(d)).collect::<Vec<_>>()}),
            );
        }
        Value::Object(m)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Where the server's side stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    /// Waiting for a status line.
    Status,
    /// Data lines of a multi-line answer, kept (`true`) or skipped.
    Data(bool),
}

#[derive(Debug)]
pub struct Pop3Parser {
    txs: TxQueue<Pop3Tx>,
    lines: PerDir<Lines>,
    skipping: [bool; 2],
    answer: Answer,
    /// The server asked for a SASL reply: the client's next line is one.
    sasl: bool,
    greeted: bool,
    tunnel: bool,
}

/// Whether the answer to `command` has lines after its status, when it
/// succeeds (LIST and UIDL with no argument list every message, AUTH
/// with none every SASL mechanism, RFC 5034).
fn multi_line(command: &[u8], args: usize) -> bool {
    matches!(command, b"CAPA" | b"RETR" | b"TOP") || (matches!(command, b"LIST" | b"UIDL" | b"AUTH") && args == 0)
}

impl Pop3Parser {
    pub fn new(first_tx_id: u64, max_tx: usize) -> Self {
        Pop3Parser {
            txs: TxQueue::new(first_tx_id, max_tx),
            lines: PerDir::default(),
            skipping: [false, false],
            answer: Answer::Status,
            sasl: false,
            greeted: false,
            tunnel: false,
        }
    }

    fn push(&mut self, tx: Pop3Tx) {
        self.txs.push_with(|id| Pop3Tx { id, ..tx });
    }

    fn command(&mut self, line: &[u8]) {
        if std::mem::take(&mut self.sasl) {
            return self.push(Pop3Tx { command: Some(b"<SASL DATA>".to_vec()), ..Pop3Tx::default() });
        }
        let mut words = line.split(|&c| c == b' ').filter(|w| !w.is_empty());
        let command = words.next().unwrap_or_default().to_ascii_uppercase();
        let args = words.map(<[u8]>::to_vec).collect();
        self.push(Pop3Tx { command: Some(command), args, ..Pop3Tx::default() });
    }

    /// The oldest transaction still waiting for its answer.
    fn waiting(&mut self) -> Option<&mut Pop3Tx> {
        self.txs.iter_mut().find(|t| !t.done)
    }

    fn reply_line(&mut self, line: &[u8]) {
        if let Answer::Data(keep) = self.answer {
            if line == b"." {
                self.answer = Answer::Status;
                if let Some(t) = self.waiting() {
                    t.done = true;
                }
                return;
            }
            let line = line.strip_prefix(b".").unwrap_or(line);
            if let Some(r) = self.waiting().and_then(|t| t.response.as_mut()).filter(|_| keep) {
                if r.data.len() < MAX_DATA_LINES {
                    r.data.push(line.to_vec());
                }
            }
            return;
        }
        let (success, status, rest, continuation) = if let Some(rest) = line.strip_prefix(b"+OK") {
            (true, "OK", rest, false)
        } else if let Some(rest) = line.strip_prefix(b"-ERR") {
            (false, "ERR", rest, false)
        } else if let Some(rest) = line.strip_prefix(b"+") {
            (true, "OK", rest, true)
        } else {
            // Not a status line: nothing to pair it with.
            return;
        };
        let header = rest.trim_ascii().to_vec();
        if !self.greeted && self.txs.iter().all(|t| t.done) {
            self.greeted = true;
            let response = Pop3Response { success, status, header, data: Vec::new() };
            return self.push(Pop3Tx { response: Some(response), done: true, ..Pop3Tx::default() });
        }
        self.greeted = true;
        let Some(tx) = self.waiting() else { return };
        let command = tx.command.clone().unwrap_or_default();
        let multi = success && multi_line(&command, tx.args.len());
        // A message (RETR) is neither kept nor its answer logged, as Suricata does.
        let message = command == b"RETR";
        if !message {
            tx.response = Some(Pop3Response { success, status, header, data: Vec::new() });
        }
        if multi {
            self.answer = Answer::Data(!message);
        } else {
            tx.done = true;
        }
        if continuation {
            self.sasl = true;
        }
        if success && command == b"STLS" {
            self.tunnel = true;
        }
    }

    fn lines(&mut self, dir: Direction, mut data: &[u8]) -> usize {
        let total = data.len();
        let side = usize::from(dir == Direction::ToClient);
        let mut lines = std::mem::take(self.lines.get_mut(dir));
        while !self.tunnel {
            let Some((line, whole)) = lines.next(&mut data, MAX_LINE) else { break };
            let first = !self.skipping[side];
            self.skipping[side] = !whole;
            if !first {
                continue;
            }
            match dir {
                Direction::ToServer => self.command(line),
                Direction::ToClient => self.reply_line(line),
            }
        }
        *self.lines.get_mut(dir) = lines;
        total - data.len()
    }
}

impl ProtoParser for Pop3Parser {
    fn parse(&mut self, dir: Direction, data: &[u8]) -> ParseResult {
        if self.tunnel {
            return ParseResult::Done;
        }
        let consumed = self.lines(dir, data);
        if consumed < data.len() {
            // STLS accepted: the rest belongs to what runs inside.
            ParseResult::Incomplete { consumed, needed: 1 }
        } else {
            ParseResult::Done
        }
    }

    fn on_gap(&mut self, dir: Direction, _len: u64) -> bool {
        self.lines.get_mut(dir).clear();
        self.skipping = [false, false];
        true
    }

    fn close(&mut self, dir: Direction, _held: &[u8]) {
        if dir == Direction::ToClient {
            for t in self.txs.iter_mut() {
                t.done = true;
            }
        }
    }

    crate::proto::delegate_txs!(txs);

    fn prune(&mut self, id: u64) {
        self.txs.prune_while(id, |t| t.done);
    }

    fn drain_events(&mut self, _out: &mut Vec<AppEvent>) {}

    fn tunnel(&self) -> bool {
        self.tunnel
    }
}

/// `app-layer.protocols.pop3.*`.
pub const SETTINGS: &[SettingDef] = &[SettingDef { key: "max-tx", default: 256, size: false }];

fn new_parser(init: &ParserInit) -> Box<dyn ProtoParser> {
    Box::new(Pop3Parser::new(init.first_tx_id, init.setting(&PROTO, 0).min(1 << 16) as usize))
}

/// A server's status line, or a client's first command.
fn probe(dir: Direction, data: &[u8], _cx: ProbeCx) -> Probe {
    let openings: &[&[u8]] = match dir {
        Direction::ToClient => &[b"+OK", b"-ERR"],
        Direction::ToServer => &[b"USER ", b"APOP ", b"CAPA", b"AUTH", b"STLS"],
    };
    crate::proto::probe_openings(data, openings, true)
}

fn sample() -> Vec<(Direction, Vec<u8>)> {
    let s = |t: &str| (Direction::ToServer, t.as_bytes().to_vec());
    let c = |t: &str| (Direction::ToClient, t.as_bytes().to_vec());
    vec![
        c("+OK POP3 server ready\r\n"),
        s("USER alice\r\n"),
        c("+OK\r\n"),
        s("PASS secret\r\n"),
        c("+OK logged in\r\n"),
        s("LIST\r\n"),
        c("+OK 1 messages\r\n1 120\r\n.\r\n"),
        s("RETR 1\r\n"),
        c("+OK 120 octets\r\nSubject: hi\r\n\r\n..dot\r\n.\r\n"),
        s("QUIT\r\n"),
        c("+OK bye\r\n"),
    ]
}

pub static PROTO: ProtoDef = ProtoDef {
    name: "pop3",
    eve_name: None,
    // Suricata's default `detection-ports` (110).
    detection: Detection { tcp: true, udp: false, ports: &[110], ports_only: true, probe, counters_by_transport: false, answers_first: None },
    new_parser,
    buffers: &[],
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
    frames: &[],
};

#[cfg(test)]
mod tests {
    use super::*;
    use vigil_types::Direction::{ToClient, ToServer};

    fn run(conv: &[(Direction, &str)]) -> Pop3Parser {
        let mut p = Pop3Parser::new(0, 256);
        for (d, t) in conv {
            ProtoParser::parse(&mut p, *d, t.as_bytes());
        }
        p
    }

    #[test]
    fn sasl_exchanges_and_listings_as_suricata_logs_them() {
        let p = run(&[
            (ToServer, "CAPA\r\n"),
            (ToClient, "+OK Capability list follows\r\nUSER\r\nSASL PLAIN XOAUTH2\r\n.\r\n"),
            (ToServer, "AUTH XOAUTH2\r\n"),
            (ToClient, "+ \r\n"),
            (ToServer, "dXNlcj1qb2U=\r\n"),
            (ToClient, "+OK Welcome.\r\n"),
            (ToServer, "UIDL\r\n"),
            (ToClient, "+OK\r\n1 GmailId123\r\n.\r\n"),
            (ToServer, "RETR 1\r\n"),
            (ToClient, "+OK\r\nSubject: x\r\n.\r\n"),
            (ToServer, "PASS x\r\n"),
            (ToClient, "-ERR the password incorrect\r\n"),
        ]);
        let eve: Vec<Value> = p.txs.iter().map(ProtoTx::eve).collect();
        assert_eq!(eve[0]["response"]["data"], json!(["USER", "SASL PLAIN XOAUTH2"]));
        assert_eq!(eve[0]["response"]["header"], "Capability list follows");
        assert_eq!(eve[1], json!({"request": {"command": "AUTH", "args": ["XOAUTH2"]},
            "response": {"success": true, "status": "OK", "header": "", "data": []}}));
        assert_eq!(eve[2]["request"]["command"], "<SASL DATA>");
        assert_eq!(eve[2]["response"]["header"], "Welcome.");
        assert_eq!(eve[3]["response"]["data"], json!(["1 GmailId123"]));
        assert_eq!(eve[4], json!({"request": {"command": "RETR", "args": ["1"]}}));
        assert_eq!(eve[5]["response"], json!({"success": false, "status": "ERR", "header": "the password incorrect", "data": []}));
        assert!(p.txs.iter().all(|t| t.done));
    }

    #[test]
    fn the_greeting_is_a_transaction_and_stls_hands_over() {
        let mut p = run(&[(ToClient, "+OK ready\r\n"), (ToServer, "STLS\r\n")]);
        assert_eq!(p.txs[0].eve(), json!({"response": {"success": true, "status": "OK", "header": "ready", "data": []}}));
        assert_eq!(ProtoParser::parse(&mut p, ToClient, b"+OK go\r\n\x16\x03"), ParseResult::Incomplete { consumed: 8, needed: 1 });
        assert!(p.tunnel());
    }
}
