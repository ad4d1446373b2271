//! The Remote Desktop Protocol's connection sequence on TCP port 3389
//! (MS-RDPBCGR), as far as it travels in the clear: the X.224 connection
//! request (the `mstshash` cookie, the protocols asked for) and confirm
//! (the protocol chosen, or why none was), the MCS Connect Initial with the
//! client's core data (version, screen, keyboard, Windows build, name,
//! capabilities) and channels, and the Connect Response. Each is a
//! transaction, logged as EVE `rdp` as Suricata forms them. When the server
//! picks TLS (or CredSSP over it) the handshake that follows is read up to
//! the server's certificates, whose serial numbers make one more
//! transaction; past that everything is encrypted and passed over.
//!
//! RDP has no keywords of its own: `alert rdp` rules match its flows.
//!
//! ```
//! use vigil_applayer::protocols::rdp::PROTO;
//! use vigil_applayer::proto::{ProbeCx, Probe};
//! use vigil_types::Direction::ToServer;
//! let probe = |d: &[u8]| (PROTO.detection.probe)(ToServer, d, ProbeCx::tcp(40000, 3389));
//! assert_eq!(probe(b"\x03\x00\x00\x13\x0e\xe0\x00\x00"), Probe::Match, "a connection request");
//! assert_eq!(probe(b"\x03\x00"), Probe::NeedMore);
//! assert_eq!(probe(b"\x16\x03\x01\x00\x40"), Probe::NoMatch, "TLS from the first byte is TLS");
//! ```

mod names;
pub mod pdu;

use std::any::Any;

use serde_json::{json, Map, Value};
use vigil_types::{Direction, PerDir};

use super::tls::record::{self, Frame as TlsFrame, Record};
use crate::parser::{AppEvent, ParseResult};
use crate::progress::Progress;
use crate::proto::{eve_text, Detection, ParserInit, ProbeCx, Probe, ProtoDef, ProtoParser, ProtoTx, TxQueue};
use pdu::{ClientData, Frame, NegAnswer, NegRequest, Pdu};

