//! MQTT 3.1, 3.1.1 and 5.0 over TCP (port 1883), as Suricata 8 has it: each
//! exchange is a transaction holding its packets (CONNECT with its CONNACK,
//! a PUBLISH with its acknowledgements by packet id, SUBSCRIBE with SUBACK,
//! UNSUBSCRIBE with UNSUBACK; PINGREQ, PINGRESP, DISCONNECT and AUTH each
//! alone); EVE `mqtt` records with an object per packet, the `mqtt.*`
//! keywords and Suricata's MQTT events. A packet longer than
//! `app-layer.protocols.mqtt.max-msg-length` (1 MiB) is skipped unread and
//! logged as truncated; records cut strings at the output's
//! `string-log-limit` (1 KiB) and leave passwords out with `passwords: no`.
//!
//! ```
//! use vigil_applayer::protocols::mqtt::PROTO;
//! use vigil_applayer::proto::{ParserInit, ProbeCx, Probe};
//! use vigil_applayer::{AppConfig, Transport};
//! use vigil_types::Direction::{ToClient, ToServer};
//!
//! let connect = b"\x10\x0d\x00\x04MQTT\x04\x02\x00\x3c\x00\x01c";
//! assert_eq!((PROTO.detection.probe)(ToServer, connect, ProbeCx::tcp(50000, 1883)), Probe::Match);
//! let app = AppConfig::default();
//! let init = ParserInit { app: &app, transport: Transport::Tcp, first_tx_id: 0, options: 0, settings: &[], expected: None, client: None };
//! let mut p = (PROTO.new_parser)(&init);
//! p.parse(ToServer, connect);
//! p.parse(ToClient, b"\x20\x02\x00\x00");
//! let rec = p.tx(0).unwrap().eve();
//! assert_eq!(rec["connect"]["client_id"], "c");
//! assert_eq!(rec["connack"]["return_code"], 0);
//! ```

mod checks;
pub mod message;

use std::any::Any;

use serde_json::{Map, Value};
use vigil_types::{Direction, PerDir};

use crate::parser::{AppEvent, ParseResult};
use crate::progress::Progress;
use crate::proto::{
    BufferDef, Detection, ParserInit, ProbeCx, Probe, ProtoDef, ProtoParser, ProtoTx, RecordOptions, SettingDef, Sides,
    TxQueue,
};
use message::{Body, Header, Message, Strings};

/// The buffers, numbered for [`ProtoTx::buffer`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Buffer {
    ClientId = 0,
    Username = 1,
    Password = 2,
    WillTopic = 3,
    WillMessage = 4,
    ProtocolString = 5,
    PublishTopic = 6,
    PublishMessage = 7,
    SubscribeTopic = 8,
    UnsubscribeTopic = 9,
}

/// Message bytes the exchanges of one flow hold together; past it the
/// oldest exchanges go, unlogged, counted among the evicted transactions.
const FLOW_BUDGET: usize = 16 << 20;

/// Suricata's MQTT events.
pub const EVENTS: &[&str] = &[
    "missing_connect",
    "missing_publish",
    "missing_subscribe",
    "missing_unsubscribe",
    "double_connect",
    "unintroduced_message",
    "invalid_qos_level",
    "missing_msg_id",
    "unassigned_msg_type",
    "too_many_transactions",
    "malformed_traffic",
];

fn event_bit(name: &str) -> u64 {
    EVENTS.iter().position(|e| *e == name).map_or(0, |i| 1 << i)
}

/// One exchange.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MqttTx {
    id: u64,
    pub msgs: Vec<Message>,
    /// The packet id its replies carry (CONNECT's reply has none).
    awaits: Option<u16>,
    pub complete: bool,
    events: u64,
}

impl MqttTx {
    fn first_kind(&self) -> Option<u8> {
        self.msgs.first().map(|m| m.fixed.kind)
    }

