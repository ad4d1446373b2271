//! The configured outputs: EVE logs, each with the record kinds it was asked
//! for, and `fast.log` files.

use crate::error::EngineError;
use crate::log::log_path;
use crate::ranges::RangeFiles;
use crate::setup::Setup;

mod capture;
mod lua;
mod tls_store;

pub(crate) use capture::{PcapMark, PcapWhich};
pub(crate) use lua::{of_flow as lua_flow, PerSide as LuaSides};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;
use vigil_applayer::files::hex;
use vigil_applayer::http::HttpTx;
use vigil_applayer::proto::RecordOptions;
use vigil_applayer::protocols::ALL;
use vigil_applayer::TxRef;
use vigil_decode::Packet;
use vigil_detect::compile::RuleAction;
use vigil_detect::Signature;
use vigil_flow::Flow;
use vigil_output::{
    alert_record, anomaly_record, drop_record, flow_record, insert_alert_flow, insert_flow_id, stream_anomaly_record,
    AlertDebugWriter, AlertFlow, AlertInfo, AlertOptions, AnomalyOptions, DataLog, DebugAlert, DebugFlow, DropReason,
    EnvelopeOptions, EveWriter, FastAction, FastAlert, FastWriter, FileStore, FlowRecord, FlowTcpSession, FlushPolicy,
    PcapLog, StatsLog, StatsLogOptions,
};
use vigil_stream::{SessionSummary, StreamEventSet};
use vigil_types::{AppProto, Timestamp};
use vigil_types::{Direction, PerDir};
use vigil_wire::ip_proto;

/// One enabled `eve-log` output.
struct EveSink {
    writer: EveWriter,
    anomaly_decode: bool,
    /// `anomaly.types.stream`: stream events as anomaly records.
    anomaly_stream: bool,
    /// `anomaly` records of application-layer parser events.
    anomaly_applayer: bool,
    anomaly: AnomalyOptions,
    stats: bool,
    /// `stats.totals`, `stats.threads`: merged counters, per-thread counters.
    stats_parts: (bool, bool),
    null_values: bool,
    flow: bool,
    /// `- netflow`: two records per flow, one each way.
    netflow: bool,
    /// `- arp`: a record per ARP message.
    arp: bool,
    /// `- frame`: frames are logged, with so many bytes of payload.
    frames: Option<usize>,
    /// Flow records list the exception policies their flow met.
    flow_exception_policy: bool,
    /// `alert.tagged-packets`: packets a `tag` tagged get `packet` records.
    tagged_packets: bool,
    alert: Option<AlertOptions>,
    /// `drop` records: (with the dropping alert, every packet of a dropped flow).
    /// `drop`: (`alerts`, `flows: all`, `verdict`).
    drop: Option<(bool, bool, bool)>,
    /// `metadata.app-layer` of alerts: the transaction's object in the alert.
    alert_app: bool,
    /// `metadata.flow` of alerts: the flow's counters in the alert.
    alert_flow: bool,
    /// `alert.xff`.
    xff: Option<vigil_config::EveXff>,
    /// `files`: a `fileinfo` record per HTTP body.
    files: bool,
    /// Protocols of the application layer's table whose records are written, by place.
    table: u64,
    /// The record format version asked for each protocol of the table, by
    /// place (`- dns: version: 2`, Suricata's older per-record DNS format).
    versions: Vec<Option<u8>>,
    /// `http: dump-all-headers`: (request, response) headers in `http` records.
    http_headers: (bool, bool),
    /// `smtp: custom`: the message header fields `email` objects add.
    smtp_custom: Option<Vec<String>>,
    /// `smtp: md5`: the digests `email` objects add.
    smtp_md5: Vec<String>,
    /// What the output asks of each protocol's records (`passwords`,
    /// `string-log-limit`, `extended`), by place in the table; empty: the defaults.
    record_opts: Vec<RecordOptions>,
    envelope: EnvelopeOptions,
}

/// What an alert says about the application layer of its flow.
#[derive(Clone, Copy)]
pub(crate) struct AlertApp<'a> {
    pub proto: AppProto,
    /// The transaction a transaction signature matched.
    pub tx: Option<TxRef<'a>>,
    /// The record is written in the other direction than the packet's (the
    /// signature inspects the other side of the transaction).
    pub swap: bool,
}

/// The flow an alert is raised in: its id, and what the alert's `flow`
/// object says of it at that moment.
#[derive(Clone, Copy)]
pub(crate) struct FlowAtAlert {
    pub id: u64,
    pub eve: AlertFlow,
    /// What the flow spoke before its change of protocol, for the alert's
    /// `app_proto_orig`.
    pub orig: Option<AppProto>,
    /// An alert was raised on the flow before this packet.
    pub alerted: bool,
}

impl FlowAtAlert {
    pub(crate) fn of<E>(f: &Flow<E>) -> Self {
        let has_ports = matches!(f.key.proto, ip_proto::TCP | ip_proto::UDP | ip_proto::SCTP);
        let eve = AlertFlow {
            pkts_toserver: f.pkts.to_server,
            pkts_toclient: f.pkts.to_client,
            bytes_toserver: f.bytes.to_server,
            bytes_toclient: f.bytes.to_client,
            start: f.start,
            src_ip: f.key.src_ip(),
            dest_ip: f.key.dst_ip(),
            ports: has_ports.then_some((f.key.sport, f.key.dport)),
        };
        FlowAtAlert { id: f.id, eve, orig: None, alerted: f.alerted }
    }
}

/// A transaction's EVE object and the record type it is written under.
/// `metadata`: as alerts and `fileinfo` records carry it ([`vigil_applayer::proto::ProtoTx::eve_metadata`]).
pub(crate) fn tx_body(tx: TxRef<'_>, opts: Option<&RecordOptions>, metadata: bool) -> (&'static str, Value) {
    let key = record_type(tx);
    match (opts, metadata) {
        (o, true) => (key, tx.tx.eve_metadata(o)),
        (Some(o), false) => (key, tx.tx.eve_with(o)),
        // An output that gives no options has each protocol's defaults
        // (HTTP's basic set among them).
        (None, false) => (key, tx.tx.eve_with(&RecordOptions::DEFAULT)),
    }
}

/// The `tx_id` a transaction's record carries, where its protocol's do.
fn tx_id(tx: TxRef<'_>) -> Option<u64> {
    tx.tx.record_has_tx_id().then(|| tx.id())
}

/// The type a transaction's record is written under: its protocol's, or
/// its own where it says (a DNS-over-HTTP/2 stream's `dns`).
fn record_type(tx: TxRef<'_>) -> &'static str {
    tx.tx.record_type().unwrap_or(tx.def.eve_type())
}

/// The options `sink` gives the records of the protocol at `place` in
/// the table, where it gives any besides the defaults.
fn record_opts(sink: &EveSink, place: Option<usize>) -> Option<&RecordOptions> {
    place.and_then(|i| sink.record_opts.get(i)).filter(|o| **o != RecordOptions::DEFAULT)
}

/// What `fileinfo` says of `file` of transaction `tx_id` as it stands
/// (`complete`: its transfer is), not stored: the callers fill in the store.
fn file_info(file: &vigil_applayer::File, complete: bool, tx_id: u64) -> vigil_output::FileInfo<'_> {
    let (state, hashes) = file.settled(complete);
    vigil_output::FileInfo {
        filename: &file.name,
        magic: file.magic.as_deref(),
        sids: &file.sids,
        gaps: file.gaps,
        state: state.name(),
        md5: hashes.md5.map(|h| hex(&h)),
        sha1: hashes.sha1.map(|h| hex(&h)),
        sha256: hashes.sha256.map(|h| hex(&h)),
        stored: false,
        storing: false,
        file_id: None,
        size: file.size,
        range: file.range.as_ref().filter(|p| p.logged).map(|p| (p.range.start, p.range.end)),
        tx_id,
    }
}

