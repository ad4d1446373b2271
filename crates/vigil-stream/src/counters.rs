//! Stream counters under Suricata's `tcp.*` stats names.

/// What the stream engine of one worker did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StreamCounters {
    /// `tcp.sessions`: sessions started (handshake or midstream).
    pub sessions: u64,
    /// `tcp.ssn_memcap_drop`: sessions not started because `stream.memcap` was reached.
    pub ssn_memcap_drop: u64,
    /// `tcp.syn`, `tcp.synack`, `tcp.rst`: packets with those flags.
    pub syn: u64,
    pub synack: u64,
    pub rst: u64,
    /// `tcp.midstream_pickups`
    pub midstream_pickups: u64,
    /// `tcp.segment_memcap_drop`: segments not stored because the reassembly memcap was reached.
    pub segment_memcap_drop: u64,
    /// `tcp.stream_depth_reached`: streams that reached `stream.reassembly.depth`.
    pub stream_depth_reached: u64,
    /// `tcp.reassembly_gap`: holes skipped (data the capture never saw).
    pub reassembly_gap: u64,
    /// `tcp.overlap`: segments overlapping held data.
    pub overlap: u64,
    /// `tcp.overlap_diff_data`: ... with different bytes.
    pub overlap_diff_data: u64,
    /// `tcp.pkt_on_wrong_thread` (always 0 with symmetric dispatch; kept for the name).
    pub pkt_on_wrong_thread: u64,
    /// `tcp.pseudo`: pseudo packets made to inspect the rest of a stream at flow end.
    pub pseudo: u64,
    /// `tcp.urg`: packets of tracked sessions with the URG flag.
    pub urg: u64,
    /// `tcp.invalid_checksum`: TCP packets whose checksum was checked and wrong.
    pub invalid_checksum: u64,
    /// `tcp.active_sessions`: sessions open now (gauge).
    pub active_sessions: u64,
    /// `tcp.insert_data_normal_fail`, `tcp.insert_data_overlap_fail`:
    /// segments whose new bytes the reassembly memcap refused, apart from
    /// and overlapping held data.
    pub insert_data_normal_fail: u64,
    pub insert_data_overlap_fail: u64,
    /// `tcp.urgent_oob_data`: urgent bytes taken out of streams (`oob`).
    pub urgent_oob_data: u64,
    /// `stream.reassembly_urgent_oob_limit_reached`: segments whose urgent
    /// pointer lay past their data.
    pub urgent_oob_limit_reached: u64,
}

impl StreamCounters {
    /// `(stats name, value)` pairs in Suricata's order.
    pub fn named(&self) -> [(&'static str, u64); 20] {
        [
            ("tcp.urg", self.urg),
            ("tcp.active_sessions", self.active_sessions),
            ("tcp.sessions", self.sessions),
            ("tcp.ssn_memcap_drop", self.ssn_memcap_drop),
            ("tcp.pseudo", self.pseudo),
            ("tcp.invalid_checksum", self.invalid_checksum),
            ("tcp.syn", self.syn),
            ("tcp.synack", self.synack),
            ("tcp.rst", self.rst),
            ("tcp.midstream_pickups", self.midstream_pickups),
            ("tcp.pkt_on_wrong_thread", self.pkt_on_wrong_thread),
            ("tcp.segment_memcap_drop", self.segment_memcap_drop),
            ("tcp.stream_depth_reached", self.stream_depth_reached),
            ("tcp.reassembly_gap", self.reassembly_gap),
            ("tcp.overlap", self.overlap),
            ("tcp.overlap_diff_data", self.overlap_diff_data),
            ("tcp.insert_data_normal_fail", self.insert_data_normal_fail),
            ("tcp.insert_data_overlap_fail", self.insert_data_overlap_fail),
            ("tcp.urgent_oob_data", self.urgent_oob_data),
            ("stream.reassembly_urgent_oob_limit_reached", self.urgent_oob_limit_reached),
        ]
    }
}
