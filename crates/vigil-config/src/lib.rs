//! Suricata-compatible configuration for vigil.
//!
//! This crate owns everything between a `suricata.yaml` on disk and the
//! validated settings the engine runs with. Data flows in two steps:
//!
//! 1. **Raw tree** ([`ConfigTree`]): YAML is read into Suricata's own model,
//!    an ordered tree of named nodes whose values are strings, each with its
//!    file/line/column. Includes, "later key wins", `--include FILE` and
//!    `--set key=value` all operate on this tree, with Suricata's rules, so
//!    the same dotted keys (`outputs.1.eve-log.types.2.anomaly.enabled`)
//!    address the same values.
//! 2. **Typed config** ([`Config`]): [`Config::from_tree`] converts the
//!    sections vigil understands into typed structs, using Suricata's
//!    defaults for absent keys. A bad value becomes a [`ConfigError`]
//!    (`suricata.yaml:69:13: stats.interval: expected an integer number of
//!    seconds, got "ten"`) and the default is kept, so one typo never stops
//!    the rest from loading. Top-level keys vigil does not use are returned
//!    so the engine can list them in one warning.
//!
//! [`Config::default`] is what the stock Suricata 8.0 `suricata.yaml`
//! yields; [`DEFAULT_YAML`] is vigil's own default file with the same
//! values.
//!
//! ```
//! use vigil_config::{Config, ConfigTree};
//!
//! let mut tree = ConfigTree::parse_str(
//!     "%YAML 1.1\n---\nstats:\n  interval: 10\noutputs:\n  - eve-log:\n      enabled: yes\n",
//!     "suricata.yaml",
//! )
//! .unwrap();
//! tree.set_from_arg("outputs.0.eve-log.filename=alerts.json").unwrap();
//! assert_eq!(tree.find_item("outputs", "eve-log").unwrap().child_value("enabled"), Some("yes"));
//!
//! let (config, errors, ignored) = Config::from_tree(&tree);
//! assert!(errors.is_empty() && ignored.is_empty());
//! assert_eq!(config.stats.interval, 10);
//! assert_eq!(config.outputs.eve_log[0].filename, "alerts.json");
//! ```

mod app_layer;
mod checksum;
mod datasets;
mod decoder;
mod defrag;
mod detect;
mod error;
mod eve;
mod exception;
mod filestore;
mod firewall;
mod flow;
mod heartbeat;
mod live;
mod load;
mod logging;
mod outputs;
mod pcap_file;
mod pcap_log;
mod read;
mod rules;
mod runtime;
mod security;
mod set;
mod stats;
mod stream;
mod tree;
mod typos;
pub mod value;
mod vars;

pub use app_layer::{AppLayer, AppProtoConf, DetectionPorts, ProtoSwitch};
pub use checksum::{Checksum, ChecksumMode, ChecksumOverride};
pub use datasets::{DatasetDecl, Datasets};
pub use decoder::{Decoder, TunnelDecoder};
pub use defrag::{Cidr, Defrag, HostOsPolicy, OsPolicy};
pub use detect::Detect;
pub use error::{ConfigError, Position};
pub use eve::{
    DropFlows, EveAlert, EveAlertMetadata, EveAnomaly, EveDrop, EveFiletype, EveFlow, EveKafka, EveLog,
    EveRecordOptions, EveRedis, EveStats, EveSyslog, EveTypes, EveXff, RedisMode,
};
pub use exception::{Exceptions, Policy as ExceptionPolicy, Target as ExceptionTarget};
pub use filestore::FileStore;
pub use firewall::{FwAppPolicies, FwPolicies, FwPolicy, FwPolicyAction};
pub use flow::{Flow, FlowTimeouts, ProtoTimeouts};
pub use heartbeat::Heartbeat;
pub use live::{AfPacket, AfPacketIface, Nfq};
pub use load::{MAX_DEPTH, MAX_FILE_SIZE, MAX_INCLUDE_DEPTH, MAX_NODES};
pub use logging::{LogFile, LogLevel, Logging};
pub use outputs::{DataLog, DataLogType, FastLog, LuaOutputConf, Outputs, StatsLog, TlsStore};
pub use pcap_file::{ChecksumChecks, PcapFile};
pub use pcap_log::{PcapCondition, PcapLog, MIN_PCAP_LIMIT};
pub use rules::RuleFiles;
pub use runtime::{CpuSet, Runtime, Threading, UnixCommand};
pub use security::LuaSecurity;
pub use stats::{Prometheus, Stats};
pub use stream::{Stream, Urgent};
pub use tree::{ConfigNode, ConfigTree};
pub use vars::Vars;

