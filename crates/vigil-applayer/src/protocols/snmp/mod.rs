//! SNMP v1, v2c and v3 (RFC 1157, 3416, 3412/3414) over UDP ports 161 and
//! 162: each message a transaction of the side that sent it, read with the
//! shared BER codec; EVE `snmp` (version, PDU type, error, trap, the
//! variables' OIDs, community or USM user name) as Suricata 8 writes it;
//! `snmp.version`, `snmp.pdu_type`, `snmp.trap_type` (a v1 trap's generic
//! type), `snmp.community`, `snmp.usm`. A v3 message whose PDU is
//! encrypted says so and nothing more.
//!
//! ```
//! use vigil_applayer::protocols::snmp::PROTO;
//! use vigil_applayer::proto::{ParserInit, ProbeCx, Probe};
//! use vigil_applayer::{AppConfig, Transport};
//! use vigil_types::Direction::ToServer;
//!
//! // v2c GetRequest for sysUpTime.0 with community "public".
//! let get = b"\x30\x26\x02\x01\x01\x04\x06public\xa0\x19\x02\x01\x01\x02\x01\x00\x02\x01\x00\x30\x0e\x30\x0c\x06\x08\x2b\x06\x01\x02\x01\x01\x03\x00\x05\x00";
//! assert_eq!((PROTO.detection.probe)(ToServer, get, ProbeCx::udp(40000, 161)), Probe::Match);
//! let app = AppConfig::default();
//! let init = ParserInit { app: &app, transport: Transport::Udp, first_tx_id: 0, options: 0, settings: &[], expected: None, client: None };
//! let mut p = (PROTO.new_parser)(&init);
//! p.parse(ToServer, get);
//! let rec = p.tx(0).unwrap().eve();
//! assert_eq!((rec["version"].as_u64(), rec["pdu_type"].as_str()), (Some(2), Some("get_request")));
//! assert_eq!(rec["vars"][0], "1.3.6.1.2.1.1.3.0");
//! ```

use std::any::Any;
use std::net::Ipv4Addr;

use serde_json::{Map, Value};
use vigil_rules::{IntCmp, Value as RuleValue};
use vigil_types::Direction;

use crate::codecs::ber::{self, BerError, Reader};
use crate::parser::{AppEvent, ParseResult};
use crate::progress::Progress;
use crate::proto::{
    BufferDef, CheckDef, Detection, ParserInit, ProbeCx, Probe, ProtoDef, ProtoParser, ProtoTx, SettingDef, Sides,
    TxCheck, TxQueue,
};

/// A v1 trap: its generic type, enterprise and agent address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trap {
    pub generic: u64,
    pub enterprise: String,
    pub agent: [u8; 4],
}

/// One message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnmpTx {
    id: u64,
    dir: Direction,
    /// 1, 2 (v2c) or 3.
    pub version: u32,
    /// The PDU's tag number; `None` when it is encrypted.
    pub pdu_type: Option<u32>,
    pub error: u64,
    pub trap: Option<Trap>,
    pub vars: Vec<String>,
    pub community: Option<Vec<u8>>,
    pub usm: Option<Vec<u8>>,
}

/// Suricata's names of the PDU types (`snmp.pdu_type` takes them too).
fn pdu_name(t: u32) -> String {
    match t {
        0 => "get_request".into(),
        1 => "get_next_request".into(),
        2 => "response".into(),
        3 => "set_request".into(),
        4 => "trap_v1".into(),
        5 => "get_bulk_request".into(),
        6 => "inform_request".into(),
        7 => "snmp_v2_trap".into(),
        8 => "report".into(),
        n => format!("unknown_{n}"),
    }
}

fn error_name(e: u64) -> String {
    const NAMES: [&str; 19] = [
        "NoError",
        "TooBig",
        "NoSuchName",
        "BadValue",
        "ReadOnly",
        "GenErr",
        "NoAccess",
        "WrongType",
        "WrongLength",
        "WrongEncoding",
        "WrongValue",
        "NoCreation",
        "InconsistentValue",
        "ResourceUnavailable",
        "CommitFailed",
        "UndoFailed",
        "AuthorizationError",
        "NotWritable",
        "InconsistentName",
    ];
    usize::try_from(e).ok().and_then(|i| NAMES.get(i)).map_or_else(|| format!("ErrorStatus({e})"), |n| (*n).to_string())
}

