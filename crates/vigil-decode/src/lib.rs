//! Decoding: turns a captured frame into a [`Packet`].
//!
//! The [`Decoder`] walks `vigil-wire` views from the link layer inwards. Each
//! step decodes one header, records it as a [`Layer`] (kind, offset, length)
//! and names the next protocol; one loop does the recursion, so the layer cap
//! (`decoder.max-layers`) and tunnel handling live in one place. Tunnels (GRE,
//! ERSPAN, VXLAN, Geneve, Teredo, IP-in-IP) are followed: the inner packet is
//! what flows on, and the outer datagram is kept as its [`TunnelInfo`].
//!
//! Malformed input is data: it raises a named [`DecodeEvent`] (Suricata's
//! names), marks the packet `invalid` when decoding cannot go on, and is
//! counted in [`DecodeCounters`]. Nothing here panics or allocates per packet.
//!
//! ```
//! use vigil_decode::{Decoder, DecodeConfig, Transport};
//! use vigil_types::{LinkType, Timestamp};
//! use vigil_wire::build::PacketBuilder;
//!
//! let frame = PacketBuilder::ipv4([198, 18, 0, 1], [198, 18, 0, 2])
//!     .tcp(40000, 80)
//!     .payload(b"GET / HTTP/1.1\r\n\r\n")
//!     .build_ethernet();
//! let mut dec = Decoder::new(DecodeConfig::default());
//! let p = dec.decode(&frame, Timestamp::default(), LinkType::Ethernet, 1);
//! assert!(matches!(p.transport, Transport::Tcp { dport: 80, .. }));
//! assert_eq!(p.payload(), b"GET / HTTP/1.1\r\n\r\n");
//! assert!(p.events.is_empty() && !p.invalid);
//! ```

mod config;
mod counters;
mod decoder;
mod dispatch;
mod event;
mod kindset;
mod link;
mod network;
mod packet;
mod transport;
mod tunnel;

pub use config::{DecodeConfig, UdpTunnel};
pub use counters::{Counter, DecodeCounters};
pub use decoder::Decoder;
pub use dispatch::dispatch_hash;
pub use event::{DecodeEvent, EventList, EVENT_COUNT};
pub use packet::{
    ChecksumFlags, IpInfo, Layer, LayerKind, Packet, PacketSource, Transport, TunnelInfo, MAX_LAYERS, MAX_VLANS,
};
