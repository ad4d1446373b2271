//! The hash a reader uses to spread packets over workers.
//!
//! Every packet of a flow must reach the same worker, in both directions,
//! and so must every fragment of a datagram and every packet of a tunnel:
//! the worker owns the flow, its reassembly and its fragments outright. The
//! hash therefore covers what all of those share: the VLAN ids and the
//! outermost IP address pair, ordered so both directions agree. Ports are
//! left out on purpose: later fragments carry none, and tunnelled flows
//! share their carrier's pair.
//!
//! It reads a few header fields and no more, so the reader thread spends a
//! fraction of a full decode on it. A frame it cannot read (no IP, truncated,
//! an unknown link type) hashes to 0: such frames all go to one worker, which
//! decodes them for real and counts whatever is wrong with them.

use vigil_types::LinkType;

const ETH_IPV4: u16 = 0x0800;
const ETH_IPV6: u16 = 0x86dd;
const ETH_VLAN: [u16; 3] = [0x8100, 0x88a8, 0x9100];
const ETH_PPPOE_SESSION: u16 = 0x8864;
const ETH_MPLS: [u16; 2] = [0x8847, 0x8848];
const PPP_IPV4: u16 = 0x0021;
const PPP_IPV6: u16 = 0x0057;
/// VLAN tags and MPLS labels walked before giving up (a hostile stack of
/// tags must not make the reader loop).
const MAX_TAGS: usize = 8;

/// The worker hash of a captured frame: symmetric in the IP addresses.
pub fn dispatch_hash(frame: &[u8], linktype: LinkType) -> u32 {
    let mut vlans = 0u64;
    let ip = match linktype {
        LinkType::Ethernet => ethernet(frame, &mut vlans),
        LinkType::Raw | LinkType::Ipv4 | LinkType::Ipv6 => Some(frame),
        LinkType::Null => frame.get(4..),
        LinkType::LinuxSll => {
            frame.get(16..).zip(be16(frame, 14)).and_then(|(rest, t)| after_ethertype(rest, t, &mut vlans))
        }
        LinkType::LinuxSll2 => {
            frame.get(20..).zip(be16(frame, 0)).and_then(|(rest, t)| after_ethertype(rest, t, &mut vlans))
        }
        LinkType::Ppp | LinkType::CiscoHdlc => ppp(frame),
        LinkType::Other(_) => None,
    };
    ip.and_then(|ip| ip_pair_hash(ip, vlans)).unwrap_or(0)
}

fn be16(b: &[u8], at: usize) -> Option<u16> {
    b.get(at..at + 2).map(|s| u16::from_be_bytes([s[0], s[1]]))
}

fn ethernet<'a>(frame: &'a [u8], vlans: &mut u64) -> Option<&'a [u8]> {
    after_ethertype(frame.get(14..)?, be16(frame, 12)?, vlans)
}

/// The IP header that follows an ethertype, through VLAN tags, PPPoE and MPLS.
fn after_ethertype<'a>(mut rest: &'a [u8], mut ethertype: u16, vlans: &mut u64) -> Option<&'a [u8]> {
    for _ in 0..MAX_TAGS {
        match ethertype {
            ETH_IPV4 | ETH_IPV6 => return Some(rest),
            t if ETH_VLAN.contains(&t) => {
                *vlans = (*vlans << 12) | u64::from(be16(rest, 0)? & 0x0fff);
                ethertype = be16(rest, 2)?;
                rest = rest.get(4..)?;
            }
            ETH_PPPOE_SESSION => return ppp_proto(rest.get(6..)?),
            t if ETH_MPLS.contains(&t) => return mpls(rest),
            _ => return None,
        }
    }
    None
}

/// A PPP frame with its address and control bytes (0xff 0x03) or without.
fn ppp(frame: &[u8]) -> Option<&[u8]> {
    match frame {
        [0xff, 0x03, rest @ ..] => ppp_proto(rest),
        // Cisco HDLC: address, control, then an ethertype.
        [0x0f | 0x8f, 0x00, ..] => match be16(frame, 2)? {
            ETH_IPV4 | ETH_IPV6 => frame.get(4..),
            _ => None,
        },
        _ => ppp_proto(frame),
    }
}

