//! Capture link layers other than Ethernet: Linux cooked (SLL, SLL2), BSD
//! null/loopback, PPP, PPPoE session, Cisco HDLC.

use crate::bytes::be16;
use crate::error::{need, WireError};

/// Linux "cooked" capture v1: 16 bytes, protocol (EtherType) last.
#[derive(Debug, Clone, Copy)]
pub struct Sll<'a>(&'a [u8]);

impl<'a> Sll<'a> {
    pub const HEADER_LEN: usize = 16;

    #[inline]
    pub fn new_checked(buf: &'a [u8]) -> Result<Self, WireError> {
        need(buf, Self::HEADER_LEN)?;
        Ok(Sll(buf))
    }

    #[inline]
    pub fn packet_type(&self) -> u16 {
        be16(self.0, 0)
    }

    #[inline]
    pub fn protocol(&self) -> u16 {
        be16(self.0, 14)
    }

    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        &self.0[Self::HEADER_LEN..]
    }
}

/// Linux "cooked" capture v2: 20 bytes, protocol (EtherType) first.
#[derive(Debug, Clone, Copy)]
pub struct Sll2<'a>(&'a [u8]);

impl<'a> Sll2<'a> {
    pub const HEADER_LEN: usize = 20;

    #[inline]
    pub fn new_checked(buf: &'a [u8]) -> Result<Self, WireError> {
        need(buf, Self::HEADER_LEN)?;
        Ok(Sll2(buf))
    }

    #[inline]
    pub fn protocol(&self) -> u16 {
        be16(self.0, 0)
    }

    #[inline]
    pub fn interface_index(&self) -> u32 {
        crate::bytes::be32(self.0, 4)
    }

    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        &self.0[Self::HEADER_LEN..]
    }
}

/// BSD null/loopback: a 4-byte address family in the *capturing host's* byte order.
#[derive(Debug, Clone, Copy)]
pub struct Null<'a>(&'a [u8]);

/// What a BSD loopback address family says the payload is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NullFamily {
    Ipv4,
    Ipv6,
    Other(u32),
}

impl<'a> Null<'a> {
    pub const HEADER_LEN: usize = 4;

    #[inline]
    pub fn new_checked(buf: &'a [u8]) -> Result<Self, WireError> {
        need(buf, Self::HEADER_LEN)?;
        Ok(Null(buf))
    }

    /// The family, read in whichever byte order gives a known value: the file
    /// does not say which order its writer used.
    #[inline]
    pub fn family(&self) -> NullFamily {
        let raw: [u8; 4] = [self.0[0], self.0[1], self.0[2], self.0[3]];
        let le = u32::from_le_bytes(raw);
        let be = u32::from_be_bytes(raw);
        // AF_INET is 2 everywhere; AF_INET6 is 24 (NetBSD/OpenBSD), 28 (FreeBSD), 30 (macOS), 10 (Linux).
        for v in [le, be] {
            match v {
                2 => return NullFamily::Ipv4,
                10 | 24 | 28 | 30 => return NullFamily::Ipv6,
                _ => {}
            }
        }
        NullFamily::Other(le)
    }

    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        &self.0[Self::HEADER_LEN..]
    }
}

/// PPP protocol numbers vigil follows.
pub mod ppp_proto {
    pub const IPV4: u16 = 0x0021;
    pub const IPV6: u16 = 0x0057;
    pub const VJ_COMPRESSED: u16 = 0x002d;
    pub const VJ_UNCOMPRESSED: u16 = 0x002f;
}

/// A PPP frame as captured (link type 9): optional HDLC address/control
/// (`ff 03`), then a 1- or 2-byte protocol field.
#[derive(Debug, Clone, Copy)]
pub struct Ppp<'a> {
    protocol: u16,
    payload: &'a [u8],
}

impl<'a> Ppp<'a> {
    #[inline]
    pub fn new_checked(buf: &'a [u8]) -> Result<Self, WireError> {
        let body = if buf.len() >= 2 && buf[0] == 0xff && buf[1] == 0x03 { &buf[2..] } else { buf };
        need(body, 1)?;
        // RFC 1661: a protocol field whose first byte is odd is the 1-byte compressed form.
        if body[0] & 1 == 1 {
            return Ok(Ppp { protocol: body[0] as u16, payload: &body[1..] });
        }
        need(body, 2)?;
        Ok(Ppp { protocol: be16(body, 0), payload: &body[2..] })
    }

