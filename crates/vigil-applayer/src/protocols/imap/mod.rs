//! IMAP (RFC 9051), detected but not parsed, as Suricata 8 has it
//! (`enabled: detection-only` in its stock configuration): a client whose
//! first line is a tag and a command (`a1 CAPABILITY`, `A001 LOGIN ...`),
//! or on port 143 a server whose first bytes are an untagged `* OK`
//! greeting, speaks `imap`. `alert imap` rules with payload keywords apply
//! to its flows; there are no IMAP records, in Suricata 8 either.
//!
//! ```
//! use vigil_applayer::protocols::imap::PROTO;
//! use vigil_applayer::proto::{ProbeCx, Probe};
//! use vigil_types::Direction::{ToClient, ToServer};
//! let probe = |dir, d: &[u8]| (PROTO.detection.probe)(dir, d, ProbeCx::tcp(40000, 143));
//! assert_eq!(probe(ToServer, b"a0000 CAPABILITY\r\n"), Probe::Match);
//! assert_eq!(probe(ToClient, b"* OK IMAP4rev1 ready\r\n"), Probe::Match);
//! assert_eq!(probe(ToServer, b"GET / HTTP/1.1\r\n"), Probe::NoMatch);
//! ```

use crate::proto::{Detection, NotParsed, ProbeCx, Probe, ProtoDef};
use vigil_types::Direction;

/// Commands a client may open with (RFC 9051 6.1, 6.2).
const OPENING_COMMANDS: &[&[u8]] =
    &[b"CAPABILITY", b"LOGIN", b"AUTHENTICATE", b"STARTTLS", b"NOOP", b"LOGOUT", b"ID", b"ENABLE"];

pub static PROTO: ProtoDef = ProtoDef {
    name: "imap",
    eve_name: None,
    detection: Detection {
        tcp: true,
        udp: false,
        ports: &[143],
        ports_only: false,
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
    frames: &[],
};

fn sample() -> Vec<(Direction, Vec<u8>)> {
    vec![
        (Direction::ToServer, b"a0000 CAPABILITY\r\n".to_vec()),
        (Direction::ToClient, b"* CAPABILITY IMAP4rev1\r\na0000 OK done\r\n".to_vec()),
    ]
}

fn probe(dir: Direction, data: &[u8], cx: ProbeCx) -> Probe {
    match dir {
        Direction::ToClient if !cx.has(143) => Probe::NoMatch,
        Direction::ToClient => crate::proto::probe_openings(data, &[b"* OK"], false),
        Direction::ToServer => {
            // A tag (letters and digits), a space, a command word.
            let tag = data.iter().take_while(|c| c.is_ascii_alphanumeric() || **c == b'.').count();
            if tag == 0 || tag > 32 {
                return if data.is_empty() { Probe::NeedMore } else { Probe::NoMatch };
            }
            let Some(rest) = data.get(tag..) else { return Probe::NeedMore };
            let Some(rest) = rest.strip_prefix(b" ") else {
                return if rest.is_empty() { Probe::NeedMore } else { Probe::NoMatch };
            };
            let word_len = rest.iter().position(|c| !c.is_ascii_alphabetic()).unwrap_or(rest.len());
            if word_len == rest.len() {
                return Probe::NeedMore;
            }
            let word = &rest[..word_len];
            if OPENING_COMMANDS.iter().any(|c| c.eq_ignore_ascii_case(word)) {
                Probe::Match
            } else {
                Probe::NoMatch
            }
        }
    }
}
