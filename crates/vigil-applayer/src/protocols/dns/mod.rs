//! DNS over UDP and TCP, with Suricata 8's transaction model and EVE format.
//!
//! What this module owns: turning DNS messages into [`DnsTx`] transactions (one per message, as
//! Suricata 8 does), the `dns.query` / `dns.answer.name` inspection buffers, the EVE `dns`
//! object ([`DnsEve`]), the anomaly events under Suricata's names, and port-independent
//! detection ([`probe_udp`], [`probe_tcp`]).
//!
//! How data flows: the flow layer hands [`DnsParser::parse`] a direction and bytes. Over UDP
//! (`DnsParser::udp()`) each call is one datagram and one message. Over TCP
//! (`DnsParser::tcp()`) the bytes are a stream of messages each behind a 2-byte length; complete
//! messages are consumed and a partial one is left to the caller with
//! [`ParseResult::Incomplete`], so any chunking yields the same transactions. Each message goes
//! through [`message::parse_message`] (names via [`name::parse_name`], loop-safe), becomes a
//! transaction in the to-server (request) or to-client (response) direction, and its anomalies
//! are recorded on it and queued for [`DnsParser::take_events`].
//!
//! ```
//! use vigil_applayer::dns::{Buffer, DnsParser};
//! use vigil_applayer::ParseResult;
//! use vigil_types::Direction;
//!
//! // id 0x1234, RD, one question: example.com A IN.
//! let query = b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\
//!               \x07example\x03com\x00\x00\x01\x00\x01";
//! let mut dns = DnsParser::udp();
//! assert_eq!(dns.parse(Direction::ToServer, query), ParseResult::Done);
//! let tx = &dns.txs()[0];
//! assert_eq!(tx.buffer(Buffer::Query, 0), Some(&b"example.com"[..]));
//! assert_eq!(tx.eve().kind, "request");
//! ```

pub(crate) mod carried;
mod checks;
mod eve;
pub mod message;
pub mod name;
mod proto;
pub(crate) mod sample;
mod tx;

#[cfg(test)]
pub(crate) mod tests;

pub use carried::CarriedDns;
pub use eve::{
    address, json_string, rcode_name, rrtype_name, DnsEve, DnsEveV2, EveGrouped, EveOpt, EveQuery, EveRecord, EveSoa,
    EveSrv, EveSshfp,
};
pub use message::{parse_message, DnsHeader, DnsMessage, DnsQuestion, DnsRecord, MessageError, RData};
pub use name::{DnsName, NameFlags};
pub use proto::{Buffer, PROTO};
pub use tx::DnsTx;

use vigil_types::{Direction, PerDir};

use crate::parser::{AppEvent, ParseResult};

/// A message with invalid lengths or data that does not decode.
pub const EVENT_MALFORMED_DATA: &str = "dns.malformed_data";
/// A response (QR set) sent to the server.
pub const EVENT_NOT_REQUEST: &str = "dns.not_request";
/// A message without QR sent to the client.
pub const EVENT_NOT_RESPONSE: &str = "dns.not_response";
/// The reserved Z bit is set.
pub const EVENT_Z_FLAG_SET: &str = "dns.z_flag_set";
/// Opcode 7 or above (unassigned).
pub const EVENT_INVALID_OPCODE: &str = "dns.invalid_opcode";
/// A name longer than [`name::MAX_NAME_LEN`] was truncated.
pub const EVENT_NAME_TOO_LONG: &str = "dns.name_too_long";
/// Compression pointers formed a loop.
pub const EVENT_INFINITE_LOOP: &str = "dns.infinite_loop";
/// A name had more than [`name::MAX_LABELS`] labels.
pub const EVENT_TOO_MANY_LABELS: &str = "dns.too_many_labels";
/// The authority section did not decode.
pub const EVENT_INVALID_AUTHORITIES: &str = "dns.invalid_authorities";
/// The additional section did not decode.
pub const EVENT_INVALID_ADDITIONALS: &str = "dns.invalid_additionals";

/// Transactions held before the oldest is dropped unseen (counted in
/// [`DnsParser::dropped_txs`]). The caller normally prunes long before.
pub const DEFAULT_MAX_TXS: usize = 256;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Transport {
    Udp,
    Tcp,
}

