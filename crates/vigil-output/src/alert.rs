use crate::envelope::{envelope, EnvelopeOptions};
use crate::time::format_timestamp;
use serde_json::{json, Map, Value};
use std::net::IpAddr;
use vigil_decode::Packet;
use vigil_types::Timestamp;

/// What an alert says about the signature that fired.
#[derive(Debug, Clone, Copy)]
pub struct AlertInfo<'a> {
    /// `allowed`, or `blocked` when an IPS dropped the packet.
    pub action: &'a str,
    pub gid: u32,
    pub sid: u32,
    pub rev: u32,
    pub msg: &'a str,
    /// The classtype's description (empty when the rule has none).
    pub category: &'a str,
    /// The priority (the classtype's, unless the rule sets one); 3 without either.
    pub severity: u32,
    /// Rule `metadata` as key/value pairs, in rule order.
    pub metadata: &'a [(String, String)],
    /// The rule's references as URLs (`metadata.rule.reference`).
    pub references: &'a [String],
    /// The signature matched the reassembled stream: these stream bytes are
    /// the payload (`stream: 1`) instead of the packet's.
    pub stream_payload: Option<&'a [u8]>,
    /// What became of the packet, for `verdict: yes`.
    pub verdict: Verdict,
}

/// The packet's final verdict, as EVE's `verdict` object says it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Verdict {
    /// Inspected and let through with its alerts.
    #[default]
    Alert,
    /// A `pass` signature let it (or its flow) through.
    Pass,
    /// Dropped inline.
    Drop,
    /// Firewall mode, inline: the firewall accepted it and nothing dropped it.
    Accept,
    /// A `reject` signature answered it: `inline` says whether the packet was
    /// also dropped; `target` is Suricata's `reject-target` (`to_client`,
    /// `to_server`, `both`); `tcp`: a TCP reset, else an ICMP unreachable.
    Reject { inline: bool, target: &'static str, tcp: bool },
}

impl Verdict {
    /// The `verdict` object: `action`, and for a reject its target and kind.
    pub fn to_json(self) -> Value {
        match self {
            Verdict::Alert => json!({"action": "alert"}),
            Verdict::Pass => json!({"action": "pass"}),
            Verdict::Drop => json!({"action": "drop"}),
            Verdict::Accept => json!({"action": "accept"}),
            Verdict::Reject { inline, target, tcp } => json!({
                "action": if inline { "drop" } else { "alert" },
                "reject-target": target,
                "reject": [if tcp { "tcp-reset" } else { "icmp-prohib" }],
            }),
        }
    }
}

/// The `alert` record options of the eve-log configuration.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AlertOptions {
    pub payload: bool,
    pub payload_printable: bool,
    pub packet: bool,
    /// `metadata: rule-metadata` (on by default in Suricata's `metadata: yes`).
    pub rule_metadata: bool,
    /// `metadata: rule: reference: yes`: the rule's references as URLs.
    pub rule_reference: bool,
    /// `verdict: yes`: the packet's final verdict.
    pub verdict: bool,
    pub envelope: EnvelopeOptions,
}

/// One EVE `alert` record.
pub fn alert_record(p: &Packet<'_>, a: &AlertInfo<'_>, opts: AlertOptions) -> Value {
    let mut m = envelope(p, "alert", opts.envelope);
    let mut alert = Map::new();
    alert.insert("action".into(), json!(a.action));
    alert.insert("gid".into(), json!(a.gid));
    alert.insert("signature_id".into(), json!(a.sid));
    alert.insert("rev".into(), json!(a.rev));
    alert.insert("signature".into(), json!(a.msg));
    alert.insert("category".into(), json!(a.category));
    alert.insert("severity".into(), json!(a.severity));
    if opts.rule_metadata && !a.metadata.is_empty() {
        // Suricata groups values by key: {"key": ["v1", "v2"]}.
        let mut md = Map::new();
        for (k, v) in a.metadata {
            let e = md.entry(k.clone()).or_insert_with(|| Value::Array(Vec::new()));
            if let Value::Array(vals) = e {
                vals.push(json!(v));
            }
        }
        alert.insert("metadata".into(), Value::Object(md));
    }
    if opts.rule_reference && !a.references.is_empty() {
        alert.insert("references".into(), json!(a.references));
    }
    m.insert("alert".into(), Value::Object(alert));
    let payload = a.stream_payload.unwrap_or(p.payload());
    if opts.payload && !payload.is_empty() {
        m.insert("payload".into(), json!(crate::base64::encode(payload)));
    }
    if opts.payload_printable && !payload.is_empty() {
        m.insert("payload_printable".into(), json!(printable(payload)));
    }
    if opts.payload || opts.payload_printable {
        m.insert("stream".into(), json!(u8::from(a.stream_payload.is_some())));
    }
    if opts.packet {
        crate::envelope::insert_packet(&mut m, p);
    }
    if opts.verdict {
        m.insert("verdict".into(), a.verdict.to_json());
    }
    Value::Object(m)
}

