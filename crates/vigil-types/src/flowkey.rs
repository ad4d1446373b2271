//! The key that names a flow, the same from both ends of the conversation.

use std::hash::{Hash, Hasher};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The most VLAN ids a key holds (Suricata's `VLAN_MAX_LAYERS`).
pub const FLOW_KEY_VLANS: usize = 3;

/// A flow's identity: both endpoints, the IP protocol, and the context that
/// keeps otherwise equal tuples apart (VLAN ids, tunnel depth).
///
/// The key is **symmetric**: a key and its [`reversed`](FlowKey::reversed)
/// twin are equal and hash alike, so the packets of both directions meet in
/// one hash bucket and find one flow. Fields keep the orientation they were
/// built with (for a flow: client to server), which [`FlowKey::is_forward`]
/// uses to tell a packet's direction.
///
/// Ports carry what a protocol uses to tell its conversations apart: TCP,
/// UDP and SCTP ports; for ICMP the message type and its reply type.
///
/// ```
/// use vigil_types::FlowKey;
/// use std::net::IpAddr;
/// let a: IpAddr = "192.0.2.1".parse().unwrap();
/// let b: IpAddr = "198.51.100.7".parse().unwrap();
/// let fwd = FlowKey::new(a, 40000, b, 80, 6);
/// let rev = FlowKey::new(b, 80, a, 40000, 6);
/// assert_eq!(fwd, rev);
/// assert!(fwd.is_forward(&fwd) && !fwd.is_forward(&rev));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct FlowKey {
    /// Addresses as 16 bytes; IPv4 in the low 4 bytes, the rest zero.
    pub src: [u8; 16],
    pub dst: [u8; 16],
    pub sport: u16,
    pub dport: u16,
    pub proto: u8,
    pub ipv6: bool,
    /// Tunnel depth the packet was found at (0 outside any tunnel).
    pub recursion: u8,
    /// How many of `vlans` are set (they are part of the key only when
    /// the caller put them there, e.g. with `vlan.use-for-tracking`).
    pub nvlans: u8,
    pub vlans: [u16; FLOW_KEY_VLANS],
}

fn addr_bytes(a: IpAddr) -> ([u8; 16], bool) {
    match a {
        IpAddr::V4(v4) => {
            let mut b = [0u8; 16];
            b[..4].copy_from_slice(&v4.octets());
            (b, false)
        }
        IpAddr::V6(v6) => (v6.octets(), true),
    }
}

impl FlowKey {
    /// A key for `src:sport -> dst:dport` under IP protocol `proto`, without
    /// VLAN or tunnel context. Mixed address families are taken as the
    /// family of `src`.
    pub fn new(src: IpAddr, sport: u16, dst: IpAddr, dport: u16, proto: u8) -> Self {
        let (s, ipv6) = addr_bytes(src);
        let (d, _) = addr_bytes(dst);
        FlowKey { src: s, dst: d, sport, dport, proto, ipv6, recursion: 0, nvlans: 0, vlans: [0; FLOW_KEY_VLANS] }
    }

    /// The same key with VLAN ids (at most [`FLOW_KEY_VLANS`] are kept).
    pub fn with_vlans(mut self, vlans: &[u16]) -> Self {
        let n = vlans.len().min(FLOW_KEY_VLANS);
        self.vlans = [0; FLOW_KEY_VLANS];
        self.vlans[..n].copy_from_slice(&vlans[..n]);
        self.nvlans = n as u8;
        self
    }

    /// The same key at tunnel depth `level`.
    pub fn with_recursion(mut self, level: u8) -> Self {
        self.recursion = level;
        self
    }

    pub fn src_ip(&self) -> IpAddr {
        ip_of(&self.src, self.ipv6)
    }

    pub fn dst_ip(&self) -> IpAddr {
        ip_of(&self.dst, self.ipv6)
    }

    pub fn vlan_ids(&self) -> &[u16] {
        &self.vlans[..self.nvlans as usize]
    }

    /// The key as seen from the other end.
    pub fn reversed(&self) -> Self {
        FlowKey { src: self.dst, dst: self.src, sport: self.dport, dport: self.sport, ..*self }
    }

