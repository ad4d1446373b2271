//! `outputs: - eve-log:` — the EVE JSON output and its event types.
//!
//! Defaults are Suricata's built-in ones, used when a key is absent; the
//! stock file sets a few differently (e.g. `alert.tagged-packets: yes`), and
//! [`EveLog::stock`] is what it yields. As in Suricata, an `eve-log` output
//! is off unless `enabled` is true, while each entry of `types` is on unless
//! it says `enabled: no`. Options of disabled outputs and types are not
//! read (Suricata never looks at them), so they cannot produce errors.

use crate::read::{Errors, Section};

/// One `eve-log` output (Suricata allows several).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EveLog {
    /// `enabled`: outputs are off unless this is true.
    pub enabled: bool,
    /// `filetype` (older name `type`): `regular` (alias `file`),
    /// `unix_dgram`, `unix_stream`, `syslog` or `redis`, with their options.
    pub filetype: EveFiletype,
    /// `filename`, relative to the log directory unless absolute: the file,
    /// or the socket of `unix_dgram`/`unix_stream`. Default `eve.json`.
    pub filename: String,
    /// `prefix`: written before each record (`@cee: ` for rsyslog).
    pub prefix: Option<String>,
    /// `threaded`: one file per thread. Default false.
    pub threaded: bool,
    /// `buffer-size`: bytes of records gathered before they are written.
    /// `None` when absent (vigil gathers 64 KiB, bounded in time by
    /// `heartbeat.output-flush-interval`); `Some(0)`: every record is
    /// written as it is made, as Suricata's default is.
    pub buffer_size: Option<u64>,
    /// `community-id`: add `community_id` to records. Default false.
    pub community_id: bool,
    /// `community-id-seed` (0-65535). Default 0.
    pub community_id_seed: u16,
    /// `pcap-file`: add the name of the pcap being read. Default false.
    pub pcap_file: bool,
    /// `ethernet`: log ethernet addresses. Default false.
    pub ethernet: bool,
    /// `types`: which records are written and their options.
    pub types: EveTypes,
}

/// `eve-log.filetype`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum EveFiletype {
    /// `regular` (or `file`): a plain file.
    #[default]
    Regular,
    /// `unix_dgram`: a datagram per record to the socket `filename` names.
    UnixDgram,
    /// `unix_stream`: lines on a connection to the socket `filename` names.
    UnixStream,
    /// `syslog`: `identity`, `facility`, `level`.
    Syslog(EveSyslog),
    /// `redis`: the `redis` map.
    Redis(EveRedis),
    /// `kafka` (vigil's own; Suricata has no Kafka output): the `kafka` map.
    Kafka(EveKafka),
}

/// `eve-log` with `filetype: kafka` (vigil's own).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EveKafka {
    /// `brokers`: librdkafka's `bootstrap.servers`. Default `127.0.0.1:9092`.
    pub brokers: String,
    /// `topic`. Default `suricata`.
    pub topic: String,
    /// `client-id`. Default `vigil`.
    pub client_id: String,
    /// `options`: librdkafka properties as given (`compression.type: lz4`,
    /// `message.timeout.ms: 30000`, ...), which librdkafka checks.
    pub options: Vec<(String, String)>,
}

impl EveKafka {
    fn read(sec: &Section<'_>, e: &mut Errors) -> EveKafka {
        // librdkafka's dotted names (`compression.type`) read as nested keys.
        fn flatten(sec: &Section<'_>, prefix: &str, e: &mut Errors, out: &mut Vec<(String, String)>) {
            for c in sec.children() {
                let key = if prefix.is_empty() { c.name().to_string() } else { format!("{prefix}.{}", c.name()) };
                if c.has_children() {
                    flatten(&c, &key, e, out);
                } else if let Some((v, _)) = c.own_scalar(e) {
                    out.push((key, v.to_string()));
                }
            }
        }
        let mut options = Vec::new();
        flatten(&sec.child("options"), "", e, &mut options);
        EveKafka {
            brokers: sec.string("brokers", e).unwrap_or_else(|| "127.0.0.1:9092".into()),
            topic: sec.string("topic", e).unwrap_or_else(|| "suricata".into()),
            client_id: sec.string("client-id", e).unwrap_or_else(|| "vigil".into()),
            options,
        }
    }
}

