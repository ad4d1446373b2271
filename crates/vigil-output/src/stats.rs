use crate::time::format_timestamp;
use serde_json::{json, Map, Value};
use vigil_types::Timestamp;

/// An EVE `stats` record from dotted counter names (`decoder.pkts`,
/// `decoder.event.ipv4.trunc_pkt`), nested the way Suricata nests them.
pub fn stats_record<S: AsRef<str>>(ts: Timestamp, uptime_secs: u64, counters: &[(S, u64)]) -> Value {
    let mut stats = Map::new();
    stats.insert("uptime".into(), json!(uptime_secs));
    for (name, value) in counters {
        insert_dotted(&mut stats, name.as_ref(), *value);
    }
    json!({
        "timestamp": format_timestamp(ts),
        "event_type": "stats",
        "stats": Value::Object(stats),
    })
}

fn insert_dotted(root: &mut Map<String, Value>, name: &str, value: u64) {
    let mut node = root;
    let mut parts = name.split('.').peekable();
    while let Some(part) = parts.next() {
        if parts.peek().is_none() {
            node.insert(part.to_string(), json!(value));
            return;
        }
        let child = node.entry(part.to_string()).or_insert_with(|| Value::Object(Map::new()));
        if !child.is_object() {
            // A counter and a group of the same name: the group wins, as the counter has nowhere to go.
            *child = Value::Object(Map::new());
        }
        let Value::Object(next) = child else { return };
        node = next;
    }
}
