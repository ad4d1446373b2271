//! DCE/RPC over TCP: a flow whose first bytes are a connection-oriented
//! DCE/RPC PDU header (version 5.0 or 5.1, a known PDU type, a data
//! representation and a fragment length that make sense) speaks `dcerpc`.
//! Its PDUs are read ([`parser`]): each bind or alter context with its
//! acknowledgement, and each request with its response (fragments joined)
//! is a transaction, logged as EVE `dcerpc` as Suricata writes it;
//! `dcerpc.iface`, `dcerpc.opnum` and `dcerpc.stub_data` (and their
//! `dce_*` names) run on requests. Each PDU's end asks for raw stream
//! inspection, as Suricata's parser does.
//!
//! Over UDP, a datagram whose header is a connectionless request or
//! response on any port speaks `dcerpc` too ([`udp`]): each call a
//! transaction, its interface and operation what `dcerpc.iface` and
//! `dcerpc.opnum` match. The `dce` byte order of `byte_test` and its kin
//! is each call's own ([`crate::proto::ProtoTx::dce_little_endian`]).
//!
//! Calls through SMB named pipes are read by [`carried`] for the SMB
//! parser.
//!
//! ```
//! use vigil_applayer::protocols::dcerpc::PROTO;
//! use vigil_applayer::proto::{ProbeCx, Probe};
//! use vigil_types::Direction::ToServer;
//! // A bind: version 5.0, type 11, first and last fragment, little-endian, 72 bytes.
//! let bind = [5, 0, 11, 3, 0x10, 0, 0, 0, 72, 0, 0, 0, 1, 0, 0, 0];
//! let probe = |d: &[u8]| (PROTO.detection.probe)(ToServer, d, ProbeCx::default());
//! assert_eq!(probe(&bind), Probe::Match);
//! assert_eq!(probe(&bind[..3]), Probe::NeedMore);
//! assert_eq!(probe(b"GET / HTTP/1.1\r\n"), Probe::NoMatch);
//! ```

pub mod carried;
mod checks;
pub mod parser;
pub mod pdu;
pub mod udp;

use crate::progress::Progress;
use crate::proto::{BufferDef, Detection, Probe, ProtoDef, Sides};
use vigil_types::Direction;

pub static PROTO: ProtoDef = ProtoDef {
    name: "dcerpc",
    eve_name: None,
    detection: Detection {
        tcp: true,
        udp: true,
        ports: &[135],
        ports_only: false,
        probe: |dir, data, cx| if cx.transport == crate::Transport::Udp { probe_udp(dir, data) } else { probe_tcp(data) },
        counters_by_transport: true,
        answers_first: None,
    },
    new_parser: |init| match init.transport {
        crate::Transport::Udp => udp::DcerpcUdpParser::boxed(init),
        _ => parser::DcerpcParser::boxed(init),
    },
    buffers: &[BufferDef {
        name: "dcerpc.stub_data",
        id: 0,
        sides: Sides::Both,
        default: Direction::ToServer,
        both_ways: true,
        need: Progress::Complete,
        multi: false,
    }],
    checks: checks::CHECKS,
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

/// A bind and its acknowledgement, little-endian.
fn sample() -> Vec<(Direction, Vec<u8>)> {
    // A PDU of type `ptype`, call id 1, first and last fragment, little-endian.
    let pdu = |ptype: u8, body: &[u8]| {
        let mut p = vec![5, 0, ptype, 3, 0x10, 0, 0, 0];
        p.extend_from_slice(&((HEADER_LEN + body.len()) as u16).to_le_bytes());
        p.extend_from_slice(&[0, 0, 1, 0, 0, 0]);
        p.extend_from_slice(body);
        p
    };
    // The endpoint mapper's interface, 3.0, in NDR's transfer syntax.
    let epm = [0x08, 0x83, 0xaf, 0xe1, 0x1f, 0x5d, 0xc9, 0x11, 0x91, 0xa4, 0x08, 0x00, 0x2b, 0x14, 0xa0, 0xfa, 3, 0, 0, 0];
    let ndr = [0x04, 0x5d, 0x88, 0x8a, 0xeb, 0x1c, 0xc9, 0x11, 0x9f, 0xe8, 0x08, 0x00, 0x2b, 0x10, 0x48, 0x60, 2, 0, 0, 0];
    let mut bind = vec![0xd0, 0x16, 0xd0, 0x16, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0];
    bind.extend_from_slice(&epm);
    bind.extend_from_slice(&ndr);
    let mut ack = vec![0xd0, 0x16, 0xd0, 0x16, 0x12, 0x34, 0, 0, 4, 0];
    ack.extend_from_slice(b"135\0\0\0");
    ack.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0]);
    ack.extend_from_slice(&ndr);
    vec![
        (Direction::ToServer, pdu(11, &bind)),
        (Direction::ToClient, pdu(12, &ack)),
        (Direction::ToServer, pdu(0, b"\x08\x00\x00\x00\x00\x00\x03\x00ABCDEFGH")),
        (Direction::ToClient, pdu(2, b"\x08\x00\x00\x00\x00\x00\x00\x00abcdefgh")),
    ]
}

