//! Request-target parsing and normalization (the `http.uri` buffer), and
//! host[:port] parsing for the Host header and absolute URIs.
//!
//! Normalization follows libhtp's IDS personality as Suricata configures it:
//! the path is percent- and `%u`-decoded, backslashes become slashes, runs of
//! slashes collapse, UTF-8 is folded to single bytes ("best fit"), and dot
//! segments are removed; the query and fragment are only percent-decoded.
//! Invalid escapes are kept as they are. Only `path?query#fragment` is kept,
//! so an absolute-URI request line yields the same buffer as an origin-form one.

use std::net::Ipv6Addr;

use super::line::{trim_lws, trim_space};

/// A request-target split into its parts (all slices of the raw URI).
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Uri<'a> {
    pub(crate) scheme: Option<&'a [u8]>,
    pub(crate) host: Option<&'a [u8]>,
    pub(crate) port: Option<&'a [u8]>,
    pub(crate) path: Option<&'a [u8]>,
    pub(crate) query: Option<&'a [u8]>,
    pub(crate) fragment: Option<&'a [u8]>,
}

/// Splits a request-target the way libhtp does: anything not starting with
/// `/` and holding a colon has a scheme, an authority follows a scheme and
/// exactly two slashes, and the rest is path, `?query`, `#fragment`.
pub(crate) fn parse(raw: &[u8]) -> Uri<'_> {
    let mut uri = Uri::default();
    if raw.is_empty() {
        return uri;
    }
    let mut rest = raw;
    if raw.first() != Some(&b'/') {
        if let Some(colon) = raw.iter().position(|&b| b == b':') {
            uri.scheme = raw.get(..colon);
            rest = raw.get(colon + 1..).unwrap_or_default();
        }
    }
    if uri.scheme.is_some() && rest.starts_with(b"//") && rest.get(2) != Some(&b'/') {
        let auth_and_more = rest.get(2..).unwrap_or_default();
        let end = auth_and_more.iter().position(|&b| matches!(b, b'?' | b'/' | b'#')).unwrap_or(auth_and_more.len());
        let authority = auth_and_more.get(..end).unwrap_or_default();
        let hostport = match authority.iter().position(|&b| b == b'@') {
            Some(at) => authority.get(at + 1..).unwrap_or_default(),
            None => authority,
        };
        let (host, port) = split_hostport(hostport);
        uri.host = Some(host);
        uri.port = port;
        rest = auth_and_more.get(end..).unwrap_or_default();
    }
    let path_end = rest.iter().position(|&b| b == b'?' || b == b'#').unwrap_or(rest.len());
    uri.path = rest.get(..path_end);
    let mut tail = rest.get(path_end..).unwrap_or_default();
    if tail.first() == Some(&b'?') {
        let q = tail.get(1..).unwrap_or_default();
        let q_end = q.iter().position(|&b| b == b'#').unwrap_or(q.len());
        uri.query = q.get(..q_end);
        tail = q.get(q_end..).unwrap_or_default();
    }
    if tail.first() == Some(&b'#') {
        uri.fragment = tail.get(1..);
    }
    uri
}

/// CONNECT carries `host:port` (authority form) instead of a path. Like
/// libhtp, an optional `//` is skipped, and a target that then starts with
/// `/` is a path: it names no host at all (not a host called `/`).
pub(crate) fn parse_authority_form(raw: &[u8]) -> Uri<'_> {
    let s = trim_space(raw);
    let s = s.strip_prefix(b"//").unwrap_or(s);
    if s.first() == Some(&b'/') {
        return Uri::default();
    }
    let (host, port) = split_hostport(s);
    Uri { host: Some(host), port, ..Uri::default() }
}

/// `host`, `host:port`, `[v6]` or `[v6]:port`, split at the first colon
/// outside brackets.
fn split_hostport(s: &[u8]) -> (&[u8], Option<&[u8]>) {
    if s.first() == Some(&b'[') {
        if let Some(close) = s.iter().position(|&b| b == b']') {
            let host = s.get(..=close).unwrap_or_default();
            let after = s.get(close + 1..).unwrap_or_default();
            return match after.first() {
                Some(b':') => (host, after.get(1..)),
                _ => (host, None),
            };
        }
        return (s, None);
    }
    match s.iter().position(|&b| b == b':') {
        Some(c) => (s.get(..c).unwrap_or_default(), s.get(c + 1..)),
        None => (s, None),
    }
}

/// A host[:port] after validation: the normalized name and what was wrong.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct HostPort {
    pub(crate) host: Vec<u8>,
    pub(crate) port: Option<u16>,
    pub(crate) port_invalid: bool,
    pub(crate) host_invalid: bool,
}

pub(crate) fn host_port(host: &[u8], port: Option<&[u8]>) -> HostPort {
    let host_norm = normalize_hostname(host);
    let mut out = HostPort { host_invalid: !valid_hostname(&host_norm), host: host_norm, ..HostPort::default() };
    if let Some(p) = port {
        let p = trim_lws(p);
        if !p.is_empty() {
            out.port = parse_port(p);
            out.port_invalid = out.port.is_none();
        }
    }
    out
}