/// The flow an alert belongs to, as it stood when the alert was raised
/// (`metadata.flow`, on by default in Suricata 8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AlertFlow {
    pub pkts_toserver: u64,
    pub pkts_toclient: u64,
    pub bytes_toserver: u64,
    pub bytes_toclient: u64,
    pub start: Timestamp,
    /// The flow's client and server, whichever way the alerting packet went.
    pub src_ip: IpAddr,
    pub dest_ip: IpAddr,
    /// Ports, for protocols that have them.
    pub ports: Option<(u16, u16)>,
}

/// Adds the alert's `flow` object: the flow's counters so far, its start,
/// and its endpoints oriented like the flow.
pub fn insert_alert_flow(rec: &mut Value, f: &AlertFlow) {
    let Value::Object(m) = rec else { return };
    let mut o = Map::new();
    o.insert("pkts_toserver".into(), json!(f.pkts_toserver));
    o.insert("pkts_toclient".into(), json!(f.pkts_toclient));
    o.insert("bytes_toserver".into(), json!(f.bytes_toserver));
    o.insert("bytes_toclient".into(), json!(f.bytes_toclient));
    o.insert("start".into(), json!(format_timestamp(f.start)));
    o.insert("src_ip".into(), json!(crate::envelope::ip_text(f.src_ip)));
    o.insert("dest_ip".into(), json!(crate::envelope::ip_text(f.dest_ip)));
    if let Some((sp, dp)) = f.ports {
        o.insert("src_port".into(), json!(sp));
        o.insert("dest_port".into(), json!(dp));
    }
    // Before the payload, where Suricata writes it.
    let at = m.keys().position(|k| matches!(k.as_str(), "payload" | "payload_printable" | "stream" | "packet"));
    m.shift_insert(at.unwrap_or(m.len()), "flow".into(), Value::Object(o));
}

/// Printable ASCII as is, everything else as `.`, as Suricata prints payloads.
pub(crate) fn printable(b: &[u8]) -> String {
    b.iter().map(|&c| if (0x20..0x7f).contains(&c) || c == b'\n' || c == b'\r' { c as char } else { '.' }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use vigil_decode::{DecodeConfig, Decoder};
    use vigil_types::LinkType;
    use vigil_wire::build::PacketBuilder;

    const INFO: AlertInfo<'static> = AlertInfo {
        action: "allowed",
        gid: 1,
        sid: 7,
        rev: 1,
        msg: "m",
        category: "",
        severity: 3,
        metadata: &[],
        references: &[],
        stream_payload: None,
        verdict: Verdict::Alert,
    };

    /// An alert on a server-to-client packet of a flow whose client is 10.0.0.1:40000.
    fn alert_with_flow(opts: AlertOptions) -> Value {
        let frame = PacketBuilder::ipv4([10, 0, 0, 2], [10, 0, 0, 1]).tcp(80, 40000).payload(b"hi").build_ethernet();
        let mut dec = Decoder::new(DecodeConfig::default());
        let p = dec.decode(&frame, Timestamp::from_micros(1_700_000_001, 0), LinkType::Ethernet, 3);
        let mut rec = alert_record(&p, &INFO, opts);
        let flow = AlertFlow {
            pkts_toserver: 2,
            pkts_toclient: 1,
            bytes_toserver: 120,
            bytes_toclient: 62,
            start: Timestamp::from_micros(1_700_000_000, 5),
            src_ip: "10.0.0.1".parse().unwrap(),
            dest_ip: "10.0.0.2".parse().unwrap(),
            ports: Some((40000, 80)),
        };
        insert_alert_flow(&mut rec, &flow);
        rec
    }

    #[test]
    fn flow_object_is_oriented_like_the_flow() {
        let rec = alert_with_flow(AlertOptions { payload: true, ..AlertOptions::default() });
        let f = &rec["flow"];
        assert_eq!(
            (&rec["src_ip"], &f["src_ip"], &f["src_port"]),
            (&json!("10.0.0.2"), &json!("10.0.0.1"), &json!(40000))
        );
        assert_eq!((&f["pkts_toserver"], &f["bytes_toclient"]), (&json!(2), &json!(62)));
        assert_eq!(f["start"], "2023-11-14T22:13:20.000005+0000");
        let keys: Vec<&str> = rec.as_object().unwrap().keys().map(String::as_str).collect();
        let (flow_at, payload_at) = (keys.iter().position(|k| *k == "flow"), keys.iter().position(|k| *k == "payload"));
        assert!(flow_at < payload_at, "{keys:?}");
    }

    #[test]
    fn records_are_schema_valid() {
        let Some(v) = crate::schema_check::validator() else { return };
        let rec = alert_with_flow(AlertOptions { payload: true, packet: true, ..AlertOptions::default() });
        let errors: Vec<String> = v.iter_errors(&rec).map(|e| format!("{e} at {}", e.instance_path())).collect();
        assert!(errors.is_empty(), "{errors:?}\n{rec}");
    }
}
