//! IP reassembly: turns IPv4 and IPv6 fragments back into datagrams, the way
//! the host they are sent to would.
//!
//! The decoder stops at a fragment (`Packet::fragment`). The engine hands
//! each such packet to a [`Defragmenter`], which files it under its datagram
//! (addresses, identification, protocol, VLANs, tunnel depth), resolves
//! overlaps with the destination's [`Policy`] (Suricata's target-based
//! policies, chosen per host from `host-os-policy`), and, when the last byte
//! is in, writes the whole datagram to a buffer. The engine decodes that
//! buffer as a new packet (`Decoder::decode_reassembled`) and inspects it
//! once; the fragments themselves are never inspected past IP.
//!
//! Time is packet time: a datagram is dropped when `defrag.timeout` seconds
//! pass without a fragment. Memory is bounded by a memcap, a tracker limit,
//! a fragment limit and a per-datagram fragment limit; hitting any of them
//! drops the oldest unfinished datagram or the fragment, raises
//! `frag_ignored` where a fragment is lost, and is counted in
//! [`DefragCounters`] under Suricata's `defrag.*` names. Overlaps raise
//! `ipv4.frag_overlap`/`ipv6.frag_overlap`, oversized datagrams
//! `frag_pkt_too_large`, and IPv6 fragments whose length is not a multiple
//! of 8 `ipv6.frag_invalid_length`.
//!
//! ```
//! use vigil_decode::{Decoder, DecodeConfig, Transport};
//! use vigil_defrag::{split, DefragConfig, Defragmenter};
//! use vigil_types::{LinkType, Timestamp};
//! use vigil_wire::build::PacketBuilder;
//!
//! let datagram = PacketBuilder::ipv4([192, 0, 2, 1], [192, 0, 2, 2])
//!     .tcp(40000, 80)
//!     .payload(b"GET /evil HTTP/1.1\r\n\r\n")
//!     .build_ip();
//! let first = split::ipv4_fragment(&datagram, 0, 16, true);
//! let rest = split::ipv4_fragment(&datagram, 16, 1000, false);
//!
//! let mut dec = Decoder::new(DecodeConfig::default());
//! let mut defrag = Defragmenter::new(DefragConfig::default(), ahash::RandomState::with_seeds(1, 2, 3, 4));
//! let mut out = Vec::new();
//! let p = dec.decode(&first, Timestamp::default(), LinkType::Raw, 1);
//! assert!(!defrag.handle(&p, &mut out).reassembled);
//! let p = dec.decode(&rest, Timestamp::default(), LinkType::Raw, 2);
//! assert!(defrag.handle(&p, &mut out).reassembled);
//! let whole = dec.decode_reassembled(&out, &p);
//! assert!(matches!(whole.transport, Transport::Tcp { dport: 80, .. }));
//! assert_eq!(whole.payload(), b"GET /evil HTTP/1.1\r\n\r\n");
//! ```

mod config;
mod counters;
mod fragment;
mod policy;
pub mod split;
mod table;
mod tracker;

pub use config::DefragConfig;
pub use counters::DefragCounters;
pub use fragment::Fragment;
pub use policy::{HostPolicies, Policy};
pub use table::{Defragmenter, Outcome};
