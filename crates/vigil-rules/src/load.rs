//! Loading rule files into a [`RuleSet`]: every good rule, every problem as
//! a [`RuleError`], never stopping at a bad rule.
//!
//! Per rule: parse, check, resolve header variables, check `classtype` and
//! `reference` against the support files (when given), then reject a
//! gid:sid pair seen before, unless the new rule has a higher `rev`: it then
//! replaces the older one, as in Suricata.

use crate::address::{AddrExpr, AddressSet};
use crate::classification::{Classifications, References};
use crate::error::{ErrorKind, RuleError};
use crate::executor::{capability, Capability, Executor};
use crate::keywords::dataset::DatasetRules;
use crate::options::Value;
use crate::port::{PortExpr, PortSet};
use crate::rule::{Resolved, Rule};
use crate::span::Span;
use crate::vars::Vars;
use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::sync::Arc;

/// Rule files larger than this are refused as a whole (a rule file is a
/// few megabytes; this guards against pointing the loader at a disk image).
pub const MAX_FILE_SIZE: u64 = 256 << 20;

/// Counts for one file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileStats {
    pub file: String,
    /// Rules in the file: enabled plus disabled.
    pub rules: usize,
    /// Rules not commented out.
    pub enabled: usize,
    /// Commented-out rules (`#alert ...`).
    pub disabled: usize,
    /// Enabled rules with an error.
    pub failed: usize,
    /// Enabled rules whose `requires` this engine does not meet: neither
    /// loaded nor failed (Suricata's `rules_skipped`).
    pub skipped: usize,
}

/// What loading produced.
#[derive(Clone, Debug, Default)]
pub struct RuleSet {
    /// Enabled rules without errors, in load order, variables resolved.
    pub rules: Vec<Rule>,
    /// Commented-out rules that parse (not loaded).
    pub disabled: Vec<Rule>,
    /// One error per failed rule (and per unreadable file).
    pub errors: Vec<RuleError>,
    /// Errors of commented-out rules: what would fail if they were
    /// enabled. Not counted as failures.
    pub disabled_errors: Vec<RuleError>,
    /// Per-file counts, in load order.
    pub files: Vec<FileStats>,
    /// What loading noted that is worth a line of the log, not an error
    /// (a dataset file an absolute path names, where that is allowed).
    pub notices: Vec<String>,
}

impl RuleSet {
    /// Total counts over all files.
    pub fn totals(&self) -> FileStats {
        let mut t = FileStats { file: "total".into(), ..FileStats::default() };
        for f in &self.files {
            t.rules += f.rules;
            t.enabled += f.enabled;
            t.disabled += f.disabled;
            t.failed += f.failed;
            t.skipped += f.skipped;
        }
        t
    }

    /// What `exec` can run of the good rules.
    pub fn capability(&self, exec: &dyn Executor) -> Capability {
        capability(&self.rules, exec)
    }
}

/// Loading in strict mode found errors. The set is complete anyway.
#[derive(Debug)]
pub struct StrictError {
    pub set: Box<RuleSet>,
}

