//! Header lines and the per-message header table.
//!
//! Like libhtp, the table holds one entry per name (compared without case):
//! a repeated header is appended to the first one's value after `, `, except
//! `Content-Length`, whose repeats are only checked for agreement. The
//! inspection buffers (`http.header`, `http.header_names`, `http.start`)
//! are built from this table, so they show each name once.

use super::line::{is_space, is_token, trim_space};

/// One header as the table keeps it: the first spelling of the name, and the
/// value (repeats joined with `, `).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub name: Vec<u8>,
    pub value: Vec<u8>,
}

/// Every header as `Name: value`, stored back to back (one allocation
/// rather than one per header).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct HeaderItems {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl HeaderItems {
    pub(crate) fn get(&self, index: usize) -> Option<&[u8]> {
        let end = *self.ends.get(index)?;
        let start = match index.checked_sub(1) {
            Some(prev) => *self.ends.get(prev)?,
            None => 0,
        };
        self.bytes.get(start..end)
    }
}

/// How libhtp would react to a repeat beyond this many: it stops recording.
const MAX_REPETITIONS: u32 = 64;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct HeaderTable {
    pub(crate) list: Vec<Header>,
    repetitions: u32,
    /// Places in `list` of the headers given more than once.
    repeated: Vec<u16>,
}

/// What adding a header did, for the caller's anomaly bookkeeping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Added {
    New,
    /// Joined to the header of that name; `first`: its first repeat, which
    /// libhtp warns of ("Repetition for header").
    Joined {
        first: bool,
    },
    /// A second Content-Length; `agrees` tells whether both parse to the same length.
    RepeatedLength {
        agrees: bool,
        first: bool,
    },
    /// Past the repetition cap, or the joined value would exceed `max_value`.
    Dropped,
}

impl HeaderTable {
    pub(crate) fn get(&self, name: &[u8]) -> Option<&Header> {
        self.list.iter().find(|h| name_is(&h.name, name))
    }

    pub(crate) fn value(&self, name: &[u8]) -> Option<&[u8]> {
        self.get(name).map(|h| h.value.as_slice())
    }

    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }

    pub(crate) fn add(&mut self, name: &[u8], value: &[u8], max_value: usize) -> Added {
        let Some(at) = self.list.iter().position(|h| h.name.eq_ignore_ascii_case(name)) else {
            self.list.push(Header { name: name.to_vec(), value: value.to_vec() });
            return Added::New;
        };
        if self.repetitions >= MAX_REPETITIONS {
            return Added::Dropped;
        }
        self.repetitions += 1;
        let place = at as u16;
        let first = !self.repeated.contains(&place);
        if first {
            self.repeated.push(place);
        }
        let existing = &mut self.list[at];
        if name.eq_ignore_ascii_case(b"content-length") {
            let (old, new) = (parse_content_length(&existing.value), parse_content_length(value));
            return Added::RepeatedLength { agrees: old.is_some() && old == new, first };
        }
        if existing.value.len().saturating_add(2).saturating_add(value.len()) > max_value {
            return Added::Dropped;
        }
        existing.value.extend_from_slice(b", ");
        existing.value.extend_from_slice(value);
        Added::Joined { first }
    }

    /// `Name: value\r\n` per header, the `http.header` layout; `skip` names the
    /// cookie header of the direction, which Suricata leaves out.
    pub(crate) fn normalized(&self, skip: Option<&[u8]>) -> Vec<u8> {
        let mut out = Vec::new();
        self.normalized_into(skip, &mut out);
        out
    }

    /// [`normalized`](Self::normalized), appended to `out` (sized once: these
    /// buffers are built for every transaction).
    pub(crate) fn normalized_into(&self, skip: Option<&[u8]>, out: &mut Vec<u8>) {
        let kept = || self.list.iter().filter(|h| !skip.is_some_and(|s| h.name.eq_ignore_ascii_case(s)));
        out.reserve(kept().map(|h| h.name.len() + h.value.len() + 4).sum());
        for h in kept() {
            out.extend_from_slice(&h.name);
            out.extend_from_slice(b": ");
            out.extend_from_slice(&h.value);
            out.extend_from_slice(b"\r\n");
        }
    }

    /// `Name: value` per header, one after the other, with where each ends:
    /// the items of `http.request_header` / `http.response_header`.
    pub(crate) fn items(&self) -> HeaderItems {
        let mut out = HeaderItems::default();
        out.bytes.reserve(self.list.iter().map(|h| h.name.len() + h.value.len() + 2).sum());
        out.ends.reserve(self.list.len());
        for h in &self.list {
            out.bytes.extend_from_slice(&h.name);
            out.bytes.extend_from_slice(b": ");
            out.bytes.extend_from_slice(&h.value);
            out.ends.push(out.bytes.len());
        }
        out
    }

    /// `\r\nName1\r\nName2\r\n\r\n`, the `http.header_names` layout (empty when
    /// there are no headers).
    pub(crate) fn names(&self) -> Vec<u8> {
        if self.list.is_empty() {
            return Vec::new();
        }
        let mut out = Vec::with_capacity(4 + self.list.iter().map(|h| h.name.len() + 2).sum::<usize>());
        out.extend_from_slice(b"\r\n");
        for h in &self.list {
            out.extend_from_slice(&h.name);
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"\r\n");
        out
    }
}

