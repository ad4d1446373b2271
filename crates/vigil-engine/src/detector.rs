//! Detection for one worker: runs a packet's (and its flow's and
//! transactions') signatures, weighs every match's fate (thresholds, rate
//! filters, pass and drop order), applies exception policies, and writes
//! alerts, drops and the requests matches make of the flow (transactions
//! not to log, files to store, a bypass).

use crate::app::FlowApp;
use crate::error::EngineError;
use crate::outputs::{AlertApp, FlowAtAlert, Outputs};
use std::sync::Arc;
use vigil_decode::{Packet, PacketSource};
use vigil_detect::compile::{FlowInfo, RuleAction};
use vigil_detect::engine::firewall::{Firewall, FwApp, FwDrop, FwMatch, FwPacket, FwScope, FwVerdict, PacketHook};
use vigil_detect::{AppInput, DetectScratch, FlowDetect, Signature, StreamInput};
use vigil_output::DropReason;
use vigil_types::{AppProto, Direction};

/// Detection and what it keeps per worker.
pub(crate) struct Detector {
    /// The rules, their detection engine and `threshold.config`.
    pub(crate) rules: Arc<crate::rules::LoadedRules>,
    pub(crate) scratch: DetectScratch,
    pub(crate) ips: bool,
    /// Alerts raised (written to the outputs).
    pub alerts: u64,
    /// Matches not logged: `noalert` signatures and thresholds (`detect.alerts_suppressed`).
    pub suppressed: u64,
    /// Transactions a `config` rule said not to log, drained by the worker.
    pub(crate) no_log: Vec<u64>,
    /// A `bypass` signature matched in the last inspection.
    pub(crate) bypass_flow: bool,
    /// Files the last inspection's `filestore` matches asked to keep:
    /// (transaction, or `None` for the whole flow; sides; signature).
    pub(crate) store_files: Vec<(Option<u64>, &'static [Direction], u32)>,
    /// A `tls.store` signature matched in the last inspection.
    pub(crate) tls_store: bool,
    /// The IPS dropped the packet in hand (or a packet inside it): an inline
    /// capture must not let it through.
    pub verdict_drop: bool,
    /// Send `reject` refusals (live runs, where there is a network to send them to).
    pub respond: bool,
    /// The refusals the packet in hand earned, for the capture to send.
    pub responses: Vec<crate::reject::Response>,
    /// Exception policies: resolved, pending for the packet in hand, counted.
    pub exceptions: crate::exception::ExceptionState,
    /// Packets dropped, by [`DropReason::ALL`] index (`ips.drop_reason.*`).
    pub drop_reasons: [u64; DropReason::ALL.len()],
    /// The packet's urgent data is to be dropped (`stream.reassembly.urgent`).
    pub urgent_drop: bool,
    /// Tags the alerts of the packet in hand set (`tag`).
    pub(crate) new_tags: Vec<crate::tag::NewTag>,
    /// Firewall mode's counters (`firewall.*`).
    pub fw: FwCounts,
    /// The firewall dropped the packet in hand: threat detection never saw
    /// it, so `ips.*` does not count it.
    pub fw_blocked: bool,
    /// Where messages raised while inspecting go (Lua scripts that failed,
    /// their `suricata.log` lines): the `logging` outputs and their directory.
    pub(crate) runtime_log: Option<Arc<(vigil_config::Logging, std::path::PathBuf)>>,
}

/// Firewall mode's counters: packets the firewall accepted and blocked,
/// and why it blocked them.
#[derive(Debug, Default, Clone, Copy)]
pub struct FwCounts {
    pub accepted: u64,
    pub blocked: u64,
    pub rejected: u64,
    pub rules: u64,
    pub default_packet_policy: u64,
    pub default_app_policy: u64,
    pub pre_flow_hook: u64,
    pub pre_stream_hook: u64,
    pub flow_drop: u64,
}

/// The flow as Lua's `suricata.flow` shows it.
fn lua_flow(a: &FlowAtAlert, p: &Packet<'_>, info: Option<FlowInfo>) -> vigil_detect::lua::LuaFlow {
    let sides = crate::outputs::LuaSides {
        ts: info.map(|i| i.dir_proto.to_server.get(i.app_proto)),
        tc: info.map(|i| i.dir_proto.to_client.get(i.app_proto)),
    };
    crate::outputs::lua_flow(a, p.proto, p.ts, info.map(|i| i.app_proto), sides)
}

impl Detector {
    /// The rules this worker runs now (after any reload).
    pub(crate) fn rules(&self) -> &crate::rules::LoadedRules {
        &self.rules
    }

