//! IPv6 headers (RFC 8200) and the extension headers a decoder walks.

use crate::bytes::{be16, be32};
use crate::error::{need, WireError};
use std::net::Ipv6Addr;

pub const HEADER_LEN: usize = 40;

/// The fixed IPv6 header, checked to hold its payload length.
#[derive(Debug, Clone, Copy)]
pub struct Ipv6<'a> {
    buf: &'a [u8],
}

/// Why a buffer is not a usable IPv6 packet, in the order the checks run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ipv6Error {
    TooSmall,
    WrongVersion(u8),
    /// The buffer ends before 40 + payload length.
    Truncated,
}

impl<'a> Ipv6<'a> {
    #[inline]
    pub fn new_checked(buf: &'a [u8]) -> Result<Self, Ipv6Error> {
        if buf.len() < HEADER_LEN {
            return Err(Ipv6Error::TooSmall);
        }
        let version = buf[0] >> 4;
        if version != 6 {
            return Err(Ipv6Error::WrongVersion(version));
        }
        let total = HEADER_LEN + be16(buf, 4) as usize;
        if buf.len() < total {
            return Err(Ipv6Error::Truncated);
        }
        Ok(Ipv6 { buf: &buf[..total] })
    }

    /// A view over the fixed header only, for ICMPv6 error quotes.
    #[inline]
    pub fn header_only(buf: &'a [u8]) -> Result<Self, WireError> {
        need(buf, HEADER_LEN)?;
        Ok(Ipv6 { buf })
    }

    #[inline]
    pub fn traffic_class(&self) -> u8 {
        ((be16(self.buf, 0) >> 4) & 0xff) as u8
    }

    #[inline]
    pub fn flow_label(&self) -> u32 {
        be32(self.buf, 0) & 0x000f_ffff
    }

    #[inline]
    pub fn payload_len(&self) -> u16 {
        be16(self.buf, 4)
    }

    #[inline]
    pub fn next_header(&self) -> u8 {
        self.buf[6]
    }

    #[inline]
    pub fn hop_limit(&self) -> u8 {
        self.buf[7]
    }

    #[inline]
    pub fn src_bytes(&self) -> [u8; 16] {
        self.buf[8..24].try_into().unwrap_or_default()
    }

    #[inline]
    pub fn dst_bytes(&self) -> [u8; 16] {
        self.buf[24..40].try_into().unwrap_or_default()
    }

    #[inline]
    pub fn src(&self) -> Ipv6Addr {
        Ipv6Addr::from(self.src_bytes())
    }

    #[inline]
    pub fn dst(&self) -> Ipv6Addr {
        Ipv6Addr::from(self.dst_bytes())
    }

    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        &self.buf[HEADER_LEN..]
    }
}

/// A generic extension header with the common layout: next header, then a
/// length in 8-byte units not counting the first 8 (hop-by-hop, routing,
/// destination options, mobility).
#[derive(Debug, Clone, Copy)]
pub struct ExtHeader<'a>(&'a [u8]);

impl<'a> ExtHeader<'a> {
    #[inline]
    pub fn new_checked(buf: &'a [u8]) -> Result<Self, WireError> {
        need(buf, 2)?;
        let len = (buf[1] as usize + 1) * 8;
        need(buf, len)?;
        Ok(ExtHeader(&buf[..len]))
    }

    #[inline]
    pub fn next_header(&self) -> u8 {
        self.0[0]
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.0.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The bytes after next-header and length (options, or routing data).
    #[inline]
    pub fn data(&self) -> &'a [u8] {
        &self.0[2..]
    }
}

/// The 8-byte fragment extension header.
#[derive(Debug, Clone, Copy)]
pub struct FragmentHeader<'a>(&'a [u8]);

impl<'a> FragmentHeader<'a> {
    pub const LEN: usize = 8;

    #[inline]
    pub fn new_checked(buf: &'a [u8]) -> Result<Self, WireError> {
        need(buf, Self::LEN)?;
        Ok(FragmentHeader(buf))
    }

    #[inline]
    pub fn next_header(&self) -> u8 {
        self.0[0]
    }

