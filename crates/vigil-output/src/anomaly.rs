//! The EVE `anomaly` record for events a packet raised: the decoder's and
//! the stream engine's.

use crate::envelope::{envelope, EnvelopeOptions};
use serde_json::{json, Value};
use vigil_decode::{DecodeEvent, Packet};

/// The `anomaly` record options of the eve-log configuration.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AnomalyOptions {
    /// `packethdr: yes`: include the packet bytes and its link type.
    pub packethdr: bool,
    pub envelope: EnvelopeOptions,
}

/// One EVE `anomaly` record for a decode event of a packet.
pub fn anomaly_record(p: &Packet<'_>, e: DecodeEvent, opts: AnomalyOptions) -> Value {
    packet_anomaly(p, "decode", &format!("decoder.{}", e.name()), opts)
}

/// One EVE `anomaly` record for a stream event a packet raised; `name` is
/// the event's Suricata name without the `stream.` prefix.
pub fn stream_anomaly_record(p: &Packet<'_>, name: &str, opts: AnomalyOptions) -> Value {
    packet_anomaly(p, "stream", &format!("stream.{name}"), opts)
}

/// One EVE `anomaly` record for an application-layer parser event: `name`
/// as rules spell it (`http.unable_to_match_response_to_request`), written
/// as Suricata's parsers name it (HTTP's in capitals, the others as they are).
pub fn applayer_anomaly_record(
    p: &Packet<'_>,
    flow_id: u64,
    app_proto: &str,
    name: &str,
    tx_id: Option<u64>,
    envelope_opts: EnvelopeOptions,
) -> Value {
    let mut m = envelope(p, "anomaly", envelope_opts);
    if let Some(id) = tx_id {
        m.insert("tx_id".into(), json!(id));
    }
    let bare = name.split_once('.').map_or(name, |(_, rest)| rest);
    // Protocol detection's own events (`applayer_*`), and those of Suricata's
    // parsers written in C (libhtp's HTTP, TLS, SMTP, DNP3), are in capitals in EVE;
    // its Rust parsers' in lower case, as rules spell them all.
    let detect = bare.starts_with("applayer_");
    let event = if detect || matches!(app_proto, "http" | "tls" | "smtp" | "dnp3") {
        bare.to_ascii_uppercase()
    } else {
        bare.to_string()
    };
    let layer = if detect { "proto_detect" } else { "proto_parser" };
    m.insert("anomaly".into(), json!({ "app_proto": app_proto, "type": "applayer", "event": event, "layer": layer }));
    let mut rec = Value::Object(m);
    crate::insert_flow_id(&mut rec, flow_id);
    rec
}

/// Decode and stream events are both events of the packet, so Suricata
/// logs them alike and only the type tells them apart.
fn packet_anomaly(p: &Packet<'_>, kind: &str, event: &str, opts: AnomalyOptions) -> Value {
    let mut m = envelope(p, "anomaly", opts.envelope);
    if opts.packethdr {
        crate::envelope::insert_packet(&mut m, p);
    }
    m.insert("anomaly".into(), json!({ "type": kind, "event": event }));
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use vigil_decode::{DecodeConfig, Decoder};
    use vigil_types::{LinkType, Timestamp};
    use vigil_wire::build::PacketBuilder;

    #[test]
    fn parser_events_are_named_as_each_parser_names_them() {
        let frame = PacketBuilder::ipv4([10, 0, 0, 1], [10, 0, 0, 2]).tcp(80, 40000).payload(b"x").build_ethernet();
        let mut dec = Decoder::new(DecodeConfig::default());
        let p = dec.decode(&frame, Timestamp::from_micros(1_700_000_000, 0), LinkType::Ethernet, 7);
        let opts = EnvelopeOptions::default();
        let http = applayer_anomaly_record(&p, 5, "http", "http.unable_to_match_response_to_request", Some(2), opts);
        assert_eq!(
            http["anomaly"],
            json!({ "app_proto": "http", "type": "applayer", "event": "UNABLE_TO_MATCH_RESPONSE_TO_REQUEST", "layer": "proto_parser" })
        );
        assert_eq!((&http["flow_id"], &http["tx_id"]), (&json!(5), &json!(2)));
        let dns = applayer_anomaly_record(&p, 5, "dns", "dns.malformed_data", None, opts);
        assert_eq!(dns["anomaly"]["event"], "malformed_data");
        assert!(dns.get("tx_id").is_none());
        let tls = applayer_anomaly_record(&p, 5, "tls", "tls.invalid_record_type", None, opts);
        assert_eq!(tls["anomaly"]["event"], "INVALID_RECORD_TYPE");
        let detect = applayer_anomaly_record(&p, 5, "smb", "applayer_detect_protocol_only_one_direction", None, opts);
        assert_eq!(
            detect["anomaly"],
            json!({ "app_proto": "smb", "type": "applayer", "event": "APPLAYER_DETECT_PROTOCOL_ONLY_ONE_DIRECTION", "layer": "proto_detect" })
        );
    }

    #[test]
    fn stream_events_are_typed_and_prefixed() {
        let frame = PacketBuilder::ipv4([10, 0, 0, 1], [10, 0, 0, 2]).tcp(40000, 80).payload(b"x").build_ethernet();
        let mut dec = Decoder::new(DecodeConfig::default());
        let p = dec.decode(&frame, Timestamp::from_micros(1_700_000_000, 0), LinkType::Ethernet, 3);
        let v = stream_anomaly_record(&p, "reassembly_depth_reached", AnomalyOptions::default());
        assert_eq!(v["event_type"], "anomaly");
        assert_eq!(v["pcap_cnt"], 3);
        assert_eq!(v["anomaly"], json!({ "type": "stream", "event": "stream.reassembly_depth_reached" }));
        assert!(v.get("packet").is_none());
    }
}
