//! The protocol test kit's last part: every protocol of the table writes
//! EVE records Suricata's own schema accepts, from its sample conversation
//! (the kit's other parts run in `vigil-applayer`).

use serde_json::{json, Value};
use std::path::Path;
use vigil_applayer::proto::kit;
use vigil_applayer::protocols::ALL;

fn validator() -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/reference/suricata-8.0/schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("schema.json")).unwrap();
    jsonschema::validator_for(&schema).expect("schema compiles")
}

/// Fields Suricata 8.0.6 writes that its own schema does not list (checked
/// against its output; RDP's on realistic-a): taken out before a record is checked.
const BEYOND_SCHEMA: &[(&str, &str, &str)] = &[
    ("ldap", "/request/search_request", "filter"),
    ("rdp", "", "server_supports"),
    ("rdp", "", "protocol"),
    ("rdp", "", "x509_serials"),
    ("rdp", "/client", "connection_hint"),
];

#[test]
fn every_protocols_records_are_schema_valid() {
    let v = validator();
    // Protocols detected but not parsed write no records.
    for def in ALL.iter().filter(|d| d.transactions) {
        let run = kit::cuts_agree(def).unwrap_or_else(|e| panic!("{e}"));
        let txs = run["txs"].as_array().unwrap();
        assert!(!txs.is_empty(), "{}", def.name);
        for tx in txs {
            // A transaction may write another type than its protocol's (a DoH stream: `dns`).
            let kind = tx["type"].as_str().unwrap();
            let mut rec = json!({
                "timestamp": "2026-11-27T00:00:00.000000+0000",
                "flow_id": 1,
                "event_type": kind,
                "src_ip": "198.18.0.1",
                "src_port": 40000,
                "dest_ip": "198.18.0.2",
                "dest_port": 1,
                "proto": if def.detection.tcp { "TCP" } else { "UDP" },
                "tx_id": tx["id"],
            });
            rec[kind] = tx["eve"].clone();
            for (name, v) in tx["siblings"].as_object().unwrap() {
                rec[name.as_str()] = v.clone();
            }
            for (proto, at, field) in BEYOND_SCHEMA.iter().filter(|(p, _, _)| *p == def.name) {
                if let Some(Value::Object(o)) = rec[*proto].pointer_mut(at) {
                    o.remove(*field);
                }
            }
            let errors: Vec<String> = v.iter_errors(&rec).map(|e| format!("{e} at {}", e.instance_path())).collect();
            assert!(errors.is_empty(), "{}: {errors:?}\n{rec}", def.name);
        }
    }
}
