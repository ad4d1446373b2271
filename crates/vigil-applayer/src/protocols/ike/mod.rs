//! IKE, versions 1 (ISAKMP) and 2, over UDP ports 500 and 4500 (after
//! NAT-T's non-ESP marker): each message a transaction, logged as EVE `ike`
//! with the header, its payloads and what the exchange negotiated so far
//! (IKEv1: the initiator's proposals, both sides' key exchange and nonce,
//! vendor ids and the responder's chosen proposal; IKEv2: notifications).
//! The `ike.*` keywords (`ike.chosen_sa_attribute` on either version's
//! choice); Suricata's IKE events, weak IKEv2 algorithms among them.
//!
//! ```
//! use vigil_applayer::protocols::ike::PROTO;
//! use vigil_applayer::proto::{ParserInit, ProbeCx, Probe};
//! use vigil_applayer::{AppConfig, Transport};
//! use vigil_types::Direction::ToServer;
//!
//! // An IKEv2 IKE_SA_INIT request carrying a nonce only.
//! let mut msg = vec![0x11u8; 8];
//! msg.extend_from_slice(&[0; 8]);
//! msg.extend_from_slice(&[40, 0x20, 34, 0x08, 0, 0, 0, 0, 0, 0, 0, 36, 0, 0, 0, 8, 1, 2, 3, 4]);
//! assert_eq!((PROTO.detection.probe)(ToServer, &msg, ProbeCx::udp(500, 500)), Probe::Match);
//! let app = AppConfig::default();
//! let init = ParserInit { app: &app, transport: Transport::Udp, first_tx_id: 0, options: 0, settings: &[], expected: None, client: None };
//! let mut p = (PROTO.new_parser)(&init);
//! p.parse(ToServer, &msg);
//! let rec = p.tx(0).unwrap().eve();
//! assert_eq!((rec["version_major"].as_u64(), rec["exchange_type"].as_u64()), (Some(2), Some(34)));
//! assert_eq!(rec["init_spi"], "1111111111111111");
//! ```

mod checks;
pub mod message;
mod names;

use std::any::Any;

use serde_json::{Map, Value};
use vigil_types::Direction;

use crate::parser::{AppEvent, ParseResult};
use crate::progress::Progress;
use crate::proto::{BufferDef, Detection, ParserInit, ProbeCx, Probe, ProtoDef, ProtoParser, ProtoTx, RecordOptions, SettingDef, Sides, TxQueue};
use message::{Attribute, Message};

/// Suricata's IKE events.
pub const EVENTS: &[&str] = &[
    "malformed_data",
    "weak_crypto_enc",
    "weak_crypto_prf",
    "weak_crypto_dh",
    "weak_crypto_auth",
    "weak_crypto_no_dh",
    "weak_crypto_no_auth",
    "invalid_proposal",
    "unknown_proposal",
    "payload_extra_data",
    "multiple_server_proposal",
];

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// What one side sent in the exchange so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SideState {
    pub key_exchange: Option<Vec<u8>>,
    pub nonce: Option<Vec<u8>>,
}

/// What the exchange negotiated up to a message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Exchange {
    /// IKEv1: every transform the initiator proposed.
    pub client_proposals: Vec<Vec<Attribute>>,
    pub client: SideState,
    pub server: SideState,
    /// The responder's chosen proposal.
    pub chosen: Option<Vec<Attribute>>,
    pub vendor_ids: Vec<Vec<u8>>,
}

/// One message, and the exchange as it stood once it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IkeTx {
    id: u64,
    dir: Direction,
    pub msg: Message,
    pub exchange: Exchange,
    /// The SPIs as the buffers give them, in hex.
    spis: [String; 2],
    vendor_hex: Vec<String>,
    events: u64,
}

/// The IKEv1 attributes Suricata's records carry (the others serve
/// `ike.chosen_sa_attribute` only).
const LOGGED: [&str; 7] = ["alg_enc", "alg_hash", "alg_auth", "alg_dh", "sa_life_type", "sa_life_duration", "sa_key_length"];

