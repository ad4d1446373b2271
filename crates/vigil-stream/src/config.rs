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
        }
    }
}
