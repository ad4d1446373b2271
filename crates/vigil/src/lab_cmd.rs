//! `vigil gen` and `vigil bench offline`: the traffic lab's commands
//! (the work is in `vigil-lab`; this is their command line).

use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use vigil_lab::gen::options::{Amount, Encap, GenOptions, IpMix, MalProto, Profile, SizeSpec};
use vigil_lab::gen::{self, OutputPaths};
use vigil_lab::offline::{self, BenchOptions};

/// Generate deterministic synthetic traffic, with rules and ground truth (same seed, same bytes)
///
/// Mixed traffic:      vigil gen -o out.pcap --flows 1000
/// Jumbo, fragmented:  vigil gen -o out.pcap --size fixed:9000 --mtu 1500 --ip mix
/// Tunneled:           vigil gen -o out.pcap --encap vxlan --profile enterprise
/// With ground truth:  vigil gen -o out.pcap --malicious 5   (writes out.rules, out.truth.json)
#[derive(Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct GenArgs {
    /// The pcap to write.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,
    /// Seed of the generator.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// At least this many packets (whole flows; default 10000).
    #[arg(long, value_name = "N", conflicts_with = "flows")]
    pub packets: Option<u64>,
    /// Exactly this many flows (synscan: probes).
    #[arg(long, value_name = "N")]
    pub flows: Option<u64>,
    /// IP version of the flows: v4, v6 or mix.
    #[arg(long, value_name = "VERSION", default_value = "v4")]
    pub ip: IpMix,
    /// IP size of bulk-data packets: fixed:N, uniform:A-B or imix.
    #[arg(long, value_name = "SPEC", default_value = "imix")]
    pub size: SizeSpec,
    /// Senders' MTU (256..=9000): larger datagrams are fragmented.
    #[arg(long, value_name = "N", default_value_t = 1500)]
    pub mtu: usize,
    /// Encapsulation: none, vlan, gre, erspan2, erspan3 or vxlan.
    #[arg(long, value_name = "KIND", default_value = "none")]
    pub encap: Encap,
    /// Traffic profile: mixed, enterprise, synscan, udp or icmp.
    #[arg(long, value_name = "NAME", default_value = "mixed")]
    pub profile: Profile,
    /// Percent of flows (0..100) that carry a malicious marker.
    #[arg(long, value_name = "P", default_value_t = 0.0)]
    pub malicious: f64,
    /// Protocols of the malicious flows: tcp, udp, icmp or all.
    #[arg(long, value_name = "PROTO", default_value = "all")]
    pub malicious_proto: MalProto,
    /// Rules file for the markers (default: beside the pcap, `.rules`).
    #[arg(long, value_name = "FILE")]
    pub rules: Option<PathBuf>,
    /// Ground-truth file (default: beside the pcap, `.truth.json`).
    #[arg(long, value_name = "FILE")]
    pub truth: Option<PathBuf>,
    /// No summary.
    #[arg(short = 'q', long)]
    pub quiet: bool,
}

#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Read a capture into memory once and run it through the engine N times:
    /// packets/s, Gbit/s (per wall and CPU second), alerts, and the time split
    /// between decode, flow+stream, app-layer and detection (measured by
    /// running the same input with stages switched off and subtracting).
    ///
    /// vigil bench offline -r out.pcap -S out.rules --repeat 5
    #[command(verbatim_doc_comment)]
    Offline(BenchOfflineArgs),
    /// The zero-drop capacity sweep: live capture on a veth pair in network
    /// namespaces of its own, traffic replayed at each offered rate.
    Capacity(crate::capacity_cmd::CapacityArgs),
    /// The capacity sweep's paced sender (run inside its sending namespace).
    #[command(hide = true)]
    Send(crate::capacity_cmd::SendArgs),
    /// The capacity self-check's count-only receiver.
    #[command(hide = true)]
    Null(crate::capacity_cmd::NullArgs),
}