/// The `files` of an alert on transaction `tx`: side `dir`'s files as
/// `fileinfo` describes them (state `UNKNOWN` and no digests while still
/// coming), not stored yet (the store writes them when the transaction is
/// logged), `storing` where a rule asked for them (or `storing`: the
/// alerting one does).
fn alert_files(tx: TxRef<'_>, dir: Direction, storing: bool) -> Option<Value> {
    let files = tx.files(dir);
    if files.is_empty() {
        return None;
    }
    let complete = tx.complete(dir);
    let list = files
        .iter()
        .map(|file| {
            let info = vigil_output::FileInfo { storing: storing || file.store, ..file_info(file, complete, tx.id()) };
            // A file still coming has no state yet, as Suricata's alerts say.
            let open = file.is_open() && !complete;
            let info = if open {
                vigil_output::FileInfo { state: "UNKNOWN", md5: None, sha1: None, sha256: None, ..info }
            } else {
                info
            };
            info.to_json()
        })
        .collect();
    Some(Value::Array(list))
}

/// The HTTP exchange behind `tx`, for the outputs whose settings only HTTP
/// has (`xff`, `dump-all-headers`, `http-body-data`), as in Suricata.
fn http_tx(tx: TxRef<'_>) -> Option<&HttpTx> {
    tx.tx.as_any().downcast_ref::<HttpTx>()
}

/// Every enabled output.
pub(crate) struct Outputs {
    sinks: Vec<EveSink>,
    /// `- fast:` outputs: one line per alert.
    fast: Vec<FastWriter>,
    /// `- alert-debug:` outputs: a block per alert.
    alert_debug: Vec<AlertDebugWriter>,
    /// Every alert goes to its files at once (live IPS: an operator watching
    /// a drop must see why without waiting for the flush interval).
    urgent_alerts: bool,
    /// The `file-store` output, when enabled.
    file_store: Option<FileStore>,
    /// `- stats:` outputs: the text stats log.
    stats_logs: Vec<StatsLog>,
    /// `- tcp-data:` and `- http-body-data:` outputs.
    tcp_data: Vec<DataLog>,
    http_bodies: Vec<DataLog>,
    /// `- pcap-log:` outputs, with which packets each writes.
    pcap_logs: Vec<(PcapLog, PcapWhich)>,
    /// Parts of files sent in parts, waiting for the rest (shared by the
    /// workers); `None` when no file is logged or stored.
    ranges: Option<RangeFiles>,
    /// What files get (digests), for files put together from parts.
    file_cfg: vigil_applayer::FileConfig,
    /// `force-filestore`.
    store_all: bool,
    /// What the records of some flows carry beyond their own: the
    /// announcing flow (`parent_id`), the flow's variables (`metadata`).
    /// Removed with the flow's record.
    notes: FlowNotes,
    /// `- lua:` output scripts.
    lua: lua::LuaOutputs,
    tls_store: Option<tls_store::TlsStore>,
}

/// See [`Outputs::notes`].
#[derive(Default)]
struct FlowNotes {
    /// Flows another announced (FTP data channels), by `flow_id`, with the
    /// announcing flow's.
    parents: Vec<(u64, u64)>,
    /// The `metadata` object (flowbits, flowints, flowvars) of flows that set any, by `flow_id`.
    vars: std::collections::HashMap<u64, Value>,
}

/// Whether the run reads a capture file or captures live: live output must
/// reach its files within a bounded time, offline output may fill buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OutputMode {
    Offline,
    Live,
}

/// Without `heartbeat.output-flush-interval`, how long a live record may
/// wait in a buffer.
const LIVE_FLUSH: Duration = Duration::from_secs(1);

/// The byterange container: `app-layer.protocols.http.byterange`'s
/// `memcap` (100 MiB) and `timeout` (60 s), as Suricata reads them.
fn byterange(setup: &Setup) -> RangeFiles {
    let node = |key: &str| {
        setup
            .config
            .raw
            .app_layer
            .as_ref()
            .and_then(|a| a.get(&format!("protocols.http.byterange.{key}")))
            .and_then(|n| n.value())
    };
    let memcap = node("memcap").and_then(|v| vigil_config::value::parse_size(v).ok()).unwrap_or(100 << 20);
    let timeout = node("timeout").and_then(|v| v.trim().parse().ok()).unwrap_or(60);
    RangeFiles::new(memcap, timeout)
}

/// When `buffer_size` bytes (Suricata's `buffer-size`) or, with an interval,
/// a record's age sends gathered records to the file.
fn flush_policy(setup: &Setup, mode: OutputMode, buffer_size: Option<u64>) -> FlushPolicy {
    let age = match (setup.config.heartbeat.output_flush_interval, mode) {
        (Some(0), _) | (None, OutputMode::Offline) => None,
        (Some(secs), _) => Some(Duration::from_secs(secs.into())),
        (None, OutputMode::Live) => Some(LIVE_FLUSH),
    };
    let bytes = buffer_size.map_or(FlushPolicy::default().bytes, |b| usize::try_from(b).unwrap_or(usize::MAX));
    FlushPolicy { bytes, age }
}

/// Bytes of records an EVE sink holds while its far end is slow or gone;
/// what does not fit is dropped and counted (`eve_log.N.dropped`).
const SINK_QUEUE_BYTES: usize = 64 << 20;

/// Where an `eve-log` other than a file sends its records, and the name it
/// goes by in messages; `None` for a file.
fn sink_target(
    filetype: &vigil_config::EveFiletype,
    path: &std::path::Path,
) -> Option<(String, vigil_output::sink::SinkTarget)> {
    use vigil_config::{EveFiletype as F, RedisMode};
    use vigil_output::sink::{RedisCommand, RedisTarget, SinkTarget};
    Some(match filetype {
        F::Regular => return None,
        F::UnixDgram => (format!("unix_dgram:{}", path.display()), SinkTarget::UnixDgram(path.to_path_buf())),
        F::UnixStream => (format!("unix_stream:{}", path.display()), SinkTarget::UnixStream(path.to_path_buf())),
        F::Syslog(s) => (
            format!("syslog:{}", s.socket),
            SinkTarget::Syslog {
                socket: s.socket.clone().into(),
                facility: s.facility,
                level: s.level,
                identity: s.identity.clone(),
            },
        ),
        F::Redis(r) => (
            format!("redis://{}:{}/{}", r.server, r.port, r.key),
            SinkTarget::Redis(RedisTarget {
                server: r.server.clone(),
                port: r.port,
                command: match r.mode {
                    RedisMode::Lpush => RedisCommand::Lpush,
                    RedisMode::Rpush => RedisCommand::Rpush,
                    RedisMode::Publish => RedisCommand::Publish,
                    RedisMode::Xadd => RedisCommand::Xadd,
                },
                key: r.key.clone(),
                batch: r.batch_size,
                stream_maxlen: r.stream_maxlen,
                trim_exact: r.stream_trim_exact,
            }),
        ),
        // Without the feature the records go to the file, as warned at start-up.
        F::Kafka(_) if !cfg!(feature = "kafka") => return None,
        F::Kafka(k) => (
            format!("kafka://{}/{}", k.brokers, k.topic),
            SinkTarget::Kafka(vigil_output::sink::KafkaTarget {
                brokers: k.brokers.clone(),
                topic: k.topic.clone(),
                client_id: k.client_id.clone(),
                options: k.options.clone(),
            }),
        ),
    })
}

