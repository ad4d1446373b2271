//! TCP headers (RFC 9293) and options.

use crate::bytes::{be16, be32};

pub const MIN_HEADER_LEN: usize = 20;

/// TCP flag bits as they sit in the 13th header byte (plus NS in the 12th).
pub mod flags {
    pub const FIN: u8 = 0x01;
    pub const SYN: u8 = 0x02;
    pub const RST: u8 = 0x04;
    pub const PSH: u8 = 0x08;
    pub const ACK: u8 = 0x10;
    pub const URG: u8 = 0x20;
    pub const ECE: u8 = 0x40;
    pub const CWR: u8 = 0x80;
}

/// Why a buffer is not a usable TCP header, in the order the checks run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TcpError {
    /// Fewer than 20 bytes.
    TooSmall,
    /// Data offset below 5 words.
    HeaderTooSmall,
    /// Data offset past the end of the segment.
    HeaderPastEnd,
}

/// A TCP header whose data offset was checked against the segment.
#[derive(Debug, Clone, Copy)]
pub struct Tcp<'a>(&'a [u8]);

impl<'a> Tcp<'a> {
    #[inline]
    pub fn new_checked(buf: &'a [u8]) -> Result<Self, TcpError> {
        if buf.len() < MIN_HEADER_LEN {
            return Err(TcpError::TooSmall);
        }
        let hlen = ((buf[12] >> 4) as usize) * 4;
        if hlen < MIN_HEADER_LEN {
            return Err(TcpError::HeaderTooSmall);
        }
        if hlen > buf.len() {
            return Err(TcpError::HeaderPastEnd);
        }
        Ok(Tcp(buf))
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
    pub fn seq(&self) -> u32 {
        be32(self.0, 4)
    }

    #[inline]
    pub fn ack(&self) -> u32 {
        be32(self.0, 8)
    }

    #[inline]
    pub fn header_len(&self) -> usize {
        ((self.0[12] >> 4) as usize) * 4
    }

    /// The 8 classic flag bits (CWR..FIN).
    #[inline]
    pub fn flags(&self) -> u8 {
        self.0[13]
    }

    #[inline]
    pub fn has(&self, flag: u8) -> bool {
        self.0[13] & flag == flag
    }

    #[inline]
    pub fn window(&self) -> u16 {
        be16(self.0, 14)
    }

    #[inline]
    pub fn checksum(&self) -> u16 {
        be16(self.0, 16)
    }

    #[inline]
    pub fn urgent_ptr(&self) -> u16 {
        be16(self.0, 18)
    }

    #[inline]
    pub fn options(&self) -> TcpOptions<'a> {
        TcpOptions { rest: &self.0[MIN_HEADER_LEN..self.header_len()] }
    }

    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        &self.0[self.header_len()..]
    }
}

/// TCP option kinds vigil reads.
pub mod option_kind {
    pub const EOL: u8 = 0;
    pub const NOP: u8 = 1;
    pub const MSS: u8 = 2;
    pub const WSCALE: u8 = 3;
    pub const SACK_PERMITTED: u8 = 4;
    pub const SACK: u8 = 5;
    pub const TIMESTAMP: u8 = 8;
    pub const TFO: u8 = 34;
}

/// One TCP option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TcpOption<'a> {
    EndOfList,
    Nop,
    /// `data` excludes kind and length bytes.
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
pub struct TcpOptions<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for TcpOptions<'a> {
    type Item = TcpOption<'a>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let (&kind, tail) = self.rest.split_first()?;
        match kind {
            option_kind::EOL => {
                self.rest = &[];
                Some(TcpOption::EndOfList)
            }
            option_kind::NOP => {
                self.rest = tail;
                Some(TcpOption::Nop)
            }
            _ => match tail.first() {
                Some(&l) if l >= 2 && (l as usize) <= self.rest.len() => {
                    let data = &self.rest[2..l as usize];
                    self.rest = &self.rest[l as usize..];
                    Some(TcpOption::Tlv { kind, data })
                }
                _ => {
                    self.rest = &[];
                    Some(TcpOption::BadLength { kind })
                }
            },
        }
    }
}

/// The length a well-formed option of `kind` must have (data bytes only), if fixed.
#[inline]
pub fn fixed_option_len(kind: u8) -> Option<usize> {
    match kind {
        option_kind::MSS => Some(2),
        option_kind::WSCALE => Some(1),
        option_kind::SACK_PERMITTED => Some(0),
        option_kind::TIMESTAMP => Some(8),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // SYN 1234 -> 80, seq 1, data offset 8 words: MSS 1460, NOP, WS 7, NOP NOP, SACK-permitted, NOP NOP
    const SYN: &[u8] = &[
        0x04, 0xd2, 0x00, 0x50, 0, 0, 0, 1, 0, 0, 0, 0, 0x80, 0x02, 0xff, 0xff, 0, 0, 0, 0, //
        2, 4, 0x05, 0xb4, 1, 3, 3, 7, 1, 1, 4, 2,
    ];

    #[test]
    fn syn_with_options() {
        let t = Tcp::new_checked(SYN).unwrap();
        assert_eq!((t.src_port(), t.dst_port(), t.seq()), (1234, 80, 1));
        assert!(t.has(flags::SYN) && !t.has(flags::ACK));
        let opts: Vec<_> = t.options().collect();
        assert_eq!(opts[0], TcpOption::Tlv { kind: 2, data: &[0x05, 0xb4][..] });
        assert_eq!(opts[2], TcpOption::Tlv { kind: 3, data: &[7][..] });
        assert_eq!(opts.last(), Some(&TcpOption::Tlv { kind: 4, data: &[][..] }));
        assert!(t.payload().is_empty());
    }

    #[test]
    fn header_checks() {
        assert_eq!(Tcp::new_checked(&SYN[..19]).unwrap_err(), TcpError::TooSmall);
        assert_eq!(Tcp::new_checked(&SYN[..24]).unwrap_err(), TcpError::HeaderPastEnd);
        let mut b = SYN.to_vec();
        b[12] = 0x40;
        assert_eq!(Tcp::new_checked(&b).unwrap_err(), TcpError::HeaderTooSmall);
    }
}
