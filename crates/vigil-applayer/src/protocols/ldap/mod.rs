//! LDAP (RFC 4511) over TCP, and CLDAP over UDP, on ports 389 and 3268
//! (or the configured `detection-ports`, as Suricata probes it only
//! there): a flow whose first bytes are an LDAPMessage (a SEQUENCE holding a message id and a
//! known operation) speaks `ldap`. Each request with the responses that
//! carry its message id is a transaction, as Suricata forms them (a
//! search's entries before its final result; responses nobody asked for,
//! such as a notice of disconnection, one of their own), logged as EVE
//! `ldap`; a StartTLS the server accepts hands the flow to TLS.
//! `ldap.request.operation`, `ldap.responses.operation`,
//! `ldap.responses.count`, `ldap.responses.result_code`, and the buffers
//! `ldap.request.dn`, `ldap.responses.dn`, `ldap.responses.message`,
//! `ldap.request.attribute_type`, `ldap.responses.attribute_type`.
//!
//! ```
//! use vigil_applayer::protocols::ldap::PROTO;
//! use vigil_applayer::proto::{ProbeCx, Probe};
//! use vigil_types::Direction::ToServer;
//! // An unbind request, message 3.
//! let unbind = [0x30, 0x05, 0x02, 0x01, 0x03, 0x42, 0x00];
//! let probe = |d: &[u8]| (PROTO.detection.probe)(ToServer, d, ProbeCx::tcp(40000, 389));
//! assert_eq!(probe(&unbind), Probe::Match);
//! assert_eq!(probe(&unbind[..3]), Probe::NeedMore);
//! assert_eq!(probe(b"GET / HTTP/1.1\r\n"), Probe::NoMatch);
//! ```

mod checks;
pub mod msg;

use std::any::Any;

use serde_json::{Map, Value};
use vigil_types::Direction;

use crate::codecs::ber::Reader;
use crate::parser::{AppEvent, ParseResult};
use crate::progress::Progress;
use crate::proto::{BufferDef, Detection, ParserInit, ProbeCx, Probe, ProtoDef, ProtoParser, ProtoTx, SettingDef, Sides, TxQueue};
use crate::Transport;
use msg::Message;

/// The largest message read; the app layer holds at most 256 KiB of an
/// unfinished one by default.
const MAX_MESSAGE: usize = 1 << 20;
/// Responses kept per request (a search may return many entries).
const MAX_RESPONSES: usize = 1024;
/// Message bytes the transactions of one flow hold together (weighed on
/// the wire; what is kept of them is of the same order): past it the
/// oldest go, counted as evicted, and one request keeps no more responses.
const FLOW_BUDGET: usize = 8 << 20;
const STARTTLS: &str = "1.3.6.1.4.1.1466.20037";

/// Buffer ids.
const REQUEST_DN: u8 = 0;
const RESPONSES_DN: u8 = 1;
const RESPONSES_MESSAGE: u8 = 2;
const REQUEST_ATTRIBUTE_TYPE: u8 = 3;
const RESPONSES_ATTRIBUTE_TYPE: u8 = 4;

#[derive(Debug, Clone, PartialEq)]
pub struct LdapTx {
    id: u64,
    pub request: Option<Message>,
    pub responses: Vec<Message>,
    /// A final response came.
    pub done: bool,
    /// The flow ended first.
    ended: bool,
    /// Wire bytes of the messages kept.
    bytes: usize,
}

fn entry(m: &Message, with_id: bool) -> Value {
    let mut o = Map::new();
    let name = msg::op_name(m.op).unwrap_or("unknown");
    if with_id {
        o.insert("message_id".into(), m.id.into());
    }
    o.insert("operation".into(), name.into());
    if let Some(b) = &m.body {
        o.insert(name.into(), b.clone());
    }
    Value::Object(o)
}

impl ProtoTx for LdapTx {
    fn id(&self) -> u64 {
        self.id
    }

    fn progress(&self, dir: Direction) -> Progress {
        match dir {
            Direction::ToServer => Progress::Complete,
            Direction::ToClient if self.done || self.ended => Progress::Complete,
            Direction::ToClient if self.responses.is_empty() => Progress::None,
            Direction::ToClient => Progress::Headers,
        }
    }

