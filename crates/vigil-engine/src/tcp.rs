//! The worker's TCP side: what a flow carries besides its counters, and the
//! pseudo packets that carry a stream's last bytes to detection when its
//! flow ends.

use std::net::IpAddr;
use vigil_detect::FlowDetect;
use vigil_flow::Flow;
use vigil_stream::{SessionSummary, TcpSession};
use vigil_types::Direction;
use vigil_wire::build::PacketBuilder;

/// What a flow carries for later stages.
#[derive(Debug, Default)]
pub(crate) struct FlowExt {
    /// Flowbits and the flow's pass state.
    pub detect: FlowDetect,
    /// The TCP session, once the stream engine tracks one.
    pub tcp: Option<Box<TcpSession>>,
    /// What the session ended with, kept for the flow record once the
    /// session itself is freed.
    pub tcp_end: Option<SessionSummary>,
    /// The application layer, for TCP sessions and UDP flows.
    pub app: Option<Box<crate::app::FlowApp>>,
    /// `tag:session` tags still running.
    pub tags: Vec<crate::tag::Tagged>,
}

/// A packet with no payload standing for `dir` of the flow, as Suricata's
/// pseudo packets do: stream data inspected at flow end is attributed to it.
pub(crate) fn pseudo_packet<E>(f: &Flow<E>, dir: Direction) -> Vec<u8> {
    let (src, dst, sport, dport) = match dir {
        Direction::ToServer => (f.key.src_ip(), f.key.dst_ip(), f.key.sport, f.key.dport),
        Direction::ToClient => (f.key.dst_ip(), f.key.src_ip(), f.key.dport, f.key.sport),
    };
    let b = match (src, dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => PacketBuilder::ipv4(s.octets(), d.octets()),
        (s, d) => PacketBuilder::ipv6(v6(s), v6(d)),
    };
    // A UDP flow's transactions still open at its end are logged on a UDP one.
    if f.key.proto == 17 {
        return b.udp(sport, dport).build_ip();
    }
    b.tcp(sport, dport).tcp_flags(vigil_stream::flags::ACK).build_ip()
}

fn v6(a: IpAddr) -> [u8; 16] {
    match a {
        IpAddr::V4(v4) => v4.to_ipv6_mapped().octets(),
        IpAddr::V6(v6) => v6.octets(),
    }
}
