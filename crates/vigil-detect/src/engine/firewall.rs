//! Suricata 8's firewall mode: a rule set of its own, read in file order,
//! that must accept traffic before threat detection sees it.
//!
//! Each packet meets the packet tables ([`Firewall::packet_filter`]: the
//! `pre_flow` and `pre_stream` tables, then the filter, rules hooked at
//! `<ip proto>:all` and `:flow_start`); the filter's default is to drop the
//! packet. A packet that brought application data then meets the
//! application filter ([`Firewall::app_filter`]): every state a transaction
//! went through on the packet's side (`ssh:request_banner_done`, ...) needs
//! a rule that accepts it, else the flow is dropped. `accept:hook` lets the
//! next state (or table) decide, `accept:tx` the rest of the transaction,
//! `accept:flow` the rest of the flow, `accept:packet` this packet. Each
//! hook's default can be configured ([`FwDefaults`]). The engine runs
//! threat detection's packet rules between the two filters, and its
//! transaction rules after them.

use super::tx::tx_matches;
use super::{app_proto_ok, matches, payload_matches, tx_header_matches, StreamInput};
use crate::compile::{compile, FlowInfo, Signature, Unsupported};
use crate::flowbits::{BitAction, BitTest, FlowBits, FlowDetect};
use std::net::IpAddr;
use vigil_applayer::proto::ProtoDef;
use vigil_applayer::TxRef;
use vigil_decode::Packet;
use vigil_rules::{ActionKind, Classifications, ProtoClass, Rule};
use vigil_types::Direction;

/// What a firewall rule's primary action covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FwScope {
    Packet,
    Flow,
    /// The state (or packet table) it is hooked at: the next one decides.
    Hook,
    /// The rest of the transaction.
    Tx,
}

impl FwScope {
    fn parse(s: &str) -> Option<FwScope> {
        Some(match s {
            "packet" => FwScope::Packet,
            "flow" => FwScope::Flow,
            "hook" => FwScope::Hook,
            "tx" => FwScope::Tx,
            _ => return None,
        })
    }
}

/// The packet tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketHook {
    /// Every packet.
    All,
    /// The first packet of each direction of a flow.
    FlowStart,
    /// Before the packet's flow is looked up (no flow keyword can match).
    PreFlow,
    /// Before the packet's stream is updated.
    PreStream,
}

/// Where a rule is hooked.
#[derive(Debug, Clone, Copy)]
pub enum FwHook {
    Packet(PacketHook),
    /// A state of one side of a protocol's transactions; `prior`: the rule
    /// also accepts the states before it (`tls:<client_hello_done`).
    App {
        def: &'static ProtoDef,
        side: Direction,
        state: u8,
        prior: bool,
    },
}

/// One firewall rule.
#[derive(Debug)]
pub struct FwRule {
    pub sig: Signature,
    /// `true` for accept, `false` for drop (or reject).
    pub accept: bool,
    /// A `reject`: the drop is also refused.
    pub reject: bool,
    pub scope: FwScope,
    pub hook: FwHook,
    /// It also raises an alert (`alert` among its actions or keywords).
    pub alert: bool,
    /// `pass:packet` / `pass:flow` among its secondary actions: threat
    /// detection skips the packet or the flow.
    pub pass: Option<FwScope>,
    /// Its actions as EVE `firewall.policy` shows them (`accept:hook,alert`).
    pub policy: String,
    /// The table as EVE `firewall.hook` names it (`packet:filter`, `ssh:request_banner_done`).
    pub table: String,
    /// The rule as written, where the loader kept it (engine analysis).
    pub raw: String,
}

/// Why the firewall dropped a packet (`firewall.drop_reason.*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FwDrop {
    Rules,
    DefaultPacketPolicy,
    DefaultAppPolicy,
    /// A drop in the `pre_flow` or `pre_stream` table (a rule's or its default's).
    PreFlowHook,
    PreStreamHook,
}

/// The firewall's decision on a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FwVerdict {
    Accept,
    /// `flow`: the rest of the flow is dropped too; `reject`: the packet is
    /// also refused (a TCP reset or an ICMP unreachable where there is a network).
    Drop {
        flow: bool,
        reason: FwDrop,
        reject: bool,
    },
}

/// The packet tables' outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FwPacket {
    /// Decided here (`accept:packet`, `accept:flow`, a drop).
    Verdict(FwVerdict),
    /// `accept:hook` in the filter: the application filter decides.
    ToApp,
}

/// What the firewall keeps per flow.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct FwFlow {
    /// `accept:flow` matched: nothing more is evaluated.
    pub accepted: bool,
    /// The first packet of each direction (to server, to client) was seen.
    started: [bool; 2],
    /// Per transaction: accepted whole, or the last state accepted per side.
    txs: Vec<FwTx>,
    /// `pass:flow` matched: threat detection skips the flow.
    pub td_passed: bool,
    /// The firewall dropped the flow.
    pub dropped: bool,
}