    fn connect(&self) -> Option<&message::Connect> {
        self.msgs.iter().find_map(|m| match &m.body {
            Body::Connect(c) => Some(&**c),
            _ => None,
        })
    }

    fn publish(&self) -> Option<(&[u8], &[u8])> {
        self.msgs.iter().find_map(|m| match &m.body {
            Body::Publish { topic, message, .. } => Some((&topic[..], &message[..])),
            _ => None,
        })
    }

    /// The record body under the output's options.
    fn record(&self, opts: &RecordOptions) -> Value {
        let s = Strings::of(opts);
        let mut m = Map::new();
        for msg in &self.msgs {
            if matches!(msg.body, Body::Unassigned) {
                continue;
            }
            m.insert(message::eve_key(msg.fixed.kind).into(), msg.eve(s, opts.passwords.unwrap_or(true)));
        }
        Value::Object(m)
    }
}

impl ProtoTx for MqttTx {
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
        if index > 0 && !matches!(id, 8 | 9) {
            return None;
        }
        let c = || self.connect();
        let one = |b| b;
        match id {
            0 => one(c().map(|c| &c.client_id[..])),
            1 => one(c().and_then(|c| c.username.as_deref())),
            2 => one(c().and_then(|c| c.password.as_deref())),
            3 => one(c().and_then(|c| c.will.as_ref()).map(|w| &w.0[..])),
            4 => one(c().and_then(|c| c.will.as_ref()).map(|w| &w.1[..])),
            5 => one(c().map(|c| &c.protocol[..])),
            6 => one(self.publish().map(|p| p.0)),
            7 => one(self.publish().map(|p| p.1)),
            8 => self
                .msgs
                .iter()
                .filter_map(|m| match &m.body {
                    Body::Subscribe { topics, .. } => Some(topics.iter().map(|t| &t.0[..])),
                    _ => None,
                })
                .flatten()
                .nth(index),
            9 => self
                .msgs
                .iter()
                .filter_map(|m| match &m.body {
                    Body::Unsubscribe { topics, .. } => Some(topics.iter().map(|t| &t[..])),
                    _ => None,
                })
                .flatten()
                .nth(index),
            _ => None,
        }
    }

    fn eve(&self) -> Value {
        self.record(&RecordOptions::default())
    }

    fn eve_with(&self, opts: &RecordOptions) -> Value {
        self.record(opts)
    }

    fn events(&self) -> u64 {
        self.events
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// What one direction has of a packet not whole yet.
#[derive(Debug, Default)]
struct Side {
    held: Vec<u8>,
    /// Bytes still to skip of a packet too long to read.
    skip: u64,
}

#[derive(Debug)]
pub struct MqttParser {
    txs: TxQueue<MqttTx>,
    sides: PerDir<Side>,
    /// The version the CONNECT announced (5 reads properties).
    version: u8,
    /// A CONNACK was seen.
    connected: bool,
    max_msg: u64,
    events: Vec<AppEvent>,
    closed: PerDir<bool>,
    /// At least the message bytes the held exchanges carry.
    held: usize,
    frames: crate::frames::FrameLog,
}

impl MqttParser {
    pub fn new(first_tx_id: u64, max_tx: usize, max_msg: u64) -> Self {
        MqttParser {
            txs: TxQueue::new(first_tx_id, max_tx),
            sides: PerDir::default(),
            version: 0,
            connected: false,
            max_msg,
            events: Vec::new(),
            closed: PerDir::default(),
            held: 0,
            frames: crate::frames::FrameLog::default(),
        }
    }

    /// A transaction of its own for `msg`; `complete` when nothing answers it.
    fn open(&mut self, msg: Option<Message>, awaits: Option<u16>, complete: bool) -> usize {
        self.txs.push_with(|id| MqttTx { id, msgs: msg.into_iter().collect(), awaits, complete, events: 0 })
    }

    fn raise(&mut self, at: usize, name: &'static str) {
        if let Some(tx) = self.txs.get_mut(at) {
            tx.events |= event_bit(name);
            let id = tx.id;
            self.events.push(AppEvent { name: prefixed(name), tx_id: Some(id) });
        }
    }

    /// The open exchange `first` began with packet id `id` (`None`: a CONNECT).
    fn awaiting(&self, first: u8, id: Option<u16>) -> Option<usize> {
        self.txs.iter().rposition(|t| !t.complete && t.first_kind() == Some(first) && t.awaits == id)
    }

    /// What a message holds of the flow's memory: its payload and topics.
    fn weight(m: &Message) -> usize {
        match &m.body {
            Body::Publish { topic, message, .. } => topic.len() + message.len(),
            Body::Connect(c) => c.will.as_ref().map_or(0, |w| w.0.len() + w.1.len()),
            _ => 0,
        }
    }

    fn handle(&mut self, msg: Message) {
        // An upper bound kept as messages come (pruning lowers the truth, not it); only
        // past the budget are the exchanges weighed, and the oldest dropped.
        self.held += Self::weight(&msg);
        self.handle_message(msg);
        if self.held > FLOW_BUDGET {
            let weigh = |txs: &TxQueue<MqttTx>| txs.iter().flat_map(|t| t.msgs.iter()).map(Self::weight).sum::<usize>();
            self.held = weigh(&self.txs);
            while self.txs.len() > 1 && self.held > FLOW_BUDGET {
                self.txs.evict_oldest();
                self.held = weigh(&self.txs);
            }
        }
    }

    fn handle_message(&mut self, msg: Message) {
        use message::*;
        let kind = msg.fixed.kind;
        let unintroduced = !self.connected && !matches!(kind, CONNECT | CONNACK);
        // An answer: its place, the packet that opens its exchange, whether it ends it, the event when none is open.
        let answer = match kind {
            CONNACK => Some((CONNECT, true, "missing_connect")),
            PUBACK | PUBCOMP => Some((PUBLISH, true, "missing_publish")),
            PUBREC | PUBREL => Some((PUBLISH, false, "missing_publish")),
            SUBACK => Some((SUBSCRIBE, true, "missing_subscribe")),
            UNSUBACK => Some((UNSUBSCRIBE, true, "missing_unsubscribe")),
            _ => None,
        };
        if let Some((first, ends, missing)) = answer {
            let id = if kind == CONNACK { None } else { msg.id() };
            if kind == CONNACK {
                self.connected = true;
            }
            match self.awaiting(first, id) {
                Some(at) if !unintroduced => {
                    let tx = &mut self.txs[at];
                    tx.msgs.push(msg);
                    tx.complete |= ends;
                }
                _ => {
                    let at = self.open(Some(msg), None, true);
                    self.raise(at, if unintroduced { "unintroduced_message" } else { missing });
                }
            }
            return;
        }
        let qos = msg.fixed.qos();
        let awaits = match kind {
            CONNECT => None,
            PUBLISH if (1..=2).contains(&qos) => msg.id(),
            SUBSCRIBE | UNSUBSCRIBE => msg.id(),
            _ => None,
        };
        let waits = match kind {
            CONNECT | SUBSCRIBE | UNSUBSCRIBE => !unintroduced,
            PUBLISH => (1..=2).contains(&qos) && !unintroduced && awaits.is_some(),
            _ => false,
        };
        let truncated = matches!(msg.body, Body::Truncated { .. });
        let double = kind == CONNECT && self.connected;
        if let Body::Connect(c) = &msg.body {
            self.version = c.version;
        }
        let at = self.open(Some(msg), awaits, !waits || truncated);
        if unintroduced {
            self.raise(at, "unintroduced_message");
        }
        if double {
            self.raise(at, "double_connect");
        }
        if kind == PUBLISH && qos > 2 {
            self.raise(at, "invalid_qos_level");
        }
        if kind == 0 {
            self.raise(at, "unassigned_msg_type");
        }
    }
}

/// The event's name as rules and records give it.
fn prefixed(name: &str) -> &'static str {
    match name {
        "missing_connect" => "mqtt.missing_connect",
        "missing_publish" => "mqtt.missing_publish",
        "missing_subscribe" => "mqtt.missing_subscribe",
        "missing_unsubscribe" => "mqtt.missing_unsubscribe",
        "double_connect" => "mqtt.double_connect",
        "unintroduced_message" => "mqtt.unintroduced_message",
        "invalid_qos_level" => "mqtt.invalid_qos_level",
        "missing_msg_id" => "mqtt.missing_msg_id",
        "unassigned_msg_type" => "mqtt.unassigned_msg_type",
        "too_many_transactions" => "mqtt.too_many_transactions",
        _ => "mqtt.malformed_traffic",
    }
}

