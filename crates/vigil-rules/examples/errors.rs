//! Loads rule files and prints error classes with counts and examples:
//! `cargo run -p vigil-rules --example errors -- FILE...`.

use std::collections::BTreeMap;
use vigil_rules::Loader;

fn main() {
    let files: Vec<String> = std::env::args().skip(1).collect();
    let t = std::time::Instant::now();
    // EACH=1: every file is its own rule set (test suites reuse sids).
    let set = if std::env::var_os("EACH").is_some() {
        let mut all = vigil_rules::RuleSet::default();
        for f in &files {
            let s = Loader::new().load_files(&[f]).unwrap_or_else(|e| *e.set);
            all.rules.extend(s.rules);
            all.errors.extend(s.errors);
            all.disabled_errors.extend(s.disabled_errors);
            all.files.extend(s.files);
        }
        all
    } else {
        Loader::new().load_files(&files).unwrap_or_else(|e| *e.set)
    };
    let took = t.elapsed();
    let tot = set.totals();
    println!(
        "rules {} enabled {} disabled {} failed {} loaded {} ({:.0?})",
        tot.rules,
        tot.enabled,
        tot.disabled,
        tot.failed,
        set.rules.len(),
        took
    );
    for e in set.disabled_errors.iter().take(20) {
        println!("disabled: {e}");
    }
    let mut classes: BTreeMap<String, (usize, String)> = BTreeMap::new();
    for e in &set.errors {
        let reason: String = e.reason.chars().take(60).collect();
        let key = format!("{} | {} | {}", e.kind.as_str(), e.keyword.as_deref().unwrap_or("-"), reason);
        let ent = classes.entry(key).or_insert((0, e.to_string()));
        ent.0 += 1;
    }
    let mut v: Vec<_> = classes.into_iter().collect();
    v.sort_by_key(|e| std::cmp::Reverse(e.1 .0));
    for (k, (n, ex)) in v.iter().take(80) {
        println!("{n:6} {k}\n       e.g. {}", ex.chars().take(220).collect::<String>());
    }
}
