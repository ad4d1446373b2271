//! `vigil rules check`: counts on ET Open, error lines, `--strict`, `-c`
//! with vars and rule-files, `-S`/`-s` precedence, `--json`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn vigil(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vigil")).args(args).output().expect("vigil runs")
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

fn shared(p: &str) -> String {
    format!("{}/../../../shared/{p}", env!("CARGO_MANIFEST_DIR"))
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("vigil-rules-check-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

#[test]
fn et_open_counts() {
    let dir = shared("rules/et-open");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "rules"))
        .map(|p| p.display().to_string())
        .collect();
    files.sort();
    let mut args = vec!["rules", "check", "--json", "-S"];
    args.extend(files.iter().map(String::as_str));
    let out = vigil(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let j = json(&out);
    let t = &j["totals"];
    assert_eq!(t["rules"], 37_272);
    // Pinned: a change here means the engine runs more (or fewer) rules; update deliberately.
    assert_eq!(t["loaded"], 25_803);
    assert_eq!(t["unsupported"], 0);
    // Duplicate sids with a higher rev replace the older rule: those are not failures.
    assert_eq!(t["failed"], 29);
    assert_eq!(t["disabled"], 11_438);
    assert_eq!(j["errors_by_kind"]["duplicate"], 29);
    assert_eq!(j["errors"].as_array().unwrap().len(), 29);
    // Every keyword of the active rules runs.
    assert!(j["unsupported_keywords"].as_array().is_none_or(|a| a.is_empty()), "{}", j["unsupported_keywords"]);
    // --strict turns the duplicates into a failure.
    args.push("--strict");
    assert_eq!(vigil(&args).status.code(), Some(1));
}

#[test]
fn text_report_lists_each_error_and_strict_fails() {
    let d = scratch("text");
    let f = write(
        &d,
        "local.rules",
        "alert tcp any any -> any any (msg:\"ok\"; content:\"a\"; sid:1;)\n\
         alert tcp any any -> any any (msg:\"bad\"; pcre:\"/a/J\"; sid:2;)\n\
         #alert tcp any any -> any any (msg:\"off\"; sid:3;)\n\
         alert tcp any any -> any any (msg:\"hello\"; geoip:src,US; sid:4;)\n",
    );
    let out = vigil(&["rules", "check", "-S", &f]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("1 rule file(s), 4 rules"), "{text}");
    assert!(text.contains("  loaded             1"), "{text}");
    assert!(text.contains("  unsupported        1"), "{text}");
    assert!(text.contains("  failed             1"), "{text}");
    assert!(text.contains("  disabled           1"), "{text}");
    assert!(text.contains(&format!("  {f}:2:51: pcre: unknown flag 'J'")), "{text}");
    assert!(text.contains("geoip"), "{text}");
    assert_eq!(vigil(&["rules", "check", "-S", &f, "--strict"]).status.code(), Some(1));
    let good = write(&d, "good.rules", "alert tcp any any -> any any (msg:\"ok\"; sid:1;)\n");
    assert_eq!(vigil(&["rules", "check", "-S", &good, "--strict"]).status.code(), Some(0));
}

#[test]
fn config_vars_rule_files_and_precedence() {
    let d = scratch("config");
    write(
        &d,
        "a.rules",
        "alert tcp $MY_NET any -> $HOME_NET $MY_PORTS (msg:\"a\"; classtype:trojan-activity; sid:1;)\n",
    );
    write(&d, "b.rules", "alert tcp any any -> any any (msg:\"b\"; classtype:no-such-class; sid:2;)\n");
    let extra = write(&d, "extra.rules", "alert tcp any any -> any any (msg:\"c\"; sid:3;)\n");
    let yaml = format!(
        "%YAML 1.1\n---\nvars:\n  address-groups:\n    HOME_NET: \"[10.0.0.0/8]\"\n    MY_NET: \"!$HOME_NET\"\n  port-groups:\n    MY_PORTS: \"[80,8080]\"\n\
         default-rule-path: {}\nrule-files:\n  - a.rules\n  - b.rules\nclassification-file: {}\n",
        d.display(),
        shared("reference/suricata-8.0/classification.config")
    );
    let cfg = write(&d, "suricata.yaml", &yaml);
    // Config rule-files plus -s.
    let j = json(&vigil(&["rules", "check", "-c", &cfg, "-s", &extra, "--json"]));
    assert_eq!(j["totals"]["rules"], 3);
    assert_eq!(j["totals"]["loaded"], 2);
    assert_eq!(j["totals"]["unsupported"], 0);
    assert_eq!(j["totals"]["failed"], 1);
    let e = &j["errors"][0];
    assert_eq!(e["keyword"], "classtype");
    assert_eq!(e["reason"], "unknown classtype 'no-such-class'");
    assert_eq!(e["kind"], "semantic");
    assert_eq!(e["sid"], 2);
    // -S replaces the configured files; the config's vars still apply.
    let only = write(&d, "only.rules", "alert tcp $MY_NET any -> any $MY_PORTS (msg:\"d\"; sid:4;)\n");
    let j = json(&vigil(&["rules", "check", "-c", &cfg, "-S", &only, "--json"]));
    assert_eq!(j["totals"]["rules"], 1);
    assert_eq!(j["totals"]["failed"], 0);
    // Without the config, $MY_NET is not defined.
    let j = json(&vigil(&["rules", "check", "-S", &only, "--json"]));
    assert_eq!(j["errors"][0]["reason"], "source address: undefined variable $MY_NET");
}

#[test]
fn no_rule_files_is_a_usage_error() {
    let out = vigil(&["rules", "check"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no rule files"));
}