impl ProtoParser for MqttParser {
    fn parse(&mut self, dir: Direction, data: &[u8]) -> ParseResult {
        // A packet begun in an earlier chunk goes on from what is held (bounded by max-msg-length).
        let mut owned = std::mem::take(&mut self.sides.get_mut(dir).held);
        let from_held = !owned.is_empty();
        if from_held {
            owned.extend_from_slice(data);
        }
        // Bytes of `owned` that came before `data`: frames are marked from `data`'s start.
        let before = if from_held { (owned.len() - data.len()) as i64 } else { 0 };
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
            if rest.is_empty() {
                break None;
            }
            let fixed = match message::fixed_header(rest) {
                Header::Whole(f) => f,
                Header::Short => break Some(at),
                Header::Bad => {
                    let tx = self.open(None, None, true);
                    self.raise(tx, "malformed_traffic");
                    return ParseResult::Error;
                }
            };
            if self.frames.is_on() && (fixed.total() > self.max_msg || rest.len() as u64 >= fixed.total()) {
                let rel = at as i64 - before;
                let whole = &rest[..(rest.len() as u64).min(fixed.total()) as usize];
                let hdr = fixed.header_len;
                self.frames.add_held(dir, rel, Some(fixed.total()), Frame::Pdu as u8, None, whole);
                self.frames.add_held(dir, rel, Some(hdr as u64), Frame::Header as u8, None, &whole[..hdr.min(whole.len())]);
                let body = whole.get(hdr..).unwrap_or_default();
                self.frames.add_held(dir, rel + hdr as i64, Some(fixed.total() - hdr as u64), Frame::Data as u8, None, body);
            }
            if fixed.total() > self.max_msg {
                let have = (rest.len() as u64).min(fixed.total());
                self.sides.get_mut(dir).skip = fixed.total() - have;
                self.handle(Message { fixed, body: Body::Truncated { skipped: fixed.total() } });
                at += have as usize;
                continue;
            }
            let total = fixed.total() as usize;
            if rest.len() < total {
                break Some(at);
            }
            match message::decode(fixed, &rest[fixed.header_len..total], self.version) {
                Ok(msg) => self.handle(msg),
                Err(message::Malformed) => {
                    let tx = self.open(None, None, true);
                    self.raise(tx, "malformed_traffic");
                    return ParseResult::Error;
                }
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

    fn on_gap(&mut self, _dir: Direction, _len: u64) -> bool {
        // A packet's length is all that frames the next one: lost with the bytes.
        false
    }

    fn close(&mut self, dir: Direction, _held: &[u8]) {
        *self.closed.get_mut(dir) = true;
        if *self.closed.get(dir.flip()) {
            // Nothing will answer what is still open.
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

    fn take_frames(&mut self, out: &mut Vec<crate::frames::Mark>) -> u8 {
        self.frames.drain(out);
        self.frames.tx_base()
    }
}

/// MQTT's frame types: a whole control packet, its fixed header, and what follows it.
#[derive(Debug, Clone, Copy)]
enum Frame {
    Pdu,
    Header,
    Data,
}

pub const SETTINGS: &[SettingDef] = &[
    SettingDef { key: "max-tx", default: 4096, size: false },
    SettingDef { key: "max-msg-length", default: 1 << 20, size: true },
];

fn new_parser(init: &ParserInit) -> Box<dyn ProtoParser> {
    let max_tx = init.setting(&PROTO, 0).clamp(1, 1 << 16) as usize;
    let mut p = MqttParser::new(init.first_tx_id, max_tx, init.setting(&PROTO, 1).max(2));
    p.frames = crate::frames::FrameLog::counted_from_one(init.app.frames);
    Box::new(p)
}

/// A fixed header of an assigned type (1 to 14, AUTH being MQTT 5's late
/// addition) whose length is well formed: weak, so probed on the port only.
fn probe(_dir: Direction, data: &[u8], _cx: ProbeCx) -> Probe {
    match message::fixed_header(data) {
        Header::Whole(f) if (1..=14).contains(&f.kind) => Probe::Match,
        Header::Short => Probe::NeedMore,
        _ => Probe::NoMatch,
    }
}

fn sample() -> Vec<(Direction, Vec<u8>)> {
    use Direction::{ToClient, ToServer};
    vec![
        (ToServer, b"\x10\x1a\x00\x04MQTT\x05\xc2\x00\x3c\x03\x21\x00\x14\x00\x01c\x00\x04user\x00\x04pass".to_vec()),
        (ToClient, b"\x20\x06\x00\x00\x03\x22\x00\x0a".to_vec()),
        (ToServer, b"\x82\x0b\x00\x01\x00\x00\x06topicX\x01".to_vec()),
        (ToClient, b"\x90\x04\x00\x01\x00\x01".to_vec()),
        (ToServer, b"\x32\x0f\x00\x06topicX\x00\x02\x00hello".to_vec()),
        (ToClient, b"\x40\x03\x00\x02\x10\x00".to_vec()),
        (ToServer, b"\xc0\x00\xe0\x00".to_vec()),
        (ToClient, b"\xd0\x00".to_vec()),
    ]
}

const fn buffer(name: &'static str, id: Buffer, sides: Sides, multi: bool) -> BufferDef {
    BufferDef {
        name,
        id: id as u8,
        sides,
        default: Direction::ToServer,
        both_ways: false,
        need: Progress::Complete,
        multi,
    }
}

pub static PROTO: ProtoDef = ProtoDef {
    name: "mqtt",
    eve_name: None,
    detection: Detection { tcp: true, udp: false, ports: &[1883], ports_only: true, probe, counters_by_transport: false, answers_first: None },
    new_parser,
    buffers: &[
        buffer("mqtt.connect.clientid", Buffer::ClientId, Sides::ToServer, false),
        buffer("mqtt.connect.username", Buffer::Username, Sides::ToServer, false),
        buffer("mqtt.connect.password", Buffer::Password, Sides::ToServer, false),
        buffer("mqtt.connect.willtopic", Buffer::WillTopic, Sides::ToServer, false),
        buffer("mqtt.connect.willmessage", Buffer::WillMessage, Sides::ToServer, false),
        buffer("mqtt.connect.protocol_string", Buffer::ProtocolString, Sides::ToServer, false),
        buffer("mqtt.publish.topic", Buffer::PublishTopic, Sides::Both, false),
        buffer("mqtt.publish.message", Buffer::PublishMessage, Sides::Both, false),
        buffer("mqtt.subscribe.topic", Buffer::SubscribeTopic, Sides::ToServer, true),
        buffer("mqtt.unsubscribe.topic", Buffer::UnsubscribeTopic, Sides::ToServer, true),
    ],
    checks: checks::CHECKS,
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
    off_by_default: false,
    stream_depth: None,
    frames: &["pdu", "header", "data"],
};

#[cfg(test)]
mod tests;
