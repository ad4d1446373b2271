//! One MQTT control packet (3.1, 3.1.1 and 5.0): the fixed header, then the
//! variable header and payload of its type, MQTT 5 properties among them,
//! decoded from a whole packet; and its EVE object.

use serde_json::{Map, Value};

use crate::proto::RecordOptions;

/// The packet types, by their code in the fixed header.
pub const CONNECT: u8 = 1;
pub const CONNACK: u8 = 2;
pub const PUBLISH: u8 = 3;
pub const PUBACK: u8 = 4;
pub const PUBREC: u8 = 5;
pub const PUBREL: u8 = 6;
pub const PUBCOMP: u8 = 7;
pub const SUBSCRIBE: u8 = 8;
pub const SUBACK: u8 = 9;
pub const UNSUBSCRIBE: u8 = 10;
pub const UNSUBACK: u8 = 11;
pub const PINGREQ: u8 = 12;
pub const PINGRESP: u8 = 13;
pub const DISCONNECT: u8 = 14;
pub const AUTH: u8 = 15;

/// The names `mqtt.type` takes (any case), by code; 0 is `UNASSIGNED`.
pub const TYPE_NAMES: [&str; 16] = [
    "UNASSIGNED",
    "CONNECT",
    "CONNACK",
    "PUBLISH",
    "PUBACK",
    "PUBREC",
    "PUBREL",
    "PUBCOMP",
    "SUBSCRIBE",
    "SUBACK",
    "UNSUBSCRIBE",
    "UNSUBACK",
    "PINGREQ",
    "PINGRESP",
    "DISCONNECT",
    "AUTH",
];

/// The fixed header: type and flags in the first byte, then the length of
/// the rest as a variable byte integer of at most four bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fixed {
    pub kind: u8,
    pub flags: u8,
    /// The header's own size.
    pub header_len: usize,
    pub remaining: usize,
}

impl Fixed {
    pub fn dup(self) -> bool {
        self.flags & 0x8 != 0
    }
    pub fn qos(self) -> u8 {
        (self.flags >> 1) & 3
    }
    pub fn retain(self) -> bool {
        self.flags & 1 != 0
    }
    /// The whole packet's size.
    pub fn total(self) -> u64 {
        self.header_len as u64 + self.remaining as u64
    }
}

/// What reading a fixed header found.
#[derive(Debug, PartialEq, Eq)]
pub enum Header {
    Whole(Fixed),
    /// More bytes are needed to know.
    Short,
    /// A length of more than four bytes: not MQTT.
    Bad,
}

pub fn fixed_header(data: &[u8]) -> Header {
    let Some(&first) = data.first() else { return Header::Short };
    let mut remaining = 0usize;
    for i in 0..4 {
        let Some(&b) = data.get(1 + i) else { return Header::Short };
        remaining |= usize::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Header::Whole(Fixed { kind: first >> 4, flags: first & 0xf, header_len: 2 + i, remaining });
        }
    }
    Header::Bad
}

/// A property's value (MQTT 5, section 2.2.2.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PropValue {
    Int(u64),
    Text(Vec<u8>),
    /// A user property: logged as its name with its value.
    Pair(Vec<u8>, Vec<u8>),
}

/// Properties in the order they came.
pub type Props = Vec<(u8, PropValue)>;

/// The body of a packet, by type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    Connect(Box<Connect>),
    Connack { session_present: bool, code: u8, props: Option<Props> },
    Publish { topic: Vec<u8>, id: Option<u16>, message: Vec<u8>, props: Option<Props> },
    /// PUBACK, PUBREC, PUBREL and PUBCOMP.
    Ack { id: u16, reason: Option<u8>, props: Option<Props> },
    Subscribe { id: u16, topics: Vec<(Vec<u8>, u8)>, props: Option<Props> },
    Suback { id: u16, codes: Vec<u8>, props: Option<Props> },
    Unsubscribe { id: u16, topics: Vec<Vec<u8>>, props: Option<Props> },
    Unsuback { id: u16, codes: Option<Vec<u8>>, props: Option<Props> },
    /// PINGREQ and PINGRESP.
    Empty,
    /// DISCONNECT and AUTH.
    Reason { reason: Option<u8>, props: Option<Props> },
    /// Type 0, reserved.
    Unassigned,
    /// Longer than `max-msg-length`: skipped unread.
    Truncated { skipped: u64 },
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Connect {
    pub protocol: Vec<u8>,
    pub version: u8,
    pub flags: u8,
    pub keepalive: u16,
    pub props: Option<Props>,
    pub client_id: Vec<u8>,
    pub will: Option<(Vec<u8>, Vec<u8>, Option<Props>)>,
    pub username: Option<Vec<u8>>,
    pub password: Option<Vec<u8>>,
}

