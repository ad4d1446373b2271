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

/// Like [`next_line`] for the response side, where libhtp also ends a line
/// at a lone CR and, inside headers, at LF CR (and at the deformed
/// LF CR CR LF when a line end follows). `raw` then excludes the line end.
/// A line end that more bytes could still extend is not decided yet.
pub(crate) fn next_response_line(data: &[u8], max: usize, headers: bool) -> Line<'_> {
    let window = data.get(..max.saturating_add(1)).unwrap_or(data);
    let Some(i) = window.iter().position(|&b| b == b'\r' || b == b'\n') else {
        return if data.len() > max { Line::TooLong } else { Line::Partial };
    };
    let raw = data.get(..i).unwrap_or_default();
    let tail = data.get(i..).unwrap_or_default();
    if headers && !raw.is_empty() && tail == b"\r\n" {
        // A CR may follow and make this a deformed line end.
        return Line::Partial;
    }
    if headers && !raw.is_empty() && tail.starts_with(b"\r\n\r") {
        match deformed_crlf_cr(tail) {
            Some(Some(n)) => return Line::Complete { raw, len: i + n },
            Some(None) => {}
            None => return Line::Partial,
        }
    }
    let eol = match tail {
        [b'\r', b'\n', ..] => 2,
        [b'\r'] => return Line::Partial,
        [b'\r', ..] => 1,
        // A blank line ends the headers at once: what follows is body.
        [b'\n', ..] if !headers || raw.is_empty() => 1,
        [b'\n'] => return Line::Partial,
        [b'\n', b'\r', b'\r', b'\n', b'\n', ..] | [b'\n', b'\r', b'\r', b'\n', b'\r', b'\n', ..] => 4,
        [b'\n', b'\r', b'\r', b'\n'] | [b'\n', b'\r', b'\r', b'\n', b'\r'] | [b'\n', b'\r', b'\r'] | [b'\n', b'\r'] => {
            return Line::Partial
        }
        [b'\n', b'\r', ..] => 2,
        _ => 1,
    };
    Line::Complete { raw, len: i + eol }
}

/// libhtp's other deformed line end: CR LF CR, a run of CR/SP/HT, an
/// optional LF, when no line end follows. Some(Some(len)) when it is one,
/// Some(None) when it is not, None while undecided.
fn deformed_crlf_cr(tail: &[u8]) -> Option<Option<usize>> {
    let after = tail.get(3..).unwrap_or_default();
    let run = after.iter().take_while(|&&b| matches!(b, b'\r' | b' ' | b'\t')).count();
    if run == 0 {
        return if after.is_empty() { None } else { Some(None) };
    }
    let rest = after.get(run..)?;
    let (lf, rest) = match rest.split_first() {
        None => return None,
        Some((b'\n', r)) => (1, r),
        Some(_) => (0, rest),
    };
    match rest {
        [] | [b'\r'] => None,
        [b'\n', ..] | [b'\r', b'\n', ..] => Some(None),
        _ => Some(Some(3 + run + lf)),
    }
}

/// Bytes that continue the previous header line (libhtp counts NUL too).
pub(crate) fn is_fold(b: u8) -> bool {
    b == b' ' || b == b'\t' || b == 0
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

/// Whether `word` occurs anywhere in `data`, any case.
pub(crate) fn contains_ci(data: &[u8], word: &[u8]) -> bool {
    !word.is_empty() && data.windows(word.len()).any(|w| w.eq_ignore_ascii_case(word))
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
    fn response_lines_also_end_at_lone_cr_and_lf_cr() {
        let l = |d: &'static [u8], h| next_response_line(d, 100, h);
        assert_eq!(l(b"a\rb", false), Line::Complete { raw: b"a", len: 2 });
        assert_eq!(l(b"a\r\nb", false), Line::Complete { raw: b"a", len: 3 });
        assert_eq!(l(b"a\r", false), Line::Partial);
        assert_eq!(l(b"a\n\rb", false), Line::Complete { raw: b"a", len: 2 });
        assert_eq!(l(b"a\n\rb", true), Line::Complete { raw: b"a", len: 3 });
        assert_eq!(l(b"a\n", true), Line::Partial);
        assert_eq!(l(b"\n", true), Line::Complete { raw: b"", len: 1 });
        assert_eq!(l(b"a\n\r\r\n\r\nX", true), Line::Complete { raw: b"a", len: 5 });
        assert_eq!(l(b"a\n\r\r\nX", true), Line::Complete { raw: b"a", len: 3 });
        assert_eq!(l(b"a\n\r\r", true), Line::Partial);
        assert_eq!(l(b"a\r\n\r\r\nTE", true), Line::Complete { raw: b"a", len: 6 });
        assert_eq!(l(b"a\r\n\r \rTE", true), Line::Complete { raw: b"a", len: 6 });
        assert_eq!(l(b"a\r\n\r\nbody", true), Line::Complete { raw: b"a", len: 3 });
        assert_eq!(l(b"a\r\n\r\r\n\r\n", true), Line::Complete { raw: b"a", len: 3 });
        assert_eq!(l(b"a\r\n\r\r", true), Line::Partial);
        assert_eq!(l(b"a\r\n", true), Line::Partial);
        assert_eq!(l(b"a\r\n", false), Line::Complete { raw: b"a", len: 3 });
    }

    #[test]
    fn trims() {
        assert_eq!(trim_lws(b" \tx y\t "), b"x y");
        assert_eq!(trim_space(b"\x0b x \r"), b"x");
        assert!(is_blank(b" \t\r"));
        assert!(starts_with_ci(b"http/1.1", b"HTTP/"));
        assert!(contains_ci(b"x-ChUnKed;", b"chunked"));
    }
}
