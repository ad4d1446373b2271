//! A live packet source as a worker sees it: the next frame, what happens to
//! it after inspection (nothing, forwarded to the bridge's peer, or an
//! NFQUEUE verdict), and the kernel's counters.

use crate::error::EngineError;
use crate::reject::Response;
use std::time::Duration;
use vigil_capture::{AfPacket, AfPacketTx, LiveFrame, NfQueue, RawIpSender, Verdict};
use vigil_wire::ethertype;

/// The kernel's view of one source, cumulative.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct KernelCounters {
    /// Frames that reached the source (drops included).
    pub packets: u64,
    /// Frames the kernel lost because the ring or queue was full.
    pub drops: u64,
    /// Inline: frames let through, and frames blocked.
    pub accepted: u64,
    pub blocked: u64,
}

impl KernelCounters {
    pub(crate) fn add(&mut self, o: &KernelCounters) {
        self.packets += o.packets;
        self.drops += o.drops;
        self.accepted += o.accepted;
        self.blocked += o.blocked;
    }
}

/// One interface of a worker: its capture socket and, on an inline bridge,
/// the socket that sends what passes out of the peer interface.
pub(crate) struct Side {
    pub cap: AfPacket,
    pub peer: Option<AfPacketTx>,
    /// On a bridge, a socket sending out of this side's own interface: a
    /// `reject` answers the sender the way its frame came.
    pub back: Option<AfPacketTx>,
}

pub(crate) enum Source {
    /// AF_PACKET: one socket on every interface of the run, each the same
    /// member of its interface's fanout group, so the kernel's symmetric
    /// hash gives both directions of a flow to this worker even when they
    /// cross different interfaces (a bridge, a two-port tap).
    AfPacket { sides: Vec<Side>, turn: usize, last: usize, accepted: u64, blocked: u64 },
    /// An NFQUEUE queue: every packet waits in the kernel for its verdict.
    Nfq { q: Box<NfQueue>, last: Option<u32> },
}

impl Source {
    /// Whether frames get a verdict (the run is inline).
    pub(crate) fn inline(&self) -> bool {
        match self {
            Source::AfPacket { sides, .. } => sides.iter().any(|s| s.peer.is_some()),
            Source::Nfq { .. } => true,
        }
    }

