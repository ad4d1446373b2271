//! WebSocket (RFC 6455) after an HTTP/1.1 upgrade: never probed, a flow
//! speaks `websocket` when its HTTP request asked to upgrade to it and the
//! server agreed (101). Each frame is a transaction of the side that sent
//! it, as Suricata forms them, logged as EVE `websocket` (fin, the mask,
//! the opcode); `websocket.payload` (unmasked, and inflated when the frame
//! is compressed with `permessage-deflate`), `websocket.opcode`,
//! `websocket.mask`, `websocket.flags`.
//!
//! Payloads are kept up to `app-layer.protocols.websocket.max-payload-size`
//! (64 KiB by default); a frame too big to hold is read from its head.
//!
//! ```
//! use vigil_applayer::protocols::websocket::opcode_name;
//! assert_eq!(opcode_name(1), "text");
//! ```

use std::any::Any;

use flate2::{Decompress, FlushDecompress};
use serde_json::{Map, Value};
use vigil_rules::{IntCmp, Value as RuleValue};
use vigil_types::{Direction, PerDir};

use crate::parser::{AppEvent, ParseResult};
use crate::progress::Progress;
use crate::proto::{BufferDef, CheckDef, Detection, ParserInit, Probe, ProtoDef, ProtoParser, ProtoTx, SettingDef, Sides, TxCheck, TxQueue};

/// Frames up to this size are held whole; past it they are read from
/// their head (header and the payload kept) and the rest passed over.
const HOLD: usize = 192 * 1024;
/// An inflated payload is cut here, whatever its compressed size.
const MAX_INFLATED: usize = 1 << 20;

const FIN: u8 = 0x80;
const RSV1: u8 = 0x40;

pub fn opcode_name(op: u8) -> String {
    match op {
        0 => "continuation".into(),
        1 => "text".into(),
        2 => "binary".into(),
        8 => "close".into(),
        9 => "ping".into(),
        10 => "pong".into(),
        n => n.to_string(),
    }
}

