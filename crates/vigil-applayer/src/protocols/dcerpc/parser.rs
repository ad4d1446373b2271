//! DCE/RPC over TCP, parsed: PDUs read whole (their header says their
//! length), binds and alter contexts with their acknowledgements, requests
//! and responses paired by call id, their fragments joined. Each PDU's end
//! also asks for raw stream inspection, as Suricata's parser does.

use std::any::Any;

use serde_json::{Map, Value};
use vigil_types::{Direction, PerDir};

use super::pdu::{self, Context, Header};
use super::HEADER_LEN;
use crate::parser::{AppEvent, ParseResult};
use crate::progress::Progress;
use crate::proto::{ParserInit, ProtoParser, ProtoTx, TxQueue};

/// Stub data kept per side of a call; the rest is counted, not kept.
const MAX_STUB: usize = 1 << 20;
/// Stub data the calls of one flow hold together; past it the oldest calls
/// go, unlogged, counted among the evicted transactions.
const FLOW_STUB_BUDGET: usize = 8 << 20;
/// Calls held at once; the oldest go first.
const MAX_TXS: usize = 256;

/// A context of the association and what the server said of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Iface {
    pub ctx: Context,
    /// The bind acknowledgement's result (0: accepted); `None` before it came.
    pub result: Option<u16>,
}

/// One side of a call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Half {
    pub frags: u32,
    pub size: u64,
    pub stub: Vec<u8>,
    pub done: bool,
}

impl Half {
    /// A fragment's stub data, and the size Suricata logs for it (which
    /// counts the authentication trailer, and a response's own header).
    pub(super) fn add(&mut self, stub: &[u8], logged: u64, last: bool) {
        self.frags += 1;
        self.size += logged;
        let room = MAX_STUB.saturating_sub(self.stub.len());
        self.stub.extend_from_slice(&stub[..stub.len().min(room)]);
        self.done |= last;
    }

    pub(super) fn eve(&self) -> Value {
        let mut m = Map::new();
        m.insert("frag_cnt".into(), self.frags.into());
        m.insert("stub_data_size".into(), self.size.into());
        Value::Object(m)
    }

    /// A request's `req` object: its operation, then what [`Half::eve`] says.
    pub(super) fn eve_with_opnum(&self, opnum: u16) -> Value {
        let mut req = Map::new();
        req.insert("opnum".into(), opnum.into());
        if let Value::Object(h) = self.eve() {
            req.extend(h);
        }
        Value::Object(req)
    }
}

/// A call: a bind, an alter context, or a request, with the server's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DcerpcTx {
    id: u64,
    pub call_id: u32,
    pub minor: u8,
    /// The request's PDU type; `None`: its response came without it.
    pub kind: Option<u8>,
    pub context: u16,
    pub opnum: u16,
    pub req: Half,
    pub res: Half,
    /// The answer's PDU type.
    pub answer: Option<u8>,
    /// The interfaces of the association as this call saw them (a bind's
    /// own, a request's context's).
    pub ifaces: Vec<Iface>,
    /// The session ended before the answer.
    pub ended: bool,
    /// The request's data representation was little-endian.
    pub little: bool,
}

fn kind_name(t: Option<u8>) -> &'static str {
    match t {
        Some(pdu::REQUEST) => "REQUEST",
        Some(pdu::BIND) => "BIND",
        Some(pdu::ALTER_CONTEXT) => "ALTER_CONTEXT",
        Some(_) => "UNKNOWN",
        None => "REQUEST_LOST",
    }
}

fn answer_name(t: Option<u8>) -> &'static str {
    match t {
        Some(pdu::RESPONSE) => "RESPONSE",
        Some(pdu::BIND_ACK) => "BINDACK",
        Some(pdu::BIND_NAK) => "BINDNAK",
        Some(pdu::ALTER_CONTEXT_RESP) => "ALTER_CONTEXT_RESP",
        Some(pdu::FAULT) => "FAULT",
        _ => "UNREPLIED",
    }
}

impl DcerpcTx {
    fn request_done(&self) -> bool {
        self.kind.is_none() || self.kind != Some(pdu::REQUEST) || self.req.done || self.ended
    }

    fn answered(&self) -> bool {
        self.res.done || self.ended
    }
}

