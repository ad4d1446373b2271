//! Per-host settings by address block (`host-os-policy` and the like).

use std::net::IpAddr;

/// Whether `ip` lies in the block of `addr` whose leading `prefix` bits
/// count. Blocks never match across address families.
pub fn in_block(addr: IpAddr, prefix: u8, ip: IpAddr) -> bool {
    fn eq_bits(a: &[u8], b: &[u8], bits: u8) -> bool {
        let full = (bits as usize / 8).min(a.len());
        if a[..full] != b[..full] {
            return false;
        }
        let rest = bits % 8;
        rest == 0 || full >= a.len() || (a[full] ^ b[full]) & (0xffu8 << (8 - rest)) == 0
    }
    match (addr, ip) {
        (IpAddr::V4(n), IpAddr::V4(i)) => eq_bits(&n.octets(), &i.octets(), prefix),
        (IpAddr::V6(n), IpAddr::V6(i)) => eq_bits(&n.octets(), &i.octets(), prefix),
        _ => false,
    }
}

/// A value for each host: that of the longest block holding it, else the default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostTable<P> {
    /// `(network, prefix length, value)`, longest prefix first.
    blocks: Vec<(IpAddr, u8, P)>,
    default: P,
}

impl<P: Copy + Default> Default for HostTable<P> {
    fn default() -> Self {
        HostTable::uniform(P::default())
    }
}

impl<P: Copy> HostTable<P> {
    pub fn new(mut blocks: Vec<(IpAddr, u8, P)>, default: P) -> Self {
        // Stable: among equal prefixes the first listed wins.
        blocks.sort_by_key(|b| std::cmp::Reverse(b.1));
        HostTable { blocks, default }
    }

    /// One value for every host.
    pub fn uniform(value: P) -> Self {
        HostTable { blocks: Vec::new(), default: value }
    }

    pub fn lookup(&self, host: IpAddr) -> P {
        self.blocks.iter().find(|b| in_block(b.0, b.1, host)).map_or(self.default, |b| b.2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_prefix_then_default() {
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        let h = HostTable::new(vec![(ip("0.0.0.0"), 0, 1), (ip("10.1.0.0"), 16, 2), (ip("10.1.2.3"), 32, 3)], 9);
        assert_eq!(h.lookup(ip("10.1.2.3")), 3);
        assert_eq!(h.lookup(ip("10.1.2.4")), 2);
        assert_eq!(h.lookup(ip("192.0.2.1")), 1);
        assert_eq!(h.lookup(ip("2001:db8::1")), 9);
        assert!(in_block(ip("10.1.0.0"), 12, ip("10.15.255.255")));
        assert!(!in_block(ip("10.1.0.0"), 12, ip("10.16.0.0")));
        assert!(in_block(ip("2001:db8::"), 32, ip("2001:db8:ffff::1")));
    }
}
