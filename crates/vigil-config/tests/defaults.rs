//! `Config::default()` is the stock suricata.yaml, and DEFAULT_YAML says
//! the same thing.

use vigil_config::{Config, ConfigTree, RawSections, DEFAULT_YAML};

const STOCK: &str = "/work/shared/reference/suricata-8.0/suricata.yaml";

/// The typed parts only: raw sections are passthrough subtrees.
fn typed(mut c: Config) -> Config {
    c.raw = RawSections::default();
    c
}

#[test]
fn stock_yields_default() {
    if !std::path::Path::new(STOCK).exists() {
        eprintln!("skipped: {STOCK} not present");
        return;
    }
    let tree = ConfigTree::load_file(STOCK).unwrap();
    let (config, errors, _) = Config::from_tree(&tree);
    assert!(errors.is_empty(), "{errors:#?}");
    // The raw sections are all present in stock and kept whole.
    let raw = &config.raw;
    for (name, sec) in [
        ("defrag", &raw.defrag),
        ("flow", &raw.flow),
        ("flow-timeouts", &raw.flow_timeouts),
        ("stream", &raw.stream),
        ("app-layer", &raw.app_layer),
        ("detect", &raw.detect),
        ("af-packet", &raw.af_packet),
    ] {
        assert!(sec.is_some(), "{name}");
    }
    assert_eq!(raw.stream.as_ref().unwrap().get("reassembly.depth").unwrap().value(), Some("1 MiB"));
    assert_eq!(typed(config), Config::default());
}

#[test]
fn default_yaml_yields_default() {
    let tree = ConfigTree::parse_str(DEFAULT_YAML, "default.yaml").unwrap();
    let (config, errors, ignored) = Config::from_tree(&tree);
    assert!(errors.is_empty(), "{errors:#?}");
    assert!(ignored.is_empty(), "{ignored:?}");
    assert!(tree.warnings().is_empty(), "{:?}", tree.warnings());
    assert_eq!(typed(config), Config::default());
}

#[test]
fn default_yaml_keeps_stock_list_positions() {
    let tree = ConfigTree::parse_str(DEFAULT_YAML, "default.yaml").unwrap();
    assert_eq!(tree.get_str("outputs.1"), Some("eve-log"));
    assert_eq!(tree.get_str("outputs.1.eve-log.types.2"), Some("anomaly"));
}

#[test]
fn absent_sections_use_suricata_builtin_defaults() {
    let tree = ConfigTree::parse_str("%YAML 1.1\n---\n", "empty.yaml").unwrap();
    let (c, errors, ignored) = Config::from_tree(&tree);
    assert!(errors.is_empty() && ignored.is_empty());
    assert!(c.outputs.eve_log.is_empty());
    assert!(c.stats.enabled);
    assert_eq!(c.stats.interval, 8);
    assert!(c.checksum.stream_validation);
    assert_eq!(c.decoder.vxlan.ports, None);
    assert_eq!(c.decoder.effective_ports("vxlan"), Some("4789"));
    assert_eq!(c.decoder.effective_ports("teredo"), Some("any"));
    assert_eq!(c.decoder.max_layers, 16);
    assert_eq!(c.runtime.max_pending_packets, 1024);
    assert!(c.rules.rule_files.is_empty());
    assert!(c.vars.address_groups.is_empty());
}

#[test]
fn eve_type_defaults_without_options() {
    let yaml = "outputs:\n  - eve-log:\n      enabled: yes\n      types:\n        - alert\n        - anomaly:\n        - stats\n        - flow\n        - dns:\n        - ikev2\n        - http:\n            enabled: no\n";
    let tree = ConfigTree::parse_str(yaml, "t.yaml").unwrap();
    let (c, errors, _) = Config::from_tree(&tree);
    assert!(errors.is_empty(), "{errors:?}");
    let eve = &c.outputs.eve_log[0];
    let alert = eve.types.alert.as_ref().unwrap();
    assert!(alert.enabled && !alert.tagged_packets && !alert.payload);
    assert!(alert.metadata.app_layer && alert.metadata.flow && alert.metadata.rule_metadata);
    assert_eq!(alert.payload_buffer_size, 4096);
    let anomaly = eve.types.anomaly.as_ref().unwrap();
    assert!(anomaly.enabled && anomaly.applayer && !anomaly.decode && !anomaly.stream);
    let stats = eve.types.stats.as_ref().unwrap();
    assert!(stats.totals && !stats.threads && !stats.deltas && stats.null_values);
    assert_eq!(eve.types.other, ["dns", "ike"]);
    assert!(eve.logs("flow") && eve.logs("dns") && !eve.logs("http") && !eve.logs("tls"));
    assert_eq!(eve.filename, "eve.json");
}
