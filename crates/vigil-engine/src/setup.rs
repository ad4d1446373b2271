//! From command line to validated settings: load the YAML (or the built-in
//! defaults), apply `--include` and `--set`, type it, and derive what each
//! stage is configured with.

use crate::checksum::checksum_override;
use crate::error::EngineError;
use crate::log::LogRecord;
use crate::options::RunOptions;
use crate::rules::LoadedRules;
use std::path::PathBuf;
use std::sync::Arc;
use vigil_config::{ChecksumMode, Config, ConfigTree, LogLevel, DEFAULT_YAML};
use vigil_decode::{DecodeConfig, UdpTunnel};
use vigil_defrag::{DefragConfig, Policy};
use vigil_detect::prefilter::Algo;
use vigil_flow::{FlowConfig, ProtoTimeouts, Timeouts};
use vigil_rules::Vars;

/// Everything a run needs, validated.
#[derive(Debug, Clone)]
pub struct Setup {
    pub config: Config,
    /// The configuration as read (`conf-get` answers from it).
    pub tree: Arc<ConfigTree>,
    /// What start-up said, at Suricata's levels (the `logging` outputs
    /// got it; the console shows more of it with each `-v`).
    pub log: Vec<LogRecord>,
    pub decode: DecodeConfig,
    /// The flow table (`flow`, `flow-timeouts`, tracking switches).
    pub flow: FlowConfig,
    /// IP reassembly (`defrag`, `host-os-policy`).
    pub defrag: DefragConfig,
    /// TCP tracking and reassembly (`stream`, `host-os-policy`).
    pub stream: vigil_stream::StreamConfig,
    pub checksum: ChecksumMode,
    pub log_dir: PathBuf,
    /// Problems that did not stop the run, to show the user.
    pub warnings: Vec<String>,
    /// The rules and the detection engine built from them.
    pub rules: Arc<LoadedRules>,
    /// Inline (or `--simulate-ips`): `drop` rules block.
    pub ips: bool,
    /// `--simulate-ips` on a capture: vigil counts `ips.accepted` and
    /// `ips.blocked` itself (live, the capture does).
    pub simulated_ips: bool,
    /// The application layer (`app-layer`); `None` when every parser is off.
    pub app: Option<vigil_applayer::AppConfig>,
    /// The DNS EVE format forced for every output, if any.
    pub eve_dns_version: Option<u8>,
    /// Threads and how packets reach them.
    pub runmode: crate::runmode::Runmode,
    /// The CPUs threads are pinned to (`threading.set-cpu-affinity`).
    pub affinity: Option<crate::affinity::Affinity>,
    /// Limits pretended reached (`--simulate-packet-*`).
    pub simulate: crate::Simulation,
    /// Flows announced by other flows (FTP data channels), shared by the workers.
    pub expectations: std::sync::Arc<crate::expect::Expectations>,
    /// Thresholds' trackers and host bits, shared by every worker.
    pub hosts: std::sync::Arc<vigil_detect::host_state::HostState>,
}

/// The configuration tree a run would use: `-c` (or vigil's built-in
/// defaults), then `--include` files, then `--set` values.
pub fn config_tree(opts: &RunOptions) -> Result<ConfigTree, EngineError> {
    load_tree(opts).map_err(|e| EngineError::Config(vec![e.to_string()]))
}

fn load_tree(opts: &RunOptions) -> Result<ConfigTree, vigil_config::ConfigError> {
    match &opts.config {
        Some(path) => ConfigTree::load_with(path, &opts.includes, &opts.sets),
        None => ConfigTree::parse_str(DEFAULT_YAML, "<built-in defaults>").and_then(|mut t| {
            for inc in &opts.includes {
                t.include_file(inc)?;
            }
            for s in &opts.sets {
                t.set_from_arg(s)?;
            }
            Ok(t)
        }),
    }
}

/// `-v` raises the default log level a step for each `v` (notice, info,
/// perf, config, debug), as Suricata's: file outputs without a `level` of
/// their own follow it.
fn verbose_log_files(logging: &mut vigil_config::Logging, verbose: u8) {
    const STEPS: [LogLevel; 7] = [
        LogLevel::Error,
        LogLevel::Warning,
        LogLevel::Notice,
        LogLevel::Info,
        LogLevel::Perf,
        LogLevel::Config,
        LogLevel::Debug,
    ];
    let at = STEPS.iter().position(|l| *l == logging.default_level).unwrap_or(2);
    let raised = STEPS[(at + usize::from(verbose)).min(STEPS.len() - 1)];
    for f in logging.files.iter_mut().filter(|f| !f.level_given && f.level < raised) {
        f.level = raised;
    }
}

