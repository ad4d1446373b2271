//! Every EVE record vigil writes is valid against Suricata's own EVE schema.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
}

fn validator() -> jsonschema::Validator {
    let text = std::fs::read_to_string(shared().join("reference/suricata-8.0/schema.json")).expect("schema.json");
    let schema: Value = serde_json::from_str(&text).expect("schema parses");
    jsonschema::validator_for(&schema).expect("schema compiles")
}

fn check_eve(dir: &Path, v: &jsonschema::Validator) -> usize {
    let text = std::fs::read_to_string(dir.join("eve.json")).expect("eve.json written");
    let mut n = 0;
    for (i, line) in text.lines().enumerate() {
        let rec: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("line {}: {e}", i + 1));
        let errors: Vec<String> = v.iter_errors(&rec).map(|e| format!("{} at {}", e, e.instance_path())).collect();
        assert!(errors.is_empty(), "line {} of {} is not schema-valid: {errors:?}\n{line}", i + 1, dir.display());
        n += 1;
    }
    n
}

fn tempdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("vigil-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn demo_records_are_schema_valid() {
    let dir = tempdir("demo");
    let st = Command::new(env!("CARGO_BIN_EXE_vigil")).args(["demo", "-q", "-l"]).arg(&dir).status().unwrap();
    assert!(st.success());
    let v = validator();
    let n = check_eve(&dir, &v);
    let text = std::fs::read_to_string(dir.join("eve.json")).unwrap();
    assert!(text.contains("\"event_type\":\"anomaly\"") && text.contains("\"event_type\":\"stats\""));
    assert!(n >= 4);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn anomaly_and_stats_records_on_malformed_captures_are_schema_valid() {
    let v = validator();
    let tests = shared().join("conformance/suricata-verify/tests");
    for rel in [
        "output-eve-anomaly-packethdr/anomaly.pcap",
        "decode-too-many-layers/input.pcap",
        "ipv6-evasion/ipv6-malformed-fragments-23/frag-23.pcap",
        "vxlan-decoder-02/vxlan.pcap",
        "bug-5437-02/input.pcap",
        "eve-flow-vlan-02/input.pcap",
    ] {
        let dir = tempdir("anomaly");
        let st = Command::new(env!("CARGO_BIN_EXE_vigil"))
            .args(["--quiet", "-k", "none", "-l"])
            .arg(&dir)
            .arg("-r")
            .arg(tests.join(rel))
            .args(["--set", "outputs.1.eve-log.types.2.anomaly.types.decode=yes"])
            .args(["--set", "outputs.1.eve-log.types.2.anomaly.packethdr=yes"])
            .args(["--set", "outputs.1.eve-log.ethernet=yes"])
            .status()
            .unwrap();
        assert!(st.success(), "{rel}");
        check_eve(&dir, &v);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
