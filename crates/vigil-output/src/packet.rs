//! The EVE `packet` record: a packet logged because a `tag` keyword tagged
//! its session or host (with the alert output's `tagged-packets: yes`).

use crate::envelope::{envelope, EnvelopeOptions};
use serde_json::Value;
use vigil_decode::Packet;

/// One `packet` record, the packet's bytes base64-encoded with its link type.
pub fn packet_record(p: &Packet<'_>, flow_id: Option<u64>, opts: EnvelopeOptions) -> Value {
    let mut m = envelope(p, "packet", opts);
    crate::envelope::insert_packet(&mut m, p);
    let mut rec = Value::Object(m);
    if let Some(id) = flow_id {
        crate::insert_flow_id(&mut rec, id);
    }
    rec
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use vigil_decode::{DecodeConfig, Decoder};
    use vigil_types::{LinkType, Timestamp};
    use vigil_wire::build::PacketBuilder;

    #[test]
    fn a_tagged_packet_carries_its_bytes_and_flow() {
        let frame = PacketBuilder::ipv4([198, 18, 0, 1], [198, 18, 0, 2]).tcp(40000, 22).payload(b"x").build_ethernet();
        let mut dec = Decoder::new(DecodeConfig::default());
        let p = dec.decode(&frame, Timestamp::from_micros(1_700_000_000, 0), LinkType::Ethernet, 9);
        let v = packet_record(&p, Some(77), EnvelopeOptions::default());
        assert_eq!((&v["event_type"], &v["flow_id"], &v["dest_port"]), (&json!("packet"), &json!(77), &json!(22)));
        assert_eq!(v["packet_info"]["linktype"], 1);
        assert_eq!(v["packet"], json!(crate::base64::encode(&frame)));
    }
}
