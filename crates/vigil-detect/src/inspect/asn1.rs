//! The `asn1` keyword at inspection time: BER objects decoded one after
//! another from the start offset, each checked with the objects it
//! contains. Only objects whole in the buffer are decoded (a declared
//! length past its end stops decoding), and the objects and the nesting
//! are bounded, so hostile bytes cost at most a walk of the buffer.

use vigil_rules::keywords::asn1::Asn1Spec;

/// The most objects (and nesting levels) decoded from one start: Suricata's
/// `asn1-max-frames` in its stock configuration. Past it nothing matches.
pub const MAX_FRAMES: usize = 256;

const TAG_BIT_STRING: u32 = 3;
const TAG_REAL: u32 = 9;

/// Whether the objects from the keyword's start trip one of its checks.
/// `prev_end`: the end of the previous match (what `relative_offset` counts from).
pub fn matches(spec: &Asn1Spec, buf: &[u8], prev_end: usize) -> bool {
    let start = match (spec.absolute_offset, spec.relative_offset) {
        (Some(a), _) => Some(usize::from(a)),
        (None, Some(r)) => prev_end.checked_add_signed(r as isize).filter(|&s| s <= u16::MAX as usize),
        (None, None) => Some(0),
    };
    let Some(mut rest) = start.and_then(|s| buf.get(s..)).filter(|r| !r.is_empty()) else { return false };
    let mut frames = 0;
    while !rest.is_empty() {
        if frames >= MAX_FRAMES {
            return false;
        }
        frames += 1;
        let mut found = false;
        match object(rest, spec, MAX_FRAMES, &mut found) {
            Some(used) if !found => rest = &rest[used..],
            Some(_) => return true,
            None => return found,
        }
    }
    false
}

/// One object's identifier and length.
struct Header {
    constructed: bool,
    universal: bool,
    tag: u32,
    /// `None`: indefinite (constructed only), ended by two zero bytes.
    len: Option<usize>,
    /// Bytes of identifier and length.
    size: usize,
}

fn header(b: &[u8]) -> Option<Header> {
    let first = *b.first()?;
    let mut i = 1;
    let mut tag = u32::from(first & 0x1f);
    if tag == 0x1f {
        tag = 0;
        loop {
            let c = *b.get(i)?;
            i += 1;
            tag = tag.checked_mul(128)? | u32::from(c & 0x7f);
            if c & 0x80 == 0 {
                break;
            }
        }
    }
    let l = *b.get(i)?;
    i += 1;
    let len = match l {
        0..=0x7f => Some(usize::from(l)),
        0x80 => None,
        0xff => return None,
        _ => {
            let n = usize::from(l & 0x7f);
            let mut v: u64 = 0;
            for _ in 0..n {
                v = v.checked_mul(256)? | u64::from(*b.get(i)?);
                i += 1;
            }
            Some(usize::try_from(v).ok()?)
        }
    };
    let constructed = first & 0x20 != 0;
    if len.is_none() && !constructed {
        return None;
    }
    Some(Header { constructed, universal: first & 0xc0 == 0, tag, len, size: i })
}

/// Decodes the object at the start of `b`, checking it and what it
/// contains; sets `found` at the first check that trips. The bytes it
/// took, or `None` when it is not whole or not valid BER.
fn object(b: &[u8], spec: &Asn1Spec, depth: usize, found: &mut bool) -> Option<usize> {
    if depth == 0 {
        return None;
    }
    let h = header(b)?;
    let body = &b[h.size..];
    if let Some(len) = h.len {
        let content = body.get(..len)?;
        if trips(&h, len, content, spec) {
            *found = true;
            return Some(h.size + len);
        }
        if h.constructed {
            let mut rest = content;
            while !rest.is_empty() {
                let used = object(rest, spec, depth - 1, found)?;
                if *found {
                    return Some(h.size + len);
                }
                rest = &rest[used..];
            }
        }
        return Some(h.size + len);
    }
    // Indefinite length: the objects inside up to end-of-contents.
    let mut at = 0;
    loop {
        let rest = body.get(at..)?;
        if rest.starts_with(&[0, 0]) {
            let len = at;
            if trips(&h, len, &body[..len], spec) {
                *found = true;
            }
            return Some(h.size + at + 2);
        }
        at += object(rest, spec, depth - 1, found)?;
        if *found {
            return Some(h.size + at);
        }
    }
}

