//! Mistakes are reported as `file:line:col: key: reason` and the rest of
//! the configuration still loads.

use std::path::PathBuf;
use vigil_config::{ChecksumChecks, Config, ConfigTree};

fn typed(yaml: &str) -> (Config, Vec<String>) {
    let tree = ConfigTree::parse_str(yaml, "suricata.yaml").unwrap_or_else(|e| panic!("{e}"));
    let (c, errors, _) = Config::from_tree(&tree);
    (c, errors.iter().map(ToString::to_string).collect())
}

/// A fresh directory for files of one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vigil-config-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn bad_integer_keeps_default_and_names_the_key() {
    let (c, errors) = typed("%YAML 1.1\n---\nstats:\n  enabled: yes\n  interval: ten\n  stream-events: yes\n");
    assert_eq!(errors, ["suricata.yaml:5:13: stats.interval: expected an integer number of seconds, got \"ten\""]);
    assert_eq!(c.stats.interval, 8);
    assert!(c.stats.stream_events, "the rest still loads");
}

#[test]
fn bad_bool() {
    let (c, errors) = typed("decoder:\n  vxlan:\n    enabled: maybe\n");
    assert_eq!(
        errors,
        ["suricata.yaml:3:14: decoder.vxlan.enabled: expected a boolean (yes/no, true/false, on/off, 1/0), got \"maybe\""]
    );
    assert!(c.decoder.vxlan.enabled);
}

#[test]
fn unknown_checksum_mode() {
    let (c, errors) = typed("pcap-file:\n  checksum-checks: sometimes\n");
    assert_eq!(
        errors,
        ["suricata.yaml:2:20: pcap-file.checksum-checks: unknown checksum mode \"sometimes\" (expected auto, yes or no)"]
    );
    assert_eq!(c.pcap_file.checksum_checks, ChecksumChecks::Auto);
}

#[test]
fn unsupported_features_are_errors() {
    let (c, errors) = typed(
        "pcap-file:\n  recursive: yes\n  continuous: yes\noutputs:\n  - eve-log:\n      enabled: yes\n      filetype: pipe\n",
    );
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(
        errors[0].starts_with("suricata.yaml:7:17: outputs.0.eve-log.filetype: unknown filetype \"pipe\""),
        "{errors:?}"
    );
    assert_eq!(errors[1], "suricata.yaml:3:15: pcap-file.continuous: cannot be combined with recursive", "{errors:?}");
    assert!(c.pcap_file.recursive && !c.pcap_file.delete_when_done);
}

#[test]
fn eve_sinks_and_their_options() {
    use vigil_config::{EveFiletype, RedisMode};
    let (c, errors) = typed(
        "outputs:\n  - eve-log:\n      enabled: yes\n      filetype: redis\n      redis:\n        server: 198.18.0.9\n        port: 6380\n        mode: stream\n        key: ids\n        pipelining:\n          enabled: yes\n          batch-size: 50\n  - eve-log:\n      enabled: yes\n      filetype: syslog\n      facility: LOCAL3\n      level: Warning\n      prefix: \"@cee: \"\n  - eve-log:\n      enabled: yes\n      filetype: unix_dgram\n      filename: /run/collector.sock\n",
    );
    assert!(errors.is_empty(), "{errors:?}");
    let eves: Vec<_> = c.outputs.enabled_eve_logs().collect();
    let EveFiletype::Redis(r) = &eves[0].filetype else { panic!("{:?}", eves[0].filetype) };
    assert_eq!(
        (r.server.as_str(), r.port, r.mode, r.key.as_str(), r.batch_size),
        ("198.18.0.9", 6380, RedisMode::Xadd, "ids", 50)
    );
    assert_eq!((r.stream_maxlen, r.stream_trim_exact), (100_000, false));
    let EveFiletype::Syslog(s) = &eves[1].filetype else { panic!("{:?}", eves[1].filetype) };
    assert_eq!((s.identity.as_str(), s.facility, s.level, s.socket.as_str()), ("suricata", 19, 4, "/dev/log"));
    assert_eq!(eves[1].prefix.as_deref(), Some("@cee: "));
    assert_eq!(eves[2].filetype, EveFiletype::UnixDgram);
    let (_, errors) =
        typed("outputs:\n  - eve-log:\n      enabled: yes\n      filetype: syslog\n      facility: local9\n");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].starts_with("suricata.yaml:5:17: outputs.0.eve-log.facility: unknown facility \"local9\""),
        "{errors:?}"
    );
    // Kafka (vigil's own filetype): brokers, topic, client id and librdkafka properties as given.
    let (c, errors) = typed(
        "outputs:\n  - eve-log:\n      enabled: yes\n      filetype: kafka\n      kafka:\n        brokers: 198.18.0.9:9092,198.18.0.10:9092\n        topic: ids\n        options:\n          compression.type: lz4\n          acks: all\n",
    );
    assert!(errors.is_empty(), "{errors:?}");
    let eve = c.outputs.enabled_eve_logs().next().unwrap();
    let EveFiletype::Kafka(k) = &eve.filetype else { panic!("{:?}", eve.filetype) };
    assert_eq!(
        (k.brokers.as_str(), k.topic.as_str(), k.client_id.as_str()),
        ("198.18.0.9:9092,198.18.0.10:9092", "ids", "vigil")
    );
    assert_eq!(k.options, [("compression.type".to_string(), "lz4".to_string()), ("acks".into(), "all".into())]);
}

