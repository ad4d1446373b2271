//! The configured EVE outputs, each with the record kinds it was asked for.

use crate::error::EngineError;
use crate::setup::Setup;
use serde_json::Value;
use std::path::Path;
use vigil_decode::Packet;
use vigil_detect::compile::RuleAction;
use vigil_detect::Signature;
use vigil_flow::Flow;
use vigil_output::{
    alert_record, anomaly_record, flow_record, insert_flow_id, AlertInfo, AlertOptions, AnomalyOptions,
    EnvelopeOptions, EveWriter, FlowRecord,
};
use vigil_types::Timestamp;
use vigil_wire::ip_proto;

/// One enabled `eve-log` output.
struct EveSink {
    writer: EveWriter,
    anomaly_decode: bool,
    anomaly: AnomalyOptions,
    stats: bool,
    null_values: bool,
    flow: bool,
    alert: Option<AlertOptions>,
}

/// Every enabled EVE output.
pub(crate) struct Outputs {
    sinks: Vec<EveSink>,
}

impl Outputs {
    pub(crate) fn open(setup: &Setup) -> Result<Outputs, EngineError> {
        let stats_on = setup.config.stats.enabled;
        let mut sinks = Vec::new();
        for eve in setup.config.outputs.enabled_eve_logs() {
            let path = if Path::new(&eve.filename).is_absolute() {
                Path::new(&eve.filename).to_path_buf()
            } else {
                setup.log_dir.join(&eve.filename)
            };
            let writer = EveWriter::create(&path, false)
                .map_err(|error| EngineError::Output { path: path.display().to_string(), error })?;
            let anomaly = eve.types.anomaly.as_ref().filter(|a| a.enabled);
            let stats = eve.types.stats.as_ref().filter(|s| s.enabled && s.totals && stats_on);
            sinks.push(EveSink {
                writer,
                anomaly_decode: anomaly.is_some_and(|a| a.decode),
                anomaly: AnomalyOptions {
                    packethdr: anomaly.is_some_and(|a| a.packethdr),
                    envelope: EnvelopeOptions { ethernet: eve.ethernet },
                },
                stats: stats.is_some(),
                null_values: stats.is_none_or(|s| s.null_values),
                flow: eve.types.flow.as_ref().is_some_and(|f| f.enabled),
                alert: eve.types.alert.as_ref().filter(|a| a.enabled).map(|a| AlertOptions {
                    payload: a.payload,
                    payload_printable: a.payload_printable,
                    packet: a.packet,
                    rule_metadata: a.metadata.rule_metadata,
                    envelope: EnvelopeOptions { ethernet: eve.ethernet },
                }),
            });
        }
        Ok(Outputs { sinks })
    }

    /// Writes what a decoded packet produces: its decode anomalies, tied
    /// to its flow by `flow_id` when it has one.
    pub(crate) fn packet(&mut self, p: &Packet<'_>, flow_id: Option<u64>) -> Result<(), EngineError> {
        if p.events.is_empty() {
            return Ok(());
        }
        for sink in self.sinks.iter_mut().filter(|s| s.anomaly_decode) {
            for e in p.events.iter() {
                let mut rec = anomaly_record(p, e, sink.anomaly);
                if let Some(id) = flow_id {
                    insert_flow_id(&mut rec, id);
                }
                write(&mut sink.writer, &rec)?;
            }
        }
        Ok(())
    }

    /// Writes an `alert` record for a signature that matched `p`.
    pub(crate) fn alert(
        &mut self,
        p: &Packet<'_>,
        sig: &Signature,
        flow_id: Option<u64>,
        ips: bool,
    ) -> Result<(), EngineError> {
        let blocked = ips && matches!(sig.action, RuleAction::Drop | RuleAction::Reject);
        let info = AlertInfo {
            action: if blocked { "blocked" } else { "allowed" },
            gid: sig.gid,
            sid: sig.sid,
            rev: sig.rev,
            msg: &sig.msg,
            category: &sig.category,
            severity: sig.severity,
            metadata: &sig.metadata,
        };
        for sink in &mut self.sinks {
            let Some(opts) = sink.alert else { continue };
            let mut rec = alert_record(p, &info, opts);
            if let Some(id) = flow_id {
                insert_flow_id(&mut rec, id);
            }
            write(&mut sink.writer, &rec)?;
        }
        Ok(())
    }

    /// True when some output logs flow records.
    pub(crate) fn wants_flows(&self) -> bool {
        self.sinks.iter().any(|s| s.flow)
    }

    /// Writes the record of a flow that ended, at packet time `now`.
    pub(crate) fn flow<E>(&mut self, f: &Flow<E>, now: Timestamp) -> Result<(), EngineError> {
        if !self.wants_flows() {
            return Ok(());
        }
        let rec = flow_record(&flow_fields(f), now);
        for sink in self.sinks.iter_mut().filter(|s| s.flow) {
            write(&mut sink.writer, &rec)?;
        }
        Ok(())
    }

    /// Writes a stats record to every output that logs stats; `make` builds
    /// it for the output's `null-values` setting.
    pub(crate) fn stats(&mut self, make: impl Fn(bool) -> Value) -> Result<(), EngineError> {
        for sink in self.sinks.iter_mut().filter(|s| s.stats) {
            let rec = make(sink.null_values);
            write(&mut sink.writer, &rec)?;
        }
        Ok(())
    }

    pub(crate) fn finish(&mut self) -> Result<u64, EngineError> {
        let mut records = 0;
        for sink in &mut self.sinks {
            sink.writer
                .flush()
                .map_err(|error| EngineError::Output { path: sink.writer.path().display().to_string(), error })?;
            records += sink.writer.records();
        }
        Ok(records)
    }
}

fn write(w: &mut EveWriter, rec: &Value) -> Result<(), EngineError> {
    w.write(rec).map_err(|error| EngineError::Output { path: w.path().display().to_string(), error })
}

/// A flow as its EVE record describes it.
fn flow_fields<E>(f: &Flow<E>) -> FlowRecord<'_> {
    let proto = f.key.proto;
    let has_ports = matches!(proto, ip_proto::TCP | ip_proto::UDP | ip_proto::SCTP);
    let is_icmp = matches!(proto, ip_proto::ICMP | ip_proto::ICMPV6);
    FlowRecord {
        flow_id: f.id,
        src_ip: f.key.src_ip(),
        dest_ip: f.key.dst_ip(),
        ports: has_ports.then_some((f.key.sport, f.key.dport)),
        proto,
        vlans: f.vlan_ids(),
        icmp: if is_icmp { f.icmp.to_server } else { None },
        icmp_response: if is_icmp && f.pkts.to_client > 0 { f.icmp.to_client } else { None },
        spi: f.spi,
        app_proto: None,
        pkts_toserver: f.pkts.to_server,
        pkts_toclient: f.pkts.to_client,
        bytes_toserver: f.bytes.to_server,
        bytes_toclient: f.bytes.to_client,
        start: f.start,
        end: f.last,
        age: f.age(),
        state: f.state.name(),
        reason: f.end_reason.map_or("unknown", |r| r.name()),
        alerted: f.alerted,
        emergency: f.emergency,
        tcp_flags: (proto == ip_proto::TCP).then_some((f.tcp_flags.to_server, f.tcp_flags.to_client)),
    }
}