/// Parses a Host header value.
pub(crate) fn header_host_port(value: &[u8]) -> HostPort {
    let (host, port) = split_hostport(trim_lws(value));
    host_port(host, port)
}

fn parse_port(p: &[u8]) -> Option<u16> {
    if p.is_empty() || p.len() > 5 || !p.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n = p.iter().fold(0u32, |n, d| n * 10 + u32::from(d - b'0'));
    u16::try_from(n).ok().filter(|&n| n > 0)
}

/// Lowercase, without trailing dots.
pub(crate) fn normalize_hostname(h: &[u8]) -> Vec<u8> {
    let mut out = h.to_ascii_lowercase();
    while out.last() == Some(&b'.') {
        out.pop();
    }
    out
}

/// libhtp's rule: dot-separated labels of letters, digits, `-` and `_`
/// (1..=63 bytes each, 255 in all), or a bracketed IPv6 address.
pub(crate) fn valid_hostname(h: &[u8]) -> bool {
    if h.is_empty() || h.len() > 255 {
        return false;
    }
    if let Some(inner) = h.strip_prefix(b"[").and_then(|r| r.strip_suffix(b"]")) {
        return std::str::from_utf8(inner).ok().and_then(|s| s.parse::<Ipv6Addr>().ok()).is_some();
    }
    h.split(|&b| b == b'.')
        .all(|l| (1..=63).contains(&l.len()) && l.iter().all(|&b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'))
}

/// The `http.uri` buffer: normalized `path[?query][#fragment]`.
pub(crate) fn normalize(uri: &Uri<'_>) -> Vec<u8> {
    let mut out = match uri.path {
        Some(p) => remove_dot_segments(&utf8_best_fit(&decode_path(p))),
        None => Vec::new(),
    };
    if let Some(q) = uri.query {
        out.push(b'?');
        out.extend_from_slice(&url_decode(q));
    }
    if let Some(f) = uri.fragment {
        out.push(b'#');
        out.extend_from_slice(&url_decode(f));
    }
    out
}

/// A `%25` followed by an escape: someone encoded an escape.
pub(crate) fn is_double_encoded(raw: &[u8]) -> bool {
    raw.windows(5).any(|w| {
        w.get(..3).is_some_and(|p| p == b"%25")
            && w.get(3).is_some_and(u8::is_ascii_hexdigit)
            && w.get(4).is_some_and(u8::is_ascii_hexdigit)
    })
}

fn hex_val(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

fn hex2(s: &[u8], at: usize) -> Option<u8> {
    Some(hex_val(*s.get(at)?)? << 4 | hex_val(*s.get(at + 1)?)?)
}

fn hex4(s: &[u8], at: usize) -> Option<u32> {
    Some(u32::from(hex2(s, at)?) << 8 | u32::from(hex2(s, at + 2)?))
}

/// Percent-decoding for query and fragment: `%XX` only, `+` stays (Suricata's
/// `query-plusspace-decode` defaults to off), bad escapes stay as sent.
pub(crate) fn url_decode(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while let Some(&b) = s.get(i) {
        if b == b'%' {
            if let Some(v) = hex2(s, i + 1) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b);
        i += 1;
    }
    out
}

/// Path decoding: `%XX`, `%uXXXX` (folded to one byte), `\` to `/`, and
/// runs of `/` collapsed (also when a slash was escaped).
fn decode_path(s: &[u8]) -> Vec<u8> {
    let mut out: Vec<u8> = Vec::with_capacity(s.len());
    let mut i = 0;
    while let Some(&b) = s.get(i) {
        let (mut c, step) = if b == b'%' {
            if matches!(s.get(i + 1), Some(b'u' | b'U')) {
                match hex4(s, i + 2) {
                    Some(cp) => (u_escape_byte(cp), 6),
                    None => (b'%', 1),
                }
            } else {
                match hex2(s, i + 1) {
                    Some(v) => (v, 3),
                    None => (b'%', 1),
                }
            }
        } else {
            (b, 1)
        };
        i += step;
        if c == b'\\' {
            c = b'/';
        }
        if c == b'/' && out.last() == Some(&b'/') {
            continue;
        }
        out.push(c);
    }
    out
}

/// libhtp folds `%u00XX` to the byte itself and anything wider through its
/// best-fit map.
fn u_escape_byte(cp: u32) -> u8 {
    best_fit(cp)
}

/// A subset of libhtp's Windows-1252 best-fit map: Latin-1 stays itself,
/// fullwidth ASCII folds to ASCII, slash look-alikes to slashes; the rest
/// becomes `?`.
fn best_fit(cp: u32) -> u8 {
    match cp {
        0..=0xff => cp as u8,
        0xff01..=0xff5e => (cp - 0xfee0) as u8,
        0x2044 | 0x2215 => b'/',
        0x2216 => b'\\',
        0x2024 => b'.',
        0x2010 | 0x2011 | 0x2212 => b'-',
        _ => b'?',
    }
}

/// Folds each valid multi-byte UTF-8 character of the decoded path to one
/// byte; invalid sequences are kept byte for byte.
fn utf8_best_fit(s: &[u8]) -> Vec<u8> {
    if s.is_ascii() {
        return s.to_vec();
    }
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while let Some(&b) = s.get(i) {
        let width = match b {
            0xc2..=0xdf => 2,
            0xe0..=0xef => 3,
            0xf0..=0xf4 => 4,
            _ => 1,
        };
        let ch = (width > 1)
            .then(|| s.get(i..i + width))
            .flatten()
            .and_then(|seq| std::str::from_utf8(seq).ok())
            .and_then(|st| st.chars().next());
        match ch {
            Some(c) => {
                out.push(best_fit(u32::from(c)));
                i += width;
            }
            None => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

/// RFC 3986 section 5.2.4.
fn remove_dot_segments(path: &[u8]) -> Vec<u8> {
    let mut input = path;
    let mut out: Vec<u8> = Vec::with_capacity(path.len());
    while !input.is_empty() {
        if let Some(r) = input.strip_prefix(b"../") {
            input = r;
        } else if let Some(r) = input.strip_prefix(b"./") {
            input = r;
        } else if input.starts_with(b"/./") {
            input = input.get(2..).unwrap_or_default();
        } else if input == b"/." {
            input = b"/";
        } else if input.starts_with(b"/../") {
            input = input.get(3..).unwrap_or_default();
            pop_segment(&mut out);
        } else if input == b"/.." {
            input = b"/";
            pop_segment(&mut out);
        } else if input == b"." || input == b".." {
            input = b"";
        } else {
            let start = usize::from(input.first() == Some(&b'/'));
            let end = input.iter().skip(start).position(|&b| b == b'/').map_or(input.len(), |p| p + start);
            out.extend_from_slice(input.get(..end).unwrap_or_default());
            input = input.get(end..).unwrap_or_default();
        }
    }
    out
}

fn pop_segment(out: &mut Vec<u8>) {
    let cut = out.iter().rposition(|&b| b == b'/').unwrap_or(0);
    out.truncate(cut);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(raw: &[u8]) -> Vec<u8> {
        normalize(&parse(raw))
    }

    #[test]
    fn splits_origin_and_absolute_forms() {
        let u = parse(b"/a/b?x=1#frag");
        assert_eq!((u.path, u.query, u.fragment), (Some(&b"/a/b"[..]), Some(&b"x=1"[..]), Some(&b"frag"[..])));
        let u = parse(b"http://user@Example.COM:8080/p?q");
        assert_eq!(u.scheme, Some(&b"http"[..]));
        assert_eq!(u.host, Some(&b"Example.COM"[..]));
        assert_eq!(u.port, Some(&b"8080"[..]));
        assert_eq!(u.path, Some(&b"/p"[..]));
        let u = parse(b"http://[::1]:81");
        assert_eq!((u.host, u.port, u.path), (Some(&b"[::1]"[..]), Some(&b"81"[..]), Some(&b""[..])));
        let u = parse_authority_form(b"example.com:443");
        assert_eq!((u.host, u.port), (Some(&b"example.com"[..]), Some(&b"443"[..])));
    }

    #[test]
    fn normalizes_paths_like_the_ids_personality() {
        assert_eq!(norm(b"/a/./b/../c"), b"/a/c");
        assert_eq!(norm(b"//index.php?page=../../../etc/passwd"), b"/index.php?page=../../../etc/passwd");
        assert_eq!(norm(b"/%2e%2e/%2E%2e/etc/passwd"), b"/etc/passwd");
        assert_eq!(norm(b"/a%2fb\\c"), b"/a/b/c");
        assert_eq!(norm(b"/%u0041%uFF41%zz"), b"/Aa%zz");
        assert_eq!(norm(b"/caf\xc3\xa9"), b"/caf\xe9");
        assert_eq!(norm(b"/x?a=%41+b%2"), b"/x?a=A+b%2");
        assert_eq!(norm(b"http://h/p%20q"), b"/p q");
        assert_eq!(norm(b"/a/b/../../../c"), b"/c");
        assert!(is_double_encoded(b"/%252e"));
        assert!(!is_double_encoded(b"/%2e"));
    }

    #[test]
    fn hosts_and_ports() {
        let hp = header_host_port(b" WWW.Example.com.:8080 ");
        assert_eq!(
            (hp.host.as_slice(), hp.port, hp.port_invalid, hp.host_invalid),
            (&b"www.example.com"[..], Some(8080), false, false)
        );
        let hp = header_host_port(b"host:99999");
        assert!(hp.port_invalid);
        assert!(header_host_port(b"bad host").host_invalid);
        assert!(!header_host_port(b"[::1]:80").host_invalid);
        assert!(header_host_port(b"[zz]").host_invalid);
    }
}
