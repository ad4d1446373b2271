//! Kerberos 5 (RFC 4120) between clients and a KDC, over UDP and TCP
//! port 88: a datagram, or over TCP a message after its four-byte length,
//! that is an AS or TGS request or reply or a KRB-ERROR of protocol
//! version 5 speaks `krb5`. Each message is a transaction of the side that
//! sent it, as Suricata forms them, logged as EVE `krb5` (client and
//! service names, realm, encryption types and whether they are weak, an
//! error's code and the request it answers); `krb5.cname`, `krb5.sname`
//! (each name part a value), `krb5_msg_type`, `krb5_err_code`,
//! `krb5.weak_encryption` and `krb5.ticket_encryption`.
//!
//! Kerberos tickets inside SMB session setups are read by
//! [`crate::codecs::ntlmssp`].
//!
//! ```
//! use vigil_applayer::protocols::krb5::PROTO;
//! use vigil_applayer::proto::{ProbeCx, Probe};
//! use vigil_types::Direction::ToServer;
//! let probe = |d: &[u8]| (PROTO.detection.probe)(ToServer, d, ProbeCx::udp(40000, 88));
//! assert_eq!(probe(b"\x6a\x81"), Probe::NoMatch, "a request cut short is no request");
//! assert_eq!(probe(b"GET / HTTP/1.1\r\n"), Probe::NoMatch);
//! ```

mod checks;
pub mod msg;

use std::any::Any;

use serde_json::{Map, Value};
use vigil_types::Direction;

use crate::parser::{AppEvent, ParseResult};
use crate::progress::Progress;
use crate::proto::{BufferDef, Detection, ParserInit, ProbeCx, Probe, ProtoDef, ProtoParser, ProtoTx, SettingDef, Sides, TxQueue};
use crate::Transport;
use msg::Message;

/// The largest message taken over TCP (a ticket with a large PAC is tens of KiB).
const MAX_TCP_MESSAGE: usize = 256 * 1024;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Krb5Tx {
    id: u64,
    dir: Direction,
    pub msg: Message,
    /// For an error, the type of the last request the flow carried.
    pub failed_request: Option<u32>,
}

fn joined(parts: &[String]) -> String {
    if parts.is_empty() {
        "<empty>".into()
    } else {
        parts.join("/")
    }
}

