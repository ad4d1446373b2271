//! The BitTorrent DHT (BEP 5) over UDP: each KRPC message (a bencoded
//! dictionary: query, response or error) a transaction of the side that
//! sent it, found by its opening bytes on any port, logged as EVE
//! `bittorrent_dht` with Suricata 8's fields (ids, hashes and tokens in
//! hex, compact node and peer lists as addresses and ports).
//!
//! ```
//! use vigil_applayer::protocols::bittorrent_dht::PROTO;
//! use vigil_applayer::proto::{ParserInit, ProbeCx, Probe};
//! use vigil_applayer::{AppConfig, Transport};
//! use vigil_types::Direction::ToServer;
//!
//! let ping = b"d1:ad2:id20:abcdefghij0123456789e1:q4:ping1:t2:aa1:y1:qe";
//! assert_eq!((PROTO.detection.probe)(ToServer, ping, ProbeCx::udp(40000, 6881)), Probe::Match);
//! let app = AppConfig::default();
//! let init = ParserInit { app: &app, transport: Transport::Udp, first_tx_id: 0, options: 0, settings: &[], expected: None, client: None };
//! let mut p = (PROTO.new_parser)(&init);
//! p.parse(ToServer, ping);
//! let rec = p.tx(0).unwrap().eve();
//! assert_eq!((rec["transaction_id"].as_str(), rec["request_type"].as_str()), (Some("6161"), Some("ping")));
//! ```

use std::any::Any;
use std::net::{Ipv4Addr, Ipv6Addr};

use serde_json::{Map, Value};
use vigil_types::Direction;

use crate::parser::{AppEvent, ParseResult};
use crate::progress::Progress;
use crate::proto::{Detection, ParserInit, ProbeCx, Probe, ProtoDef, ProtoParser, ProtoTx, SettingDef, TxQueue};

/// Nesting past which a message is refused (KRPC needs three levels).
const MAX_DEPTH: usize = 8;

/// A bencoded value, borrowing its strings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bencode<'a> {
    Int(i64),
    Bytes(&'a [u8]),
    List(Vec<Bencode<'a>>),
    Dict(Vec<(&'a [u8], Bencode<'a>)>),
}

impl<'a> Bencode<'a> {
    fn get(&self, key: &str) -> Option<&Bencode<'a>> {
        match self {
            Bencode::Dict(d) => d.iter().find(|(k, _)| *k == key.as_bytes()).map(|(_, v)| v),
            _ => None,
        }
    }

    fn bytes(&self) -> Option<&'a [u8]> {
        match self {
            Bencode::Bytes(b) => Some(b),
            _ => None,
        }
    }

    fn int(&self) -> Option<i64> {
        match self {
            Bencode::Int(i) => Some(*i),
            _ => None,
        }
    }
}

/// One value from the start of `data`, and what follows it.
pub fn decode(data: &[u8], depth: usize) -> Option<(Bencode<'_>, &[u8])> {
    if depth > MAX_DEPTH {
        return None;
    }
    match *data.first()? {
        b'i' => {
            let end = data.iter().position(|&b| b == b'e')?;
            let n = std::str::from_utf8(&data[1..end]).ok()?.parse().ok()?;
            Some((Bencode::Int(n), &data[end + 1..]))
        }
        b'l' => {
            let mut rest = &data[1..];
            let mut items = Vec::new();
            while *rest.first()? != b'e' {
                let (v, r) = decode(rest, depth + 1)?;
                items.push(v);
                rest = r;
            }
            Some((Bencode::List(items), &rest[1..]))
        }
        b'd' => {
            let mut rest = &data[1..];
            let mut items = Vec::new();
            while *rest.first()? != b'e' {
                let (Bencode::Bytes(k), r) = decode(rest, depth + 1)? else { return None };
                let (v, r) = decode(r, depth + 1)?;
                items.push((k, v));
                rest = r;
            }
            Some((Bencode::Dict(items), &rest[1..]))
        }
        b'0'..=b'9' => {
            let colon = data.iter().position(|&b| b == b':')?;
            let len: usize = std::str::from_utf8(&data[..colon]).ok()?.parse().ok()?;
            let body = data.get(colon + 1..colon + 1 + len)?;
            Some((Bencode::Bytes(body), &data[colon + 1 + len..]))
        }
        _ => None,
    }
}

