//! The detection engine: signatures grouped by transport protocol, one
//! prefilter per group over the packet payload, transaction signatures
//! grouped by application protocol with a prefilter per buffer ([`tx`]),
//! then verification of each candidate in Suricata's order (pass, drop,
//! reject, alert; then rule order), packet and transaction matches together.
//!
//! Built once and shared read-only by every worker; each worker keeps its
//! own [`DetectScratch`], which also holds its handle on the host state
//! (`xbits`/`hostbits`) all workers share ([`crate::host_state`]).

pub mod firewall;
mod tx;

pub use tx::{AppInput, TxInput};

use crate::addrindex::AddrIndex;
use crate::compile::{ActionOrder, FlowInfo, Proto, RuleAction, Signature};
use crate::flowbits::{BitAction, BitTest, FlowDetect};
use crate::flowint::FlowintStep;
use crate::host_state::Hosts;
use crate::hostbits::HostBitOp;
use crate::inspect::{inspect, inspect_at, InspectCtx};
use crate::prefilter::{Algo, Pattern, Prefilter, PrefilterError, Scratch};
use std::net::IpAddr;
use vigil_decode::{Packet, Transport};
use vigil_rules::PortSet;

/// The most alerts one packet raises by default (Suricata's `packet-alert-max`).
pub const MAX_ALERTS_PER_PACKET: usize = 15;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum GroupId {
    Tcp = 0,
    Udp = 1,
    Icmpv4 = 2,
    Icmpv6 = 3,
    /// Other IP protocols, and IP fragments (no transport header yet).
    Other = 4,
}

const GROUPS: [GroupId; 5] = [GroupId::Tcp, GroupId::Udp, GroupId::Icmpv4, GroupId::Icmpv6, GroupId::Other];

struct Group {
    /// Fast patterns of the signatures that inspect the stream when the
    /// packet's payload went into one (and the payload otherwise).
    stream: Patterns,
    /// Fast patterns of the signatures that only ever look at the packet
    /// (`dsize`, `tcp-pkt`, `flow:no_stream`, non-TCP protocols): a packet
    /// whose payload is in a stream is scanned with these alone.
    packet: Patterns,
    /// Signatures without a fast pattern: verified on every packet of the
    /// group, or found by the packet's source (their source list is not
    /// `any`) or, failing that, destination.
    lists: AddrLists,
    /// The same for IP-only signatures, which see only a flow's first
    /// packet each way: not looked up on the others (the IP reputation
    /// lists of ET Open are thousands of them).
    ip_only: AddrLists,
}

/// Signatures without a fast pattern: on every packet, or found by the
/// packet's source or destination address.
#[derive(Default)]
struct AddrLists {
    always: Vec<u32>,
    by_src: Option<AddrIndex>,
    by_dst: Option<AddrIndex>,
}

impl AddrLists {
    fn candidates(&self, p: &Packet<'_>, out: &mut Vec<(u32, u32)>) {
        out.extend(self.always.iter().map(|&i| (i, NO_TX)));
        if let Some(ip) = p.ip {
            if let Some(idx) = &self.by_src {
                out.extend(idx.lookup(ip.src).iter().map(|&i| (i, NO_TX)));
            }
            if let Some(idx) = &self.by_dst {
                out.extend(idx.lookup(ip.dst).iter().map(|&i| (i, NO_TX)));
            }
        }
    }
}

/// One prefilter and, for each of its patterns, the signatures whose fast pattern it is.
struct Patterns {
    prefilter: Prefilter,
    sigs: Vec<Vec<u32>>,
}

impl Patterns {
    fn build(sigs: &[Signature], members: &[u32], algo: Algo) -> Result<Patterns, PrefilterError> {
        let mut patterns: Vec<Pattern> = Vec::new();
        let mut index = std::collections::HashMap::<Pattern, u32>::new();
        let mut pattern_sigs: Vec<Vec<u32>> = Vec::new();
        for &i in members {
            let Some(p) = &sigs[i as usize].fast_pattern else { continue };
            let id = *index.entry(p.clone()).or_insert_with(|| {
                patterns.push(p.clone());
                pattern_sigs.push(Vec::new());
                (patterns.len() - 1) as u32
            });
            pattern_sigs[id as usize].push(i);
        }
        Ok(Patterns { prefilter: Prefilter::build(&patterns, algo)?, sigs: pattern_sigs })
    }

    fn scan(&self, scratch: &mut Scratch, data: &[u8], out: &mut Vec<(u32, u32)>) {
        if data.is_empty() || self.prefilter.is_empty() {
            return;
        }
        let sigs = &self.sigs;
        self.prefilter.scan(scratch, data, &mut |pat| out.extend(sigs[pat as usize].iter().map(|&i| (i, NO_TX))));
    }
}

/// `pkthdr` signatures: verified on every packet, IP or not.
fn any_packet(sigs: &[Signature]) -> Vec<u32> {
    let pkthdr = |s: &Signature| s.proto == Proto::PktHdr && s.tx.is_none();
    sigs.iter().enumerate().filter(|(_, s)| pkthdr(s)).map(|(i, _)| i as u32).collect()
}

