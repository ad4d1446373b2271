//! Which flow a decoded packet belongs to: its key, the bytes it counts,
//! and whether it may start a flow.

use std::net::IpAddr;
use vigil_decode::{LayerKind, Packet, Transport};
use vigil_types::FlowKey;
use vigil_wire::{icmp, ip_proto};

/// Which packet context is part of the flow key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tracking {
    /// `vlan.use-for-tracking`.
    pub vlan: bool,
    /// `decoder.recursion-level.use-for-tracking`.
    pub recursion: bool,
    /// Keep the Ethernet addresses each flow sees (an output logs them).
    pub macs: bool,
}

/// A packet as the flow table sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowPacket {
    /// In the packet's orientation (source first).
    pub key: FlowKey,
    /// The VLAN ids of the packet (kept by a new flow even when they are
    /// not part of the key, for EVE `vlan`).
    pub vlans: [u16; vigil_types::FLOW_KEY_VLANS],
    pub nvlans: u8,
    /// Bytes it adds to the flow (the frame, or the inner packet of a tunnel).
    pub bytes: u64,
    pub tcp_flags: Option<u8>,
    /// The IP TTL (or IPv6 hop limit) it came with.
    pub ttl: Option<u8>,
    /// Its Ethernet source and destination, where flows keep them.
    pub macs: Option<([u8; 6], [u8; 6])>,
    /// The TCP sequence number.
    pub tcp_seq: Option<u32>,
    pub icmp: Option<(u8, u8)>,
    pub spi: Option<u32>,
    /// False for packets that only join flows (ICMPv4 error messages).
    pub may_create: bool,
    /// For an ICMP error quoting a flow's packet: the error's own source,
    /// which decides its direction in that flow.
    pub sender: Option<IpAddr>,
}

/// The reply type of an ICMPv4 query (0 when there is none), which with
/// the type tells ICMP conversations apart.
fn icmpv4_counterpart(t: u8) -> u8 {
    use icmp::v4::*;
    match t {
        ECHO => ECHO_REPLY,
        ECHO_REPLY => ECHO,
        TIMESTAMP => TIMESTAMP_REPLY,
        TIMESTAMP_REPLY => TIMESTAMP,
        INFO_REQUEST => INFO_REPLY,
        INFO_REPLY => INFO_REQUEST,
        ADDRESS => ADDRESS_REPLY,
        ADDRESS_REPLY => ADDRESS,
        _ => 0,
    }
}

fn icmpv6_counterpart(t: u8) -> u8 {
    use icmp::v6::*;
    match t {
        ECHO_REQUEST => ECHO_REPLY,
        ECHO_REPLY => ECHO_REQUEST,
        NEIGHBOR_SOLICIT => NEIGHBOR_ADVERT,
        NEIGHBOR_ADVERT => NEIGHBOR_SOLICIT,
        ROUTER_SOLICIT => ROUTER_ADVERT,
        ROUTER_ADVERT => ROUTER_SOLICIT,
        MLD_QUERY => MLD_REPORT,
        MLD_REPORT => MLD_QUERY,
        // Node information query/reply, home agent discovery, mobile prefix,
        // certification path (RFC 4620, 6275, 3971).
        139 => 140,
        140 => 139,
        144 => 145,
        145 => 144,
        146 => 147,
        147 => 146,
        148 => 149,
        149 => 148,
        _ => 0,
    }
}

fn is_icmpv4_error(t: u8) -> bool {
    use icmp::v4::*;
    matches!(t, DEST_UNREACH | SOURCE_QUENCH | REDIRECT | TIME_EXCEEDED | PARAMETER_PROBLEM)
}

/// The TCP/UDP tuple of the IPv4 packet an ICMP destination-unreachable
/// message quotes (Suricata maps such errors to the quoted flow).
fn quoted_v4(body: &[u8]) -> Option<(IpAddr, u16, IpAddr, u16, u8)> {
    let h = body.first()?;
    if h >> 4 != 4 {
        return None;
    }
    let hlen = usize::from(h & 0x0f) * 4;
    if hlen < 20 || body.len() < hlen + 4 {
        return None;
    }
    let proto = body[9];
    if proto != ip_proto::TCP && proto != ip_proto::UDP {
        return None;
    }
    let src = IpAddr::from([body[12], body[13], body[14], body[15]]);
    let dst = IpAddr::from([body[16], body[17], body[18], body[19]]);
    let sp = u16::from_be_bytes([body[hlen], body[hlen + 1]]);
    let dp = u16::from_be_bytes([body[hlen + 2], body[hlen + 3]]);
    Some((src, sp, dst, dp, proto))
}