use read::Section;
use std::path::Path;

/// vigil's default configuration, in Suricata's format: the keys vigil
/// understands with the stock Suricata 8.0 values. Printed by
/// `vigil --dump-default-config`; parses to [`Config::default`].
pub const DEFAULT_YAML: &str = include_str!("default.yaml");

/// Top-level keys vigil reads. Any other top-level key is reported by
/// [`Config::from_tree`] as ignored.
pub const UNDERSTOOD_KEYS: &[&str] = &[
    "vars",
    "heartbeat",
    "exception-policy",
    "default-log-dir",
    "magic-file",
    "outputs",
    "stats",
    "decoder",
    "vlan",
    "pcap-file",
    "capture",
    "runmode",
    "max-pending-packets",
    "packet-alert-max",
    "threading",
    "unix-command",
    "default-rule-path",
    "rule-files",
    "classification-file",
    "reference-config-file",
    "threshold-file",
    "defrag",
    "host-os-policy",
    "flow",
    "flow-timeouts",
    "stream",
    "app-layer",
    "detect",
    "mpm-algo",
    "spm-algo",
    "action-order",
    "af-packet",
    "nfq",
    "logging",
    "datasets",
    "reputation-categories-file",
    "reputation-files",
    "default-reputation-path",
    "security",
];

/// The validated configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// `vars`.
    pub vars: Vars,
    /// `default-log-dir`: where outputs write (`-l` overrides it).
    pub default_log_dir: Option<String>,
    /// `magic-file`: the libmagic database (`None`: libmagic's default).
    pub magic_file: Option<String>,
    /// `outputs`.
    pub outputs: Outputs,
    /// `stats`.
    pub stats: Stats,
    /// `decoder` and `vlan`.
    pub decoder: Decoder,
    /// `pcap-file`.
    pub pcap_file: PcapFile,
    /// `stream.checksum-validation` and `capture.checksum-validation`.
    pub checksum: Checksum,
    /// `runmode`, `max-pending-packets`, `threading`.
    pub runtime: Runtime,
    /// `default-rule-path`, `rule-files`, classification/reference/threshold
    /// files.
    pub rules: RuleFiles,
    /// `flow`.
    pub flow: Flow,
    /// `flow-timeouts`.
    pub flow_timeouts: FlowTimeouts,
    /// `defrag`.
    pub defrag: Defrag,
    /// `host-os-policy`.
    pub host_os_policy: HostOsPolicy,
    /// `stream`.
    pub stream: Stream,
    /// `af-packet`: live capture settings per interface.
    pub af_packet: AfPacket,
    /// `nfq`: inline verdicts through NFQUEUE.
    pub nfq: Nfq,
    /// `exception-policy` and the `*-policy` keys of `stream`, `flow`,
    /// `defrag` and `app-layer`.
    pub exceptions: Exceptions,
    /// `detect`, `mpm-algo`, `spm-algo`.
    pub detect: Detect,
    /// `logging`: where vigil's own messages go besides the console.
    pub logging: Logging,
    /// `heartbeat`: the output flush interval.
    pub heartbeat: Heartbeat,
    /// `app-layer`: protocol switches and the settings vigil reads.
    pub app_layer: AppLayer,
    /// `datasets`.
    pub datasets: Datasets,
    /// `security.lua`.
    pub lua: LuaSecurity,
    /// Sections accepted as they are until they get typed.
    pub raw: RawSections,
}

/// Sections vigil accepts but does not type yet: kept as subtrees for the
/// stages that will own them. `None` when the section is absent.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct RawSections {
    /// `stream` (its `checksum-validation` is typed in [`Checksum`]).
    pub stream: Option<ConfigNode>,
    /// `app-layer`.
    pub app_layer: Option<ConfigNode>,
    /// `detect`.
    pub detect: Option<ConfigNode>,
    /// `af-packet`.
    pub af_packet: Option<ConfigNode>,
    /// `nfq`.
    pub nfq: Option<ConfigNode>,
}