/// Transactions held at once: a connection makes five, logged as they come.
const MAX_TX: usize = 256;
/// Server handshake bytes held while waiting for its Certificate message.
const MAX_HANDSHAKE: usize = 64 * 1024;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    Request { cookie: Option<Vec<u8>>, negotiation: Option<NegRequest> },
    Confirm(Option<NegAnswer>),
    ConnectRequest(ClientData),
    ConnectResponse,
    /// The serial numbers of the server's TLS certificates, in chain order.
    Certificates(Vec<String>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RdpTx {
    id: u64,
    /// Its number among the flow's RDP transactions, from 1: the record's `tx_id`.
    number: u64,
    /// The side that sent it.
    dir: Direction,
    pub item: Item,
}

fn flag_names<T: Copy + Into<u32>>(flags: T, table: &[(T, &str)]) -> Vec<Value> {
    table.iter().filter(|(bit, _)| flags.into() & (*bit).into() != 0).map(|(_, n)| Value::from(*n)).collect()
}

fn client_eve(c: &pdu::ClientCore) -> Value {
    let mut o = Map::new();
    o.insert("version".into(), names::version(c.version).into());
    o.insert("desktop_width".into(), c.desktop_width.into());
    o.insert("desktop_height".into(), c.desktop_height.into());
    if let Some(d) = names::color_depth(c.high_color_depth, c.post_beta2_color_depth, c.color_depth) {
        o.insert("color_depth".into(), d.into());
    }
    o.insert("keyboard_layout".into(), names::keyboard_layout(c.keyboard_layout).into());
    o.insert("build".into(), names::build(c.build).into());
    o.insert("client_name".into(), c.client_name.clone().into());
    o.insert("keyboard_type".into(), names::keyboard_type(c.keyboard_type).into());
    if c.keyboard_subtype != 0 {
        o.insert("keyboard_subtype".into(), c.keyboard_subtype.into());
    }
    if c.function_keys != 0 {
        o.insert("function_keys".into(), c.function_keys.into());
    }
    if !c.ime.is_empty() {
        o.insert("ime".into(), c.ime.clone().into());
    }
    if let Some(id) = c.product_id {
        o.insert("product_id".into(), id.into());
    }
    if let Some(serial) = c.serial_number.filter(|&s| s != 0) {
        o.insert("serial_number".into(), serial.into());
    }
    let caps = c.early_capabilities.map(|f| flag_names(f, names::CAPABILITIES)).unwrap_or_default();
    if !caps.is_empty() {
        o.insert("capabilities".into(), caps.into());
    }
    if let Some(id) = c.dig_product_id.as_ref().filter(|id| !id.is_empty()) {
        o.insert("id".into(), id.clone().into());
    }
    if let Some(hint) = c.connection_type.and_then(names::connection_hint) {
        o.insert("connection_hint".into(), hint.into());
    }
    // A physical size out of 10..=10000 mm voids it, the orientation and
    // the scale factors (MS-RDPBCGR 2.2.1.3.2); each factor has its own range.
    let size = |v: Option<u32>| v.filter(|mm| (10..=10_000).contains(mm));
    if let (Some(w), Some(h)) = (size(c.physical_width), size(c.physical_height)) {
        o.insert("physical_width".into(), w.into());
        o.insert("physical_height".into(), h.into());
        if let Some(r) = c.orientation.filter(|r| [0, 90, 180, 270].contains(r)) {
            o.insert("desktop_orientation".into(), r.into());
        }
        if let Some(f) = c.desktop_scale.filter(|f| (100..=500).contains(f)) {
            o.insert("scale_factor".into(), f.into());
        }
        if let Some(f) = c.device_scale.filter(|f| [100, 140, 180].contains(f)) {
            o.insert("device_scale_factor".into(), f.into());
        }
    }
    Value::Object(o)
}

impl ProtoTx for RdpTx {
    fn id(&self) -> u64 {
        self.id
    }

    fn progress(&self, _dir: Direction) -> Progress {
        Progress::Complete
    }

    fn buffer(&self, _dir: Direction, _id: u8, _index: usize) -> Option<&[u8]> {
        None
    }

    fn eve(&self) -> Value {
        let mut o = Map::new();
        o.insert("tx_id".into(), self.number.into());
        match &self.item {
            Item::Request { cookie, negotiation } => {
                o.insert("event_type".into(), "initial_request".into());
                if let Some(c) = cookie {
                    o.insert("cookie".into(), eve_text(c));
                }
                let flags = negotiation.map(|n| flag_names(n.flags, names::REQUEST_FLAGS)).unwrap_or_default();
                if !flags.is_empty() {
                    o.insert("flags".into(), flags.into());
                }
            }
            Item::Confirm(answer) => {
                o.insert("event_type".into(), "initial_response".into());
                match answer {
                    Some(NegAnswer::Response { flags, protocol }) => {
                        let supports = flag_names(*flags, names::SERVER_SUPPORTS);
                        if !supports.is_empty() {
                            o.insert("server_supports".into(), supports.into());
                        }
                        if let Some(p) = names::protocol(*protocol) {
                            o.insert("protocol".into(), p.into());
                        }
                    }
                    Some(NegAnswer::Failure(code)) => {
                        if let Some(reason) = names::failure(*code) {
                            o.insert("error_code".into(), (*code).into());
                            o.insert("reason".into(), reason.into());
                        }
                    }
                    None => {}
                }
            }
            Item::ConnectRequest(data) => {
                o.insert("event_type".into(), "connect_request".into());
                if let Some(core) = &data.core {
                    o.insert("client".into(), client_eve(core));
                }
                if !data.channels.is_empty() {
                    o.insert("channels".into(), json!(data.channels));
                }
            }
            Item::ConnectResponse => {
                o.insert("event_type".into(), "connect_response".into());
            }
            Item::Certificates(serials) => {
                o.insert("event_type".into(), "tls_handshake".into());
                o.insert("x509_serials".into(), json!(serials));
            }
        }
        Value::Object(o)
    }

    fn record_dir(&self) -> Direction {
        self.dir
    }

    fn logged_in_packet_dir(&self) -> bool {
        true
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[derive(Debug)]
pub struct RdpParser {
    txs: TxQueue<RdpTx>,
    first_id: u64,
    /// The negotiation chose a protocol over TLS: both sides now send TLS records.
    tls: bool,
    /// The server's certificates are logged (or will not come): the rest is passed over.
    done: bool,
    /// Bytes of a record each side still has to pass over.
    skip: PerDir<usize>,
    /// The server's handshake messages so far, across records.
    handshake: Vec<u8>,
}

impl RdpParser {
    fn push(&mut self, dir: Direction, item: Item) {
        let first = self.first_id;
        self.txs.push_with(|id| RdpTx { id, number: id - first + 1, dir, item });
    }

    fn pdu(&mut self, dir: Direction, tpdu: &[u8]) {
        match pdu::parse_tpdu(tpdu) {
            Some(Pdu::Request { cookie, negotiation }) => self.push(dir, Item::Request { cookie, negotiation }),
            Some(Pdu::Confirm(answer)) => {
                if let Some(NegAnswer::Response { protocol, .. }) = answer {
                    // Every protocol but standard RDP security goes on in TLS.
                    self.tls = protocol != 0;
                }
                self.push(dir, Item::Confirm(answer));
            }
            Some(Pdu::ConnectRequest(data)) => self.push(dir, Item::ConnectRequest(data)),
            Some(Pdu::ConnectResponse) => self.push(dir, Item::ConnectResponse),
            Some(Pdu::Other) | None => {}
        }
    }

    /// Takes a server handshake record; logs the certificates once they are whole.
    fn handshake(&mut self, body: &[u8]) {
        if self.handshake.len() + body.len() > MAX_HANDSHAKE {
            self.done = true;
            return;
        }
        self.handshake.extend_from_slice(body);
        while let Some(h) = self.handshake.get(..4) {
            let len = usize::from(h[1]) << 16 | usize::from(h[2]) << 8 | usize::from(h[3]);
            let Some(msg) = self.handshake.get(4..4 + len) else { return };
            if h[0] == 11 {
                let serials = pdu::certificate_list(msg).into_iter().filter_map(pdu::serial_hex).collect();
                self.push(Direction::ToClient, Item::Certificates(serials));
                self.done = true;
                self.handshake = Vec::new();
                return;
            }
            self.handshake.drain(..4 + len);
        }
    }

    /// One TLS record of `dir` at the start of `rest`: the bytes it takes.
    fn tls_record(&mut self, dir: Direction, rest: &[u8]) -> Result<usize, ParseResult> {
        match record::next_record(rest) {
            TlsFrame::Record(rec, len) => {
                if dir == Direction::ToClient {
                    match rec {
                        Record::Tls { content_type: record::HANDSHAKE, body, .. } => self.handshake(body),
                        // Past the server's ChangeCipherSpec no certificate comes in the clear.
                        Record::Tls { content_type: record::CHANGE_CIPHER_SPEC, .. } => self.done = true,
                        _ => {}
                    }
                }
                Ok(len)
            }
            // Only a handshake record is needed whole; others are passed over as they come.
            TlsFrame::NeedMore(n) if dir == Direction::ToClient && rest[0] == record::HANDSHAKE => {
                Err(ParseResult::Incomplete { consumed: 0, needed: n })
            }
            TlsFrame::NeedMore(n) if rest.len() >= 5 => Ok(rest.len() + n),
            TlsFrame::NeedMore(n) => Err(ParseResult::Incomplete { consumed: 0, needed: n }),
            TlsFrame::Bad(_) => Err(ParseResult::Error),
        }
    }
}

impl ProtoParser for RdpParser {
    fn parse(&mut self, dir: Direction, data: &[u8]) -> ParseResult {
        let mut at = 0;
        while at < data.len() && !self.done {
            let skip = self.skip.get_mut(dir);
            if *skip > 0 {
                let n = (*skip).min(data.len() - at);
                *skip -= n;
                at += n;
                continue;
            }
            let rest = &data[at..];
            let taken = if self.tls {
                self.tls_record(dir, rest)
            } else {
                match pdu::next_frame(rest) {
                    Frame::Tpkt(tpdu, len) => {
                        self.pdu(dir, tpdu);
                        Ok(len)
                    }
                    Frame::FastPath(len) => Ok(len),
                    Frame::NeedMore(n) => Err(ParseResult::Incomplete { consumed: 0, needed: n }),
                    Frame::Bad => Err(ParseResult::Error),
                }
            };
            match taken {
                Ok(len) if len > rest.len() => {
                    *self.skip.get_mut(dir) = len - rest.len();
                    at = data.len();
                }
                Ok(len) => at += len,
                Err(ParseResult::Incomplete { needed, .. }) => return ParseResult::Incomplete { consumed: at, needed },
                Err(other) => return other,
            }
        }
        ParseResult::Done
    }

    fn on_gap(&mut self, _dir: Direction, _len: u64) -> bool {
        // PDU boundaries go with the bytes, unless nothing more is read.
        self.done
    }

    fn close(&mut self, _dir: Direction, _held: &[u8]) {}

    crate::proto::delegate_txs!(txs);

    fn prune(&mut self, id: u64) {
        self.txs.prune_while(id, |_| true);
    }

    fn drain_events(&mut self, _out: &mut Vec<AppEvent>) {}

    fn wants_data(&self) -> bool {
        !self.done
    }
}

fn new_parser(init: &ParserInit) -> Box<dyn ProtoParser> {
    Box::new(RdpParser {
        txs: TxQueue::new(init.first_tx_id, MAX_TX),
        first_id: init.first_tx_id,
        tls: false,
        done: false,
        skip: PerDir::default(),
        handshake: Vec::new(),
    })
}

/// A TPKT around an X.224 connection request, confirm or data TPDU.
fn probe(_dir: Direction, data: &[u8], _cx: ProbeCx) -> Probe {
    let head = [3u8, 0];
    let n = data.len().min(2);
    if data[..n] != head[..n] {
        return Probe::NoMatch;
    }
    if let Some(len) = data.get(2..4).map(|l| usize::from(u16::from_be_bytes([l[0], l[1]]))) {
        if len < pdu::MIN_TPKT {
            return Probe::NoMatch;
        }
    }
    match data.get(5) {
        None => Probe::NeedMore,
        Some(code) if matches!(code & 0xf0, 0xe0 | 0xd0 | 0xf0) => Probe::Match,
        Some(_) => Probe::NoMatch,
    }
}

#[cfg(test)]
mod tests;

/// A connection that negotiates CredSSP: the request with its cookie, the
/// confirm, then the TLS handshake up to the server's certificates.
fn sample() -> Vec<(Direction, Vec<u8>)> {
    use super::tls::sample::tls12_flights;
    let mut out = vec![
        (Direction::ToServer, build::request(b"Cookie: mstshash=alice\r\n", Some((0, 3)))),
        (Direction::ToClient, build::confirm(Some((2, 0x01, 2)))),
    ];
    out.extend(tls12_flights());
    out
}

/// Builders of connection sequence PDUs, for the sample and the tests.
pub(crate) mod build {
    pub fn tpkt(tpdu: &[u8]) -> Vec<u8> {
        let mut v = vec![3, 0];
        v.extend(u16::try_from(tpdu.len() + 4).unwrap().to_be_bytes());
        v.extend_from_slice(tpdu);
        v
    }

    fn neg(ty: u8, flags: u8, value: u32) -> Vec<u8> {
        [vec![ty, flags, 8, 0], value.to_le_bytes().to_vec()].concat()
    }

    fn x224(code: u8, var: &[u8]) -> Vec<u8> {
        let mut v = vec![u8::try_from(6 + var.len()).unwrap(), code, 0, 0, 0x12, 0x34, 0];
        v.extend_from_slice(var);
        tpkt(&v)
    }

    /// A connection request: cookie line, then a negotiation request (flags, protocols).
    pub fn request(cookie: &[u8], negotiation: Option<(u8, u32)>) -> Vec<u8> {
        let neg = negotiation.map(|(f, p)| neg(1, f, p)).unwrap_or_default();
        x224(0xe0, &[cookie, &neg].concat())
    }

    /// A connection confirm with a negotiation structure (type, flags, value).
    pub fn confirm(answer: Option<(u8, u8, u32)>) -> Vec<u8> {
        x224(0xd0, &answer.map(|(t, f, v)| neg(t, f, v)).unwrap_or_default())
    }
}

pub static PROTO: ProtoDef = ProtoDef {
    name: "rdp",
    eve_name: None,
    detection: Detection {
        tcp: true,
        udp: false,
        ports: &[3389],
        ports_only: true,
        probe,
        counters_by_transport: false,
        answers_first: None,
    },
    new_parser,
    buffers: &[],
    checks: &[],
    events: &[],
    event: crate::proto::no_other_events,
    options: &[],
    settings: &[],
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