/// The reassembled stream a TCP packet brings to inspection.
#[derive(Debug, Clone, Copy, Default)]
pub struct StreamInput<'a> {
    /// Stream bytes of the packet's direction ready for inspection, and the
    /// stream offset of their first byte.
    pub chunk: Option<(&'a [u8], u64)>,
    /// The packet's payload went into the stream: stream rules do not look
    /// at the packet itself (they see its bytes in the stream), except
    /// those that require the packet too (`Signature::require_packet`).
    pub payload_in_stream: bool,
    /// The packet is a pseudo packet carrying the rest of a stream at flow
    /// end: only stream rules are run on it.
    pub pseudo: bool,
    /// Stream offset where the chunk's bytes not inspected before begin
    /// (inline, the chunk starts earlier so a pattern split over packets is
    /// whole in it): a match found in the older bytes alone was raised then.
    pub fresh_from: u64,
}

/// An immutable, shareable detection engine.
pub struct DetectEngine {
    sigs: Vec<Signature>,
    /// Flowbit names by the id the engine gave them.
    flowbit_names: Vec<String>,
    /// `flowint` names by id.
    flowint_names: Vec<String>,
    groups: Vec<Group>,
    pkthdr: Vec<u32>,
    /// Steps one content inspection may take (0: no limit).
    recursion_limit: u32,
    /// `packet-alert-max`.
    alert_max: usize,
    txs: tx::TxEngine,
    /// `frame:` signatures, verified on every frame of their type.
    frame_sigs: Vec<u32>,
    /// The flowbits that tag traffic (`traffic/id/<name>`, `traffic/label/<name>`):
    /// (id, a label rather than an id, name).
    traffic_bits: Vec<(u16, bool, String)>,
    runs_lua: bool,
}

/// A flow's traffic tags, as EVE records' `traffic` object lists them.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Traffic<'e> {
    pub ids: Vec<&'e str>,
    pub labels: Vec<&'e str>,
}

impl Traffic<'_> {
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty() && self.labels.is_empty()
    }
}

/// No transaction: a packet candidate.
const NO_TX: u32 = u32::MAX;
/// Candidate slots from here on are frames (`FRAME + index`), not transactions.
const FRAME: u32 = 1 << 30;

/// A worker's detection state.
#[derive(Default)]
pub struct DetectScratch {
    prefilter: Scratch,
    /// (signature, transaction slot or [`NO_TX`]).
    candidates: Vec<(u32, u32)>,
    inspect: InspectCtx,
    tx: tx::TxScratch,
    /// Alerts not raised because a packet had more than [`MAX_ALERTS_PER_PACKET`].
    pub alerts_over_limit: u64,
    /// The host state (`xbits`/`hostbits`) the workers share.
    pub hosts: Hosts,
    /// Inline (IPS): once a `drop` or `reject` matched a packet, a `pass`
    /// after it ends the packet's inspection without passing its flow.
    pub inline: bool,
    /// The packet and alert variables each signature that matched this
    /// packet captured, by the signature's address.
    sig_vars: Vec<(usize, crate::inspect::Captured)>,
    /// The worker's Lua states, their counters and messages.
    pub lua: crate::lua::LuaStates,
    /// The flow of the packet in hand as Lua scripts see it; set by the
    /// caller before inspecting, only where the engine runs scripts
    /// ([`DetectEngine::runs_lua`]).
    pub lua_flow: Option<crate::lua::LuaFlow>,
}

impl DetectScratch {
    /// Scratch space for a worker; `ips`: it decides packets inline.
    pub fn inline(ips: bool) -> DetectScratch {
        DetectScratch { inline: ips, ..DetectScratch::default() }
    }

    /// The same, with `hosts` as its handle on the host state.
    pub fn with_hosts(self, hosts: Hosts) -> DetectScratch {
        DetectScratch { hosts, ..self }
    }

    /// Inspections stopped by the backtracking budget or PCRE limits.
    pub fn limits_hit(&self) -> (u64, u64) {
        (self.inspect.budget_exhausted, self.inspect.pcre_limit_hits)
    }

    /// Fresh scratch space for another engine, keeping the counters and
    /// the host state (bits are known by name, the same in any engine).
    pub fn carried_over(&self) -> DetectScratch {
        DetectScratch {
            alerts_over_limit: self.alerts_over_limit,
            hosts: self.hosts.clone(),
            inline: self.inline,
            lua: self.lua.carried_over(),
            ..DetectScratch::default()
        }
    }
}

impl DetectEngine {
    /// Orders the signatures (in Suricata's default action order) and builds
    /// one prefilter per group.
    pub fn build(sigs: Vec<Signature>, algo: Algo) -> Result<DetectEngine, PrefilterError> {
        Self::build_ordered(sigs, algo, ActionOrder::default())
    }