impl Outputs {
    pub(crate) fn open(setup: &Setup, mode: OutputMode) -> Result<Outputs, EngineError> {
        let stats_on = setup.config.stats.enabled;
        let mut sinks = Vec::new();
        for eve in setup.config.outputs.enabled_eve_logs() {
            let path = log_path(&setup.log_dir, &eve.filename);
            let mut writer = match sink_target(&eve.filetype, &path) {
                None => EveWriter::create(&path, false)
                    .map_err(|error| EngineError::Output { path: path.display().to_string(), error })?,
                Some((name, target)) => {
                    let sink = vigil_output::sink::Sink::start(target, SINK_QUEUE_BYTES)
                        .map_err(|error| EngineError::Output { path: name.clone(), error })?;
                    EveWriter::to_sink(name, sink)
                }
            };
            writer.set_flush(flush_policy(setup, mode, eve.buffer_size));
            writer.set_prefix(eve.prefix.as_deref());
            let envelope = EnvelopeOptions {
                ethernet: eve.ethernet,
                community_id: eve.community_id.then_some(eve.community_id_seed),
            };
            let anomaly = eve.types.anomaly.as_ref().filter(|a| a.enabled);
            let stats = eve.types.stats.as_ref().filter(|s| s.enabled && (s.totals || s.threads) && stats_on);
            sinks.push(EveSink {
                writer,
                anomaly_decode: anomaly.is_some_and(|a| a.decode),
                anomaly_stream: anomaly.is_some_and(|a| a.stream),
                anomaly_applayer: anomaly.is_some_and(|a| a.applayer),
                anomaly: AnomalyOptions { packethdr: anomaly.is_some_and(|a| a.packethdr), envelope },
                stats: stats.is_some(),
                stats_parts: stats.map_or((true, false), |s| (s.totals, s.threads)),
                null_values: stats.is_none_or(|s| s.null_values),
                flow: eve.types.flow.as_ref().is_some_and(|f| f.enabled),
                netflow: eve.logs("netflow"),
                arp: eve.logs("arp"),
                frames: eve
                    .logs("frame")
                    .then(|| eve.types.frame_payload.map_or(vigil_output::FRAME_PAYLOAD_DEFAULT, |n| n as usize)),
                flow_exception_policy: eve.types.flow.as_ref().is_some_and(|f| f.exception_policy),
                tagged_packets: eve.types.alert.as_ref().is_some_and(|a| a.enabled && a.tagged_packets),
                alert: eve.types.alert.as_ref().filter(|a| a.enabled).map(|a| AlertOptions {
                    payload: a.payload,
                    payload_printable: a.payload_printable,
                    packet: a.packet,
                    rule_metadata: a.metadata.rule_metadata,
                    rule_reference: a.metadata.rule_reference,
                    verdict: a.verdict,
                    envelope,
                }),
                alert_app: eve.types.alert.as_ref().is_some_and(|a| a.metadata.app_layer),
                alert_flow: eve.types.alert.as_ref().is_some_and(|a| a.metadata.flow),
                xff: eve.types.alert.as_ref().and_then(|a| a.xff.clone()),
                files: eve.logs("files"),
                table: ALL
                    .iter()
                    .enumerate()
                    .take(64)
                    .filter(|(_, d)| eve.logs(d.name))
                    .fold(0, |m, (i, _)| m | 1 << i),
                // Only DNS has versions (SURICATA_EVE_DNS_VERSION wins, as in Suricata).
                versions: ALL
                    .iter()
                    .map(|d| (d.name == "dns").then(|| setup.eve_dns_version.or(eve.types.dns_version)).flatten())
                    .collect(),
                http_headers: eve.types.http_dump_headers,
                smtp_custom: eve.types.smtp_custom.clone(),
                smtp_md5: eve.types.smtp_md5.clone(),
                record_opts: if eve.types.record_options.is_empty() {
                    Vec::new()
                } else {
                    ALL.iter()
                        .map(|d| {
                            let given = eve.types.record_options.iter().find(|(n, _)| n == d.name || n == d.eve_type());
                            given.map_or_else(RecordOptions::default, |(_, o)| RecordOptions {
                                passwords: o.passwords,
                                string_log_limit: o.string_log_limit.map(|l| l as usize),
                                extended: o.extended,
                                types: o.types.clone(),
                                custom: o.custom.clone(),
                            })
                        })
                        .collect()
                },
                drop: eve
                    .types
                    .drop
                    .as_ref()
                    .filter(|d| d.enabled && setup.ips)
                    .map(|d| (d.alerts, d.flows == vigil_config::DropFlows::All, d.verdict)),
                envelope,
            });
        }
        let mut fast = Vec::new();
        for log in setup.config.outputs.fast.iter().filter(|f| f.enabled) {
            let path = log_path(&setup.log_dir, &log.filename);
            let mut writer = FastWriter::create(&path, log.append)
                .map_err(|error| EngineError::Output { path: path.display().to_string(), error })?;
            writer.writer_mut().set_flush(flush_policy(setup, mode, None));
            fast.push(writer);
        }
        let mut alert_debug = Vec::new();
        for log in setup.config.outputs.alert_debug.iter().filter(|f| f.enabled) {
            let path = log_path(&setup.log_dir, &log.filename);
            let mut writer = AlertDebugWriter::create(&path, log.append)
                .map_err(|error| EngineError::Output { path: path.display().to_string(), error })?;
            writer.writer_mut().set_flush(flush_policy(setup, mode, None));
            alert_debug.push(writer);
        }
        let files = setup.app.as_ref().map(|a| a.http.files).unwrap_or_default();
        let logs_files = sinks.iter().any(|s| s.files) || !setup.config.outputs.file_store.is_empty();
        let file_store = match setup.config.outputs.file_store.first() {
            Some(fs) => {
                let path = log_path(&setup.log_dir, &fs.dir);
                Some(
                    FileStore::open(&path, fs.write_fileinfo)
                        .map_err(|error| EngineError::Output { path: path.display().to_string(), error })?,
                )
            }
            None => None,
        };
        let mut stats_logs = Vec::new();
        for log in setup.config.outputs.stats.iter().filter(|s| s.enabled && stats_on) {
            let path = log_path(&setup.log_dir, &log.filename);
            let opts = StatsLogOptions { totals: log.totals, threads: log.threads, null_values: log.null_values };
            stats_logs.push(
                StatsLog::create(&path, log.append, opts)
                    .map_err(|error| EngineError::Output { path: path.display().to_string(), error })?,
            );
        }
        Ok(Outputs {
            sinks,
            fast,
            alert_debug,
            urgent_alerts: mode == OutputMode::Live && setup.ips,
            file_store,
            stats_logs,
            tcp_data: capture::data_logs(setup, mode, &setup.config.outputs.tcp_data, "tcp")?,
            http_bodies: capture::data_logs(setup, mode, &setup.config.outputs.http_body_data, "http")?,
            pcap_logs: capture::pcap_logs(setup)?,
            ranges: logs_files.then(|| byterange(setup)),
            file_cfg: files,
            store_all: files.store_all,
            notes: FlowNotes::default(),
            lua: lua::LuaOutputs::open(setup)?,
            tls_store: tls_store::TlsStore::open(setup)?,
        })
    }

    /// The same outputs for another worker: records go to the same files,
    /// gathered in buffers of its own.
    pub(crate) fn share(&self) -> Outputs {
        let sinks = self
            .sinks
            .iter()
            .map(|s| EveSink {
                writer: s.writer.share(),
                xff: s.xff.clone(),
                versions: s.versions.clone(),
                smtp_custom: s.smtp_custom.clone(),
                smtp_md5: s.smtp_md5.clone(),
                record_opts: s.record_opts.clone(),
                ..*s
            })
            .collect();
        Outputs {
            sinks,
            fast: self.fast.iter().map(FastWriter::share).collect(),
            alert_debug: self.alert_debug.iter().map(AlertDebugWriter::share).collect(),
            urgent_alerts: self.urgent_alerts,
            file_store: self.file_store.as_ref().map(FileStore::share),
            stats_logs: self.stats_logs.iter().map(StatsLog::share).collect(),
            tcp_data: self.tcp_data.iter().map(DataLog::share).collect(),
            http_bodies: self.http_bodies.iter().map(DataLog::share).collect(),
            pcap_logs: self.pcap_logs.iter().map(|(l, w)| (l.share(0), w.clone())).collect(),
            ranges: self.ranges.clone(),
            file_cfg: self.file_cfg,
            store_all: self.store_all,
            notes: FlowNotes::default(),
            lua: self.lua.share(),
            tls_store: self.tls_store.clone(),
        }
    }

    /// `file_store.hold_memuse` and `file_store.hold_memcap`, where files
    /// are held for `filestore` rules.
    pub(crate) fn hold_counts(&self) -> Option<(u64, u64)> {
        self.file_cfg.hold_budget.map(|b| (b.used(), b.hits()))
    }

    /// Each EVE sink's counters, by its place among the `eve-log` outputs.
    pub(crate) fn sink_counts(&self) -> Vec<(String, u64)> {
        let mut out = Vec::new();
        for (i, s) in self.sinks.iter().enumerate() {
            if let Some(sink) = s.writer.sink() {
                let c = sink.counts();
                out.push((format!("eve_log.{i}.sent"), c.sent));
                out.push((format!("eve_log.{i}.dropped"), c.dropped));
                out.push((format!("eve_log.{i}.reconnects"), c.reconnects));
            }
        }
        out
    }

