use std::path::PathBuf;
use vigil_types::PerDir;

/// A live packet source named on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LiveInput {
    /// `-i`/`--af-packet`: an interface, captured through AF_PACKET.
    AfPacket(String),
    /// `-q`: an NFQUEUE queue number (inline).
    Nfq(u16),
}

/// What the command line asked for, before any configuration is read.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// `-i`, `--af-packet`, `-q`: live sources (a live run when not empty).
    pub live: Vec<LiveInput>,
    /// `-f`: a BPF filter expression for live capture (over `bpf-filter`).
    pub bpf_filter: Option<String>,
    /// `--user`/`--group`: who a live run becomes once its capture is open.
    pub user: Option<String>,
    pub group: Option<String>,
    /// `-r`: capture files or directories, read in order.
    pub inputs: Vec<PathBuf>,
    /// `-l`: where outputs go (else `default-log-dir`).
    pub log_dir: Option<PathBuf>,
    /// `--data-dir`: where datasets' `save` and `state` files go (else
    /// Suricata's `/var/lib/suricata/data`).
    pub data_dir: Option<PathBuf>,
    /// `-c`: a Suricata-format YAML file (else vigil's built-in defaults).
    pub config: Option<PathBuf>,
    /// `--include`: more YAML merged on top, in order.
    pub includes: Vec<PathBuf>,
    /// `--set key=value`, in order, applied last.
    pub sets: Vec<String>,
    /// `-k`: `none`, `all` or `auto`.
    pub checksum: Option<String>,
    /// `-S`: rule files that replace the configured ones.
    pub exclusive_rules: Vec<PathBuf>,
    /// `-s`: rule files added to the configured ones.
    pub extra_rules: Vec<PathBuf>,
    /// `--disable-detection`.
    pub disable_detection: bool,
    /// `--firewall`: firewall mode, with the configured `firewall.rule-files`.
    pub firewall: bool,
    /// `--firewall-rules-exclusive`: firewall mode with only this rule file.
    pub firewall_rules: Option<PathBuf>,
    /// `--engine-analysis`: keep, for each signature, what `rules.json` says of it.
    pub engine_analysis: bool,
    /// `--simulate-ips`: act as if inline (no effect until detection can drop).
    pub simulate_ips: bool,
    /// `--simulate-packet-*`: limits pretended reached at chosen packets.
    pub simulate: crate::Simulation,
    /// `--simulate-applayer-error-at-offset-ts`/`-tc`: a parser fails once
    /// that direction's stream reaches the offset.
    pub simulate_applayer_error: PerDir<Option<u64>>,
    /// The DNS EVE format for every output, over the configuration's
    /// (Suricata's `SURICATA_EVE_DNS_VERSION`).
    pub eve_dns_version: Option<u8>,
    /// `--init-errors-fatal`: any configuration error stops the run.
    pub init_errors_fatal: bool,
    /// `--runmode`.
    pub runmode: Option<String>,
    /// `--threads`: workers for `autofp`/`workers` (else one per CPU).
    pub threads: Option<usize>,
    /// Live capture's policy on a file: a full worker ring drops frames
    /// (counted in `capture.kernel_drops`) instead of making the reader wait. For
    /// the lab and tests; reading files never drops otherwise.
    pub drop_when_full: bool,
    /// Stats-now and stop requests (from signals, or from a test).
    pub control: crate::control::Control,
    /// `-v` count.
    pub verbose: u8,
    /// `--pcap-file-continuous`, `--pcap-file-delete`,
    /// `--pcap-file-recursive`: set over the `pcap-file` section.
    pub pcap_continuous: bool,
    /// `--reject-dev`: live refusals go out of this interface at layer 2.
    pub reject_dev: Option<String>,
    pub pcap_delete: bool,
    pub pcap_recursive: bool,
}