#[derive(Args, Debug)]
pub struct BenchOfflineArgs {
    /// The capture to read.
    #[arg(short = 'r', value_name = "PCAP")]
    pub read: PathBuf,
    /// Load only these rule files.
    #[arg(short = 'S', value_name = "FILE")]
    pub rules: Vec<PathBuf>,
    /// Suricata-format YAML configuration.
    #[arg(short = 'c', value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Override a configuration key (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Checksum validation: none, all or auto.
    #[arg(short = 'k', value_name = "MODE", value_parser = ["none", "all", "auto"])]
    pub checksum: Option<String>,
    /// Passes per configuration.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub repeat: u32,
    /// Skip the stage-split runs (only the full pipeline is measured).
    #[arg(long)]
    pub no_split: bool,
    /// Where the runs' outputs go (default: a directory under the system temp dir).
    #[arg(short = 'l', value_name = "DIR")]
    pub log_dir: Option<PathBuf>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Compare with another engine, `NAME=COMMAND` (repeatable): vigil and
    /// each engine run as processes in turn, `--repeat` times, the command
    /// by `sh -c` with `{pcap}` the capture and `{log}` a log directory;
    /// processing is each run less a run on the capture's first packet alone
    /// (start-up apart), e.g. `suricata=./suricata -c suricata.yaml -S et.rules
    /// -r {pcap} -l {log} -k none --runmode single`.
    #[arg(long = "engine", value_name = "NAME=COMMAND")]
    pub engines: Vec<String>,
}

pub fn gen(args: &GenArgs) -> ExitCode {
    let amount = match (args.packets, args.flows) {
        (_, Some(n)) => Amount::Flows(n),
        (Some(n), None) => Amount::Packets(n),
        (None, None) => Amount::Packets(10_000),
    };
    let opts = GenOptions {
        seed: args.seed,
        amount,
        ip: args.ip,
        size: args.size,
        mtu: args.mtu,
        encap: args.encap,
        profile: args.profile,
        malicious: args.malicious,
        malicious_proto: args.malicious_proto,
    };
    if let Err(e) = opts.validate() {
        eprintln!("vigil gen: {e}");
        return ExitCode::from(2);
    }
    let paths = OutputPaths::beside(&args.output, args.rules.clone(), args.truth.clone());
    match gen::write_files(&opts, &paths) {
        Ok(t) => {
            if !args.quiet {
                eprintln!(
                    "vigil gen: {} packets, {} bytes, {} flows ({} malicious, {} marked packets), {} datagrams fragmented",
                    t.frames,
                    t.bytes,
                    t.flows,
                    t.malicious_flows,
                    t.malicious.iter().sum::<u64>(),
                    t.fragmented
                );
                eprintln!("  capture        {}", paths.pcap.display());
                eprintln!("  rules          {}", paths.rules.display());
                eprintln!("  truth          {}", paths.truth.display());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("vigil gen: {e}");
            ExitCode::FAILURE
        }
    }
}

pub fn bench(cmd: &BenchCommand) -> ExitCode {
    let args = match cmd {
        BenchCommand::Offline(args) => args,
        BenchCommand::Capacity(args) => return crate::capacity_cmd::capacity(args),
        BenchCommand::Send(args) => return crate::capacity_cmd::send(args),
        BenchCommand::Null(args) => return crate::capacity_cmd::null(args),
    };
    let opts = BenchOptions {
        input: args.read.clone(),
        rules: args.rules.clone(),
        config: args.config.clone(),
        sets: args.set.clone(),
        checksum: args.checksum.clone(),
        repeat: args.repeat,
        split: !args.no_split,
        log_dir: args
            .log_dir
            .clone()
            .unwrap_or_else(|| std::env::temp_dir().join(format!("vigil-bench-{}", std::process::id()))),
    };
    if !args.engines.is_empty() {
        return compare(args, &opts);
    }
    match offline::run(&opts) {
        Ok(report) => {
            if args.json {
                println!("{}", serde_json::to_string_pretty(&report.to_json()).unwrap_or_default());
            } else {
                print!("{}", report.table());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("vigil bench offline: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `bench offline --engine`: vigil and the other engines as processes, in turn.
fn compare(args: &BenchOfflineArgs, opts: &BenchOptions) -> ExitCode {
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("vigil bench offline: cannot find this program: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut engines = vec![vigil_lab::compare::vigil_command(&exe, opts)];
    for e in &args.engines {
        match vigil_lab::compare::EngineCmd::parse(e) {
            Ok(e) => engines.push(e),
            Err(e) => {
                eprintln!("vigil bench offline: --engine: {e}");
                return ExitCode::from(2);
            }
        }
    }
    match vigil_lab::compare::compare(&opts.input, &engines, opts.repeat, &opts.log_dir) {
        Ok(c) => {
            print!("{}", c.table());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("vigil bench offline: {e}");
            ExitCode::FAILURE
        }
    }
}
