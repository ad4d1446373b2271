//! The EVE `drop` record: a packet an IPS dropped, described by its IP and
//! transport header fields (Suricata's names), and why it was dropped.

use crate::envelope::{envelope, EnvelopeOptions};
use serde_json::{json, Map, Value};
use vigil_decode::{LayerKind, Packet, Transport};
use vigil_wire::ipv4::Ipv4;
use vigil_wire::ipv6::Ipv6;
use vigil_wire::tcp::flags;

/// Why a packet was dropped, as Suricata names it in `drop.reason`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    /// A rule with a drop (or reject) action matched the packet.
    Rules,
    /// A `rate_filter` turned a match into a drop.
    RateFilter,
    /// An earlier drop applied to the whole flow.
    FlowDrop,
    /// Exception policies: a limit was hit or a session came mid-stream.
    StreamMemcap,
    StreamReassembly,
    StreamMidstream,
    FlowMemcap,
    DefragMemcap,
    ApplayerError,
    /// The segment had urgent data and `stream.reassembly.urgent` says drop.
    StreamUrgent,
    /// Firewall mode: a firewall rule dropped the packet.
    FirewallRules,
    /// Firewall mode: no packet rule accepted the packet.
    FirewallDefaultPacketPolicy,
    /// Firewall mode: no rule accepted a state the flow's transaction reached.
    FirewallDefaultAppPolicy,
    /// Firewall mode: the firewall dropped the flow earlier.
    FirewallFlowDrop,
    /// Firewall mode: dropped in the `pre_flow` / `pre_stream` table.
    FirewallPreFlowHook,
    FirewallPreStreamHook,
}

impl DropReason {
    pub fn name(self) -> &'static str {
        match self {
            DropReason::Rules => "rules",
            // Suricata files rate filters with thresholds and detection filters.
            DropReason::RateFilter => "threshold detection_filter",
            DropReason::FlowDrop => "flow drop",
            DropReason::StreamMemcap => "stream memcap",
            DropReason::StreamReassembly => "stream reassembly",
            DropReason::StreamMidstream => "stream midstream",
            DropReason::FlowMemcap => "flow memcap",
            DropReason::DefragMemcap => "defrag memcap",
            DropReason::ApplayerError => "applayer error",
            DropReason::StreamUrgent => "stream urgent",
            DropReason::FirewallRules => "firewall rules",
            DropReason::FirewallDefaultPacketPolicy => "firewall default packet policy",
            DropReason::FirewallDefaultAppPolicy => "firewall default app policy",
            DropReason::FirewallFlowDrop => "firewall flow drop",
            DropReason::FirewallPreFlowHook => "firewall pre flow hook",
            DropReason::FirewallPreStreamHook => "firewall pre stream hook",
        }
    }

    /// Every reason, in the order of the `ips.drop_reason.*` counters.
    pub const ALL: [DropReason; 10] = [
        DropReason::FlowDrop,
        DropReason::Rules,
        DropReason::RateFilter,
        DropReason::StreamMemcap,
        DropReason::StreamReassembly,
        DropReason::StreamMidstream,
        DropReason::FlowMemcap,
        DropReason::DefragMemcap,
        DropReason::ApplayerError,
        DropReason::StreamUrgent,
    ];

    /// The name under `ips.drop_reason.` in stats.
    pub fn counter_name(self) -> &'static str {
        match self {
            DropReason::Rules => "rules",
            DropReason::RateFilter => "threshold_detection_filter",
            DropReason::FlowDrop => "flow_drop",
            DropReason::StreamMemcap => "stream_memcap",
            DropReason::StreamReassembly => "stream_reassembly",
            DropReason::StreamMidstream => "stream_midstream",
            DropReason::FlowMemcap => "flow_memcap",
            DropReason::DefragMemcap => "defrag_memcap",
            DropReason::ApplayerError => "applayer_error",
            DropReason::StreamUrgent => "stream_urgent",
            // Counted under `firewall.drop_reason.*`.
            DropReason::FirewallRules => "rules",
            DropReason::FirewallDefaultPacketPolicy => "default_packet_policy",
            DropReason::FirewallDefaultAppPolicy => "default_app_policy",
            DropReason::FirewallFlowDrop => "flow_drop",
            DropReason::FirewallPreFlowHook => "pre_flow_hook",
            DropReason::FirewallPreStreamHook => "pre_stream_hook",
        }
    }
}

