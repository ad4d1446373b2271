//! Sticky-buffer transforms (`dotprefix`, `to_lowercase`, `xor`, `pcrexform`,
//! `from_base64`, ...): compiling them from their rule options and applying a
//! chain of them to a buffer before the keywords after them inspect it.
//!
//! The byte-level behaviour follows Suricata 8's implementations rather than
//! the prose of its documentation where the two differ, since rules are
//! written against what Suricata does:
//! - every transform except `pcrexform` leaves an empty buffer empty (so
//!   `to_md5` of an empty buffer is empty, not the MD5 of nothing);
//! - `compress_whitespace` keeps the first whitespace byte of each run
//!   (a tab stays a tab), it does not turn the run into a space;
//! - `strip_whitespace` removes ASCII whitespace as Rust and Suricata's Rust
//!   code define it (space, \t, \n, \x0C, \r): a vertical tab is kept;
//! - `pcrexform` and `from_base64` leave the buffer as it was when they
//!   cannot produce anything (no match, nothing decoded).

use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

use md5::Md5;
use pcre2::bytes::{CaptureLocations, Regex, RegexBuilder};
use sha1::Sha1;
use sha2::{Digest, Sha256};
use vigil_rules::Value;

/// PCRE2 match and depth limits, the same as the `pcre` keyword's (Suricata
/// sets its default limits on the pcrexform match context too).
const PCRE_MATCH_LIMIT: u32 = 3500;
const PCRE_DEPTH_LIMIT: u32 = 1500;

/// Suricata rejects `from_base64` offsets and byte counts above this.
const BASE64_MAX_PARAM: u64 = u16::MAX as u64;

/// One transform, compiled from its rule keyword.
///
/// Equality and hashing follow the rule text (the pcrexform pattern, the xor
/// key, the base64 options), so a chain can key the grouping of buffers that
/// are computed once and shared by every rule using the same chain.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Transform {
    DotPrefix,
    ToLowercase,
    ToUppercase,
    StripWhitespace,
    CompressWhitespace,
    UrlDecode,
    /// The key bytes, applied repeatedly over the buffer.
    Xor(Vec<u8>),
    ToMd5,
    ToSha1,
    ToSha256,
    HeaderLowercase,
    StripPseudoHeaders,
    PcreXform(PcreXform),
    FromBase64(FromBase64),
    /// `luaxform`: a Lua script's `transform`.
    Lua(crate::lua::LuaXform),
    /// `domain`: the registrable domain (`example.co.uk` of
    /// `www.example.co.uk`), by the public suffix list; empty without one.
    Domain,
    /// `tld`: the registrable domain's public suffix (`co.uk`).
    Tld,
    /// `gunzip`: the gzip stream's first bytes, up to this many.
    Gunzip(u32),
    /// `zlib_deflate`: the zlib stream's first bytes, up to this many.
    ZlibDeflate(u32),
}

/// What `gunzip` and `zlib_deflate` keep when the rule says nothing.
const DECOMPRESS_DEFAULT: u32 = 1024;
/// The largest `max-size` Suricata accepts.
const DECOMPRESS_MAX: u64 = 16 << 20;

/// A compiled `pcrexform` expression: the buffer becomes its single capture.
/// Clones share the compiled expression.
#[derive(Clone)]
pub struct PcreXform {
    pattern: String,
    /// Behind a trait object so that `Transform`, a hash key, shows clippy's
    /// `mutable_key_type` no interior mutability: equality and hashing only
    /// look at `pattern`.
    compiled: Arc<dyn FirstCapture>,
}

trait FirstCapture: Send + Sync {
    /// Group 1 of the first match, or None when there is none.
    fn first_capture<'s>(&self, input: &'s [u8]) -> Option<&'s [u8]>;
    #[cfg(test)]
    fn idle_slots(&self) -> usize;
}

struct CompiledXform {
    re: Regex,
    /// Capture slots kept between calls so a warm search allocates nothing;
    /// one per thread that has been inside a search at the same time.
    slots: Mutex<Vec<CaptureLocations>>,
}

/// `from_base64` options; zero `offset`/`bytes` mean "not given".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct FromBase64 {
    pub mode: Base64Mode,
    /// Bytes skipped before decoding.
    pub offset: u32,
    /// Bytes decoded after the offset.
    pub bytes: u32,
}

/// How `from_base64` treats characters outside the base64 alphabet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Base64Mode {
    /// Decoding stops at the first character outside the alphabet.
    #[default]
    Rfc4648,
    /// Characters outside the alphabet are skipped (MIME, embedded spaces).
    Rfc2045,
    /// Any character outside the alphabet, or bad padding, fails the decode.
    Strict,
}

/// The two buffers a chain ping-pongs between; kept by the caller (one per
/// worker) so that a warm chain allocates nothing.
#[derive(Debug, Default)]
pub struct TransformScratch {
    a: Vec<u8>,
    b: Vec<u8>,
}

