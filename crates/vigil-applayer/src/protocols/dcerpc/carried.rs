//! DCE/RPC calls another protocol carries (SMB's named pipes): a PDU
//! written to a pipe (a write, an `FSCTL_PIPE_TRANSCEIVE`, an SMB1 pipe
//! transaction) opens a call, which the PDU read back answers, found by
//! its call id. The PDUs are read by [`super::pdu`], as over TCP. A call
//! is a transaction of its own to rules written for DCE/RPC
//! ([`crate::proto::ProtoTx::carried`]): `dcerpc.iface`, `dcerpc.opnum` and
//! `dcerpc.stub_data` run on it.

use std::any::Any;

use serde_json::{Map, Value};
use vigil_types::Direction;

use super::pdu::{self, Context, Header};
use super::HEADER_LEN;
use crate::progress::Progress;
use crate::proto::ProtoTx;

/// Stub bytes kept per side of a call.
const MAX_STUB: usize = 1 << 20;
/// Contexts an association keeps.
const MAX_BOUND: usize = 64;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Half {
    pub frags: u32,
    pub size: u64,
    pub stub: Vec<u8>,
}

impl Half {
    fn add(&mut self, stub: &[u8], logged: u64) {
        self.frags += 1;
        self.size += logged;
        let room = MAX_STUB.saturating_sub(self.stub.len());
        self.stub.extend_from_slice(&stub[..stub.len().min(room)]);
    }
}

/// A context of the pipe's association, and the server's result and reason for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bound {
    pub ctx: Context,
    pub ack: Option<(u16, u16)>,
}

/// A call through a pipe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// The carrier's transaction id.
    pub id: u64,
    pub kind: u8,
    pub call_id: u32,
    pub opnum: u16,
    pub little: bool,
    /// A bind's contexts with their results; a request's context's interface.
    pub ifaces: Vec<Bound>,
    pub req: Half,
    pub res: Half,
    pub answer: Option<u8>,
}

/// Whether `data` starts like a connection-oriented DCE/RPC PDU.
pub fn looks_like_pdu(data: &[u8]) -> bool {
    data.len() >= HEADER_LEN && pdu::header(data).is_some_and(|h| h.ptype <= 20 && usize::from(h.frag_len) >= HEADER_LEN)
}

/// The PDUs in `data`, each whole (a PDU cut short is left out).
fn pdus(mut data: &[u8]) -> impl Iterator<Item = (Header, &[u8])> {
    std::iter::from_fn(move || {
        let h = pdu::header(data).filter(|h| usize::from(h.frag_len) >= HEADER_LEN)?;
        let len = usize::from(h.frag_len).min(data.len());
        let (p, rest) = data.split_at(len);
        data = rest;
        Some((h, p))
    })
}

/// The call the first PDU of `data` written to a pipe opens; `bound`: the
/// association's contexts so far.
pub fn open(data: &[u8], bound: &[Bound]) -> Option<Call> {
    let (h, p) = pdus(data).next()?;
    let mut call = Call { id: 0, kind: h.ptype, call_id: h.call_id, opnum: 0, little: h.little, ifaces: Vec::new(), req: Half::default(), res: Half::default(), answer: None };
    match h.ptype {
        pdu::BIND | pdu::ALTER_CONTEXT => {
            let ctxs = pdu::bind(&h, p)?;
            call.ifaces = ctxs.iter().map(|&ctx| Bound { ctx, ack: None }).collect();
            Some(call)
        }
        pdu::REQUEST => {
            let r = pdu::request(&h, p)?;
            call.opnum = r.opnum;
            call.ifaces = bound.iter().filter(|b| b.ctx.id == r.context).take(1).map(|b| Bound { ctx: b.ctx, ack: None }).collect();
            call.req.add(r.stub, u64::from(h.frag_len).saturating_sub(HEADER_LEN as u64 + 8));
            Some(call)
        }
        // Any other PDU written (an AUTH3, a shutdown) is a call too, as Suricata logs it.
        _ => Some(call),
    }
}

/// The call ids of the answers in `data` read from a pipe.
pub fn answer_ids(data: &[u8]) -> Vec<u32> {
    pdus(data).filter(|(h, _)| matches!(h.ptype, pdu::RESPONSE | pdu::BIND_ACK | pdu::BIND_NAK | pdu::ALTER_CONTEXT_RESP | pdu::FAULT)).map(|(h, _)| h.call_id).collect()
}

