//! SMB over TCP on any port: a flow whose first NetBIOS session message
//! carries an SMB1, SMB2 or SMB3-transform header speaks `smb`. On port
//! 139 the session service's control messages (the session request and
//! its answer) may come first; elsewhere a first byte like theirs is more
//! likely a WebSocket frame.
//!
//! Its messages are parsed ([`parser`]): SMB2/3 compounds and SMB1 AndX
//! chains, each command with its answer a transaction as Suricata forms
//! them, a file read or written through a handle one transaction until the
//! handle closes, DCE/RPC calls through named pipes logged inside the
//! command that carried them; EVE `smb` with Suricata's fields;
//! `smb.share`, `smb.named_pipe`, `smb.ntlmssp_user`, `smb.ntlmssp_domain`
//! and `smb.version`. Rules written `alert dcerpc ...` with payload
//! keywords apply to SMB flows, as SMB carries DCE/RPC.
//!
//! DCE/RPC calls through pipes are DCE/RPC transactions to rules written
//! for DCE/RPC ([`crate::protocols::dcerpc::carried`]).
//!
//! Not yet: the files themselves (file keywords, `fileinfo`, the file
//! store), SMB1's second-level transactions (`TRANS2` set-info renames and
//! deletes), SMB3 encryption beyond noticing it, app-layer events.
//!
//! SMB is probed last of the table: a byte of 0 and a length are all its
//! framing has before the magic, so every stronger signature goes first.
//!
//! ```
//! use vigil_applayer::protocols::smb::PROTO;
//! use vigil_applayer::proto::{ProbeCx, Probe};
//! use vigil_types::Direction::ToServer;
//! let probe = |d: &[u8]| (PROTO.detection.probe)(ToServer, d, ProbeCx::tcp(40000, 445));
//! let negotiate = [0, 0, 0, 0x2f, 0xff, b'S', b'M', b'B', 0x72];
//! assert_eq!(probe(&negotiate), Probe::Match);
//! assert_eq!(probe(&negotiate[..5]), Probe::NeedMore);
//! assert_eq!(probe(b"\x00\x00\x00\x10HTTP"), Probe::NoMatch);
//! ```

mod checks;
pub mod names;
pub mod parser;
mod smb1;
mod smb2;
pub mod tx;

use crate::progress::Progress;
use crate::proto::{BufferDef, Detection, ProbeCx, Probe, ProtoDef, Sides};
use vigil_types::Direction;

/// A buffer of the tree connect or session setup request, inspected to the
/// server (as Suricata registers them) once the answer came.
const fn request_buffer(name: &'static str, id: u8) -> BufferDef {
    BufferDef { name, id, sides: Sides::ToServer, default: Direction::ToServer, both_ways: false, need: Progress::Complete, multi: false }
}

pub static PROTO: ProtoDef = ProtoDef {
    name: "smb",
    eve_name: None,
    detection: Detection {
        tcp: true,
        udp: false,
        ports: &[139, 445],
        ports_only: false,
        probe: probe_tcp,
        counters_by_transport: false,
        answers_first: None,
    },
    new_parser: parser::SmbParser::boxed,
    buffers: &[
        request_buffer("smb.share", tx::SHARE),
        request_buffer("smb.named_pipe", tx::NAMED_PIPE),
        request_buffer("smb.ntlmssp_user", tx::NTLMSSP_USER),
        request_buffer("smb.ntlmssp_domain", tx::NTLMSSP_DOMAIN),
    ],
    checks: checks::CHECKS,
    events: &[],
    event: crate::proto::no_other_events,
    options: &[],
    settings: &[],
    sample,
    sample_expected: None,
    files: true,
    transactions: true,
    aliases: &[],
    includes: &["dcerpc"],
    borrows: &[],
    base_need: crate::proto::HEADERS_BOTH,
    hooks: crate::proto::Hooks::GENERIC,
    off_by_default: false,
    stream_depth: Some(0),
    frames: &[
        "nbss.pdu", "nbss.hdr", "nbss.data", "smb1.pdu", "smb1.hdr", "smb1.data", "smb2.pdu", "smb2.hdr", "smb2.data",
        "smb3.pdu", "smb3.hdr", "smb3.data",
    ],
};

