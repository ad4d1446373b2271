//! Stats counter names against Suricata's own: the reference Suricata 8.0.6
//! and vigil read the same capture with the same (stock) configuration, and
//! the names in their last EVE stats records are compared. Counters of
//! features vigil does not have are set apart, each group with its reason;
//! of the rest, vigil must write at least 95%. Skipped, and says so, where
//! the reference binary cannot run.

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
}

/// Name prefixes of counters for features vigil does not have.
const ABSENT: &[(&str, &str)] = &[
    ("app_layer.flow.dcerpc_udp", "DCE/RPC is detected over TCP only"),
    ("app_layer.tx.dcerpc_udp", "DCE/RPC is detected over TCP only"),
    ("app_layer.error.dcerpc_udp.", "DCE/RPC is detected over TCP only"),
    ("app_layer.tx.dcerpc_tcp", "DCE/RPC and SMB are detected, without transactions"),
    ("app_layer.tx.smb", "DCE/RPC and SMB are detected, without transactions"),
    ("app_layer.expectations", "FTP data channels are expected, but the gauge of those waiting is not written yet"),
    ("detect.lua.", "no Lua"),
    ("ftp.", "FTP is bounded by line length and transaction count, not by a memcap of its own"),
    ("decoder.event.nsh.", "no NSH decoder"),
    ("decoder.event.vntag.", "no VN-Tag decoder"),
    ("decoder.event.afpacket.", "a capture method's own event"),
    ("decoder.max_mac_addrs_", "no MAC address sets per flow"),
    ("flow.wrk.", "Suricata's flow manager, recycler and spare pools: vigil's workers own their flows"),
    ("flow.mgr.flows_evicted_needs_work", "Suricata's flow manager hand-over"),
    ("flow.mgr.rows_per_sec", "Suricata's flow manager pacing"),
    ("flow.recycler.", "Suricata's flow recycler thread"),
    ("flow.get_used_eval", "Suricata's spare-flow reuse"),
    ("flow.get_used_failed", "Suricata's spare-flow reuse"),
    ("tcp.segment_from_", "Suricata's segment pools"),
    ("tcp.ssn_from_", "Suricata's session pools"),
    ("defrag.mgr.", "Suricata's defrag manager thread"),
    ("flow.elephant", "no elephant-flow marking"),
    ("flow_bypassed.pkts", "capture bypass (eBPF): vigil bypasses in software"),
    ("flow_bypassed.bytes", "capture bypass (eBPF): vigil bypasses in software"),
    ("flow_bypassed.local_capture_", "capture bypass (eBPF): vigil bypasses in software"),
];

/// Every counter name of the last stats record of an EVE file.
fn names(eve: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(eve).unwrap_or_else(|e| panic!("{}: {e}", eve.display()));
    let last = text.lines().rev().find(|l| l.contains("\"event_type\":\"stats\"")).expect("a stats record");
    let rec: Value = serde_json::from_str(last).unwrap();
    let mut out = BTreeSet::new();
    fn walk(prefix: &str, v: &Value, out: &mut BTreeSet<String>) {
        match v.as_object() {
            Some(map) => {
                for (k, x) in map {
                    let name = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                    walk(&name, x, out);
                }
            }
            None => {
                out.insert(prefix.to_string());
            }
        }
    }
    walk("", &rec["stats"], &mut out);
    out
}

/// The application-layer protocols vigil parses, as it lists them.
fn vigil_protocols() -> Vec<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_vigil")).arg("--list-app-layer-protos").output().unwrap();
    String::from_utf8_lossy(&out.stdout).lines().skip(1).map(str::to_string).collect()
}

/// Whether a counter belongs to a protocol vigil does not parse.
fn other_protocol(name: &str, ours: &[String]) -> bool {
    let parts: Vec<&str> = name.split('.').collect();
    if parts.len() < 3 || parts[0] != "app_layer" || !matches!(parts[1], "flow" | "tx" | "error") {
        return false;
    }
    let proto = parts[2];
    let base = proto.strip_suffix("_tcp").or_else(|| proto.strip_suffix("_udp")).unwrap_or(proto);
    !matches!(base, "failed") && !ours.iter().any(|p| p == proto || p == base)
}

#[test]
fn counter_names_match_suricatas_for_the_features_vigil_has() {
    let reference = shared().join("reference/suricata-8.0");
    let capture = shared().join("conformance/suricata-verify/tests/ssh-hassh/input.pcap");
    let dir = std::env::temp_dir().join(format!("vigil-counter-parity-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("suricata")).unwrap();
    std::fs::create_dir_all(dir.join("vigil")).unwrap();
    let empty = dir.join("none.rules");
    std::fs::write(&empty, "").unwrap();
    let config = reference.join("suricata.yaml");
    let ran = Command::new(reference.join("suricata"))
        .current_dir(&reference)
        .args(["--runmode", "single", "-k", "none", "-c"])
        .arg(&config)
        .arg("-r")
        .arg(&capture)
        .arg("-S")
        .arg(&empty)
        .arg("-l")
        .arg(dir.join("suricata"))
        .output();
    if !ran.as_ref().is_ok_and(|o| o.status.success()) || !dir.join("suricata/eve.json").exists() {
        eprintln!("skipped: the reference Suricata did not run at {}", reference.display());
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    let out = Command::new(env!("CARGO_BIN_EXE_vigil"))
        .args(["--runmode", "single", "-k", "none", "--quiet", "-c"])
        .arg(&config)
        .arg("-r")
        .arg(&capture)
        .arg("-S")
        .arg(&empty)
        .arg("-l")
        .arg(dir.join("vigil"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    let suricata = names(&dir.join("suricata/eve.json"));
    let vigil = names(&dir.join("vigil/eve.json"));
    let ours = vigil_protocols();
    let have: Vec<&String> = suricata
        .iter()
        .filter(|n| !other_protocol(n, &ours) && !ABSENT.iter().any(|(p, _)| n.starts_with(p)))
        .collect();
    let missing: Vec<&&String> = have.iter().filter(|n| !vigil.contains(n.as_str())).collect();
    let written = have.len() - missing.len();
    let share = written as f64 / have.len() as f64;
    eprintln!(
        "{written} of Suricata's {} counters for vigil's features ({:.1}%), {} in all; missing: {missing:?}",
        have.len(),
        share * 100.0,
        suricata.len()
    );
    assert!(have.len() > 200, "the comparison covers the usual counters: {}", have.len());
    assert!(share >= 0.95, "{:.1}% of the counters; missing: {missing:?}", share * 100.0);
    std::fs::remove_dir_all(&dir).unwrap();
}
