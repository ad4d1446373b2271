//! `vigil rules check`: load rule files as the engine would and say exactly
//! what runs: rules loaded, rules that parse but use keywords the engine
//! cannot run (and which keywords), rules with errors (each one, with
//! file:line:column), and disabled rules.
//!
//! Which files: `-S` alone, or the config's `rule-files` (under
//! `default-rule-path`) plus `-s`, as in Suricata. Variables come from the
//! config's `vars`, or Suricata's defaults without `-c`. The config's
//! classification, reference and threshold files are checked too.

use crate::cli::RulesCheckArgs;
use serde_json::json;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use vigil_rules::{Classifications, FileStats, Loader, References, RuleError, RuleSet, ThresholdConfig, Vars};

/// What to load, worked out from the arguments and the config.
struct Plan {
    files: Vec<PathBuf>,
    vars: Vars,
    classifications: Option<Classifications>,
    references: Option<References>,
    support_errors: Vec<RuleError>,
    warnings: Vec<String>,
}

/// The outcome, ready to print.
struct Report {
    set: RuleSet,
    totals: FileStats,
    loaded: usize,
    unsupported: usize,
    by_keyword: Vec<(String, usize)>,
    support_errors: Vec<RuleError>,
    warnings: Vec<String>,
}

impl Report {
    fn has_errors(&self) -> bool {
        !self.set.errors.is_empty() || !self.support_errors.is_empty()
    }
}