impl ProtoTx for DcerpcTx {
    fn id(&self) -> u64 {
        self.id
    }

    fn progress(&self, dir: Direction) -> Progress {
        super::side_progress(match dir {
            Direction::ToServer => self.request_done(),
            Direction::ToClient => self.answered(),
        })
    }

    fn buffer(&self, dir: Direction, id: u8, index: usize) -> Option<&[u8]> {
        super::stub_buffer(&self.req.stub, &self.res.stub, dir, id, index)
    }

    fn eve(&self) -> Value {
        let mut m = Map::new();
        m.insert("request".into(), kind_name(self.kind).into());
        if self.kind == Some(pdu::REQUEST) {
            m.insert("req".into(), self.req.eve_with_opnum(self.opnum));
        }
        if matches!(self.kind, Some(pdu::REQUEST | pdu::BIND)) && !self.ifaces.is_empty() {
            let list = self
                .ifaces
                .iter()
                .map(|i| {
                    let mut o = Map::new();
                    o.insert("uuid".into(), pdu::uuid_text(&i.ctx.uuid).into());
                    o.insert("version".into(), format!("{}.{}", i.ctx.major, i.ctx.minor).into());
                    if let Some(r) = i.result {
                        o.insert("ack_result".into(), r.into());
                    }
                    Value::Object(o)
                })
                .collect();
            m.insert("interfaces".into(), Value::Array(list));
        }
        m.insert("response".into(), answer_name(self.answer).into());
        if self.answer == Some(pdu::RESPONSE) {
            m.insert("res".into(), self.res.eve());
        }
        m.insert("call_id".into(), self.call_id.into());
        m.insert("rpc_version".into(), format!("5.{}", self.minor).into());
        Value::Object(m)
    }

    fn finished(&self) -> bool {
        self.request_done() && self.answered()
    }

