//! DCE/RPC over UDP, the connectionless protocol (C706 chapter 12): each
//! datagram an 80-byte header naming its interface, activity, sequence
//! number and operation, then its body. A request and its response share
//! activity and sequence number; their fragments are joined in the order
//! they come. Each call is a transaction, logged as EVE `dcerpc` as
//! Suricata writes it (activity UUID, sequence number, version 4.0).
//! Datagrams of the other kinds (ping, working, fault, acknowledgements)
//! are counted as parser errors, as Suricata counts them.

use std::any::Any;

use serde_json::{Map, Value};
use vigil_types::Direction;

use super::parser::Half;
use super::pdu::{self, Context, Reader};
use crate::parser::{AppEvent, ParseResult};
use crate::progress::Progress;
use crate::proto::{ParserInit, ProtoParser, ProtoTx, TxQueue};

pub const HEADER_LEN: usize = 80;
/// Packet types of the connectionless protocol go up to cancel_ack (10).
const MAX_TYPE: u8 = 10;
const FRAG: u8 = 0x04;
const LAST_FRAG: u8 = 0x02;
/// Calls held at once; the oldest go first.
const MAX_TXS: usize = 256;
/// Stub data the calls of one flow hold together.
const FLOW_STUB_BUDGET: usize = 8 << 20;

/// A connectionless header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClHeader {
    pub ptype: u8,
    pub flags: u8,
    pub little: bool,
    pub iface: [u8; 16],
    /// The activity as sent: Suricata writes it as if little-endian, whatever the data representation says.
    pub activity: [u8; 16],
    pub if_major: u16,
    pub seqnum: u32,
    pub opnum: u16,
    pub body_len: u16,
}

/// Reads the header at the start of a datagram.
pub fn header(b: &[u8]) -> Option<ClHeader> {
    if b.len() < HEADER_LEN || b[0] != 4 || b[1] > MAX_TYPE {
        return None;
    }
    let little = b[4] & 0x10 != 0;
    let mut r = Reader::at(b, 24, little);
    let iface = r.uuid()?;
    let mut activity = [0u8; 16];
    activity.copy_from_slice(&b[40..56]);
    let mut r = Reader::at(b, 56, little);
    let _server_boot = r.u32()?;
    let if_vers = r.u32()?;
    let seqnum = r.u32()?;
    let opnum = r.u16()?;
    let _hints = (r.u16()?, r.u16()?);
    let body_len = r.u16()?;
    // The major version is the low half of the interface version.
    Some(ClHeader { ptype: b[1], flags: b[2], little, iface, activity, if_major: if_vers as u16, seqnum, opnum, body_len })
}

/// The activity's text form, its first three fields read little-endian, as Suricata writes it.
fn activity_text(a: &[u8; 16]) -> String {
    let mut u = *a;
    u[0..4].reverse();
    u[4..6].reverse();
    u[6..8].reverse();
    pdu::uuid_text(&u)
}

/// A connectionless call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UdpCall {
    id: u64,
    pub activity: [u8; 16],
    pub seqnum: u32,
    pub opnum: u16,
    pub iface: Context,
    /// A request fragment came (not only a response).
    pub requested: bool,
    pub req: Half,
    pub res: Half,
    pub little: bool,
}

impl ProtoTx for UdpCall {
    fn id(&self) -> u64 {
        self.id
    }

    fn progress(&self, dir: Direction) -> Progress {
        super::side_progress(match dir {
            Direction::ToServer => self.req.done,
            Direction::ToClient => self.res.done,
        })
    }

    fn buffer(&self, dir: Direction, id: u8, index: usize) -> Option<&[u8]> {
        super::stub_buffer(&self.req.stub, &self.res.stub, dir, id, index)
    }

    fn eve(&self) -> Value {
        let mut m = Map::new();
        if self.req.done {
            m.insert("request".into(), "REQUEST".into());
            m.insert("req".into(), self.req.eve_with_opnum(self.opnum));
        } else {
            m.insert("request".into(), "REQUEST_LOST".into());
        }
        if self.res.done {
            m.insert("response".into(), "RESPONSE".into());
            m.insert("res".into(), self.res.eve());
        } else {
            m.insert("response".into(), "UNREPLIED".into());
        }
        m.insert("activityuuid".into(), activity_text(&self.activity).into());
        m.insert("seqnum".into(), self.seqnum.into());
        m.insert("rpc_version".into(), "4.0".into());
        Value::Object(m)
    }