    fn finished(&self) -> bool {
        self.done || self.ended
    }

    /// Its responses so far: the response keywords run again on each, as
    /// Suricata inspects them as they come.
    fn detect_updates(&self, dir: Direction) -> Option<u64> {
        Some(match dir {
            Direction::ToServer => 0,
            Direction::ToClient => self.responses.len() as u64,
        })
    }

    fn buffer(&self, dir: Direction, id: u8, index: usize) -> Option<&[u8]> {
        let req = self.request.as_ref();
        let s: &str = match (dir, id) {
            (Direction::ToServer, REQUEST_DN) if index == 0 => req?.dn.as_deref()?,
            (Direction::ToServer, REQUEST_ATTRIBUTE_TYPE) => req?.attribute_types.get(index)?,
            (Direction::ToClient, RESPONSES_DN) => self.responses.iter().filter_map(|r| r.dn.as_deref()).nth(index)?,
            (Direction::ToClient, RESPONSES_MESSAGE) => self.responses.iter().filter_map(|r| r.message.as_deref()).nth(index)?,
            (Direction::ToClient, RESPONSES_ATTRIBUTE_TYPE) => self.responses.iter().flat_map(|r| r.attribute_types.iter()).nth(index)?,
            _ => return None,
        };
        Some(s.as_bytes())
    }