pub fn setup(opts: &RunOptions) -> Result<Setup, EngineError> {
    let tree = config_tree(opts)?;
    let (mut config, errors, ignored) = Config::from_tree(&tree);
    verbose_log_files(&mut config.logging, opts.verbose);
    let mut problems: Vec<String> = tree.warnings().iter().map(|e| e.to_string()).collect();
    problems.extend(errors.iter().map(|e| e.to_string()));
    // What Suricata refuses to start on, vigil refuses too; the rest is
    // fatal only when asked.
    if errors.iter().any(|e| e.fatal) || (opts.init_errors_fatal && !errors.is_empty()) {
        let fatal: Vec<String> =
            errors.iter().filter(|e| e.fatal || opts.init_errors_fatal).map(|e| e.to_string()).collect();
        return Err(EngineError::Config(fatal));
    }
    let mut warnings = problems;
    warnings.extend(crate::unwritten::warnings(&config));
    if !ignored.is_empty() {
        warnings.push(format!("configuration keys vigil does not use (ignored): {}", ignored.join(", ")));
    }

    let runmode = crate::runmode::Runmode::resolve(opts, &config)?;
    let affinity = crate::affinity::Affinity::plan(&config.runtime.threading, &crate::affinity::Affinity::available())?;

    let cli = checksum_override(opts.checksum.as_deref())?;
    let checksum = config.pcap_checksum_mode(cli);
    let vars = Vars::new(&config.vars.address_groups, &config.vars.port_groups);
    let decode = decode_config(&config, &vars, checksum, &mut warnings);

    let log_dir = match (&opts.log_dir, &config.default_log_dir) {
        (Some(d), _) => d.clone(),
        (None, Some(d)) => PathBuf::from(d),
        (None, None) => PathBuf::from("."),
    };
    if !log_dir.is_dir() {
        return Err(EngineError::Usage(format!(
            "log directory {} does not exist (create it, or choose another with -l)",
            log_dir.display()
        )));
    }
    let flow = flow_config(&config);
    let defrag = defrag_config(&config);
    // An inline capture drops for real; `--simulate-ips` pretends on a file.
    let ips = opts.simulate_ips || is_inline(&config, &opts.live);
    let stream = stream_config(&config, ips);
    // Suricata refuses a second eve-log writing anomalies, and so does vigil.
    let anomaly_logs =
        config.outputs.enabled_eve_logs().filter(|e| e.types.anomaly.as_ref().is_some_and(|a| a.enabled)).count();
    if anomaly_logs > 1 {
        return Err(EngineError::Config(vec![
            "output-json-anomaly: only one 'anomaly' logger can be enabled".to_string()
        ]));
    }
    let rules = crate::rules::load(opts, &config, vars, mpm_algo(&config, &mut warnings))?;
    let mut app = app_config(&config.app_layer, &mut warnings)
        .map(|a| vigil_applayer::AppConfig { table_options: table_options(&config, &rules), ..a })
        .map(|a| vigil_applayer::AppConfig { table_settings: table_settings(&config, &mut warnings), ..a })
        .map(|a| vigil_applayer::AppConfig { smtp_mime: smtp_mime(&config, &mut warnings), ..a })
        .map(|a| vigil_applayer::AppConfig { simulate_error_at: opts.simulate_applayer_error, ..a })
        .map(|a| vigil_applayer::AppConfig { udp_source_port: config.stream.midstream, ..a })
        .map(|a| frames_wanted(&config, &rules, a));
    let files = crate::files::file_config(&config, &rules, &mut warnings)?;
    replace_warning(&rules, &mut warnings);
    if let Some(a) = app.as_mut() {
        a.http.files = files;
    }
    let mut log: Vec<LogRecord> =
        warnings.iter().map(|w| LogRecord::new(LogLevel::Warning, "config", w.clone())).collect();
    if let Some(master) = config.exceptions.master {
        let name = master.name().replace('_', "-");
        log.push(LogRecord::new(LogLevel::Info, "exception-policy", format!("master exception-policy set to: {name}")));
    }
    log.push(LogRecord::new(
        LogLevel::Info,
        "runmodes",
        format!("runmode {} with {} worker(s); outputs to {}", runmode.name(), runmode.workers(), log_dir.display()),
    ));
    log.push(LogRecord::new(
        LogLevel::Config,
        "config",
        format!(
            "configuration: {}",
            opts.config.as_ref().map_or("vigil's built-in defaults".into(), |c| c.display().to_string())
        ),
    ));
    let fatal = opts.init_errors_fatal && rules.failed > 0;
    if fatal {
        // The run stops here: the failures, the load summary, then why, as
        // Suricata 8.0.6 logs them.
        let summary = |r: &&LogRecord| r.message.contains(" rule files processed. ");
        log.extend(rules.log.iter().filter(|r| r.level == LogLevel::Error || summary(r)).cloned());
        log.push(LogRecord::new(LogLevel::Error, "suricata", "Loading signatures failed."));
    } else {
        log.extend(rules.log.iter().cloned());
    }
    warnings.extend(crate::log::write(&config.logging, &log_dir, &log));
    if fatal {
        return Err(EngineError::Config(rules.messages));
    }
    warnings.extend(rules.messages.iter().cloned());
    Ok(Setup {
        config,
        log,
        tree: Arc::new(tree),
        decode,
        flow,
        defrag,
        stream,
        checksum,
        log_dir,
        warnings,
        rules: Arc::new(rules),
        ips,
        simulated_ips: ips && opts.live.is_empty(),
        app,
        eve_dns_version: opts.eve_dns_version,
        runmode,
        affinity,
        simulate: opts.simulate,
        expectations: crate::expect::Expectations::new(),
        hosts: vigil_detect::host_state::HostState::new_shared(),
    })
}

