//! Streaming, bounded gzip/deflate decoding of message bodies.
//!
//! Each `Content-Encoding` layer is one stage; compressed bytes go in, and
//! decoded bytes come out in small slices to a callback, so nothing is held
//! beyond a few kilobytes of scratch. Decoding stops for good once the output
//! passes `limit` (the inspection window never needs more); if the output is
//! also more than `ratio` times the input, it was a bomb and says so.
//! A stream that fails to decode is handed on as it came (libhtp does the same).

use flate2::{Decompress, FlushDecompress, Status};

/// How many layers libhtp decodes before giving up on the rest.
pub(crate) const MAX_LAYERS: usize = 3;

/// The largest gzip header (with name/comment/extra) we are willing to skip.
const MAX_GZIP_HEADER: usize = 4096;

const SCRATCH: usize = 8 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Codec {
    Gzip,
    Deflate,
}

/// What happened to the decoder during one `feed`, for anomaly reporting.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Outcome {
    pub(crate) failed: bool,
    pub(crate) bomb: bool,
}

pub(crate) struct Decoder {
    stages: Vec<Stage>,
    limit: u64,
    ratio: u64,
    in_total: u64,
    out_total: u64,
    state: State,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Active,
    /// The output reached the limit: further input is ignored.
    Stopped,
    /// A stage failed: further input passes through undecoded.
    PassThrough,
}

struct Stage {
    codec: Codec,
    /// Bytes held until the stream's framing is known (gzip header, or the
    /// two bytes that tell zlib from raw deflate).
    head: Vec<u8>,
    inflater: Option<Decompress>,
    finished: bool,
}

enum StageErr {
    Failed,
}

impl Decoder {
    /// `codecs` in the order they must be undone (the reverse of the header).
    pub(crate) fn new(codecs: &[Codec], limit: u64, ratio: u64) -> Self {
        let stages =
            codecs.iter().map(|&codec| Stage { codec, head: Vec::new(), inflater: None, finished: false }).collect();
        Decoder { stages, limit, ratio: ratio.max(1), in_total: 0, out_total: 0, state: State::Active }
    }

    /// Decodes `input`, handing decoded bytes to `sink`.
    pub(crate) fn feed(&mut self, input: &[u8], sink: &mut dyn FnMut(&[u8])) -> Outcome {
        let mut outcome = Outcome::default();
        self.in_total = self.in_total.saturating_add(input.len() as u64);
        match self.state {
            State::Stopped => return outcome,
            State::PassThrough => {
                sink(input);
                return outcome;
            }
            State::Active => {}
        }
        let budget = self.limit.saturating_sub(self.out_total);
        let mut produced = 0u64;
        let mut capped = false;
        let result = {
            let mut emit = |chunk: &[u8]| -> bool {
                let room = usize::try_from(budget.saturating_sub(produced)).unwrap_or(usize::MAX);
                let take = chunk.len().min(room);
                if let Some(part) = chunk.get(..take) {
                    sink(part);
                }
                produced = produced.saturating_add(take as u64);
                if take < chunk.len() || produced >= budget {
                    capped = true;
                    return false;
                }
                true
            };
            run(&mut self.stages, input, &mut emit)
        };
        self.out_total = self.out_total.saturating_add(produced);
        match result {
            Ok(_) => {}
            Err(StageErr::Failed) => {
                outcome.failed = true;
                // Bytes already decoded from this chunk were delivered; the
                // rest of the body is passed through as libhtp does.
                self.state = State::PassThrough;
            }
        }
        if capped {
            self.state = State::Stopped;
            if self.out_total > self.in_total.saturating_mul(self.ratio) {
                outcome.bomb = true;
            }
        }
        outcome
    }

    /// A capture gap broke the compressed stream: nothing after it can be decoded.
    pub(crate) fn stop(&mut self) {
        self.state = State::Stopped;
    }
}

/// Pushes `input` through `stages`; `emit` returns false to stop early, and
/// so does this (Ok(false)) once anything downstream refused.
fn run(stages: &mut [Stage], input: &[u8], emit: &mut dyn FnMut(&[u8]) -> bool) -> Result<bool, StageErr> {
    let Some((first, rest)) = stages.split_first_mut() else {
        return Ok(emit(input));
    };
    let mut err = None;
    let mut go = true;
    first.push(input, &mut |chunk| {
        match run(rest, chunk, emit) {
            Ok(g) => go = g,
            Err(e) => {
                err = Some(e);
                go = false;
            }
        }
        go
    })?;
    match err {
        Some(e) => Err(e),
        None => Ok(go),
    }
}

