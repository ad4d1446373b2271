//! DNP3 over TCP port 20000, off unless `app-layer.protocols.dnp3.enabled`
//! says yes, as in Suricata. Link-layer frames (their header and every
//! 16-byte block checked against its CRC), transport segments reassembled
//! from FIR to FIN, and application messages: each request and each
//! response is a transaction of the side that sent it, logged as EVE `dnp3`
//! (link control, addresses, application control, function code, objects
//! with their points, internal indications). The `dnp3_func`, `dnp3_ind`,
//! `dnp3_obj` keywords and the `dnp3.data` buffer; Suricata's events.
//!
//! Points are read for the common objects (binary and analog inputs and
//! outputs, counters, control relay output blocks, time, class data, file
//! control); an object not known here ends the reading of its message
//! (`unknown_object`), as an object Suricata does not know does there.
//!
//! ```
//! use vigil_applayer::protocols::dnp3::PROTO;
//! use vigil_applayer::proto::{ParserInit, ProbeCx, Probe};
//! use vigil_applayer::{AppConfig, Transport};
//! use vigil_types::Direction::ToServer;
//!
//! let read_class0 = vigil_applayer::protocols::dnp3::frame(true, 3, 4, &[0xc0, 0xc1, 0x01, 0x3c, 0x01, 0x06]);
//! assert_eq!((PROTO.detection.probe)(ToServer, &read_class0, ProbeCx::tcp(40000, 20000)), Probe::Match);
//! let app = AppConfig::default();
//! let init = ParserInit { app: &app, transport: Transport::Tcp, first_tx_id: 0, options: 0, settings: &[], expected: None, client: None };
//! let mut p = (PROTO.new_parser)(&init);
//! p.parse(ToServer, &read_class0);
//! let rec = p.tx(0).unwrap().eve();
//! assert_eq!((rec["type"].as_str(), rec["application"]["function_code"].as_u64()), (Some("request"), Some(1)));
//! assert_eq!(rec["application"]["objects"][0]["group"], 60);
//! ```

mod checks;
pub mod objects;

use std::any::Any;

use serde_json::{Map, Value};
use vigil_types::{Direction, PerDir};

use crate::parser::{AppEvent, ParseResult};
use crate::progress::Progress;
use crate::proto::{BufferDef, Detection, ParserInit, ProbeCx, Probe, ProtoDef, ProtoParser, ProtoTx, SettingDef, Sides, TxQueue};

/// Suricata's DNP3 events, as rules name them.
pub const EVENTS: &[&str] = &[
    "flooded",
    "len_too_small",
    "bad_link_crc",
    "bad_transport_crc",
    "malformed",
    "unknown_object",
    "max_points_per_object",
    "too_long_reassembly",
    "too_many_points",
    "too_many_objects",
];

/// Requests without a response past which the flow is `flooded`.
const FLOOD: u32 = 32;
/// Points one object may declare before it is not read (`too_many_points`,
/// formerly `max_points_per_object`).
const MAX_POINTS: u32 = 16_384;
/// Objects one message may hold before the rest is not read (`too_many_objects`).
const MAX_OBJECTS: usize = 4096;
/// Reassembled application data of one message: 63 segments of at most
/// 255 bytes (the transport sequence space), past which it is dropped.
const MAX_REASSEMBLY: usize = 63 * 255;

/// The IIN bits by `dnp3_ind` name, IIN1 in the high byte.
pub const INDICATORS: [(&str, u16); 16] = [
    ("all_stations", 0x0100),
    ("class_1_events", 0x0200),
    ("class_2_events", 0x0400),
    ("class_3_events", 0x0800),
    ("need_time", 0x1000),
    ("local_control", 0x2000),
    ("device_trouble", 0x4000),
    ("device_restart", 0x8000),
    ("no_func_code_support", 0x0001),
    ("object_unknown", 0x0002),
    ("parameter_error", 0x0004),
    ("event_buffer_overflow", 0x0008),
    ("already_executing", 0x0010),
    ("config_corrupt", 0x0020),
    ("reserved_2", 0x0040),
    ("reserved_1", 0x0080),
];

