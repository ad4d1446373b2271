//! What the stream engine is told (`stream.*` in suricata.yaml, `host-os-policy`).

use crate::policy::HostPolicies;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamConfig {
    /// `stream.midstream`: pick up sessions whose handshake was not seen.
    pub midstream: bool,
    /// `stream.async-oneside`: track sessions of which only one direction is seen.
    pub async_oneside: bool,
    /// `stream.memcap`: bytes of session state.
    pub memcap: u64,
    /// `stream.reassembly.memcap`: bytes of held segment data.
    pub reassembly_memcap: u64,
    /// `stream.reassembly.depth`: bytes per direction reassembled (0: all).
    pub depth: u64,
    /// `stream.reassembly.toserver-chunk-size` / `toclient-chunk-size`:
    /// raw stream data is inspected once this much is ready (or the stream closes).
    pub toserver_chunk: u32,
    pub toclient_chunk: u32,
    /// Inline (IPS) mode: data is inspected as it arrives, not once acknowledged.
    pub inline: bool,
    /// Overlap policy of each receiving host.
    pub policies: HostPolicies,
    /// `stream.reassembly.urgent.policy`: what becomes of urgent data.
    pub urgent: UrgentPolicy,
    /// `stream.reassembly.urgent.oob-limit-policy`: what becomes of a
    /// segment whose urgent pointer lies past its data (`Oob` not allowed).
    pub urgent_oob_limit: UrgentPolicy,
}

/// What becomes of TCP urgent data (Suricata 8's `stream.reassembly.urgent`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UrgentPolicy {
    /// It stays in the stream, as any data.
    #[default]
    Inline,
    /// The segment's data is left out of the stream, and an IPS drops it.
    Drop,
    /// The one urgent byte (the one before the pointer, RFC 6093 3.1) is
    /// taken out of the stream; what follows it closes up.
    Oob,
    /// The urgent byte is left out as a hole in the stream.
    Gap,
}

impl Default for StreamConfig {
    /// Stock suricata.yaml values (chunk sizes are not randomized: vigil's
    /// results do not vary between runs).
    fn default() -> Self {
        StreamConfig {
            midstream: false,
            async_oneside: false,
            memcap: 64 << 20,
            reassembly_memcap: 256 << 20,
            depth: 1 << 20,
            toserver_chunk: 2560,
            toclient_chunk: 2560,
            inline: false,
            policies: HostPolicies::default(),
            urgent: UrgentPolicy::Inline,
            urgent_oob_limit: UrgentPolicy::Drop,
        }
    }
}
