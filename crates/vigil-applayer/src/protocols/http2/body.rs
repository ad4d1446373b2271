//! Decoding an HTTP/2 body as its Content-Encoding says: gzip and deflate
//! through HTTP/1's bounded decoder, brotli (`br`, which Suricata decodes
//! for HTTP/2) through `brotli-decompressor`, its output capped at the
//! decompression limit so that a small input cannot grow without bound.

use std::io::Write;

use crate::protocols::http::decompress::{codecs_for, Decoder};

/// A body decoder of one side of a stream.
pub(super) enum BodyDecoder {
    Flate(Decoder),
    Brotli { w: Box<brotli_decompressor::DecompressorWriter<Capped>>, stopped: bool },
}

/// The decoder's output, refused past `left` bytes (the brotli writer then fails).
pub(super) struct Capped {
    buf: Vec<u8>,
    left: u64,
}

impl Write for Capped {
    /// Takes what fits (so the output does not depend on how the input
    /// was cut), then fails: never `Ok(0)`, which `write_all` would retry.
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            return Err(std::io::Error::other("decompression limit"));
        }
        let n = data.len().min(usize::try_from(self.left).unwrap_or(usize::MAX));
        self.left -= n as u64;
        self.buf.extend_from_slice(&data[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl BodyDecoder {
    /// The decoder a Content-Encoding value asks for; `None` for identity
    /// or what is not known.
    pub(super) fn for_encoding(value: &[u8], limit: u64, ratio: u64) -> Option<BodyDecoder> {
        if value.trim_ascii().eq_ignore_ascii_case(b"br") {
            let w = brotli_decompressor::DecompressorWriter::new(Capped { buf: Vec::new(), left: limit }, 4096);
            return Some(BodyDecoder::Brotli { w: Box::new(w), stopped: false });
        }
        let codecs = codecs_for(value).ok().filter(|c| !c.is_empty())?;
        Some(BodyDecoder::Flate(Decoder::new(&codecs, limit, ratio, 4096)))
    }

    /// Decodes `input`; false once the body could not be decoded.
    pub(super) fn feed(&mut self, input: &[u8], sink: &mut dyn FnMut(&[u8])) -> bool {
        match self {
            BodyDecoder::Flate(d) => !d.feed(input, sink).failed,
            BodyDecoder::Brotli { w, stopped } => {
                if *stopped {
                    return true;
                }
                let ok = w.write_all(input).is_ok();
                let out = &mut w.get_mut().buf;
                sink(out);
                out.clear();
                if !ok {
                    // A damaged stream, or the limit reached: what came is kept.
                    *stopped = true;
                }
                // Reaching the limit is no failure of the body.
                ok || w.get_ref().left == 0
            }
        }
    }

    /// The body ended.
    pub(super) fn finish(&mut self, sink: &mut dyn FnMut(&[u8])) {
        match self {
            BodyDecoder::Flate(d) => {
                d.finish(sink);
            }
            BodyDecoder::Brotli { w, stopped } => {
                if !*stopped {
                    let _ = w.flush();
                    let out = &mut w.get_mut().buf;
                    sink(out);
                    out.clear();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // RFC 7932 by hand: window 16, an uncompressed meta-block of 5 bytes
    // (MNIBBLES 4, MLEN-1 = 4, ISUNCOMPRESSED), "hello", then a last empty one.
    const BR: [u8; 9] = [0x40, 0x00, 0x10, b'h', b'e', b'l', b'l', b'o', 0x03];

    #[test]
    fn brotli_in_any_cut_and_capped() {
        let whole = {
            let mut d = BodyDecoder::for_encoding(b"br", 1 << 20, 100).unwrap();
            let mut out = Vec::new();
            for c in BR.chunks(3) {
                d.feed(c, &mut |b| out.extend_from_slice(b));
            }
            d.finish(&mut |b| out.extend_from_slice(b));
            out
        };
        assert_eq!(whole, b"hello");
        let mut d = BodyDecoder::for_encoding(b"br", 4, 100).unwrap();
        let mut out = Vec::new();
        d.feed(&BR, &mut |b| out.extend_from_slice(b));
        assert!(out.len() <= 4);
        assert!(BodyDecoder::for_encoding(b"identity", 1, 1).is_none());
    }
}
