//! `vigil -T`: load the configuration and the rules as a run would, report
//! what is wrong, and exit without reading packets: status 1 on a
//! configuration error (fatal ones, or any with `--init-errors-fatal`) or a
//! rule that does not parse, 0 otherwise. Rules that parse but use keywords
//! the engine does not run yet are valid rules, as in `vigil rules check`.

use crate::cli::RunArgs;
use std::process::ExitCode;

pub(crate) fn run(args: &RunArgs) -> ExitCode {
    let Some(setup) = crate::setup_or_report(&args.to_options()) else { return ExitCode::FAILURE };
    let rules = &setup.rules;
    if rules.failed > 0 {
        eprintln!("vigil: {} of {} rules failed to load", rules.failed, rules.rules);
        return ExitCode::FAILURE;
    }
    if !args.quiet {
        eprintln!("vigil: configuration OK ({})", rules.summary_line());
    }
    ExitCode::SUCCESS
}