/// `dcerpc.stub_data` (buffer 0) of a call: the stub of side `dir`, if any.
pub(crate) fn stub_buffer<'a>(req: &'a [u8], res: &'a [u8], dir: Direction, id: u8, index: usize) -> Option<&'a [u8]> {
    if id != 0 || index != 0 {
        return None;
    }
    let stub = match dir {
        Direction::ToServer => req,
        Direction::ToClient => res,
    };
    (!stub.is_empty()).then_some(stub)
}

/// A call's side: complete once done, its header read before.
pub(crate) fn side_progress(done: bool) -> Progress {
    if done {
        Progress::Complete
    } else {
        Progress::Headers
    }
}

/// The fixed part of a connection-oriented PDU header.
pub(crate) const HEADER_LEN: usize = 16;

/// PDU types of the connection-oriented protocol (request, response,
/// fault, bind, bind_ack, bind_nak, alter_context, alter_context_resp,
/// auth3, shutdown, co_cancel, orphaned, rts).
fn known_type(t: u8) -> bool {
    matches!(t, 0 | 2 | 3 | 11..=20)
}

/// A datagram is whole: it is a connectionless call or not.
fn probe_udp(dir: Direction, data: &[u8]) -> Probe {
    if udp::probe(dir, data) {
        Probe::Match
    } else {
        Probe::NoMatch
    }
}

/// Probes the first bytes of one direction of a TCP flow.
fn probe_tcp(data: &[u8]) -> Probe {
    let get = |i: usize| data.get(i).copied();
    // Each byte seen so far must fit; a short prefix that fits wants more.
    let fits = [
        get(0).map(|v| v == 5),
        get(1).map(|m| m <= 1),
        get(2).map(known_type),
        // Data representation: integer and character formats are one bit each.
        get(4).map(|d| d & 0xee == 0),
    ];
    if fits.contains(&Some(false)) {
        return Probe::NoMatch;
    }
    if data.len() < HEADER_LEN {
        return Probe::NeedMore;
    }
    match pdu_len(data) {
        Some(_) => Probe::Match,
        None => Probe::NoMatch,
    }
}

/// The length of the PDU whose header starts `h` (its fragment length, in
/// the byte order its data representation names); `None` if `h` is too
/// short, not version 5, or the length cannot even hold the header.
pub(crate) fn pdu_len(h: &[u8]) -> Option<u16> {
    let pair = [*h.get(8)?, *h.get(9)?];
    let len = if h[4] & 0x10 != 0 { u16::from_le_bytes(pair) } else { u16::from_be_bytes(pair) };
    (h[0] == 5 && len as usize >= HEADER_LEN).then_some(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(vers: u8, minor: u8, ptype: u8, drep: u8, frag: u16) -> Vec<u8> {
        let mut h = vec![vers, minor, ptype, 3, drep, 0, 0, 0];
        if drep & 0x10 != 0 {
            h.extend_from_slice(&frag.to_le_bytes());
        } else {
            h.extend_from_slice(&frag.to_be_bytes());
        }
        h.extend_from_slice(&[0, 0, 1, 0, 0, 0]);
        h
    }

    #[test]
    fn headers_of_either_byte_order_match() {
        assert_eq!(probe_tcp(&header(5, 0, 11, 0x10, 72)), Probe::Match);
        assert_eq!(probe_tcp(&header(5, 1, 0, 0x00, 100)), Probe::Match);
        assert_eq!(probe_tcp(&header(5, 0, 12, 0x10, 16)), Probe::Match);
    }

    #[test]
    fn anything_out_of_place_does_not() {
        assert_eq!(probe_tcp(&header(4, 0, 11, 0x10, 72)), Probe::NoMatch);
        assert_eq!(probe_tcp(&header(5, 2, 11, 0x10, 72)), Probe::NoMatch);
        assert_eq!(probe_tcp(&header(5, 0, 7, 0x10, 72)), Probe::NoMatch);
        assert_eq!(probe_tcp(&header(5, 0, 11, 0x12, 72)), Probe::NoMatch);
        assert_eq!(probe_tcp(&header(5, 0, 11, 0x10, 15)), Probe::NoMatch);
        assert_eq!(probe_tcp(&[5, 0, 11, 3, 0x10]), Probe::NeedMore);
        assert_eq!(probe_tcp(&[5, 9]), Probe::NoMatch);
        assert_eq!(probe_tcp(&[]), Probe::NeedMore);
    }
}