impl Stage {
    fn push(&mut self, mut input: &[u8], out: &mut dyn FnMut(&[u8]) -> bool) -> Result<(), StageErr> {
        if self.finished {
            // Trailing bytes (gzip trailer, a second member) are ignored.
            return Ok(());
        }
        if self.inflater.is_none() {
            let room = MAX_GZIP_HEADER.saturating_sub(self.head.len());
            let take = input.len().min(room);
            self.head.extend_from_slice(input.get(..take).unwrap_or_default());
            input = input.get(take..).unwrap_or_default();
            match self.start()? {
                None => {
                    if self.head.len() >= MAX_GZIP_HEADER {
                        return Err(StageErr::Failed);
                    }
                    return Ok(());
                }
                Some(body_start) => {
                    let head = std::mem::take(&mut self.head);
                    self.inflate(head.get(body_start..).unwrap_or_default(), out)?;
                }
            }
        }
        self.inflate(input, out)
    }

    /// Picks the inflater once the header is known; returns where the
    /// compressed data starts in `head`, or None while more is needed.
    fn start(&mut self) -> Result<Option<usize>, StageErr> {
        match self.codec {
            Codec::Gzip => match gzip_header_len(&self.head) {
                GzHead::Complete(n) => {
                    self.inflater = Some(Decompress::new(false));
                    Ok(Some(n))
                }
                GzHead::Partial => Ok(None),
                GzHead::NotGzip => {
                    // Mislabelled deflate is common; libhtp retries the same way.
                    self.codec = Codec::Deflate;
                    self.start()
                }
            },
            Codec::Deflate => {
                let (Some(&a), Some(&b)) = (self.head.first(), self.head.get(1)) else {
                    return Ok(None);
                };
                let zlib = a & 0x0f == 8 && (u16::from(a) << 8 | u16::from(b)) % 31 == 0;
                self.inflater = Some(Decompress::new(zlib));
                Ok(Some(0))
            }
        }
    }

    fn inflate(&mut self, mut input: &[u8], out: &mut dyn FnMut(&[u8]) -> bool) -> Result<(), StageErr> {
        let Some(inflater) = self.inflater.as_mut() else {
            return Ok(());
        };
        let mut buf = [0u8; SCRATCH];
        loop {
            let (in0, out0) = (inflater.total_in(), inflater.total_out());
            let status = inflater.decompress(input, &mut buf, FlushDecompress::None).map_err(|_| StageErr::Failed)?;
            let used = usize::try_from(inflater.total_in() - in0).unwrap_or(input.len()).min(input.len());
            let made = usize::try_from(inflater.total_out() - out0).unwrap_or(0).min(buf.len());
            input = input.get(used..).unwrap_or_default();
            if made > 0 && !out(buf.get(..made).unwrap_or_default()) {
                return Ok(());
            }
            if status == Status::StreamEnd {
                self.finished = true;
                return Ok(());
            }
            // No progress either way: the inflater wants more input.
            if used == 0 && made == 0 {
                return Ok(());
            }
            if input.is_empty() && made < buf.len() {
                return Ok(());
            }
        }
    }
}

enum GzHead {
    Complete(usize),
    Partial,
    NotGzip,
}

/// RFC 1952 member header length, once all of it is in `h`.
fn gzip_header_len(h: &[u8]) -> GzHead {
    const FHCRC: u8 = 2;
    const FEXTRA: u8 = 4;
    const FNAME: u8 = 8;
    const FCOMMENT: u8 = 16;
    match (h.first(), h.get(1), h.get(2)) {
        (Some(0x1f), Some(0x8b), Some(8)) => {}
        (Some(0x1f), None, _) | (None, _, _) | (Some(0x1f), Some(0x8b), None) => return GzHead::Partial,
        _ => return GzHead::NotGzip,
    }
    let Some(&flags) = h.get(3) else { return GzHead::Partial };
    let mut pos = 10;
    if h.len() < pos {
        return GzHead::Partial;
    }
    if flags & FEXTRA != 0 {
        let (Some(&lo), Some(&hi)) = (h.get(pos), h.get(pos + 1)) else { return GzHead::Partial };
        pos += 2 + usize::from(u16::from_le_bytes([lo, hi]));
    }
    for flag in [FNAME, FCOMMENT] {
        if flags & flag != 0 {
            match h.get(pos..).and_then(|r| r.iter().position(|&b| b == 0)) {
                Some(nul) => pos += nul + 1,
                None => return GzHead::Partial,
            }
        }
    }
    if flags & FHCRC != 0 {
        pos += 2;
    }
    if h.len() < pos {
        GzHead::Partial
    } else {
        GzHead::Complete(pos)
    }
}

