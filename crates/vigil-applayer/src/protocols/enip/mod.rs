//! EtherNet/IP (ENIP) encapsulation and the CIP it carries, over TCP and
//! UDP port 44818, off unless `app-layer.protocols.enip.enabled` says yes,
//! as in Suricata. Each request is a transaction with the response that
//! follows it; EVE `enip` records (command, status, CIP service, path and
//! class of requests, status of responses, the identity a ListIdentity
//! answer gives) and the `enip_command`, `cip_service` and `enip.*`
//! keywords, each matched against the message of the side inspected.
//!
//! Device types and vendors are named for the common ones; others are
//! logged as their number.
//!
//! ```
//! use vigil_applayer::protocols::enip::PROTO;
//! use vigil_applayer::proto::{ParserInit, ProbeCx, Probe};
//! use vigil_applayer::{AppConfig, Transport};
//! use vigil_types::Direction::ToServer;
//!
//! let list_identity = [0x63u8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
//! assert_eq!((PROTO.detection.probe)(ToServer, &list_identity, ProbeCx::tcp(40000, 44818)), Probe::Match);
//! let app = AppConfig::default();
//! let init = ParserInit { app: &app, transport: Transport::Tcp, first_tx_id: 0, options: 0, settings: &[], expected: None, client: None };
//! let mut p = (PROTO.new_parser)(&init);
//! p.parse(ToServer, &list_identity);
//! assert_eq!(p.tx(0).unwrap().eve()["request"]["command"], "list_identity");
//! ```

mod checks;
pub mod cip;

use std::any::Any;

use serde_json::{Map, Value};
use vigil_types::Direction;

use crate::config::Transport;
use crate::parser::{AppEvent, ParseResult};
use crate::progress::Progress;
use crate::proto::{BufferDef, Detection, ParserInit, ProbeCx, Probe, ProtoDef, ProtoParser, ProtoTx, SettingDef, Sides, TxQueue};

/// The encapsulation header's size.
const HEADER: usize = 24;
/// The largest encapsulated message read (its data length is 16 bits).
const MAX_MESSAGE: usize = HEADER + 65535;

/// Commands by `enip_command` name.
pub const COMMANDS: [(&str, u16); 10] = [
    ("nop", 0x00),
    ("list_services", 0x04),
    ("list_identity", 0x63),
    ("list_interfaces", 0x64),
    ("register_session", 0x65),
    ("unregister_session", 0x66),
    ("send_rr_data", 0x6f),
    ("send_unit_data", 0x70),
    ("indicate_status", 0x72),
    ("cancel", 0x73),
];

/// Encapsulation statuses by `enip.status` name.
pub const STATUSES: [(&str, u32); 8] = [
    ("success", 0x00),
    ("invalid_cmd", 0x01),
    ("no_resources", 0x02),
    ("incorrect_data", 0x03),
    ("invalid_session", 0x64),
    ("invalid_length", 0x65),
    ("unsupported_prot_rev", 0x69),
    ("encap_header_error", 0x6a),
];

fn command_name(c: u16) -> String {
    COMMANDS.iter().find(|(_, v)| *v == c).map_or_else(|| format!("unknown-{c}"), |(n, _)| (*n).to_string())
}

fn status_name(s: u32) -> String {
    STATUSES.iter().find(|(_, v)| *v == s).map_or_else(|| format!("unknown-{s}"), |(n, _)| (*n).to_string())
}

fn device_type_name(t: u16) -> String {
    let name = match t {
        0x00 => "Generic Device",
        0x02 => "AC Drive",
        0x03 => "Motor Overload",
        0x04 => "Limit Switch",
        0x05 => "Inductive Proximity Switch",
        0x06 => "Photoelectric Sensor",
        0x07 => "General Purpose Discrete I/O",
        0x09 => "Resolver",
        0x0c => "Communications Adapter",
        0x0e => "Programmable Logic Controller",
        0x10 => "Position Controller",
        0x13 => "DC Drive",
        0x15 => "Contactor",
        0x16 => "Motor Starter",
        0x17 => "Soft Start",
        0x18 => "Human-Machine Interface",
        0x1a => "Mass Flow Controller",
        0x1b => "Pneumatic Valve",
        0x1c => "Vacuum Pressure Gauge",
        0x1d => "Process Control Value",
        0x1e => "Residual Gas Analyzer",
        0x1f => "DC Power Generator",
        0x20 => "RF Power Generator",
        0x21 => "Turbomolecular Vacuum Pump",
        0x22 => "Encoder",
        0x23 => "Safety Discrete I/O Device",
        0x24 => "Fluid Flow Controller",
        0x25 => "CIP Motion Drive",
        0x26 => "CompoNet Repeater",
        0x28 => "CIP Modbus Device",
        0x29 => "CIP Modbus Translator",
        0x2a => "Safety Analog I/O Device",
        0x2b => "Generic Device (keyable)",
        0x2c => "Managed Switch",
        n => return n.to_string(),
    };
    name.into()
}