    /// [`DetectEngine::build`] with the config's `action-order`.
    pub fn build_ordered(
        mut sigs: Vec<Signature>,
        algo: Algo,
        order: ActionOrder,
    ) -> Result<DetectEngine, PrefilterError> {
        // Stable: within an action and flowbits rank, rule load order decides.
        sigs.sort_by_key(|s| {
            let bits = (s.flowbits.rank(), crate::flowint::rank(&s.flowints), crate::hostbits::rank(&s.hostbits));
            (order.rank(s.action), bits)
        });
        let flowbit_names = number_flowbits(sigs.iter_mut());
        let flowint_names = number_flowints(&mut sigs);
        number_hostbits(&mut sigs);
        let mut groups = Vec::with_capacity(GROUPS.len());
        for g in GROUPS {
            let (mut stream, mut packet, mut always) = (Vec::new(), Vec::new(), Vec::new());
            for (i, s) in sigs.iter().enumerate() {
                if !in_group(s.proto, g) || s.tx.is_some() || s.frame.is_some() {
                    continue;
                }
                match (&s.fast_pattern, s.require_stream) {
                    (Some(_), true) => {
                        stream.push(i as u32);
                        // Found in every packet's payload as well as in the stream.
                        if s.require_packet {
                            packet.push(i as u32);
                        }
                    }
                    (Some(_), false) => packet.push(i as u32),
                    (None, _) => always.push(i as u32),
                }
            }
            let (ip_only, always): (Vec<u32>, Vec<u32>) = always.into_iter().partition(|&i| sigs[i as usize].ip_only);
            let (always, by_src, by_dst) = index_by_address(&sigs, always);
            let ip_only = {
                let (always, by_src, by_dst) = index_by_address(&sigs, ip_only);
                AddrLists { always, by_src, by_dst }
            };
            groups.push(Group {
                stream: Patterns::build(&sigs, &stream, algo)?,
                packet: Patterns::build(&sigs, &packet, algo)?,
                lists: AddrLists { always, by_src, by_dst },
                ip_only,
            });
        }
        let pkthdr = any_packet(&sigs);
        let txs = tx::TxEngine::build(&sigs, algo)?;
        let frame_sigs = sigs.iter().enumerate().filter(|(_, s)| s.frame.is_some()).map(|(i, _)| i as u32).collect();
        Ok(DetectEngine {
            frame_sigs,
            runs_lua: sigs.iter().any(|s| !s.lua.is_empty()),
            sigs,
            traffic_bits: traffic_bits(&flowbit_names),
            flowbit_names,
            flowint_names,
            groups,
            pkthdr,
            txs,
            recursion_limit: crate::inspect::DEFAULT_BUDGET,
            alert_max: MAX_ALERTS_PER_PACKET,
        })
    }

