//! NTP (RFC 5905) over UDP port 123: each packet a transaction of the side
//! that sent it, logged as EVE `ntp` (version, mode, stratum, reference id)
//! where the output lists it, as Suricata 8.0.5 and later do; `ntp.version`,
//! `ntp.mode` (a number or its name), `ntp.stratum` and the
//! `ntp.reference_id` buffer, on whichever side a packet went.
//!
//! ```
//! use vigil_applayer::protocols::ntp::PROTO;
//! use vigil_applayer::proto::{ParserInit, ProbeCx, Probe};
//! use vigil_applayer::{AppConfig, Transport};
//! use vigil_types::Direction::ToServer;
//!
//! let mut request = vec![0x23u8]; // version 4, client
//! request.resize(48, 0);
//! assert_eq!((PROTO.detection.probe)(ToServer, &request, ProbeCx::udp(40000, 123)), Probe::Match);
//! let app = AppConfig::default();
//! let init = ParserInit { app: &app, transport: Transport::Udp, first_tx_id: 0, options: 0, settings: &[], expected: None, client: None };
//! let mut p = (PROTO.new_parser)(&init);
//! p.parse(ToServer, &request);
//! assert_eq!(p.tx(0).unwrap().eve(), serde_json::json!({"version": 4, "mode": 3, "stratum": 0, "reference_id": "00:00:00:00"}));
//! ```

use std::any::Any;

use serde_json::{json, Value};
use vigil_rules::{IntCmp, Value as RuleValue};
use vigil_types::Direction;

use crate::parser::{AppEvent, ParseResult};
use crate::progress::Progress;
use crate::proto::{
    BufferDef, CheckDef, Detection, ParserInit, ProbeCx, Probe, ProtoDef, ProtoParser, ProtoTx, SettingDef, Sides,
    TxCheck, TxQueue,
};

/// The fixed header every NTP packet has.
const HEADER: usize = 48;

/// The names `ntp.mode` takes, by mode number.
const MODES: [&str; 8] =
    ["reserved", "symmetric_active", "symmetric_passive", "client", "server", "broadcast", "control", "private"];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NtpTx {
    id: u64,
    dir: Direction,
    pub version: u8,
    pub mode: u8,
    pub stratum: u8,
    pub reference_id: [u8; 4],
}

impl ProtoTx for NtpTx {
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

    fn buffer(&self, dir: Direction, id: u8, index: usize) -> Option<&[u8]> {
        (id == 0 && index == 0 && dir == self.dir).then_some(&self.reference_id[..])
    }

