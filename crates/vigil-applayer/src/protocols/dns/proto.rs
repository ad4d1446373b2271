//! DNS as a protocol of the table: its buffers, numbered by [`Buffer`], its
//! definition, and the protocol API over [`DnsParser`] and [`DnsTx`].

use serde_json::Value;
use vigil_types::{Direction, PerDir};

use super::{checks, probe_tcp, probe_udp, DnsParser, DnsProbe, DnsTx};
use crate::config::Transport;
use crate::parser::{AppEvent, ParseResult};
use crate::progress::Progress;
use crate::proto::{BufferDef, Detection, ParserInit, Probe, ProbeCx, ProtoDef, ProtoParser, ProtoTx, Sides};

/// The buffers, numbered for [`ProtoTx::buffer`]. Two keywords may read
/// the same names (`dns.queries.rrname` and `dns.query.name`): each has its
/// own number, so the table keeps one keyword per buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Buffer {
    /// `dns.query`: each question name of a request.
    Query = 0,
    /// `dns.queries.rrname`: each question name, of requests and of the
    /// responses that repeat them.
    QueriesRrname = 1,
    /// `dns.query.name`: the same names.
    QueryName = 2,
    /// `dns.answer.name`: each answer name, of responses and of the
    /// requests that carry some (mDNS, updates).
    AnswerName = 3,
    /// `dns.answers.rrname`: the same names.
    AnswersRrname = 4,
    /// `dns.response.rrname`: question names, then each answer and
    /// authority name followed by the name in its data, then the
    /// additional names.
    ResponseRrname = 5,
    /// `dns.authorities.rrname`: each authority record's name.
    AuthoritiesRrname = 6,
    /// `dns.additionals.rrname`: each additional record's name.
    AdditionalsRrname = 7,
}

impl Buffer {
    const ALL: [Buffer; 8] = [
        Buffer::Query,
        Buffer::QueriesRrname,
        Buffer::QueryName,
        Buffer::AnswerName,
        Buffer::AnswersRrname,
        Buffer::ResponseRrname,
        Buffer::AuthoritiesRrname,
        Buffer::AdditionalsRrname,
    ];

    pub fn from_id(id: u8) -> Option<Buffer> {
        Buffer::ALL.get(usize::from(id)).copied().filter(|b| *b as u8 == id)
    }
}

/// A multi-valued buffer, final with its message. One that exists both
/// ways is inspected on each side by a rule naming no direction, as
/// Suricata registers it for both.
const fn names(name: &'static str, id: Buffer, sides: Sides, default: Direction) -> BufferDef {
    let both_ways = matches!(sides, Sides::Both);
    BufferDef { name, id: id as u8, sides, default, both_ways, need: Progress::Complete, multi: true }
}

use Direction::{ToClient, ToServer};

const BUFFERS: &[BufferDef] = &[
    names("dns.query", Buffer::Query, Sides::ToServer, ToServer),
    names("dns.queries.rrname", Buffer::QueriesRrname, Sides::Both, ToServer),
    names("dns.query.name", Buffer::QueryName, Sides::Both, ToServer),
    names("dns.answer.name", Buffer::AnswerName, Sides::Both, ToClient),
    names("dns.answers.rrname", Buffer::AnswersRrname, Sides::Both, ToClient),
    names("dns.response.rrname", Buffer::ResponseRrname, Sides::ToClient, ToClient),
    names("dns.authorities.rrname", Buffer::AuthoritiesRrname, Sides::Both, ToClient),
    names("dns.additionals.rrname", Buffer::AdditionalsRrname, Sides::Both, ToClient),
];

/// A request or a response, by the transport's framing.
fn probe(_dir: Direction, data: &[u8], cx: ProbeCx) -> Probe {
    let answer = match cx.transport {
        Transport::Tcp => probe_tcp(data),
        Transport::Udp => probe_udp(data),
    };
    match answer {
        DnsProbe::Request | DnsProbe::Response => Probe::Match,
        DnsProbe::NeedMore => Probe::NeedMore,
        DnsProbe::NotDns => Probe::NoMatch,
    }
}

fn new_parser(init: &ParserInit) -> Box<dyn ProtoParser> {
    let p = match init.transport {
        Transport::Tcp => DnsParser::tcp(),
        Transport::Udp => DnsParser::udp(),
    };
    let mut p = p.with_first_tx_id(init.first_tx_id);
    p.frames = crate::frames::FrameLog::counted_from_one(init.app.frames);
    Box::new(p)
}

/// The events `app-layer-event:dns.<name>` rules match, under Suricata's
/// names: those a message raised are its transaction's.
pub const EVENTS: &[&str] = &[
    "malformed_data",
    "not_request",
    "not_response",
    "z_flag_set",
    "invalid_opcode",
    "name_too_long",
    "infinite_loop",
    "too_many_labels",
    "invalid_additionals",
    "invalid_authorities",
];

