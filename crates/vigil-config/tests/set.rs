//! `--set key=value` and `--include FILE`, with Suricata's indexes.

use vigil_config::{Config, ConfigTree, RawSections, DEFAULT_YAML};

const STOCK: &str = "/work/shared/reference/suricata-8.0/suricata.yaml";

fn stock() -> Option<ConfigTree> {
    if std::path::Path::new(STOCK).exists() {
        Some(ConfigTree::load_file(STOCK).unwrap())
    } else {
        eprintln!("skipped: {STOCK} not present");
        None
    }
}

fn typed(tree: &ConfigTree) -> Config {
    let (mut c, errors, _) = Config::from_tree(tree);
    assert!(errors.is_empty(), "{errors:#?}");
    c.raw = RawSections::default();
    c
}

/// Lines of `after.dump()` that are not in `before.dump()`, and vice versa.
fn dump_diff(before: &ConfigTree, after: &ConfigTree) -> (Vec<String>, Vec<String>) {
    let b: Vec<String> = before.dump().lines().map(String::from).collect();
    let a: Vec<String> = after.dump().lines().map(String::from).collect();
    let added = a.iter().filter(|l| !b.contains(l)).cloned().collect();
    let removed = b.iter().filter(|l| !a.contains(l)).cloned().collect();
    (added, removed)
}

#[test]
fn anomaly_stream_by_index_changes_exactly_that() {
    let Some(before) = stock() else { return };
    // In stock, outputs.1 is eve-log and its types.2 is anomaly.
    assert_eq!(before.get_str("outputs.1"), Some("eve-log"));
    assert_eq!(before.get_str("outputs.1.eve-log.types.2"), Some("anomaly"));
    let mut after = before.clone();
    after.set_from_arg("outputs.1.eve-log.types.2.anomaly.types.stream=yes").unwrap();

    let (added, removed) = dump_diff(&before, &after);
    assert_eq!(added, ["outputs.1.eve-log.types.2.anomaly.types.stream = yes"]);
    assert!(removed.is_empty(), "{removed:?}");

    let mut expected = typed(&before);
    expected.outputs.eve_log[0].types.anomaly.as_mut().unwrap().stream = true;
    assert_eq!(typed(&after), expected);
}

#[test]
fn stream_inline_is_overridden() {
    let Some(mut tree) = stock() else { return };
    assert_eq!(tree.get_str("stream.inline"), Some("auto"));
    tree.set_from_arg("stream.inline=true").unwrap();
    assert_eq!(tree.get_str("stream.inline"), Some("true"));
    assert_eq!(tree.get_bool("stream.inline").unwrap(), Some(true));
    let (c, _, _) = Config::from_tree(&tree);
    let stream = c.raw.stream.unwrap();
    assert_eq!(stream.child_value("inline"), Some("true"));
    // Its siblings are untouched.
    assert_eq!(stream.child_value("memcap"), Some("64 MiB"));
}

#[test]
fn vxlan_can_be_disabled() {
    let Some(mut tree) = stock() else { return };
    let mut expected = typed(&tree);
    tree.set_from_arg("decoder.vxlan.enabled=false").unwrap();
    expected.decoder.vxlan.enabled = false;
    assert_eq!(typed(&tree), expected);
}

#[test]
fn set_creates_new_keys() {
    let mut tree = ConfigTree::parse_str(DEFAULT_YAML, "default.yaml").unwrap();
    tree.set_from_arg("brand-new.section.key = some value").unwrap();
    assert_eq!(tree.get_str("brand-new.section.key"), Some("some value"));
    let (_, _, ignored) = Config::from_tree(&tree);
    assert_eq!(ignored, ["brand-new"]);

    // A key under an existing null node (anomaly's `types:` in stock).
    let mut tree = ConfigTree::parse_str(
        "outputs:\n  - eve-log:\n      enabled: yes\n      types:\n        - anomaly:\n            types:\n",
        "t.yaml",
    )
    .unwrap();
    tree.set("outputs.0.eve-log.types.0.anomaly.types.decode", "yes").unwrap();
    let (c, errors, _) = Config::from_tree(&tree);
    assert!(errors.is_empty());
    assert!(c.outputs.eve_log[0].types.anomaly.as_ref().unwrap().decode);
}

#[test]
fn set_can_append_a_list_item() {
    let mut tree = ConfigTree::parse_str(DEFAULT_YAML, "default.yaml").unwrap();
    let n = tree.get("outputs").unwrap().children().len();
    tree.set(&format!("outputs.{n}.fast.enabled"), "yes").unwrap();
    tree.set(&format!("outputs.{n}.fast.filename"), "second.log").unwrap();
    assert_eq!(tree.get_str(&format!("outputs.{n}")), Some("fast"));
    let (c, errors, _) = Config::from_tree(&tree);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(c.outputs.fast.len(), 2);
    assert_eq!(c.outputs.fast[1].filename, "second.log");
}

#[test]
fn set_values_are_checked_when_typed() {
    let mut tree = ConfigTree::parse_str(DEFAULT_YAML, "default.yaml").unwrap();
    tree.set_from_arg("stats.interval=ten").unwrap();
    let (c, errors, _) = Config::from_tree(&tree);
    assert_eq!(c.stats.interval, 8);
    assert_eq!(errors[0].to_string(), "--set: stats.interval: expected an integer number of seconds, got \"ten\"");
}

#[test]
fn bad_set_arguments() {
    let mut tree = ConfigTree::new();
    assert!(tree.set_from_arg("no-equals-sign").is_err());
    assert!(tree.set_from_arg("a..b=1").is_err());
    assert!(tree.set_from_arg("=1").is_err());
}

#[test]
fn include_files_override_and_set_wins_last() {
    let dir = std::env::temp_dir().join(format!("vigil-config-set-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let main = dir.join("suricata.yaml");
    std::fs::write(
        &main,
        "%YAML 1.1\n---\nstats:\n  interval: 8\n  enabled: yes\noutputs:\n  - fast:\n      enabled: yes\n",
    )
    .unwrap();
    std::fs::write(dir.join("extra.yaml"), "%YAML 1.1\n---\nstats:\n  interval: 30\n").unwrap();
    let tree = ConfigTree::load_with(&main, &["extra.yaml"], &["stats.enabled=no"]).unwrap();
    // The included `stats` replaced the whole earlier `stats` map.
    assert_eq!(tree.get_str("stats.interval"), Some("30"));
    assert_eq!(tree.get_str("stats.enabled"), Some("no"));
    assert_eq!(tree.get_str("outputs.0"), Some("fast"));
    std::fs::remove_dir_all(&dir).unwrap();
}