    /// The traffic tags set in a flow's `bits`: Suricata's convention of
    /// flowbits named `traffic/id/<name>` and `traffic/label/<name>`.
    pub fn traffic(&self, bits: &crate::flowbits::FlowBits) -> Traffic<'_> {
        let mut t = Traffic::default();
        for (_, label, name) in self.traffic_bits.iter().filter(|(id, _, _)| bits.get(*id)) {
            if *label { &mut t.labels } else { &mut t.ids }.push(name);
        }
        t
    }

    /// `detect.inspection-recursion-limit`: steps one content inspection
    /// may take, backtracking included (0: no limit).
    pub fn with_recursion_limit(mut self, limit: u32) -> Self {
        self.recursion_limit = limit;
        self
    }

    /// `packet-alert-max`: the most alerts one packet raises (at least one).
    pub fn with_alert_max(mut self, max: usize) -> Self {
        self.alert_max = max.max(1);
        self
    }

    /// Whether any signature runs a Lua script (the caller then describes
    /// the flow in [`DetectScratch::lua_flow`]).
    pub fn runs_lua(&self) -> bool {
        self.runs_lua || crate::lua::transforms_loaded()
    }

    pub fn signatures(&self) -> &[Signature] {
        &self.sigs
    }

    /// Flowbit names by the id this engine gave them.
    pub fn flowbit_names(&self) -> &[String] {
        &self.flowbit_names
    }

    /// The `flowint` names, by id.
    pub fn flowint_names(&self) -> &[String] {
        &self.flowint_names
    }

    /// The variables an alert of `sig` (matched on the packet just
    /// inspected) carries: the packet's, whichever signature captured them,
    /// as Suricata keeps them on the packet, and `sig`'s own alert variables.
    pub fn captured_by<'s>(
        &self,
        s: &'s DetectScratch,
        sig: &Signature,
    ) -> std::borrow::Cow<'s, [crate::inspect::CapturedVar]> {
        use crate::inspect::VarKind;
        let at = sig as *const Signature as usize;
        match &s.sig_vars[..] {
            [] => std::borrow::Cow::Borrowed(&[]),
            [(a, own)] if *a == at => std::borrow::Cow::Borrowed(own.as_slice()),
            all => {
                let pkt = all.iter().flat_map(|(_, v)| v).filter(|c| c.0 == VarKind::Pkt);
                let alert = all.iter().filter(|(a, _)| *a == at).flat_map(|(_, v)| v).filter(|c| c.0 == VarKind::Alert);
                std::borrow::Cow::Owned(pkt.chain(alert).cloned().collect())
            }
        }
    }

    /// A flow's bits that are set and counters that were, by name (what
    /// EVE's `metadata` writes).
    pub fn flow_vars<'a>(&'a self, st: &crate::FlowDetect) -> (Vec<&'a str>, Vec<(&'a str, u32)>) {
        let bits = (0..self.flowbit_names.len())
            .filter(|&i| st.bits.get(i as u16))
            .map(|i| self.flowbit_names[i].as_str())
            .collect();
        let ints = (0..self.flowint_names.len())
            .filter_map(|i| Some((self.flowint_names[i].as_str(), st.ints.get(i as u16)?)))
            .collect();
        (bits, ints)
    }

    /// For a flow's bits set under `old`, the id each has here (`None`: no
    /// rule of this engine names it), so a rule reload keeps flows' state.
    pub fn flowbit_ids_from(&self, old: &DetectEngine) -> Vec<Option<u16>> {
        ids_from(&old.flowbit_names, &self.flowbit_names)
    }

    /// [`flowbit_ids_from`](Self::flowbit_ids_from) for `flowint` counters.
    pub fn flowint_ids_from(&self, old: &DetectEngine) -> Vec<Option<u16>> {
        ids_from(&old.flowint_names, &self.flowint_names)
    }

    /// Runs every signature that can match `p`, calling `on_match` for each
    /// match in priority order. A matching `pass` signature ends inspection
    /// of the packet and, given the flow's state, of the rest of its flow.
    pub fn inspect<'e>(
        &'e self,
        p: &Packet<'_>,
        flow: Option<FlowInfo>,
        state: Option<&mut FlowDetect>,
        s: &mut DetectScratch,
        on_match: &mut dyn FnMut(&'e Signature),
    ) {
        self.inspect_stream(p, flow, state, StreamInput::default(), s, on_match)
    }

    /// [`inspect`](Self::inspect) for a packet of a tracked TCP session:
    /// rules with payload keywords look at the stream chunk, and at the
    /// packet payload only when it did not go into the stream.
    pub fn inspect_stream<'e>(
        &'e self,
        p: &Packet<'_>,
        flow: Option<FlowInfo>,
        state: Option<&mut FlowDetect>,
        stream: StreamInput<'_>,
        s: &mut DetectScratch,
        on_match: &mut dyn FnMut(&'e Signature),
    ) {
        self.inspect_app(p, flow, state, stream, None, s, &mut |sig, _, _| on_match(sig))
    }

    /// Everything a packet brings: its own payload, its stream chunk, and
    /// the transactions of its flow that progressed. `on_match` gets the
    /// signature, for a transaction signature the transaction's id, and
    /// whether it matched in the reassembled stream.
    #[allow(clippy::too_many_arguments)]
    pub fn inspect_app<'e>(
        &'e self,
        p: &Packet<'_>,
        flow: Option<FlowInfo>,
        state: Option<&mut FlowDetect>,
        stream: StreamInput<'_>,
        app: Option<&AppInput<'_>>,
        s: &mut DetectScratch,
        on_match: &mut dyn FnMut(&'e Signature, Option<u64>, bool),
    ) {
        self.inspect_phase(p, flow, state, stream, app, false, s, &mut |sig, tx, _, in_stream| {
            on_match(sig, tx, in_stream)
        })
    }

    /// [`inspect_app`](Self::inspect_app) restricted to the transaction
    /// signatures when `tx_only` (firewall mode runs the packet's own
    /// signatures, then its application filter, then these); pass `app:
    /// None` for the packet's signatures alone. `on_match` also gets the
    /// frame a `frame:` signature matched, by its place in `app.frames`.
    #[allow(clippy::too_many_arguments)]
    pub fn inspect_phase<'e>(
        &'e self,
        p: &Packet<'_>,
        flow: Option<FlowInfo>,
        mut state: Option<&mut FlowDetect>,
        stream: StreamInput<'_>,
        app: Option<&AppInput<'_>>,
        tx_only: bool,
        s: &mut DetectScratch,
        on_match: &mut dyn FnMut(&'e Signature, Option<u64>, Option<usize>, bool),
    ) {
        if state.as_ref().is_some_and(|st| st.passed) {
            return;
        }
        s.inspect.set_limit(self.recursion_limit);
        s.candidates.clear();
        s.sig_vars.clear();
        let no_payload = flow.is_some_and(|f| f.no_payload);
        let payload = if no_payload { &[][..] } else { p.payload() };
        let stream = if no_payload { StreamInput { chunk: None, ..stream } } else { stream };
        // As in Suricata, IP-only signatures see a flow's first packet in
        // each direction, and no other: later packets do not look them up.
        let ip_only_done = match (state.as_deref_mut(), flow) {
            (Some(st), Some(f)) if !stream.pseudo => {
                std::mem::replace(&mut st.ip_only_done[usize::from(!f.to_server)], true)
            }
            _ => false,
        };
        if let Some(gid) = packet_group(p).filter(|_| !tx_only) {
            let g = &self.groups[gid as usize];
            let cands = &mut s.candidates;
            g.packet.scan(&mut s.prefilter, payload, cands);
            // Stream signatures see a payload that went into the stream in the stream chunk.
            if !stream.payload_in_stream {
                g.stream.scan(&mut s.prefilter, payload, cands);
            }
            if let Some((chunk, _)) = stream.chunk {
                g.stream.scan(&mut s.prefilter, chunk, cands);
            }
            g.lists.candidates(p, cands);
            if !ip_only_done && !stream.pseudo {
                g.ip_only.candidates(p, cands);
            }
        }
        if !tx_only {
            s.candidates.extend(self.pkthdr.iter().map(|&i| (i, NO_TX)));
        }
        if let Some(app) = app.filter(|_| !self.txs.is_empty()) {
            self.txs.candidates(app, &mut s.tx, &mut s.candidates);
        }
        if let Some(app) = app.filter(|a| !a.frames.is_empty() && !self.frame_sigs.is_empty()) {
            for (k, f) in app.frames.iter().enumerate().take((NO_TX - FRAME - 1) as usize) {
                for &i in &self.frame_sigs {
                    let fs = self.sigs[i as usize].frame.as_ref();
                    if fs.is_some_and(|fs| fs.ftype == f.ftype && fs.proto.name() == f.proto) {
                        s.candidates.push((i, FRAME + k as u32));
                    }
                }
            }
        }
        s.candidates.sort_unstable();
        s.candidates.dedup();
        let mut alerts = 0;
        let mut dropped = false;
        for &(i, slot) in &s.candidates {
            let sig = &self.sigs[i as usize];
            let frame = (slot != NO_TX && slot >= FRAME).then(|| (slot - FRAME) as usize);
            let tx = app.filter(|_| frame.is_none()).and_then(|a| a.txs.get(slot as usize));
            let frame_ref = frame.and_then(|k| app.and_then(|a| a.frames.get(k)));
            if stream.pseudo && !sig.require_stream && tx.is_none() && frame_ref.is_none()
                || sig.ip_only && ip_only_done
            {
                continue;
            }
            s.inspect.matched_in_stream = false;
            s.inspect.captured.clear();
            s.inspect.entropy.clear();
            if !sig.bit_tests.iter().all(|t| t.matches(state.as_deref().map(|st| &st.bits))) {
                continue;
            }
            if !sig.var_tests.iter().all(|t| var_holds(t, state.as_deref(), &s.sig_vars)) {
                continue;
            }
            let ok = match (tx, &sig.tx, app) {
                _ if frame_ref.is_some() || sig.frame.is_some() => match (frame_ref, &sig.frame, app) {
                    (Some(f), Some(fs), Some(app)) => {
                        let to_server = f.dir == vigil_types::Direction::ToServer;
                        let (src, dst) = if to_server { (app.client, app.server) } else { (app.server, app.client) };
                        let info = flow.map(|fl| FlowInfo { to_server, ..fl });
                        let v4 = p.ip.is_none_or(|ip| ip.src.is_ipv4());
                        proto_matches(sig.proto, p, v4)
                            && tx_header_matches(sig, src, dst)
                            && app_proto_ok(sig, info)
                            && sig.checks.iter().all(|c| c.matches(p, info))
                            && sig.iprep.iter().all(|r| r.matches(p))
                            && tx::frame_matches(fs, &f.data, &mut s.tx, &mut s.inspect)
                    }
                    _ => false,
                },
                (Some(t), Some(tx_sig), Some(app)) => {
                    let (src, dst) = match tx_sig.side {
                        vigil_types::Direction::ToServer => (app.client, app.server),
                        vigil_types::Direction::ToClient => (app.server, app.client),
                    };
                    let info =
                        flow.map(|f| FlowInfo { to_server: tx_sig.side == vigil_types::Direction::ToServer, ..f });
                    tx_header_matches(sig, src, dst)
                        && app_proto_ok(sig, info)
                        && tx_proto_ok(sig, t.tx.proto())
                        && sig.checks.iter().all(|c| c.matches(p, info))
                        && sig.iprep.iter().all(|r| r.matches(p))
                        && sig.headers.iter().all(|h| h.matches(p, &mut s.inspect))
                        && tx::tx_matches(tx_sig, t.tx, app.now_secs, &mut s.tx, &mut s.inspect)
                        && (sig.payload.is_empty() || payload_matches(sig, payload, stream, &mut s.inspect))
                }
                (None, None, _) => matches(sig, p, flow, payload, stream, &mut s.inspect),
                _ => false,
            };
            let ok = ok
                && (sig.lua.is_empty() || {
                    let tx_in =
                        tx.map(|t| (t.tx, sig.tx.as_ref().map_or(vigil_types::Direction::ToServer, |ts| ts.side)));
                    // A packet signature's script sees the flow's latest transaction of its protocol.
                    let tx_in = tx_in.or_else(|| {
                        let want = sig.app_proto?;
                        let t = app?.txs.iter().rev().find_map(|t| t.tx.as_proto(want))?;
                        let dir = if flow.is_none_or(|f| f.to_server) {
                            vigil_types::Direction::ToServer
                        } else {
                            vigil_types::Direction::ToClient
                        };
                        Some((t, dir))
                    });
                    let vars = state
                        .as_deref_mut()
                        .map(|st| std::cell::RefCell::new(crate::lua::LuaVars { st, int_names: &self.flowint_names }));
                    let input = crate::lua::LuaInput {
                        p: Some(p),
                        flow: s.lua_flow.as_ref(),
                        tx: tx_in,
                        stream: stream.chunk.map(|(c, _)| c),
                        rule: Some(crate::lua::LuaRule::of(sig)),
                        vars: vars.as_ref().map(|v| v as &dyn crate::lua::FlowVars),
                        file: None,
                    };
                    sig.lua.iter().all(|script| s.lua.run(script, &input))
                });
            // What `entropy` computed stays with the flow, match or not.
            if !s.inspect.entropy.is_empty() {
                if let Some(st) = state.as_deref_mut() {
                    s.inspect.entropy.iter().for_each(|(n, v)| st.set_entropy(n, *v));
                }
            }
            // Host bits last: all workers share them, and offline a worker
            // may wait its turn to read them.
            if !ok || (!sig.host_tests.is_empty() && !host_tests_match(&s.hosts, &sig.host_tests, p)) {
                continue;
            }
            // A counted transaction is inspected at each change: a signature matches it once.
            if let (Some(t), Some(st)) = (tx.filter(|t| t.counted), state.as_deref_mut()) {
                if st.tx_matched_before(t.tx.id(), i) {
                    continue;
                }
            }
            if !sig.int_steps.is_empty() {
                // Without a flow there are no counters: flowint fails, as in Suricata.
                let Some(st) = state.as_deref_mut() else { continue };
                // A step that ran changed a counter, even when a later one failed.
                st.vars_changed = true;
                if !sig.int_steps.iter().all(|step| step.run(&mut st.ints)) {
                    continue;
                }
            }
            if let Some(st) = state.as_deref_mut().filter(|_| !sig.bit_actions.is_empty()) {
                sig.bit_actions.iter().for_each(|a| a.apply(&mut st.bits));
                st.vars_changed = true;
            }
            if let Some(ip) = p.ip.filter(|_| !sig.host_actions.is_empty()) {
                s.hosts.apply_bits(&sig.host_actions, ip.src, ip.dst, p.ts);
            }
            if !sig.noalert {
                if alerts == self.alert_max {
                    s.alerts_over_limit += 1;
                    continue;
                }
                alerts += 1;
            }
            let in_stream = s.inspect.matched_in_stream;
            if !s.inspect.captured.is_empty() {
                let captured = std::mem::take(&mut s.inspect.captured);
                if let Some(st) = state.as_deref_mut() {
                    for (_, name, v) in captured.iter().filter(|c| c.0 == crate::inspect::VarKind::Flow) {
                        st.set_flowvar(name, v);
                    }
                }
                let own: crate::inspect::Captured =
                    captured.into_iter().filter(|c| c.0 != crate::inspect::VarKind::Flow).collect();
                if !own.is_empty() {
                    s.sig_vars.push((sig as *const Signature as usize, own));
                }
            }
            on_match(sig, tx.map(|t| t.tx.id()), frame, in_stream);
            dropped |= s.inline && matches!(sig.action, RuleAction::Drop | RuleAction::Reject);
            if sig.action == RuleAction::Pass {
                // A pass ends the packet's inspection; a signature of flow
                // scope passes the rest of the flow too, unless the packet
                // is already dropped.
                let covers_flow = sig.scope.covers_flow(in_stream) && !dropped;
                if let Some(st) = state.as_deref_mut().filter(|_| covers_flow) {
                    st.passed = true;
                }
                return;
            }
        }
    }
}