    fn record_dir(&self) -> Direction {
        Direction::ToServer
    }

    fn dce_little_endian(&self) -> bool {
        self.little
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[derive(Debug)]
pub struct DcerpcUdpParser {
    txs: TxQueue<UdpCall>,
    /// At least the stub bytes the held calls keep.
    held: usize,
}

impl DcerpcUdpParser {
    pub(crate) fn boxed(init: &ParserInit) -> Box<dyn ProtoParser> {
        Box::new(DcerpcUdpParser { txs: TxQueue::new(init.first_tx_id, MAX_TXS), held: 0 })
    }
}

impl ProtoParser for DcerpcUdpParser {
    fn parse(&mut self, _dir: Direction, data: &[u8]) -> ParseResult {
        let Some(h) = header(data) else { return ParseResult::Error };
        let Some(body) = data.get(HEADER_LEN..HEADER_LEN + usize::from(h.body_len)) else { return ParseResult::Error };
        let request = match h.ptype {
            pdu::REQUEST => true,
            pdu::RESPONSE => false,
            _ => return ParseResult::Error,
        };
        // The call this fragment goes on: its activity and sequence number, that side not yet done.
        let open = self.txs.iter().rposition(|t| {
            t.activity == h.activity && t.seqnum == h.seqnum && !(if request { t.req.done } else { t.res.done })
        });
        let at = match open {
            Some(at) => at,
            None => self.txs.push_with(|id| UdpCall {
                id,
                activity: h.activity,
                seqnum: h.seqnum,
                opnum: h.opnum,
                iface: Context { id: 0, uuid: h.iface, major: h.if_major, minor: 0 },
                requested: false,
                req: Half::default(),
                res: Half::default(),
                little: h.little,
            }),
        };
        let last = h.flags & FRAG == 0 || h.flags & LAST_FRAG != 0;
        let tx = &mut self.txs[at];
        if request {
            if !tx.requested {
                (tx.opnum, tx.iface.uuid, tx.iface.major) = (h.opnum, h.iface, h.if_major);
            }
            tx.requested = true;
            tx.req.add(body, body.len() as u64, last);
        } else {
            tx.res.add(body, body.len() as u64, last);
        }
        self.held += body.len();
        self.txs.keep_within(&mut self.held, FLOW_STUB_BUDGET, |t| t.req.stub.len() + t.res.stub.len(), |_| {});
        ParseResult::Done
    }

    crate::proto::datagram_txs!(txs);

    fn drain_events(&mut self, _out: &mut Vec<AppEvent>) {}
}

/// A datagram that reads as a connectionless request (to the server) or
/// response (to the client): a flow that starts with an answer is not
/// taken, as Suricata does not take it.
pub fn probe(dir: Direction, data: &[u8]) -> bool {
    let wanted = match dir {
        Direction::ToServer => pdu::REQUEST,
        Direction::ToClient => pdu::RESPONSE,
    };
    header(data).is_some_and(|h| {
        h.ptype == wanted
            && data[4] & 0xee == 0
            && HEADER_LEN + usize::from(h.body_len) <= data.len()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{AppConfig, Transport};
    use Direction::ToServer;

    /// A datagram: type, flags, little-endian or not, activity byte, sequence number, opnum, body.
    pub(crate) fn datagram(ptype: u8, flags: u8, little: bool, act: u8, seq: u32, opnum: u16, body: &[u8]) -> Vec<u8> {
        let w16 = |v: u16| if little { v.to_le_bytes() } else { v.to_be_bytes() };
        let w32 = |v: u32| if little { v.to_le_bytes() } else { v.to_be_bytes() };
        let mut d = vec![4, ptype, flags, 0, if little { 0x10 } else { 0 }, 0, 0, 0];
        d.extend([0x11; 16]);
        // The interface 12345778-1234-abcd-ef00-0123456789ab, in the datagram's byte order.
        d.extend(w32(0x1234_5778));
        d.extend(w16(0x1234));
        d.extend(w16(0xabcd));
        d.extend([0xef, 0x00, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab]);
        d.extend([0x4e, 0x32, 0xdc, 0xdd, 0xd8, 0x03, 0x4e, 0xaf, 0x86, 0xee, 0x76, 0x50, 0xdf, 0x59, 0x9e, act]);
        d.extend(w32(0));
        d.extend(w32(1));
        d.extend(w32(seq));
        d.extend(w16(opnum));
        d.extend(w16(0xffff));
        d.extend(w16(0xffff));
        d.extend(w16(body.len() as u16));
        d.extend(w16(0));
        d.extend([0, 0]);
        d.extend_from_slice(body);
        d
    }

    fn parser() -> Box<dyn ProtoParser> {
        let app = AppConfig::default();
        DcerpcUdpParser::boxed(&ParserInit { app: &app, transport: Transport::Udp, first_tx_id: 0, options: 0, settings: &[], expected: None, client: None })
    }

    #[test]
    fn a_call_and_its_answer_are_logged_as_suricata_logs_them() {
        let mut p = parser();
        let req = datagram(0, 0x01, false, 0x40, 0, 4, b"ABCD");
        assert!(probe(ToServer, &req));
        assert!(!probe(ToServer, &datagram(2, 0x01, false, 0x40, 0, 4, b"")), "an answer first");
        assert_eq!(p.parse(ToServer, &req), ParseResult::Done);
        assert_eq!(p.parse(ToServer, &datagram(2, 0x01, false, 0x40, 0, 4, b"abcdef")), ParseResult::Done);
        assert_eq!(p.tx_count(), 1);
        assert_eq!(
            p.tx(0).unwrap().eve(),
            serde_json::json!({"request": "REQUEST", "req": {"opnum": 4, "frag_cnt": 1, "stub_data_size": 4},
                "response": "RESPONSE", "res": {"frag_cnt": 1, "stub_data_size": 6},
                "activityuuid": "dddc324e-03d8-af4e-86ee-7650df599e40", "seqnum": 0, "rpc_version": "4.0"})
        );
        let call = p.tx(0).unwrap().as_any().downcast_ref::<UdpCall>().unwrap();
        assert_eq!(pdu::uuid_text(&call.iface.uuid), "12345778-1234-abcd-ef00-0123456789ab");
        assert_eq!((call.iface.major, call.little), (1, false));
    }

    #[test]
    fn fragments_join_and_other_kinds_are_errors() {
        let mut p = parser();
        // Little-endian, in two fragments, then another call of the same activity.
        p.parse(ToServer, &datagram(0, FRAG, true, 1, 7, 9, b"one-"));
        p.parse(ToServer, &datagram(0, FRAG | LAST_FRAG, true, 1, 7, 9, b"two"));
        p.parse(ToServer, &datagram(0, 0, true, 1, 8, 9, b"x"));
        assert_eq!(p.tx_count(), 2);
        let first = p.tx(0).unwrap();
        assert_eq!(first.buffer(ToServer, 0, 0), Some(&b"one-two"[..]));
        assert_eq!(first.eve()["req"]["frag_cnt"], 2);
        assert_eq!(first.eve()["response"], "UNREPLIED");
        assert!(first.dce_little_endian());
        // A ping, a datagram too short for its body, and one of version 5.
        assert_eq!(p.parse(ToServer, &datagram(1, 0, true, 1, 9, 0, b"")), ParseResult::Error);
        let mut short = datagram(0, 0, true, 1, 9, 0, b"abc");
        short.truncate(82);
        assert_eq!(p.parse(ToServer, &short), ParseResult::Error);
        assert!(!probe(ToServer, &short));
        assert!(!probe(ToServer, &[5; 100]));
        // A response alone: its request was lost.
        p.parse(ToServer, &datagram(2, 0, true, 2, 1, 0, b""));
        assert_eq!(p.tx(2).unwrap().eve()["request"], "REQUEST_LOST");
    }

    #[test]
    fn damaged_datagrams_never_panic() {
        let mut p = parser();
        let base = datagram(0, FRAG, true, 3, 1, 2, b"stub data here");
        let mut seed = 0x5eed_u64;
        for _ in 0..3000 {
            let mut d = base.clone();
            for _ in 0..4 {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let at = (seed >> 33) as usize % d.len();
                d[at] = (seed >> 20) as u8;
            }
            d.truncate((seed >> 40) as usize % (d.len() + 1));
            let _ = p.parse(ToServer, &d);
            let _ = probe(ToServer, &d);
        }
        for i in 0..p.tx_count() {
            let _ = p.tx(i).unwrap().eve();
        }
    }
}
