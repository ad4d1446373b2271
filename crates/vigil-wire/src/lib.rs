//! Checked, zero-copy views over protocol headers, and builders that write them.
//!
//! Every view is made by a `new_checked` constructor that verifies, once, that
//! the buffer is long enough for everything its accessors read; after that no
//! accessor can fail or panic. A view never copies: it borrows the packet's
//! bytes and decodes fields on demand. Views know nothing of each other: a view
//! tells what the next protocol is, and the decoder (`vigil-decode`) chooses
//! the next view, so recursion and its depth cap live in one place.
//!
//! The [`build`] module writes the same headers (with correct lengths and
//! checksums) for tests, fuzzing and the traffic lab.
//!
//! ```
//! use vigil_wire::{ipv4::Ipv4, build::{PacketBuilder, Ip, L4}};
//! let frame = PacketBuilder::ipv4([198, 18, 0, 1], [198, 18, 0, 2])
//!     .udp(5000, 53)
//!     .payload(b"hello")
//!     .build_ip();
//! let ip = Ipv4::new_checked(&frame).unwrap();
//! assert_eq!(ip.protocol(), 17);
//! assert_eq!(ip.total_len() as usize, frame.len());
//! # let _ = (Ip::V4 { src: [0;4], dst: [0;4] }, L4::None);
//! ```

pub mod build;
pub mod checksum;
pub mod erspan;
pub mod ethernet;
pub mod geneve;
pub mod gre;
pub mod icmp;
pub mod ipv4;
pub mod ipv6;
pub mod link;
pub mod mpls;
pub mod tcp;
pub mod udp;
pub mod vxlan;

mod bytes;
mod error;

pub use error::WireError;

/// IP protocol numbers vigil decodes (IANA "Assigned Internet Protocol Numbers").
pub mod ip_proto {
    pub const HOPOPTS: u8 = 0;
    pub const ICMP: u8 = 1;
    pub const IPIP: u8 = 4;
    pub const TCP: u8 = 6;
    pub const UDP: u8 = 17;
    pub const IPV6: u8 = 41;
    pub const ROUTING: u8 = 43;
    pub const FRAGMENT: u8 = 44;
    pub const GRE: u8 = 47;
    pub const ESP: u8 = 50;
    pub const AH: u8 = 51;
    pub const ICMPV6: u8 = 58;
    pub const NONE: u8 = 59;
    pub const DSTOPTS: u8 = 60;
    pub const SCTP: u8 = 132;
    pub const MOBILITY: u8 = 135;
}

/// EtherType values vigil decodes (IEEE 802 numbers).
pub mod ethertype {
    pub const IPV4: u16 = 0x0800;
    pub const ARP: u16 = 0x0806;
    pub const TRANS_ETHER_BRIDGING: u16 = 0x6558;
    pub const VLAN: u16 = 0x8100;
    pub const QINQ: u16 = 0x88a8;
    pub const QINQ_OLD: u16 = 0x9100;
    pub const IPV6: u16 = 0x86dd;
    pub const PPPOE_DISCOVERY: u16 = 0x8863;
    pub const PPPOE_SESSION: u16 = 0x8864;
    pub const MPLS_UNICAST: u16 = 0x8847;
    pub const MPLS_MULTICAST: u16 = 0x8848;
    pub const ERSPAN_II: u16 = 0x88be;
    pub const ERSPAN_III: u16 = 0x22eb;
    pub const IEEE8021AH: u16 = 0x88e7;
    pub const NSH: u16 = 0x894f;
    pub const VNTAG: u16 = 0x8926;
}