impl Call {
    /// Reads the answers in `data` to this call; the contexts a bind's
    /// answer accepted are added to `bound`.
    pub fn answer(&mut self, data: &[u8], bound: &mut Vec<Bound>) {
        for (h, p) in pdus(data).filter(|(h, _)| h.call_id == self.call_id) {
            match h.ptype {
                pdu::BIND_ACK | pdu::ALTER_CONTEXT_RESP => {
                    let acks = pdu::bind_ack(&h, p).unwrap_or_default();
                    for (b, ack) in self.ifaces.iter_mut().zip(acks) {
                        b.ack = Some(ack);
                        if ack.0 == 0 {
                            bound.retain(|o| o.ctx.id != b.ctx.id);
                            if bound.len() < MAX_BOUND {
                                bound.push(*b);
                            }
                        }
                    }
                    self.answer = Some(h.ptype);
                }
                pdu::RESPONSE => {
                    let stub = pdu::response(&h, p).unwrap_or_default();
                    // Through a pipe Suricata counts a response's stub as a request's, past its eight-byte header.
                    self.res.add(stub, u64::from(h.frag_len).saturating_sub(HEADER_LEN as u64 + 8));
                    self.answer = Some(h.ptype);
                }
                pdu::BIND_NAK | pdu::FAULT => self.answer = Some(h.ptype),
                _ => {}
            }
        }
    }

    pub fn eve(&self) -> Value {
        let mut m = Map::new();
        let request = match self.kind {
            pdu::REQUEST => "REQUEST",
            pdu::BIND => "BIND",
            pdu::ALTER_CONTEXT => "ALTER_CONTEXT",
            16 => "AUTH3",
            17 => "SHUTDOWN",
            18 => "CO_CANCEL",
            19 => "ORPHANED",
            20 => "RTS",
            _ => "UNKNOWN",
        };
        m.insert("request".into(), request.into());
        let response = match self.answer {
            Some(pdu::RESPONSE) => "RESPONSE",
            Some(pdu::BIND_ACK) => "BINDACK",
            Some(pdu::BIND_NAK) => "BINDNAK",
            Some(pdu::ALTER_CONTEXT_RESP) => "ALTER_CONTEXT_RESP",
            Some(pdu::FAULT) => "FAULT",
            _ => "UNREPLIED",
        };
        m.insert("response".into(), response.into());
        let half = |h: &Half| {
            let mut o = Map::new();
            o.insert("frag_cnt".into(), h.frags.into());
            o.insert("stub_data_size".into(), h.size.into());
            Value::Object(o)
        };
        if self.kind == pdu::REQUEST {
            m.insert("opnum".into(), self.opnum.into());
            m.insert("req".into(), half(&self.req));
        }
        // An alter context's interfaces are not logged.
        if !self.ifaces.is_empty() && self.kind != pdu::ALTER_CONTEXT {
            let list = self
                .ifaces
                .iter()
                .map(|b| {
                    let mut o = Map::new();
                    o.insert("uuid".into(), pdu::uuid_text(&b.ctx.uuid).into());
                    o.insert("version".into(), format!("{}.{}", b.ctx.major, b.ctx.minor).into());
                    if let (Some((result, reason)), false) = (b.ack, self.kind == pdu::REQUEST) {
                        o.insert("ack_result".into(), result.into());
                        // Suricata 8 writes 0 here whatever reason the answer gives.
                        let _ = reason;
                        o.insert("ack_reason".into(), 0.into());
                    }
                    Value::Object(o)
                })
                .collect();
            m.insert("interfaces".into(), Value::Array(list));
        }
        if self.answer == Some(pdu::RESPONSE) {
            m.insert("res".into(), half(&self.res));
        }
        m.insert("call_id".into(), self.call_id.into());
        Value::Object(m)
    }
}

impl ProtoTx for Call {
    fn id(&self) -> u64 {
        self.id
    }

    fn progress(&self, dir: Direction) -> Progress {
        match dir {
            Direction::ToClient if self.answer.is_none() => Progress::Headers,
            _ => Progress::Complete,
        }
    }

    fn buffer(&self, dir: Direction, id: u8, index: usize) -> Option<&[u8]> {
        super::stub_buffer(&self.req.stub, &self.res.stub, dir, id, index)
    }

    fn eve(&self) -> Value {
        Call::eve(self)
    }

    fn dce_little_endian(&self) -> bool {
        self.little
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
