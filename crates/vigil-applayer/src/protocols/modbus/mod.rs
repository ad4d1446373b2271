//! Modbus over TCP port 502, off unless `app-layer.protocols.modbus.enabled`
//! says yes, as in Suricata. Each request is a transaction with the
//! response carrying its transaction id; EVE `modbus` records (each side's
//! function, access, category and fields) and the `modbus` keyword
//! (`function`, `subfunction`, `access`, `address`, `value`, `unit`);
//! Suricata's events, `flooded` past `request-flood` (500) requests
//! without a response.
//!
//! ```
//! use vigil_applayer::protocols::modbus::PROTO;
//! use vigil_applayer::proto::{ParserInit, ProbeCx, Probe};
//! use vigil_applayer::{AppConfig, Transport};
//! use vigil_types::Direction::{ToClient, ToServer};
//!
//! let read = b"\x00\x01\x00\x00\x00\x06\x0a\x01\x00\x00\x00\x01";
//! assert_eq!((PROTO.detection.probe)(ToServer, read, ProbeCx::tcp(40000, 502)), Probe::Match);
//! let app = AppConfig::default();
//! let init = ParserInit { app: &app, transport: Transport::Tcp, first_tx_id: 0, options: 0, settings: &[], expected: None, client: None };
//! let mut p = (PROTO.new_parser)(&init);
//! p.parse(ToServer, read);
//! p.parse(ToClient, b"\x00\x01\x00\x00\x00\x04\x0a\x01\x01\x00");
//! let rec = p.tx(0).unwrap().eve();
//! assert_eq!((rec["id"].as_u64(), rec["request"]["function_code"].as_str()), (Some(1), Some("RdCoils")));
//! assert_eq!(rec["response"]["read"]["data"], "\u{0}");
//! ```

mod check;
pub mod pdu;

use std::any::Any;

use serde_json::{Map, Value};
use vigil_types::Direction;

use crate::parser::{AppEvent, ParseResult};
use crate::progress::Progress;
use crate::proto::{Detection, ParserInit, ProbeCx, Probe, ProtoDef, ProtoParser, ProtoTx, SettingDef, TxQueue};
use pdu::Adu;

/// Suricata's Modbus events.
pub const EVENTS: &[&str] = &[
    "invalid_protocol_id",
    "unsolicited_response",
    "invalid_length",
    "invalid_unit_identifier",
    "invalid_function_code",
    "invalid_value",
    "invalid_exception_code",
    "value_mismatch",
    "flooded",
];

/// A request and the response to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModbusTx {
    id: u64,
    pub request: Option<Adu>,
    pub response: Option<Adu>,
    events: u64,
    /// The session ended: no response will come.
    ended: bool,
}

impl ProtoTx for ModbusTx {
    fn id(&self) -> u64 {
        self.id
    }

    fn progress(&self, dir: Direction) -> Progress {
        let done = match dir {
            Direction::ToServer => self.request.is_some(),
            Direction::ToClient => self.response.is_some() || self.ended,
        };
        if done {
            Progress::Complete
        } else {
            Progress::None
        }
    }

    fn buffer(&self, _dir: Direction, _id: u8, _index: usize) -> Option<&[u8]> {
        None
    }

