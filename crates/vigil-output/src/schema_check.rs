//! Tests' access to Suricata's EVE schema in `../shared`.

use serde_json::Value;

/// The schema's validator, or `None` (with a note) where the shared copy is absent.
pub(crate) fn validator() -> Option<jsonschema::Validator> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/reference/suricata-8.0/schema.json");
    let Ok(text) = std::fs::read_to_string(path) else {
        eprintln!("skipped: {path} not present");
        return None;
    };
    let schema: Value = serde_json::from_str(&text).unwrap();
    Some(jsonschema::validator_for(&schema).unwrap())
}
