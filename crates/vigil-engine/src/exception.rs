//! Exception policies at work: when a memcap is hit or a TCP session is
//! picked up mid-stream, the stage that saw it names the target, and the
//! detector applies the configured policy to the packet (or its flow)
//! before any rule runs: drop it (the IPS verdict), pass it uninspected, or
//! carry on. Each application is counted under Suricata's
//! `exception_policy.<target>.<policy>` names, and the flow record lists the
//! targets its flow met.

use vigil_applayer::Transport;
use vigil_config::{ExceptionPolicy as Policy, ExceptionTarget as Target, Exceptions};
use vigil_output::DropReason;
use vigil_types::AppProto;

/// The resolved policies of a run and what they did, per worker.
#[derive(Debug, Clone)]
pub(crate) struct ExceptionState {
    /// By [`Target::ALL`] index; never `Auto`.
    pub policies: [Policy; 6],
    /// Applications by target and [`Policy::COUNTED`] index.
    pub hits: [[u64; 6]; 6],
    /// The target the packet in hand met, for the detector to apply.
    pub pending: Option<Target>,
    /// The protocol slot ([`crate::app::error_slot`]) of the app-layer error in hand.
    pending_app: Option<usize>,
    /// `stats.exception-policy.per-app-proto-errors`: app-layer error
    /// policy applications by protocol slot and policy.
    per_app: Option<Vec<[u64; 6]>>,
    ips: bool,
}

impl ExceptionState {
    pub(crate) fn new(cfg: &Exceptions, ips: bool, midstream: bool, per_app: bool) -> Self {
        let policies = Target::ALL.map(|t| cfg.resolve(t, ips, midstream));
        let per_app = per_app.then(|| vec![[0; 6]; crate::app::error_slots()]);
        ExceptionState { policies, hits: [[0; 6]; 6], pending: None, pending_app: None, per_app, ips }
    }

    /// A stage met `target` on the packet in hand (the first one counts).
    pub(crate) fn met(&mut self, target: Target) {
        self.pending.get_or_insert(target);
    }

    /// The application layer of the packet's flow failed.
    pub(crate) fn met_app_error(&mut self, proto: AppProto, transport: Transport) {
        if self.pending.is_none() {
            self.pending_app = crate::app::error_slot(proto, transport);
        }
        self.met(Target::AppLayerError);
    }

    /// A new packet: nothing met yet.
    pub(crate) fn clear(&mut self) {
        self.pending = None;
        self.pending_app = None;
    }

    pub(crate) fn policy(&self, t: Target) -> Policy {
        self.policies[t.index()]
    }

    /// Counts an application of `t`'s policy.
    pub(crate) fn count(&mut self, t: Target) {
        let p = self.policy(t);
        if let Some(i) = Policy::COUNTED.iter().position(|&c| c == p) {
            self.hits[t.index()][i] += 1;
            let app = if t == Target::AppLayerError { self.pending_app.take() } else { None };
            if let Some(row) = app.and_then(|slot| self.per_app.as_mut()?.get_mut(slot)) {
                row[i] += 1;
            }
        }
    }

    /// Whether `p` is a policy `t` can apply in this mode (and so is counted).
    fn applicable(&self, t: Target, p: Policy) -> bool {
        let drops = matches!(p, Policy::DropFlow | Policy::DropPacket | Policy::Reject);
        let flow_wide = matches!(p, Policy::DropFlow | Policy::PassFlow | Policy::Bypass);
        !((drops && !self.ips) || (flow_wide && t.packet_only()))
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
                if self.applicable(t, p) {
                    out.push((format!("exception_policy.{}.{}", t.counter_prefix(), p.name()), self.hits[ti][pi]));
                }
            }
        }
        let app_error = Target::AppLayerError;
        if let Some(per_app) = self.per_app.as_ref().filter(|_| self.policy(app_error) != Policy::Ignore) {
            for (slot, name) in crate::app::error_names() {
                let hits = per_app.get(slot).copied().unwrap_or_default();
                for (pi, p) in Policy::COUNTED.into_iter().enumerate() {
                    if self.applicable(app_error, p) {
                        out.push((format!("app_layer.error.{name}.exception_policy.{}", p.name()), hits[pi]));
                    }
                }
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
        let mut s = ExceptionState::new(&cfg, true, false, false);
        s.count(Target::StreamMidstream);
        let named = s.named();
        assert!(named.contains(&("exception_policy.tcp.midstream.drop_flow".into(), 1)));
        // An IPS with nothing else set fails closed everywhere: flow memcap drops packets.
        assert!(named.contains(&("exception_policy.flow.memcap.drop_packet".into(), 0)));
        assert!(!named.iter().any(|(n, _)| n == "exception_policy.flow.memcap.drop_flow"));
        // An IDS counts nothing it cannot do, and nothing ignored.
        let ids = ExceptionState::new(&Exceptions::default(), false, false, false);
        assert!(ids.named().is_empty());
        assert_eq!(s.flow_list(1 << Target::StreamMidstream.index()), [("stream_midstream", "drop_flow")]);
    }
}