/// `eve-log` with `filetype: syslog`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EveSyslog {
    /// `identity`. Default `suricata` (what syslog rules written for
    /// Suricata expect).
    pub identity: String,
    /// `facility` as its number (`local5`, 21, by default).
    pub facility: u8,
    /// `level` as its number (`Info`, 6, by default).
    pub level: u8,
    /// `syslog-socket` (vigil's own key): where syslog listens. Default `/dev/log`.
    pub socket: String,
}

/// `eve-log.redis`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EveRedis {
    /// `server`. Default `127.0.0.1`.
    pub server: String,
    /// `port`. Default 6379.
    pub port: u16,
    /// `mode`: `list`/`lpush` (default), `rpush`, `channel`/`publish`, `stream`/`xadd`.
    pub mode: RedisMode,
    /// `key`: the list, channel or stream. Default `suricata`.
    pub key: String,
    /// `pipelining.batch-size` when `pipelining.enabled`; 1 otherwise.
    pub batch_size: usize,
    /// `stream-maxlen`. Default 100000; 0: no trimming.
    pub stream_maxlen: u64,
    /// `stream-trim-exact`. Default false.
    pub stream_trim_exact: bool,
}

/// `eve-log.redis.mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedisMode {
    Lpush,
    Rpush,
    Publish,
    Xadd,
}

/// syslog facilities by name, as syslog.h numbers them.
const FACILITIES: &[(&str, u8)] = &[
    ("kern", 0),
    ("user", 1),
    ("mail", 2),
    ("daemon", 3),
    ("auth", 4),
    ("syslog", 5),
    ("lpr", 6),
    ("news", 7),
    ("uucp", 8),
    ("cron", 9),
    ("authpriv", 10),
    ("ftp", 11),
    ("local0", 16),
    ("local1", 17),
    ("local2", 18),
    ("local3", 19),
    ("local4", 20),
    ("local5", 21),
    ("local6", 22),
    ("local7", 23),
];

/// syslog levels by Suricata's names.
const LEVELS: &[(&str, u8)] = &[
    ("emergency", 0),
    ("alert", 1),
    ("critical", 2),
    ("error", 3),
    ("warning", 4),
    ("notice", 5),
    ("info", 6),
    ("debug", 7),
];

impl EveSyslog {
    fn read(sec: &Section<'_>, e: &mut Errors) -> EveSyslog {
        let named = |table: &'static [(&str, u8)], what: &'static str| {
            move |s: &str| {
                let lower = s.to_ascii_lowercase();
                table.iter().find(|(n, _)| *n == lower).map(|(_, v)| *v).ok_or_else(|| {
                    let names: Vec<&str> = table.iter().map(|(n, _)| *n).collect();
                    format!("unknown {what} {s:?} (expected one of {})", names.join(", "))
                })
            }
        };
        EveSyslog {
            identity: sec.string("identity", e).unwrap_or_else(|| "suricata".into()),
            facility: sec.convert("facility", e, named(FACILITIES, "facility")).unwrap_or(21),
            level: sec.convert("level", e, named(LEVELS, "level")).unwrap_or(6),
            socket: sec.string("syslog-socket", e).unwrap_or_else(|| "/dev/log".into()),
        }
    }
}

impl EveRedis {
    fn read(sec: &Section<'_>, e: &mut Errors) -> EveRedis {
        let pipe = sec.child("pipelining");
        let batch_size = if pipe.bool("enabled", false, e) {
            pipe.int_in("batch-size", 1, 1_000_000, e).map_or(10, |v| v as usize)
        } else {
            1
        };
        EveRedis {
            server: sec.string("server", e).unwrap_or_else(|| "127.0.0.1".into()),
            port: sec.int_in("port", 1, 65535, e).map_or(6379, |v| v as u16),
            mode: sec
                .convert("mode", e, |s| match s {
                    "list" | "lpush" => Ok(RedisMode::Lpush),
                    "rpush" => Ok(RedisMode::Rpush),
                    "channel" | "publish" => Ok(RedisMode::Publish),
                    "stream" | "xadd" => Ok(RedisMode::Xadd),
                    _ => Err(format!(
                        "unknown mode {s:?} (expected list, lpush, rpush, channel, publish, stream or xadd)"
                    )),
                })
                .unwrap_or(RedisMode::Lpush),
            key: sec.string("key", e).unwrap_or_else(|| "suricata".into()),
            batch_size,
            stream_maxlen: sec.int_in("stream-maxlen", 0, i64::MAX, e).map_or(100_000, |v| v as u64),
            stream_trim_exact: sec.bool("stream-trim-exact", false, e),
        }
    }
}

