//! A MIME message reader (RFC 2045-2047, RFC 5322) for mail bodies: lines
//! in, as the mail protocol delivers them; out, the message's header
//! fields (unfolded, each value bounded), its attachments' decoded bytes
//! (base64, quoted-printable or as they are), the URLs its text parts name,
//! and anomalies under Suricata's names. Multipart bodies nest, to a
//! bounded depth; what it keeps between lines is bounded by the header
//! limits and one partial base64 quantum, so a hostile message cannot make
//! it grow.
//!
//! ```
//! use vigil_applayer::codecs::mime::{Event, Mime, MimeConfig};
//! let mut m = Mime::new(MimeConfig::default());
//! let mut files = Vec::new();
//! for line in ["Subject: hi", "Content-Type: multipart/mixed; boundary=\"B\"", "", "--B",
//!              "Content-Disposition: attachment; filename=\"a.txt\"",
//!              "Content-Transfer-Encoding: base64", "", "aGVsbG8=", "--B--"] {
//!     m.line(line.as_bytes(), true, &mut |e| match e {
//!         Event::FileOpen(name) => files.push((name.to_vec(), Vec::new())),
//!         Event::FileData(d) => files.last_mut().unwrap().1.extend_from_slice(d),
//!         _ => {}
//!     });
//! }
//! assert_eq!(m.header(b"subject"), Some(&b"hi"[..]));
//! assert_eq!(files, vec![(b"a.txt".to_vec(), b"hello".to_vec())]);
//! ```

use super::find;
use super::multipart::boundary as multipart_boundary;

/// Nested multiparts followed; deeper ones are read as data.
pub const MAX_DEPTH: usize = 16;
/// Header fields kept per entity; later ones are dropped.
pub const MAX_HEADERS: usize = 256;
/// URLs kept per message.
pub const MAX_URLS: usize = 256;
/// RFC 5322's line limit (998 characters), past which a line is an anomaly.
pub const LONG_LINE: usize = 998;
/// RFC 2045's limit on an encoded line, past which base64 is suspect.
const LONG_ENCODED_LINE: usize = 76;
/// A file name longer than this is an anomaly, and cut there, as Suricata's.
const LONG_FILENAME: usize = 255;

/// What the reader does, from `app-layer.protocols.smtp.mime`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MimeConfig {
    pub decode_base64: bool,
    pub decode_quoted_printable: bool,
    /// Bytes kept of each header value.
    pub header_value_depth: usize,
    pub extract_urls: bool,
    /// Schemes URLs are looked for with (`http`), lower case.
    pub url_schemes: Vec<String>,
    /// URLs keep their scheme.
    pub log_url_scheme: bool,
    /// `body-md5`: the MD5 of the message's body is taken (by the mail
    /// protocol, over the body as it was sent).
    pub body_md5: bool,
}

impl Default for MimeConfig {
    fn default() -> Self {
        MimeConfig {
            decode_base64: true,
            decode_quoted_printable: true,
            header_value_depth: 2000,
            extract_urls: true,
            url_schemes: vec!["http".into()],
            log_url_scheme: false,
            body_md5: false,
        }
    }
}

