//! `heartbeat.output-flush-interval` and `eve-log.buffer-size`: read as
//! Suricata reads them, refused out of range.

use vigil_config::{Config, ConfigTree};

fn load(yaml: &str) -> (Config, Vec<String>) {
    let tree = ConfigTree::parse_str(yaml, "t.yaml").unwrap();
    let (c, errors, _) = Config::from_tree(&tree);
    (c, errors.iter().map(|e| e.to_string()).collect())
}

#[test]
fn flush_interval_and_buffer_size() {
    let (c, errors) = load(
        "heartbeat:\n  output-flush-interval: 5\noutputs:\n  - eve-log:\n      enabled: yes\n      buffer-size: 32kb\n",
    );
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(c.heartbeat.output_flush_interval, Some(5));
    assert_eq!(c.outputs.eve_log[0].buffer_size, Some(32 * 1024));
    // Absent: vigil's own defaults apply (decided by the engine per run mode).
    let (c, _) = load("outputs:\n  - eve-log:\n      enabled: yes\n");
    assert_eq!((c.heartbeat.output_flush_interval, c.outputs.eve_log[0].buffer_size), (None, None));
}

#[test]
fn out_of_range_interval_is_an_error_naming_the_key() {
    let (c, errors) = load("heartbeat:\n  output-flush-interval: 61\n");
    assert_eq!(c.heartbeat.output_flush_interval, None);
    assert!(errors.iter().any(|e| e.contains("output-flush-interval")), "{errors:?}");
}
