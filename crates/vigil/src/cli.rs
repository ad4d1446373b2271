use clap::{ArgAction, Args, Parser, Subcommand};
use std::path::PathBuf;
use vigil_engine::RunOptions;

/// vigil: a network intrusion detection engine that reads Suricata's
/// configuration and writes Suricata's EVE JSON.
///
/// Read a capture:   vigil -r capture.pcap -l logs/
/// With a config:    vigil -c suricata.yaml -r captures/ -l logs/ -k none
/// Try it out:       vigil demo -l /tmp/vigil-demo
#[derive(Parser, Debug)]
#[command(name = "vigil", disable_version_flag = true, args_conflicts_with_subcommands = true, verbatim_doc_comment)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Process captures (the same as giving the flags without a subcommand).
    Run(Box<RunArgs>),
    /// Generate a small demo capture with vigil's own packet builders and process it.
    Demo(DemoArgs),
    /// Work with rule files.
    #[command(subcommand)]
    Rules(RulesCommand),
    Gen(crate::lab_cmd::GenArgs),
    /// Measure the engine (the traffic lab).
    #[command(subcommand)]
    Bench(crate::lab_cmd::BenchCommand),
}

#[derive(Subcommand, Debug)]
pub enum RulesCommand {
    /// Load rule files and report exactly what would run: loaded, failed
    /// (each error with file:line:column), unsupported keywords, disabled.
    ///
    /// Check a ruleset:     vigil rules check -S emerging-all.rules
    /// With a config:       vigil rules check -c suricata.yaml -s local.rules
    /// For tools:           vigil rules check -S a.rules --json
    #[command(verbatim_doc_comment)]
    Check(RulesCheckArgs),
}

#[derive(Args, Debug, Default)]
pub struct RulesCheckArgs {
    /// Load only these rule files, not the config's `rule-files`.
    #[arg(short = 'S', value_name = "FILE", num_args = 1..)]
    pub exclusive: Vec<PathBuf>,
    /// Load these rule files in addition to the config's `rule-files`.
    #[arg(short = 's', value_name = "FILE", num_args = 1..)]
    pub extra: Vec<PathBuf>,
    /// Suricata-format YAML configuration: `vars`, `rule-files`, `default-rule-path`,
    /// `classification-file`, `reference-config-file`, `threshold-file`.
    #[arg(short = 'c', value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Exit with status 1 when any rule or support file has an error.
    #[arg(long)]
    pub strict: bool,
}