/// A header line split the way libhtp does it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct FieldLine<'a> {
    pub(crate) name: &'a [u8],
    pub(crate) value: &'a [u8],
    /// No colon: the whole line became the value of a nameless header.
    pub(crate) missing_colon: bool,
    /// Whitespace before the name: folding where no folding can be.
    pub(crate) leading_ws: bool,
    /// Empty name, whitespace before the colon, or a name that is not a token.
    pub(crate) invalid: bool,
}

pub(crate) fn parse_field(line: &[u8]) -> FieldLine<'_> {
    let Some(colon) = line.iter().position(|&b| b == b':') else {
        let value = trim_space(line);
        return FieldLine { name: b"", value, missing_colon: true, leading_ws: false, invalid: false };
    };
    let raw_name = line.get(..colon).unwrap_or_default();
    let name = trim_space(raw_name);
    let leading_ws = raw_name.first().is_some_and(|&b| is_space(b));
    let trailing_ws = raw_name.last().is_some_and(|&b| is_space(b)) && !name.is_empty();
    let invalid = name.is_empty() || trailing_ws || !name.iter().all(|&b| is_token(b));
    let value = trim_space(line.get(colon + 1..).unwrap_or_default());
    FieldLine { name, value, missing_colon: false, leading_ws, invalid }
}

/// Header names compare without case and, as in libhtp, without NUL bytes
/// (`Transfer\0-Encoding` still frames the body).
pub(crate) fn name_is(stored: &[u8], wanted: &[u8]) -> bool {
    let mut it = stored.iter().filter(|&&b| b != 0);
    wanted.iter().all(|w| it.next().is_some_and(|s| s.eq_ignore_ascii_case(w))) && it.next().is_none()
}

/// A value with its NUL bytes removed, for the token checks libhtp makes
/// blind to them.
pub(crate) fn without_nul(v: &[u8]) -> Vec<u8> {
    v.iter().copied().filter(|&b| b != 0).collect()
}

/// libhtp's lenient Content-Length: junk around the first digit run is
/// tolerated, no digits (or an overflow) is not.
pub(crate) fn parse_content_length(value: &[u8]) -> Option<u64> {
    let start = value.iter().position(|b| b.is_ascii_digit())?;
    let digits = value.get(start..).unwrap_or_default();
    let end = digits.iter().position(|b| !b.is_ascii_digit()).unwrap_or(digits.len());
    let mut n: u64 = 0;
    for &d in digits.get(..end).unwrap_or_default() {
        n = n.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    // Cap at what a signed 64-bit length can say, as libhtp does.
    (n <= i64::MAX as u64).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_split_like_libhtp() {
        let f = parse_field(b"Host:  example.com \t");
        assert_eq!((f.name, f.value, f.missing_colon, f.invalid), (&b"Host"[..], &b"example.com"[..], false, false));
        let f = parse_field(b"no colon here");
        assert!(f.missing_colon);
        assert_eq!(f.value, b"no colon here");
        assert!(parse_field(b"Bad Name: x").invalid);
        assert!(parse_field(b"Name : x").invalid);
        assert!(parse_field(b": x").invalid);
        let f = parse_field(b" \rName\x0b: v\x0c");
        assert_eq!((f.name, f.value, f.leading_ws, f.invalid), (&b"Name"[..], &b"v"[..], true, true));
        assert!(name_is(b"Transfer\0-Encoding\0", b"transfer-encoding"));
        assert!(!name_is(b"Transfer-Encodingx", b"transfer-encoding"));
    }

    #[test]
    fn table_joins_repeats_and_checks_lengths() {
        let mut t = HeaderTable::default();
        assert_eq!(t.add(b"Host", b"a", 100), Added::New);
        // Only a header's first repeat is libhtp's repetition.
        assert_eq!(t.add(b"host", b"b", 100), Added::Joined { first: true });
        assert_eq!(t.value(b"HOST"), Some(&b"a, b"[..]));
        t.add(b"Content-Length", b"5", 100);
        assert_eq!(t.add(b"content-length", b" 5", 100), Added::RepeatedLength { agrees: true, first: true });
        assert_eq!(t.add(b"content-length", b"6", 100), Added::RepeatedLength { agrees: false, first: false });
        assert_eq!(t.add(b"Host", &[b'x'; 200], 100), Added::Dropped);
        assert_eq!(t.names(), b"\r\nHost\r\nContent-Length\r\n\r\n");
        assert_eq!(t.normalized(Some(b"cookie")), b"Host: a, b\r\nContent-Length: 5\r\n");
        let items = t.items();
        assert_eq!(items.get(0), Some(&b"Host: a, b"[..]));
        assert_eq!(items.get(1), Some(&b"Content-Length: 5"[..]));
        assert_eq!(items.get(2), None);
        assert_eq!(HeaderTable::default().items().get(0), None);
    }

    #[test]
    fn content_length_is_lenient_but_bounded() {
        assert_eq!(parse_content_length(b" 42 "), Some(42));
        assert_eq!(parse_content_length(b"x42y"), Some(42));
        assert_eq!(parse_content_length(b"abc"), None);
        assert_eq!(parse_content_length(b"99999999999999999999999"), None);
    }
}
