//! From a parsed rule to a [`Signature`] the engine runs, or the list of
//! keywords it cannot run yet. A rule is compiled only when every keyword in
//! it is executed for real: what `vigil rules check` reports as loaded is
//! exactly what this module accepts.

mod app;
mod base64;
mod buffers;
pub use buffers::list_name;
mod file;
mod frame;
mod hdr;
mod header;
mod packet;
mod payload;
mod tx;

pub use app::AppCheck;
pub use file::{FileHash, FileSize, FileStoreSpec, HashKind};
pub use frame::FrameSig;
pub use hdr::HeaderMatch;
pub use header::{ActionOrder, Proto, RejectTo, RuleAction};
pub use packet::{
    detect_event_bit, CountDir, Csum, DirProto, FlowInfo, PacketCheck, SizeSide, VlanLayer, DETECT_EVENTS,
};
pub use tx::{BufferMatch, ProtoMode, TxSig};

use crate::datasets::Datasets;
use crate::inspect::Step;
use crate::iprep::{IprepCheck, Reputation};
use crate::prefilter::Pattern;
use std::sync::Arc;
use vigil_rules::{Classifications, Rule, Value};

/// A rule ready to run.
#[derive(Debug)]
pub struct Signature {
    pub sid: u32,
    pub gid: u32,
    pub rev: u32,
    pub msg: String,
    /// The classtype's description, empty without one.
    pub category: String,
    /// `priority`, else the classtype's, else 3.
    pub severity: u32,
    pub metadata: Vec<(String, String)>,
    pub action: RuleAction,
    /// Where a reject action sends its refusal.
    pub reject: RejectTo,
    /// `noalert`: matches (for its side effects) but raises no alert.
    pub noalert: bool,
    /// `alert`: a pass signature also raises an alert (it still passes).
    pub also_alert: bool,
    /// `config: logging disable, type tx, scope tx`: the matched transaction is not logged.
    pub no_log_tx: bool,
    pub proto: Proto,
    pub src: Arc<vigil_rules::AddressSet>,
    pub dst: Arc<vigil_rules::AddressSet>,
    pub sport: Arc<vigil_rules::PortSet>,
    pub dport: Arc<vigil_rules::PortSet>,
    /// `<>`: either orientation of the header matches.
    pub bidirectional: bool,
    pub checks: Vec<PacketCheck>,
    /// Header buffers (`tcp.hdr`, ...) and their keywords.
    pub headers: Vec<HeaderMatch>,
    /// `iprep`: the packet's addresses' reputations (an IP-only keyword).
    pub iprep: Vec<IprepCheck>,
    /// Payload keywords, run in order on the packet payload.
    pub payload: Vec<Step>,
    /// Payload keywords of a TCP rule inspect the reassembled stream first;
    /// the packet itself only when its payload did not go into a stream
    /// (Suricata's `SIG_FLAG_REQUIRE_STREAM`). Off for `dsize`, `flags` and
    /// `flow:no_stream`, which make a packet signature.
    pub require_stream: bool,
    /// `tcp-stream` or `flow:only_stream`: payload keywords look at the
    /// reassembled stream only, never at a packet.
    pub stream_only: bool,
    /// A stream signature that inspects each packet's payload too, even one
    /// that went into the stream: an absolute content (`depth`, `offset`,
    /// `startswith`) or `stream_size` (Suricata adds `SIG_FLAG_REQUIRE_PACKET`
    /// to such a signature's `SIG_FLAG_REQUIRE_STREAM`). The same bytes can
    /// then match twice, on their packet and later in the stream, as in Suricata.
    pub require_packet: bool,
    /// The literal the prefilter looks for; `None`: inspected on every packet of its group.
    /// For a transaction signature it is in `tx.buffers[tx.fast]`.
    pub fast_pattern: Option<Pattern>,
    /// The application protocol the flow must speak (`alert http ...`, a
    /// buffer of that protocol, or `app-layer-protocol`).
    pub app_proto: Option<vigil_types::AppProto>,
    /// `app-layer-protocol:!x`: the flow must not speak `app_proto`.
    pub app_proto_negated: bool,
    /// Which of the flow's protocols `app_proto` is checked against.
    pub app_proto_mode: tx::ProtoMode,
    /// Set for signatures that inspect transactions (sticky buffers, app
    /// value keywords, or a `config` rule's protocol): they run once per
    /// transaction, when it has been parsed far enough. A rule naming only
    /// an application protocol is a packet signature with `app_proto` set.
    pub tx: Option<TxSig>,
    /// Set for `frame:` signatures: they run on each frame of their type.
    pub frame: Option<FrameSig>,
    /// `flowbits` as written; the engine numbers the names when it is built.
    pub flowbits: crate::flowbits::FlowbitsSpec,
    /// `flowint` keywords in rule order, names as written.
    pub flowints: Vec<crate::flowint::FlowintSpec>,
    /// `xbits` and `hostbits` keywords, names as written.
    pub hostbits: Vec<crate::hostbits::HostBitOp<String>>,
    /// `xbits:set|isset,NAME,track tx`: bits a transaction carries, by the
    /// id of their name ([`crate::hostbits::bit_id`]), `true` for a test.
    /// Only firewall rules, hooked at a state, run them.
    pub tx_bits: Vec<(u64, bool)>,
    /// `threshold` / `detection_filter`: how often a match may alert.
    pub rate: Option<crate::threshold::RateRule>,
    /// `reference`: (system, id) as written.
    pub references: Vec<(String, String)>,
    /// The references as URLs, by the reference configuration (filled in
    /// by the caller that has it; unknown systems left out).
    pub reference_urls: Vec<String>,
    /// `tag`: the later packets of the session or host an alert logs too.
    pub tags: Vec<vigil_rules::keywords::post::Tag>,
    /// `filestore`: which files a match asks the file store to keep.
    pub filestore: Option<FileStoreSpec>,
    /// `bypass`: a match bypasses the rest of the flow.
    pub bypass: bool,
    /// Whether a drop or pass by this signature covers the packet or its whole flow.
    pub scope: ActionScope,
    /// IP-only (addresses and protocol, any port, no other keyword): as in
    /// Suricata, inspected on the first packet of each direction of a flow.
    pub ip_only: bool,
    /// The same, numbered: filled in by the engine.
    pub(crate) bit_tests: Vec<crate::flowbits::BitTest>,
    pub(crate) bit_actions: Vec<crate::flowbits::BitAction>,
    pub(crate) int_steps: Vec<crate::flowint::FlowintStep>,
    /// `isset` / `isnotset` host bits, tested with the flowbits.
    pub(crate) host_tests: Vec<crate::hostbits::HostBitOp<u64>>,
    /// `set` / `unset` / `toggle` host bits, applied on a match.
    pub(crate) host_actions: Vec<crate::hostbits::HostBitOp<u64>>,
    /// `lua` scripts, run once everything else matched.
    pub lua: Vec<Arc<crate::lua::LuaScript>>,
    /// `flowvar` and `pktvar`: a variable holds a content.
    pub var_tests: Vec<VarTest>,
    /// `tls.store`: a match asks the `tls-store` output for the flow's
    /// certificate chains.
    pub tls_store: bool,
    /// `replace`: the rule asks to rewrite what it matched. vigil does not
    /// (as Suricata outside NFQ and IPFW); the run warns about it.
    pub replace: bool,
}

