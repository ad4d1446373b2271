//! The request line, and how a request's headers decide what follows them.

use super::events::Ev;
use super::headers::{parse_content_length, without_nul};
use super::line::{contains_ci, is_space, starts_with_ci, trim_space};
use super::tx::{parse_version, Request, Version};
use super::uri;

/// Methods libhtp knows (plus common WebDAV ones); others still parse, but
/// only these count for protocol detection and resynchronization.
pub(crate) const METHODS: &[&[u8]] = &[
    b"GET",
    b"POST",
    b"HEAD",
    b"PUT",
    b"DELETE",
    b"OPTIONS",
    b"CONNECT",
    b"TRACE",
    b"PATCH",
    b"PROPFIND",
    b"PROPPATCH",
    b"MKCOL",
    b"COPY",
    b"MOVE",
    b"LOCK",
    b"UNLOCK",
    b"VERSION-CONTROL",
    b"CHECKOUT",
    b"UNCHECKOUT",
    b"CHECKIN",
    b"UPDATE",
    b"LABEL",
    b"REPORT",
    b"MKWORKSPACE",
    b"MKACTIVITY",
    b"BASELINE-CONTROL",
    b"MERGE",
    b"SEARCH",
    b"INVALID",
];

pub(crate) fn is_known_method(m: &[u8]) -> bool {
    METHODS.contains(&m)
}

/// A request line cut into its parts, with what looked wrong.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct RequestLine<'a> {
    pub(crate) method: &'a [u8],
    pub(crate) uri: &'a [u8],
    pub(crate) protocol: Option<&'a [u8]>,
    pub(crate) leading_ws: bool,
    pub(crate) method_delim_bad: bool,
    pub(crate) uri_delim_bad: bool,
}

/// Method, then URI, then protocol, separated by whitespace. The URI may hold
/// spaces when the last token is an `HTTP/` protocol (as servers accept it);
/// otherwise the URI ends at the first whitespace and the rest is the protocol.
pub(crate) fn parse_line(line: &[u8]) -> RequestLine<'_> {
    let mut out = RequestLine::default();
    let start = line.iter().position(|&b| !is_space(b)).unwrap_or(line.len());
    out.leading_ws = start > 0;
    let rest = line.get(start..).unwrap_or_default();
    let m_end = rest.iter().position(|&b| is_space(b)).unwrap_or(rest.len());
    out.method = rest.get(..m_end).unwrap_or_default();
    out.method_delim_bad = rest.get(m_end).is_some_and(|&b| b != b' ');
    let rest = trim_space(rest.get(m_end..).unwrap_or_default());
    let Some(last_ws) = rest.iter().rposition(|&b| is_space(b)) else {
        out.uri = rest;
        return out;
    };
    let last = rest.get(last_ws + 1..).unwrap_or_default();
    let first_ws = rest.iter().position(|&b| is_space(b)).unwrap_or(last_ws);
    let (uri, delim, proto) = if starts_with_ci(last, b"HTTP") {
        (trim_space(rest.get(..last_ws).unwrap_or_default()), rest.get(last_ws), last)
    } else {
        (
            rest.get(..first_ws).unwrap_or_default(),
            rest.get(first_ws),
            trim_space(rest.get(first_ws..).unwrap_or_default()),
        )
    };
    out.uri = uri;
    out.uri_delim_bad = delim.is_some_and(|&b| b != b' ');
    out.protocol = Some(proto);
    out
}

/// A line a resynchronizing parser may trust as the start of a request.
pub(crate) fn looks_like_request(line: &[u8]) -> bool {
    let l = parse_line(line);
    !l.leading_ws && is_known_method(l.method) && l.protocol.is_some_and(|p| starts_with_ci(p, b"HTTP/"))
}