/// The prefilter `mpm-algo` asks for; one this build lacks (Hyperscan)
/// falls back to the best it has, with a warning.
pub(crate) fn mpm_algo(config: &Config, warnings: &mut Vec<String>) -> Algo {
    Algo::from_config(&config.detect.mpm_algo).unwrap_or_else(|e| {
        warnings.push(format!("{e}; using the built-in Aho-Corasick prefilter"));
        Algo::best()
    })
}

fn decode_config(config: &Config, vars: &Vars, checksum: ChecksumMode, warnings: &mut Vec<String>) -> DecodeConfig {
    let d = &config.decoder;
    let mut tunnel = |name: &str, t: &vigil_config::TunnelDecoder, fallback: UdpTunnel| {
        let expr = d.effective_ports(name).unwrap_or("any");
        match tunnel_ports(expr, vars) {
            Ok(ports) => UdpTunnel { enabled: t.enabled, ports },
            Err(e) => {
                warnings.push(format!("decoder.{name}.ports: {e}; using the default"));
                UdpTunnel { enabled: t.enabled, ..fallback }
            }
        }
    };
    let defaults = DecodeConfig::default();
    DecodeConfig {
        max_layers: d.max_layers as usize,
        validate_checksums: checksum != ChecksumMode::Disabled,
        vxlan: tunnel("vxlan", &d.vxlan, defaults.vxlan.clone()),
        geneve: tunnel("geneve", &d.geneve, defaults.geneve.clone()),
        teredo: tunnel("teredo", &d.teredo, defaults.teredo.clone()),
        // Suricata decodes ERSPAN type I whatever `decoder.erspan.typeI.enabled` says (since 6.0).
        erspan_type1: true,
    }
}

/// A tunnel decoder's port expression (`$VXLAN_PORTS`, `[8472, 4789]`,
/// `any`) as the decoder takes it: `None` for any port.
fn tunnel_ports(expr: &str, vars: &Vars) -> Result<Option<Vec<u16>>, String> {
    let parsed = vigil_rules::port::parse_port(expr).map_err(|e| format!("{expr:?}: {}", e.reason))?;
    let set = vars.resolve_port(&parsed).map_err(|e| e.to_string())?;
    if set.is_full() {
        return Ok(None);
    }
    Ok(Some(set.ranges().iter().flat_map(|&(lo, hi)| lo..=hi).collect()))
}

