//! Telnet (RFC 854), detected but not parsed: as Suricata does, a TCP flow
//! to port 23 (or the configured `detection-ports`) that no stronger
//! signature claimed speaks `telnet`. Telnet has no signature of its own
//! (option negotiation is optional), so the port is all there is, and it is
//! probed last. `alert telnet ...` rules with payload keywords apply to such
//! flows; Suricata 8 writes no EVE record of its own for telnet, and neither
//! does vigil.
//!
//! ```
//! use vigil_applayer::protocols::telnet::PROTO;
//! use vigil_applayer::proto::{ProbeCx, Probe};
//! use vigil_types::Direction::ToServer;
//! let probe = |d: &[u8]| (PROTO.detection.probe)(ToServer, d, ProbeCx::tcp(40000, 23));
//! assert_eq!(probe(b"login: "), Probe::Match);
//! assert_eq!(probe(b""), Probe::NeedMore);
//! ```

use crate::proto::{Detection, NotParsed, ProbeCx, Probe, ProtoDef};
use vigil_types::Direction;

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
    includes: &[],
    borrows: &[],
    base_need: crate::proto::HEADERS_BOTH,
    hooks: crate::proto::Hooks::GENERIC,
    off_by_default: false,
    stream_depth: None,
};

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