    /// The end of the run: every EVE sink sends what it holds (for a few
    /// seconds at most) and stops; records it could not deliver are said.
    pub(crate) fn close_sinks(&mut self) {
        for s in &mut self.sinks {
            let _ = s.writer.flush();
            if let Some(sink) = s.writer.sink() {
                let c = sink.close();
                if c.dropped > 0 {
                    eprintln!(
                        "vigil: warning: eve-log {}: {} of {} records not delivered (counted as dropped)",
                        s.writer.path().display(),
                        c.dropped,
                        c.sent + c.dropped
                    );
                }
            }
        }
    }

    /// `http.byterange.memuse` and `http.byterange.memcap`, where parts are put together.
    pub(crate) fn byterange_counts(&self) -> Option<(u64, u64)> {
        self.ranges.as_ref().map(RangeFiles::counters)
    }

    /// The same outputs for worker `index` (0-based): as [`Outputs::share`],
    /// with the worker's own pcap-log files in multi mode.
    pub(crate) fn share_for(&self, index: usize) -> Outputs {
        let mut o = self.share();
        o.pcap_logs = self.pcap_logs.iter().map(|(l, w)| (l.share(index), w.clone())).collect();
        o
    }

    /// Sends records that waited their time to their files (live workers call
    /// this as time passes, with traffic or without).
    pub(crate) fn poll(&mut self) -> Result<(), EngineError> {
        self.each_file(EveWriter::poll)?;
        self.flush_pcap_logs()
    }

    /// Opens every output file again by name (SIGHUP, `reopen-log-files`):
    /// writers of all workers share the files, so one call serves them all.
    pub(crate) fn reopen(&mut self) -> Result<(), EngineError> {
        self.each_file(EveWriter::reopen)
    }

    /// `op` on the writer of every EVE, fast.log and stats.log output, stopping at the first error.
    fn each_file(&mut self, op: fn(&mut EveWriter) -> std::io::Result<()>) -> Result<(), EngineError> {
        let eve = self.sinks.iter_mut().map(|s| &mut s.writer);
        let text = self
            .fast
            .iter_mut()
            .map(FastWriter::writer_mut)
            .chain(self.stats_logs.iter_mut().map(StatsLog::writer_mut));
        for w in eve.chain(text) {
            op(w).map_err(|error| output_error(w.path(), error))?;
        }
        Ok(())
    }

    /// Some alert output logs payloads (a stream match's is worth building).
    /// Whether an output logs frames.
    pub(crate) fn logs_frames(&self) -> bool {
        self.sinks.iter().any(|s| s.frames.is_some())
    }

    /// `frame` records for the frames of flow `flow_id` handed over on
    /// packet `p` (which went to the server when `to_server`).
    pub(crate) fn frames(
        &mut self,
        p: &Packet<'_>,
        flow_id: u64,
        app_proto: AppProto,
        to_server: bool,
        frames: &[vigil_applayer::Frame],
    ) -> Result<(), EngineError> {
        for sink in &mut self.sinks {
            let Some(limit) = sink.frames else { continue };
            for f in frames {
                let swap = (f.dir == Direction::ToServer) != to_server;
                let proto =
                    if matches!(app_proto, AppProto::Unknown | AppProto::Failed) { f.proto } else { app_proto.name() };
                let rec = vigil_output::frame_record(p, flow_id, proto, swap, &frame_view(f), limit, sink.envelope);
                write(&mut sink.writer, &rec)?;
            }
        }
        Ok(())
    }

    pub(crate) fn wants_payload(&self) -> bool {
        self.sinks.iter().any(|s| s.alert.is_some_and(|a| a.payload || a.payload_printable))
    }

    /// Writes the `anomaly` records of the parser events a packet brought.
    pub(crate) fn app_anomalies(
        &mut self,
        p: &Packet<'_>,
        flow_id: u64,
        proto: AppProto,
        events: &[vigil_applayer::AppEvent],
    ) -> Result<(), EngineError> {
        for sink in self.sinks.iter_mut().filter(|s| s.anomaly_applayer) {
            for e in events {
                let mut rec =
                    vigil_output::applayer_anomaly_record(p, flow_id, proto.name(), e.name, e.tx_id, sink.envelope);
                with_flow_notes(&self.notes, &mut rec, flow_id);
                write(&mut sink.writer, &rec)?;
            }
        }
        Ok(())
    }

    /// Writes the `packet` record of a packet a `tag` tagged.
    pub(crate) fn tagged_packet(&mut self, p: &Packet<'_>, flow_id: Option<u64>) -> Result<(), EngineError> {
        for sink in self.sinks.iter_mut().filter(|s| s.tagged_packets) {
            let rec = vigil_output::packet_record(p, flow_id, sink.envelope);
            write(&mut sink.writer, &rec)?;
        }
        Ok(())
    }

    /// Writes what a decoded packet produces: its decode and stream
    /// anomalies, tied to its flow by `flow_id` when it has one.
    /// Whether a sink writes `arp` records.
    pub(crate) fn wants_arp(&self) -> bool {
        self.sinks.iter().any(|s| s.arp)
    }

    /// The `arp` record of an ARP message, where asked for.
    pub(crate) fn arp(&mut self, p: &Packet<'_>) -> Result<(), EngineError> {
        for sink in self.sinks.iter_mut().filter(|s| s.arp) {
            if let Some(rec) = vigil_output::arp_record(p, sink.envelope) {
                write(&mut sink.writer, &rec)?;
            }
        }
        Ok(())
    }

    pub(crate) fn packet(
        &mut self,
        p: &Packet<'_>,
        stream_events: StreamEventSet,
        flow_id: Option<u64>,
    ) -> Result<(), EngineError> {
        if p.events.is_empty() && stream_events.is_empty() {
            return Ok(());
        }
        for sink in self.sinks.iter_mut().filter(|s| s.anomaly_decode || s.anomaly_stream) {
            let decode = p.events.iter().filter(|_| sink.anomaly_decode).map(|e| anomaly_record(p, e, sink.anomaly));
            let stream = stream_events
                .iter()
                .filter(|_| sink.anomaly_stream)
                .map(|e| stream_anomaly_record(p, e.name(), sink.anomaly));
            for mut rec in decode.chain(stream) {
                if let Some(id) = flow_id {
                    insert_flow_id(&mut rec, id);
                }
                write(&mut sink.writer, &rec)?;
            }
        }
        Ok(())
    }

