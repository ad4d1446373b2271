//! ICMPv4 (RFC 792) and ICMPv6 (RFC 4443) headers: type, code, checksum and
//! the 4 bytes that follow (id/sequence for echo, unused or pointer otherwise).

use crate::bytes::be16;
use crate::error::{need, WireError};

pub const HEADER_LEN: usize = 8;

/// The first 8 bytes of an ICMPv4 or ICMPv6 message; the layouts agree.
#[derive(Debug, Clone, Copy)]
pub struct Icmp<'a>(&'a [u8]);

impl<'a> Icmp<'a> {
    #[inline]
    pub fn new_checked(buf: &'a [u8]) -> Result<Self, WireError> {
        need(buf, HEADER_LEN)?;
        Ok(Icmp(buf))
    }

    #[inline]
    pub fn kind(&self) -> u8 {
        self.0[0]
    }

    #[inline]
    pub fn code(&self) -> u8 {
        self.0[1]
    }

    #[inline]
    pub fn checksum(&self) -> u16 {
        be16(self.0, 2)
    }

    /// Identifier of echo-like messages.
    #[inline]
    pub fn ident(&self) -> u16 {
        be16(self.0, 4)
    }

    /// Sequence number of echo-like messages.
    #[inline]
    pub fn seq(&self) -> u16 {
        be16(self.0, 6)
    }

    /// Everything after the 8-byte header (the quoted datagram of error messages).
    #[inline]
    pub fn body(&self) -> &'a [u8] {
        &self.0[HEADER_LEN..]
    }

    #[inline]
    pub fn bytes(&self) -> &'a [u8] {
        self.0
    }
}

/// ICMPv4 message types (IANA "ICMP Type Numbers").
pub mod v4 {
    pub const ECHO_REPLY: u8 = 0;
    pub const DEST_UNREACH: u8 = 3;
    pub const SOURCE_QUENCH: u8 = 4;
    pub const REDIRECT: u8 = 5;
    pub const ECHO: u8 = 8;
    pub const ROUTER_ADVERT: u8 = 9;
    pub const ROUTER_SOLICIT: u8 = 10;
    pub const TIME_EXCEEDED: u8 = 11;
    pub const PARAMETER_PROBLEM: u8 = 12;
    pub const TIMESTAMP: u8 = 13;
    pub const TIMESTAMP_REPLY: u8 = 14;
    pub const INFO_REQUEST: u8 = 15;
    pub const INFO_REPLY: u8 = 16;
    pub const ADDRESS: u8 = 17;
    pub const ADDRESS_REPLY: u8 = 18;
}

/// ICMPv6 message types (IANA "ICMPv6 Parameters").
pub mod v6 {
    pub const DEST_UNREACH: u8 = 1;
    pub const PACKET_TOO_BIG: u8 = 2;
    pub const TIME_EXCEEDED: u8 = 3;
    pub const PARAM_PROBLEM: u8 = 4;
    pub const ECHO_REQUEST: u8 = 128;
    pub const ECHO_REPLY: u8 = 129;
    pub const MLD_QUERY: u8 = 130;
    pub const MLD_REPORT: u8 = 131;
    pub const MLD_DONE: u8 = 132;
    pub const ROUTER_SOLICIT: u8 = 133;
    pub const ROUTER_ADVERT: u8 = 134;
    pub const NEIGHBOR_SOLICIT: u8 = 135;
    pub const NEIGHBOR_ADVERT: u8 = 136;
    pub const REDIRECT: u8 = 137;
    pub const MLD_V2_REPORT: u8 = 143;
}
