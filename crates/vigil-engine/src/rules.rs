//! Loading the rules a run inspects with: which files (`-S`, `-s`,
//! `rule-files`), their variables and classifications, and the detection
//! engine built from every rule vigil can run. Rules it cannot run are
//! counted and named, never silently dropped.

use crate::error::EngineError;
use crate::options::RunOptions;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use vigil_config::{Config, LogLevel};
use vigil_detect::compile::ActionOrder;
use vigil_detect::prefilter::Algo;
use vigil_detect::{compile_all, DetectEngine};
use vigil_rules::{Classifications, Loader, Vars};

/// What loading the rules gave.
pub struct LoadedRules {
    /// `None` when detection is off or no rule could run.
    pub engine: Option<Arc<DetectEngine>>,
    /// Firewall mode's rules (`None`: not in firewall mode).
    pub firewall: Option<Arc<vigil_detect::engine::firewall::Firewall>>,
    pub files: Vec<PathBuf>,
    /// Enabled rules read.
    pub rules: usize,
    pub loaded: usize,
    pub failed: usize,
    /// Enabled rules whose `requires` this engine does not meet (Suricata's `rules_skipped`).
    pub skipped: usize,
    /// Rules that parse but use keywords the engine does not run yet, by keyword.
    pub unsupported: usize,
    pub unsupported_keywords: BTreeMap<String, usize>,
    pub disabled: usize,
    /// Each rule that failed, as written.
    pub failed_rules: Vec<crate::log::FailedRule>,
    /// Every keyword the rules that parsed use (Suricata's names): a rule
    /// asking for what a protocol computes only on request turns it on.
    pub keywords: std::collections::BTreeSet<&'static str>,
    /// When these rules were read (start-up or the reload that brought them).
    pub loaded_at: std::time::SystemTime,
    /// Errors and warnings to show the user.
    pub messages: Vec<String>,
    /// The same for the `logging` outputs, in Suricata's form: support-file
    /// problems, each failed rule's reason and text, and the load summary.
    pub log: Vec<crate::log::LogRecord>,
    /// `threshold-file`: suppressions and rate rules.
    pub thresholds: vigil_detect::threshold::GlobalThresholds,
    /// `--engine-analysis`: what `rules.json` says of each signature (empty otherwise).
    pub analysis: crate::analysis::Analysis,
}

/// The rule files a run reads, in Suricata's order: `-S` replaces the
/// configured `rule-files`; `-s` adds to them. Relative configured names are
/// under `default-rule-path`.
pub fn rule_files(opts: &RunOptions, config: &Config) -> Vec<PathBuf> {
    if !opts.exclusive_rules.is_empty() {
        return opts.exclusive_rules.iter().chain(&opts.extra_rules).cloned().collect();
    }
    let base = config.rules.default_rule_path.as_deref().map(PathBuf::from);
    let mut files: Vec<PathBuf> = config
        .rules
        .rule_files
        .iter()
        .map(|f| match (&base, Path::new(f).is_absolute()) {
            (Some(b), false) => b.join(f),
            _ => PathBuf::from(f),
        })
        .collect();
    files.extend(opts.extra_rules.iter().cloned());
    files
}

