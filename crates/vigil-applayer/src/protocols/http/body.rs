//! Message bodies: chunk-size lines, decoder setup from `Content-Encoding`,
//! and the path from wire bytes to the kept inspection window.

use super::decompress::{codecs_for, Decoder, Outcome};
use super::events::Ev;
use super::headers::HeaderTable;
use super::tx::Body;
use super::HttpConfig;

#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ChunkLen {
    /// An empty line where a size was due; libhtp skips those.
    Blank,
    Invalid,
    Len(u64),
}

fn is_chunk_ctl(b: u8) -> bool {
    matches!(b, b'\r' | b'\n' | b' ' | b'\t' | 0x0b | 0x0c)
}

/// libhtp's lenient reading: control characters and blanks first, then a
/// hex run; whatever follows the digits (extensions, junk) is ignored.
/// Lengths past `i32::MAX` are skipped like blank lines, as libhtp does.
pub(crate) fn parse_chunk_len(line: &[u8]) -> ChunkLen {
    let start = line.iter().position(|&b| !is_chunk_ctl(b)).unwrap_or(line.len());
    let s = line.get(start..).unwrap_or_default();
    if s.is_empty() {
        return ChunkLen::Blank;
    }
    let digits = s.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    if digits == 0 || digits > 16 {
        return ChunkLen::Invalid;
    }
    let n = s.iter().take(digits).fold(0u64, |n, &b| n << 4 | u64::from(char::from(b).to_digit(16).unwrap_or(0)));
    if n > i32::MAX as u64 {
        return ChunkLen::Blank;
    }
    ChunkLen::Len(n)
}

/// Whether an unfinished chunk-size line already cannot be one (a byte that
/// is neither blank nor hex before any digit): libhtp then stops waiting.
pub(crate) fn chunk_len_doomed(partial: &[u8]) -> bool {
    partial.iter().find(|&&b| !is_chunk_ctl(b)).is_some_and(|b| !b.is_ascii_hexdigit())
}

/// The decoder the headers ask for, or the anomaly that prevents one.
/// `raw_cap` is the body window: a stream that turns out not to be
/// compressed is shown raw, and never more of it than that.
pub(crate) fn decoder_for(headers: &HeaderTable, cfg: &HttpConfig, raw_cap: usize) -> Result<Option<Decoder>, Ev> {
    let Some(ce) = headers.value(b"content-encoding") else { return Ok(None) };
    if cfg.decompress_limit == 0 {
        return Ok(None);
    }
    match codecs_for(ce) {
        Ok(codecs) if codecs.is_empty() => Ok(None),
        Ok(codecs) => Ok(Some(Decoder::new(&codecs, cfg.decompress_limit as u64, cfg.decompress_ratio_cap, raw_cap))),
        Err(_) => Err(Ev::TooManyEncodingLayers),
    }
}

/// A request `Content-Encoding` naming something no HTTP stack produces.
pub(crate) fn abnormal_content_encoding(headers: &HeaderTable) -> bool {
    const KNOWN: &[&[u8]] = &[
        b"gzip",
        b"x-gzip",
        b"deflate",
        b"x-deflate",
        b"identity",
        b"br",
        b"lzma",
        b"compress",
        b"x-compress",
        b"zstd",
    ];
    headers.value(b"content-encoding").is_some_and(|v| {
        v.split(|&b| b == b',').any(|t| {
            let t = super::line::trim_lws(t);
            !KNOWN.iter().any(|k| t.eq_ignore_ascii_case(k))
        })
    })
}

/// Body bytes from the wire (already dechunked) into the kept window,
/// through the decoder when there is one.
pub(crate) fn deliver(body: &mut Body, decoder: Option<&mut Decoder>, data: &[u8]) -> Outcome {
    body.wire_len = body.wire_len.saturating_add(data.len() as u64);
    match decoder {
        Some(d) => d.feed(data, &mut |out| body.push(out)),
        None => {
            body.push(data);
            Outcome::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abnormal_encodings() {
        let mut t = HeaderTable::default();
        t.add(b"Content-Encoding", b"gzip, identity", 100);
        assert!(!abnormal_content_encoding(&t));
        t.add(b"Content-Encoding", b"rot13", 100);
        assert!(abnormal_content_encoding(&t));
    }

    #[test]
    fn chunk_lengths() {
        assert_eq!(parse_chunk_len(b"1a"), ChunkLen::Len(26));
        assert_eq!(parse_chunk_len(b" 1A;ext=1"), ChunkLen::Len(26));
        assert_eq!(parse_chunk_len(b""), ChunkLen::Blank);
        assert_eq!(parse_chunk_len(b"zz"), ChunkLen::Invalid);
        assert_eq!(parse_chunk_len(b"ffffffffffffffffff"), ChunkLen::Invalid);
        assert_eq!(parse_chunk_len(b"ffffffffff"), ChunkLen::Blank);
        assert!(chunk_len_doomed(b"\r X5O"));
        assert!(!chunk_len_doomed(b"\r 1f"));
        assert!(!chunk_len_doomed(b"  "));
    }
}
