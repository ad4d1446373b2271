//! CIP messages carried by ENIP's SendRRData and SendUnitData: a request's
//! service and path (with the services a Multiple Service Packet holds),
//! a response's service and status, and the names Suricata logs for them.

use serde_json::{Map, Value};

/// Services nested in a Multiple Service Packet read per message; more are dropped.
const MAX_NESTED: usize = 64;

/// One logical segment of a request path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// 0 class, 1 instance, 2 member, 3 connection point, 4 attribute.
    pub kind: u8,
    pub value: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub service: u8,
    pub path: Vec<Segment>,
    /// The attributes a Get Attribute List names (or a Set Attribute
    /// List's first, its values' sizes being the class's business).
    pub attributes: Vec<u32>,
    pub nested: Vec<Request>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub service: u8,
    pub status: u8,
    pub extended: Vec<u16>,
    pub nested: Vec<Response>,
}

fn le16(b: &[u8], at: usize) -> Option<u16> {
    b.get(at..at + 2).map(|x| u16::from_le_bytes([x[0], x[1]]))
}

/// A request path: logical segments kept, others skipped.
fn path(mut b: &[u8]) -> Vec<Segment> {
    let mut out = Vec::new();
    while let Some(&t) = b.first() {
        match t >> 5 {
            // Logical: type in bits 2-4, format in bits 0-1.
            1 => {
                let (len, value) = match t & 3 {
                    0 => (2, b.get(1).map(|&v| u32::from(v))),
                    1 => (4, le16(b, 2).map(u32::from)),
                    2 => (6, b.get(2..6).map(|x| u32::from_le_bytes([x[0], x[1], x[2], x[3]]))),
                    _ => return out,
                };
                let Some(value) = value else { return out };
                out.push(Segment { kind: (t >> 2) & 7, value });
                b = b.get(len..).unwrap_or_default();
            }
            // ANSI extended symbol: a length, the name, a pad byte to an even size.
            4 if t == 0x91 => {
                let n = usize::from(*b.get(1).unwrap_or(&0));
                b = b.get(2 + n + n % 2..).unwrap_or_default();
            }
            // Port segments and anything else end what is read of the path.
            _ => return out,
        }
    }
    out
}

pub fn request(b: &[u8], depth: u8) -> Option<Request> {
    let service = *b.first()?;
    if service & 0x80 != 0 {
        return None;
    }
    let words = usize::from(*b.get(1)?);
    let p = b.get(2..2 + 2 * words)?;
    let data = &b[2 + 2 * words..];
    let mut nested = Vec::new();
    if service == 0x0a && depth == 0 {
        for at in offsets(data) {
            if nested.len() >= MAX_NESTED {
                break;
            }
            if let Some(r) = data.get(at..).and_then(|d| request(d, 1)) {
                nested.push(r);
            }
        }
    }
    let attributes = match service {
        0x03 => {
            let n = le16(data, 0).unwrap_or(0).min(256);
            (0..usize::from(n)).filter_map(|i| le16(data, 2 + 2 * i).map(u32::from)).collect()
        }
        0x04 => le16(data, 2).map(u32::from).into_iter().collect(),
        _ => Vec::new(),
    };
    Some(Request { service, path: path(p), attributes, nested })
}

pub fn response(b: &[u8], depth: u8) -> Option<Response> {
    let service = *b.first()?;
    if service & 0x80 == 0 {
        return None;
    }
    let status = *b.get(2)?;
    let words = usize::from(*b.get(3)?);
    let extended = (0..words).filter_map(|i| le16(b, 4 + 2 * i)).collect();
    let data = b.get(4 + 2 * words..).unwrap_or_default();
    let mut nested = Vec::new();
    if service == 0x8a && depth == 0 {
        for at in offsets(data) {
            if nested.len() >= MAX_NESTED {
                break;
            }
            if let Some(r) = data.get(at..).and_then(|d| response(d, 1)) {
                nested.push(r);
            }
        }
    }
    Some(Response { service, status, extended, nested })
}

/// A Multiple Service Packet's offsets, each from the start of the count.
fn offsets(data: &[u8]) -> Vec<usize> {
    let n = le16(data, 0).unwrap_or(0);
    (0..usize::from(n)).filter_map(|i| le16(data, 2 + 2 * i).map(usize::from)).collect()
}

pub fn service_name(s: u8) -> String {
    let name = match s & 0x7f {
        0x01 => "Get Attributes All",
        0x02 => "Set Attributes All",
        0x03 => "Get Attribute List",
        0x04 => "Set Attribute List",
        0x05 => "Reset",
        0x06 => "Start",
        0x07 => "Stop",
        0x08 => "Create",
        0x09 => "Delete",
        0x0a => "Multiple Service Packet",
        0x0d => "Apply Attributes",
        0x0e => "Get Attribute Single",
        0x10 => "Set Attribute Single",
        0x11 => "Find Next Object Instance",
        0x14 => "Error Response",
        0x15 => "Restore",
        0x16 => "Save",
        0x17 => "No Operation",
        0x18 => "Get Member",
        0x19 => "Set Member",
        0x1a => "Insert Member",
        0x1b => "Remove Member",
        0x1c => "GroupSync",
        n => return format!("unknown-{n}"),
    };
    name.into()
}