    fn eve(&self) -> Value {
        let mut m = Map::new();
        // Suricata counts its transactions from 1.
        m.insert("id".into(), (self.id + 1).into());
        if let Some(r) = &self.request {
            m.insert("request".into(), r.eve(true));
        }
        if let Some(r) = &self.response {
            m.insert("response".into(), r.eve(false));
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

#[derive(Debug)]
pub struct ModbusParser {
    txs: TxQueue<ModbusTx>,
    flood: u64,
    events: Vec<AppEvent>,
}

impl ModbusParser {
    pub fn new(first_tx_id: u64, max_tx: usize, flood: u64) -> Self {
        ModbusParser { txs: TxQueue::new(first_tx_id, max_tx), flood, events: Vec::new() }
    }

    fn raise(&mut self, at: usize, name: &'static str) {
        let bit = EVENTS.iter().position(|e| Some(*e) == name.strip_prefix("modbus.")).map_or(0, |i| 1 << i);
        if let Some(t) = self.txs.get_mut(at) {
            t.events |= bit;
            let tx_id = Some(t.id);
            self.events.push(AppEvent { name, tx_id });
        }
    }

    fn adu(&mut self, dir: Direction, a: Adu) {
        let bad_protocol = a.protocol != 0;
        let at = if dir == Direction::ToServer {
            let at = self.txs.push_with(|id| ModbusTx { id, request: Some(a), response: None, events: 0, ended: false });
            let open = self.txs.iter().filter(|t| t.response.is_none()).count() as u64;
            if open == self.flood + 1 {
                self.raise(at, "modbus.flooded");
            }
            at
        } else {
            let waiting = self.txs.iter().position(|t| {
                t.response.is_none() && t.request.as_ref().is_some_and(|r| r.transaction == a.transaction && r.unit == a.unit)
            });
            match waiting {
                Some(at) => {
                    let tx = &mut self.txs[at];
                    let mismatch = tx.request.as_ref().is_some_and(|r| r.function != a.function & 0x7f);
                    tx.response = Some(a);
                    if mismatch {
                        self.raise(at, "modbus.invalid_function_code");
                    }
                    at
                }
                None => {
                    let at = self.txs.push_with(|id| ModbusTx { id, request: None, response: Some(a), events: 0, ended: false });
                    self.raise(at, "modbus.unsolicited_response");
                    at
                }
            }
        };
        if bad_protocol {
            self.raise(at, "modbus.invalid_protocol_id");
        }
    }
}

impl ProtoParser for ModbusParser {
    fn parse(&mut self, dir: Direction, data: &[u8]) -> ParseResult {
        let mut at = 0;
        while at < data.len() {
            match pdu::adu(&data[at..]) {
                Ok(Some((a, n))) => {
                    self.adu(dir, a);
                    at += n;
                }
                Ok(None) => {
                    let last = self.txs.len().saturating_sub(1);
                    self.raise(last, "modbus.invalid_length");
                    return ParseResult::Error;
                }
                Err(needed) => return ParseResult::Incomplete { consumed: at, needed },
            }
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

    fn drain_events(&mut self, out: &mut Vec<AppEvent>) {
        out.append(&mut self.events);
    }
}

pub const SETTINGS: &[SettingDef] =
    &[SettingDef { key: "max-tx", default: 1024, size: false }, SettingDef { key: "request-flood", default: 500, size: false }];

fn new_parser(init: &ParserInit) -> Box<dyn ProtoParser> {
    let max_tx = init.setting(&PROTO, 0).clamp(1, 1 << 16) as usize;
    Box::new(ModbusParser::new(init.first_tx_id, max_tx, init.setting(&PROTO, 1)))
}

/// An MBAP header: protocol 0 and a length Modbus allows; to the server,
/// a request (a client never sends an exception).
fn probe(dir: Direction, data: &[u8], _cx: ProbeCx) -> Probe {
    if data.len() < 8 {
        return Probe::NeedMore;
    }
    let len = u16::from_be_bytes([data[4], data[5]]);
    let request_ok = dir == Direction::ToClient || data[7] & 0x80 == 0;
    if data[2..4] == [0, 0] && (2..=254).contains(&len) && request_ok {
        Probe::Match
    } else {
        Probe::NoMatch
    }
}

fn sample() -> Vec<(Direction, Vec<u8>)> {
    use Direction::{ToClient, ToServer};
    vec![
        (ToServer, b"\x00\x01\x00\x00\x00\x06\x0a\x01\x00\x00\x00\x01".to_vec()),
        (ToClient, b"\x00\x01\x00\x00\x00\x04\x0a\x01\x01\x00".to_vec()),
        (ToServer, b"\x00\x02\x00\x00\x00\x06\x0a\x06\x00\x05\x00\x0b".to_vec()),
        (ToClient, b"\x00\x02\x00\x00\x00\x06\x0a\x06\x00\x05\x00\x0b".to_vec()),
        (ToServer, b"\x00\x03\x00\x00\x00\x06\x0a\x08\x00\x04\x00\x00".to_vec()),
        (ToClient, b"\x00\x03\x00\x00\x00\x03\x0a\x88\x0b".to_vec()),
    ]
}

pub static PROTO: ProtoDef = ProtoDef {
    name: "modbus",
    eve_name: None,
    detection: Detection { tcp: true, udp: false, ports: &[502], ports_only: true, probe, counters_by_transport: false, answers_first: None },
    new_parser,
    buffers: &[],
    checks: check::CHECKS,
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
    use Direction::{ToClient, ToServer};

    #[test]
    fn responses_pair_by_transaction_id_and_strays_are_unsolicited() {
        let mut p = ModbusParser::new(0, 16, 500);
        for (dir, data) in sample() {
            assert_eq!(p.parse(dir, &data), ParseResult::Done);
        }
        p.parse(ToClient, b"\x00\x09\x00\x00\x00\x04\x0a\x01\x01\x00");
        assert_eq!(p.txs.len(), 4);
        assert_eq!(p.txs[1].eve()["response"]["write"], serde_json::json!({"address": 5, "data": 11}));
        assert_eq!(p.txs[2].eve()["request"]["diagnostic"]["code"], "ForceListenOnlyMode");
        let mut out = Vec::new();
        p.drain_events(&mut out);
        assert_eq!(out.iter().map(|e| e.name).collect::<Vec<_>>(), ["modbus.unsolicited_response"]);
    }

    #[test]
    fn too_many_open_requests_flood() {
        let mut p = ModbusParser::new(0, 64, 3);
        for _ in 0..5 {
            p.parse(ToServer, b"\x00\x01\x00\x00\x00\x06\x0a\x01\x00\x00\x00\x01");
        }
        let mut out = Vec::new();
        p.drain_events(&mut out);
        assert_eq!(out.iter().map(|e| e.name).collect::<Vec<_>>(), ["modbus.flooded"]);
    }
}
