//! The decoder's counters, under Suricata's `decoder.*` stats names.

use crate::event::{DecodeEvent, EVENT_COUNT};

macro_rules! counters {
    ($($variant:ident => $name:literal,)*) => {
        /// A per-protocol or per-condition decoder counter.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[repr(u8)]
        pub enum Counter { $($variant,)* }

        impl Counter {
            pub const ALL: &'static [Counter] = &[$(Counter::$variant,)*];

            /// The name under `decoder.` in a stats record.
            pub const fn name(self) -> &'static str {
                match self { $(Counter::$variant => $name,)* }
            }
        }
    };
}

counters! {
    Pkts => "pkts",
    Bytes => "bytes",
    Invalid => "invalid",
    Ipv4 => "ipv4",
    Ipv6 => "ipv6",
    Ethernet => "ethernet",
    Arp => "arp",
    UnknownEthertype => "unknown_ethertype",
    Chdlc => "chdlc",
    Raw => "raw",
    Null => "null",
    Sll => "sll",
    Sll2 => "sll2",
    Tcp => "tcp",
    Udp => "udp",
    Sctp => "sctp",
    Esp => "esp",
    Icmpv4 => "icmpv4",
    Icmpv6 => "icmpv6",
    Ppp => "ppp",
    Pppoe => "pppoe",
    Geneve => "geneve",
    Gre => "gre",
    Vlan => "vlan",
    VlanQinq => "vlan_qinq",
    VlanQinqinq => "vlan_qinqinq",
    Vxlan => "vxlan",
    Vntag => "vntag",
    Ieee8021ah => "ieee8021ah",
    Teredo => "teredo",
    Ipv4InIpv4 => "ipv4_in_ipv4",
    Ipv6InIpv4 => "ipv6_in_ipv4",
    Ipv4InIpv6 => "ipv4_in_ipv6",
    Ipv6InIpv6 => "ipv6_in_ipv6",
    Mpls => "mpls",
    Erspan => "erspan",
    Nsh => "nsh",
    TooManyLayers => "too_many_layers",
}

const COUNTER_COUNT: usize = Counter::ALL.len();

/// One worker's decoder counters. Plain integers: each worker owns its own
/// copy and the engine sums them for stats, so the hot path never shares a cache line.
#[derive(Debug, Clone)]
pub struct DecodeCounters {
    values: [u64; COUNTER_COUNT],
    events: [u64; EVENT_COUNT],
    max_pkt_size: u64,
}

impl Default for DecodeCounters {
    fn default() -> Self {
        DecodeCounters { values: [0; COUNTER_COUNT], events: [0; EVENT_COUNT], max_pkt_size: 0 }
    }
}

impl DecodeCounters {
    #[inline]
    pub fn incr(&mut self, c: Counter) {
        self.values[c as usize] += 1;
    }

    #[inline]
    pub fn add(&mut self, c: Counter, n: u64) {
        self.values[c as usize] += n;
    }

    pub fn get(&self, c: Counter) -> u64 {
        self.values[c as usize]
    }

    #[inline]
    pub fn event(&mut self, e: DecodeEvent) {
        self.events[e as usize] += 1;
    }

    pub fn event_count(&self, e: DecodeEvent) -> u64 {
        self.events[e as usize]
    }

    #[inline]
    pub fn packet_size(&mut self, len: u64) {
        self.max_pkt_size = self.max_pkt_size.max(len);
    }

    pub fn max_pkt_size(&self) -> u64 {
        self.max_pkt_size
    }

    /// Average packet size, as Suricata derives it: bytes / packets, rounded down.
    pub fn avg_pkt_size(&self) -> u64 {
        self.get(Counter::Bytes).checked_div(self.get(Counter::Pkts)).unwrap_or(0)
    }

    /// Adds another worker's counters into this one.
    pub fn merge(&mut self, other: &DecodeCounters) {
        for (a, b) in self.values.iter_mut().zip(other.values.iter()) {
            *a += b;
        }
        for (a, b) in self.events.iter_mut().zip(other.events.iter()) {
            *a += b;
        }
        self.max_pkt_size = self.max_pkt_size.max(other.max_pkt_size);
    }
}
