//! BPF filters run in user space: `-f`/`-F` when reading capture files
//! (frames it rejects are never seen, as with Suricata's pcap-file mode:
//! no `pcap_cnt`, no counters) and a `pcap-log` output's `bpf-filter`. The
//! tcpdump expression is compiled by libpcap for each link type met.

use crate::error::EngineError;
use vigil_capture::{bpf_accepts, compile_bpf, BpfInsn};
use vigil_types::LinkType;

#[derive(Clone)]
pub(crate) struct FrameFilter {
    expr: String,
    /// The program for the link type last seen.
    compiled: Option<(LinkType, Vec<BpfInsn>)>,
}

impl FrameFilter {
    pub(crate) fn new(expr: &str) -> FrameFilter {
        FrameFilter { expr: expr.to_string(), compiled: None }
    }

    /// Whether the filter keeps `frame`; an expression libpcap cannot
    /// compile for the link type is an error.
    pub(crate) fn accepts(&mut self, linktype: LinkType, frame: &[u8]) -> Result<bool, EngineError> {
        if self.compiled.as_ref().is_none_or(|(lt, _)| *lt != linktype) {
            let program = compile_bpf(&self.expr, linktype.dlt())
                .map_err(|e| EngineError::Usage(format!("BPF filter {:?}: {e}", self.expr)))?;
            self.compiled = Some((linktype, program));
        }
        Ok(self.compiled.as_ref().is_some_and(|(_, p)| bpf_accepts(p, frame)))
    }
}
