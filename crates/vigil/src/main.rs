//! The `vigil` command line, in Suricata's habits: `vigil -r capture.pcap -l
//! logdir [-c suricata.yaml] [-k none] [--set key=value]...`.

mod cli;
mod demo;
mod progress;
mod rules_check;
mod test_config;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    match cli.command {
        Some(cli::Command::Demo(args)) => demo::run(&args),
        Some(cli::Command::Run(args)) => run(&args),
        Some(cli::Command::Rules(cli::RulesCommand::Check(args))) => rules_check::run(&args),
        None => run(&cli.run),
    }
}

fn run(args: &cli::RunArgs) -> ExitCode {
    if args.dump_default_config {
        print!("{}", vigil_engine::DEFAULT_YAML);
        return ExitCode::SUCCESS;
    }
    if args.test_config {
        return test_config::run(args);
    }
    if args.read.is_empty() {
        eprintln!("vigil: nothing to read: give a capture file or directory with -r (see --help)");
        return ExitCode::from(2);
    }
    let opts = args.to_options();
    run_options(&opts, args.quiet)
}

/// The run's setup, its warnings printed; `None` (error printed) when it fails.
pub(crate) fn setup_or_report(opts: &vigil_engine::RunOptions) -> Option<vigil_engine::Setup> {
    match vigil_engine::setup(opts) {
        Ok(setup) => {
            for w in &setup.warnings {
                eprintln!("vigil: warning: {w}");
            }
            Some(setup)
        }
        Err(e) => {
            eprintln!("vigil: {e}");
            None
        }
    }
}

/// Runs with `opts`, printing warnings, progress and the summary to stderr.
pub(crate) fn run_options(opts: &vigil_engine::RunOptions, quiet: bool) -> ExitCode {
    // SIGUSR1: a stats record now. SIGUSR2: read the rules again and swap
    // them in (packets keep flowing; rules with errors are refused).
    // SIGINT/SIGTERM: stop reading, inspect what was read, log every flow and
    // the final stats (a second one kills, as the default action would have).
    // Set before the rules load, which takes a while.
    let control = &opts.control;
    for (sig, flag) in [
        (signal_hook::consts::SIGUSR1, control.stats_flag()),
        (signal_hook::consts::SIGUSR2, control.reload_flag()),
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