/// The source and destination of the packet's (outermost) Ethernet header.
fn packet_macs(p: &Packet<'_>) -> Option<([u8; 6], [u8; 6])> {
    let l = p.layer(LayerKind::Ethernet)?;
    let eth = vigil_wire::ethernet::Ethernet::new_checked(p.layer_bytes(l)).ok()?;
    Some((eth.src(), eth.dst()))
}

impl FlowPacket {
    fn with_key(key: FlowKey, p: &Packet<'_>, t: &Tracking, bytes: u64) -> Self {
        let mut vlans = [0u16; vigil_types::FLOW_KEY_VLANS];
        let pv = p.vlans();
        let n = pv.len().min(vlans.len());
        vlans[..n].copy_from_slice(&pv[..n]);
        let mut key = key;
        if t.vlan {
            key.vlans = vlans;
            key.nvlans = n as u8;
        }
        FlowPacket {
            key,
            vlans,
            nvlans: n as u8,
            bytes,
            tcp_flags: None,
            ttl: p.ip.as_ref().map(|ip| ip.ttl),
            macs: if t.macs { packet_macs(p) } else { None },
            tcp_seq: None,
            icmp: None,
            spi: None,
            may_create: true,
            sender: None,
        }
    }

    /// The flow of the packet's innermost layers, or `None` when it has
    /// none: fragments (their datagram gets one once reassembled), and
    /// anything that is not TCP, UDP, SCTP, ICMP or ESP, as in Suricata.
    #[inline]
    pub fn inner(p: &Packet<'_>, t: &Tracking) -> Option<FlowPacket> {
        if p.fragment {
            return None;
        }
        let ip = p.ip.as_ref()?;
        let (mut src, mut dst) = (ip.src, ip.dst);
        let (mut tcp_flags, mut tcp_seq, mut icmp, mut spi, mut sender) = (None, None, None, None, None);
        let mut may_create = true;
        let (sp, dp, proto) = match p.transport {
            Transport::Tcp { sport, dport, flags, seq, .. } => {
                tcp_flags = Some(flags);
                tcp_seq = Some(seq);
                (sport, dport, ip_proto::TCP)
            }
            Transport::Udp { sport, dport } => (sport, dport, ip_proto::UDP),
            Transport::Sctp { sport, dport } => (sport, dport, ip_proto::SCTP),
            Transport::Icmp { kind, code } => {
                icmp = Some((kind, code));
                if p.proto == ip_proto::ICMP {
                    may_create = !is_icmpv4_error(kind);
                    match (kind == icmp::v4::DEST_UNREACH).then(|| quoted_v4(p.payload())).flatten() {
                        // The error joins the flow of the packet it quotes.
                        Some((s, qsp, d, qdp, qproto)) => {
                            sender = Some(ip.src);
                            (src, dst) = (s, d);
                            (qsp, qdp, qproto)
                        }
                        None => (u16::from(kind), u16::from(icmpv4_counterpart(kind)), ip_proto::ICMP),
                    }
                } else {
                    (u16::from(kind), u16::from(icmpv6_counterpart(kind)), ip_proto::ICMPV6)
                }
            }
            Transport::None => {
                if p.proto != ip_proto::ESP {
                    return None;
                }
                let esp = p.layer(LayerKind::Esp)?;
                let b = p.layer_bytes(esp);
                let v = u32::from_be_bytes([*b.first()?, *b.get(1)?, *b.get(2)?, *b.get(3)?]);
                spi = Some(v);
                ((v >> 16) as u16, v as u16, ip_proto::ESP)
            }
        };
        let depth = p.tunnel.map_or(0, |tun| tun.depth);
        let recursion = if t.recursion { depth } else { 0 };
        // Only a tunnelled packet starts after byte 0.
        let start = if depth > 0 { inner_start(p).min(p.data.len()) } else { 0 };
        let key = FlowKey::new(src, sp, dst, dp, proto).with_recursion(recursion);
        let mut fp = FlowPacket::with_key(key, p, t, (p.data.len() - start) as u64);
        fp.tcp_flags = tcp_flags;
        fp.tcp_seq = tcp_seq;
        fp.icmp = icmp;
        fp.spi = spi;
        fp.may_create = may_create;
        fp.sender = sender;
        Some(fp)
    }

    /// The UDP flow of the datagram a UDP tunnel (VXLAN, Geneve, Teredo)
    /// came in, which Suricata tracks besides the inner flow.
    pub fn tunnel_outer(p: &Packet<'_>, t: &Tracking) -> Option<FlowPacket> {
        let tun = p.tunnel?;
        if tun.proto != ip_proto::UDP {
            return None;
        }
        let (sp, dp) = (tun.sport?, tun.dport?);
        let recursion = if t.recursion { tun.depth.saturating_sub(1) } else { 0 };
        let key = FlowKey::new(tun.src, sp, tun.dst, dp, ip_proto::UDP).with_recursion(recursion);
        // The TTL the packet has is its inner header's, not the tunnel's.
        Some(FlowPacket { ttl: None, ..FlowPacket::with_key(key, p, t, p.data.len() as u64) })
    }
}

