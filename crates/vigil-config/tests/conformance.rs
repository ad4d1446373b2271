//! Every suricata-verify configuration and the stock file load, with
//! includes resolved, and type without errors.

use std::path::{Path, PathBuf};
use vigil_config::{Config, ConfigTree};

const STOCK: &str = "/work/shared/reference/suricata-8.0/suricata.yaml";
const VERIFY_TESTS: &str = "/work/shared/conformance/suricata-verify/tests";

fn find_configs(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            find_configs(&p, out);
        } else if p.file_name().is_some_and(|n| n == "suricata.yaml") {
            out.push(p);
        }
    }
}

#[test]
fn stock_config_loads_and_types_cleanly() {
    if !Path::new(STOCK).exists() {
        eprintln!("skipped: {STOCK} not present");
        return;
    }
    let tree = ConfigTree::load_file(STOCK).expect("stock suricata.yaml loads");
    let (config, errors, ignored) = Config::from_tree(&tree);
    assert!(errors.is_empty(), "{errors:#?}");
    assert!(!ignored.contains(&"logging".to_string()));
    // The stock file logs to suricata.log, as plain lines, at info.
    assert_eq!(config.logging.files.len(), 1);
    assert_eq!(config.logging.files[0].filename, "suricata.log");
    assert!(!config.logging.files[0].json);
    assert!(!ignored.contains(&"outputs".to_string()));
}

#[test]
fn every_conformance_config_loads() {
    let mut configs = Vec::new();
    find_configs(Path::new(VERIFY_TESTS), &mut configs);
    if configs.is_empty() {
        eprintln!("skipped: no suricata.yaml under {VERIFY_TESTS}");
        return;
    }
    let mut failures = Vec::new();
    let mut typed_errors = Vec::new();
    let mut distinct = std::collections::HashSet::new();
    for path in &configs {
        if let Ok(bytes) = std::fs::read(path) {
            distinct.insert(bytes);
        }
        match ConfigTree::load_file(path) {
            Ok(tree) => {
                let (_, errors, _) = Config::from_tree(&tree);
                // A test that expects Suricata to fail (its config, or its rules) may have a config error.
                let fails = std::fs::read_to_string(path.with_file_name("test.yaml"))
                    .is_ok_and(|t| t.lines().any(|l| l.trim() == "exit-code: 1"));
                if !fails {
                    typed_errors.extend(errors.into_iter().map(|e| e.to_string()));
                }
            }
            Err(e) => failures.push(e.to_string()),
        }
    }
    println!(
        "loaded {} of {} conformance suricata.yaml files ({} distinct); {} typed errors",
        configs.len() - failures.len(),
        configs.len(),
        distinct.len(),
        typed_errors.len()
    );
    for e in &typed_errors {
        println!("  typed: {e}");
    }
    assert!(failures.is_empty(), "load failures:\n{}", failures.join("\n"));
    assert!(typed_errors.is_empty(), "typed errors:\n{}", typed_errors.join("\n"));
}

#[test]
fn includes_resolve_like_suricata() {
    let path = Path::new(VERIFY_TESTS).join("config-includes/suricata.yaml");
    if !path.exists() {
        eprintln!("skipped: {} not present", path.display());
        return;
    }
    // The checks of suricata-verify's config-includes test, on --dump-config.
    let tree = ConfigTree::load_file(&path).unwrap();
    let dump = tree.dump();
    assert!(dump.contains("vars.address-groups.HOME_NET = 10.10.10.10/32\n"), "{dump}");
    assert!(!dump.contains("vars.address-groups.HOME-NET"));
    assert!(dump.contains("vars.port-groups.FTP_PORTS = [21,2121]\n"));
    assert!(!dump.contains("FTP-PORTS"));
    assert!(dump.contains("vars.port-groups.DEV_SERVER_PORTS = [3000,4200]\n"));
    assert_eq!(tree.files().len(), 2);
}

#[test]
fn include_of_an_old_full_config_then_override() {
    let path = Path::new(VERIFY_TESTS).join("eve-alert-metadata-off/suricata.yaml");
    if !path.exists() {
        eprintln!("skipped: {} not present", path.display());
        return;
    }
    let tree = ConfigTree::load_file(&path).unwrap();
    assert!(tree.files()[1].ends_with("etc/suricata-4.0.3.yaml"));
    // The included file's outputs were replaced by the test's own.
    let (config, errors, _) = Config::from_tree(&tree);
    assert!(errors.is_empty(), "{errors:?}");
    let eve = &config.outputs.eve_log[0];
    assert!(eve.enabled);
    assert!(!eve.types.alert.as_ref().unwrap().metadata.app_layer);
}
