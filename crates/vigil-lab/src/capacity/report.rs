//! The capacity table: one row per step, as text, CSV and JSON.

use serde_json::json;
use std::fmt::Write as _;

/// One step of a sweep: what was offered, sent, received, inspected and lost.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Step {
    /// Which engine or setting ran (a line on the plots).
    pub engine: String,
    pub offered_mbps: f64,
    pub sent_mbps: f64,
    pub sent_packets: u64,
    /// Frames that reached the capture (the engine's `capture.kernel_packets`).
    pub received: u64,
    /// Frames inspected (`decoder.pkts`).
    pub inspected: u64,
    /// Frames lost in the ring (`capture.kernel_drops`), plus frames sent that
    /// the capture never saw.
    pub dropped: u64,
    pub alerts: u64,
    /// CPU time of the engine over wall time, in percent of one core.
    pub cpu_percent: f64,
    pub peak_rss_mb: f64,
    /// From starting the engine to its saying it captures.
    pub startup_secs: f64,
    /// Then idle, before the sender started.
    pub warmup_secs: f64,
    /// The self-check's count-only receiver lost frames at this rate, or the
    /// sender fell short: the harness set the limit here, not the engine.
    pub harness_limited: bool,
}

impl Step {
    /// Lost frames over frames sent, in percent.
    pub fn drop_percent(&self) -> f64 {
        if self.sent_packets == 0 {
            return 0.0;
        }
        100.0 * self.dropped as f64 / self.sent_packets as f64
    }

    /// Inspected over sent, in percent.
    pub fn efficiency(&self) -> f64 {
        if self.sent_packets == 0 {
            return 100.0;
        }
        100.0 * self.inspected.min(self.sent_packets) as f64 / self.sent_packets as f64
    }
}

const HEADER: [&str; 15] = [
    "engine",
    "offered_mbps",
    "sent_mbps",
    "sent",
    "received",
    "inspected",
    "dropped",
    "drop_pct",
    "efficiency_pct",
    "alerts",
    "cpu_pct",
    "peak_rss_mb",
    "startup_s",
    "warmup_s",
    "harness_limited",
];

pub fn text(steps: &[Step]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<10} {:>8} {:>8} {:>9} {:>9} {:>9} {:>8} {:>7} {:>7} {:>7} {:>6} {:>8} {:>9}",
        "engine",
        "offered",
        "sent",
        "packets",
        "received",
        "inspected",
        "dropped",
        "drop%",
        "effic%",
        "alerts",
        "cpu%",
        "rss MB",
        "start-up s"
    );
    for s in steps {
        let _ = writeln!(
            out,
            "{:<10} {:>8.0} {:>8.1} {:>9} {:>9} {:>9} {:>8} {:>7.2} {:>7.2} {:>7} {:>6.1} {:>8.1} {:>9.1} {}",
            s.engine,
            s.offered_mbps,
            s.sent_mbps,
            s.sent_packets,
            s.received,
            s.inspected,
            s.dropped,
            s.drop_percent(),
            s.efficiency(),
            s.alerts,
            s.cpu_percent,
            s.peak_rss_mb,
            s.startup_secs,
            if s.harness_limited { "harness-limited" } else { "" }
        );
    }
    out
}

pub fn csv(steps: &[Step]) -> String {
    let mut out = HEADER.join(",") + "\n";
    for s in steps {
        let _ = writeln!(
            out,
            "{},{:.1},{:.2},{},{},{},{},{:.3},{:.3},{},{:.1},{:.1},{:.2},{:.2},{}",
            s.engine.replace(',', ";"),
            s.offered_mbps,
            s.sent_mbps,
            s.sent_packets,
            s.received,
            s.inspected,
            s.dropped,
            s.drop_percent(),
            s.efficiency(),
            s.alerts,
            s.cpu_percent,
            s.peak_rss_mb,
            s.startup_secs,
            s.warmup_secs,
            s.harness_limited
        );
    }
    out
}

pub fn json(steps: &[Step]) -> serde_json::Value {
    json!(steps
        .iter()
        .map(|s| json!({
            "engine": s.engine, "offered_mbps": s.offered_mbps, "sent_mbps": s.sent_mbps,
            "sent": s.sent_packets, "received": s.received, "inspected": s.inspected, "dropped": s.dropped,
            "drop_pct": s.drop_percent(), "efficiency_pct": s.efficiency(), "alerts": s.alerts,
            "cpu_pct": s.cpu_percent, "peak_rss_mb": s.peak_rss_mb,
            "startup_s": s.startup_secs, "warmup_s": s.warmup_secs, "harness_limited": s.harness_limited,
        }))
        .collect::<Vec<_>>())
}

/// The highest offered rate each engine handled without losing a frame.
pub fn zero_drop(steps: &[Step]) -> Vec<(String, Option<f64>)> {
    let mut engines: Vec<String> = steps.iter().map(|s| s.engine.clone()).collect();
    engines.dedup();
    engines
        .into_iter()
        .map(|e| {
            let best = steps
                .iter()
                .filter(|s| s.engine == e && s.dropped == 0 && s.sent_packets > 0)
                .map(|s| s.sent_mbps)
                .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
            (e, best)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drop_share_and_zero_drop_rate() {
        let a = Step {
            engine: "vigil".into(),
            offered_mbps: 100.0,
            sent_mbps: 99.0,
            sent_packets: 1000,
            received: 1000,
            inspected: 1000,
            ..Step::default()
        };
        let b = Step { offered_mbps: 300.0, sent_mbps: 290.0, dropped: 50, inspected: 950, ..a.clone() };
        assert_eq!(b.drop_percent(), 5.0);
        assert_eq!(b.efficiency(), 95.0);
        assert_eq!(zero_drop(&[a.clone(), b.clone()]), vec![("vigil".to_string(), Some(99.0))]);
        assert!(csv(&[a, b]).lines().count() == 3);
    }
}
