//! Assembles the counters of every stage under Suricata's stats names.

use vigil_config::Stats;
use vigil_decode::{Counter, DecodeCounters, DecodeEvent};
use vigil_defrag::DefragCounters;
use vigil_flow::FlowCounters;

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
    pub app: &'a crate::app::AppStats,
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
        push(format!("flow.{name}"), v);
    }
    for (name, v) in all.defrag.named() {
        push(format!("defrag.{name}"), v);
    }
    for (name, v) in all.stream.counters.named() {
        push(name.into(), v);
    }
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
    for (name, v) in all.app.named() {
        push(name, v);
    }
    out
}
