//! A DNS transaction: one message, request or response.
//!
//! Like Suricata 8, every DNS message is its own transaction: a request makes a to-server
//! transaction and its response a separate to-client one (Suricata's unidirectional
//! transactions; EVE `tx_id` and alerts count them that way). Both carry their own question
//! section, so `dns.query` and `dns.rrtype` answer from whichever message is inspected.

use vigil_types::Direction;

use super::message::{DnsMessage, DnsRecord, RData};
use super::Buffer;

/// One DNS message and what the parser noticed about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DnsTx {
    pub(crate) id: u64,
    pub(crate) dir: Direction,
    pub(crate) msg: DnsMessage,
    pub(crate) events: Vec<&'static str>,
}

impl DnsTx {
    /// The direction the message travelled: to-server for requests, to-client for responses.
    pub fn direction(&self) -> Direction {
        self.dir
    }

    /// Whether this is the response side (parsed from the to-client direction).
    pub fn is_response(&self) -> bool {
        self.dir == Direction::ToClient
    }

    /// The whole decoded message.
    pub fn message(&self) -> &DnsMessage {
        &self.msg
    }

    /// The on-the-wire DNS id.
    pub fn dns_id(&self) -> u16 {
        self.msg.header.id
    }

    /// The raw header flags word.
    pub fn flags(&self) -> u16 {
        self.msg.header.flags
    }

    /// `dns.opcode`.
    pub fn opcode(&self) -> u8 {
        self.msg.header.opcode()
    }

    /// `dns.rcode`: the header RCODE (0 for requests, normally).
    pub fn rcode(&self) -> u8 {
        self.msg.header.rcode()
    }

    /// The QR flag as sent (a to-client message without it raised `dns.not_response`).
    pub fn qr(&self) -> bool {
        self.msg.header.qr()
    }

    pub fn aa(&self) -> bool {
        self.msg.header.aa()
    }

    pub fn tc(&self) -> bool {
        self.msg.header.tc()
    }

    pub fn rd(&self) -> bool {
        self.msg.header.rd()
    }

    pub fn ra(&self) -> bool {
        self.msg.header.ra()
    }

    pub fn z(&self) -> bool {
        self.msg.header.z()
    }

    /// `dns.rrtype`: the type of each question, in order.
    pub fn rrtypes(&self) -> impl Iterator<Item = u16> + '_ {
        self.msg.questions.iter().map(|q| q.rrtype)
    }

    /// The i-th question name (`dns.query`, `dns.queries.rrname`).
    pub fn query_name(&self, i: usize) -> Option<&[u8]> {
        self.msg.questions.get(i).map(|q| q.name.value.as_slice())
    }

    /// The i-th answer name (`dns.answers.rrname`).
    pub fn answer_name(&self, i: usize) -> Option<&[u8]> {
        self.msg.answers.get(i).map(|r| r.name.value.as_slice())
    }

    /// The i-th value of `dns.response.rrname`: question names, then for answers and authorities
    /// each record name followed by the name in its data (CNAME, PTR, MX, NS, SOA mname/rname,
    /// SRV target), then additional record names.
    pub fn response_rrname(&self, i: usize) -> Option<&[u8]> {
        self.response_rrnames().nth(i)
    }

    fn response_rrnames(&self) -> impl Iterator<Item = &[u8]> + '_ {
        let m = &self.msg;
        m.questions
            .iter()
            .map(|q| q.name.value.as_slice())
            .chain(m.answers.iter().chain(&m.authorities).flat_map(record_names))
            .chain(m.additionals.iter().map(|r| r.name.value.as_slice()))
    }

    /// Event names (Suricata's, e.g. `dns.z_flag_set`) raised on this transaction.
    pub fn events(&self) -> &[&'static str] {
        &self.events
    }
}

impl DnsTx {
    pub fn id(&self) -> u64 {
        self.id
    }

    /// A DNS transaction is one whole message, so it is complete from the moment it exists; the
    /// side it did not travel on has nothing to wait for.
    pub fn complete(&self, _dir: Direction) -> bool {
        true
    }

    /// Value `index` of buffer `id`, whichever side the message travelled.
    pub fn buffer(&self, id: Buffer, index: usize) -> Option<&[u8]> {
        match id {
            Buffer::Query | Buffer::QueriesRrname | Buffer::QueryName => self.query_name(index),
            Buffer::AnswerName | Buffer::AnswersRrname => self.answer_name(index),
            Buffer::ResponseRrname => self.response_rrname(index),
            Buffer::AuthoritiesRrname => self.msg.authorities.get(index).map(|r| r.name.value.as_slice()),
            Buffer::AdditionalsRrname => self.msg.additionals.get(index).map(|r| r.name.value.as_slice()),
        }
    }
}

/// A record's name, then any name its data carries.
fn record_names(r: &DnsRecord) -> Vec<&[u8]> {
    let mut v = vec![r.name.value.as_slice()];
    match &r.rdata {
        RData::Cname(n) | RData::Ns(n) | RData::Ptr(n) | RData::Mx { exchange: n, .. } => v.push(&n.value),
        RData::Soa(s) => v.extend([s.mname.value.as_slice(), s.rname.value.as_slice()]),
        RData::Srv(s) => v.push(&s.target.value),
        _ => {}
    }
    v
}