fn attribute_object(attrs: &[Attribute], out: &mut Map<String, Value>) {
    for a in attrs {
        let Some(key) = names::v1_key(a.kind).filter(|k| LOGGED.contains(k)) else { continue };
        let value = names::v1_value(a.kind, a.value).to_string();
        // An attribute given twice keeps its first value, as Suricata 8 logs it.
        if out.contains_key(key) {
            continue;
        }
        out.insert(key.into(), value.into());
        out.insert(format!("{key}_raw"), a.value.into());
    }
}

impl IkeTx {
    fn record(&self, extended: bool) -> Value {
        let m = &self.msg;
        let mut o = Map::new();
        o.insert("version_major".into(), m.major.into());
        o.insert("version_minor".into(), m.minor.into());
        o.insert("init_spi".into(), self.spis[0].clone().into());
        o.insert("resp_spi".into(), self.spis[1].clone().into());
        o.insert("message_id".into(), m.message_id.into());
        o.insert("exchange_type".into(), m.exchange.into());
        if extended {
            o.insert("exchange_type_verbose".into(), names::exchange(m.major, m.exchange).into());
        }
        // IKEv1's chosen proposal is logged; IKEv2's serves the keywords only, as in Suricata 8.
        if let Some(chosen) = self.exchange.chosen.as_ref().filter(|_| m.major == 1) {
            attribute_object(chosen, &mut o);
        }
        if m.major == 2 {
            o.insert("role".into(), if m.flags & 0x08 != 0 { "initiator" } else { "responder" }.into());
        }
        // Each payload type once (Suricata keeps a set of them).
        let mut types: Vec<u8> = Vec::new();
        for &p in &m.payloads {
            if !types.contains(&p) {
                types.push(p);
            }
        }
        o.insert("payload".into(), types.iter().map(|&p| Value::from(names::payload(p))).collect());
        if m.major == 1 {
            let side = |s: &SideState, proposals: Option<&[Vec<Attribute>]>| {
                let mut c = Map::new();
                if let Some(k) = &s.key_exchange {
                    c.insert("key_exchange_payload".into(), hex(k).into());
                    c.insert("key_exchange_payload_length".into(), k.len().into());
                }
                if let Some(n) = &s.nonce {
                    c.insert("nonce_payload".into(), hex(n).into());
                    c.insert("nonce_payload_length".into(), n.len().into());
                }
                if let Some(p) = proposals.filter(|p| !p.is_empty()) {
                    let list = p
                        .iter()
                        .map(|attrs| {
                            let mut a = Map::new();
                            attribute_object(attrs, &mut a);
                            Value::Object(a)
                        })
                        .collect();
                    c.insert("proposals".into(), Value::Array(list));
                }
                Value::Object(c)
            };
            let mut v1 = Map::new();
            if let Some(doi) = m.doi {
                v1.insert("doi".into(), doi.into());
            }
            v1.insert("encrypted_payloads".into(), m.encrypted.into());
            v1.insert("client".into(), side(&self.exchange.client, Some(&self.exchange.client_proposals)));
            v1.insert("server".into(), side(&self.exchange.server, None));
            if !self.vendor_hex.is_empty() {
                v1.insert("vendor_ids".into(), self.vendor_hex.iter().map(|v| Value::from(v.as_str())).collect());
            }
            o.insert("ikev1".into(), Value::Object(v1));
        } else {
            let mut v2 = Map::new();
            let errors = m.notify.iter().filter(|&&n| n < 16384).count();
            v2.insert("errors".into(), errors.into());
            v2.insert("notify".into(), m.notify.iter().map(|&n| Value::from(names::notify(n))).collect());
            o.insert("ikev2".into(), Value::Object(v2));
        }
        Value::Object(o)
    }
}

impl ProtoTx for IkeTx {
    fn id(&self) -> u64 {
        self.id
    }

    /// Whole once read, both ways: events are seen by a rule of either side
    /// (buffers and values only on the message's own side).
    fn progress(&self, _dir: Direction) -> Progress {
        Progress::Complete
    }

