//! Overlap policies: which bytes win when fragments overlap, as the target
//! host's IP stack decides it, and the per-host choice of policy.

use std::net::IpAddr;

/// How overlapping fragment data is resolved, named as Suricata names its
/// target-based policies ("Target-Based Fragmentation Reassembly", Novak).
///
/// In short: `First` keeps the data that arrived first, `Last` the data
/// that arrived last; `Bsd` keeps earlier data unless a new fragment starts
/// before an existing one; `Linux` is `Bsd` but lets a later fragment at the
/// same offset win; `Windows` and `Solaris` keep existing data except where
/// a new fragment starts before (Windows) or fully covers (Solaris) an
/// existing one. `BsdRight` trims nothing, so position decides: a fragment
/// starting further right overwrites, and at equal offsets the later one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Policy {
    First,
    Last,
    Bsd,
    BsdRight,
    Linux,
    Windows,
    Solaris,
}

impl Policy {
    pub const ALL: [Policy; 7] =
        [Policy::First, Policy::Last, Policy::Bsd, Policy::BsdRight, Policy::Linux, Policy::Windows, Policy::Solaris];

    pub const fn name(self) -> &'static str {
        match self {
            Policy::First => "first",
            Policy::Last => "last",
            Policy::Bsd => "bsd",
            Policy::BsdRight => "bsd-right",
            Policy::Linux => "linux",
            Policy::Windows => "windows",
            Policy::Solaris => "solaris",
        }
    }

    /// The policy Suricata applies to a host OS named in `host-os-policy`
    /// (`DefragGetOsPolicy`); `None` for names it does not know.
    pub fn for_host_os(os: &str) -> Option<Policy> {
        Some(match os {
            "bsd" | "hpux10" | "irix" => Policy::Bsd,
            "bsd-right" => Policy::BsdRight,
            "old-linux" | "linux" => Policy::Linux,
            "old-solaris" | "hpux11" | "macos" | "first" => Policy::First,
            "solaris" => Policy::Solaris,
            "windows" | "vista" | "windows2k3" => Policy::Windows,
            "last" => Policy::Last,
            _ => return None,
        })
    }
}

/// An address block with the policy of the hosts in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostPolicy {
    pub addr: IpAddr,
    /// Leading bits of `addr` that count (0 matches every address of its family).
    pub prefix: u8,
    pub policy: Policy,
}

impl HostPolicy {
    fn contains(&self, ip: IpAddr) -> bool {
        fn eq_bits(a: &[u8], b: &[u8], bits: u8) -> bool {
            let full = (bits as usize / 8).min(a.len());
            if a[..full] != b[..full] {
                return false;
            }
            let rest = bits % 8;
            rest == 0 || full >= a.len() || (a[full] ^ b[full]) & (0xffu8 << (8 - rest)) == 0
        }
        match (self.addr, ip) {
            (IpAddr::V4(n), IpAddr::V4(i)) => eq_bits(&n.octets(), &i.octets(), self.prefix),
            (IpAddr::V6(n), IpAddr::V6(i)) => eq_bits(&n.octets(), &i.octets(), self.prefix),
            _ => false,
        }
    }
}

/// The policy of each destination: the longest matching block, else the default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPolicies {
    /// Longest prefix first, so the first match is the best one.
    blocks: Vec<HostPolicy>,
    default: Policy,
}

impl Default for HostPolicies {
    /// Every host BSD, Suricata's default when no block matches.
    fn default() -> Self {
        HostPolicies { blocks: Vec::new(), default: Policy::Bsd }
    }
}

impl HostPolicies {
    pub fn new(mut blocks: Vec<HostPolicy>, default: Policy) -> Self {
        // Stable: among equal prefixes the first listed wins.
        blocks.sort_by_key(|b| std::cmp::Reverse(b.prefix));
        HostPolicies { blocks, default }
    }

    /// One policy for every host.
    pub fn uniform(policy: Policy) -> Self {
        HostPolicies { blocks: Vec::new(), default: policy }
    }

    pub fn lookup(&self, dst: IpAddr) -> Policy {
        self.blocks.iter().find(|b| b.contains(dst)).map_or(self.default, |b| b.policy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_prefix_then_default() {
        let h = HostPolicies::new(
            vec![
                HostPolicy { addr: "0.0.0.0".parse().unwrap(), prefix: 0, policy: Policy::Windows },
                HostPolicy { addr: "10.1.0.0".parse().unwrap(), prefix: 16, policy: Policy::Linux },
                HostPolicy { addr: "10.1.2.3".parse().unwrap(), prefix: 32, policy: Policy::Solaris },
            ],
            Policy::Bsd,
        );
        assert_eq!(h.lookup("10.1.2.3".parse().unwrap()), Policy::Solaris);
        assert_eq!(h.lookup("10.1.2.4".parse().unwrap()), Policy::Linux);
        assert_eq!(h.lookup("192.0.2.1".parse().unwrap()), Policy::Windows);
        assert_eq!(h.lookup("2001:db8::1".parse().unwrap()), Policy::Bsd);
    }

    #[test]
    fn host_os_names() {
        assert_eq!(Policy::for_host_os("vista"), Some(Policy::Windows));
        assert_eq!(Policy::for_host_os("macos"), Some(Policy::First));
        assert_eq!(Policy::for_host_os("irix"), Some(Policy::Bsd));
        assert_eq!(Policy::for_host_os("plan9"), None);
    }
}