/// `eve-log.types`: the record types listed, each with its `enabled` flag.
///
/// A type not listed is `None` (not logged). A listed type without options
/// (`- flow`, `- dns:`) is enabled with Suricata's defaults.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct EveTypes {
    /// `- alert`.
    pub alert: Option<EveAlert>,
    /// `- anomaly`.
    pub anomaly: Option<EveAnomaly>,
    /// `- stats`.
    pub stats: Option<EveStats>,
    /// `- flow`.
    pub flow: Option<EveFlow>,
    /// `- drop`: packets an IPS dropped.
    pub drop: Option<EveDrop>,
    /// Other listed types that are enabled (`http`, `dns`, `tls`, `files`,
    /// ...), in list order; `ikev2` is read as `ike`, as Suricata does.
    pub other: Vec<String>,
    /// `- dns: version:` (2 or 3); `None` when not given (Suricata 8 writes 3).
    pub dns_version: Option<u8>,
    /// `- http: dump-all-headers:` as (request, response).
    pub http_dump_headers: (bool, bool),
    /// `- files: force-hash:`: hashes every `fileinfo` record carries.
    pub files_force_hash: Vec<String>,
    /// `- files: force-magic:`: every file's type looked up and logged.
    pub files_force_magic: bool,
    /// `- smtp: custom:`: the message header fields the `email` object adds
    /// (`subject`, `date`, ...); `None` when not given.
    pub smtp_custom: Option<Vec<String>>,
    /// `- smtp: md5: [body, subject]`: the digests the `email` object adds.
    pub smtp_md5: Vec<String>,
    /// `- frame: payload-buffer-size:`: bytes of a frame written as its
    /// payload; `None` when not given (4 KiB).
    pub frame_payload: Option<u64>,
    /// `passwords`, `string-log-limit` and `extended` of the listed types
    /// that give any (`- mqtt: string-log-limit: 1kb`), by type name.
    pub record_options: Vec<(String, EveRecordOptions)>,
}

/// Options some record types take: credentials left out (`passwords:
/// no`), strings cut (`string-log-limit`), the long form (`extended`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EveRecordOptions {
    /// `passwords`; `None` when not given (each protocol has its default).
    pub passwords: Option<bool>,
    /// `string-log-limit` in bytes; `None` when not given.
    pub string_log_limit: Option<u64>,
    /// `extended`. Default false.
    pub extended: bool,
    /// `types`: the kinds of transaction logged (SMB's `[create, file]`); `None`: all.
    pub types: Option<Vec<String>>,
    /// `custom`: TLS's fields logged in place of the usual set, HTTP's header
    /// fields logged beside it; `None`: the usual set.
    pub custom: Option<Vec<String>>,
}

/// `types: - alert:` options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EveAlert {
    /// `enabled`. Default true.
    pub enabled: bool,
    /// `payload`: base64 payload. Default false.
    pub payload: bool,
    /// `payload-printable`. Default false.
    pub payload_printable: bool,
    /// `payload-length`. Default false.
    pub payload_length: bool,
    /// `payload-buffer-size` in bytes (size units, not 0). Default 4096.
    pub payload_buffer_size: u32,
    /// `packet`: base64 packet. Default false.
    pub packet: bool,
    /// `tagged-packets`: log packets tagged by the `tag` keyword.
    /// Default false (the stock file says yes).
    pub tagged_packets: bool,
    /// `verdict`: the final verdict. Default false.
    pub verdict: bool,
    /// `http-body`: base64 HTTP body (needs `metadata.app-layer`).
    pub http_body: bool,
    /// `http-body-printable` (needs `metadata.app-layer`).
    pub http_body_printable: bool,
    /// `websocket-payload` (needs `metadata.app-layer`).
    pub websocket_payload: bool,
    /// `websocket-payload-printable` (needs `metadata.app-layer`).
    pub websocket_payload_printable: bool,
    /// `metadata`: what is added from the flow and the rule.
    pub metadata: EveAlertMetadata,
    /// `xff`, when enabled: the client address a proxy put in an HTTP header.
    pub xff: Option<EveXff>,
}