    /// Runs detection on a packet (and the transactions of its flow that
    /// progressed), writes its alerts and, in IPS mode, its drop record;
    /// true when an alert was raised.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn run(
        &mut self,
        p: &Packet<'_>,
        flow: Option<(FlowAtAlert, FlowInfo, &mut FlowDetect)>,
        stream: StreamInput<'_>,
        app: Option<&AppInput<'_>>,
        fw_app: Option<&FwApp<'_>>,
        log_stream: Option<(&vigil_stream::TcpSession, Direction)>,
        outputs: &mut Outputs,
    ) -> Result<bool, EngineError> {
        let (at_alert, info, mut state) = match flow {
            Some((at, info, st)) => (Some(at), Some(info), Some(st)),
            None => (None, None, None),
        };
        let flow_id = at_alert.map(|a| a.id);
        // A dropped flow's packets are dropped without inspection (and a
        // limit they meet on the way changes nothing more).
        let fw_mode = self.rules.firewall.is_some();
        // In firewall mode a flow threat detection dropped is `firewall`'s
        // to count (the firewall did not stop it); one the firewall dropped is here.
        if let Some(st) = state.as_deref_mut().filter(|st| st.dropped && (st.fw.dropped || !fw_mode)) {
            if self.ips {
                let real = p.src != PacketSource::FlowTimeout;
                self.verdict_drop |= real;
                let reason = if st.fw.dropped {
                    // The firewall's own drop: threat detection never sees these.
                    if real {
                        self.fw_blocked = true;
                        self.fw.blocked += 1;
                        self.fw.flow_drop += 1;
                    }
                    DropReason::FirewallFlowDrop
                } else {
                    count_drop(&mut self.drop_reasons, p, DropReason::FlowDrop);
                    DropReason::FlowDrop
                };
                log_drop(p, flow_id, info, Some(st), reason, None, DROPPED, outputs)?;
            }
            return Ok(false);
        }
        if let Some(st) = state.as_deref_mut().filter(|st| st.exception_passed) {
            // A passed flow applies nothing more, but its record lists what it met.
            if let Some(target) = self.exceptions.pending.take() {
                st.exceptions |= 1 << target.index();
            }
            return Ok(false);
        }
        // A bypassed flow is not inspected any more.
        if state.as_deref().is_some_and(|st| st.bypassed) {
            return Ok(false);
        }
        if let Some(target) = self.exceptions.pending.take() {
            if self.apply_exception(target, p, flow_id, info, state.as_deref_mut(), outputs)? {
                return Ok(false);
            }
        }
        // Urgent data the stream's policy drops (its bytes stayed out of the stream).
        if std::mem::take(&mut self.urgent_drop) && self.ips {
            self.verdict_drop |= p.src != PacketSource::FlowTimeout;
            count_drop(&mut self.drop_reasons, p, DropReason::StreamUrgent);
            log_drop(p, flow_id, info, state, DropReason::StreamUrgent, None, DROPPED, outputs)?;
            return Ok(false);
        }
        if let Some(fw) = self.rules.firewall.clone() {
            return self.firewall(&fw, p, at_alert.as_ref(), info, state, stream, app, fw_app, log_stream, outputs);
        }
        self.threat(p, at_alert.as_ref(), info, state, stream, app, false, log_stream, outputs).map(|(a, _)| a)
    }