/// After the PPP protocol field (one byte when compressed).
fn ppp_proto(b: &[u8]) -> Option<&[u8]> {
    match *b.first()? {
        0x21 | 0x57 => b.get(1..),
        _ => match be16(b, 0)? {
            PPP_IPV4 | PPP_IPV6 => b.get(2..),
            _ => None,
        },
    }
}

/// Past the label stack; the payload is IP when its version nibble says so.
fn mpls(mut b: &[u8]) -> Option<&[u8]> {
    for _ in 0..MAX_TAGS {
        let bottom = b.get(2)? & 1 == 1;
        b = b.get(4..)?;
        if bottom {
            return Some(b);
        }
    }
    None
}

fn ip_pair_hash(ip: &[u8], vlans: u64) -> Option<u32> {
    let (a, b): (&[u8], &[u8]) = match ip.first()? >> 4 {
        4 => (ip.get(12..16)?, ip.get(16..20)?),
        6 => (ip.get(8..24)?, ip.get(24..40)?),
        _ => return None,
    };
    let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
    // FNV-1a: fixed, so a capture is spread the same way on every run.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &byte in lo.iter().chain(hi).chain(&vlans.to_le_bytes()) {
        h = (h ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    Some((h ^ (h >> 32)) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use vigil_wire::build::PacketBuilder;

    #[test]
    fn both_directions_and_all_fragments_meet() {
        let fwd = PacketBuilder::ipv4([198, 18, 0, 1], [198, 18, 0, 2]).tcp(40000, 80).build_ethernet();
        let rev = PacketBuilder::ipv4([198, 18, 0, 2], [198, 18, 0, 1]).tcp(80, 40000).build_ethernet();
        let other_ports = PacketBuilder::ipv4([198, 18, 0, 2], [198, 18, 0, 1]).udp(53, 1).build_ethernet();
        let h = dispatch_hash(&fwd, LinkType::Ethernet);
        assert_ne!(h, 0);
        assert_eq!(h, dispatch_hash(&rev, LinkType::Ethernet));
        assert_eq!(h, dispatch_hash(&other_ports, LinkType::Ethernet));
        let elsewhere = PacketBuilder::ipv4([198, 18, 0, 3], [198, 18, 0, 1]).tcp(40000, 80).build_ethernet();
        assert_ne!(h, dispatch_hash(&elsewhere, LinkType::Ethernet));
    }

    #[test]
    fn ipv6_vlans_and_raw_ip() {
        let a = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
        let b = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];
        let fwd = PacketBuilder::ipv6(a, b).udp(1000, 53).build_ethernet();
        let rev = PacketBuilder::ipv6(b, a).udp(53, 1000).build_ethernet();
        assert_eq!(dispatch_hash(&fwd, LinkType::Ethernet), dispatch_hash(&rev, LinkType::Ethernet));
        // The same pair on another VLAN is another flow, maybe another worker.
        let mut tagged = fwd[..12].to_vec();
        tagged.extend_from_slice(&[0x81, 0x00, 0x00, 0x0a]);
        tagged.extend_from_slice(&fwd[12..]);
        assert_ne!(dispatch_hash(&tagged, LinkType::Ethernet), dispatch_hash(&fwd, LinkType::Ethernet));
        assert_eq!(dispatch_hash(&fwd[14..], LinkType::Raw), dispatch_hash(&rev[14..], LinkType::Raw));
    }

    #[test]
    fn unreadable_frames_go_to_worker_zero() {
        assert_eq!(dispatch_hash(&[], LinkType::Ethernet), 0);
        assert_eq!(dispatch_hash(&[0u8; 13], LinkType::Ethernet), 0);
        assert_eq!(dispatch_hash(&[0x45, 0, 0], LinkType::Raw), 0);
        assert_eq!(dispatch_hash(&[1, 2, 3, 4], LinkType::Other(147)), 0);
        // A frame of nothing but VLAN tags stops after a bounded walk.
        let mut tags = vec![0u8; 12];
        for _ in 0..64 {
            tags.extend_from_slice(&[0x81, 0x00, 0x00, 0x01]);
        }
        assert_eq!(dispatch_hash(&tags, LinkType::Ethernet), 0);
    }
}
