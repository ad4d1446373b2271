//! Fragment builders: cut datagrams made with `vigil_wire::build` into IP
//! fragments, or write fragments with chosen bytes, for tests, fuzzing and
//! the traffic lab. They allocate; nothing on the inspection path uses them.

use vigil_wire::{checksum, ip_proto};

/// An IPv4 fragment of `datagram` (a whole IPv4 packet): `len` bytes of its
/// payload from byte `offset` (a multiple of 8), with "more fragments" set
/// as given. The header is the datagram's, lengths and checksum updated.
pub fn ipv4_fragment(datagram: &[u8], offset: usize, len: usize, more: bool) -> Vec<u8> {
    let hlen = ((datagram[0] & 0x0f) as usize) * 4;
    let body = &datagram[hlen..];
    let end = (offset + len).min(body.len());
    ipv4_with_header(&datagram[..hlen], offset, more, &body[offset.min(end)..end])
}

/// An IPv4 fragment with arbitrary `data` at byte `offset` of datagram `id`.
pub fn ipv4_raw(src: [u8; 4], dst: [u8; 4], id: u16, proto: u8, offset: usize, more: bool, data: &[u8]) -> Vec<u8> {
    let mut h = vec![0u8; 20];
    h[0] = 0x45;
    h[4..6].copy_from_slice(&id.to_be_bytes());
    h[8] = 64;
    h[9] = proto;
    h[12..16].copy_from_slice(&src);
    h[16..20].copy_from_slice(&dst);
    ipv4_with_header(&h, offset, more, data)
}

fn ipv4_with_header(header: &[u8], offset: usize, more: bool, data: &[u8]) -> Vec<u8> {
    let mut p = header.to_vec();
    let total = (header.len() + data.len()) as u16;
    p[2..4].copy_from_slice(&total.to_be_bytes());
    let field = ((offset / 8) as u16 & 0x1fff) | if more { 0x2000 } else { 0 } | (u16::from(p[6] & 0x40) << 8);
    p[6..8].copy_from_slice(&field.to_be_bytes());
    p[10..12].copy_from_slice(&[0, 0]);
    let sum = checksum::compute(&p);
    p[10..12].copy_from_slice(&sum.to_be_bytes());
    p.extend_from_slice(data);
    p
}

/// An IPv6 fragment of `datagram` (a 40-byte IPv6 header and its payload,
/// no extension headers): `len` payload bytes from `offset` (a multiple of
/// 8), behind a fragment header with identification `id`.
pub fn ipv6_fragment(datagram: &[u8], id: u32, offset: usize, len: usize, more: bool) -> Vec<u8> {
    let body = &datagram[40..];
    let end = (offset + len).min(body.len());
    let mut src = [0u8; 16];
    let mut dst = [0u8; 16];
    src.copy_from_slice(&datagram[8..24]);
    dst.copy_from_slice(&datagram[24..40]);
    ipv6_raw(src, dst, id, datagram[6], offset, more, &body[offset.min(end)..end])
}

/// An IPv6 fragment with arbitrary `data` at byte `offset`; the fragment
/// header names `next_header` as the datagram's protocol.
pub fn ipv6_raw(
    src: [u8; 16],
    dst: [u8; 16],
    id: u32,
    next_header: u8,
    offset: usize,
    more: bool,
    data: &[u8],
) -> Vec<u8> {
    let mut p = vec![0u8; 48];
    p[0] = 0x60;
    p[4..6].copy_from_slice(&((8 + data.len()) as u16).to_be_bytes());
    p[6] = ip_proto::FRAGMENT;
    p[7] = 64;
    p[8..24].copy_from_slice(&src);
    p[24..40].copy_from_slice(&dst);
    p[40] = next_header;
    let field = (offset as u16 & 0xfff8) | u16::from(more);
    p[42..44].copy_from_slice(&field.to_be_bytes());
    p[44..48].copy_from_slice(&id.to_be_bytes());
    p.extend_from_slice(data);
    p
}