#[test]
fn disabled_outputs_are_not_checked() {
    // Suricata never reads the options of a disabled output.
    let (_, errors) = typed("outputs:\n  - eve-log:\n      enabled: no\n      filetype: syslog\n      types:\n        - alert:\n            payload: maybe\n");
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn list_where_a_value_is_expected() {
    let (_, errors) = typed("stats:\n  interval: [1, 2]\n");
    assert_eq!(errors, ["suricata.yaml:2:3: stats.interval: expected a single value, got a list"]);
}

#[test]
fn eve_stats_rules() {
    let (c, errors) = typed("stats:\n  enabled: no\noutputs:\n  - eve-log:\n      enabled: yes\n      types:\n        - stats:\n            totals: no\n            threads: no\n");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("outputs.0.eve-log.types.0.stats.threads: cannot disable both totals and threads"));
    assert!(!c.outputs.eve_log[0].logs("stats"));
    let (c, errors) =
        typed("stats:\n  enabled: no\noutputs:\n  - eve-log:\n      enabled: yes\n      types:\n        - stats\n");
    assert_eq!(
        errors,
        ["suricata.yaml:7:11: outputs.0.eve-log.types.0.stats: eve stats need global stats: set stats.enabled to yes"]
    );
    assert!(!c.outputs.eve_log[0].logs("stats"));
}