pub fn class_name(c: u32) -> String {
    let name = match c {
        0x01 => "Identity",
        0x02 => "Message Router",
        0x03 => "DeviceNet",
        0x04 => "Assembly",
        0x05 => "Connection",
        0x06 => "Connection Manager",
        0x07 => "Register",
        0x08 => "Discrete Input Point",
        0x09 => "Discrete Output Point",
        0x0a => "Analog Input Point",
        0x0b => "Analog Output Point",
        0x0e => "Presence Sensing",
        0x0f => "Parameter",
        0x10 => "Parameter Group",
        0x12 => "Group",
        0x1d => "Discrete Input Group",
        0x1e => "Discrete Output Group",
        0x1f => "Discrete Group",
        0x20 => "Analog Input Group",
        0x21 => "Analog Output Group",
        0x22 => "Analog Group",
        0x23 => "Position Sensor",
        0x24 => "Position Controller Supervisor",
        0x25 => "Position Controller",
        0x26 => "Block Sequencer",
        0x27 => "Command Block",
        0x28 => "Motor Data",
        0x29 => "Control Supervisor",
        0x2a => "AC/DC Drive",
        0x2b => "Acknowledge Handler",
        0x2c => "Overload",
        0x2d => "Softstart",
        0x2e => "Selection",
        0x30 => "S-Device Supervisor",
        0x31 => "S-Analog Sensor",
        0x32 => "S-Analog Actor",
        0x33 => "S-Single Stage Controller",
        0x34 => "S-Gas Calibration",
        0x35 => "Trip Point",
        0x37 => "File",
        0x38 => "S-Partial Pressure",
        0x39 => "Safety Supervisor",
        0x3a => "Safety Validator",
        0x3b => "Safety Discrete Output Point",
        0x3c => "Safety Discrete Output Group",
        0x3d => "Safety Discrete Input Point",
        0x3e => "Safety Discrete Input Group",
        0x3f => "Safety Dual Channel Output",
        0x40 => "S-Sensor Calibration",
        0x41 => "Event Log",
        0x42 => "Motion Axis",
        0x43 => "Time Sync",
        0x44 => "Modbus",
        0x46 => "Modbus Serial Link",
        0xf0 => "ControlNet",
        0xf4 => "Port",
        0xf5 => "TCP/IP Interface",
        0xf6 => "Ethernet Link",
        n => return format!("unknown-{n}"),
    };
    name.into()
}

/// CIP general status names.
pub fn status_name(s: u8) -> String {
    let name = match s {
        0x00 => "Success",
        0x01 => "Connection failure",
        0x02 => "Resource unavailable",
        0x03 => "Invalid parameter value",
        0x04 => "Path segment error",
        0x05 => "Path destination unknown",
        0x06 => "Partial transfer",
        0x07 => "Connection lost",
        0x08 => "Service not supported",
        0x09 => "Invalid attribute value",
        0x0a => "Attribute list error",
        0x0b => "Already in requested mode/state",
        0x0c => "Object state conflict",
        0x0d => "Object already exists",
        0x0e => "Attribute not settable",
        0x0f => "Privilege violation",
        0x10 => "Device state conflict",
        0x11 => "Reply data too large",
        0x12 => "Fragmentation of a primitive value",
        0x13 => "Not enough data",
        0x14 => "Attribute not supported",
        0x15 => "Too much data",
        0x16 => "Object does not exist",
        0x17 => "Service fragmentation sequence not in progress",
        0x18 => "No stored attribute data",
        0x19 => "Store operation failure",
        0x1a => "Routing failure, request packet too large",
        0x1b => "Routing failure, response packet too large",
        0x1c => "Missing attribute list entry data",
        0x1d => "Invalid attribute value list",
        0x1e => "Embedded service error",
        0x1f => "Vendor specific error",
        0x20 => "Invalid parameter",
        n => return format!("unknown-{n}"),
    };
    name.into()
}

fn segment_name(kind: u8) -> &'static str {
    match kind {
        0 => "class",
        1 => "instance",
        2 => "member",
        3 => "connection_point",
        4 => "attribute",
        _ => "special",
    }
}

impl Request {
    pub fn class(&self) -> Option<u32> {
        self.path.iter().find(|s| s.kind == 0).map(|s| s.value)
    }

