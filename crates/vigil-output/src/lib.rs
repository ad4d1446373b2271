//! Output: Suricata-compatible EVE JSON records, `fast.log` lines, and where
//! they are written.
//!
//! Records are built as ordered JSON objects: the envelope common to every
//! record ([`envelope`]: timestamp, addresses, ports, protocol, VLANs, tunnel),
//! then the record's own object. [`EveWriter`] appends one record per line to
//! `eve.json`; [`FastWriter`] writes one line of text per alert to `fast.log`
//! through the same shared, whole-line file. Field names and JSON types are
//! Suricata's, and the tests check every record kind against Suricata's own
//! EVE schema.
//!
//! ```
//! use vigil_output::stats_record;
//! use vigil_types::Timestamp;
//! let rec = stats_record(Timestamp::from_micros(1_500_000_000, 5), 3, &[("decoder.pkts", 10)]);
//! assert_eq!(rec["event_type"], "stats");
//! assert_eq!(rec["stats"]["decoder"]["pkts"], 10);
//! ```

mod alert;
mod alert_debug;
mod anomaly;
mod app;
mod base64;
mod community;
mod data_log;
mod drop;
mod engine;
mod envelope;
mod fast;
mod filestore;
mod flow;
mod frame;
mod hexdump;
mod packet;
mod pcap_log;
mod protocol;
#[cfg(test)]
mod schema_check;
pub mod sink;
mod stats;
mod stats_log;
mod time;
mod writer;

pub use alert::{alert_record, insert_alert_flow, AlertFlow, AlertInfo, AlertOptions, Verdict};
pub use alert_debug::{alert_debug_block, AlertDebugWriter, DebugAlert, DebugFlow};
pub use anomaly::{anomaly_record, applayer_anomaly_record, stream_anomaly_record, AnomalyOptions};
pub use app::{app_record, fileinfo_record, swap_endpoints, FileInfo};
pub use community::community_id;
pub use data_log::{data_flow_name, DataLog, DataLogKind};
pub use drop::{drop_record, DropReason};
pub use engine::engine_record;
pub use envelope::{envelope, insert_traffic, ip_text, EnvelopeOptions};
pub use fast::{fast_line, FastAction, FastAlert, FastWriter};
pub use filestore::{FileStore, FileStoreCounts};
pub use flow::{flow_record, insert_flow_id, insert_parent_id, netflow_records, FlowRecord, FlowTcpSession};
pub use frame::{frame_object, frame_record, FrameView, FRAME_PAYLOAD_DEFAULT};
pub use packet::{arp_record, packet_record};
pub use pcap_log::{PcapLog, PcapLogOptions};
pub use protocol::proto_name;
pub use stats::stats_record;
pub use stats_log::{stats_block, StatsLog, StatsLogOptions};
pub use time::{civil_from_days, format_timestamp};
pub use writer::{EveWriter, FlushPolicy};