impl FwFlow {
    /// The flow was turned round: per-direction state changes sides.
    pub fn reverse(&mut self) {
        self.started.swap(0, 1);
        for t in &mut self.txs {
            t.done.swap(0, 1);
            t.seen.swap(0, 1);
            t.seen_updates.swap(0, 1);
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct FwTx {
    id: u64,
    accepted: bool,
    /// The last state accepted with `accept:hook`, per side.
    done: [Option<u8>; 2],
    /// The state each side was in when last evaluated (a complete side is
    /// not evaluated again), and the side's update count then.
    seen: [Option<u8>; 2],
    seen_updates: [Option<u64>; 2],
    /// Rules with buffers that matched already: not run on it again; they
    /// accept its state silently when no other rule does.
    stored: Vec<u32>,
    /// `xbits` set on it (`track tx`), by name id.
    bits: Vec<u64>,
}

/// The transactions of a packet's flow, for the application filter.
pub struct FwApp<'a> {
    pub def: &'static ProtoDef,
    /// Every live transaction, oldest first.
    pub txs: &'a [TxRef<'a>],
    pub client: (IpAddr, u16),
    pub server: (IpAddr, u16),
    pub now_secs: i64,
    /// The packet brought application data on its side: the application
    /// filter runs (other packets are accepted by the packet filter alone).
    pub updated: bool,
}

/// A rule (or a default policy) that decided or matched, for its alert.
pub struct FwMatch<'f> {
    pub sig: &'f Signature,
    /// EVE `firewall.hook`.
    pub table: &'f str,
    /// EVE `firewall.policy`.
    pub policy: &'f str,
    pub accept: bool,
    /// It raises an alert.
    pub alert: bool,
    /// `pass:packet`/`pass:flow` among its actions.
    pub pass: Option<FwScope>,
    pub tx: Option<u64>,
}

impl<'f> FwMatch<'f> {
    fn of(r: &'f FwRule, tx: Option<u64>) -> Self {
        FwMatch { sig: &r.sig, table: &r.table, policy: &r.policy, accept: r.accept, alert: r.alert, pass: r.pass, tx }
    }
}

/// What a hook does with traffic no rule decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FwDefault {
    pub accept: bool,
    pub scope: FwScope,
    pub alert: bool,
    pub reject: bool,
    /// EVE `firewall.policy` (`drop:flow`, `accept:hook,alert`).
    policy: String,
    /// EVE `firewall.hook`.
    table: String,
}

impl FwDefault {
    /// `accept`/`drop` (`reject`) with `scope`, alerting or not, for the
    /// hook EVE names `table`.
    pub fn new(spec: FwPolicySpec, table: &str) -> FwDefault {
        let FwPolicySpec { accept, scope, alert, reject } = spec;
        let scope_name = match scope {
            FwScope::Packet => "packet",
            FwScope::Flow => "flow",
            FwScope::Hook => "hook",
            FwScope::Tx => "tx",
        };
        let verb = match (accept, reject) {
            (true, _) => "accept",
            (false, false) => "drop",
            (false, true) => "reject",
        };
        let mut policy = format!("{verb}:{scope_name}");
        if alert {
            policy.push_str(",alert");
        }
        FwDefault { accept, scope, alert, reject, policy, table: table.to_string() }
    }
}

/// A policy as the configuration gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FwPolicySpec {
    pub accept: bool,
    pub scope: FwScope,
    pub alert: bool,
    /// A drop that is also refused (`reject:packet`, `reject:flow`).
    pub reject: bool,
}

impl FwPolicySpec {
    const fn of(accept: bool, scope: FwScope) -> FwPolicySpec {
        FwPolicySpec { accept, scope, alert: false, reject: false }
    }
}

/// Every hook's default policy, resolved once, and the signatures their
/// alerts carry.
#[derive(Debug)]
pub struct FwDefaults {
    pre_flow: FwDefault,
    pre_stream: FwDefault,
    filter: FwDefault,
    /// Per protocol and side, by state.
    app: Vec<(&'static str, Direction, Vec<FwDefault>)>,
    packet_sig: Signature,
    app_sig: Signature,
}

impl Default for FwDefaults {
    fn default() -> Self {
        FwDefaults::new(&|_| None, &|_, _| None)
    }
}

/// The signature a default policy's alert carries.
fn policy_signature(msg: &str, sid: u32) -> Signature {
    let text = format!("alert ip any any -> any any (msg:\"{msg}\"; sid:{sid};)");
    let set = vigil_rules::Loader::new().load_str(&text, "<firewall policies>").expect("a fixed rule loads");
    compile(&set.rules[0], &Classifications::default()).expect("a fixed rule compiles")
}

impl FwDefaults {
    /// Suricata's built-in defaults (the filter drops the packet, the pre
    /// tables go on, every application state drops the flow) where `packet`
    /// (by `filter`, `pre_flow`, `pre_stream`) and `app` (by protocol and
    /// hook name) say nothing.
    pub fn new(
        packet: &dyn Fn(&str) -> Option<FwPolicySpec>,
        app: &dyn Fn(&str, &str) -> Option<FwPolicySpec>,
    ) -> FwDefaults {
        let pkt = |hook: &str, builtin: FwPolicySpec| {
            FwDefault::new(packet(hook).unwrap_or(builtin), &format!("packet:{hook}"))
        };
        let mut per_proto = Vec::new();
        for def in vigil_applayer::protocols::ALL {
            for side in [Direction::ToServer, Direction::ToClient] {
                let states = def.hooks.states(side);
                let generic = match side {
                    Direction::ToServer => ["request_started", "request_complete"],
                    Direction::ToClient => ["response_started", "response_complete"],
                };
                let list = states
                    .iter()
                    .enumerate()
                    .map(|(i, name)| {
                        // A state answers to its own name and, first and last, to the generic
                        // ones; the protocol to its name and its aliases (`http1`).
                        let lookup = |hook: &str| {
                            std::iter::once(def.name).chain(def.aliases.iter().copied()).find_map(|p| app(p, hook))
                        };
                        let spec = lookup(name)
                            .or_else(|| (i == 0).then(|| lookup(generic[0])).flatten())
                            .or_else(|| (i + 1 == states.len()).then(|| lookup(generic[1])).flatten());
                        let spec = spec.unwrap_or(FwPolicySpec::of(false, FwScope::Flow));
                        FwDefault::new(spec, &format!("{}:{name}", def.name))
                    })
                    .collect();
                per_proto.push((def.name, side, list));
            }
        }
        FwDefaults {
            pre_flow: pkt("pre_flow", FwPolicySpec::of(true, FwScope::Hook)),
            pre_stream: pkt("pre_stream", FwPolicySpec::of(true, FwScope::Hook)),
            filter: pkt("filter", FwPolicySpec::of(false, FwScope::Packet)),
            app: per_proto,
            packet_sig: policy_signature("SURICATA FW default packet policy", 2201000),
            app_sig: policy_signature("SURICATA FW default app policy", 2201001),
        }
    }

