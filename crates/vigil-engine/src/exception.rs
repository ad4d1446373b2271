//! Exception policies at work: when a memcap is hit or a TCP session is
//! picked up mid-stream, the stage that saw it names the target, and the
//! detector applies the configured policy to the packet (or its flow)
//! before any rule runs: drop it (the IPS verdict), pass it uninspected, or
//! carry on. Each application is counted under Suricata's
//! `exception_policy.<target>.<policy>` names, and the flow record lists the
//! targets its flow met.

use vigil_config::{ExceptionPolicy as Policy, ExceptionTarget as Target, Exceptions};
use vigil_output::DropReason;

/// The resolved policies of a run and what they did, per worker.
#[derive(Debug, Clone)]
pub(crate) struct ExceptionState {
    /// By [`Target::ALL`] index; never `Auto`.
    pub policies: [Policy; 6],
    /// Applications by target and [`Policy::COUNTED`] index.
    pub hits: [[u64; 6]; 6],
    /// The target the packet in hand met, for the detector to apply.
    pub pending: Option<Target>,
    ips: bool,
}

impl ExceptionState {
    pub(crate) fn new(cfg: &Exceptions, ips: bool, midstream: bool) -> Self {
        let policies = Target::ALL.map(|t| cfg.resolve(t, ips, midstream));
        ExceptionState { policies, hits: [[0; 6]; 6], pending: None, ips }
    }

    /// A stage met `target` on the packet in hand (the first one counts).
    pub(crate) fn met(&mut self, target: Target) {
        self.pending.get_or_insert(target);
    }

    pub(crate) fn policy(&self, t: Target) -> Policy {
        self.policies[t.index()]
    }

    /// Counts an application of `t`'s policy.
    pub(crate) fn count(&mut self, t: Target) {
        let p = self.policy(t);
        if let Some(i) = Policy::COUNTED.iter().position(|&c| c == p) {
            self.hits[t.index()][i] += 1;
        }
    }

    /// `exception_policy.*` counters: for every target whose policy is not
    /// `ignore`, each policy it could apply in this mode.
    pub(crate) fn named(&self) -> Vec<(String, u64)> {
        let mut out = Vec::new();
        for (ti, t) in Target::ALL.into_iter().enumerate() {
            if self.policies[ti] == Policy::Ignore {
                continue;
            }
            for (pi, p) in Policy::COUNTED.into_iter().enumerate() {
                let drops = matches!(p, Policy::DropFlow | Policy::DropPacket | Policy::Reject);
                let flow_wide = matches!(p, Policy::DropFlow | Policy::PassFlow | Policy::Bypass);
                if (drops && !self.ips) || (flow_wide && t.packet_only()) {
                    continue;
                }
                out.push((format!("exception_policy.{}.{}", t.counter_prefix(), p.name()), self.hits[ti][pi]));
            }
        }
        out
    }

    /// The flow record's `exception_policy` list for a flow's bits.
    pub(crate) fn flow_list(&self, bits: u8) -> Vec<(&'static str, &'static str)> {
        Target::ALL
            .into_iter()
            .enumerate()
            .filter(|(i, _)| bits & (1 << i) != 0)
            .map(|(i, t)| (t.eve_name(), self.policies[i].name()))
            .collect()
    }
}

/// The drop record's reason for a target.
pub(crate) fn drop_reason(t: Target) -> DropReason {
    match t {
        Target::DefragMemcap => DropReason::DefragMemcap,
        Target::StreamMemcap => DropReason::StreamMemcap,
        Target::StreamReassemblyMemcap => DropReason::StreamReassembly,
        Target::FlowMemcap => DropReason::FlowMemcap,
        Target::StreamMidstream => DropReason::StreamMidstream,
        Target::AppLayerError => DropReason::ApplayerError,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_name_the_policies_a_target_can_apply() {
        let mut cfg = Exceptions::default();
        cfg.targets[Target::StreamMidstream.index()] = Some(Policy::DropFlow);
        let mut s = ExceptionState::new(&cfg, true, false);
        s.count(Target::StreamMidstream);
        let named = s.named();
        assert!(named.contains(&("exception_policy.tcp.midstream.drop_flow".into(), 1)));
        // An IPS with nothing else set fails closed everywhere: flow memcap drops packets.
        assert!(named.contains(&("exception_policy.flow.memcap.drop_packet".into(), 0)));
        assert!(!named.iter().any(|(n, _)| n == "exception_policy.flow.memcap.drop_flow"));
        // An IDS counts nothing it cannot do, and nothing ignored.
        let ids = ExceptionState::new(&Exceptions::default(), false, false);
        assert!(ids.named().is_empty());
        assert_eq!(s.flow_list(1 << Target::StreamMidstream.index()), [("stream_midstream", "drop_flow")]);
    }
}
