//! Application layer: which protocol a flow speaks, and streaming parsers
//! for HTTP/1.x, DNS and TLS that turn its ordered bytes into transactions.
//!
//! Every parser follows one contract ([`AppParser`]): it is offered each
//! direction's bytes in order, in chunks of any size, consumes what is
//! complete and says how much more an unfinished unit needs
//! ([`ParseResult::Incomplete`]); the caller keeps the rest, within a bound.
//! Gaps are reported with [`AppParser::on_gap`]. Each [`Transaction`]
//! answers [`Transaction::buffer`] for the inspection buffers rules select
//! with sticky buffers (`http.uri`, `dns.query`, `tls.sni`, ...), and its
//! typed fields serialize under Suricata's EVE names.

pub mod dns;
pub mod http;
mod parser;
pub mod tls;

pub use parser::{AppEvent, AppParser, BufferId, ParseResult, Transaction};
pub use vigil_types::AppProto;
