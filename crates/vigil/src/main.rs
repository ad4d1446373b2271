//! The `vigil` command line, in Suricata's habits: `vigil -r capture.pcap -l
//! logdir [-c suricata.yaml] [-k none] [--set key=value]...`.

mod build_info;
mod capacity_cmd;
mod cli;
mod daemon;
mod demo;
mod lab_cmd;
mod list_cmd;
mod live;
mod progress;
mod rules_check;
mod test_config;
mod unix_socket;

use clap::Parser;
use std::process::ExitCode;

// jemalloc: with several workers glibc's malloc takes a lock per call that
// a single thread skips, and the workers' extra CPU went there (README, "Allocator").
#[cfg(feature = "jemalloc")]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    match cli.command {
        Some(cli::Command::Demo(args)) => demo::run(&args),
        Some(cli::Command::Run(args)) => run(&args),
        Some(cli::Command::Rules(cli::RulesCommand::Check(args))) => rules_check::run(&args),
        Some(cli::Command::Gen(args)) => lab_cmd::gen(&args),
        Some(cli::Command::Bench(cmd)) => lab_cmd::bench(&cmd),
        None => run(&cli.run),
    }
}

/// Writes a listing to stdout; a reader that stops early (`| head`) is not an error.
fn print_all(text: &str) {
    let _ = std::io::Write::write_all(&mut std::io::stdout().lock(), text.as_bytes());
}