    fn dce_little_endian(&self) -> bool {
        self.little
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[derive(Debug)]
pub struct DcerpcParser {
    txs: TxQueue<DcerpcTx>,
    /// The association's contexts, from binds and alter contexts.
    ifaces: Vec<Iface>,
    /// The contexts the last bind or alter context proposed, for its answer.
    proposed: Vec<Context>,
    /// Whether the answer to them makes them the association's.
    proposed_binds: bool,
    /// A PDU ended on the side since the trigger was last taken.
    ended: PerDir<bool>,
    closed: PerDir<bool>,
    /// A gap left the side's PDU boundaries unknown: the next header is looked for.
    resync: PerDir<bool>,
    /// At least the stub bytes the held calls keep.
    held: usize,
}

impl DcerpcParser {
    pub(crate) fn boxed(init: &ParserInit) -> Box<dyn ProtoParser> {
        Box::new(DcerpcParser {
            txs: TxQueue::new(init.first_tx_id, MAX_TXS),
            ifaces: Vec::new(),
            proposed: Vec::new(),
            proposed_binds: false,
            ended: PerDir::default(),
            closed: PerDir::default(),
            resync: PerDir::default(),
            held: 0,
        })
    }

    fn open(&mut self, h: &Header, kind: Option<u8>) -> usize {
        self.txs.push_with(|id| DcerpcTx {
            id,
            call_id: h.call_id,
            minor: h.minor,
            kind,
            context: 0,
            opnum: 0,
            req: Half::default(),
            res: Half::default(),
            answer: None,
            ifaces: Vec::new(),
            ended: false,
            little: h.little,
        })
    }

    /// The call `call_id` still waiting for its answer.
    fn waiting(&self, call_id: u32) -> Option<usize> {
        self.txs.iter().rposition(|t| t.call_id == call_id && !t.res.done && t.kind.is_some())
    }

    fn pdu(&mut self, dir: Direction, h: Header, b: &[u8]) {
        let first = h.flags & pdu::FIRST_FRAG != 0;
        let last = h.flags & pdu::LAST_FRAG != 0;
        match (dir, h.ptype) {
            (Direction::ToServer, pdu::BIND | pdu::ALTER_CONTEXT) => {
                let contexts = pdu::bind(&h, b).unwrap_or_default();
                let at = self.open(&h, Some(h.ptype));
                if h.ptype == pdu::BIND {
                    // A new association: its contexts replace the old ones.
                    self.ifaces.clear();
                    self.txs[at].ifaces = contexts.iter().map(|&ctx| Iface { ctx, result: None }).collect();
                }
                self.txs[at].req.done = true;
                self.proposed = contexts;
                // A bind that is not a first fragment is logged but binds nothing
                // the requests that follow are matched through (Suricata 8.0.5 on).
                self.proposed_binds = first;
            }
            (Direction::ToServer, pdu::REQUEST) => {
                let Some(r) = pdu::request(&h, b) else { return };
                let open = self.txs.iter().rposition(|t| t.call_id == h.call_id && t.kind == Some(pdu::REQUEST) && !t.req.done);
                let at = match open {
                    Some(at) if !first => at,
                    _ => {
                        let at = self.open(&h, Some(pdu::REQUEST));
                        let tx = &mut self.txs[at];
                        tx.context = r.context;
                        tx.opnum = r.opnum;
                        tx.ifaces = self.ifaces.iter().filter(|i| i.ctx.id == r.context).copied().take(1).collect();
                        at
                    }
                };
                // Suricata counts everything after the request's eight-byte header (an object UUID too).
                let logged = u64::from(h.frag_len).saturating_sub(HEADER_LEN as u64 + 8);
                self.txs[at].req.add(r.stub, logged, last);
            }
            (Direction::ToClient, pdu::BIND_ACK | pdu::BIND_NAK | pdu::ALTER_CONTEXT_RESP) => {
                let results = if h.ptype == pdu::BIND_NAK { Vec::new() } else { pdu::bind_ack(&h, b).unwrap_or_default() };
                let answered: Vec<Iface> =
                    self.proposed.iter().zip(results.iter().map(|r| Some(r.0)).chain(std::iter::repeat(None))).map(|(&ctx, result)| Iface { ctx, result }).collect();
                for i in answered.iter().filter(|_| self.proposed_binds) {
                    self.ifaces.retain(|o| o.ctx.id != i.ctx.id);
                    if self.ifaces.len() < 256 {
                        self.ifaces.push(*i);
                    }
                }
                let at = match self.waiting(h.call_id) {
                    Some(at) => at,
                    None => self.open(&h, None),
                };
                let tx = &mut self.txs[at];
                if tx.kind == Some(pdu::BIND) {
                    tx.ifaces = answered;
                }
                tx.answer = Some(h.ptype);
                tx.res.done = true;
            }
            (Direction::ToClient, pdu::RESPONSE | pdu::FAULT) => {
                let at = match self.waiting(h.call_id) {
                    Some(at) => at,
                    None => self.open(&h, None),
                };
                let tx = &mut self.txs[at];
                tx.answer = Some(h.ptype);
                if h.ptype == pdu::RESPONSE {
                    let stub = pdu::response(&h, b).unwrap_or_default();
                    tx.res.add(stub, u64::from(h.frag_len).saturating_sub(HEADER_LEN as u64), last);
                } else {
                    tx.res.done = true;
                }
                // An answer ends the request's side whatever its fragments said.
                tx.req.done = true;
            }
            _ => {}
        }
        // An upper bound kept as stub bytes come; only past the budget are the calls weighed.
        self.held += b.len();
        self.txs.keep_within(&mut self.held, FLOW_STUB_BUDGET, |t| t.req.stub.len() + t.res.stub.len(), |_| {});
    }
}

impl ProtoParser for DcerpcParser {
    fn parse(&mut self, dir: Direction, data: &[u8]) -> ParseResult {
        let mut at = 0;
        if *self.resync.get(dir) {
            // The first place a PDU header fits, as the probe judges one.
            match (0..data.len()).find(|&i| super::probe_tcp(&data[i..]) == crate::proto::Probe::Match) {
                Some(i) => {
                    at = i;
                    *self.resync.get_mut(dir) = false;
                }
                None => return ParseResult::Done,
            }
        }
        while at < data.len() {
            let rest = &data[at..];
            if rest.len() < HEADER_LEN {
                return ParseResult::Incomplete { consumed: at, needed: HEADER_LEN - rest.len() };
            }
            let Some(h) = pdu::header(rest).filter(|h| usize::from(h.frag_len) >= HEADER_LEN) else {
                return ParseResult::Error;
            };
            let len = usize::from(h.frag_len);
            if rest.len() < len {
                return ParseResult::Incomplete { consumed: at, needed: len - rest.len() };
            }
            self.pdu(dir, h, &rest[..len]);
            // Suricata 8.0.6 reads a request's or response's stub on into
            // what follows it in the same delivery, and takes more bytes
            // there than the PDU's own after its header for a parse error:
            // the flow's DCE/RPC is read no further (seen with each such
            // delivery on its oracle, and in the fragments of realistic-a).
            let after = rest.len() - len;
            if matches!(h.ptype, pdu::REQUEST | pdu::RESPONSE) && after > len - HEADER_LEN {
                return ParseResult::Error;
            }
            *self.ended.get_mut(dir) = true;
            at += len;
        }
        ParseResult::Done
    }

    /// Where the next PDU starts is unknown: it is looked for in what follows.
    fn on_gap(&mut self, dir: Direction, _len: u64) -> bool {
        *self.resync.get_mut(dir) = true;
        true
    }

    fn close(&mut self, dir: Direction, _held: &[u8]) {
        *self.closed.get_mut(dir) = true;
        // The server may still answer what the client sent before it closed.
        if self.closed.to_server && self.closed.to_client {
            for t in self.txs.iter_mut() {
                t.ended = true;
            }
        }
    }

    crate::proto::delegate_txs!(txs);

    fn prune(&mut self, id: u64) {
        self.txs.prune_while(id, |t| t.finished());
    }

    fn drain_events(&mut self, _out: &mut Vec<AppEvent>) {}

    fn take_raw_trigger(&mut self, dir: Direction) -> bool {
        std::mem::take(self.ended.get_mut(dir))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{AppConfig, Transport};
    use Direction::{ToClient, ToServer};

    fn parser() -> Box<dyn ProtoParser> {
        let app = AppConfig::default();
        let init = ParserInit { app: &app, transport: Transport::Tcp, first_tx_id: 0, options: 0, settings: &[], expected: None, client: None };
        DcerpcParser::boxed(&init)
    }

    #[test]
    fn a_bind_and_a_call_are_logged_as_suricata_logs_them() {
        let mut p = parser();
        for (dir, data) in super::super::sample() {
            assert_eq!(p.parse(dir, &data), ParseResult::Done);
            assert!(p.take_raw_trigger(dir));
        }
        let bind = p.tx(0).unwrap().eve();
        assert_eq!(
            bind,
            serde_json::json!({"request": "BIND", "interfaces": [{"uuid": "e1af8308-5d1f-11c9-91a4-08002b14a0fa",
                "version": "3.0", "ack_result": 0}], "response": "BINDACK", "call_id": 1, "rpc_version": "5.0"})
        );
        let call = p.tx(1).unwrap();
        let e = call.eve();
        assert_eq!(e["req"], serde_json::json!({"opnum": 3, "frag_cnt": 1, "stub_data_size": 8}));
        assert_eq!(e["interfaces"][0]["uuid"], "e1af8308-5d1f-11c9-91a4-08002b14a0fa");
        // Suricata counts a response's own eight-byte header in its size.
        assert_eq!(e["res"], serde_json::json!({"frag_cnt": 1, "stub_data_size": 16}));
        assert_eq!(call.buffer(ToServer, 0, 0), Some(&b"ABCDEFGH"[..]));
        assert_eq!(call.buffer(ToClient, 0, 0), Some(&b"abcdefgh"[..]));
    }

    #[test]
    fn fragments_join_and_strays_are_named() {
        let mut p = parser();
        let frag = |flags: u8, ptype: u8, call: u8, stub: &[u8]| {
            let mut b = vec![5, 0, ptype, flags, 0x10, 0, 0, 0];
            b.extend_from_slice(&((16 + 8 + stub.len()) as u16).to_le_bytes());
            b.extend_from_slice(&[0, 0, call, 0, 0, 0]);
            b.extend_from_slice(&[0, 0, 0, 0, 0, 0, 7, 0]);
            b.extend_from_slice(stub);
            b
        };
        // Each fragment delivered on its own.
        for f in [frag(1, 0, 5, b"one-"), frag(0, 0, 5, b"two-"), frag(2, 0, 5, b"three")] {
            assert_eq!(p.parse(ToServer, &f), ParseResult::Done);
        }
        p.parse(ToClient, &frag(3, 2, 9, b"lost"));
        let e = p.tx(0).unwrap().eve();
        assert_eq!(e["req"], serde_json::json!({"opnum": 7, "frag_cnt": 3, "stub_data_size": 13}));
        assert_eq!(p.tx(0).unwrap().buffer(ToServer, 0, 0), Some(&b"one-two-three"[..]));
        assert_eq!(p.tx(1).unwrap().eve()["request"], "REQUEST_LOST");
        p.close(ToServer, &[]);
        p.close(ToClient, &[]);
        assert_eq!(p.tx(0).unwrap().eve()["response"], "UNREPLIED");
        assert_eq!(p.parse(ToServer, &[4, 0, 0, 3, 0x10, 0, 0, 0, 16, 0, 0, 0, 1, 0, 0, 0]), ParseResult::Error);
    }

    #[test]
    fn a_call_pdu_followed_by_more_than_itself_is_suricatas_parse_error() {
        let frag = |flags: u8, call: u8, stub: &[u8]| {
            let mut b = vec![5, 0, 0, flags, 0x10, 0, 0, 0];
            b.extend_from_slice(&((16 + 8 + stub.len()) as u16).to_le_bytes());
            b.extend_from_slice(&[0, 0, call, 0, 0, 0]);
            b.extend_from_slice(&[0, 0, 0, 0, 0, 0, 7, 0]);
            b.extend_from_slice(stub);
            b
        };
        let (one, two) = (frag(3, 1, &[b'a'; 40]), frag(3, 2, &[b'b'; 40]));
        // The first request is read, then the second, whole behind it, is
        // the error: the flow is read no further.
        let mut p = parser();
        assert_eq!(p.parse(ToServer, &[one.clone(), two.clone()].concat()), ParseResult::Error);
        assert_eq!(p.tx_count(), 1);
        // A part of the next one behind it is kept for the next delivery.
        let mut p = parser();
        let both = [one.clone(), two.clone()].concat();
        let cut = one.len() + 20;
        assert_eq!(p.parse(ToServer, &both[..cut]), ParseResult::Incomplete { consumed: one.len(), needed: 44 });
        assert_eq!(p.parse(ToServer, &both[one.len()..]), ParseResult::Done);
        assert_eq!(p.tx_count(), 2);
    }

    #[test]
    fn a_bind_that_is_no_first_fragment_binds_nothing() {
        for (flags, bound) in [(3u8, true), (0, false)] {
            let mut p = parser();
            for (dir, mut data) in super::super::sample() {
                if data[2] == pdu::BIND {
                    data[3] = flags;
                }
                p.parse(dir, &data);
            }
            // Logged alike, the acknowledgement's result included.
            assert_eq!(p.tx(0).unwrap().eve()["interfaces"][0]["ack_result"], 0);
            let call = p.tx(1).unwrap().as_any().downcast_ref::<DcerpcTx>().unwrap();
            assert_eq!(call.ifaces.len(), usize::from(bound), "flags {flags}");
        }
    }

    #[test]
    fn unanswered_calls_are_dropped_past_the_flows_budget() {
        let mut p = DcerpcParser { txs: TxQueue::new(0, MAX_TXS), ifaces: Vec::new(), proposed: Vec::new(), proposed_binds: false,
            ended: PerDir::default(), closed: PerDir::default(), resync: PerDir::default(), held: 0 };
        // Requests of 60,000 stub bytes each, never answered.
        for call in 0..200u32 {
            let mut b = vec![5, 0, 0, 3, 0x10, 0, 0, 0];
            b.extend_from_slice(&(24u16 + 60_000).to_le_bytes());
            b.extend_from_slice(&[0, 0]);
            b.extend_from_slice(&call.to_le_bytes());
            b.extend_from_slice(&[0; 8]);
            b.resize(24 + 60_000, 0x41);
            assert_eq!(p.parse(ToServer, &b), ParseResult::Done);
        }
        let kept: usize = p.txs.iter().map(|t| t.req.stub.len()).sum();
        assert!(kept <= FLOW_STUB_BUDGET, "{kept}");
        assert!(p.txs_evicted() > 0);
    }
}