/// The CONNECT flag bits `mqtt.connect.flags` names.
pub const CONNECT_FLAGS: [(&str, u8); 5] =
    [("username", 0x80), ("password", 0x40), ("will_retain", 0x20), ("will", 0x04), ("clean_session", 0x02)];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub fixed: Fixed,
    pub body: Body,
}

impl Message {
    /// The packet identifier replies are matched by.
    pub fn id(&self) -> Option<u16> {
        match &self.body {
            Body::Publish { id, .. } => *id,
            Body::Ack { id, .. }
            | Body::Subscribe { id, .. }
            | Body::Suback { id, .. }
            | Body::Unsubscribe { id, .. }
            | Body::Unsuback { id, .. } => Some(*id),
            _ => None,
        }
    }

    /// The reason codes `mqtt.reason_code` reads: CONNACK's return code,
    /// an acknowledgement's, DISCONNECT's and AUTH's reason, SUBACK's and
    /// UNSUBACK's codes.
    pub fn reason_codes(&self) -> Vec<u64> {
        match &self.body {
            Body::Connack { code, .. } => vec![(*code).into()],
            Body::Ack { reason, .. } | Body::Reason { reason, .. } => reason.iter().map(|&r| r.into()).collect(),
            Body::Suback { codes, .. } => codes.iter().map(|&c| c.into()).collect(),
            Body::Unsuback { codes, .. } => codes.iter().flatten().map(|&c| c.into()).collect(),
            _ => Vec::new(),
        }
    }
}

/// Why a packet could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Malformed;

/// A cursor over a packet's bytes after the fixed header.
struct Reader<'a> {
    data: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], Malformed> {
        if self.data.len() < n {
            return Err(Malformed);
        }
        let (head, rest) = self.data.split_at(n);
        self.data = rest;
        Ok(head)
    }
    fn u8(&mut self) -> Result<u8, Malformed> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, Malformed> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }
    fn u32(&mut self) -> Result<u32, Malformed> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn varint(&mut self) -> Result<u64, Malformed> {
        let mut v = 0u64;
        for i in 0..4 {
            let b = self.u8()?;
            v |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(Malformed)
    }
    /// A two-byte length, then that many bytes (strings and binary data).
    fn prefixed(&mut self) -> Result<Vec<u8>, Malformed> {
        let n = self.u16()?;
        Ok(self.take(n.into())?.to_vec())
    }
    fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.data)
    }
    fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// A property list: its length, then identifier and value pairs.
    fn props(&mut self) -> Result<Props, Malformed> {
        let len = usize::try_from(self.varint()?).map_err(|_| Malformed)?;
        let mut r = Reader { data: self.take(len)? };
        let mut out = Vec::new();
        while !r.is_empty() {
            let id = r.u8()?;
            let value = match id {
                1 | 23 | 25 | 36 | 37 | 40 | 41 | 42 => PropValue::Int(r.u8()?.into()),
                19 | 33 | 34 | 35 => PropValue::Int(r.u16()?.into()),
                2 | 17 | 24 | 39 => PropValue::Int(r.u32()?.into()),
                11 => PropValue::Int(r.varint()?),
                3 | 8 | 9 | 18 | 21 | 22 | 26 | 28 | 31 => PropValue::Text(r.prefixed()?),
                38 => PropValue::Pair(r.prefixed()?, r.prefixed()?),
                _ => return Err(Malformed),
            };
            out.push((id, value));
        }
        Ok(out)
    }
}

/// Suricata's field name for property `id`.
fn prop_name(id: u8) -> &'static str {
    match id {
        1 => "payload_format_indicator",
        2 => "message_expiry_interval",
        3 => "content_type",
        8 => "response_topic",
        9 => "correlation_data",
        11 => "subscription_identifier",
        17 => "session_expiry_interval",
        18 => "assigned_client_identifier",
        19 => "server_keep_alive",
        21 => "authentication_method",
        22 => "authentication_data",
        23 => "request_problem_information",
        24 => "will_delay_interval",
        25 => "request_response_information",
        26 => "response_information",
        28 => "server_reference",
        31 => "reason_string",
        33 => "receive_maximum",
        34 => "topic_alias_maximum",
        35 => "topic_alias",
        36 => "maximum_qos",
        37 => "retain_available",
        39 => "maximum_packet_size",
        40 => "wildcard_subscription_available",
        41 => "subscription_identifier_available",
        42 => "shared_subscription_available",
        _ => "unknown",
    }
}