fn run(args: &cli::RunArgs) -> ExitCode {
    if args.dump_default_config {
        print_all(vigil_engine::DEFAULT_YAML);
        return ExitCode::SUCCESS;
    }
    if args.version {
        print_all(&format!("{}\n", build_info::version_line()));
        return ExitCode::SUCCESS;
    }
    if args.build_info {
        print_all(&build_info::build_info());
        return ExitCode::SUCCESS;
    }
    if args.dump_config {
        return match vigil_engine::config_tree(&args.to_options()) {
            Ok(tree) => {
                print_all(&tree.dump());
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("vigil: {e}");
                ExitCode::FAILURE
            }
        };
    }
    if let Some(format) = &args.list_keywords {
        return list_cmd::list_keywords(&list_cmd::Format::parse(format));
    }
    if args.list_app_layer_protos {
        return list_cmd::list_app_layer_protos();
    }
    if args.list_app_layer_hooks {
        print_all(&(list_cmd::app_layer_hooks().join("\n") + "\n"));
        return ExitCode::SUCCESS;
    }
    if args.list_runmodes {
        print_all(&list_cmd::runmodes());
        return ExitCode::SUCCESS;
    }
    if args.test_config {
        return test_config::run(args);
    }
    if args.engine_analysis {
        return engine_analysis(args);
    }
    if args.daemon {
        return daemon::background(args.pidfile.as_deref());
    }
    // Held until the run ends, then removed.
    let _pidfile = match args.pidfile.as_deref().map(daemon::PidFile::create).transpose() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("vigil: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut opts = args.to_options();
    if let Some(dir) = &args.data_dir {
        if !dir.is_dir() {
            eprintln!("vigil: --data-dir {}: not a directory", dir.display());
            return ExitCode::from(2);
        }
    }
    if let Some(iface) = &args.af_packet {
        // Empty: every interface of the `af-packet` section.
        opts.live.push(vigil_engine::LiveInput::AfPacket(iface.clone()));
    }
    if let Some(iface) = &args.pcap {
        match pcap_interfaces(iface, &opts) {
            Ok(list) => {
                eprintln!(
                    "vigil: warning: --pcap: vigil captures through AF_PACKET, not libpcap ({})",
                    list.join(", ")
                );
                opts.live.extend(list.into_iter().map(vigil_engine::LiveInput::AfPacket));
            }
            Err(e) => {
                eprintln!("vigil: --pcap: {e}");
                return ExitCode::from(2);
            }
        }
    }
    if let Some(file) = &args.bpf_file {
        match std::fs::read_to_string(file) {
            // Comments and line breaks, as tcpdump's -F allows.
            Ok(text) => {
                let expr: Vec<&str> = text.lines().map(|l| l.split('#').next().unwrap_or("").trim()).collect();
                opts.bpf_filter = Some(expr.join(" ").trim().to_string());
            }
            Err(e) => {
                eprintln!("vigil: {}: {e}", file.display());
                return ExitCode::from(2);
            }
        }
    }
    if let Some(socket) = &args.unix_socket {
        if !args.read.is_empty() || !opts.live.is_empty() {
            eprintln!("vigil: --unix-socket takes its capture files from the socket: give no -r, -i or -q");
            return ExitCode::from(2);
        }
        return unix_socket::run(&opts, socket, args.quiet);
    }
    if !opts.live.is_empty() {
        if !args.read.is_empty() {
            eprintln!("vigil: give either captures to read (-r) or live sources (-i, --af-packet, -q), not both");
            return ExitCode::from(2);
        }
        return live::run(&opts, args.quiet);
    }
    if args.read.is_empty() {
        eprintln!(
            "vigil: nothing to read: give a capture file or directory with -r, or an interface with -i (see --help)"
        );
        return ExitCode::from(2);
    }
    if let Some(dev) = &args.reject_dev {
        eprintln!("vigil: warning: --reject-dev {dev}: reading files, no refusal is sent");
    }
    run_options(&opts, args.quiet)
}

/// `--pcap=IFACE`, or every interface of the `pcap` section (its
/// `default` entry holds settings, not an interface).
fn pcap_interfaces(given: &str, opts: &vigil_engine::RunOptions) -> Result<Vec<String>, String> {
    if !given.is_empty() {
        return Ok(vec![given.to_string()]);
    }
    let tree = vigil_engine::config_tree(opts).map_err(|e| e.to_string())?;
    let list: Vec<String> = tree
        .get("pcap")
        .map(|n| {
            n.children()
                .iter()
                .filter_map(|i| i.child_value("interface"))
                .filter(|i| *i != "default")
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    if list.is_empty() {
        return Err("no interface given and none in the pcap section".into());
    }
    Ok(list)
}

/// `--engine-analysis`: `rules.json`, then exit; status 1 when the setup fails.
fn engine_analysis(args: &cli::RunArgs) -> ExitCode {
    let Some(setup) = setup_or_report(&args.to_options()) else { return ExitCode::FAILURE };
    match vigil_engine::write_rules_json(&setup) {
        Ok(path) => {
            if !args.quiet {
                eprintln!("vigil: {} ({})", path.display(), setup.rules.summary_line());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("vigil: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The run's setup, its warnings printed; `None` (error printed) when it fails.
pub(crate) fn setup_or_report(opts: &vigil_engine::RunOptions) -> Option<vigil_engine::Setup> {
    match vigil_engine::setup(opts) {
        Ok(setup) => {
            for w in &setup.warnings {
                eprintln!("vigil: warning: {w}");
            }
            print_verbose(&setup.log, opts.verbose);
            Some(setup)
        }
        Err(e) => {
            eprintln!("vigil: {e}");
            None
        }
    }
}

/// Start-up messages below warnings, as Suricata's `-v` shows them: `-v`
/// info, `-vv` perf, `-vvv` config, `-vvvv` debug (errors and warnings are
/// shown as warnings already).
fn print_verbose(log: &[vigil_engine::LogRecord], verbose: u8) {
    use vigil_config::LogLevel;
    let most = match verbose {
        0 => return,
        1 => LogLevel::Info,
        2 => LogLevel::Perf,
        3 => LogLevel::Config,
        _ => LogLevel::Debug,
    };
    for r in log.iter().filter(|r| r.level > LogLevel::Warning && r.level <= most) {
        eprintln!("vigil: {}: {}: {}", r.level.name(), r.module, r.message);
    }
}

/// Runs with `opts`, printing warnings, progress and the summary to stderr.
pub(crate) fn run_options(opts: &vigil_engine::RunOptions, quiet: bool) -> ExitCode {
    register_signals(&opts.control);
    let Some(setup) = setup_or_report(opts) else { return ExitCode::FAILURE };
    let mut bar = progress::Bar::new(quiet);
    let result = vigil_engine::run_setup(&setup, opts, &mut |p| bar.update(p));
    bar.finish();
    match result {
        Ok(summary) => {
            if !quiet {
                eprint!("{summary}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("vigil: {e}");
            ExitCode::FAILURE
        }
    }
}

/// SIGUSR1: a stats record now. SIGUSR2: read the rules again and swap them
/// in (packets keep flowing; rules with errors are refused). SIGHUP: open the
/// log files again (after a rotation), as Suricata does. SIGINT/SIGTERM:
/// stop reading, inspect what was read, log every flow and the final stats
/// (a second one kills, as the default action would have). Set before the
/// rules load, which takes a while.
pub(crate) fn register_signals(control: &vigil_engine::Control) {
    for (sig, flag) in [
        (signal_hook::consts::SIGUSR1, control.stats_flag()),
        (signal_hook::consts::SIGUSR2, control.reload_flag()),
        (signal_hook::consts::SIGHUP, control.reopen_flag()),
        (signal_hook::consts::SIGINT, control.stop_flag()),
        (signal_hook::consts::SIGTERM, control.stop_flag()),
    ] {
        if sig == signal_hook::consts::SIGINT || sig == signal_hook::consts::SIGTERM {
            if let Err(e) = signal_hook::flag::register_conditional_shutdown(sig, 1, control.stop_flag()) {
                eprintln!("vigil: warning: signal {sig}: {e}");
            }
        }
        if let Err(e) = signal_hook::flag::register(sig, flag) {
            eprintln!("vigil: warning: cannot handle signal {sig}: {e}");
        }
    }
}