/// `flowvar:name,content` (`pkt` false) or `pktvar:`: the variable, a flow
/// one or one an earlier signature captured from this packet, holds the
/// content (case-sensitive, anywhere in it).
#[derive(Debug, Clone)]
pub struct VarTest {
    pub pkt: bool,
    pub name: Arc<str>,
    pub content: Vec<u8>,
}

impl VarTest {
    /// Whether `value`, the variable's bytes, holds the content.
    pub fn holds(&self, value: &[u8]) -> bool {
        memchr::memmem::find(value, &self.content).is_some()
    }
}

/// What a signature's drop (or pass) applies to, by the kind of signature
/// it is, as Suricata decides it per signature type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActionScope {
    /// Packet keywords (`dsize`, `flags`, ...): the packet alone.
    Packet,
    /// Header-only (addresses, ports, protocol), application-layer and
    /// stream signatures: the flow.
    Flow,
    /// Payload keywords of a TCP rule: the flow when the match was in the
    /// reassembled stream, else the packet.
    FlowIfStream,
}

impl ActionScope {
    /// Whether a drop or pass covers the rest of the flow; `in_stream`: the
    /// match was on the reassembled stream.
    pub fn covers_flow(self, in_stream: bool) -> bool {
        match self {
            ActionScope::Packet => false,
            ActionScope::Flow => true,
            ActionScope::FlowIfStream => in_stream,
        }
    }
}

