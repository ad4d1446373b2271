//! The control socket driven by Suricata's own client, `suricatasc` (the
//! 8.0.6 build in the shared reference), in the unix-socket runmode: its
//! command list is a part of Suricata's, files queued with `pcap-file` are
//! read into their output directories, and `shutdown` ends the run.
//! Skipped, and says so, where the reference client is not there.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Suricata 8.0.6's commands, as its `command-list` gives them in the
/// unix-socket runmode and (the last four) live.
const SURICATA: &[&str] = &[
    "shutdown",
    "command-list",
    "help",
    "version",
    "uptime",
    "running-mode",
    "capture-mode",
    "conf-get",
    "dump-counters",
    "reload-rules",
    "ruleset-reload-rules",
    "ruleset-reload-nonblocking",
    "ruleset-reload-time",
    "ruleset-stats",
    "ruleset-failed-rules",
    "register-tenant-handler",
    "unregister-tenant-handler",
    "register-tenant",
    "reload-tenant",
    "reload-tenants",
    "unregister-tenant",
    "add-hostbit",
    "remove-hostbit",
    "list-hostbit",
    "reopen-log-files",
    "memcap-set",
    "memcap-show",
    "memcap-list",
    "dataset-add",
    "dataset-remove",
    "dataset-add-json",
    "get-flow-stats-by-id",
    "dataset-dump",
    "dataset-clear",
    "dataset-lookup",
    "pcap-file",
    "pcap-file-continuous",
    "pcap-file-number",
    "pcap-file-list",
    "pcap-last-processed",
    "pcap-interrupt",
    "pcap-current",
    "iface-stat",
    "iface-list",
    "iface-bypassed-stat",
    "ebpf-bypassed-stat",
];

/// Those vigil does not serve: no tenants or host bits to edit from
/// outside, no JSON datasets, memcaps fixed at start-up, no eBPF.
const NOT_SERVED: &[&str] = &[
    "register-tenant-handler",
    "unregister-tenant-handler",
    "register-tenant",
    "reload-tenant",
    "reload-tenants",
    "unregister-tenant",
    "add-hostbit",
    "remove-hostbit",
    "list-hostbit",
    "memcap-set",
    "dataset-add-json",
    "get-flow-stats-by-id",
    "iface-bypassed-stat",
    "ebpf-bypassed-stat",
];

struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn suricatasc() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/reference/suricata-8.0/bin/suricatasc")
}

/// One command through suricatasc; its JSON reply.
fn ask(socket: &Path, command: &str) -> Value {
    let out = Command::new(suricatasc()).arg("-c").arg(command).arg(socket).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.trim())
        .unwrap_or_else(|e| panic!("{command}: {e}: {text} {}", String::from_utf8_lossy(&out.stderr)))
}

fn wait_for(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn suricatasc_drives_the_unix_socket_runmode() {
    if Command::new(suricatasc()).arg("--help").output().is_err() {
        eprintln!("skipped: the reference suricatasc is not at {}", suricatasc().display());
        return;
    }
    let dir = std::env::temp_dir().join(format!("vigil-suricatasc-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("out")).unwrap();
    let demo = Command::new(env!("CARGO_BIN_EXE_vigil")).args(["demo", "-q", "-l"]).arg(dir.join("demo")).output();
    assert!(demo.unwrap().status.success());
    let rules = dir.join("r.rules");
    let good = std::fs::read_to_string(dir.join("demo/demo.rules")).unwrap();
    let set = "alert dns any any -> any any (dns.query; dataset:isset,seen,type string; sid:98;)";
    std::fs::write(&rules, format!("alert tcp any any -> any any (content:; sid:99;)\n{set}\n{good}")).unwrap();
    let socket = dir.join("s.sock");
    let mut vigil = Running(
        Command::new(env!("CARGO_BIN_EXE_vigil"))
            .arg(format!("--unix-socket={}", socket.display()))
            .arg("-S")
            .arg(&rules)
            .arg("-l")
            .arg(&dir)
            .args(["-k", "none", "--quiet"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_for("the socket", Duration::from_secs(60), || socket.exists());

    let list = ask(&socket, "command-list");
    let names: Vec<&str> =
        list["message"]["commands"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    let expected: Vec<&str> =
        SURICATA.iter().copied().filter(|c| !NOT_SERVED.contains(c) && !c.starts_with("iface-")).collect();
    assert_eq!(names, expected, "Suricata's unix-socket commands, less those vigil does not serve");
    assert_eq!(ask(&socket, "capture-mode")["message"], "UNIX_SOCKET");
    assert!(ask(&socket, "version")["message"].as_str().unwrap().starts_with("8.0.6 RELEASE"));
    let stats = &ask(&socket, "ruleset-stats")["message"][0];
    assert_eq!((stats["rules_failed"].as_u64(), stats["rules_loaded"].as_u64().unwrap() > 0), (Some(1), true));
    let failed = ask(&socket, "ruleset-failed-rules");
    assert_eq!(failed["message"][0]["line"], 1);
    assert_eq!(failed["message"][0]["rule"], "alert tcp any any -> any any (content:; sid:99;)");
    assert_eq!(ask(&socket, "conf-get default-log-dir")["message"], dir.display().to_string());
    assert_eq!(ask(&socket, "memcap-show flow")["message"]["value"], "128mb");
    // A rule's set edited from outside; values as its file writes them (base64 for strings).
    let value = "seen string ZXhhbXBsZS5jb20=";
    assert_eq!(ask(&socket, &format!("dataset-add {value}"))["message"], "data added");
    assert_eq!(ask(&socket, &format!("dataset-add {value}"))["return"], "NOK");
    assert_eq!(ask(&socket, &format!("dataset-lookup {value}"))["message"], "item found in set");
    assert_eq!(ask(&socket, &format!("dataset-remove {value}"))["message"], "data removed");
    assert_eq!(ask(&socket, &format!("dataset-lookup {value}"))["return"], "NOK");
    assert_eq!(ask(&socket, "dataset-lookup nosuch string ZXhhbXBsZS5jb20=")["return"], "NOK");

    let missing = ask(&socket, &format!("pcap-file {} {}", dir.join("none.pcap").display(), dir.display()));
    assert_eq!(missing["message"], "filename does not exist");
    let pcap = dir.join("demo/demo.pcap");
    let added = ask(&socket, &format!("pcap-file {} {}", pcap.display(), dir.join("out").display()));
    assert_eq!(added["message"], "Successfully added file to list");
    wait_for("the file to be read", Duration::from_secs(120), || {
        ask(&socket, "pcap-file-number")["message"] == 0 && ask(&socket, "pcap-current")["message"] == "None"
    });
    assert!(ask(&socket, "pcap-last-processed")["message"].as_u64().unwrap() > 0);
    let eve = std::fs::read_to_string(dir.join("out/eve.json")).unwrap();
    assert!(eve.lines().any(|l| l.contains("\"event_type\":\"alert\"")), "the queued file was inspected");
    assert!(eve.lines().any(|l| l.contains("\"event_type\":\"stats\"")), "and its run ended with its stats");

    assert_eq!(ask(&socket, "shutdown")["return"], "OK");
    let start = Instant::now();
    let status = loop {
        if let Some(s) = vigil.0.try_wait().unwrap() {
            break s;
        }
        assert!(start.elapsed() < Duration::from_secs(30), "vigil did not stop on shutdown");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success());
    assert!(!socket.exists(), "the socket goes with the run");
    std::fs::remove_dir_all(&dir).unwrap();
}
