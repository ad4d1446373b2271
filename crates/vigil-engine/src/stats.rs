//! Assembles the counters of every stage under Suricata's stats names.

use vigil_config::Stats;
use vigil_decode::{Counter, DecodeCounters, DecodeEvent};

/// Dotted counter names and values, in the order a stats record lists them.
pub(crate) fn counters(decode: &DecodeCounters, cfg: &Stats, null_values: bool) -> Vec<(String, u64)> {
    let mut out = Vec::with_capacity(Counter::ALL.len() + DecodeEvent::ALL.len() + 2);
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
    out
}