fn flow_config(config: &Config) -> FlowConfig {
    let f = &config.flow;
    let t = &config.flow_timeouts;
    let proto = |p: &vigil_config::ProtoTimeouts| ProtoTimeouts {
        new: p.new,
        established: p.established,
        closed: p.closed,
        emergency_new: p.emergency_new,
        emergency_established: p.emergency_established,
        emergency_closed: p.emergency_closed,
    };
    FlowConfig {
        memcap: f.memcap,
        hash_size: f.hash_size,
        prealloc: f.prealloc,
        emergency_recovery: f.emergency_recovery,
        timeouts: Timeouts { default: proto(&t.default), tcp: proto(&t.tcp), udp: proto(&t.udp), icmp: proto(&t.icmp) },
        vlan_tracking: config.decoder.vlan_use_for_tracking,
        recursion_tracking: config.decoder.recursion_level_use_for_tracking,
        // Only an output that logs them makes flows keep their addresses.
        keep_macs: config.outputs.enabled_eve_logs().any(|e| e.ethernet),
    }
}

/// `host-os-policy` as a table of one stage's policies, `of` naming the
/// policy a host OS gets there (every name vigil-config accepts has one).
fn host_table<P: Copy + Default>(config: &Config, of: fn(&str) -> Option<P>) -> vigil_types::HostTable<P> {
    let mut blocks = Vec::new();
    for (os, nets) in &config.host_os_policy.entries {
        let policy = of(os.name()).unwrap_or_default();
        blocks.extend(nets.iter().map(|n| (n.addr, n.prefix, policy)));
    }
    vigil_types::HostTable::new(blocks, P::default())
}

fn defrag_config(config: &Config) -> DefragConfig {
    let d = &config.defrag;
    DefragConfig {
        memcap: d.memcap,
        max_trackers: d.trackers,
        max_frags: d.max_frags,
        timeout_secs: d.timeout,
        policies: host_table(config, Policy::for_host_os),
        vlan_tracking: config.decoder.vlan_use_for_tracking,
        recursion_tracking: config.decoder.recursion_level_use_for_tracking,
        ..DefragConfig::default()
    }
}

fn stream_config(config: &Config, ips: bool) -> vigil_stream::StreamConfig {
    let s = &config.stream;
    vigil_stream::StreamConfig {
        midstream: s.midstream,
        async_oneside: s.async_oneside,
        memcap: s.memcap,
        reassembly_memcap: s.reassembly_memcap,
        depth: s.reassembly_depth,
        toserver_chunk: s.toserver_chunk_size,
        toclient_chunk: s.toclient_chunk_size,
        inline: s.inline.unwrap_or(ips),
        policies: host_table(config, vigil_stream::Policy::for_host_os),
        urgent: urgent_policy(s.urgent_policy),
        urgent_oob_limit: urgent_policy(s.urgent_oob_limit),
    }
}

fn urgent_policy(u: vigil_config::Urgent) -> vigil_stream::UrgentPolicy {
    use vigil_config::Urgent;
    use vigil_stream::UrgentPolicy as P;
    match u {
        Urgent::Inline => P::Inline,
        Urgent::Drop => P::Drop,
        Urgent::Oob => P::Oob,
        Urgent::Gap => P::Gap,
    }
}

