//! `vigil-verify <suite-root>`: runs a suricata-verify suite against vigil and prints
//! `PASS`/`FAIL`/`SKIP` lines, a per-theme table and `N passed, N failed, N skipped`.
//! Exit status: 0 when nothing failed, 1 when a test failed, 2 on usage errors.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use vigil_verify::{run, Options};

#[derive(Parser)]
#[command(name = "vigil-verify", version, about = "Run a suricata-verify suite against vigil")]
struct Cli {
    /// Suite directory (holds tests/, optionally manifest.json and etc/).
    suite_root: PathBuf,
    /// Tests run at once [default: number of CPUs].
    #[arg(long, short = 'j', value_name = "N")]
    jobs: Option<usize>,
    /// Only tests whose path contains SUBSTR (repeatable: any of them).
    #[arg(long = "filter", value_name = "SUBSTR")]
    filters: Vec<String>,
    /// Only tests named in FILE (one per line, # comments).
    #[arg(long, value_name = "FILE")]
    list: Option<PathBuf>,
    /// Write per-test results as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// The vigil binary [default: vigil next to this program, else $PATH].
    #[arg(long, value_name = "PATH")]
    vigil: Option<PathBuf>,
    /// Per-test timeout in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
    timeout: u64,
    /// Keep each test's output directory under DIR.
    #[arg(long, value_name = "DIR")]
    keep_output: Option<PathBuf>,
    /// Passed as -c to tests without their own suricata.yaml.
    #[arg(long, value_name = "FILE")]
    default_config: Option<PathBuf>,
    /// A build feature vigil has, e.g. HAVE_LUA (repeatable).
    #[arg(long = "feature", value_name = "NAME")]
    features: Vec<String>,
    /// No progress lines on stderr.
    #[arg(long, short)]
    quiet: bool,
}

fn main() -> ExitCode {
    // clap exits with status 2 on usage errors.
    let cli = Cli::parse();
    let opts = Options {
        vigil: cli.vigil,
        jobs: cli.jobs.unwrap_or(0),
        filters: cli.filters,
        list: cli.list,
        timeout: Duration::from_secs(cli.timeout),
        keep_output: cli.keep_output,
        default_config: cli.default_config,
        features: cli.features,
        progress: !cli.quiet,
        ..Options::new(cli.suite_root)
    };
    let summary = match run(&opts) {
        Ok(summary) => summary,
        Err(e) => {
            eprintln!("vigil-verify: {e}");
            return ExitCode::from(2);
        }
    };
    print!("{}", summary.render());
    if let Some(path) = cli.json {
        if let Err(e) = std::fs::write(&path, summary.to_json()) {
            eprintln!("vigil-verify: writing {}: {e}", path.display());
            return ExitCode::from(2);
        }
    }
    if summary.all_passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
