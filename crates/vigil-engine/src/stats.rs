//! Assembles the counters of every stage under Suricata's stats names.

use crate::error::EngineError;
use crate::outputs::Outputs;
use crate::rules::LoadedRules;
use vigil_config::Stats;
use vigil_decode::{Counter, DecodeCounters, DecodeEvent};
use vigil_defrag::DefragCounters;
use vigil_flow::FlowCounters;
use vigil_output::stats_record;
use vigil_types::Timestamp;

/// Every stage's counters, for one stats record.
pub(crate) struct Counters<'a> {
    pub decode: &'a DecodeCounters,
    pub flow: &'a FlowCounters,
    pub defrag: &'a DefragCounters,
    pub stream: &'a vigil_stream::StreamCtx,
    /// Stream events by [`vigil_stream::StreamEvent::ALL`] index.
    pub stream_events: &'a [u64],
    /// `detect.alert`, `detect.alert_queue_overflow`, `detect.alerts_suppressed`.
    pub detect: [u64; 3],
    /// `detect.lua.*`: Lua scripts that failed.
    pub lua: vigil_detect::lua::LuaStats,
    pub app: &'a crate::app::AppStats,
    pub exceptions: &'a crate::exception::ExceptionState,
    /// `ips.accepted` and `ips.blocked`, where vigil decides them (`--simulate-ips`).
    pub ips_verdicts: Option<(u64, u64)>,
    /// Firewall mode's `firewall.*`.
    pub firewall: Option<crate::detector::FwCounts>,
    /// `ips.drop_reason.*`, in IPS mode, by [`vigil_output::DropReason::ALL`] index.
    pub drop_reasons: Option<&'a [u64; vigil_output::DropReason::ALL.len()]>,
    /// The file store's counts, when it is enabled.
    pub file_store: Option<vigil_output::FileStoreCounts>,
    /// `http.byterange.memuse` and `.memcap` (shared by all workers), where
    /// files sent in parts are put together.
    pub byterange: Option<(u64, u64)>,
    /// Bytes held for `filestore` rules and files no longer held at the
    /// cap (shared by all workers), where files are held.
    pub file_hold: Option<(u64, u64)>,
    /// EVE sinks' counters (`eve_log.N.sent`, `.dropped`, `.reconnects`;
    /// shared by all workers).
    pub sinks: Vec<(String, u64)>,
    /// Packets and bytes of flows after their bypass.
    pub bypassed: (u64, u64),
    pub flow_ends: &'a FlowEnds,
    /// `memcap.pressure` and `memcap.pressure_max`, in percent.
    pub memcap_pressure: (u64, u64),
}

/// Suricata's TCP states at a flow's end, as `flow.end.tcp_state.*` names them.
const TCP_END_STATES: [&str; 11] = [
    "none",
    "syn_sent",
    "syn_recv",
    "established",
    "fin_wait1",
    "fin_wait2",
    "time_wait",
    "last_ack",
    "close_wait",
    "closing",
    "closed",
];

/// How flows ended, beyond what the flow table knows: the TCP session's
/// state, and which were bypassed (counted under `local_bypassed` rather
/// than their flow state, as Suricata counts them).
#[derive(Debug, Clone, Default)]
pub(crate) struct FlowEnds {
    /// By [`TCP_END_STATES`] (vigil's sessions are never in `none`).
    tcp_state: [u64; TCP_END_STATES.len()],
    /// Bypassed flows, by their flow state (new, established, closed).
    bypassed: [u64; 3],
}

impl FlowEnds {
    pub(crate) fn count(&mut self, f: &vigil_flow::Flow<crate::tcp::FlowExt>) {
        // Flows with a TCP session only (one picked up mid-stream without
        // `stream.midstream` has none), as Suricata counts them.
        if let Some(ssn) = f.ext.tcp_end.as_ref() {
            if let Some(i) = TCP_END_STATES.iter().position(|n| *n == ssn.state.name()) {
                self.tcp_state[i] += 1;
            }
        }
        if f.ext.detect.bypassed {
            self.bypassed[match f.state {
                vigil_flow::FlowState::New => 0,
                vigil_flow::FlowState::Established => 1,
                vigil_flow::FlowState::Closed => 2,
            }] += 1;
        }
    }
}

