//! `vigil bench capacity` end to end: a 7-step rate sweep on a veth pair in
//! namespaces the command creates (skipped, with the reason, where this
//! machine cannot make them). Rates are low and steps short: this checks
//! the harness and its accounting, not the machine's capacity.

#![cfg(target_os = "linux")]

use serde_json::Value;
use std::process::{Command, Stdio};

#[test]
fn a_seven_step_sweep_accounts_for_every_frame() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: the capacity sweep needs root to create network namespaces");
        return;
    }
    let dir = std::env::temp_dir().join(format!("vigil-capacity-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let child = Command::new(env!("CARGO_BIN_EXE_vigil"))
        .args(["bench", "capacity", "--rates", "1,2,4,8,16,32,64", "--duration", "0.5", "-o"])
        .arg(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The sweep names its namespaces after its process.
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && stderr.contains("ip netns add") {
        eprintln!("skipped: cannot create network namespaces: {stderr}");
        return;
    }
    assert!(out.status.success(), "{stderr}");
    let steps: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("capacity.json")).unwrap()).unwrap();
    let steps = steps.as_array().unwrap();
    assert_eq!(steps.len(), 7);
    for s in steps {
        let n = |k: &str| s[k].as_u64().unwrap();
        assert!(n("sent") > 0, "{s}");
        assert!(n("received") <= n("sent"), "the capture saw only what was sent: {s}");
        assert!(n("inspected") <= n("received"), "{s}");
        assert!(n("dropped") >= n("sent") - n("received"), "{s}");
    }
    // At 1 Mbit/s nothing is lost, even in a debug build.
    assert_eq!(steps[0]["dropped"], 0, "{}", steps[0]);
    assert_eq!(steps[0]["received"], steps[0]["sent"]);
    // The generated traffic carries ground-truth markers: some alerted.
    assert!(steps.iter().any(|s| s["alerts"].as_u64().unwrap() > 0));
    for f in ["capacity.txt", "capacity.csv", "drop.svg", "cpu.svg", "drop.png", "cpu.png", "capacity.html"] {
        assert!(dir.join(f).exists(), "{f}");
    }
    // One engine: one line (and its legend sample) in the first colour, no second.
    let svg = std::fs::read_to_string(dir.join("drop.svg")).unwrap();
    assert_eq!(svg.matches(r##"stroke="#1F77B4" stroke-width="2""##).count(), 2, "{svg}");
    assert!(!svg.contains("#D62728"), "{svg}");
    assert!(std::fs::read(dir.join("drop.png")).unwrap().starts_with(b"\x89PNG\r\n"));
    // Nothing is left behind.
    let ns = Command::new("ip").args(["netns", "list"]).output().unwrap();
    let ns = String::from_utf8_lossy(&ns.stdout);
    assert!(!ns.contains(&format!("vlab-tx-{pid}")) && !ns.contains(&format!("vlab-rx-{pid}")), "left over: {ns}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Another engine is measured only once it says it captures: here vigil
/// itself as a command, slowed by a 2 s sleep before it starts, so a step
/// that did not wait would send into nothing and lose every frame. The
/// self-check's count-only receiver runs too.
#[test]
fn a_command_engine_is_waited_for_until_it_says_it_captures() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: the capacity sweep needs root to create network namespaces");
        return;
    }
    let dir = std::env::temp_dir().join(format!("vigil-capacity-ready-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let vigil = env!("CARGO_BIN_EXE_vigil");
    let engine =
        format!("slow=sh -c 'sleep 2; exec {vigil} -i {{iface}} -l {{logdir}} -k none --quiet --disable-detection'");
    let out = Command::new(vigil)
        .args(["bench", "capacity", "--workers", "1", "--rates", "1,2", "--duration", "0.5", "--warmup", "0.2"])
        .args(["--self-check", "--engine", &engine, "-o"])
        .arg(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && stderr.contains("ip netns add") {
        eprintln!("skipped: cannot create network namespaces: {stderr}");
        return;
    }
    assert!(out.status.success(), "{stderr}");
    let steps: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("capacity.json")).unwrap()).unwrap();
    let steps = steps.as_array().unwrap();
    // The self-check's count-only receiver: every frame, no step limited.
    let harness: Vec<&Value> = steps.iter().filter(|s| s["engine"] == "harness").collect();
    assert_eq!(harness.len(), 2);
    for s in &harness {
        assert!(s["sent"].as_u64().unwrap() > 0, "{s}");
        assert_eq!(s["received"], s["sent"], "{s}");
        assert_eq!(s["inspected"], s["sent"], "the null receiver counts what it reads: {s}");
    }
    assert!(steps.iter().all(|s| s["harness_limited"] == false), "{steps:?}");
    let slow: Vec<&Value> = steps.iter().filter(|s| s["engine"] == "slow").collect();
    assert_eq!(slow.len(), 2);
    for s in slow {
        let startup = s["startup_s"].as_f64().unwrap();
        assert!(startup >= 2.0, "its start-up is measured, sleep included: {s}");
        // Measured from its word, not a fixed grace period (which was 10 s).
        assert!(startup < 9.0, "{s}");
        assert_eq!(s["warmup_s"].as_f64().unwrap(), 0.2);
        assert_eq!(s["dropped"], 0, "nothing sent before it captured: {s}");
        assert_eq!(s["received"], s["sent"], "{s}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
