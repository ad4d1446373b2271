//! MPLS label stack entries (RFC 3032).

use crate::bytes::be32;
use crate::error::{need, WireError};

/// One 4-byte label stack entry.
#[derive(Debug, Clone, Copy)]
pub struct MplsLabel<'a>(&'a [u8]);

/// Labels 0-15 are reserved (RFC 3032 section 2.1).
pub const LABEL_IPV4_EXPLICIT_NULL: u32 = 0;
pub const LABEL_ROUTER_ALERT: u32 = 1;
pub const LABEL_IPV6_EXPLICIT_NULL: u32 = 2;
pub const LABEL_IMPLICIT_NULL: u32 = 3;
pub const LABEL_MAX_RESERVED: u32 = 15;

impl<'a> MplsLabel<'a> {
    pub const HEADER_LEN: usize = 4;

    #[inline]
    pub fn new_checked(buf: &'a [u8]) -> Result<Self, WireError> {
        need(buf, Self::HEADER_LEN)?;
        Ok(MplsLabel(buf))
    }

    #[inline]
    pub fn label(&self) -> u32 {
        be32(self.0, 0) >> 12
    }

    #[inline]
    pub fn bottom_of_stack(&self) -> bool {
        self.0[2] & 1 == 1
    }

    #[inline]
    pub fn ttl(&self) -> u8 {
        self.0[3]
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
    fn label_fields() {
        // label 0x12345, tc 0, bottom of stack, ttl 64
        let l = MplsLabel::new_checked(&[0x12, 0x34, 0x51, 0x40]).unwrap();
        assert_eq!((l.label(), l.bottom_of_stack(), l.ttl()), (0x12345, true, 64));
    }
}
