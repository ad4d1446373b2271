//! Line framing: where the next line ends, and when a line is too long to wait for.
//!
//! The decision depends only on the bytes of the line, never on where the
//! caller cut the stream: a line is "too long" exactly when its first
//! `max + 1` bytes hold no LF, which whole and chunked feeding both see.

/// What the start of `data` holds.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line<'a> {
    /// A full line: `raw` is everything before the LF (a CR, if any, is kept),
    /// `len` what it occupies including the LF.
    Complete { raw: &'a [u8], len: usize },
    /// No LF yet and still within the bound: wait for more bytes.
    Partial,
    /// No LF within `max + 1` bytes: the caller keeps the first `max` bytes
    /// at most and drops the rest of the line.
    TooLong,
}

pub(crate) fn next_line(data: &[u8], max: usize) -> Line<'_> {
    let window = data.get(..max.saturating_add(1)).unwrap_or(data);
    match window.iter().position(|&b| b == b'\n') {
        Some(i) => Line::Complete { raw: data.get(..i).unwrap_or_default(), len: i + 1 },
        None if data.len() > max => Line::TooLong,
        None => Line::Partial,
    }
}

/// The line without its trailing CR/LF run (libhtp chomps both, repeatedly).
pub(crate) fn chomp(line: &[u8]) -> &[u8] {
    let mut end = line.len();
    while end > 0 && matches!(line.get(end - 1), Some(b'\r' | b'\n')) {
        end -= 1;
    }
    line.get(..end).unwrap_or_default()
}

/// Linear whitespace inside header lines.
pub(crate) fn is_lws(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// Any whitespace libhtp accepts as a separator on start lines.
pub(crate) fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n' | 0x0b | 0x0c)
}

pub(crate) fn trim_lws(mut s: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = s {
        if !is_lws(*first) {
            break;
        }
        s = rest;
    }
    while let [rest @ .., last] = s {
        if !is_lws(*last) {
            break;
        }
        s = rest;
    }
    s
}

pub(crate) fn trim_space(mut s: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = s {
        if !is_space(*first) {
            break;
        }
        s = rest;
    }
    while let [rest @ .., last] = s {
        if !is_space(*last) {
            break;
        }
        s = rest;
    }
    s
}

pub(crate) fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|&b| is_space(b))
}

/// RFC 7230 `tchar`: what a header name or method may be made of.
pub(crate) fn is_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

pub(crate) fn starts_with_ci(data: &[u8], prefix: &[u8]) -> bool {
    data.len() >= prefix.len() && data.iter().zip(prefix).all(|(a, b)| a.eq_ignore_ascii_case(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_end_at_lf_and_keep_cr() {
        assert_eq!(next_line(b"ab\r\ncd", 10), Line::Complete { raw: b"ab\r", len: 4 });
        assert_eq!(next_line(b"ab", 10), Line::Partial);
        assert_eq!(next_line(b"abc", 2), Line::TooLong);
        // An LF at exactly max + 1 bytes still ends a line of `max` bytes.
        assert_eq!(next_line(b"ab\n", 2), Line::Complete { raw: b"ab", len: 3 });
        assert_eq!(chomp(b"ab\r\r\n"), b"ab");
    }

    #[test]
    fn trims() {
        assert_eq!(trim_lws(b" \tx y\t "), b"x y");
        assert_eq!(trim_space(b"\x0b x \r"), b"x");
        assert!(is_blank(b" \t\r"));
        assert!(starts_with_ci(b"http/1.1", b"HTTP/"));
    }
}
