//! `detect`, `mpm-algo`, `spm-algo` and `action-order`: how the detection
//! engine is built.
//! Values are checked here (a bad one is an error naming its key, and the
//! default stays); the engine decides what each means for it.

use crate::read::{Errors, Section};

/// The detection settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Detect {
    /// `mpm-algo`: `auto`, `hs`, `ac`, `ac-bs` or `ac-ks`. Default `auto`.
    pub mpm_algo: String,
    /// `spm-algo`: `auto`, `bm` or `hs`. Default `auto`.
    pub spm_algo: String,
    /// `detect.profile`: `low`, `medium`, `high` or `custom`. Default `medium`.
    pub profile: String,
    /// `detect.sgh-mpm-context`: `auto`, `single` or `full`. Default `auto`.
    pub sgh_mpm_context: String,
    /// `detect.inspection-recursion-limit`: steps one content inspection
    /// may take, backtracking included; 0: no limit. Default 3000.
    pub inspection_recursion_limit: u32,
    /// `action-order`: which action's signatures are evaluated first; the
    /// first match of `pass`, `drop` or `reject` decides the packet.
    /// Actions the list leaves out follow in their default order.
    pub action_order: Vec<String>,
    /// `packet-alert-max`: the most alerts one packet raises (those of the
    /// signatures evaluated first). Default 15.
    pub packet_alert_max: u16,
}

/// Suricata's default `action-order`.
pub const DEFAULT_ACTION_ORDER: [&str; 4] = ["pass", "drop", "reject", "alert"];

impl Default for Detect {
    fn default() -> Self {
        Detect {
            mpm_algo: "auto".into(),
            spm_algo: "auto".into(),
            profile: "medium".into(),
            sgh_mpm_context: "auto".into(),
            inspection_recursion_limit: 3000,
            action_order: DEFAULT_ACTION_ORDER.iter().map(|a| a.to_string()).collect(),
            packet_alert_max: 15,
        }
    }
}

/// `key`'s value when it is one of `allowed`, else the default (and an error).
fn one_of(sec: &Section<'_>, key: &str, allowed: &[&str], default: &str, errs: &mut Errors) -> String {
    match sec.string(key, errs) {
        Some(v) if allowed.contains(&v.as_str()) => v,
        Some(v) => {
            sec.error(key, errs, format!("expected one of {}, got {v:?}", allowed.join(", ")));
            default.into()
        }
        None => default.into(),
    }
}

impl Detect {
    pub(crate) fn read(root: &Section<'_>, errs: &mut Errors) -> Detect {
        let d = Detect::default();
        let detect = root.child("detect");
        Detect {
            mpm_algo: one_of(root, "mpm-algo", &["auto", "hs", "ac", "ac-bs", "ac-ks"], &d.mpm_algo, errs),
            spm_algo: one_of(root, "spm-algo", &["auto", "bm", "hs"], &d.spm_algo, errs),
            profile: one_of(&detect, "profile", &["low", "medium", "high", "custom"], &d.profile, errs),
            sgh_mpm_context: one_of(&detect, "sgh-mpm-context", &["auto", "single", "full"], &d.sgh_mpm_context, errs),
            inspection_recursion_limit: detect
                .int_in("inspection-recursion-limit", 0, i64::from(u32::MAX), errs)
                .map_or(d.inspection_recursion_limit, |v| v as u32),
            action_order: action_order(root, errs).unwrap_or(d.action_order),
            packet_alert_max: root
                .int_in("packet-alert-max", 1, i64::from(u16::MAX), errs)
                .map_or(d.packet_alert_max, |v| v as u16),
        }
    }
}

/// `action-order`, completed with the actions it leaves out; `None` (and an
/// error) for an unknown or repeated action.
fn action_order(root: &Section<'_>, errs: &mut Errors) -> Option<Vec<String>> {
    let listed = root.string_list("action-order", errs)?;
    let mut order: Vec<String> = Vec::with_capacity(DEFAULT_ACTION_ORDER.len());
    for a in listed {
        if !DEFAULT_ACTION_ORDER.contains(&a.as_str()) {
            root.error("action-order", errs, format!("unknown action {a:?}: expected pass, drop, reject or alert"));
            return None;
        }
        if order.contains(&a) {
            root.error("action-order", errs, format!("action {a:?} listed twice"));
            return None;
        }
        order.push(a);
    }
    for a in DEFAULT_ACTION_ORDER {
        if !order.iter().any(|o| o == a) {
            order.push(a.into());
        }
    }
    Some(order)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Config, ConfigTree};

    fn load(yaml: &str) -> (Detect, Vec<String>) {
        let tree = ConfigTree::parse_str(yaml, "t.yaml").unwrap();
        let (c, errs, _) = Config::from_tree(&tree);
        (c.detect, errs.iter().map(|e| e.to_string()).collect())
    }

    #[test]
    fn detection_settings_are_read_and_checked() {
        let (d, errs) = load("mpm-algo: ac\nspm-algo: bm\ndetect:\n  profile: high\n  sgh-mpm-context: full\n  inspection-recursion-limit: 0\n");
        assert!(errs.is_empty(), "{errs:?}");
        assert_eq!((d.mpm_algo.as_str(), d.spm_algo.as_str(), d.profile.as_str()), ("ac", "bm", "high"));
        assert_eq!((d.sgh_mpm_context.as_str(), d.inspection_recursion_limit), ("full", 0));
        assert_eq!(d.action_order, DEFAULT_ACTION_ORDER);
        let (d, errs) = load("mpm-algo: fast\ndetect:\n  profile: huge\n");
        assert_eq!((d.mpm_algo.as_str(), d.profile.as_str()), ("auto", "medium"));
        assert_eq!(errs.len(), 2, "{errs:?}");
        assert!(errs[0].contains("t.yaml") && errs[0].contains("mpm-algo"), "{errs:?}");
        assert_eq!(load("").0, Detect::default());
    }

    #[test]
    fn action_order_is_completed_and_checked() {
        let (d, errs) = load("action-order:\n  - drop\n  - alert\n  - reject\n");
        assert!(errs.is_empty(), "{errs:?}");
        assert_eq!(d.action_order, ["drop", "alert", "reject", "pass"]);
        for bad in ["action-order:\n  - drop\n  - bounce\n", "action-order:\n  - drop\n  - drop\n"] {
            let (d, errs) = load(bad);
            assert_eq!(d.action_order, DEFAULT_ACTION_ORDER);
            assert!(errs.len() == 1 && errs[0].contains("action-order"), "{errs:?}");
        }
    }
}