    fn app(&self, proto: &str, side: Direction, state: u8) -> Option<&FwDefault> {
        let (_, _, list) = self.app.iter().find(|(n, d, _)| *n == proto && *d == side)?;
        list.get(state as usize)
    }
}

/// The firewall rule set, compiled.
#[derive(Debug, Default)]
pub struct Firewall {
    rules: Vec<FwRule>,
    /// Packet rules per table, in file order: pre_flow, pre_stream, filter.
    packet: [Vec<u32>; 3],
    /// App rules per (protocol, side), in state order then file order.
    app: Vec<(&'static str, Direction, Vec<u32>)>,
    flowbit_names: Vec<String>,
    defaults: FwDefaults,
}

/// Where an application state's decision leaves the evaluation.
enum AppStep {
    Verdict(FwVerdict),
    /// `accept:tx`: the rest of the transaction is accepted.
    TxDone,
    /// `accept:hook`: on to the next state.
    Next,
}

/// Why a firewall rule cannot load.
#[derive(Debug)]
pub enum FwError {
    /// Suricata refuses it.
    Invalid(String),
    /// vigil does not run one of its keywords yet.
    Unsupported(Unsupported),
}

/// Compiles one firewall rule.
pub fn compile_fw(rule: &Rule, classes: &Classifications) -> Result<FwRule, FwError> {
    let h = &rule.header;
    let first = &h.actions[0];
    let (accept, reject) = match first.kind {
        ActionKind::Accept => (true, false),
        ActionKind::Drop => (false, false),
        ActionKind::Reject | ActionKind::RejectSrc | ActionKind::RejectDst | ActionKind::RejectBoth => (false, true),
        other => {
            return Err(FwError::Invalid(format!(
                "firewall rules need accept, drop or reject as their first action, not {}",
                other.as_str()
            )))
        }
    };
    let Some(scope) = first.scope.as_deref() else {
        return Err(FwError::Invalid(format!("firewall rule action {} needs an explicit scope", first.kind.as_str())));
    };
    let scope = FwScope::parse(scope).ok_or_else(|| FwError::Invalid(format!("unknown action scope {}", first)))?;
    if !accept && !matches!(scope, FwScope::Packet | FwScope::Flow) {
        return Err(FwError::Invalid(format!("{first}: {} takes the scope packet or flow", first.kind.as_str())));
    }
    let Some(hook) = h.protocol.hook.as_deref() else {
        return Err(FwError::Invalid(format!("firewall rule protocol {} needs a hook", h.protocol.name)));
    };
    let mut alert = false;
    let mut pass = None;
    for a in &h.actions[1..] {
        match (a.kind, a.scope.as_deref()) {
            (ActionKind::Alert, None) => alert = true,
            (ActionKind::Pass, s) => {
                pass = Some(match s.map(FwScope::parse) {
                    None => FwScope::Flow,
                    Some(Some(sc @ (FwScope::Packet | FwScope::Flow))) => sc,
                    _ => return Err(FwError::Invalid(format!("{a}: pass takes the scope packet or flow"))),
                })
            }
            _ => return Err(FwError::Invalid(format!("{a} cannot follow a firewall action"))),
        }
    }
    let hook = match h.protocol.class {
        ProtoClass::Packet => {
            let ph = match hook {
                "all" => PacketHook::All,
                "flow_start" => PacketHook::FlowStart,
                "pre_flow" => PacketHook::PreFlow,
                "pre_stream" => PacketHook::PreStream,
                other => return Err(FwError::Invalid(format!("unknown packet hook {}:{other}", h.protocol.name))),
            };
            if scope == FwScope::Tx {
                return Err(FwError::Invalid(format!("{first} does not apply to packet hooks")));
            }
            FwHook::Packet(ph)
        }
        _ => {
            let def = vigil_applayer::proto::by_rule_name(h.protocol.name).ok_or_else(|| {
                FwError::Unsupported(Unsupported {
                    keywords: vec![format!("protocol {}", h.protocol.name)],
                    errors: Vec::new(),
                })
            })?;
            let (prior, name) = match hook.strip_prefix('<') {
                Some(rest) => (true, rest),
                None => (false, hook),
            };
            let (side, state) = def
                .hooks
                .state(name)
                .ok_or_else(|| FwError::Invalid(format!("unknown hook {}:{name}", h.protocol.name)))?;
            FwHook::App { def, side, state, prior }
        }
    };
    // The rest compiles as a threat detection rule of the same protocol,
    // inspecting the hooked side.
    let mut plain = rule.clone();
    plain.header.actions = vec![vigil_rules::header::Action { kind: ActionKind::Alert, scope: None }];
    plain.header.protocol.hook = None;
    let mut sig = compile(&plain, classes).map_err(FwError::Unsupported)?;
    alert |= sig.also_alert;
    if let (FwHook::App { side, .. }, Some(tx)) = (hook, sig.tx.as_mut()) {
        // The hook says which side is inspected, buffers included.
        tx.side = side;
        for b in &mut tx.buffers {
            b.dir = side;
        }
    }
    let mut policy = first.to_string();
    for a in &h.actions[1..] {
        policy.push(',');
        policy.push_str(&a.to_string());
    }
    if alert && !h.actions.iter().any(|a| a.kind == ActionKind::Alert) {
        policy.push_str(",alert");
    }
    let table = match hook {
        FwHook::Packet(PacketHook::PreFlow) => "packet:pre_flow".to_string(),
        FwHook::Packet(PacketHook::PreStream) => "packet:pre_stream".to_string(),
        FwHook::Packet(_) => "packet:filter".to_string(),
        FwHook::App { def, side, state, .. } => {
            format!("{}:{}", def.name, def.hooks.states(side)[state as usize])
        }
    };
    Ok(FwRule { sig, accept, reject, scope, hook, alert, pass, policy, table, raw: String::new() })
}

impl Firewall {
    /// The rule set, in file order, with the hooks' default policies.
    /// `flowbits`: threat detection's flowbit names by id; the firewall's
    /// rules share them (a name of their own gets an id after them).
    pub fn build(mut rules: Vec<FwRule>, defaults: FwDefaults, flowbits: &[String]) -> Firewall {
        let flowbit_names = super::number_flowbits_from(flowbits, rules.iter_mut().map(|r| &mut r.sig));
        let mut packet: [Vec<u32>; 3] = Default::default();
        let mut app: Vec<(&'static str, Direction, Vec<u32>)> = Vec::new();
        for (i, r) in rules.iter().enumerate() {
            match r.hook {
                FwHook::Packet(PacketHook::PreFlow) => packet[0].push(i as u32),
                FwHook::Packet(PacketHook::PreStream) => packet[1].push(i as u32),
                FwHook::Packet(PacketHook::All | PacketHook::FlowStart) => packet[2].push(i as u32),
                FwHook::App { def, side, .. } => match app.iter_mut().find(|(n, d, _)| *n == def.name && *d == side) {
                    Some(e) => e.2.push(i as u32),
                    None => app.push((def.name, side, vec![i as u32])),
                },
            }
        }
        for (_, _, list) in &mut app {
            // Stable: file order within a state.
            list.sort_by_key(|&i| match rules[i as usize].hook {
                FwHook::App { state, .. } => state,
                FwHook::Packet(_) => 0,
            });
        }
        Firewall { rules, packet, app, flowbit_names, defaults }
    }

    pub fn rules(&self) -> &[FwRule] {
        &self.rules
    }

    /// A packet table's default policy (as EVE writes it) and its rules, in
    /// evaluation order, for engine analysis.
    pub fn packet_table(&self, hook: PacketHook) -> (&str, Vec<&FwRule>) {
        let (i, d) = match hook {
            PacketHook::PreFlow => (0, &self.defaults.pre_flow),
            PacketHook::PreStream => (1, &self.defaults.pre_stream),
            PacketHook::All | PacketHook::FlowStart => (2, &self.defaults.filter),
        };
        (&d.policy, self.packet[i].iter().map(|&r| &self.rules[r as usize]).collect())
    }

    /// An application state's default policy and the rules hooked at it
    /// (those of a later state with `<` included), for engine analysis.
    pub fn app_table(&self, proto: &'static ProtoDef, side: Direction, state: u8) -> (&str, Vec<&FwRule>) {
        let policy = self.defaults.app(proto.name, side, state).map_or("drop:flow", |d| d.policy.as_str());
        let rules = self
            .app
            .iter()
            .filter(|(n, d, _)| *n == proto.name && *d == side)
            .flat_map(|(_, _, l)| l.iter().map(|&i| &self.rules[i as usize]))
            .filter(|r| matches!(r.hook, FwHook::App { state: s, prior, .. } if s == state || prior && state < s))
            .collect();
        (policy, rules)
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Flowbit names by id: threat detection's, then the firewall's own.
    pub fn flowbit_names(&self) -> &[String] {
        &self.flowbit_names
    }

    /// Whether the `pre_flow` or `pre_stream` table (`hook`) can do anything
    /// but hand over: it has rules, or a default other than `accept:hook`.
    pub fn has_pre(&self, hook: PacketHook) -> bool {
        let (list, default) = match hook {
            PacketHook::PreFlow => (&self.packet[0], &self.defaults.pre_flow),
            PacketHook::PreStream => (&self.packet[1], &self.defaults.pre_stream),
            _ => return false,
        };
        let hands_over = default.accept && default.scope == FwScope::Hook && !default.alert;
        !(list.is_empty() && hands_over)
    }

    /// The `pre_flow` table's decision (before the packet's flow is looked
    /// up: `flow` and `state` are `None`) or the `pre_stream` table's
    /// (before its stream is updated). `None`: the next table decides.
    #[allow(clippy::too_many_arguments)]
    pub fn pre_table<'f>(
        &'f self,
        hook: PacketHook,
        p: &Packet<'_>,
        flow: Option<FlowInfo>,
        state: Option<&mut FlowDetect>,
        s: &mut super::DetectScratch,
        on_match: &mut dyn FnMut(FwMatch<'f>),
    ) -> Option<FwVerdict> {
        let (i, default, reason) = match hook {
            PacketHook::PreFlow => (0, &self.defaults.pre_flow, FwDrop::PreFlowHook),
            PacketHook::PreStream => (1, &self.defaults.pre_stream, FwDrop::PreStreamHook),
            _ => return None,
        };
        let mut spare = FlowDetect::default();
        let st = match state {
            Some(st) => st,
            None => &mut spare,
        };
        if st.fw.accepted {
            return None;
        }
        let payload = p.payload();
        self.table(
            &self.packet[i],
            default,
            reason,
            reason,
            p,
            flow,
            st,
            payload,
            StreamInput::default(),
            true,
            s,
            on_match,
        )
    }

    /// The filter's decision on `p` (rules hooked at `<proto>:all` and
    /// `:flow_start`); `on_match` gets each rule that matched, in order, and
    /// each default policy that alerts.
    #[allow(clippy::too_many_arguments)]
    pub fn packet_filter<'f>(
        &'f self,
        p: &Packet<'_>,
        flow: Option<FlowInfo>,
        state: Option<&mut FlowDetect>,
        stream: StreamInput<'_>,
        s: &mut super::DetectScratch,
        on_match: &mut dyn FnMut(FwMatch<'f>),
    ) -> FwPacket {
        let mut spare = FlowDetect::default();
        let st = match state {
            Some(st) => st,
            None => &mut spare,
        };
        if st.fw.accepted {
            return FwPacket::Verdict(FwVerdict::Accept);
        }
        let first_in_dir = match flow {
            Some(f) => !std::mem::replace(&mut st.fw.started[usize::from(!f.to_server)], true),
            None => true,
        };
        let payload = if flow.is_some_and(|f| f.no_payload) { &[][..] } else { p.payload() };
        let (list, default) = (&self.packet[2], &self.defaults.filter);
        let v = self.table(
            list,
            default,
            FwDrop::Rules,
            FwDrop::DefaultPacketPolicy,
            p,
            flow,
            st,
            payload,
            stream,
            first_in_dir,
            s,
            on_match,
        );
        match v {
            Some(v) => FwPacket::Verdict(v),
            None => FwPacket::ToApp,
        }
    }

    /// One packet table: the first rule that matches decides, else its
    /// default; `None` hands over to the next table (`accept:hook`).
    #[allow(clippy::too_many_arguments)]
    fn table<'f>(
        &'f self,
        list: &[u32],
        default: &'f FwDefault,
        rule_drop: FwDrop,
        default_drop: FwDrop,
        p: &Packet<'_>,
        flow: Option<FlowInfo>,
        st: &mut FlowDetect,
        payload: &[u8],
        stream: StreamInput<'_>,
        first_in_dir: bool,
        s: &mut super::DetectScratch,
        on_match: &mut dyn FnMut(FwMatch<'f>),
    ) -> Option<FwVerdict> {
        for &i in list {
            let r = &self.rules[i as usize];
            // A packet table has no transaction whose bits a rule could test.
            let tests_tx = r.sig.tx_bits.iter().any(|&(_, test)| test);
            if tests_tx || matches!(r.hook, FwHook::Packet(PacketHook::FlowStart)) && !first_in_dir {
                continue;
            }
            if !bits_ok(&r.sig, &st.bits) || !matches(&r.sig, p, flow, payload, stream, &mut s.inspect) {
                continue;
            }
            apply_bits(&r.sig, &mut st.bits);
            self.note_pass(r.pass, st);
            on_match(FwMatch::of(r, None));
            return self.decide((r.accept, r.reject), r.scope, rule_drop, st);
        }
        if default.alert {
            on_match(self.default_match(default, &self.defaults.packet_sig, None));
        }
        self.decide((default.accept, default.reject), default.scope, default_drop, st)
    }

    /// The application filter's decision on a packet the packet tables
    /// handed over: every state its side's transactions reached since the
    /// last accepted one, in order. A packet that brought no application
    /// data is accepted.
    #[allow(clippy::too_many_arguments)]
    pub fn app_filter<'f>(
        &'f self,
        p: &Packet<'_>,
        flow: Option<FlowInfo>,
        state: Option<&mut FlowDetect>,
        stream: StreamInput<'_>,
        app: Option<&FwApp<'_>>,
        s: &mut super::DetectScratch,
        on_match: &mut dyn FnMut(FwMatch<'f>),
    ) -> FwVerdict {
        match (app.filter(|a| a.updated), state) {
            (Some(a), Some(st)) if !st.fw.accepted => self.app_states(p, flow, st, stream, a, s, on_match),
            _ => FwVerdict::Accept,
        }
    }

    /// What an action does at a packet table: `None` hands over to the next table.
    fn decide(
        &self,
        (accept, reject): (bool, bool),
        scope: FwScope,
        drop_reason: FwDrop,
        st: &mut FlowDetect,
    ) -> Option<FwVerdict> {
        match (accept, scope) {
            (false, sc) => Some(FwVerdict::Drop { flow: sc == FwScope::Flow, reason: drop_reason, reject }),
            (true, FwScope::Packet) => Some(FwVerdict::Accept),
            (true, FwScope::Flow) => {
                st.fw.accepted = true;
                Some(FwVerdict::Accept)
            }
            (true, FwScope::Hook | FwScope::Tx) => None,
        }
    }

    fn default_match<'f>(&'f self, d: &'f FwDefault, sig: &'f Signature, tx: Option<u64>) -> FwMatch<'f> {
        FwMatch { sig, table: &d.table, policy: &d.policy, accept: d.accept, alert: true, pass: None, tx }
    }