/// Decodes the packet `fixed` heads from its `body` bytes (exactly
/// `fixed.remaining` of them); `version` is the connection's protocol
/// version so far (5 reads properties and reason codes).
pub fn decode(fixed: Fixed, body: &[u8], version: u8) -> Result<Message, Malformed> {
    let mut r = Reader { data: body };
    let v5 = version == 5;
    let props = |r: &mut Reader<'_>, v5: bool| if v5 { r.props().map(Some) } else { Ok(None) };
    let body = match fixed.kind {
        0 => Body::Unassigned,
        CONNECT => {
            let mut c = Connect { protocol: r.prefixed()?, version: r.u8()?, flags: r.u8()?, keepalive: r.u16()?, ..Connect::default() };
            let v5 = c.version == 5;
            c.props = props(&mut r, v5)?;
            c.client_id = r.prefixed()?;
            if c.flags & 0x04 != 0 {
                let will_props = props(&mut r, v5)?;
                c.will = Some((r.prefixed()?, r.prefixed()?, will_props));
            }
            if c.flags & 0x80 != 0 {
                c.username = Some(r.prefixed()?);
            }
            if c.flags & 0x40 != 0 {
                c.password = Some(r.prefixed()?);
            }
            Body::Connect(Box::new(c))
        }
        CONNACK => {
            let session_present = r.u8()? & 1 != 0;
            let code = r.u8()?;
            Body::Connack { session_present, code, props: { let more = v5 && !r.is_empty(); props(&mut r, more)? } }
        }
        PUBLISH => {
            let topic = r.prefixed()?;
            let id = if fixed.qos() > 0 { Some(r.u16()?) } else { None };
            let props = props(&mut r, v5)?;
            Body::Publish { topic, id, message: r.rest().to_vec(), props }
        }
        PUBACK | PUBREC | PUBREL | PUBCOMP => {
            let id = r.u16()?;
            // MQTT 5 leaves the reason out when it is 0 (success), and the properties when none.
            let reason = if v5 { Some(if r.is_empty() { 0 } else { r.u8()? }) } else { None };
            let more = v5 && !r.is_empty();
            let props = props(&mut r, more)?;
            Body::Ack { id, reason, props }
        }
        SUBSCRIBE => {
            let id = r.u16()?;
            let props = props(&mut r, v5)?;
            let mut topics = Vec::new();
            while !r.is_empty() {
                topics.push((r.prefixed()?, r.u8()? & 3));
            }
            Body::Subscribe { id, topics, props }
        }
        SUBACK => {
            let id = r.u16()?;
            let props = props(&mut r, v5)?;
            Body::Suback { id, codes: r.rest().to_vec(), props }
        }
        UNSUBSCRIBE => {
            let id = r.u16()?;
            let props = props(&mut r, v5)?;
            let mut topics = Vec::new();
            while !r.is_empty() {
                topics.push(r.prefixed()?);
            }
            Body::Unsubscribe { id, topics, props }
        }
        UNSUBACK => {
            let id = r.u16()?;
            let props = props(&mut r, v5)?;
            let codes = v5.then(|| r.rest().to_vec());
            Body::Unsuback { id, codes, props }
        }
        PINGREQ | PINGRESP => Body::Empty,
        _ => {
            // DISCONNECT and AUTH: a reason (0 when left out) and properties in MQTT 5.
            // A lone reason byte (remaining length 1) is read as 0, as Suricata
            // reads it, so records and `mqtt.reason_code` agree with its own.
            if v5 && r.data.len() < 2 {
                Body::Reason { reason: Some(0), props: None }
            } else {
                let reason = if v5 { Some(r.u8()?) } else { None };
                Body::Reason { reason, props: props(&mut r, v5)? }
            }
        }
    };
    Ok(Message { fixed, body })
}

/// The EVE key of a packet type.
pub fn eve_key(kind: u8) -> &'static str {
    match kind {
        CONNECT => "connect",
        CONNACK => "connack",
        PUBLISH => "publish",
        PUBACK => "puback",
        PUBREC => "pubrec",
        PUBREL => "pubrel",
        PUBCOMP => "pubcomp",
        SUBSCRIBE => "subscribe",
        SUBACK => "suback",
        UNSUBSCRIBE => "unsubscribe",
        UNSUBACK => "unsuback",
        PINGREQ => "pingreq",
        PINGRESP => "pingresp",
        DISCONNECT => "disconnect",
        AUTH => "auth",
        _ => "unassigned",
    }
}