    /// True when `other` has the same orientation as `self` (same source
    /// endpoint); false when it is the reverse. Only meaningful for equal keys.
    pub fn is_forward(&self, other: &FlowKey) -> bool {
        self.src == other.src && self.sport == other.sport && self.dst == other.dst && self.dport == other.dport
    }

    /// Both endpoints in one canonical order, so both directions hash alike.
    #[inline]
    fn ordered(&self) -> (([u8; 16], u16), ([u8; 16], u16)) {
        let a = (self.src, self.sport);
        let b = (self.dst, self.dport);
        if a <= b {
            (a, b)
        } else {
            (b, a)
        }
    }

    fn context_eq(&self, o: &FlowKey) -> bool {
        self.proto == o.proto
            && self.ipv6 == o.ipv6
            && self.recursion == o.recursion
            && self.nvlans == o.nvlans
            && self.vlans == o.vlans
    }
}

fn ip_of(b: &[u8; 16], ipv6: bool) -> IpAddr {
    if ipv6 {
        IpAddr::V6(Ipv6Addr::from(*b))
    } else {
        IpAddr::V4(Ipv4Addr::new(b[0], b[1], b[2], b[3]))
    }
}

/// Equal when both directions name the same conversation: the same
/// endpoints in either order, with the same protocol and context.
impl PartialEq for FlowKey {
    #[inline]
    fn eq(&self, o: &FlowKey) -> bool {
        self.context_eq(o)
            && (self.is_forward(o)
                || (self.src == o.dst && self.sport == o.dport && self.dst == o.src && self.dport == o.sport))
    }
}

impl Eq for FlowKey {}

/// Symmetric: the endpoints are hashed in canonical order.
impl Hash for FlowKey {
    #[inline]
    fn hash<H: Hasher>(&self, h: &mut H) {
        let ((a, ap), (b, bp)) = self.ordered();
        h.write_u128(u128::from_ne_bytes(a));
        h.write_u128(u128::from_ne_bytes(b));
        let vl = self.vlans;
        h.write_u64(
            u64::from(ap)
                | u64::from(bp) << 16
                | u64::from(self.proto) << 32
                | u64::from(self.recursion) << 40
                | u64::from(self.ipv6) << 48
                | u64::from(self.nvlans) << 56,
        );
        h.write_u64(u64::from(vl[0]) | u64::from(vl[1]) << 16 | u64::from(vl[2]) << 32);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::hash_map::DefaultHasher;

    fn h(k: &FlowKey) -> u64 {
        let mut s = DefaultHasher::new();
        k.hash(&mut s);
        s.finish()
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn both_directions_are_equal_and_hash_alike() {
        let k = FlowKey::new(ip("10.0.0.1"), 1234, ip("10.0.0.2"), 80, 6).with_vlans(&[7]).with_recursion(1);
        let r = k.reversed();
        assert_eq!(k, r);
        assert_eq!(h(&k), h(&r));
        assert!(k.is_forward(&k) && !k.is_forward(&r));
        assert_eq!(r.src_ip(), ip("10.0.0.2"));
        assert_eq!(k.vlan_ids(), &[7]);
    }

    #[test]
    fn context_and_ports_separate_flows() {
        let k = FlowKey::new(ip("10.0.0.1"), 1234, ip("10.0.0.2"), 80, 6);
        assert_ne!(k, k.with_vlans(&[1]));
        assert_ne!(k, k.with_recursion(1));
        assert_ne!(k, FlowKey::new(ip("10.0.0.1"), 1234, ip("10.0.0.2"), 80, 17));
        // Swapping only the ports is another conversation.
        assert_ne!(k, FlowKey::new(ip("10.0.0.1"), 80, ip("10.0.0.2"), 1234, 6));
        // The same 4 bytes as IPv4 and as the start of an IPv6 address differ.
        let v6 = FlowKey::new(ip("a00:1::"), 1234, ip("a00:2::"), 80, 6);
        assert_ne!(FlowKey::new(ip("10.0.0.1"), 1234, ip("10.0.0.2"), 80, 6), v6);
        assert_eq!(v6.dst_ip(), ip("a00:2::"));
    }

    #[test]
    fn same_address_both_ends() {
        let k = FlowKey::new(ip("192.0.2.9"), 5000, ip("192.0.2.9"), 3306, 6);
        assert_eq!(k, k.reversed());
        assert!(!k.is_forward(&k.reversed()));
    }
}