impl ProtoTx for Krb5Tx {
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
        if dir != self.dir {
            return None;
        }
        let parts = match id {
            0 => &self.msg.cname,
            1 => &self.msg.sname,
            _ => return None,
        };
        parts.get(index).map(String::as_bytes)
    }

    fn eve(&self) -> Value {
        let m = &self.msg;
        let mut o = Map::new();
        match m.error_code {
            Some(code) => {
                o.insert("msg_type".into(), msg::type_name(msg::ERROR).into());
                if let Some(r) = self.failed_request {
                    o.insert("failed_request".into(), msg::type_name(r).into());
                }
                o.insert("error_code".into(), msg::error_name(code).into());
            }
            None => {
                o.insert("msg_type".into(), msg::type_name(m.msg_type).into());
            }
        }
        o.insert("cname".into(), joined(&m.cname).into());
        o.insert("realm".into(), m.realm.clone().unwrap_or_else(|| "<empty>".into()).into());
        o.insert("sname".into(), joined(&m.sname).into());
        o.insert("encryption".into(), m.etype.map_or_else(|| "<none>".into(), msg::etype_name).into());
        o.insert("weak_encryption".into(), m.etype.is_some_and(msg::weak).into());
        if let Some(t) = m.ticket_etype {
            o.insert("ticket_encryption".into(), msg::etype_name(t).into());
            o.insert("ticket_weak_encryption".into(), msg::weak(t).into());
        }
        Value::Object(o)
    }

    fn record_dir(&self) -> Direction {
        self.dir
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[derive(Debug)]
pub struct Krb5Parser {
    txs: TxQueue<Krb5Tx>,
    tcp: bool,
    /// The type of the last request seen, for the errors that answer it.
    last_request: Option<u32>,
}

impl Krb5Parser {
    fn message(&mut self, dir: Direction, data: &[u8]) -> bool {
        let Some(msg) = msg::parse(data) else { return false };
        let failed_request = if msg.error_code.is_some() { self.last_request } else { None };
        if matches!(msg.msg_type, msg::AS_REQ | msg::TGS_REQ) {
            self.last_request = Some(msg.msg_type);
        }
        self.txs.push_with(|id| Krb5Tx { id, dir, msg, failed_request });
        true
    }
}

impl ProtoParser for Krb5Parser {
    fn parse(&mut self, dir: Direction, data: &[u8]) -> ParseResult {
        if !self.tcp {
            return if self.message(dir, data) { ParseResult::Done } else { ParseResult::Error };
        }
        let mut at = 0;
        while at < data.len() {
            let rest = &data[at..];
            let Some(mark) = rest.get(..4) else { return ParseResult::Incomplete { consumed: at, needed: 4 - rest.len() } };
            let len = u32::from_be_bytes([mark[0], mark[1], mark[2], mark[3]]) as usize;
            // The high bit is reserved for extensions no KDC uses.
            if len > MAX_TCP_MESSAGE {
                return ParseResult::Error;
            }
            if rest.len() < 4 + len {
                return ParseResult::Incomplete { consumed: at, needed: 4 + len - rest.len() };
            }
            if !self.message(dir, &rest[4..4 + len]) {
                return ParseResult::Error;
            }
            at += 4 + len;
        }
        ParseResult::Done
    }

    fn on_gap(&mut self, _dir: Direction, _len: u64) -> bool {
        // Message boundaries are lost with the bytes.
        false
    }

    fn close(&mut self, _dir: Direction, _held: &[u8]) {}

    crate::proto::delegate_txs!(txs);

    fn prune(&mut self, id: u64) {
        self.txs.prune_while(id, |_| true);
    }

    fn drain_events(&mut self, _out: &mut Vec<AppEvent>) {}
}

pub const SETTINGS: &[SettingDef] = &[SettingDef { key: "max-tx", default: 1024, size: false }];

fn new_parser(init: &ParserInit) -> Box<dyn ProtoParser> {
    let max_tx = init.setting(&PROTO, 0).clamp(1, 1 << 16) as usize;
    Box::new(Krb5Parser { txs: TxQueue::new(init.first_tx_id, max_tx), tcp: init.transport == Transport::Tcp, last_request: None })
}

/// A message's first bytes: a KDC message's application tag and a BER
/// length that agrees with `len`, the bytes the message has (when known).
fn starts_message(data: &[u8], len: Option<usize>) -> Probe {
    if data.is_empty() {
        return Probe::NeedMore;
    }
    if msg::app_type(data).is_none() {
        return Probe::NoMatch;
    }
    let Some(&first) = data.get(1) else { return Probe::NeedMore };
    let (body, head) = if first < 0x80 {
        (usize::from(first), 2)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 3 {
            return Probe::NoMatch;
        }
        let Some(b) = data.get(2..2 + n) else { return Probe::NeedMore };
        (b.iter().fold(0usize, |a, &x| a << 8 | usize::from(x)), 2 + n)
    };
    match len {
        Some(l) if l != head + body => Probe::NoMatch,
        // A SEQUENCE must follow the tag.
        _ => match data.get(head) {
            None => Probe::NeedMore,
            Some(0x30) => Probe::Match,
            Some(_) => Probe::NoMatch,
        },
    }
}

fn probe(_dir: Direction, data: &[u8], cx: ProbeCx) -> Probe {
    if cx.transport == Transport::Udp {
        // A datagram is whole: it must read as a message.
        return if msg::parse(data).is_some() { Probe::Match } else { Probe::NoMatch };
    }
    let Some(mark) = data.get(..4) else { return if data.first().is_some_and(|&b| b != 0) { Probe::NoMatch } else { Probe::NeedMore } };
    let len = u32::from_be_bytes([mark[0], mark[1], mark[2], mark[3]]) as usize;
    if len == 0 || len > MAX_TCP_MESSAGE {
        return Probe::NoMatch;
    }
    starts_message(&data[4..], Some(len))
}

/// An AS exchange over TCP: a request, the KDC asking for pre-authentication,
/// the request again and the reply.
fn sample() -> Vec<(Direction, Vec<u8>)> {
    let framed = |m: Vec<u8>| {
        let mut f = (m.len() as u32).to_be_bytes().to_vec();
        f.extend_from_slice(&m);
        f
    };
    let req = sample_msgs::as_req();
    vec![
        (Direction::ToServer, framed(req.clone())),
        (Direction::ToClient, framed(sample_msgs::error())),
        (Direction::ToServer, framed(req)),
        (Direction::ToClient, framed(sample_msgs::as_rep())),
    ]
}

/// The sample's messages, built from their parts.
mod sample_msgs {
    use crate::codecs::ber::tlv;

    fn int(n: u8) -> Vec<u8> {
        tlv(0x02, &[n])
    }

    fn name(parts: &[&str]) -> Vec<u8> {
        let list: Vec<u8> = parts.iter().flat_map(|p| tlv(0x1b, p.as_bytes())).collect();
        tlv(0x30, &[tlv(0xa0, &int(1)), tlv(0xa1, &tlv(0x30, &list))].concat())
    }

    fn enc(etype: u8) -> Vec<u8> {
        tlv(0x30, &[tlv(0xa0, &int(etype)), tlv(0xa2, &tlv(0x04, b"sealed"))].concat())
    }

    const REALM: &[u8] = b"EXAMPLE.ORG";

    pub(super) fn as_req() -> Vec<u8> {
        let body = [
            tlv(0xa0, &tlv(0x03, &[0, 0x40, 0x81, 0, 0x10])),
            tlv(0xa1, &name(&["alice"])),
            tlv(0xa2, &tlv(0x1b, REALM)),
            tlv(0xa3, &name(&["krbtgt", "EXAMPLE.ORG"])),
            tlv(0xa7, &tlv(0x02, &[0x12, 0x34, 0x56, 0x78])),
            tlv(0xa8, &tlv(0x30, &[int(18), int(23)].concat())),
        ];
        tlv(0x6a, &tlv(0x30, &[tlv(0xa1, &int(5)), tlv(0xa2, &int(10)), tlv(0xa4, &tlv(0x30, &body.concat()))].concat()))
    }

    pub(super) fn error() -> Vec<u8> {
        let fields = [
            tlv(0xa0, &int(5)),
            tlv(0xa1, &int(30)),
            tlv(0xa4, &tlv(0x18, b"20240101000000Z")),
            tlv(0xa5, &int(0)),
            tlv(0xa6, &int(25)),
            tlv(0xa7, &tlv(0x1b, REALM)),
            tlv(0xa8, &name(&["alice"])),
            tlv(0xa9, &tlv(0x1b, REALM)),
            tlv(0xaa, &name(&["krbtgt", "EXAMPLE.ORG"])),
        ];
        tlv(0x7e, &tlv(0x30, &fields.concat()))
    }

    pub(super) fn as_rep() -> Vec<u8> {
        let ticket = tlv(0x61, &tlv(0x30, &[tlv(0xa0, &int(5)), tlv(0xa1, &tlv(0x1b, REALM)), tlv(0xa2, &name(&["krbtgt", "EXAMPLE.ORG"])), tlv(0xa3, &enc(23))].concat()));
        let fields = [tlv(0xa0, &int(5)), tlv(0xa1, &int(11)), tlv(0xa3, &tlv(0x1b, REALM)), tlv(0xa4, &name(&["alice"])), tlv(0xa5, &ticket), tlv(0xa6, &enc(18))];
        tlv(0x6b, &tlv(0x30, &fields.concat()))
    }
}

/// A multi-valued buffer of each message: its names' parts.
const fn names(name: &'static str, id: u8) -> BufferDef {
    BufferDef { name, id, sides: Sides::Both, default: Direction::ToServer, both_ways: true, need: Progress::Complete, multi: true }
}

pub static PROTO: ProtoDef = ProtoDef {
    name: "krb5",
    eve_name: None,
    detection: Detection { tcp: true, udp: true, ports: &[88], ports_only: true, probe, counters_by_transport: true, answers_first: None },
    new_parser,
    buffers: &[names("krb5.cname", 0), names("krb5.sname", 1)],
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
    frames: &[],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::AppConfig;
    use Direction::{ToClient, ToServer};

    fn parser(transport: Transport) -> Box<dyn ProtoParser> {
        let app = AppConfig::default();
        new_parser(&ParserInit { app: &app, transport, first_tx_id: 0, options: 0, settings: &[], expected: None, client: None })
    }

    #[test]
    fn an_exchange_is_logged_as_suricata_logs_it() {
        let mut p = parser(Transport::Tcp);
        for (dir, data) in sample() {
            assert_eq!(p.parse(dir, &data), ParseResult::Done);
        }
        let recs: Vec<Value> = (0..p.tx_count()).map(|i| p.tx(i).unwrap().eve()).collect();
        assert_eq!(
            recs[0],
            serde_json::json!({"msg_type": "KRB_AS_REQ", "cname": "alice", "realm": "EXAMPLE.ORG", "sname": "krbtgt/EXAMPLE.ORG",
                "encryption": "<none>", "weak_encryption": false})
        );
        assert_eq!(
            recs[1],
            serde_json::json!({"msg_type": "KRB_ERROR", "failed_request": "KRB_AS_REQ", "error_code": "KDC_ERR_PREAUTH_REQUIRED",
                "cname": "alice", "realm": "EXAMPLE.ORG", "sname": "krbtgt/EXAMPLE.ORG", "encryption": "<none>", "weak_encryption": false})
        );
        assert_eq!(
            recs[3],
            serde_json::json!({"msg_type": "KRB_AS_REP", "cname": "alice", "realm": "EXAMPLE.ORG", "sname": "krbtgt/EXAMPLE.ORG",
                "encryption": "aes256-cts-hmac-sha1-96", "weak_encryption": false, "ticket_encryption": "rc4-hmac", "ticket_weak_encryption": true})
        );
        let rep = p.tx(3).unwrap();
        assert_eq!(rep.buffer(ToClient, 1, 1), Some(&b"EXAMPLE.ORG"[..]));
        assert_eq!(rep.buffer(ToServer, 1, 0), None, "a reply's names are the server's side");
    }

    #[test]
    fn datagrams_and_framing_are_probed() {
        let req = sample_msgs::as_req();
        assert_eq!(probe(ToServer, &req, ProbeCx::udp(40000, 88)), Probe::Match);
        assert_eq!(probe(ToServer, &req[..req.len() - 1], ProbeCx::udp(40000, 88)), Probe::NoMatch);
        let mut framed = (req.len() as u32).to_be_bytes().to_vec();
        framed.extend_from_slice(&req);
        assert_eq!(probe(ToServer, &framed[..8], ProbeCx::tcp(40000, 88)), Probe::Match);
        assert_eq!(probe(ToServer, &framed[..2], ProbeCx::tcp(40000, 88)), Probe::NeedMore);
        framed[3] ^= 1;
        assert_eq!(probe(ToServer, &framed, ProbeCx::tcp(40000, 88)), Probe::NoMatch, "a length that disagrees");
        let mut p = parser(Transport::Udp);
        assert_eq!(p.parse(ToServer, &req), ParseResult::Done);
        assert_eq!(p.parse(ToServer, b"not kerberos"), ParseResult::Error);
    }
}
