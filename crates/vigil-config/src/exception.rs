//! Exception policies: what to do with traffic the engine cannot fully
//! handle because a memcap was hit, a session started mid-stream, or a
//! parser failed (`exception-policy` and the `*-policy` keys, as Suricata
//! documents them). The config holds what was written; [`Exceptions::resolve`]
//! turns it into the policy each target applies in IDS or IPS mode.

use crate::read::{Errors, Section};

/// One policy, as written in the config.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Resolved by the mode: drop the flow in IPS, ignore in IDS.
    Auto,
    Ignore,
    DropPacket,
    DropFlow,
    PassPacket,
    PassFlow,
    /// Stop inspecting the flow (vigil has no capture bypass: the flow passes).
    Bypass,
    /// Refuse the flow: a reset or ICMP unreachable, then drop it.
    Reject,
}

impl Policy {
    fn parse(s: &str) -> Result<Policy, String> {
        Ok(match s {
            "auto" => Policy::Auto,
            "ignore" => Policy::Ignore,
            "drop-packet" => Policy::DropPacket,
            "drop-flow" => Policy::DropFlow,
            "pass-packet" => Policy::PassPacket,
            "pass-flow" => Policy::PassFlow,
            "bypass" => Policy::Bypass,
            "reject" => Policy::Reject,
            other => {
                return Err(format!(
                    "unknown exception policy {other:?} (auto, ignore, drop-packet, drop-flow, pass-packet, pass-flow, bypass, reject)"
                ))
            }
        })
    }

    /// The name in counters and EVE (`drop_flow`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Policy::Auto => "auto",
            Policy::Ignore => "ignore",
            Policy::DropPacket => "drop_packet",
            Policy::DropFlow => "drop_flow",
            Policy::PassPacket => "pass_packet",
            Policy::PassFlow => "pass_flow",
            Policy::Bypass => "bypass",
            Policy::Reject => "reject",
        }
    }

    /// Policies a target counts, in counter order.
    pub const COUNTED: [Policy; 6] =
        [Policy::DropFlow, Policy::DropPacket, Policy::PassPacket, Policy::PassFlow, Policy::Bypass, Policy::Reject];
}

/// What an exception policy guards, in the order EVE lists them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Target {
    /// `defrag.memcap-policy`: no room for another datagram's fragments.
    DefragMemcap,
    /// `stream.memcap-policy`: no room for another TCP session.
    StreamMemcap,
    /// `stream.reassembly.memcap-policy`: no room for a segment's data.
    StreamReassemblyMemcap,
    /// `flow.memcap-policy`: no room for another flow.
    FlowMemcap,
    /// `stream.midstream-policy`: a session whose handshake was not seen.
    StreamMidstream,
    /// `app-layer.error-policy`: a parser gave up on the flow.
    AppLayerError,
}

impl Target {
    pub const ALL: [Target; 6] = [
        Target::DefragMemcap,
        Target::StreamMemcap,
        Target::StreamReassemblyMemcap,
        Target::FlowMemcap,
        Target::StreamMidstream,
        Target::AppLayerError,
    ];

    /// Its place in [`Target::ALL`] (declaration order).
    pub fn index(self) -> usize {
        self as usize
    }

    /// The target's name in the flow record's `exception_policy` list.
    pub fn eve_name(self) -> &'static str {
        match self {
            Target::DefragMemcap => "defrag_memcap",
            Target::StreamMemcap => "stream_memcap",
            Target::StreamReassemblyMemcap => "stream_reassembly_memcap",
            Target::FlowMemcap => "flow_memcap",
            Target::StreamMidstream => "stream_midstream",
            Target::AppLayerError => "app_layer_error",
        }
    }

    /// Where its counters live under `exception_policy.` in stats.
    pub fn counter_prefix(self) -> &'static str {
        match self {
            Target::DefragMemcap => "defrag.memcap",
            Target::StreamMemcap => "tcp.ssn_memcap",
            Target::StreamReassemblyMemcap => "tcp.reassembly",
            Target::FlowMemcap => "flow.memcap",
            Target::StreamMidstream => "tcp.midstream",
            Target::AppLayerError => "app_layer.error",
        }
    }

    /// Targets met before a flow exists apply to the packet only.
    pub fn packet_only(self) -> bool {
        matches!(self, Target::DefragMemcap | Target::FlowMemcap)
    }
}

/// The policies as configured (`None`: not set).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Exceptions {
    /// `exception-policy`: the master switch for every target not set itself.
    pub master: Option<Policy>,
    /// Per target, in [`Target::ALL`] order.
    pub targets: [Option<Policy>; 6],
}