/// `app-layer.protocols`: which parsers run (`enabled: yes|no|detection-only`;
/// DNS as `tcp`/`udp` sub-keys) and the HTTP body limits of
/// `libhtp.default-config`.
fn app_config(a: &vigil_config::AppLayer, warnings: &mut Vec<String>) -> Option<vigil_applayer::AppConfig> {
    let mut cfg = vigil_applayer::AppConfig { ..vigil_applayer::AppConfig::default() };
    // A protocol over both transports (DNS) may be switched per transport:
    // it is detected while either is on.
    for def in vigil_applayer::protocols::ALL {
        let d = def.detection;
        let on = !def.off_by_default;
        cfg.set_enabled(
            def.name,
            (d.tcp && a.enabled_on_or(def.name, true, on)) || (d.udp && a.enabled_on_or(def.name, false, on)),
        );
        cfg.table_stream_depth.push(a.protocol(def.name).and_then(|p| p.stream_depth).or(def.stream_depth));
        let only = a.protocol(def.name).is_some_and(|p| p.enabled == vigil_config::ProtoSwitch::DetectionOnly);
        if let (true, Some(i)) = (only, vigil_applayer::proto::index(def.name).filter(|&i| i < 64)) {
            cfg.table_detection_only |= 1 << i;
        }
    }
    // No protocol with a depth of its own: flows need not ask.
    if cfg.table_stream_depth.iter().all(Option::is_none) {
        cfg.table_stream_depth.clear();
    }
    let mut encryption = |name: &str| {
        let v = a.protocol(name)?.encryption_handling.as_deref()?;
        let e = vigil_applayer::Encryption::parse(v);
        if e.is_none() {
            warnings.push(format!(
                "app-layer.protocols.{name}.encryption-handling: unknown value '{v}' (expected track-only, bypass or full); using track-only"
            ));
        }
        e
    };
    cfg.table_encryption =
        vigil_applayer::protocols::ALL.iter().map(|d| encryption(d.name).unwrap_or_default()).collect();
    // `detection-ports` of the protocols probed only on their ports (DNS).
    let ports = |name: &str, tcp: bool| {
        a.detection_ports(name, tcp).map(|p| vigil_applayer::ProbePorts { dp: p.dp.clone(), sp: p.sp.clone() })
    };
    cfg.table_ports = vigil_applayer::protocols::ALL
        .iter()
        .map(|d| if d.detection.ports_only { [ports(d.name, true), ports(d.name, false)] } else { [None, None] })
        .collect();
    // Files follow the body limits as configured (0: no bound), as Suricata's do.
    for (limit, slot) in [
        (a.http_request_body_limit, &mut cfg.http.request_file_limit),
        (a.http_response_body_limit, &mut cfg.http.response_file_limit),
    ] {
        if let Some(n) = limit {
            *slot = n;
        }
    }
    for (limit, slot) in [
        (a.http_request_body_limit, &mut cfg.http.request_body_limit),
        (a.http_response_body_limit, &mut cfg.http.response_body_limit),
    ] {
        match limit {
            // 0 means no limit in Suricata; vigil keeps a bound.
            Some(0) => *slot = 16 << 20,
            Some(n) => *slot = n.min(16 << 20) as usize,
            None => {}
        }
    }
    cfg.any_enabled().then_some(cfg)
}

/// The switches of the table's protocols that are on: set true under
/// `app-layer.protocols.<name>`, or asked for by a rule's keyword.
/// Parsers mark frames when a rule inspects them or an output logs them;
/// TCP flows get their whole-stream frame when an output logs frames or a
/// rule inspects it. Rules loaded later (a reload) do not turn them on.
fn frames_wanted(config: &Config, rules: &LoadedRules, a: vigil_applayer::AppConfig) -> vigil_applayer::AppConfig {
    let sigs = rules.engine.as_deref().map(|e| e.signatures()).unwrap_or_default();
    let logged = config.outputs.enabled_eve_logs().any(|e| e.logs("frame"));
    let inspected = sigs.iter().any(|s| s.frame.is_some());
    let stream = sigs.iter().any(|s| s.frame.as_ref().is_some_and(|f| f.ftype == vigil_applayer::frames::STREAM));
    vigil_applayer::AppConfig { frames: logged || inspected, stream_frames: logged || stream, ..a }
}

fn table_options(config: &Config, rules: &LoadedRules) -> Vec<u32> {
    let raw = config.raw.app_layer.as_ref();
    vigil_applayer::protocols::ALL
        .iter()
        .map(|def| {
            def.options.iter().enumerate().take(32).fold(0u32, |bits, (i, opt)| {
                let set = raw
                    .and_then(|a| a.get(&format!("protocols.{}.{}", def.name, opt.key)))
                    .and_then(|n| n.value())
                    .and_then(vigil_config::value::parse_bool)
                    .unwrap_or(opt.default);
                let asked = opt.keywords.iter().any(|k| rules.keywords.contains(k));
                if set || asked {
                    bits | (1 << i)
                } else {
                    bits
                }
            })
        })
        .collect()
}

