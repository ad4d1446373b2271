//! vigil's own messages in the `logging` file outputs: a JSON file gets an
//! EVE `engine` record for each failed rule's reason and for the rule,
//! then the load summary; a file that cannot be opened is a warning; and
//! a capture directory's other files are skipped, as in Suricata.

mod common;

use common::{spaced, tempdir, write_pcap};
use serde_json::Value;
use vigil_engine::RunOptions;
use vigil_wire::build::PacketBuilder;

const CONFIG: &str = "%YAML 1.1\n---\nlogging:\n  default-log-level: info\n  outputs:\n  - file:\n      enabled: yes\n      filename: engine.json\n      type: json\n  - file:\n      enabled: yes\n      filename: /nonexistent-vigil-dir/x.log\noutputs:\n  - eve-log:\n      enabled: yes\n      filename: eve.json\n      types:\n        - alert\n";

const RULES: &str = "\
alert tcp any any -> any any (content:\"|l0 01|\"; sid:1;)
alert tcp any any -> any any (content:\"AA\"; content:\"BB\"; within:3; within:3; sid:2;)
alert tcp any any -> any any (content:\"hello\"; sid:3;)
";

fn setup(name: &str) -> (std::path::PathBuf, RunOptions) {
    let dir = tempdir("engine-log", name);
    let caps = dir.join("caps");
    std::fs::create_dir_all(&caps).unwrap();
    let frame = PacketBuilder::ipv4([198, 18, 0, 1], [198, 18, 0, 2]).tcp(1000, 80).payload(b"hello").build_ethernet();
    write_pcap(&caps.join("a.pcap"), spaced(&[frame]));
    std::fs::write(caps.join("notes.txt"), "not a capture").unwrap();
    std::fs::write(dir.join("test.rules"), RULES).unwrap();
    std::fs::write(dir.join("vigil.yaml"), CONFIG).unwrap();
    let opts = RunOptions {
        inputs: vec![caps],
        log_dir: Some(dir.clone()),
        config: Some(dir.join("vigil.yaml")),
        exclusive_rules: vec![dir.join("test.rules")],
        checksum: Some("none".into()),
        ..RunOptions::default()
    };
    (dir, opts)
}

fn records(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn failed_rules_and_the_summary_are_engine_records() {
    let (dir, opts) = setup("records");
    let setup = vigil_engine::setup(&opts).unwrap();
    // The log file that cannot be opened is a warning; the run goes on.
    assert!(setup.warnings.iter().any(|w| w.contains("/nonexistent-vigil-dir/x.log")), "{:?}", setup.warnings);
    let summary = vigil_engine::run_setup(&setup, &opts, &mut |_| {}).unwrap();
    // The directory's text file is skipped, its capture read.
    assert_eq!(summary.packets, 1);
    assert_eq!(summary.capture_errors.len(), 1);
    let alerts = records(&dir.join("eve.json"));
    assert_eq!(alerts.len(), 1);
    assert_eq!(alerts[0]["alert"]["signature_id"], 3);

    let engine = records(&dir.join("engine.json"));
    let detect: Vec<(&str, &str)> = engine
        .iter()
        .filter(|r| {
            r["event_type"] == "engine" && r["engine"]["module"].as_str().is_some_and(|m| m.starts_with("detect"))
        })
        .map(|r| (r["engine"]["module"].as_str().unwrap(), r["engine"]["message"].as_str().unwrap()))
        .collect();
    assert_eq!(detect.len(), 6, "{detect:#?}");
    assert_eq!(detect[0], ("detect-content", "Invalid hex code in content - |l0 01|, hex l. Invalidating signature."));
    assert_eq!(detect[1].0, "detect");
    assert!(
        detect[1].1.starts_with(
            "error parsing signature \"alert tcp any any -> any any (content:\"|l0 01|\"; sid:1;)\" from file"
        ),
        "{}",
        detect[1].1
    );
    assert!(detect[1].1.ends_with("at line 1"));
    assert_eq!(detect[2], ("detect-within", "can't use multiple withins for the same content."));
    assert!(detect[3].1.ends_with("at line 2"));
    assert_eq!(
        detect[4],
        ("detect", "1 rule files processed. 1 rules successfully loaded, 2 rules failed, 0 rules skipped")
    );
    // Then what kinds of signatures the engine was built from, as Suricata says it.
    assert_eq!(
        detect[5],
        (
            "detect",
            "1 signatures processed. 0 are IP-only rules, 1 are inspecting packet payload, 0 inspect application layer, 0 are decoder event only"
        )
    );
    for r in &engine {
        assert!(r["timestamp"].is_string() && r["log_level"].is_string(), "{r}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_fatal_rule_error_is_logged_before_the_run_stops() {
    let (dir, opts) = setup("fatal");
    let opts = RunOptions { init_errors_fatal: true, ..opts };
    assert!(vigil_engine::setup(&opts).is_err());
    let engine = records(&dir.join("engine.json"));
    let last = engine.last().unwrap();
    assert_eq!(
        (&last["engine"]["module"], &last["engine"]["message"]),
        (&"suricata".into(), &"Loading signatures failed.".into())
    );
    // The load summary comes before it, as in Suricata 8.0.6.
    assert!(engine.iter().any(|r| r["engine"]["message"].as_str().is_some_and(|m| m.contains("rule files processed"))));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn replace_rules_load_with_a_warning_and_two_anomaly_logs_are_refused() {
    let (dir, opts) = setup("replace");
    std::fs::write(
        dir.join("test.rules"),
        "alert tcp any any -> any any (content:\"hello\"; replace:\"HELLO\"; sid:7;)\n",
    )
    .unwrap();
    let s = vigil_engine::setup(&opts).unwrap();
    assert!(s.warnings.iter().any(|w| w.contains("1 rule(s) use replace (sid 7)")), "{:?}", s.warnings);
    let yaml = "outputs:\n  - eve-log:\n      enabled: yes\n      filename: a.json\n      types: [anomaly]\n  - eve-log:\n      enabled: yes\n      filename: b.json\n      types: [anomaly]\n";
    std::fs::write(dir.join("vigil.yaml"), yaml).unwrap();
    let err = vigil_engine::setup(&opts).expect_err("refused").to_string();
    assert!(err.contains("only one 'anomaly' logger can be enabled"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
