//! VXLAN (RFC 7348) and Teredo (RFC 4380) carried in UDP.

use crate::bytes::be32;
use crate::error::{need, WireError};

pub const HEADER_LEN: usize = 8;

/// The 8-byte VXLAN header; an Ethernet frame follows.
#[derive(Debug, Clone, Copy)]
pub struct Vxlan<'a>(&'a [u8]);

impl<'a> Vxlan<'a> {
    #[inline]
    pub fn new_checked(buf: &'a [u8]) -> Result<Self, WireError> {
        need(buf, HEADER_LEN)?;
        Ok(Vxlan(buf))
    }

    /// The I flag says the VNI is valid; RFC 7348 requires it.
    #[inline]
    pub fn vni_valid(&self) -> bool {
        self.0[0] & 0x08 != 0
    }

    #[inline]
    pub fn flags(&self) -> u8 {
        self.0[0]
    }

    #[inline]
    pub fn vni(&self) -> u32 {
        be32(self.0, 4) >> 8
    }

    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        &self.0[HEADER_LEN..]
    }
}

/// Strips Teredo's optional authentication and origin indications (RFC 4380
/// section 5.1.1), returning what should be an IPv6 packet, or `None` when an
/// indication is cut short.
#[inline]
pub fn teredo_inner(buf: &[u8]) -> Option<&[u8]> {
    let mut rest = buf;
    if rest.len() >= 2 && rest[0] == 0 && rest[1] == 1 {
        // Authentication: 4 fixed bytes, client id, auth value, 8-byte nonce, 1-byte confirmation.
        let id_len = *rest.get(2)? as usize;
        let auth_len = *rest.get(3)? as usize;
        let len = 4 + id_len + auth_len + 8 + 1;
        rest = rest.get(len..)?;
    }
    if rest.len() >= 2 && rest[0] == 0 && rest[1] == 0 {
        rest = rest.get(8..)?;
    }
    Some(rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vni() {
        let v = Vxlan::new_checked(&[0x08, 0, 0, 0, 0x00, 0x12, 0x34, 0x00, 0xaa]).unwrap();
        assert!(v.vni_valid());
        assert_eq!((v.vni(), v.payload()), (0x1234, &[0xaa][..]));
    }

    #[test]
    fn teredo_indications() {
        let mut origin = vec![0, 0, 1, 2, 3, 4, 5, 6];
        origin.push(0x60);
        assert_eq!(teredo_inner(&origin), Some(&[0x60][..]));
        assert_eq!(teredo_inner(&[0x60, 0]), Some(&[0x60, 0][..]));
        assert_eq!(teredo_inner(&[0, 1, 200]), None);
    }
}
