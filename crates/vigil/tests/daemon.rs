//! `-D` and `--pidfile`, as Suricata's units use them: the starting
//! process returns once the background run has written its pid file; the
//! run removes it at its end; a pid file naming a running process is refused.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn capture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/suricata-verify/tests/ssh-hassh/input.pcap")
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("vigil-daemon-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn background_run_with_a_pid_file() {
    let dir = scratch("bg");
    let pidfile = dir.join("vigil.pid");
    let out = Command::new(env!("CARGO_BIN_EXE_vigil"))
        .args(["-D", "--pidfile"])
        .arg(&pidfile)
        .arg("-r")
        .arg(capture())
        .arg("-l")
        .arg(&dir)
        .args(["-k", "none"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // The background run reads the capture, writes its records and removes its pid file.
    let start = Instant::now();
    while pidfile.exists() && start.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!pidfile.exists(), "the pid file outlived the run");
    let eve = std::fs::read_to_string(dir.join("eve.json")).unwrap();
    assert!(eve.contains("\"event_type\":\"flow\""), "{eve}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_pid_file_of_a_running_process_is_refused() {
    let dir = scratch("busy");
    let pidfile = dir.join("vigil.pid");
    // This test's own process is running.
    std::fs::write(&pidfile, format!("{}\n", std::process::id())).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_vigil"))
        .arg("--pidfile")
        .arg(&pidfile)
        .arg("-r")
        .arg(capture())
        .arg("-l")
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("which is running"));
    assert!(pidfile.exists(), "another process's pid file is left alone");
    // A stale one (no such process) is taken over, and removed at the end.
    std::fs::write(&pidfile, "4194305\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_vigil"))
        .arg("--pidfile")
        .arg(&pidfile)
        .arg("-r")
        .arg(capture())
        .arg("-l")
        .arg(&dir)
        .args(["-k", "none", "--quiet"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!pidfile.exists());
    let _ = std::fs::remove_dir_all(&dir);
}