/// How strings are written: cut at `limit` bytes with a note of what was
/// left out, and bytes that are not UTF-8 escaped, as Suricata writes them.
#[derive(Clone, Copy)]
pub struct Strings {
    pub limit: usize,
}

impl Strings {
    pub fn of(opts: &RecordOptions) -> Strings {
        Strings { limit: opts.string_log_limit.unwrap_or(1024) }
    }

    pub fn text(self, b: &[u8]) -> Value {
        if b.len() <= self.limit {
            return Value::String(crate::proto::escaped_text(b));
        }
        let mut s = crate::proto::escaped_text(&b[..self.limit]);
        s.push_str(&format!("[truncated {} additional bytes]", b.len() - self.limit));
        Value::String(s)
    }

    fn props(self, props: &Props) -> Value {
        // Suricata writes them by name.
        let mut pairs: Vec<(String, Value)> = props
            .iter()
            .map(|(id, v)| match v {
                PropValue::Int(n) => (prop_name(*id).to_string(), Value::from(*n)),
                PropValue::Text(t) => (prop_name(*id).to_string(), self.text(t)),
                PropValue::Pair(k, v) => (crate::proto::escaped_text(k), self.text(v)),
            })
            .collect();
        pairs.sort_by(|a, b| a.0.cmp(&b.0));
        Value::Object(pairs.into_iter().collect())
    }
}