/// A `flowvar` or `pktvar` test: the flow's variable, or one a signature
/// captured from this packet earlier.
fn var_holds(
    t: &crate::compile::VarTest,
    st: Option<&FlowDetect>,
    sig_vars: &[(usize, crate::inspect::Captured)],
) -> bool {
    if t.pkt {
        sig_vars
            .iter()
            .flat_map(|(_, vars)| vars)
            .any(|(kind, name, v)| *kind == crate::inspect::VarKind::Pkt && *name == t.name && t.holds(v))
    } else {
        st.and_then(|st| st.flowvars.iter().find(|(n, _)| *n == t.name)).is_some_and(|(_, v)| t.holds(v))
    }
}

/// A transaction signature's header against the flow's endpoints, oriented
/// as the side it inspects.
fn tx_header_matches(sig: &Signature, src: (IpAddr, u16), dst: (IpAddr, u16)) -> bool {
    header_matches(sig, src.0, dst.0, Some(src.1), Some(dst.1))
        || sig.bidirectional && header_matches(sig, dst.0, src.0, Some(dst.1), Some(src.1))
}

/// A transaction of a protocol the flow spoke before a change (the HTTP/1
/// request of an `h2c` upgrade) is one the rule's protocol applies to
/// itself: an `alert http2` rule does not inspect it, as Suricata, whose
/// flow then has the new protocol's transactions only.
fn tx_proto_ok(sig: &Signature, tx: vigil_types::AppProto) -> bool {
    match sig.app_proto {
        Some(want) if !sig.app_proto_negated => vigil_applayer::proto::applies(want, tx),
        _ => true,
    }
}