fn trap_name(t: u64) -> String {
    const NAMES: [&str; 7] =
        ["ColdStart", "WarmStart", "LinkDown", "LinkUp", "AuthenticationFailure", "EgpNeighborLoss", "EnterpriseSpecific"];
    usize::try_from(t).ok().and_then(|i| NAMES.get(i)).map_or_else(|| format!("TrapType({t})"), |n| (*n).to_string())
}

impl ProtoTx for SnmpTx {
    fn id(&self) -> u64 {
        self.id
    }

    fn progress(&self, dir: Direction) -> Progress {
        if dir == self.dir {
            Progress::Complete
        } else {
            Progress::None
        }
    }

    fn finished(&self) -> bool {
        true
    }

    fn buffer(&self, _dir: Direction, id: u8, index: usize) -> Option<&[u8]> {
        if index > 0 {
            return None;
        }
        match id {
            0 => self.community.as_deref(),
            1 => self.usm.as_deref(),
            _ => None,
        }
    }

    fn eve(&self) -> Value {
        let mut m = Map::new();
        m.insert("version".into(), self.version.into());
        match self.pdu_type {
            None => {
                m.insert("pdu_type".into(), "encrypted".into());
            }
            Some(t) => {
                m.insert("pdu_type".into(), pdu_name(t).into());
                if self.error != 0 {
                    m.insert("error".into(), error_name(self.error).into());
                }
                if let Some(trap) = &self.trap {
                    m.insert("trap_type".into(), trap_name(trap.generic).into());
                    m.insert("trap_oid".into(), trap.enterprise.clone().into());
                    m.insert("trap_address".into(), Ipv4Addr::from(trap.agent).to_string().into());
                }
                if !self.vars.is_empty() {
                    m.insert("vars".into(), self.vars.iter().map(|v| Value::from(v.as_str())).collect());
                }
            }
        }
        if let Some(c) = &self.community {
            m.insert("community".into(), crate::proto::escaped_text(c).into());
        }
        // Suricata leaves the user out of an encrypted message's record (its rules still see it).
        if let Some(u) = self.usm.as_ref().filter(|_| self.pdu_type.is_some()) {
            m.insert("usm".into(), crate::proto::escaped_text(u).into());
        }
        Value::Object(m)
    }

