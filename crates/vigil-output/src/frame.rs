//! EVE `frame` records, and the `frame` object alerts on a frame carry.

use crate::envelope::{envelope, EnvelopeOptions};
use serde_json::{json, Map, Value};
use vigil_decode::Packet;

/// Bytes of a frame written as its payload by default (Suricata's
/// `payload-buffer-size`, 4 KiB).
pub const FRAME_PAYLOAD_DEFAULT: usize = 4096;

/// A frame as its records describe it.
#[derive(Debug, Clone, Copy)]
pub struct FrameView<'a> {
    /// Its type's name (`pdu`, `smb2.hdr`).
    pub kind: &'a str,
    pub id: u64,
    pub to_server: bool,
    /// Where it starts in its stream (TCP only).
    pub offset: Option<u64>,
    pub len: u64,
    pub complete: bool,
    pub tx_id: Option<u64>,
    /// Its bytes as far as kept.
    pub data: &'a [u8],
}

/// The `frame` object: `payload` (base64) and `payload_printable` hold its
/// first `limit` bytes.
pub fn frame_object(f: &FrameView<'_>, limit: usize) -> Value {
    let mut m = Map::new();
    m.insert("type".into(), json!(f.kind));
    m.insert("id".into(), json!(f.id));
    m.insert("direction".into(), json!(if f.to_server { "toserver" } else { "toclient" }));
    if let Some(o) = f.offset {
        m.insert("stream_offset".into(), json!(o));
    }
    m.insert("length".into(), json!(f.len));
    let shown = &f.data[..f.data.len().min(limit)];
    if !shown.is_empty() {
        m.insert("payload".into(), json!(crate::base64::encode(shown)));
        m.insert("payload_printable".into(), json!(crate::alert::printable(shown)));
    }
    m.insert("complete".into(), json!(f.complete));
    if let Some(t) = f.tx_id {
        m.insert("tx_id".into(), json!(t));
    }
    Value::Object(m)
}

/// A `frame` record, written on packet `p` of flow `flow_id` whose
/// protocol is `app_proto`, with its endpoints the frame's way (`swap`:
/// the packet went the other way).
pub fn frame_record(
    p: &Packet<'_>,
    flow_id: u64,
    app_proto: &str,
    swap: bool,
    f: &FrameView<'_>,
    limit: usize,
    opts: EnvelopeOptions,
) -> Value {
    let mut m = envelope(p, "frame", opts);
    if swap {
        crate::app::swap_endpoints(&mut m);
    }
    m.shift_insert(1, "flow_id".into(), json!(flow_id));
    m.insert("app_proto".into(), json!(app_proto));
    m.insert("frame".into(), frame_object(f, limit));
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_object_shows_the_first_bytes_and_where_the_frame_lies() {
        let f = FrameView {
            kind: "pdu",
            id: 2,
            to_server: false,
            offset: Some(7),
            len: 5,
            complete: true,
            tx_id: Some(1),
            data: b"ab\x01cd",
        };
        let v = frame_object(&f, 3);
        assert_eq!(
            v,
            json!({"type": "pdu", "id": 2, "direction": "toclient", "stream_offset": 7, "length": 5,
                   "payload": "YWIB", "payload_printable": "ab.", "complete": true, "tx_id": 1})
        );
        let udp = FrameView { offset: None, tx_id: None, data: b"", ..f };
        assert_eq!(
            frame_object(&udp, 3),
            json!({"type": "pdu", "id": 2, "direction": "toclient", "length": 5, "complete": true})
        );
    }
}