    #[inline]
    pub fn protocol(&self) -> u16 {
        self.protocol
    }

    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        self.payload
    }
}

/// A PPPoE session-stage header (RFC 2516). A PPP frame follows, whose
/// protocol field may be compressed to one byte.
#[derive(Debug, Clone, Copy)]
pub struct PppoeSession<'a>(&'a [u8]);

impl<'a> PppoeSession<'a> {
    pub const HEADER_LEN: usize = 6;

    #[inline]
    pub fn new_checked(buf: &'a [u8]) -> Result<Self, WireError> {
        need(buf, Self::HEADER_LEN)?;
        Ok(PppoeSession(buf))
    }

    #[inline]
    pub fn version(&self) -> u8 {
        self.0[0] >> 4
    }

    #[inline]
    pub fn kind(&self) -> u8 {
        self.0[0] & 0x0f
    }

    #[inline]
    pub fn code(&self) -> u8 {
        self.0[1]
    }

    #[inline]
    pub fn session_id(&self) -> u16 {
        be16(self.0, 2)
    }

    #[inline]
    pub fn length(&self) -> u16 {
        be16(self.0, 4)
    }

    /// The PPP frame carried in the session.
    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        &self.0[Self::HEADER_LEN..]
    }
}

/// Cisco HDLC: address, control, then an EtherType-style protocol.
#[derive(Debug, Clone, Copy)]
pub struct CiscoHdlc<'a>(&'a [u8]);

impl<'a> CiscoHdlc<'a> {
    pub const HEADER_LEN: usize = 4;

    #[inline]
    pub fn new_checked(buf: &'a [u8]) -> Result<Self, WireError> {
        need(buf, Self::HEADER_LEN)?;
        Ok(CiscoHdlc(buf))
    }

    #[inline]
    pub fn protocol(&self) -> u16 {
        be16(self.0, 2)
    }

    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        &self.0[Self::HEADER_LEN..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_family_in_either_byte_order() {
        assert_eq!(Null::new_checked(&[2, 0, 0, 0]).unwrap().family(), NullFamily::Ipv4);
        assert_eq!(Null::new_checked(&[0, 0, 0, 2]).unwrap().family(), NullFamily::Ipv4);
        assert_eq!(Null::new_checked(&[30, 0, 0, 0]).unwrap().family(), NullFamily::Ipv6);
        assert_eq!(Null::new_checked(&[0, 0, 0, 24]).unwrap().family(), NullFamily::Ipv6);
        assert_eq!(Null::new_checked(&[7, 0, 0, 0]).unwrap().family(), NullFamily::Other(7));
    }

    #[test]
    fn ppp_compressed_and_full_protocol_fields() {
        let full = Ppp::new_checked(&[0xff, 0x03, 0x00, 0x21, 0x45]).unwrap();
        assert_eq!((full.protocol(), full.payload()), (0x21, &[0x45][..]));
        let short = Ppp::new_checked(&[0x21, 0x45]).unwrap();
        assert_eq!(short.protocol(), 0x21);
    }

    #[test]
    fn pppoe_session_carries_compressed_ppp() {
        let b = [0x11, 0x00, 0x00, 0x2d, 0x00, 0x3d, 0x21, 0x45];
        let s = PppoeSession::new_checked(&b).unwrap();
        assert_eq!((s.version(), s.kind(), s.code(), s.session_id()), (1, 1, 0, 0x2d));
        let ppp = Ppp::new_checked(s.payload()).unwrap();
        assert_eq!((ppp.protocol(), ppp.payload()), (ppp_proto::IPV4, &[0x45][..]));
    }

    #[test]
    fn sll2_reads_protocol_first() {
        let mut b = [0u8; 21];
        b[0] = 0x86;
        b[1] = 0xdd;
        let s = Sll2::new_checked(&b).unwrap();
        assert_eq!((s.protocol(), s.payload().len()), (0x86dd, 1));
    }
}
