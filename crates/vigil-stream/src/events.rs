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
}

impl StreamEvent {
    pub const ALL: [StreamEvent; 14] = [
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
        }
    }

    pub fn from_name(name: &str) -> Option<StreamEvent> {
        Self::ALL.iter().copied().find(|e| e.name() == name)
    }
}