#[derive(Args, Debug, Default)]
pub struct RunArgs {
    /// Read packets from a pcap/pcapng file, or from every file in a directory in name order.
    #[arg(short = 'r', value_name = "PATH")]
    pub read: Vec<PathBuf>,
    /// Capture live from this interface through AF_PACKET (repeatable).
    #[arg(short = 'i', value_name = "IFACE")]
    pub iface: Vec<String>,
    /// Capture through AF_PACKET: from this interface, or from every
    /// interface of the `af-packet` section when none is given.
    #[arg(long = "af-packet", value_name = "IFACE", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    pub af_packet: Option<String>,
    /// Capture live from this interface, Suricata's libpcap mode; vigil
    /// captures through AF_PACKET instead (said at start-up). Without a
    /// name: every interface of the `pcap` section.
    #[arg(long = "pcap", value_name = "IFACE", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    pub pcap: Option<String>,
    /// The unix-socket runmode: load the rules, then read the capture
    /// files queued on the control socket (`suricatasc -c "pcap-file FILE
    /// OUTDIR"`) until `shutdown`. The socket is FILE, else as
    /// `unix-command.filename` says (under /var/run/suricata/).
    #[arg(long = "unix-socket", value_name = "FILE", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    pub unix_socket: Option<PathBuf>,
    /// With -r and a directory: watch it for new files until stopped
    /// (`pcap-file.continuous`; files wait `pcap-file.delay` seconds to settle).
    #[arg(long)]
    pub pcap_file_continuous: bool,
    /// Delete each capture file once it has been read to its end (`pcap-file.delete-when-done`).
    #[arg(long)]
    pub pcap_file_delete: bool,
    /// With -r and a directory: read its sub-directories too (`pcap-file.recursive`).
    #[arg(long)]
    pub pcap_file_recursive: bool,
    /// Send `reject` refusals out of this interface at layer 2 (live
    /// capture; by default the host routes them).
    #[arg(long, value_name = "DEV")]
    pub reject_dev: Option<String>,
    /// Suricata's data directory (datasets' files); vigil keeps no data
    /// files yet, so it is only checked and said at start-up.
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Run inline on this NFQUEUE queue (repeatable: one worker per queue).
    #[arg(short = 'q', value_name = "QUEUE")]
    pub nfq: Vec<u16>,
    /// Live capture filter, a tcpdump expression (over `bpf-filter`).
    #[arg(short = 'f', value_name = "EXPR")]
    pub bpf: Option<String>,
    /// Live capture filter read from a file.
    #[arg(short = 'F', value_name = "FILE")]
    pub bpf_file: Option<PathBuf>,
    /// A capture filter after the options, as Suricata takes it
    /// (`vigil -r in.pcap tcp port 80`); the same as `-f`.
    #[arg(value_name = "BPF FILTER", trailing_var_arg = true, conflicts_with_all = ["bpf", "bpf_file"])]
    pub bpf_words: Vec<String>,
    /// After opening the capture, run as this user (live capture).
    #[arg(long, value_name = "USER")]
    pub user: Option<String>,
    /// After opening the capture, run as this group (live capture).
    #[arg(long, value_name = "GROUP")]
    pub group: Option<String>,
    /// Write outputs (eve.json, ...) to this directory (default: `default-log-dir` of the config).
    #[arg(short = 'l', value_name = "DIR")]
    pub log_dir: Option<PathBuf>,
    /// Suricata-format YAML configuration (default: vigil's built-in copy of Suricata's defaults).
    #[arg(short = 'c', value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Checksum validation: `none` (off), `all` (on), `auto` (on unless most early packets fail).
    #[arg(short = 'k', value_name = "MODE", value_parser = ["none", "all", "auto"])]
    pub checksum: Option<String>,
    /// Override a configuration key, e.g. `--set stream.midstream=true` (repeatable, applied last).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Merge another YAML file over the configuration (repeatable).
    #[arg(long = "include", value_name = "FILE")]
    pub include: Vec<PathBuf>,
    /// Load only these rule files, not the configuration's `rule-files` (repeatable).
    #[arg(short = 'S', value_name = "FILE")]
    pub rules_exclusive: Vec<PathBuf>,
    /// Load these rule files in addition to the configuration's `rule-files` (repeatable).
    #[arg(short = 's', value_name = "FILE")]
    pub rules: Vec<PathBuf>,
    /// Run without detection: decode and log only.
    #[arg(long)]
    pub disable_detection: bool,
    /// Firewall mode, with the configuration's `firewall.rule-files`.
    #[arg(long)]
    pub firewall: bool,
    /// Firewall mode with only this firewall rule file.
    #[arg(long, value_name = "FILE")]
    pub firewall_rules_exclusive: Option<PathBuf>,
    /// Behave as an inline IPS would (drop rules drop), while reading a capture.
    #[arg(long)]
    pub simulate_ips: bool,
    /// Pretend the flow memcap is reached when packet N needs a new flow.
    #[arg(long, value_name = "N", help_heading = "QA simulation (exception policies)")]
    pub simulate_packet_flow_memcap: Option<u64>,
    /// Pretend `stream.memcap` is reached when packet N would start a TCP session.
    #[arg(long, value_name = "N", help_heading = "QA simulation (exception policies)")]
    pub simulate_packet_tcp_ssn_memcap: Option<u64>,
    /// Pretend `stream.reassembly.memcap` is reached by packet N's payload.
    #[arg(long, value_name = "N", help_heading = "QA simulation (exception policies)")]
    pub simulate_packet_tcp_reassembly_memcap: Option<u64>,
    /// Pretend `defrag.memcap` is reached when packet N starts a datagram.
    #[arg(long, value_name = "N", help_heading = "QA simulation (exception policies)")]
    pub simulate_packet_defrag_memcap: Option<u64>,
    /// Pretend a parser error once the to-server stream reaches offset N.
    #[arg(long, value_name = "N", help_heading = "QA simulation (exception policies)")]
    pub simulate_applayer_error_at_offset_ts: Option<u64>,
    /// Pretend a parser error once the to-client stream reaches offset N.
    #[arg(long, value_name = "N", help_heading = "QA simulation (exception policies)")]
    pub simulate_applayer_error_at_offset_tc: Option<u64>,
    /// Stop on any configuration error instead of warning and using the default.
    #[arg(long)]
    pub init_errors_fatal: bool,
    /// Threading model: `single` (one thread), `autofp` or `workers` (a reader
    /// spreads flows over worker threads; the same for files).
    #[arg(long, value_name = "MODE")]
    pub runmode: Option<String>,
    /// Worker threads for `autofp`/`workers` (default: one per CPU times
    /// `threading.detect-thread-ratio`).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// More output on stderr (repeat for more).
    #[arg(short = 'v', action = ArgAction::Count)]
    pub verbose: u8,
    /// No progress bar and no summary.
    #[arg(long)]
    pub quiet: bool,
    /// List the rule keywords (Suricata 8's, then vigil's own) and whether
    /// vigil runs each: names only, `all` (with descriptions), `csv`, or one
    /// keyword by name.
    #[arg(long, value_name = "all|csv|NAME", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    pub list_keywords: Option<String>,
    /// List the runmodes vigil has for each way of capturing, as Suricata's table.
    #[arg(long)]
    pub list_runmodes: bool,
    /// List the application-layer protocols vigil parses (those it does not
    /// yet are named on stderr).
    #[arg(long)]
    pub list_app_layer_protos: bool,
    /// List the hooks firewall rules can use (`ssh:request_banner_done`), per protocol vigil parses.
    #[arg(long)]
    pub list_app_layer_hooks: bool,
    /// Run in the background (as a daemon): returns once the run has
    /// started (with `--pidfile`, once it has written its pid).
    #[arg(short = 'D')]
    pub daemon: bool,
    /// Write the run's process id to this file, and remove it at the end;
    /// refused when the file names a running process.
    #[arg(long, value_name = "FILE")]
    pub pidfile: Option<PathBuf>,
    /// Print the version: the Suricata release vigil follows, then vigil's own.
    #[arg(short = 'V', long = "version")]
    pub version: bool,
    /// Print what this build can do, laid out as Suricata's `--build-info`.
    #[arg(long)]
    pub build_info: bool,
    /// Print the configuration a run would use (`-c`, `--include`, `--set`),
    /// one `key = value` line per node, as Suricata's `--dump-config`.
    #[arg(long)]
    pub dump_config: bool,
    /// Print vigil's default configuration (Suricata format) and exit.
    #[arg(long)]
    pub dump_default_config: bool,
    /// Load the configuration and the rules, write what kind of signature each
    /// rule is to `rules.json` in the log directory, and exit without reading packets.
    #[arg(long)]
    pub engine_analysis: bool,
    /// Test the configuration and the rules, then exit: status 1 on a
    /// configuration error or a rule that does not parse.
    #[arg(short = 'T')]
    pub test_config: bool,
    /// Treat unknown rule keywords as errors (Suricata's switch; vigil always
    /// does, for every keyword, so the list is accepted and not needed).
    #[arg(long, value_name = "KEYWORDS", num_args = 0..=1, require_equals = true, default_missing_value = "all")]
    pub strict_rule_keywords: Option<String>,
    /// Suricata's switch to stop randomizing (hash seeds, stream chunk
    /// sizes). Nothing random reaches vigil's output (its hash tables'
    /// seeds decide no record), so runs repeat anyway; the switch is
    /// accepted for scripts that pass it.
    #[arg(long)]
    pub no_random: bool,
}

