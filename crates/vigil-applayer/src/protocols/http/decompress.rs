//! Streaming, bounded gzip/deflate decoding of message bodies.
//!
//! Each `Content-Encoding` layer is one stage; compressed bytes go in, and
//! decoded bytes come out in small slices to a callback, so nothing is held
//! beyond a few kilobytes of scratch. Decoding stops for good once the output
//! passes `limit` (the inspection window never needs more); if the output is
//! also more than `ratio` times the input received so far, it was a bomb.
//!
//! A stage that fails before producing anything is tried once more with the
//! other codec (gzip labelled deflate and the reverse are common, and libhtp
//! retries the same way). What that second attempt decodes is held back until
//! it proves itself (a clean stream end, a few kilobytes without error, or
//! the end of the body): text read as deflate gives garbage for a while before
//! the inflater notices, and libhtp drops a retry's output when it errors.
//! When both attempts fail the stage was not compressed after all: it hands
//! its input on as it came, from the first byte, so the result does not depend
//! on where the stream was cut. A first attempt that fails after output keeps
//! what it decoded up to the damage and drops the rest.

use flate2::{Decompress, FlushDecompress, Status};

use super::line::contains_ci;

/// How many layers libhtp decodes before giving up on the rest.
pub(crate) const MAX_LAYERS: usize = 3;

/// The largest gzip header (with name/comment/extra) we are willing to skip.
const MAX_GZIP_HEADER: usize = 4096;

const SCRATCH: usize = 8 * 1024;

/// Output of a retried codec held back until it has decoded this much without
/// error (libhtp's output chunk size, past which its output is gone too).
const TRIAL_HOLD: usize = 8 * 1024;

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
    /// The output reached the limit (or a gap broke the stream): further input is ignored.
    stopped: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Decoding,
    /// Failed before any output: input goes on untouched.
    PassThrough,
    /// Stream end, or failed after output: input is ignored.
    Done,
}

struct Stage {
    codec: Codec,
    /// The codec to try when `codec` fails before any output; None once tried.
    retry: Option<Codec>,
    /// `codec` is the retry: its output goes to `held` until it proves itself.
    trial: bool,
    held: Vec<u8>,
    mode: Mode,
    /// Bytes held until the stream's framing is known (gzip header, or the
    /// two bytes that tell zlib from raw deflate).
    head: Vec<u8>,
    inflater: Option<Decompress>,
    /// Input of earlier calls kept (up to `raw_cap`) until the first output,
    /// for pass-through.
    raw: Vec<u8>,
    raw_cap: usize,
    /// `raw` hit `raw_cap`: a retry could not start from the first byte.
    raw_cut: bool,
    produced: bool,
    /// Set on failure, cleared when the decoder reports it.
    failed: bool,
}

enum Start {
    NeedMore,
    /// Compressed data starts at this offset of the held header bytes.
    Ready(usize),
    /// The header says this is not the stage's codec.
    Wrong,
}

impl Decoder {
    /// `codecs` in the order they must be undone (the reverse of the header);
    /// each stage keeps up to `raw_cap` raw bytes until its first output.
    pub(crate) fn new(codecs: &[Codec], limit: u64, ratio: u64, raw_cap: usize) -> Self {
        // Room for the largest header we skip, so a failure is always found
        // before the kept input runs out.
        let raw_cap = raw_cap.max(2 * MAX_GZIP_HEADER);
        let stages = codecs
            .iter()
            .map(|&codec| Stage {
                codec,
                retry: Some(match codec {
                    Codec::Gzip => Codec::Deflate,
                    Codec::Deflate => Codec::Gzip,
                }),
                trial: false,
                held: Vec::new(),
                mode: Mode::Decoding,
                head: Vec::new(),
                inflater: None,
                raw: Vec::new(),
                raw_cap,
                raw_cut: false,
                produced: false,
                failed: false,
            })
            .collect();
        Decoder { stages, limit, ratio: ratio.max(1), in_total: 0, out_total: 0, stopped: false }
    }

    /// Decodes `input`, handing decoded bytes to `sink`.
    pub(crate) fn feed(&mut self, input: &[u8], sink: &mut dyn FnMut(&[u8])) -> Outcome {
        self.in_total = self.in_total.saturating_add(input.len() as u64);
        self.drive(sink, &mut |stages, emit| {
            run(stages, input, emit);
        })
    }