/// `alert.xff`: where the original client's address is taken from and what is done with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EveXff {
    /// `mode: overwrite` replaces the client's address in the record;
    /// `extra-data` (default) adds `alert.xff`.
    pub overwrite: bool,
    /// `deployment: reverse` takes the header's last address (the proxy in
    /// front of the servers added it); `forward` (default) the first.
    pub reverse: bool,
    /// `header`. Default `X-Forwarded-For`.
    pub header: String,
}

/// `alert.metadata`: `no` turns off app-layer, flow and rule metadata
/// together; a map sets each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EveAlertMetadata {
    /// `metadata.app-layer`. Default true.
    pub app_layer: bool,
    /// `metadata.flow`. Default true.
    pub flow: bool,
    /// `metadata.rule.metadata`: the rule's `metadata` keyword. Default true.
    pub rule_metadata: bool,
    /// `metadata.rule.raw`: the rule text. Default false.
    pub rule_raw: bool,
    /// `metadata.rule.reference`: the rule's references. Default false.
    pub rule_reference: bool,
}

/// `types: - anomaly:` options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EveAnomaly {
    /// `enabled`. Default true.
    pub enabled: bool,
    /// `types.decode`: decoder events. Default false.
    pub decode: bool,
    /// `types.stream`: stream events. Default false.
    pub stream: bool,
    /// `types.applayer`: app-layer events. Default true.
    pub applayer: bool,
    /// `packethdr`: add the packet header to decode anomalies. Default false.
    /// Suricata ignores it (with a warning) unless `decode` is on; see
    /// [`EveAnomaly::logs_packethdr`].
    pub packethdr: bool,
}

/// `types: - stats:` options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EveStats {
    /// `enabled`. Default true; forced off (with an error) when both
    /// `totals` and `threads` are off or global `stats.enabled` is off, as
    /// Suricata refuses to set this logger up then.
    pub enabled: bool,
    /// `totals`: counters merged over threads. Default true.
    pub totals: bool,
    /// `threads`: per-thread counters. Default false.
    pub threads: bool,
    /// `deltas`: add the change since the last record. Default false.
    pub deltas: bool,
    /// `null-values`: also log counters that are zero. Default true.
    pub null_values: bool,
}

/// `types: - flow`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EveFlow {
    /// `enabled`. Default true.
    pub enabled: bool,
    /// `exception-policy`: list the exception policies the flow met. Default
    /// true (Suricata 8 lists them unless told not to).
    pub exception_policy: bool,
}

/// `types: - drop:` options (written only in IPS mode).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EveDrop {
    /// `enabled`. Default true.
    pub enabled: bool,
    /// `alerts`: add the alert of the signature that dropped the packet. Default false.
    pub alerts: bool,
    /// `flows`: which packets of a dropped flow are logged. Default `start`.
    pub flows: DropFlows,
    /// `verdict`: the engine's final verdict. Default false.
    pub verdict: bool,
}

/// `drop.flows`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DropFlows {
    /// `start`: the first dropped packet of each direction of a dropped flow
    /// (a packet a signature dropped is logged anyway).
    #[default]
    Start,
    /// `all`: every dropped packet.
    All,
}

impl Default for EveDrop {
    fn default() -> Self {
        EveDrop { enabled: true, alerts: false, flows: DropFlows::Start, verdict: false }
    }
}

impl EveDrop {
    fn read(sec: &Section<'_>, enabled: bool, e: &mut Errors) -> EveDrop {
        let d = EveDrop::default();
        let flows = sec
            .convert("flows", e, |s| match s {
                "start" => Ok(DropFlows::Start),
                "all" => Ok(DropFlows::All),
                other => Err(format!("expected start or all, got '{other}'")),
            })
            .unwrap_or(d.flows);
        EveDrop { enabled, alerts: sec.bool("alerts", d.alerts, e), flows, verdict: sec.bool("verdict", d.verdict, e) }
    }
}

impl Default for EveAlertMetadata {
    fn default() -> Self {
        EveAlertMetadata { app_layer: true, flow: true, rule_metadata: true, rule_raw: false, rule_reference: false }
    }
}

