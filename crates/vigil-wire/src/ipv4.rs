//! IPv4 headers (RFC 791) and their options.

use crate::bytes::{be16, be32};
use crate::error::{need, WireError};
use std::net::Ipv4Addr;

/// An IPv4 header whose lengths were checked against the buffer.
///
/// `new_checked` verifies, in this order, what a decoder reports separately:
/// at least 20 bytes, version 4, header length at least 20, total length at
/// least the header length, and the buffer holding the whole total length.
#[derive(Debug, Clone, Copy)]
pub struct Ipv4<'a> {
    buf: &'a [u8],
}

/// Why a buffer is not a usable IPv4 packet, in the order the checks run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ipv4Error {
    /// Fewer than 20 bytes.
    TooSmall,
    WrongVersion(u8),
    /// IHL below 5 words.
    HeaderTooSmall,
    /// Total length below the header length.
    TotalBelowHeader,
    /// The buffer ends before the total length.
    Truncated,
}

pub const MIN_HEADER_LEN: usize = 20;

impl<'a> Ipv4<'a> {
    #[inline]
    pub fn new_checked(buf: &'a [u8]) -> Result<Self, Ipv4Error> {
        if buf.len() < MIN_HEADER_LEN {
            return Err(Ipv4Error::TooSmall);
        }
        let version = buf[0] >> 4;
        if version != 4 {
            return Err(Ipv4Error::WrongVersion(version));
        }
        let hlen = ((buf[0] & 0x0f) as usize) * 4;
        if hlen < MIN_HEADER_LEN {
            return Err(Ipv4Error::HeaderTooSmall);
        }
        let total = be16(buf, 2) as usize;
        if total < hlen {
            return Err(Ipv4Error::TotalBelowHeader);
        }
        if buf.len() < total {
            return Err(Ipv4Error::Truncated);
        }
        Ok(Ipv4 { buf: &buf[..total] })
    }

    /// A view over just the fixed header, for ICMP error quotes that carry only
    /// the start of the offending datagram.
    #[inline]
    pub fn header_only(buf: &'a [u8]) -> Result<Self, WireError> {
        need(buf, MIN_HEADER_LEN)?;
        Ok(Ipv4 { buf })
    }

    #[inline]
    pub fn version(&self) -> u8 {
        self.buf[0] >> 4
    }

    #[inline]
    pub fn header_len(&self) -> usize {
        ((self.buf[0] & 0x0f) as usize) * 4
    }

    #[inline]
    pub fn tos(&self) -> u8 {
        self.buf[1]
    }

    #[inline]
    pub fn total_len(&self) -> u16 {
        be16(self.buf, 2)
    }

    #[inline]
    pub fn ident(&self) -> u16 {
        be16(self.buf, 4)
    }

    #[inline]
    pub fn dont_fragment(&self) -> bool {
        self.buf[6] & 0x40 != 0
    }

    #[inline]
    pub fn more_fragments(&self) -> bool {
        self.buf[6] & 0x20 != 0
    }

    #[inline]
    pub fn reserved_flag(&self) -> bool {
        self.buf[6] & 0x80 != 0
    }

    /// Fragment offset in 8-byte units.
    #[inline]
    pub fn frag_offset(&self) -> u16 {
        be16(self.buf, 6) & 0x1fff
    }

    #[inline]
    pub fn is_fragment(&self) -> bool {
        self.more_fragments() || self.frag_offset() != 0
    }

    #[inline]
    pub fn ttl(&self) -> u8 {
        self.buf[8]
    }

    #[inline]
    pub fn protocol(&self) -> u8 {
        self.buf[9]
    }

    #[inline]
    pub fn checksum(&self) -> u16 {
        be16(self.buf, 10)
    }

    #[inline]
    pub fn src(&self) -> Ipv4Addr {
        Ipv4Addr::from(be32(self.buf, 12))
    }

    #[inline]
    pub fn dst(&self) -> Ipv4Addr {
        Ipv4Addr::from(be32(self.buf, 16))
    }

    #[inline]
    pub fn src_bytes(&self) -> [u8; 4] {
        [self.buf[12], self.buf[13], self.buf[14], self.buf[15]]
    }

