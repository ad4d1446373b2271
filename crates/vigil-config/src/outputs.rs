//! `outputs`: the list of output modules (`- fast:`, `- eve-log:`, ...).
//!
//! Each list item is keyed by its module name (see
//! [`ConfigNode::find_item`](crate::ConfigNode::find_item)). As in Suricata,
//! an output is off unless its `enabled` is true, and several items of the
//! same module are several outputs.

use crate::eve::EveLog;
use crate::filestore::FileStore;
use crate::read::{Errors, Section};

/// `outputs`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outputs {
    /// Every `- eve-log:` item, in list order.
    pub eve_log: Vec<EveLog>,
    /// Every `- fast:` item, in list order.
    pub fast: Vec<FastLog>,
    /// Every enabled `- alert-debug:` item (the same three keys as fast's), in list order.
    pub alert_debug: Vec<FastLog>,
    /// Every `- stats:` item (the `stats.log` text file), in list order.
    pub stats: Vec<StatsLog>,
    /// Every enabled `- file-store:` item, in list order.
    pub file_store: Vec<FileStore>,
    /// Every enabled `- tcp-data:` item.
    pub tcp_data: Vec<DataLog>,
    /// Every enabled `- http-body-data:` item.
    pub http_body_data: Vec<DataLog>,
    /// Every enabled `- pcap-log:` item, in list order.
    pub pcap_log: Vec<crate::pcap_log::PcapLog>,
    /// Every enabled `- lua:` item: output scripts.
    pub lua: Vec<LuaOutputConf>,
    /// `- tls-store:`, when enabled.
    pub tls_store: Option<TlsStore>,
    /// Names of other enabled items (`pcap-log`, ...), which
    /// vigil does not write, for the engine to warn about.
    pub other_enabled: Vec<String>,
}

/// `- lua:` — output scripts.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct LuaOutputConf {
    /// `scripts-dir`: where the scripts are (else the working directory).
    pub scripts_dir: Option<String>,
    /// `scripts`: the script files.
    pub scripts: Vec<String>,
}

impl LuaOutputConf {
    /// `None` when disabled.
    fn read(sec: &Section<'_>, errs: &mut Errors) -> Option<LuaOutputConf> {
        if !sec.bool("enabled", false, errs) {
            return None;
        }
        Some(LuaOutputConf {
            scripts_dir: sec.string("scripts-dir", errs),
            scripts: sec.string_list("scripts", errs).unwrap_or_default(),
        })
    }

    /// Each script's path.
    pub fn paths(&self) -> Vec<std::path::PathBuf> {
        let dir = std::path::Path::new(self.scripts_dir.as_deref().unwrap_or(""));
        self.scripts.iter().map(|s| dir.join(s)).collect()
    }
}

/// `- tls-store:` — the certificate chains `tls.store` rules ask for, as
/// PEM files with a `.meta` description beside each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsStore {
    /// `certs-log-dir`, under the log directory; `None`: the log directory.
    pub certs_log_dir: Option<String>,
}

impl TlsStore {
    /// `None` when disabled.
    fn read(sec: &Section<'_>, errs: &mut Errors) -> Option<TlsStore> {
        let mut e = Errors::new();
        if !sec.bool("enabled", false, &mut e) {
            return None;
        }
        let certs_log_dir = sec.string("certs-log-dir", &mut e);
        errs.extend(e);
        Some(TlsStore { certs_log_dir })
    }
}

/// `- tcp-data:` and `- http-body-data:` — stream and HTTP body bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataLog {
    /// `type`: `file`, `dir` or `both`.
    pub kind: DataLogType,
    /// `filename`, for `file`.
    pub filename: String,
}

/// `type` of a data log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataLogType {
    File,
    Dir,
    Both,
}

impl DataLog {
    /// `None` when disabled.
    fn read(sec: &Section<'_>, default_name: &str, errs: &mut Errors) -> Option<DataLog> {
        let mut e = Errors::new();
        if !sec.bool("enabled", false, &mut e) {
            return None;
        }
        let kind = match sec.string("type", &mut e).as_deref() {
            None | Some("file") => DataLogType::File,
            Some("dir") => DataLogType::Dir,
            Some("both") => DataLogType::Both,
            Some(other) => {
                sec.error("type", &mut e, format!("expected file, dir or both, got '{other}'"));
                DataLogType::File
            }
        };
        let filename = sec.string("filename", &mut e).unwrap_or_else(|| default_name.to_string());
        errs.extend(e);
        Some(DataLog { kind, filename })
    }
}

/// `- fast:` — one line per alert; `- alert-debug:` — a block per alert.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FastLog {
    /// `enabled`. Default false.
    pub enabled: bool,
    /// `filename`. Default `fast.log`.
    pub filename: String,
    /// `append` to an existing file rather than truncate. Default true.
    pub append: bool,
}

/// `- stats:` — the periodic `stats.log` text file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatsLog {
    /// `enabled`. Default false.
    pub enabled: bool,
    /// `filename`. Default `stats.log`.
    pub filename: String,
    /// `append`. Default true.
    pub append: bool,
    /// `totals`: counters merged over threads. Default true.
    pub totals: bool,
    /// `threads`: per-thread counters. Default false.
    pub threads: bool,
    /// `null-values`: also print counters that are zero. Default false.
    pub null_values: bool,
}