/// Loads, compiles and builds. Unreadable classification files and bad
/// rules are messages (the caller makes them fatal with
/// `--init-errors-fatal`, once they are logged); the rest loads.
pub fn load(opts: &RunOptions, config: &Config, vars: Vars, algo: Algo) -> Result<LoadedRules, EngineError> {
    let files = if opts.disable_detection { Vec::new() } else { rule_files(opts, config) };
    let fw_files = if opts.disable_detection { None } else { firewall_files(opts, config) };
    let mut out = LoadedRules::empty(files.clone());
    if files.is_empty() && fw_files.is_none() {
        return Ok(out);
    }
    // Without a readable classification file, classtypes are not checked
    // (alerts then carry no category), rather than failing every rule that has one.
    let classes = match config.rules.classification_file.as_deref() {
        Some(path) => match std::fs::read_to_string(path) {
            Ok(text) => {
                let (c, errs) = Classifications::parse(&text, path);
                out.messages.extend(errs.iter().map(|e| e.to_string()));
                Some(c)
            }
            Err(e) => {
                out.messages.push(format!(
                    "{path}: {e}: classtypes are not checked and alerts carry no category (set classification-file)"
                ));
                None
            }
        },
        None => None,
    };
    // The reference systems' URL prefixes, for alerts that list references.
    let references = match config.rules.reference_config_file.as_deref() {
        Some(path) => match std::fs::read_to_string(path) {
            Ok(text) => {
                let (r, errs) = vigil_rules::References::parse(&text, path);
                out.messages.extend(errs.iter().map(|e| e.to_string()));
                r
            }
            // Like Suricata, a missing file only means alerts list no references.
            Err(_) => vigil_rules::References::default(),
        },
        None => vigil_rules::References::default(),
    };
    if let Some(path) = config.rules.threshold_file.as_deref() {
        match std::fs::read_to_string(path) {
            Ok(text) => {
                let (cfg, errs) = vigil_rules::ThresholdConfig::parse(&text, path);
                out.messages.extend(errs.iter().map(|e| e.to_string()));
                let (t, msgs) = vigil_detect::threshold::GlobalThresholds::from_config(&cfg, &vars, path);
                out.thresholds = t;
                out.messages.extend(msgs);
            }
            Err(e) => out.messages.push(format!("{path}: {e}")),
        }
    }
    let mut loader = Loader::new().vars(vars);
    if let Some(c) = &classes {
        loader = loader.classifications(c.clone());
    }
    let classes = classes.unwrap_or_default();
    let set = loader.load_files(&files).map_err(|e| EngineError::Config(vec![e.to_string()]))?;
    let totals = set.totals();
    out.rules += totals.enabled;
    out.disabled += totals.disabled;
    out.failed += set.errors.len();
    out.skipped += totals.skipped;
    // Problems of the support files so far, then each failed rule.
    out.log = out.messages.iter().map(|m| crate::log::LogRecord::new(LogLevel::Warning, "config", m.clone())).collect();
    out.messages.extend(set.errors.iter().map(|e| e.to_string()));
    let failed = crate::log::failed_rules(&set.errors);
    out.log.extend(crate::log::rule_error_records(&set.errors, &failed));
    out.failed_rules.extend(failed);
    out.keywords.extend(set.rules.iter().flat_map(|r| r.options.iter().map(|o| o.keyword.canonical)));
    let mut sigs = Vec::with_capacity(set.rules.len());
    for rule in &set.rules {
        match compile_all(rule, &classes) {
            Ok(compiled) => {
                if opts.engine_analysis {
                    out.analysis.add(rule, &compiled[0]);
                }
                out.loaded += 1;
                for mut sig in compiled {
                    sig.reference_urls = sig
                        .references
                        .iter()
                        .filter_map(|(system, id)| references.url(system).map(|prefix| format!("{prefix}{id}")))
                        .collect();
                    sigs.push(sig);
                }
            }
            Err(u) => {
                out.unsupported += 1;
                for k in u.keywords {
                    *out.unsupported_keywords.entry(k).or_insert(0) += 1;
                }
            }
        }
    }
    let fw_rules = match &fw_files {
        Some(fw) => Some(load_firewall(&loader, fw, &classes, opts.engine_analysis, &mut out)?),
        None => None,
    };
    out.log.extend(crate::log::load_summary_records(
        files.len() + fw_files.as_ref().map_or(0, Vec::len),
        out.loaded,
        out.failed,
        out.skipped,
        out.unsupported,
    ));
    // The run will stop on these errors: building the engine would be wasted.
    if opts.init_errors_fatal && out.failed > 0 {
        return Ok(out);
    }
    if !sigs.is_empty() {
        // The config checked the names: the default covers only a config built by hand.
        let order = ActionOrder::from_names(&config.detect.action_order).unwrap_or_default();
        let engine = DetectEngine::build_ordered(sigs, algo, order)
            .map_err(|e| EngineError::Config(vec![e.to_string()]))?
            .with_recursion_limit(config.detect.inspection_recursion_limit);
        out.engine = Some(Arc::new(engine));
    }
    if let Some(rules) = fw_rules {
        // Built after threat detection, whose flowbits its rules share.
        let td_bits = out.engine.as_deref().map_or(&[][..], |e| e.flowbit_names());
        out.firewall = Some(Arc::new(build_firewall(rules, &config.rules.firewall_policies, td_bits)));
    }
    Ok(out)
}

/// The firewall rule files of a firewall-mode run (`None`: not one):
/// `--firewall-rules-exclusive`, else the configured `firewall.rule-files`
/// (relative names under `firewall.rule-path`) when `--firewall` or
/// `firewall.enabled` asks for firewall mode.
pub fn firewall_files(opts: &RunOptions, config: &Config) -> Option<Vec<PathBuf>> {
    if let Some(f) = &opts.firewall_rules {
        return Some(vec![f.clone()]);
    }
    if !(opts.firewall || config.rules.firewall_enabled) {
        return None;
    }
    let base = config.rules.firewall_rule_path.as_deref().map(PathBuf::from);
    Some(
        config
            .rules
            .firewall_rule_files
            .iter()
            .map(|f| match (&base, Path::new(f).is_absolute()) {
                (Some(b), false) => b.join(f),
                _ => PathBuf::from(f),
            })
            .collect(),
    )
}

