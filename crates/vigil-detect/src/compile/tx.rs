//! Transaction signatures: the sticky buffers and value checks of a rule,
//! resolved to the transaction side they read, and the parse progress the
//! transaction must reach before the signature runs on it.

use super::app::AppCheck;
use super::buffers;
use super::payload::Payload;
use crate::inspect::Step;
use crate::prefilter::Pattern;
use crate::transform::Transform;
use vigil_applayer::{BufferId, Progress};
use vigil_rules::IntCmp;
use vigil_types::{AppProto, Direction, PerDir};

/// What a signature inspects in a transaction.
#[derive(Debug)]
pub struct TxSig {
    pub proto: AppProto,
    /// The side the rule inspects: its header's addresses are matched in
    /// this direction (client to server for `ToServer`).
    pub side: Direction,
    /// How far each side must be parsed before the signature runs; it runs
    /// once per transaction, when this is first reached.
    pub need: PerDir<Progress>,
    pub buffers: Vec<BufferMatch>,
    pub checks: Vec<AppCheck>,
    /// The buffer holding the fast pattern.
    pub fast: Option<usize>,
    /// An HTTP or DNS rule that names no direction, has no value checks, and
    /// whose buffers all exist on both sides (`http.header`, `dns.queries.rrname`, ...):
    /// Suricata inspects it both ways. This signature is its to-server
    /// side; [`super::compile_all`] adds the to-client one.
    pub either_side: bool,
    /// The rule's header names HTTP/1 alone (`alert http1`): it runs on
    /// HTTP/1 transactions, not on what another protocol carries as HTTP
    /// (HTTP/2's streams), as Suricata's `http1` rules do.
    pub exact: bool,
    /// Keywords of several protocols that the header's carries (`alert
    /// doh2 ... dns.opcode; http.host`): each buffer and value check reads
    /// the view of its own protocol ([`BufferMatch::via`], [`AppCheck::proto`]).
    pub mixed: bool,
}

/// One sticky buffer of a transaction signature.
#[derive(Debug)]
pub struct BufferMatch {
    pub id: BufferId,
    /// The transaction side the buffer is read from.
    pub dir: Direction,
    /// Any of its values may match (question names, certificates, ...).
    pub multi: bool,
    pub transforms: Vec<Transform>,
    pub steps: Vec<Step>,
    /// `bsize` / `urilen`: the (transformed) buffer's length.
    pub len: Vec<IntCmp>,
    /// `absent`: the buffer must not exist (`Some(false)`); with `or_else`
    /// (`Some(true)`), a missing buffer matches and a present one is inspected.
    pub absent: Option<bool>,
    /// The protocol whose view of the transaction it is read from, where
    /// that is not the signature's (in a [`TxSig::mixed`] one).
    pub via: Option<AppProto>,
    /// `dataset` and `datarep` on the value that passed the other keywords.
    pub sets: Vec<crate::datasets::SetOp>,
}

/// Which of a flow's protocols `app-layer-protocol` looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProtoMode {
    /// The protocol the flow is parsed as (also what a rule header's
    /// protocol requires).
    #[default]
    Final,
    /// The protocol found on the packet's own direction: the keyword's
    /// default.
    Direction,
    ToServer,
    ToClient,
    /// Either direction's.
    Either,
    /// The protocol before a change (HTTP before a CONNECT tunnel); vigil
    /// checks the flow's, as with `Final`.
    Original,
}