/// DNP3's CRC (polynomial 0x3D65, reflected, complemented), as its link layer sends it.
pub fn crc(data: &[u8]) -> u16 {
    let mut c: u16 = 0;
    for &b in data {
        c ^= u16::from(b);
        for _ in 0..8 {
            c = if c & 1 != 0 { (c >> 1) ^ 0xa6bc } else { c >> 1 };
        }
    }
    !c
}

/// A link frame carrying `user` data (transport header and application
/// data), primary, from `src` to `dst`, `dir` set for a master's frame:
/// what the tests and the sample build.
pub fn frame(from_master: bool, src: u16, dst: u16, user: &[u8]) -> Vec<u8> {
    let ctrl = if from_master { 0xc4 } else { 0x44 };
    let mut f = vec![0x05, 0x64, (5 + user.len()) as u8, ctrl];
    f.extend_from_slice(&dst.to_le_bytes());
    f.extend_from_slice(&src.to_le_bytes());
    let c = crc(&f);
    f.extend_from_slice(&c.to_le_bytes());
    for block in user.chunks(16) {
        f.extend_from_slice(block);
        f.extend_from_slice(&crc(block).to_le_bytes());
    }
    f
}

/// One application message.
#[derive(Debug, Clone, PartialEq)]
pub struct Dnp3Tx {
    id: u64,
    dir: Direction,
    pub link_ctrl: u8,
    pub src: u16,
    pub dst: u16,
    pub app_ctrl: u8,
    pub function: u8,
    pub iin: Option<u16>,
    pub objects: Vec<objects::Object>,
    /// Its objects were all read.
    pub complete: bool,
    /// The application data, as `dnp3.data` inspects it.
    pub data: Vec<u8>,
    events: u64,
}

impl ProtoTx for Dnp3Tx {
    fn id(&self) -> u64 {
        self.id
    }

    /// Whole once parsed, both ways: its events are inspected by a rule of
    /// either side (its buffer and values only on its own, see the checks).
    fn progress(&self, _dir: Direction) -> Progress {
        Progress::Complete
    }

    fn buffer(&self, dir: Direction, id: u8, index: usize) -> Option<&[u8]> {
        (id == 0 && index == 0 && dir == self.dir).then_some(&self.data[..])
    }

    fn eve(&self) -> Value {
        let mut m = Map::new();
        let kind = match self.function {
            129 => "response",
            130 => "unsolicited_response",
            _ => "request",
        };
        m.insert("type".into(), kind.into());
        let c = self.link_ctrl;
        let mut control = Map::new();
        control.insert("dir".into(), (c & 0x80 != 0).into());
        control.insert("pri".into(), (c & 0x40 != 0).into());
        control.insert("fcb".into(), (c & 0x20 != 0).into());
        control.insert("fcv".into(), (c & 0x10 != 0).into());
        control.insert("function_code".into(), (c & 0x0f).into());
        m.insert("control".into(), Value::Object(control));
        m.insert("src".into(), self.src.into());
        m.insert("dst".into(), self.dst.into());
        let a = self.app_ctrl;
        let mut app = Map::new();
        let mut actrl = Map::new();
        actrl.insert("fir".into(), (a & 0x80 != 0).into());
        actrl.insert("fin".into(), (a & 0x40 != 0).into());
        actrl.insert("con".into(), (a & 0x20 != 0).into());
        actrl.insert("uns".into(), (a & 0x10 != 0).into());
        actrl.insert("sequence".into(), (a & 0x0f).into());
        app.insert("control".into(), Value::Object(actrl));
        app.insert("function_code".into(), self.function.into());
        if !self.objects.is_empty() {
            app.insert("objects".into(), Value::Array(self.objects.iter().map(objects::Object::eve).collect()));
        }
        app.insert("complete".into(), self.complete.into());
        m.insert("application".into(), Value::Object(app));
        if let Some(iin) = self.iin {
            let mut i = Map::new();
            let set: Vec<Value> = INDICATORS.iter().filter(|(_, bit)| iin & bit != 0).map(|(n, _)| Value::from(*n)).collect();
            if !set.is_empty() {
                i.insert("indicators".into(), Value::Array(set));
            }
            m.insert("iin".into(), Value::Object(i));
        }
        Value::Object(m)
    }

