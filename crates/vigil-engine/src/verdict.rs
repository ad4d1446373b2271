//! What a signature match comes to once `threshold.config` had its say:
//! whether it alerts, and which action it takes on the packet (and, for
//! signatures of flow scope, on the rest of the flow).
//!
//! As in Suricata, a `suppress` line hides the alert but keeps the action (a
//! suppressed drop rule still drops), a `threshold` over its count removes
//! the match entirely, and a `rate_filter` swaps the action once its rate is
//! exceeded. `noalert` hides the alert and keeps the action too.

use vigil_detect::compile::{RejectTo, RuleAction};
use vigil_detect::host_state::Hosts;
use vigil_detect::threshold::{GlobalThresholds, MatchSubject, NewAction};
use vigil_detect::Signature;

/// The outcome of one match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fate {
    /// The action taken: the rule's, or the one a rate filter chose.
    pub action: RuleAction,
    /// A rate filter chose `action`.
    pub filtered: bool,
    /// An alert is written.
    pub alert: bool,
}

/// Decides a match of `sig` by `m`, counting it in the trackers all workers
/// share (`hosts`); `None` when a threshold removed it (no alert, no action).
pub(crate) fn decide(hosts: &Hosts, th: &GlobalThresholds, sig: &Signature, m: MatchSubject) -> Option<Fate> {
    let mut fate = Fate { action: sig.action, filtered: false, alert: !sig.noalert };
    if th.suppressed(sig.gid, sig.sid, m.src, m.dst) {
        fate.alert = false;
        return Some(fate);
    }
    if let Some(rule) = th.rate_for(sig.gid, sig.sid, sig.rate.as_ref()) {
        if !hosts.allow(rule, sig.sid, sig.gid, m) {
            return None;
        }
    }
    if let Some(new) = th.rate_filter(sig.gid, sig.sid).and_then(|f| hosts.filter(f, sig.sid, sig.gid, m)) {
        fate.filtered = true;
        fate.action = match new {
            NewAction::Alert => RuleAction::Alert,
            NewAction::Drop => RuleAction::Drop,
            NewAction::Reject => RuleAction::Reject,
            NewAction::Pass => RuleAction::Pass,
        };
        // A pass lets the packet through silently.
        fate.alert &= new != NewAction::Pass;
    }
    Some(fate)
}

