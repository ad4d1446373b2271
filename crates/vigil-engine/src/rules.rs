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
use vigil_detect::datasets::{Datasets, DatasetsSetup, SetDecl};
use vigil_detect::prefilter::Algo;
use vigil_detect::{compile_all_in, DetectEngine};
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
    /// The datasets the rules (and the config) made, written back when the run ends.
    pub datasets: Arc<Datasets>,
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
    load_keeping(opts, config, vars, algo, None)
}

/// [`load`], the datasets of `kept` (a reload's: sets live on across
/// reloads, as in Suricata) rather than new ones.
pub fn load_keeping(
    opts: &RunOptions,
    config: &Config,
    vars: Vars,
    algo: Algo,
    kept: Option<Arc<Datasets>>,
) -> Result<LoadedRules, EngineError> {
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
    out.datasets = match kept {
        Some(sets) => {
            sets.prepare_reload();
            sets
        }
        None => Arc::new(datasets(opts, config, &mut out.messages)),
    };
    let policy = vigil_rules::keywords::dataset::DatasetRules {
        allow_write: config.datasets.allow_write,
        allow_absolute: config.datasets.allow_absolute,
    };
    let mut loader = Loader::new().vars(vars).datasets(policy);
    let (reputation, rep_files) = reputation(config, &mut out.messages);
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
    out.log
        .extend(set.notices.iter().map(|n| crate::log::LogRecord::new(LogLevel::Notice, "detect-dataset", n.clone())));
    out.log.extend(rep_files.iter().map(|f| {
        crate::log::LogRecord::new(LogLevel::Info, "reputation", format!("Loading reputation file: {}", f.display()))
    }));
    out.messages.extend(set.errors.iter().map(|e| e.to_string()));
    let failed = crate::log::failed_rules(&set.errors);
    out.log.extend(crate::log::rule_error_records(&set.errors, &failed));
    out.failed_rules.extend(failed);
    out.keywords.extend(set.rules.iter().flat_map(|r| r.options.iter().map(|o| o.keyword.canonical)));
    let mut sigs = Vec::with_capacity(set.rules.len());
    // Rules that fail only once built (a dataset file that does not read).
    let mut late_errors = Vec::new();
    let lua = vigil_detect::lua::LuaSettings {
        allow_rules: config.lua.allow_rules,
        max_bytes: config.lua.max_bytes,
        max_instructions: config.lua.max_instructions,
        allow_restricted_functions: config.lua.allow_restricted_functions,
        rule_path: config.rules.default_rule_path.as_deref().map(PathBuf::from),
    };
    let shared = vigil_detect::Shared { datasets: Arc::clone(&out.datasets), reputation, lua };
    let mut kinds = SigKinds::default();
    for rule in &set.rules {
        match compile_all_in(rule, &classes, &shared) {
            Ok(compiled) => {
                if opts.engine_analysis {
                    out.analysis.add(rule, &compiled[0]);
                }
                kinds.count(rule, &compiled[0]);
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
            Err(u) if !u.errors.is_empty() => {
                out.failed += 1;
                for e in u.errors {
                    // Logged under the keyword's module (`detect-lua`, `detect-dataset`).
                    let keyword = if e.contains("lua") || e.contains("Lua") { "lua" } else { "dataset" };
                    late_errors.push(vigil_rules::RuleError::at(
                        &rule.file,
                        rule.span,
                        vigil_rules::ErrorKind::Semantic,
                        Some(keyword),
                        e,
                    ));
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
    if !late_errors.is_empty() {
        out.messages.extend(late_errors.iter().map(|e| e.to_string()));
        let failed = crate::log::failed_rules(&late_errors);
        out.log.extend(crate::log::rule_error_records(&late_errors, &failed));
        out.failed_rules.extend(failed);
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
    if out.loaded > 0 {
        out.log.push(crate::log::LogRecord::new(LogLevel::Info, "detect", kinds.summary(out.loaded)));
    }
    if !sigs.is_empty() {
        // The config checked the names: the default covers only a config built by hand.
        let order = ActionOrder::from_names(&config.detect.action_order).unwrap_or_default();
        let engine = DetectEngine::build_ordered(sigs, algo, order)
            .map_err(|e| EngineError::Config(vec![e.to_string()]))?
            .with_recursion_limit(config.detect.inspection_recursion_limit)
            .with_alert_max(usize::from(config.detect.packet_alert_max));
        out.engine = Some(Arc::new(engine));
    }
    if let Some(rules) = fw_rules {
        // Built after threat detection, whose flowbits its rules share.
        let td_bits = out.engine.as_deref().map_or(&[][..], |e| e.flowbit_names());
        out.firewall = Some(Arc::new(build_firewall(rules, &config.rules.firewall_policies, td_bits)));
    }
    Ok(out)
}

/// What kinds of signatures loaded, as Suricata sums them up once its
/// engine is built.
#[derive(Default)]
struct SigKinds {
    ip_only: usize,
    payload: usize,
    app_layer: usize,
    decoder_events: usize,
}

impl SigKinds {
    fn count(&mut self, rule: &vigil_rules::Rule, sig: &vigil_detect::Signature) {
        use vigil_detect::analysis::{rule_type, RuleType};
        self.ip_only += usize::from(sig.ip_only);
        self.payload += usize::from(!sig.payload.is_empty());
        self.app_layer += usize::from(sig.app_proto.is_some() || sig.tx.is_some());
        self.decoder_events += usize::from(matches!(rule_type(rule, sig), RuleType::DeOnly));
    }

    fn summary(&self, loaded: usize) -> String {
        format!(
            "{loaded} signatures processed. {} are IP-only rules, {} are inspecting packet payload, {} inspect application layer, {} are decoder event only",
            self.ip_only, self.payload, self.app_layer, self.decoder_events
        )
    }
}

/// IP reputation: `reputation-categories-file` and `reputation-files`
/// (relative names under `default-reputation-path`); `None` without a
/// categories file. Lines that do not read are messages; the files read
/// are named for the log.
fn reputation(
    config: &Config,
    messages: &mut Vec<String>,
) -> (Option<Arc<vigil_detect::iprep::Reputation>>, Vec<PathBuf>) {
    let r = &config.rules;
    let Some(cats) = r.reputation_categories_file.as_deref() else { return (None, Vec::new()) };
    let base = r.default_reputation_path.as_deref().map(Path::new);
    let under_base = |f: &str| match base {
        Some(b) if Path::new(f).is_relative() => b.join(f),
        _ => PathBuf::from(f),
    };
    let cats = match Path::new(cats) {
        p if p.exists() => p.to_path_buf(),
        _ => under_base(cats),
    };
    let files: Vec<PathBuf> = r.reputation_files.iter().map(|f| under_base(f)).collect();
    let (rep, problems) = vigil_detect::iprep::Reputation::load(&cats, &files);
    messages.extend(problems.into_iter().map(|p| format!("reputation: {p}")));
    (Some(Arc::new(rep)), files)
}

/// Writes the sets that have a `save` or `state` file, as the run ends; a
/// set that cannot be written is a warning.
pub(crate) fn save_datasets(rules: &LoadedRules) {
    for r in rules.datasets.save_all() {
        if let Err(e) = r {
            eprintln!("vigil: warning: {e}");
        }
    }
}

/// The run's datasets: where their files go (`--data-dir`,
/// `default-rule-path`), their defaults and limits, and the sets the
/// config declares (a bad one is a message, and left out).
fn datasets(opts: &RunOptions, config: &Config, messages: &mut Vec<String>) -> Datasets {
    let c = &config.datasets;
    let d = DatasetsSetup::default();
    let sets = Datasets::new(DatasetsSetup {
        data_dir: opts.data_dir.clone().unwrap_or(d.data_dir),
        rule_path: config.rules.default_rule_path.as_deref().map(PathBuf::from),
        default_memcap: c.default_memcap.unwrap_or(d.default_memcap),
        default_hashsize: c.default_hashsize.unwrap_or(d.default_hashsize),
        single_hashsize: c.single_hashsize,
        total_hashsizes: c.total_hashsizes,
    });
    for s in &c.sets {
        let Some(kind) = vigil_rules::keywords::dataset::SetKind::parse(&s.kind) else {
            messages.push(format!("datasets.{}: bad type '{}'", s.name, s.kind));
            continue;
        };
        let decl = SetDecl {
            name: &s.name,
            kind: Some(kind),
            load: s.load.as_deref(),
            save: s.save.as_deref(),
            state: s.state.as_deref(),
            memcap: s.memcap,
            hashsize: s.hashsize,
            rep: false,
            config: true,
        };
        if let Err(e) = sets.get(&decl, None) {
            messages.push(format!("datasets.{}: {e}", s.name));
        }
    }
    sets
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
            datasets: Arc::default(),
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