/// Fills the request-line fields of `req`; returns the anomalies found.
/// `truncated` lines (longer than the header limit) never count as HTTP/0.9.
pub(crate) fn apply_line(req: &mut Request, line: &[u8], truncated: bool, raise: &mut dyn FnMut(Ev)) {
    let l = parse_line(line);
    req.line = Some(line.to_vec());
    req.method = Some(l.method.to_vec());
    req.uri = (!l.uri.is_empty()).then(|| l.uri.to_vec());
    req.protocol = l.protocol.map(<[u8]>::to_vec);
    req.version = l.protocol.map_or(Version::Missing, parse_version);
    if l.leading_ws {
        raise(Ev::RequestLineLeadingWhitespace);
    }
    if l.method_delim_bad {
        raise(Ev::MethodDelimNonCompliant);
    }
    if l.uri_delim_bad {
        raise(Ev::UriDelimNonCompliant);
    }
    let parsed = if l.method == b"CONNECT" { uri::parse_authority_form(l.uri) } else { uri::parse(l.uri) };
    let norm = uri::normalize(&parsed);
    req.uri_norm = (!norm.is_empty()).then_some(norm);
    if uri::is_double_encoded(l.uri) {
        raise(Ev::DoubleEncodedUri);
    }
    if let Some(h) = parsed.host {
        let hp = uri::host_port(h, parsed.port);
        if hp.host_invalid {
            raise(Ev::RequestUriHostInvalid);
        }
        if hp.port_invalid {
            raise(Ev::InvalidAuthorityPort);
        }
        req.uri_has_host = true;
        req.host_raw = Some(h.to_vec());
        req.host = (!hp.host.is_empty()).then_some(hp.host);
        req.port = hp.port;
    }
    match req.version {
        Version::Missing if !truncated => {
            req.http09 = true;
            if l.uri.is_empty() {
                raise(Ev::RequestLineIncomplete);
            } else {
                raise(Ev::RequestLineMissingProtocol);
            }
            if !is_known_method(l.method) {
                raise(Ev::RequestLineInvalid);
            }
        }
        Version::Invalid => raise(Ev::RequestLineInvalid),
        _ => {}
    }
}

/// How the request body is framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReqBody {
    None,
    Length(u64),
    Chunked,
}

/// Host resolution and body framing once the request headers are in.
pub(crate) fn after_headers(req: &mut Request, raise: &mut dyn FnMut(Ev)) -> ReqBody {
    match req.headers.value(b"host").map(<[u8]>::to_vec) {
        Some(value) => {
            let hp = uri::header_host_port(&value);
            if hp.host_invalid {
                raise(Ev::RequestHeaderHostInvalid);
            }
            if hp.port_invalid {
                raise(Ev::InvalidServerPortInRequest);
            }
            if req.uri_has_host {
                let uri_host = req.host.as_deref().unwrap_or_default();
                let ports_differ = matches!((req.port, hp.port), (Some(a), Some(b)) if a != b);
                if uri_host != hp.host.as_slice() || ports_differ {
                    raise(Ev::HostHeaderAmbiguous);
                }
            } else {
                req.host = (!hp.host.is_empty()).then_some(hp.host);
                req.port = hp.port;
                req.host_raw = Some(value);
            }
        }
        None if req.version >= Version::V11 => raise(Ev::MissingHostHeader),
        None => {}
    }
    // libhtp reads the Basic, Digest and Bearer schemes; any other is its
    // unrecognized authorization method.
    if let Some(auth) = req.headers.value(b"authorization") {
        let known = [&b"basic"[..], b"digest", b"bearer"]
            .iter()
            .any(|s| auth.get(..s.len()).is_some_and(|w| w.eq_ignore_ascii_case(s)));
        if !known {
            raise(Ev::RequestAuthUnrecognized);
        }
    }
    if req.method.as_deref() == Some(b"CONNECT") {
        return ReqBody::None;
    }
    if let Some(te) = req.headers.value(b"transfer-encoding") {
        if contains_ci(&without_nul(te), b"chunked") {
            if req.version < Version::V11 {
                raise(Ev::InvalidTransferEncodingValueInRequest);
            }
            return ReqBody::Chunked;
        }
        raise(Ev::InvalidTransferEncodingValueInRequest);
    }
    match req.headers.value(b"content-length") {
        Some(cl) => match parse_content_length(cl) {
            Some(0) => ReqBody::None,
            Some(n) => ReqBody::Length(n),
            None => {
                raise(Ev::InvalidContentLengthFieldInRequest);
                ReqBody::None
            }
        },
        None => ReqBody::None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_lines() {
        let l = parse_line(b"GET /index.html HTTP/1.1");
        assert_eq!((l.method, l.uri, l.protocol), (&b"GET"[..], &b"/index.html"[..], Some(&b"HTTP/1.1"[..])));
        let l = parse_line(b"GET /uri afterspace HTTP/1.1");
        assert_eq!(l.uri, b"/uri afterspace");
        let l = parse_line(b"GET /a junk");
        assert_eq!((l.uri, l.protocol), (&b"/a"[..], Some(&b"junk"[..])));
        let l = parse_line(b"  GET\t/x\tHTTP/1.0");
        assert!(l.leading_ws && l.method_delim_bad && l.uri_delim_bad);
        let l = parse_line(b"GET /simple");
        assert_eq!((l.uri, l.protocol), (&b"/simple"[..], None));
        assert!(looks_like_request(b"POST /x HTTP/1.1"));
        assert!(!looks_like_request(b"hello world HTTP/1.1"));
    }
}