    /// Threat detection on a packet: its signatures and, with `app`, those
    /// of its flow's transactions (only those with `tx_only`); writes alerts
    /// and drop records. Returns whether it alerted and whether it dropped
    /// the packet.
    #[allow(clippy::too_many_arguments)]
    fn threat(
        &mut self,
        p: &Packet<'_>,
        at_alert: Option<&FlowAtAlert>,
        info: Option<FlowInfo>,
        mut state: Option<&mut FlowDetect>,
        stream: StreamInput<'_>,
        app: Option<&AppInput<'_>>,
        tx_only: bool,
        log_stream: Option<(&vigil_stream::TcpSession, Direction)>,
        outputs: &mut Outputs,
    ) -> Result<(bool, bool), EngineError> {
        let flow_id = at_alert.map(|a| a.id);
        let Some(engine) = self.rules.engine.as_deref() else { return Ok((false, false)) };
        // Filled only when something matches: no allocation on quiet packets.
        let mut matched: Vec<(&Signature, Option<u64>, Option<usize>, bool)> = Vec::new();
        let sink = &mut |sig, tx, frame, in_stream| matched.push((sig, tx, frame, in_stream));
        if engine.runs_lua() {
            self.scratch.lua_flow = at_alert.map(|a| lua_flow(a, p, info));
        }
        engine.inspect_phase(p, info, state.as_deref_mut(), stream, app, tx_only, &mut self.scratch, sink);
        if engine.runs_lua() {
            self.scratch.lua.messages.extend(vigil_detect::lua::take_transform_messages());
        }
        if !self.scratch.lua.messages.is_empty() {
            let messages = std::mem::take(&mut self.scratch.lua.messages);
            crate::log::write_lua(messages, "detect-lua", self.runtime_log.as_deref());
        }
        // Bits and counters set now are in this packet's records already, as in Suricata.
        if let (Some(st), Some(id)) = (state.as_deref_mut().filter(|st| st.vars_changed), flow_id) {
            st.vars_changed = false;
            outputs.set_flow_vars(id, flow_vars_json(engine, st));
        }
        if matched.is_empty() {
            return Ok((false, false));
        }
        // Every match's fate first: the packet's verdict, which each of its
        // alerts carries, weighs them all (thresholds and rate filters included).
        let mut decided: Vec<Decided<'_>> = Vec::with_capacity(matched.len());
        for (sig, tx_id, frame, in_stream) in matched {
            let frame = frame.and_then(|k| app.and_then(|a| a.frames.get(k)));
            // A frame of a transaction logs that transaction.
            let tx_id = tx_id.or(frame.and_then(|f| f.tx_id));
            self.bypass_flow |= sig.bypass;
            self.tls_store |= sig.tls_store;
            if let Some(fs) = &sig.filestore {
                let packet_side = info.map(|i| if i.to_server { Direction::ToServer } else { Direction::ToClient });
                let side = sig.tx.as_ref().map(|t| t.side).or(packet_side);
                let sides = store_sides(&fs.dirs, side);
                // The matching transaction's files, and with `flow` (or a
                // match on no transaction) every file from now on, not those
                // of other transactions held.
                if tx_id.is_some() {
                    self.store_files.push((tx_id, sides, sig.sid));
                }
                if fs.flow || tx_id.is_none() {
                    self.store_files.push((None, sides, sig.sid));
                }
            }
            // Pass signatures let traffic through; they raise no alert
            // unless they say `alert`.
            let silent_pass = sig.action == RuleAction::Pass && !sig.also_alert;
            if sig.no_log_tx && !silent_pass {
                self.no_log.extend(tx_id);
            }
            let quiet = silent_pass || sig.no_log_tx;
            // A transaction rule's source is the side it inspects, whatever
            // packet completed the transaction (thresholds track by it).
            // A frame's alert goes the frame's way.
            let swap = match (&sig.tx, frame, info) {
                (Some(t), _, Some(i)) => (t.side == Direction::ToServer) != i.to_server,
                (None, Some(f), Some(i)) => (f.dir == Direction::ToServer) != i.to_server,
                _ => false,
            };
            let fate = if quiet {
                None
            } else {
                let (mut src, mut dst) = (p.ip.map(|ip| ip.src), p.ip.map(|ip| ip.dst));
                if swap {
                    std::mem::swap(&mut src, &mut dst);
                }
                let subject = vigil_detect::threshold::MatchSubject { src, dst, flow: flow_id.unwrap_or(0), ts: p.ts };
                crate::verdict::decide(&self.scratch.hosts, &self.rules.thresholds, sig, subject)
            };
            // A rate filter's pass ends the packet's inspection.
            let rate_pass = fate.is_some_and(|f| f.filtered && f.action == RuleAction::Pass);
            decided.push(Decided { sig, tx_id, frame, in_stream, swap, quiet, fate });
            if rate_pass {
                break;
            }
        }
        let tcp = matches!(p.transport, vigil_decode::Transport::Tcp { .. });
        let flow_passed = state.as_deref().is_some_and(|st| st.passed);
        let actions = decided.iter().filter_map(|d| match (d.quiet, d.fate) {
            (true, _) => Some((d.sig.action, d.sig.reject)),
            (false, f) => f.map(|f| (f.action, d.sig.reject)),
        });
        let mut verdict = crate::verdict::packet_verdict(actions, self.ips, flow_passed, tcp);
        if self.ips && self.rules.firewall.is_some() && verdict == vigil_output::Verdict::Alert {
            // Firewall mode: what threat detection let through, the firewall accepted.
            verdict = vigil_output::Verdict::Accept;
        }
        let traffic = state.as_deref().map(|st| engine.traffic(&st.bits)).unwrap_or_default();
        let mut alerted = false;
        // The first signature that dropped the packet, and why.
        let mut dropped_by: Option<(&Signature, DropReason)> = None;
        for Decided { sig, tx_id, frame, in_stream, swap, quiet, fate } in decided {
            if quiet {
                continue;
            }
            let Some(fate) = fate else {
                self.suppressed += 1;
                continue;
            };
            let covers_flow = sig.scope.covers_flow(in_stream);
            if fate.filtered && fate.action == RuleAction::Pass {
                // A rate filter's pass: the packet (or the flow) goes through, uninspected further.
                if let Some(st) = state.as_deref_mut().filter(|_| covers_flow) {
                    st.passed = true;
                }
                break;
            }
            let blocked = self.ips && matches!(fate.action, RuleAction::Drop | RuleAction::Reject);
            if blocked {
                let reason = if fate.filtered { DropReason::RateFilter } else { DropReason::Rules };
                dropped_by.get_or_insert((sig, reason));
                if let Some(st) = state.as_deref_mut().filter(|_| covers_flow) {
                    st.dropped = true;
                }
            }
            if self.respond
                && fate.action == RuleAction::Reject
                && self.responses.is_empty()
                && p.src != PacketSource::FlowTimeout
            {
                self.responses = crate::reject::responses(p, sig.reject, !blocked);
            }
            if !fate.alert {
                self.suppressed += 1;
                continue;
            }
            self.alerts += 1;
            alerted = true;
            if p.src != PacketSource::FlowTimeout {
                let sid = sig.sid;
                self.new_tags.extend(sig.tags.iter().map(|&tag| crate::tag::NewTag { tag, sid }));
            }
            let tx = match tx_id {
                Some(id) if frame.is_some() => app.and_then(|a| a.frame_txs.iter().find(|t| t.id() == id)).copied(),
                Some(id) => app.and_then(|a| a.txs.iter().find(|t| t.tx.id() == id)).map(|t| t.tx),
                // A datagram's rule without app-layer keywords logs the one
                // transaction the datagram made, as Suricata does.
                None if !tcp => app.and_then(|a| match a.txs {
                    [only] if only.from == Default::default() => Some(only.tx),
                    _ => None,
                }),
                None => None,
            };
            let alert_app = info.filter(|i| i.app_proto != AppProto::Unknown || tx.is_some()).map(|i| AlertApp {
                proto: i.app_proto,
                tx,
                swap,
            });
            let flow_dir = info.map(|i| i.to_server != swap);
            // A match on the reassembled stream logs the stream as its payload, as Suricata does.
            let on_stream = sig.tx.is_none() && in_stream;
            let mut logged = Vec::new();
            if let (true, Some((ssn, dir)), true) = (on_stream, log_stream, outputs.wants_payload()) {
                ssn.read_logged(dir, &mut logged);
            }
            let stream_payload = (!logged.is_empty()).then_some(&logged[..]);
            let at = crate::outputs::AlertAt {
                flow: at_alert,
                blocked,
                flow_dir,
                app: alert_app,
                stream_payload,
                verdict,
                traffic: &traffic,
                firewall: None,
                td_engine: self.rules.firewall.is_some(),
                captured: &engine.captured_by(&self.scratch, sig),
                frame,
            };
            outputs.alert(p, sig, at)?;
        }
        let dropped = dropped_by.is_some();
        if let Some((sig, reason)) = dropped_by {
            self.verdict_drop |= p.src != PacketSource::FlowTimeout;
            count_drop(&mut self.drop_reasons, p, reason);
            log_drop(p, flow_id, info, state, reason, Some(sig), verdict, outputs)?;
        }
        Ok((alerted, dropped))
    }