    fn eve(&self) -> Value {
        let reference = self.reference_id.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":");
        json!({"version": self.version, "mode": self.mode, "stratum": self.stratum, "reference_id": reference})
    }

    fn record_dir(&self) -> Direction {
        self.dir
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Version, mode, stratum and reference id of a packet of at least the header's size
/// and a version NTP has had (1 to 4).
fn header(data: &[u8]) -> Option<(u8, u8, u8, [u8; 4])> {
    if data.len() < HEADER {
        return None;
    }
    let version = (data[0] >> 3) & 7;
    if !(1..=4).contains(&version) {
        return None;
    }
    Some((version, data[0] & 7, data[1], [data[12], data[13], data[14], data[15]]))
}

#[derive(Debug)]
pub struct NtpParser {
    txs: TxQueue<NtpTx>,
}

impl ProtoParser for NtpParser {
    fn parse(&mut self, dir: Direction, data: &[u8]) -> ParseResult {
        let Some((version, mode, stratum, reference_id)) = header(data) else { return ParseResult::Error };
        self.txs.push_with(|id| NtpTx { id, dir, version, mode, stratum, reference_id });
        ParseResult::Done
    }

    crate::proto::datagram_txs!(txs);

    fn drain_events(&mut self, _out: &mut Vec<AppEvent>) {}
}

pub const SETTINGS: &[SettingDef] = &[SettingDef { key: "max-tx", default: 256, size: false }];

fn new_parser(init: &ParserInit) -> Box<dyn ProtoParser> {
    let max_tx = init.setting(&PROTO, 0).clamp(1, 1 << 16) as usize;
    Box::new(NtpParser { txs: TxQueue::new(init.first_tx_id, max_tx) })
}

/// A header of NTP version 3 or 4, the versions Suricata's probe takes (its
/// parser reads the older ones too, once the flow is NTP).
fn probe(_dir: Direction, data: &[u8], _cx: ProbeCx) -> Probe {
    if header(data).is_some_and(|(version, ..)| (3..=4).contains(&version)) {
        Probe::Match
    } else {
        Probe::NoMatch
    }
}

fn sample() -> Vec<(Direction, Vec<u8>)> {
    let mut request = vec![0x23u8];
    request.resize(HEADER, 0);
    let mut reply = vec![0x24u8, 2, 6, 0xe9];
    reply.resize(12, 0);
    reply.extend_from_slice(b"LOCL");
    reply.resize(HEADER, 0);
    vec![(Direction::ToServer, request), (Direction::ToClient, reply)]
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum NtpCheck {
    Version(IntCmp),
    Mode(IntCmp),
    Stratum(IntCmp),
}

impl TxCheck for NtpCheck {
    fn matches(&self, tx: &dyn ProtoTx, _dir: Direction, _now_secs: i64) -> bool {
        let Some(tx) = tx.as_any().downcast_ref::<NtpTx>() else { return false };
        match self {
            NtpCheck::Version(c) => c.matches(tx.version.into()),
            NtpCheck::Mode(c) => c.matches(tx.mode.into()),
            NtpCheck::Stratum(c) => c.matches(tx.stratum.into()),
        }
    }
}

fn u8_cmp(v: &RuleValue) -> Result<IntCmp, String> {
    match v {
        RuleValue::Int(c) if c.fits(u8::MAX.into()) => Ok(*c),
        _ => Err("expects an integer comparison of at most 255".into()),
    }
}

fn mode(v: &RuleValue) -> Result<Box<dyn TxCheck>, String> {
    let cmp = match v {
        RuleValue::Text(t) | RuleValue::Str(t) => {
            let (neg, name) = match t.trim().strip_prefix('!') {
                Some(n) => (true, n.trim()),
                None => (false, t.trim()),
            };
            let m = MODES.iter().position(|n| n.eq_ignore_ascii_case(name)).ok_or_else(|| format!("unknown mode '{name}'"))?;
            if neg {
                IntCmp::Ne(m as u64)
            } else {
                IntCmp::Eq(m as u64)
            }
        }
        other => u8_cmp(other)?,
    };
    Ok(Box::new(NtpCheck::Mode(cmp)))
}

const fn packet(name: &'static str, compile: fn(&RuleValue) -> Result<Box<dyn TxCheck>, String>) -> CheckDef {
    CheckDef { name, side: None, need: Progress::Complete, both_ways: true, compile }
}

pub static PROTO: ProtoDef = ProtoDef {
    name: "ntp",
    eve_name: None,
    detection: Detection { tcp: false, udp: true, ports: &[123], ports_only: true, probe, counters_by_transport: false, answers_first: None },
    new_parser,
    buffers: &[BufferDef {
        name: "ntp.reference_id",
        id: 0,
        sides: Sides::Both,
        default: Direction::ToServer,
        both_ways: true,
        need: Progress::Complete,
        multi: false,
    }],
    checks: &[
        packet("ntp.version", |v| Ok(Box::new(NtpCheck::Version(u8_cmp(v)?)))),
        packet("ntp.mode", mode),
        packet("ntp.stratum", |v| Ok(Box::new(NtpCheck::Stratum(u8_cmp(v)?)))),
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
    fn detection_takes_versions_3_and_4_only() {
        for (version, want) in [(1u8, Probe::NoMatch), (2, Probe::NoMatch), (3, Probe::Match), (4, Probe::Match)] {
            let mut p = vec![version << 3 | 3];
            p.resize(HEADER, 0);
            assert_eq!(probe(Direction::ToServer, &p, ProbeCx::udp(40000, 123)), want, "version {version}");
        }
    }

    #[test]
    fn a_packet_needs_the_whole_header_and_a_known_version() {
        let (_, reply) = sample().swap_remove(1);
        assert_eq!(header(&reply), Some((4, 4, 2, *b"LOCL")));
        assert_eq!(header(&reply[..47]), None);
        let mut v0 = reply.clone();
        v0[0] = 0x04;
        assert_eq!(header(&v0), None);
    }

    #[test]
    fn modes_go_by_name_or_number() {
        let tx = NtpTx { id: 0, dir: Direction::ToClient, version: 4, mode: 4, stratum: 2, reference_id: *b"LOCL" };
        let matches = |v: &str| mode(&RuleValue::Text(v.into())).unwrap().matches(&tx, Direction::ToClient, 0);
        assert!(matches("server") && !matches("client") && matches("!client"));
        assert!(mode(&RuleValue::Text("bogus".into())).is_err());
        assert_eq!(tx.eve()["reference_id"], "4c:4f:43:4c");
    }
}
