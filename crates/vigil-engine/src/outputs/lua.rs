//! `- lua:` outputs: each worker runs its own instance of each script,
//! started the first time it has something for it (so a worker that never
//! logs runs no `setup`), and hands it the transactions, alerts, packets,
//! flows and stats records it asked for in `init`.

use super::FlowAtAlert;
use crate::error::EngineError;
use std::sync::Arc;
use vigil_decode::Packet;
use vigil_detect::lua::{LuaFlow, LuaInput, LuaLogs, LuaOutput, LuaOutputScript, LuaRule};
use vigil_types::{AppProto, Timestamp};

/// The scripts, and this worker's running instances.
#[derive(Default)]
pub(crate) struct LuaOutputs {
    scripts: Vec<Arc<LuaOutputScript>>,
    /// By script, once started (`None`: its setup failed here).
    running: Vec<Option<Option<LuaOutput>>>,
    /// Where their messages go.
    log: Option<Arc<(vigil_config::Logging, std::path::PathBuf)>>,
    /// The counters at the last stats record (`pvalue`).
    previous: std::collections::HashMap<String, u64>,
}

impl LuaOutputs {
    /// Loads the configured scripts (a script that does not load stops the
    /// start, as Suricata's does).
    pub(crate) fn open(setup: &crate::Setup) -> Result<LuaOutputs, EngineError> {
        let mut scripts = Vec::new();
        for conf in &setup.config.outputs.lua {
            for path in conf.paths() {
                scripts.push(LuaOutputScript::load(&path, &setup.log_dir).map_err(|e| EngineError::Config(vec![e]))?);
            }
        }
        let running = scripts.iter().map(|_| None).collect();
        let log = Some(Arc::new((setup.config.logging.clone(), setup.log_dir.clone())));
        Ok(LuaOutputs { scripts, running, log, previous: Default::default() })
    }

