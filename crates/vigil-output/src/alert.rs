use crate::envelope::{envelope, EnvelopeOptions};
use serde_json::{json, Map, Value};
use vigil_decode::Packet;

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
}

/// The `alert` record options of the eve-log configuration.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AlertOptions {
    pub payload: bool,
    pub payload_printable: bool,
    pub packet: bool,
    /// `metadata: rule-metadata` (on by default in Suricata's `metadata: yes`).
    pub rule_metadata: bool,
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
    m.insert("alert".into(), Value::Object(alert));
    let payload = p.payload();
    if opts.payload && !payload.is_empty() {
        m.insert("payload".into(), json!(crate::base64::encode(payload)));
    }
    if opts.payload_printable && !payload.is_empty() {
        m.insert("payload_printable".into(), json!(printable(payload)));
    }
    if opts.payload || opts.payload_printable {
        m.insert("stream".into(), json!(0));
    }
    if opts.packet {
        m.insert("packet".into(), json!(crate::base64::encode(p.data)));
        m.insert("packet_info".into(), json!({ "linktype": p.linktype.dlt(), "linktype_name": p.linktype.name() }));
    }
    Value::Object(m)
}

/// Printable ASCII as is, everything else as `.`, as Suricata prints payloads.
fn printable(b: &[u8]) -> String {
    b.iter().map(|&c| if (0x20..0x7f).contains(&c) || c == b'\n' || c == b'\r' { c as char } else { '.' }).collect()
}
