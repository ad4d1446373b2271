//! One IP fragment as the reassembler sees it, read out of a decoded packet.

use std::net::IpAddr;
use vigil_decode::{LayerKind, Packet};
use vigil_types::FLOW_KEY_VLANS;
use vigil_wire::ip_proto;

/// The parts of a fragment that reassembly needs, borrowed from the packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fragment<'a> {
    pub ipv6: bool,
    pub src: IpAddr,
    pub dst: IpAddr,
    /// IPv4 identification or IPv6 fragment identification.
    pub id: u32,
    /// The protocol of the whole datagram (IPv4 protocol, or the next
    /// header named by the IPv6 fragment header).
    pub proto: u8,
    /// Where `data` goes in the datagram, in bytes.
    pub offset: u32,
    pub more: bool,
    /// What precedes the fragmentable part: the IPv4 header with options,
    /// or the IPv6 header and the extension headers before the fragment header.
    pub header: &'a [u8],
    /// IPv6: where in `header` the next-header byte pointing at the fragment
    /// header sits (it must name `proto` in the reassembled datagram).
    pub next_header_at: usize,
    pub data: &'a [u8],
    /// VLAN ids (unused ones 0) and tunnel depth, which tell otherwise
    /// equal datagrams apart.
    pub vlans: [u16; FLOW_KEY_VLANS],
    pub recursion: u8,
}

impl<'a> Fragment<'a> {
    /// The fragment a decoded packet carries, if it is one (`Packet::fragment`).
    pub fn from_packet(p: &Packet<'a>) -> Option<Fragment<'a>> {
        if !p.fragment {
            return None;
        }
        let ip = p.ip?;
        let start = ip.offset as usize;
        let end = start.checked_add(ip.len as usize)?;
        let bytes = p.data.get(start..end)?;
        let recursion = p.tunnel.map_or(0, |t| t.depth);
        let mut vlans = [0u16; FLOW_KEY_VLANS];
        for (d, s) in vlans.iter_mut().zip(p.vlans()) {
            *d = *s;
        }
        let common = |header, next_header_at, data, id, proto, offset, more, ipv6| Fragment {
            ipv6,
            src: ip.src,
            dst: ip.dst,
            id,
            proto,
            offset,
            more,
            header,
            next_header_at,
            data,
            vlans,
            recursion,
        };
        match ip.src {
            IpAddr::V4(_) => {
                let hlen = p.layers().iter().find(|l| l.kind == LayerKind::Ipv4 && l.offset == ip.offset)?.len as usize;
                if bytes.len() < hlen || hlen < 20 {
                    return None;
                }
                let field = u16::from_be_bytes([bytes[6], bytes[7]]);
                let id = u16::from_be_bytes([bytes[4], bytes[5]]) as u32;
                Some(common(
                    &bytes[..hlen],
                    0,
                    &bytes[hlen..],
                    id,
                    bytes[9],
                    u32::from(field & 0x1fff) * 8,
                    field & 0x2000 != 0,
                    false,
                ))
            }
            IpAddr::V6(_) => {
                let layers = p.layers();
                let fi = layers.iter().rposition(|l| {
                    l.kind == LayerKind::Ipv6Ext && l.ext == ip_proto::FRAGMENT && l.offset > ip.offset
                })?;
                let fh_at = layers[fi].offset as usize;
                let rel = fh_at.checked_sub(start)?;
                let fh = bytes.get(rel..rel + 8)?;
                // The byte that names the fragment header: in the IPv6 header
                // or in the extension header just before it.
                let prev = layers.get(fi.checked_sub(1)?)?;
                let next_header_at = match prev.kind {
                    LayerKind::Ipv6 => 6,
                    LayerKind::Ipv6Ext => (prev.offset as usize).checked_sub(start)?,
                    _ => return None,
                };
                if next_header_at >= rel {
                    return None;
                }
                let field = u16::from_be_bytes([fh[2], fh[3]]);
                Some(common(
                    &bytes[..rel],
                    next_header_at,
                    &bytes[rel + 8..],
                    u32::from_be_bytes([fh[4], fh[5], fh[6], fh[7]]),
                    fh[0],
                    u32::from(field & 0xfff8),
                    field & 1 != 0,
                    true,
                ))
            }
        }
    }
}
