//! Telnet (RFC 854): as Suricata does, a TCP flow to port 23 (or the
//! configured `detection-ports`) that no stronger signature claimed speaks
//! `telnet`. Telnet has no signature of its own (option negotiation is
//! optional), so the port is all there is, and it is probed last. `alert
//! telnet ...` rules with payload keywords apply to such flows; Suricata 8
//! writes no EVE record of its own for telnet, and neither does vigil.
//!
//! It forms no transactions. When frames are asked for, a framer marks
//! each command (`IAC` and what follows it) as a `ctl` frame and each data
//! message as a `data` frame, each a `pdu` frame too, as Suricata frames
//! them: data up to a line's end, but the server's login and password
//! prompts up to `": "`. Without frames nothing is read.
//!
//! ```
//! use vigil_applayer::protocols::telnet::PROTO;
//! use vigil_applayer::proto::{ProbeCx, Probe};
//! use vigil_types::Direction::ToServer;
//! let probe = |d: &[u8]| (PROTO.detection.probe)(ToServer, d, ProbeCx::tcp(40000, 23));
//! assert_eq!(probe(b"login: "), Probe::Match);
//! assert_eq!(probe(b""), Probe::NeedMore);
//! ```

use crate::frames::{FrameLog, Mark};
use crate::parser::{AppEvent, ParseResult};
use crate::proto::{Detection, NotParsed, ParserInit, ProbeCx, Probe, ProtoDef, ProtoParser, ProtoTx};
use vigil_types::{Direction, PerDir};

pub static PROTO: ProtoDef = ProtoDef {
    name: "telnet",
    eve_name: None,
    detection: Detection {
        tcp: true,
        udp: false,
        ports: &[23],
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
    transactions: false,
    aliases: &[],
    includes: &[],
    borrows: &[],
    base_need: crate::proto::HEADERS_BOTH,
    hooks: crate::proto::Hooks::GENERIC,
    off_by_default: false,
    stream_depth: None,
    frames: &["pdu", "ctl", "data"],
};

const IAC: u8 = 0xff;
const SB: u8 = 250;
const SE: u8 = 240;

#[derive(Clone, Copy)]
enum Frame {
    Pdu,
    Ctl,
    Data,
}

fn new_parser(init: &ParserInit) -> Box<dyn ProtoParser> {
    if init.app.frames {
        Box::new(Framer { frames: FrameLog::counted_from_one(true), pending: PerDir::default(), prompts: 0 })
    } else {
        NotParsed::boxed(init)
    }
}

/// Marks telnet's commands and data as frames; forms no transactions.
struct Framer {
    frames: FrameLog,
    /// The frames (pdu and ctl or data) already marked for the unfinished
    /// message at the start of what each side holds, whose length comes
    /// with the rest of it.
    pending: PerDir<Option<(u32, u32)>>,
    /// The server's prompts read so far: its first two messages (the login
    /// and password prompts) end at `": "`, the rest at a line's end.
    prompts: u8,
}

/// The length of the command at the start of `rest` (which starts with
/// `IAC`), or `None` until it is whole: three bytes for an option's
/// negotiation, a subnegotiation up to its `IAC SE` (which is a command of
/// its own), two bytes for the others.
fn command_len(rest: &[u8]) -> Option<usize> {
    match rest.get(1)? {
        251..=254 => (rest.len() >= 3).then_some(3),
        &SB => rest.windows(2).skip(2).position(|w| w == [IAC, SE]).map(|p| p + 2),
        _ => Some(2),
    }
}

/// The length of the data message at the start of `rest`: up to a line's
/// end, or for a prompt up to `": "`.
fn data_len(rest: &[u8], prompt: bool) -> Option<usize> {
    if prompt {
        rest.windows(2).position(|w| w == b": ").map(|p| p + 2)
    } else {
        rest.iter().position(|&b| b == b'\n').map(|p| p + 1)
    }
}

impl ProtoParser for Framer {
    fn parse(&mut self, dir: Direction, data: &[u8]) -> ParseResult {
        let mut at = 0;
        while at < data.len() {
            let rest = &data[at..];
            let marked = if at == 0 { self.pending.get_mut(dir).take() } else { None };
            let ctl = rest[0] == IAC;
            let prompt = !ctl && dir == Direction::ToClient && self.prompts < 2;
            let kind = if ctl { Frame::Ctl } else { Frame::Data };
            let len = if ctl { command_len(rest) } else { data_len(rest, prompt) };
            let len64 = len.map(|l| l as u64);
            let (pdu, own) = match marked {
                Some((pdu, own)) => {
                    if let Some(l) = len64 {
                        self.frames.set_len(dir, pdu, l);
                        self.frames.set_len(dir, own, l);
                    }
                    (pdu, own)
                }
                None => (
                    self.frames.add(dir, at, len64, Frame::Pdu as u8, None),
                    self.frames.add(dir, at, len64, kind as u8, None),
                ),
            };
            let Some(len) = len else {
                // Marked now; their length comes with the rest.
                *self.pending.get_mut(dir) = Some((pdu, own));
                return ParseResult::Incomplete { consumed: at, needed: 1 };
            };
            self.prompts += u8::from(prompt);
            at += len;
        }
        ParseResult::Done
    }

    fn on_gap(&mut self, dir: Direction, _len: u64) -> bool {
        *self.pending.get_mut(dir) = None;
        true
    }

    fn close(&mut self, _dir: Direction, _held: &[u8]) {}

    fn tx_count(&self) -> usize {
        0
    }

    fn tx(&self, _i: usize) -> Option<&dyn ProtoTx> {
        None
    }

    fn prune(&mut self, _id: u64) {}

    fn drain_events(&mut self, _out: &mut Vec<AppEvent>) {}

    fn next_tx_id(&self) -> u64 {
        0
    }

    fn take_frames(&mut self, out: &mut Vec<Mark>) -> u8 {
        self.frames.drain(out);
        self.frames.tx_base()
    }
}

/// A server's option negotiation and login prompt, and a client's answer.
fn sample() -> Vec<(Direction, Vec<u8>)> {
    vec![
        (Direction::ToClient, b"\xff\xfd\x18\xff\xfd\x20login: ".to_vec()),
        (Direction::ToServer, b"\xff\xfc\x18\xff\xfc\x20guest\r\n".to_vec()),
    ]
}

/// Any first bytes on its port: probing only reaches telnet there, once
/// every other protocol of the table has said no.
fn probe(_dir: Direction, data: &[u8], _cx: ProbeCx) -> Probe {
    if data.is_empty() {
        Probe::NeedMore
    } else {
        Probe::Match
    }
}
