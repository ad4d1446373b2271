//! `vigil gen` and `vigil bench offline` from the command line.

use std::path::PathBuf;
use std::process::Command;

fn vigil() -> Command {
    Command::new(env!("CARGO_BIN_EXE_vigil"))
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vigil-lab-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn gen_writes_the_same_capture_twice_with_rules_and_truth() {
    let dir = scratch("gen");
    let args = ["--seed", "5", "--flows", "40", "--ip", "mix", "--size", "uniform:64-3000", "--malicious", "25", "-q"];
    for name in ["a.pcap", "b.pcap"] {
        let st = vigil().arg("gen").arg("-o").arg(dir.join(name)).args(args).status().unwrap();
        assert!(st.success());
    }
    assert_eq!(std::fs::read(dir.join("a.pcap")).unwrap(), std::fs::read(dir.join("b.pcap")).unwrap());
    let rules = std::fs::read_to_string(dir.join("a.rules")).unwrap();
    assert_eq!(rules.matches("sid:900000").count(), 3);
    let truth: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("a.truth.json")).unwrap()).unwrap();
    assert!(truth["malicious_packets"].as_u64().unwrap() > 0);

    // The truth is what vigil alerts on.
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let st = vigil()
        .arg("-r")
        .arg(dir.join("a.pcap"))
        .arg("-S")
        .arg(dir.join("a.rules"))
        .args(["-k", "none", "--quiet", "-l"])
        .arg(&logs)
        .status()
        .unwrap();
    assert!(st.success());
    let alerts = std::fs::read_to_string(logs.join("eve.json")).unwrap().matches("\"event_type\":\"alert\"").count();
    assert_eq!(alerts as u64, truth["malicious_packets"].as_u64().unwrap());
}

#[test]
fn gen_refuses_bad_options() {
    let dir = scratch("bad");
    for bad in [["--mtu", "100"], ["--size", "fixed:1"], ["--encap", "mpls"], ["--malicious", "150"]] {
        let out = vigil().arg("gen").arg("-o").arg(dir.join("x.pcap")).args(bad).output().unwrap();
        assert!(!out.status.success(), "{bad:?}");
    }
}

#[test]
fn bench_offline_prints_a_table_or_json() {
    let dir = scratch("bench");
    let pcap = dir.join("in.pcap");
    assert!(vigil()
        .arg("gen")
        .arg("-o")
        .arg(&pcap)
        .args(["--flows", "30", "--malicious", "30", "-q"])
        .status()
        .unwrap()
        .success());
    let out = vigil()
        .args(["bench", "offline", "--repeat", "1", "-k", "none", "--json", "-r"])
        .arg(&pcap)
        .arg("-S")
        .arg(dir.join("in.rules"))
        .arg("-l")
        .arg(dir.join("logs"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let truth: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("in.truth.json")).unwrap()).unwrap();
    assert_eq!(v["alerts_per_pass"], truth["malicious_packets"]);
    assert!(v["stage_split"]["decode_cpu_secs"].is_number());
    let out = vigil()
        .args(["bench", "offline", "--repeat", "1", "--no-split", "-r"])
        .arg(&pcap)
        .arg("-l")
        .arg(dir.join("logs"))
        .output()
        .unwrap();
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("per CPU-sec") && !table.contains("stage split"), "{table}");
}