    fn eve(&self) -> Value {
        let mut o = Map::new();
        if let Some(r) = &self.request {
            let mut req = Map::new();
            req.insert("message_id".into(), r.id.into());
            if let Value::Object(e) = entry(r, false) {
                req.extend(e);
            }
            o.insert("request".into(), Value::Object(req));
        }
        if !self.responses.is_empty() {
            let alone = self.request.is_none();
            o.insert("responses".into(), self.responses.iter().map(|m| entry(m, alone)).collect::<Vec<_>>().into());
        }
        Value::Object(o)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[derive(Debug)]
pub struct LdapParser {
    txs: TxQueue<LdapTx>,
    tcp: bool,
    /// The message id of a StartTLS request awaiting its answer.
    starttls: Option<u32>,
    tunnel: bool,
    /// An upper bound of the bytes the transactions hold (those pruned or
    /// evicted are subtracted only when it is weighed again).
    held: usize,
    frames: crate::frames::FrameLog,
}

impl LdapParser {
    /// Message `m`, `len` bytes on the wire; the transaction a response
    /// joined.
    fn message(&mut self, m: Message, len: usize) -> Option<u64> {
        let tx = self.take(m, len);
        self.held += len;
        self.txs.keep_within(&mut self.held, FLOW_BUDGET, |t| t.bytes, |_| {});
        tx
    }

    fn take(&mut self, m: Message, len: usize) -> Option<u64> {
        if msg::is_request(m.op) {
            if m.name.as_deref() == Some(STARTTLS) {
                self.starttls = Some(m.id);
            }
            // An unbind and an abandon are never answered.
            let done = matches!(m.op, 2 | 16);
            self.txs.push_with(|id| LdapTx { id, request: Some(m), responses: Vec::new(), done, ended: false, bytes: len });
            return None;
        }
        if m.op == 24 && self.starttls == Some(m.id) && m.result == Some(0) {
            self.tunnel = true;
        }
        let last = msg::is_final(m.op);
        let waiting = self.txs.iter().rposition(|t| !t.done && t.request.as_ref().is_some_and(|r| r.id == m.id));
        match waiting {
            Some(at) => {
                let tx = &mut self.txs[at];
                if tx.responses.len() < MAX_RESPONSES && tx.bytes + len <= FLOW_BUDGET {
                    tx.responses.push(m);
                    tx.bytes += len;
                }
                tx.done |= last;
                Some(tx.id)
            }
            None => {
                let at = self.txs.push_with(|id| LdapTx { id, request: None, responses: vec![m], done: last, ended: false, bytes: len });
                Some(self.txs[at].id)
            }
        }
    }
}

/// The length of the BER element starting `data` (its header and
/// contents); `Ok(None)` while its header is incomplete.
fn element_len(data: &[u8]) -> Result<Option<usize>, ()> {
    let Some(&first) = data.get(1) else { return Ok(None) };
    if first < 0x80 {
        return Ok(Some(2 + usize::from(first)));
    }
    let n = usize::from(first & 0x7f);
    if n == 0 || n > 4 {
        return Err(());
    }
    let Some(b) = data.get(2..2 + n) else { return Ok(None) };
    Ok(Some(2 + n + b.iter().fold(0usize, |a, &x| a << 8 | usize::from(x))))
}

impl ProtoParser for LdapParser {
    fn parse(&mut self, dir: Direction, data: &[u8]) -> ParseResult {
        if self.tunnel {
            return ParseResult::Done;
        }
        let mut at = 0;
        while at < data.len() {
            let rest = &data[at..];
            if rest[0] != 0x30 {
                return ParseResult::Error;
            }
            let len = match element_len(rest) {
                Err(()) => return ParseResult::Error,
                Ok(None) if !self.tcp => return ParseResult::Error,
                Ok(None) => return ParseResult::Incomplete { consumed: at, needed: 1 },
                Ok(Some(l)) if l > MAX_MESSAGE => return ParseResult::Error,
                Ok(Some(l)) => l,
            };
            if rest.len() < len {
                if !self.tcp {
                    return ParseResult::Error;
                }
                return ParseResult::Incomplete { consumed: at, needed: len - rest.len() };
            }
            let Some(m) = Reader::new(&rest[..len]).expect(0x30).ok().and_then(msg::parse) else { return ParseResult::Error };
            // A request's frame names no transaction, a response's the one it joined, as in Suricata.
            let tx = self.message(m, len);
            self.frames.add(dir, at, Some(len as u64), 0, tx);
            at += len;
            if self.tunnel && at < data.len() {
                // StartTLS accepted: the rest belongs to what runs inside.
                return ParseResult::Incomplete { consumed: at, needed: 1 };
            }
        }
        ParseResult::Done
    }

    fn on_gap(&mut self, _dir: Direction, _len: u64) -> bool {
        // Message boundaries are lost with the bytes.
        false
    }

    fn close(&mut self, _dir: Direction, _held: &[u8]) {
        for t in self.txs.iter_mut() {
            t.ended = true;
        }
    }

    fn tunnel(&self) -> bool {
        self.tunnel
    }

    crate::proto::delegate_txs!(txs);

    fn prune(&mut self, id: u64) {
        self.txs.prune_while(id, |t| t.finished());
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
    Box::new(LdapParser { txs: TxQueue::new(init.first_tx_id, max_tx), tcp: init.transport == Transport::Tcp, starttls: None, tunnel: false, held: 0, frames: crate::frames::FrameLog::counted_from_one(init.app.frames) })
}

/// An LDAPMessage's start: a SEQUENCE, a message id, a known operation.
fn probe(_dir: Direction, data: &[u8], cx: ProbeCx) -> Probe {
    let udp = cx.transport == Transport::Udp;
    let need = if udp { Probe::NoMatch } else { Probe::NeedMore };
    let Some(&first) = data.first() else { return need };
    if first != 0x30 {
        return Probe::NoMatch;
    }
    let head = match data.get(1) {
        None => return need,
        Some(&l) if l < 0x80 => 2,
        Some(&l) if (0x81..=0x84).contains(&l) => 2 + usize::from(l & 0x7f),
        Some(_) => return Probe::NoMatch,
    };
    // The message id: a short INTEGER.
    let Some(id) = data.get(head..head + 2) else { return need };
    if id[0] != 0x02 || !(1..=4).contains(&id[1]) {
        return Probe::NoMatch;
    }
    let Some(&op) = data.get(head + 2 + usize::from(id[1])) else { return need };
    if op & 0xc0 != 0x40 || msg::op_name(op & 0x1f).is_none() {
        return Probe::NoMatch;
    }
    if udp {
        // A datagram is whole: it must read as a message.
        return match Reader::new(data).expect(0x30).ok().and_then(msg::parse) {
            Some(_) => Probe::Match,
            None => Probe::NoMatch,
        };
    }
    Probe::Match
}

/// A bind and a search with two entries, over TCP.
fn sample() -> Vec<(Direction, Vec<u8>)> {
    use crate::codecs::ber::tlv;
    let message = |id: u8, op: u8, v: &[u8]| tlv(0x30, &[tlv(0x02, &[id]), tlv(op, v)].concat());
    let done = |code: u8| [tlv(0x0a, &[code]), tlv(0x04, b""), tlv(0x04, b"")].concat();
    let bind = message(1, 0x60, &[tlv(0x02, &[3]), tlv(0x04, b"cn=admin,dc=example,dc=com"), tlv(0x80, b"secret")].concat());
    let search = message(
        2,
        0x63,
        &[
            tlv(0x04, b"dc=example,dc=com"),
            tlv(0x0a, &[2]),
            tlv(0x0a, &[0]),
            tlv(0x02, &[0]),
            tlv(0x02, &[0]),
            tlv(0x01, &[0]),
            tlv(0x87, b"objectClass"),
            tlv(0x30, &tlv(0x04, b"cn")),
        ]
        .concat(),
    );
    let found = |dn: &[u8], cn: &[u8]| message(2, 0x64, &[tlv(0x04, dn), tlv(0x30, &tlv(0x30, &[tlv(0x04, b"cn"), tlv(0x31, &tlv(0x04, cn))].concat()))].concat());
    vec![
        (Direction::ToServer, bind),
        (Direction::ToClient, message(1, 0x61, &done(0))),
        (Direction::ToServer, search),
        (Direction::ToClient, [found(b"cn=a,dc=example,dc=com", b"a"), found(b"cn=b,dc=example,dc=com", b"b"), message(2, 0x65, &done(0))].concat()),
        (Direction::ToServer, message(3, 0x42, b"")),
    ]
}

const fn buffer(name: &'static str, id: u8, to_server: bool, multi: bool) -> BufferDef {
    let (sides, default) = if to_server { (Sides::ToServer, Direction::ToServer) } else { (Sides::ToClient, Direction::ToClient) };
    // A response's buffers are inspected as each response comes (see `detect_updates`).
    let need = if to_server { Progress::Complete } else { Progress::Headers };
    BufferDef { name, id, sides, default, both_ways: false, need, multi }
}

pub static PROTO: ProtoDef = ProtoDef {
    name: "ldap",
    eve_name: None,
    detection: Detection { tcp: true, udp: true, ports: &[389, 3268], ports_only: true, probe, counters_by_transport: true, answers_first: None },
    new_parser,
    buffers: &[
        buffer("ldap.request.dn", REQUEST_DN, true, false),
        buffer("ldap.responses.dn", RESPONSES_DN, false, true),
        buffer("ldap.responses.message", RESPONSES_MESSAGE, false, true),
        buffer("ldap.request.attribute_type", REQUEST_ATTRIBUTE_TYPE, true, true),
        buffer("ldap.responses.attribute_type", RESPONSES_ATTRIBUTE_TYPE, false, true),
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
    off_by_default: false,
    stream_depth: None,
    frames: &["pdu"],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::AppConfig;
    use Direction::{ToClient, ToServer};

    fn parser() -> Box<dyn ProtoParser> {
        let app = AppConfig::default();
        new_parser(&ParserInit { app: &app, transport: Transport::Tcp, first_tx_id: 0, options: 0, settings: &[], expected: None, client: None })
    }

    #[test]
    fn requests_gather_their_responses() {
        let mut p = parser();
        for (dir, data) in sample() {
            assert_eq!(p.parse(dir, &data), ParseResult::Done);
        }
        assert_eq!(p.tx_count(), 3);
        let bind = p.tx(0).unwrap().eve();
        assert_eq!(
            bind,
            serde_json::json!({"request": {"message_id": 1, "operation": "bind_request", "bind_request": {"version": 3, "name": "cn=admin,dc=example,dc=com"}},
                "responses": [{"operation": "bind_response", "bind_response": {"result_code": "success", "matched_dn": "", "message": ""}}]})
        );
        let search = p.tx(1).unwrap();
        assert!(search.finished());
        let e = search.eve();
        assert_eq!(e["responses"].as_array().unwrap().len(), 3);
        assert_eq!(e["responses"][1]["search_result_entry"]["attributes"][0], serde_json::json!({"type": "cn", "values": ["b"]}));
        assert_eq!(search.buffer(ToServer, REQUEST_DN, 0), Some(&b"dc=example,dc=com"[..]));
        assert_eq!(search.buffer(ToClient, RESPONSES_DN, 1), Some(&b"cn=b,dc=example,dc=com"[..]));
        assert_eq!(search.buffer(ToClient, RESPONSES_ATTRIBUTE_TYPE, 1), Some(&b"cn"[..]));
        assert!(p.tx(2).unwrap().finished(), "an unbind is never answered");
    }

    #[test]
    fn held_responses_stay_within_the_flows_budget() {
        use crate::codecs::ber::tlv;
        let mut p = LdapParser {
            txs: TxQueue::new(0, 1024),
            tcp: true,
            starttls: None,
            tunnel: false,
            held: 0,
            frames: crate::frames::FrameLog::default(),
        };
        let message = |id: u8, op: u8, v: &[u8]| tlv(0x30, &[tlv(0x02, &[id]), tlv(op, v)].concat());
        let value = vec![b'v'; 50_000];
        let entry = |id: u8| message(id, 0x64, &[tlv(0x04, b"cn=x"), tlv(0x30, &tlv(0x30, &[tlv(0x04, b"cn"), tlv(0x31, &tlv(0x04, &value))].concat()))].concat());
        let search = |id: u8| message(id, 0x63, &[tlv(0x04, b"dc=x"), tlv(0x0a, &[2]), tlv(0x0a, &[0]), tlv(0x02, &[0]), tlv(0x02, &[0]), tlv(0x01, &[0]), tlv(0x87, b"cn"), tlv(0x30, b"")].concat());
        // Ten searches, each answered with 40 entries of 50 kB and no final result.
        for id in 1..=10u8 {
            assert_eq!(p.parse(ToServer, &search(id)), ParseResult::Done);
        }
        for id in 1..=10u8 {
            for _ in 0..40 {
                assert_eq!(p.parse(ToClient, &entry(id)), ParseResult::Done);
            }
        }
        let kept: usize = p.txs.iter().map(|t| t.bytes).sum();
        assert!(kept <= FLOW_BUDGET, "{kept}");
        assert!(p.txs_evicted() > 0);
        assert_eq!(p.txs.back().unwrap().responses.len(), 40, "the newest search keeps its entries");
        // One search answered past the budget keeps what fits.
        assert_eq!(p.parse(ToServer, &search(11)), ParseResult::Done);
        for _ in 0..200 {
            assert_eq!(p.parse(ToClient, &entry(11)), ParseResult::Done);
        }
        let last = p.txs.back().unwrap();
        assert!(last.bytes <= FLOW_BUDGET && last.responses.len() < 200 && last.responses.len() > 100, "{}", last.responses.len());
    }

    #[test]
    fn an_accepted_starttls_hands_the_flow_over() {
        use crate::codecs::ber::tlv;
        let mut p = parser();
        let message = |id: u8, op: u8, v: &[u8]| tlv(0x30, &[tlv(0x02, &[id]), tlv(op, v)].concat());
        assert_eq!(p.parse(ToServer, &message(1, 0x77, &tlv(0x80, STARTTLS.as_bytes()))), ParseResult::Done);
        let mut answer = message(1, 0x78, &[tlv(0x0a, &[0]), tlv(0x04, b""), tlv(0x04, b"")].concat());
        answer.extend_from_slice(b"\x16\x03\x01");
        assert_eq!(p.parse(ToClient, &answer), ParseResult::Incomplete { consumed: answer.len() - 3, needed: 1 });
        assert!(p.tunnel());
    }
}