/// Dotted counter names and values, in the order a stats record lists them.
pub(crate) fn counters(all: &Counters<'_>, cfg: &Stats, null_values: bool) -> Vec<(String, u64)> {
    let decode = all.decode;
    let mut out = Vec::with_capacity(Counter::ALL.len() + DecodeEvent::ALL.len() + 64);
    let mut push = |name: String, v: u64| {
        if v != 0 || null_values {
            out.push((name, v));
        }
    };
    for &c in Counter::ALL {
        push(format!("decoder.{}", c.name()), decode.get(c));
    }
    push("decoder.avg_pkt_size".into(), decode.avg_pkt_size());
    push("decoder.max_pkt_size".into(), decode.max_pkt_size());
    if cfg.decoder_events {
        let prefix = cfg.decoder_events_prefix.trim_end_matches('.');
        for &e in DecodeEvent::ALL {
            push(format!("{prefix}.{}", e.name()), decode.event_count(e));
        }
    }
    for (name, v) in all.flow.named() {
        let bypassed = match name {
            "end.state.new" => all.flow_ends.bypassed[0],
            "end.state.established" => all.flow_ends.bypassed[1],
            "end.state.closed" => all.flow_ends.bypassed[2],
            _ => 0,
        };
        push(format!("flow.{name}"), v.saturating_sub(bypassed));
    }
    push("flow.end.state.local_bypassed".into(), all.flow_ends.bypassed.iter().sum());
    // vigil bypasses in software only.
    push("flow.end.state.capture_bypassed".into(), 0);
    for (name, v) in TCP_END_STATES.iter().zip(all.flow_ends.tcp_state) {
        push(format!("flow.end.tcp_state.{name}"), v);
    }
    for (name, v) in all.defrag.named() {
        push(format!("defrag.{name}"), v);
    }
    for (name, v) in all.stream.counters.named() {
        push(name.into(), v);
    }
    push("memcap.pressure".into(), all.memcap_pressure.0);
    push("memcap.pressure_max".into(), all.memcap_pressure.1);
    push("tcp.memuse".into(), all.stream.ssn_memuse);
    push("tcp.reassembly_memuse".into(), all.stream.reassembly_memuse);
    if cfg.stream_events {
        for (e, v) in vigil_stream::StreamEvent::ALL.iter().zip(all.stream_events) {
            push(format!("stream.{}", e.name()), *v);
        }
    }
    for (name, v) in ["alert", "alert_queue_overflow", "alerts_suppressed"].iter().zip(all.detect) {
        push(format!("detect.{name}"), v);
    }
    for (name, v) in all.lua.named() {
        push(name.into(), v);
    }
    for (name, v) in all.app.named() {
        push(name, v);
    }
    for (name, v) in all.exceptions.named() {
        push(name, v);
    }
    // vigil bypasses in software only: every bypassed packet is a local one.
    push("flow_bypassed.local_pkts".into(), all.bypassed.0);
    push("flow_bypassed.local_bytes".into(), all.bypassed.1);
    for (name, v) in &all.sinks {
        push(name.clone(), *v);
    }
    if let Some((memuse, memcap)) = all.byterange {
        push("http.byterange.memuse".into(), memuse);
        push("http.byterange.memcap".into(), memcap);
    }
    if let Some(fs) = all.file_store {
        // vigil writes each file whole when it is logged: none stays open.
        push("file_store.open_files_max_hit".into(), 0);
        push("file_store.fs_errors".into(), fs.fs_errors);
        push("file_store.open_files".into(), 0);
    }
    if let Some((memuse, hits)) = all.file_hold {
        // vigil's own: files held for `filestore` rules that may still ask.
        push("file_store.hold_memuse".into(), memuse);
        push("file_store.hold_memcap".into(), hits);
    }
    if let Some((accepted, blocked)) = all.ips_verdicts {
        push("ips.accepted".into(), accepted);
        push("ips.blocked".into(), blocked);
        // vigil rejects nothing it does not also drop, and replaces nothing.
        push("ips.rejected".into(), 0);
        push("ips.replaced".into(), 0);
    }
    if let Some(fw) = all.firewall {
        push("firewall.accepted".into(), fw.accepted);
        push("firewall.blocked".into(), fw.blocked);
        push("firewall.rejected".into(), fw.rejected);
        push("firewall.drop_reason.rules".into(), fw.rules);
        push("firewall.drop_reason.default_packet_policy".into(), fw.default_packet_policy);
        push("firewall.drop_reason.default_app_policy".into(), fw.default_app_policy);
        push("firewall.drop_reason.pre_stream_hook".into(), fw.pre_stream_hook);
        push("firewall.drop_reason.pre_flow_hook".into(), fw.pre_flow_hook);
        push("firewall.drop_reason.flow_drop".into(), fw.flow_drop);
        push("firewall.discarded_alerts".into(), 0);
    }
    if let Some(drops) = all.drop_reasons {
        for (r, v) in vigil_output::DropReason::ALL.iter().zip(drops) {
            push(format!("ips.drop_reason.{}", r.counter_name()), *v);
        }
    }
    out
}

