//! What the configuration asks for that vigil does not write: each is a
//! warning at start-up, so no output is missing without a word.

use vigil_config::Config;

/// Warnings for enabled output modules vigil has no writer for, and EVE
/// record types an enabled `eve-log` lists that vigil never writes.
pub(crate) fn warnings(config: &Config) -> Vec<String> {
    let mut out: Vec<String> = config
        .outputs
        .other_enabled
        .iter()
        .map(|name| format!("outputs.{name}: vigil does not write this output; nothing is written for it"))
        .collect();
    for log in &config.outputs.pcap_log {
        if log.lz4 {
            out.push(format!(
                "outputs.pcap-log ({}): vigil does not compress pcap files; compression: lz4 is written uncompressed",
                log.filename
            ));
        }
    }
    if !config.stats.enabled {
        for log in config.outputs.stats.iter().filter(|s| s.enabled) {
            out.push(format!("outputs.stats ({}): stats.enabled is no, so no counters are written", log.filename));
        }
    }
    for eve in config.outputs.enabled_eve_logs() {
        if matches!(eve.filetype, vigil_config::EveFiletype::Kafka(_)) && !cfg!(feature = "kafka") {
            out.push(format!(
                "outputs.eve-log ({}): filetype kafka needs vigil built with the kafka feature; \
                 the records go to that file instead",
                eve.filename
            ));
        }
        let unwritten: Vec<&str> = eve.types.other.iter().map(String::as_str).filter(|t| !writes_eve_type(t)).collect();
        if !unwritten.is_empty() {
            out.push(format!(
                "outputs.eve-log ({}): vigil writes no {} records yet; nothing is written for them",
                eve.filename,
                unwritten.join(", ")
            ));
        }
        let tls_custom = eve.types.record_options.iter().find(|(n, _)| n == "tls").and_then(|(_, o)| o.custom.as_ref());
        if let Some(custom) = tls_custom {
            let names: Vec<&str> = custom.iter().map(String::as_str).collect();
            for name in vigil_applayer::protocols::tls::unknown_custom_fields(&names) {
                out.push(format!(
                    "outputs.eve-log ({}): types.tls.custom: no field named '{name}'; it is not written",
                    eve.filename
                ));
            }
        }
    }
    out
}

/// EVE record types vigil writes besides alert, anomaly, stats, flow and
/// drop (which the config reads apart): its parsers' and the table's.
fn writes_eve_type(name: &str) -> bool {
    matches!(name, "files" | "netflow" | "frame" | "arp")
        || vigil_applayer::proto::find(name).is_some_and(|d| d.transactions)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unwritten_outputs_and_record_types_are_named() {
        let yaml = "stats:\n  enabled: no\noutputs:\n  - syslog:\n      enabled: yes\n  - pcap-log:\n      enabled: yes\n      compression: lz4\n  - alert-debug:\n      enabled: no\n  - stats:\n      enabled: yes\n  - eve-log:\n      enabled: yes\n      types:\n        - alert\n        - http\n        - ssh\n        - smtp\n        - template\n        - rdp\n";
        let tree = vigil_config::ConfigTree::parse_str(yaml, "t.yaml").unwrap();
        let (config, _, _) = Config::from_tree(&tree);
        let w = warnings(&config);
        assert_eq!(w.len(), 4, "{w:?}");
        assert!(w[0].starts_with("outputs.syslog: "), "{w:?}");
        assert!(w[1].contains("lz4 is written uncompressed"), "{w:?}");
        assert!(w[2].starts_with("outputs.stats (stats.log): stats.enabled is no"), "{w:?}");
        assert!(w[3].contains("no template records"), "{w:?}");
        let yaml = "outputs:\n  - eve-log:\n      enabled: yes\n      types:\n        - tls:\n            custom: [sni, ja5]\n";
        let tree = vigil_config::ConfigTree::parse_str(yaml, "t.yaml").unwrap();
        let w = warnings(&Config::from_tree(&tree).0);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("types.tls.custom: no field named 'ja5'"), "{w:?}");
        // Kafka needs the feature; without it the records go to the file, said at start-up.
        let yaml = "outputs:\n  - eve-log:\n      enabled: yes\n      filetype: kafka\n      filename: k.json\n";
        let tree = vigil_config::ConfigTree::parse_str(yaml, "t.yaml").unwrap();
        let w = warnings(&Config::from_tree(&tree).0);
        assert_eq!(
            w.iter().any(|w| w.contains("filetype kafka needs vigil built with the kafka feature")),
            !cfg!(feature = "kafka"),
            "{w:?}"
        );
    }
}