impl fmt::Display for StrictError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} rule error(s)", self.set.errors.len())?;
        if let Some(e) = self.set.errors.first() {
            write!(f, "; first: {e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for StrictError {}

/// Loads rule files.
///
/// ```
/// use vigil_rules::Loader;
/// let set = Loader::new()
///     .load_str("alert tcp $HOME_NET any -> any 80 (msg:\"x\"; content:\"GET\"; sid:1;)\n", "local.rules")
///     .unwrap();
/// assert_eq!(set.rules.len(), 1);
/// ```
#[derive(Clone, Debug)]
pub struct Loader {
    vars: Vars,
    classifications: Option<Classifications>,
    references: Option<References>,
    strict: bool,
    datasets: DatasetRules,
}

impl Default for Loader {
    fn default() -> Self {
        Loader::new()
    }
}

struct Seen {
    file: Arc<str>,
    line: u32,
    rev: u32,
    index: usize,
}

struct State {
    set: RuleSet,
    /// gid:sid → where the rule was defined, its rev, its index in `set.rules`.
    seen: HashMap<(u32, u32), Seen>,
    addr_cache: HashMap<AddrExpr, Result<Arc<AddressSet>, String>>,
    port_cache: HashMap<PortExpr, Result<Arc<PortSet>, String>>,
}

impl Loader {
    /// A loader with Suricata's default variables and no support files.
    pub fn new() -> Loader {
        Loader {
            vars: Vars::suricata_default(),
            classifications: None,
            references: None,
            strict: false,
            datasets: DatasetRules::default(),
        }
    }

    /// Resolve header variables against `vars`.
    pub fn vars(mut self, vars: Vars) -> Loader {
        self.vars = vars;
        self
    }

    /// Check each `classtype` against these classtypes.
    pub fn classifications(mut self, c: Classifications) -> Loader {
        self.classifications = Some(c);
        self
    }

    /// Check each `reference` system against these.
    pub fn references(mut self, r: References) -> Loader {
        self.references = Some(r);
        self
    }

    /// Where `dataset` rules may write their sets (`datasets.rules`).
    pub fn datasets(mut self, rules: DatasetRules) -> Loader {
        self.datasets = rules;
        self
    }

    /// Turn any error into a failed load ([`StrictError`]).
    pub fn strict(mut self, strict: bool) -> Loader {
        self.strict = strict;
        self
    }

    fn state() -> State {
        State { set: RuleSet::default(), seen: HashMap::new(), addr_cache: HashMap::new(), port_cache: HashMap::new() }
    }

    fn finish(&self, st: State) -> Result<RuleSet, StrictError> {
        if self.strict && !st.set.errors.is_empty() {
            return Err(StrictError { set: Box::new(st.set) });
        }
        Ok(st.set)
    }

    /// Loads the files in order. An unreadable file is an error of the set.
    pub fn load_files<P: AsRef<Path>>(&self, paths: &[P]) -> Result<RuleSet, StrictError> {
        let mut st = Self::state();
        for p in paths {
            let p = p.as_ref();
            let name = p.display().to_string();
            let text = match std::fs::metadata(p) {
                Ok(m) if m.len() > MAX_FILE_SIZE => Err(format!("file is larger than {MAX_FILE_SIZE} bytes")),
                Ok(_) => std::fs::read(p).map_err(|e| e.to_string()),
                Err(e) => Err(e.to_string()),
            };
            match text {
                Ok(bytes) => {
                    let text = String::from_utf8_lossy(&bytes);
                    self.load_into(&mut st, &text, &name);
                }
                Err(e) => {
                    let file: Arc<str> = Arc::from(name.as_str());
                    st.set.errors.push(RuleError::at(
                        &file,
                        Span::NONE,
                        ErrorKind::Io,
                        None,
                        format!("cannot read: {e}"),
                    ));
                    st.set.files.push(FileStats { file: name, ..FileStats::default() });
                }
            }
        }
        self.finish(st)
    }

    /// Loads rules from a string, as if read from `file_name`.
    pub fn load_str(&self, text: &str, file_name: &str) -> Result<RuleSet, StrictError> {
        let mut st = Self::state();
        self.load_into(&mut st, text, file_name);
        self.finish(st)
    }

    fn load_into(&self, st: &mut State, text: &str, name: &str) {
        let file: Arc<str> = Arc::from(name);
        let mut stats = FileStats { file: name.to_string(), ..FileStats::default() };
        for raw in crate::lexer::raw_rules(text) {
            if !raw.disabled {
                // `requires` decides before the rest of the rule is read.
                match crate::requires::prescan(&raw.text) {
                    Some(Ok(Some(_))) => {
                        stats.rules += 1;
                        stats.enabled += 1;
                        stats.skipped += 1;
                        continue;
                    }
                    Some(Err(msg)) => {
                        stats.rules += 1;
                        stats.enabled += 1;
                        stats.failed += 1;
                        let span = raw.map.span(0, raw.text.len());
                        st.set.errors.push(RuleError::at(&file, span, ErrorKind::Semantic, Some("requires"), msg));
                        continue;
                    }
                    _ => {}
                }
            }
            let (parsed, disabled) = (crate::rule::parse_raw(&raw, &file), raw.disabled);
            // Commented-out prose is not a rule.
            if disabled && matches!(&parsed, Err(e) if e.kind == ErrorKind::Syntax) {
                continue;
            }
            stats.rules += 1;
            if disabled {
                stats.disabled += 1;
                match parsed {
                    Ok(r) => st.set.disabled.push(r),
                    Err(e) => st.set.disabled_errors.push(e),
                }
                continue;
            }
            stats.enabled += 1;
            let checked = parsed.and_then(|r| self.finish_rule(st, r, &file));
            match checked {
                Ok((r, Some(older))) => st.set.rules[older] = r,
                Ok((r, None)) => st.set.rules.push(r),
                Err(e) => {
                    stats.failed += 1;
                    st.set.errors.push(e);
                }
            }
        }
        st.set.files.push(stats);
    }

    /// The checked rule, and the index of the older rule (same gid:sid,
    /// lower rev) it replaces.
    fn finish_rule(&self, st: &mut State, mut rule: Rule, file: &Arc<str>) -> Result<(Rule, Option<usize>), RuleError> {
        let sid = rule.sid();
        let fail = |span: Span, kind: ErrorKind, kw: Option<&str>, msg: String| {
            let mut e = RuleError::at(file, span, kind, kw, msg);
            e.sid = Some(sid);
            e
        };
        if let Some(e) = &rule.header.endpoints {
            let vars = &self.vars;
            let addr = |cache: &mut HashMap<AddrExpr, Result<Arc<AddressSet>, String>>, x: &AddrExpr| {
                cache.entry(x.clone()).or_insert_with(|| vars.resolve_address(x).map(Arc::new).map_err(|e| e.0)).clone()
            };
            let port = |cache: &mut HashMap<PortExpr, Result<Arc<PortSet>, String>>, x: &PortExpr| {
                cache.entry(x.clone()).or_insert_with(|| vars.resolve_port(x).map(Arc::new).map_err(|e| e.0)).clone()
            };
            let what = ["source address", "source port", "destination address", "destination port"];
            let src = addr(&mut st.addr_cache, &e.src);
            let sp = port(&mut st.port_cache, &e.src_port);
            let dst = addr(&mut st.addr_cache, &e.dst);
            let dp = port(&mut st.port_cache, &e.dst_port);
            let spans = [e.spans[0], e.spans[1], e.spans[3], e.spans[4]];
            let errs = [src.as_ref().err(), sp.as_ref().err(), dst.as_ref().err(), dp.as_ref().err()];
            if let Some(i) = errs.iter().position(Option::is_some) {
                let msg = format!("{}: {}", what[i], errs[i].map_or("", |s| s.as_str()));
                return Err(fail(spans[i], ErrorKind::Variable, None, msg));
            }
            if let (Ok(src), Ok(src_port), Ok(dst), Ok(dst_port)) = (src, sp, dst, dp) {
                let negated = vars.address_negated(&e.src) || vars.address_negated(&e.dst);
                rule.resolved = Some(Resolved { src, src_port, dst, dst_port, negated });
            }
        }
        for o in &rule.options {
            match (&o.value, o.keyword.name) {
                (Value::Text(ct), "classtype") => {
                    if let Some(c) = &self.classifications {
                        if c.get(ct).is_none() {
                            return Err(fail(
                                o.span,
                                ErrorKind::Semantic,
                                Some("classtype"),
                                format!("unknown classtype '{ct}'"),
                            ));
                        }
                    }
                }
                (Value::Dataset(d), kw) => match self.datasets.check(d) {
                    Ok(notices) => st.set.notices.extend(notices),
                    Err(msg) => return Err(fail(o.span, ErrorKind::Semantic, Some(kw), msg)),
                },
                (Value::Reference(r), _) => {
                    if let Some(refs) = &self.references {
                        if refs.url(&r.system).is_none() {
                            let msg = format!("unknown reference system '{}'", r.system);
                            return Err(fail(o.span, ErrorKind::Semantic, Some("reference"), msg));
                        }
                    }
                }
                _ => {}
            }
        }
        let key = (rule.gid(), sid);
        let rev = rule.rev();
        let replaces = match st.seen.get(&key) {
            // An update of the rule loaded with the older ruleset.
            Some(old) if rev > old.rev => Some(old.index),
            Some(old) => {
                let span = rule.option("sid").map_or(rule.span, |o| o.span);
                let msg = format!("duplicate sid {sid} (gid {}): first defined at {}:{}", key.0, old.file, old.line);
                return Err(fail(span, ErrorKind::Duplicate, Some("sid"), msg));
            }
            None => None,
        };
        let index = replaces.unwrap_or(st.set.rules.len());
        st.seen.insert(key, Seen { file: file.clone(), line: rule.span.line, rev, index });
        Ok((rule, replaces))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unmet_requires_skip_a_rule_before_it_is_parsed() {
        let text = "alert vxlan any any -> any any (requires: version >= 10; sid:1;)
alert tcp any any -> any any (requires: version >= 8, keyword sid; sid:2;)
alert tcp any any -> any any (requires: foo bar; sid:3;)
alert tcp any any -> any any (requires: version >= x; sid:4;)
";
        let set = Loader::new().load_str(text, "t.rules").unwrap();
        assert_eq!(set.rules.iter().map(|r| r.sid()).collect::<Vec<_>>(), [2]);
        let t = set.totals();
        assert_eq!((t.rules, t.enabled, t.skipped, t.failed), (4, 4, 2, 1));
        assert_eq!(set.errors[0].keyword.as_deref(), Some("requires"));
    }

    #[test]
    fn good_bad_disabled_duplicate() {
        let text = "alert tcp any any -> any any (msg:\"a\"; sid:1;)\n\
                    #alert tcp any any -> any any (msg:\"b\"; sid:2;)\n\
                    alert tcp any any -> any any (msg:\"c\"; nosuch; sid:3;)\n\
                    alert tcp any any -> any any (msg:\"d\"; sid:1;)\n\
                    alert tcp $NOPE any -> any any (msg:\"e\"; sid:5;)\n";
        let set = Loader::new().load_str(text, "t.rules").unwrap();
        assert_eq!(set.rules.len(), 1);
        assert_eq!(set.disabled.len(), 1);
        let msgs: Vec<String> = set.errors.iter().map(|e| e.to_string()).collect();
        assert_eq!(
            msgs,
            vec![
                "t.rules:3:40: nosuch: unknown keyword",
                "t.rules:4:40: sid: duplicate sid 1 (gid 1): first defined at t.rules:1",
                "t.rules:5:11: source address: undefined variable $NOPE",
            ]
        );
        assert_eq!(
            set.totals(),
            FileStats { file: "total".into(), rules: 5, enabled: 4, disabled: 1, failed: 3, skipped: 0 }
        );
        assert!(Loader::new().strict(true).load_str(text, "t.rules").is_err());
    }

    #[test]
    fn a_higher_rev_replaces_the_rule() {
        let text = "alert tcp any any -> any any (msg:\"old\"; sid:7; rev:1;)\n\
                    alert tcp any any -> any any (msg:\"other\"; sid:8;)\n\
                    alert tcp any any -> any any (msg:\"new\"; sid:7; rev:2;)\n\
                    alert tcp any any -> any any (msg:\"stale\"; sid:7; rev:2;)\n";
        let set = Loader::new().load_str(text, "t.rules").unwrap();
        let loaded: Vec<(u32, u32)> = set.rules.iter().map(|r| (r.sid(), r.rev())).collect();
        assert_eq!(loaded, [(7, 2), (8, 0)]);
        let msgs: Vec<String> = set.errors.iter().map(|e| e.to_string()).collect();
        assert_eq!(msgs, ["t.rules:4:44: sid: duplicate sid 7 (gid 1): first defined at t.rules:3"]);
    }

    #[test]
    fn resolved_sets_are_shared() {
        let text = "alert tcp $HOME_NET any -> $EXTERNAL_NET 80 (sid:1;)\nalert tcp $HOME_NET any -> $EXTERNAL_NET 80 (sid:2;)\n";
        let set = Loader::new().load_str(text, "t.rules").unwrap();
        let a = set.rules[0].resolved.as_ref().unwrap();
        let b = set.rules[1].resolved.as_ref().unwrap();
        assert!(Arc::ptr_eq(&a.src, &b.src));
        assert!(a.dst.contains("8.8.8.8".parse().unwrap()));
    }

    #[test]
    fn unreadable_file_is_an_error_not_an_abort() {
        let set = Loader::new().load_files(&["/nonexistent/x.rules"]).unwrap();
        assert_eq!(set.errors.len(), 1);
        assert_eq!(set.errors[0].kind, ErrorKind::Io);
    }
}
