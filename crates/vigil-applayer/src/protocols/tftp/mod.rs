//! TFTP (RFC 1350) over UDP port 69: each read or write request is a
//! transaction, whole as it arrives, logged as EVE `tftp` (`packet`,
//! `file`, `mode`) with the `tftp.file_name` buffer, as Suricata 8 has
//! them. The transfer itself runs between other ports, a flow of its own
//! that nothing names TFTP, here as in Suricata.
//!
//! ```
//! use vigil_applayer::protocols::tftp::PROTO;
//! use vigil_applayer::proto::{ParserInit, ProbeCx, Probe};
//! use vigil_applayer::{AppConfig, Transport};
//! use vigil_types::Direction::ToServer;
//!
//! let rrq = b"\x00\x01rfc1350.txt\x00octet\x00";
//! assert_eq!((PROTO.detection.probe)(ToServer, rrq, ProbeCx::udp(50618, 69)), Probe::Match);
//! let app = AppConfig::default();
//! let init = ParserInit { app: &app, transport: Transport::Udp, first_tx_id: 0, options: 0, settings: &[], expected: None, client: None };
//! let mut p = (PROTO.new_parser)(&init);
//! p.parse(ToServer, rrq);
//! assert_eq!(p.tx(0).unwrap().eve(), serde_json::json!({"packet": "read", "file": "rfc1350.txt", "mode": "octet"}));
//! ```

use std::any::Any;

use serde_json::{json, Value};
use vigil_types::Direction;

use crate::parser::{AppEvent, ParseResult};
use crate::progress::Progress;
use crate::proto::eve_text as text;
use crate::proto::{BufferDef, Detection, ParserInit, ProbeCx, Probe, ProtoDef, ProtoParser, ProtoTx, Sides, TxQueue};

/// Requests held at most; older ones, logged already, go first.
const MAX_TXS: usize = 256;

/// A read or write request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TftpTx {
    id: u64,
    pub write: bool,
    pub file: Vec<u8>,
    pub mode: Vec<u8>,
}

/// Splits a request: opcode 1 (read) or 2 (write), then the file name and
/// the mode, each ended by a NUL. Options (RFC 2347) may follow.
fn request(data: &[u8]) -> Option<(bool, &[u8], &[u8])> {
    let write = match data.get(..2)? {
        [0, 1] => false,
        [0, 2] => true,
        _ => return None,
    };
    let mut fields = data[2..].split(|&b| b == 0);
    let file = fields.next().filter(|f| !f.is_empty())?;
    let mode = fields.next().filter(|m| !m.is_empty())?;
    // Both ended by a NUL: the mode's comes after it.
    (data.len() > 2 + file.len() + 1 + mode.len()).then_some((write, file, mode))
}

impl ProtoTx for TftpTx {
    fn id(&self) -> u64 {
        self.id
    }

    fn progress(&self, _dir: Direction) -> Progress {
        Progress::Complete
    }

    fn buffer(&self, dir: Direction, id: u8, index: usize) -> Option<&[u8]> {
        (id == 0 && index == 0 && dir == Direction::ToServer).then_some(&self.file[..])
    }

    fn eve(&self) -> Value {
        json!({"packet": if self.write { "write" } else { "read" }, "file": text(&self.file), "mode": text(&self.mode)})
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[derive(Debug)]
pub struct TftpParser {
    txs: TxQueue<TftpTx>,
}

impl ProtoParser for TftpParser {
    fn parse(&mut self, dir: Direction, data: &[u8]) -> ParseResult {
        let Some((write, file, mode)) = request(data).filter(|_| dir == Direction::ToServer) else {
            // Answers, data and acknowledgements are not requests.
            return if dir == Direction::ToServer { ParseResult::Error } else { ParseResult::Done };
        };
        self.txs.push_with(|id| TftpTx { id, write, file: file.to_vec(), mode: mode.to_vec() });
        ParseResult::Done
    }

    crate::proto::datagram_txs!(txs);

    fn drain_events(&mut self, _out: &mut Vec<AppEvent>) {}
}

fn new_parser(init: &ParserInit) -> Box<dyn ProtoParser> {
    Box::new(TftpParser { txs: TxQueue::new(init.first_tx_id, MAX_TXS) })
}

/// A read request, to the server.
fn probe(dir: Direction, data: &[u8], _cx: ProbeCx) -> Probe {
    match (dir, request(data)) {
        (Direction::ToServer, Some(_)) => Probe::Match,
        _ => Probe::NoMatch,
    }
}

fn sample() -> Vec<(Direction, Vec<u8>)> {
    vec![
        (Direction::ToServer, b"\x00\x01rfc1350.txt\x00octet\x00".to_vec()),
        (Direction::ToServer, b"\x00\x02upload.bin\x00netascii\x00blksize\x001428\x00".to_vec()),
    ]
}

pub static PROTO: ProtoDef = ProtoDef {
    name: "tftp",
    eve_name: None,
    detection: Detection { tcp: false, udp: true, ports: &[69], ports_only: true, probe, counters_by_transport: false, answers_first: None },
    new_parser,
    buffers: &[BufferDef {
        name: "tftp.file_name",
        id: 0,
        sides: Sides::ToServer,
        default: Direction::ToServer,
        both_ways: false,
        need: Progress::Complete,
        multi: false,
    }],
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_read_or_write_with_a_name_and_a_mode() {
        assert_eq!(request(b"\x00\x01a\x00octet\x00"), Some((false, &b"a"[..], &b"octet"[..])));
        assert_eq!(request(b"\x00\x02a\x00octet\x00blksize\x00512\x00"), Some((true, &b"a"[..], &b"octet"[..])));
        for bad in [&b"\x00\x03a\x00octet\x00"[..], b"\x00\x01\x00octet\x00", b"\x00\x01a\x00octet", b"\x00\x01a", b"\x00"] {
            assert_eq!(request(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn only_requests_make_transactions() {
        let init = ParserInit {
            app: &crate::AppConfig::default(),
            transport: crate::Transport::Udp,
            first_tx_id: 0,
            options: 0,
            settings: &[],
            expected: None,
            client: None,
        };
        let mut p = new_parser(&init);
        assert_eq!(p.parse(Direction::ToServer, b"\x00\x04\x00\x01"), ParseResult::Error);
        assert_eq!(p.parse(Direction::ToClient, b"\x00\x03\x00\x01data"), ParseResult::Done);
        assert_eq!(p.parse(Direction::ToServer, b"\x00\x02up\x00octet\x00"), ParseResult::Done);
        assert_eq!(p.tx_count(), 1);
        assert_eq!(p.tx(0).unwrap().buffer(Direction::ToServer, 0, 0), Some(&b"up"[..]));
        assert_eq!(p.tx(0).unwrap().eve()["packet"], "write");
    }
}
