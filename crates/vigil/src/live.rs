//! `vigil -i IFACE`, `--af-packet`, `-q QUEUE`: live capture and inline
//! prevention, with a status line of the counters that matter (received,
//! dropped by the kernel, inspected, alerts) once a second.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

pub fn run(opts: &vigil_engine::RunOptions, quiet: bool) -> ExitCode {
    crate::register_signals(&opts.control);
    let Some(setup) = crate::setup_or_report(opts) else { return ExitCode::FAILURE };
    let tty = std::io::stderr().is_terminal();
    let mut shown = false;
    let result = vigil_engine::run_live(&setup, opts, &mut |s| {
        if quiet || !tty {
            return;
        }
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\r\x1b[Kreceived {}  dropped {}  inspected {}  alerts {}",
            s.received, s.dropped, s.inspected, s.alerts
        );
        let _ = err.flush();
        shown = true;
    });
    if shown {
        eprintln!();
    }
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