/// The flow speaks (or, negated, does not speak) the signature's application protocol,
/// or one that carries it (DCE/RPC rules on SMB flows, as in Suricata), in
/// the direction its `app-layer-protocol` mode looks at. A negation never
/// matches a protocol not known yet.
fn app_proto_ok(sig: &Signature, flow: Option<FlowInfo>) -> bool {
    use crate::compile::ProtoMode;
    let Some(want) = sig.app_proto else { return true };
    let Some(f) = flow else { return false };
    let dir = |to_server: bool| {
        let side = if to_server { f.dir_proto.to_server } else { f.dir_proto.to_client };
        side.get(f.app_proto)
    };
    let one = |have: vigil_types::AppProto| {
        if have == vigil_types::AppProto::Unknown && sig.app_proto_negated {
            return false;
        }
        vigil_applayer::proto::applies(want, have) != sig.app_proto_negated
    };
    match sig.app_proto_mode {
        ProtoMode::Final | ProtoMode::Original => one(f.app_proto),
        ProtoMode::Direction => one(dir(f.to_server)),
        ProtoMode::ToServer => one(dir(true)),
        ProtoMode::ToClient => one(dir(false)),
        ProtoMode::Either => one(dir(true)) || one(dir(false)),
    }
}

/// Splits the signatures without a fast pattern into those found through an
/// address index (by source list, else destination list) and the rest.
fn index_by_address(sigs: &[Signature], always: Vec<u32>) -> (Vec<u32>, Option<AddrIndex>, Option<AddrIndex>) {
    let (mut rest, mut src, mut dst) = (Vec::new(), Vec::new(), Vec::new());
    for i in always {
        let s = &sigs[i as usize];
        if s.bidirectional || s.proto == Proto::PktHdr {
            rest.push(i);
        } else if !s.src.is_any() {
            src.push((i, &*s.src));
        } else if !s.dst.is_any() {
            dst.push((i, &*s.dst));
        } else {
            rest.push(i);
        }
    }
    let mut build = |items: Vec<(u32, &vigil_rules::AddressSet)>| {
        if items.is_empty() {
            return None;
        }
        let idx = AddrIndex::build(&items);
        if idx.is_none() {
            // Too large to index: these stay on the per-packet list.
            rest.extend(items.iter().map(|(i, _)| *i));
        }
        idx
    };
    let (by_src, by_dst) = (build(src), build(dst));
    rest.sort_unstable();
    (rest, by_src, by_dst)
}

