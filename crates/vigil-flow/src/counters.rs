//! The flow table's counters, under Suricata's `flow.*` stats names.

/// One worker's flow counters (plain integers; the engine sums them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlowCounters {
    /// Flows created, in all and by protocol.
    pub total: u64,
    pub tcp: u64,
    pub udp: u64,
    pub icmpv4: u64,
    pub icmpv6: u64,
    /// Flows open now (gauge).
    pub active: u64,
    /// Bytes used by rows and flows (gauge).
    pub memuse: u64,
    /// Allocated flows waiting for use (gauge).
    pub spare: u64,
    /// A new flow found the memcap reached.
    pub memcap: u64,
    pub emerg_mode_entered: u64,
    pub emerg_mode_over: u64,
    /// Flows evicted before their time to make room (EVE reason "forced").
    pub get_used: u64,
    /// A closed TCP flow's tuple was reused by a new session.
    pub tcp_reuse: u64,
    /// Flows ended, by their state at the end.
    pub end_new: u64,
    pub end_established: u64,
    pub end_closed: u64,
    /// Timer entries looked at, flows timed out by them, and entries
    /// refiled because their flow was still alive.
    pub mgr_flows_checked: u64,
    pub mgr_flows_timeout: u64,
    pub mgr_flows_notimeout: u64,
    /// Flows ended by the timer pass.
    pub mgr_flows_evicted: u64,
    /// Full passes over the table (in emergency mode).
    pub mgr_full_hash_pass: u64,
    /// The longest hash row walked (gauge of the worst seen).
    pub mgr_rows_maxlen: u64,
    /// Flows ended on the packet path: found timed out when a packet
    /// looked them up, or replaced by TCP reuse.
    pub wrk_flows_evicted: u64,
}

impl FlowCounters {
    /// Dotted names (below `flow.`) and values, in stats order. Names are
    /// those of Suricata's EVE schema.
    pub fn named(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("total", self.total),
            ("tcp", self.tcp),
            ("udp", self.udp),
            ("icmpv4", self.icmpv4),
            ("icmpv6", self.icmpv6),
            ("tcp_reuse", self.tcp_reuse),
            ("get_used", self.get_used),
            ("memcap", self.memcap),
            ("active", self.active),
            ("spare", self.spare),
            ("emerg_mode_entered", self.emerg_mode_entered),
            ("emerg_mode_over", self.emerg_mode_over),
            ("memuse", self.memuse),
            ("end.state.new", self.end_new),
            ("end.state.established", self.end_established),
            ("end.state.closed", self.end_closed),
            ("mgr.full_hash_pass", self.mgr_full_hash_pass),
            ("mgr.rows_maxlen", self.mgr_rows_maxlen),
            ("mgr.flows_checked", self.mgr_flows_checked),
            ("mgr.flows_notimeout", self.mgr_flows_notimeout),
            ("mgr.flows_timeout", self.mgr_flows_timeout),
            ("mgr.flows_evicted", self.mgr_flows_evicted),
            ("wrk.flows_evicted", self.wrk_flows_evicted),
        ]
    }

    /// Adds another worker's counters (gauges add too: each worker has its
    /// own table; the longest row is the longest of all).
    pub fn merge(&mut self, o: &FlowCounters) {
        let keep_max = self.mgr_rows_maxlen.max(o.mgr_rows_maxlen);
        macro_rules! add { ($($f:ident),*) => { $(self.$f += o.$f;)* } }
        add!(
            total,
            tcp,
            udp,
            icmpv4,
            icmpv6,
            active,
            memuse,
            spare,
            memcap,
            emerg_mode_entered,
            emerg_mode_over,
            get_used,
            tcp_reuse,
            end_new,
            end_established,
            end_closed,
            mgr_flows_checked,
            mgr_flows_timeout,
            mgr_flows_notimeout,
            mgr_flows_evicted,
            mgr_full_hash_pass,
            wrk_flows_evicted
        );
        self.mgr_rows_maxlen = keep_max;
    }
}
