//! The status line, and how a response's headers decide what follows them.

use super::events::Ev;
use super::headers::{parse_content_length, without_nul};
use super::line::{contains_ci, is_space, starts_with_ci, trim_space};
use super::tx::{parse_version, Request, Response, Version};

/// libhtp's test: a response line must start (after whitespace) with `HTTP`;
/// anything else is the body of an HTTP/0.9-style response.
pub(crate) fn looks_like_status_line(line: &[u8]) -> bool {
    let start = line.iter().position(|&b| !is_space(b) && b != 0).unwrap_or(line.len());
    starts_with_ci(line.get(start..).unwrap_or_default(), b"HTTP")
}

/// Fills the status-line fields of `res`.
pub(crate) fn apply_line(res: &mut Response, line: &[u8], raise: &mut dyn FnMut(Ev)) {
    res.line = Some(line.to_vec());
    // libhtp lets NULs lead the protocol, like blanks.
    let start = line.iter().position(|&b| !is_space(b) && b != 0).unwrap_or(line.len());
    let mut parts = Fields { s: line.get(start..).unwrap_or_default() };
    let protocol = parts.next_token();
    let status = parts.next_token();
    let message = parts.rest();
    res.protocol = Some(protocol.to_vec());
    res.version = parse_version(protocol);
    if res.version == Version::Invalid {
        raise(Ev::ResponseInvalidProtocol);
    }
    res.status_raw = (!status.is_empty()).then(|| status.to_vec());
    res.status = parse_status(status);
    if res.status.is_none() {
        raise(Ev::ResponseInvalidStatus);
    }
    res.message = (!message.is_empty()).then(|| message.to_vec());
}

struct Fields<'a> {
    s: &'a [u8],
}

impl<'a> Fields<'a> {
    fn next_token(&mut self) -> &'a [u8] {
        let start = self.s.iter().position(|&b| !is_space(b)).unwrap_or(self.s.len());
        let s = self.s.get(start..).unwrap_or_default();
        let end = s.iter().position(|&b| is_space(b)).unwrap_or(s.len());
        self.s = s.get(end..).unwrap_or_default();
        s.get(..end).unwrap_or_default()
    }

    fn rest(&self) -> &'a [u8] {
        let start = self.s.iter().position(|&b| !is_space(b)).unwrap_or(self.s.len());
        self.s.get(start..).unwrap_or_default()
    }
}

fn parse_status(s: &[u8]) -> Option<u16> {
    if s.is_empty() || s.len() > 3 || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n = s.iter().fold(0u16, |n, d| n * 10 + u16::from(d - b'0'));
    (100..=999).contains(&n).then_some(n)
}

/// What the end of the response headers leads to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ResNext {
    /// A 1xx other than 101: the real response is still to come.
    Interim,
    /// The connection stops being HTTP (101, or a successful CONNECT).
    Tunnel,
    None,
    Length(u64),
    Chunked,
    /// Until the connection closes.
    Close,
}

/// The framing rules of libhtp's response side, in its order.
pub(crate) fn after_headers(req: &Request, res: &mut Response, raise: &mut dyn FnMut(Ev)) -> ResNext {
    let status = res.status.unwrap_or(0);
    let te = res.headers.value(b"transfer-encoding").map(without_nul);
    let cl = res.headers.value(b"content-length");
    let method = req.method.as_deref();
    if method == Some(b"CONNECT") && (200..300).contains(&status) {
        return ResNext::Tunnel;
    }
    if status == 101 {
        // A switch that still announces a body is taken as an ordinary response.
        if te.is_none() && cl.is_none() {
            return ResNext::Tunnel;
        }
    } else if status == 100 && te.is_none() && cl.and_then(parse_content_length).unwrap_or(0) == 0 {
        if res.continues > 0 {
            raise(Ev::Continue100AlreadySeen);
        }
        res.continues = res.continues.saturating_add(1);
        return ResNext::Interim;
    }
    if method == Some(b"HEAD") {
        return ResNext::None;
    }
    // Browsers read a body after 1xx/204/304 when one is announced, and so does libhtp.
    if ((100..200).contains(&status) || status == 204 || status == 304) && te.is_none() && cl.is_none() {
        return ResNext::None;
    }
    if let Some(te) = te.as_deref().filter(|te| contains_ci(te, b"chunked")) {
        if !trim_space(te).eq_ignore_ascii_case(b"chunked") {
            raise(Ev::ResponseAbnormalTransferEncoding);
        }
        if res.version < Version::V11 {
            raise(Ev::ResponseChunkedOldProto);
        }
        return ResNext::Chunked;
    }
    match cl {
        Some(cl) => match parse_content_length(cl) {
            Some(0) => ResNext::None,
            Some(n) => ResNext::Length(n),
            None => {
                raise(Ev::InvalidContentLengthFieldInResponse);
                ResNext::Close
            }
        },
        None => ResNext::Close,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_lines() {
        let mut res = Response::default();
        let mut evs = Vec::new();
        apply_line(&mut res, b"HTTP/1.1 200 OK fine", &mut |e| evs.push(e));
        assert_eq!(res.status, Some(200));
        assert_eq!(res.message.as_deref(), Some(&b"OK fine"[..]));
        assert!(evs.is_empty());
        apply_line(&mut res, b"HTTP/1.1 2XX", &mut |e| evs.push(e));
        assert_eq!((res.status, res.status_raw.as_deref()), (None, Some(&b"2XX"[..])));
        assert_eq!(evs, vec![Ev::ResponseInvalidStatus]);
        assert!(looks_like_status_line(b" http/1.0 200"));
        assert!(!looks_like_status_line(b"<html>"));
    }
}
