//! The Internet checksum (RFC 1071) and the pseudo-headers TCP, UDP and
//! ICMPv6 fold into it.

/// Adds `data` to a running one's-complement sum (not yet folded).
#[inline]
pub fn accumulate(data: &[u8], mut sum: u64) -> u64 {
    let mut chunks = data.chunks_exact(4);
    for c in &mut chunks {
        sum += u32::from_be_bytes([c[0], c[1], c[2], c[3]]) as u64;
    }
    let rest = chunks.remainder();
    let mut i = 0;
    while i + 1 < rest.len() {
        sum += u16::from_be_bytes([rest[i], rest[i + 1]]) as u64;
        i += 2;
    }
    if i < rest.len() {
        sum += (rest[i] as u64) << 8;
    }
    sum
}

/// Folds a running sum to 16 bits and complements it.
#[inline]
pub fn finish(mut sum: u64) -> u16 {
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// The checksum of `data` alone (an IPv4 header, or an ICMPv4 message).
#[inline]
pub fn compute(data: &[u8]) -> u16 {
    finish(accumulate(data, 0))
}

/// True when `data`, checksum field included, sums to zero.
#[inline]
pub fn verify(data: &[u8]) -> bool {
    compute(data) == 0
}

fn pseudo_v4(src: [u8; 4], dst: [u8; 4], proto: u8, len: usize) -> u64 {
    accumulate(&src, 0) + accumulate(&dst, 0) + proto as u64 + len as u64
}

fn pseudo_v6(src: [u8; 16], dst: [u8; 16], proto: u8, len: usize) -> u64 {
    accumulate(&src, 0) + accumulate(&dst, 0) + proto as u64 + len as u64
}

/// The TCP/UDP checksum of `segment` (its checksum field zeroed) over IPv4.
#[inline]
pub fn l4_v4(src: [u8; 4], dst: [u8; 4], proto: u8, segment: &[u8]) -> u16 {
    finish(accumulate(segment, pseudo_v4(src, dst, proto, segment.len())))
}

/// The TCP/UDP/ICMPv6 checksum of `segment` (its checksum field zeroed) over IPv6.
#[inline]
pub fn l4_v6(src: [u8; 16], dst: [u8; 16], proto: u8, segment: &[u8]) -> u16 {
    finish(accumulate(segment, pseudo_v6(src, dst, proto, segment.len())))
}

/// True when a received segment's checksum (left in place) is right over IPv4.
#[inline]
pub fn verify_l4_v4(src: [u8; 4], dst: [u8; 4], proto: u8, segment: &[u8]) -> bool {
    l4_v4(src, dst, proto, segment) == 0
}

/// True when a received segment's checksum (left in place) is right over IPv6.
#[inline]
pub fn verify_l4_v6(src: [u8; 16], dst: [u8; 16], proto: u8, segment: &[u8]) -> bool {
    l4_v6(src, dst, proto, segment) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc1071_example_header() {
        // A classic IPv4 header with its checksum 0xb861 in place.
        let h = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8,
            0x00, 0xc7,
        ];
        assert!(verify(&h));
        let mut z = h;
        z[10] = 0;
        z[11] = 0;
        assert_eq!(compute(&z), 0xb861);
    }

    #[test]
    fn odd_lengths_pad_with_zero() {
        assert_eq!(accumulate(&[0x12], 0), 0x1200);
        assert_eq!(accumulate(&[0x12, 0x34, 0x56], 0), 0x1234 + 0x5600);
    }
}
