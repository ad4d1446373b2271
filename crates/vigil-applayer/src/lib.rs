//! Application layer: which protocol a flow speaks, and the protocols
//! that turn its ordered bytes into transactions, each a folder of
//! [`protocols`] written against the protocol API ([`proto`]).
//!
//! Every parser follows one contract ([`proto::ProtoParser`]): it is
//! offered each direction's bytes in order, in chunks of any size, consumes
//! what is complete and says how much more an unfinished unit needs
//! ([`ParseResult::Incomplete`]); the caller keeps the rest, within a bound.
//! Each transaction ([`proto::ProtoTx`]) answers its protocol's buffers,
//! which rules select with sticky buffers (`http.uri`, `dns.query`,
//! `tls.sni`, ...), and writes its EVE body under Suricata's names.
//!
//! The engine holds one [`AppFlow`] per flow and never drives a parser
//! itself. The flow runs protocol detection ([`detect`]: every enabled
//! protocol probed on the first bytes of each direction, ports only a hint),
//! replays what detection kept into the parser it chose, keeps what that
//! parser left unfinished (bounded by [`AppConfig::max_pending`]) and hands
//! back its transactions as [`TxRef`]s, with one [`Progress`] scale and one
//! per-direction buffer lookup for every protocol. After an HTTP CONNECT or
//! Upgrade, or a STARTTLS (SMTP, POP3) the server accepted, it detects again
//! what runs inside the tunnel. A flow another one announced (an FTP data
//! channel, [`proto::Expectation`]) is started by the engine with
//! [`AppFlow::expected`]: it speaks the announced protocol from its first
//! byte, no probing asked.
//!
//! ```
//! use vigil_applayer::{http, AppConfig, AppFlow, BufferId, Progress, Transport};
//! use vigil_types::Direction;
//!
//! let mut flow = AppFlow::new(&AppConfig::default(), Transport::Tcp, 49152, 8080);
//! flow.feed(Direction::ToServer, b"GET /index.html HTTP/1.1\r\nHo");
//! flow.feed(Direction::ToServer, b"st: example.com\r\n\r\n");
//! assert_eq!(flow.proto(), http::PROTO.app_proto());
//! let tx = flow.txs().next().unwrap();
//! assert_eq!(tx.progress(Direction::ToServer), Progress::Complete);
//! let uri = BufferId::Proto(http::Buffer::Uri as u8);
//! assert_eq!(tx.buffer(Direction::ToServer, uri, 0), Some(&b"/index.html"[..]));
//! ```

pub mod codecs;
mod config;
pub mod detect;
pub mod files;
mod flow;
#[cfg(test)]
mod flow_tests;
pub mod frames;
pub mod offsets;
mod other_side;
mod parser;
mod progress;
pub mod proto;
pub mod protocols;
pub mod tail;

mod txref;

/// Protocols of the table, under their old paths.
pub use protocols::{dns, http, tls};

pub use config::{AppConfig, Encryption, ProbePorts, SmtpMime, Transport};
pub use detect::Detect;
pub use files::{ByteRange, File, FileConfig, FileState, HoldBudget, MagicFn, RangePart};
pub use flow::{AppCounters, AppFlow};
pub use frames::Frame;
pub use parser::{AppEvent, BufferId, ParseResult};
pub use progress::Progress;
pub use txref::TxRef;
pub use vigil_types::AppProto;
