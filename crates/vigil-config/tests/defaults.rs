//! `Config::default()` is the stock suricata.yaml, and DEFAULT_YAML says
//! the same thing.

use vigil_config::{Config, ConfigTree, RawSections, DEFAULT_YAML};

const STOCK: &str = "/work/shared/reference/suricata-8.0/suricata.yaml";

/// The typed parts only: raw sections are passthrough subtrees, and the
/// `app-layer` protocol list is every protocol the file names (checked apart).
fn typed(mut c: Config) -> Config {
    c.raw = RawSections::default();
    c.app_layer = Default::default();
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
    for (name, sec) in
        [("stream", &raw.stream), ("app-layer", &raw.app_layer), ("detect", &raw.detect), ("af-packet", &raw.af_packet)]
    {
        assert!(sec.is_some(), "{name}");
    }
    assert_eq!(raw.stream.as_ref().unwrap().get("reassembly.depth").unwrap().value(), Some("1 MiB"));
    let a = &config.app_layer;
    assert!(["http", "tls", "dns", "ssh", "smb", "dcerpc"].iter().all(|p| a.enabled(p)));
    assert_eq!((a.http_request_body_limit, a.http_response_body_limit), (Some(100 << 10), Some(100 << 10)));
    // The one value where the stock file and Suricata's built-in differ:
    // urgent data is taken out of band by the stock file, kept inline when absent.
    assert_eq!(config.stream.urgent_policy, vigil_config::Urgent::Oob);
    let mut config = config;
    config.stream.urgent_policy = vigil_config::Urgent::Inline;
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
    // Suricata's built-in flow and defrag values differ from the stock file.
    assert_eq!(c.flow.memcap, 32 * 1024 * 1024);
    assert_eq!(c.flow_timeouts.tcp.established, 300);
    assert_eq!(c.defrag.hash_size, 4096);
    assert!(c.host_os_policy.entries.is_empty());
}

#[test]
fn stock_flow_and_defrag_values() {
    let c = Config::default();
    assert_eq!(
        (c.flow.memcap, c.flow.hash_size, c.flow.prealloc, c.flow.emergency_recovery),
        (128 << 20, 65536, 10000, 30)
    );
    assert_eq!((c.flow_timeouts.tcp.new, c.flow_timeouts.tcp.established, c.flow_timeouts.tcp.closed), (60, 600, 60));
    assert_eq!(c.flow_timeouts.tcp.emergency_new, 5);
    assert_eq!((c.flow_timeouts.udp.new, c.flow_timeouts.icmp.established), (30, 300));
    assert_eq!(
        (c.defrag.memcap, c.defrag.trackers, c.defrag.max_frags, c.defrag.timeout),
        (32 << 20, 65535, 65535, 60)
    );
    assert_eq!(c.host_os_policy.lookup("192.0.2.1".parse().unwrap()), Some(vigil_config::OsPolicy::Windows));
    assert_eq!(c.host_os_policy.lookup("2001:db8::1".parse().unwrap()), None);
}

#[test]
fn flow_and_defrag_errors_keep_defaults() {
    let yaml = "flow:\n  memcap: lots\n  emergency-recovery: 200\nflow-timeouts:\n  udp:\n    new: -1\ndefrag:\n  timeout: 0\nhost-os-policy:\n  plan9: [10.0.0.0/8]\n  linux: [10.0.0.0/33, 10.1.0.0/16]\n";
    let tree = ConfigTree::parse_str(yaml, "t.yaml").unwrap();
    let (c, errors, ignored) = Config::from_tree(&tree);
    assert!(ignored.is_empty(), "{ignored:?}");
    let keys: Vec<_> = errors.iter().filter_map(|e| e.key.clone()).collect();
    for k in
        ["flow.memcap", "flow.emergency-recovery", "flow-timeouts.udp.new", "defrag.timeout", "host-os-policy.plan9"]
    {
        assert!(keys.iter().any(|x| x == k), "{k} not in {keys:?}");
    }
    assert_eq!(c.flow.memcap, 32 << 20);
    assert_eq!(c.flow_timeouts.udp.new, 30);
    assert_eq!(c.defrag.timeout, 60);
    assert_eq!(c.host_os_policy.entries.len(), 1);
    assert_eq!(c.host_os_policy.lookup("10.1.2.3".parse().unwrap()), Some(vigil_config::OsPolicy::Linux));
}