    /// The body ended: output a retried codec still held back is released, as
    /// libhtp flushes its output at the end.
    pub(crate) fn finish(&mut self, sink: &mut dyn FnMut(&[u8])) -> Outcome {
        self.drive(sink, &mut |stages, emit| {
            for i in 0..stages.len() {
                let (done, rest) = stages.split_at_mut(i + 1);
                if let Some(stage) = done.last_mut() {
                    if !stage.release(&mut |chunk| run(rest, chunk, emit)) {
                        return;
                    }
                }
            }
        })
    }

    /// Runs `step` over the stages with the output bounded by `limit`.
    #[allow(clippy::type_complexity)]
    fn drive(
        &mut self,
        sink: &mut dyn FnMut(&[u8]),
        step: &mut dyn FnMut(&mut [Stage], &mut dyn FnMut(&[u8]) -> bool),
    ) -> Outcome {
        let mut outcome = Outcome::default();
        if self.stopped {
            return outcome;
        }
        let budget = self.limit.saturating_sub(self.out_total);
        let mut produced = 0u64;
        let mut capped = false;
        {
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
            step(&mut self.stages, &mut emit);
        }
        self.out_total = self.out_total.saturating_add(produced);
        for stage in &mut self.stages {
            outcome.failed |= mem_take(&mut stage.failed);
        }
        if capped {
            self.stopped = true;
            if self.out_total > self.in_total.saturating_mul(self.ratio) {
                outcome.bomb = true;
            }
        }
        outcome
    }

    /// A capture gap broke the compressed stream: nothing after it can be decoded.
    pub(crate) fn stop(&mut self) {
        self.stopped = true;
    }
}

fn mem_take(flag: &mut bool) -> bool {
    std::mem::replace(flag, false)
}

/// Pushes `input` through `stages`; false once anything downstream refused
/// more (the output cap).
fn run(stages: &mut [Stage], input: &[u8], emit: &mut dyn FnMut(&[u8]) -> bool) -> bool {
    let Some((first, rest)) = stages.split_first_mut() else {
        return emit(input);
    };
    first.push(input, &mut |chunk| run(rest, chunk, emit))
}

impl Stage {
    fn push(&mut self, input: &[u8], out: &mut dyn FnMut(&[u8]) -> bool) -> bool {
        match self.mode {
            Mode::Done => return true,
            Mode::PassThrough => return out(input),
            Mode::Decoding => {}
        }
        let go = match self.decode(input, out) {
            Ok(go) => go,
            Err(()) => return self.fail(input, out),
        };
        if !self.produced {
            let room = self.raw_cap.saturating_sub(self.raw.len());
            self.raw_cut |= input.len() > room;
            self.raw.extend_from_slice(input.get(..room.min(input.len())).unwrap_or_default());
        }
        go
    }

    /// Decoded bytes: out at once, or held while the codec is on trial.
    fn emit(&mut self, chunk: &[u8], out: &mut dyn FnMut(&[u8]) -> bool) -> bool {
        if self.trial {
            self.held.extend_from_slice(chunk);
            return self.held.len() < TRIAL_HOLD || self.release(out);
        }
        if !self.produced {
            self.produced = true;
            self.raw = Vec::new();
        }
        out(chunk)
    }

    /// The retried codec is trusted: what it held goes out.
    fn release(&mut self, out: &mut dyn FnMut(&[u8]) -> bool) -> bool {
        if !self.trial {
            return true;
        }
        self.trial = false;
        let held = std::mem::take(&mut self.held);
        held.is_empty() || self.emit(&held, out)
    }

    fn decode(&mut self, mut input: &[u8], out: &mut dyn FnMut(&[u8]) -> bool) -> Result<bool, ()> {
        if self.inflater.is_none() {
            let room = MAX_GZIP_HEADER.saturating_sub(self.head.len());
            let take = input.len().min(room);
            self.head.extend_from_slice(input.get(..take).unwrap_or_default());
            input = input.get(take..).unwrap_or_default();
            match self.start() {
                Start::NeedMore if self.head.len() >= MAX_GZIP_HEADER => return Err(()),
                Start::NeedMore => return Ok(true),
                Start::Wrong => return Err(()),
                Start::Ready(body_start) => {
                    let head = std::mem::take(&mut self.head);
                    if !self.inflate(head.get(body_start..).unwrap_or_default(), out)? {
                        return Ok(false);
                    }
                }
            }
        }
        self.inflate(input, out)
    }

