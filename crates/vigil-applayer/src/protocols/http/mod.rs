//! HTTP/1.0 and HTTP/1.1 (and 0.9 simple requests): a streaming parser that
//! turns the two byte streams of a flow into request/response transactions,
//! with the semantics of Suricata's libhtp in its default IDS personality.
//!
//! # What it owns
//!
//! - [`HttpParser`]: one per flow, the table's [`ProtoParser`](crate::proto::ProtoParser).
//!   Each direction has its own state machine (start line → headers → body);
//!   requests open transactions and the Nth response completes the Nth
//!   transaction (pipelining, `100 Continue` interim responses). A response
//!   nobody asked for gets a transaction of its own.
//! - [`HttpTx`]: one exchange; answers every [`Buffer`]
//!   (normalized and raw URI, host, headers, bodies, ...) and serializes to
//!   Suricata's EVE `http` object through [`HttpTx::eve`].
//! - [`probe`]: port-independent detection from the first bytes.
//!
//! # How data flows
//!
//! ```text
//! bytes ─▶ line framing ─▶ start line / header table ─▶ framing decision
//!                                                         │
//!              Content-Length | chunked (+ trailers) | until close | none
//!                                                         │
//!                     gzip/deflate decoder (bounded) ─▶ body window (first N bytes)
//! ```
//!
//! Lines end at LF (CRLF, bare LF); on the response side also at a lone CR
//! and at the deformed endings libhtp accepts, since browsers do too.
//! Only whole lines are consumed: an unfinished line is left to the caller
//! ([`ParseResult::Incomplete`](crate::ParseResult)), and a line longer than
//! [`HttpConfig::max_header_bytes`] is cut, reported and skipped, so the
//! caller never holds more than that. Bodies stream through: only the first
//! `*_body_limit` decoded bytes are kept, and decompression stops at
//! [`HttpConfig::decompress_limit`]. After a successful CONNECT or a
//! `101 Switching Protocols`, [`HttpParser::tunnel`] turns true and the
//! parser stops reading the flow. [`HttpParser::close`] tells it a direction
//! ended: what the caller still held is taken as final, and a body delimited
//! by the close completes. [`HttpParser::on_gap`]
//! inside a body only counts the lost bytes; elsewhere the direction skips
//! to the next line that starts a message.
//!
//! # Example
//!
//! ```
//! use vigil_applayer::http::{Buffer, HttpConfig, HttpParser};
//! use vigil_types::Direction;
//!
//! let mut p = HttpParser::new(HttpConfig::default());
//! p.parse(Direction::ToServer, b"GET /a/../index.html HTTP/1.1\r\nHost: Example.com\r\n\r\n");
//! p.parse(Direction::ToClient, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi");
//! let tx = &p.txs()[0];
//! assert_eq!(tx.buffer(Direction::ToServer, Buffer::Uri, 0), Some(&b"/index.html"[..]));
//! assert_eq!(tx.buffer(Direction::ToServer, Buffer::Host, 0), Some(&b"example.com"[..]));
//! assert_eq!(tx.status(), Some(200));
//! assert!(tx.complete(Direction::ToClient));
//! ```

mod body;
pub(crate) mod decompress;
mod eve;
mod events;
mod headers;
mod line;
mod parser;
mod proto;
mod request;
mod response;
pub(crate) mod sample;
mod side;
mod tx;
mod uri;

#[cfg(test)]
mod tests;

use vigil_types::Direction;

pub use eve::{HttpEve, HttpEveContentRange, HttpEveHeader};
pub use events::event_bit;
pub use headers::Header;
pub use parser::{HttpParser, HttpStats};
pub use proto::{Buffer, PROTO};
pub use tx::HttpTx;

/// Limits of one HTTP parser; every one bounds memory or work per flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpConfig {
    /// Request body bytes kept for inspection (Suricata `request-body-limit`).
    pub request_body_limit: usize,
    /// Response body bytes kept for inspection (Suricata `response-body-limit`).
    pub response_body_limit: usize,
    /// The longest line accepted, and the header bytes kept per message;
    /// beyond it lines are cut and headers dropped, with an event.
    pub max_header_bytes: usize,
    /// Headers kept per message (Suricata 8 `request_too_many_headers`).
    pub max_headers: usize,
    /// Transactions held; past it the oldest is dropped (and counted).
    pub max_txs: usize,
    /// Decoded bytes produced per body before decompression stops (0 disables decompression).
    pub decompress_limit: usize,
    /// Output/input ratio above which a stopped decompression counts as a bomb.
    pub decompress_ratio_cap: u64,
    /// What the file service computes and keeps for bodies that are files.
    pub files: crate::files::FileConfig,
    /// Bytes of a request's or a response's body followed as a file; past
    /// them the file is truncated (0: no bound). Suricata follows files up
    /// to its body limits (`request-body-limit`, `response-body-limit`),
    /// which are set apart from the inspection limits above because vigil
    /// bounds what it keeps even where Suricata's limit is 0.
    pub request_file_limit: u64,
    pub response_file_limit: u64,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            request_body_limit: 100 * 1024,
            response_body_limit: 100 * 1024,
            max_header_bytes: 64 * 1024,
            max_headers: 1024,
            max_txs: 512,
            decompress_limit: 1024 * 1024,
            decompress_ratio_cap: 2048,
            files: crate::files::FileConfig::default(),
            request_file_limit: 100 * 1024,
            response_file_limit: 100 * 1024,
        }
    }
}

/// Whether the first bytes of a direction look like HTTP/1.x.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    Match,
    NoMatch,
    /// Too few bytes to tell.
    NeedMore,
}

/// Port-independent detection: a known method followed by a space or tab
/// towards the server, `HTTP/` towards the client (both any case).
pub fn probe(data: &[u8], dir: Direction) -> Probe {
    if data.is_empty() {
        return Probe::NeedMore;
    }
    match dir {
        Direction::ToServer => {
            let mut need_more = false;
            for m in request::METHODS {
                match data.get(m.len()) {
                    Some(&sep) if line::starts_with_ci(data, m) && (sep == b' ' || sep == b'\t') => {
                        return Probe::Match;
                    }
                    None if line::starts_with_ci(m, data) => need_more = true,
                    _ => {}
                }
            }
            if need_more {
                Probe::NeedMore
            } else {
                Probe::NoMatch
            }
        }
        Direction::ToClient => {
            if line::starts_with_ci(data, b"HTTP/") {
                Probe::Match
            } else if data.len() < 5 && line::starts_with_ci(b"HTTP/", data) {
                Probe::NeedMore
            } else {
                Probe::NoMatch
            }
        }
    }
}