fn hex(b: &[u8]) -> Value {
    Value::String(b.iter().map(|x| format!("{x:02x}")).collect())
}

/// A compact IPv4 or IPv6 address and port.
fn endpoint(b: &[u8]) -> (String, u16) {
    let (ip, port) = b.split_at(b.len() - 2);
    let ip = match ip.len() {
        4 => Ipv4Addr::new(ip[0], ip[1], ip[2], ip[3]).to_string(),
        16 => <[u8; 16]>::try_from(ip).map(Ipv6Addr::from).map(|a| a.to_string()).unwrap_or_default(),
        _ => String::new(),
    };
    (ip, u16::from_be_bytes([port[0], port[1]]))
}

/// One message, as Suricata logs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DhtTx {
    id: u64,
    dir: Direction,
    record: Value,
    events: u64,
}

/// The record of a KRPC message; `None` when a part it needs is missing.
/// A message without its transaction id is logged with an empty one (and
/// is malformed, see [`message`]).
fn record(msg: &Bencode<'_>) -> Option<Value> {
    let mut m = Map::new();
    m.insert("transaction_id".into(), hex(msg.get("t").and_then(Bencode::bytes).unwrap_or_default()));
    if let Some(v) = msg.get("v").and_then(Bencode::bytes) {
        m.insert("client_version".into(), hex(v));
    }
    match msg.get("y")?.bytes()? {
        b"q" => {
            m.insert("request_type".into(), crate::proto::escaped_text(msg.get("q")?.bytes()?).into());
            let a = msg.get("a")?;
            let mut r = Map::new();
            r.insert("id".into(), hex(a.get("id")?.bytes()?));
            for key in ["target", "info_hash", "token"] {
                if let Some(v) = a.get(key).and_then(Bencode::bytes) {
                    r.insert(key.into(), hex(v));
                }
            }
            for key in ["implied_port", "port"] {
                if let Some(v) = a.get(key).and_then(Bencode::int).and_then(|v| u64::try_from(v).ok()) {
                    r.insert(key.into(), v.into());
                }
            }
            m.insert("request".into(), Value::Object(r));
        }
        b"r" => {
            let a = msg.get("r")?;
            let mut r = Map::new();
            r.insert("id".into(), hex(a.get("id")?.bytes()?));
            for (key, size) in [("nodes", 26), ("nodes6", 38)] {
                let Some(nodes) = a.get(key).and_then(Bencode::bytes).filter(|n| !n.is_empty()) else { continue };
                let list: Vec<Value> = nodes
                    .chunks_exact(size)
                    .map(|n| {
                        let (ip, port) = endpoint(&n[20..]);
                        let mut o = Map::new();
                        o.insert("id".into(), hex(&n[..20]));
                        o.insert("ip".into(), ip.into());
                        o.insert("port".into(), port.into());
                        Value::Object(o)
                    })
                    .collect();
                if !list.is_empty() {
                    r.insert(key.into(), Value::Array(list));
                }
            }
            if let Some(Bencode::List(values)) = a.get("values") {
                let list = values
                    .iter()
                    .filter_map(Bencode::bytes)
                    .filter(|v| v.len() == 6 || v.len() == 18)
                    .map(|v| {
                        let (ip, port) = endpoint(v);
                        let mut o = Map::new();
                        o.insert("ip".into(), ip.into());
                        o.insert("port".into(), port.into());
                        Value::Object(o)
                    })
                    .collect();
                r.insert("values".into(), Value::Array(list));
            }
            if let Some(t) = a.get("token").and_then(Bencode::bytes) {
                r.insert("token".into(), hex(t));
            }
            m.insert("response".into(), Value::Object(r));
        }
        b"e" => {
            let Bencode::List(e) = msg.get("e")? else { return None };
            let mut o = Map::new();
            o.insert("num".into(), e.first()?.int()?.into());
            o.insert("msg".into(), crate::proto::escaped_text(e.get(1)?.bytes()?).into());
            m.insert("error".into(), Value::Object(o));
        }
        _ => return None,
    }
    Some(Value::Object(m))
}

/// A whole datagram's message, and whether it lacks its transaction id
/// (Suricata's `malformed_packet`); `None` when it is not KRPC at all.
fn message(data: &[u8]) -> Option<(Value, bool)> {
    let (msg, rest) = decode(data, 0)?;
    if !rest.is_empty() {
        return None;
    }
    let malformed = msg.get("t").and_then(Bencode::bytes).is_none();
    record(&msg).map(|r| (r, malformed))
}

