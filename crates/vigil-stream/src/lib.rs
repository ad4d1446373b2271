//! TCP streams: session tracking and reassembly of both directions, so that
//! detection and the application layer see the bytes the end host sees.
//!
//! A [`TcpSession`] lives in its flow. Each segment goes through
//! [`TcpSession::handle`]: the handshake (split handshakes included) and
//! teardown move the [`TcpState`] as Suricata's stream engine does, so the
//! state names EVE reports agree; sequence numbers become stream offsets
//! (wrap-safe, 64-bit), and payloads go into each direction's
//! [`Reassembly`], where overlapping segments with different bytes are
//! resolved by the receiving host's [`Policy`] (`host-os-policy`). Data
//! becomes ready for inspection once the receiver acknowledged it (IDS mode;
//! a Fast Open SYN's data too), a chunk at a time
//! (`stream.reassembly.to*-chunk-size`), or all at once when the stream
//! closes or its flow ends; holes the receiver acknowledged are skipped
//! and counted as gaps. A session picked up from the server's SYN/ACK
//! ([`StreamCtx::starts_from_server`]) tells its flow to turn round, and
//! [`TcpSession::summary`] is what a flow record says of it. Memory is bounded by `stream.memcap` (sessions),
//! `stream.reassembly.memcap` (bytes held across the worker) and
//! `stream.reassembly.depth` (bytes per direction).
//!
//! ```
//! use vigil_stream::{Segment, StreamConfig, StreamCtx, flags::*};
//! use vigil_types::Direction::*;
//!
//! let mut ctx = StreamCtx::new(StreamConfig::default());
//! let dst = "198.18.0.2".parse().unwrap();
//! let seg = |dir, flags, seq, ack, payload: &'static [u8]| Segment { dir, flags, seq, ack, payload, dst, ts: None, tfo: false, urg: None };
//! let syn = seg(ToServer, SYN, 100, 0, b"");
//! let mut ssn = ctx.start(&syn).unwrap();
//! let mut events = |_e| {};
//! for s in [syn, seg(ToClient, SYN | ACK, 500, 101, b""), seg(ToServer, ACK, 101, 501, b""),
//!           seg(ToServer, ACK | PSH, 104, 501, b"ld!"), seg(ToServer, ACK | PSH, 101, 501, b"wor"),
//!           seg(ToClient, ACK, 501, 107, b"")] {
//!     ssn.handle(&mut ctx, &s, &mut events);
//! }
//! // Acknowledged, but less than a chunk: not ready until the stream closes or is flushed.
//! assert_eq!(ssn.raw_ready(&mut ctx, ToServer, false), None);
//! let (start, end) = ssn.raw_ready(&mut ctx, ToServer, true).unwrap();
//! let mut buf = Vec::new();
//! ssn.read(ToServer, start, end, &mut buf);
//! assert_eq!(buf, b"world!");
//! ```

mod config;
mod counters;
mod events;
mod policy;
mod reassembly;
mod session;
mod teardown;

pub use config::{StreamConfig, UrgentPolicy};
pub use counters::StreamCounters;
pub use events::{StreamEvent, StreamEventSet};
pub use policy::{HostPolicies, Policy};
pub use reassembly::{Inserted, Reassembly};
pub use session::{flags, Handled, Segment, SessionSummary, StreamCtx, TcpSession, TcpState, TcpStream, SESSION_COST};
