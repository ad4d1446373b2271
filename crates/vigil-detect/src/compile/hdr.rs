//! Header sticky buffers (`ipv4.hdr`, `tcp.hdr`, ...): payload keywords run
//! on the bytes of one of the packet's own headers, options included. They
//! are packet checks, inspected on every packet the signature's group sees.

use super::payload::Payload;
use crate::inspect::{inspect, InspectCtx, Step};
use vigil_decode::{LayerKind, Packet};
use vigil_rules::IntCmp;

/// One header buffer of a signature and the keywords that inspect it.
#[derive(Debug)]
pub struct HeaderMatch {
    pub layer: LayerKind,
    pub steps: Vec<Step>,
    /// `bsize` on the header.
    pub len: Vec<IntCmp>,
}

/// The header a buffer keyword names.
fn layer_of(name: &str) -> Option<LayerKind> {
    Some(match name {
        "ipv4.hdr" => LayerKind::Ipv4,
        "ipv6.hdr" => LayerKind::Ipv6,
        "tcp.hdr" => LayerKind::Tcp,
        "udp.hdr" => LayerKind::Udp,
        "icmpv4.hdr" => LayerKind::Icmpv4,
        "icmpv6.hdr" => LayerKind::Icmpv6,
        "sctp.hdr" => LayerKind::Sctp,
        "ether.hdr" => LayerKind::Ethernet,
        _ => return None,
    })
}

/// Whether a sticky buffer keyword names one of the packet's headers.
pub(super) fn is_header(name: &str) -> bool {
    layer_of(name).is_some()
}

impl HeaderMatch {
    /// Whether the packet has the header and its bytes match.
    pub fn matches(&self, p: &Packet<'_>, ctx: &mut InspectCtx) -> bool {
        // The innermost such header: the one the packet's flow is of.
        let Some(l) = p.layers().iter().rev().find(|l| l.kind == self.layer) else { return false };
        let start = l.offset as usize;
        let len = match self.layer {
            LayerKind::Icmpv4 => icmpv4_header_len(p.data.get(start..).unwrap_or_default()),
            _ => l.len as usize,
        };
        let Some(buf) = p.data.get(start..start + len) else { return false };
        self.len.iter().all(|c| c.matches(buf.len() as u64))
            && (self.steps.is_empty() || inspect(&self.steps, buf, ctx))
    }
}

/// The ICMPv4 header as Suricata bounds it: messages whose fixed part is
/// longer than 8 bytes (router advertisement with its addresses, timestamp,
/// address mask) have it all in the header.
fn icmpv4_header_len(msg: &[u8]) -> usize {
    let len = match msg.first() {
        Some(9) => 8 + usize::from(*msg.get(4).unwrap_or(&0)) * usize::from(*msg.get(5).unwrap_or(&0)) * 4,
        Some(13 | 14) => 20,
        Some(17 | 18) => 12,
        _ => 8,
    };
    len.min(msg.len())
}

/// Takes the header buffers out of a rule's compiled payload keywords (the
/// rest stay transaction buffers); the fast pattern is dropped when it was
/// in one, as the prefilter scans payloads, not headers.
pub(super) fn take(payload: &mut Payload, missing: &mut Vec<String>) -> Vec<HeaderMatch> {
    let mut out = Vec::new();
    let mut kept = Vec::new();
    let mut moved_to = Vec::with_capacity(payload.buffers.len());
    for b in payload.buffers.drain(..) {
        match layer_of(b.name) {
            Some(layer) => {
                if !b.transforms.is_empty() || b.absent.is_some() {
                    missing.push(format!("{} with transforms or absent", b.name));
                }
                out.push(HeaderMatch { layer, steps: b.steps, len: b.len });
                moved_to.push(None);
            }
            None => {
                moved_to.push(Some(kept.len()));
                kept.push(b);
            }
        }
    }
    payload.buffers = kept;
    payload.fast = payload.fast.take().and_then(|(at, pattern)| match at {
        None => Some((None, pattern)),
        Some(i) => moved_to.get(i).copied().flatten().map(|j| (Some(j), pattern)),
    });
    out
}
