//! Flows: the per-worker table that ties both directions of a conversation
//! together and knows when it is over.
//!
//! Each decoded packet is reduced to a [`FlowPacket`]: its symmetric
//! [`FlowKey`](vigil_types::FlowKey) (addresses, ports or ICMP types,
//! protocol, and, as configured, VLAN ids and tunnel depth), the bytes it
//! adds, and its TCP flags. The [`FlowTable`] finds the flow (hashing with a
//! seeded `ahash`, since keys are attacker-chosen) or creates one oriented
//! from the packet's source (the client), counts packets and bytes per
//! direction, and moves the [`FlowState`] (new → established → closed) from
//! what it sees. TCP states come from flags until the stream engine takes
//! over; that engine keeps its session in the flow's `ext` slot (the `E`
//! parameter), created with the flow and handed back when it ends.
//!
//! Time is packet time. A timing wheel ends flows whose state's timeout
//! (`flow-timeouts`) has passed; a packet that finds its flow timed out
//! ends it and starts a new one. Memory is fixed by `flow.memcap`: when it
//! is full, the table enters emergency mode (the `emergency-*` timeouts, a
//! sweep) and, if that is not enough, evicts the least recently seen of a
//! few sampled flows. Every ended flow (timeout, forced, TCP reuse,
//! shutdown) goes to a queue the caller drains to write EVE `flow` records;
//! everything is counted in [`FlowCounters`] under Suricata's `flow.*` names.
//!
//! ```
//! use vigil_decode::{Decoder, DecodeConfig};
//! use vigil_flow::{FlowConfig, FlowTable, FlowState, EndReason};
//! use vigil_types::{Direction, LinkType, Timestamp};
//! use vigil_wire::build::PacketBuilder;
//!
//! let mut dec = Decoder::new(DecodeConfig::default());
//! let mut flows: FlowTable = FlowTable::new(FlowConfig::default(), ahash::RandomState::with_seeds(1, 2, 3, 4));
//! let q = PacketBuilder::ipv4([10, 0, 0, 1], [10, 0, 0, 2]).udp(5353, 53).payload(b"query").build_ethernet();
//! let a = PacketBuilder::ipv4([10, 0, 0, 2], [10, 0, 0, 1]).udp(53, 5353).payload(b"answer").build_ethernet();
//!
//! let t = Timestamp::from_micros(1_700_000_000, 0);
//! let h1 = flows.handle_packet(&dec.decode(&q, t, LinkType::Ethernet, 1), true).unwrap();
//! let h2 = flows.handle_packet(&dec.decode(&a, t, LinkType::Ethernet, 2), true).unwrap();
//! assert_eq!(h1.id, h2.id);
//! assert_eq!((h1.dir, h2.dir), (Direction::ToServer, Direction::ToClient));
//! assert_eq!(flows.get(h2).unwrap().state, FlowState::Established);
//!
//! flows.flush();
//! let ended: Vec<_> = flows.drain_ended().collect();
//! assert_eq!(ended[0].end_reason, Some(EndReason::Shutdown));
//! assert_eq!((ended[0].pkts.to_server, ended[0].pkts.to_client), (1, 1));
//! ```

mod clock;
mod config;
mod counters;
mod flow;
mod key;
mod table;
mod timers;

pub use clock::CaptureClock;
pub use config::{FlowConfig, ProtoTimeouts, Timeouts};
pub use counters::FlowCounters;
pub use flow::{flow_id, EndReason, Flow, FlowState, MacSets};
pub use key::{FlowPacket, Tracking};
pub use table::{FlowHandle, FlowTable};