/// The value of counter `name` (0 when absent).
pub(crate) fn get(all: &[(String, u64)], name: &str) -> u64 {
    all.iter().find(|(n, _)| n == name).map_or(0, |(_, v)| *v)
}

/// Dotted counter names and values.
pub(crate) type CounterList = Vec<(String, u64)>;

/// The counters the workers reported, merged in worker order, with each
/// worker's own under its thread name (for `stats.threads`); an error when
/// fewer than `expected` answered.
pub(crate) fn gather(
    mut by_worker: Vec<(usize, CounterList)>,
    expected: usize,
) -> Result<(CounterList, Vec<(String, CounterList)>), crate::error::EngineError> {
    if by_worker.len() != expected {
        return Err(crate::error::EngineError::Usage("a worker stopped before reporting its counters".into()));
    }
    by_worker.sort_by_key(|(i, _)| *i);
    let mut all = Vec::new();
    for (_, c) in &by_worker {
        merge(&mut all, c);
    }
    let threads = by_worker.into_iter().map(|(i, c)| (worker_name(i), c)).collect();
    Ok((all, threads))
}

/// Adds another worker's counters (as [`counters`] lists them, zeros
/// included) into `into`. Counters add up, except the largest packet size
/// and the memcap pressures, which are the largest of all, the byterange
/// container's and the EVE sinks', which all workers share (each reports
/// the same), and the average size, derived again from the totals.
pub(crate) fn merge(into: &mut Vec<(String, u64)>, other: &[(String, u64)]) {
    if into.is_empty() {
        into.extend_from_slice(other);
        return;
    }
    for ((name, v), (other_name, w)) in into.iter_mut().zip(other) {
        debug_assert_eq!(name, other_name, "workers list their counters in one order");
        // Sizes and fill levels: the largest of any worker, not a sum.
        let largest = matches!(
            name.as_str(),
            "decoder.max_pkt_size"
                | "memcap.pressure"
                | "memcap.pressure_max"
                | "http.byterange.memuse"
                | "http.byterange.memcap"
                | "file_store.hold_memuse"
                | "file_store.hold_memcap"
        ) || name.starts_with("eve_log.");
        if largest {
            *v = (*v).max(*w);
        } else {
            *v += w;
        }
    }
    let get = |n: &str| into.iter().find(|(k, _)| k == n).map(|(_, v)| *v);
    let avg = get("decoder.bytes").zip(get("decoder.pkts")).map(|(b, p)| b.checked_div(p).unwrap_or(0));
    if let (Some(avg), Some(slot)) = (avg, into.iter_mut().find(|(k, _)| k == "decoder.avg_pkt_size")) {
        slot.1 = avg;
    }
}

/// The counters a stats record lists: without zeros unless `null_values`.
pub(crate) fn shown(all: &[(String, u64)], null_values: bool) -> Vec<(String, u64)> {
    all.iter().filter(|(_, v)| null_values || *v != 0).cloned().collect()
}

