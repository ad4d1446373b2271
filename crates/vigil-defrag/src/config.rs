//! What the reassembler is told: its limits, timeout and policies.

use crate::policy::HostPolicies;

/// Limits and choices for one [`Defragmenter`](crate::Defragmenter). The
/// engine fills it from `defrag`, `host-os-policy` and `vlan`/`decoder`
/// tracking switches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefragConfig {
    /// `defrag.memcap`: bytes held in fragments and trackers.
    pub memcap: u64,
    /// `defrag.trackers`: datagrams being reassembled at once.
    pub max_trackers: u32,
    /// `defrag.max-frags`: fragments held at once, over all datagrams.
    pub max_frags: u32,
    /// Fragments one datagram may hold. 8192 covers any legal datagram cut
    /// into 8-byte pieces; more can only come from overlaps.
    pub max_frags_per_datagram: u32,
    /// `defrag.timeout`: seconds of packet time a datagram may wait for its
    /// next fragment.
    pub timeout_secs: u32,
    /// The overlap policy per destination (`host-os-policy`).
    pub policies: HostPolicies,
    /// `vlan.use-for-tracking`: VLAN ids tell datagrams apart.
    pub vlan_tracking: bool,
    /// `decoder.recursion-level.use-for-tracking`: tunnel depth does too.
    pub recursion_tracking: bool,
}

impl Default for DefragConfig {
    /// The stock `suricata.yaml` values, every host BSD.
    fn default() -> Self {
        DefragConfig {
            memcap: 32 * 1024 * 1024,
            max_trackers: 65535,
            max_frags: 65535,
            max_frags_per_datagram: 8192,
            timeout_secs: 60,
            policies: HostPolicies::default(),
            vlan_tracking: true,
            recursion_tracking: true,
        }
    }
}
