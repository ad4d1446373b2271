//! The `http` object of EVE `http` and `alert` records, under Suricata 8.0's
//! field names and types (extended logging, which alerts always use).

use serde::Serialize;

use super::headers::Header;
use super::tx::HttpTx;

/// Suricata's EVE `http` object. Absent fields are not serialized.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct HttpEve {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    /// Only when a port was given with the host (URI or Host header).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http_port: Option<u16>,
    /// The request URI as sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http_user_agent: Option<String>,
    /// Response Content-Type without its parameters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http_content_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_range: Option<HttpEveContentRange>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http_refer: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http_method: Option<String>,
    /// The request protocol.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// The status token when it is not a number (e.g. `2XX`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_string: Option<String>,
    /// The response Location header.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub redirect: Option<String>,
    /// Response body bytes on the wire.
    pub length: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_headers: Option<Vec<HttpEveHeader>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_headers: Option<Vec<HttpEveHeader>>,
}

/// One entry of `request_headers` / `response_headers` (`dump-all-headers`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HttpEveHeader {
    pub name: String,
    pub value: String,
}

/// A parsed `Content-Range` response header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HttpEveContentRange {
    pub raw: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

/// Suricata's JSON string rule: valid UTF-8 as is, otherwise ASCII bytes as
/// is and every other byte written as the four characters `\xNN`.
pub(crate) fn eve_string(b: &[u8]) -> String {
    match std::str::from_utf8(b) {
        Ok(s) => s.to_owned(),
        Err(_) => {
            let mut out = String::with_capacity(b.len());
            for &c in b {
                if c.is_ascii() {
                    out.push(char::from(c));
                } else {
                    out.push_str(&format!("\\x{c:02x}"));
                }
            }
            out
        }
    }
}

fn digits(s: &[u8]) -> Option<u64> {
    let s = super::line::trim_lws(s);
    if s.is_empty() || s.len() > 19 || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    s.iter().try_fold(0u64, |n, d| n.checked_mul(10)?.checked_add(u64::from(d - b'0')))
}

fn content_range(raw: &[u8]) -> HttpEveContentRange {
    let mut out = HttpEveContentRange { raw: eve_string(raw), start: None, end: None, size: None };
    let v = super::line::trim_lws(raw);
    let Some(spec) = super::line::starts_with_ci(v, b"bytes").then(|| v.get(5..)).flatten() else { return out };
    let spec = super::line::trim_lws(spec);
    let (range, size) = match spec.iter().position(|&b| b == b'/') {
        Some(i) => (spec.get(..i).unwrap_or_default(), spec.get(i + 1..).unwrap_or_default()),
        None => (spec, &b""[..]),
    };
    out.size = digits(size);
    if let Some(dash) = range.iter().position(|&b| b == b'-') {
        out.start = digits(range.get(..dash).unwrap_or_default());
        out.end = digits(range.get(dash + 1..).unwrap_or_default());
    }
    out
}

fn header_list(list: &[Header]) -> Option<Vec<HttpEveHeader>> {
    (!list.is_empty()).then(|| {
        list.iter().map(|h| HttpEveHeader { name: eve_string(&h.name), value: eve_string(&h.value) }).collect()
    })
}

impl HttpTx {
    /// The EVE `http` object for this transaction.
    pub fn eve(&self) -> HttpEve {
        let (rq, rs) = (&self.req, &self.res);
        let req_h = |n: &[u8]| rq.headers.value(n).map(eve_string);
        let res_h = |n: &[u8]| rs.headers.value(n);
        HttpEve {
            hostname: rq.host.as_deref().map(eve_string),
            http_port: rq.port,
            url: rq.uri.as_deref().map(eve_string),
            http_user_agent: req_h(b"user-agent"),
            http_content_type: res_h(b"content-type").map(|v| {
                let end = v.iter().position(|&b| b == b';').unwrap_or(v.len());
                eve_string(v.get(..end).unwrap_or_default())
            }),
            content_range: res_h(b"content-range").map(content_range),
            http_refer: req_h(b"referer"),
            http_method: rq.method.as_deref().map(eve_string),
            protocol: rq.protocol.as_deref().map(eve_string),
            status: rs.status,
            status_string: match rs.status {
                Some(_) => None,
                None => rs.status_raw.as_deref().map(eve_string),
            },
            redirect: res_h(b"location").map(eve_string),
            length: rs.body.wire_len,
            request_headers: None,
            response_headers: None,
        }
    }