/// The capture's own counters first, under Suricata's names: frames
/// received (`kernel_packets`) and frames dropped before inspection
/// (`kernel_drops`; reading files, only under the live policy, when a worker
/// ring is full). `decoder.pkts` is what was inspected, so `kernel_packets =
/// decoder.pkts + kernel_drops` in every record.
pub(crate) fn with_capture(counters: Vec<(String, u64)>, received: u64, dropped: u64) -> Vec<(String, u64)> {
    let mut all = vec![("capture.kernel_packets".to_string(), received), ("capture.kernel_drops".to_string(), dropped)];
    all.extend(counters);
    all
}

/// Writes one stats record: `totals` (every counter, zeros included) and,
/// for outputs with `threads: yes`, each thread's own counters.
pub(crate) fn write_stats(
    outputs: &mut Outputs,
    totals: &[(String, u64)],
    threads: &[(String, Vec<(String, u64)>)],
    ts: Timestamp,
    uptime: u64,
    rules: &LoadedRules,
) -> Result<(), EngineError> {
    outputs.lua_stats(totals);
    outputs.stats(|null_values, with_totals, with_threads| {
        let totals = if with_totals { shown(totals, null_values) } else { Vec::new() };
        let mut rec = stats_record(ts, uptime, &totals);
        if with_totals {
            // One detection engine, as Suricata lists them (`detect.engines`).
            rec["stats"]["detect"]["engines"] = serde_json::json!([{
                "id": 0,
                "rules_loaded": rules.loaded,
                "rules_failed": rules.failed,
                "rules_skipped": rules.skipped,
            }]);
        }
        if with_threads {
            let mut by_thread = serde_json::Map::new();
            for (name, counters) in threads {
                let mut one = stats_record(ts, 0, &shown(counters, null_values))["stats"].take();
                if let Some(o) = one.as_object_mut() {
                    o.remove("uptime");
                }
                by_thread.insert(name.clone(), one);
            }
            rec["stats"]["threads"] = serde_json::Value::Object(by_thread);
        }
        rec
    })?;
    outputs.stats_text(totals, threads, uptime)
}

/// Suricata's name for worker `i` (0-based).
pub(crate) fn worker_name(i: usize) -> String {
    format!("W#{:02}", i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(v: &[(&str, u64)]) -> Vec<(String, u64)> {
        v.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn memcap_pressures_merge_as_the_fullest_workers() {
        let mut all = Vec::new();
        merge(&mut all, &c(&[("memcap.pressure", 40), ("memcap.pressure_max", 90), ("flow.total", 2)]));
        merge(&mut all, &c(&[("memcap.pressure", 70), ("memcap.pressure_max", 70), ("flow.total", 3)]));
        assert_eq!(all, c(&[("memcap.pressure", 70), ("memcap.pressure_max", 90), ("flow.total", 5)]));
    }

    #[test]
    fn merged_counters_add_up_and_sizes_are_derived() {
        let mut all = Vec::new();
        let a = c(&[
            ("decoder.pkts", 3),
            ("decoder.bytes", 300),
            ("decoder.avg_pkt_size", 100),
            ("decoder.max_pkt_size", 150),
            ("flow.total", 1),
        ]);
        let b = c(&[
            ("decoder.pkts", 1),
            ("decoder.bytes", 900),
            ("decoder.avg_pkt_size", 900),
            ("decoder.max_pkt_size", 900),
            ("flow.total", 0),
        ]);
        merge(&mut all, &a);
        merge(&mut all, &b);
        assert_eq!(
            all,
            c(&[
                ("decoder.pkts", 4),
                ("decoder.bytes", 1200),
                ("decoder.avg_pkt_size", 300),
                ("decoder.max_pkt_size", 900),
                ("flow.total", 1)
            ])
        );
        assert_eq!(shown(&all, false).len(), 5);
        merge(
            &mut all,
            &c(&[
                ("decoder.pkts", 0),
                ("decoder.bytes", 0),
                ("decoder.avg_pkt_size", 0),
                ("decoder.max_pkt_size", 0),
                ("flow.total", 0),
            ]),
        );
        assert_eq!(shown(&c(&[("x", 0), ("y", 2)]), false), c(&[("y", 2)]));
    }
}
