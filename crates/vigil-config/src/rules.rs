//! Where rules and their support files are.

use crate::read::{Errors, Section};

/// `default-rule-path`, `rule-files` and the support files.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct RuleFiles {
    /// `default-rule-path`: directory for relative `rule-files`.
    pub default_rule_path: Option<String>,
    /// `rule-files`: rule file names, in order.
    pub rule_files: Vec<String>,
    /// `classification-file`.
    pub classification_file: Option<String>,
    /// `reference-config-file`.
    pub reference_config_file: Option<String>,
    /// `threshold-file`.
    pub threshold_file: Option<String>,
    /// `firewall.enabled`: firewall mode (also `--firewall`).
    pub firewall_enabled: bool,
    /// `firewall.rule-path`: directory for relative `firewall.rule-files`.
    pub firewall_rule_path: Option<String>,
    /// `firewall.rule-files`: firewall rule files, in order (order matters:
    /// rules are evaluated as they appear).
    pub firewall_rule_files: Vec<String>,
    /// `firewall.policies`: what hooks do with traffic no rule decided.
    pub firewall_policies: crate::firewall::FwPolicies,
    /// `reputation-categories-file`: IP reputation's categories.
    pub reputation_categories_file: Option<String>,
    /// `reputation-files`: IP reputation's scores, relative names under
    /// `default-reputation-path`.
    pub reputation_files: Vec<String>,
    /// `default-reputation-path`.
    pub default_reputation_path: Option<String>,
}

/// A list of names, or one name alone (`--set reputation-files=x`), or
/// items set by their place (`--set reputation-files.0=x`).
fn one_or_list(root: &Section<'_>, key: &str, errs: &mut Errors) -> Vec<String> {
    let sec = root.child(key);
    match sec.node {
        Some(n) if n.is_sequence() => root.string_list(key, errs).unwrap_or_default(),
        Some(_) if sec.has_children() => {
            sec.children().filter_map(|item| item.own_scalar(errs)).map(|(v, _)| v.to_string()).collect()
        }
        _ => root.string(key, errs).into_iter().collect(),
    }
}

impl RuleFiles {
    /// The stock `suricata.yaml` values (installed under `/usr/local`).
    pub fn stock() -> Self {
        RuleFiles {
            default_rule_path: Some("/usr/local/var/lib/suricata/rules".into()),
            rule_files: vec!["suricata.rules".into()],
            classification_file: Some("/usr/local/etc/suricata/classification.config".into()),
            reference_config_file: Some("/usr/local/etc/suricata/reference.config".into()),
            threshold_file: None,
            firewall_enabled: false,
            firewall_rule_path: None,
            firewall_rule_files: Vec::new(),
            firewall_policies: Default::default(),
            reputation_categories_file: None,
            reputation_files: Vec::new(),
            default_reputation_path: None,
        }
    }

    pub(crate) fn read(root: &Section<'_>, errs: &mut Errors) -> RuleFiles {
        RuleFiles {
            default_rule_path: root.string("default-rule-path", errs),
            rule_files: root.string_list("rule-files", errs).unwrap_or_default(),
            classification_file: root.string("classification-file", errs),
            reference_config_file: root.string("reference-config-file", errs),
            threshold_file: root.string("threshold-file", errs),
            firewall_enabled: root.child("firewall").bool("enabled", false, errs),
            firewall_rule_path: root.child("firewall").string("rule-path", errs),
            firewall_rule_files: root.child("firewall").string_list("rule-files", errs).unwrap_or_default(),
            firewall_policies: crate::firewall::FwPolicies::read(&root.child("firewall").child("policies"), errs),
            reputation_categories_file: root.string("reputation-categories-file", errs),
            reputation_files: one_or_list(root, "reputation-files", errs),
            default_reputation_path: root.string("default-reputation-path", errs),
        }
    }
}