impl Message {
    /// Its object in the transaction's record.
    pub fn eve(&self, s: Strings, passwords: bool) -> Value {
        let f = self.fixed;
        let mut m = Map::new();
        m.insert("qos".into(), f.qos().into());
        m.insert("retain".into(), f.retain().into());
        m.insert("dup".into(), f.dup().into());
        let mut props = None;
        match &self.body {
            Body::Connect(c) => {
                m.insert("protocol_string".into(), s.text(&c.protocol));
                m.insert("protocol_version".into(), c.version.into());
                m.insert("client_id".into(), s.text(&c.client_id));
                let flags: Map<String, Value> =
                    CONNECT_FLAGS.iter().map(|(name, bit)| ((*name).to_string(), (c.flags & bit != 0).into())).collect();
                m.insert("flags".into(), Value::Object(flags));
                if let Some(u) = &c.username {
                    m.insert("username".into(), s.text(u));
                }
                if let Some(p) = c.password.as_ref().filter(|_| passwords) {
                    m.insert("password".into(), s.text(p));
                }
                if let Some((topic, message, wprops)) = &c.will {
                    let mut w = Map::new();
                    w.insert("topic".into(), s.text(topic));
                    w.insert("message".into(), s.text(message));
                    if let Some(p) = wprops.as_ref().filter(|p| !p.is_empty()) {
                        w.insert("properties".into(), s.props(p));
                    }
                    m.insert("will".into(), Value::Object(w));
                }
                props = c.props.as_ref();
            }
            Body::Connack { session_present, code, props: p } => {
                m.insert("session_present".into(), (*session_present).into());
                m.insert("return_code".into(), (*code).into());
                props = p.as_ref();
            }
            Body::Publish { topic, id, message, props: p } => {
                m.insert("topic".into(), s.text(topic));
                if let Some(id) = id {
                    m.insert("message_id".into(), (*id).into());
                }
                m.insert("message".into(), s.text(message));
                props = p.as_ref();
            }
            Body::Ack { id, reason, props: p } => {
                m.insert("message_id".into(), (*id).into());
                if let Some(r) = reason {
                    m.insert("reason_code".into(), (*r).into());
                }
                props = p.as_ref();
            }
            Body::Subscribe { id, topics, props: p } => {
                m.insert("message_id".into(), (*id).into());
                // The limit is shared by the list's topics, as Suricata counts it.
                let mut left = s.limit;
                let list = topics
                    .iter()
                    .map(|(t, q)| {
                        let mut o = Map::new();
                        o.insert("topic".into(), Strings { limit: left }.text(t));
                        left -= left.min(t.len());
                        o.insert("qos".into(), (*q).into());
                        Value::Object(o)
                    })
                    .collect();
                m.insert("topics".into(), Value::Array(list));
                props = p.as_ref();
            }
            Body::Suback { id, codes, props: p } => {
                m.insert("message_id".into(), (*id).into());
                m.insert("qos_granted".into(), codes.iter().map(|&c| Value::from(c)).collect());
                props = p.as_ref();
            }
            Body::Unsubscribe { id, topics, props: p } => {
                m.insert("message_id".into(), (*id).into());
                let mut left = s.limit;
                let list = topics.iter().map(|t| {
                    let v = Strings { limit: left }.text(t);
                    left -= left.min(t.len());
                    v
                });
                m.insert("topics".into(), list.collect());
                props = p.as_ref();
            }
            Body::Unsuback { id, codes, props: p } => {
                m.insert("message_id".into(), (*id).into());
                if let Some(c) = codes {
                    m.insert("reason_codes".into(), c.iter().map(|&c| Value::from(c)).collect());
                }
                props = p.as_ref();
            }
            Body::Reason { reason, props: p } => {
                if let Some(r) = reason {
                    m.insert("reason_code".into(), (*r).into());
                }
                props = p.as_ref();
            }
            Body::Truncated { skipped } => {
                m.insert("truncated".into(), true.into());
                m.insert("skipped_length".into(), (*skipped).into());
            }
            Body::Empty | Body::Unassigned => {}
        }
        if let Some(p) = props.filter(|p| !p.is_empty()) {
            m.insert("properties".into(), s.props(p));
        }
        Value::Object(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(data: &[u8]) -> Fixed {
        match fixed_header(data) {
            Header::Whole(f) => f,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_remaining_length_takes_one_to_four_bytes() {
        assert_eq!(whole(&[0x30, 0x00]).remaining, 0);
        assert_eq!(whole(&[0x30, 0x7f]).remaining, 127);
        assert_eq!(whole(&[0x30, 0x80, 0x01]).remaining, 128);
        let f = whole(&[0x32, 0xff, 0xff, 0xff, 0x7f]);
        assert_eq!((f.remaining, f.header_len, f.qos()), (268_435_455, 5, 1));
        assert_eq!(fixed_header(&[0x30, 0x80]), Header::Short);
        assert_eq!(fixed_header(&[0x30, 0x80, 0x80, 0x80, 0x80]), Header::Bad);
    }

    #[test]
    fn a_v5_connect_reads_its_properties_and_will() {
        // Version 5, username + will + clean session, keepalive 60, receive maximum 20,
        // client "c", will with a content type, topic "t", message "m", user "u".
        let body = b"\x00\x04MQTT\x05\x86\x00\x3c\x03\x21\x00\x14\x00\x01c\x04\x03\x00\x01x\x00\x01t\x00\x01m\x00\x01u";
        let m = decode(whole(&[0x10, body.len() as u8]), body, 0).unwrap();
        let Body::Connect(c) = &m.body else { panic!() };
        assert_eq!((c.version, &c.client_id[..], c.username.as_deref()), (5, &b"c"[..], Some(&b"u"[..])));
        let e = m.eve(Strings { limit: 1024 }, true);
        assert_eq!(e["properties"]["receive_maximum"], 20);
        assert_eq!(e["will"]["properties"]["content_type"], "x");
        assert_eq!(e["flags"]["will"], true);
        assert!(e.get("password").is_none());
    }

    #[test]
    fn v5_acknowledgements_imply_a_success_reason() {
        let m = decode(whole(&[0x40, 2]), b"\x00\x07", 5).unwrap();
        assert_eq!(m.body, Body::Ack { id: 7, reason: Some(0), props: None });
        let m = decode(whole(&[0x40, 2]), b"\x00\x07", 4).unwrap();
        assert_eq!(m.body, Body::Ack { id: 7, reason: None, props: None });
    }

    #[test]
    fn damaged_bodies_are_malformed_not_panics() {
        for kind in 0..16u8 {
            for len in 0..8 {
                let body = [0xffu8; 8];
                let _ = decode(whole(&[kind << 4 | 2, len]), &body[..len as usize], 5);
            }
        }
        // A property length past the end.
        assert_eq!(decode(whole(&[0xe0, 2]), b"\x00\x7f", 5), Err(Malformed));
    }

    #[test]
    fn long_strings_are_cut_with_a_note_and_binary_escaped() {
        let s = Strings { limit: 4 };
        assert_eq!(s.text(b"abcdefgh"), "abcd[truncated 4 additional bytes]");
        assert_eq!(s.text(b"\xff\x00"), "\\xff\u{0}");
    }
}
