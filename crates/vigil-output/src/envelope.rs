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
        m.insert("src_ip".into(), Value::String(ip.src.to_string()));
        if let Some(sp) = p.sport() {
            m.insert("src_port".into(), json!(sp));
        }
        m.insert("dest_ip".into(), Value::String(ip.dst.to_string()));
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
        o.insert("src_ip".into(), Value::String(t.src.to_string()));
        if let Some(sp) = t.sport {
            o.insert("src_port".into(), json!(sp));
        }
        o.insert("dest_ip".into(), Value::String(t.dst.to_string()));
        if let Some(dp) = t.dport {
            o.insert("dest_port".into(), json!(dp));
        }
        o.insert("proto".into(), Value::String(proto_name(t.proto).into_owned()));
        o.insert("depth".into(), json!(t.depth));
        m.insert("tunnel".into(), Value::Object(o));
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