pub fn run(args: &RulesCheckArgs) -> ExitCode {
    let plan = match plan(args) {
        Ok(p) => p,
        Err((code, msg)) => {
            eprintln!("vigil: {msg}");
            return code;
        }
    };
    let report = check(plan);
    let text = if args.json {
        serde_json::to_string_pretty(&to_json(&report)).unwrap_or_default() + "\n"
    } else {
        for w in &report.warnings {
            eprintln!("vigil: warning: {w}");
        }
        to_text(&report)
    };
    // A closed pipe (`| head`) is not an error worth a panic.
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    if args.strict && report.has_errors() {
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

fn read_support<T>(
    path: Option<&str>,
    what: &str,
    parse: fn(&str, &str) -> (T, Vec<RuleError>),
    plan: &mut Plan,
) -> Option<T> {
    let path = path?;
    match std::fs::read(path) {
        Ok(bytes) => {
            let (v, errs) = parse(&String::from_utf8_lossy(&bytes), path);
            plan.support_errors.extend(errs);
            Some(v)
        }
        Err(e) => {
            plan.warnings.push(format!("cannot read {what} {path}: {e}; not checking against it"));
            None
        }
    }
}

fn plan(args: &RulesCheckArgs) -> Result<Plan, (ExitCode, String)> {
    let mut plan = Plan {
        files: Vec::new(),
        vars: Vars::suricata_default(),
        classifications: None,
        references: None,
        support_errors: Vec::new(),
        warnings: Vec::new(),
    };
    let mut configured = Vec::new();
    if let Some(path) = &args.config {
        let tree = vigil_config::ConfigTree::load_file(path).map_err(|e| (ExitCode::FAILURE, e.to_string()))?;
        let (config, errors, _ignored) = vigil_config::Config::from_tree(&tree);
        plan.warnings.extend(errors.iter().map(|e| e.to_string()));
        plan.vars = Vars::new(&config.vars.address_groups, &config.vars.port_groups);
        let base = config.rules.default_rule_path.as_deref().map(Path::new);
        for f in &config.rules.rule_files {
            let p = Path::new(f);
            configured.push(match base {
                Some(b) if p.is_relative() => b.join(p),
                _ => p.to_path_buf(),
            });
        }
        plan.classifications = read_support(
            config.rules.classification_file.as_deref(),
            "classification file",
            Classifications::parse,
            &mut plan,
        );
        plan.references =
            read_support(config.rules.reference_config_file.as_deref(), "reference file", References::parse, &mut plan);
        let _: Option<ThresholdConfig> =
            read_support(config.rules.threshold_file.as_deref(), "threshold file", ThresholdConfig::parse, &mut plan);
    }
    plan.files = if args.exclusive.is_empty() {
        configured.into_iter().chain(args.extra.iter().cloned()).collect()
    } else {
        args.exclusive.iter().chain(&args.extra).cloned().collect()
    };
    if plan.files.is_empty() {
        return Err((
            ExitCode::from(2),
            "no rule files: give -S FILE, -s FILE or a config (-c) with rule-files".into(),
        ));
    }
    Ok(plan)
}

fn check(plan: Plan) -> Report {
    let mut loader = Loader::new().vars(plan.vars);
    if let Some(c) = plan.classifications {
        loader = loader.classifications(c);
    }
    if let Some(r) = plan.references {
        loader = loader.references(r);
    }
    let set = loader.load_files(&plan.files).unwrap_or_else(|e| *e.set);
    // A rule counts as loaded exactly when the detection engine compiles it.
    let cap = set.capability(&vigil_detect::DetectExecutor);
    Report {
        totals: set.totals(),
        loaded: cap.loaded,
        unsupported: cap.unsupported,
        by_keyword: cap.by_keyword,
        set,
        support_errors: plan.support_errors,
        warnings: plan.warnings,
    }
}

fn errors_by_kind(errors: &[RuleError]) -> BTreeMap<&'static str, usize> {
    let mut m = BTreeMap::new();
    for e in errors {
        *m.entry(e.kind.as_str()).or_default() += 1;
    }
    m
}

fn to_text(r: &Report) -> String {
    let t = &r.totals;
    let mut s = String::new();
    let _ = writeln!(s, "{} rule file(s), {} rules", r.set.files.len(), t.rules);
    let _ = writeln!(s, "  loaded       {:>7}  run completely by this engine", r.loaded);
    let _ = writeln!(s, "  unsupported  {:>7}  valid, but use keywords this engine cannot run", r.unsupported);
    let _ = writeln!(s, "  failed       {:>7}  syntax or semantic errors, listed below", t.failed);
    let _ = write!(s, "  disabled     {:>7}  commented out", t.disabled);
    if !r.set.disabled_errors.is_empty() {
        let _ = write!(s, " ({} would fail if enabled)", r.set.disabled_errors.len());
    }
    s.push('\n');
    if r.unsupported > 0 && r.loaded == 0 {
        s.push_str("  (no rule of these files runs on this engine: see the keywords below)\n");
    }
    if r.set.files.len() > 1 {
        s.push_str("\nPer file:                                             rules  enabled disabled   failed\n");
        for f in &r.set.files {
            let name = shorten(&f.file, 50);
            let _ = writeln!(s, "  {name:<50} {:>7}  {:>7}  {:>7}  {:>7}", f.rules, f.enabled, f.disabled, f.failed);
        }
    }
    if !r.by_keyword.is_empty() {
        s.push_str("\nKeywords this engine cannot run (rules needing each):\n");
        for (k, n) in &r.by_keyword {
            let _ = writeln!(s, "  {k:<32} {n:>7}");
        }
    }
    let all_errors: Vec<&RuleError> = r.set.errors.iter().chain(&r.support_errors).collect();
    if !all_errors.is_empty() {
        s.push_str("\nErrors by kind:\n");
        for (k, n) in errors_by_kind(&r.set.errors) {
            let _ = writeln!(s, "  {k:<16} {n:>7}");
        }
        if !r.support_errors.is_empty() {
            let _ = writeln!(s, "  {:<16} {:>7}", "support-file", r.support_errors.len());
        }
        s.push_str("\nErrors:\n");
        for e in all_errors {
            let _ = writeln!(s, "  {e}");
        }
    }
    s
}

fn shorten(name: &str, max: usize) -> String {
    let n = name.chars().count();
    if n <= max {
        return name.to_string();
    }
    let tail: String = name.chars().skip(n - (max - 3)).collect();
    format!("...{tail}")
}

fn error_json(e: &RuleError) -> serde_json::Value {
    json!({
        "file": &*e.file,
        "line": e.line,
        "column": e.column,
        "keyword": e.keyword,
        "reason": e.reason,
        "kind": e.kind.as_str(),
        "sid": e.sid,
        "message": e.to_string(),
    })
}

fn to_json(r: &Report) -> serde_json::Value {
    let t = &r.totals;
    json!({
        "totals": {
            "files": r.set.files.len(),
            "rules": t.rules,
            "loaded": r.loaded,
            "unsupported": r.unsupported,
            "failed": t.failed,
            "disabled": t.disabled,
            "disabled_invalid": r.set.disabled_errors.len(),
        },
        "files": r.set.files.iter().map(|f| json!({
            "file": f.file,
            "rules": f.rules,
            "enabled": f.enabled,
            "disabled": f.disabled,
            "failed": f.failed,
        })).collect::<Vec<_>>(),
        "unsupported_keywords": r.by_keyword.iter().map(|(k, n)| json!({"keyword": k, "rules": n})).collect::<Vec<_>>(),
        "errors_by_kind": errors_by_kind(&r.set.errors),
        "errors": r.set.errors.iter().map(error_json).collect::<Vec<_>>(),
        "support_errors": r.support_errors.iter().map(error_json).collect::<Vec<_>>(),
        "warnings": r.warnings,
    })
}