    /// [`HttpTx::eve`] plus the header fields `names` lists (the output's
    /// `custom`), each side's in its own list, as sent; a name is matched
    /// without regard to case, `_` standing for `-` (`content_range`).
    pub fn eve_custom(&self, names: &[String]) -> HttpEve {
        let wanted: Vec<Vec<u8>> =
            names.iter().map(|n| n.bytes().map(|b| if b == b'_' { b'-' } else { b.to_ascii_lowercase() }).collect()).collect();
        let pick = |list: &[Header]| {
            let picked: Vec<HttpEveHeader> = list
                .iter()
                .filter(|h| wanted.iter().any(|w| h.name.eq_ignore_ascii_case(w)))
                .map(|h| HttpEveHeader { name: eve_string(&h.name), value: eve_string(&h.value) })
                .collect();
            (!picked.is_empty()).then_some(picked)
        };
        HttpEve {
            request_headers: pick(&self.req.headers.list),
            response_headers: pick(&self.res.headers.list),
            ..self.eve()
        }
    }

    /// [`HttpTx::eve`] plus every header (Suricata's `dump-all-headers: both`).
    pub fn eve_with_headers(&self) -> HttpEve {
        self.eve_dump_headers(true, true)
    }

    /// [`HttpTx::eve`] plus the headers of the sides asked for: the EVE
    /// `http` output's `dump-all-headers` setting, `request` / `response` /
    /// `both` (`none` is plain [`HttpTx::eve`]).
    pub fn eve_dump_headers(&self, request: bool, response: bool) -> HttpEve {
        HttpEve {
            request_headers: if request { header_list(&self.req.headers.list) } else { None },
            response_headers: if response { header_list(&self.res.headers.list) } else { None },
            ..self.eve()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_and_ranges() {
        assert_eq!(eve_string(b"abc"), "abc");
        assert_eq!(eve_string(b"a\xffb"), "a\\xffb");
        let r = content_range(b"bytes 10-19/100");
        assert_eq!((r.start, r.end, r.size), (Some(10), Some(19), Some(100)));
        let r = content_range(b"bytes */100");
        assert_eq!((r.start, r.end, r.size), (None, None, Some(100)));
    }

    #[test]
    fn custom_fields_by_side() {
        let mut tx = HttpTx::new(0, 16, 16);
        tx.req.headers.add(b"Accept-Encoding", b"gzip", 64);
        tx.res.headers.add(b"Content-Range", b"bytes 0-1/2", 64);
        tx.res.headers.add(b"Server", b"s", 64);
        let e = tx.eve_custom(&["content_range".into(), "Accept-Encoding".into()]);
        assert_eq!(e.request_headers, Some(vec![HttpEveHeader { name: "Accept-Encoding".into(), value: "gzip".into() }]));
        assert_eq!(
            e.response_headers,
            Some(vec![HttpEveHeader { name: "Content-Range".into(), value: "bytes 0-1/2".into() }])
        );
    }

    #[test]
    fn dump_all_headers_by_side() {
        let mut tx = HttpTx::new(0, 16, 16);
        tx.req.headers.add(b"Host", b"h", 64);
        tx.res.headers.add(b"Server", b"s", 64);
        let e = tx.eve_dump_headers(false, true);
        assert_eq!(e.request_headers, None);
        assert_eq!(e.response_headers, Some(vec![HttpEveHeader { name: "Server".into(), value: "s".into() }]));
        let e = tx.eve_with_headers();
        assert_eq!(e.request_headers.map(|h| h.len()), Some(1));
        assert_eq!(tx.eve().response_headers, None);
    }
}
