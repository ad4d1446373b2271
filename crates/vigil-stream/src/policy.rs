//! Target-based overlap policies: which bytes a receiving host keeps when
//! two segments carry different data for the same sequence numbers.

/// How the receiving host resolves an overlap between a segment it already
/// holds (`old`) and a new one. Suricata's host OS names collapse onto these
/// six behaviours (see [`Policy::for_host_os`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Policy {
    /// The data already held always wins.
    First,
    /// The newest data always wins.
    Last,
    /// New data wins when the new segment starts before the old one
    /// (BSD, Windows, HP-UX 10, IRIX, macOS). Suricata's default when no
    /// `host-os-policy` block holds the host.
    #[default]
    Bsd,
    /// As BSD, and also when it starts at the same place and ends beyond it.
    Linux,
    /// As BSD, and also when it starts at the same place and ends at or beyond it.
    OldLinux,
    /// New data wins when it ends at or beyond the old segment's end, or
    /// starts after it and ends beyond it (Solaris, HP-UX 11).
    Solaris,
}

impl Policy {
    pub const ALL: [Policy; 6] =
        [Policy::First, Policy::Last, Policy::Bsd, Policy::Linux, Policy::OldLinux, Policy::Solaris];

    /// The behaviour of a host OS named in `host-os-policy`, as Suricata's
    /// stream engine applies it; `None` for an unknown name.
    pub fn for_host_os(os: &str) -> Option<Policy> {
        Some(match os {
            "bsd" | "hpux10" | "irix" | "macos" | "windows" | "windows2k3" => Policy::Bsd,
            "linux" => Policy::Linux,
            "old-linux" => Policy::OldLinux,
            "solaris" | "hpux11" => Policy::Solaris,
            // Suricata's stream engine gives these no rule of their own: the
            // held data stays.
            "first" | "vista" | "bsd-right" | "old-solaris" => Policy::First,
            "last" => Policy::Last,
            _ => return None,
        })
    }

    /// Whether the new segment `[ns, ne)` replaces the old `[os, oe)` where
    /// they overlap.
    pub fn new_wins(self, ns: u64, ne: u64, os: u64, oe: u64) -> bool {
        match self {
            Policy::First => false,
            Policy::Last => true,
            Policy::Bsd => ns < os,
            Policy::Linux => ns < os || (ns == os && ne > oe),
            Policy::OldLinux => ns < os || (ns == os && ne >= oe),
            Policy::Solaris => (ns <= os && ne >= oe) || (ns > os && ne > oe),
        }
    }
}

/// The policy of each receiving host: the longest matching address block,
/// else the default (BSD, as in Suricata).
pub type HostPolicies = vigil_types::HostTable<Policy>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_rules_per_policy() {
        // old segment [10, 20)
        let cases = [
            // (new start, new end, First, Last, Bsd, Linux, OldLinux, Solaris)
            (5, 15, [false, true, true, true, true, false]),
            (5, 25, [false, true, true, true, true, true]),
            (10, 20, [false, true, false, false, true, true]),
            (10, 25, [false, true, false, true, true, true]),
            (10, 15, [false, true, false, false, false, false]),
            (12, 18, [false, true, false, false, false, false]),
            (12, 25, [false, true, false, false, false, true]),
            (12, 20, [false, true, false, false, false, false]),
        ];
        for (ns, ne, want) in cases {
            for (p, w) in Policy::ALL.iter().zip(want) {
                assert_eq!(p.new_wins(ns, ne, 10, 20), w, "{p:?} new [{ns},{ne})");
            }
        }
    }

    #[test]
    fn host_names_and_lookup() {
        assert_eq!(Policy::for_host_os("windows"), Some(Policy::Bsd));
        assert_eq!(Policy::for_host_os("vista"), Some(Policy::First));
        assert_eq!(Policy::for_host_os("hpux11"), Some(Policy::Solaris));
        assert_eq!(Policy::for_host_os("beos"), None);
        let h = HostPolicies::new(
            vec![("0.0.0.0".parse().unwrap(), 0, Policy::Bsd), ("198.18.1.0".parse().unwrap(), 24, Policy::Linux)],
            Policy::First,
        );
        assert_eq!(h.lookup("198.18.1.9".parse().unwrap()), Policy::Linux);
        assert_eq!(h.lookup("198.18.2.9".parse().unwrap()), Policy::Bsd);
        assert_eq!(h.lookup("2001:db8::1".parse().unwrap()), Policy::First);
    }
}