impl ProtoTx for DhtTx {
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

    fn buffer(&self, _dir: Direction, _id: u8, _index: usize) -> Option<&[u8]> {
        None
    }

    fn eve(&self) -> Value {
        self.record.clone()
    }

    fn record_dir(&self) -> Direction {
        self.dir
    }

    fn events(&self) -> u64 {
        self.events
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[derive(Debug)]
pub struct DhtParser {
    txs: TxQueue<DhtTx>,
    events: Vec<AppEvent>,
}

impl ProtoParser for DhtParser {
    fn parse(&mut self, dir: Direction, data: &[u8]) -> ParseResult {
        let Some((record, malformed)) = message(data) else { return ParseResult::Error };
        let at = self.txs.push_with(|id| DhtTx { id, dir, record, events: u64::from(malformed) });
        if malformed {
            let tx_id = self.txs.get(at).map(|t| t.id);
            self.events.push(AppEvent { name: "bittorrent-dht.malformed_packet", tx_id });
            // Logged, and an error of the parser all the same (its exception policy applies), as in Suricata.
            return ParseResult::Error;
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
    Box::new(DhtParser { txs: TxQueue::new(init.first_tx_id, max_tx), events: Vec::new() })
}

/// A query's, a response's or an error's opening bytes, on any port.
fn probe(_dir: Direction, data: &[u8], _cx: ProbeCx) -> Probe {
    crate::proto::probe_openings(data, &[b"d1:ad2:id20:", b"d1:rd2:id20:", b"d1:el"], false)
}

fn sample() -> Vec<(Direction, Vec<u8>)> {
    vec![
        (Direction::ToServer, b"d1:ad2:id20:abcdefghij01234567899:info_hash20:mnopqrstuvwxyz123456e1:q9:get_peers1:t2:aa1:v4:UT011:y1:qe".to_vec()),
        (Direction::ToClient, b"d1:rd2:id20:abcdefghij01234567895:token8:aoeusnth6:valuesl6:axje.u6:idhtnmee1:t2:aa1:y1:re".to_vec()),
        (Direction::ToClient, b"d1:eli201e23:A Generic Error Ocurrede1:t2:aa1:y1:ee".to_vec()),
    ]
}

pub static PROTO: ProtoDef = ProtoDef {
    name: "bittorrent-dht",
    eve_name: Some("bittorrent_dht"),
    detection: Detection { tcp: false, udp: true, ports: &[], ports_only: false, probe, counters_by_transport: false, answers_first: None },
    new_parser,
    buffers: &[],
    checks: &[],
    events: &["malformed_packet"],
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
    fn responses_list_their_peers_and_errors_their_code() {
        let s = sample();
        let (peers, malformed) = message(&s[1].1).unwrap();
        assert!(!malformed);
        assert_eq!(
            peers["response"]["values"],
            serde_json::json!([{"ip": "97.120.106.101", "port": 11893}, {"ip": "105.100.104.116", "port": 28269}])
        );
        assert_eq!(peers["response"]["token"], "616f6575736e7468");
        let (error, _) = message(&s[2].1).unwrap();
        assert_eq!(error["error"], serde_json::json!({"num": 201, "msg": "A Generic Error Ocurred"}));
        let (query, _) = message(&s[0].1).unwrap();
        assert_eq!((query["client_version"].as_str(), query["request_type"].as_str()), (Some("55543031"), Some("get_peers")));
    }

    #[test]
    fn bencode_is_bounded_and_exact() {
        let deep = "l".repeat(MAX_DEPTH + 2) + &"e".repeat(MAX_DEPTH + 2);
        assert!(decode(deep.as_bytes(), 0).is_none());
        assert!(decode(b"5:abc", 0).is_none());
        assert!(decode(b"i12", 0).is_none());
        assert!(message(b"d1:t2:aa1:y1:qe").is_none(), "a query without its method");
        let (ping, malformed) = message(b"d1:ad2:id20:abcdefghij0123456789e1:q4:ping1:y1:qe").unwrap();
        assert!(malformed);
        assert_eq!(ping["transaction_id"], "");
        assert!(message(b"d1:eli201e3:abce1:t2:aa1:y1:eejunk").is_none());
    }
}