impl EveXff {
    fn read(sec: &Section<'_>, e: &mut Errors) -> Option<EveXff> {
        if !sec.bool("enabled", false, e) {
            return None;
        }
        let overwrite = match sec.string("mode", e).as_deref() {
            None | Some("extra-data") => false,
            Some("overwrite") => true,
            Some(other) => {
                sec.error("mode", e, format!("expected extra-data or overwrite, got '{other}'"));
                false
            }
        };
        let reverse = match sec.string("deployment", e).as_deref() {
            None | Some("forward") => false,
            Some("reverse") => true,
            Some(other) => {
                sec.error("deployment", e, format!("expected forward or reverse, got '{other}'"));
                false
            }
        };
        let header = sec.string("header", e).unwrap_or_else(|| "X-Forwarded-For".into());
        Some(EveXff { overwrite, reverse, header })
    }
}

impl Default for EveAlert {
    fn default() -> Self {
        EveAlert {
            enabled: true,
            payload: false,
            payload_printable: false,
            payload_length: false,
            payload_buffer_size: 4096,
            packet: false,
            tagged_packets: false,
            verdict: false,
            http_body: false,
            http_body_printable: false,
            websocket_payload: false,
            websocket_payload_printable: false,
            metadata: EveAlertMetadata::default(),
            xff: None,
        }
    }
}

impl Default for EveAnomaly {
    fn default() -> Self {
        EveAnomaly { enabled: true, decode: false, stream: false, applayer: true, packethdr: false }
    }
}

impl Default for EveStats {
    fn default() -> Self {
        EveStats { enabled: true, totals: true, threads: false, deltas: false, null_values: true }
    }
}

impl Default for EveFlow {
    fn default() -> Self {
        EveFlow { enabled: true, exception_policy: true }
    }
}

impl Default for EveLog {
    /// Suricata's defaults for an `eve-log` entry with no keys (disabled).
    fn default() -> Self {
        EveLog {
            enabled: false,
            filetype: EveFiletype::Regular,
            filename: "eve.json".to_string(),
            prefix: None,
            threaded: false,
            buffer_size: None,
            community_id: false,
            community_id_seed: 0,
            pcap_file: false,
            ethernet: false,
            types: EveTypes::default(),
        }
    }
}

/// EVE record types Suricata has an output module for beyond the stock
/// list below (and `alert`, `anomaly`, `stats`, `flow`, `drop`, read
/// apart): 8.0's others, and `ntp` and `stream` of the versions the
/// conformance suite also covers.
const MORE_SURICATA_EVE_TYPES: &[&str] =
    &["arp", "pgsql", "frame", "netflow", "metadata", "dnp3", "modbus", "enip", "template", "ntp", "stream"];

/// Whether Suricata has an output module for EVE type `name`.
fn suricata_eve_type(name: &str) -> bool {
    STOCK_OTHER_TYPES.contains(&name) || MORE_SURICATA_EVE_TYPES.contains(&name)
}

/// Enabled types of the stock file besides alert/anomaly/stats/flow
/// (`frame`, `arp` and `pgsql` are listed there but `enabled: no`).
const STOCK_OTHER_TYPES: [&str; 27] = [
    "http",
    "dns",
    "mdns",
    "tls",
    "files",
    "smtp",
    "websocket",
    "ftp",
    "rdp",
    "nfs",
    "smb",
    "tftp",
    "ike",
    "dcerpc",
    "krb5",
    "bittorrent-dht",
    "snmp",
    "rfb",
    "sip",
    "quic",
    "ldap",
    "pop3",
    "dhcp",
    "ssh",
    "mqtt",
    "http2",
    "doh2",
];

impl EveLog {
    /// The `eve-log` entry of the stock `suricata.yaml`.
    pub fn stock() -> Self {
        let other = STOCK_OTHER_TYPES.iter().map(|s| s.to_string()).collect();
        EveLog {
            enabled: true,
            types: EveTypes {
                alert: Some(EveAlert { tagged_packets: true, ..EveAlert::default() }),
                anomaly: Some(EveAnomaly::default()),
                stats: Some(EveStats::default()),
                flow: Some(EveFlow::default()),
                drop: None,
                other,
                dns_version: None,
                http_dump_headers: (false, false),
                smtp_custom: None,
                smtp_md5: Vec::new(),
                frame_payload: None,
                record_options: [("http", true), ("tls", true), ("dhcp", false)]
                    .into_iter()
                    .map(|(name, extended)| {
                        (
                            name.to_string(),
                            EveRecordOptions {
                                passwords: None,
                                string_log_limit: None,
                                extended,
                                types: None,
                                custom: None,
                            },
                        )
                    })
                    .collect(),
                files_force_hash: Vec::new(),
                files_force_magic: false,
            },
            ..EveLog::default()
        }
    }

