//! Multicast DNS (RFC 6762) on UDP port 5353: DNS messages read by the
//! DNS codec ([`crate::protocols::dns::parse_message`]), each one a
//! transaction of the side it travelled, logged as EVE `mdns` records in
//! Suricata 8's own format (flag names, numeric codes, lower-case types,
//! each record's data under its type's name), with the `mdns.*` keywords.
//!
//! ```
//! use vigil_applayer::protocols::mdns::PROTO;
//! use vigil_applayer::proto::{ParserInit, ProbeCx, Probe};
//! use vigil_applayer::{AppConfig, Transport};
//! use vigil_types::Direction::ToServer;
//!
//! // A PTR question for _http._tcp.local.
//! let q = b"\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x05_http\x04_tcp\x05local\x00\x00\x0c\x00\x01";
//! assert_eq!((PROTO.detection.probe)(ToServer, q, ProbeCx::udp(5353, 5353)), Probe::Match);
//! let app = AppConfig::default();
//! let init = ParserInit { app: &app, transport: Transport::Udp, first_tx_id: 0, options: 0, settings: &[], expected: None, client: None };
//! let mut p = (PROTO.new_parser)(&init);
//! p.parse(ToServer, q);
//! assert_eq!(p.tx(0).unwrap().eve()["queries"][0], serde_json::json!({"rrname": "_http._tcp.local", "rrtype": "ptr"}));
//! ```

use std::any::Any;

use serde_json::{json, Map, Value};
use vigil_types::Direction;

use crate::parser::{AppEvent, ParseResult};
use crate::progress::Progress;
use crate::proto::{BufferDef, Detection, ParserInit, ProbeCx, Probe, ProtoDef, ProtoParser, ProtoTx, SettingDef, Sides, TxQueue};
use crate::protocols::dns::{address, json_string, parse_message, rrtype_name, DnsMessage, DnsRecord, RData};

/// The buffers, numbered for [`ProtoTx::buffer`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Buffer {
    QueriesRrname = 0,
    AnswersRrname = 1,
    AuthoritiesRrname = 2,
    AdditionalsRrname = 3,
    /// Every name of a response, its sections in order, with the names
    /// records carry in their data (a PTR's target).
    ResponseRrname = 4,
}

impl Buffer {
    fn from_id(id: u8) -> Option<Buffer> {
        use Buffer::*;
        [QueriesRrname, AnswersRrname, AuthoritiesRrname, AdditionalsRrname, ResponseRrname]
            .into_iter()
            .find(|b| *b as u8 == id)
    }
}

/// One message.
#[derive(Debug, Clone)]
pub struct MdnsTx {
    id: u64,
    dir: Direction,
    pub msg: DnsMessage,
}

fn records_eve(records: &[DnsRecord]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    let mut last_txt: Option<&[u8]> = None;
    for r in records {
        let name = json_string(&r.name.value);
        let kind = rrtype_name(r.rrtype).to_ascii_lowercase();
        let data = match &r.rdata {
            RData::A(a) | RData::Aaaa(a) => json!(address(a)),
            RData::Cname(n) | RData::Ns(n) | RData::Ptr(n) | RData::Mx { exchange: n, .. } => json!(json_string(&n.value)),
            RData::Txt(s) => {
                // One record's strings come as consecutive entries: one array.
                if last_txt == Some(&r.name.value[..]) {
                    if let Some(Value::Array(list)) = out.last_mut().and_then(|e| e.get_mut("txt")) {
                        list.push(json!(json_string(s)));
                        continue;
                    }
                }
                json!([json_string(s)])
            }
            RData::Srv(s) => {
                json!({"priority": s.priority, "weight": s.weight, "port": s.port, "name": json_string(&s.target.value)})
            }
            RData::Opt(o) => Value::Array(
                o.iter()
                    .map(|e| json!({"code": e.code, "data": e.data.iter().map(|b| format!("{b:02x}")).collect::<String>()}))
                    .collect(),
            ),
            RData::Hinfo { cpu, os } => {
                let mut raw = vec![cpu.len() as u8];
                raw.extend_from_slice(cpu);
                raw.push(os.len() as u8);
                raw.extend_from_slice(os);
                json!(json_string(&raw))
            }
            RData::Null(b) | RData::Unknown(b) => json!(json_string(b)),
            RData::Soa(s) => json!({"mname": json_string(&s.mname.value), "rname": json_string(&s.rname.value),
                "serial": s.serial, "refresh": s.refresh, "retry": s.retry, "expire": s.expire, "minimum": s.minimum}),
            RData::Sshfp(s) => json!({"algo": s.algo, "type": s.fp_type,
                "fingerprint": s.fingerprint.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":")}),
        };
        last_txt = matches!(r.rdata, RData::Txt(_)).then_some(&r.name.value[..]);
        let mut e = Map::new();
        e.insert("rrname".into(), json!(name));
        e.insert(kind, data);
        out.push(Value::Object(e));
    }
    out
}

