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

/// An `arp` record of an Ethernet/IPv4 ARP message, as Suricata 8 writes
/// them; `None` for a packet without one (or another kind of ARP).
pub fn arp_record(p: &Packet<'_>, opts: EnvelopeOptions) -> Option<Value> {
    let l = p.layers().iter().find(|l| l.kind == vigil_decode::LayerKind::Arp)?;
    let a = p.data.get(l.offset as usize..)?;
    // Hardware Ethernet (6-byte addresses), protocol IPv4 (4-byte ones).
    if a.len() < 28 || a[0..2] != [0, 1] || a[2..4] != [8, 0] || a[4] != 6 || a[5] != 4 {
        return None;
    }
    let mac = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<Vec<_>>().join(":");
    let ip = |b: &[u8]| std::net::Ipv4Addr::new(b[0], b[1], b[2], b[3]).to_string();
    let opcode = match u16::from_be_bytes([a[6], a[7]]) {
        1 => "request".to_string(),
        2 => "reply".to_string(),
        3 => "rarp_request".to_string(),
        4 => "rarp_reply".to_string(),
        n => n.to_string(),
    };
    let mut m = envelope(p, "arp", opts);
    m.insert(
        "arp".into(),
        serde_json::json!({
            "hw_type": "ethernet",
            "proto_type": "ipv4",
            "opcode": opcode,
            "src_mac": mac(&a[8..14]),
            "src_ip": ip(&a[14..18]),
            "dest_mac": mac(&a[18..24]),
            "dest_ip": ip(&a[24..28]),
        }),
    );
    Some(Value::Object(m))
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

    #[test]
    fn an_arp_request_becomes_an_arp_record() {
        let mut frame = vec![0xff; 6];
        frame.extend_from_slice(&[0x00, 0x1a, 0x6b, 0x6c, 0x0c, 0xcc, 0x08, 0x06]);
        frame.extend_from_slice(&[0, 1, 8, 0, 6, 4, 0, 1]);
        frame.extend_from_slice(&[0x00, 0x1a, 0x6b, 0x6c, 0x0c, 0xcc, 198, 18, 0, 2]);
        frame.extend_from_slice(&[0, 0, 0, 0, 0, 0, 198, 18, 0, 1]);
        let mut dec = Decoder::new(DecodeConfig::default());
        let p = dec.decode(&frame, Timestamp::from_micros(1_700_000_000, 0), LinkType::Ethernet, 3);
        let v = arp_record(&p, EnvelopeOptions::default()).expect("an ARP message");
        assert_eq!(v["event_type"], "arp");
        assert_eq!(
            v["arp"],
            json!({"hw_type": "ethernet", "proto_type": "ipv4", "opcode": "request", "src_mac": "00:1a:6b:6c:0c:cc",
                   "src_ip": "198.18.0.2", "dest_mac": "00:00:00:00:00:00", "dest_ip": "198.18.0.1"})
        );
        let tcp = PacketBuilder::ipv4([198, 18, 0, 1], [198, 18, 0, 2]).tcp(1, 2).build_ethernet();
        assert!(arp_record(&dec.decode(&tcp, Timestamp::default(), LinkType::Ethernet, 4), EnvelopeOptions::default())
            .is_none());
    }
}