/// The numbers of the table's protocols (`app-layer.protocols.<name>.max-tx`, ...): as
/// configured, else the protocol's default; a value that is no number is a warning, and the
/// default stays, as in Suricata.
fn table_settings(config: &Config, warnings: &mut Vec<String>) -> Vec<Vec<u64>> {
    let raw = config.raw.app_layer.as_ref();
    vigil_applayer::protocols::ALL
        .iter()
        .map(|def| {
            def.settings
                .iter()
                .map(|set| {
                    let Some(v) = raw.and_then(|a| a.get(&format!("protocols.{}.{}", def.name, set.key))).and_then(|n| n.value())
                    else {
                        return set.default;
                    };
                    let parsed = if set.size {
                        vigil_config::value::parse_size(v)
                    } else {
                        vigil_config::value::parse_uint_decimal(v, u64::MAX)
                    };
                    parsed.unwrap_or_else(|_| {
                        warnings.push(format!(
                            "app-layer.protocols.{name}: Invalid value '{v}' for {name}.{key}, using the default ({default})",
                            name = def.name,
                            key = set.key,
                            default = set.default
                        ));
                        set.default
                    })
                })
                .collect()
        })
        .collect()
}

/// `app-layer.protocols.smtp.mime`: whether and how SMTP reads messages as
/// MIME. A value of the wrong kind is a warning, and the default stays.
fn smtp_mime(config: &Config, warnings: &mut Vec<String>) -> vigil_applayer::SmtpMime {
    let mut out = smtp_mime_keys(config, warnings);
    if out.raw_extraction && out.decode_mime {
        warnings.push(
            "app-layer.protocols.smtp: \"decode-mime\" and \"raw-extraction\" options can't be enabled at the same time, disabling raw extraction".into(),
        );
        out.raw_extraction = false;
    }
    out
}

fn smtp_mime_keys(config: &Config, warnings: &mut Vec<String>) -> vigil_applayer::SmtpMime {
    let mut out = vigil_applayer::SmtpMime::default();
    let smtp = config.raw.app_layer.as_ref().and_then(|a| a.get("protocols.smtp"));
    if let Some(v) = smtp.and_then(|s| s.child_value("raw-extraction")) {
        match vigil_config::value::parse_bool(v) {
            Some(b) => out.raw_extraction = b,
            None => warnings.push(format!(
                "app-layer.protocols.smtp.raw-extraction: invalid value '{v}' (expected yes or no); using the default"
            )),
        }
    }
    let Some(mime) = smtp.and_then(|s| s.get("mime")) else { return out };
    let mut warn = |key: &str, v: &str, want: &str| {
        warnings.push(format!(
            "app-layer.protocols.smtp.mime.{key}: invalid value '{v}' (expected {want}); using the default"
        ))
    };
    let r = &mut out.reader;
    for (key, slot) in [
        ("decode-mime", &mut out.decode_mime),
        ("decode-base64", &mut r.decode_base64),
        ("decode-quoted-printable", &mut r.decode_quoted_printable),
        ("extract-urls", &mut r.extract_urls),
        ("log-url-scheme", &mut r.log_url_scheme),
        ("body-md5", &mut r.body_md5),
    ] {
        if let Some(v) = mime.child_value(key) {
            match vigil_config::value::parse_bool(v) {
                Some(b) => *slot = b,
                None => warn(key, v, "yes or no"),
            }
        }
    }
    if let Some(v) = mime.child_value("header-value-depth") {
        match vigil_config::value::parse_uint_decimal(v, 1 << 20) {
            Ok(n) => r.header_value_depth = n as usize,
            Err(_) => warn("header-value-depth", v, "a number of bytes"),
        }
    }
    if let Some(list) = mime.child("extract-urls-schemes") {
        let schemes: Vec<String> = list
            .children()
            .iter()
            .filter_map(|n| n.value())
            .map(|v| v.trim().trim_end_matches("://").to_ascii_lowercase())
            .filter(|v| !v.is_empty())
            .collect();
        if !schemes.is_empty() {
            r.url_schemes = schemes;
        }
    }
    out
}

/// Whether the run's inputs make it inline: an AF_PACKET bridge or a queue.
pub(crate) fn is_inline(config: &vigil_config::Config, live: &[crate::options::LiveInput]) -> bool {
    live.iter().any(|l| match l {
        // `--af-packet` alone runs every listed interface.
        crate::options::LiveInput::AfPacket(iface) if iface.is_empty() => {
            config.af_packet.interfaces.iter().any(|i| i.copy_mode.as_deref() == Some("ips"))
        }
        crate::options::LiveInput::AfPacket(iface) => {
            config.af_packet.for_iface(iface).copy_mode.as_deref() == Some("ips")
        }
        crate::options::LiveInput::Nfq(_) => true,
    })
}

