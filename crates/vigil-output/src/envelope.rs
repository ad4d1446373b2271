use crate::protocol::proto_name;
use crate::time::format_timestamp;
use serde_json::{json, Map, Value};
use vigil_decode::{LayerKind, Packet, Transport};
use vigil_wire::ethernet::{format_mac, Ethernet};

/// Optional envelope fields, from the eve-log configuration.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EnvelopeOptions {
    /// `ethernet: yes`: an `ether` object with the outer MAC addresses.
    pub ethernet: bool,
    /// `community-id: yes`, with its seed: a `community_id` for IP packets.
    pub community_id: Option<u16>,
}

/// An address as Suricata 8's EVE writes it: IPv6 in full, eight groups
/// of four hex digits (`2001:0db8:0000:...:0001`), which tools that read
/// Suricata's output match on.
pub fn ip_text(ip: std::net::IpAddr) -> String {
    match ip {
        std::net::IpAddr::V4(v) => v.to_string(),
        std::net::IpAddr::V6(v) => {
            let g = v.segments();
            format!(
                "{:04x}:{:04x}:{:04x}:{:04x}:{:04x}:{:04x}:{:04x}:{:04x}",
                g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7]
            )
        }
    }
}

/// The packet's bytes (base64) and its link type, as `packet` and `packet_info`.
pub(crate) fn insert_packet(m: &mut Map<String, Value>, p: &Packet<'_>) {
    m.insert("packet".into(), Value::String(crate::base64::encode(p.data)));
    m.insert("packet_info".into(), json!({ "linktype": p.linktype.dlt(), "linktype_name": p.linktype.name() }));
}

/// The fields every packet-based record starts with, in Suricata's order.
pub fn envelope(p: &Packet<'_>, event_type: &str, opts: EnvelopeOptions) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("timestamp".into(), Value::String(format_timestamp(p.ts)));
    // Pseudo packets (made at flow end to inspect the rest of a stream) were never captured.
    if p.pcap_cnt != 0 {
        m.insert("pcap_cnt".into(), json!(p.pcap_cnt));
    }
    m.insert("event_type".into(), Value::String(event_type.into()));
    if !p.vlans().is_empty() {
        m.insert("vlan".into(), json!(p.vlans()));
    }
    if let Some(ip) = p.ip {
        m.insert("src_ip".into(), Value::String(ip_text(ip.src)));
        if let Some(sp) = p.sport() {
            m.insert("src_port".into(), json!(sp));
        }
        m.insert("dest_ip".into(), Value::String(ip_text(ip.dst)));
        if let Some(dp) = p.dport() {
            m.insert("dest_port".into(), json!(dp));
        }
        m.insert("ip_v".into(), json!(if ip.src.is_ipv4() { 4 } else { 6 }));
        m.insert("proto".into(), Value::String(proto_name(p.proto).into_owned()));
        if let Transport::Icmp { kind, code } = p.transport {
            m.insert("icmp_type".into(), json!(kind));
            m.insert("icmp_code".into(), json!(code));
        }
    }
    if let Some(t) = p.tunnel {
        let mut o = Map::new();
        o.insert("src_ip".into(), Value::String(ip_text(t.src)));
        if let Some(sp) = t.sport {
            o.insert("src_port".into(), json!(sp));
        }
        o.insert("dest_ip".into(), Value::String(ip_text(t.dst)));
        if let Some(dp) = t.dport {
            o.insert("dest_port".into(), json!(dp));
        }
        o.insert("proto".into(), Value::String(proto_name(t.proto).into_owned()));
        o.insert("depth".into(), json!(t.depth));
        m.insert("tunnel".into(), Value::Object(o));
    }
    if let (Some(seed), Some(ip)) = (opts.community_id, p.ip) {
        let ports = p.sport().zip(p.dport());
        let icmp = match p.transport {
            Transport::Icmp { kind, code } => Some((kind, code)),
            _ => None,
        };
        m.insert("community_id".into(), Value::String(crate::community_id(seed, ip.src, ip.dst, p.proto, ports, icmp)));
    }
    m.insert("pkt_src".into(), Value::String(p.src.name().into()));
    if opts.ethernet {
        if let Some(eth) = p.layer(LayerKind::Ethernet).and_then(|l| Ethernet::new_checked(p.layer_bytes(l)).ok()) {
            m.insert(
                "ether".into(),
                json!({
                    "src_mac": format_mac(eth.src()),
                    "dest_mac": format_mac(eth.dst()),
                    "ether_type": eth.ethertype(),
                }),
            );
        }
    }
    m
}

/// A flow's traffic tags (flowbits `traffic/id/<name>`, `traffic/label/<name>`)
/// as the `traffic` object of its records; nothing when it has none.
pub fn insert_traffic(rec: &mut Value, ids: &[&str], labels: &[&str]) {
    let Value::Object(m) = rec else { return };
    if ids.is_empty() && labels.is_empty() {
        return;
    }
    let mut t = Map::new();
    if !ids.is_empty() {
        t.insert("id".into(), ids.into());
    }
    if !labels.is_empty() {
        t.insert("label".into(), labels.into());
    }
    m.insert("traffic".into(), Value::Object(t));
}
