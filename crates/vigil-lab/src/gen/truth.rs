//! Ground truth: the marker each kind of malicious packet carries, the rule
//! that finds it, and how many packets carry it, so the alerts a run should
//! raise are known exactly.

use serde_json::{json, Value};

/// One kind of malicious traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MarkerKind {
    pub sid: u32,
    /// `tcp`, `udp` or `icmp`: the rule's protocol.
    pub proto: &'static str,
    /// The bytes in the payload (letters and dashes only, so rules need no escaping).
    pub marker: &'static str,
}

/// Index into [`MARKERS`].
pub const TCP: usize = 0;
pub const UDP: usize = 1;
pub const ICMP: usize = 2;

pub const MARKERS: [MarkerKind; 3] = [
    MarkerKind { sid: 9_000_001, proto: "tcp", marker: "vigil-lab-marker-tcp-QzX7rK" },
    MarkerKind { sid: 9_000_002, proto: "udp", marker: "vigil-lab-marker-udp-Wm3pLd" },
    MarkerKind { sid: 9_000_003, proto: "icmp", marker: "vigil-lab-marker-icmp-Hv8sNc" },
];

impl MarkerKind {
    /// The Suricata rule that alerts once per marker occurrence. TCP markers
    /// sit in the client's data of an established flow (one per flow), so the
    /// TCP rule asks for exactly that.
    pub fn rule(&self) -> String {
        let flow = if self.proto == "tcp" { "flow:established,to_server; " } else { "" };
        format!(
            "alert {p} any any -> any any (msg:\"vigil-lab malicious {p}\"; {flow}content:\"{m}\"; sid:{s}; rev:1;)",
            p = self.proto,
            m = self.marker,
            s = self.sid
        )
    }
}

/// Every marker's rule, one per line.
pub fn rules_text() -> String {
    let mut s = String::from("# vigil-lab: one rule per malicious marker kind (see the .truth.json beside it)\n");
    for k in &MARKERS {
        s.push_str(&k.rule());
        s.push('\n');
    }
    s
}

/// What a generated capture holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Truth {
    /// Frames written.
    pub frames: u64,
    /// IP datagrams before fragmentation.
    pub datagrams: u64,
    /// Datagrams that were fragmented, and the fragments they became.
    pub fragmented: u64,
    pub fragments: u64,
    /// Flows (for `synscan`, probes), malicious ones included.
    pub flows: u64,
    pub malicious_flows: u64,
    /// Datagrams carrying each marker, by [`MARKERS`] index: one alert each.
    pub malicious: [u64; 3],
    pub bytes: u64,
}

impl Truth {
    /// The expected alert count per sid.
    pub fn expected_alerts(&self) -> Vec<(u32, u64)> {
        MARKERS.iter().zip(self.malicious).map(|(k, n)| (k.sid, n)).collect()
    }

    pub fn to_json(&self, options: Value) -> Value {
        let per_sid: serde_json::Map<String, Value> =
            self.expected_alerts().iter().map(|(sid, n)| (sid.to_string(), json!(n))).collect();
        let kinds: Vec<Value> = MARKERS
            .iter()
            .zip(self.malicious)
            .map(|(k, n)| json!({"sid": k.sid, "proto": k.proto, "marker": k.marker, "packets": n}))
            .collect();
        json!({
            "generator": "vigil-lab",
            "options": options,
            "total_packets": self.frames,
            "total_bytes": self.bytes,
            "datagrams": self.datagrams,
            "fragmented_datagrams": self.fragmented,
            "fragments": self.fragments,
            "flows": self.flows,
            "malicious_flows": self.malicious_flows,
            "malicious_packets": self.malicious.iter().sum::<u64>(),
            "expected_alerts": per_sid,
            "markers": kinds,
            "note": "malicious packets are IP datagrams (before fragmentation) carrying a marker; \
                     each raises exactly one alert of its sid (TCP: one marker per flow, in the client's data after the handshake)",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_name_each_marker_once() {
        let text = rules_text();
        for k in &MARKERS {
            assert_eq!(text.matches(k.marker).count(), 1);
            assert!(text.contains(&format!("sid:{};", k.sid)));
        }
        assert!(MARKERS[TCP].rule().contains("flow:established,to_server;"));
        assert!(!MARKERS[UDP].rule().contains("flow:"));
    }
}