    /// Writes an `alert` record for a signature that matched `p`, in the
    /// circumstances `at` describes.
    pub(crate) fn alert(&mut self, p: &Packet<'_>, sig: &Signature, at: AlertAt<'_>) -> Result<(), EngineError> {
        if !self.lua.is_empty() {
            self.lua.alert(p, sig, at.flow);
        }
        let AlertAt {
            flow,
            blocked,
            flow_dir,
            app,
            stream_payload,
            verdict,
            traffic,
            firewall,
            td_engine,
            captured,
            frame,
        } = at;
        // Suricata's `direction`: the flow direction the alert is written in.
        let direction = flow_dir.map(|to_server| if to_server { "to_server" } else { "to_client" });
        let info = AlertInfo { stream_payload, verdict, ..alert_info(sig, blocked) };
        if !self.fast.is_empty() {
            let action = match (blocked, sig.action) {
                (true, _) => FastAction::Drop,
                (false, RuleAction::Drop | RuleAction::Reject) => FastAction::WouldDrop,
                _ => FastAction::Alert,
            };
            let line = FastAlert {
                action,
                gid: sig.gid,
                sid: sig.sid,
                rev: sig.rev,
                msg: &sig.msg,
                category: &sig.category,
                priority: sig.severity,
                swap: app.is_some_and(|a| a.swap),
            };
            for w in &mut self.fast {
                w.write(p, &line)
                    .map_err(|error| EngineError::Output { path: w.path().display().to_string(), error })?;
            }
        }
        if !self.alert_debug.is_empty() {
            let debug_flow = flow.map(|f| DebugFlow {
                // The packet's own direction: the record's, turned back when it was turned.
                to_server: flow_dir.unwrap_or(true) ^ app.is_some_and(|a| a.swap),
                start: f.eve.start,
                pkts_toserver: f.eve.pkts_toserver,
                pkts_toclient: f.eve.pkts_toclient,
                bytes: f.eve.bytes_toserver + f.eve.bytes_toclient,
                dropped: blocked,
                app_proto: app.map(|a| a.proto).filter(|p| !matches!(p, AppProto::Unknown)).map(|p| p.name()),
            });
            let found_in = match (stream_payload, app.and_then(|a| a.tx)) {
                (Some(_), _) => "STREAM",
                (None, Some(_)) => "STATE",
                (None, None) => "PACKET",
            };
            let debug = DebugAlert { info: &info, found_in, tx_id: app.and_then(|a| a.tx).map(|t| t.id()) };
            for w in &mut self.alert_debug {
                w.write(p, debug_flow.as_ref(), &debug).map_err(|error| output_error(w.path(), error))?;
            }
        }
        for sink in &mut self.sinks {
            let Some(opts) = sink.alert else { continue };
            let mut rec = alert_record(p, &info, opts);
            if let Some(f) = flow {
                insert_flow_id(&mut rec, f.id);
                with_flow_notes(&self.notes, &mut rec, f.id);
            }
            if !captured.is_empty() {
                with_captures(&mut rec, captured);
            }
            if let (true, Some(Value::Object(a))) = (td_engine, rec.get_mut("alert")) {
                a.shift_insert(1, "engine".into(), "td".into());
            }
            if let (Some(fw), Value::Object(m)) = (firewall, &mut rec) {
                if let Some(Value::Object(a)) = m.get_mut("alert") {
                    a.shift_insert(1, "engine".into(), "fw".into());
                }
                let at = m.keys().position(|k| k == "alert").map_or(m.len(), |i| i + 1);
                m.shift_insert(at, "firewall".into(), serde_json::json!({"hook": fw.table, "policy": fw.policy}));
                if let Some((ts, tc)) = fw.progress {
                    m.shift_insert(at + 1, "ts_progress".into(), ts.into());
                    m.shift_insert(at + 2, "tc_progress".into(), tc.into());
                }
            }
            if let (Some(dir), Value::Object(m)) = (direction, &mut rec) {
                let at = m.keys().position(|k| k == "alert").unwrap_or(m.len());
                m.shift_insert(at, "direction".into(), dir.into());
            }
            if let (Some(app), Value::Object(m)) = (app, &mut rec) {
                if app.swap {
                    vigil_output::swap_endpoints(m);
                }
                if let Some(tx) = app.tx {
                    let at = m.keys().position(|k| k == "alert").unwrap_or(m.len());
                    // An alert on a frame shows the frame's transaction as the frame does.
                    let id = frame.and_then(vigil_applayer::Frame::tx_shown).unwrap_or(tx.id());
                    m.shift_insert(at, "tx_id".into(), id.into());
                }
                if !matches!(app.proto, AppProto::Unknown) {
                    m.insert("app_proto".into(), app.proto.name().into());
                    if let Some(orig) = flow.and_then(|f| f.orig).filter(|&o| o != app.proto) {
                        m.insert("app_proto_orig".into(), orig.name().into());
                    }
                }
                if let (Some(xff), Some(h)) = (&sink.xff, app.tx.and_then(http_tx)) {
                    if let Some(ip) = xff_address(h, xff) {
                        if xff.overwrite {
                            // The client's side of the record: the source towards the server.
                            let key = if direction == Some("to_client") { "dest_ip" } else { "src_ip" };
                            m.insert(key.into(), ip.into());
                        } else if let Some(Value::Object(a)) = m.get_mut("alert") {
                            a.insert("xff".into(), ip.into());
                        }
                    }
                }
                if let Some(tx) = app.tx.filter(|_| sink.alert_app) {
                    let place = vigil_applayer::proto::index(tx.def.name);
                    let (key, body) = tx_body(tx, record_opts(sink, place), true);
                    m.insert(key.into(), body);
                    with_siblings(m, key, tx, sibling_opts(sink));
                    // The files of the packet's side, as they stand when the alert is written.
                    let side = if direction == Some("to_client") { Direction::ToClient } else { Direction::ToServer };
                    // A `filestore` of this signature marks them once inspection is over.
                    let storing = sig.filestore.as_ref().is_some_and(|f| f.dirs.is_empty() || f.dirs.contains(&side));
                    if let Some(files) = alert_files(tx, side, storing) {
                        m.insert("files".into(), files);
                    }
                }
            }
            if let Some(f) = flow.filter(|_| sink.alert_flow) {
                insert_alert_flow(&mut rec, &f.eve);
            }
            if let (Some(f), Value::Object(m)) = (frame, &mut rec) {
                let limit = sink.frames.unwrap_or(vigil_output::FRAME_PAYLOAD_DEFAULT);
                m.insert("frame".into(), vigil_output::frame_object(&frame_view(f), limit));
            }
            vigil_output::insert_traffic(&mut rec, &traffic.ids, &traffic.labels);
            write(&mut sink.writer, &rec)?;
            if self.urgent_alerts {
                sink.writer.flush().map_err(|error| output_error(sink.writer.path(), error))?;
            }
        }
        if self.urgent_alerts {
            for w in &mut self.fast {
                w.flush().map_err(|error| output_error(w.path(), error))?;
            }
        }
        Ok(())
    }

    /// Writes a `drop` record for a packet the IPS dropped, where asked for;
    /// `sig`: the signature that dropped it (none for a flow already
    /// dropped), `first_in_dir`: no packet of this flow direction was logged
    /// yet (outputs with `flows: start` log only those of a dropped flow).
    pub(crate) fn drop(
        &mut self,
        p: &Packet<'_>,
        flow_id: Option<u64>,
        reason: DropReason,
        sig: Option<&Signature>,
        first_in_dir: bool,
        verdict: vigil_output::Verdict,
    ) -> Result<(), EngineError> {
        for sink in &mut self.sinks {
            let Some((alerts, all, with_verdict)) = sink.drop else { continue };
            if sig.is_none() && !all && !first_in_dir {
                continue;
            }
            let mut rec = drop_record(p, reason, sink.envelope);
            if let Some(id) = flow_id {
                insert_flow_id(&mut rec, id);
            }
            if let (Some(sig), true, Value::Object(m)) = (sig, alerts, &mut rec) {
                let opts = sink.alert.unwrap_or(AlertOptions { envelope: sink.envelope, ..AlertOptions::default() });
                if let Value::Object(mut a) = alert_record(p, &alert_info(sig, true), opts) {
                    m.insert("alert".into(), a.remove("alert").unwrap_or(Value::Null));
                }
            }
            if let (true, Value::Object(m)) = (with_verdict, &mut rec) {
                m.insert("verdict".into(), verdict.to_json());
            }
            write(&mut sink.writer, &rec)?;
        }
        Ok(())
    }