/// What becomes of a packet whose matches, in evaluation order, came to
/// `actions` (each with its signature's reject target), as the alerts'
/// `verdict` says it: a reject, else a drop (inline), else a pass of the
/// packet or of its flow (`flow_passed`), else an alert. Suricata decides it
/// the same way.
pub(crate) fn packet_verdict(
    actions: impl Iterator<Item = (RuleAction, RejectTo)> + Clone,
    ips: bool,
    flow_passed: bool,
    tcp: bool,
) -> vigil_output::Verdict {
    use vigil_output::Verdict;
    if let Some((_, to)) = actions.clone().find(|(a, _)| *a == RuleAction::Reject) {
        let target = match to {
            RejectTo::Src => "to_client",
            RejectTo::Dst => "to_server",
            RejectTo::Both => "both",
        };
        return Verdict::Reject { inline: ips, target, tcp };
    }
    let mut actions = actions.map(|(a, _)| a);
    if ips && actions.clone().any(|a| a == RuleAction::Drop) {
        Verdict::Drop
    } else if flow_passed || actions.any(|a| a == RuleAction::Pass) {
        Verdict::Pass
    } else {
        Verdict::Alert
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vigil_rules::{Classifications, Loader, ThresholdConfig, Vars};
    use vigil_types::Timestamp;

    fn sig(rule: &str) -> Signature {
        let set = Loader::new().load_str(rule, "t.rules").unwrap();
        vigil_detect::compile(&set.rules[0], &Classifications::default()).unwrap()
    }

    fn thresholds(text: &str) -> GlobalThresholds {
        let (cfg, errs) = ThresholdConfig::parse(text, "threshold.config");
        assert!(errs.is_empty(), "{errs:?}");
        let (g, msgs) = GlobalThresholds::from_config(&cfg, &Vars::new(&[], &[]), "threshold.config");
        assert!(msgs.is_empty(), "{msgs:?}");
        g
    }

    fn from(src: [u8; 4], secs: i64) -> MatchSubject {
        MatchSubject {
            src: Some(src.into()),
            dst: Some([10, 0, 0, 9].into()),
            flow: 1,
            ts: Timestamp::from_micros(secs, 0),
        }
    }

    #[test]
    fn suppress_hides_the_alert_but_keeps_the_drop() {
        let s = sig("drop tcp any any -> any any (dsize:0; sid:1;)");
        let th = thresholds("suppress gen_id 1, sig_id 1, track by_src, ip 10.0.0.1\n");
        let f = Hosts::default();
        let quiet = decide(&f, &th, &s, from([10, 0, 0, 1], 0)).unwrap();
        assert_eq!((quiet.action, quiet.alert), (RuleAction::Drop, false));
        let loud = decide(&f, &th, &s, from([10, 0, 0, 2], 0)).unwrap();
        assert_eq!((loud.action, loud.alert), (RuleAction::Drop, true));
    }

    #[test]
    fn a_threshold_over_its_count_removes_the_match() {
        let s = sig("drop tcp any any -> any any (dsize:0; sid:1;)");
        let th = thresholds("threshold gen_id 1, sig_id 1, type limit, track by_rule, count 1, seconds 60\n");
        let f = Hosts::default();
        assert!(decide(&f, &th, &s, from([10, 0, 0, 1], 0)).is_some());
        assert_eq!(decide(&f, &th, &s, from([10, 0, 0, 1], 1)), None);
    }

    #[test]
    fn rate_filter_changes_the_action_past_its_count() {
        let s = sig("alert http any any -> any any (sid:1;)");
        let th = thresholds(
            "rate_filter gen_id 1, sig_id 1, track by_src, count 1, seconds 60, new_action drop, timeout 10\n",
        );
        let f = Hosts::default();
        let first = decide(&f, &th, &s, from([10, 0, 0, 1], 0)).unwrap();
        assert_eq!((first.action, first.filtered), (RuleAction::Alert, false));
        let second = decide(&f, &th, &s, from([10, 0, 0, 1], 1)).unwrap();
        assert_eq!((second.action, second.filtered, second.alert), (RuleAction::Drop, true, true));
        let pass = thresholds(
            "rate_filter gen_id 1, sig_id 1, track by_rule, count 1, seconds 60, new_action pass, timeout 10\n",
        );
        let f = Hosts::default();
        decide(&f, &pass, &s, from([10, 0, 0, 1], 0));
        let passed = decide(&f, &pass, &s, from([10, 0, 0, 1], 1)).unwrap();
        assert_eq!((passed.action, passed.alert), (RuleAction::Pass, false), "a pass raises no alert");
    }

    fn sig_covers(s: &Signature, in_stream: bool) -> bool {
        s.scope.covers_flow(in_stream)
    }

    #[test]
    fn the_packet_verdict_weighs_every_match() {
        use vigil_output::Verdict;
        let (alert, pass) = (sig("alert tcp any any -> any any (sid:1;)"), sig("pass tcp any any -> any any (sid:2;)"));
        let (drop, reject) =
            (sig("drop tcp any any -> any any (sid:3;)"), sig("rejectboth tcp any any -> any any (sid:4;)"));
        let v = |m: &[&Signature], ips| packet_verdict(m.iter().map(|s| (s.action, s.reject)), ips, false, true);
        assert_eq!(v(&[&alert], false), Verdict::Alert);
        assert_eq!(v(&[&alert, &pass], false), Verdict::Pass);
        assert_eq!(v(&[&drop, &alert], true), Verdict::Drop);
        assert_eq!(v(&[&drop, &alert], false), Verdict::Alert, "IDS: a drop rule alerts");
        assert_eq!(v(&[&alert, &reject], true), Verdict::Reject { inline: true, target: "both", tcp: true });
        let alone = [(alert.action, alert.reject)];
        assert_eq!(packet_verdict(alone.into_iter(), false, true, true), Verdict::Pass, "the flow is passed");
        assert_eq!(
            Verdict::Reject { inline: false, target: "to_client", tcp: false }.to_json()["reject"][0],
            "icmp-prohib"
        );
    }

    #[test]
    fn scope_follows_the_kind_of_signature() {
        assert!(!sig_covers(&sig("drop tcp any any -> any any (dsize:0; sid:1;)"), true));
        assert!(sig_covers(&sig("drop ip 10.0.0.1 any -> any any (sid:1;)"), false), "address only");
        assert!(sig_covers(&sig("drop http any any -> any any (sid:1;)"), false), "app layer");
        assert!(sig_covers(&sig("drop http any any -> any any (http.uri; content:\"/a\"; sid:1;)"), false));
        let payload = sig("drop tcp any any -> any any (content:\"evil\"; sid:1;)");
        assert!(sig_covers(&payload, true) && !sig_covers(&payload, false), "stream or packet match");
    }
}