/// An SMB2 conversation: negotiate, a tree connect to `IPC$`, a pipe
/// opened, a DCE/RPC bind and a call written to it and their answers
/// read, the pipe closed.
fn sample() -> Vec<(Direction, Vec<u8>)> {
    use Direction::{ToClient, ToServer};
    // One SMB2 message in a session message; `body` starts after the header.
    let msg = |command: u16, reply: bool, id: u64, tree: u32, body: &[u8]| {
        let mut m = b"\xfeSMB".to_vec();
        m.extend_from_slice(&[64, 0, 1, 0, 0, 0, 0, 0]);
        m.extend_from_slice(&command.to_le_bytes());
        m.extend_from_slice(&[1, 0]);
        m.extend_from_slice(&u32::from(reply).to_le_bytes());
        m.extend_from_slice(&[0; 4]);
        m.extend_from_slice(&id.to_le_bytes());
        m.extend_from_slice(&[0; 4]);
        m.extend_from_slice(&tree.to_le_bytes());
        m.extend_from_slice(&7u64.to_le_bytes());
        m.extend_from_slice(&[0; 16]);
        m.extend_from_slice(body);
        let mut n = (m.len() as u32).to_be_bytes().to_vec();
        n.extend_from_slice(&m);
        n
    };
    let utf16 = |s: &str| s.encode_utf16().flat_map(u16::to_le_bytes).collect::<Vec<u8>>();
    let handle: [u8; 16] = *b"\x01\0\0\0\0\0\0\0\x02\0\0\0\xff\xff\xff\xff";
    let mut negotiate = vec![36, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0];
    negotiate.extend_from_slice(&[0x11; 16]);
    negotiate.extend_from_slice(&[0; 8]);
    negotiate.extend_from_slice(&[0x10, 0x02]);
    let mut negotiated = vec![65, 0, 1, 0, 0x10, 0x02, 0, 0];
    negotiated.extend_from_slice(&[0x22; 16]);
    negotiated.extend_from_slice(&[0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0]);
    negotiated.resize(64, 0);
    let share = utf16("\\\\host\\IPC$");
    let mut tree = vec![9, 0, 0, 0, 72, 0];
    tree.extend_from_slice(&(share.len() as u16).to_le_bytes());
    tree.extend_from_slice(&share);
    let name = utf16("srvsvc");
    let mut create = vec![57, 0, 0, 0];
    create.resize(36, 0);
    create.extend_from_slice(&1u32.to_le_bytes());
    create.extend_from_slice(&0u32.to_le_bytes());
    create.extend_from_slice(&120u16.to_le_bytes());
    create.extend_from_slice(&(name.len() as u16).to_le_bytes());
    create.extend_from_slice(&[0; 8]);
    create.extend_from_slice(&name);
    let mut created = vec![89, 0];
    created.resize(64, 0);
    created.extend_from_slice(&handle);
    created.resize(88, 0);
    // A DCE/RPC bind to srvsvc 3.0 and its acknowledgement.
    let srvsvc = [0xc8, 0x4f, 0x32, 0x4b, 0x70, 0x16, 0xd3, 0x01, 0x12, 0x78, 0x5a, 0x47, 0xbf, 0x6e, 0xe1, 0x88, 3, 0, 0, 0];
    let ndr = [0x04, 0x5d, 0x88, 0x8a, 0xeb, 0x1c, 0xc9, 0x11, 0x9f, 0xe8, 0x08, 0x00, 0x2b, 0x10, 0x48, 0x60, 2, 0, 0, 0];
    let mut bind = vec![5, 0, 11, 3, 0x10, 0, 0, 0, 72, 0, 0, 0, 1, 0, 0, 0, 0xb8, 0x10, 0xb8, 0x10, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0];
    bind.extend_from_slice(&srvsvc);
    bind.extend_from_slice(&ndr);
    let mut ack = vec![5, 0, 12, 3, 0x10, 0, 0, 0, 60, 0, 0, 0, 1, 0, 0, 0, 0xb8, 0x10, 0xb8, 0x10, 0x12, 0x34, 0, 0, 4, 0];
    ack.extend_from_slice(b"135\0\0\0");
    ack.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0]);
    ack.extend_from_slice(&ndr);
    // A write of `pdu` to the pipe, a read request, and the read's answer carrying `answer`.
    let write = |pdu: &[u8]| {
        let mut w = vec![49, 0, 112, 0];
        w.extend_from_slice(&(pdu.len() as u32).to_le_bytes());
        w.extend_from_slice(&[0; 8]);
        w.extend_from_slice(&handle);
        w.extend_from_slice(&[0; 16]);
        w.extend_from_slice(pdu);
        w
    };
    let mut read = vec![49, 0, 0, 0, 0, 16, 0, 0];
    read.extend_from_slice(&[0; 8]);
    read.extend_from_slice(&handle);
    read.extend_from_slice(&[0; 17]);
    let data = |answer: &[u8]| {
        let mut d = vec![17, 0, 80, 0];
        d.extend_from_slice(&(answer.len() as u32).to_le_bytes());
        d.extend_from_slice(&[0; 8]);
        d.extend_from_slice(answer);
        d
    };
    // NetrShareEnum's neighbour, opnum 15, through context 0, and its response.
    let mut request = vec![5, 0, 0, 3, 0x10, 0, 0, 0, 32, 0, 0, 0, 2, 0, 0, 0, 8, 0, 0, 0, 0, 0, 15, 0];
    request.extend_from_slice(b"ABCDEFGH");
    let mut response = vec![5, 0, 2, 3, 0x10, 0, 0, 0, 28, 0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0];
    response.extend_from_slice(&[0; 4]);
    let wrote = [17, 0, 0, 0, 72, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    let mut close = vec![24, 0, 0, 0, 0, 0, 0, 0];
    close.extend_from_slice(&handle);
    vec![
        (ToServer, msg(0, false, 0, 0, &negotiate)),
        (ToClient, msg(0, true, 0, 0, &negotiated)),
        (ToServer, msg(3, false, 1, 0, &tree)),
        (ToClient, msg(3, true, 1, 1, &[16, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])),
        (ToServer, msg(5, false, 2, 1, &create)),
        (ToClient, msg(5, true, 2, 1, &created)),
        (ToServer, msg(9, false, 3, 1, &write(&bind))),
        (ToClient, msg(9, true, 3, 1, &wrote)),
        (ToServer, msg(8, false, 4, 1, &read)),
        (ToClient, msg(8, true, 4, 1, &data(&ack))),
        (ToServer, msg(9, false, 5, 1, &write(&request))),
        (ToClient, msg(9, true, 5, 1, &wrote)),
        (ToServer, msg(8, false, 6, 1, &read)),
        (ToClient, msg(8, true, 6, 1, &data(&response))),
        (ToServer, msg(6, false, 7, 1, &close)),
        (ToClient, msg(6, true, 7, 1, &[60, 0, 0, 0])),
    ]
}

