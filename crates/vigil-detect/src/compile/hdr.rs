//! Header sticky buffers (`ipv4.hdr`, `tcp.hdr`, ...): payload keywords run
//! on the bytes of one of the packet's own headers, options included. They
//! are packet checks, inspected on every packet the signature's group sees.

use super::payload::Payload;
use crate::datasets::SetOp;
use crate::inspect::{inspect, InspectCtx, Step};
use vigil_decode::{LayerKind, Packet};
use vigil_rules::IntCmp;

/// One header buffer of a signature and the keywords that inspect it.
#[derive(Debug)]
pub struct HeaderMatch {
    pub source: HeaderSource,
    pub steps: Vec<Step>,
    /// `bsize` on the header.
    pub len: Vec<IntCmp>,
    /// `dataset` and `datarep` on it.
    pub sets: Vec<SetOp>,
}

/// What a header buffer holds: one of the packet's headers, or one of its
/// addresses (`ip.src`, `ip.dst`: 4 or 16 bytes, for datasets).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderSource {
    Layer(LayerKind),
    Src,
    Dst,
}

/// The header a buffer keyword names.
fn source_of(name: &str) -> Option<HeaderSource> {
    let layer = match name {
        "ipv4.hdr" => LayerKind::Ipv4,
        "ipv6.hdr" => LayerKind::Ipv6,
        "tcp.hdr" => LayerKind::Tcp,
        "udp.hdr" => LayerKind::Udp,
        "icmpv4.hdr" => LayerKind::Icmpv4,
        "icmpv6.hdr" => LayerKind::Icmpv6,
        "sctp.hdr" => LayerKind::Sctp,
        "ether.hdr" => LayerKind::Ethernet,
        "ip.src" => return Some(HeaderSource::Src),
        "ip.dst" => return Some(HeaderSource::Dst),
        _ => return None,
    };
    Some(HeaderSource::Layer(layer))
}

/// Whether a sticky buffer keyword names one of the packet's headers.
pub(super) fn is_header(name: &str) -> bool {
    source_of(name).is_some()
}

impl HeaderMatch {
    /// Whether the packet has the header and its bytes match.
    pub fn matches(&self, p: &Packet<'_>, ctx: &mut InspectCtx) -> bool {
        let addr;
        let buf = match self.source {
            HeaderSource::Layer(layer) => {
                // The innermost such header: the one the packet's flow is of.
                let Some(l) = p.layers().iter().rev().find(|l| l.kind == layer) else { return false };
                let start = l.offset as usize;
                let len = match layer {
                    LayerKind::Icmpv4 => icmpv4_header_len(p.data.get(start..).unwrap_or_default()),
                    _ => l.len as usize,
                };
                let Some(buf) = p.data.get(start..start + len) else { return false };
                buf
            }
            HeaderSource::Src | HeaderSource::Dst => {
                let Some(ip) = p.ip else { return false };
                let a = if self.source == HeaderSource::Src { ip.src } else { ip.dst };
                addr = match a {
                    std::net::IpAddr::V4(a) => AddrBytes::V4(a.octets()),
                    std::net::IpAddr::V6(a) => AddrBytes::V6(a.octets()),
                };
                addr.as_slice()
            }
        };
        self.len.iter().all(|c| c.matches(buf.len() as u64))
            && (self.steps.is_empty() || inspect(&self.steps, buf, ctx))
            && self.sets.iter().all(|s| s.matches(buf))
    }
}

/// An address's bytes, held for the buffer that reads them.
enum AddrBytes {
    V4([u8; 4]),
    V6([u8; 16]),
}

impl AddrBytes {
    fn as_slice(&self) -> &[u8] {
        match self {
            AddrBytes::V4(a) => a,
            AddrBytes::V6(a) => a,
        }
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
        match source_of(b.name) {
            Some(source) => {
                if !b.transforms.is_empty() || b.absent.is_some() {
                    missing.push(format!("{} with transforms or absent", b.name));
                }
                out.push(HeaderMatch { source, steps: b.steps, len: b.len, sets: b.sets });
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