    #[allow(clippy::too_many_arguments)]
    fn app_states<'f>(
        &'f self,
        p: &Packet<'_>,
        flow: Option<FlowInfo>,
        st: &mut FlowDetect,
        stream: StreamInput<'_>,
        app: &FwApp<'_>,
        s: &mut super::DetectScratch,
        on_match: &mut dyn FnMut(FwMatch<'f>),
    ) -> FwVerdict {
        let Some(f) = flow else { return FwVerdict::Accept };
        let side = if f.to_server { Direction::ToServer } else { Direction::ToClient };
        let d = usize::from(!f.to_server);
        let empty = Vec::new();
        let list = self.app.iter().find(|(n, sd, _)| *n == app.def.name && *sd == side).map_or(&empty, |(_, _, l)| l);
        st.fw.txs.retain(|t| app.txs.iter().any(|x| x.id() == t.id));
        let payload = if f.no_payload { &[][..] } else { p.payload() };
        for tx in app.txs {
            let at = app.def.hooks.of(tx.tx, side);
            let k = match st.fw.txs.iter().position(|t| t.id == tx.id()) {
                Some(k) => k,
                None => {
                    let fresh = FwTx {
                        id: tx.id(),
                        accepted: false,
                        done: [None; 2],
                        seen: [None; 2],
                        seen_updates: [None; 2],
                        stored: Vec::new(),
                        bits: Vec::new(),
                    };
                    st.fw.txs.push(fresh);
                    st.fw.txs.len() - 1
                }
            };
            // A side is evaluated when it moved on, and, for protocols that
            // count their updates, again in the state it is in with each
            // update (as Suricata does; rules with buffers that matched
            // accept again silently). A complete side is evaluated once.
            let last = (app.def.hooks.states(side).len() - 1) as u8;
            let updates = tx.tx.updates(side);
            let t = &st.fw.txs[k];
            let moved = t.seen[d] != Some(at);
            let updated = updates.is_some() && t.seen_updates[d] != updates;
            let complete_seen = t.done[d] == Some(last) && t.seen[d] == Some(last);
            if t.accepted || complete_seen || !(moved || updated) {
                continue;
            }
            let from = t.done[d].unwrap_or(0);
            st.fw.txs[k].seen_updates[d] = updates;
            st.fw.txs[k].seen[d] = Some(at);
            'states: for state in from..=at {
                let mut decided = false;
                // A rule with buffers that matched this transaction already
                // is not run again (the rules after it may match what the
                // update brought); if none does, it accepts again, silently.
                let mut again: Option<u32> = None;
                for &i in list.iter() {
                    let r = &self.rules[i as usize];
                    let FwHook::App { state: rs, prior, .. } = r.hook else { continue };
                    // A `<` rule accepts the states before its own on its header alone.
                    let implicit = prior && state < rs;
                    if rs != state && !implicit {
                        continue;
                    }
                    let info = FlowInfo { to_server: side == Direction::ToServer, ..f };
                    let (src, dst) = match side {
                        Direction::ToServer => (app.client, app.server),
                        Direction::ToClient => (app.server, app.client),
                    };
                    if !tx_header_matches(&r.sig, src, dst) {
                        continue;
                    }
                    if implicit {
                        st.fw.txs[k].done[d] = Some(state);
                        decided = true;
                        break;
                    }
                    if st.fw.txs[k].stored.contains(&i) {
                        again = again.or(Some(i));
                        continue;
                    }
                    let tx_bits = &st.fw.txs[k].bits;
                    let ok = bits_ok(&r.sig, &st.bits)
                        && r.sig.tx_bits.iter().all(|&(id, test)| !test || tx_bits.contains(&id))
                        && app_proto_ok(&r.sig, Some(info))
                        && r.sig.checks.iter().all(|c| c.matches(p, Some(info)))
                        && r.sig.iprep.iter().all(|c| c.matches(p))
                        && r.sig.headers.iter().all(|h| h.matches(p, &mut s.inspect))
                        && r.sig
                            .tx
                            .as_ref()
                            .is_none_or(|t| tx_matches(t, *tx, app.now_secs, &mut s.tx, &mut s.inspect))
                        && (r.sig.payload.is_empty() || payload_matches(&r.sig, payload, stream, &mut s.inspect));
                    if !ok {
                        continue;
                    }
                    apply_bits(&r.sig, &mut st.bits);
                    for &(id, test) in &r.sig.tx_bits {
                        if !test && !st.fw.txs[k].bits.contains(&id) {
                            st.fw.txs[k].bits.push(id);
                        }
                    }
                    self.note_pass(r.pass, st);
                    let inspects = r.sig.tx.as_ref().is_some_and(|t| !t.buffers.is_empty() || !t.checks.is_empty());
                    if inspects {
                        st.fw.txs[k].stored.push(i);
                    }
                    on_match(FwMatch::of(r, Some(tx.id())));
                    match self.app_decide((r.accept, r.reject), r.scope, FwDrop::Rules, st, k, d, state) {
                        AppStep::Verdict(v) => return v,
                        AppStep::TxDone => break 'states,
                        AppStep::Next => {
                            decided = true;
                            break;
                        }
                    }
                }
                if let (false, Some(i)) = (decided, again) {
                    let r = &self.rules[i as usize];
                    match self.app_decide((r.accept, r.reject), r.scope, FwDrop::Rules, st, k, d, state) {
                        AppStep::Verdict(v) => return v,
                        AppStep::TxDone => break 'states,
                        AppStep::Next => decided = true,
                    }
                }
                if !decided {
                    // No rule decided this state: its default policy does.
                    let Some(def) = self.defaults.app(app.def.name, side, state) else {
                        return FwVerdict::Drop { flow: true, reason: FwDrop::DefaultAppPolicy, reject: false };
                    };
                    if def.alert {
                        on_match(self.default_match(def, &self.defaults.app_sig, Some(tx.id())));
                    }
                    match self.app_decide(
                        (def.accept, def.reject),
                        def.scope,
                        FwDrop::DefaultAppPolicy,
                        st,
                        k,
                        d,
                        state,
                    ) {
                        AppStep::Verdict(v) => return v,
                        AppStep::TxDone => break 'states,
                        AppStep::Next => {}
                    }
                }
            }
        }
        FwVerdict::Accept
    }