/// One EVE `drop` record for `p`. The caller adds `flow_id` and, with
/// `alerts: yes`, the `alert` object of the signature that dropped it.
pub fn drop_record(p: &Packet<'_>, reason: DropReason, opts: EnvelopeOptions) -> Value {
    let mut m = envelope(p, "drop", opts);
    m.insert("drop".into(), Value::Object(drop_fields(p, reason)));
    Value::Object(m)
}

fn drop_fields(p: &Packet<'_>, reason: DropReason) -> Map<String, Value> {
    let mut d = Map::new();
    let ip_bytes = p.ip.and_then(|ip| p.data.get(ip.offset as usize..));
    let v4 = p.ip.is_some_and(|ip| ip.src.is_ipv4());
    if let Some(h) = ip_bytes.filter(|_| v4).and_then(|b| Ipv4::header_only(b).ok()) {
        d.insert("len".into(), json!(h.total_len()));
        d.insert("tos".into(), json!(h.tos()));
        d.insert("ttl".into(), json!(h.ttl()));
        d.insert("ipid".into(), json!(h.ident()));
    } else if let Some(h) = ip_bytes.filter(|_| !v4).and_then(|b| Ipv6::header_only(b).ok()) {
        d.insert("len".into(), json!(h.payload_len()));
        d.insert("tc".into(), json!(h.traffic_class()));
        d.insert("hoplimit".into(), json!(h.hop_limit()));
        d.insert("flowlbl".into(), json!(h.flow_label()));
    }
    match p.transport {
        Transport::Tcp { flags: f, seq, ack, window, .. } => {
            d.insert("tcpseq".into(), json!(seq));
            d.insert("tcpack".into(), json!(ack));
            d.insert("tcpwin".into(), json!(window));
            for (name, bit) in [
                ("syn", flags::SYN),
                ("ack", flags::ACK),
                ("psh", flags::PSH),
                ("rst", flags::RST),
                ("urg", flags::URG),
                ("fin", flags::FIN),
            ] {
                d.insert(name.into(), json!(f & bit != 0));
            }
            // Reserved bits and urgent pointer are not in the decoded view:
            // read them from the header (its length was checked when decoded).
            let hdr = innermost(p, LayerKind::Tcp);
            d.insert("tcpres".into(), json!(hdr.and_then(|h| h.get(12)).map_or(0, |b| b & 0x0f)));
            let urgp = hdr.and_then(|h| h.get(18..20)).map_or(0, |b| u16::from_be_bytes([b[0], b[1]]));
            d.insert("tcpurgp".into(), json!(urgp));
        }
        Transport::Udp { .. } => {
            if let Some(b) = innermost(p, LayerKind::Udp).and_then(|h| h.get(4..6)) {
                d.insert("udplen".into(), json!(u16::from_be_bytes([b[0], b[1]])));
            }
        }
        Transport::Icmp { .. } => {
            let hdr = innermost(p, LayerKind::Icmpv4).or_else(|| innermost(p, LayerKind::Icmpv6));
            if let Some(b) = hdr.and_then(|h| h.get(4..8)) {
                d.insert("icmp_id".into(), json!(u16::from_be_bytes([b[0], b[1]])));
                d.insert("icmp_seq".into(), json!(u16::from_be_bytes([b[2], b[3]])));
            }
        }
        Transport::None | Transport::Sctp { .. } => {}
    }
    d.insert("reason".into(), json!(reason.name()));
    d
}

/// The bytes from the innermost header of `kind` to the end of the frame.
fn innermost<'a>(p: &Packet<'a>, kind: LayerKind) -> Option<&'a [u8]> {
    let l = p.layers().iter().rev().find(|l| l.kind == kind)?;
    p.data.get(l.offset as usize..)
}

