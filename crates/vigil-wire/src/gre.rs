//! GRE headers: version 0 (RFC 2784, key and sequence from RFC 2890, the
//! routing field of RFC 1701) and version 1 (enhanced GRE of PPTP, RFC 2637).

use crate::bytes::{be16, be32};
use crate::error::{need, WireError};

pub const BASE_LEN: usize = 4;

pub const FLAG_CHECKSUM: u8 = 0x80;
pub const FLAG_ROUTING: u8 = 0x40;
pub const FLAG_KEY: u8 = 0x20;
pub const FLAG_SEQ: u8 = 0x10;
pub const FLAG_STRICT_ROUTE: u8 = 0x08;
/// Version 1 only: an acknowledgment number follows.
pub const FLAG_ACK: u8 = 0x80;

/// The GRE base header; optional fields are located on demand.
#[derive(Debug, Clone, Copy)]
pub struct Gre<'a>(&'a [u8]);

impl<'a> Gre<'a> {
    #[inline]
    pub fn new_checked(buf: &'a [u8]) -> Result<Self, WireError> {
        need(buf, BASE_LEN)?;
        Ok(Gre(buf))
    }

    #[inline]
    pub fn flags(&self) -> u8 {
        self.0[0]
    }

    #[inline]
    pub fn has(&self, flag: u8) -> bool {
        self.0[0] & flag != 0
    }

    #[inline]
    pub fn recursion(&self) -> u8 {
        self.0[0] & 0x07
    }

    /// Bits 3-7 of the second byte: reserved in version 0; the ack flag is bit 0 in version 1.
    #[inline]
    pub fn second_byte(&self) -> u8 {
        self.0[1]
    }

    #[inline]
    pub fn version(&self) -> u8 {
        self.0[1] & 0x07
    }

    #[inline]
    pub fn protocol(&self) -> u16 {
        be16(self.0, 2)
    }

    /// Length of the fixed part: base plus checksum/offset, key, sequence and
    /// (version 1) acknowledgment words. Routing entries, when present, follow it.
    #[inline]
    pub fn fixed_len(&self) -> usize {
        let mut len = BASE_LEN;
        if self.has(FLAG_CHECKSUM) || self.has(FLAG_ROUTING) {
            len += 4;
        }
        if self.has(FLAG_KEY) {
            len += 4;
        }
        if self.has(FLAG_SEQ) {
            len += 4;
        }
        if self.version() == 1 && self.0[1] & FLAG_ACK != 0 {
            len += 4;
        }
        len
    }

    /// The key field, when present and inside the buffer.
    #[inline]
    pub fn key(&self) -> Option<u32> {
        if !self.has(FLAG_KEY) {
            return None;
        }
        let at = BASE_LEN + if self.has(FLAG_CHECKSUM) || self.has(FLAG_ROUTING) { 4 } else { 0 };
        (self.0.len() >= at + 4).then(|| be32(self.0, at))
    }

    /// The sequence number, when present and inside the buffer.
    #[inline]
    pub fn seq(&self) -> Option<u32> {
        if !self.has(FLAG_SEQ) {
            return None;
        }
        let mut at = BASE_LEN;
        if self.has(FLAG_CHECKSUM) || self.has(FLAG_ROUTING) {
            at += 4;
        }
        if self.has(FLAG_KEY) {
            at += 4;
        }
        (self.0.len() >= at + 4).then(|| be32(self.0, at))
    }

    #[inline]
    pub fn bytes(&self) -> &'a [u8] {
        self.0
    }
}

/// Walks RFC 1701 source route entries starting at `at`; returns the offset
/// just past the terminating null entry, or `None` when an entry is malformed
/// or runs past the buffer.
#[inline]
pub fn skip_source_routes(buf: &[u8], mut at: usize) -> Option<usize> {
    loop {
        let sre = buf.get(at..at + 4)?;
        let family = be16(sre, 0);
        let len = sre[3] as usize;
        at += 4;
        if family == 0 && len == 0 {
            return Some(at);
        }
        at = at.checked_add(len)?;
        if at > buf.len() {
            return None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_and_sequence_offsets() {
        // C K S set, version 0, IPv4; checksum word, key 0x11223344, seq 5
        let b = [0xb0, 0x00, 0x08, 0x00, 0, 0, 0, 0, 0x11, 0x22, 0x33, 0x44, 0, 0, 0, 5];
        let g = Gre::new_checked(&b).unwrap();
        assert_eq!(g.fixed_len(), 16);
        assert_eq!(g.key(), Some(0x11223344));
        assert_eq!(g.seq(), Some(5));
        assert_eq!(g.protocol(), 0x0800);
    }

    #[test]
    fn source_routes_end_at_null_entry() {
        let b = [0, 1, 0, 4, 9, 9, 9, 9, 0, 0, 0, 0, 0x45];
        assert_eq!(skip_source_routes(&b, 0), Some(12));
        assert_eq!(skip_source_routes(&b[..10], 0), None);
    }
}