    /// Writes a transaction's record (`http`, `dns`, `tls`) where asked for;
    /// `swap`: the record's direction is the other one than the packet's;
    /// `upgraded_from`: the protocol that asked for the flow's TLS.
    /// `with_files`: its files' records too (else [`Outputs::tx_files`] later).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn transaction(
        &mut self,
        p: &Packet<'_>,
        flow_id: u64,
        tx: TxRef<'_>,
        swap: bool,
        upgraded_from: Option<AppProto>,
        lua_flow: Option<&vigil_detect::lua::LuaFlow>,
        with_files: bool,
    ) -> Result<(), EngineError> {
        if self.lua.wants_transactions() {
            self.lua.transaction(p, tx, lua_flow);
        }
        if !tx.writes_record() {
            // Its files are logged all the same (an NFS write committed but never answered).
            return if with_files { self.tx_files(p, flow_id, tx, swap) } else { Ok(()) };
        }
        let mut body = None;
        for sink in &mut self.sinks {
            let place = vigil_applayer::proto::index(tx.def.name);
            if place.is_none_or(|i| sink.table & (1 << i) == 0) {
                continue;
            }
            let opts = record_opts(sink, place);
            if !tx.tx.logs_with(opts.unwrap_or(&RecordOptions::DEFAULT)) {
                continue;
            }
            let version = place
                .and_then(|i| sink.versions.get(i).copied().flatten())
                .and_then(|v| tx.tx.eve_version(v))
                .map(|recs| (tx.def.name, tx.record_dir(), recs));
            if let Some((name, own_dir, recs)) = version {
                // `swap` orients the record's own direction; each of these says its own.
                for (dir, body) in recs {
                    let swap = swap != (own_dir != dir);
                    let mut rec = vigil_output::app_record(p, name, swap, flow_id, tx_id(tx), body, sink.envelope);
                    with_flow_notes(&self.notes, &mut rec, flow_id);
                    write(&mut sink.writer, &rec)?;
                }
                continue;
            }
            let (key, b) = match (http_tx(tx), sink.http_headers) {
                (Some(h), (req, resp)) if req || resp => {
                    ("http", serde_json::to_value(h.eve_dump_headers(req, resp)).unwrap_or(Value::Null))
                }
                _ => match opts {
                    Some(o) => tx_body(tx, Some(o), false),
                    None => body.get_or_insert_with(|| tx_body(tx, None, false)).clone(),
                },
            };
            let mut b = b;
            if let (Some(from), "tls", Value::Object(m)) = (upgraded_from, key, &mut b) {
                m.insert("from_proto".into(), from.name().into());
            }
            let mut rec = vigil_output::app_record(p, key, swap, flow_id, tx_id(tx), b, sink.envelope);
            if let Value::Object(m) = &mut rec {
                with_siblings(m, key, tx, sibling_opts(sink));
            }
            with_flow_notes(&self.notes, &mut rec, flow_id);
            write(&mut sink.writer, &rec)?;
        }
        if with_files {
            self.tx_files(p, flow_id, tx, swap)?;
        }
        Ok(())
    }

    /// Writes the records of a logged transaction's files; `swap` as for
    /// [`Outputs::transaction`].
    pub(crate) fn tx_files(
        &mut self,
        p: &Packet<'_>,
        flow_id: u64,
        tx: TxRef<'_>,
        swap: bool,
    ) -> Result<(), EngineError> {
        // `swap` turns the packet to the record's direction; the files want it turned to the server's.
        let files_swap = swap != (tx.record_dir() == Direction::ToClient);
        self.files(p, flow_id, tx, files_swap)
    }

    /// Writes a `fileinfo` record for `info` where asked (and its metadata
    /// beside a stored file).
    fn log_file(
        &mut self,
        p: &Packet<'_>,
        flow_id: u64,
        tx: TxRef<'_>,
        swap_file: bool,
        info: &vigil_output::FileInfo<'_>,
    ) -> Result<(), EngineError> {
        let notes = &self.notes;
        let record = |envelope| {
            let mut rec = vigil_output::fileinfo_record(
                p,
                swap_file,
                flow_id,
                tx_body(tx, None, true),
                tx.def.name,
                info,
                envelope,
            );
            if let Value::Object(m) = &mut rec {
                with_siblings(m, record_type(tx), tx, Default::default());
            }
            with_flow_notes(notes, &mut rec, flow_id);
            rec
        };
        // The record with the plain envelope, made once and only when
        // something writes it: the store's metadata or a plain sink.
        let plain_wanted = (info.file_id.is_some() && self.file_store.as_ref().is_some_and(FileStore::writes_fileinfo))
            || self.sinks.iter().any(|s| s.files && s.envelope == EnvelopeOptions::default());
        let plain = plain_wanted.then(|| record(EnvelopeOptions::default()));
        if let (Some(rec), Some(fs), Some(id), Some(sha)) =
            (&plain, self.file_store.as_mut(), info.file_id, info.sha256.as_deref())
        {
            fs.write_fileinfo(sha, p.ts.secs(), id, rec);
        }
        for sink in self.sinks.iter_mut().filter(|s| s.files) {
            match &plain {
                Some(rec) if sink.envelope == EnvelopeOptions::default() => write(&mut sink.writer, rec)?,
                _ => write(&mut sink.writer, &record(sink.envelope))?,
            }
        }
        Ok(())
    }

    /// A file its parts completed: hashed as asked, stored where a part was
    /// to be (or every file is), and logged whole, with the transaction
    /// that brought its last part.
    fn log_whole_file(
        &mut self,
        p: &Packet<'_>,
        flow_id: u64,
        tx: TxRef<'_>,
        swap_file: bool,
        name: &[u8],
        whole: crate::ranges::Whole,
    ) -> Result<(), EngineError> {
        let hashes = vigil_applayer::files::hashes_of(&whole.data, &self.file_cfg);
        let sha256 = hashes.sha256.map(|h| hex(&h));
        let mut file_id = None;
        if let (Some(fs), Some(sha)) = (self.file_store.as_mut(), sha256.as_deref()) {
            if whole.store || self.store_all {
                file_id = fs.store(sha, &whole.data);
            }
        }
        let info = vigil_output::FileInfo {
            filename: name,
            magic: None,
            sids: &[],
            gaps: false,
            state: vigil_applayer::FileState::Closed.name(),
            md5: hashes.md5.map(|h| hex(&h)),
            sha1: hashes.sha1.map(|h| hex(&h)),
            sha256,
            stored: file_id.is_some(),
            storing: false,
            file_id,
            size: whole.data.len() as u64,
            range: None,
            tx_id: tx.id(),
        };
        self.log_file(p, flow_id, tx, swap_file, &info)
    }

    /// A transaction's files: stored where asked (`file-store`), then a
    /// `fileinfo` record each where asked. `swap`: the packet goes to the client.
    fn files(&mut self, p: &Packet<'_>, flow_id: u64, tx: TxRef<'_>, swap: bool) -> Result<(), EngineError> {
        let logs = self.sinks.iter().any(|s| s.files);
        let lua = self.lua.wants_files();
        if !logs && self.file_store.is_none() && !lua {
            return Ok(());
        }
        for dir in [Direction::ToServer, Direction::ToClient] {
            for file in tx.files(dir) {
                let mut info = file_info(file, tx.complete(dir), tx.id());
                if let (Some(fs), Some(sha)) = (self.file_store.as_mut(), info.sha256.as_deref()) {
                    if file.storable() {
                        info.file_id = fs.store(sha, &file.kept);
                        info.stored = info.file_id.is_some();
                    } else if file.store && file.kept_overflow && !file.gaps {
                        // Asked for in time, but larger than a file may be
                        // held (`FileConfig::max_kept`): a failed store.
                        fs.counts.fs_errors += 1;
                    }
                }
                // `swap` orients the packet to the client-to-server direction.
                let swap_file = swap != (dir == Direction::ToClient);
                self.log_file(p, flow_id, tx, swap_file, &info)?;
                if lua {
                    self.lua.file(p, &info);
                }
                if let (Some(part), Some(ranges)) = (file.range.as_ref(), self.ranges.as_ref()) {
                    // A whole part of a file sent in parts: the file, once all came.
                    let whole_part =
                        info.state == vigil_applayer::FileState::Closed.name() && file.kept.len() as u64 == file.size;
                    if whole_part {
                        if let Some(whole) = ranges.add(&part.key, part.range, &file.kept, file.store, p.ts.secs()) {
                            self.log_whole_file(p, flow_id, tx, swap_file, &part.whole_name, whole)?;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// The file store's counts, when it is enabled.
    pub(crate) fn file_store_counts(&self) -> Option<vigil_output::FileStoreCounts> {
        self.file_store.as_ref().map(|f| f.counts)
    }

    /// True when some output logs transaction records.
    pub(crate) fn wants_transactions(&self) -> bool {
        self.sinks.iter().any(|s| s.table != 0 || s.files)
            || self.file_store.is_some()
            || self.lua.wants_transactions()
            || self.lua.wants_files()
    }

    /// True when a Lua output script logs transactions, which want their
    /// flow described (`suricata.flow`).
    pub(crate) fn wants_lua_flows(&self) -> bool {
        self.lua.wants_transactions() || self.lua.wants_streaming(true)
    }

    /// True when a Lua output script logs every packet.
    pub(crate) fn wants_lua_packets(&self) -> bool {
        self.lua.wants_packets()
    }

    /// Whether a Lua output script streams TCP flows (or, `http`, HTTP bodies).
    pub(crate) fn lua_streams(&self, http: bool) -> bool {
        self.lua.wants_streaming(http)
    }

    /// A piece of a stream for the Lua streaming scripts.
    pub(crate) fn lua_stream(
        &mut self,
        p: Option<&Packet<'_>>,
        flow: Option<&vigil_detect::lua::LuaFlow>,
        args: &vigil_detect::lua::StreamArgs<'_>,
    ) {
        self.lua.stream(p, flow, args);
    }

    /// A packet for the Lua output scripts that log packets, with its flow.
    pub(crate) fn lua_packet(&mut self, p: &Packet<'_>, flow: Option<&vigil_detect::lua::LuaFlow>) {
        self.lua.packet(p, flow);
    }

    /// The counters of a stats record, for Lua output scripts.
    pub(crate) fn lua_stats(&mut self, totals: &[(String, u64)]) {
        if !self.lua.is_empty() {
            self.lua.stats(totals);
        }
    }

    /// The flow `id` was announced by flow `parent`: its records say so.
    pub(crate) fn set_parent(&mut self, id: u64, parent: u64) {
        self.notes.parents.push((id, parent));
    }

    /// The variables flow `id` holds now (`None`: none), which its records
    /// carry as `metadata` from here on, as Suricata's do.
    pub(crate) fn set_flow_vars(&mut self, id: u64, vars: Option<Value>) {
        match vars {
            Some(v) => {
                self.notes.vars.insert(id, v);
            }
            None => {
                self.notes.vars.remove(&id);
            }
        }
    }

    /// True when some output logs flow records.
    pub(crate) fn wants_flows(&self) -> bool {
        self.sinks.iter().any(|s| s.flow || s.netflow) || self.lua.wants_flows()
    }

    /// Writes the record of a flow that ended, at packet time `now`; `tcp` is what its
    /// TCP session ended with.
    pub(crate) fn flow<E>(
        &mut self,
        f: &Flow<E>,
        now: Timestamp,
        protos: FlowProtos,
        tcp: Option<&SessionSummary>,
        fate: FlowFate<'_>,
    ) -> Result<(), EngineError> {
        if self.lua.wants_flows() {
            let sides = LuaSides { ts: protos.sides.to_server, tc: protos.sides.to_client };
            let lf = lua::of_flow(&FlowAtAlert::of(f), f.key.proto, f.last, Some(protos.app), sides);
            self.lua.flow(&lf);
        }
        let written = self.flow_record(f, now, protos, tcp, fate);
        if !self.notes.parents.is_empty() {
            self.notes.parents.retain(|(id, _)| *id != f.id);
        }
        if !self.notes.vars.is_empty() {
            self.notes.vars.remove(&f.id);
        }
        written
    }

    fn flow_record<E>(
        &mut self,
        f: &Flow<E>,
        now: Timestamp,
        protos: FlowProtos,
        tcp: Option<&SessionSummary>,
        fate: FlowFate<'_>,
    ) -> Result<(), EngineError> {
        let FlowProtos { app, orig, sides } = protos;
        if !self.wants_flows() {
            return Ok(());
        }
        let mut fields = flow_fields(f);
        fields.action = fate.action;
        fields.tx_cnt = fate.tx_cnt;
        if fate.bypassed {
            fields.state = "bypassed";
        }
        fields.app_proto = (app != AppProto::Unknown).then_some(app.name());
        fields.app_proto_orig = orig.filter(|&o| o != app && o != AppProto::Unknown).map(AppProto::name);
        fields.app_proto_ts = sides.to_server.map(AppProto::name);
        fields.app_proto_tc = sides.to_client.map(AppProto::name);
        fields.tcp_session = tcp.map(|t| FlowTcpSession {
            state: t.state.name(),
            gap: (t.gap.to_server, t.gap.to_client),
            max_regions: (t.max_regions.to_server, t.max_regions.to_client),
        });
        // Built for each output's options (`exception-policy`, `community-id`);
        // outputs with the same options share one record.
        let macs = f.macs.as_deref().map(|m| (&m.src[..], &m.dst[..]));
        // (exception policies, community id seed, ethernet): what a record depends on.
        type FlowOpts = (bool, Option<u16>, bool);
        let mut built: Option<(FlowOpts, Value)> = None;
        for sink in self.sinks.iter_mut().filter(|s| s.flow) {
            let opts = (sink.flow_exception_policy, sink.envelope.community_id, sink.envelope.ethernet);
            if built.as_ref().is_none_or(|(o, _)| *o != opts) {
                fields.exception_policy = if opts.0 { fate.exception_policy } else { &[] };
                fields.community_id = opts.1;
                fields.macs = if opts.2 { macs } else { None };
                let mut rec = flow_record(&fields, now);
                with_flow_notes(&self.notes, &mut rec, f.id);
                vigil_output::insert_traffic(&mut rec, &fate.traffic.ids, &fate.traffic.labels);
                built = Some((opts, rec));
            }
            if let Some((_, rec)) = &built {
                write(&mut sink.writer, rec)?;
            }
        }
        for sink in self.sinks.iter_mut().filter(|s| s.netflow) {
            fields.macs = if sink.envelope.ethernet { macs } else { None };
            for mut rec in vigil_output::netflow_records(&fields, (f.ttl.to_server, f.ttl.to_client)) {
                with_flow_notes(&self.notes, &mut rec, f.id);
                vigil_output::insert_traffic(&mut rec, &fate.traffic.ids, &fate.traffic.labels);
                write(&mut sink.writer, &rec)?;
            }
        }
        Ok(())
    }

    /// Writes a stats record to every output that logs stats; `make` builds
    /// it for the output's `null-values`, `totals` and `threads` settings.
    pub(crate) fn stats(&mut self, make: impl Fn(bool, bool, bool) -> Value) -> Result<(), EngineError> {
        for sink in self.sinks.iter_mut().filter(|s| s.stats) {
            let (totals, threads) = sink.stats_parts;
            let rec = make(sink.null_values, totals, threads);
            write(&mut sink.writer, &rec)?;
        }
        Ok(())
    }

    /// A block in every text stats log, dated by the wall clock.
    pub(crate) fn stats_text(
        &mut self,
        totals: &[(String, u64)],
        threads: &[(String, Vec<(String, u64)>)],
        uptime: u64,
    ) -> Result<(), EngineError> {
        if self.stats_logs.is_empty() {
            return Ok(());
        }
        let d = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        let now = vigil_types::Timestamp::from_secs_nanos(d.as_secs() as i64, d.subsec_nanos());
        for log in &mut self.stats_logs {
            log.write(now, uptime, totals, threads).map_err(|error| output_error(log.path(), error))?;
        }
        Ok(())
    }

    pub(crate) fn finish(&mut self) -> Result<u64, EngineError> {
        self.lua.finish();
        let mut records = 0;
        for sink in &mut self.sinks {
            sink.writer
                .flush()
                .map_err(|error| EngineError::Output { path: sink.writer.path().display().to_string(), error })?;
            records += sink.writer.records();
        }
        for w in &mut self.fast {
            w.flush().map_err(|error| EngineError::Output { path: w.path().display().to_string(), error })?;
        }
        for w in &mut self.alert_debug {
            w.writer_mut().flush().map_err(|error| output_error(w.path(), error))?;
        }
        for log in self.tcp_data.iter_mut().chain(self.http_bodies.iter_mut()) {
            let path = log.path();
            if let Some(w) = log.writer_mut() {
                w.flush().map_err(|error| output_error(&path, error))?;
            }
        }
        self.flush_pcap_logs()?;
        Ok(records)
    }
}

/// What an alert record says about the signature.
fn alert_info(sig: &Signature, blocked: bool) -> AlertInfo<'_> {
    AlertInfo {
        action: if blocked { "blocked" } else { "allowed" },
        gid: sig.gid,
        sid: sig.sid,
        rev: sig.rev,
        msg: &sig.msg,
        category: &sig.category,
        severity: sig.severity,
        metadata: &sig.metadata,
        references: &sig.reference_urls,
        stream_payload: None,
        verdict: vigil_output::Verdict::Alert,
    }
}

fn output_error(path: &Path, error: std::io::Error) -> EngineError {
    EngineError::Output { path: path.display().to_string(), error }
}

/// What `sink` asks of the objects beside a transaction's records.
fn sibling_opts(sink: &EveSink) -> vigil_applayer::proto::SiblingOptions<'_> {
    vigil_applayer::proto::SiblingOptions { custom: sink.smtp_custom.as_deref(), md5: &sink.smtp_md5 }
}

/// Puts the objects a transaction's records carry beside its own (SMTP's
/// `email`) right after it.
fn with_siblings(
    m: &mut serde_json::Map<String, Value>,
    key: &str,
    tx: TxRef<'_>,
    opts: vigil_applayer::proto::SiblingOptions<'_>,
) {
    let siblings = tx.tx.eve_siblings(opts);
    if siblings.is_empty() {
        return;
    }
    let at = m.keys().position(|k| k == key).map_or(m.len(), |i| i + 1);
    for (i, (name, value)) in siblings.into_iter().enumerate() {
        m.shift_insert(at + i, name.into(), value);
    }
}

impl Outputs {
    /// Writes the certificate chains a `tls.store` match asked for that
    /// the flow has now and that were not stored yet (the server's, then
    /// the client's), at packet `p`.
    pub(crate) fn store_tls_certs(
        &mut self,
        app: &mut crate::app::FlowApp,
        p: &Packet<'_>,
        flow: &tls_store::StoreFlow,
    ) -> Result<(), EngineError> {
        let Some(store) = &self.tls_store else { return Ok(()) };
        let Some(t) = app.layer.txs().find(|t| t.tx.as_any().is::<vigil_applayer::tls::TlsTx>()) else {
            return Ok(());
        };
        let Some(tx) = t.tx.as_any().downcast_ref::<vigil_applayer::tls::TlsTx>() else { return Ok(()) };
        for (i, client) in [false, true].into_iter().enumerate() {
            let chain = if client { tx.client_certs() } else { tx.server_certs() };
            // A side's chain is stored once detection saw that side, as
            // Suricata's logger writes it after inspecting its direction.
            let side = if client { Direction::ToServer } else { Direction::ToClient };
            if app.tls_stored[i] || chain.certs.is_empty() || !app.side_seen(t, side) {
                continue;
            }
            app.tls_stored[i] = true;
            store
                .store(chain, client, p, flow)
                .map_err(|error| EngineError::Output { path: "tls-store".into(), error })?;
        }
        Ok(())
    }
}

pub(crate) use tls_store::StoreFlow;

/// A signature's packet variables (`metadata.pktvars`, beside the flow's
/// variables) and alert variables (`alert.context`) in its alert.
fn with_captures(rec: &mut Value, captured: &[(vigil_detect::inspect::VarKind, std::sync::Arc<str>, Vec<u8>)]) {
    use vigil_detect::inspect::VarKind;
    let Value::Object(m) = rec else { return };
    let text = |v: &[u8]| Value::from(String::from_utf8_lossy(v).into_owned());
    let pkt: Vec<Value> = captured
        .iter()
        .filter(|c| c.0 == VarKind::Pkt)
        // An empty capture is an empty object, as Suricata writes it.
        .map(|(_, n, v)| if v.is_empty() { serde_json::json!({}) } else { serde_json::json!({ n.as_ref(): text(v) }) })
        .collect();
    if !pkt.is_empty() {
        if !m.contains_key("metadata") {
            let after = m.keys().position(|k| k == "pkt_src").map_or(m.len(), |i| i + 1);
            m.shift_insert(after, "metadata".into(), Value::Object(serde_json::Map::new()));
        }
        if let Some(Value::Object(meta)) = m.get_mut("metadata") {
            meta.insert("pktvars".into(), pkt.into());
        }
    }
    let context: serde_json::Map<String, Value> =
        captured.iter().filter(|c| c.0 == VarKind::Alert).map(|(_, n, v)| (n.to_string(), text(v))).collect();
    if let (false, Some(Value::Object(a))) = (context.is_empty(), m.get_mut("alert")) {
        a.insert("context".into(), context.into());
    }
}

/// Adds `parent_id` to a record of flow `flow_id` when another flow
/// announced it, and `metadata` when the flow holds variables (after
/// `pkt_src`, or a flow record's `flow`, where Suricata puts it).
fn with_flow_notes(notes: &FlowNotes, rec: &mut Value, flow_id: u64) {
    if let Some(&(_, parent)) = notes.parents.iter().find(|(id, _)| *id == flow_id) {
        vigil_output::insert_parent_id(rec, parent);
    }
    if let (Some(vars), Value::Object(m)) = (notes.vars.get(&flow_id), rec) {
        let after = m.keys().position(|k| k == "pkt_src").or_else(|| m.keys().position(|k| k == "flow"));
        m.shift_insert(after.map_or(m.len(), |i| i + 1), "metadata".into(), vars.clone());
    }
}

fn write(w: &mut EveWriter, rec: &Value) -> Result<(), EngineError> {
    w.write(rec).map_err(|error| EngineError::Output { path: w.path().display().to_string(), error })
}

/// What an alert record says besides the packet and the signature.
pub(crate) struct AlertAt<'a> {
    /// The packet's flow, as the record describes it.
    pub flow: Option<&'a FlowAtAlert>,
    /// The signature's action dropped the packet (IPS).
    pub blocked: bool,
    /// The flow direction the alert is written in (to server: true).
    pub flow_dir: Option<bool>,
    pub app: Option<AlertApp<'a>>,
    /// The stream bytes logged as payload for a match on the stream.
    pub stream_payload: Option<&'a [u8]>,
    /// What became of the packet, all its matches considered.
    pub verdict: vigil_output::Verdict,
    /// The flow's traffic tags.
    pub traffic: &'a vigil_detect::Traffic<'a>,
    /// A firewall rule's alert: where it is hooked and what it does.
    pub firewall: Option<FwAlert<'a>>,
    /// Firewall mode: a threat detection rule's alert says so (`alert.engine: td`).
    pub td_engine: bool,
    /// What the signature's `pcre` captured into packet variables
    /// (`metadata.pktvars`) and alert ones (`alert.context`).
    pub captured: &'a [(vigil_detect::inspect::VarKind, std::sync::Arc<str>, Vec<u8>)],
    /// The frame a `frame:` signature matched.
    pub frame: Option<&'a vigil_applayer::Frame>,
}

/// What an alert of a firewall rule adds (EVE `firewall`, `alert.engine`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct FwAlert<'a> {
    /// `packet:filter`, `ssh:request_banner_done`, ...
    pub table: &'a str,
    /// `accept:hook,alert`, ...
    pub policy: &'a str,
    /// The transaction's state on each side (`ts_progress`, `tc_progress`).
    pub progress: Option<(&'a str, &'a str)>,
}

/// A frame as its records show it.
fn frame_view(f: &vigil_applayer::Frame) -> vigil_output::FrameView<'_> {
    vigil_output::FrameView {
        kind: f.type_name(),
        id: f.id,
        to_server: f.dir == Direction::ToServer,
        offset: f.offset,
        len: f.len.unwrap_or(f.data.len() as u64),
        complete: f.complete,
        tx_id: f.tx_shown(),
        data: &f.data,
    }
}