    /// The next frame, or `None` when `timeout` passed without one.
    pub(crate) fn next(&mut self, timeout: Duration) -> Result<Option<LiveFrame<'_>>, EngineError> {
        let input = |e: vigil_capture::AfPacketError| EngineError::Input(e.to_string());
        match self {
            Source::AfPacket { sides, turn, last, .. } => {
                let n = sides.len();
                if n == 1 {
                    *last = 0;
                    return sides[0].cap.next(timeout).map_err(input);
                }
                // Interfaces take turns, so a busy one cannot starve the other.
                let mut pick = (0..n).map(|k| (*turn + k) % n).find(|&i| sides[i].cap.ready());
                if pick.is_none() && !timeout.is_zero() {
                    let caps: Vec<&AfPacket> = sides.iter().map(|s| &s.cap).collect();
                    vigil_capture::wait_any(&caps, timeout).map_err(input)?;
                    pick = (0..n).map(|k| (*turn + k) % n).find(|&i| sides[i].cap.ready());
                }
                let Some(i) = pick else { return Ok(None) };
                *turn = (i + 1) % n;
                *last = i;
                sides[i].cap.next(Duration::ZERO).map_err(input)
            }
            Source::Nfq { q, last } => {
                let queue = q.queue();
                let p = q.next(timeout).map_err(|e| EngineError::Input(format!("nfq {queue}: {e}")))?;
                Ok(p.map(|p| {
                    *last = Some(p.id);
                    // The kernel hands over whole datagrams with their checksums as they are.
                    LiveFrame { raw: p.raw, csum_not_ready: false }
                }))
            }
        }
    }

    /// The frame `next` returned was inspected; `drop`: the IPS dropped it.
    /// `frame` is its bytes again (the bridge sends them on).
    pub(crate) fn done(&mut self, frame: &[u8], drop: bool) -> Result<(), EngineError> {
        match self {
            Source::AfPacket { sides, last, accepted, blocked, .. } => {
                let Some(peer) = sides.get(*last).and_then(|s| s.peer.as_ref()) else { return Ok(()) };
                if drop {
                    *blocked += 1;
                    return Ok(());
                }
                *accepted += 1;
                // A frame the peer link refuses (too big, link down) is lost
                // as a switch would lose it; it does not stop the sensor.
                let _ = peer.send(frame);
                Ok(())
            }
            Source::Nfq { q, last } => {
                let Some(id) = last.take() else { return Ok(()) };
                let queue = q.queue();
                let v = if drop { Verdict::Drop } else { Verdict::Accept };
                q.verdict(id, v).map_err(|e| EngineError::Input(format!("nfq {queue}: verdict: {e}")))
            }
        }
    }

    /// Sends a `reject` rule's refusals for the frame `next` returned last.
    /// On a bridge they go out at layer 2, back the way the frame came (or on
    /// toward its destination), in its own link-layer header with the MAC
    /// addresses turned round; elsewhere the host routes them. A refusal that
    /// cannot be sent is lost, as any packet on a busy link may be.
    /// `frame`: the refused frame (its link header at least); `reject_dev`:
    /// the interface `--reject-dev` names, where refusals go at layer 2.
    pub(crate) fn respond(
        &mut self,
        frame: &[u8],
        responses: &[Response],
        raw: Option<&RawIpSender>,
        reject_dev: Option<&AfPacketTx>,
    ) {
        // A refusal at layer 2: the refused frame's link header (its
        // addresses turned round toward the source) before the datagram.
        let framed = |r: &Response, l2: usize, out: &mut Vec<u8>| {
            out.clear();
            out.extend_from_slice(&frame[..l2]);
            if r.to_src {
                out[..6].copy_from_slice(&frame[6..12]);
                out[6..12].copy_from_slice(&frame[..6]);
            }
            out.extend_from_slice(&r.ip);
        };
        let mut out = Vec::new();
        if let Source::AfPacket { sides, last, .. } = self {
            if let (Some(side), Some(l2)) = (sides.get(*last), ethernet_header_len(frame)) {
                if let (Some(back), Some(peer)) = (&side.back, &side.peer) {
                    for r in responses {
                        framed(r, l2, &mut out);
                        let _ = if r.to_src { back.send(&out) } else { peer.send(&out) };
                    }
                    return;
                }
            }
        }
        if let (Some(dev), Some(l2)) = (reject_dev, ethernet_header_len(frame)) {
            for r in responses {
                framed(r, l2, &mut out);
                let _ = dev.send(&out);
            }
            return;
        }
        if let Some(raw) = raw {
            for r in responses {
                let _ = raw.send(&r.ip);
            }
        }
    }

    /// Sends what verdicts wait in a batch.
    pub(crate) fn flush(&mut self) -> Result<(), EngineError> {
        match self {
            Source::AfPacket { .. } => Ok(()),
            Source::Nfq { q, .. } => {
                let queue = q.queue();
                q.flush_verdicts().map_err(|e| EngineError::Input(format!("nfq {queue}: verdict: {e}")))
            }
        }
    }

    pub(crate) fn counters(&mut self) -> KernelCounters {
        match self {
            Source::AfPacket { sides, accepted, blocked, .. } => {
                let mut k = KernelCounters { accepted: *accepted, blocked: *blocked, ..KernelCounters::default() };
                for s in sides.iter_mut() {
                    let st = s.cap.stats();
                    k.packets += st.packets;
                    k.drops += st.drops;
                }
                k
            }
            Source::Nfq { q, .. } => {
                let st = q.stats();
                // Lost in the kernel: the queue was full, or our socket buffer overran.
                let lost = st.kernel.map_or(st.enobufs, |k| k.queue_dropped + k.user_dropped);
                KernelCounters { packets: st.packets + lost, drops: lost, accepted: st.accepted, blocked: st.dropped }
            }
        }
    }
}

/// The length of an Ethernet header with its VLAN tags, when `frame` is an
/// Ethernet frame carrying IPv4 or IPv6 right after them.
fn ethernet_header_len(frame: &[u8]) -> Option<usize> {
    let mut at = 12;
    loop {
        let et = u16::from_be_bytes([*frame.get(at)?, *frame.get(at + 1)?]);
        match et {
            ethertype::VLAN | ethertype::QINQ | ethertype::QINQ_OLD => at += 4,
            ethertype::IPV4 | ethertype::IPV6 => return Some(at + 2),
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ethernet_headers_with_and_without_tags() {
        let mut f = vec![0u8; 12];
        f.extend_from_slice(&[0x08, 0x00, 0x45]);
        assert_eq!(ethernet_header_len(&f), Some(14));
        let mut q = vec![0u8; 12];
        q.extend_from_slice(&[0x81, 0x00, 0, 7, 0x86, 0xdd, 0x60]);
        assert_eq!(ethernet_header_len(&q), Some(18));
        let mut arp = vec![0u8; 12];
        arp.extend_from_slice(&[0x08, 0x06]);
        assert_eq!(ethernet_header_len(&arp), None);
        assert_eq!(ethernet_header_len(&[0; 13]), None);
    }
}