impl Transform {
    /// From a rule option: `name` is the canonical keyword name and `value`
    /// the option's parsed value. Err(reason) for transforms vigil does not
    /// implement and for bad values.
    pub fn compile(name: &str, value: &Value) -> Result<Transform, String> {
        let no_value = |t: Transform| match value {
            Value::None => Ok(t),
            _ => Err(format!("{name} takes no value")),
        };
        match name {
            "dotprefix" => no_value(Transform::DotPrefix),
            "to_lowercase" => no_value(Transform::ToLowercase),
            "to_uppercase" => no_value(Transform::ToUppercase),
            "strip_whitespace" => no_value(Transform::StripWhitespace),
            "compress_whitespace" => no_value(Transform::CompressWhitespace),
            "url_decode" => no_value(Transform::UrlDecode),
            "to_md5" => no_value(Transform::ToMd5),
            "to_sha1" => no_value(Transform::ToSha1),
            "to_sha256" => no_value(Transform::ToSha256),
            "header_lowercase" => no_value(Transform::HeaderLowercase),
            "strip_pseudo_headers" => no_value(Transform::StripPseudoHeaders),
            "xor" => match value {
                Value::Str(key) | Value::Text(key) => parse_hex_key(key).map(Transform::Xor),
                _ => Err("xor needs a hex key".to_string()),
            },
            "pcrexform" => match value {
                Value::Str(pattern) | Value::Text(pattern) => PcreXform::new(pattern).map(Transform::PcreXform),
                _ => Err("pcrexform needs a regular expression".to_string()),
            },
            "from_base64" => match value {
                Value::None => Ok(Transform::FromBase64(FromBase64::default())),
                Value::Text(opts) | Value::Str(opts) => FromBase64::parse(opts).map(Transform::FromBase64),
                _ => Err("from_base64: unexpected value".to_string()),
            },
            "domain" => no_value(Transform::Domain),
            "tld" => no_value(Transform::Tld),
            "luaxform" => {
                Err("luaxform needs its rule's file and the Lua settings (Transform::compile_in)".to_string())
            }
            "gunzip" | "zlib_deflate" => {
                let max = match value {
                    Value::None => DECOMPRESS_DEFAULT,
                    Value::Text(opts) | Value::Str(opts) => decompress_max(name, opts)?,
                    _ => return Err(format!("{name}: unexpected value")),
                };
                Ok(if name == "gunzip" { Transform::Gunzip(max) } else { Transform::ZlibDeflate(max) })
            }
            // Not a Suricata 8 transform (newer Suricata only).
            "subslice" => Err("subslice is not supported".to_string()),
            _ => Err(format!("unknown transform {name}")),
        }
    }

    /// [`Transform::compile`] for a rule of file `rule_file`, with what Lua
    /// transforms need (their script is found by the rule path).
    pub fn compile_in(
        name: &str,
        value: &Value,
        rule_file: &str,
        lua: &crate::lua::LuaSettings,
    ) -> Result<Transform, String> {
        match (name, value) {
            ("luaxform", Value::Text(spec) | Value::Str(spec)) => {
                crate::lua::LuaXform::load(spec, rule_file, lua).map(Transform::Lua)
            }
            ("luaxform", _) => Err("luaxform needs a script".to_string()),
            _ => Transform::compile(name, value),
        }
    }

    /// The rule keyword this transform was compiled from.
    pub fn name(&self) -> &'static str {
        match self {
            Transform::DotPrefix => "dotprefix",
            Transform::ToLowercase => "to_lowercase",
            Transform::ToUppercase => "to_uppercase",
            Transform::StripWhitespace => "strip_whitespace",
            Transform::CompressWhitespace => "compress_whitespace",
            Transform::UrlDecode => "url_decode",
            Transform::Xor(_) => "xor",
            Transform::ToMd5 => "to_md5",
            Transform::ToSha1 => "to_sha1",
            Transform::ToSha256 => "to_sha256",
            Transform::HeaderLowercase => "header_lowercase",
            Transform::StripPseudoHeaders => "strip_pseudo_headers",
            Transform::PcreXform(_) => "pcrexform",
            Transform::FromBase64(_) => "from_base64",
            Transform::Lua(_) => "luaxform",
            Transform::Domain => "domain",
            Transform::Tld => "tld",
            Transform::Gunzip(_) => "gunzip",
            Transform::ZlibDeflate(_) => "zlib_deflate",
        }
    }

    /// Whether a content pattern can ever match this transform's output
    /// (Suricata refuses such rules at load time): no whitespace after
    /// `strip_whitespace`, no whitespace run after `compress_whitespace`, no
    /// upper case after `to_lowercase`, no lower case after `to_uppercase`.
    pub fn accepts_content(&self, pattern: &[u8]) -> bool {
        match self {
            Transform::StripWhitespace => !pattern.iter().any(u8::is_ascii_whitespace),
            Transform::CompressWhitespace => {
                !pattern.windows(2).any(|w| is_compress_space(w[0]) && is_compress_space(w[1]))
            }
            Transform::ToLowercase => !pattern.iter().any(u8::is_ascii_uppercase),
            Transform::ToUppercase => !pattern.iter().any(u8::is_ascii_lowercase),
            _ => true,
        }
    }

    /// Applies the transform to `input`, writing the result to `out` (cleared first).
    pub fn apply(&self, input: &[u8], out: &mut Vec<u8>) {
        out.clear();
        if input.is_empty() && !matches!(self, Transform::PcreXform(_) | Transform::Lua(_)) {
            return;
        }
        match self {
            Transform::DotPrefix => {
                out.reserve(input.len() + 1);
                out.push(b'.');
                out.extend_from_slice(input);
            }
            Transform::ToLowercase => out.extend(input.iter().map(u8::to_ascii_lowercase)),
            Transform::ToUppercase => out.extend(input.iter().map(u8::to_ascii_uppercase)),
            Transform::StripWhitespace => out.extend(input.iter().copied().filter(|c| !c.is_ascii_whitespace())),
            Transform::CompressWhitespace => compress_whitespace(input, out),
            Transform::UrlDecode => url_decode(input, out),
            Transform::Xor(key) => {
                if key.is_empty() {
                    out.extend_from_slice(input);
                } else {
                    out.extend(input.iter().zip(key.iter().cycle()).map(|(b, k)| b ^ k));
                }
            }
            Transform::ToMd5 => out.extend_from_slice(&Md5::digest(input)),
            Transform::ToSha1 => out.extend_from_slice(&Sha1::digest(input)),
            Transform::ToSha256 => out.extend_from_slice(&Sha256::digest(input)),
            Transform::HeaderLowercase => header_lowercase(input, out),
            Transform::StripPseudoHeaders => {
                for line in input.split_inclusive(|&c| c == b'\n') {
                    if line.first() != Some(&b':') {
                        out.extend_from_slice(line);
                    }
                }
            }
            Transform::PcreXform(x) => x.apply(input, out),
            Transform::FromBase64(b) => b.apply(input, out),
            Transform::Lua(l) => l.apply(input, out),
            // A name with no registrable domain (`localhost`, `co.uk`) gives nothing.
            Transform::Domain => out.extend_from_slice(psl::domain(input).map_or(&[][..], |d| d.as_bytes())),
            Transform::Tld => {
                if let Some(d) = psl::domain(input) {
                    out.extend_from_slice(d.suffix().as_bytes());
                }
            }
            Transform::Gunzip(max) => decompress(flate2::bufread::GzDecoder::new(input), *max, out),
            Transform::ZlibDeflate(max) => decompress(flate2::bufread::ZlibDecoder::new(input), *max, out),
        }
    }
}