/// `app-layer-protocol` values vigil can tell: `(protocol, negated, mode)`.
pub(super) fn layer_protocol(value: &str) -> Option<(AppProto, bool, ProtoMode)> {
    let (v, mode) = match value.split_once(',') {
        Some((v, m)) => {
            let mode = match m.trim() {
                "final" => ProtoMode::Final,
                "direction" => ProtoMode::Direction,
                "to_server" => ProtoMode::ToServer,
                "to_client" => ProtoMode::ToClient,
                "either" => ProtoMode::Either,
                "original" => ProtoMode::Original,
                _ => return None,
            };
            (v.trim(), mode)
        }
        None => (value.trim(), ProtoMode::Direction),
    };
    let (negated, name) = match v.strip_prefix('!') {
        Some(n) => (true, n.trim()),
        None => (false, v),
    };
    let p = match name {
        "failed" => AppProto::Failed,
        // `unknown` cannot be negated.
        "unknown" if negated => return None,
        "unknown" => AppProto::Unknown,
        other => vigil_applayer::proto::by_rule_name(other)?.app_proto(),
    };
    Some((p, negated, mode))
}

/// What a side of `proto` must have reached for a rule with no buffer on it.
fn base_need(proto: AppProto, dir: Direction) -> Progress {
    vigil_applayer::proto::of(proto).map_or(Progress::Headers, |d| *d.base_need.get(dir))
}

/// The side and progress a threat detection rule's hook waits for: the
/// side's first state is its start, its last state its completion, and a
/// state between them the side's headers (a banner, a request line, a hello).
pub(super) fn hook_need(proto: AppProto, hook: &str) -> Result<(Direction, Progress), String> {
    let def = vigil_applayer::proto::of(proto).ok_or_else(|| format!("protocol {} has no hooks", proto.name()))?;
    let (dir, i) =
        def.hooks.state(hook).ok_or_else(|| format!("protocol \"{}\" does not support hook \"{hook}\"", def.name))?;
    let last = (def.hooks.states(dir).len() - 1) as u8;
    let p = if i == 0 {
        base_need(proto, dir)
    } else if i == last {
        Progress::Complete
    } else {
        Progress::Headers
    };
    Ok((dir, p))
}

/// The required application protocol: `(protocol, negated)`.
pub(super) type AppReq = Option<(AppProto, bool)>;

