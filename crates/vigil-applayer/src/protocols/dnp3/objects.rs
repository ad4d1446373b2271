//! DNP3 application objects: headers (group, variation, qualifier, range)
//! and the points of the objects whose layout is known here, with the
//! field names Suricata logs.

use serde_json::{Map, Value};

/// A field of a fixed-size point.
#[derive(Debug, Clone, Copy)]
pub enum F {
    /// A flag: bit `n` of the current byte (the byte is consumed by the
    /// last flag of a group, see [`F::EndFlags`]).
    Bit(&'static str, u8),
    /// Bits `lo..lo+len` of the current byte.
    Bits(&'static str, u8, u8),
    /// The flags of the current byte end here: move to the next byte.
    EndFlags,
    U8(&'static str),
    U16(&'static str),
    U32(&'static str),
    U48(&'static str),
    I16(&'static str),
    I32(&'static str),
    F32(&'static str),
    F64(&'static str),
}

const FLAGS_BI: [F; 9] = [
    F::Bit("online", 0),
    F::Bit("restart", 1),
    F::Bit("comm_lost", 2),
    F::Bit("remote_forced", 3),
    F::Bit("local_forced", 4),
    F::Bit("chatter_filter", 5),
    F::Bit("reserved", 6),
    F::Bit("state", 7),
    F::EndFlags,
];

const FLAGS_BO: [F; 9] = [
    F::Bit("online", 0),
    F::Bit("restart", 1),
    F::Bit("comm_lost", 2),
    F::Bit("remote_forced", 3),
    F::Bit("local_forced", 4),
    F::Bit("reserved0", 5),
    F::Bit("reserved1", 6),
    F::Bit("state", 7),
    F::EndFlags,
];

const FLAGS_CTR: [F; 9] = [
    F::Bit("online", 0),
    F::Bit("restart", 1),
    F::Bit("comm_lost", 2),
    F::Bit("remote_forced", 3),
    F::Bit("local_forced", 4),
    F::Bit("rollover", 5),
    F::Bit("discontinuity", 6),
    F::Bit("reserved0", 7),
    F::EndFlags,
];

const FLAGS_AI: [F; 9] = [
    F::Bit("online", 0),
    F::Bit("restart", 1),
    F::Bit("comm_lost", 2),
    F::Bit("remote_forced", 3),
    F::Bit("local_forced", 4),
    F::Bit("over_range", 5),
    F::Bit("reference_err", 6),
    F::Bit("reserved", 7),
    F::EndFlags,
];

/// How a known object's points are laid out.
#[derive(Debug, Clone, Copy)]
pub enum Layout {
    /// No point data (class data, a read request's objects).
    None,
    /// One bit per point, packed (binary inputs and outputs, IIN).
    Packed,
    /// Two bits per point, packed (double-bit binary inputs).
    Packed2,
    Fixed(&'static [&'static [F]]),
    /// File control objects, sized by their prefix.
    FileCommand,
    FileCommandStatus,
    FileTransportStatus,
}

/// The layout of group `g`, variation `v`; `None` for an object not known here.
pub fn layout(g: u8, v: u8) -> Option<Layout> {
    use F::*;
    Some(match (g, v) {
        (1, 1) | (10, 1) | (80, 1) => Layout::Packed,
        (3, 1) => Layout::Packed2,
        (1, 2) => Layout::Fixed(&[&FLAGS_BI]),
        (2, 1) => Layout::Fixed(&[&FLAGS_BI]),
        (2, 2) => Layout::Fixed(&[&FLAGS_BI, &[U48("timestamp")]]),
        (2, 3) => Layout::Fixed(&[&FLAGS_BI, &[U16("timestamp")]]),
        (10, 2) => Layout::Fixed(&[&FLAGS_BO]),
        (12, 1) => Layout::Fixed(&[
            &[Bits("op_type", 0, 4), Bit("qu", 4), Bit("cr", 5), Bits("tcc", 6, 2), EndFlags],
            &[U8("count"), U32("ontime"), U32("offtime")],
            &[Bits("status_code", 0, 7), Bit("reserved", 7), EndFlags],
        ]),
        (20, 1) | (21, 1) | (22, 1) | (23, 1) => Layout::Fixed(&[&FLAGS_CTR, &[U32("count")]]),
        (20, 2) | (21, 2) | (22, 2) | (23, 2) => Layout::Fixed(&[&FLAGS_CTR, &[U16("count")]]),
        (20, 5) | (21, 9) => Layout::Fixed(&[&[U32("count")]]),
        (20, 6) | (21, 10) => Layout::Fixed(&[&[U16("count")]]),
        (22, 5) | (23, 5) => Layout::Fixed(&[&FLAGS_CTR, &[U32("count"), U48("timestamp")]]),
        (30, 1) | (32, 1) => Layout::Fixed(&[&FLAGS_AI, &[I32("value")]]),
        (30, 2) | (32, 2) => Layout::Fixed(&[&FLAGS_AI, &[I16("value")]]),
        (30, 3) => Layout::Fixed(&[&[I32("value")]]),
        (30, 4) => Layout::Fixed(&[&[I16("value")]]),
        (30, 5) | (32, 5) => Layout::Fixed(&[&FLAGS_AI, &[F32("value")]]),
        (30, 6) | (32, 6) => Layout::Fixed(&[&FLAGS_AI, &[F64("value")]]),
        (32, 3) => Layout::Fixed(&[&FLAGS_AI, &[I32("value"), U48("timestamp")]]),
        (32, 4) => Layout::Fixed(&[&FLAGS_AI, &[I16("value"), U48("timestamp")]]),
        (40, 1) => Layout::Fixed(&[&FLAGS_AI, &[I32("value")]]),
        (40, 2) => Layout::Fixed(&[&FLAGS_AI, &[I16("value")]]),
        (41, 1) => Layout::Fixed(&[&[I32("value"), U8("control_status")]]),
        (41, 2) => Layout::Fixed(&[&[I16("value"), U8("control_status")]]),
        (41, 3) => Layout::Fixed(&[&[F32("value"), U8("control_status")]]),
        (50, 1) => Layout::Fixed(&[&[U48("timestamp")]]),
        (50, 3) => Layout::Fixed(&[&[U48("timestamp")]]),
        (51, 1) | (51, 2) => Layout::Fixed(&[&[U48("timestamp")]]),
        (52, 1) => Layout::Fixed(&[&[U16("delay_secs")]]),
        (52, 2) => Layout::Fixed(&[&[U16("delay_ms")]]),
        (60, 1..=4) => Layout::None,
        (70, 3) => Layout::FileCommand,
        (70, 4) => Layout::FileCommandStatus,
        (70, 6) => Layout::FileTransportStatus,
        _ => return None,
    })
}

/// Bytes a fixed layout's point takes.
fn fixed_size(parts: &[&[F]]) -> usize {
    parts
        .iter()
        .flat_map(|p| p.iter())
        .map(|f| match f {
            F::Bit(..) | F::Bits(..) => 0,
            F::EndFlags | F::U8(_) => 1,
            F::U16(_) | F::I16(_) => 2,
            F::U32(_) | F::I32(_) | F::F32(_) => 4,
            F::U48(_) => 6,
            F::F64(_) => 8,
        })
        .sum()
}

fn le(b: &[u8]) -> u64 {
    b.iter().rev().fold(0u64, |a, &x| a << 8 | u64::from(x))
}

fn fixed_point(parts: &[&[F]], b: &[u8], out: &mut Map<String, Value>) {
    let mut at = 0;
    for f in parts.iter().flat_map(|p| p.iter()) {
        match *f {
            F::Bit(name, n) => {
                out.insert(name.into(), ((b[at] >> n) & 1).into());
            }
            F::Bits(name, lo, len) => {
                out.insert(name.into(), ((b[at] >> lo) & ((1u8 << len) - 1)).into());
            }
            F::EndFlags => at += 1,
            F::U8(name) => {
                out.insert(name.into(), b[at].into());
                at += 1;
            }
            F::U16(name) => {
                out.insert(name.into(), le(&b[at..at + 2]).into());
                at += 2;
            }
            F::U32(name) => {
                out.insert(name.into(), le(&b[at..at + 4]).into());
                at += 4;
            }
            F::U48(name) => {
                out.insert(name.into(), le(&b[at..at + 6]).into());
                at += 6;
            }
            F::I16(name) => {
                out.insert(name.into(), i16::from_le_bytes([b[at], b[at + 1]]).into());
                at += 2;
            }
            F::I32(name) => {
                out.insert(name.into(), i32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]).into());
                at += 4;
            }
            F::F32(name) => {
                let v = f32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
                out.insert(name.into(), serde_json::Number::from_f64(v.into()).map_or(Value::Null, Value::Number));
                at += 4;
            }
            F::F64(name) => {
                let mut a = [0u8; 8];
                a.copy_from_slice(&b[at..at + 8]);
                out.insert(name.into(), serde_json::Number::from_f64(f64::from_le_bytes(a)).map_or(Value::Null, Value::Number));
                at += 8;
            }
        }
    }
}

/// A file control object's fields from its bytes (the prefix gave their size).
fn file_point(layout: Layout, b: &[u8], out: &mut Map<String, Value>) -> Option<()> {
    let text = |b: &[u8]| crate::proto::escaped_text(b);
    match layout {
        Layout::FileCommand => {
            let offset = le(b.get(0..2)?);
            let size = le(b.get(2..4)?);
            out.insert("filename_offset".into(), offset.into());
            out.insert("filename_size".into(), size.into());
            out.insert("created".into(), le(b.get(4..10)?).into());
            out.insert("permissions".into(), le(b.get(10..12)?).into());
            out.insert("authentication_key".into(), le(b.get(12..16)?).into());
            out.insert("file_size".into(), le(b.get(16..20)?).into());
            out.insert("operational_mode".into(), le(b.get(20..22)?).into());
            out.insert("maximum_block_size".into(), le(b.get(22..24)?).into());
            out.insert("request_id".into(), le(b.get(24..26)?).into());
            out.insert("filename".into(), text(b.get(26..26 + size as usize)?).into());
        }
        Layout::FileCommandStatus => {
            out.insert("file_handle".into(), le(b.get(0..4)?).into());
            out.insert("file_size".into(), le(b.get(4..8)?).into());
            out.insert("maximum_block_size".into(), le(b.get(8..10)?).into());
            out.insert("request_id".into(), le(b.get(10..12)?).into());
            out.insert("status_code".into(), (*b.get(12)?).into());
            out.insert("optional_text".into(), text(b.get(13..)?).into());
        }
        Layout::FileTransportStatus => {
            out.insert("file_handle".into(), le(b.get(0..4)?).into());
            out.insert("block_number".into(), le(b.get(4..8)?).into());
            out.insert("status_code".into(), (*b.get(8)?).into());
            out.insert("optional_text".into(), text(b.get(9..)?).into());
        }
        _ => return None,
    }
    Some(())
}

/// One object: its header and the points read.
#[derive(Debug, Clone, PartialEq)]
pub struct Object {
    pub group: u8,
    pub variation: u8,
    pub qualifier: u8,
    pub start: u32,
    pub stop: u32,
    pub count: u32,
    pub points: Vec<Map<String, Value>>,
}

impl Object {
    pub fn eve(&self) -> Value {
        let mut m = Map::new();
        m.insert("group".into(), self.group.into());
        m.insert("variation".into(), self.variation.into());
        m.insert("qualifier".into(), self.qualifier.into());
        m.insert("prefix_code".into(), ((self.qualifier >> 4) & 7).into());
        m.insert("range_code".into(), (self.qualifier & 0xf).into());
        m.insert("start".into(), self.start.into());
        m.insert("stop".into(), self.stop.into());
        m.insert("count".into(), self.count.into());
        if !self.points.is_empty() {
            m.insert("points".into(), Value::Array(self.points.iter().cloned().map(Value::Object).collect()));
        }
        Value::Object(m)
    }
}

/// Why reading objects stopped early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    Unknown,
    TooManyPoints,
    TooManyObjects,
    Malformed,
}

/// Reads the objects of an application message. `with_data`: its objects
/// carry point data (a read request's do not). Stops at the first object
/// not known here (or too large); what was read stays.
pub fn read(mut b: &[u8], with_data: bool, max_points: u32, max_objects: usize) -> (Vec<Object>, Option<Stop>) {
    let mut out = Vec::new();
    while b.len() >= 3 {
        if out.len() >= max_objects {
            return (out, Some(Stop::TooManyObjects));
        }
        let (group, variation, qualifier) = (b[0], b[1], b[2]);
        b = &b[3..];
        let (prefix_code, range_code) = ((qualifier >> 4) & 7, qualifier & 0xf);
        let take = |b: &mut &[u8], n: usize| -> Option<u32> {
            let v = b.get(..n)?;
            *b = &b[n..];
            u32::try_from(le(v)).ok()
        };
        let (start, stop, count) = match range_code {
            0 | 3 => match (take(&mut b, 1), take(&mut b, 1)) {
                (Some(s), Some(e)) if e >= s => (s, e, e - s + 1),
                _ => return (out, Some(Stop::Malformed)),
            },
            1 | 4 => match (take(&mut b, 2), take(&mut b, 2)) {
                (Some(s), Some(e)) if e >= s => (s, e, e - s + 1),
                _ => return (out, Some(Stop::Malformed)),
            },
            2 | 5 => match (take(&mut b, 4), take(&mut b, 4)) {
                (Some(s), Some(e)) if e >= s => (s, e, e.saturating_sub(s).saturating_add(1)),
                _ => return (out, Some(Stop::Malformed)),
            },
            6 => (0, 0, 0),
            7 | 0xb => match take(&mut b, 1) {
                Some(c) => (0, 0, c),
                None => return (out, Some(Stop::Malformed)),
            },
            8 => match take(&mut b, 2) {
                Some(c) => (0, 0, c),
                None => return (out, Some(Stop::Malformed)),
            },
            9 => match take(&mut b, 4) {
                Some(c) => (0, 0, c),
                None => return (out, Some(Stop::Malformed)),
            },
            _ => return (out, Some(Stop::Malformed)),
        };
        let mut obj = Object { group, variation, qualifier, start, stop, count, points: Vec::new() };
        let Some(layout) = layout(group, variation) else {
            out.push(obj);
            return (out, Some(Stop::Unknown));
        };
        if !with_data || matches!(layout, Layout::None) || range_code == 6 {
            out.push(obj);
            continue;
        }
        if count > max_points {
            out.push(obj);
            return (out, Some(Stop::TooManyPoints));
        }
        let prefix_len = match prefix_code {
            0 => 0,
            1 | 4 => 1,
            2 | 5 => 2,
            3 | 6 => 4,
            _ => return (out, Some(Stop::Malformed)),
        };
        if let Layout::Packed | Layout::Packed2 = layout {
            let bits = if matches!(layout, Layout::Packed2) { 2 } else { 1 };
            let bytes = (count as usize * bits).div_ceil(8);
            let Some(data) = b.get(..bytes) else { return (out, Some(Stop::Malformed)) };
            for i in 0..count as usize {
                let bit = i * bits;
                let v = (data[bit / 8] >> (bit % 8)) & ((1 << bits) - 1);
                let mut p = Map::new();
                p.insert("prefix".into(), 0.into());
                p.insert("index".into(), (start as usize + i).into());
                p.insert("state".into(), v.into());
                obj.points.push(p);
            }
            b = &b[bytes..];
            out.push(obj);
            continue;
        }
        for i in 0..count {
            let Some(prefix) = take(&mut b, prefix_len) else { return (out, Some(Stop::Malformed)) };
            let mut p = Map::new();
            p.insert("prefix".into(), prefix.into());
            let index = if (1..=3).contains(&prefix_code) { prefix } else { start + i };
            p.insert("index".into(), index.into());
            let size = match layout {
                Layout::Fixed(parts) => fixed_size(parts),
                _ if (4..=6).contains(&prefix_code) => {
                    p.insert("size".into(), prefix.into());
                    prefix as usize
                }
                _ => return (out, Some(Stop::Malformed)),
            };
            let Some(data) = b.get(..size) else { return (out, Some(Stop::Malformed)) };
            match layout {
                Layout::Fixed(parts) => fixed_point(parts, data, &mut p),
                other => {
                    if file_point(other, data, &mut p).is_none() {
                        return (out, Some(Stop::Malformed));
                    }
                }
            }
            b = &b[size..];
            obj.points.push(p);
        }
        out.push(obj);
    }
    (out, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crob_reads_its_fields() {
        // g12v1, qualifier 0x28 (u16 index prefix, u16 count): one point at index 1.
        let b = b"\x0c\x01\x28\x01\x00\x01\x00\x03\x01\x64\x00\x00\x00\x64\x00\x00\x00\x00";
        let (objs, stop) = read(b, true, 100, 16);
        assert_eq!(stop, None);
        let p = &objs[0].points[0];
        assert_eq!((p["index"].as_u64(), p["op_type"].as_u64(), p["ontime"].as_u64()), (Some(1), Some(3), Some(100)));
        assert_eq!(objs[0].eve()["range_code"], 8);
    }

    #[test]
    fn unknown_objects_and_too_many_points_stop_reading() {
        let (objs, stop) = read(b"\x46\x05\x5b\x01\x00\x00", true, 100, 16);
        assert_eq!((objs.len(), stop), (1, Some(Stop::Unknown)));
        let (objs, stop) = read(b"\x01\x01\x01\x00\x00\xfe\xff", true, 100, 16);
        assert_eq!((objs[0].count, stop), (65535, Some(Stop::TooManyPoints)));
        let (objs, stop) = read(b"\x3c\x02\x06\x3c\x03\x06", false, 100, 1);
        assert_eq!((objs.len(), stop), (1, Some(Stop::TooManyObjects)));
        let (objs, stop) = read(b"\x3c\x02\x06\x3c\x03\x06", false, 100, 16);
        assert_eq!((objs.len(), stop), (2, None));
        assert_eq!(read(b"\x01\x02\x00\x05", true, 100, 16).1, Some(Stop::Malformed));
    }
}
