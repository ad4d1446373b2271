use crate::time::format_timestamp;
use serde_json::{json, Value};
use vigil_types::Timestamp;

/// An EVE `engine` record: one of vigil's own messages (a rule that failed
/// to load, the load summary, a warning), as Suricata's JSON log file
/// output writes them. `module` names the part of the engine that speaks
/// (`detect` for rule loading, `detect-content` for a content problem).
pub fn engine_record(ts: Timestamp, level: &str, module: &str, message: &str) -> Value {
    json!({
        "timestamp": format_timestamp(ts),
        "log_level": level,
        "event_type": "engine",
        "engine": { "message": message, "module": module },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_where_suricata_puts_them() {
        let r = engine_record(Timestamp::from_micros(0, 0), "Error", "detect", "bad rule");
        assert_eq!(r["event_type"], "engine");
        assert_eq!(r["log_level"], "Error");
        assert_eq!(r["engine"]["module"], "detect");
        assert_eq!(r["engine"]["message"], "bad rule");
        assert_eq!(r["timestamp"], "1970-01-01T00:00:00.000000+0000");
    }
}
