//! `--unix-socket[=FILE]`: Suricata's unix-socket runmode. The rules load
//! once; capture files come through the control socket, and each one's
//! summary is printed as it ends.

use std::path::Path;
use std::process::ExitCode;

pub(crate) fn run(opts: &vigil_engine::RunOptions, socket: &Path, quiet: bool) -> ExitCode {
    crate::register_signals(&opts.control);
    let Some(setup) = crate::setup_or_report(opts) else { return ExitCode::FAILURE };
    let path = vigil_engine::unix_socket_path(&setup, Some(socket));
    if !quiet {
        eprintln!(
            "vigil: waiting for capture files on {} (suricatasc -c \"pcap-file FILE OUTDIR\" {})",
            path.display(),
            path.display()
        );
    }
    let result = vigil_engine::run_unix_socket(&setup, opts, &path, &mut |file, outcome| match outcome {
        Ok(summary) if !quiet => eprint!("vigil: {}:\n{summary}", file.display()),
        Ok(_) => {}
        Err(e) => eprintln!("vigil: {}: {e}", file.display()),
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("vigil: {e}");
            ExitCode::FAILURE
        }
    }
}
