//! The rule header: action and protocol.

use vigil_rules::{ActionKind, ProtoClass, Rule};
use vigil_types::AppProto;

/// What a matching signature does, in Suricata's order of precedence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum RuleAction {
    Pass,
    Drop,
    Reject,
    Alert,
    /// `config`: changes what is logged for the flow or transaction; never alerts.
    Config,
}

impl RuleAction {
    /// The action as a rule writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            RuleAction::Pass => "pass",
            RuleAction::Drop => "drop",
            RuleAction::Reject => "reject",
            RuleAction::Alert => "alert",
            RuleAction::Config => "config",
        }
    }
}

/// `action-order`: the rank each action's signatures are evaluated in.
/// The default is Suricata's: pass, drop, reject, alert. `config`
/// signatures never decide a packet and come last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActionOrder([RuleAction; 4]);

impl Default for ActionOrder {
    fn default() -> Self {
        ActionOrder([RuleAction::Pass, RuleAction::Drop, RuleAction::Reject, RuleAction::Alert])
    }
}

impl ActionOrder {
    /// From the config's names, every action once; `None` for any other list.
    pub fn from_names<S: AsRef<str>>(names: &[S]) -> Option<ActionOrder> {
        let mut order = [RuleAction::Config; 4];
        if names.len() != order.len() {
            return None;
        }
        for (slot, name) in order.iter_mut().zip(names) {
            *slot = match name.as_ref() {
                "pass" => RuleAction::Pass,
                "drop" => RuleAction::Drop,
                "reject" => RuleAction::Reject,
                "alert" => RuleAction::Alert,
                _ => return None,
            };
        }
        let all = [RuleAction::Pass, RuleAction::Drop, RuleAction::Reject, RuleAction::Alert];
        all.iter().all(|a| order.contains(a)).then_some(ActionOrder(order))
    }

    /// Where `action`'s signatures come: lower first.
    pub fn rank(&self, action: RuleAction) -> usize {
        self.0.iter().position(|&a| a == action).unwrap_or(self.0.len())
    }
}

/// Where a `reject` signature sends its refusal (a TCP reset, else an ICMP
/// unreachable): `reject` and `rejectsrc` to the packet's source,
/// `rejectdst` to its destination, `rejectboth` to both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RejectTo {
    #[default]
    Src,
    Dst,
    Both,
}

impl RejectTo {
    pub fn to_src(self) -> bool {
        matches!(self, RejectTo::Src | RejectTo::Both)
    }

    pub fn to_dst(self) -> bool {
        matches!(self, RejectTo::Dst | RejectTo::Both)
    }
}

/// Which packets a signature's protocol admits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proto {
    /// `ip`: every IP packet.
    Ip,
    Ipv4,
    Ipv6,
    Tcp,
    Udp,
    /// `icmp`: ICMPv4 and ICMPv6, as Suricata has it.
    Icmp,
    Icmpv4,
    Icmpv6,
    Sctp,
    /// `pkthdr`: every packet, IP or not (decoder-event rules).
    PktHdr,
}

/// Where a rule's `reject` goes (meaningful only for reject actions).
pub(super) fn reject_to(rule: &Rule) -> RejectTo {
    match rule.header.action() {
        ActionKind::RejectDst => RejectTo::Dst,
        ActionKind::RejectBoth => RejectTo::Both,
        _ => RejectTo::Src,
    }
}

/// The action, the packets the protocol admits, and the application
/// protocol it names (`alert http ...`), if any.
pub(super) fn compile(rule: &Rule, missing: &mut Vec<String>) -> (RuleAction, Proto, Option<AppProto>) {
    let h = &rule.header;
    let action = match h.action() {
        ActionKind::Alert => RuleAction::Alert,
        ActionKind::Pass => RuleAction::Pass,
        ActionKind::Drop => RuleAction::Drop,
        ActionKind::Reject | ActionKind::RejectSrc | ActionKind::RejectDst | ActionKind::RejectBoth => {
            RuleAction::Reject
        }
        ActionKind::Config => RuleAction::Config,
        other => {
            missing.push(format!("action {}", other.as_str()));
            RuleAction::Alert
        }
    };
    // Suricata 8's explicit scopes in threat detection rules (`drop:packet`,
    // `pass:flow`); hooks and `accept` are firewall rules'.
    let scoped = h.actions.len() == 1
        && h.protocol.hook.is_none()
        && matches!(h.actions[0].scope.as_deref(), Some("packet" | "flow"))
        && action != RuleAction::Alert
        && action != RuleAction::Config;
    // A hook alone (`alert dns:request_complete`) is threat detection's too:
    // the rule inspects the transaction once it reaches that state.
    let hooked = h.actions.len() == 1
        && h.actions[0].scope.is_none()
        && h.protocol.hook.is_some()
        && matches!(action, RuleAction::Alert | RuleAction::Drop | RuleAction::Pass | RuleAction::Reject);
    if h.actions.len() > 1 || (h.is_firewall() && !scoped && !hooked) {
        missing.push("firewall rule".into());
    }
    if let Some(def) = vigil_applayer::proto::by_rule_name(h.protocol.name) {
        // A protocol of the table: its flows travel over what it says.
        let d = def.detection;
        let transport = match (d.tcp, d.udp) {
            (true, false) => Proto::Tcp,
            (false, true) => Proto::Udp,
            _ => Proto::Ip,
        };
        return (action, transport, Some(def.app_proto()));
    }
    let proto = match (h.protocol.class, h.protocol.name) {
        (ProtoClass::Packet, "ip") => Proto::Ip,
        (ProtoClass::Packet, "ipv4") => Proto::Ipv4,
        (ProtoClass::Packet, "ipv6") => Proto::Ipv6,
        (ProtoClass::Packet, "tcp" | "tcp-pkt" | "tcp-stream") => Proto::Tcp,
        (ProtoClass::Packet, "udp") => Proto::Udp,
        (ProtoClass::Packet, "icmp") => Proto::Icmp,
        (ProtoClass::Packet, "icmpv4") => Proto::Icmpv4,
        (ProtoClass::Packet, "icmpv6") => Proto::Icmpv6,
        (ProtoClass::Packet, "sctp") => Proto::Sctp,
        (ProtoClass::Packet, "pkthdr") => Proto::PktHdr,
        (_, name) => {
            // App-layer protocols need their parsers.
            missing.push(format!("protocol {name}"));
            Proto::Ip
        }
    };
    (action, proto, None)
}