/// `gunzip` and `zlib_deflate` options as Suricata 8.0.6 reads them:
/// comma-separated `key value` pairs split on one space, the only key
/// `max-size`, a decimal number with an optional kb/kib/mb/mib/gb/gib unit
/// (what follows the number and unit is not read), neither 0 nor above 16 MiB.
fn decompress_max(name: &str, opts: &str) -> Result<u32, String> {
    let mut max = None;
    for item in opts.split(',') {
        if item.is_empty() {
            continue;
        }
        let (key, value) = match item.split(' ').collect::<Vec<_>>()[..] {
            [k, v] => (k, v),
            _ => return Err(format!("{name}: bad key value '{item}' (max-size <bytes>)")),
        };
        if key != "max-size" {
            return Err(format!("{name}: unknown option '{key}'"));
        }
        if max.is_some() {
            return Err(format!("{name}: multiple max-size values"));
        }
        let digits = value.bytes().take_while(u8::is_ascii_digit).count();
        let n: u64 = value[..digits].parse().unwrap_or(0);
        let unit = value[digits..].to_ascii_lowercase();
        let scale =
            [("kib", 1 << 10), ("kb", 1 << 10), ("mib", 1 << 20), ("mb", 1 << 20), ("gib", 1 << 30), ("gb", 1 << 30)]
                .iter()
                .find(|(u, _)| unit.starts_with(u))
                .map_or(1, |(_, s)| *s);
        let bytes = n.saturating_mul(scale);
        if bytes == 0 {
            return Err(format!("{name}: max-size 0 would always produce an empty buffer"));
        }
        if bytes > DECOMPRESS_MAX {
            return Err(format!("{name}: max-size {bytes} is above the limit of {DECOMPRESS_MAX}"));
        }
        max = Some(bytes as u32);
    }
    Ok(max.unwrap_or(DECOMPRESS_DEFAULT))
}

/// One read of the decoder into a buffer of `max` bytes, as Suricata does:
/// what it gives, cut at `max`; nothing when the stream is not valid.
fn decompress(mut decoder: impl std::io::Read, max: u32, out: &mut Vec<u8>) {
    out.resize(max as usize, 0);
    let n = decoder.read(out).unwrap_or(0);
    out.truncate(n);
}

/// Applies a chain in order; returns the final bytes (borrowing `input` when
/// the chain is empty). Each step reads one scratch buffer and writes the
/// other, so once they have grown no call allocates.
pub fn apply_chain<'a>(chain: &[Transform], input: &'a [u8], scratch: &'a mut TransformScratch) -> &'a [u8] {
    let Some((first, rest)) = chain.split_first() else {
        return input;
    };
    let TransformScratch { a, b } = scratch;
    first.apply(input, a);
    let (mut src, mut dst) = (a, b);
    for t in rest {
        t.apply(src, dst);
        std::mem::swap(&mut src, &mut dst);
    }
    let done: &'a Vec<u8> = src;
    done
}

/// The bytes `compress_whitespace` treats as whitespace (C's isspace()).
fn is_compress_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\x0B' | b'\x0C' | b'\r')
}

fn compress_whitespace(input: &[u8], out: &mut Vec<u8>) {
    let mut in_run = false;
    for &c in input {
        if !is_compress_space(c) {
            out.push(c);
            in_run = false;
        } else if !in_run {
            out.push(c);
            in_run = true;
        }
    }
}

fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// `%HH` and `+`. A broken escape is kept as written, and the byte that broke
/// it is copied as is (not decoded, even if it is `%` or `+`), as Suricata does.
fn url_decode(input: &[u8], out: &mut Vec<u8>) {
    // The pending escape: None outside one, Some(None) after '%', Some(Some(h)) after '%h'.
    let mut pending: Option<Option<u8>> = None;
    for &c in input {
        match pending {
            None if c == b'%' => pending = Some(None),
            None => out.push(if c == b'+' { b' ' } else { c }),
            Some(first) => match (first, hex_value(c)) {
                (None, Some(_)) => pending = Some(Some(c)),
                (Some(h), Some(lo)) => {
                    out.push((hex_value(h).unwrap_or(0) << 4) | lo);
                    pending = None;
                }
                (first, None) => {
                    out.push(b'%');
                    out.extend(first);
                    out.push(c);
                    pending = None;
                }
            },
        }
    }
    if let Some(first) = pending {
        out.push(b'%');
        out.extend(first);
    }
}

/// Lower-cases each line up to its first ':' (the header name).
fn header_lowercase(input: &[u8], out: &mut Vec<u8>) {
    let mut in_value = false;
    for &c in input {
        if in_value {
            out.push(c);
            in_value = c != b'\n';
        } else {
            out.push(c.to_ascii_lowercase());
            in_value = c == b':';
        }
    }
}