    /// Whether records of type `name` are written (`"alert"`, `"http"`, ...).
    pub fn logs(&self, name: &str) -> bool {
        let t = &self.types;
        match name {
            "alert" => t.alert.as_ref().is_some_and(|a| a.enabled),
            "anomaly" => t.anomaly.as_ref().is_some_and(|a| a.enabled),
            "stats" => t.stats.as_ref().is_some_and(|s| s.enabled),
            "flow" => t.flow.as_ref().is_some_and(|f| f.enabled),
            "drop" => t.drop.as_ref().is_some_and(|d| d.enabled),
            // Suricata's `ftp` type logs the data channels too.
            "ftp-data" => t.other.iter().any(|o| o == "ftp"),
            other => t.other.iter().any(|o| o == other),
        }
    }

    /// Read one `eve-log` map (`sec` is `outputs.N.eve-log`). `stats_on` is
    /// global `stats.enabled`, which the stats type depends on.
    pub(crate) fn read(sec: &Section<'_>, stats_on: bool, errs: &mut Errors) -> EveLog {
        let d = EveLog::default();
        let mut local = Errors::new();
        let e = &mut local;
        let enabled = sec.bool("enabled", false, e);
        let filetype_key = if sec.child("filetype").node.is_some() { "filetype" } else { "type" };
        let filetype = sec
            .convert(filetype_key, e, |s| match s {
                "regular" | "file" | "unix_dgram" | "unix_stream" | "syslog" | "redis" | "kafka" => Ok(s.to_string()),
                _ => Err(format!(
                    "unknown filetype {s:?} (expected regular, syslog, unix_dgram, unix_stream, redis or kafka)"
                )),
            })
            .map_or(d.filetype.clone(), |name| match name.as_str() {
                "unix_dgram" => EveFiletype::UnixDgram,
                "unix_stream" => EveFiletype::UnixStream,
                "syslog" => EveFiletype::Syslog(EveSyslog::read(sec, e)),
                "redis" => EveFiletype::Redis(EveRedis::read(&sec.child("redis"), e)),
                "kafka" => EveFiletype::Kafka(EveKafka::read(&sec.child("kafka"), e)),
                _ => EveFiletype::Regular,
            });
        let log = EveLog {
            enabled,
            filetype,
            filename: sec.string("filename", e).unwrap_or(d.filename),
            prefix: sec.string("prefix", e),
            threaded: sec.bool("threaded", d.threaded, e),
            buffer_size: sec.size_max("buffer-size", u32::MAX.into(), e),
            community_id: sec.bool("community-id", d.community_id, e),
            community_id_seed: sec.int_in("community-id-seed", 0, 65535, e).map_or(d.community_id_seed, |v| v as u16),
            pcap_file: sec.bool("pcap-file", d.pcap_file, e),
            ethernet: sec.bool("ethernet", d.ethernet, e),
            types: EveTypes::read(&sec.child("types"), stats_on, e),
        };
        if log.enabled {
            errs.extend(local);
        }
        log
    }
}