impl Default for Config {
    /// The values the stock Suricata 8.0 `suricata.yaml` yields. The raw
    /// sections are left empty: they are not typed yet.
    fn default() -> Self {
        Config {
            vars: Vars::default(),
            default_log_dir: Some("/usr/local/var/log/suricata/".into()),
            magic_file: None,
            outputs: Outputs::default(),
            stats: Stats::default(),
            decoder: Decoder::default(),
            pcap_file: PcapFile::default(),
            checksum: Checksum::default(),
            runtime: Runtime::default(),
            rules: RuleFiles::stock(),
            flow: Flow::default(),
            flow_timeouts: FlowTimeouts::default(),
            defrag: Defrag::default(),
            host_os_policy: HostOsPolicy::stock(),
            stream: Stream::default(),
            af_packet: AfPacket::stock(),
            nfq: Nfq::default(),
            exceptions: Exceptions { master: Some(ExceptionPolicy::Auto), ..Exceptions::default() },
            detect: Detect::default(),
            logging: Logging::default(),
            heartbeat: Heartbeat::default(),
            app_layer: AppLayer::default(),
            datasets: Datasets::default(),
            lua: LuaSecurity::default(),
            raw: RawSections::default(),
        }
    }
}

impl Config {
    /// Type a loaded tree. Returns the config, the problems found (each
    /// problem's key keeps its default), and the top-level keys that vigil
    /// does not use, in file order.
    pub fn from_tree(tree: &ConfigTree) -> (Config, Vec<ConfigError>, Vec<String>) {
        let asked = crate::read::Asked::default();
        let root = Section::recording(tree.root(), &asked);
        let mut errs = Vec::new();
        let stats = Stats::read(&root.child("stats"), &mut errs);
        let raw = |key: &str| tree.get(key).cloned();
        let config = Config {
            vars: Vars::read(&root.child("vars"), &mut errs),
            default_log_dir: root.string("default-log-dir", &mut errs),
            magic_file: root.string("magic-file", &mut errs),
            outputs: outputs::Outputs::read(&root.child("outputs"), stats.enabled, &mut errs),
            decoder: Decoder::read(&root.child("decoder"), &root.child("vlan"), &mut errs),
            pcap_file: PcapFile::read(&root.child("pcap-file"), &mut errs),
            checksum: Checksum::read(&root.child("stream"), &root.child("capture"), &mut errs),
            runtime: Runtime::read(&root, &mut errs),
            rules: RuleFiles::read(&root, &mut errs),
            flow: Flow::read(&root.child("flow"), &mut errs),
            flow_timeouts: FlowTimeouts::read(&root.child("flow-timeouts"), &mut errs),
            defrag: Defrag::read(&root.child("defrag"), &mut errs),
            host_os_policy: HostOsPolicy::read(&root.child("host-os-policy"), &mut errs),
            stream: Stream::read(&root.child("stream"), &mut errs),
            af_packet: AfPacket::read(&root.child("af-packet"), &mut errs),
            nfq: Nfq::read(&root.child("nfq"), &mut errs),
            exceptions: Exceptions::read(&root, &mut errs),
            detect: Detect::read(&root, &mut errs),
            logging: Logging::read(&root.child("logging"), &mut errs),
            heartbeat: Heartbeat::read(&root.child("heartbeat"), &mut errs),
            app_layer: AppLayer::read(&root.child("app-layer"), &mut errs),
            datasets: Datasets::read(&root.child("datasets"), &mut errs),
            lua: LuaSecurity::read(&root.child("security"), &mut errs),
            stats,
            raw: RawSections {
                stream: raw("stream"),
                app_layer: raw("app-layer"),
                detect: raw("detect"),
                af_packet: raw("af-packet"),
                nfq: raw("nfq"),
            },
        };
        let ignored = tree
            .children()
            .iter()
            .map(ConfigNode::name)
            .filter(|k| !UNDERSTOOD_KEYS.contains(k))
            .map(str::to_string)
            .collect();
        // Top-level sections read whole by other crates count as asked for.
        for key in UNDERSTOOD_KEYS {
            root.child(key);
        }
        crate::typos::find(tree.root(), "", &asked, &mut errs);
        (config, errs, ignored)
    }

    /// The checksum mode for reading pcap files, given `-k` (if any).
    pub fn pcap_checksum_mode(&self, cli: Option<ChecksumOverride>) -> ChecksumMode {
        self.checksum.mode(cli, self.pcap_file.checksum_checks)
    }
}

impl ConfigTree {
    /// Load the way `vigil -c FILE [--include F]... [--set K=V]...` does:
    /// the file, then each `--include` on top, then each `--set`.
    pub fn load_with(
        path: impl AsRef<Path>,
        includes: &[impl AsRef<Path>],
        sets: &[impl AsRef<str>],
    ) -> Result<ConfigTree, ConfigError> {
        let mut tree = ConfigTree::load_file(path)?;
        for inc in includes {
            tree.include_file(inc)?;
        }
        for s in sets {
            tree.set_from_arg(s.as_ref())?;
        }
        Ok(tree)
    }
}
