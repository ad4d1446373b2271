//! The three shared rulesets, loaded whole with Suricata's default
//! variables. Counts are printed (`cargo test -p vigil-rules --test
//! rulesets -- --nocapture`) and pinned.
//!
//! ET Open is valid Suricata 8 syntax: it must load with no error except
//! duplicate sids. The remaining class, justified:
//! - 31 duplicates: `emerging-info.rules` and `emerging-web_specific_apps.rules`
//!   come from a 2024 snapshot, the other files from 2025; ET moved 33
//!   rules between categories in between, 31 of them enabled in both
//!   copies (SOURCES.md counts 25,803 unique enabled rules: 25,834 - 31).
//!   Suricata keeps one rule per gid:sid as well.
//!
//! Snort 3 community rules are mostly not Suricata syntax; every error must
//! be of the Snort kind (a construct Suricata does not have, with the
//! reason), never a parser failure: inline content modifiers, `http_*` as
//! sticky buffers, `service`, header-less rules, Snort-only keywords and
//! Snort 3 option values (`http_header:field user-agent`). Snort 2.9
//! community rules load whole.

use std::collections::BTreeMap;
use vigil_rules::{ErrorKind, Loader, NoEngine, RuleSet};

fn files(dir: &str) -> Vec<String> {
    let root = format!("{}/../../../shared/rules/{dir}", env!("CARGO_MANIFEST_DIR"));
    let mut v: Vec<String> = std::fs::read_dir(root)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "rules"))
        .map(|p| p.display().to_string())
        .collect();
    v.sort();
    v
}

/// Loads, prints the counts and error classes, returns the set.
fn load(name: &str, dir: &str) -> RuleSet {
    let set = Loader::new().load_files(&files(dir)).unwrap();
    let t = set.totals();
    println!(
        "{name}: rules {} enabled {} disabled {} failed {} loaded(parsed) {}",
        t.rules,
        t.enabled,
        t.disabled,
        t.failed,
        set.rules.len()
    );
    let mut classes: BTreeMap<(String, String), (usize, String)> = BTreeMap::new();
    for e in &set.errors {
        let key = (e.kind.as_str().to_string(), e.keyword.clone().unwrap_or_default());
        classes.entry(key).or_insert((0, e.to_string())).0 += 1;
    }
    for ((kind, kw), (n, example)) in &classes {
        println!("  {n:5} {kind} {kw}: {example}");
    }
    let cap = set.capability(&NoEngine);
    println!("  with NoEngine: loaded {} unsupported {}", cap.loaded, cap.unsupported);
    set
}

#[test]
fn et_open_has_no_errors_but_duplicate_sids() {
    let set = load("ET Open", "et-open");
    let t = set.totals();
    assert_eq!((t.rules, t.enabled, t.disabled), (37_272, 25_834, 11_438));
    let not_dup: Vec<String> =
        set.errors.iter().filter(|e| e.kind != ErrorKind::Duplicate).map(|e| e.to_string()).collect();
    assert!(not_dup.is_empty(), "{not_dup:#?}");
    // Two of the 31 duplicates carry a higher rev and replace the rule
    // they repeat, as in Suricata.
    assert_eq!(set.errors.len(), 29);
    assert_eq!(set.rules.len(), 25_803);
    // Every commented-out ET rule is recognised as a rule; two of them
    // would fail if enabled.
    assert_eq!(set.disabled.len(), 11_436);
    let dis: Vec<String> = set.disabled_errors.iter().map(|e| e.to_string()).collect();
    assert_eq!(dis.len(), 2, "{dis:#?}");
    // A deleted rule's regex PCRE2 refuses (`\x` without digits), as
    // Suricata's would.
    assert!(dis[0].contains("emerging-deleted.rules:3461:266: pcre: invalid regex: PCRE2:"), "{}", dis[0]);
    assert!(
        dis[1].ends_with("emerging-exploit_kit.rules:3037:185: endswith: given twice for the same content"),
        "{}",
        dis[1]
    );
    let cap = set.capability(&NoEngine);
    assert_eq!((cap.loaded, cap.unsupported), (0, 25_803));
}

#[test]
fn snort3_errors_are_all_snort_constructs() {
    let set = load("Snort 3 community", "snort3-community");
    let t = set.totals();
    assert_eq!((t.rules, t.enabled, t.disabled), (4_017, 4_017, 0));
    let other: Vec<String> = set.errors.iter().filter(|e| e.kind != ErrorKind::Snort).map(|e| e.to_string()).collect();
    assert!(other.is_empty(), "{other:#?}");
    assert_eq!(set.rules.len() + set.errors.len(), 4_017);
    assert!(set.rules.len() > 200, "plain rules load: {}", set.rules.len());
}

#[test]
fn snort2_community_loads_whole() {
    let set = load("Snort 2.9 community", "snort2-community");
    let t = set.totals();
    assert_eq!((t.rules, t.enabled, t.disabled, t.failed), (4_013, 561, 3_452, 0));
    assert_eq!(set.rules.len(), 561);
}
