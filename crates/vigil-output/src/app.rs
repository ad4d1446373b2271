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
    tx_id: Option<u64>,
    body: Value,
    opts: EnvelopeOptions,
) -> Value {
    let mut m = envelope(p, event_type, opts);
    if swap {
        swap_endpoints(&mut m);
    }
    if let Some(id) = tx_id {
        let at = m.keys().position(|k| k == "pkt_src").unwrap_or(m.len());
        m.shift_insert(at, "tx_id".into(), json!(id));
    }
    m.shift_insert(1, "flow_id".into(), json!(flow_id));
    let mut out = m;
    out.insert(event_type.into(), body);
    Value::Object(out)
}

/// What a `fileinfo` record says about one file.
#[derive(Debug, Clone)]
pub struct FileInfo<'a> {
    pub filename: &'a [u8],
    /// The signatures that asked for it to be stored.
    pub sids: &'a [u32],
    /// libmagic's description, where looked up.
    pub magic: Option<&'a str>,
    /// Bytes of the file were lost to capture gaps.
    pub gaps: bool,
    /// `CLOSED`, `TRUNCATED`, `ERROR` (or `OPEN`).
    pub state: &'a str,
    /// Lower-case hex digests, where computed.
    pub md5: Option<String>,
    pub sha1: Option<String>,
    pub sha256: Option<String>,
    pub stored: bool,
    /// Marked for the file store, not stored yet (an alert written while
    /// the file is still to be stored says `storing`).
    pub storing: bool,
    /// The file store's number for it, when stored.
    pub file_id: Option<u64>,
    pub size: u64,
    /// The part of a larger file it is: its first and last byte's offsets.
    pub range: Option<(u64, u64)>,
    pub tx_id: u64,
}

impl FileInfo<'_> {
    /// The `fileinfo` object, fields in Suricata's order.
    pub fn to_json(&self) -> Value {
        let mut m = serde_json::Map::new();
        // A file nobody named (an NFS read of a handle never looked up) has no name.
        if !self.filename.is_empty() {
            m.insert("filename".into(), json!(String::from_utf8_lossy(self.filename)));
        }
        // Suricata lists the storing signatures only when there are some.
        if !self.sids.is_empty() {
            m.insert("sid".into(), json!(self.sids));
        }
        if let Some(magic) = self.magic {
            m.insert("magic".into(), json!(magic));
        }
        m.insert("gaps".into(), json!(self.gaps));
        m.insert("state".into(), json!(self.state));
        for (k, v) in [("md5", &self.md5), ("sha1", &self.sha1), ("sha256", &self.sha256)] {
            if let Some(v) = v {
                m.insert(k.into(), json!(v));
            }
        }
        m.insert("stored".into(), json!(self.stored));
        if self.storing && !self.stored {
            m.insert("storing".into(), json!(true));
        }
        if let Some(id) = self.file_id {
            m.insert("file_id".into(), json!(id));
        }
        m.insert("size".into(), json!(self.size));
        if let Some((start, end)) = self.range {
            m.insert("start".into(), json!(start));
            m.insert("end".into(), json!(end));
        }
        m.insert("tx_id".into(), json!(self.tx_id));
        Value::Object(m)
    }
}

/// A `fileinfo` record: the envelope, the transaction's protocol object
/// (`http`, `ftp_data`), `app_proto` (`ftp-data`), and the file.
pub fn fileinfo_record(
    p: &Packet<'_>,
    swap: bool,
    flow_id: u64,
    app: (&str, Value),
    app_proto: &str,
    file: &FileInfo<'_>,
    opts: EnvelopeOptions,
) -> Value {
    let mut m = envelope(p, "fileinfo", opts);
    if swap {
        swap_endpoints(&mut m);
    }
    m.shift_insert(1, "flow_id".into(), json!(flow_id));
    m.insert(app.0.into(), app.1);
    m.insert("app_proto".into(), json!(app_proto));
    m.insert("fileinfo".into(), file.to_json());
    Value::Object(m)
}
