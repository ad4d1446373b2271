//! The raw tree follows Suricata's loader rules.

use vigil_config::ConfigTree;

fn parse(yaml: &str) -> ConfigTree {
    ConfigTree::parse_str(yaml, "t.yaml").unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn sequences_and_item_maps() {
    let t = parse(
        "%YAML 1.1\n---\nrule-files:\n  - a.rules\n  - b.rules\noutputs:\n  - fast:\n      enabled: yes\n  - eve-log:\n      enabled: no\n      types:\n        - alert:\n            payload: yes\n        - flow\n        - dns:\n",
    );
    assert_eq!(t.get_str("rule-files.0"), Some("a.rules"));
    assert_eq!(t.get_str("rule-files.1"), Some("b.rules"));
    assert!(t.get("rule-files").unwrap().is_sequence());
    // An item map's value is its first key, and the map is its child.
    assert_eq!(t.get_str("outputs.1"), Some("eve-log"));
    assert_eq!(t.get_str("outputs.1.eve-log.enabled"), Some("no"));
    assert_eq!(t.get_str("outputs.1.eve-log.types.0"), Some("alert"));
    assert_eq!(t.get_str("outputs.1.eve-log.types.0.alert.payload"), Some("yes"));
    assert_eq!(t.get_str("outputs.1.eve-log.types.1"), Some("flow"));
    assert_eq!(t.get_str("outputs.1.eve-log.types.2"), Some("dns"));
    assert!(t.get("outputs.1.eve-log.types.2.dns").is_some());
    // Finding items by name.
    let eve = t.find_item("outputs", "eve-log").unwrap();
    assert_eq!(eve.child_value("enabled"), Some("no"));
    let types = eve.child("types").unwrap();
    assert!(types.find_item("flow").is_none());
    assert_eq!(types.find_item_node("flow").unwrap().name(), "1");
    assert!(types.find_item("alert").is_some());
}

#[test]
fn find_item_by_key_value() {
    let t = parse("af-packet:\n  - interface: eth0\n    threads: 2\n  - interface: default\n    threads: auto\n");
    let af = t.get("af-packet").unwrap();
    assert_eq!(af.find_item_by("interface", "default").unwrap().child_value("threads"), Some("auto"));
    // The first key is also the item's value, as in Suricata.
    assert_eq!(af.children()[0].value(), Some("interface"));
}

#[test]
fn later_keys_replace_earlier_subtrees() {
    let t = parse(
        "some-log-dir: /var/log\nsome-log-dir: /tmp\nparent:\n  child0:\n    key: value\nparent:\n  child1:\n    key: value\n",
    );
    assert_eq!(t.get_str("some-log-dir"), Some("/tmp"));
    assert!(t.get("parent.child0").is_none());
    assert_eq!(t.get_str("parent.child1.key"), Some("value"));
    // The replaced key keeps its place among its siblings.
    let names: Vec<_> = t.children().iter().map(|c| c.name()).collect();
    assert_eq!(names, ["some-log-dir", "parent"]);
}

#[test]
fn dotted_keys_reach_into_existing_nodes() {
    let t = parse(
        "vars:\n  address-groups:\n    HOME_NET: \"[192.168.0.0/16]\"\n    EXTERNAL_NET: any\nvars.address-groups.HOME_NET: \"10.10.10.10/32\"\n",
    );
    assert_eq!(t.get_str("vars.address-groups.HOME_NET"), Some("10.10.10.10/32"));
    assert_eq!(t.get_str("vars.address-groups.EXTERNAL_NET"), Some("any"));
    assert_eq!(t.get("vars.address-groups").unwrap().children().len(), 2);
}

#[test]
fn underscores_become_dashes_except_in_variables() {
    let t = parse("stream:\n  checksum_validation: no\nvars:\n  port-groups:\n    HTTP_PORTS: 80\n");
    assert_eq!(t.get_str("stream.checksum-validation"), Some("no"));
    assert!(t.get("stream.checksum_validation").is_none());
    assert_eq!(t.get_str("vars.port-groups.HTTP_PORTS"), Some("80"));
    assert_eq!(t.warnings().len(), 1);
    assert!(t.warnings()[0].to_string().starts_with("t.yaml:2:3: checksum_validation: deprecated"));
}

#[test]
fn nulls_follow_yaml_but_only_unquoted() {
    let t = parse(
        "quoted-tilde: \"~\"\nunquoted-tilde: ~\nquoted-null: \"null\"\nunquoted-null: null\nunquoted-Null: Null\nunquoted-NULL: NULL\nempty-quoted: \"\"\nempty-unquoted:\nlist: [\"null\", null, \"~\", ~]\n",
    );
    assert_eq!(t.get_str("quoted-tilde"), Some("~"));
    assert_eq!(t.get_str("quoted-null"), Some("null"));
    assert_eq!(t.get_str("empty-quoted"), Some(""));
    for k in ["unquoted-tilde", "unquoted-null", "unquoted-Null", "unquoted-NULL", "empty-unquoted"] {
        assert!(t.get(k).is_some(), "{k} exists");
        assert_eq!(t.get_str(k), None, "{k} is null");
    }
    assert_eq!(t.get_str("list.0"), Some("null"));
    assert_eq!(t.get_str("list.1"), None);
    assert_eq!(t.get_str("list.2"), Some("~"));
    assert_eq!(t.get_str("list.3"), None);
}

#[test]
fn values_are_strings_as_written() {
    let t = parse("a: 010\nb: 1.0\nc: yes\nd: 0x10\ne: 1e3\n");
    assert_eq!(t.get_str("a"), Some("010"));
    assert_eq!(t.get_int("a").unwrap(), Some(8));
    assert_eq!(t.get_str("b"), Some("1.0"));
    assert_eq!(t.get_bool("c").unwrap(), Some(true));
    assert_eq!(t.get_int("d").unwrap(), Some(16));
    assert_eq!(t.get_float("e").unwrap(), Some(1000.0));
    assert_eq!(t.get_int("missing").unwrap(), None);
}

#[test]
fn sizes_and_times() {
    let t = parse("stream:\n  memcap: 64mb\n  depth: 1 MiB\n  small: 32kb\nflow:\n  memcap: 1gb\n  timeout: 5m\n");
    assert_eq!(t.get_size("stream.memcap").unwrap(), Some(64 << 20));
    assert_eq!(t.get_size("stream.depth").unwrap(), Some(1 << 20));
    assert_eq!(t.get_size("stream.small").unwrap(), Some(32 << 10));
    assert_eq!(t.get_size("flow.memcap").unwrap(), Some(1 << 30));
    assert_eq!(t.get_time("flow.timeout").unwrap(), Some(std::time::Duration::from_secs(300)));
    let err = t.get_size("flow.timeout").unwrap_err();
    assert_eq!(err.key.as_deref(), Some("flow.timeout"));
}

#[test]
fn positions_are_recorded() {
    let t = parse("%YAML 1.1\n---\nstats:\n  interval: 8\n");
    let n = t.get("stats.interval").unwrap();
    assert_eq!((n.position().line, n.position().column), (4, 3));
    assert_eq!((n.value_position().line, n.value_position().column), (4, 13));
    assert_eq!(&*n.position().file, "t.yaml");
}

#[test]
fn documents_merge_and_yaml_version_is_checked() {
    let t = parse("a: 1\n---\nb: 2\n");
    assert_eq!(t.get_str("a"), Some("1"));
    assert_eq!(t.get_str("b"), Some("2"));
    let err = ConfigTree::parse_str("%YAML 1.2\n---\na: 1\n", "v.yaml").unwrap_err();
    assert!(err.to_string().contains("must be 1.1"), "{err}");
    assert!(ConfigTree::parse_str("", "empty.yaml").unwrap().children().is_empty());
    assert!(ConfigTree::parse_str("# only a comment\n", "c.yaml").unwrap().children().is_empty());
}

#[test]
fn top_level_must_be_a_map() {
    for text in ["- a\n- b\n", "just a scalar\n"] {
        let err = ConfigTree::parse_str(text, "t.yaml").unwrap_err();
        assert!(err.reason.contains("must be a mapping"), "{err}");
    }
}

#[test]
fn dump_matches_suricata_dump_config_style() {
    let t = parse("a:\n  b: 1\n  c: [x, y]\n");
    assert_eq!(t.dump(), "a = (null)\na.b = 1\na.c = (null)\na.c.0 = x\na.c.1 = y\n");
}

#[test]
fn byte_order_mark_and_crlf() {
    let t = parse("\u{feff}%YAML 1.1\r\n---\r\nstats:\r\n  interval: 9\r\n");
    assert_eq!(t.get_str("stats.interval"), Some("9"));
    assert_eq!(t.get("stats.interval").unwrap().position().line, 4);
}