impl RunArgs {
    pub fn to_options(&self) -> RunOptions {
        RunOptions {
            inputs: self.read.clone(),
            data_dir: self.data_dir.clone(),
            live: self
                .iface
                .iter()
                .map(|i| vigil_engine::LiveInput::AfPacket(i.clone()))
                .chain(self.nfq.iter().map(|q| vigil_engine::LiveInput::Nfq(*q)))
                .collect(),
            bpf_filter: self.bpf.clone().or_else(|| (!self.bpf_words.is_empty()).then(|| self.bpf_words.join(" "))),
            user: self.user.clone(),
            group: self.group.clone(),
            log_dir: self.log_dir.clone(),
            config: self.config.clone(),
            includes: self.include.clone(),
            sets: self.set.clone(),
            checksum: self.checksum.clone(),
            exclusive_rules: self.rules_exclusive.clone(),
            extra_rules: self.rules.clone(),
            disable_detection: self.disable_detection,
            firewall: self.firewall,
            firewall_rules: self.firewall_rules_exclusive.clone(),
            engine_analysis: self.engine_analysis,
            simulate_ips: self.simulate_ips,
            simulate: vigil_engine::Simulation {
                flow_memcap: self.simulate_packet_flow_memcap,
                tcp_ssn_memcap: self.simulate_packet_tcp_ssn_memcap,
                tcp_reassembly_memcap: self.simulate_packet_tcp_reassembly_memcap,
                defrag_memcap: self.simulate_packet_defrag_memcap,
            },
            simulate_applayer_error: vigil_types::PerDir {
                to_server: self.simulate_applayer_error_at_offset_ts,
                to_client: self.simulate_applayer_error_at_offset_tc,
            },
            init_errors_fatal: self.init_errors_fatal,
            runmode: self.runmode.clone(),
            threads: self.threads,
            drop_when_full: false,
            control: vigil_engine::Control::default(),
            verbose: self.verbose,
            pcap_continuous: self.pcap_file_continuous,
            pcap_delete: self.pcap_file_delete,
            pcap_recursive: self.pcap_file_recursive,
            reject_dev: self.reject_dev.clone(),
            // Suricata's override of every eve-log's DNS format, read here at the edge.
            eve_dns_version: std::env::var("SURICATA_EVE_DNS_VERSION").ok().and_then(|v| v.trim().parse().ok()),
        }
    }
}

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Directory for demo.pcap and the outputs (created if missing).
    #[arg(short = 'l', value_name = "DIR", default_value = "vigil-demo")]
    pub log_dir: PathBuf,
    /// No progress bar and no summary.
    #[arg(short = 'q', long)]
    pub quiet: bool,
}