#[test]
fn include_missing_file() {
    let dir = scratch("missing");
    let main = dir.join("suricata.yaml");
    std::fs::write(&main, "%YAML 1.1\n---\nstats:\n  enabled: yes\ninclude: nowhere.yaml\n").unwrap();
    let err = ConfigTree::load_file(&main).unwrap_err().to_string();
    let expected =
        format!("{}:5:10: cannot read include file {}: ", main.display(), dir.join("nowhere.yaml").display());
    assert!(err.starts_with(&expected), "{err}");
    assert!(err.contains("No such file"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn include_cycle() {
    let dir = scratch("cycle");
    std::fs::write(dir.join("a.yaml"), "%YAML 1.1\n---\na: 1\ninclude: b.yaml\n").unwrap();
    std::fs::write(dir.join("b.yaml"), "%YAML 1.1\n---\nb: 1\ninclude:\n  - a.yaml\n").unwrap();
    let err = ConfigTree::load_file(dir.join("a.yaml")).unwrap_err();
    let real = std::fs::canonicalize(&dir).unwrap();
    let (a, b) = (real.join("a.yaml").display().to_string(), real.join("b.yaml").display().to_string());
    assert_eq!(err.reason, format!("include cycle: {a} -> {b} -> {a}"));
    // It points at the include in b.yaml that closes the cycle.
    assert!(err.position.file.ends_with("b.yaml"), "{err}");
    assert_eq!((err.position.line, err.position.column), (5, 5), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn include_forms() {
    let dir = scratch("forms");
    std::fs::write(dir.join("inc.yaml"), "%YAML 1.1\n---\nhost-mode: auto\nunix-command:\n  enabled: no\n").unwrap();
    std::fs::write(dir.join("two.yaml"), "two: 2\n").unwrap();
    std::fs::write(
        dir.join("main.yaml"),
        "%YAML 1.1\n---\ninclude: inc.yaml\nmapping: !include inc.yaml\nnested:\n  include: [inc.yaml, two.yaml]\n",
    )
    .unwrap();
    let t = ConfigTree::load_file(dir.join("main.yaml")).unwrap();
    assert_eq!(t.get_str("host-mode"), Some("auto"));
    assert_eq!(t.get_str("unix-command.enabled"), Some("no"));
    assert_eq!(t.get_str("mapping.host-mode"), Some("auto"));
    assert_eq!(t.get_str("mapping.unix-command.enabled"), Some("no"));
    assert_eq!(t.get_str("nested.host-mode"), Some("auto"));
    assert_eq!(t.get_str("nested.two"), Some("2"));
    assert_eq!(t.files().len(), 5);
    // Positions of included keys name the included file.
    assert!(t.get("host-mode").unwrap().position().file.ends_with("inc.yaml"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn include_mapping_is_refused() {
    let err = ConfigTree::parse_str("include:\n  a: b\n", "suricata.yaml").unwrap_err();
    assert_eq!(err.to_string(), "suricata.yaml:2:3: include: include fields cannot be a mapping");
}

#[test]
fn tab_indentation() {
    let err = ConfigTree::parse_str("%YAML 1.1\n---\nstats:\n\tenabled: yes\n", "suricata.yaml").unwrap_err();
    let msg = err.to_string();
    assert!(msg.starts_with("suricata.yaml:4:"), "{msg}");
    assert!(msg.contains("invalid YAML") && msg.contains("tab"), "{msg}");
}

#[test]
fn broken_yaml() {
    for (text, line) in [
        ("a: 1\n  b: 2\n", 2),
        ("a: 'unterminated\n", 2),
        ("a: [1, 2\nb: 3\n", 2),
        ("a:\n  - x\n  y: 1\n", 3),
        ("a: *nowhere\n", 1),
    ] {
        let err = ConfigTree::parse_str(text, "broken.yaml").unwrap_err();
        assert_eq!(err.position.line, line, "{text:?}: {err}");
        assert!(err.to_string().starts_with("broken.yaml:"), "{err}");
    }
}

#[test]
fn aliases_are_refused_with_a_position() {
    let err = ConfigTree::parse_str("a: &x 1\nb: *x\n", "t.yaml").unwrap_err();
    assert_eq!(err.to_string(), "t.yaml:2:4: YAML aliases (*name) are not supported");
}

#[test]
fn missing_main_file_and_directory() {
    let err = ConfigTree::load_file("/nonexistent/suricata.yaml").unwrap_err();
    assert!(err.to_string().starts_with("/nonexistent/suricata.yaml: cannot read configuration file"), "{err}");
    let err = ConfigTree::load_file(std::env::temp_dir()).unwrap_err();
    assert!(err.reason.contains("is a directory"), "{err}");
}

#[test]
fn eve_drop_flows_must_be_start_or_all() {
    let (c, errors) =
        typed("outputs:\n  - eve-log:\n      enabled: yes\n      types:\n        - drop:\n            flows: some\n");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("drop.flows: expected start or all, got 'some'"), "{errors:?}");
    assert_eq!(c.outputs.eve_log[0].types.drop.as_ref().unwrap().flows, vigil_config::DropFlows::Start);
}

#[test]
fn what_suricata_refuses_is_fatal() {
    let tree = ConfigTree::parse_str(
        "flow:\n  memcap: lots\nstats:\n  interval: ten\noutputs:\n  - eve-log:\n      enabled: yes\n      types:\n        - alert\n        - dnz\n        - smtp\n",
        "suricata.yaml",
    )
    .unwrap();
    let (_, errors, _) = Config::from_tree(&tree);
    let fatal: Vec<String> = errors.iter().filter(|e| e.fatal).map(ToString::to_string).collect();
    assert_eq!(
        fatal,
        [
            "suricata.yaml:10:11: outputs.0.eve-log.types.1: no EVE record type named \"dnz\" (no output module eve-log.dnz)",
            "suricata.yaml:2:11: flow.memcap: invalid size argument \"lots\" (expected a size like 64mb, 32 KiB or a number of bytes)",
        ]
    );
    // A bad integer Suricata reads as its default, and a type Suricata has
    // that vigil does not write (smtp), are not fatal.
    assert_eq!(errors.len(), 3, "{errors:?}");
}

#[test]
fn a_near_miss_of_a_key_vigil_reads_is_named() {
    let (c, errors) = typed("stream:\n  reassembly:\n    depht: 1mb\n    segment-prealloc: 2048\n  memcap: 1mb\n");
    assert_eq!(
        errors,
        ["suricata.yaml:3:5: stream.reassembly.depht: not a key vigil reads; a typo of \"depth\"? (Suricata would ignore it too)"]
    );
    assert_eq!(c.stream.memcap, 1 << 20, "the rest still loads");
}

#[test]
fn pcap_log_settings_and_what_suricata_refuses() {
    let (c, errors) = typed(
        "outputs:\n  - pcap-log:\n      enabled: yes\n      mode: multi\n      filename: log.%n.%t\n      limit: 8mb\n      max-files: 3\n      conditional: alerts\n      ts-format: usec\n",
    );
    assert!(errors.is_empty(), "{errors:?}");
    let p = &c.outputs.pcap_log[0];
    assert_eq!((p.multi, p.limit, p.max_files, p.usec), (true, 8 << 20, 3, true));
    assert_eq!(p.conditional, vigil_config::PcapCondition::Alerts);
    let tree = ConfigTree::parse_str(
        "outputs:\n  - pcap-log:\n      enabled: yes\n      limit: 1mb\n  - pcap-log:\n      enabled: yes\n      mode: multi\n",
        "suricata.yaml",
    )
    .unwrap();
    let (_, errors, _) = Config::from_tree(&tree);
    let fatal: Vec<String> = errors.iter().filter(|e| e.fatal).map(ToString::to_string).collect();
    assert_eq!(fatal.len(), 2, "{fatal:?}");
    assert!(fatal[0].contains("outputs.0.pcap-log.limit: less than the allowed minimum of 4194304 bytes"));
    assert!(fatal[1].contains("multi mode needs at least one of %n, %i, %t"));
    let (c, _) = typed("outputs:\n  - pcap-log:\n      enabled: no\n");
    assert!(c.outputs.pcap_log.is_empty());
}

#[test]
fn tls_store_output_is_read_with_its_directory() {
    let read = |yaml: &str| {
        let tree = ConfigTree::parse_str(yaml, "suricata.yaml").unwrap();
        Config::from_tree(&tree).0.outputs
    };
    let on = read("outputs:\n  - tls-store:\n      enabled: yes\n      certs-log-dir: certs\n");
    assert_eq!(on.tls_store, Some(vigil_config::TlsStore { certs_log_dir: Some("certs".into()) }));
    assert!(on.other_enabled.is_empty(), "read, so not warned about as unknown");
    let default_dir = read("outputs:\n  - tls-store:\n      enabled: yes\n");
    assert_eq!(default_dir.tls_store, Some(vigil_config::TlsStore { certs_log_dir: None }));
    assert_eq!(read("outputs:\n  - tls-store:\n      enabled: no\n").tls_store, None);
}

#[test]
fn packet_alert_max_is_read() {
    let (c, errors) = typed("packet-alert-max: 2\n");
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(c.detect.packet_alert_max, 2);
    let (c, errors) = typed("packet-alert-max: 0\n");
    assert_eq!(c.detect.packet_alert_max, 15, "out of range keeps the default");
    assert_eq!(errors.len(), 1);
}