    /// `current` is this call's whole input: handing it on in full (after
    /// what earlier calls kept) gives the same bytes however the stream was cut.
    /// Only giving up is reported: a retry that works is no anomaly.
    fn fail(&mut self, current: &[u8], out: &mut dyn FnMut(&[u8]) -> bool) -> bool {
        self.inflater = None;
        self.head = Vec::new();
        // A retry's output is not trusted once it errs.
        self.held = Vec::new();
        self.trial = false;
        if self.produced {
            self.failed = true;
            self.mode = Mode::Done;
            return true;
        }
        let raw = std::mem::take(&mut self.raw);
        match self.retry.take() {
            Some(codec) if !self.raw_cut => {
                // From the first byte again, with the other codec.
                self.codec = codec;
                self.trial = true;
                let go = self.push(&raw, out);
                go && self.push(current, out)
            }
            _ => {
                self.failed = true;
                self.mode = Mode::PassThrough;
                out(&raw) && out(current)
            }
        }
    }

    /// Picks the inflater once the header is known.
    fn start(&mut self) -> Start {
        match self.codec {
            Codec::Gzip => match gzip_header_len(&self.head) {
                GzHead::Complete(n) => {
                    self.inflater = Some(Decompress::new(false));
                    Start::Ready(n)
                }
                GzHead::Partial => Start::NeedMore,
                GzHead::NotGzip => Start::Wrong,
            },
            Codec::Deflate => {
                let (Some(&a), Some(&b)) = (self.head.first(), self.head.get(1)) else {
                    return Start::NeedMore;
                };
                let zlib = a & 0x0f == 8 && (u16::from(a) << 8 | u16::from(b)) % 31 == 0;
                self.inflater = Some(Decompress::new(zlib));
                Start::Ready(0)
            }
        }
    }