/// DNS parser for one flow.
#[derive(Debug, Clone)]
pub struct DnsParser {
    transport: Transport,
    txs: Vec<DnsTx>,
    next_id: u64,
    max_txs: usize,
    dropped_txs: u64,
    events: Vec<AppEvent>,
    /// A capture gap was reported; data is ignored until something looks like a message again.
    gap: PerDir<bool>,
    /// A message of that side was read over TCP since raw stream inspection
    /// last asked (Suricata's DNS parser has the stream inspected then).
    pub(crate) raw_trigger: PerDir<bool>,
    pub(crate) frames: crate::frames::FrameLog,
}

/// What [`probe_udp`] / [`probe_tcp`] think of the first bytes of a flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DnsProbe {
    NotDns,
    /// A plausible DNS request (QR clear).
    Request,
    /// A plausible DNS response (QR set): the flow may be seen from the server's side.
    Response,
    /// Too short to tell.
    NeedMore,
}

impl DnsParser {
    /// Each `parse` call is one UDP datagram holding one message.
    pub fn udp() -> Self {
        Self::new(Transport::Udp)
    }

    /// `parse` gets a TCP byte stream of length-prefixed messages.
    pub fn tcp() -> Self {
        Self::new(Transport::Tcp)
    }

    fn new(transport: Transport) -> Self {
        DnsParser {
            transport,
            txs: Vec::new(),
            next_id: 0,
            max_txs: DEFAULT_MAX_TXS,
            dropped_txs: 0,
            events: Vec::new(),
            gap: PerDir::default(),
            raw_trigger: PerDir::default(),
            frames: crate::frames::FrameLog::default(),
        }
    }

    /// Sets how many transactions are held before the oldest is dropped (at least 1).
    pub fn with_max_txs(mut self, max: usize) -> Self {
        self.max_txs = max.max(1);
        self
    }

    /// Numbers transactions from `id` on. A parser that takes over a flow from another (inside
    /// an HTTP tunnel) continues its ids, keeping them unique within the flow.
    pub(crate) fn with_first_tx_id(mut self, id: u64) -> Self {
        self.next_id = id;
        self
    }

    /// The id the next transaction will get.
    pub(crate) fn next_tx_id(&self) -> u64 {
        self.next_id
    }

    pub fn is_tcp(&self) -> bool {
        self.transport == Transport::Tcp
    }

    /// Transactions dropped unpruned because more than the limit were held.
    pub fn dropped_txs(&self) -> u64 {
        self.dropped_txs
    }

    fn event(&mut self, name: &'static str, tx_id: Option<u64>) {
        self.events.push(AppEvent { name, tx_id });
    }

    /// Turns one message into a transaction. `Err` means the direction did not carry DNS.
    fn message(&mut self, dir: Direction, data: &[u8]) -> Result<(), ()> {
        let msg = match parse_message(data) {
            Ok(m) => m,
            // Not DNS at all. Suricata skips such a datagram silently (a junk first packet
            // must not stop the flow) but fails a TCP stream, whose framing is then lost.
            Err(MessageError::Header) => return if self.is_tcp() { Err(()) } else { Ok(()) },
            Err(MessageError::Malformed { .. }) => {
                self.event(EVENT_MALFORMED_DATA, None);
                return Err(());
            }
        };
        let h = msg.header;
        if dir == Direction::ToServer && h.qr() {
            self.event(EVENT_NOT_REQUEST, None);
            return Err(());
        }
        let mut events = Vec::new();
        if dir == Direction::ToClient && !h.qr() {
            events.push(EVENT_NOT_RESPONSE);
        }
        let checks = [
            (h.z(), EVENT_Z_FLAG_SET),
            (h.opcode() >= 7, EVENT_INVALID_OPCODE),
            (msg.name_flags.truncated, EVENT_NAME_TOO_LONG),
            (msg.name_flags.infinite_loop, EVENT_INFINITE_LOOP),
            (msg.name_flags.too_many_labels, EVENT_TOO_MANY_LABELS),
            (msg.invalid_authorities, EVENT_INVALID_AUTHORITIES),
            (msg.invalid_additionals, EVENT_INVALID_ADDITIONALS),
        ];
        events.extend(checks.iter().filter(|(hit, _)| *hit).map(|&(_, name)| name));

        let id = self.next_id;
        self.next_id += 1;
        for &name in &events {
            self.event(name, Some(id));
        }
        if self.txs.len() >= self.max_txs {
            self.txs.remove(0);
            self.dropped_txs += 1;
        }
        self.txs.push(DnsTx { id, dir, msg, events });
        Ok(())
    }