impl EveTypes {
    fn read(sec: &Section<'_>, stats_on: bool, errs: &mut Errors) -> EveTypes {
        let mut t = EveTypes::default();
        for item in sec.children() {
            let Some(node) = item.node else { continue };
            // `- flow` has its name as value; `- alert: {...}` too, plus a map.
            let Some(name) = node.value() else {
                if !node.children().is_empty() {
                    item.error("", errs, "expected an event type name");
                }
                continue;
            };
            // A bare `- stats` has no map; errors about it point at the item.
            let opts = match item.child(name) {
                s if s.node.is_some() => s,
                s => item.with_node(item.node, s.path),
            };
            let name = if name == "ikev2" { "ike" } else { name };
            let mut local = Errors::new();
            let enabled = opts.bool("enabled", true, &mut local);
            match name {
                "alert" if t.alert.is_none() => t.alert = Some(EveAlert::read(&opts, enabled, &mut local)),
                "anomaly" if t.anomaly.is_none() => t.anomaly = Some(EveAnomaly::read(&opts, enabled, &mut local)),
                "stats" if t.stats.is_none() => t.stats = Some(EveStats::read(&opts, enabled, stats_on, &mut local)),
                "flow" if t.flow.is_none() => {
                    t.flow =
                        Some(EveFlow { enabled, exception_policy: opts.bool("exception-policy", true, &mut local) })
                }
                "drop" if t.drop.is_none() => t.drop = Some(EveDrop::read(&opts, enabled, &mut local)),
                "http" if enabled => {
                    t.http_dump_headers = match opts.string("dump-all-headers", &mut local).as_deref() {
                        Some("both") => (true, true),
                        Some("request") => (true, false),
                        Some("response") => (false, true),
                        Some("none") | None => (false, false),
                        Some(other) => {
                            opts.error(
                                "dump-all-headers",
                                &mut local,
                                format!("expected both, request, response or none, got '{other}'"),
                            );
                            (false, false)
                        }
                    };
                    if !t.other.iter().any(|o| o == "http") {
                        t.other.push("http".into());
                    }
                }
                "smtp" if enabled => {
                    t.smtp_custom = opts.string_list("custom", &mut local);
                    t.smtp_md5 = opts.string_list("md5", &mut local).unwrap_or_default();
                    if !t.other.iter().any(|o| o == "smtp") {
                        t.other.push("smtp".into());
                    }
                }
                "dns" if enabled => {
                    t.dns_version = opts.int_in("version", 2, 3, &mut local).map(|v| v as u8);
                    if !t.other.iter().any(|o| o == "dns") {
                        t.other.push("dns".into());
                    }
                }
                "files" if enabled => {
                    t.files_force_hash = opts.string_list("force-hash", &mut local).unwrap_or_default();
                    t.files_force_magic = opts.bool("force-magic", false, &mut local);
                    for h in &t.files_force_hash {
                        if !matches!(h.as_str(), "md5" | "sha1" | "sha256") {
                            opts.error(
                                "force-hash",
                                &mut local,
                                format!("unknown hash '{h}' (expected md5, sha1 or sha256)"),
                            );
                        }
                    }
                    if !t.other.iter().any(|o| o == "files") {
                        t.other.push("files".into());
                    }
                }
                "frame" if enabled => {
                    t.frame_payload = opts.size_max("payload-buffer-size", u32::MAX.into(), &mut local);
                    if !t.other.iter().any(|o| o == "frame") {
                        t.other.push("frame".into());
                    }
                }
                "alert" | "anomaly" | "stats" | "flow" | "drop" => {}
                other if enabled && !suricata_eve_type(other) => {
                    // Suricata refuses to start on an output module it does not have.
                    item.error(
                        "",
                        errs,
                        format!("no EVE record type named {other:?} (no output module eve-log.{other})"),
                    );
                    if let Some(e) = errs.pop() {
                        errs.push(e.fatal());
                    }
                }
                other if enabled && !t.other.iter().any(|o| o == other) => t.other.push(other.to_string()),
                _ => {}
            }
            if enabled && !matches!(name, "alert" | "anomaly" | "stats" | "flow" | "drop") {
                let passwords = opts.opt_bool("passwords", &mut local);
                let string_log_limit = opts.size_max("string-log-limit", u32::MAX.into(), &mut local);
                let extended = opts.opt_bool("extended", &mut local);
                let types = if name == "smb" { opts.string_list("types", &mut local) } else { None };
                let custom = if matches!(name, "tls" | "http") { opts.string_list("custom", &mut local) } else { None };
                if passwords.is_some()
                    || string_log_limit.is_some()
                    || extended.is_some()
                    || types.is_some()
                    || custom.is_some()
                {
                    let extended = extended.unwrap_or(false);
                    let o = EveRecordOptions { passwords, string_log_limit, extended, types, custom };
                    t.record_options.retain(|(n, _)| n != name);
                    t.record_options.push((name.to_string(), o));
                }
            }
            if enabled {
                errs.extend(local);
            }
        }
        t
    }
}

