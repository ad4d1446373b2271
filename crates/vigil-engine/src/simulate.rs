//! QA simulation, Suricata's `--simulate-*` switches: pretend that a limit
//! was reached at a chosen packet (by its number in the capture, 1-based, as
//! EVE's `pcap_cnt`), so that what the exception policies do can be seen on
//! any capture without exhausting memory for real. Application-layer errors
//! are simulated by the parsers' stream offset instead (see
//! `AppConfig::simulate_error_at`).

/// Packets at which a limit is pretended reached.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Simulation {
    /// `--simulate-packet-flow-memcap`: this packet, if it needs a new
    /// flow, finds the flow memcap reached.
    pub flow_memcap: Option<u64>,
    /// `--simulate-packet-tcp-ssn-memcap`: this packet, if it would start
    /// a TCP session, finds `stream.memcap` reached.
    pub tcp_ssn_memcap: Option<u64>,
    /// `--simulate-packet-tcp-reassembly-memcap`: this packet's payload
    /// finds `stream.reassembly.memcap` reached.
    pub tcp_reassembly_memcap: Option<u64>,
    /// `--simulate-packet-defrag-memcap`: this fragment, if it starts a
    /// datagram, finds `defrag.memcap` reached.
    pub defrag_memcap: Option<u64>,
}

impl Simulation {
    /// Whether `at` names packet number `pcap_cnt` (pseudo packets have none).
    pub(crate) fn hits(at: Option<u64>, pcap_cnt: u64) -> bool {
        pcap_cnt != 0 && at == Some(pcap_cnt)
    }
}