    #[inline]
    pub fn reserved(&self) -> u8 {
        self.0[1]
    }

    /// Offset in 8-byte units.
    #[inline]
    pub fn offset(&self) -> u16 {
        be16(self.0, 2) >> 3
    }

    #[inline]
    pub fn reserved_bits(&self) -> u8 {
        ((be16(self.0, 2) >> 1) & 0x3) as u8
    }

    #[inline]
    pub fn more_fragments(&self) -> bool {
        self.0[3] & 1 == 1
    }

    #[inline]
    pub fn ident(&self) -> u32 {
        be32(self.0, 4)
    }
}

/// The authentication header (RFC 4302): its length counts 4-byte units minus 2.
#[derive(Debug, Clone, Copy)]
pub struct AuthHeader<'a>(&'a [u8]);

impl<'a> AuthHeader<'a> {
    #[inline]
    pub fn new_checked(buf: &'a [u8]) -> Result<Self, WireError> {
        need(buf, 12)?;
        let len = (buf[1] as usize + 2) * 4;
        need(buf, len.max(12))?;
        Ok(AuthHeader(&buf[..len.max(12)]))
    }

    #[inline]
    pub fn next_header(&self) -> u8 {
        self.0[0]
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.0.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        false
    }

    #[inline]
    pub fn reserved(&self) -> u16 {
        be16(self.0, 2)
    }

    #[inline]
    pub fn spi(&self) -> u32 {
        be32(self.0, 4)
    }
}

/// One option inside a hop-by-hop or destination options header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ipv6Option<'a> {
    Pad1,
    PadN {
        len: usize,
    },
    Other {
        kind: u8,
        data: &'a [u8],
    },
    /// The option's length runs past the header.
    BadLength,
}

/// Iterates the TLV options of a hop-by-hop or destination options header.
#[derive(Debug, Clone)]
pub struct Ipv6Options<'a> {
    rest: &'a [u8],
}

impl<'a> Ipv6Options<'a> {
    #[inline]
    pub fn new(data: &'a [u8]) -> Self {
        Ipv6Options { rest: data }
    }
}

impl<'a> Iterator for Ipv6Options<'a> {
    type Item = Ipv6Option<'a>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let (&kind, tail) = self.rest.split_first()?;
        if kind == 0 {
            self.rest = tail;
            return Some(Ipv6Option::Pad1);
        }
        let Some(&len) = tail.first() else {
            self.rest = &[];
            return Some(Ipv6Option::BadLength);
        };
        let len = len as usize;
        if tail.len() < 1 + len {
            self.rest = &[];
            return Some(Ipv6Option::BadLength);
        }
        let data = &tail[1..1 + len];
        self.rest = &tail[1 + len..];
        Some(if kind == 1 { Ipv6Option::PadN { len } } else { Ipv6Option::Other { kind, data } })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fragment_header_fields() {
        // next UDP, offset 185 (1480 bytes), M=1, id 0xdeadbeef
        let f = FragmentHeader::new_checked(&[17, 0, 0x05, 0xc9, 0xde, 0xad, 0xbe, 0xef]).unwrap();
        assert_eq!((f.next_header(), f.offset(), f.more_fragments()), (17, 185, true));
        assert_eq!(f.ident(), 0xdeadbeef);
    }

    #[test]
    fn ext_header_length_is_checked() {
        assert!(ExtHeader::new_checked(&[6, 1, 0, 0, 0, 0, 0, 0]).is_err());
        let h = ExtHeader::new_checked(&[6, 0, 1, 4, 0, 0, 0, 0, 9]).unwrap();
        assert_eq!((h.next_header(), h.len()), (6, 8));
        let opts: Vec<_> = Ipv6Options::new(h.data()).collect();
        assert_eq!(opts, vec![Ipv6Option::PadN { len: 4 }]);
    }

    #[test]
    fn options_report_overrun() {
        let opts: Vec<_> = Ipv6Options::new(&[0, 5, 10, 1]).collect();
        assert_eq!(opts, vec![Ipv6Option::Pad1, Ipv6Option::BadLength]);
    }
}
