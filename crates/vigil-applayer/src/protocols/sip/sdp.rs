//! SDP (RFC 4566) bodies of SIP messages: the session's fields, its time
//! descriptions and its media descriptions, each `<type>=<value>` line kept
//! as written, for the `sdp` object of `sip` records and the `sdp.*`
//! buffers.

use serde_json::{Map, Value};

use crate::proto::eve_text as text;

/// Media descriptions and lines of one kind kept per body; more are dropped.
const MAX_ITEMS: usize = 64;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Media {
    pub media: Vec<u8>,
    pub media_info: Option<Vec<u8>>,
    pub connection_data: Option<Vec<u8>>,
    pub bandwidths: Vec<Vec<u8>>,
    pub encryption_key: Option<Vec<u8>>,
    pub attributes: Vec<Vec<u8>>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sdp {
    pub origin: Option<Vec<u8>>,
    pub session_name: Option<Vec<u8>>,
    pub session_info: Option<Vec<u8>>,
    pub uri: Option<Vec<u8>>,
    pub email: Option<Vec<u8>>,
    pub phone_number: Option<Vec<u8>>,
    pub connection_data: Option<Vec<u8>>,
    pub bandwidths: Vec<Vec<u8>>,
    /// `t=` lines, each with the `r=` lines after it.
    pub times: Vec<(Vec<u8>, Vec<Vec<u8>>)>,
    pub timezone: Option<Vec<u8>>,
    pub encryption_key: Option<Vec<u8>>,
    pub attributes: Vec<Vec<u8>>,
    pub media: Vec<Media>,
}

fn push(list: &mut Vec<Vec<u8>>, v: &[u8]) {
    if list.len() < MAX_ITEMS {
        list.push(v.to_vec());
    }
}

/// Reads a body; `None` when it does not open with SDP's `v=` line.
pub fn parse(body: &[u8]) -> Option<Sdp> {
    let mut lines = body.split(|&c| c == b'\n').map(|l| l.strip_suffix(b"\r").unwrap_or(l)).filter(|l| !l.is_empty());
    if !lines.next()?.starts_with(b"v=") {
        return None;
    }
    let mut s = Sdp::default();
    for line in lines {
        let [kind, b'=', value @ ..] = line else { continue };
        if let Some(m) = s.media.last_mut() {
            // After the first m= line, fields belong to the media description.
            match kind {
                b'm' => {}
                b'i' => m.media_info = Some(value.to_vec()),
                b'c' => m.connection_data = Some(value.to_vec()),
                b'b' => push(&mut m.bandwidths, value),
                b'k' => m.encryption_key = Some(value.to_vec()),
                b'a' => push(&mut m.attributes, value),
                _ => {}
            }
            if *kind != b'm' {
                continue;
            }
        }
        match kind {
            b'o' => s.origin = Some(value.to_vec()),
            b's' => s.session_name = Some(value.to_vec()),
            b'i' => s.session_info = Some(value.to_vec()),
            b'u' => s.uri = Some(value.to_vec()),
            b'e' => s.email = Some(value.to_vec()),
            b'p' => s.phone_number = Some(value.to_vec()),
            b'c' => s.connection_data = Some(value.to_vec()),
            b'b' => push(&mut s.bandwidths, value),
            b't' if s.times.len() < MAX_ITEMS => s.times.push((value.to_vec(), Vec::new())),
            b'r' => {
                if let Some((_, repeats)) = s.times.last_mut() {
                    push(repeats, value);
                }
            }
            b'z' => s.timezone = Some(value.to_vec()),
            b'k' => s.encryption_key = Some(value.to_vec()),
            b'a' => push(&mut s.attributes, value),
            b'm' if s.media.len() < MAX_ITEMS => s.media.push(Media { media: value.to_vec(), ..Media::default() }),
            _ => {}
        }
    }
    Some(s)
}

fn opt(m: &mut Map<String, Value>, key: &str, v: &Option<Vec<u8>>) {
    if let Some(v) = v {
        m.insert(key.into(), text(v));
    }
}

fn list(m: &mut Map<String, Value>, key: &str, v: &[Vec<u8>]) {
    if !v.is_empty() {
        m.insert(key.into(), Value::Array(v.iter().map(|x| text(x)).collect()));
    }
}

impl Sdp {
    pub fn eve(&self) -> Value {
        let mut m = Map::new();
        opt(&mut m, "origin", &self.origin);
        opt(&mut m, "session_name", &self.session_name);
        opt(&mut m, "session_info", &self.session_info);
        opt(&mut m, "uri", &self.uri);
        opt(&mut m, "email", &self.email);
        opt(&mut m, "phone_number", &self.phone_number);
        opt(&mut m, "connection_data", &self.connection_data);
        list(&mut m, "bandwidths", &self.bandwidths);
        if !self.times.is_empty() {
            let t = self
                .times
                .iter()
                .map(|(time, repeats)| {
                    let mut o = Map::new();
                    o.insert("time".into(), text(time));
                    if let Some(r) = repeats.first() {
                        o.insert("repeat_time".into(), text(r));
                    }
                    Value::Object(o)
                })
                .collect();
            m.insert("time_descriptions".into(), Value::Array(t));
        }
        opt(&mut m, "timezone", &self.timezone);
        opt(&mut m, "encryption_key", &self.encryption_key);
        list(&mut m, "attributes", &self.attributes);
        if !self.media.is_empty() {
            let media = self
                .media
                .iter()
                .map(|d| {
                    let mut o = Map::new();
                    o.insert("media".into(), text(&d.media));
                    opt(&mut o, "media_info", &d.media_info);
                    opt(&mut o, "connection_data", &d.connection_data);
                    list(&mut o, "bandwidths", &d.bandwidths);
                    opt(&mut o, "encryption_key", &d.encryption_key);
                    list(&mut o, "attributes", &d.attributes);
                    Value::Object(o)
                })
                .collect();
            m.insert("media_descriptions".into(), Value::Array(media));
        }
        Value::Object(m)
    }

    /// Value `index` of an `sdp.*` buffer by its number (see the buffer table).
    pub fn buffer(&self, id: u8, index: usize) -> Option<&[u8]> {
        fn single(v: &Option<Vec<u8>>, index: usize) -> Option<&[u8]> {
            v.as_deref().filter(|_| index == 0)
        }
        let one = |v| single(v, index);
        match id {
            0 => one(&self.origin),
            1 => one(&self.session_name),
            2 => one(&self.session_info),
            3 => one(&self.uri),
            4 => one(&self.email),
            5 => one(&self.phone_number),
            6 => one(&self.connection_data),
            7 => self.bandwidths.get(index).map(Vec::as_slice),
            8 => self.times.get(index).map(|t| &t.0[..]),
            9 => self.times.iter().flat_map(|t| t.1.iter()).nth(index).map(Vec::as_slice),
            10 => one(&self.timezone),
            11 => one(&self.encryption_key),
            12 => self.attributes.get(index).map(Vec::as_slice),
            13 => self.media.get(index).map(|m| &m.media[..]),
            14 => self.media.iter().filter_map(|m| m.media_info.as_deref()).nth(index),
            15 => self.media.iter().filter_map(|m| m.connection_data.as_deref()).nth(index),
            16 => self.media.iter().filter_map(|m| m.encryption_key.as_deref()).nth(index),
            _ => None,
        }
    }
}

/// The `sdp.*` buffers, by number, and whether each holds several values.
pub const BUFFERS: [(&str, bool); 17] = [
    ("sdp.origin", false),
    ("sdp.session_name", false),
    ("sdp.session_info", false),
    ("sdp.uri", false),
    ("sdp.email", false),
    ("sdp.phone_number", false),
    ("sdp.connection_data", false),
    ("sdp.bandwidth", true),
    ("sdp.time", true),
    ("sdp.repeat_time", true),
    ("sdp.timezone", false),
    ("sdp.encryption_key", false),
    ("sdp.attribute", true),
    ("sdp.media.media", true),
    ("sdp.media.media_info", true),
    ("sdp.media.connection_data", true),
    ("sdp.media.encryption_key", true),
];

#[cfg(test)]
mod tests {
    use super::*;

    const BODY: &[u8] = b"v=0\r\no=alice 1 1 IN IP4 198.18.0.1\r\ns=call\r\nc=IN IP4 198.18.0.1\r\nb=AS:64\r\nt=1 2\r\nr=604800 3600 0\r\na=sendrecv\r\nm=audio 30000 RTP/AVP 0\r\ni=media info\r\na=rtpmap:0 pcmu/8000\r\nm=video 30002 RTP/AVP 31\r\n";

    #[test]
    fn session_and_media_fields_go_where_they_belong() {
        let s = parse(BODY).unwrap();
        let e = s.eve();
        assert_eq!(e["origin"], "alice 1 1 IN IP4 198.18.0.1");
        assert_eq!(e["time_descriptions"], serde_json::json!([{"time": "1 2", "repeat_time": "604800 3600 0"}]));
        assert_eq!(e["attributes"], serde_json::json!(["sendrecv"]));
        assert_eq!(e["media_descriptions"][0]["attributes"], serde_json::json!(["rtpmap:0 pcmu/8000"]));
        assert_eq!(e["media_descriptions"][1], serde_json::json!({"media": "video 30002 RTP/AVP 31"}));
        assert_eq!(s.buffer(13, 1), Some(&b"video 30002 RTP/AVP 31"[..]));
        assert_eq!(s.buffer(14, 0), Some(&b"media info"[..]));
        assert_eq!(s.buffer(9, 0), Some(&b"604800 3600 0"[..]));
        assert!(parse(b"hello\r\n").is_none());
    }
}
