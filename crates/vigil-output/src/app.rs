//! Records of application-layer transactions (`http`, `dns`, `tls`), and
//! the app-layer fields alerts on those transactions carry.

use crate::envelope::{envelope, EnvelopeOptions};
use serde_json::{json, Map, Value};
use vigil_decode::Packet;

/// Swaps the addresses and ports of a record: records of a transaction are
/// written in the flow's direction (client to server) or the message's,
/// whatever packet happened to complete it.
pub fn swap_endpoints(m: &mut Map<String, Value>) {
    for (a, b) in [("src_ip", "dest_ip"), ("src_port", "dest_port")] {
        if let (Some(x), Some(y)) = (m.get(a).cloned(), m.get(b).cloned()) {
            m.insert(a.into(), y);
            m.insert(b.into(), x);
        }
    }
}

/// One transaction record: the envelope of the packet that completed it
/// (oriented by `swap`), `tx_id`, and the protocol's object under `event_type`.
pub fn app_record(
    p: &Packet<'_>,
    event_type: &str,
    swap: bool,
    flow_id: u64,
    tx_id: u64,
    body: Value,
    opts: EnvelopeOptions,
) -> Value {
    let mut m = envelope(p, event_type, opts);
    if swap {
        swap_endpoints(&mut m);
    }
    let at = m.keys().position(|k| k == "pkt_src").unwrap_or(m.len());
    m.shift_insert(at, "tx_id".into(), json!(tx_id));
    m.shift_insert(1, "flow_id".into(), json!(flow_id));
    let mut out = m;
    out.insert(event_type.into(), body);
    Value::Object(out)
}

/// What a `fileinfo` record says about one file (an HTTP body).
#[derive(Debug, Clone)]
pub struct FileInfo<'a> {
    pub filename: &'a [u8],
    pub size: u64,
    /// Bytes of the file were lost to capture gaps.
    pub gaps: bool,
    /// The body ended normally (`CLOSED`) or was cut short (`TRUNCATED`).
    pub closed: bool,
    pub tx_id: u64,
}

/// A `fileinfo` record: the envelope, the transaction's protocol object
/// (`http`), `app_proto`, and the file.
pub fn fileinfo_record(
    p: &Packet<'_>,
    swap: bool,
    flow_id: u64,
    app: (&str, Value),
    file: &FileInfo<'_>,
    opts: EnvelopeOptions,
) -> Value {
    let mut m = envelope(p, "fileinfo", opts);
    if swap {
        swap_endpoints(&mut m);
    }
    m.shift_insert(1, "flow_id".into(), json!(flow_id));
    m.insert(app.0.into(), app.1);
    m.insert("app_proto".into(), json!(app.0));
    m.insert(
        "fileinfo".into(),
        json!({
            "filename": String::from_utf8_lossy(file.filename),
            "gaps": file.gaps,
            "state": if file.closed { "CLOSED" } else { "TRUNCATED" },
            "stored": false,
            "size": file.size,
            "tx_id": file.tx_id,
        }),
    );
    Value::Object(m)
}