impl ProtoTx for MdnsTx {
    fn id(&self) -> u64 {
        self.id
    }

    fn progress(&self, dir: Direction) -> Progress {
        if self.dir == dir {
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
        let m = &self.msg;
        fn section(rs: &[DnsRecord], index: usize) -> Option<&[u8]> {
            rs.get(index).map(|r| &r.name.value[..])
        }
        match Buffer::from_id(id)? {
            Buffer::QueriesRrname => m.questions.get(index).map(|q| &q.name.value[..]),
            Buffer::AnswersRrname => section(&m.answers, index),
            Buffer::AuthoritiesRrname => section(&m.authorities, index),
            Buffer::AdditionalsRrname => section(&m.additionals, index),
            Buffer::ResponseRrname if m.header.qr() => {
                // The questions' names, then each record's name and any name its data carries.
                let names = m.questions.iter().map(|q| &q.name.value[..]);
                let records = m.answers.iter().chain(&m.authorities).chain(&m.additionals).flat_map(|r| {
                    let carried = match &r.rdata {
                        RData::Cname(n) | RData::Ns(n) | RData::Ptr(n) | RData::Mx { exchange: n, .. } => Some(&n.value[..]),
                        RData::Srv(s) => Some(&s.target.value[..]),
                        _ => None,
                    };
                    std::iter::once(&r.name.value[..]).chain(carried)
                });
                names.chain(records).nth(index)
            }
            Buffer::ResponseRrname => None,
        }
    }

    fn eve(&self) -> Value {
        let h = &self.msg.header;
        let mut m = Map::new();
        m.insert("type".into(), json!(if h.qr() { "response" } else { "request" }));
        m.insert("id".into(), json!(h.id));
        let flags: Vec<&str> = [(h.aa(), "aa"), (h.tc(), "tc"), (h.rd(), "rd"), (h.ra(), "ra"), (h.z(), "z")]
            .into_iter()
            .filter_map(|(on, name)| on.then_some(name))
            .collect();
        if !flags.is_empty() {
            m.insert("flags".into(), json!(flags));
        }
        m.insert("opcode".into(), json!(h.opcode()));
        m.insert("rcode".into(), json!(h.rcode()));
        let queries: Vec<Value> = self
            .msg
            .questions
            .iter()
            .map(|q| json!({"rrname": json_string(&q.name.value), "rrtype": rrtype_name(q.rrtype).to_ascii_lowercase()}))
            .collect();
        if !queries.is_empty() {
            m.insert("queries".into(), Value::Array(queries));
        }
        for (key, records) in
            [("answers", &self.msg.answers), ("authorities", &self.msg.authorities), ("additionals", &self.msg.additionals)]
        {
            if !records.is_empty() {
                m.insert(key.into(), Value::Array(records_eve(records)));
            }
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

#[derive(Debug)]
pub struct MdnsParser {
    txs: TxQueue<MdnsTx>,
}

impl ProtoParser for MdnsParser {
    fn parse(&mut self, dir: Direction, data: &[u8]) -> ParseResult {
        let Ok(msg) = parse_message(data) else { return ParseResult::Error };
        self.txs.push_with(|id| MdnsTx { id, dir, msg });
        ParseResult::Done
    }

    crate::proto::datagram_txs!(txs);

    fn drain_events(&mut self, _out: &mut Vec<AppEvent>) {}
}

/// `app-layer.protocols.mdns.*`.
pub const SETTINGS: &[SettingDef] = &[SettingDef { key: "max-tx", default: 256, size: false }];

fn new_parser(init: &ParserInit) -> Box<dyn ProtoParser> {
    let max_tx = init.setting(&PROTO, 0).clamp(1, 1 << 16) as usize;
    Box::new(MdnsParser { txs: TxQueue::new(init.first_tx_id, max_tx) })
}

/// A whole DNS message.
fn probe(_dir: Direction, data: &[u8], _cx: ProbeCx) -> Probe {
    if parse_message(data).is_ok() {
        Probe::Match
    } else {
        Probe::NoMatch
    }
}

fn sample() -> Vec<(Direction, Vec<u8>)> {
    let query = b"\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x05_http\x04_tcp\x05local\x00\x00\x0c\x00\x01".to_vec();
    // The answer: a PTR to "web._http._tcp.local", and two TXT strings.
    let mut answer = b"\x00\x00\x84\x00\x00\x00\x00\x02\x00\x00\x00\x00".to_vec();
    answer.extend_from_slice(b"\x05_http\x04_tcp\x05local\x00\x00\x0c\x00\x01\x00\x00\x00\x78\x00\x06\x03web\xc0\x0c");
    answer.extend_from_slice(b"\xc0\x28\x00\x10\x80\x01\x00\x00\x00\x78\x00\x08\x03a=1\x03b=2");
    vec![(Direction::ToServer, query), (Direction::ToClient, answer)]
}

const fn names(name: &'static str, id: Buffer, sides: Sides) -> BufferDef {
    let both_ways = matches!(sides, Sides::Both);
    BufferDef { name, id: id as u8, sides, default: Direction::ToServer, both_ways, need: Progress::Complete, multi: true }
}

pub static PROTO: ProtoDef = ProtoDef {
    name: "mdns",
    eve_name: None,
    detection: Detection { tcp: false, udp: true, ports: &[5353], ports_only: true, probe, counters_by_transport: false, answers_first: None },
    new_parser,
    buffers: &[
        names("mdns.queries.rrname", Buffer::QueriesRrname, Sides::Both),
        names("mdns.answers.rrname", Buffer::AnswersRrname, Sides::Both),
        names("mdns.authorities.rrname", Buffer::AuthoritiesRrname, Sides::Both),
        names("mdns.additionals.rrname", Buffer::AdditionalsRrname, Sides::Both),
        names("mdns.response.rrname", Buffer::ResponseRrname, Sides::Both),
    ],
    checks: &[],
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
    fn records_carry_their_data_under_their_type() {
        let answer = &sample()[1].1;
        let msg = parse_message(answer).unwrap();
        let tx = MdnsTx { id: 0, dir: Direction::ToClient, msg };
        assert_eq!(
            tx.eve(),
            json!({"type": "response", "id": 0, "flags": ["aa"], "opcode": 0, "rcode": 0, "answers": [
                {"rrname": "_http._tcp.local", "ptr": "web._http._tcp.local"},
                {"rrname": "web._http._tcp.local", "txt": ["a=1", "b=2"]},
            ]})
        );
        let all: Vec<&[u8]> = (0..).map_while(|i| tx.buffer(Direction::ToClient, Buffer::ResponseRrname as u8, i)).collect();
        assert_eq!(all, [&b"_http._tcp.local"[..], b"web._http._tcp.local", b"web._http._tcp.local", b"web._http._tcp.local"]);
        assert_eq!(tx.buffer(Direction::ToServer, Buffer::AnswersRrname as u8, 0), None);
    }
}
