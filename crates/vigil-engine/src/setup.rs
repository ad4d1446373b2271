//! From command line to validated settings: load the YAML (or the built-in
//! defaults), apply `--include` and `--set`, type it, and derive what each
//! stage is configured with.

use crate::checksum::checksum_override;
use crate::error::EngineError;
use crate::options::RunOptions;
use crate::ports;
use std::path::PathBuf;
use vigil_config::{ChecksumMode, Config, ConfigTree, DEFAULT_YAML};
use vigil_decode::{DecodeConfig, UdpTunnel};

/// Everything a run needs, validated.
#[derive(Debug, Clone)]
pub struct Setup {
    pub config: Config,
    pub decode: DecodeConfig,
    pub checksum: ChecksumMode,
    pub log_dir: PathBuf,
    /// Problems that did not stop the run, to show the user.
    pub warnings: Vec<String>,
}

pub fn setup(opts: &RunOptions) -> Result<Setup, EngineError> {
    let tree = match &opts.config {
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
    .map_err(|e| EngineError::Config(vec![e.to_string()]))?;
    let (config, errors, ignored) = Config::from_tree(&tree);
    let mut problems: Vec<String> = tree.warnings().iter().map(|e| e.to_string()).collect();
    problems.extend(errors.iter().map(|e| e.to_string()));
    if opts.init_errors_fatal && !errors.is_empty() {
        return Err(EngineError::Config(problems));
    }
    let mut warnings = problems;
    if !ignored.is_empty() {
        warnings.push(format!("configuration keys vigil does not use (ignored): {}", ignored.join(", ")));
    }

    if let Some(mode) = opts.runmode.as_deref() {
        if mode != "single" {
            return Err(EngineError::Usage(format!(
                "runmode {mode:?} is not available yet: this version runs `single` only"
            )));
        }
    }
    if !opts.exclusive_rules.is_empty() || !opts.extra_rules.is_empty() {
        return Err(EngineError::Usage(
            "rules (-S/-s) cannot be loaded: this version of vigil has no detection engine yet".into(),
        ));
    }
    if !opts.disable_detection && !config.rules.rule_files.is_empty() && opts.config.is_some() {
        warnings.push(format!(
            "{} configured rule file(s) not loaded: this version of vigil has no detection engine yet",
            config.rules.rule_files.len()
        ));
    }

    let cli = checksum_override(opts.checksum.as_deref())?;
    let checksum = config.pcap_checksum_mode(cli);
    let decode = decode_config(&config, checksum, &mut warnings);

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
    Ok(Setup { config, decode, checksum, log_dir, warnings })
}

fn decode_config(config: &Config, checksum: ChecksumMode, warnings: &mut Vec<String>) -> DecodeConfig {
    let d = &config.decoder;
    let mut tunnel = |name: &str, t: &vigil_config::TunnelDecoder, fallback: UdpTunnel| {
        let expr = d.effective_ports(name).unwrap_or("any");
        match ports::resolve(expr, &config.vars) {
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