/// The rules crate has already checked the key; checked again because
/// `compile` is public.
fn parse_hex_key(key: &str) -> Result<Vec<u8>, String> {
    let digits = key.as_bytes();
    if digits.is_empty() || !digits.len().is_multiple_of(2) {
        return Err(format!("xor key must be an even number of hex digits, got \"{key}\""));
    }
    digits
        .chunks_exact(2)
        .map(|pair| match (hex_value(pair[0]), hex_value(pair[1])) {
            (Some(hi), Some(lo)) => Ok((hi << 4) | lo),
            _ => Err(format!("xor key must be hex digits, got \"{key}\"")),
        })
        .collect()
}

impl PcreXform {
    /// Compiles `pattern` as Suricata does: no delimiters, no flags, exactly one capture group.
    pub fn new(pattern: &str) -> Result<PcreXform, String> {
        if pattern.is_empty() {
            return Err("pcrexform needs a regular expression".to_string());
        }
        let mut full = format!("(*LIMIT_MATCH={PCRE_MATCH_LIMIT})(*LIMIT_DEPTH={PCRE_DEPTH_LIMIT})");
        // Start-of-pattern items such as (*UTF) must stay ahead of everything else.
        let mut rest = pattern;
        while let Some(end) = rest.strip_prefix("(*").and_then(|r| r.find(')')) {
            full.push_str(&rest[..end + 3]);
            rest = &rest[end + 3..];
        }
        full.push_str(rest);
        let re = RegexBuilder::new().jit_if_available(true).build(&full).map_err(|e| format!("pcrexform: {e}"))?;
        // captures_len counts the whole match as group 0.
        let groups = re.captures_len().saturating_sub(1);
        if groups != 1 {
            return Err(format!("pcrexform needs exactly one capture group, found {groups}"));
        }
        let compiled = Arc::new(CompiledXform { re, slots: Mutex::new(Vec::new()) });
        Ok(PcreXform { pattern: pattern.to_string(), compiled })
    }

    /// The expression as written in the rule.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    fn apply(&self, input: &[u8], out: &mut Vec<u8>) {
        out.extend_from_slice(self.compiled.first_capture(input).unwrap_or(input));
    }
}

impl FirstCapture for CompiledXform {
    fn first_capture<'s>(&self, input: &'s [u8]) -> Option<&'s [u8]> {
        // A poisoned lock only means another thread panicked mid-push/pop; the Vec is still whole.
        let slot = self.slots.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let mut locs = slot.unwrap_or_else(|| self.re.capture_locations());
        // A search stopped by a limit counts as no match.
        let capture = match self.re.captures_read(&mut locs, input) {
            Ok(Some(_)) => locs.get(1).and_then(|(s, e)| input.get(s..e)),
            _ => None,
        };
        self.slots.lock().unwrap_or_else(|e| e.into_inner()).push(locs);
        capture
    }

    #[cfg(test)]
    fn idle_slots(&self) -> usize {
        self.slots.lock().map_or(0, |s| s.len())
    }
}

impl std::fmt::Debug for PcreXform {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("PcreXform").field(&self.pattern).finish()
    }
}

impl PartialEq for PcreXform {
    fn eq(&self, other: &Self) -> bool {
        self.pattern == other.pattern
    }
}

impl Eq for PcreXform {}

impl Hash for PcreXform {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.pattern.hash(state);
    }
}

impl FromBase64 {
    /// `[bytes <n>] [, offset <n>] [, mode rfc4648|rfc2045|strict]`, in any
    /// order, each at most once. Suricata also takes byte_extract variables
    /// for bytes and offset; vigil does not.
    pub fn parse(text: &str) -> Result<FromBase64, String> {
        let mut opts = FromBase64::default();
        let text = text.trim();
        if text.is_empty() {
            return Ok(opts);
        }
        let (mut seen_mode, mut seen_offset, mut seen_bytes) = (false, false, false);
        for (i, item) in text.split(',').enumerate() {
            if i >= 3 {
                return Err("from_base64 takes at most 3 options".to_string());
            }
            let item = item.trim();
            let Some((name, val)) = item.split_once(|c: char| c.is_ascii_whitespace()) else {
                return Err(format!("from_base64: option \"{item}\" needs a value"));
            };
            let val = val.trim();
            let seen = match name {
                "mode" => &mut seen_mode,
                "offset" => &mut seen_offset,
                "bytes" => &mut seen_bytes,
                _ => return Err(format!("from_base64: unknown option \"{name}\"")),
            };
            if std::mem::replace(seen, true) {
                return Err(format!("from_base64: {name} given twice"));
            }
            match name {
                "mode" => {
                    opts.mode = match val {
                        "rfc4648" => Base64Mode::Rfc4648,
                        "rfc2045" => Base64Mode::Rfc2045,
                        "strict" => Base64Mode::Strict,
                        _ => return Err(format!("from_base64: invalid mode \"{val}\"")),
                    }
                }
                _ => {
                    let n = parse_base64_number(name, val)?;
                    if name == "offset" {
                        opts.offset = n;
                    } else {
                        opts.bytes = n;
                    }
                }
            }
        }
        Ok(opts)
    }

    fn apply(&self, input: &[u8], out: &mut Vec<u8>) {
        let mut data = input;
        // Suricata leaves the buffer alone when the offset or byte count does not
        // fit strictly inside it (a byte count equal to the remaining length included).
        if self.offset > 0 {
            match data.get(self.offset as usize..) {
                Some(rest) if !rest.is_empty() => data = rest,
                _ => return out.extend_from_slice(input),
            }
        }
        if self.bytes > 0 {
            match data.get(..self.bytes as usize) {
                Some(head) if head.len() < data.len() => data = head,
                _ => return out.extend_from_slice(input),
            }
        }
        let ok = match self.mode {
            Base64Mode::Rfc4648 => decode_rfc4648(data, out),
            Base64Mode::Rfc2045 => decode_rfc2045(data, out),
            Base64Mode::Strict => decode_strict(data, out),
        };
        if !ok || out.is_empty() {
            out.clear();
            out.extend_from_slice(input);
        }
    }
}

