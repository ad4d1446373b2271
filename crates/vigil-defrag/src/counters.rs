//! The reassembler's counters, under Suricata's `defrag.*` stats names.

/// One worker's reassembly counters (plain integers; the engine sums them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DefragCounters {
    pub ipv4_fragments: u64,
    pub ipv4_reassembled: u64,
    pub ipv4_timeouts: u64,
    pub ipv6_fragments: u64,
    pub ipv6_reassembled: u64,
    pub ipv6_timeouts: u64,
    /// A new datagram found every tracker in use: the oldest was dropped.
    pub max_trackers_reached: u64,
    /// A fragment found `max-frags` (or the per-datagram limit) reached.
    pub max_frags_reached: u64,
    /// An unfinished datagram was dropped to make room under the memcap
    /// or the tracker/fragment limits.
    pub tracker_hard_reuse: u64,
    /// Datagrams dropped by the timeout.
    pub tracker_timeout: u64,
    /// Bytes held now (gauge).
    pub memuse: u64,
}

impl DefragCounters {
    /// Dotted names (below `defrag.`) and values, in stats order. Names
    /// are those of Suricata's EVE schema.
    pub fn named(&self) -> [(&'static str, u64); 11] {
        [
            ("ipv4.fragments", self.ipv4_fragments),
            ("ipv4.reassembled", self.ipv4_reassembled),
            ("ipv4.timeouts", self.ipv4_timeouts),
            ("ipv6.fragments", self.ipv6_fragments),
            ("ipv6.reassembled", self.ipv6_reassembled),
            ("ipv6.timeouts", self.ipv6_timeouts),
            ("max_trackers_reached", self.max_trackers_reached),
            ("max_frags_reached", self.max_frags_reached),
            ("tracker_hard_reuse", self.tracker_hard_reuse),
            ("wrk.tracker_timeout", self.tracker_timeout),
            ("memuse", self.memuse),
        ]
    }

    /// Adds another worker's counters (gauges add too: memory is per worker).
    pub fn merge(&mut self, o: &DefragCounters) {
        self.ipv4_fragments += o.ipv4_fragments;
        self.ipv4_reassembled += o.ipv4_reassembled;
        self.ipv4_timeouts += o.ipv4_timeouts;
        self.ipv6_fragments += o.ipv6_fragments;
        self.ipv6_reassembled += o.ipv6_reassembled;
        self.ipv6_timeouts += o.ipv6_timeouts;
        self.max_trackers_reached += o.max_trackers_reached;
        self.max_frags_reached += o.max_frags_reached;
        self.tracker_hard_reuse += o.tracker_hard_reuse;
        self.tracker_timeout += o.tracker_timeout;
        self.memuse += o.memuse;
    }
}