/// Where the innermost packet starts in the frame: after the last tunnel
/// header, or at an IP header that directly follows another (IP in IP).
fn inner_start(p: &Packet<'_>) -> usize {
    let mut start = 0usize;
    let mut prev_ip = false;
    for l in p.layers() {
        match l.kind {
            LayerKind::Gre | LayerKind::Erspan | LayerKind::Vxlan | LayerKind::Geneve | LayerKind::Teredo => {
                start = l.offset as usize + l.len as usize;
                prev_ip = false;
            }
            LayerKind::Ipv4 | LayerKind::Ipv6 => {
                if prev_ip {
                    start = l.offset as usize;
                }
                prev_ip = true;
            }
            LayerKind::Ipv6Ext => {}
            _ => prev_ip = false,
        }
    }
    start
}

#[cfg(test)]
mod tests {
    use super::*;
    use vigil_decode::{DecodeConfig, Decoder};
    use vigil_types::{LinkType, Timestamp};
    use vigil_wire::build::{self, PacketBuilder};
    use vigil_wire::ethertype;

    const T: Tracking = Tracking { vlan: true, recursion: true, macs: false };

    fn decode(f: &[u8]) -> Packet<'_> {
        let mut d = Decoder::new(DecodeConfig::default());
        d.decode(f, Timestamp::default(), LinkType::Ethernet, 1)
    }

    #[test]
    fn echo_request_and_reply_share_a_key() {
        let req = PacketBuilder::ipv4([10, 0, 0, 1], [10, 0, 0, 2]).icmp(8, 0).build_ethernet();
        let rep = PacketBuilder::ipv4([10, 0, 0, 2], [10, 0, 0, 1]).icmp(0, 0).build_ethernet();
        let a = FlowPacket::inner(&decode(&req), &T).unwrap();
        let b = FlowPacket::inner(&decode(&rep), &T).unwrap();
        assert_eq!(a.key, b.key);
        assert!(!a.key.is_forward(&b.key));
        assert!(a.may_create && b.may_create);
    }

    #[test]
    fn unreachable_maps_to_the_quoted_flow_and_never_creates() {
        let udp = PacketBuilder::ipv4([10, 0, 0, 1], [10, 0, 0, 2]).udp(5353, 53).payload(b"q").build_ip();
        let err = PacketBuilder::ipv4([10, 0, 0, 2], [10, 0, 0, 1]).icmp(3, 3).payload(&udp).build_ethernet();
        let orig = PacketBuilder::ipv4([10, 0, 0, 1], [10, 0, 0, 2]).udp(5353, 53).payload(b"q").build_ethernet();
        let e = FlowPacket::inner(&decode(&err), &T).unwrap();
        let o = FlowPacket::inner(&decode(&orig), &T).unwrap();
        assert_eq!(e.key, o.key);
        assert!(!e.may_create);
        assert_eq!(e.sender, Some("10.0.0.2".parse().unwrap()));
    }

    #[test]
    fn vlans_and_tunnels_in_the_key() {
        let f = PacketBuilder::ipv4([10, 0, 0, 1], [10, 0, 0, 2]).udp(1, 2).build_ethernet();
        let tagged = build::vlan_tag(&f, ethertype::VLAN, &[5]);
        let a = FlowPacket::inner(&decode(&f), &T).unwrap();
        let b = FlowPacket::inner(&decode(&tagged), &T).unwrap();
        assert_ne!(a.key, b.key);
        let untracked = Tracking { vlan: false, recursion: true, macs: false };
        assert_eq!(FlowPacket::inner(&decode(&tagged), &untracked).unwrap().key, a.key);
        assert_eq!(b.nvlans, 1);

        let inner = PacketBuilder::ipv4([192, 168, 0, 1], [192, 168, 0, 2]).udp(53, 12345).build_ethernet();
        let vx = PacketBuilder::ipv4([10, 9, 0, 1], [10, 9, 0, 2])
            .udp(40000, 4789)
            .payload(&build::vxlan(7, &inner))
            .build_ethernet();
        let p = decode(&vx);
        let i = FlowPacket::inner(&p, &T).unwrap();
        assert_eq!((i.key.sport, i.key.dport, i.key.recursion), (53, 12345, 1));
        assert_eq!(i.bytes, inner.len() as u64);
        let o = FlowPacket::tunnel_outer(&p, &T).unwrap();
        assert_eq!((o.key.sport, o.key.dport, o.key.recursion), (40000, 4789, 0));
        assert_eq!(o.bytes, vx.len() as u64);
    }
}