    /// Firewall mode, Suricata 8's pipeline on one packet: the firewall's
    /// packet tables, threat detection's packet signatures, the firewall's
    /// application filter, threat detection's transaction signatures. What
    /// the firewall drops, threat detection never sees; a threat detection
    /// drop ends the packet's evaluation. Returns whether an alert was written.
    #[allow(clippy::too_many_arguments)]
    fn firewall(
        &mut self,
        fw: &Firewall,
        p: &Packet<'_>,
        at_alert: Option<&FlowAtAlert>,
        info: Option<FlowInfo>,
        mut state: Option<&mut FlowDetect>,
        stream: StreamInput<'_>,
        app: Option<&AppInput<'_>>,
        fw_app: Option<&FwApp<'_>>,
        log_stream: Option<(&vigil_stream::TcpSession, Direction)>,
        outputs: &mut Outputs,
    ) -> Result<bool, EngineError> {
        let real = p.src != PacketSource::FlowTimeout;
        // A flow threat detection dropped: its packets are dropped before
        // any table runs, the firewall counting them accepted (it did not
        // stop them), as Suricata counts them.
        if let Some(st) = state.as_deref_mut().filter(|st| st.dropped) {
            if real {
                self.fw.accepted += 1;
            }
            if self.ips {
                self.verdict_drop |= real;
                count_drop(&mut self.drop_reasons, p, DropReason::FlowDrop);
                log_drop(p, at_alert.map(|a| a.id), info, Some(st), DropReason::FlowDrop, None, DROPPED, outputs)?;
            }
            return Ok(false);
        }
        let mut matched: Vec<FwMatch<'_>> = Vec::new();
        let step = fw.packet_filter(p, info, state.as_deref_mut(), stream, &mut self.scratch, &mut |m| matched.push(m));
        let packet_verdict = match step {
            FwPacket::Verdict(v) => Some(v),
            FwPacket::ToApp => None,
        };
        let tcp = matches!(p.transport, vigil_decode::Transport::Tcp { .. });
        if let Some(v @ FwVerdict::Drop { .. }) = packet_verdict {
            let alerted =
                self.fw_alerts(&matched, p, at_alert, info, fw_app, self.fw_verdict(Some(v), tcp), outputs)?;
            self.fw_drop(v, &matched, p, at_alert, info, state, outputs)?;
            return Ok(alerted);
        }
        let pass_packet = matched.iter().any(|m| m.pass == Some(FwScope::Packet));
        let td_skipped = |st: Option<&FlowDetect>| pass_packet || st.is_some_and(|st| st.fw.td_passed);
        let mut alerted = false;
        if !td_skipped(state.as_deref()) {
            let (a, dropped) =
                self.threat(p, at_alert, info, state.as_deref_mut(), stream, None, false, log_stream, outputs)?;
            alerted |= a;
            if dropped {
                let verdict = vigil_output::Verdict::Drop;
                alerted |= self.fw_alerts(&matched, p, at_alert, info, fw_app, verdict, outputs)?;
                if real {
                    self.fw.accepted += 1;
                }
                return Ok(alerted);
            }
        }
        let mut app_verdict = None;
        let mut app_matched: Vec<FwMatch<'_>> = Vec::new();
        if packet_verdict.is_none() {
            app_verdict =
                Some(fw.app_filter(p, info, state.as_deref_mut(), stream, fw_app, &mut self.scratch, &mut |m| {
                    app_matched.push(m)
                }));
        }
        // The firewall's alerts carry the packet's verdict, the application filter's included.
        let verdict = self.fw_verdict(app_verdict, tcp);
        alerted |= self.fw_alerts(&matched, p, at_alert, info, fw_app, verdict, outputs)?;
        alerted |= self.fw_alerts(&app_matched, p, at_alert, info, fw_app, verdict, outputs)?;
        if let Some(v @ FwVerdict::Drop { .. }) = app_verdict {
            self.fw_drop(v, &app_matched, p, at_alert, info, state, outputs)?;
            return Ok(alerted);
        }
        if real {
            self.fw.accepted += 1;
        }
        if app.is_some() && !td_skipped(state.as_deref()) {
            let (a, _) = self.threat(p, at_alert, info, state, stream, app, true, log_stream, outputs)?;
            alerted |= a;
        }
        Ok(alerted)
    }