    fn record_dir(&self) -> Direction {
        self.dir
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A PDU (context-specific constructed tag 0 to 8): its type, error,
/// trap and variable names.
fn pdu(tx: &mut SnmpTx, mut r: Reader<'_>) -> Result<(), BerError> {
    let t = r.any()?;
    if t.tag & 0xe0 != 0xa0 {
        return Err(BerError);
    }
    let kind = u32::from(t.tag & 0x1f);
    tx.pdu_type = Some(kind);
    let mut p = Reader::new(t.value);
    if kind == 4 {
        let enterprise = ber::oid_string(p.expect(ber::OID)?)?;
        let agent = <[u8; 4]>::try_from(p.expect(0x40)?).map_err(|_| BerError)?;
        let generic = p.uint()?;
        let _specific = p.uint()?;
        let _time = p.expect(0x43)?;
        tx.trap = Some(Trap { generic, enterprise, agent });
    } else {
        let _request_id = p.expect(ber::INTEGER)?;
        tx.error = p.uint().unwrap_or(0);
        let _index = p.expect(ber::INTEGER)?;
    }
    let mut binds = Reader::new(p.expect(ber::SEQUENCE)?);
    while !binds.is_empty() {
        let mut bind = Reader::new(binds.expect(ber::SEQUENCE)?);
        tx.vars.push(ber::oid_string(bind.expect(ber::OID)?)?);
    }
    Ok(())
}

/// A whole message, or why it is not SNMP.
pub fn parse_message(data: &[u8], id: u64, dir: Direction) -> Result<SnmpTx, BerError> {
    let mut outer = Reader::new(data);
    let mut msg = Reader::new(outer.expect(ber::SEQUENCE)?);
    let raw_version = msg.uint()?;
    let mut tx = SnmpTx { id, dir, version: 0, pdu_type: None, error: 0, trap: None, vars: Vec::new(), community: None, usm: None };
    match raw_version {
        0 | 1 => {
            tx.version = raw_version as u32 + 1;
            tx.community = Some(msg.expect(ber::OCTET_STRING)?.to_vec());
            pdu(&mut tx, msg)?;
        }
        3 => {
            tx.version = 3;
            let mut global = Reader::new(msg.expect(ber::SEQUENCE)?);
            let _msg_id = global.uint()?;
            let _max_size = global.uint()?;
            let flags = global.expect(ber::OCTET_STRING)?.first().copied().ok_or(BerError)?;
            let model = global.uint()?;
            let security = msg.expect(ber::OCTET_STRING)?;
            // The user-based security model (3) names the user.
            let user = if model == 3 {
                let mut usm = Reader::new(Reader::new(security).expect(ber::SEQUENCE)?);
                let _engine = usm.expect(ber::OCTET_STRING)?;
                let _boots = usm.uint()?;
                let _time = usm.uint()?;
                Some(usm.expect(ber::OCTET_STRING)?.to_vec())
            } else {
                None
            };
            tx.usm = user;
            if flags & 0x02 != 0 {
                // Private: the scoped PDU is an encrypted OCTET STRING.
                msg.expect(ber::OCTET_STRING)?;
                return Ok(tx);
            }
            let mut scoped = Reader::new(msg.expect(ber::SEQUENCE)?);
            let _engine = scoped.expect(ber::OCTET_STRING)?;
            let _context = scoped.expect(ber::OCTET_STRING)?;
            pdu(&mut tx, scoped)?;
        }
        _ => return Err(BerError),
    }
    Ok(tx)
}

#[derive(Debug)]
pub struct SnmpParser {
    txs: TxQueue<SnmpTx>,
}

impl ProtoParser for SnmpParser {
    fn parse(&mut self, dir: Direction, data: &[u8]) -> ParseResult {
        match parse_message(data, self.txs.next_id(), dir) {
            Ok(tx) => {
                self.txs.push_with(|_| tx);
                ParseResult::Done
            }
            Err(BerError) => ParseResult::Error,
        }
    }

    crate::proto::datagram_txs!(txs);

    fn drain_events(&mut self, _out: &mut Vec<AppEvent>) {}
}

pub const SETTINGS: &[SettingDef] = &[SettingDef { key: "max-tx", default: 256, size: false }];

fn new_parser(init: &ParserInit) -> Box<dyn ProtoParser> {
    let max_tx = init.setting(&PROTO, 0).clamp(1, 1 << 16) as usize;
    Box::new(SnmpParser { txs: TxQueue::new(init.first_tx_id, max_tx) })
}

/// A whole message of a known version.
fn probe(dir: Direction, data: &[u8], _cx: ProbeCx) -> Probe {
    if parse_message(data, 0, dir).is_ok() {
        Probe::Match
    } else {
        Probe::NoMatch
    }
}

fn sample() -> Vec<(Direction, Vec<u8>)> {
    vec![
        (
            Direction::ToServer,
            b"\x30\x26\x02\x01\x01\x04\x06public\xa0\x19\x02\x01\x01\x02\x01\x00\x02\x01\x00\x30\x0e\x30\x0c\x06\x08\x2b\x06\x01\x02\x01\x01\x03\x00\x05\x00"
                .to_vec(),
        ),
        (
            Direction::ToClient,
            b"\x30\x29\x02\x01\x01\x04\x06public\xa2\x1c\x02\x01\x01\x02\x01\x00\x02\x01\x00\x30\x11\x30\x0f\x06\x08\x2b\x06\x01\x02\x01\x01\x03\x00\x43\x03\x01\x02\x03"
                .to_vec(),
        ),
    ]
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum SnmpCheck {
    Version(IntCmp),
    PduType(IntCmp),
    TrapType(IntCmp),
}

impl TxCheck for SnmpCheck {
    fn matches(&self, tx: &dyn ProtoTx, _dir: Direction, _now_secs: i64) -> bool {
        let Some(tx) = tx.as_any().downcast_ref::<SnmpTx>() else { return false };
        match self {
            SnmpCheck::Version(c) => c.matches(tx.version.into()),
            SnmpCheck::PduType(c) => tx.pdu_type.is_some_and(|t| c.matches(t.into())),
            SnmpCheck::TrapType(c) => tx.trap.as_ref().is_some_and(|t| c.matches(t.generic)),
        }
    }
}

fn pdu_type_check(v: &RuleValue) -> Result<Box<dyn TxCheck>, String> {
    let cmp = match v {
        RuleValue::Int(c) if c.fits(u32::MAX.into()) => *c,
        RuleValue::Text(t) | RuleValue::Str(t) => {
            let name = t.trim();
            let code = (0..=8).find(|&c| pdu_name(c) == name).ok_or_else(|| format!("unknown PDU type '{name}'"))?;
            IntCmp::Eq(code.into())
        }
        _ => return Err("expects a PDU type number or name".into()),
    };
    Ok(Box::new(SnmpCheck::PduType(cmp)))
}

const fn message(name: &'static str, compile: fn(&RuleValue) -> Result<Box<dyn TxCheck>, String>) -> CheckDef {
    CheckDef { name, side: None, need: Progress::Complete, both_ways: true, compile }
}

const fn buffer(name: &'static str, id: u8) -> BufferDef {
    BufferDef { name, id, sides: Sides::Both, default: Direction::ToServer, both_ways: true, need: Progress::Complete, multi: false }
}

pub static PROTO: ProtoDef = ProtoDef {
    name: "snmp",
    eve_name: None,
    detection: Detection { tcp: false, udp: true, ports: &[161, 162], ports_only: true, probe, counters_by_transport: false, answers_first: None },
    new_parser,
    buffers: &[buffer("snmp.community", 0), buffer("snmp.usm", 1)],
    checks: &[
        message("snmp.version", |v| match v {
            RuleValue::Int(c) if c.fits(u32::MAX.into()) => Ok(Box::new(SnmpCheck::Version(*c))),
            _ => Err("expects an integer comparison".into()),
        }),
        message("snmp.pdu_type", pdu_type_check),
        message("snmp.trap_type", |v| {
            let cmp = match v {
                RuleValue::Int(c) => *c,
                RuleValue::Text(t) | RuleValue::Str(t) => IntCmp::parse(t.trim(), u32::MAX.into()).map_err(|e| format!("{e:?}"))?,
                _ => return Err("expects an integer comparison".into()),
            };
            Ok(Box::new(SnmpCheck::TrapType(cmp)))
        }),
    ],
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

    #[test]
    fn a_v1_trap_names_its_type_enterprise_and_agent() {
        // Community "public", trap: enterprise 1.3.6.1.4.1.1, agent 10.0.0.1, linkDown, no variables.
        let trap = b"\x30\x27\x02\x01\x00\x04\x06public\xa4\x1a\x06\x07\x2b\x06\x01\x04\x01\x01\x00\x40\x04\x0a\x00\x00\x01\x02\x01\x02\x02\x01\x00\x43\x01\x05\x30\x00";
        let tx = parse_message(&trap[..], 0, Direction::ToServer).unwrap();
        let e = tx.eve();
        assert_eq!(e["version"], 1);
        assert_eq!(e["pdu_type"], "trap_v1");
        assert_eq!((e["trap_type"].as_str(), e["trap_address"].as_str()), (Some("LinkDown"), Some("10.0.0.1")));
        assert!(e.get("vars").is_none());
        let check = (PROTO.checks[2].compile)(&RuleValue::Text("2".into())).unwrap();
        assert!(check.matches(&tx, Direction::ToServer, 0));
        let check = (PROTO.checks[2].compile)(&RuleValue::Text(">2".into())).unwrap();
        assert!(!check.matches(&tx, Direction::ToServer, 0));
    }

    #[test]
    fn an_encrypted_v3_message_says_so() {
        // v3: global data (id 1, max 65507, flags auth+priv, USM), USM user "admin", encrypted PDU.
        let mut sec = b"\x30\x13\x04\x00\x02\x01\x00\x02\x01\x00\x04\x05admin\x04\x00\x04\x00".to_vec();
        let mut msg = b"\x02\x01\x03\x30\x0e\x02\x01\x01\x02\x03\x00\xff\xe3\x04\x01\x03\x02\x01\x03".to_vec();
        msg.push(0x04);
        msg.push(sec.len() as u8);
        msg.append(&mut sec);
        msg.extend_from_slice(b"\x04\x03\xde\xad\x00");
        let mut data = vec![0x30, msg.len() as u8];
        data.extend_from_slice(&msg);
        let tx = parse_message(&data, 0, Direction::ToServer).unwrap();
        assert_eq!(tx.eve(), serde_json::json!({"version": 3, "pdu_type": "encrypted"}));
    }

    #[test]
    fn damaged_messages_are_refused() {
        let (_, good) = sample().swap_remove(0);
        for cut in 0..good.len() {
            assert!(parse_message(&good[..cut], 0, Direction::ToServer).is_err(), "{cut}");
        }
        assert!(pdu_type_check(&RuleValue::Text("get_next_request".into())).is_ok());
        assert!(pdu_type_check(&RuleValue::Text("bogus".into())).is_err());
    }
}