impl EveAlert {
    fn read(sec: &Section<'_>, enabled: bool, e: &mut Errors) -> EveAlert {
        let d = EveAlert::default();
        let payload_buffer_size = sec
            .convert("payload-buffer-size", e, |s| {
                let v = crate::value::parse_size(s)?;
                match u32::try_from(v) {
                    Ok(0) => Err("payload-buffer-size must not be 0".to_string()),
                    Ok(v) => Ok(v),
                    Err(_) => Err(format!("size {v} is larger than the maximum {}", u32::MAX)),
                }
            })
            .unwrap_or(d.payload_buffer_size);
        EveAlert {
            enabled,
            payload: sec.bool("payload", d.payload, e),
            payload_printable: sec.bool("payload-printable", d.payload_printable, e),
            payload_length: sec.bool("payload-length", d.payload_length, e),
            payload_buffer_size,
            packet: sec.bool("packet", d.packet, e),
            tagged_packets: sec.bool("tagged-packets", d.tagged_packets, e),
            verdict: sec.bool("verdict", d.verdict, e),
            http_body: sec.bool("http-body", d.http_body, e),
            http_body_printable: sec.bool("http-body-printable", d.http_body_printable, e),
            websocket_payload: sec.bool("websocket-payload", d.websocket_payload, e),
            websocket_payload_printable: sec.bool("websocket-payload-printable", d.websocket_payload_printable, e),
            metadata: EveAlertMetadata::read(&sec.child("metadata"), e),
            xff: EveXff::read(&sec.child("xff"), e),
        }
    }

    /// Whether HTTP/WebSocket body logging is in effect: Suricata turns it
    /// off (with a warning) when `metadata.app-layer` is off.
    pub fn logs_bodies(&self) -> bool {
        self.metadata.app_layer
            && (self.http_body
                || self.http_body_printable
                || self.websocket_payload
                || self.websocket_payload_printable)
    }
}

impl EveAlertMetadata {
    fn read(sec: &Section<'_>, e: &mut Errors) -> EveAlertMetadata {
        let mut m = EveAlertMetadata::default();
        let Some(node) = sec.node else { return m };
        if let Some(v) = node.value() {
            match crate::value::parse_bool(v) {
                Some(false) => {
                    m.app_layer = false;
                    m.flow = false;
                    m.rule_metadata = false;
                }
                Some(true) => {}
                None => sec.error("", e, crate::value::bool_reason(v)),
            }
            return m;
        }
        let rule = sec.child("rule");
        m.rule_raw = rule.bool("raw", m.rule_raw, e);
        m.rule_metadata = rule.bool("metadata", m.rule_metadata, e);
        m.rule_reference = rule.bool("reference", m.rule_reference, e);
        m.flow = sec.bool("flow", m.flow, e);
        m.app_layer = sec.bool("app-layer", m.app_layer, e);
        m
    }
}

impl EveAnomaly {
    fn read(sec: &Section<'_>, enabled: bool, e: &mut Errors) -> EveAnomaly {
        let d = EveAnomaly::default();
        let types = sec.child("types");
        EveAnomaly {
            enabled,
            decode: types.bool("decode", d.decode, e),
            stream: types.bool("stream", d.stream, e),
            applayer: types.bool("applayer", d.applayer, e),
            packethdr: sec.bool("packethdr", d.packethdr, e),
        }
    }

    /// Whether packet headers are really logged: only with `decode` on.
    pub fn logs_packethdr(&self) -> bool {
        self.packethdr && self.decode
    }
}

impl EveStats {
    fn read(sec: &Section<'_>, enabled: bool, stats_on: bool, e: &mut Errors) -> EveStats {
        let d = EveStats::default();
        let totals = sec.opt_bool("totals", e);
        let threads = sec.opt_bool("threads", e);
        let mut s = EveStats {
            enabled,
            totals: totals.unwrap_or(d.totals),
            threads: threads.unwrap_or(d.threads),
            deltas: sec.bool("deltas", d.deltas, e),
            null_values: sec.bool("null-values", d.null_values, e),
        };
        // Suricata refuses only the explicit combination.
        if enabled && totals == Some(false) && threads == Some(false) {
            sec.error("threads", e, "cannot disable both totals and threads in stats logging");
            s.enabled = false;
        }
        if s.enabled && !stats_on {
            sec.error("", e, "eve stats need global stats: set stats.enabled to yes");
            s.enabled = false;
        }
        s
    }
}
