//! NFS versions 2, 3 and 4 (RFC 1094, RFC 1813, RFC 7530 and RFC 8881)
//! over ONC RPC ([`crate::codecs::rpc`]), on UDP and on TCP with record
//! marking, port 2049: a call to program 100003 (or a reply) speaks `nfs`.
//! Transactions are formed as Suricata forms them ([`parser`]): each call
//! one, finished by its reply; the reads (writes) of one file handle one
//! file transaction whose data goes to the file service; NFSv4 COMPOUNDs
//! make a transaction only for a create, remove or rename ([`v4`]).
//! Records are EVE `nfs` with the `rpc` object beside it, always in their
//! response form (as Suricata writes them, alerts on a call included);
//! attribute polls (GETATTR) are not logged. `nfs_procedure` and
//! `nfs.version` match ([`checks`]).
//!
//! Where this differs from Suricata: an RPC record cut in several
//! fragments is read fragment by fragment (a fragment that does not start
//! a message is passed over), and file bytes that come ahead of those
//! before them wait (within 16 MiB a flow) rather than leave a hole.
//!
//! ```
//! use vigil_applayer::protocols::nfs::PROTO;
//! use vigil_applayer::proto::{ProbeCx, Probe};
//! use vigil_types::Direction::ToServer;
//! let probe = |d: &[u8]| (PROTO.detection.probe)(ToServer, d, ProbeCx::udp(800, 2049));
//! let mut call = vec![0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1, 0x86, 0xa3, 0, 0, 0, 3, 0, 0, 0, 0];
//! call.extend_from_slice(&[0; 16]);
//! assert_eq!(probe(&call), Probe::Match);
//! call[15] = 0xa5; // the mount daemon's program
//! assert_eq!(probe(&call), Probe::NoMatch);
//! ```

mod checks;
pub mod names;
pub mod parser;
pub mod tx;
pub mod v4;

use vigil_types::Direction;

use crate::codecs::rpc;
use crate::proto::{Detection, ParserInit, ProbeCx, Probe, ProtoDef, ProtoParser, SettingDef};
use crate::Transport;
use parser::{NfsParser, PROGRAM};
pub use tx::NfsTx;

pub const SETTINGS: &[SettingDef] = &[SettingDef { key: "max-tx", default: 1024, size: false }];

fn new_parser(init: &ParserInit) -> Box<dyn ProtoParser> {
    let max_tx = init.setting(&PROTO, 0).clamp(1, 1 << 16) as usize;
    Box::new(NfsParser::new(init.first_tx_id, max_tx, init.transport == Transport::Tcp, init.app.http.files))
}

fn probe(_dir: Direction, data: &[u8], cx: ProbeCx) -> Probe {
    let tcp = cx.transport == Transport::Tcp;
    let msg = if tcp {
        let Some(mark) = data.first_chunk::<4>() else { return Probe::NeedMore };
        let (_, len) = rpc::mark(*mark);
        if !(24..=32 << 20).contains(&len) {
            return Probe::NoMatch;
        }
        &data[4..]
    } else {
        data
    };
    let Some(head) = msg.first_chunk::<20>() else { return if tcp { Probe::NeedMore } else { Probe::NoMatch } };
    let word = |i: usize| u32::from_be_bytes([head[i], head[i + 1], head[i + 2], head[i + 3]]);
    let found = match word(4) {
        0 => word(8) == 2 && word(12) == PROGRAM && (2..=4).contains(&word(16)),
        1 => word(8) <= 1,
        _ => false,
    };
    if found {
        Probe::Match
    } else {
        Probe::NoMatch
    }
}

/// Message builders for the sample and the tests.
pub(crate) mod build {
    pub fn word(v: u32) -> Vec<u8> {
        v.to_be_bytes().to_vec()
    }

    pub fn opaque(v: &[u8]) -> Vec<u8> {
        let mut o = word(v.len() as u32);
        o.extend_from_slice(v);
        o.resize(4 + v.len().div_ceil(4) * 4, 0);
        o
    }

    /// A call from uid 1000 on `client` with AUTH_UNIX credentials.
    pub fn call(xid: u32, version: u32, procedure: u32, args: &[u8]) -> Vec<u8> {
        let cred = [word(0), opaque(b"client"), word(1000), word(1000), word(0)].concat();
        [word(xid), word(0), word(2), word(100_003), word(version), word(procedure), word(1), opaque(&cred), word(0), word(0), args.to_vec()]
            .concat()
    }

    /// An accepted reply that ran.
    pub fn reply(xid: u32, results: &[u8]) -> Vec<u8> {
        [word(xid), word(1), word(0), word(0), word(0), word(0), results.to_vec()].concat()
    }

    /// A record of one fragment, as TCP carries it.
    pub fn framed(m: &[u8]) -> Vec<u8> {
        [word(0x8000_0000 | m.len() as u32), m.to_vec()].concat()
    }
}

/// An NFSv3 session over TCP: a lookup, a whole file read, a file written
/// and committed by a synchronous write, and a rename.
fn sample() -> Vec<(Direction, Vec<u8>)> {
    use build::*;
    use Direction::{ToClient, ToServer};
    let dir = opaque(b"DIRH0001");
    let (read_fh, write_fh) = (opaque(b"FILE0001"), opaque(b"FILE0002"));
    let lookup = [dir.clone(), opaque(b"notes.txt")].concat();
    let found = [word(0), read_fh.clone(), word(0), word(0)].concat();
    let read = [read_fh, vec![0; 8], word(4096)].concat();
    let data = [word(0), word(0), word(11), word(1), opaque(b"hello world")].concat();
    let write = [write_fh, vec![0; 8], word(5), word(2), opaque(b"abcde")].concat();
    let written = [word(0), word(0), word(0), word(5), word(2), vec![0; 8]].concat();
    let rename = [dir.clone(), opaque(b"a"), dir, opaque(b"b")].concat();
    let renamed = [word(0), word(0), word(0), word(0), word(0)].concat();
    vec![
        (ToServer, framed(&call(1, 3, names::V3_LOOKUP, &lookup))),
        (ToClient, framed(&reply(1, &found))),
        (ToServer, framed(&call(2, 3, names::V3_READ, &read))),
        (ToClient, framed(&reply(2, &data))),
        (ToServer, framed(&call(3, 3, names::V3_WRITE, &write))),
        (ToClient, framed(&reply(3, &written))),
        (ToServer, framed(&call(4, 3, names::V3_RENAME, &rename))),
        (ToClient, framed(&reply(4, &renamed))),
    ]
}

pub static PROTO: ProtoDef = ProtoDef {
    name: "nfs",
    eve_name: None,
    detection: Detection { tcp: true, udp: true, ports: &[2049], ports_only: true, probe, counters_by_transport: true, answers_first: None },
    new_parser,
    buffers: &[],
    checks: checks::CHECKS,
    events: &[],
    event: crate::proto::no_other_events,
    options: &[],
    settings: SETTINGS,
    sample,
    sample_expected: None,
    files: true,
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
mod tests;
