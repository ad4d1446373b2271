//! `-D` (run in the background) and `--pidfile`, as Suricata's init
//! scripts and units use them (`suricata -D --pidfile /run/suricata.pid`).
//!
//! Backgrounding starts vigil again without `-D`, in a process group of
//! its own with its standard streams on /dev/null, and returns once that
//! process has written its pid file (or has stopped, with its status), so
//! a unit of `Type=forking` sees start-up errors. No `fork` is needed:
//! the house keeps `unsafe` out of the binary.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

/// How long the starting process waits for the background one's pid file.
const START_WAIT: Duration = Duration::from_secs(120);

/// Starts vigil in the background with the same arguments but `-D`.
pub fn background(pidfile: Option<&Path>) -> ExitCode {
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("vigil: -D: cannot find the vigil program: {e}");
            return ExitCode::FAILURE;
        }
    };
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).filter(|a| a != "-D").collect();
    let spawned = {
        use std::os::unix::process::CommandExt;
        Command::new(exe)
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
    };
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => {
            eprintln!("vigil: -D: cannot start in the background: {e}");
            return ExitCode::FAILURE;
        }
    };
    let Some(pidfile) = pidfile else { return ExitCode::SUCCESS };
    let start = Instant::now();
    while start.elapsed() < START_WAIT {
        if let Ok(Some(status)) = child.try_wait() {
            // It stopped before (or right after) starting: say how.
            return if status.success() { ExitCode::SUCCESS } else { ExitCode::FAILURE };
        }
        if std::fs::read_to_string(pidfile).is_ok_and(|t| t.trim() == child.id().to_string()) {
            return ExitCode::SUCCESS;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    eprintln!("vigil: -D: no pid file at {} after {} s", pidfile.display(), START_WAIT.as_secs());
    ExitCode::FAILURE
}

/// The pid file, removed when the run ends.
pub struct PidFile(PathBuf);

impl PidFile {
    /// Writes this process's id to `path`; refuses when the file names a
    /// process that is still running (another vigil, or a Suricata).
    pub fn create(path: &Path) -> Result<PidFile, String> {
        if let Ok(text) = std::fs::read_to_string(path) {
            if let Ok(pid) = text.trim().parse::<u32>() {
                if pid != std::process::id() && Path::new(&format!("/proc/{pid}")).exists() {
                    return Err(format!("pid file {} names process {pid}, which is running", path.display()));
                }
            }
        }
        std::fs::write(path, format!("{}\n", std::process::id()))
            .map_err(|e| format!("cannot write the pid file {}: {e}", path.display()))?;
        Ok(PidFile(path.to_path_buf()))
    }
}

impl Drop for PidFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}