/// Loads and compiles the firewall rules, in file order. A rule Suricata
/// refuses is a failed rule, named by file, line and column.
fn load_firewall(
    loader: &Loader,
    files: &[PathBuf],
    classes: &Classifications,
    analysis: bool,
    out: &mut LoadedRules,
) -> Result<Vec<vigil_detect::engine::firewall::FwRule>, EngineError> {
    use vigil_detect::engine::firewall::{compile_fw, FwError};
    let set = loader.load_files(files).map_err(|e| EngineError::Config(vec![e.to_string()]))?;
    let totals = set.totals();
    out.rules += totals.enabled;
    out.disabled += totals.disabled;
    out.failed += set.errors.len();
    out.skipped += totals.skipped;
    out.messages.extend(set.errors.iter().map(|e| e.to_string()));
    let failed = crate::log::failed_rules(&set.errors);
    out.log.extend(crate::log::rule_error_records(&set.errors, &failed));
    out.failed_rules.extend(failed);
    out.keywords.extend(set.rules.iter().flat_map(|r| r.options.iter().map(|o| o.keyword.canonical)));
    let mut rules = Vec::with_capacity(set.rules.len());
    for rule in &set.rules {
        match compile_fw(rule, classes) {
            Ok(mut r) => {
                out.loaded += 1;
                if analysis {
                    r.raw = out.analysis.raw(rule).unwrap_or_default();
                }
                rules.push(r);
            }
            Err(FwError::Invalid(reason)) => {
                out.failed += 1;
                let at = rule.header.action_span;
                out.messages.push(format!("{}:{}:{}: firewall rule: {reason}", rule.file, at.line, at.column));
            }
            Err(FwError::Unsupported(u)) => {
                out.unsupported += 1;
                for k in u.keywords {
                    *out.unsupported_keywords.entry(k).or_insert(0) += 1;
                }
            }
        }
    }
    out.files.extend(files.iter().cloned());
    Ok(rules)
}

/// The firewall from its rules, the configured default policies, and threat
/// detection's flowbit names (shared).
fn build_firewall(
    rules: Vec<vigil_detect::engine::firewall::FwRule>,
    policies: &vigil_config::FwPolicies,
    td_bits: &[String],
) -> vigil_detect::engine::firewall::Firewall {
    use vigil_detect::engine::firewall::{Firewall, FwDefaults};
    let defaults = FwDefaults::new(&|hook| policies.packet(hook).map(policy_spec), &|proto, hook| {
        policies.app(proto, hook).map(policy_spec)
    });
    Firewall::build(rules, defaults, td_bits)
}

/// A configured default policy as the firewall takes it.
fn policy_spec(p: vigil_config::FwPolicy) -> vigil_detect::engine::firewall::FwPolicySpec {
    use vigil_config::FwPolicyAction as A;
    use vigil_detect::engine::firewall::FwScope;
    let (accept, scope, reject) = match p.action {
        A::AcceptPacket => (true, FwScope::Packet, false),
        A::AcceptFlow => (true, FwScope::Flow, false),
        A::AcceptHook => (true, FwScope::Hook, false),
        A::AcceptTx => (true, FwScope::Tx, false),
        A::DropPacket => (false, FwScope::Packet, false),
        A::DropFlow => (false, FwScope::Flow, false),
        A::RejectPacket => (false, FwScope::Packet, true),
        A::RejectFlow => (false, FwScope::Flow, true),
    };
    vigil_detect::engine::firewall::FwPolicySpec { accept, scope, alert: p.alert, reject }
}

impl LoadedRules {
    /// No rule yet, from these files.
    pub(crate) fn empty(files: Vec<PathBuf>) -> LoadedRules {
        LoadedRules {
            engine: None,
            firewall: None,
            files,
            rules: 0,
            loaded: 0,
            failed: 0,
            skipped: 0,
            unsupported: 0,
            unsupported_keywords: BTreeMap::new(),
            disabled: 0,
            failed_rules: Vec::new(),
            keywords: Default::default(),
            loaded_at: std::time::SystemTime::now(),
            messages: Vec::new(),
            log: Vec::new(),
            thresholds: Default::default(),
            analysis: Default::default(),
        }
    }

    /// One line for the user: how much of the ruleset runs.
    pub fn summary_line(&self) -> String {
        let mut s = format!(
            "{} rules: {} loaded, {} failed, {} unsupported, {} disabled",
            self.rules, self.loaded, self.failed, self.unsupported, self.disabled
        );
        if !self.unsupported_keywords.is_empty() {
            let mut top: Vec<_> = self.unsupported_keywords.iter().collect();
            top.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            let list: Vec<String> = top.iter().take(6).map(|(k, n)| format!("{k} ({n})")).collect();
            s.push_str(&format!("; not yet run: {}", list.join(", ")));
        }
        s
    }
}

impl std::fmt::Debug for LoadedRules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.summary_line())
    }
}