/// Only the header decides: addresses, ports and protocol. Such a rule's
/// action covers the flow even when it names ports (Suricata's own tests:
/// `pass tcp any any -> any 22` passes the SSH flow, server's packets too).
fn header_only(s: &Signature) -> bool {
    // `l3_proto` narrows the header's protocol, as `ip` or `ipv6` would.
    s.checks.iter().all(|c| matches!(c, PacketCheck::L3Ipv6(_)))
        && s.headers.is_empty()
        && s.payload.is_empty()
        && s.flowbits.tests.is_empty()
        && s.flowbits.actions.is_empty()
        && s.flowints.is_empty()
        && s.hostbits.is_empty()
        && s.tx_bits.is_empty()
        && s.lua.is_empty()
        && s.var_tests.is_empty()
        && s.proto != Proto::PktHdr
}

/// The scope of a compiled signature's action.
fn action_scope(s: &Signature) -> ActionScope {
    if s.tx.is_some() || s.frame.is_some() || s.app_proto.is_some() || s.stream_only || header_only(s) {
        ActionScope::Flow
    } else if s.require_stream {
        ActionScope::FlowIfStream
    } else {
        ActionScope::Packet
    }
}

/// Suricata's IP-only signature: the header with any port, nothing else.
fn ip_only(s: &Signature) -> bool {
    header_only(s) && s.tx.is_none() && s.app_proto.is_none() && s.sport.is_full() && s.dport.is_full()
}

/// Why a rule was not compiled: the keywords the engine does not run yet.
pub use vigil_rules::Unsupported;

/// The rule checker's view of this engine: a rule is supported exactly
/// when it compiles, so `vigil rules check` and a real run agree.
pub struct DetectExecutor;

impl vigil_rules::Executor for DetectExecutor {
    /// A rule that fails only for want of the run's data (a dataset file,
    /// reputation categories) is one the engine runs.
    fn check(&self, rule: &Rule) -> Result<(), Unsupported> {
        match compile(rule, &Classifications::default()) {
            Err(u) if u.keywords.is_empty() && !u.errors.is_empty() => Ok(()),
            r => r.map(|_| ()),
        }
    }
}

/// Compiles one parsed, loaded rule (its datasets made apart from any run's).
pub fn compile(rule: &Rule, classes: &Classifications) -> Result<Signature, Unsupported> {
    compile_side(rule, classes, None, &Shared::default())
}

/// The signatures a rule runs as (see [`compile_all_in`]), its datasets
/// made apart from any run's.
pub fn compile_all(rule: &Rule, classes: &Classifications) -> Result<Vec<Signature>, Unsupported> {
    compile_all_in(rule, classes, &Shared::default())
}

/// What rules use beyond themselves, made once for a run: its datasets
/// (found or made as rules name them) and its IP reputation data.
#[derive(Debug, Default, Clone)]
pub struct Shared {
    pub datasets: Arc<Datasets>,
    pub reputation: Option<Arc<Reputation>>,
    /// `security.lua` and the rule path, for `lua` scripts.
    pub lua: crate::lua::LuaSettings,
}

/// The signatures a rule runs as: one, or two for an HTTP or DNS rule that
/// names no direction and whose buffers exist on both sides (it is then
/// inspected on requests and on responses, as in Suricata). Its datasets
/// and reputation come from `shared`.
pub fn compile_all_in(rule: &Rule, classes: &Classifications, shared: &Shared) -> Result<Vec<Signature>, Unsupported> {
    let sig = compile_side(rule, classes, None, shared)?;
    let mut out = Vec::with_capacity(2);
    // A rule written both ways (`<>`, or `=>` naming each buffer's side)
    // already says which side each part inspects.
    let one_way = rule.header.endpoints.as_ref().is_some_and(|e| e.direction == vigil_rules::Direction::ToDst);
    let either = sig.tx.as_ref().filter(|t| t.either_side && one_way).map(|t| t.side);
    out.push(sig);
    // The other side: `Some(true)` stands for to-server.
    if let Some(first) = either {
        out.push(compile_side(rule, classes, Some(first == vigil_types::Direction::ToClient), shared)?);
    }
    Ok(out)
}