fn vendor_name(v: u16) -> String {
    let name = match v {
        1 => "Rockwell Automation/Allen-Bradley",
        2 => "Namco Controls Corp.",
        3 => "Honeywell Inc.",
        5 => "Rockwell Automation/Reliance Elec.",
        8 => "Molex Incorporated",
        26 => "Festo Corporation",
        40 => "WAGO Corporation",
        44 => "Danfoss",
        48 => "Turck",
        50 => "Omron Corporation",
        58 => "Eaton Electrical",
        90 => "HMS Industrial Networks AB",
        243 => "Schneider Electric",
        283 => "Hilscher GmbH",
        n => return n.to_string(),
    };
    name.into()
}

/// What a ListIdentity answer says of a device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub protocol_version: u16,
    pub vendor_id: u16,
    pub device_type: u16,
    pub product_code: u16,
    pub revision: (u8, u8),
    pub status: u16,
    pub serial: u32,
    pub product_name: Vec<u8>,
    pub state: u8,
}

/// A ListServices answer's service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Service {
    pub protocol_version: u16,
    pub capabilities: u16,
    pub name: Vec<u8>,
}

/// One encapsulated message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub command: u16,
    pub status: u32,
    pub cip_request: Option<cip::Request>,
    pub cip_response: Option<cip::Response>,
    pub identity: Option<Identity>,
    pub services: Vec<Service>,
    /// A RegisterSession's protocol version.
    pub protocol_version: Option<u16>,
}

fn le16(b: &[u8], at: usize) -> Option<u16> {
    b.get(at..at + 2).map(|x| u16::from_le_bytes([x[0], x[1]]))
}

fn le32(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at + 4).map(|x| u32::from_le_bytes([x[0], x[1], x[2], x[3]]))
}

/// The common packet format's items: type and data.
fn items(b: &[u8]) -> Vec<(u16, &[u8])> {
    let mut out = Vec::new();
    let n = le16(b, 0).unwrap_or(0);
    let mut at = 2;
    for _ in 0..n.min(16) {
        let (Some(t), Some(len)) = (le16(b, at), le16(b, at + 2)) else { break };
        let Some(d) = b.get(at + 4..at + 4 + usize::from(len)) else { break };
        out.push((t, d));
        at += 4 + usize::from(len);
    }
    out
}

fn identity(d: &[u8]) -> Option<Identity> {
    let name_len = usize::from(*d.get(32)?);
    Some(Identity {
        protocol_version: le16(d, 0)?,
        vendor_id: le16(d, 18)?,
        device_type: le16(d, 20)?,
        product_code: le16(d, 22)?,
        revision: (*d.get(24)?, *d.get(25)?),
        status: le16(d, 26)?,
        serial: le32(d, 28)?,
        product_name: d.get(33..33 + name_len)?.to_vec(),
        state: *d.get(33 + name_len)?,
    })
}

