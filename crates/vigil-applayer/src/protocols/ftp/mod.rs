//! FTP's control channel (RFC 959, RFC 2428): commands and replies as
//! transactions, the data channels they set up announced to the engine as
//! expectations ([`crate::proto::Expectation`]) for the `ftp-data` flows
//! that follow ([`crate::protocols::ftp_data`]), Suricata 8's `ftp.*`
//! keywords, `ftpbounce`, events and EVE `ftp` records.
//!
//! Detection follows Suricata's: a client whose first bytes are `USER `,
//! `PASS `, `PORT ` or `FEAT`, on any port, or on port 21 a server whose
//! first bytes are a `220` greeting.
//!
//! ```
//! use vigil_applayer::protocols::ftp::PROTO;
//! use vigil_applayer::proto::{ParserInit, ProbeCx, Probe};
//! use vigil_applayer::{AppConfig, Transport};
//! use vigil_types::Direction::{ToClient, ToServer};
//!
//! assert_eq!((PROTO.detection.probe)(ToServer, b"USER anonymous\r\n", ProbeCx::tcp(40000, 2121)), Probe::Match);
//! let app = AppConfig::default();
//! let init = ParserInit { app: &app, transport: Transport::Tcp, first_tx_id: 0, options: 0, settings: &[], expected: None, client: None };
//! let mut p = (PROTO.new_parser)(&init);
//! p.parse(ToClient, b"220 ready\r\n");
//! p.parse(ToServer, b"RETR notes.txt\r\n");
//! p.parse(ToClient, b"150 Opening\r\n226 Transfer complete.\r\n");
//! let eve = p.tx(1).unwrap().eve();
//! assert_eq!(eve["completion_code"], serde_json::json!(["150", "226"]));
//! ```

mod checks;
pub mod command;
mod parser;
#[cfg(test)]
mod tests;
mod tx;

use crate::progress::Progress;
use crate::proto::{BufferDef, Detection, ParserInit, ProbeCx, Probe, ProtoDef, ProtoParser, SettingDef, Sides};
use vigil_types::{Direction, PerDir};

pub use crate::protocols::ftp_data::{DataChannel, PROTO as DATA};
pub use parser::FtpParser;
pub use tx::{FtpTx, ReplyLine};

/// The buffers, numbered for [`crate::proto::ProtoTx::buffer`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Buffer {
    /// `ftp.command`: the canonical command name.
    Command = 0,
    /// `ftp.command_data`: what follows it.
    CommandData = 1,
    /// `ftp.reply`: each reply line, its code off.
    Reply = 2,
    /// `ftp.completion_code`: each code of the reply lines that carry one.
    CompletionCode = 3,
}

impl Buffer {
    fn from_id(id: u8) -> Option<Buffer> {
        [Buffer::Command, Buffer::CommandData, Buffer::Reply, Buffer::CompletionCode].into_iter().find(|b| *b as u8 == id)
    }
}

const fn buffer(name: &'static str, id: Buffer, sides: Sides, multi: bool) -> BufferDef {
    let default = match sides {
        Sides::ToClient => Direction::ToClient,
        Sides::ToServer | Sides::Both => Direction::ToServer,
    };
    BufferDef { name, id: id as u8, sides, default, both_ways: false, need: Progress::Complete, multi }
}

/// Anomalies, under Suricata's names.
pub const EVENTS: &[&str] =
    &["request_command_too_long", "response_command_too_long", "file_before_port", "file_without_name"];

/// `app-layer.protocols.ftp.*`, in [`ParserInit::setting`]'s order.
pub const SETTINGS: &[SettingDef] = &[
    SettingDef { key: "max-line-length", default: 4096, size: true },
    SettingDef { key: "max-tx", default: 1024, size: false },
    SettingDef { key: "memcap", default: 64 << 20, size: true },
];

/// What a client opens with, on any port.
const CLIENT_OPENINGS: &[&[u8]] = &[b"USER ", b"PASS ", b"PORT ", b"FEAT"];

fn probe(dir: Direction, data: &[u8], cx: ProbeCx) -> Probe {
    let openings: &[&[u8]] = match dir {
        Direction::ToServer => CLIENT_OPENINGS,
        Direction::ToClient if cx.has(21) => &[b"220 ", b"220-"],
        Direction::ToClient => return Probe::NoMatch,
    };
    crate::proto::probe_openings(data, openings, false)
}

fn new_parser(init: &ParserInit) -> Box<dyn ProtoParser> {
    let max_line = init.setting(&PROTO, 0).min(1 << 20) as usize;
    let max_tx = init.setting(&PROTO, 1).min(1 << 20) as usize;
    Box::new(FtpParser::new(init.first_tx_id, max_line, max_tx, init.client))
}

/// A login, a passive listing and a download, with a multi-line reply.
fn sample() -> Vec<(Direction, Vec<u8>)> {
    let s = |t: &str| (Direction::ToServer, t.as_bytes().to_vec());
    let c = |t: &str| (Direction::ToClient, t.as_bytes().to_vec());
    vec![
        c("220-Welcome\r\n  to the test server\r\n220 ready\r\n"),
        s("USER anonymous\r\n"),
        c("331 Please specify the password.\r\n"),
        s("PASS guest@\r\n"),
        c("230 Login successful.\r\n"),
        s("PASV\r\n"),
        c("227 Entering Passive Mode (198,18,0,2,19,137).\r\n"),
        s("RETR notes.txt\r\n"),
        c("150 Opening BINARY mode data connection.\r\n"),
        c("226 Transfer complete.\r\n"),
        s("QUIT\r\n"),
        c("221 Goodbye.\r\n"),
    ]
}

pub static PROTO: ProtoDef = ProtoDef {
    name: "ftp",
    eve_name: None,
    detection: Detection { tcp: true, udp: false, ports: &[21], ports_only: false, probe, counters_by_transport: false, answers_first: None },
    new_parser,
    buffers: &[
        buffer("ftp.command", Buffer::Command, Sides::ToServer, false),
        buffer("ftp.command_data", Buffer::CommandData, Sides::ToServer, false),
        buffer("ftp.reply", Buffer::Reply, Sides::ToClient, true),
        buffer("ftp.completion_code", Buffer::CompletionCode, Sides::ToClient, true),
    ],
    checks: checks::CHECKS,
    events: EVENTS,
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
    base_need: PerDir { to_server: Progress::Complete, to_client: Progress::Complete },
    hooks: crate::proto::Hooks::GENERIC,
    off_by_default: false,
    stream_depth: None,
    frames: &[],
};
