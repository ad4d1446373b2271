//! Geneve (RFC 8926) carried in UDP.

use crate::bytes::{be16, be32};
use crate::error::{need, WireError};

pub const BASE_LEN: usize = 8;

/// A Geneve header with its options length checked against the buffer.
#[derive(Debug, Clone, Copy)]
pub struct Geneve<'a>(&'a [u8]);

impl<'a> Geneve<'a> {
    #[inline]
    pub fn new_checked(buf: &'a [u8]) -> Result<Self, WireError> {
        need(buf, BASE_LEN)?;
        let len = BASE_LEN + (buf[0] & 0x3f) as usize * 4;
        need(buf, len)?;
        Ok(Geneve(buf))
    }

    #[inline]
    pub fn version(&self) -> u8 {
        self.0[0] >> 6
    }

    #[inline]
    pub fn header_len(&self) -> usize {
        BASE_LEN + (self.0[0] & 0x3f) as usize * 4
    }

    #[inline]
    pub fn is_oam(&self) -> bool {
        self.0[1] & 0x80 != 0
    }

    /// The EtherType of the payload (0x6558 for an Ethernet frame).
    #[inline]
    pub fn protocol(&self) -> u16 {
        be16(self.0, 2)
    }

    #[inline]
    pub fn vni(&self) -> u32 {
        be32(self.0, 4) >> 8
    }

    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        &self.0[self.header_len()..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_length_is_checked() {
        let b = [0x01, 0, 0x65, 0x58, 0, 0, 1, 0, 1, 2, 3, 4, 0xee];
        let g = Geneve::new_checked(&b).unwrap();
        assert_eq!((g.header_len(), g.vni(), g.payload()), (12, 1, &[0xee][..]));
        assert!(Geneve::new_checked(&b[..11]).is_err());
    }
}