/// What the reader found, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event<'a> {
    /// The message's own header block ended (its fields are in [`Mime::header`]).
    HeadersDone,
    /// An attachment begins, with its name.
    FileOpen(&'a [u8]),
    /// More of its decoded bytes.
    FileData(&'a [u8]),
    FileClose,
    /// A URL a text part names (as logged: without its scheme unless asked).
    Url(&'a [u8]),
    /// Decoded bytes of a text part (for `email.body_md5`-like uses).
    Text(&'a [u8]),
    /// An anomaly, under Suricata's event name (`MIME_LONG_LINE`).
    Anomaly(&'static str),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Encoding {
    #[default]
    Plain,
    Base64,
    QuotedPrintable,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum State {
    /// Reading an entity's header block.
    #[default]
    Headers,
    /// Reading an entity's body.
    Body,
}

/// The entity being read (the message, or a part of a multipart).
#[derive(Debug, Default)]
struct Entity {
    headers: Vec<(Vec<u8>, Vec<u8>)>,
    encoding: Encoding,
    /// It is an attachment (it has a file name): its bytes are a file.
    file: bool,
    /// Its body is text: URLs are looked for in it.
    text: bool,
    /// A multipart: its body is parts, not data.
    multipart: bool,
    /// A line break is owed before the next line's bytes (the one before a
    /// delimiter belongs to the delimiter).
    crlf_owed: bool,
    /// Base64 characters waiting for a full quantum.
    b64: Vec<u8>,
    /// An encoded line past RFC 2045's limit was reported.
    long_encoded: bool,
}

/// The reader of one message.
#[derive(Debug)]
pub struct Mime {
    cfg: MimeConfig,
    state: State,
    /// The message's own header fields, lower-case names, unfolded values.
    top: Vec<(Vec<u8>, Vec<u8>)>,
    top_done: bool,
    entity: Entity,
    /// Boundaries of the open multiparts, outermost first.
    boundaries: Vec<Vec<u8>>,
    urls: Vec<Vec<u8>>,
    /// The previous line was only part of a longer one.
    continued: bool,
    out: Vec<u8>,
}

fn lower(b: &[u8]) -> Vec<u8> {
    b.to_ascii_lowercase()
}

/// A header value's parameter (`name`, `filename`, `boundary`), unquoted.
pub fn parameter(value: &[u8], name: &[u8]) -> Option<Vec<u8>> {
    let lower = value.to_ascii_lowercase();
    let mut from = 0;
    while let Some(at) = find(&lower[from..], name).map(|i| i + from) {
        let before_ok = at == 0 || matches!(lower[at - 1], b';' | b' ' | b'\t');
        let after = lower[at + name.len()..].trim_ascii_start();
        from = at + name.len();
        if !before_ok || !after.starts_with(b"=") {
            continue;
        }
        let start = value.len() - after.len() + 1;
        let v = value[start..].trim_ascii_start();
        let out = match v.strip_prefix(b"\"") {
            Some(q) => &q[..q.iter().position(|&c| c == b'"').unwrap_or(q.len())],
            None => &v[..v.iter().position(|&c| c == b';' || c.is_ascii_whitespace()).unwrap_or(v.len())],
        };
        return Some(out.to_vec());
    }
    None
}

fn b64_value(c: u8) -> Option<u8> {
    match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

/// Decodes whole quanta of `held` into `out`, keeping the rest; false
/// when a character is not base64.
fn b64_decode(held: &mut Vec<u8>, out: &mut Vec<u8>) -> bool {
    let mut ok = true;
    let whole = held.len() / 4 * 4;
    for q in held[..whole].chunks(4) {
        let pad = q.iter().rev().take_while(|&&c| c == b'=').count().min(2);
        let mut n = 0u32;
        for &c in &q[..4 - pad] {
            match b64_value(c) {
                Some(v) => n = n << 6 | u32::from(v),
                None => ok = false,
            }
        }
        n <<= 6 * pad as u32;
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..3 - pad]);
    }
    held.drain(..whole);
    ok
}

fn hex(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

/// A quoted-printable line decoded into `out`; true when it ends with a
/// soft line break (no line break owed after it).
fn qp_decode(line: &[u8], out: &mut Vec<u8>) -> (bool, bool) {
    let line = line.trim_ascii_end();
    let (body, soft) = match line.strip_suffix(b"=") {
        Some(b) => (b, true),
        None => (line, false),
    };
    let mut ok = true;
    let mut i = 0;
    while i < body.len() {
        if body[i] == b'=' {
            match (body.get(i + 1).copied().and_then(hex), body.get(i + 2).copied().and_then(hex)) {
                (Some(h), Some(l)) => {
                    out.push(h << 4 | l);
                    i += 3;
                    continue;
                }
                _ => ok = false,
            }
        }
        out.push(body[i]);
        i += 1;
    }
    (soft, ok)
}

impl Mime {
    pub fn new(cfg: MimeConfig) -> Self {
        Mime {
            cfg,
            state: State::Headers,
            top: Vec::new(),
            top_done: false,
            entity: Entity { text: true, ..Entity::default() },
            boundaries: Vec::new(),
            urls: Vec::new(),
            continued: false,
            out: Vec::new(),
        }
    }

    /// The first value of the message's header field `name` (lower case).
    pub fn header(&self, name: &[u8]) -> Option<&[u8]> {
        self.top.iter().find(|(n, _)| n == name).map(|(_, v)| &v[..])
    }

    /// Every value of the message's header field `name` (lower case).
    pub fn headers<'a>(&'a self, name: &'a [u8]) -> impl Iterator<Item = &'a [u8]> + 'a {
        self.top.iter().filter(move |(n, _)| n == name).map(|(_, v)| &v[..])
    }

    /// The message's header block was read whole.
    pub fn headers_done(&self) -> bool {
        self.top_done
    }

    /// The URLs found so far, each once.
    pub fn urls(&self) -> &[Vec<u8>] {
        &self.urls
    }

    /// One line of the message, without its line break. `whole`: false
    /// when it is the first part of a longer line whose rest comes next.
    pub fn line(&mut self, line: &[u8], whole: bool, out: &mut dyn FnMut(Event<'_>)) {
        let first_piece = !self.continued;
        self.continued = !whole;
        if first_piece && (!whole || line.len() > LONG_LINE) {
            out(Event::Anomaly("MIME_LONG_LINE"));
        }
        match self.state {
            State::Headers if first_piece => self.header_line(line, out),
            State::Headers => {}
            State::Body => self.body_line(line, first_piece, whole, out),
        }
    }

    /// The message ended: an open attachment is closed.
    pub fn end(&mut self, out: &mut dyn FnMut(Event<'_>)) {
        if self.state == State::Headers {
            self.end_headers(out);
        }
        self.end_entity(out);
    }

    fn headers_mut(&mut self) -> &mut Vec<(Vec<u8>, Vec<u8>)> {
        if self.top_done {
            &mut self.entity.headers
        } else {
            &mut self.top
        }
    }

    fn header_line(&mut self, line: &[u8], out: &mut dyn FnMut(Event<'_>)) {
        if line.is_empty() {
            return self.end_headers(out);
        }
        let depth = self.cfg.header_value_depth;
        if matches!(line[0], b' ' | b'\t') {
            // A folded line continues the field before it, its leading
            // white space dropped, as Suricata unfolds.
            let line = line.trim_ascii_start();
            if let Some((_, v)) = self.headers_mut().last_mut() {
                let room = depth.saturating_sub(v.len());
                v.extend_from_slice(&line[..line.len().min(room)]);
            }
            return;
        }
        let Some(colon) = line.iter().position(|&c| c == b':') else {
            out(Event::Anomaly("MIME_INVALID_HEADER"));
            return;
        };
        let headers = self.headers_mut();
        if headers.len() >= MAX_HEADERS {
            return;
        }
        let value = line[colon + 1..].trim_ascii();
        headers.push((lower(line[..colon].trim_ascii()), value[..value.len().min(depth)].to_vec()));
    }

    fn entity_header(&self, name: &[u8]) -> Option<&[u8]> {
        let h = if self.top_done { &self.entity.headers } else { &self.top };
        h.iter().find(|(n, _)| n == name).map(|(_, v)| &v[..])
    }

    fn end_headers(&mut self, out: &mut dyn FnMut(Event<'_>)) {
        let content_type = self.entity_header(b"content-type").unwrap_or_default().to_vec();
        let disposition = self.entity_header(b"content-disposition").unwrap_or_default().to_vec();
        let encoding = lower(self.entity_header(b"content-transfer-encoding").unwrap_or_default().trim_ascii());
        let ct = lower(&content_type);
        let name = parameter(&disposition, b"filename").or_else(|| parameter(&content_type, b"name"));
        let e = &mut self.entity;
        e.encoding = match &encoding[..] {
            b"base64" if self.cfg.decode_base64 => Encoding::Base64,
            b"quoted-printable" if self.cfg.decode_quoted_printable => Encoding::QuotedPrintable,
            _ => Encoding::Plain,
        };
        e.multipart = false;
        if let Some(b) = multipart_boundary(&content_type) {
            if self.boundaries.len() < MAX_DEPTH {
                self.boundaries.push(b);
                e.multipart = true;
            } else {
                out(Event::Anomaly("MIME_BOUNDARY_TOO_LONG"));
            }
        }
        if !e.multipart && ct.starts_with(b"message/rfc822") {
            // An encapsulated message (RFC 2046 5.2.1): its own header block
            // comes next and says how its body is encoded and named; the
            // outer part's encoding and name do not apply to it.
            self.entity = Entity::default();
            self.state = State::Headers;
            if !self.top_done {
                self.top_done = true;
                out(Event::HeadersDone);
            }
            return;
        }
        e.text = !e.multipart && (ct.is_empty() || ct.starts_with(b"text/"));
        e.file = !e.multipart && name.is_some();
        self.state = State::Body;
        if !self.top_done {
            self.top_done = true;
            out(Event::HeadersDone);
        }
        if let Some(mut name) = name.filter(|_| self.entity.file) {
            if name.len() > LONG_FILENAME {
                out(Event::Anomaly("MIME_LONG_FILENAME"));
                name.truncate(LONG_FILENAME);
            }
            out(Event::FileOpen(&name));
        }
    }

    /// Whether `line` is a delimiter of an open multipart: its depth, and
    /// whether it closes it.
    fn delimiter(&self, line: &[u8]) -> Option<(usize, bool)> {
        let rest = line.strip_prefix(b"--")?;
        self.boundaries.iter().enumerate().rev().find_map(|(i, b)| {
            let after = rest.strip_prefix(&b[..])?;
            let after = after.trim_ascii_end();
            match after {
                b"" => Some((i, false)),
                b"--" => Some((i, true)),
                _ => None,
            }
        })
    }

    fn end_entity(&mut self, out: &mut dyn FnMut(Event<'_>)) {
        let e = &mut self.entity;
        if e.encoding == Encoding::Base64 && !e.b64.is_empty() {
            // A last quantum without its padding.
            while !e.b64.len().is_multiple_of(4) {
                e.b64.push(b'=');
            }
            self.out.clear();
            b64_decode(&mut e.b64, &mut self.out);
            if e.file {
                out(Event::FileData(&self.out));
            }
        }
        if e.file {
            out(Event::FileClose);
        }
        self.entity = Entity::default();
    }

    fn body_line(&mut self, line: &[u8], first_piece: bool, whole: bool, out: &mut dyn FnMut(Event<'_>)) {
        if first_piece && !self.boundaries.is_empty() {
            if let Some((depth, closes)) = self.delimiter(line) {
                self.end_entity(out);
                if closes {
                    self.boundaries.truncate(depth);
                    // The closed multipart's epilogue: data of nothing.
                    self.entity = Entity::default();
                    self.state = State::Body;
                } else {
                    self.boundaries.truncate(depth + 1);
                    self.state = State::Headers;
                }
                return;
            }
        }
        let e = &mut self.entity;
        if e.multipart || !(e.file || e.text) {
            return;
        }
        self.out.clear();
        match e.encoding {
            Encoding::Base64 => {
                if (line.len() > LONG_ENCODED_LINE || !first_piece) && !e.long_encoded {
                    // Decodable still, but past RFC 2045's limit: once per part.
                    e.long_encoded = true;
                    out(Event::Anomaly("MIME_LONG_ENC_LINE"));
                }
                e.b64.extend(line.iter().copied().filter(|c| !c.is_ascii_whitespace()));
                if !b64_decode(&mut e.b64, &mut self.out) {
                    out(Event::Anomaly("MIME_INVALID_BASE64"));
                }
            }
            Encoding::QuotedPrintable => {
                if e.crlf_owed {
                    self.out.extend_from_slice(b"\r\n");
                }
                let (soft, ok) = qp_decode(line, &mut self.out);
                e.crlf_owed = !soft && whole;
                if !ok {
                    out(Event::Anomaly("MIME_INVALID_QP"));
                }
            }
            Encoding::Plain => {
                if e.crlf_owed && first_piece {
                    self.out.extend_from_slice(b"\r\n");
                }
                self.out.extend_from_slice(line);
                e.crlf_owed = whole;
            }
        }
        if self.out.is_empty() {
            return;
        }
        if e.file {
            out(Event::FileData(&self.out));
        } else {
            out(Event::Text(&self.out));
            if self.cfg.extract_urls {
                let found = find_urls(&self.out, &self.cfg);
                for u in found {
                    if self.urls.len() < MAX_URLS && !self.urls.contains(&u) {
                        out(Event::Url(&u));
                        self.urls.push(u);
                    }
                }
            }
        }
    }
}

/// The URLs of `text` with one of the configured schemes, as logged.
fn find_urls(text: &[u8], cfg: &MimeConfig) -> Vec<Vec<u8>> {
    let lower = text.to_ascii_lowercase();
    let mut found = Vec::new();
    for scheme in &cfg.url_schemes {
        let prefix = format!("{scheme}://");
        let mut from = 0;
        while let Some(at) = find(&lower[from..], prefix.as_bytes()).map(|i| i + from) {
            let start = at + prefix.len();
            let len = text[start..]
                .iter()
                .position(|c| c.is_ascii_whitespace() || matches!(c, b'"' | b'\'' | b'<' | b'>'))
                .unwrap_or(text.len() - start);
            if len > 0 {
                let from_at = if cfg.log_url_scheme { at } else { start };
                found.push(text[from_at..start + len].to_vec());
            }
            from = start + len;
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, PartialEq)]
    struct Seen {
        files: Vec<(Vec<u8>, Vec<u8>, bool)>,
        urls: Vec<Vec<u8>>,
        anomalies: Vec<&'static str>,
        text: Vec<u8>,
    }

    fn read(msg: &str, cfg: MimeConfig) -> (Mime, Seen) {
        let mut m = Mime::new(cfg);
        let mut seen = Seen::default();
        let mut on = |e: Event<'_>| match e {
            Event::FileOpen(n) => seen.files.push((n.to_vec(), Vec::new(), false)),
            Event::FileData(d) => seen.files.last_mut().unwrap().1.extend_from_slice(d),
            Event::FileClose => seen.files.last_mut().unwrap().2 = true,
            Event::Url(u) => seen.urls.push(u.to_vec()),
            Event::Anomaly(a) => seen.anomalies.push(a),
            Event::Text(t) => seen.text.extend_from_slice(t),
            Event::HeadersDone => {}
        };
        for line in msg.split("\r\n") {
            m.line(line.as_bytes(), true, &mut on);
        }
        m.end(&mut on);
        (m, seen)
    }

    const MSG: &str = "From: A <a@x.org>\r\nTo: b@y.org,\r\n \"C, D\" <c@y.org>\r\nSubject: hi\r\n\
Content-Type: multipart/mixed; boundary=\"BB\"\r\n\r\npreamble\r\n--BB\r\nContent-Type: text/plain\r\n\r\n\
see http://example.com/a and https://ex.org/b?c\r\n--BB\r\nContent-Type: multipart/alternative; boundary=inner\r\n\r\n\
--inner\r\nContent-Type: text/html\r\n\r\n<a href=\"http://w3.org/x\">x</a>\r\n--inner--\r\n--BB\r\n\
Content-Type: application/octet-stream; name=\"f.bin\"\r\nContent-Transfer-Encoding: base64\r\n\r\naGVsbG8g\r\nd29ybGQ=\r\n\
--BB\r\nContent-Disposition: attachment; filename=q.txt\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n\
a=3Db soft=\r\nbreak\r\nline two\r\n--BB--\r\nepilogue";

    #[test]
    fn headers_attachments_and_urls() {
        let (m, seen) = read(MSG, MimeConfig::default());
        assert_eq!(m.header(b"from"), Some(&b"A <a@x.org>"[..]));
        assert_eq!(m.header(b"to"), Some(&b"b@y.org,\"C, D\" <c@y.org>"[..]));
        assert_eq!(
            seen.files,
            vec![
                (b"f.bin".to_vec(), b"hello world".to_vec(), true),
                (b"q.txt".to_vec(), b"a=b softbreak\r\nline two".to_vec(), true),
            ]
        );
        assert_eq!(seen.urls, vec![b"example.com/a".to_vec(), b"w3.org/x".to_vec()]);
        assert!(seen.anomalies.is_empty(), "{:?}", seen.anomalies);
    }

    #[test]
    fn an_encapsulated_message_is_read_by_its_own_headers() {
        // The outer part claims base64 and a name; the message inside says
        // how its own parts are, and only they are files.
        let msg = "Subject: outer\r\nContent-Type: multipart/mixed; boundary=B\r\n\r\n--B\r\n\
Content-Type: message/rfc822\r\nContent-Transfer-Encoding: base64\r\n\
Content-Disposition: attachment; filename=\"cover.txt\"\r\n\r\nSubject: inner\r\n\
Content-Disposition: attachment; filename=\"real.bin\"\r\n\r\nplain bytes\r\n--B--\r\n";
        let (m, seen) = read(msg, MimeConfig::default());
        assert_eq!(m.header(b"subject"), Some(&b"outer"[..]));
        assert_eq!(seen.files, vec![(b"real.bin".to_vec(), b"plain bytes".to_vec(), true)]);
    }

    #[test]
    fn folded_values_are_unfolded_and_bounded() {
        let cfg = MimeConfig { header_value_depth: 10, ..MimeConfig::default() };
        let (m, _) = read("Subject: 0123456\r\n 789abcdef\r\n\r\nbody", cfg);
        assert_eq!(m.header(b"subject"), Some(&b"0123456789"[..]));
        let (m, _) = read("To: b@y.org,\r\n\tc@y.org\r\n\r\n", MimeConfig::default());
        assert_eq!(m.header(b"to"), Some(&b"b@y.org,c@y.org"[..]));
    }

    #[test]
    fn schemes_and_long_lines() {
        let cfg = MimeConfig {
            url_schemes: vec!["http".into(), "https".into()],
            log_url_scheme: true,
            ..MimeConfig::default()
        };
        let long = "x".repeat(LONG_LINE + 1);
        let (_, seen) = read(&format!("Subject: s\r\n\r\ngo https://ex.org/b http://a.b/c\r\n{long}"), cfg);
        assert_eq!(seen.urls, vec![b"http://a.b/c".to_vec(), b"https://ex.org/b".to_vec()]);
        assert_eq!(seen.anomalies, vec!["MIME_LONG_LINE"]);
    }

    #[test]
    fn a_line_in_pieces_is_one_line() {
        let mut m = Mime::new(MimeConfig::default());
        let mut text = Vec::new();
        let mut anomalies = Vec::new();
        let mut on = |e: Event<'_>| match e {
            Event::Text(t) => text.extend_from_slice(t),
            Event::Anomaly(a) => anomalies.push(a),
            _ => {}
        };
        for (l, whole) in [(&b""[..], true), (b"abc", false), (b"def", true), (b"ghi", true)] {
            m.line(l, whole, &mut on);
        }
        assert_eq!(text, b"abcdef\r\nghi");
        assert_eq!(anomalies, ["MIME_LONG_LINE"]);
    }

    #[test]
    fn parameters_quoted_or_not() {
        assert_eq!(parameter(b"attachment; filename=\"a b.txt\"", b"filename"), Some(b"a b.txt".to_vec()));
        assert_eq!(parameter(b"text/plain; NAME=x.txt; charset=utf-8", b"name"), Some(b"x.txt".to_vec()));
        assert_eq!(parameter(b"attachment; xfilename=y", b"filename"), None);
    }
}