/// The protocol ids of SMB1 (`\xffSMB`), SMB2/3 (`\xfeSMB`) and an SMB3
/// transform header (`\xfdSMB`).
const MAGICS: [[u8; 4]; 3] = [*b"\xffSMB", *b"\xfeSMB", *b"\xfdSMB"];

/// Control messages of the NetBIOS session service that may come first on port 139.
const MAX_CONTROL: usize = 2;

/// Probes the first bytes of one direction of a TCP flow: a session
/// message (type 0) whose payload starts with an SMB protocol id, after at
/// most [`MAX_CONTROL`] control messages on port 139.
fn probe_tcp(_dir: Direction, data: &[u8], cx: ProbeCx) -> Probe {
    probe(data, if cx.has(139) { MAX_CONTROL } else { 0 })
}

fn probe(mut data: &[u8], control: usize) -> Probe {
    for _ in 0..=control {
        match data.first() {
            None => return Probe::NeedMore,
            Some(0) => return session_message(data),
            // Session request, positive/negative response, retarget, keepalive.
            Some(0x81..=0x85) if control > 0 => {
                let Some(h) = data.get(..4) else { return Probe::NeedMore };
                let len = 4 + ((usize::from(h[1]) & 1) << 16 | usize::from(h[2]) << 8 | usize::from(h[3]));
                match data.get(len..) {
                    Some(rest) => data = rest,
                    None => return Probe::NeedMore,
                }
            }
            Some(_) => return Probe::NoMatch,
        }
    }
    Probe::NoMatch
}

/// A session message: its payload must start with an SMB protocol id.
fn session_message(data: &[u8]) -> Probe {
    let magic = data.get(4..).unwrap_or_default();
    let n = magic.len().min(4);
    if !MAGICS.iter().any(|m| m[..n] == magic[..n]) {
        return Probe::NoMatch;
    }
    if n < 4 {
        return Probe::NeedMore;
    }
    Probe::Match
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe_tcp(d: &[u8]) -> Probe {
        probe(d, 0)
    }

    fn probe_tcp_netbios(d: &[u8]) -> Probe {
        probe(d, MAX_CONTROL)
    }

    #[test]
    fn each_dialect_is_found_and_nothing_else() {
        for m in MAGICS {
            let mut d = vec![0, 0, 0, 0x40];
            d.extend_from_slice(&m);
            assert_eq!(probe_tcp(&d), Probe::Match);
        }
        assert_eq!(probe_tcp(b"\x00\x00\x00\x40\xffSMX"), Probe::NoMatch);
        assert_eq!(probe_tcp(b"\x86\x00\x00\x44"), Probe::NoMatch);
        assert_eq!(probe_tcp(b"\x00\x00"), Probe::NeedMore);
        assert_eq!(probe_tcp(b"\x00\x00\x00\x40\xfeS"), Probe::NeedMore);
        assert_eq!(probe_tcp(b""), Probe::NeedMore);
    }

    #[test]
    fn a_port_139_session_request_comes_first() {
        let mut d = vec![0x81, 0, 0, 4, 1, 2, 3, 4];
        assert_eq!(probe_tcp_netbios(&d), Probe::NeedMore);
        assert_eq!(probe_tcp(&d), Probe::NoMatch, "elsewhere such a byte starts no SMB");
        d.extend_from_slice(b"\x00\x00\x00\x40\xffSMB");
        assert_eq!(probe_tcp_netbios(&d), Probe::Match);
        // The positive answer has no body.
        assert_eq!(probe_tcp_netbios(b"\x82\x00\x00\x00\x00\x00\x00\x40\xfeSMB"), Probe::Match);
        assert_eq!(probe_tcp_netbios(b"\x82\x00\x00\x00\x82\x00\x00\x00\x82\x00\x00\x00"), Probe::NoMatch);
        assert_eq!(probe_tcp_netbios(b"\x81\x00\x00\x44"), Probe::NeedMore);
    }
}
