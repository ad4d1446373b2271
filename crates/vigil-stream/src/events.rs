//! Stream anomalies, under the names Suricata's `stream-event` keyword and
//! EVE use (without the `stream.` prefix in rules).

/// A TCP tracking or reassembly anomaly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StreamEvent {
    SynAckWithWrongAck,
    SynAckInWrongDirection,
    FourWhsSynAckWithWrongAck,
    FourWhsSynAckWithWrongSyn,
    SynResendDiffSeq,
    AckInWrongDir,
    PacketOutOfWindow,
    PacketRetransmission,
    RstInvalid,
    DataAfterRst,
    OverlapDifferentData,
    DepthReached,
    SegmentBeforeBaseSeq,
    MemcapDrop,
    /// A reply during the handshake whose timestamp echo does not match
    /// what the client sent (or echoes one the client never offered).
    PktInvalidTimestamp,
    /// The sender of a reset went on sending: the reset was not its own
    /// (injected on the path), and the session is tracked on.
    SuspectedRstInject,
}

impl StreamEvent {
    pub const ALL: [StreamEvent; 16] = [
        StreamEvent::SynAckWithWrongAck,
        StreamEvent::SynAckInWrongDirection,
        StreamEvent::FourWhsSynAckWithWrongAck,
        StreamEvent::FourWhsSynAckWithWrongSyn,
        StreamEvent::SynResendDiffSeq,
        StreamEvent::AckInWrongDir,
        StreamEvent::PacketOutOfWindow,
        StreamEvent::PacketRetransmission,
        StreamEvent::RstInvalid,
        StreamEvent::DataAfterRst,
        StreamEvent::OverlapDifferentData,
        StreamEvent::DepthReached,
        StreamEvent::SegmentBeforeBaseSeq,
        StreamEvent::MemcapDrop,
        StreamEvent::PktInvalidTimestamp,
        StreamEvent::SuspectedRstInject,
    ];

    /// Suricata's name, as in `stream-event:<name>` and EVE anomaly `event`.
    pub const fn name(self) -> &'static str {
        match self {
            StreamEvent::SynAckWithWrongAck => "3whs_synack_with_wrong_ack",
            StreamEvent::SynAckInWrongDirection => "3whs_synack_in_wrong_direction",
            StreamEvent::FourWhsSynAckWithWrongAck => "4whs_synack_with_wrong_ack",
            StreamEvent::FourWhsSynAckWithWrongSyn => "4whs_synack_with_wrong_syn",
            StreamEvent::SynResendDiffSeq => "3whs_syn_resend_diff_seq_on_syn_recv",
            StreamEvent::AckInWrongDir => "3whs_ack_in_wrong_dir",
            StreamEvent::PacketOutOfWindow => "est_packet_out_of_window",
            StreamEvent::PacketRetransmission => "pkt_retransmission",
            StreamEvent::RstInvalid => "rst_invalid_ack",
            StreamEvent::DataAfterRst => "rst_with_data",
            StreamEvent::OverlapDifferentData => "reassembly_overlap_different_data",
            StreamEvent::DepthReached => "reassembly_depth_reached",
            StreamEvent::SegmentBeforeBaseSeq => "reassembly_segment_before_base_seq",
            StreamEvent::MemcapDrop => "reassembly_memcap",
            StreamEvent::PktInvalidTimestamp => "pkt_invalid_timestamp",
            StreamEvent::SuspectedRstInject => "suspected_rst_inject",
        }
    }

    /// Whether vigil raises the event exactly where Suricata raises the
    /// event of that name, so rules may match it and EVE may log it. The
    /// others are vigil's own conditions (a reset with a wild sequence
    /// number rather than a bad ACK, a SYN resent before any reply, data
    /// after a reset, a full memcap, a window check that ignores the
    /// advertised window, retransmissions and old segments judged against
    /// what vigil still holds rather than Suricata's per-state rules), kept
    /// as counters only: a `stream-event` rule matching them would alert
    /// where Suricata stays silent.
    pub const fn is_suricata(self) -> bool {
        !matches!(
            self,
            StreamEvent::SynResendDiffSeq
                | StreamEvent::RstInvalid
                | StreamEvent::DataAfterRst
                | StreamEvent::MemcapDrop
                | StreamEvent::PacketOutOfWindow
                | StreamEvent::PacketRetransmission
                | StreamEvent::SegmentBeforeBaseSeq
        )
    }

    pub fn from_name(name: &str) -> Option<StreamEvent> {
        Self::ALL.iter().copied().find(|e| e.name() == name)
    }

    const fn bit(self) -> u32 {
        1 << self as u32
    }
}

/// The stream events one packet raised.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StreamEventSet(u32);

impl StreamEventSet {
    pub fn insert(&mut self, e: StreamEvent) {
        self.0 |= e.bit();
    }

    pub const fn contains(self, e: StreamEvent) -> bool {
        self.0 & e.bit() != 0
    }

    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The events in the set, in [`StreamEvent::ALL`] order.
    pub fn iter(self) -> impl Iterator<Item = StreamEvent> {
        StreamEvent::ALL.into_iter().filter(move |e| self.contains(*e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_fit_the_set() {
        assert!(StreamEvent::ALL.len() <= 32);
        for e in StreamEvent::ALL {
            assert_eq!(StreamEvent::from_name(e.name()), Some(e));
        }
        assert_eq!(StreamEvent::from_name("no_such_event"), None);
    }

    #[test]
    fn set_holds_what_was_inserted() {
        let mut s = StreamEventSet::default();
        assert!(s.is_empty());
        s.insert(StreamEvent::DepthReached);
        s.insert(StreamEvent::PktInvalidTimestamp);
        assert!(s.contains(StreamEvent::DepthReached));
        assert!(!s.contains(StreamEvent::PacketRetransmission));
        assert_eq!(s.iter().collect::<Vec<_>>(), [StreamEvent::DepthReached, StreamEvent::PktInvalidTimestamp]);
    }
}