fn trips(h: &Header, len: usize, content: &[u8], spec: &Asn1Spec) -> bool {
    if spec.oversize_length.is_some_and(|max| len as u64 > u64::from(max)) {
        return true;
    }
    let primitive_universal = h.universal && !h.constructed;
    if spec.bitstring_overflow && primitive_universal && h.tag == TAG_BIT_STRING {
        // The unused-bit count (first content byte) against the bits there are.
        if let Some(&unused) = content.first() {
            if u64::from(unused) > (len as u64).saturating_mul(8) {
                return true;
            }
        }
    }
    // A REAL in decimal form (first byte's top bits 00) longer than 256
    // bytes overflows MSASN1's buffer.
    spec.double_overflow
        && primitive_universal
        && h.tag == TAG_REAL
        && content.first().is_some_and(|c| c & 0xc0 == 0)
        && len > 256
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(s: &str) -> Asn1Spec {
        vigil_rules::keywords::asn1::parse(s).unwrap()
    }

    // X.690's example of a personnel record (Annex A), 136 bytes, the outer length 133.
    const RECORD: &[u8] = b"\x60\x81\x85\x61\x10\x1A\x04John\x1A\x01P\x1A\x05Smith\xA0\x0A\x1A\x08Director\
\x42\x01\x33\xA1\x0A\x43\x0819710917\xA2\x12\x61\x10\x1A\x04Mary\x1A\x01T\x1A\x05Smith\xA3\x42\x31\x1F\
\x61\x11\x1A\x05Ralph\x1A\x01T\x1A\x05Smith\xA0\x0A\x43\x0819571111\x31\x1F\x61\x11\x1A\x05Susan\x1A\x01B\
\x1A\x05Jones\xA0\x0A\x43\x0819590717";

    #[test]
    fn oversize_length_counts_declared_lengths() {
        assert_eq!(RECORD.len(), 136);
        assert!(matches(&spec("oversize_length 132 absolute_offset 0"), RECORD, 0));
        assert!(!matches(&spec("oversize_length 133 absolute_offset 0"), RECORD, 0));
        assert!(!matches(&spec("oversize_length 1"), &RECORD[..100], 0), "a cut object is not decoded");
        assert!(matches(&spec("oversize_length 9, relative_offset 3"), RECORD, 0), "the inner 0x61 of 16");
    }

    #[test]
    fn bitstring_and_double_overflows() {
        assert!(matches(&spec("bitstring_overflow"), b"\x03\x01\xFF", 0));
        assert!(!matches(&spec("bitstring_overflow"), b"\x03\x01\x07", 0));
        let real = |len: u16| {
            let mut b = vec![0x09, 0x82];
            b.extend_from_slice(&len.to_be_bytes());
            b.extend(std::iter::repeat_n(0x05, len as usize));
            b
        };
        assert!(matches(&spec("double_overflow"), &real(257), 0));
        assert!(!matches(&spec("double_overflow"), &real(256), 0));
    }

    #[test]
    fn hostile_bytes_stay_bounded() {
        let deep: Vec<u8> = std::iter::repeat_n([0x30u8, 0x80], 10_000).flatten().collect();
        assert!(!matches(&spec("oversize_length 0"), &deep, 0));
        assert!(!matches(&spec("oversize_length 0, absolute_offset 9"), b"\x30\x00", 0), "offset past the end");
        let after = |nulls: usize| {
            let mut b: Vec<u8> = std::iter::repeat_n([0x05u8, 0x00], nulls).flatten().collect();
            b.extend_from_slice(b"\x04\x01A");
            b
        };
        assert!(matches(&spec("oversize_length 0"), &after(100), 0));
        assert!(!matches(&spec("oversize_length 0"), &after(300), 0), "past the frame limit nothing matches");
    }
}
