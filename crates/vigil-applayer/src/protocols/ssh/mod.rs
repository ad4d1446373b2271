//! SSH: the version banners of both sides, their key exchange offers
//! (KEXINIT) with the HASSH fingerprints made of them, and the point where
//! each side starts encrypting (NEWKEYS), after which nothing is parsed and,
//! once both sides encrypt, payload inspection of the flow stops.
//!
//! One transaction per flow. Each side is `Headers` once its banner line is
//! read (`ssh.proto`, `ssh.software`) and `Complete` once its KEXINIT is read
//! (`ssh.hassh*`), it starts encrypting, or it closes. HASSH is computed only
//! with `app-layer.protocols.ssh.hassh: yes` or when a rule uses a
//! `ssh.hassh*` keyword, as in Suricata; without it a side is `Complete`
//! once its banner is read.
//!
//! ```
//! use vigil_applayer::protocols::ssh::PROTO;
//! use vigil_applayer::proto::{ParserInit, ProbeCx, Probe};
//! use vigil_applayer::{AppConfig, ParseResult, Transport};
//! use vigil_types::Direction;
//!
//! assert_eq!((PROTO.detection.probe)(Direction::ToServer, b"SSH-2.0-x\r\n", ProbeCx::default()), Probe::Match);
//! let app = AppConfig::default();
//! let mut p = (PROTO.new_parser)(&ParserInit { app: &app, transport: Transport::Tcp, first_tx_id: 0, options: 0, settings: &[], expected: None, client: None });
//! assert_eq!(p.parse(Direction::ToServer, b"SSH-2.0-OpenSSH_9.6 Debian\r\n"), ParseResult::Done);
//! let tx = p.tx(0).unwrap();
//! assert_eq!(tx.buffer(Direction::ToServer, 1, 0), Some(&b"OpenSSH_9.6"[..]));
//! ```

mod parser;
mod sample;
#[cfg(test)]
mod tests;
mod tx;

use crate::progress::Progress;
use crate::proto::{BufferDef, Detection, ParserInit, ProbeCx, Probe, ProtoDef, ProtoOption, ProtoParser, Sides};
use vigil_types::Direction;

pub use parser::SshParser;
pub use tx::SshTx;

/// The buffers, numbered for [`crate::proto::ProtoTx::buffer`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Buffer {
    /// `ssh.proto`: the protocol version of the side's banner (`2.0`).
    Proto = 0,
    /// `ssh.software`: the software version of the side's banner.
    Software = 1,
    /// `ssh.hassh`: MD5 of the client's HASSH string, lowercase hex.
    Hassh = 2,
    /// `ssh.hassh.string`: the client's KEXINIT algorithms (kex; encryption,
    /// MAC and compression client to server), `;` between the lists.
    HasshString = 3,
    /// `ssh.hassh.server`.
    HasshServer = 4,
    /// `ssh.hassh.server.string`: the same lists of the server, server to client.
    HasshServerString = 5,
}

impl Buffer {
    fn from_id(id: u8) -> Option<Buffer> {
        [Buffer::Proto, Buffer::Software, Buffer::Hassh, Buffer::HasshString, Buffer::HasshServer, Buffer::HasshServerString]
            .into_iter()
            .find(|b| *b as u8 == id)
    }
}

const fn buffer(name: &'static str, id: Buffer, sides: Sides, need: Progress) -> BufferDef {
    let default = match sides {
        Sides::ToClient => Direction::ToClient,
        Sides::ToServer | Sides::Both => Direction::ToServer,
    };
    let both_ways = matches!(sides, Sides::Both);
    BufferDef { name, id: id as u8, sides, default, both_ways, need, multi: false }
}

/// Anomalies, under Suricata's names.
pub const EVENTS: &[&str] = &["invalid_banner", "long_banner", "invalid_record", "long_kex_record"];

/// The first bytes of either side: SSH's version string starts every session.
fn probe(_dir: Direction, data: &[u8], _cx: ProbeCx) -> Probe {
    const MAGIC: &[u8] = b"SSH-";
    let n = data.len().min(MAGIC.len());
    if data[..n] != MAGIC[..n] {
        Probe::NoMatch
    } else if n < MAGIC.len() {
        Probe::NeedMore
    } else {
        Probe::Match
    }
}

/// `hassh`: bit 0 of [`ParserInit::options`].
pub const OPTIONS: &[ProtoOption] = &[ProtoOption {
    key: "hassh",
    keywords: &["ssh.hassh", "ssh.hassh.string", "ssh.hassh.server", "ssh.hassh.server.string"],
    default: false,
}];

fn new_parser(init: &ParserInit) -> Box<dyn ProtoParser> {
    Box::new(SshParser::new(init.first_tx_id).with_hassh(init.options & 1 != 0))
}

pub static PROTO: ProtoDef = ProtoDef {
    name: "ssh",
    eve_name: None,
    detection: Detection { tcp: true, udp: false, ports: &[22], ports_only: false, probe, counters_by_transport: false, answers_first: None },
    new_parser,
    buffers: &[
        buffer("ssh.proto", Buffer::Proto, Sides::Both, Progress::Headers),
        buffer("ssh.software", Buffer::Software, Sides::Both, Progress::Headers),
        buffer("ssh.hassh", Buffer::Hassh, Sides::ToServer, Progress::Complete),
        buffer("ssh.hassh.string", Buffer::HasshString, Sides::ToServer, Progress::Complete),
        buffer("ssh.hassh.server", Buffer::HasshServer, Sides::ToClient, Progress::Complete),
        buffer("ssh.hassh.server.string", Buffer::HasshServerString, Sides::ToClient, Progress::Complete),
    ],
    checks: &[],
    events: EVENTS,
    event: crate::proto::no_other_events,
    options: OPTIONS,
    settings: &[],
    sample: sample::conversation,
    sample_expected: None,
    files: false,
    transactions: true,
    aliases: &[],
    includes: &[],
    borrows: &[],
    base_need: crate::proto::HEADERS_BOTH,
    hooks: crate::proto::Hooks {
        to_server: &["request_in_progress", "request_banner_wait_eol", "request_banner_done", "request_finished"],
        to_client: &["response_in_progress", "response_banner_wait_eol", "response_banner_done", "response_finished"],
    },
    off_by_default: false,
    stream_depth: None,
    frames: &[],
};
