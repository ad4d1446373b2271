//! SMB over TCP, detected but not parsed, on any port: a flow whose first
//! NetBIOS session message carries an SMB1, SMB2 or SMB3-transform header
//! speaks `smb`. On port 139 the session service's control messages (the
//! session request and its answer) may come first; elsewhere a first byte
//! like theirs is more likely a WebSocket frame. Rules written
//! `alert smb ...` (and, since SMB carries DCE/RPC, `alert dcerpc ...`)
//! with payload keywords then apply to it; the `smb.*` keywords and file
//! extraction, which need the parsed commands, are not run yet.
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

use crate::proto::{Detection, NotParsed, ProbeCx, Probe, ProtoDef};
use vigil_types::Direction;

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
    new_parser: NotParsed::boxed,
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
    includes: &["dcerpc"],
    base_need: crate::proto::HEADERS_BOTH,
    hooks: crate::proto::Hooks::GENERIC,
    off_by_default: false,
};

/// An SMB2 negotiate request and its answer, in NetBIOS session messages.
fn sample() -> Vec<(Direction, Vec<u8>)> {
    let message = |flags: u8| {
        let mut m = vec![0, 0, 0, 68];
        m.extend_from_slice(b"\xfeSMB");
        m.extend_from_slice(&[64, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, flags]);
        m.resize(72, 0);
        m
    };
    vec![(Direction::ToServer, message(0)), (Direction::ToClient, message(1))]
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