/// Decodes the message whose header and data `b` hold; `dir` says which
/// side sent it (CIP requests go to the server).
fn decode(b: &[u8], dir: Direction) -> Message {
    let command = le16(b, 0).unwrap_or(0);
    let status = le32(b, 8).unwrap_or(0);
    let data = &b[HEADER..];
    let mut m = Message {
        command,
        status,
        cip_request: None,
        cip_response: None,
        identity: None,
        services: Vec::new(),
        protocol_version: None,
    };
    match command {
        0x6f | 0x70 if data.len() >= 6 => {
            for (t, d) in items(&data[6..]) {
                let payload = match t {
                    0xb2 => d,
                    // Connected data starts with its sequence count.
                    0xb1 => d.get(2..).unwrap_or_default(),
                    _ => continue,
                };
                match dir {
                    Direction::ToServer => m.cip_request = cip::request(payload, 0),
                    Direction::ToClient => m.cip_response = cip::response(payload, 0),
                }
            }
        }
        0x63 => m.identity = items(data).into_iter().find(|(t, _)| *t == 0x0c).and_then(|(_, d)| identity(d)),
        0x04 => {
            for (t, d) in items(data) {
                if t == 0x100 && d.len() >= 4 {
                    let name = d[4..].iter().take_while(|&&c| c != 0).copied().collect();
                    m.services.push(Service {
                        protocol_version: le16(d, 0).unwrap_or(0),
                        capabilities: le16(d, 2).unwrap_or(0),
                        name,
                    });
                }
            }
        }
        0x65 => m.protocol_version = le16(data, 0),
        _ => {}
    }
    m
}

impl Message {
    fn eve(&self) -> Value {
        let mut o = Map::new();
        o.insert("command".into(), command_name(self.command).into());
        o.insert("status".into(), status_name(self.status).into());
        if let Some(r) = &self.cip_request {
            o.insert("cip".into(), r.eve());
        }
        if let Some(r) = &self.cip_response {
            o.insert("cip".into(), r.eve());
        }
        if let Some(i) = &self.identity {
            let mut id = Map::new();
            id.insert("protocol_version".into(), i.protocol_version.into());
            id.insert("revision".into(), format!("{}.{}", i.revision.0, i.revision.1).into());
            id.insert("vendor_id".into(), vendor_name(i.vendor_id).into());
            id.insert("device_type".into(), device_type_name(i.device_type).into());
            id.insert("product_code".into(), i.product_code.into());
            id.insert("status".into(), i.status.into());
            id.insert("serial".into(), i.serial.into());
            id.insert("product_name".into(), crate::proto::escaped_text(&i.product_name).into());
            id.insert("state".into(), i.state.into());
            o.insert("identity".into(), Value::Object(id));
        }
        Value::Object(o)
    }
}

/// A request and the response to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnipTx {
    id: u64,
    pub request: Option<Message>,
    pub response: Option<Message>,
    /// The session ended: no response will come.
    ended: bool,
}

impl EnipTx {
    /// The message of side `dir`.
    pub fn side(&self, dir: Direction) -> Option<&Message> {
        match dir {
            Direction::ToServer => self.request.as_ref(),
            Direction::ToClient => self.response.as_ref(),
        }
    }
}

impl ProtoTx for EnipTx {
    fn id(&self) -> u64 {
        self.id
    }

    fn progress(&self, dir: Direction) -> Progress {
        if self.side(dir).is_some() || self.ended {
            Progress::Complete
        } else {
            Progress::None
        }
    }

    fn buffer(&self, dir: Direction, id: u8, index: usize) -> Option<&[u8]> {
        let m = self.side(dir)?;
        match id {
            0 => m.identity.as_ref().map(|i| &i.product_name[..]).filter(|_| index == 0),
            1 => m.services.get(index).map(|s| &s.name[..]),
            _ => None,
        }
    }