/// The packet's hosts have the bits the signature tests; a packet without IP has none.
fn host_tests_match(hosts: &Hosts, tests: &[HostBitOp<u64>], p: &Packet<'_>) -> bool {
    let Some(ip) = p.ip else { return false };
    hosts.bits_hold(tests, ip.src, ip.dst, p.ts)
}

/// For each name of `old` (by id), its id in `new`.
fn ids_from(old: &[String], new: &[String]) -> Vec<Option<u16>> {
    let here: std::collections::HashMap<&str, u16> =
        new.iter().enumerate().map(|(i, n)| (n.as_str(), i as u16)).collect();
    old.iter().map(|n| here.get(n.as_str()).copied()).collect()
}

/// Ids for names, in the order first seen; the names by id at the end.
#[derive(Default)]
struct Names(std::collections::HashMap<String, u16>);

impl Names {
    fn id(&mut self, name: &str) -> u16 {
        let n = self.0.len() as u16;
        *self.0.entry(name.to_string()).or_insert(n)
    }

    fn into_names(self) -> Vec<String> {
        let mut names = vec![String::new(); self.0.len()];
        for (name, i) in self.0 {
            names[i as usize] = name;
        }
        names
    }
}

/// Gives every flowint name an id, shared by all signatures; the names by id.
fn number_flowints(sigs: &mut [Signature]) -> Vec<String> {
    let mut names = Names::default();
    for s in sigs.iter_mut() {
        let steps = s.flowints.iter().map(|(name, op)| FlowintStep { id: names.id(name), op: op.map(|n| names.id(n)) });
        s.int_steps = steps.collect();
        // Counters Lua scripts registered share the names' space.
        for name in s.lua.iter().flat_map(|l| l.flowints.iter()) {
            names.id(name);
        }
    }
    names.into_names()
}

/// Gives every host bit its name's id (one space for `xbits` and
/// `hostbits`, host and pair); splits each signature's keywords into tests
/// and actions.
fn number_hostbits(sigs: &mut [Signature]) {
    for s in sigs.iter_mut() {
        let ops = s.hostbits.iter().map(|o| HostBitOp {
            name: crate::hostbits::bit_id(&o.name),
            track: o.track,
            cmd: o.cmd,
            expire_secs: o.expire_secs,
        });
        let (tests, actions) = ops.partition(|o| o.cmd.is_check());
        s.host_tests = tests;
        s.host_actions = actions;
    }
}

/// Gives every flowbit name an id, shared by all signatures; the names by id.
/// The flowbits among `names` (by id) that tag traffic.
fn traffic_bits(names: &[String]) -> Vec<(u16, bool, String)> {
    let tag = |n: &str| {
        let rest = n.strip_prefix("traffic/")?;
        match rest.split_once('/')? {
            ("id", name) => Some((false, name.to_string())),
            ("label", name) => Some((true, name.to_string())),
            _ => None,
        }
    };
    names.iter().enumerate().filter_map(|(i, n)| tag(n).map(|(label, name)| (i as u16, label, name))).collect()
}

fn number_flowbits<'a>(sigs: impl Iterator<Item = &'a mut Signature>) -> Vec<String> {
    number_flowbits_from(&[], sigs)
}

/// [`number_flowbits`] keeping the ids `known` gave its names (another
/// engine's, whose flows' bits these signatures share).
fn number_flowbits_from<'a>(known: &[String], sigs: impl Iterator<Item = &'a mut Signature>) -> Vec<String> {
    let mut ids: std::collections::HashMap<String, u16> =
        known.iter().enumerate().map(|(i, n)| (n.clone(), i as u16)).collect();
    let mut id = |name: &str| {
        let n = ids.len() as u16;
        *ids.entry(name.to_string()).or_insert(n)
    };
    for s in sigs {
        let tests = s.flowbits.tests.iter().map(|(names, any, negated)| BitTest {
            ids: names.iter().map(|n| id(n)).collect(),
            any: *any,
            negated: *negated,
        });
        s.bit_tests = tests.collect();
        let actions = s
            .flowbits
            .actions
            .iter()
            .map(|(names, cmd)| BitAction { ids: names.iter().map(|n| id(n)).collect(), cmd: *cmd });
        s.bit_actions = actions.collect();
    }
    let mut names = vec![String::new(); ids.len()];
    for (name, i) in ids {
        names[i as usize] = name;
    }
    names
}