    #[inline]
    pub fn dst_bytes(&self) -> [u8; 4] {
        [self.buf[16], self.buf[17], self.buf[18], self.buf[19]]
    }

    /// The header bytes (with options). For `header_only` views of a short
    /// quote this is clipped to what the buffer holds.
    #[inline]
    pub fn header(&self) -> &'a [u8] {
        &self.buf[..self.header_len().min(self.buf.len())]
    }

    #[inline]
    pub fn options(&self) -> Ipv4Options<'a> {
        let h = self.header();
        Ipv4Options { rest: h.get(MIN_HEADER_LEN..).unwrap_or(&[]) }
    }

    /// The bytes after the header, up to the total length.
    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        self.buf.get(self.header_len()..).unwrap_or(&[])
    }
}

/// One IPv4 option as found in the header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ipv4Option<'a> {
    EndOfList,
    Nop,
    /// A type-length-value option; `data` excludes the type and length bytes.
    Tlv {
        kind: u8,
        data: &'a [u8],
    },
    /// The length byte is missing, below 2, or runs past the header.
    BadLength {
        kind: u8,
    },
}

/// Iterates options; stops after end-of-list or a bad length.
#[derive(Debug, Clone)]
pub struct Ipv4Options<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for Ipv4Options<'a> {
    type Item = Ipv4Option<'a>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let (&kind, tail) = self.rest.split_first()?;
        match kind {
            0 => {
                self.rest = &[];
                Some(Ipv4Option::EndOfList)
            }
            1 => {
                self.rest = tail;
                Some(Ipv4Option::Nop)
            }
            _ => {
                let len = match tail.first() {
                    Some(&l) if l >= 2 && (l as usize) <= self.rest.len() => l as usize,
                    _ => {
                        self.rest = &[];
                        return Some(Ipv4Option::BadLength { kind });
                    }
                };
                let data = &self.rest[2..len];
                self.rest = &self.rest[len..];
                Some(Ipv4Option::Tlv { kind, data })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // 192.168.0.1 -> 192.168.0.2, UDP, total 28, with trailing Ethernet padding.
    const UDP_PKT: &[u8] = &[
        0x45, 0x00, 0x00, 0x1c, 0x12, 0x34, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, //
        0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0x02, //
        0x00, 0x35, 0x00, 0x35, 0x00, 0x08, 0x00, 0x00, //
        0xee, 0xee,
    ];

    #[test]
    fn fields_and_padding() {
        let ip = Ipv4::new_checked(UDP_PKT).unwrap();
        assert_eq!(ip.protocol(), 17);
        assert_eq!(ip.src(), Ipv4Addr::new(192, 168, 0, 1));
        assert!(ip.dont_fragment() && !ip.is_fragment());
        assert_eq!(ip.payload().len(), 8, "padding after total length is not payload");
    }

    #[test]
    fn checks_run_in_order() {
        assert_eq!(Ipv4::new_checked(&UDP_PKT[..19]).unwrap_err(), Ipv4Error::TooSmall);
        let mut v6 = UDP_PKT.to_vec();
        v6[0] = 0x65;
        assert_eq!(Ipv4::new_checked(&v6).unwrap_err(), Ipv4Error::WrongVersion(6));
        let mut short_ihl = UDP_PKT.to_vec();
        short_ihl[0] = 0x44;
        assert_eq!(Ipv4::new_checked(&short_ihl).unwrap_err(), Ipv4Error::HeaderTooSmall);
        let mut small_total = UDP_PKT.to_vec();
        small_total[3] = 19;
        assert_eq!(Ipv4::new_checked(&small_total).unwrap_err(), Ipv4Error::TotalBelowHeader);
        assert_eq!(Ipv4::new_checked(&UDP_PKT[..27]).unwrap_err(), Ipv4Error::Truncated);
    }

    #[test]
    fn options_iterate_and_stop_on_bad_length() {
        let opts = [1u8, 7, 7, 4, 0, 0, 0, 0, 0x44, 1];
        let got: Vec<_> = Ipv4Options { rest: &opts }.collect();
        assert_eq!(
            got,
            vec![
                Ipv4Option::Nop,
                Ipv4Option::Tlv { kind: 7, data: &[4, 0, 0, 0, 0][..] },
                Ipv4Option::BadLength { kind: 0x44 },
            ]
        );
    }
}