    fn eve(&self) -> Value {
        let mut m = Map::new();
        if let Some(r) = &self.request {
            m.insert("request".into(), r.eve());
        }
        if let Some(r) = &self.response {
            m.insert("response".into(), r.eve());
        }
        Value::Object(m)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[derive(Debug)]
pub struct EnipParser {
    txs: TxQueue<EnipTx>,
    transport: Transport,
    frames: crate::frames::FrameLog,
}

impl EnipParser {
    /// The transaction message `m` went to.
    fn message(&mut self, dir: Direction, m: Message) -> u64 {
        if dir == Direction::ToServer {
            let at = self.txs.push_with(|id| EnipTx { id, request: Some(m), response: None, ended: false });
            return self.txs[at].id;
        }
        match self.txs.iter_mut().find(|t| t.response.is_none() && t.request.as_ref().is_some_and(|r| r.command == m.command)) {
            Some(t) => {
                t.response = Some(m);
                t.id
            }
            None => {
                let at = self.txs.push_with(|id| EnipTx { id, request: None, response: Some(m), ended: false });
                self.txs[at].id
            }
        }
    }

    /// The frames of message `msg` at `at` of the data offered: the whole
    /// message, its encapsulation header and data, each item of its common
    /// packet format, and the CIP message a data item carries.
    fn mark_frames(&mut self, dir: Direction, at: usize, msg: &[u8], tx: u64) {
        if !self.frames.is_on() {
            return;
        }
        let (f, tx, len) = (&mut self.frames, Some(tx), |n: usize| Some(n as u64));
        f.add(dir, at, len(msg.len()), Frame::Pdu as u8, tx);
        f.add(dir, at, len(HEADER), Frame::Hdr as u8, tx);
        f.add(dir, at + HEADER, len(msg.len() - HEADER), Frame::Data as u8, tx);
        let items_at = match le16(msg, 0).unwrap_or(0) {
            // After the interface handle and timeout.
            0x6f | 0x70 => HEADER + 6,
            0x04 | 0x63 | 0x64 => HEADER,
            _ => return,
        };
        let Some(b) = msg.get(items_at..) else { return };
        let mut off = 2;
        for _ in 0..le16(b, 0).unwrap_or(0).min(16) {
            let (Some(t), Some(n)) = (le16(b, off), le16(b, off + 2)) else { break };
            let n = usize::from(n);
            if b.len() < off + 4 + n {
                break;
            }
            let start = at + items_at + off;
            f.add(dir, start, len(4 + n), Frame::Item as u8, tx);
            // Connected data starts with its sequence count.
            let cip = match t {
                0xb2 => Some(start + 4),
                0xb1 if n >= 2 => Some(start + 6),
                _ => None,
            };
            if let Some(c) = cip {
                let body = &msg[c - at..start - at + 4 + n];
                f.add(dir, c, len(body.len()), Frame::Cip as u8, tx);
                // A Multiple Service Packet's services are CIP messages of their own.
                for (s, l) in cip::packed_services(body) {
                    f.add(dir, c + s, len(l), Frame::Cip as u8, tx);
                }
            }
            off += 4 + n;
        }
    }
}

/// ENIP's frame types, by their place in [`PROTO`]'s.
#[derive(Clone, Copy)]
enum Frame {
    Hdr,
    Data,
    Pdu,
    Cip,
    Item,
}

impl ProtoParser for EnipParser {
    fn parse(&mut self, dir: Direction, data: &[u8]) -> ParseResult {
        let mut at = 0;
        while at < data.len() {
            let rest = &data[at..];
            if rest.len() < HEADER {
                if self.transport == Transport::Udp {
                    return ParseResult::Error;
                }
                return ParseResult::Incomplete { consumed: at, needed: HEADER - rest.len() };
            }
            let total = HEADER + usize::from(u16::from_le_bytes([rest[2], rest[3]]));
            if rest.len() < total {
                if self.transport == Transport::Udp {
                    return ParseResult::Error;
                }
                return ParseResult::Incomplete { consumed: at, needed: total - rest.len() };
            }
            let m = decode(&rest[..total], dir);
            let tx = self.message(dir, m);
            self.mark_frames(dir, at, &rest[..total], tx);
            at += total;
        }
        ParseResult::Done
    }

    fn on_gap(&mut self, _dir: Direction, _len: u64) -> bool {
        false
    }

    fn close(&mut self, _dir: Direction, _held: &[u8]) {
        for t in self.txs.iter_mut() {
            t.ended = true;
        }
    }

    crate::proto::delegate_txs!(txs);

    fn prune(&mut self, id: u64) {
        self.txs.prune_while(id, |_| true);
    }

    fn drain_events(&mut self, _out: &mut Vec<AppEvent>) {}

    fn take_frames(&mut self, out: &mut Vec<crate::frames::Mark>) -> u8 {
        self.frames.drain(out);
        self.frames.tx_base()
    }
}

pub const SETTINGS: &[SettingDef] = &[SettingDef { key: "max-tx", default: 1024, size: false }];

fn new_parser(init: &ParserInit) -> Box<dyn ProtoParser> {
    let max_tx = init.setting(&PROTO, 0).clamp(1, 1 << 16) as usize;
    Box::new(EnipParser {
        txs: TxQueue::new(init.first_tx_id, max_tx),
        transport: init.transport,
        frames: crate::frames::FrameLog::counted_from_one(init.app.frames),
    })
}

/// An encapsulation header of a known command and a length that fits.
fn probe(_dir: Direction, data: &[u8], _cx: ProbeCx) -> Probe {
    if data.len() < HEADER {
        return Probe::NeedMore;
    }
    let command = u16::from_le_bytes([data[0], data[1]]);
    let total = HEADER + usize::from(u16::from_le_bytes([data[2], data[3]]));
    if COMMANDS.iter().any(|(_, c)| *c == command) && total <= MAX_MESSAGE {
        Probe::Match
    } else {
        Probe::NoMatch
    }
}

fn header(command: u16, data: &[u8]) -> Vec<u8> {
    let mut h = command.to_le_bytes().to_vec();
    h.extend_from_slice(&(data.len() as u16).to_le_bytes());
    h.resize(HEADER, 0);
    h.extend_from_slice(data);
    h
}

fn sample() -> Vec<(Direction, Vec<u8>)> {
    let mut identity = b"\x01\x00\x0c\x00".to_vec();
    let mut item = b"\x01\x00\x00\x02\xaf\x12\xc0\xa8\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00".to_vec();
    item.extend_from_slice(b"\x01\x00\x0c\x00\x3a\x00\x04\x03\x30\x00\x8e\x4d\x52\x00\x0b1756-ENBT/A\x03");
    identity.extend_from_slice(&(item.len() as u16).to_le_bytes());
    identity.extend_from_slice(&item);
    // SendRRData: a Get Attribute Single of the identity object's attribute 5.
    let rr = |cip: &[u8]| {
        let mut d = vec![0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0xb2, 0];
        d.extend_from_slice(&(cip.len() as u16).to_le_bytes());
        d.extend_from_slice(cip);
        d
    };
    vec![
        (Direction::ToServer, header(0x63, &[])),
        (Direction::ToClient, header(0x63, &identity)),
        (Direction::ToServer, header(0x6f, &rr(b"\x0e\x03\x20\x01\x24\x01\x30\x05"))),
        (Direction::ToClient, header(0x6f, &rr(b"\x8e\x00\x00\x00\x03\x00"))),
    ]
}

pub static PROTO: ProtoDef = ProtoDef {
    name: "enip",
    eve_name: None,
    detection: Detection { tcp: true, udp: true, ports: &[44818], ports_only: true, probe, counters_by_transport: true, answers_first: None },
    new_parser,
    buffers: &[
        BufferDef {
            name: "enip.product_name",
            id: 0,
            sides: Sides::ToClient,
            default: Direction::ToClient,
            both_ways: false,
            need: Progress::Complete,
            multi: false,
        },
        BufferDef {
            name: "enip.service_name",
            id: 1,
            sides: Sides::ToClient,
            default: Direction::ToClient,
            both_ways: false,
            need: Progress::Complete,
            multi: true,
        },
    ],
    checks: checks::CHECKS,
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
    off_by_default: true,
    stream_depth: None,
    frames: &["hdr", "data", "pdu", "cip", "enip.item"],
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_identity_names_the_device() {
        let mut p = EnipParser { txs: TxQueue::new(0, 8), transport: Transport::Tcp, frames: Default::default() };
        for (dir, data) in sample() {
            assert_eq!(p.parse(dir, &data), ParseResult::Done);
        }
        let rec = p.txs[0].eve();
        let id = &rec["response"]["identity"];
        assert_eq!((id["revision"].as_str(), id["product_name"].as_str()), (Some("4.3"), Some("1756-ENBT/A")));
        assert_eq!(id["vendor_id"], "Rockwell Automation/Allen-Bradley");
        assert_eq!(id["device_type"], "Communications Adapter");
        assert_eq!(id["serial"], 5_393_806);
        let rr = p.txs[1].eve();
        assert_eq!(rr["request"]["cip"]["service"], "Get Attribute Single");
        assert_eq!(rr["request"]["cip"]["path"][2], serde_json::json!({"segment_type": "attribute", "value": 5}));
        assert_eq!(rr["response"]["cip"]["status"], "Success");
    }
}