fn opcode_of(name: &str) -> Option<u8> {
    name.parse().ok().or_else(|| (0..=15).find(|&n| opcode_name(n) == name))
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebSocketTx {
    id: u64,
    dir: Direction,
    /// The first byte: FIN, RSV1-3 and the opcode.
    pub flags: u8,
    pub mask: Option<u32>,
    /// Unmasked (and inflated), as far as kept.
    pub payload: Vec<u8>,
}

impl WebSocketTx {
    pub fn opcode(&self) -> u8 {
        self.flags & 0x0f
    }
}

impl ProtoTx for WebSocketTx {
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
        (id == 0 && index == 0 && dir == self.dir).then_some(&self.payload[..])
    }

    fn eve(&self) -> Value {
        let mut o = Map::new();
        o.insert("fin".into(), (self.flags & FIN != 0).into());
        if let Some(m) = self.mask {
            o.insert("mask".into(), m.into());
        }
        o.insert("opcode".into(), opcode_name(self.opcode()).into());
        Value::Object(o)
    }

    /// Suricata writes a frame's record in the direction of the packet
    /// that lets it log it, the other side's: a client's frame from the
    /// server to the client.
    fn record_dir(&self) -> Direction {
        self.dir.flip()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[derive(Debug)]
pub struct WebSocketParser {
    txs: TxQueue<WebSocketTx>,
    max_payload: usize,
    /// Bytes of the current frame still to pass over, per side.
    skip: PerDir<u64>,
    /// Each side's `permessage-deflate` stream (the compression context runs
    /// from message to message unless a side asked for it not to).
    inflate: PerDir<Option<Decompress>>,
}

impl WebSocketParser {
    /// Inflates a compressed message's payload, with the four bytes
    /// RFC 7692 takes off its end put back.
    fn inflate(&mut self, dir: Direction, data: &[u8]) -> Vec<u8> {
        let d = self.inflate.get_mut(dir).get_or_insert_with(|| Decompress::new(false));
        let mut input = data.to_vec();
        input.extend_from_slice(&[0, 0, 0xff, 0xff]);
        let mut out = Vec::with_capacity(data.len() * 2);
        let mut at = 0;
        while at < input.len() && out.len() < MAX_INFLATED {
            out.reserve(16 * 1024);
            let before = (d.total_in(), out.len());
            if d.decompress_vec(&input[at..], &mut out, FlushDecompress::Sync).is_err() {
                break;
            }
            at += (d.total_in() - before.0) as usize;
            if (d.total_in() - before.0, out.len()) == (0, before.1) {
                break;
            }
        }
        out.truncate(MAX_INFLATED);
        out
    }

    /// A frame whose header is the first `head` bytes of `frame` (the payload
    /// the rest, or its first part).
    fn frame(&mut self, dir: Direction, frame: &[u8], head: usize, mask: Option<[u8; 4]>) {
        let flags = frame[0];
        let mut payload: Vec<u8> = frame[head..].iter().take(self.max_payload).copied().collect();
        if let Some(k) = mask {
            for (i, b) in payload.iter_mut().enumerate() {
                *b ^= k[i % 4];
            }
        }
        if flags & RSV1 != 0 && flags & 0x0f <= 2 {
            payload = self.inflate(dir, &payload);
            payload.truncate(self.max_payload.max(1));
        }
        let mask = mask.map(u32::from_be_bytes);
        self.txs.push_with(|id| WebSocketTx { id, dir, flags, mask, payload });
    }
}

/// A frame's header length and payload length; `None` while incomplete.
fn header(data: &[u8]) -> Option<(usize, u64, Option<[u8; 4]>)> {
    let b1 = *data.get(1)?;
    let (len, mut at) = match b1 & 0x7f {
        126 => (u64::from(u16::from_be_bytes(data.get(2..4)?.try_into().ok()?)), 4),
        127 => (u64::from_be_bytes(data.get(2..10)?.try_into().ok()?), 10),
        n => (u64::from(n), 2),
    };
    let mask = if b1 & 0x80 != 0 {
        let k: [u8; 4] = data.get(at..at + 4)?.try_into().ok()?;
        at += 4;
        Some(k)
    } else {
        None
    };
    Some((at, len, mask))
}

impl ProtoParser for WebSocketParser {
    fn parse(&mut self, dir: Direction, data: &[u8]) -> ParseResult {
        let mut at = 0;
        loop {
            let skip = self.skip.get_mut(dir);
            if *skip > 0 {
                let n = (*skip).min((data.len() - at) as u64);
                *skip -= n;
                at += n as usize;
            }
            let rest = &data[at..];
            if rest.is_empty() {
                return ParseResult::Done;
            }
            let Some((head, len, mask)) = header(rest) else { return ParseResult::Incomplete { consumed: at, needed: 1 } };
            let total = head as u64 + len;
            if (rest.len() as u64) >= total {
                self.frame(dir, &rest[..total as usize], head, mask);
                at += total as usize;
            } else if total <= HOLD as u64 {
                return ParseResult::Incomplete { consumed: at, needed: (total - rest.len() as u64) as usize };
            } else if rest.len() < head + self.max_payload.min(HOLD) {
                return ParseResult::Incomplete { consumed: at, needed: head + self.max_payload.min(HOLD) - rest.len() };
            } else {
                // Too big to hold: its head is kept, the rest passed over.
                let kept = rest.len();
                self.frame(dir, rest, head, mask);
                *self.skip.get_mut(dir) = total - kept as u64;
                at += kept;
            }
        }
    }

    fn on_gap(&mut self, _dir: Direction, _len: u64) -> bool {
        // Frame boundaries are lost with the bytes.
        false
    }

    fn close(&mut self, _dir: Direction, _held: &[u8]) {}

    crate::proto::delegate_txs!(txs);

    fn prune(&mut self, id: u64) {
        self.txs.prune_while(id, |_| true);
    }

    fn drain_events(&mut self, _out: &mut Vec<AppEvent>) {}
}

pub const SETTINGS: &[SettingDef] = &[
    SettingDef { key: "max-payload-size", default: 65535, size: true },
    SettingDef { key: "max-tx", default: 1024, size: false },
];

fn new_parser(init: &ParserInit) -> Box<dyn ProtoParser> {
    let max_payload = init.setting(&PROTO, 0).clamp(1, MAX_INFLATED as u64) as usize;
    let max_tx = init.setting(&PROTO, 1).clamp(1, 1 << 16) as usize;
    Box::new(WebSocketParser { txs: TxQueue::new(init.first_tx_id, max_tx), max_payload, skip: PerDir::default(), inflate: PerDir::default() })
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum WsCheck {
    Opcode(IntCmp),
    Mask(IntCmp),
    /// Bits that must be set and bits that must be clear.
    Flags { set: u8, clear: u8 },
}

impl TxCheck for WsCheck {
    fn matches(&self, tx: &dyn ProtoTx, _dir: Direction, _now_secs: i64) -> bool {
        let Some(t) = tx.as_any().downcast_ref::<WebSocketTx>() else { return false };
        match self {
            WsCheck::Opcode(c) => c.matches(t.opcode().into()),
            WsCheck::Mask(c) => t.mask.is_some_and(|m| c.matches(m.into())),
            WsCheck::Flags { set, clear } => t.flags & set == *set && t.flags & clear == 0,
        }
    }
}

fn opcode(v: &RuleValue) -> Result<Box<dyn TxCheck>, String> {
    let cmp = match v {
        RuleValue::Int(c) => *c,
        RuleValue::Text(t) | RuleValue::Str(t) => {
            let (neg, name) = match t.trim().strip_prefix('!') {
                Some(n) => (true, n.trim()),
                None => (false, t.trim()),
            };
            let op = u64::from(opcode_of(name).ok_or_else(|| format!("unknown opcode '{name}'"))?);
            if neg {
                IntCmp::Ne(op)
            } else {
                IntCmp::Eq(op)
            }
        }
        _ => return Err("expects an opcode".into()),
    };
    Ok(Box::new(WsCheck::Opcode(cmp)))
}

fn mask(v: &RuleValue) -> Result<Box<dyn TxCheck>, String> {
    match v {
        RuleValue::Int(c) => Ok(Box::new(WsCheck::Mask(*c))),
        _ => Err("expects a mask".into()),
    }
}

/// `fin`, `comp` (RSV1), each may be negated, joined by `,` or `|`.
fn flags(v: &RuleValue) -> Result<Box<dyn TxCheck>, String> {
    let text = match v {
        RuleValue::Text(t) | RuleValue::Str(t) => t.trim(),
        _ => return Err("expects flags".into()),
    };
    let (mut set, mut clear) = (0u8, 0u8);
    for item in text.split([',', '|']).map(str::trim) {
        let (neg, name) = match item.strip_prefix('!') {
            Some(n) => (true, n.trim()),
            None => (false, item),
        };
        let bit = match name {
            "fin" => FIN,
            "comp" => RSV1,
            other => return Err(format!("unknown flag '{other}'")),
        };
        if neg {
            clear |= bit;
        } else {
            set |= bit;
        }
    }
    Ok(Box::new(WsCheck::Flags { set, clear }))
}

const fn check(name: &'static str, compile: fn(&RuleValue) -> Result<Box<dyn TxCheck>, String>) -> CheckDef {
    CheckDef { name, side: None, need: Progress::Complete, both_ways: true, compile }
}

/// A masked text frame from the client and a close from the server.
fn sample() -> Vec<(Direction, Vec<u8>)> {
    let mut text = vec![0x81, 0x85, 1, 2, 3, 4];
    text.extend(b"hello".iter().zip([1u8, 2, 3, 4].iter().cycle()).map(|(b, k)| b ^ k));
    vec![(Direction::ToServer, text), (Direction::ToClient, vec![0x88, 0x02, 0x03, 0xe8])]
}

pub static PROTO: ProtoDef = ProtoDef {
    name: "websocket",
    eve_name: None,
    // Never probed: an HTTP upgrade hands flows over.
    detection: Detection { tcp: true, udp: false, ports: &[], ports_only: true, probe: |_, _, _| Probe::NoMatch, counters_by_transport: false, answers_first: None },
    new_parser,
    buffers: &[BufferDef { name: "websocket.payload", id: 0, sides: Sides::Both, default: Direction::ToServer, both_ways: true, need: Progress::Complete, multi: false }],
    checks: &[check("websocket.opcode", opcode), check("websocket.mask", mask), check("websocket.flags", flags)],
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
    use crate::Transport;
    use Direction::{ToClient, ToServer};

    fn parser() -> Box<dyn ProtoParser> {
        let app = AppConfig::default();
        new_parser(&ParserInit { app: &app, transport: Transport::Tcp, first_tx_id: 0, options: 0, settings: &[], expected: None, client: None })
    }

    #[test]
    fn frames_are_unmasked_and_logged() {
        let mut p = parser();
        for (dir, data) in sample() {
            assert_eq!(p.parse(dir, &data), ParseResult::Done);
        }
        let text = p.tx(0).unwrap();
        assert_eq!(text.eve(), serde_json::json!({"fin": true, "mask": 0x0102_0304, "opcode": "text"}));
        assert_eq!(text.buffer(ToServer, 0, 0), Some(&b"hello"[..]));
        assert_eq!(p.tx(1).unwrap().eve(), serde_json::json!({"fin": true, "opcode": "close"}));
    }

    #[test]
    fn compressed_messages_are_inflated() {
        use flate2::{Compress, Compression, FlushCompress};
        let mut c = Compress::new(Compression::default(), false);
        let mut out = Vec::with_capacity(128);
        c.compress_vec(b"TOGGLE=5659131662f54334", &mut out, FlushCompress::Sync).unwrap();
        // RFC 7692: the sync flush's empty block is taken off the end.
        out.truncate(out.len() - 4);
        let mut frame = vec![0xc1, out.len() as u8];
        frame.extend_from_slice(&out);
        let mut p = parser();
        assert_eq!(p.parse(ToClient, &frame), ParseResult::Done);
        assert_eq!(p.tx(0).unwrap().buffer(ToClient, 0, 0), Some(&b"TOGGLE=5659131662f54334"[..]));
        assert!(flags(&RuleValue::Text("fin,comp".into())).unwrap().matches(p.tx(0).unwrap(), ToClient, 0));
        assert!(!flags(&RuleValue::Text("!comp".into())).unwrap().matches(p.tx(0).unwrap(), ToClient, 0));
    }
}