/// What a flow spoke, for its record.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FlowProtos {
    pub app: AppProto,
    /// What it spoke before it changed (HTTP before a CONNECT tunnel).
    pub orig: Option<AppProto>,
    /// What each direction was found to speak, where that differs (`app_proto_ts`/`_tc`).
    pub sides: PerDir<Option<AppProto>>,
}

/// What the IPS and the exception policies did to a flow, for its record.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FlowFate<'a> {
    /// `drop` or `pass` when the whole flow was.
    pub action: Option<&'a str>,
    /// (target, policy) of each exception policy the flow met.
    pub exception_policy: &'a [(&'a str, &'a str)],
    /// An exception policy bypassed the flow.
    pub bypassed: bool,
    /// Application-layer transactions the flow had.
    pub tx_cnt: u64,
    /// The flow's traffic tags.
    pub traffic: &'a vigil_detect::Traffic<'a>,
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
        app_proto_ts: None,
        app_proto_tc: None,
        app_proto_orig: None,
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
        tcp_session: None,
        action: None,
        exception_policy: &[],
        community_id: None,
        tx_cnt: 0,
        macs: None,
    }
}

/// The client address an HTTP request's forwarding header names: its first
/// entry (`forward`) or last (`reverse`), when it is an IP address.
fn xff_address(h: &HttpTx, xff: &vigil_config::EveXff) -> Option<String> {
    let v = h.request_header(&xff.header)?;
    let text = std::str::from_utf8(v).ok()?;
    let mut parts = text.split(',').map(str::trim).filter(|p| !p.is_empty());
    let pick = if xff.reverse { parts.next_back() } else { parts.next() }?;
    pick.parse::<std::net::IpAddr>().ok().map(|ip| ip.to_string())
}
