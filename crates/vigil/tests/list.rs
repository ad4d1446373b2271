//! `--list-keywords` and `--list-app-layer-protos`: Suricata's formats,
//! every Suricata 8 keyword present, and a runs column that agrees with
//! what a rule file really loads as.

use std::process::{Command, Output};

fn vigil(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vigil")).args(args).output().expect("vigil runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn csv_lists_every_suricata_keyword_with_a_runs_column() {
    let out = vigil(&["--list-keywords=csv"]);
    assert!(out.status.success());
    let text = stdout(&out);
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("name;description;app layer;features;documentation;runs in vigil"));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(';').collect()).collect();
    for r in &rows {
        assert_eq!(r.len(), 7, "{r:?}");
        assert!(matches!(r[5], "yes" | "no"), "{r:?}");
    }
    let names: Vec<&str> = rows.iter().map(|r| r[0]).collect();
    for k in vigil_rules::keywords::suricata8::KEYWORDS {
        assert_eq!(names.iter().filter(|n| **n == k.name).count(), 1, "{}", k.name);
    }
    let runs = |name: &str| rows.iter().find(|r| r[0] == name).map(|r| r[5]);
    assert_eq!(runs("content"), Some("yes"));
    assert_eq!(runs("ssh.hassh.server"), Some("yes"));
    assert_eq!(runs("quic.sni"), Some("yes"));
    assert_eq!(runs("http2.header_name"), Some("yes"));
    assert_eq!(runs("http2.frametype"), Some("yes"));
    assert_eq!(runs("asn1"), Some("yes"));
    assert_eq!(runs("geoip"), Some("no"));
}

#[test]
fn one_keyword_all_keywords_and_an_unknown_one() {
    let out = vigil(&["--list-keywords=http.uri"]);
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(text.starts_with("= http.uri =\nDescription: "), "{text}");
    assert!(text.contains("\nDocumentation: https://docs.suricata.io/"), "{text}");
    assert!(text.contains("\nRuns in vigil: yes\n"), "{text}");

    // An alias finds its keyword; a keyword vigil cannot run says why.
    assert!(stdout(&vigil(&["--list-keywords=flags"])).starts_with("= tcp.flags =\n"));
    let text = stdout(&vigil(&["--list-keywords=geoip"]));
    assert!(text.contains("Runs in vigil: no: "), "{text}");

    let out = vigil(&["--list-keywords=nosuchkeyword"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout(&out), "Non existing keyword\n");

    let text = stdout(&vigil(&["--list-keywords=all"]));
    assert!(text.starts_with("sid:\n\tDescription: "), "{}", &text[..80.min(text.len())]);
    let short = stdout(&vigil(&["--list-keywords"]));
    assert!(short.starts_with("=====Supported keywords=====\n- sid\n"), "{}", &short[..80.min(short.len())]);
}

/// The runs column is what loading a rule says: a keyword listed as run
/// loads in a rule, one listed as not run leaves its rule unsupported.
#[test]
fn the_runs_column_agrees_with_rules_check() {
    let dir = std::env::temp_dir().join(format!("vigil-list-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("t.rules");
    std::fs::write(
        &file,
        "alert ssh any any -> any any (ssh.software; content:\"OpenSSH\"; sid:1;)\n\
         alert tcp any any -> any any (geoip:src,US; sid:2;)\n",
    )
    .unwrap();
    let out = vigil(&["rules", "check", "-S", file.to_str().unwrap(), "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json report");
    let text = report.to_string();
    assert!(text.contains("geoip"), "{text}");
    assert!(!text.contains("ssh.software"), "{text}");
    let csv = stdout(&vigil(&["--list-keywords=csv"]));
    assert!(csv.lines().any(|l| l.starts_with("ssh.software;") && l.ends_with(";yes;")));
    assert!(csv.lines().any(|l| l.starts_with("geoip;") && l.ends_with(";no;")));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn app_layer_protocols_in_suricatas_format() {
    let out = vigil(&["--list-app-layer-protos"]);
    assert!(out.status.success());
    let text = stdout(&out);
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("=========Supported App Layer Protocols========="));
    let protos: Vec<&str> = lines.collect();
    for p in ["http", "tls", "ssh", "smb", "dcerpc", "dns"] {
        assert!(protos.contains(&p), "{p}: {protos:?}");
    }
    // Every protocol Suricata 8 lists is parsed now: nothing is said missing.
    for p in ["quic", "http2", "doh2", "telnet", "imap"] {
        assert!(protos.contains(&p), "{p}: {protos:?}");
    }
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

/// `-V` leads with the Suricata release vigil follows (what
/// suricata-update reads), and `--dump-config` prints the configuration a
/// run would use, `--set` included, one `key = value` line per node.
#[test]
fn version_and_dump_config() {
    let v = stdout(&vigil(&["-V"]));
    assert!(v.starts_with("This is Suricata version 8.0.6 compatible (vigil "), "{v}");
    let out = vigil(&["--dump-config", "--set", "vars.address-groups.HOME_NET=[198.18.0.0/15]"]);
    assert!(out.status.success());
    let dump = stdout(&out);
    assert!(dump.lines().any(|l| l == "vars.address-groups.HOME_NET = [198.18.0.0/15]"), "{dump}");
    assert!(dump.lines().any(|l| l == "vars = (null)"));
    let info = stdout(&vigil(&["--build-info"]));
    assert!(info.lines().any(|l| l.trim_start().starts_with("--sysconfdir")), "{info}");
}