    fn buffer(&self, dir: Direction, id: u8, index: usize) -> Option<&[u8]> {
        if dir != self.dir {
            return None;
        }
        if index > 0 && id != 2 {
            return None;
        }
        match id {
            0 => Some(self.spis[0].as_bytes()),
            1 => Some(self.spis[1].as_bytes()),
            2 => self.vendor_hex.get(index).map(|v| v.as_bytes()),
            3 => self.msg.key_exchange.as_deref(),
            4 => self.msg.nonce.as_deref(),
            _ => None,
        }
    }

    fn eve(&self) -> Value {
        self.record(false)
    }

    fn eve_with(&self, opts: &RecordOptions) -> Value {
        self.record(opts.extended)
    }

    fn events(&self) -> u64 {
        self.events
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[derive(Debug)]
pub struct IkeParser {
    txs: TxQueue<IkeTx>,
    exchange: Exchange,
    events: Vec<AppEvent>,
}

impl IkeParser {
    fn raise(&mut self, name: &'static str) {
        let bit = EVENTS.iter().position(|e| Some(*e) == name.strip_prefix("ike.")).map_or(0, |i| 1 << i);
        let tx_id = self.txs.back_mut().map(|t| {
            t.events |= bit;
            t.id
        });
        self.events.push(AppEvent { name, tx_id });
    }
}

fn event_name(e: &str) -> &'static str {
    match e {
        "weak_crypto_enc" => "ike.weak_crypto_enc",
        "weak_crypto_prf" => "ike.weak_crypto_prf",
        "weak_crypto_dh" => "ike.weak_crypto_dh",
        "weak_crypto_auth" => "ike.weak_crypto_auth",
        "weak_crypto_no_dh" => "ike.weak_crypto_no_dh",
        "weak_crypto_no_auth" => "ike.weak_crypto_no_auth",
        _ => "ike.malformed_data",
    }
}

impl ProtoParser for IkeParser {
    fn parse(&mut self, dir: Direction, data: &[u8]) -> ParseResult {
        // NAT-T (port 4500) puts a four-byte zero marker before IKE; anything else there is ESP.
        let data = match data {
            [0, 0, 0, 0, rest @ ..] => rest,
            _ => data,
        };
        let Some(m) = message::parse(data) else { return ParseResult::Error };
        let e = &mut self.exchange;
        let side = if dir == Direction::ToServer { &mut e.client } else { &mut e.server };
        if m.key_exchange.is_some() {
            side.key_exchange = m.key_exchange.clone();
        }
        if m.nonce.is_some() {
            side.nonce = m.nonce.clone();
        }
        let mut several = false;
        if !m.proposals.is_empty() {
            if dir == Direction::ToServer {
                if m.major == 1 && e.client_proposals.is_empty() {
                    e.client_proposals = m.proposals.clone();
                }
            } else {
                several = m.proposals.len() > 1;
                e.chosen = m.proposals.first().cloned();
            }
        }
        for v in &m.vendor_ids {
            if e.vendor_ids.len() < 64 && !e.vendor_ids.contains(v) {
                e.vendor_ids.push(v.clone());
            }
        }
        let weak: Vec<&'static str> = if dir == Direction::ToClient && m.major == 2 {
            let chosen = e.chosen.as_deref().unwrap_or_default();
            let mut w: Vec<&'static str> = chosen.iter().filter_map(|a| names::v2_weak(a.kind, a.value)).collect();
            if !chosen.is_empty() && !chosen.iter().any(|a| a.kind == 4) {
                w.push("weak_crypto_no_dh");
            }
            w
        } else {
            Vec::new()
        };
        let malformed = m.malformed;
        let spis = [hex(&m.init_spi), hex(&m.resp_spi)];
        let vendor_hex = e.vendor_ids.iter().map(|v| hex(v)).collect();
        let exchange = e.clone();
        self.txs.push_with(|id| IkeTx { id, dir, msg: m, exchange, spis, vendor_hex, events: 0 });
        if malformed {
            self.raise("ike.malformed_data");
        }
        if several {
            self.raise("ike.multiple_server_proposal");
        }
        for w in weak {
            self.raise(event_name(w));
        }
        ParseResult::Done
    }

    crate::proto::datagram_txs!(txs);

    fn drain_events(&mut self, out: &mut Vec<AppEvent>) {
        out.append(&mut self.events);
    }
}

