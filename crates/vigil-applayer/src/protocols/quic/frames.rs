//! The frames of an opened Initial packet (RFC 9000 19) and the CRYPTO
//! stream they carry, put back in order across packets: the TLS hello may
//! take several packets, sent out of order, with gaps filled later.

use super::header::varint;

/// What an Initial packet's frames held.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Frames<'a> {
    /// CRYPTO frames: (offset, data).
    pub crypto: Vec<(u64, &'a [u8])>,
    /// The frames did not parse to the end.
    pub malformed: bool,
}

/// Walks the frames Initial and Handshake packets may hold; anything else
/// there ends the walk as malformed. Google's QUIC over IETF headers (Q050)
/// numbers its CRYPTO frame 0x08.
pub fn parse(mut b: &[u8], google: bool) -> Frames<'_> {
    let crypto_type = if google { 0x08 } else { 0x06 };
    let mut out = Frames::default();
    let next = |b: &mut &[u8]| -> Option<u64> {
        let (v, n) = varint(b)?;
        *b = &b[n..];
        Some(v)
    };
    while let Some(&t) = b.first() {
        let ok = (|| -> Option<()> {
            match t {
                // PADDING, PING
                0x00 | 0x01 => b = &b[1..],
                // ACK, ACK with ECN counts
                0x02 | 0x03 => {
                    b = &b[1..];
                    let _largest = next(&mut b)?;
                    let _delay = next(&mut b)?;
                    let ranges = next(&mut b)?;
                    let _first = next(&mut b)?;
                    for _ in 0..ranges.min(1 << 16) {
                        next(&mut b)?;
                        next(&mut b)?;
                    }
                    if t == 0x03 {
                        for _ in 0..3 {
                            next(&mut b)?;
                        }
                    }
                }
                t if t == crypto_type => {
                    b = &b[1..];
                    let offset = next(&mut b)?;
                    let len = usize::try_from(next(&mut b)?).ok()?;
                    let data = b.get(..len)?;
                    out.crypto.push((offset, data));
                    b = &b[len..];
                }
                // CONNECTION_CLOSE (transport, application)
                0x1c | 0x1d => {
                    b = &b[1..];
                    next(&mut b)?;
                    if t == 0x1c {
                        next(&mut b)?;
                    }
                    let len = usize::try_from(next(&mut b)?).ok()?;
                    b = b.get(len..)?;
                }
                _ => return None,
            }
            Some(())
        })();
        if ok.is_none() {
            out.malformed = true;
            break;
        }
    }
    out
}

/// The pieces past a hole a side may hold: a hello takes a handful.
pub const MAX_PENDING: usize = 64;

/// One side's CRYPTO stream, as far as it came.
#[derive(Debug, Default)]
pub struct CryptoStream {
    /// Bytes from offset 0 on, without holes.
    pub contiguous: Vec<u8>,
    /// Pieces past a hole: (offset, data).
    pending: Vec<(u64, Vec<u8>)>,
    pending_bytes: usize,
}

/// What adding a fragment did.
#[derive(Debug, PartialEq, Eq)]
pub enum Added {
    Ok,
    /// Past the limit: dropped.
    TooLong,
}

impl CryptoStream {
    /// Adds the fragment at `offset`, keeping at most `limit` bytes in all
    /// (and at most [`MAX_PENDING`] pieces past a hole).
    pub fn add(&mut self, offset: u64, data: &[u8], limit: usize) -> Added {
        let end = offset.saturating_add(data.len() as u64);
        if end > limit as u64 {
            return Added::TooLong;
        }
        let have = self.contiguous.len() as u64;
        if data.is_empty() || end <= have {
            // Empty, or already had.
            return Added::Ok;
        }
        if offset <= have {
            self.contiguous.extend_from_slice(&data[(have - offset) as usize..]);
            self.fill();
        } else {
            if self.pending_bytes + data.len() > limit || self.pending.len() >= MAX_PENDING {
                return Added::TooLong;
            }
            self.pending_bytes += data.len();
            self.pending.push((offset, data.to_vec()));
        }
        Added::Ok
    }

    /// Moves pending pieces that now touch the contiguous part into it.
    fn fill(&mut self) {
        loop {
            let have = self.contiguous.len() as u64;
            let Some(i) = self.pending.iter().position(|(o, _)| *o <= have) else { break };
            let (o, d) = self.pending.swap_remove(i);
            self.pending_bytes -= d.len();
            let end = o + d.len() as u64;
            if end > have {
                self.contiguous.extend_from_slice(&d[(have - o) as usize..]);
            }
        }
    }

    /// The first handshake message, once whole: (type, body).
    pub fn first_message(&self) -> Option<(u8, &[u8])> {
        let c = &self.contiguous;
        let len = (usize::from(*c.get(1)?) << 16) | (usize::from(*c.get(2)?) << 8) | usize::from(*c.get(3)?);
        Some((c[0], c.get(4..4 + len)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_of_an_initial() {
        // ACK (largest 2, delay 0, 0 ranges, first 0), CRYPTO at 5 of 3 bytes, PADDING.
        let f = parse(&[0x02, 2, 0, 0, 0, 0x06, 5, 3, b'a', b'b', b'c', 0, 0], false);
        assert_eq!(f.crypto, vec![(5, &b"abc"[..])]);
        assert!(!f.malformed);
        assert!(parse(&[0x08, 0, 0], false).malformed);
        assert_eq!(parse(&[0x08, 0, 1, b'x'], true).crypto, vec![(0, &b"x"[..])]);
        assert!(parse(&[0x06, 0, 9, 1], false).malformed);
    }

    #[test]
    fn a_hello_put_together_out_of_order() {
        let hello = [1u8, 0, 0, 4, b'w', b'x', b'y', b'z'];
        let mut s = CryptoStream::default();
        assert_eq!(s.add(6, &hello[6..], 64), Added::Ok);
        assert_eq!(s.first_message(), None);
        s.add(0, &hello[..3], 64);
        s.add(2, &hello[2..7], 64);
        assert_eq!(s.first_message(), Some((1, &b"wxyz"[..])));
        assert_eq!(s.add(60, &[0; 8], 64), Added::TooLong);
        // Empty pieces past the hole are not held.
        for i in 0..1000 {
            assert_eq!(s.add(40 + i % 8, &[], 64), Added::Ok);
        }
        assert!(s.pending.is_empty());
    }
}