fn in_group(proto: Proto, g: GroupId) -> bool {
    match proto {
        Proto::Ip | Proto::Ipv4 | Proto::Ipv6 => true,
        Proto::Tcp => g == GroupId::Tcp,
        Proto::Udp => g == GroupId::Udp,
        Proto::Icmp => matches!(g, GroupId::Icmpv4 | GroupId::Icmpv6),
        Proto::Icmpv4 => g == GroupId::Icmpv4,
        Proto::Icmpv6 => g == GroupId::Icmpv6,
        Proto::Sctp => g == GroupId::Other,
        Proto::PktHdr => false,
    }
}

fn packet_group(p: &Packet<'_>) -> Option<GroupId> {
    let ip = p.ip?;
    Some(match p.transport {
        Transport::Tcp { .. } => GroupId::Tcp,
        Transport::Udp { .. } => GroupId::Udp,
        Transport::Icmp { .. } if ip.src.is_ipv4() => GroupId::Icmpv4,
        Transport::Icmp { .. } => GroupId::Icmpv6,
        _ => GroupId::Other,
    })
}

fn proto_matches(proto: Proto, p: &Packet<'_>, v4: bool) -> bool {
    match proto {
        Proto::Ip => true,
        Proto::Ipv4 => v4,
        Proto::Ipv6 => !v4,
        Proto::Tcp => matches!(p.transport, Transport::Tcp { .. }),
        Proto::Udp => matches!(p.transport, Transport::Udp { .. }),
        Proto::Icmp => matches!(p.transport, Transport::Icmp { .. }),
        Proto::Icmpv4 => v4 && matches!(p.transport, Transport::Icmp { .. }),
        Proto::Icmpv6 => !v4 && matches!(p.transport, Transport::Icmp { .. }),
        Proto::Sctp => matches!(p.transport, Transport::Sctp { .. }),
        Proto::PktHdr => true,
    }
}

fn port_ok(set: &PortSet, port: Option<u16>) -> bool {
    match port {
        Some(p) => set.contains(p),
        // A packet without ports only matches rules that do not name any.
        None => set.is_full(),
    }
}

fn header_matches(sig: &Signature, src: IpAddr, dst: IpAddr, sport: Option<u16>, dport: Option<u16>) -> bool {
    sig.src.contains(src) && sig.dst.contains(dst) && port_ok(&sig.sport, sport) && port_ok(&sig.dport, dport)
}

fn matches(
    sig: &Signature,
    p: &Packet<'_>,
    flow: Option<FlowInfo>,
    payload: &[u8],
    stream: StreamInput<'_>,
    ictx: &mut InspectCtx,
) -> bool {
    match p.ip {
        Some(ip) => {
            if !proto_matches(sig.proto, p, ip.src.is_ipv4()) {
                return false;
            }
            let (sp, dp) = (p.sport(), p.dport());
            let forward = header_matches(sig, ip.src, ip.dst, sp, dp);
            if !(forward || sig.bidirectional && header_matches(sig, ip.dst, ip.src, dp, sp)) {
                return false;
            }
        }
        // Packets without IP only meet `pkthdr` rules that name no address or port.
        None => {
            let any = sig.src.is_any() && sig.dst.is_any() && sig.sport.is_full() && sig.dport.is_full();
            if sig.proto != Proto::PktHdr || !any {
                return false;
            }
        }
    }
    if !app_proto_ok(sig, flow)
        || !sig.checks.iter().all(|c| c.matches(p, flow))
        || !sig.iprep.iter().all(|r| r.matches(p))
    {
        return false;
    }
    if !sig.headers.iter().all(|h| h.matches(p, ictx)) {
        return false;
    }
    sig.payload.is_empty() || payload_matches(sig, payload, stream, ictx)
}

/// A match in a chunk that starts before `fresh_from` (inline, bytes already
/// inspected come along): whether it is a new one. One the older bytes hold
/// alone was raised on the packet that brought them, unless the new bytes
/// hold one of their own; a new match across both is found only when the
/// older bytes hold none.
fn fresh_match(sig: &Signature, chunk: &[u8], base: u64, fresh_from: u64, ictx: &mut InspectCtx) -> bool {
    let split = fresh_from.saturating_sub(base).min(chunk.len() as u64) as usize;
    if split == 0 || split == chunk.len() {
        return true;
    }
    let (old, new) = chunk.split_at(split);
    !inspect_at(&sig.payload, old, base, ictx) || inspect_at(&sig.payload, new, fresh_from, ictx)
}

/// The signature's payload keywords against the stream chunk or the packet payload.
fn payload_matches(sig: &Signature, payload: &[u8], stream: StreamInput<'_>, ictx: &mut InspectCtx) -> bool {
    // Raw bytes carry no data representation: `dce` reads big-endian there, as in Suricata.
    ictx.dce_little = false;
    if sig.require_stream {
        if let Some((chunk, base)) = stream.chunk {
            if !chunk.is_empty()
                && inspect_at(&sig.payload, chunk, base, ictx)
                && fresh_match(sig, chunk, base, stream.fresh_from, ictx)
            {
                ictx.matched_in_stream = true;
                return true;
            }
        }
        if stream.payload_in_stream && !sig.require_packet {
            return false;
        }
    }
    if sig.stream_only {
        return false;
    }
    // Payload keywords need a payload (Suricata inspects none on empty packets).
    !payload.is_empty() && inspect(&sig.payload, payload, ictx)
}
