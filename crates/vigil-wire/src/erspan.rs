//! ERSPAN headers carried in GRE: type II (GRE protocol 0x88be, 8 bytes) and
//! type III (0x22eb, 12 bytes plus an optional 8-byte platform subheader).
//! Type I has no header at all: the mirrored frame follows GRE directly.

use crate::bytes::{be16, be32};
use crate::error::{need, WireError};

/// An ERSPAN type II or III header.
#[derive(Debug, Clone, Copy)]
pub struct Erspan<'a>(&'a [u8]);

pub const TYPE2_LEN: usize = 8;
pub const TYPE3_LEN: usize = 12;
pub const TYPE3_PLATFORM_LEN: usize = 8;

impl<'a> Erspan<'a> {
    /// Checks the first 4 bytes (version and VLAN); [`Erspan::header_len`]
    /// says how much more the version needs.
    #[inline]
    pub fn new_checked(buf: &'a [u8]) -> Result<Self, WireError> {
        need(buf, 4)?;
        Ok(Erspan(buf))
    }

    /// 1 for type II, 2 for type III.
    #[inline]
    pub fn version(&self) -> u8 {
        self.0[0] >> 4
    }

    #[inline]
    pub fn vlan(&self) -> u16 {
        be16(self.0, 0) & 0x0fff
    }

    #[inline]
    pub fn session_id(&self) -> u16 {
        be16(self.0, 2) & 0x03ff
    }

    /// Total header length for this version, `None` for an unknown version.
    /// Type III adds the platform subheader when its O bit (last bit of byte 11) is set.
    #[inline]
    pub fn header_len(&self) -> Option<usize> {
        match self.version() {
            1 => Some(TYPE2_LEN),
            2 => {
                let optional = self.0.get(11).is_some_and(|b| b & 0x01 != 0);
                Some(TYPE3_LEN + if optional { TYPE3_PLATFORM_LEN } else { 0 })
            }
            _ => None,
        }
    }

    /// Type III timestamp, when the buffer holds it.
    #[inline]
    pub fn timestamp(&self) -> Option<u32> {
        (self.version() == 2 && self.0.len() >= 8).then(|| be32(self.0, 4))
    }

    #[inline]
    pub fn bytes(&self) -> &'a [u8] {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_lengths() {
        let t2 = Erspan::new_checked(&[0x10, 0x64, 0x00, 0x07, 0, 0, 0, 0]).unwrap();
        assert_eq!((t2.version(), t2.vlan(), t2.session_id(), t2.header_len()), (1, 100, 7, Some(8)));
        let t3 = Erspan::new_checked(&[0x20, 0, 0, 1, 0, 0, 0, 9, 0, 0, 0, 1]).unwrap();
        assert_eq!((t3.header_len(), t3.timestamp()), (Some(20), Some(9)));
        assert_eq!(Erspan::new_checked(&[0x30, 0, 0, 0]).unwrap().header_len(), None);
    }
}
