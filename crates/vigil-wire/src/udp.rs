//! UDP headers (RFC 768).

use crate::bytes::be16;

pub const HEADER_LEN: usize = 8;

/// Why a buffer is not a usable UDP datagram, in the order the checks run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UdpError {
    /// Fewer than 8 bytes.
    TooSmall,
    /// The length field runs past the end of the IP payload.
    Truncated,
    /// The length field is below 8.
    LengthBelowHeader,
    /// The length field is shorter than the IP payload (trailing bytes).
    LengthMismatch,
}

/// A UDP header whose length field was checked against the IP payload.
#[derive(Debug, Clone, Copy)]
pub struct Udp<'a>(&'a [u8]);

impl<'a> Udp<'a> {
    #[inline]
    pub fn new_checked(buf: &'a [u8]) -> Result<Self, UdpError> {
        if buf.len() < HEADER_LEN {
            return Err(UdpError::TooSmall);
        }
        let len = be16(buf, 4) as usize;
        if len > buf.len() {
            return Err(UdpError::Truncated);
        }
        if len < HEADER_LEN {
            return Err(UdpError::LengthBelowHeader);
        }
        if len != buf.len() {
            return Err(UdpError::LengthMismatch);
        }
        Ok(Udp(buf))
    }

    #[inline]
    pub fn src_port(&self) -> u16 {
        be16(self.0, 0)
    }

    #[inline]
    pub fn dst_port(&self) -> u16 {
        be16(self.0, 2)
    }

    #[inline]
    pub fn length(&self) -> u16 {
        be16(self.0, 4)
    }

    #[inline]
    pub fn checksum(&self) -> u16 {
        be16(self.0, 6)
    }

    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        &self.0[HEADER_LEN..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn length_checks() {
        let ok = [0, 53, 0, 53, 0, 9, 0, 0, 7];
        assert_eq!(Udp::new_checked(&ok).unwrap().payload(), &[7]);
        assert_eq!(Udp::new_checked(&ok[..7]).unwrap_err(), UdpError::TooSmall);
        assert_eq!(Udp::new_checked(&ok[..8]).unwrap_err(), UdpError::Truncated);
        assert_eq!(Udp::new_checked(&[0, 53, 0, 53, 0, 4, 0, 0]).unwrap_err(), UdpError::LengthBelowHeader);
        assert_eq!(Udp::new_checked(&[0, 53, 0, 53, 0, 8, 0, 0, 1]).unwrap_err(), UdpError::LengthMismatch);
    }
}