/// Splits compiled payload keywords into what runs on packets and what runs
/// on transactions. Returns the packet steps, the fast pattern, the flow's
/// required application protocol and the transaction part, if any.
/// `per_tx`: the rule acts on transactions even without buffers (`config`).
/// `hook`: the side and progress a hooked rule (`alert dns:request_complete`)
/// waits for.
#[allow(clippy::too_many_arguments)]
pub(super) fn split(
    payload: Payload,
    checks: Vec<AppCheck>,
    header: Option<AppProto>,
    layer: AppReq,
    to_server: Option<bool>,
    per_tx: bool,
    hook: Option<(Direction, Progress)>,
    missing: &mut Vec<String>,
) -> (Vec<Step>, Option<Pattern>, AppReq, Option<TxSig>) {
    let per_tx = per_tx || hook.is_some();
    let to_server = hook.map(|(d, _)| d == Direction::ToServer).or(to_server);
    let Payload { steps, buffers: raw, fast, .. } = payload;
    // The file keywords belong to the protocol that carries the files: the
    // header's, when it carries any (`alert ftp-data ... file.data`).
    let carrier = header.filter(|&p| vigil_applayer::proto::of(p).is_some_and(|d| d.files));
    let defs: Vec<_> = raw
        .iter()
        .filter_map(|b| Some(buffers::lookup(b.name)?.carried_by(carrier).borrowed_by(b.name, header)))
        .collect();
    let checks: Vec<AppCheck> = checks.into_iter().map(|c| c.carried_by(carrier)).collect();
    if defs.len() != raw.len() {
        // Unknown buffers were reported by the payload compiler.
        return (steps, None, None, None);
    }
    // The protocol: the header's, else the buffers', else the value checks'.
    // Keywords of a protocol the header's carries (`alert smb ...
    // dcerpc.iface`) inspect the carried transactions of the header's flows.
    let carries =
        |q: AppProto, p: AppProto| vigil_applayer::proto::of(q).is_some_and(|d| d.includes.contains(&p.name()));
    let mut proto = header;
    // Keywords of several protocols the header's carries (or is): each
    // reads its own protocol's view of the header's transactions.
    let mut kinds: Vec<AppProto> = defs.iter().map(|d| d.proto).chain(checks.iter().map(AppCheck::proto)).collect();
    kinds.sort_by_key(|p| p.name());
    kinds.dedup();
    let mixed = kinds.len() > 1 && header.is_some_and(|h| kinds.iter().all(|&p| p == h || carries(h, p)));
    for p in defs.iter().map(|d| d.proto).chain(checks.iter().map(AppCheck::proto)).filter(|_| !mixed) {
        match proto {
            None => proto = Some(p),
            Some(q) if q != p && Some(q) == header && carries(q, p) => proto = Some(p),
            Some(q) if q != p => {
                missing.push(format!("{} and {} keywords in one rule", q.name(), p.name()));
                return (steps, None, None, None);
            }
            _ => {}
        }
    }
    let required = match (proto, layer) {
        (Some(p), Some((q, false))) if p != q => {
            missing.push(format!("app-layer-protocol:{} in a {} rule", q.name(), p.name()));
            None
        }
        // The flows a rule looks at are the header's protocol's (SMB's, for its DCE/RPC calls).
        (Some(p), _) => Some((header.filter(|&h| carries(h, p)).unwrap_or(p), false)),
        (None, l) => l,
    };
    let Some(proto) = proto else {
        let fast = fast.map(|(_, p)| p);
        return (steps, fast, required, None);
    };
    // Without buffers or value checks, an app-layer rule inspects every
    // packet of the protocol's flows (Suricata's `app_layer` signature type),
    // with its raw payload keywords if it has any.
    if raw.is_empty() && checks.is_empty() && !per_tx {
        return (steps, fast.map(|(_, p)| p), required, None);
    }
    let side = match to_server {
        Some(true) => Direction::ToServer,
        Some(false) => Direction::ToClient,
        // A response's buffer or value check makes the rule one of the
        // response's side (it is inspected on that side's packets).
        None if defs.iter().any(|d| d.one_sided() == Some(Direction::ToClient) || d.default == Direction::ToClient)
            || checks.iter().any(|c| c.side() == Some(Direction::ToClient)) =>
        {
            Direction::ToClient
        }
        None => Direction::ToServer,
    };
    // Buffers registered both ways only, and no value checks but file ones
    // (files travel either way): TLS versions and states look at both
    // sides already, and would alert twice.
    let either_side = to_server.is_none()
        && hook.is_none()
        && !(defs.is_empty() && checks.is_empty())
        && defs.iter().all(|d| d.both_ways)
        && checks.iter().all(AppCheck::either_side);
    let mut need = PerDir::<Progress>::default();
    let raise = |need: &mut PerDir<Progress>, dir: Direction, p: Progress| {
        let n = need.get_mut(dir);
        *n = (*n).max(p);
    };
    raise(&mut need, side, base_need(proto, side));
    if let Some((dir, p)) = hook {
        raise(&mut need, dir, p);
    }
    let mut out = Vec::with_capacity(raw.len());
    for (b, d) in raw.into_iter().zip(defs) {
        let (id, dir) = d.resolve(side);
        raise(&mut need, dir, d.need);
        let (transforms, steps, len, absent, sets) = (b.transforms, b.steps, b.len, b.absent, b.sets);
        let via = (d.proto != proto).then_some(d.proto);
        out.push(BufferMatch { id, dir, multi: d.multi, transforms, steps, len, absent, via, sets });
    }
    for c in &checks {
        let dir = c.side().unwrap_or(side);
        let p = if c.needs_complete() { Progress::Complete } else { base_need(proto, dir) };
        raise(&mut need, dir, p);
    }
    let (fast_at, pattern) = match fast {
        Some((Some(at), p)) => (Some(at), Some(p)),
        _ => (None, None),
    };
    let tx = TxSig { proto, side, need, buffers: out, checks, fast: fast_at, either_side, exact: false, mixed };
    (steps, pattern, required, Some(tx))
}
