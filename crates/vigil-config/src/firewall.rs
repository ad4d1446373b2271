//! `firewall.policies`: what each firewall hook does with traffic no
//! firewall rule decided (Suricata 8.0.7's default policies).

use crate::read::{Errors, Section};
use std::collections::BTreeMap;

/// What a default policy does, with the scope of its action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FwPolicyAction {
    AcceptPacket,
    AcceptFlow,
    AcceptHook,
    AcceptTx,
    DropPacket,
    DropFlow,
    /// Dropped and refused (a TCP reset or an ICMP unreachable).
    RejectPacket,
    RejectFlow,
}

impl FwPolicyAction {
    fn parse(s: &str) -> Option<FwPolicyAction> {
        Some(match s {
            "accept:packet" => FwPolicyAction::AcceptPacket,
            "accept:flow" => FwPolicyAction::AcceptFlow,
            "accept:hook" => FwPolicyAction::AcceptHook,
            "accept:tx" => FwPolicyAction::AcceptTx,
            "drop:packet" => FwPolicyAction::DropPacket,
            "drop:flow" => FwPolicyAction::DropFlow,
            "reject:packet" => FwPolicyAction::RejectPacket,
            "reject:flow" => FwPolicyAction::RejectFlow,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            FwPolicyAction::AcceptPacket => "accept:packet",
            FwPolicyAction::AcceptFlow => "accept:flow",
            FwPolicyAction::AcceptHook => "accept:hook",
            FwPolicyAction::AcceptTx => "accept:tx",
            FwPolicyAction::DropPacket => "drop:packet",
            FwPolicyAction::DropFlow => "drop:flow",
            FwPolicyAction::RejectPacket => "reject:packet",
            FwPolicyAction::RejectFlow => "reject:flow",
        }
    }
}

/// One policy: its action, and whether it also raises an alert (`alert`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FwPolicy {
    pub action: FwPolicyAction,
    pub alert: bool,
}

impl FwPolicy {
    /// As EVE's `firewall.policy` writes it (`accept:hook,alert`).
    pub fn label(&self) -> String {
        let mut s = self.action.as_str().to_string();
        if self.alert {
            s.push_str(",alert");
        }
        s
    }
}

/// The policies of one protocol's hooks: its fallback and per hook (names
/// with underscores, as rules write them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FwAppPolicies {
    pub default: Option<FwPolicy>,
    pub hooks: BTreeMap<String, FwPolicy>,
    /// Sub states with hooks of their own (HTTP/2's `stream` and `global`).
    pub subs: BTreeMap<String, FwAppPolicies>,
}

/// `firewall.policies`, as written; [`FwPolicies::packet`] and
/// [`FwPolicies::app`] resolve a hook's policy by Suricata's precedence.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FwPolicies {
    /// `default-policy`: every hook's last fallback.
    pub default: Option<FwPolicy>,
    /// `packet.default-policy`.
    pub packet_default: Option<FwPolicy>,
    /// `packet.filter`, `packet.pre-flow`, `packet.pre-stream` (keys with underscores).
    pub packet: BTreeMap<String, FwPolicy>,
    /// `app.default-policy`.
    pub app_default: Option<FwPolicy>,
    /// `app.<proto>`.
    pub app: BTreeMap<String, FwAppPolicies>,
}

const PACKET_HOOKS: [&str; 3] = ["filter", "pre_flow", "pre_stream"];

impl FwPolicies {
    /// The policy of packet hook `hook` (`filter`, `pre_flow`, `pre_stream`),
    /// where the configuration sets one.
    pub fn packet(&self, hook: &str) -> Option<FwPolicy> {
        self.packet.get(hook).copied().or(self.packet_default).or(self.default)
    }

    /// The policy of `proto`'s hook `hook` (`request_started`, ...), where
    /// the configuration sets one.
    pub fn app(&self, proto: &str, hook: &str) -> Option<FwPolicy> {
        let p = self.app.get(proto);
        p.and_then(|p| p.hooks.get(hook).copied()).or(p.and_then(|p| p.default)).or(self.app_default).or(self.default)
    }

    /// [`app`](Self::app) for a hook of sub state `sub` (HTTP/2's `stream`):
    /// the sub state's own settings come first.
    pub fn app_sub(&self, proto: &str, sub: &str, hook: &str) -> Option<FwPolicy> {
        let s = self.app.get(proto).and_then(|p| p.subs.get(sub));
        s.and_then(|s| s.hooks.get(hook).copied()).or(s.and_then(|s| s.default)).or_else(|| self.app(proto, hook))
    }

    pub(crate) fn read(sec: &Section<'_>, errs: &mut Errors) -> FwPolicies {
        let mut out = FwPolicies::default();
        if sec.node.is_none() {
            return out;
        }
        out.default = policy(sec, "default-policy", false, errs);
        let packet = sec.child("packet");
        out.packet_default = policy(&packet, "default-policy", true, errs);
        for hook in PACKET_HOOKS {
            if let Some(p) = policy(&packet, &hook.replace('_', "-"), true, errs) {
                out.packet.insert(hook.to_string(), p);
            }
        }
        let app = sec.child("app");
        out.app_default = policy(&app, "default-policy", false, errs);
        for proto in app.children() {
            let Some(name) = proto.node.map(|n| n.name().to_string()) else { continue };
            if name == "default-policy" {
                continue;
            }
            out.app.insert(name, app_policies(&proto, true, errs));
        }
        if out.default.is_some_and(|p| p.action == FwPolicyAction::AcceptTx)
            && (out.packet_default.is_none() || PACKET_HOOKS.iter().any(|h| !out.packet.contains_key(*h)))
        {
            sec.error("default-policy", errs, "accept:tx cannot apply to packet hooks: set the packet policies");
        }
        out
    }
}

/// One protocol's policies; `subs`: it may have sub states (maps, not lists).
fn app_policies(sec: &Section<'_>, subs: bool, errs: &mut Errors) -> FwAppPolicies {
    let mut p = FwAppPolicies { default: policy(sec, "default-policy", false, errs), ..Default::default() };
    for hook in sec.children() {
        let Some(node) = hook.node else { continue };
        let key = node.name().to_string();
        if key == "default-policy" {
            continue;
        }
        if subs && !node.is_sequence() && !node.children().is_empty() {
            p.subs.insert(key, app_policies(&hook, false, errs));
        } else if let Some(v) = policy(sec, &key, false, errs) {
            p.hooks.insert(key.replace('-', "_"), v);
        }
    }
    p
}

/// A policy list (`[ "accept:hook", "alert" ]`) under `key`; `packet`: a
/// packet hook's, which has no transactions.
fn policy(sec: &Section<'_>, key: &str, packet: bool, errs: &mut Errors) -> Option<FwPolicy> {
    let items = sec.string_list(key, errs)?;
    let mut action = None;
    let mut alert = false;
    for item in &items {
        let item = item.trim();
        if item == "alert" {
            alert = true;
            continue;
        }
        match FwPolicyAction::parse(item) {
            Some(a) if action.is_none() => action = Some(a),
            Some(_) => {
                sec.error(key, errs, "a policy has one accept or drop action");
                return None;
            }
            None => {
                sec.error(key, errs, format!("unknown policy action {item:?}"));
                return None;
            }
        }
    }
    let Some(action) = action else {
        sec.error(key, errs, "a policy needs an accept or drop action");
        return None;
    };
    if packet && action == FwPolicyAction::AcceptTx {
        sec.error(key, errs, "accept:tx cannot apply to a packet hook");
        return None;
    }
    Some(FwPolicy { action, alert })
}