/// The decoding stages for a `Content-Encoding` value, outermost coding
/// undone first; None when nothing needs decoding (or it cannot be done).
pub(crate) fn codecs_for(value: &[u8]) -> Result<Vec<Codec>, TooMany> {
    let mut codecs = Vec::new();
    for token in value.split(|&b| b == b',') {
        let t = super::line::trim_lws(token);
        let codec = if t.eq_ignore_ascii_case(b"gzip") || t.eq_ignore_ascii_case(b"x-gzip") {
            Codec::Gzip
        } else if t.eq_ignore_ascii_case(b"deflate") || t.eq_ignore_ascii_case(b"x-deflate") {
            Codec::Deflate
        } else {
            continue;
        };
        if codecs.len() == MAX_LAYERS {
            return Err(TooMany);
        }
        codecs.push(codec);
    }
    codecs.reverse();
    Ok(codecs)
}

#[derive(Debug, PartialEq, Eq)]
pub(crate) struct TooMany;

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::write::{DeflateEncoder, GzEncoder, ZlibEncoder};
    use flate2::Compression;
    use std::io::Write;

    pub(crate) fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = GzEncoder::new(Vec::new(), Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn decode_in_pieces(codecs: &[Codec], data: &[u8], piece: usize, limit: u64) -> (Vec<u8>, Outcome) {
        let mut d = Decoder::new(codecs, limit, 2048);
        let mut out = Vec::new();
        let mut all = Outcome::default();
        for chunk in data.chunks(piece) {
            let o = d.feed(chunk, &mut |b| out.extend_from_slice(b));
            all.failed |= o.failed;
            all.bomb |= o.bomb;
        }
        (out, all)
    }

    #[test]
    fn gzip_zlib_and_raw_deflate_in_any_chunking() {
        let text = b"hello hello hello hello world".repeat(50);
        let mut z = ZlibEncoder::new(Vec::new(), Compression::default());
        z.write_all(&text).unwrap();
        let zlib = z.finish().unwrap();
        let mut r = DeflateEncoder::new(Vec::new(), Compression::default());
        r.write_all(&text).unwrap();
        let raw = r.finish().unwrap();
        for piece in [1, 3, 1000] {
            assert_eq!(decode_in_pieces(&[Codec::Gzip], &gzip(&text), piece, 1 << 20).0, text);
            assert_eq!(decode_in_pieces(&[Codec::Deflate], &zlib, piece, 1 << 20).0, text);
            assert_eq!(decode_in_pieces(&[Codec::Deflate], &raw, piece, 1 << 20).0, text);
            // Two layers: gzip applied to gzip.
            assert_eq!(decode_in_pieces(&[Codec::Gzip, Codec::Gzip], &gzip(&gzip(&text)), piece, 1 << 20).0, text);
        }
    }

    #[test]
    fn bombs_stop_at_the_limit() {
        let bomb = gzip(&vec![0u8; 20 << 20]);
        let (out, o) = decode_in_pieces(&[Codec::Gzip], &bomb, 4096, 1 << 20);
        assert_eq!(out.len(), 1 << 20);
        assert!(o.bomb);
    }

    #[test]
    fn garbage_passes_through() {
        let (out, o) = decode_in_pieces(&[Codec::Gzip], b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03garbage!", 5, 1 << 20);
        assert!(o.failed);
        assert!(out.ends_with(b"!"));
    }

    #[test]
    fn content_encoding_values() {
        assert_eq!(codecs_for(b"gzip, deflate"), Ok(vec![Codec::Deflate, Codec::Gzip]));
        assert_eq!(codecs_for(b"identity"), Ok(vec![]));
        assert_eq!(codecs_for(b"gzip,gzip,gzip,gzip"), Err(TooMany));
    }
}