    fn events(&self) -> u64 {
        self.events
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A message being reassembled from transport segments.
#[derive(Debug, Default)]
struct Reassembly {
    data: Vec<u8>,
    link_ctrl: u8,
    src: u16,
    dst: u16,
    next_seq: u8,
    open: bool,
}

#[derive(Debug)]
pub struct Dnp3Parser {
    txs: TxQueue<Dnp3Tx>,
    sides: PerDir<Reassembly>,
    /// Requests since the last response.
    unanswered: u32,
    flooded: bool,
    events: Vec<AppEvent>,
}

impl Dnp3Parser {
    pub fn new(first_tx_id: u64, max_tx: usize) -> Self {
        Dnp3Parser { txs: TxQueue::new(first_tx_id, max_tx), sides: PerDir::default(), unanswered: 0, flooded: false, events: Vec::new() }
    }

    /// Raises `name` (a rule's name) on the newest transaction; `record`: the name its
    /// anomaly record gives, where Suricata's differs.
    fn raise(&mut self, name: &'static str, record: &'static str, on_tx: bool) {
        let bit = EVENTS.iter().position(|e| *e == name).map_or(0, |i| 1 << i);
        let tx_id = if on_tx {
            self.txs.back_mut().map(|t| {
                t.events |= bit;
                t.id
            })
        } else {
            None
        };
        self.events.push(AppEvent { name: record, tx_id });
    }

    /// One link frame's user data, CRCs checked and removed: the transport segment.
    fn segment(&mut self, dir: Direction, f: &[u8]) {
        let (ctrl, dst, src) = (f[3], u16::from_le_bytes([f[4], f[5]]), u16::from_le_bytes([f[6], f[7]]));
        let mut user = Vec::with_capacity(f.len());
        for block in f[10..].chunks(18) {
            let (data, c) = block.split_at(block.len() - 2);
            if crc(data).to_le_bytes() != [c[0], c[1]] {
                self.raise("bad_transport_crc", "dnp3.bad_transport_crc", false);
                return;
            }
            user.extend_from_slice(data);
        }
        let Some((&th, app)) = user.split_first() else { return };
        let (fin, fir, seq) = (th & 0x80 != 0, th & 0x40 != 0, th & 0x3f);
        let side = self.sides.get_mut(dir);
        if fir {
            *side = Reassembly { data: Vec::new(), link_ctrl: ctrl, src, dst, next_seq: seq, open: true };
        } else if !side.open || seq != side.next_seq {
            // A segment out of its message: dropped, as the transport layer would.
            return;
        }
        side.next_seq = (seq + 1) & 0x3f;
        side.data.extend_from_slice(app);
        if side.data.len() > MAX_REASSEMBLY {
            let r = std::mem::take(side);
            self.message(dir, r, true);
            return;
        }
        if fin {
            let r = std::mem::take(side);
            self.message(dir, r, false);
        }
    }

    /// A reassembled application message (`too_long`: cut at the bound).
    fn message(&mut self, dir: Direction, r: Reassembly, too_long: bool) {
        let d = &r.data;
        if d.len() < 2 {
            self.raise("malformed", "dnp3.malformed", false);
            return;
        }
        let (app_ctrl, function) = (d[0], d[1]);
        let response = matches!(function, 129 | 130);
        let (iin, body) = if response {
            match d.get(2..4) {
                Some(i) => (Some(u16::from_be_bytes([i[0], i[1]])), &d[4..]),
                None => {
                    self.raise("malformed", "dnp3.malformed", false);
                    return;
                }
            }
        } else {
            (None, &d[2..])
        };
        // A read request's objects name what to read and carry no data.
        let with_data = response || !matches!(function, 1 | 7..=12 | 20..=22);
        let (objs, stop) = if too_long { (Vec::new(), None) } else { objects::read(body, with_data, MAX_POINTS, MAX_OBJECTS) };
        let complete = stop.is_none() && !too_long;
        let data = r.data.clone();
        self.txs.push_with(|id| Dnp3Tx {
            id,
            dir,
            link_ctrl: r.link_ctrl,
            src: r.src,
            dst: r.dst,
            app_ctrl,
            function,
            iin,
            objects: objs,
            complete,
            data,
            events: 0,
        });
        match stop {
            Some(objects::Stop::Unknown) => self.raise("unknown_object", "dnp3.unknown_object", true),
            Some(objects::Stop::TooManyPoints) => {
                self.raise("max_points_per_object", "dnp3.too_many_points", true);
                if let Some(t) = self.txs.back_mut() {
                    t.events |= 1 << EVENTS.iter().position(|e| *e == "too_many_points").unwrap_or(0);
                }
            }
            Some(objects::Stop::TooManyObjects) => self.raise("too_many_objects", "dnp3.too_many_objects", true),
            Some(objects::Stop::Malformed) => self.raise("malformed", "dnp3.malformed", true),
            None => {}
        }
        if too_long {
            self.raise("too_long_reassembly", "dnp3.too_long_reassembly", true);
        }
        if response {
            self.unanswered = 0;
        } else if dir == Direction::ToServer && function != 0 {
            self.unanswered += 1;
            if self.unanswered > FLOOD && !self.flooded {
                self.flooded = true;
                self.raise("flooded", "dnp3.flooded", true);
            }
        }
    }
}

/// The length of the whole link frame whose header starts `data`: its
/// user data plus a CRC for each 16-byte block and the header's.
fn frame_len(len: u8) -> usize {
    let user = usize::from(len) - 5;
    10 + user + 2 * user.div_ceil(16)
}

impl ProtoParser for Dnp3Parser {
    fn parse(&mut self, dir: Direction, data: &[u8]) -> ParseResult {
        let mut at = 0;
        while at < data.len() {
            let rest = &data[at..];
            if rest.len() < 10 {
                return ParseResult::Incomplete { consumed: at, needed: 10 - rest.len() };
            }
            if rest[..2] != [0x05, 0x64] {
                // Lost framing: look for the next start.
                match rest[1..].windows(2).position(|w| w == [0x05, 0x64]) {
                    Some(i) => {
                        at += 1 + i;
                        continue;
                    }
                    None => return ParseResult::Done,
                }
            }
            if rest[2] < 5 {
                self.raise("len_too_small", "dnp3.len_too_small", false);
                at += 10;
                continue;
            }
            if crc(&rest[..8]).to_le_bytes() != [rest[8], rest[9]] {
                self.raise("bad_link_crc", "dnp3.bad_link_crc", false);
                at += 2;
                continue;
            }
            let total = frame_len(rest[2]);
            if rest.len() < total {
                return ParseResult::Incomplete { consumed: at, needed: total - rest.len() };
            }
            self.segment(dir, &rest[..total]);
            at += total;
        }
        ParseResult::Done
    }

    fn on_gap(&mut self, dir: Direction, _len: u64) -> bool {
        *self.sides.get_mut(dir) = Reassembly::default();
        true
    }

    fn close(&mut self, _dir: Direction, _held: &[u8]) {}

    crate::proto::delegate_txs!(txs);

    fn prune(&mut self, id: u64) {
        self.txs.prune_while(id, |_| true);
    }

    fn drain_events(&mut self, out: &mut Vec<AppEvent>) {
        out.append(&mut self.events);
    }
}

pub const SETTINGS: &[SettingDef] = &[SettingDef { key: "max-tx", default: 256, size: false }];

fn new_parser(init: &ParserInit) -> Box<dyn ProtoParser> {
    let max_tx = init.setting(&PROTO, 0).clamp(1, 1 << 16) as usize;
    Box::new(Dnp3Parser::new(init.first_tx_id, max_tx))
}

/// A link header: the start bytes and a length of at least five.
fn probe(_dir: Direction, data: &[u8], _cx: ProbeCx) -> Probe {
    match data {
        [0x05, 0x64, len, ..] if *len >= 5 => Probe::Match,
        [0x05, 0x64] | [0x05] => Probe::NeedMore,
        _ => Probe::NoMatch,
    }
}

/// A link frame an outstation sent (its direction bit clear): a session
/// picked up with one to the server had its ends the wrong way round.
fn from_outstation(data: &[u8]) -> bool {
    matches!(data, [0x05, 0x64, len, ctrl, ..] if *len >= 5 && ctrl & 0x80 == 0)
}

fn sample() -> Vec<(Direction, Vec<u8>)> {
    vec![
        // Direct operate: a CROB for index 1.
        (
            Direction::ToServer,
            frame(true, 3, 2, b"\xc0\xc0\x05\x0c\x01\x28\x01\x00\x01\x00\x03\x01\x64\x00\x00\x00\x64\x00\x00\x00\x00"),
        ),
        // The response, the same CROB echoed, with device restart set.
        (
            Direction::ToClient,
            frame(false, 2, 3, b"\xc0\xc0\x81\x80\x00\x0c\x01\x28\x01\x00\x01\x00\x03\x01\x64\x00\x00\x00\x64\x00\x00\x00\x00"),
        ),
    ]
}

pub static PROTO: ProtoDef = ProtoDef {
    name: "dnp3",
    eve_name: None,
    detection: Detection {
        tcp: true,
        udp: false,
        ports: &[20000],
        ports_only: true,
        probe,
        counters_by_transport: false,
        answers_first: Some(from_outstation),
    },
    new_parser,
    buffers: &[BufferDef {
        name: "dnp3.data",
        id: 0,
        sides: Sides::Both,
        default: Direction::ToServer,
        both_ways: true,
        need: Progress::Complete,
        multi: false,
    }],
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
    base_need: crate::proto::HEADERS_BOTH,
    hooks: crate::proto::Hooks::GENERIC,
    off_by_default: true,
    stream_depth: None,
    frames: &[],
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_crc_is_dnp3s() {
        // A reset-link frame header from IEEE 1815's examples: 05 64 05 C0 01 00 00 04, CRC E9 21.
        assert_eq!(crc(&[0x05, 0x64, 0x05, 0xc0, 0x01, 0x00, 0x00, 0x04]).to_le_bytes(), [0xe9, 0x21]);
    }

    #[test]
    fn messages_span_segments_and_frames_span_chunks() {
        // A write of two analog outputs (g41v1, u8 index prefix, u8 count), split over two segments.
        let first = frame(true, 3, 4, &[0x40, 0xc0, 0x02, 0x29, 0x01, 0x17, 0x02, 0x00, 0x0a]);
        let second = frame(true, 3, 4, &[0x81, 0x00, 0x00, 0x00, 0x00, 0x01, 0x14, 0x00, 0x00, 0x00, 0x00]);
        let all = [first, second].concat();
        // Fed a byte at a time the way the flow layer does: what is not consumed is offered again.
        let mut p = Dnp3Parser::new(0, 8);
        crate::proto::kit::feed(&mut p, Direction::ToServer, &all, 1);
        assert_eq!(p.txs.len(), 1);
        let tx = &p.txs[0];
        assert!(tx.complete);
        let o = &tx.objects[0];
        assert_eq!((o.group, o.variation, o.count), (41, 1, 2));
        assert_eq!((o.points[1]["index"].as_u64(), o.points[1]["value"].as_i64()), (Some(1), Some(20)));
    }

    #[test]
    fn bad_crcs_and_floods_raise_events() {
        let mut p = Dnp3Parser::new(0, 64);
        let mut f = frame(true, 3, 4, b"\xc0\xc0\x01\x3c\x01\x06");
        f[12] ^= 0xff;
        p.parse(Direction::ToServer, &f);
        for _ in 0..=FLOOD {
            p.parse(Direction::ToServer, &frame(true, 3, 4, b"\xc0\xc0\x01\x3c\x01\x06"));
        }
        let mut out = Vec::new();
        p.drain_events(&mut out);
        let names: Vec<&str> = out.iter().map(|e| e.name).collect();
        assert_eq!(names, ["dnp3.bad_transport_crc", "dnp3.flooded"]);
    }
}
