//! Overlap policies: which bytes win when fragments overlap, as the target
//! host's IP stack decides it, and the per-host choice of policy.

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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Policy {
    First,
    Last,
    /// Suricata's default when no `host-os-policy` block holds the host.
    #[default]
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

/// The policy of each destination: the longest matching block, else the
/// default (BSD, as in Suricata).
pub type HostPolicies = vigil_types::HostTable<Policy>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_prefix_then_default() {
        let h = HostPolicies::new(
            vec![
                ("0.0.0.0".parse().unwrap(), 0, Policy::Windows),
                ("10.1.0.0".parse().unwrap(), 16, Policy::Linux),
                ("10.1.2.3".parse().unwrap(), 32, Policy::Solaris),
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