/// `--engine-analysis`: writes `rules.json` and `rule_group.json` under the
/// run's log directory; returns the path of `rules.json`.
pub fn write_rules_json(setup: &Setup) -> Result<PathBuf, EngineError> {
    if let Some(fw) = setup.rules.firewall.as_deref() {
        crate::analysis::write_firewall_json(&setup.log_dir, fw, &setup.rules.analysis)?;
    }
    crate::analysis::write_rules_json(&setup.log_dir, &setup.rules.analysis, &setup.config)
}

/// `replace` rules load and alert, as in Suricata wherever it cannot
/// rewrite packets (anything but NFQ and IPFW); vigil rewrites none.
fn replace_warning(rules: &crate::rules::LoadedRules, warnings: &mut Vec<String>) {
    let sids: Vec<u32> = rules
        .engine
        .as_deref()
        .map(|e| e.signatures())
        .unwrap_or_default()
        .iter()
        .filter(|s| s.replace)
        .map(|s| s.sid)
        .collect();
    if !sids.is_empty() {
        warnings.push(format!(
            "{} rule(s) use replace (sid {}{}): vigil does not rewrite packets; they match and alert without it",
            sids.len(),
            sids.iter().take(5).map(u32::to_string).collect::<Vec<_>>().join(", "),
            if sids.len() > 5 { ", ..." } else { "" }
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smtp_mime_settings_are_read_and_bad_ones_warned() {
        let yaml = "app-layer:\n  protocols:\n    smtp:\n      mime:\n        decode-base64: no\n        extract-urls-schemes: [http, HTTPS://]\n        log-url-scheme: yes\n        header-value-depth: lots\n";
        let tree = vigil_config::ConfigTree::parse_str(yaml, "t.yaml").unwrap();
        let (config, _, _) = Config::from_tree(&tree);
        let mut warnings = Vec::new();
        let m = smtp_mime(&config, &mut warnings);
        assert!(m.decode_mime && !m.reader.decode_base64 && m.reader.log_url_scheme);
        assert_eq!(m.reader.url_schemes, ["http", "https"]);
        assert_eq!(m.reader.header_value_depth, 2000);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("header-value-depth"), "{warnings:?}");
    }

    #[test]
    fn raw_extraction_only_without_mime_reading() {
        let read = |yaml: &str| {
            let tree = vigil_config::ConfigTree::parse_str(yaml, "t.yaml").unwrap();
            let (config, _, _) = Config::from_tree(&tree);
            let mut warnings = Vec::new();
            let m = smtp_mime(&config, &mut warnings);
            (m.raw_extraction, m.reader.body_md5, warnings)
        };
        let on = "app-layer:\n  protocols:\n    smtp:\n      raw-extraction: yes\n      mime:\n        decode-mime: no\n        body-md5: yes\n";
        assert_eq!(read(on), (true, true, vec![]));
        // Both asked: Suricata's error, and no raw extraction.
        let (raw, _, warnings) = read("app-layer:\n  protocols:\n    smtp:\n      raw-extraction: yes\n");
        assert!(!raw);
        assert!(warnings[0].contains("can't be enabled at the same time"), "{warnings:?}");
    }

    #[test]
    fn tunnel_ports_resolve_variables_lists_and_any() {
        let config = Config::default();
        let vars = Vars::new(&config.vars.address_groups, &config.vars.port_groups);
        assert_eq!(tunnel_ports("$VXLAN_PORTS", &vars).unwrap(), Some(vec![4789]));
        assert_eq!(tunnel_ports("[8472, 4789]", &vars).unwrap(), Some(vec![4789, 8472]));
        assert_eq!(tunnel_ports("any", &vars).unwrap(), None);
        assert!(tunnel_ports("$NOPE", &vars).is_err());
        assert!(tunnel_ports("80x", &vars).is_err());
    }

    #[test]
    fn a_bad_tunnel_port_keeps_the_default_with_a_warning() {
        let mut config = Config::default();
        config.decoder.vxlan.ports = Some("$NOPE".into());
        let vars = Vars::new(&config.vars.address_groups, &config.vars.port_groups);
        let mut warnings = Vec::new();
        let d = decode_config(&config, &vars, ChecksumMode::Auto, &mut warnings);
        assert_eq!(d.vxlan.ports, Some(vec![4789]));
        assert!(warnings[0].starts_with("decoder.vxlan.ports:"), "{warnings:?}");
    }
}
