//! IP fragmentation as a sending host does it: IPv4 with MF and offsets (DF
//! cleared, the identification of the datagram), IPv6 with a Fragment
//! extension header. Offsets are multiples of 8; every fragment but the last
//! carries as much as the MTU allows.

use vigil_wire::checksum;

/// The IPv6 Fragment extension header's protocol number.
const IPV6_FRAGMENT: u8 = 44;

/// Splits the IP datagram `ip` (IPv4 with its header as built, or IPv6 with
/// a bare 40-byte header) into fragments of at most `mtu` bytes; a datagram
/// that fits comes back whole. `v6_ident`: the IPv6 identification (IPv4
/// keeps the one in its header).
pub fn fragment(ip: Vec<u8>, mtu: usize, v6_ident: u32) -> Vec<Vec<u8>> {
    if ip.len() <= mtu {
        return vec![ip];
    }
    match ip[0] >> 4 {
        4 => fragment_v4(&ip, mtu),
        _ => fragment_v6(&ip, mtu, v6_ident),
    }
}

fn fragment_v4(ip: &[u8], mtu: usize) -> Vec<Vec<u8>> {
    let hl = usize::from(ip[0] & 0x0f) * 4;
    let data = &ip[hl..];
    let step = (mtu - hl) / 8 * 8;
    let mut out = Vec::with_capacity(data.len().div_ceil(step));
    for (i, chunk) in data.chunks(step).enumerate() {
        let offset = i * step;
        let more = offset + chunk.len() < data.len();
        let mut f = Vec::with_capacity(hl + chunk.len());
        f.extend_from_slice(&ip[..hl]);
        f[2..4].copy_from_slice(&((hl + chunk.len()) as u16).to_be_bytes());
        let flags_off = (u16::from(more) << 13) | (offset / 8) as u16;
        f[6..8].copy_from_slice(&flags_off.to_be_bytes());
        f[10..12].copy_from_slice(&[0, 0]);
        let sum = checksum::compute(&f[..hl]);
        f[10..12].copy_from_slice(&sum.to_be_bytes());
        f.extend_from_slice(chunk);
        out.push(f);
    }
    out
}

fn fragment_v6(ip: &[u8], mtu: usize, ident: u32) -> Vec<Vec<u8>> {
    let next = ip[6];
    let data = &ip[40..];
    let step = (mtu - 48) / 8 * 8;
    let mut out = Vec::with_capacity(data.len().div_ceil(step));
    for (i, chunk) in data.chunks(step).enumerate() {
        let offset = i * step;
        let more = offset + chunk.len() < data.len();
        let mut f = Vec::with_capacity(48 + chunk.len());
        f.extend_from_slice(&ip[..40]);
        f[4..6].copy_from_slice(&((8 + chunk.len()) as u16).to_be_bytes());
        f[6] = IPV6_FRAGMENT;
        f.extend_from_slice(&[next, 0]);
        f.extend_from_slice(&(offset as u16 | u16::from(more)).to_be_bytes());
        f.extend_from_slice(&ident.to_be_bytes());
        f.extend_from_slice(chunk);
        out.push(f);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use vigil_wire::build::PacketBuilder;

    fn reassemble_v4(frags: &[Vec<u8>]) -> Vec<u8> {
        let mut data = Vec::new();
        for f in frags {
            assert!(checksum::verify(&f[..20]));
            assert_eq!(f[6] & 0x40, 0, "DF cleared");
            let off = usize::from(u16::from_be_bytes([f[6], f[7]]) & 0x1fff) * 8;
            assert_eq!(off, data.len());
            data.extend_from_slice(&f[20..]);
        }
        data
    }

    #[test]
    fn ipv4_fragments_carry_offsets_and_reassemble() {
        let ip = PacketBuilder::ipv4([198, 18, 0, 1], [198, 19, 0, 1])
            .udp(1000, 2000)
            .ident(77)
            .dont_fragment(true)
            .payload(&[0xab; 3000])
            .build_ip();
        let frags = fragment(ip.clone(), 1500, 0);
        assert_eq!(frags.len(), 3);
        assert!(frags.iter().all(|f| f.len() <= 1500));
        assert!(frags[..2].iter().all(|f| f[6] & 0x20 != 0) && frags[2][6] & 0x20 == 0);
        assert!(frags.iter().all(|f| f[4..6] == 77u16.to_be_bytes()));
        assert_eq!(reassemble_v4(&frags), ip[20..]);
    }

    #[test]
    fn ipv6_fragments_use_the_fragment_header() {
        let ip = PacketBuilder::ipv6(
            [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
            [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2],
        )
        .udp(1000, 2000)
        .payload(&[7; 4000])
        .build_ip();
        let frags = fragment(ip.clone(), 1280, 0xdead_beef);
        let mut data = Vec::new();
        for (i, f) in frags.iter().enumerate() {
            assert!(f.len() <= 1280);
            assert_eq!(f[6], IPV6_FRAGMENT);
            assert_eq!(f[40], 17);
            assert_eq!(usize::from(u16::from_be_bytes([f[4], f[5]])), f.len() - 40);
            let field = u16::from_be_bytes([f[42], f[43]]);
            assert_eq!(usize::from(field & !7), data.len());
            assert_eq!(field & 1 == 1, i + 1 < frags.len());
            assert_eq!(f[44..48], 0xdead_beefu32.to_be_bytes());
            data.extend_from_slice(&f[48..]);
        }
        assert_eq!(data, ip[40..]);
    }

    #[test]
    fn a_datagram_that_fits_is_not_touched() {
        let ip = PacketBuilder::ipv4([198, 18, 0, 1], [198, 19, 0, 1]).udp(1, 2).payload(b"x").build_ip();
        assert_eq!(fragment(ip.clone(), 1500, 0), vec![ip]);
    }
}