pub static PROTO: ProtoDef = ProtoDef {
    name: "dns",
    eve_name: None,
    detection: Detection {
        tcp: true,
        udp: true,
        // A 2-byte length and a 12-byte header are too easy to match by chance.
        ports: &[53],
        ports_only: true,
        probe,
        counters_by_transport: true,
        answers_first: None,
    },
    new_parser,
    buffers: BUFFERS,
    checks: checks::CHECKS,
    events: EVENTS,
    event: crate::proto::no_other_events,
    options: &[],
    settings: &[],
    sample: super::sample::conversation,
    sample_expected: None,
    files: false,
    transactions: true,
    aliases: &[],
    includes: &[],
    borrows: &[],
    // A transaction is one message: it is there or not.
    base_need: PerDir { to_server: Progress::Complete, to_client: Progress::Complete },
    hooks: crate::proto::Hooks::GENERIC,
    off_by_default: false,
    stream_depth: None,
    frames: &["pdu"],
};

impl ProtoParser for DnsParser {
    fn parse(&mut self, dir: Direction, data: &[u8]) -> ParseResult {
        let before = self.next_tx_id();
        let r = DnsParser::parse(self, dir, data);
        if self.next_tx_id() != before {
            *self.raw_trigger.get_mut(dir) = true;
        }
        r
    }

    fn take_raw_trigger(&mut self, dir: Direction) -> bool {
        std::mem::take(self.raw_trigger.get_mut(dir))
    }

    /// Over TCP the framing is found again where a message starts.
    fn on_gap(&mut self, dir: Direction, len: u64) -> bool {
        DnsParser::on_gap(self, dir, len);
        true
    }

    /// A message cut short at the end is dropped.
    fn close(&mut self, _dir: Direction, _held: &[u8]) {}

    fn tx_count(&self) -> usize {
        self.txs().len()
    }

    fn tx(&self, i: usize) -> Option<&dyn ProtoTx> {
        self.txs().get(i).map(|t| t as &dyn ProtoTx)
    }

    fn prune(&mut self, id: u64) {
        DnsParser::prune(self, id);
    }

    fn drain_events(&mut self, out: &mut Vec<AppEvent>) {
        out.append(&mut self.take_events());
    }

    fn next_tx_id(&self) -> u64 {
        DnsParser::next_tx_id(self)
    }

    fn txs_evicted(&self) -> u64 {
        self.dropped_txs()
    }

    fn take_frames(&mut self, out: &mut Vec<crate::frames::Mark>) -> u8 {
        self.frames.drain(out);
        self.frames.tx_base()
    }
}

impl ProtoTx for DnsTx {
    fn id(&self) -> u64 {
        self.id
    }

    fn events(&self) -> u64 {
        self.events
            .iter()
            .filter_map(|e| e.strip_prefix("dns.").and_then(|n| EVENTS.iter().position(|x| *x == n)))
            .fold(0, |m, i| m | 1 << i)
    }

    /// `Complete` on the side the message travelled; the other never carries anything.
    fn progress(&self, dir: Direction) -> Progress {
        if self.direction() == dir {
            Progress::Complete
        } else {
            Progress::None
        }
    }

    /// One message: whole as soon as it exists.
    fn finished(&self) -> bool {
        true
    }

    fn buffer(&self, _dir: Direction, id: u8, index: usize) -> Option<&[u8]> {
        DnsTx::buffer(self, Buffer::from_id(id)?, index)
    }

    fn eve(&self) -> Value {
        serde_json::to_value(DnsTx::eve(self)).unwrap_or(Value::Null)
    }

    /// Alerts leave out the grouped answers, as Suricata's.
    fn eve_metadata(&self, _opts: Option<&crate::proto::RecordOptions>) -> Value {
        serde_json::to_value(DnsTx::eve_with(self, false)).unwrap_or(Value::Null)
    }

    /// A response is written from the server to the client.
    fn record_dir(&self) -> Direction {
        self.direction()
    }

    /// Version 2 writes a query record per question and an answer record
    /// per answer, each in the flow's direction.
    fn eve_version(&self, version: u8) -> Option<Vec<(Direction, Value)>> {
        (version == 2).then(|| {
            self.eve_v2()
                .into_iter()
                .map(|r| (Direction::ToServer, serde_json::to_value(r).unwrap_or(Value::Null)))
                .collect()
        })
    }

    /// Suricata keeps a query and its answer in one transaction.
    fn log_group(&self) -> Option<u64> {
        Some(u64::from(self.dns_id()))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