    /// What an action does at an application state.
    #[allow(clippy::too_many_arguments)]
    fn app_decide(
        &self,
        (accept, reject): (bool, bool),
        scope: FwScope,
        drop_reason: FwDrop,
        st: &mut FlowDetect,
        k: usize,
        d: usize,
        state: u8,
    ) -> AppStep {
        match (accept, scope) {
            (false, sc) => AppStep::Verdict(FwVerdict::Drop { flow: sc == FwScope::Flow, reason: drop_reason, reject }),
            (true, FwScope::Packet) => AppStep::Verdict(FwVerdict::Accept),
            (true, FwScope::Flow) => {
                st.fw.accepted = true;
                AppStep::Verdict(FwVerdict::Accept)
            }
            (true, FwScope::Tx) => {
                st.fw.txs[k].accepted = true;
                AppStep::TxDone
            }
            (true, FwScope::Hook) => {
                st.fw.txs[k].done[d] = Some(state);
                AppStep::Next
            }
        }
    }

    fn note_pass(&self, pass: Option<FwScope>, st: &mut FlowDetect) {
        if pass == Some(FwScope::Flow) {
            st.fw.td_passed = true;
        }
    }
}

fn bits_ok(sig: &Signature, bits: &FlowBits) -> bool {
    sig.bit_tests.iter().all(|t: &BitTest| t.matches(Some(bits)))
}

fn apply_bits(sig: &Signature, bits: &mut FlowBits) {
    sig.bit_actions.iter().for_each(|a: &BitAction| a.apply(bits));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fw(text: &str) -> Result<FwRule, FwError> {
        let set = vigil_rules::Loader::new().load_str(text, "fw.rules").expect("loads");
        assert!(set.errors.is_empty(), "{:?}", set.errors);
        compile_fw(&set.rules[0], &Classifications::default())
    }

    fn invalid(text: &str) -> String {
        match fw(text) {
            Err(FwError::Invalid(r)) => r,
            other => panic!("{text}: expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn packet_and_app_hooks() {
        let r = fw("accept:hook tcp:all any any <> any 22 (alert; sid:1;)").unwrap();
        assert!(matches!(r.hook, FwHook::Packet(PacketHook::All)));
        assert!(r.accept && r.alert && r.scope == FwScope::Hook);
        assert_eq!((r.policy.as_str(), r.table.as_str()), ("accept:hook,alert", "packet:filter"));

        let r = fw("accept:tx ssh:request_banner_done any any -> any any (sid:2;)").unwrap();
        let FwHook::App { def, side, state, prior } = r.hook else { panic!("app hook") };
        assert_eq!((def.name, side, state, prior), ("ssh", Direction::ToServer, 2, false));
        assert_eq!(r.table, "ssh:request_banner_done");
        assert!(!r.alert);

        // The generic first state names the protocol's own first one.
        let r = fw("accept:hook ssh:request_started any any -> any any (sid:3;)").unwrap();
        assert_eq!(r.table, "ssh:request_in_progress");

        let r = fw("accept:flow tls:<client_hello_done any any -> any any (tls.sni; content:\"a\"; sid:4;)").unwrap();
        assert!(matches!(r.hook, FwHook::App { state: 1, prior: true, .. }));

        let r = fw("drop:flow,alert dns:response_complete any any -> any any (sid:5;)").unwrap();
        assert!(!r.accept && r.alert && r.scope == FwScope::Flow);
        assert!(matches!(r.hook, FwHook::App { side: Direction::ToClient, state: 1, .. }));
    }

    #[test]
    fn smtp_states_and_transaction_bits() {
        let r = fw("accept:hook smtp:request_data any any -> any any (xbits:isset,ok,track tx; sid:1;)").unwrap();
        assert!(matches!(r.hook, FwHook::App { side: Direction::ToServer, state: 1, .. }));
        assert_eq!(r.table, "smtp:request_data");
        assert_eq!(r.sig.tx_bits, [(crate::hostbits::bit_id("ok"), true)]);
        let r = fw("accept:hook smtp:response_data any any -> any any (xbits:set,ok,track tx; sid:2;)").unwrap();
        assert!(matches!(r.hook, FwHook::App { side: Direction::ToClient, state: 1, .. }));
        assert_eq!(r.sig.tx_bits, [(crate::hostbits::bit_id("ok"), false)]);
        assert!(r.sig.hostbits.is_empty(), "a transaction's bit is no host's");
    }

    #[test]
    fn what_suricata_refuses() {
        assert!(invalid("accept tcp:all any any -> any any (sid:1;)").contains("explicit scope"));
        assert!(invalid("drop:hook tcp:all any any -> any any (sid:1;)").contains("packet or flow"));
        assert!(invalid("accept:tx tcp:all any any -> any any (sid:1;)").contains("packet hooks"));
        assert!(invalid("accept:hook tcp any any -> any any (sid:1;)").contains("needs a hook"));
        assert!(invalid("accept:hook ssh:request_nowhere any any -> any any (sid:1;)").contains("unknown hook"));
        assert!(invalid("alert tcp:all any any -> any any (sid:1;)").contains("accept, drop or reject"));
    }

    #[test]
    fn default_policies_resolve_per_state() {
        // Built in: the filter drops the packet, the pre tables go on, every app state drops the flow.
        let d = FwDefaults::default();
        assert_eq!(
            (d.filter.accept, d.filter.scope, d.filter.policy.as_str()),
            (false, FwScope::Packet, "drop:packet")
        );
        assert_eq!((d.pre_flow.accept, d.pre_flow.scope), (true, FwScope::Hook));
        let s = d.app("ssh", Direction::ToServer, 2).unwrap();
        assert_eq!((s.accept, s.scope, s.table.as_str()), (false, FwScope::Flow, "ssh:request_banner_done"));
        // A generic name configures the protocol's first or last state.
        let spec = |accept, scope, alert| FwPolicySpec { accept, scope, alert, reject: false };
        let d = FwDefaults::new(&|h| (h == "filter").then_some(spec(true, FwScope::Hook, true)), &|proto, hook| {
            (proto == "ssh" && hook == "request_complete").then_some(spec(true, FwScope::Tx, false))
        });
        assert_eq!(d.filter.policy, "accept:hook,alert");
        assert_eq!(d.filter.table, "packet:filter");
        let last = d.app("ssh", Direction::ToServer, 3).unwrap();
        assert_eq!((last.accept, last.scope), (true, FwScope::Tx));
        assert!(!d.app("ssh", Direction::ToServer, 2).unwrap().accept);
        assert!(!d.app("ssh", Direction::ToClient, 3).unwrap().accept);
        assert_eq!(d.packet_sig.sid, 2201000);
        assert_eq!(d.packet_sig.msg, "SURICATA FW default packet policy");
    }

    #[test]
    fn flowbits_are_shared_with_threat_detection() {
        let td = vigil_rules::Loader::new()
            .load_str("alert tcp any any -> any any (flowbits:isset,b; flowbits:isset,a; sid:9;)", "td.rules")
            .unwrap();
        let sigs = vec![compile(&td.rules[0], &Classifications::default()).unwrap()];
        let engine = super::super::DetectEngine::build(sigs, crate::prefilter::Algo::best()).unwrap();
        let rule = fw("accept:hook tcp:all any any -> any any (flowbits:set,a; flowbits:set,own; sid:1;)").unwrap();
        let f = Firewall::build(vec![rule], FwDefaults::default(), engine.flowbit_names());
        let td_id = |name: &str| engine.flowbit_names().iter().position(|n| n == name).unwrap() as u16;
        let ids: Vec<u16> = f.rules[0].sig.bit_actions.iter().flat_map(|a| a.ids.clone()).collect();
        // `a` has threat detection's id; the firewall's own name comes after them.
        assert_eq!(ids, vec![td_id("a"), 2]);
        assert_eq!(f.flowbit_names(), ["b", "a", "own"]);
    }

    #[test]
    fn app_rules_are_kept_in_state_order() {
        let rules = [
            "accept:tx ssh:request_banner_done any any -> any any (sid:3;)",
            "accept:hook ssh:request_started any any -> any any (sid:1;)",
            "accept:hook tcp:all any any -> any any (sid:9;)",
            "accept:hook ssh:request_banner_wait_eol any any -> any any (sid:2;)",
        ];
        let f = Firewall::build(rules.iter().map(|t| fw(t).unwrap()).collect(), FwDefaults::default(), &[]);
        let (_, _, list) = &f.app[0];
        let sids: Vec<u32> = list.iter().map(|&i| f.rules[i as usize].sig.sid).collect();
        assert_eq!(sids, vec![1, 2, 3]);
        assert_eq!(f.packet[2].len(), 1);
    }
}
