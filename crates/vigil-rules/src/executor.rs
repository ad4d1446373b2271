//! What the engine can run. A rule counts as loaded only if the engine
//! executes every keyword in it; the [`Executor`] trait is how an engine
//! says so. Until the detection engine exists, [`NoEngine`] runs nothing.

use crate::rule::Rule;
use std::collections::HashMap;
use std::fmt;

/// The keywords of a rule an engine cannot run, in rule order, by their
/// canonical names (`http_uri` reports as `http.uri`). Pseudo-keywords:
/// `<header>` for a rule whose only test is its header, `<firewall>` for
/// Suricata 8 firewall rules.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Unsupported {
    pub keywords: Vec<String>,
    /// What makes the rule wrong rather than beyond the engine, found only
    /// when it is built (a dataset file that does not read): the rule
    /// fails with these, as Suricata's would.
    pub errors: Vec<String>,
}

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the engine cannot run: {}", self.keywords.join(", "))
    }
}

/// An engine's answer to "can you run this rule?".
pub trait Executor {
    /// `Ok` when every keyword of `rule` is executed; otherwise the
    /// keywords that are not.
    fn check(&self, rule: &Rule) -> Result<(), Unsupported>;
}

/// The keywords of `rule` that need an engine, canonical names, deduped,
/// in rule order; `<header>` when none does; `<firewall>` first for
/// firewall rules.
pub fn needs_engine(rule: &Rule) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    if rule.header.is_firewall() {
        out.push("<firewall>".into());
    }
    for o in &rule.options {
        if o.keyword.kind.needs_engine() && !out.iter().any(|k| k == o.keyword.canonical) {
            out.push(o.keyword.canonical.to_string());
        }
    }
    if out.is_empty() {
        out.push("<header>".into());
    }
    out
}

/// The engine that runs nothing: every rule is unsupported.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoEngine;

impl Executor for NoEngine {
    fn check(&self, rule: &Rule) -> Result<(), Unsupported> {
        Err(Unsupported { keywords: needs_engine(rule), errors: Vec::new() })
    }
}

/// How many rules an engine runs, and what keeps the rest from running.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Capability {
    /// Rules the engine runs completely.
    pub loaded: usize,
    /// Rules with at least one keyword the engine cannot run.
    pub unsupported: usize,
    /// For each unsupported keyword, how many rules need it; most first,
    /// then by name.
    pub by_keyword: Vec<(String, usize)>,
}

/// Asks `exec` about each rule.
pub fn capability<'a>(rules: impl IntoIterator<Item = &'a Rule>, exec: &dyn Executor) -> Capability {
    let mut cap = Capability::default();
    let mut counts: HashMap<String, usize> = HashMap::new();
    for r in rules {
        match exec.check(r) {
            Ok(()) => cap.loaded += 1,
            Err(u) => {
                cap.unsupported += 1;
                for k in u.keywords {
                    *counts.entry(k).or_default() += 1;
                }
            }
        }
    }
    cap.by_keyword = counts.into_iter().collect();
    cap.by_keyword.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    cap
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_engine_lists_what_needs_running() {
        let r = Rule::parse(
            r#"alert http any any -> any any (msg:"x"; content:"a"; http_uri; nocase; content:"b"; http_uri; sid:1;)"#,
        )
        .unwrap();
        assert_eq!(NoEngine.check(&r).unwrap_err().keywords, vec!["content", "http.uri", "nocase"]);
        let r = Rule::parse(r#"alert ip any any -> 1.2.3.4 any (msg:"x"; sid:2; rev:1;)"#).unwrap();
        assert_eq!(NoEngine.check(&r).unwrap_err().keywords, vec!["<header>"]);
        let r = Rule::parse("accept:hook tcp:all any any <> any 443 (flow:established; sid:3;)").unwrap();
        assert_eq!(NoEngine.check(&r).unwrap_err().keywords, vec!["<firewall>", "flow"]);
    }

    struct Only(&'static [&'static str]);
    impl Executor for Only {
        fn check(&self, rule: &Rule) -> Result<(), Unsupported> {
            let missing: Vec<String> =
                needs_engine(rule).into_iter().filter(|k| !self.0.contains(&k.as_str())).collect();
            if missing.is_empty() {
                Ok(())
            } else {
                Err(Unsupported { keywords: missing, errors: Vec::new() })
            }
        }
    }

    #[test]
    fn capability_counts() {
        let rules = [
            Rule::parse(r#"alert tcp any any -> any any (content:"a"; sid:1;)"#).unwrap(),
            Rule::parse(r#"alert tcp any any -> any any (content:"a"; pcre:"/a/"; sid:2;)"#).unwrap(),
            Rule::parse(r#"alert tcp any any -> any any (pcre:"/a/"; flowbits:set,x; sid:3;)"#).unwrap(),
        ];
        let c = capability(&rules, &Only(&["content"]));
        assert_eq!(c.loaded, 1);
        assert_eq!(c.unsupported, 2);
        assert_eq!(c.by_keyword, vec![("pcre".to_string(), 2), ("flowbits".to_string(), 1)]);
    }
}
