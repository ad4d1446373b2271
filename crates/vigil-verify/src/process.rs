//! Running child processes with a deadline.
//!
//! Every child gets its own process group so a timeout can take down whatever it
//! started too (a `command:` line is a shell pipeline), not only the direct child.

use std::io;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// How a child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// The exit code, or minus the signal number when a signal ended it (as Python's
    /// `Popen.returncode` reports it, so `exit-code:` values compare the same way).
    Code(i32),
    TimedOut,
}

/// Spawns `cmd` in a new process group and waits at most `timeout`.
pub fn run(cmd: &mut Command, timeout: Duration) -> io::Result<Exit> {
    cmd.process_group(0);
    let mut child = cmd.spawn()?;
    let deadline = Instant::now() + timeout;
    let mut pause = Duration::from_millis(1);
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Exit::Code(code_of(status)));
        }
        let now = Instant::now();
        if now >= deadline {
            kill_group(child.id());
            let _ = child.kill();
            let _ = child.wait();
            return Ok(Exit::TimedOut);
        }
        thread::sleep(pause.min(deadline - now));
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

fn code_of(status: ExitStatus) -> i32 {
    status.code().or_else(|| status.signal().map(|s| -s)).unwrap_or(-1)
}

/// Sends SIGKILL to the group led by `pid` (the child, since it called `setpgid(0, 0)`).
fn kill_group(pid: u32) {
    // The shell's `kill` takes a negative id for a group; std has no such call.
    let _ = Command::new("sh")
        .args(["-c", "kill -KILL -- \"-$1\" 2>/dev/null", "sh", &pid.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// `sh -c script` in `cwd` with `env`, no input and its errors dropped.
fn sh(script: &str, cwd: &Path, env: &[(String, String)]) -> Command {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(script)
        .current_dir(cwd)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stderr(Stdio::null());
    cmd
}

/// Runs a shell snippet (`requires: script`, `setup:`, `pre-check:`) quietly.
pub fn shell(script: &str, cwd: &Path, env: &[(String, String)], timeout: Duration) -> io::Result<Exit> {
    run(sh(script, cwd, env).stdout(Stdio::null()), timeout)
}

/// Runs a `shell:` check's command in `cwd`: how it ended and what it
/// printed (kept in a scratch file, not the output directory the check
/// may be looking at).
pub fn shell_output(
    script: &str,
    cwd: &Path,
    env: &[(String, String)],
    timeout: Duration,
) -> io::Result<(Exit, String)> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let tmp = std::env::temp_dir().join(format!("vigil-verify-shell-{}-{n}", std::process::id()));
    let out = std::fs::File::create(&tmp)?;
    let exit = run(sh(script, cwd, env).stdout(out), timeout);
    let text = std::fs::read(&tmp).map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default();
    let _ = std::fs::remove_file(&tmp);
    Ok((exit?, text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_and_signals() {
        let dir = std::env::temp_dir();
        let t = Duration::from_secs(10);
        assert_eq!(shell("exit 3", &dir, &[], t).unwrap(), Exit::Code(3));
        assert_eq!(shell("kill -TERM $$", &dir, &[], t).unwrap(), Exit::Code(-15));
        let env = [("VV".to_string(), "7".to_string())];
        assert_eq!(shell("exit $VV", &dir, &env, t).unwrap(), Exit::Code(7));
    }

    #[test]
    fn timeout_kills_the_whole_group() {
        let dir = std::env::temp_dir();
        let start = Instant::now();
        // The background sleep would keep running if only `sh` were killed.
        let exit = shell("sleep 30 & sleep 30", &dir, &[], Duration::from_millis(200)).unwrap();
        assert_eq!(exit, Exit::TimedOut);
        assert!(start.elapsed() < Duration::from_secs(10));
    }
}