    /// The same scripts for another worker, none started.
    pub(crate) fn share(&self) -> LuaOutputs {
        LuaOutputs {
            scripts: self.scripts.clone(),
            running: self.scripts.iter().map(|_| None).collect(),
            log: self.log.clone(),
            previous: Default::default(),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.scripts.is_empty()
    }

    /// Whether some script logs flows.
    pub(crate) fn wants_flows(&self) -> bool {
        self.scripts.iter().any(|s| s.logs == LuaLogs::Flows)
    }

    /// Whether some script logs transactions (which want their flow described).
    pub(crate) fn wants_transactions(&self) -> bool {
        self.scripts.iter().any(|s| matches!(s.logs, LuaLogs::Protocol(_)))
    }

    /// Each script that logs what `wants` accepts, started if need be.
    fn each(&mut self, wants: impl Fn(&LuaLogs) -> bool, mut f: impl FnMut(&mut LuaOutput)) {
        for (script, slot) in self.scripts.iter().zip(self.running.iter_mut()) {
            if !wants(&script.logs) {
                continue;
            }
            let started = slot.get_or_insert_with(|| match script.start() {
                Ok(o) => Some(o),
                Err(e) => {
                    eprintln!("vigil: warning: lua-output: {e}");
                    None
                }
            });
            if let Some(o) = started {
                f(o);
            }
        }
        self.log_messages();
    }

    pub(crate) fn transaction(&mut self, p: &Packet<'_>, tx: vigil_applayer::TxRef<'_>, flow: Option<&LuaFlow>) {
        let name = tx.def.name;
        let input = LuaInput {
            p: Some(p),
            flow,
            tx: Some((tx, tx.record_dir())),
            stream: None,
            rule: None,
            vars: None,
            file: None,
        };
        self.each(|l| matches!(l, LuaLogs::Protocol(n) if n == name), |o| o.log(&input));
    }

    pub(crate) fn alert(&mut self, p: &Packet<'_>, sig: &vigil_detect::Signature, flow: Option<&FlowAtAlert>) {
        let lf = flow.map(|a| of_alert(a, p));
        let input = LuaInput {
            p: Some(p),
            flow: lf.as_ref(),
            tx: None,
            stream: None,
            rule: Some(LuaRule::of(sig)),
            vars: None,
            file: None,
        };
        self.each(|l| *l == LuaLogs::Alerts, |o| o.log(&input));
    }

    /// Whether some script streams TCP flows (`filter = "tcp"`) or HTTP bodies.
    pub(crate) fn wants_streaming(&self, http: bool) -> bool {
        self.scripts.iter().any(|s| s.logs == LuaLogs::Streaming { http })
    }

    /// A piece of a stream (or an HTTP body) for the streaming scripts.
    pub(crate) fn stream(
        &mut self,
        p: Option<&Packet<'_>>,
        flow: Option<&LuaFlow>,
        args: &vigil_detect::lua::StreamArgs<'_>,
    ) {
        let http = args.tx_id.is_some();
        let input = LuaInput { p, flow, tx: None, stream: None, rule: None, vars: None, file: None };
        self.each(|l| *l == LuaLogs::Streaming { http }, |o| o.stream(&input, args));
    }

    /// Whether some script logs files.
    pub(crate) fn wants_files(&self) -> bool {
        self.scripts.iter().any(|s| s.logs == LuaLogs::Files)
    }

    pub(crate) fn file(&mut self, p: &Packet<'_>, info: &vigil_output::FileInfo<'_>) {
        let file = vigil_detect::lua::LuaFile {
            file_id: info.file_id.unwrap_or(0),
            tx_id: info.tx_id,
            name: info.filename,
            size: info.size,
            magic: info.magic,
            md5: info.md5.as_deref(),
            sha1: info.sha1.as_deref(),
            sha256: info.sha256.as_deref(),
            state: info.state,
            stored: info.stored,
        };
        let input =
            LuaInput { p: Some(p), flow: None, tx: None, stream: None, rule: None, vars: None, file: Some(&file) };
        self.each(|l| *l == LuaLogs::Files, |o| o.log(&input));
    }

    /// Whether some script logs every packet.
    pub(crate) fn wants_packets(&self) -> bool {
        self.scripts.iter().any(|s| s.logs == LuaLogs::Packets)
    }

    pub(crate) fn packet(&mut self, p: &Packet<'_>, flow: Option<&LuaFlow>) {
        let input = LuaInput { p: Some(p), flow, tx: None, stream: None, rule: None, vars: None, file: None };
        self.each(|l| *l == LuaLogs::Packets, |o| o.log(&input));
    }

    pub(crate) fn flow(&mut self, flow: &LuaFlow) {
        let input = LuaInput { p: None, flow: Some(flow), tx: None, stream: None, rule: None, vars: None, file: None };
        self.each(|l| *l == LuaLogs::Flows, |o| o.log(&input));
    }

    pub(crate) fn stats(&mut self, counters: &[(String, u64)]) {
        let rows: Vec<(String, u64, u64)> =
            counters.iter().map(|(n, v)| (n.clone(), *v, self.previous.get(n).copied().unwrap_or(0))).collect();
        self.previous = counters.iter().cloned().collect();
        self.each(|l| *l == LuaLogs::Stats, |o| o.stats(&rows));
    }

    /// `deinit` of each started script.
    pub(crate) fn finish(&mut self) {
        for o in self.running.iter_mut().flatten().flatten() {
            o.finish();
        }
        self.log_messages();
    }

    /// The scripts' `suricata.log` lines and first failures, to vigil's log.
    fn log_messages(&mut self) {
        let messages: Vec<_> =
            self.running.iter_mut().flatten().flatten().flat_map(|o| std::mem::take(&mut o.messages)).collect();
        if !messages.is_empty() {
            crate::log::write_lua(messages, "output-lua", self.log.as_deref());
        }
    }
}

/// The flow an alert describes, as `suricata.flow` shows it (its
/// protocols are not known there).
fn of_alert(a: &FlowAtAlert, p: &Packet<'_>) -> LuaFlow {
    of_flow(a, p.proto, p.ts, None, PerSide { ts: None, tc: None })
}

/// Each side's protocol, where it differs from the flow's.
pub(crate) struct PerSide {
    pub ts: Option<AppProto>,
    pub tc: Option<AppProto>,
}

/// `a` as `suricata.flow` shows it: `app` the flow's protocol (`None`:
/// not known here).
pub(crate) fn of_flow(
    a: &FlowAtAlert,
    ip_proto: u8,
    last: Timestamp,
    app: Option<AppProto>,
    sides: PerSide,
) -> LuaFlow {
    let name = |p: Option<AppProto>| p.map_or("unknown", |p| p.name());
    let (sport, dport) = a.eve.ports.unwrap_or((0, 0));
    LuaFlow {
        id: a.id,
        start: a.eve.start,
        last,
        src: a.eve.src_ip,
        dst: a.eve.dest_ip,
        sport,
        dport,
        ip_proto,
        app: [name(app), name(sides.ts.or(app)), name(sides.tc.or(app)), name(a.orig), "unknown"],
        stats: [a.eve.pkts_toserver, a.eve.bytes_toserver, a.eve.pkts_toclient, a.eve.bytes_toclient],
        has_alerts: a.alerted,
    }
}
