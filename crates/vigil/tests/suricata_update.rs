//! suricata-update, unmodified (1.3.3 from PyPI, in a virtual environment
//! of its own), driving vigil as its engine: it reads vigil's version and
//! build info, its configuration through `--dump-config`, fetches ET Open
//! from a local server (the shared copy, packed as ET ships it), writes the
//! merged rules and tests them with `vigil -T`. Skipped, and says so, where
//! Python or PyPI is not reachable.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
}

#[test]
fn suricata_update_runs_vigil_end_to_end() {
    let dir = std::env::temp_dir().join(format!("vigil-suricata-update-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("www/rules")).unwrap();
    let venv = dir.join("venv");
    let ok = |c: &mut Command| c.stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success());
    if !ok(Command::new("python3").args(["-m", "venv"]).arg(&venv)) {
        eprintln!("skipped: python3 -m venv is not available");
        return;
    }
    let pip = venv.join("bin/pip");
    // Bounded: a machine without PyPI skips in seconds, not minutes.
    let install = ["install", "-q", "--timeout", "10", "--retries", "1", "suricata-update==1.3.3", "pyyaml"];
    if !ok(Command::new(&pip).args(install)) {
        eprintln!("skipped: suricata-update 1.3.3 could not be installed from PyPI");
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    // ET Open as its server ships it: a tarball of rules/*.rules.
    for e in std::fs::read_dir(shared().join("rules/et-open")).unwrap().flatten() {
        if e.path().extension().is_some_and(|x| x == "rules") {
            std::fs::copy(e.path(), dir.join("www/rules").join(e.file_name())).unwrap();
        }
    }
    assert!(ok(Command::new("tar").current_dir(dir.join("www")).args(["czf", "emerging.rules.tar.gz", "rules"])));
    // Port 0: the system picks a free one, which the server's first line names.
    let mut child = Command::new(venv.join("bin/python"))
        .args(["-u", "-m", "http.server", "0", "--bind", "127.0.0.1"])
        .current_dir(dir.join("www"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.take().unwrap()), &mut first).unwrap();
    let _server = Server(child);
    let port: u16 = first
        .split_whitespace()
        .skip_while(|w| *w != "port")
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {first:?}"));
    std::fs::create_dir_all(dir.join("out")).unwrap();
    let out = Command::new(venv.join("bin/suricata-update"))
        .arg("-D")
        .arg(dir.join("data"))
        .arg("--suricata")
        .arg(env!("CARGO_BIN_EXE_vigil"))
        .arg("--suricata-conf")
        .arg(shared().join("reference/suricata-8.0/suricata.yaml"))
        .args(["--url", &format!("http://127.0.0.1:{port}/emerging.rules.tar.gz"), "--no-reload", "-o"])
        .arg(dir.join("out"))
        .output()
        .unwrap();
    let log = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let rules = std::fs::read_to_string(dir.join("out/suricata.rules")).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "{log}");
    assert!(log.contains("Found Suricata version 8.0.6"), "{log}");
    assert!(log.contains("Testing with suricata -T") && log.contains("configuration OK"), "{log}");
    assert!(rules.lines().filter(|l| l.starts_with("alert ")).count() > 20_000, "{} rules", rules.lines().count());
}
