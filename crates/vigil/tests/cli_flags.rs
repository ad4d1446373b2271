//! Suricata's command-line habits through the binary: `-v` levels,
//! `--list-runmodes`, `--data-dir`, `--pcap`, `--reject-dev` on files, a
//! BPF filter after the options.

use std::process::{Command, Output};

fn vigil(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vigil")).args(args).output().expect("vigil runs")
}

fn capture() -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/conformance/suricata-verify/tests/ssh-hassh/input.pcap");
    p.display().to_string()
}

#[test]
fn each_v_shows_a_level_more() {
    let dir = std::env::temp_dir().join(format!("vigil-cli-flags-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let d = dir.to_str().unwrap();
    let cap = capture();
    let stderr = |extra: &[&str]| {
        let mut args = vec!["-r", cap.as_str(), "-l", d, "-k", "none", "--quiet"];
        args.extend_from_slice(extra);
        let out = vigil(&args);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let quiet = stderr(&[]);
    assert!(!quiet.contains("Info:"), "{quiet}");
    let info = stderr(&["-v"]);
    assert!(info.contains("vigil: Info: runmodes: runmode single"), "{info}");
    assert!(!info.contains("Config:"), "{info}");
    let config = stderr(&["-vvv"]);
    assert!(config.contains("vigil: Config: config: configuration: vigil's built-in defaults"), "{config}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn list_runmodes_and_data_dir() {
    let out = vigil(&["--list-runmodes"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(text.lines().nth(1).is_some_and(|l| l.starts_with("| RunMode Type      | Custom Mode")), "{text}");
    assert!(text.contains("| UNIX_SOCKET"));
    let out = vigil(&["--data-dir", "/nonexistent/vigil-data", "-r", "x.pcap"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--data-dir /nonexistent/vigil-data: not a directory"));
}

#[test]
fn pcap_takes_the_pcap_sections_interfaces_and_reject_dev_on_files_is_said() {
    let dir = std::env::temp_dir().join(format!("vigil-cli-pcap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let d = dir.to_str().unwrap();
    // Neither --pcap=IFACE nor a pcap section: refused as a usage error.
    let bare = dir.join("bare.yaml");
    std::fs::write(&bare, "%YAML 1.1\n---\nvars:\n  address-groups:\n    HOME_NET: any\n").unwrap();
    let out = vigil(&["--pcap", "-c", bare.to_str().unwrap(), "-l", d]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--pcap: no interface given and none in the pcap section"));
    // The section's interfaces, less its `default` entry, captured through AF_PACKET
    // (the interface does not exist, so the run then fails).
    let listed = dir.join("listed.yaml");
    std::fs::write(
        &listed,
        "%YAML 1.1\n---\npcap:\n  - interface: vigil-none0\n  - interface: default\n    checksum-checks: auto\n",
    )
    .unwrap();
    let out = vigil(&["--pcap", "-c", listed.to_str().unwrap(), "-l", d]);
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("--pcap: vigil captures through AF_PACKET, not libpcap (vigil-none0)\n"), "{said}");
    let cap = capture();
    let out = vigil(&["-r", &cap, "-l", d, "-k", "none", "--reject-dev", "vigil-none0"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("--reject-dev vigil-none0: reading files, no refusal is sent"), "{said}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_filter_after_the_options_is_the_bpf_filter() {
    if vigil_capture::compile_bpf("udp", 1).is_err() {
        eprintln!("skipped: libpcap (which compiles filters) is not installed");
        return;
    }
    let dir = std::env::temp_dir().join(format!("vigil-cli-bpf-{}", std::process::id()));
    let cap = capture();
    // `decoder.pkts` of the run's final stats record: only the frames the filter keeps.
    let kept = |filter: &[&str]| {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut args = vec!["-r", cap.as_str(), "-l", dir.to_str().unwrap(), "-k", "none", "--quiet"];
        args.extend_from_slice(filter);
        let out = vigil(&args);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let eve = std::fs::read_to_string(dir.join("eve.json")).unwrap();
        let last: serde_json::Value = serde_json::from_str(eve.lines().last().unwrap()).unwrap();
        last["stats"]["decoder"]["pkts"].as_u64().unwrap()
    };
    let all = kept(&[]);
    let words = kept(&["tcp", "port", "22"]);
    assert!(words > 0 && words < all, "{words} of {all}");
    assert_eq!(kept(&["tcp port 22"]), words, "one quoted word or several");
    assert_eq!(kept(&["-f", "tcp port 22"]), words, "the same as -f");
    let out = vigil(&["-r", &cap, "-l", dir.to_str().unwrap(), "-f", "port 22", "port", "23"]);
    assert_eq!(out.status.code(), Some(2), "two filters are refused");
    std::fs::remove_dir_all(&dir).unwrap();
}
