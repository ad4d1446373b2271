use crate::envelope::{envelope, EnvelopeOptions};
use serde_json::{json, Value};
use vigil_decode::{DecodeEvent, Packet};

/// The `anomaly` record options of the eve-log configuration.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AnomalyOptions {
    /// `packethdr: yes`: include the packet bytes and its link type.
    pub packethdr: bool,
    pub envelope: EnvelopeOptions,
}

/// One EVE `anomaly` record for a decode event of a packet.
pub fn anomaly_record(p: &Packet<'_>, e: DecodeEvent, opts: AnomalyOptions) -> Value {
    let mut m = envelope(p, "anomaly", opts.envelope);
    if opts.packethdr {
        m.insert("packet".into(), Value::String(crate::base64::encode(p.data)));
        m.insert("packet_info".into(), json!({ "linktype": p.linktype.dlt(), "linktype_name": p.linktype.name() }));
    }
    m.insert("anomaly".into(), json!({ "type": "decode", "event": format!("decoder.{}", e.name()) }));
    Value::Object(m)
}