pub const SETTINGS: &[SettingDef] = &[SettingDef { key: "max-tx", default: 256, size: false }];

fn new_parser(init: &ParserInit) -> Box<dyn ProtoParser> {
    let max_tx = init.setting(&PROTO, 0).clamp(1, 1 << 16) as usize;
    Box::new(IkeParser { txs: TxQueue::new(init.first_tx_id, max_tx), exchange: Exchange::default(), events: Vec::new() })
}

/// An ISAKMP header of version 1 or 2, with a length that covers it.
fn probe(_dir: Direction, data: &[u8], _cx: ProbeCx) -> Probe {
    let data = match data {
        [0, 0, 0, 0, rest @ ..] => rest,
        _ => data,
    };
    if message::parse(data).is_some() {
        Probe::Match
    } else {
        Probe::NoMatch
    }
}

fn sample() -> Vec<(Direction, Vec<u8>)> {
    let message = |flags: u8, resp: u8, body: &[u8]| {
        let mut m = vec![0x11u8; 8];
        m.extend_from_slice(&[resp; 8]);
        m.extend_from_slice(&[33, 0x20, 34, flags, 0, 0, 0, 0]);
        m.extend_from_slice(&((message::HEADER + body.len()) as u32).to_be_bytes());
        m.extend_from_slice(body);
        m
    };
    // SA with one proposal: AES-CBC-128, PRF SHA2-256, integrity SHA2-256, group 14; then a nonce.
    let sa = b"\x28\x00\x00\x30\x00\x00\x00\x2c\x01\x01\x00\x04\x03\x00\x00\x0c\x01\x00\x00\x0c\x80\x0e\x00\x80\x03\x00\x00\x08\x02\x00\x00\x05\x03\x00\x00\x08\x03\x00\x00\x0c\x00\x00\x00\x08\x04\x00\x00\x0e";
    let nonce = b"\x00\x00\x00\x0cnoncenon";
    let body = [&sa[..], &nonce[..]].concat();
    vec![(Direction::ToServer, message(0x08, 0, &body)), (Direction::ToClient, message(0x20, 0x22, &body))]
}

const fn buffer(name: &'static str, id: u8, multi: bool) -> BufferDef {
    BufferDef { name, id, sides: Sides::Both, default: Direction::ToServer, both_ways: true, need: Progress::Complete, multi }
}

pub static PROTO: ProtoDef = ProtoDef {
    name: "ike",
    eve_name: None,
    detection: Detection { tcp: false, udp: true, ports: &[500, 4500], ports_only: true, probe, counters_by_transport: false, answers_first: None },
    new_parser,
    buffers: &[
        buffer("ike.init_spi", 0, false),
        buffer("ike.resp_spi", 1, false),
        buffer("ike.vendor", 2, true),
        buffer("ike.key_exchange_payload", 3, false),
        buffer("ike.nonce_payload", 4, false),
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
    aliases: &["ikev2"],
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
    fn the_responders_choice_is_logged_and_judged() {
        let mut p = IkeParser { txs: TxQueue::new(0, 8), exchange: Exchange::default(), events: Vec::new() };
        for (dir, data) in sample() {
            assert_eq!(p.parse(dir, &data), ParseResult::Done);
        }
        let first = p.txs[0].eve();
        assert_eq!((first["role"].as_str(), first.get("alg_enc")), (Some("initiator"), None));
        assert_eq!(first["payload"], serde_json::json!(["SecurityAssociation", "Nonce"]));
        let reply = p.txs[1].eve();
        assert_eq!(reply["role"], "responder");
        assert_eq!(reply["ikev2"], serde_json::json!({"errors": 0, "notify": []}));
        // The choice serves the keywords.
        let chosen = p.txs[1].exchange.chosen.clone().unwrap();
        assert_eq!(chosen[0], Attribute { kind: 1, value: 12 });
        let check = (checks::CHECKS[3].compile)(&vigil_rules::Value::Text("alg_dh=14".into())).unwrap();
        assert!(check.matches(&p.txs[1], Direction::ToClient, 0));
        let mut out = Vec::new();
        p.drain_events(&mut out);
        assert!(out.is_empty(), "{out:?}");
    }
}
