//! What the flow table is told: its size, memcap, timeouts and which
//! context tells flows apart.

/// Timeouts, in seconds of packet time, for one protocol's flows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProtoTimeouts {
    pub new: u32,
    pub established: u32,
    pub closed: u32,
    pub emergency_new: u32,
    pub emergency_established: u32,
    pub emergency_closed: u32,
}

/// `flow-timeouts`: TCP, UDP and ICMP have their own; every other protocol
/// uses `default`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    pub default: ProtoTimeouts,
    pub tcp: ProtoTimeouts,
    pub udp: ProtoTimeouts,
    pub icmp: ProtoTimeouts,
}

impl Default for Timeouts {
    /// The stock `suricata.yaml` values.
    fn default() -> Self {
        let generic = ProtoTimeouts {
            new: 30,
            established: 300,
            closed: 0,
            emergency_new: 10,
            emergency_established: 100,
            emergency_closed: 0,
        };
        Timeouts {
            default: generic,
            tcp: ProtoTimeouts {
                new: 60,
                established: 600,
                closed: 60,
                emergency_new: 5,
                emergency_established: 100,
                emergency_closed: 10,
            },
            udp: generic,
            icmp: generic,
        }
    }
}

impl Timeouts {
    pub fn for_proto(&self, proto: u8) -> &ProtoTimeouts {
        match proto {
            vigil_wire::ip_proto::TCP => &self.tcp,
            vigil_wire::ip_proto::UDP => &self.udp,
            vigil_wire::ip_proto::ICMP | vigil_wire::ip_proto::ICMPV6 => &self.icmp,
            _ => &self.default,
        }
    }
}

/// One flow table's settings (`flow`, `flow-timeouts`, `vlan` and
/// `decoder.recursion-level` tracking switches).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowConfig {
    /// `flow.memcap`: bytes for the hash rows and the flows.
    pub memcap: u64,
    /// `flow.hash-size`: hash rows.
    pub hash_size: u32,
    /// `flow.prealloc`: flows allocated up front.
    pub prealloc: u32,
    /// `flow.emergency-recovery`: percent of the flows that must be gone
    /// before emergency mode ends.
    pub emergency_recovery: u8,
    pub timeouts: Timeouts,
    /// `vlan.use-for-tracking`.
    pub vlan_tracking: bool,
    /// `decoder.recursion-level.use-for-tracking`.
    pub recursion_tracking: bool,
    /// Keep each flow's Ethernet addresses (an `eve-log` with `ethernet: yes`).
    pub keep_macs: bool,
}

impl Default for FlowConfig {
    /// The stock `suricata.yaml` values.
    fn default() -> Self {
        FlowConfig {
            memcap: 128 * 1024 * 1024,
            hash_size: 65536,
            prealloc: 10000,
            emergency_recovery: 30,
            timeouts: Timeouts::default(),
            vlan_tracking: true,
            recursion_tracking: true,
            keep_macs: false,
        }
    }
}