#[cfg(test)]
mod tests {
    use super::*;
    use vigil_decode::{DecodeConfig, Decoder};
    use vigil_types::{LinkType, Timestamp};
    use vigil_wire::build::PacketBuilder;

    fn record(frame: &[u8], reason: DropReason) -> Value {
        let mut dec = Decoder::new(DecodeConfig::default());
        let p = dec.decode(frame, Timestamp::from_micros(1_700_000_000, 0), LinkType::Ethernet, 7);
        drop_record(&p, reason, EnvelopeOptions::default())
    }

    #[test]
    fn tcp_over_ipv4_fields() {
        let frame = PacketBuilder::ipv4([10, 0, 0, 1], [10, 0, 0, 2])
            .tcp(40000, 80)
            .tcp_flags(flags::SYN | flags::ACK)
            .tcp_seq_ack(100, 200)
            .ttl(63)
            .ident(0x1234)
            .build_ethernet();
        let v = record(&frame, DropReason::Rules);
        assert_eq!(v["event_type"], "drop");
        assert_eq!(v["pcap_cnt"], 7);
        let d = &v["drop"];
        assert_eq!((d["len"].as_u64(), d["ttl"].as_u64(), d["ipid"].as_u64()), (Some(40), Some(63), Some(0x1234)));
        assert_eq!((d["tcpseq"].as_u64(), d["tcpack"].as_u64()), (Some(100), Some(200)));
        assert_eq!((d["syn"].as_bool(), d["ack"].as_bool(), d["fin"].as_bool()), (Some(true), Some(true), Some(false)));
        assert_eq!((d["tcpres"].as_u64(), d["tcpurgp"].as_u64()), (Some(0), Some(0)));
        assert_eq!(d["reason"], "rules");
        let keys: Vec<&str> = d.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys.last(), Some(&"reason"));
    }

    #[test]
    fn udp_over_ipv6_and_icmp_fields() {
        let frame = PacketBuilder::ipv6([1; 16], [2; 16]).udp(5353, 53).payload(b"abcd").build_ethernet();
        let v = record(&frame, DropReason::FlowDrop);
        let d = &v["drop"];
        assert_eq!((d["len"].as_u64(), d["udplen"].as_u64()), (Some(12), Some(12)));
        assert!(d.get("hoplimit").is_some() && d.get("ttl").is_none());
        assert_eq!(d["reason"], "flow drop");
        let ping = PacketBuilder::ipv4([10, 0, 0, 1], [10, 0, 0, 2]).icmp(8, 0).build_ethernet();
        let d = &record(&ping, DropReason::RateFilter)["drop"];
        assert!(d.get("icmp_id").is_some() && d.get("icmp_seq").is_some());
        assert_eq!(d["reason"], "threshold detection_filter");
    }

    #[test]
    fn truncated_headers_do_not_panic() {
        let frame = PacketBuilder::ipv4([10, 0, 0, 1], [10, 0, 0, 2]).tcp(1, 2).build_ethernet();
        for n in 0..frame.len() {
            record(&frame[..n], DropReason::Rules);
        }
    }

    #[test]
    fn records_are_schema_valid() {
        let Some(v) = crate::schema_check::validator() else { return };
        let frames = [
            PacketBuilder::ipv4([10, 0, 0, 1], [10, 0, 0, 2]).tcp(1, 2).payload(b"x").build_ethernet(),
            PacketBuilder::ipv6([1; 16], [2; 16]).udp(1, 2).build_ethernet(),
            PacketBuilder::ipv4([10, 0, 0, 1], [10, 0, 0, 2]).icmp(8, 0).build_ethernet(),
        ];
        for f in frames {
            let rec = record(&f, DropReason::Rules);
            let errors: Vec<String> = v.iter_errors(&rec).map(|e| format!("{e} at {}", e.instance_path())).collect();
            assert!(errors.is_empty(), "{errors:?}\n{rec}");
        }
    }
}