/// Whether a `byte_*` step of `steps` reads in the `dce` byte order.
fn reads_dce(steps: &[Step]) -> bool {
    use crate::inspect::Endian::Dce;
    steps.iter().any(|s| match s {
        Step::ByteTest(b) => b.read.endian == Dce,
        Step::ByteJump(b) => b.read.endian == Dce,
        Step::ByteExtract(b) => b.read.endian == Dce,
        Step::ByteMath(b) => b.read.endian == Dce,
        _ => false,
    })
}

/// `to_server`: the side a rule without a flow direction is taken to
/// inspect (`None`: the buffers decide).
fn compile_side(
    rule: &Rule,
    classes: &Classifications,
    side: Option<bool>,
    shared: &Shared,
) -> Result<Signature, Unsupported> {
    let mut missing = Vec::new();
    let mut errors = Vec::new();
    let (action, proto, header_app) = header::compile(rule, &mut missing);
    let checks = packet::compile(rule, &mut missing);
    let mut compiled = payload::compile(rule, &mut missing, &shared.datasets, &shared.lua, &mut errors);
    let mut iprep = Vec::new();
    for o in rule.options.iter().filter(|o| o.name() == "iprep") {
        if let Value::Text(t) = &o.value {
            match IprepCheck::compile(t, shared.reputation.as_ref()) {
                Ok(c) => iprep.push(c),
                Err(e) => errors.push(e),
            }
        }
    }
    let mut lua = Vec::new();
    for o in rule.options.iter().filter(|o| matches!(o.name(), "lua" | "luajit")) {
        let Value::Text(t) = &o.value else { continue };
        match crate::lua::LuaScript::load(t, &rule.file, &shared.lua) {
            Ok(script) => lua.push(Arc::new(script)),
            Err(e) => errors.push(e),
        }
    }
    if !errors.is_empty() {
        return Err(Unsupported { keywords: missing, errors });
    }
    // A payload keyword reading in the `dce` byte order makes the rule a
    // DCE/RPC one (SMB's calls included), as Suricata sets its protocol.
    let header_app = header_app.or_else(|| {
        reads_dce(&compiled.steps).then(|| vigil_applayer::proto::find("dcerpc").map(|d| d.app_proto())).flatten()
    });
    let headers = hdr::take(&mut compiled, &mut missing);
    let frame = frame::take(&mut compiled, header_app, &mut missing);
    // A frame's protocol is the flow's.
    let header_app = header_app.or(frame.as_ref().map(|f| f.proto));
    let mut app_checks = Vec::new();
    let mut layer_proto = None;
    let mut noalert = false;
    let mut also_alert = false;
    let mut no_log_tx = false;
    let mut priority = None;
    let mut metadata = Vec::new();
    let mut flowbits = crate::flowbits::FlowbitsSpec::default();
    let mut flowints = Vec::new();
    let mut var_tests = Vec::new();
    let mut hostbits = Vec::new();
    let mut tx_bits = Vec::new();
    let mut rate = None;
    let mut tags = Vec::new();
    let mut filestore = None;
    let mut bypass = false;
    let mut references = Vec::new();
    for o in &rule.options {
        match (o.name(), &o.value) {
            ("noalert", _) => noalert = true,
            ("alert", _) => also_alert = true,
            ("config", Value::Text(t)) => {
                let words: Vec<&str> = t.split(',').map(str::trim).collect();
                if words == ["logging disable", "type tx", "scope tx"] {
                    no_log_tx = true;
                } else {
                    missing.push(format!("config:{t}"));
                }
            }
            (name @ ("threshold" | "detection_filter"), Value::Threshold(t)) => {
                match crate::threshold::RateRule::from_keyword(t, name == "detection_filter") {
                    Some(r) if rate.is_none() => rate = Some(r),
                    _ => missing.push(format!("{name} form")),
                }
            }
            ("flowbits", Value::Bits(b)) => {
                use vigil_rules::keywords::flow::BitCmd;
                match b.cmd {
                    BitCmd::NoAlert => noalert = true,
                    BitCmd::IsSet | BitCmd::IsNotSet => {
                        flowbits.tests.push((b.names.clone(), b.any, b.cmd == BitCmd::IsNotSet))
                    }
                    cmd => flowbits.actions.push((b.names.clone(), cmd)),
                }
            }
            (name @ ("flowvar" | "pktvar"), Value::Text(t)) => match vigil_rules::keywords::flow::var_match(t) {
                Ok((var, content)) => var_tests.push(VarTest { pkt: name == "pktvar", name: var.into(), content }),
                Err(e) => missing.push(format!("{name} ({})", e.reason)),
            },
            ("flowint", Value::Flowint(f)) => match crate::flowint::from_keyword(f) {
                Ok(op) => flowints.push(op),
                Err(e) => missing.push(e),
            },
            // The loader made sure it sets or tests, in a hooked rule.
            ("xbits", Value::Bits(b)) if vigil_rules::keywords::flow::tracks_tx(b) => {
                for n in &b.names {
                    tx_bits.push((crate::hostbits::bit_id(n), b.cmd == vigil_rules::keywords::flow::BitCmd::IsSet));
                }
            }
            (name @ ("xbits" | "hostbits"), Value::Bits(b)) => {
                match crate::hostbits::HostBitOp::from_keyword(name, b) {
                    Ok(Some(op)) => hostbits.push(op),
                    Ok(None) => noalert = true,
                    Err(e) => missing.push(e),
                }
            }
            ("priority", Value::Number(n)) => priority = Some(*n as u32),
            ("bypass", _) => bypass = true,
            ("filestore", v) => match FileStoreSpec::compile(v) {
                Ok(f) => filestore = Some(f),
                Err(e) => missing.push(format!("filestore ({e})")),
            },
            // Contents on `file.name`, compiled with the payload.
            ("filename" | "fileext" | "filemagic", _) => {}
            (name @ ("filemd5" | "filesha1" | "filesha256"), v) => match FileHash::compile(name, v, &rule.file) {
                Ok(hash) => match app::files_proto() {
                    Some(proto) => app_checks.push(AppCheck::FileHash { proto, hash }),
                    None => missing.push(format!("{name} (no protocol carries files)")),
                },
                Err(e) => missing.push(format!("{name} ({e})")),
            },
            ("tag", Value::Tag(t)) => tags.push(*t),
            ("reference", Value::Reference(r)) => references.push((r.system.clone(), r.id.clone())),
            ("app-layer-event", Value::Text(t)) => match app::table_event(t) {
                Some(e) => app_checks.push(e),
                // Protocol detection's events are the packet's (see `packet`).
                None if packet::detect_event_bit(t).is_some() => {}
                None => missing.push(format!("app-layer-event:{}", t.trim())),
            },
            ("app-layer-protocol", Value::Text(t)) => match tx::layer_protocol(t) {
                Some(p) if layer_proto.is_none() => layer_proto = Some(p),
                _ => missing.push(format!("app-layer-protocol:{t}")),
            },
            // Old names (`dce_opnum`) compile as the keyword they stand for.
            (name, value) if o.kind() == vigil_rules::Kind::App => {
                match AppCheck::compile(o.keyword.canonical, value) {
                    Ok(Some(c)) => app_checks.push(c),
                    Ok(None) => missing.push(name.to_string()),
                    Err(e) => missing.push(format!("{name} ({e})")),
                }
            }
            ("metadata", Value::Metadata(m)) => metadata.extend(m.iter().cloned()),
            _ => {}
        }
    }
    // A rule that only stores files (no buffer, content or app-layer check
    // of its own) matches where there are files, as Suricata's does.
    let inspects = |o: &vigil_rules::RuleOption| {
        matches!(
            o.kind(),
            vigil_rules::Kind::Payload
                | vigil_rules::Kind::Buffer(_)
                | vigil_rules::Kind::LegacyBuffer(_)
                | vigil_rules::Kind::App
        )
    };
    if filestore.is_some() && !rule.options.iter().any(inspects) {
        if let Some(proto) = app::files_proto() {
            app_checks.push(AppCheck::HasFile { proto });
        }
    }
    let Some(resolved) = rule.resolved.as_ref() else {
        missing.push("<unresolved addresses>".into());
        return Err(Unsupported { keywords: missing, errors: Vec::new() });
    };
    let to_server = checks
        .iter()
        .find_map(|c| match c {
            PacketCheck::Flow { to_server, .. } => *to_server,
            _ => None,
        })
        .or(side);
    // A hooked threat detection rule (firewall rules are compiled apart).
    let hook = match (rule.header.protocol.hook.as_deref(), header_app) {
        (Some(h), Some(proto)) if !rule.header.is_firewall() || missing.iter().all(|m| m != "firewall rule") => {
            match tx::hook_need(proto, h) {
                Ok(need) => Some(need),
                Err(e) => return Err(Unsupported { keywords: Vec::new(), errors: vec![e] }),
            }
        }
        _ => None,
    };
    let (payload, fast_pattern, app_proto, tx) = tx::split(
        compiled,
        app_checks,
        header_app,
        layer_proto.map(|(p, n, _)| (p, n)),
        to_server,
        action == RuleAction::Config,
        hook,
        &mut missing,
    );
    let tx = tx.map(|t| TxSig { exact: rule.header.protocol.name == "http1", ..t });
    if action == RuleAction::Config && (!no_log_tx || tx.is_none()) {
        missing.push("config rule without a transaction logging change".into());
    }
    if !missing.is_empty() {
        missing.sort();
        missing.dedup();
        return Err(Unsupported { keywords: missing, errors: Vec::new() });
    }
    let class = rule.classtype().and_then(|c| classes.get(c));
    let mut sig = Signature {
        sid: rule.sid(),
        gid: rule.gid(),
        rev: rule.rev(),
        msg: rule.msg().unwrap_or_default().to_string(),
        category: class.map(|c| c.description.clone()).unwrap_or_default(),
        severity: priority.or(class.map(|c| c.priority as u32)).unwrap_or(3),
        metadata,
        action,
        reject: header::reject_to(rule),
        noalert: noalert || action == RuleAction::Config,
        also_alert,
        no_log_tx,
        proto,
        src: resolved.src.clone(),
        dst: resolved.dst.clone(),
        sport: resolved.src_port.clone(),
        dport: resolved.dst_port.clone(),
        bidirectional: rule.header.endpoints.as_ref().is_some_and(|e| e.direction == vigil_rules::Direction::Both),
        require_stream: !payload.is_empty()
            && frame.is_none()
            && matches!(proto, Proto::Tcp | Proto::Ip | Proto::Ipv4 | Proto::Ipv6)
            && rule.header.protocol.name != "tcp-pkt"
            && !checks.iter().any(|c| {
                matches!(
                    c,
                    PacketCheck::Dsize(_) | PacketCheck::Flags(_) | PacketCheck::Flow { stream: Some(false), .. }
                )
            }),
        stream_only: !payload.is_empty()
            && (rule.header.protocol.name == "tcp-stream"
                || checks.iter().any(|c| matches!(c, PacketCheck::Flow { stream: Some(true), .. }))),
        checks,
        headers,
        iprep,
        payload,
        fast_pattern,
        app_proto: app_proto.map(|(p, _)| p),
        app_proto_negated: app_proto.is_some_and(|(_, neg)| neg),
        // The keyword's mode, where the keyword is what the rule requires.
        app_proto_mode: match (app_proto, layer_proto) {
            (Some(req), Some((p, n, mode))) if req == (p, n) => mode,
            _ => tx::ProtoMode::Final,
        },
        tx,
        frame,
        flowbits,
        flowints,
        hostbits,
        tx_bits,
        rate,
        tags,
        filestore,
        bypass,
        references,
        reference_urls: Vec::new(),
        scope: ActionScope::Packet,
        ip_only: false,
        require_packet: false,
        bit_tests: Vec::new(),
        bit_actions: Vec::new(),
        int_steps: Vec::new(),
        host_tests: Vec::new(),
        host_actions: Vec::new(),
        lua,
        var_tests,
        replace: rule.options.iter().any(|o| o.keyword.canonical == "replace"),
        tls_store: rule.options.iter().any(|o| o.keyword.canonical == "tls.store"),
    };
    sig.scope = match rule.header.actions[0].scope.as_deref() {
        // An explicit scope (`drop:packet`, `pass:flow`) overrides the rule's kind.
        Some("packet") => ActionScope::Packet,
        Some("flow") => ActionScope::Flow,
        _ => action_scope(&sig),
    };
    // A negated address makes Suricata's `like_ip_only`: inspected on every packet.
    sig.ip_only = ip_only(&sig) && !resolved.negated;
    sig.require_packet = sig.require_stream
        && !sig.stream_only
        && (sig.payload.iter().any(|st| matches!(st, Step::Content(c) if c.is_absolute()))
            || sig.checks.iter().any(|c| matches!(c, PacketCheck::StreamSize { .. })));
    Ok(sig)
}