    /// Ok(false) when `out` wants no more; Err on corrupt data.
    fn inflate(&mut self, mut input: &[u8], out: &mut dyn FnMut(&[u8]) -> bool) -> Result<bool, ()> {
        let Some(mut inflater) = self.inflater.take() else {
            return Ok(true);
        };
        let mut buf = [0u8; SCRATCH];
        let result = loop {
            let (in0, out0) = (inflater.total_in(), inflater.total_out());
            let status = inflater.decompress(input, &mut buf, FlushDecompress::None);
            let used = usize::try_from(inflater.total_in() - in0).unwrap_or(input.len()).min(input.len());
            let made = usize::try_from(inflater.total_out() - out0).unwrap_or(0).min(buf.len());
            input = input.get(used..).unwrap_or_default();
            // Whatever was decoded before any damage goes out first, so the
            // output does not depend on how the input was cut.
            if made > 0 && !self.emit(buf.get(..made).unwrap_or_default(), out) {
                break Ok(false);
            }
            match status {
                Err(_) => break Err(()),
                Ok(Status::StreamEnd) => {
                    self.mode = Mode::Done;
                    break Ok(self.release(out));
                }
                Ok(_) => {}
            }
            // No progress either way, or all input used with room to spare:
            // the inflater wants more input.
            if (used == 0 && made == 0) || (input.is_empty() && made < buf.len()) {
                break Ok(true);
            }
        };
        if self.mode == Mode::Decoding {
            self.inflater = Some(inflater);
        }
        result
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
/// undone first. Like libhtp, a token counts when it merely contains `gzip`
/// or `deflate` (`x-gzip`, stray control bytes and the like).
pub(crate) fn codecs_for(value: &[u8]) -> Result<Vec<Codec>, TooMany> {
    let mut codecs = Vec::new();
    for token in value.split(|&b| b == b',') {
        let token = super::headers::without_nul(token);
        let codec = if contains_ci(&token, b"gzip") {
            Codec::Gzip
        } else if contains_ci(&token, b"deflate") {
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
        let mut d = Decoder::new(codecs, limit, 100, 1024);
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
        let bomb = gzip(&vec![0u8; 8 << 20]);
        let (out, o) = decode_in_pieces(&[Codec::Gzip], &bomb, 4096, 1 << 20);
        assert_eq!(out.len(), 1 << 20);
        assert!(o.bomb);
    }

    #[test]
    fn undecodable_streams_pass_through_whole_in_any_chunking() {
        let garbage = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xffgarbage!";
        for piece in [1, 5, 100] {
            let (out, o) = decode_in_pieces(&[Codec::Gzip], garbage, piece, 1 << 20);
            assert!(o.failed);
            assert_eq!(out, garbage);
        }
        // Damage after some output: what was decoded stays, the rest is dropped.
        let mut damaged = gzip(&b"abcdefgh".repeat(1000));
        let n = damaged.len();
        damaged.truncate(n / 2);
        damaged.extend_from_slice(&[0xff; 64]);
        let results: Vec<_> =
            [1, 7, 4096].iter().map(|&p| decode_in_pieces(&[Codec::Gzip], &damaged, p, 1 << 20)).collect();
        assert!(results.iter().all(|r| r == &results[0]));
    }

    #[test]
    fn a_layer_that_was_never_applied_passes_through() {
        let text = b"plain text under one gzip layer".repeat(10);
        for piece in [1, 9, 4096] {
            let (out, o) = decode_in_pieces(&[Codec::Gzip, Codec::Gzip], &gzip(&text), piece, 1 << 20);
            assert!(o.failed);
            assert_eq!(out, text);
        }
    }

    /// The request body of suricata-verify http-encoding-gzip-uncompressed, sent with
    /// `Content-Encoding: gzip`: read as raw deflate it gives bytes of garbage, then an error.
    const MISLABELLED_JSON: &[u8] = br#"{"sdk_version":11026,"app_package":"com.xcm.huasheng","app_version":"1.7.4","device_id":"350672920106648"}"#;

    #[test]
    fn text_labelled_gzip_passes_through_without_the_retrys_garbage() {
        for piece in [1, 2, 7, 1000] {
            let (out, o) = decode_in_pieces(&[Codec::Gzip], MISLABELLED_JSON, piece, 1 << 20);
            assert!(o.failed);
            assert_eq!(out, MISLABELLED_JSON, "piece {piece}");
        }
    }

    #[test]
    fn each_label_retries_the_other_codec() {
        let text = b"mislabelled but compressed ".repeat(40);
        let mut r = DeflateEncoder::new(Vec::new(), Compression::default());
        r.write_all(&text).unwrap();
        let raw = r.finish().unwrap();
        for piece in [1, 5, 4096] {
            // Raw deflate said to be gzip, gzip said to be deflate: both decode, no anomaly.
            assert_eq!(decode_in_pieces(&[Codec::Gzip], &raw, piece, 1 << 20), (text.clone(), Outcome::default()));
            assert_eq!(
                decode_in_pieces(&[Codec::Deflate], &gzip(&text), piece, 1 << 20),
                (text.clone(), Outcome::default())
            );
        }
    }

    #[test]
    fn a_retry_is_held_until_the_body_ends() {
        let text = b"0123456789".repeat(30);
        let mut r = DeflateEncoder::new(Vec::new(), Compression::default());
        r.write_all(&text).unwrap();
        let mut raw = r.finish().unwrap();
        // No final block: the stream never ends by itself.
        raw.truncate(raw.len() - 4);
        let mut d = Decoder::new(&[Codec::Gzip], 1 << 20, 100, 1024);
        let mut out = Vec::new();
        d.feed(&raw, &mut |b| out.extend_from_slice(b));
        assert!(out.is_empty(), "held while on trial");
        d.finish(&mut |b| out.extend_from_slice(b));
        assert!(!out.is_empty() && text.starts_with(&out), "{}", out.len());
        // Nothing is held twice.
        let n = out.len();
        d.finish(&mut |b| out.extend_from_slice(b));
        assert_eq!(out.len(), n);

        // Past TRIAL_HOLD the retry is trusted without waiting for the end.
        let big = (0..20_000u32).flat_map(|i| i.to_le_bytes()).collect::<Vec<u8>>();
        let mut r = DeflateEncoder::new(Vec::new(), Compression::default());
        r.write_all(&big).unwrap();
        let raw = r.finish().unwrap();
        let mut d = Decoder::new(&[Codec::Gzip], 1 << 20, 100, 1024);
        let mut out = Vec::new();
        d.feed(&raw[..raw.len() / 2], &mut |b| out.extend_from_slice(b));
        assert!(out.len() >= TRIAL_HOLD && big.starts_with(&out));
    }

    #[test]
    fn content_encoding_values() {
        assert_eq!(codecs_for(b"gzip, deflate"), Ok(vec![Codec::Deflate, Codec::Gzip]));
        assert_eq!(codecs_for(b"identity"), Ok(vec![]));
        assert_eq!(codecs_for(b"\rx_gzip"), Ok(vec![Codec::Gzip]));
        assert_eq!(codecs_for(b"gzip,gzip,gzip,gzip"), Err(TooMany));
    }
}