#[test]
fn stream_section_is_typed_and_bad_values_keep_defaults() {
    let yaml = "stream:\n  memcap: 1 MiB\n  midstream: true\n  async-oneside: yes\n  inline: no\n  reassembly:\n    memcap: 2 MiB\n    depth: 0\n    toserver-chunk-size: 100\n    toclient-chunk-size: 0\n";
    let tree = ConfigTree::parse_str(yaml, "t.yaml").unwrap();
    let (c, errors, _) = Config::from_tree(&tree);
    let s = &c.stream;
    assert_eq!((s.memcap, s.midstream, s.async_oneside, s.inline), (1 << 20, true, true, Some(false)));
    assert_eq!((s.reassembly_memcap, s.reassembly_depth, s.toserver_chunk_size), (2 << 20, 0, 100));
    // A chunk size of 0 is refused, by key, and the default kept.
    assert_eq!(s.toclient_chunk_size, 2560);
    let keys: Vec<_> = errors.iter().filter_map(|e| e.key.clone()).collect();
    assert_eq!(keys, ["stream.reassembly.toclient-chunk-size"]);
    // `auto` (the stock value) leaves the choice to the run mode.
    let tree = ConfigTree::parse_str("stream:\n  inline: auto\n", "t.yaml").unwrap();
    assert_eq!(Config::from_tree(&tree).0.stream.inline, None);
    // Urgent data: Suricata's defaults when absent, the stock file's `oob`
    // when given; a value Suricata does not know is fatal (`oob` is no
    // OOB limit policy).
    use vigil_config::Urgent;
    assert_eq!((s.urgent_policy, s.urgent_oob_limit), (Urgent::Inline, Urgent::Drop));
    let yaml = "stream:\n  reassembly:\n    urgent:\n      policy: oob\n      oob-limit-policy: gap\n";
    let (c, errors, _) = Config::from_tree(&ConfigTree::parse_str(yaml, "t.yaml").unwrap());
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!((c.stream.urgent_policy, c.stream.urgent_oob_limit), (Urgent::Oob, Urgent::Gap));
    let yaml = "stream:\n  reassembly:\n    urgent:\n      policy: keep\n      oob-limit-policy: oob\n";
    let (_, errors, _) = Config::from_tree(&ConfigTree::parse_str(yaml, "t.yaml").unwrap());
    let fatal: Vec<String> = errors.iter().filter(|e| e.fatal).map(ToString::to_string).collect();
    assert_eq!(fatal.len(), 2, "{fatal:?}");
    assert!(fatal[0].contains("stream.reassembly.urgent.policy: invalid value 'keep'"), "{fatal:?}");
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

#[test]
fn eve_drop_type_options() {
    let yaml = "outputs:\n  - eve-log:\n      enabled: yes\n      types:\n        - drop:\n            flows: all\n            alerts: true\n";
    let tree = ConfigTree::parse_str(yaml, "t.yaml").unwrap();
    let (c, errors, _) = Config::from_tree(&tree);
    assert!(errors.is_empty(), "{errors:?}");
    let eve = &c.outputs.eve_log[0];
    let drop = eve.types.drop.as_ref().unwrap();
    assert!(drop.enabled && drop.alerts && !drop.verdict);
    assert_eq!(drop.flows, vigil_config::DropFlows::All);
    assert!(eve.logs("drop") && eve.types.other.is_empty());
    // A bare `- drop` logs the start of dropped flows, without alerts.
    let yaml = "outputs:\n  - eve-log:\n      enabled: yes\n      types:\n        - drop\n";
    let (c, _, _) = Config::from_tree(&ConfigTree::parse_str(yaml, "t.yaml").unwrap());
    let drop = c.outputs.eve_log[0].types.drop.clone().unwrap();
    assert_eq!((drop.alerts, drop.flows), (false, vigil_config::DropFlows::Start));
}

#[test]
fn eve_record_options_by_type() {
    let yaml = "outputs:\n  - eve-log:\n      enabled: yes\n      types:\n        - mqtt:\n            string-log-limit: 1kb\n            passwords: no\n        - pgsql:\n            passwords: yes\n        - dns\n";
    let (c, errors, _) = Config::from_tree(&ConfigTree::parse_str(yaml, "t.yaml").unwrap());
    assert!(errors.is_empty(), "{errors:?}");
    let opts = &c.outputs.eve_log[0].types.record_options;
    let mqtt = vigil_config::EveRecordOptions {
        passwords: Some(false),
        string_log_limit: Some(1024),
        extended: false,
        types: None,
        custom: None,
    };
    let pgsql = vigil_config::EveRecordOptions {
        passwords: Some(true),
        string_log_limit: None,
        extended: false,
        types: None,
        custom: None,
    };
    assert_eq!(opts, &[("mqtt".to_string(), mqtt), ("pgsql".to_string(), pgsql)]);
    // A limit that is not a size stops the start, as in Suricata.
    let yaml = "outputs:\n  - eve-log:\n      enabled: yes\n      types:\n        - mqtt:\n            string-log-limit: XXX\n";
    let (_, errors, _) = Config::from_tree(&ConfigTree::parse_str(yaml, "t.yaml").unwrap());
    assert!(errors.iter().any(|e| e.to_string().contains("invalid size argument")), "{errors:?}");
}