    pub fn eve(&self) -> Value {
        let mut m = Map::new();
        m.insert("service".into(), service_name(self.service).into());
        if !self.path.is_empty() {
            let p = self
                .path
                .iter()
                .map(|s| {
                    let mut o = Map::new();
                    o.insert("segment_type".into(), segment_name(s.kind).into());
                    o.insert("value".into(), s.value.into());
                    Value::Object(o)
                })
                .collect();
            m.insert("path".into(), Value::Array(p));
        }
        if let Some(c) = self.class() {
            m.insert("class_name".into(), class_name(c).into());
        }
        if !self.nested.is_empty() {
            m.insert("multiple".into(), self.nested.iter().map(Request::eve).collect());
        }
        Value::Object(m)
    }

    /// It and the services it holds.
    pub fn all(&self) -> impl Iterator<Item = &Request> {
        std::iter::once(self).chain(self.nested.iter())
    }
}

impl Response {
    pub fn eve(&self) -> Value {
        let mut m = Map::new();
        m.insert("service".into(), service_name(self.service).into());
        m.insert("status".into(), status_name(self.status).into());
        if !self.nested.is_empty() {
            m.insert("multiple".into(), self.nested.iter().map(Response::eve).collect());
        }
        Value::Object(m)
    }

    pub fn all(&self) -> impl Iterator<Item = &Response> {
        std::iter::once(self).chain(self.nested.iter())
    }
}

/// Where the services a Multiple Service Packet (request or response)
/// packs lie in `msg`: each one's offset and length. Empty for any other
/// message, or one whose offsets do not fit.
pub(super) fn packed_services(msg: &[u8]) -> Vec<(usize, usize)> {
    let Some(&service) = msg.first() else { return Vec::new() };
    // A request names its path (its size in words); a response has a
    // reserved byte and its status and additional status (in words).
    let data = match service {
        0x0a => msg.get(1).map(|&w| 2 + 2 * usize::from(w)),
        0x8a => msg.get(3).map(|&w| 4 + 2 * usize::from(w)),
        _ => None,
    };
    let Some(data) = data else { return Vec::new() };
    let word = |at: usize| msg.get(at..at + 2).map(|b| usize::from(u16::from_le_bytes([b[0], b[1]])));
    let Some(count) = word(data) else { return Vec::new() };
    let offsets: Vec<usize> = (0..count.min(64)).map_while(|i| word(data + 2 + 2 * i)).collect();
    let mut out = Vec::with_capacity(offsets.len());
    for (i, &o) in offsets.iter().enumerate() {
        let from = data + o;
        let to = offsets.get(i + 1).map_or(msg.len(), |&n| data + n);
        if from >= to || to > msg.len() {
            break;
        }
        out.push((from, to - from));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_multiple_service_packet_holds_its_services() {
        // Multiple Service Packet to the message router, holding two Get Attribute List.
        let inner = b"\x03\x02\x20\x01\x24\x01\x01\x00\x01\x00";
        let mut data = vec![0x02, 0x00, 0x06, 0x00, 0x06 + inner.len() as u8, 0x00];
        data.extend_from_slice(inner);
        data.extend_from_slice(inner);
        let mut msg = b"\x0a\x02\x20\x02\x24\x01".to_vec();
        msg.extend_from_slice(&data);
        let r = request(&msg, 0).unwrap();
        assert_eq!(r.nested.len(), 2);
        let e = r.eve();
        assert_eq!(e["service"], "Multiple Service Packet");
        assert_eq!(e["class_name"], "Message Router");
        assert_eq!(e["multiple"][1]["class_name"], "Identity");
        assert_eq!(e["path"][1], serde_json::json!({"segment_type": "instance", "value": 1}));
        let resp = response(b"\x83\x00\x00\x00\x01\x00", 0).unwrap();
        assert_eq!(resp.eve(), serde_json::json!({"service": "Get Attribute List", "status": "Success"}));
        assert_eq!(class_name(115), "unknown-115");
    }

    #[test]
    fn a_multiple_service_packet_lists_its_services() {
        // Two Get Attribute List requests packed behind the Message Router's path.
        let mut msg = vec![0x0a, 0x02, 0x20, 0x02, 0x24, 0x01, 0x02, 0x00, 0x06, 0x00, 0x10, 0x00];
        msg.extend([0x03, 0x02, 0x20, 0x8b, 0x24, 0x01, 0x01, 0x00, 0x06, 0x00]);
        msg.extend([0x03, 0x02, 0x20, 0x8b, 0x24, 0x02, 0x01, 0x00, 0x07, 0x00]);
        assert_eq!(packed_services(&msg), [(12, 10), (22, 10)]);
        // An offset past the message ends the list; other services pack none.
        msg[10] = 0xff;
        assert!(packed_services(&msg).is_empty());
        assert!(packed_services(&[0x0e, 0x03]).is_empty());
    }
}