impl Default for FastLog {
    fn default() -> Self {
        FastLog { enabled: false, filename: "fast.log".into(), append: true }
    }
}

impl Default for StatsLog {
    fn default() -> Self {
        StatsLog {
            enabled: false,
            filename: "stats.log".into(),
            append: true,
            totals: true,
            threads: false,
            null_values: false,
        }
    }
}

impl Default for Outputs {
    /// The stock `suricata.yaml` outputs.
    fn default() -> Self {
        Outputs {
            eve_log: vec![EveLog::stock()],
            fast: vec![FastLog { enabled: true, ..FastLog::default() }],
            alert_debug: Vec::new(),
            stats: vec![StatsLog { enabled: true, ..StatsLog::default() }],
            file_store: Vec::new(),
            tcp_data: Vec::new(),
            http_body_data: Vec::new(),
            pcap_log: Vec::new(),
            lua: Vec::new(),
            tls_store: None,
            other_enabled: Vec::new(),
        }
    }
}

impl Outputs {
    /// Suricata's outputs when the section is absent: none.
    pub(crate) fn empty() -> Self {
        Outputs {
            eve_log: Vec::new(),
            fast: Vec::new(),
            alert_debug: Vec::new(),
            stats: Vec::new(),
            file_store: Vec::new(),
            tcp_data: Vec::new(),
            http_body_data: Vec::new(),
            pcap_log: Vec::new(),
            lua: Vec::new(),
            tls_store: None,
            other_enabled: Vec::new(),
        }
    }

    pub(crate) fn read(sec: &Section<'_>, stats_on: bool, errs: &mut Errors) -> Outputs {
        let mut out = Outputs::empty();
        for item in sec.children() {
            let Some(node) = item.node else { continue };
            let Some(name) = node.value() else {
                if !node.children().is_empty() {
                    item.error("", errs, "expected an output module such as `- eve-log:`");
                }
                continue;
            };
            let conf = item.child(name);
            match name {
                "eve-log" => out.eve_log.push(EveLog::read(&conf, stats_on, errs)),
                "fast" => out.fast.push(FastLog::read(&conf, "fast.log", errs)),
                "alert-debug" => {
                    out.alert_debug.extend(Some(FastLog::read(&conf, "alert-debug.log", errs)).filter(|l| l.enabled))
                }
                "stats" => out.stats.push(StatsLog::read(&conf, errs)),
                "file-store" => out.file_store.extend(FileStore::read(&conf, errs)),
                "tcp-data" => out.tcp_data.extend(DataLog::read(&conf, "tcp-data.log", errs)),
                "http-body-data" => out.http_body_data.extend(DataLog::read(&conf, "http-data.log", errs)),
                "pcap-log" => out.pcap_log.extend(crate::pcap_log::PcapLog::read(&conf, errs)),
                "lua" => out.lua.extend(LuaOutputConf::read(&conf, errs)),
                "tls-store" => out.tls_store = TlsStore::read(&conf, errs).or(out.tls_store.take()),
                other => {
                    if conf.child_value_is_true("enabled") {
                        out.other_enabled.push(other.to_string());
                    }
                }
            }
        }
        out
    }

    /// The enabled `eve-log` outputs.
    pub fn enabled_eve_logs(&self) -> impl Iterator<Item = &EveLog> {
        self.eve_log.iter().filter(|e| e.enabled)
    }
}

impl Section<'_> {
    /// Suricata's `ConfNodeChildValueIsTrue`, without reporting: for
    /// modules vigil does not read.
    fn child_value_is_true(&self, key: &str) -> bool {
        self.node.and_then(|n| n.child_value(key)).and_then(crate::value::parse_bool).unwrap_or(false)
    }
}

impl FastLog {
    fn read(sec: &Section<'_>, default_name: &str, errs: &mut Errors) -> FastLog {
        let d = FastLog::default();
        let mut e = Errors::new();
        let log = FastLog {
            enabled: sec.bool("enabled", d.enabled, &mut e),
            filename: sec.string("filename", &mut e).unwrap_or_else(|| default_name.to_string()),
            append: sec.bool("append", d.append, &mut e),
        };
        if log.enabled {
            errs.extend(e);
        }
        log
    }
}

impl StatsLog {
    fn read(sec: &Section<'_>, errs: &mut Errors) -> StatsLog {
        let d = StatsLog::default();
        let mut e = Errors::new();
        let totals = sec.opt_bool("totals", &mut e);
        let threads = sec.opt_bool("threads", &mut e);
        let mut log = StatsLog {
            enabled: sec.bool("enabled", d.enabled, &mut e),
            filename: sec.string("filename", &mut e).unwrap_or(d.filename),
            append: sec.bool("append", d.append, &mut e),
            totals: totals.unwrap_or(d.totals),
            threads: threads.unwrap_or(d.threads),
            null_values: sec.bool("null-values", d.null_values, &mut e),
        };
        if log.enabled && totals == Some(false) && threads == Some(false) {
            sec.error("threads", &mut e, "cannot disable both totals and threads in stats logging");
            log.enabled = false;
            errs.extend(e);
        } else if log.enabled {
            errs.extend(e);
        }
        log
    }
}