fn parse_base64_number(name: &str, val: &str) -> Result<u32, String> {
    match val.parse::<u64>() {
        Ok(n) if n <= BASE64_MAX_PARAM => Ok(n as u32),
        Ok(n) => Err(format!("from_base64: {name} {n} is above {BASE64_MAX_PARAM}")),
        Err(_) => Err(format!("from_base64: {name} must be a number, got \"{val}\"")),
    }
}

/// A character's value in the standard base64 alphabet.
pub(crate) fn base64_value(c: u8) -> Option<u8> {
    match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

/// Decodes one group of four (alphabet characters or '='): '=' in the third
/// place ends the group after one byte whatever the fourth holds, as in
/// Suricata. False when either of the first two is '='.
fn decode_quad(quad: [u8; 4], out: &mut Vec<u8>) -> bool {
    let (Some(a), Some(b)) = (base64_value(quad[0]), base64_value(quad[1])) else {
        return false;
    };
    out.push((a << 2) | (b >> 4));
    let Some(c) = base64_value(quad[2]) else {
        return quad[2] == b'=';
    };
    out.push((b << 4) | (c >> 2));
    if quad[3] == b'=' {
        return true;
    }
    let Some(d) = base64_value(quad[3]) else { return false };
    out.push((c << 6) | d);
    true
}

/// Stops at the first byte outside the alphabet (and '='), decoding the last
/// partial group as if padded. Shared with `base64_decode`, which Suricata
/// decodes the same way.
pub(crate) fn decode_rfc4648(data: &[u8], out: &mut Vec<u8>) -> bool {
    let mut quad = [b'='; 4];
    let mut n = 0;
    for &c in data {
        if base64_value(c).is_none() && c != b'=' {
            break;
        }
        quad[n] = c;
        n += 1;
        if n == 4 {
            if !decode_quad(quad, out) {
                return false;
            }
            n = 0;
        }
    }
    if n > 0 {
        quad[n..].fill(b'=');
        return decode_quad(quad, out);
    }
    true
}

/// Skips bytes outside the alphabet; a trailing partial group is dropped.
fn decode_rfc2045(data: &[u8], out: &mut Vec<u8>) -> bool {
    let mut quad = [0u8; 4];
    let mut n = 0;
    for &c in data {
        if base64_value(c).is_none() && c != b'=' {
            continue;
        }
        quad[n] = c;
        n += 1;
        if n == 4 {
            if !decode_quad(quad, out) {
                return false;
            }
            n = 0;
        }
    }
    true
}

/// Canonical RFC 4648 with padding: whole groups only, '=' only at the very
/// end, and no stray bits in the last character.
fn decode_strict(data: &[u8], out: &mut Vec<u8>) -> bool {
    if !data.len().is_multiple_of(4) {
        return false;
    }
    let groups = data.len() / 4;
    for (i, group) in data.chunks_exact(4).enumerate() {
        let quad = [group[0], group[1], group[2], group[3]];
        let pad = match quad {
            [_, _, b'=', b'='] => 2,
            [_, _, _, b'='] => 1,
            _ => 0,
        };
        if pad > 0 && i + 1 != groups {
            return false;
        }
        if quad[..4 - pad].iter().any(|&c| base64_value(c).is_none()) {
            return false;
        }
        let stray = match pad {
            2 => base64_value(quad[1]).is_some_and(|v| v & 0x0F != 0),
            1 => base64_value(quad[2]).is_some_and(|v| v & 0x03 != 0),
            _ => false,
        };
        if stray || !decode_quad(quad, out) {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(name: &str) -> Transform {
        Transform::compile(name, &Value::None).unwrap()
    }

    fn with(name: &str, value: &str) -> Transform {
        Transform::compile(name, &Value::Str(value.to_string())).unwrap()
    }

    fn run(tr: &Transform, input: &[u8]) -> Vec<u8> {
        let mut out = vec![0xAA; 3]; // stale bytes must be cleared
        tr.apply(input, &mut out);
        out
    }

    fn unhex(s: &str) -> Vec<u8> {
        parse_hex_key(s).unwrap()
    }

    fn b64(opts: &str, input: &[u8]) -> Vec<u8> {
        let value = if opts.is_empty() { Value::None } else { Value::Text(opts.to_string()) };
        run(&Transform::compile("from_base64", &value).unwrap(), input)
    }

    #[test]
    fn dotprefix() {
        assert_eq!(run(&t("dotprefix"), b"hello.google.com"), b".hello.google.com");
        assert_eq!(run(&t("dotprefix"), b"example.com"), b".example.com");
        assert_eq!(run(&t("dotprefix"), b""), b"");
    }

    #[test]
    fn case_change() {
        assert_eq!(run(&t("to_lowercase"), b" A b C D \xC4"), b" a b c d \xC4");
        assert_eq!(run(&t("to_uppercase"), b" A b C D \xE4"), b" A B C D \xE4");
    }

    #[test]
    fn strip_whitespace() {
        let tr = t("strip_whitespace");
        assert_eq!(run(&tr, b" A B C D "), b"ABCD");
        assert_eq!(run(&tr, b"EFGH"), b"EFGH");
        assert_eq!(run(&tr, b"I  \t J\r\n\x0C"), b"IJ");
        assert_eq!(run(&tr, b"window.navigate ("), b"window.navigate(");
        // Suricata 8's Rust implementation keeps the vertical tab.
        assert_eq!(run(&tr, b"a\x0Bb"), b"a\x0Bb");
    }

    #[test]
    fn compress_whitespace() {
        let tr = t("compress_whitespace");
        assert_eq!(run(&tr, b" A B C D "), b" A B C D ");
        assert_eq!(run(&tr, b"EFGH"), b"EFGH");
        assert_eq!(run(&tr, b"I  \t J"), b"I J");
        assert_eq!(run(&tr, b"a\t\x0B\r\nb  "), b"a\tb ");
    }

    #[test]
    fn url_decode() {
        let tr = t("url_decode");
        assert_eq!(run(&tr, b"Suricata%20is+%27%61wesome%21%27%25%30%30%ZZ%4"), b"Suricata is 'awesome!'%00%ZZ%4");
        assert_eq!(run(&tr, b"%"), b"%");
        assert_eq!(run(&tr, b"%4"), b"%4");
        assert_eq!(run(&tr, b"%4g+"), b"%4g ");
        assert_eq!(run(&tr, b"%%41"), b"%%41");
        assert_eq!(run(&tr, b"%+"), b"%+");
        assert_eq!(run(&tr, b"%c3%A9%fF"), b"\xC3\xA9\xFF");
    }

    #[test]
    fn xor() {
        // The documentation's key; Suricata's own vector.
        assert_eq!(run(&with("xor", "0a0DC8ff"), b"example.com"), b"ou\xa9\x92za\xad\xd1ib\xa5");
        let key = with("xor", "0d0ac8ff");
        let mut encoded = Vec::new();
        key.apply(b"password=", &mut encoded);
        assert_eq!(encoded, b"\x7d\x6b\xbb\x8c\x7a\x65\xba\x9b\x30");
        assert_eq!(run(&key, &encoded), b"password=");
        assert!(Transform::compile("xor", &Value::Str("abc".into())).unwrap_err().contains("even"));
        assert!(Transform::compile("xor", &Value::Str("zz".into())).is_err());
        assert!(Transform::compile("xor", &Value::Str(String::new())).is_err());
        assert!(Transform::compile("xor", &Value::None).is_err());
    }

    #[test]
    fn hashes() {
        assert_eq!(run(&t("to_md5"), b"abc"), unhex("900150983cd24fb0d6963f7d28e17f72"));
        assert_eq!(run(&t("to_sha1"), b"abc"), unhex("a9993e364706816aba3e25717850c26c9cd0d89d"));
        assert_eq!(
            run(&t("to_sha256"), b"abc"),
            unhex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        );
        // Suricata's own vectors.
        assert_eq!(run(&t("to_md5"), b" A B C D "), unhex("e059f830436958b645828cc233c24713"));
        assert_eq!(run(&t("to_sha1"), b" A B C D "), unhex("c8dc4497f7e055f86b889052082c0c7bdcc9c889"));
        assert_eq!(
            run(&t("to_sha256"), b" A B C D "),
            unhex("d6bf7d8d6953024d0d845c999bae93ccac68eaab9ac977d0fd306af59a3de43a")
        );
    }

    #[test]
    fn hashes_leave_empty_buffer_empty() {
        // Suricata skips transforms on an empty buffer: no e3b0c442... for sha256("").
        for name in ["to_md5", "to_sha1", "to_sha256"] {
            assert_eq!(run(&t(name), b""), b"", "{name}");
        }
    }

    #[test]
    fn header_lowercase() {
        let tr = t("header_lowercase");
        assert_eq!(run(&tr, b"Header1: Value1\nheader2:Value2\n"), b"header1: Value1\nheader2:Value2\n");
        assert_eq!(
            run(&tr, b"Host: A.COM\r\nUser-Agent: X:Y\r\nAuthorization: B\r\n\r\n"),
            b"host: A.COM\r\nuser-agent: X:Y\r\nauthorization: B\r\n\r\n"
        );
        assert_eq!(run(&tr, b"NoColon\r\nX: Y"), b"nocolon\r\nx: Y");
    }

    #[test]
    fn strip_pseudo_headers() {
        let tr = t("strip_pseudo_headers");
        assert_eq!(run(&tr, b"Header1: Value1\n:method:get\nheader2:Value2\n"), b"Header1: Value1\nheader2:Value2\n");
        assert_eq!(run(&tr, b":method:get"), b"");
        assert_eq!(run(&tr, b"Header1: Value1\n:method:get"), b"Header1: Value1\n");
        assert_eq!(run(&tr, b":method:get\nheader2:Value2"), b"header2:Value2");
        assert_eq!(run(&tr, b"\r\n:authority\r\n:path\r\nUser-Agent\r\n\r\n"), b"\r\nUser-Agent\r\n\r\n");
    }

    #[test]
    fn pcrexform() {
        let tr = with("pcrexform", r"[a-zA-Z]+\s+(.*)\s+HTTP");
        assert_eq!(run(&tr, b"GET /dropper.php HTTP/1.1"), b"/dropper.php");
        // No match: the buffer is left as it was.
        assert_eq!(run(&tr, b"nothing to see"), b"nothing to see");
        let tld = with("pcrexform", r"\.([^\.]+)$");
        assert_eq!(run(&tld, b"www.example.org"), b"org");
        // Group 1 unset in the matching alternative: unchanged.
        let alt = with("pcrexform", "x|(y)");
        assert_eq!(run(&alt, b"axb"), b"axb");
        assert_eq!(run(&alt, b"ayb"), b"y");
        // Warm calls reuse one capture slot.
        for _ in 0..3 {
            assert_eq!(run(&tld, b"a.b"), b"b");
        }
        if let Transform::PcreXform(x) = &tld {
            assert_eq!(x.compiled.idle_slots(), 1);
            assert_eq!(x.pattern(), r"\.([^\.]+)$");
        }
    }

    #[test]
    fn pcrexform_rejects() {
        let err = |p: &str| Transform::compile("pcrexform", &Value::Str(p.to_string())).unwrap_err();
        assert!(err("[").contains("pcrexform"));
        assert!(err("abc").contains("found 0"));
        assert!(err("(a)(b)").contains("found 2"));
        assert!(err("").contains("needs"));
        assert!(Transform::compile("pcrexform", &Value::None).is_err());
    }

    #[test]
    fn pcrexform_hostile_input_hits_limit_not_hang() {
        let tr = with("pcrexform", "^(a+)+$");
        let mut input = vec![b'a'; 40];
        input.push(b'b');
        assert_eq!(run(&tr, &input), input);
    }

    #[test]
    fn from_base64_suricata_vectors() {
        assert_eq!(b64("", b"VGhpcyBpcyBTdXJpY2F0YQ=="), b"This is Suricata");
        assert_eq!(b64("mode rfc2045", b"Zm 9v Ym Fy"), b"foobar");
        assert_eq!(b64("mode strict", b"This is Suricata\n"), b"This is Suricata\n");
        assert_eq!(b64("bytes 25", b"VGhpcyBpcyBTdXJpY2F0YQ=="), b"VGhpcyBpcyBTdXJpY2F0YQ==");
        assert_eq!(b64("offset 25", b"VGhpcyBpcyBTdXJpY2F0YQ=="), b"VGhpcyBpcyBTdXJpY2F0YQ==");
        assert_eq!(b64("bytes 12", b"VGhpcyBpcyBTdXJpY2F0YQ=="), b"This is S");
        assert_eq!(b64("offset 4", b"VGhpcyBpcyBTdXJpY2F0YQ=="), b"s is Suricata");
        assert_eq!(b64("mode rfc2045, bytes 15", b"SGVs bG8 gV29y bGQ="), b"Hello Wor");
        assert_eq!(
            b64("mode rfc2045", b"This is not base64-encoded"),
            [78, 24, 172, 138, 201, 232, 181, 182, 172, 123, 174, 30, 157, 202, 29]
        );
    }

    #[test]
    fn from_base64_docs_examples() {
        assert_eq!(b64("offset 6, mode rfc4648", b"/?arg=dGhpc2lzYXRlc3QK"), b"thisisatest\n");
        assert_eq!(b64("offset 6, mode rfc2045", b"/?arg=Zm 9v Ym Fy"), b"foobar");
    }

    #[test]
    fn from_base64_rfc4648_edges() {
        // Stops at the first byte outside the alphabet.
        assert_eq!(b64("", b"Zm9v YmFy"), b"foo");
        // A partial last group decodes as if padded.
        assert_eq!(b64("", b"Zm9vYg"), b"foob");
        // Nothing decodable, or a lone trailing character: unchanged.
        assert_eq!(b64("", b"!!!!"), b"!!!!");
        assert_eq!(b64("", b"Zm9vY"), b"Zm9vY");
        assert_eq!(b64("", b"=AAA"), b"=AAA");
    }

    #[test]
    fn from_base64_strict() {
        assert_eq!(b64("mode strict", b"Zm9vYmFy"), b"foobar");
        assert_eq!(b64("mode strict", b"Zm9vYg=="), b"foob");
        assert_eq!(b64("mode strict", b"Zm9vYmE="), b"fooba");
        for bad in [&b"Zm9vYg"[..], b"Zm9v YmFy", b"Zg==Zm9v", b"Zh==", b"Zm9=", b"===="] {
            assert_eq!(b64("mode strict", bad), bad);
        }
    }

    #[test]
    fn from_base64_options() {
        let parse = |s: &str| FromBase64::parse(s);
        assert_eq!(
            parse("bytes 4, offset 3933, mode strict"),
            Ok(FromBase64 { mode: Base64Mode::Strict, offset: 3933, bytes: 4 })
        );
        assert_eq!(parse("offset 3933, bytes 4"), Ok(FromBase64 { mode: Base64Mode::Rfc4648, offset: 3933, bytes: 4 }));
        assert_eq!(parse(""), Ok(FromBase64::default()));
        for bad in [
            "bytes 4, offset 3933, mode unknown",
            "bytes 4, offset 70000, mode strict",
            "bytes 4, offset 3933, mode strict, mode rfc2045",
            "mode strict, mode rfc2045",
            "bytes var",
            "offset",
            "colour blue",
            "bytes 1,",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert!(Transform::compile("from_base64", &Value::Text("mode nope".into())).is_err());
    }

    #[test]
    fn gunzip_and_zlib_deflate_keep_up_to_max_size() {
        use std::io::Write;
        let body: Vec<u8> = b"HELLO".iter().copied().cycle().take(3000).collect();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&body).unwrap();
        let gz = gz.finish().unwrap();
        let mut zl = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        zl.write_all(&body).unwrap();
        let zl = zl.finish().unwrap();
        let opt = |name: &str, o: &str| Transform::compile(name, &Value::Text(o.into())).unwrap();
        assert_eq!(run(&t("gunzip"), &gz), &body[..1024], "the default keeps 1024 bytes");
        assert_eq!(run(&opt("gunzip", "max-size 4kb"), &gz), body);
        assert_eq!(run(&opt("zlib_deflate", "max-size 10"), &zl), b"HELLOHELLO");
        assert!(run(&t("gunzip"), &zl).is_empty(), "not gzip: nothing");
        assert!(run(&t("zlib_deflate"), &gz).is_empty(), "not zlib: nothing");
        for bad in
            ["max-size=10", "max-size  10", "max-size 0", "max-size 16777217", "size 10", "max-size 1,max-size 1"]
        {
            assert!(Transform::compile("gunzip", &Value::Text(bad.into())).is_err(), "{bad}");
        }
        assert_eq!(opt("gunzip", "max-size 16MiB"), Transform::Gunzip(16 << 20));
    }

    #[test]
    fn domain_and_tld_follow_the_public_suffix_list() {
        for (name, domain, tld) in [
            ("www.example.co.uk", "example.co.uk", "co.uk"),
            ("WWW.Example.COM", "Example.COM", "COM"),
            ("x.github.io", "x.github.io", "github.io"),
            ("a.b.c.unknowntld", "c.unknowntld", "unknowntld"),
            ("city.kawasaki.jp", "city.kawasaki.jp", "kawasaki.jp"),
            ("localhost", "", ""),
            ("co.uk", "", ""),
        ] {
            assert_eq!(run(&t("domain"), name.as_bytes()), domain.as_bytes(), "{name}");
            assert_eq!(run(&t("tld"), name.as_bytes()), tld.as_bytes(), "{name}");
        }
    }

    #[test]
    fn unsupported_and_unknown() {
        for name in ["luaxform", "subslice", "nope"] {
            assert!(Transform::compile(name, &Value::None).is_err(), "{name}");
        }
        assert!(Transform::compile("dotprefix", &Value::Text("x".into())).is_err());
    }

    #[test]
    fn chain() {
        let mut scratch = TransformScratch::default();
        assert_eq!(apply_chain(&[], b"as is", &mut scratch), b"as is");
        let one = [t("to_uppercase")];
        assert_eq!(apply_chain(&one, b"abc", &mut scratch), b"ABC");
        let three = [t("to_lowercase"), t("compress_whitespace"), t("dotprefix")];
        assert_eq!(apply_chain(&three, b"WWW  EXAMPLE.com", &mut scratch), b".www example.com");
        let four = [t("url_decode"), t("strip_whitespace"), t("to_lowercase"), t("dotprefix")];
        assert_eq!(apply_chain(&four, b"A%20B+C", &mut scratch), b".abc");
        // The documentation's chained example shape: request line, compressed, hashed.
        let hashed = [t("compress_whitespace"), t("to_sha256")];
        let mut expected = Vec::new();
        t("to_sha256").apply(b"GET / HTTP/1.1", &mut expected);
        assert_eq!(apply_chain(&hashed, b"GET  / \tHTTP/1.1", &mut scratch), expected.as_slice());
    }

    #[test]
    fn chain_does_not_allocate_once_warm() {
        let chain = [t("to_lowercase"), t("dotprefix"), t("to_uppercase")];
        let mut scratch = TransformScratch::default();
        apply_chain(&chain, b"Warm.Up.Example", &mut scratch);
        let caps = (scratch.a.capacity(), scratch.b.capacity(), scratch.a.as_ptr(), scratch.b.as_ptr());
        assert_eq!(apply_chain(&chain, b"a.b", &mut scratch), b".A.B");
        assert_eq!(caps, (scratch.a.capacity(), scratch.b.capacity(), scratch.a.as_ptr(), scratch.b.as_ptr()));
    }

    #[test]
    fn equality_and_hash_follow_rule_text() {
        use std::collections::HashSet;
        let chain = |p: &str| vec![t("to_lowercase"), with("pcrexform", p), with("xor", "0d0a")];
        let mut set = HashSet::new();
        set.insert(chain("a(b)c"));
        assert!(set.contains(&chain("a(b)c")));
        assert!(!set.contains(&chain("a(b)d")));
        assert_eq!(chain("a(b)c").clone(), chain("a(b)c"));
        assert_ne!(with("xor", "0d0a"), with("xor", "0d0b"));
        assert_ne!(t("from_base64"), b64_tr("mode rfc2045"));
        assert_eq!(format!("{:?}", with("pcrexform", "(x)")), "PcreXform(PcreXform(\"(x)\"))");
    }

    fn b64_tr(opts: &str) -> Transform {
        Transform::compile("from_base64", &Value::Text(opts.to_string())).unwrap()
    }

    #[test]
    fn content_validation() {
        assert!(!t("strip_whitespace").accepts_content(b"a b"));
        assert!(t("strip_whitespace").accepts_content(b"ab"));
        assert!(t("compress_whitespace").accepts_content(b" A B C D "));
        assert!(!t("compress_whitespace").accepts_content(b" A B C D  "));
        assert!(!t("to_lowercase").accepts_content(b"aB"));
        assert!(!t("to_uppercase").accepts_content(b"aB"));
        assert!(t("to_md5").accepts_content(b"anything"));
    }

    #[test]
    fn names_round_trip() {
        for name in [
            "dotprefix",
            "to_lowercase",
            "to_uppercase",
            "strip_whitespace",
            "compress_whitespace",
            "url_decode",
            "to_md5",
            "to_sha1",
            "to_sha256",
            "header_lowercase",
            "strip_pseudo_headers",
            "from_base64",
        ] {
            assert_eq!(t(name).name(), name);
        }
        assert_eq!(with("xor", "00").name(), "xor");
        assert_eq!(with("pcrexform", "(a)").name(), "pcrexform");
    }

    #[test]
    fn hostile_bytes_never_panic() {
        let chain = [
            t("url_decode"),
            t("header_lowercase"),
            t("strip_pseudo_headers"),
            t("compress_whitespace"),
            with("xor", "ff"),
            b64_tr("mode rfc2045"),
            t("from_base64"),
            b64_tr("mode strict, offset 1, bytes 3"),
            with("pcrexform", "(.)"),
            t("to_sha1"),
        ];
        let mut scratch = TransformScratch::default();
        let mut seed = 0x1234_5678_u32;
        for len in 0..300 {
            let input: Vec<u8> = (0..len)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 17;
                    seed ^= seed << 5;
                    let pick = b"%+:=\n\r \tAz09/+=\x00\xff";
                    if seed.is_multiple_of(3) {
                        pick[((seed as usize) >> 8) % pick.len()]
                    } else {
                        seed as u8
                    }
                })
                .collect();
            for i in 0..chain.len() {
                apply_chain(&chain[i..], &input, &mut scratch);
            }
        }
    }
}