impl Exceptions {
    pub(crate) fn read(root: &Section<'_>, errs: &mut Errors) -> Exceptions {
        let get = |sec: Section<'_>, key: &str, errs: &mut Errors| sec.convert(key, errs, Policy::parse);
        let mut e = Exceptions { master: get(root.clone(), "exception-policy", errs), ..Exceptions::default() };
        for (i, t) in Target::ALL.into_iter().enumerate() {
            e.targets[i] = match t {
                Target::DefragMemcap => get(root.child("defrag"), "memcap-policy", errs),
                Target::StreamMemcap => get(root.child("stream"), "memcap-policy", errs),
                Target::StreamReassemblyMemcap => get(root.child("stream").child("reassembly"), "memcap-policy", errs),
                Target::FlowMemcap => get(root.child("flow"), "memcap-policy", errs),
                Target::StreamMidstream => get(root.child("stream"), "midstream-policy", errs),
                Target::AppLayerError => get(root.child("app-layer"), "error-policy", errs),
            };
        }
        e
    }

    /// The policy `target` applies: `ips` is the run's mode, `midstream`
    /// whether `stream.midstream` picks up sessions. Never `Auto`.
    pub fn resolve(&self, target: Target, ips: bool, midstream: bool) -> Policy {
        let auto = || {
            if !ips || (target == Target::StreamMidstream && midstream) {
                Policy::Ignore
            } else {
                Policy::DropFlow
            }
        };
        let p = match (self.targets[target.index()], self.master) {
            (Some(Policy::Auto), _) | (None, Some(Policy::Auto)) => auto(),
            (Some(p), _) | (None, Some(p)) => p,
            // Nothing set: an IPS that does not pick up sessions mid-stream fails closed.
            (None, None) if ips && !midstream => Policy::DropFlow,
            (None, None) => Policy::Ignore,
        };
        // An IDS cannot drop or refuse: it ignores instead.
        let p = match p {
            Policy::DropFlow | Policy::DropPacket | Policy::Reject if !ips => Policy::Ignore,
            p => p,
        };
        // A session picked up mid-stream is followed only when ignored or passed.
        let p = match p {
            Policy::DropPacket | Policy::PassPacket if target == Target::StreamMidstream => Policy::Ignore,
            p => p,
        };
        if target.packet_only() {
            return match p {
                Policy::DropFlow => Policy::DropPacket,
                Policy::PassFlow => Policy::PassPacket,
                Policy::Bypass => Policy::Ignore,
                p => p,
            };
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(master: Option<Policy>, t: Target, p: Option<Policy>) -> Exceptions {
        let mut e = Exceptions { master, ..Exceptions::default() };
        e.targets[t.index()] = p;
        e
    }

    #[test]
    fn resolution_follows_the_mode() {
        let none = Exceptions::default();
        // Nothing set: an IPS fails closed, an IDS ignores; midstream pick-up turns it off.
        assert_eq!(none.resolve(Target::StreamMemcap, true, false), Policy::DropFlow);
        assert_eq!(none.resolve(Target::StreamMemcap, true, true), Policy::Ignore);
        assert_eq!(none.resolve(Target::StreamMemcap, false, false), Policy::Ignore);
        // Packet-only targets cannot drop a flow.
        assert_eq!(none.resolve(Target::FlowMemcap, true, false), Policy::DropPacket);
        let e = with(None, Target::StreamReassemblyMemcap, Some(Policy::PassFlow));
        assert_eq!(e.resolve(Target::StreamReassemblyMemcap, false, false), Policy::PassFlow);
        // The master covers targets not set; auto follows the mode.
        let e = with(Some(Policy::Ignore), Target::FlowMemcap, Some(Policy::DropFlow));
        assert_eq!(e.resolve(Target::FlowMemcap, true, true), Policy::DropPacket);
        assert_eq!(e.resolve(Target::StreamMidstream, true, false), Policy::Ignore);
        let e = with(Some(Policy::Auto), Target::FlowMemcap, None);
        assert_eq!(e.resolve(Target::StreamMidstream, true, true), Policy::Ignore);
        assert_eq!(e.resolve(Target::StreamMidstream, true, false), Policy::DropFlow);
        assert_eq!(e.resolve(Target::StreamMemcap, false, false), Policy::Ignore);
        assert_eq!(
            with(None, Target::DefragMemcap, Some(Policy::Bypass)).resolve(Target::DefragMemcap, true, false),
            Policy::Ignore
        );
        assert!(Target::ALL.iter().enumerate().all(|(i, t)| t.index() == i));
    }

    #[test]
    fn reads_the_keys_and_names_bad_values() {
        let yaml = "%YAML 1.1\n---\nexception-policy: ignore\nstream:\n  midstream-policy: drop-flow\n  reassembly:\n    memcap-policy: pass-flow\nflow:\n  memcap-policy: sideways\n";
        let tree = crate::ConfigTree::parse_str(yaml, "t.yaml").unwrap();
        let (c, errs, _) = crate::Config::from_tree(&tree);
        assert_eq!(c.exceptions.master, Some(Policy::Ignore));
        assert_eq!(c.exceptions.targets[4], Some(Policy::DropFlow));
        assert_eq!(c.exceptions.targets[2], Some(Policy::PassFlow));
        assert_eq!(c.exceptions.targets[3], None);
        let e = errs.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n");
        assert!(e.contains("flow.memcap-policy") && e.contains("sideways") && e.contains("t.yaml:9"), "{e}");
    }
}