    fn parse_tcp(&mut self, dir: Direction, data: &[u8]) -> ParseResult {
        if *self.gap.get(dir) {
            if probe_tcp(data) == DnsProbe::NotDns {
                return ParseResult::Done;
            }
            *self.gap.get_mut(dir) = false;
        }
        let mut off = 0;
        loop {
            let rest = &data[off..];
            match rest {
                [] => return ParseResult::Done,
                [_] => return ParseResult::Incomplete { consumed: off, needed: 1 },
                [hi, lo, body @ ..] => {
                    let len = usize::from(u16::from_be_bytes([*hi, *lo]));
                    if body.len() < len {
                        return ParseResult::Incomplete { consumed: off, needed: len - body.len() };
                    }
                    // An empty message carries nothing; skip its prefix.
                    let next = self.next_id;
                    let failed = len > 0 && self.message(dir, &body[..len]).is_err();
                    let tx = (self.next_id > next).then_some(next);
                    self.frames.add(dir, off + 2, Some(len as u64), 0, tx);
                    if failed {
                        return ParseResult::Error;
                    }
                    off += 2 + len;
                }
            }
        }
    }
}

impl DnsParser {
    /// UDP: `data` is one datagram; `Done` or `Error` (not DNS, or malformed), never
    /// `Incomplete`. The parser stays usable for the next datagram either way: datagrams are
    /// independent. TCP: see the module docs.
    pub fn parse(&mut self, dir: Direction, data: &[u8]) -> ParseResult {
        match self.transport {
            Transport::Udp => {
                let next = self.next_id;
                let r = self.message(dir, data);
                let tx = (self.next_id > next).then_some(next);
                self.frames.add(dir, 0, Some(data.len() as u64), 0, tx);
                match r {
                    Ok(()) => ParseResult::Done,
                    Err(()) => ParseResult::Error,
                }
            }
            Transport::Tcp => self.parse_tcp(dir, data),
        }
    }

    /// Over TCP the message framing is lost: data is dropped until a chunk starts with
    /// something that probes as DNS. UDP loses whole datagrams only, so nothing changes.
    pub fn on_gap(&mut self, dir: Direction, _len: u64) {
        if self.is_tcp() {
            *self.gap.get_mut(dir) = true;
        }
    }

    pub fn txs(&self) -> &[DnsTx] {
        &self.txs
    }

    pub fn prune(&mut self, id: u64) {
        let keep_from = self.txs.iter().position(|t| t.id >= id).unwrap_or(self.txs.len());
        self.txs.drain(..keep_from);
    }

    pub fn take_events(&mut self) -> Vec<AppEvent> {
        std::mem::take(&mut self.events)
    }
}

/// Does this UDP payload look like DNS? The header must be there with counts that can fit,
/// and the question and answer sections must decode. Opcodes are not checked: Suricata
/// accepts any and flags invalid ones as events.
pub fn probe_udp(data: &[u8]) -> DnsProbe {
    probe_message(data, data.len())
}

/// Does this start of a TCP stream look like DNS (a 2-byte length, then a message)?
pub fn probe_tcp(data: &[u8]) -> DnsProbe {
    match data {
        [hi, lo, msg @ ..] => probe_message(msg, usize::from(u16::from_be_bytes([*hi, *lo]))),
        _ => DnsProbe::NeedMore,
    }
}

/// Probes a message of announced length `len` of which `data` arrived.
fn probe_message(data: &[u8], len: usize) -> DnsProbe {
    let data = &data[..data.len().min(len)];
    let Some(h) = DnsHeader::parse(data) else {
        return if len < message::HEADER_LEN { DnsProbe::NotDns } else { DnsProbe::NeedMore };
    };
    if !h.plausible(len) {
        return DnsProbe::NotDns;
    }
    // Only the header can be judged until the whole message is there.
    if data.len() == len && parse_message(data).is_err() {
        return DnsProbe::NotDns;
    }
    if h.qr() {
        DnsProbe::Response
    } else {
        DnsProbe::Request
    }
}