    /// Firewall mode's `pre_flow` (no flow yet: `info` and `state` are
    /// `None`) or `pre_stream` table on packet `p`, run by the worker where
    /// Suricata runs them; true when it dropped the packet, which then goes
    /// no further.
    pub(crate) fn fw_pre(
        &mut self,
        hook: PacketHook,
        p: &Packet<'_>,
        info: Option<FlowInfo>,
        mut state: Option<&mut FlowDetect>,
        at_alert: Option<&FlowAtAlert>,
        outputs: &mut Outputs,
    ) -> Result<bool, EngineError> {
        let Some(fw) = self.rules.firewall.clone() else { return Ok(false) };
        if !fw.has_pre(hook) || state.as_deref().is_some_and(|st| st.dropped) {
            return Ok(false);
        }
        let mut matched: Vec<FwMatch<'_>> = Vec::new();
        let fw_state = state.as_deref_mut();
        let v = fw.pre_table(hook, p, info, fw_state, &mut self.scratch, &mut |m| matched.push(m));
        let tcp = matches!(p.transport, vigil_decode::Transport::Tcp { .. });
        let verdict = self.fw_verdict(v, tcp);
        self.fw_alerts(&matched, p, at_alert, info, None, verdict, outputs)?;
        match v {
            Some(d @ FwVerdict::Drop { .. }) if self.ips => {
                self.fw_drop(d, &matched, p, at_alert, info, state, outputs)?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// The verdict a firewall decision gives the packet's alerts.
    fn fw_verdict(&self, v: Option<FwVerdict>, tcp: bool) -> vigil_output::Verdict {
        use vigil_output::Verdict;
        match v {
            _ if !self.ips => Verdict::Alert,
            Some(FwVerdict::Drop { reject: true, .. }) => Verdict::Reject { inline: true, target: "to_client", tcp },
            Some(FwVerdict::Drop { .. }) => Verdict::Drop,
            _ => Verdict::Accept,
        }
    }

    /// The alerts of the firewall rules (and default policies) in `matched`.
    #[allow(clippy::too_many_arguments)]
    fn fw_alerts(
        &mut self,
        matched: &[FwMatch<'_>],
        p: &Packet<'_>,
        at_alert: Option<&FlowAtAlert>,
        info: Option<FlowInfo>,
        app: Option<&FwApp<'_>>,
        verdict: vigil_output::Verdict,
        outputs: &mut Outputs,
    ) -> Result<bool, EngineError> {
        let mut alerted = false;
        for m in matched.iter().filter(|m| m.alert) {
            self.alerts += 1;
            alerted = true;
            let tx = m.tx.and_then(|id| app?.txs.iter().find(|t| t.id() == id)).copied();
            let progress = match (tx, app) {
                (Some(t), Some(a)) => {
                    let name = |d: Direction| a.def.hooks.states(d)[a.def.hooks.of(t.tx, d) as usize];
                    Some((name(Direction::ToServer), name(Direction::ToClient)))
                }
                _ => None,
            };
            let alert_app = info.filter(|i| i.app_proto != AppProto::Unknown || tx.is_some()).map(|i| AlertApp {
                proto: i.app_proto,
                tx,
                swap: false,
            });
            let traffic = vigil_detect::Traffic::default();
            let at = crate::outputs::AlertAt {
                flow: at_alert,
                blocked: self.ips && !m.accept,
                flow_dir: info.map(|i| i.to_server),
                app: alert_app,
                stream_payload: None,
                verdict,
                traffic: &traffic,
                firewall: Some(crate::outputs::FwAlert { table: m.table, policy: m.policy, progress }),
                td_engine: false,
                frame: None,
                captured: &[],
            };
            outputs.alert(p, m.sig, at)?;
        }
        Ok(alerted)
    }

    /// A firewall drop: the packet (and with `flow` the rest of the flow)
    /// in IPS mode, counted under `firewall.*`; nothing in IDS mode.
    #[allow(clippy::too_many_arguments)]
    fn fw_drop(
        &mut self,
        verdict: FwVerdict,
        matched: &[FwMatch<'_>],
        p: &Packet<'_>,
        at_alert: Option<&FlowAtAlert>,
        info: Option<FlowInfo>,
        mut state: Option<&mut FlowDetect>,
        outputs: &mut Outputs,
    ) -> Result<(), EngineError> {
        let FwVerdict::Drop { flow, reason, reject } = verdict else { return Ok(()) };
        if !self.ips {
            return Ok(());
        }
        let real = p.src != PacketSource::FlowTimeout;
        self.verdict_drop |= real;
        let out = match reason {
            FwDrop::Rules => DropReason::FirewallRules,
            FwDrop::DefaultPacketPolicy => DropReason::FirewallDefaultPacketPolicy,
            FwDrop::DefaultAppPolicy => DropReason::FirewallDefaultAppPolicy,
            FwDrop::PreFlowHook => DropReason::FirewallPreFlowHook,
            FwDrop::PreStreamHook => DropReason::FirewallPreStreamHook,
        };
        if reject && self.respond && real && self.responses.is_empty() {
            self.responses = crate::reject::responses(p, vigil_detect::compile::RejectTo::Src, false);
        }
        if real {
            self.fw_blocked = true;
            // A refused packet is counted as rejected, not blocked, as Suricata counts it.
            if reject {
                self.fw.rejected += 1;
            } else {
                self.fw.blocked += 1;
            }
            match reason {
                FwDrop::Rules => self.fw.rules += 1,
                FwDrop::DefaultPacketPolicy => self.fw.default_packet_policy += 1,
                FwDrop::DefaultAppPolicy => self.fw.default_app_policy += 1,
                FwDrop::PreFlowHook => self.fw.pre_flow_hook += 1,
                FwDrop::PreStreamHook => self.fw.pre_stream_hook += 1,
            }
        }
        if let Some(st) = state.as_deref_mut().filter(|_| flow) {
            st.dropped = true;
            st.fw.dropped = true;
        }
        let by = matched.last().filter(|m| !m.accept).map(|m| m.sig);
        let tcp = matches!(p.transport, vigil_decode::Transport::Tcp { .. });
        log_drop(p, at_alert.map(|a| a.id), info, state, out, by, self.fw_verdict(Some(verdict), tcp), outputs)
    }

    /// Applies the exception policy of `target`, met by packet `p`; true
    /// when the packet is not to be inspected further.
    fn apply_exception(
        &mut self,
        target: vigil_config::ExceptionTarget,
        p: &Packet<'_>,
        flow_id: Option<u64>,
        info: Option<FlowInfo>,
        mut state: Option<&mut FlowDetect>,
        outputs: &mut Outputs,
    ) -> Result<bool, EngineError> {
        use vigil_config::ExceptionPolicy as Policy;
        let policy = self.exceptions.policy(target);
        if let Some(st) = state.as_deref_mut() {
            st.exceptions |= 1 << target.index();
        }
        if policy == Policy::Ignore {
            return Ok(false);
        }
        self.exceptions.count(target);
        match policy {
            Policy::DropFlow | Policy::DropPacket | Policy::Reject => {
                if policy != Policy::DropPacket {
                    if let Some(st) = state.as_deref_mut() {
                        st.dropped = true;
                    }
                }
                if policy == Policy::Reject && self.respond {
                    self.responses = crate::reject::responses(p, vigil_detect::compile::RejectTo::Src, false);
                }
                self.verdict_drop |= p.src != PacketSource::FlowTimeout;
                let reason = crate::exception::drop_reason(target);
                count_drop(&mut self.drop_reasons, p, reason);
                log_drop(p, flow_id, info, state, reason, None, DROPPED, outputs)?;
            }
            Policy::PassFlow | Policy::Bypass => {
                if let Some(st) = state {
                    st.exception_passed = true;
                    st.bypassed = policy == Policy::Bypass;
                }
            }
            Policy::PassPacket | Policy::Ignore | Policy::Auto => {}
        }
        Ok(true)
    }
}

/// The sides a `filestore` stores: those it names, else the side the
/// signature inspected, else both.
/// A flow's bits and counters as EVE's `metadata` object (`None`: it has none).
fn flow_vars_json(engine: &vigil_detect::DetectEngine, st: &vigil_detect::FlowDetect) -> Option<serde_json::Value> {
    let (bits, ints) = engine.flow_vars(st);
    let mut m = serde_json::Map::new();
    if !bits.is_empty() {
        m.insert("flowbits".into(), bits.into());
    }
    if !ints.is_empty() {
        let ints: serde_json::Map<String, serde_json::Value> =
            ints.into_iter().map(|(n, v)| (n.to_string(), v.into())).collect();
        m.insert("flowints".into(), ints.into());
    }
    if !st.flowvars.is_empty() {
        let vars: Vec<serde_json::Value> =
            st.flowvars.iter().map(|(n, v)| serde_json::json!({ n.as_ref(): String::from_utf8_lossy(v) })).collect();
        m.insert("flowvars".into(), vars.into());
    }
    if !st.entropy.is_empty() {
        let e: serde_json::Map<String, serde_json::Value> =
            st.entropy.iter().map(|(n, v)| (n.to_string(), entropy_json(f64::from_bits(*v)))).collect();
        m.insert("entropy".into(), e.into());
    }
    (!m.is_empty()).then_some(serde_json::Value::Object(m))
}

/// An entropy as Suricata writes it: a whole number without a fraction.
fn entropy_json(v: f64) -> serde_json::Value {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        (v as i64).into()
    } else {
        v.into()
    }
}

fn store_sides(named: &[Direction], side: Option<Direction>) -> &'static [Direction] {
    const BOTH: &[Direction] = &[Direction::ToServer, Direction::ToClient];
    match (named, side) {
        ([Direction::ToServer], _) | ([], Some(Direction::ToServer)) => &BOTH[..1],
        ([Direction::ToClient], _) | ([], Some(Direction::ToClient)) => &BOTH[1..],
        _ => BOTH,
    }
}

/// Hands what the last inspection asked of a flow's application layer to
/// it: transactions not to log, files to store. Without one, the requests
/// are dropped (they must not reach the next flow inspected).
pub(crate) fn apply_requests(app: Option<&mut FlowApp>, det: &mut Detector) {
    match app {
        Some(a) => {
            a.no_log.append(&mut det.no_log);
            for (tx, dirs, sid) in det.store_files.drain(..) {
                a.layer.store_files(tx, dirs, sid);
            }
            a.tls_store |= std::mem::take(&mut det.tls_store);
        }
        None => {
            det.no_log.clear();
            det.store_files.clear();
            det.tls_store = false;
        }
    }
    // Only a packet's own inspection bypasses its flow (see `Worker::inspect`).
    det.bypass_flow = false;
}

/// Counts a dropped packet under `ips.drop_reason.*` (pseudo packets were never on the wire).
fn count_drop(counts: &mut [u64; DropReason::ALL.len()], p: &Packet<'_>, reason: DropReason) {
    if p.src != PacketSource::FlowTimeout {
        if let Some(i) = DropReason::ALL.iter().position(|&r| r == reason) {
            counts[i] += 1;
        }
    }
}

/// Writes the drop record of a packet the IPS dropped (pseudo packets were
/// never on the wire, so nothing of theirs is dropped).
#[allow(clippy::too_many_arguments)]
fn log_drop(
    p: &Packet<'_>,
    flow_id: Option<u64>,
    info: Option<FlowInfo>,
    state: Option<&mut FlowDetect>,
    reason: DropReason,
    sig: Option<&Signature>,
    verdict: vigil_output::Verdict,
    outputs: &mut Outputs,
) -> Result<(), EngineError> {
    if p.src == PacketSource::FlowTimeout {
        return Ok(());
    }
    let mut first_in_dir = true;
    if let (Some(st), Some(i)) = (state, info) {
        let logged = &mut st.drop_logged[usize::from(!i.to_server)];
        first_in_dir = !*logged;
        *logged = true;
    }
    outputs.drop(p, flow_id, reason, sig, first_in_dir, verdict)
}

/// A drop record's verdict where nothing refused the packet.
const DROPPED: vigil_output::Verdict = vigil_output::Verdict::Drop;

/// One match of a packet, with what `threshold.config` and rate filters
/// made of it.
struct Decided<'s> {
    sig: &'s Signature,
    tx_id: Option<u64>,
    /// The frame a `frame:` signature matched.
    frame: Option<&'s vigil_applayer::Frame>,
    /// The match was in the reassembled stream.
    in_stream: bool,
    /// A transaction rule's sides are the other way round from the packet's.
    swap: bool,
    /// A `pass` without `alert`, or a `config` rule: no fate, no alert.
    quiet: bool,
    /// `None` for a quiet match, or one a threshold removed.
    fate: Option<crate::verdict::Fate>,
}
