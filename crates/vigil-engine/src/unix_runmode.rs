//! The `unix-socket` runmode (`vigil --unix-socket[=PATH]`), as Suricata's:
//! the engine starts and loads its rules once, then waits on its control
//! socket for capture files. Each one queued with `pcap-file` (a file, or a
//! directory, watched with `continuous`) is read as `-r` would read it, into
//! the output directory given with it, one after another; flows do not
//! carry over from one to the next. Rule reloads are applied between files.

use crate::error::EngineError;
use crate::options::RunOptions;
use crate::run::Reload;
use crate::setup::Setup;
use crate::socket::ControlSocket;
use crate::socket_commands::{existing, nok, ok, Facts};
use crate::summary::Summary;
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, UNIX_EPOCH};

/// How long the runner waits for a file before it looks at requests again.
const IDLE: Duration = Duration::from_millis(200);

/// One `pcap-file` request.
#[derive(Debug, Clone)]
pub(crate) struct PcapJob {
    pub path: PathBuf,
    pub output_dir: PathBuf,
    pub continuous: bool,
    pub delete_when_done: bool,
}

/// The files waiting, and the one being read.
#[derive(Default)]
pub(crate) struct PcapQueue {
    state: Mutex<QueueState>,
    wake: Condvar,
}

#[derive(Default)]
struct QueueState {
    pending: VecDeque<PcapJob>,
    current: Option<PathBuf>,
    /// Stops the file being read (`pcap-interrupt`, `shutdown`).
    interrupt: Arc<AtomicBool>,
    /// Modification time of the last file read, in ms since the epoch.
    last_processed_ms: u64,
}

impl PcapQueue {
    fn lock(&self) -> std::sync::MutexGuard<'_, QueueState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn push(&self, job: PcapJob) {
        self.lock().pending.push_back(job);
        self.wake.notify_all();
    }

    /// The next job and the flag that interrupts it, once one is queued.
    fn take(&self, wait: Duration) -> Option<(PcapJob, Arc<AtomicBool>)> {
        let mut st = self.lock();
        if st.pending.is_empty() {
            st = self.wake.wait_timeout(st, wait).unwrap_or_else(|p| p.into_inner()).0;
        }
        let job = st.pending.pop_front()?;
        st.current = Some(job.path.clone());
        st.interrupt = Arc::new(AtomicBool::new(false));
        Some((job, st.interrupt.clone()))
    }

    fn finished(&self, job: &PcapJob) {
        let mut st = self.lock();
        st.current = None;
        if let Ok(t) = std::fs::metadata(&job.path).and_then(|m| m.modified()) {
            st.last_processed_ms = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
        }
    }

    /// Stops the file being read, if any.
    pub(crate) fn interrupt(&self) {
        self.lock().interrupt.store(true, Ordering::Relaxed);
    }
}

/// The queue's commands, in Suricata's wording.
pub(crate) fn command(name: &str, args: &Value, q: &PcapQueue) -> Value {
    match name {
        "pcap-file" | "pcap-file-continuous" => {
            let path = match existing(args, "filename", "No filename", "filename does not exist") {
                Ok(p) => p,
                Err(e) => return e,
            };
            let output_dir = match existing(args, "output-dir", "No output directory", "output-dir does not exist") {
                Ok(p) => p,
                Err(e) => return e,
            };
            if args.get("tenant").and_then(Value::as_i64).is_some_and(|t| t != 0) {
                return nok("vigil has no tenants: give tenant 0 or none");
            }
            let flag = |key: &str, default: bool| args.get(key).and_then(Value::as_bool).unwrap_or(default);
            q.push(PcapJob {
                path,
                output_dir,
                continuous: flag("continuous", name == "pcap-file-continuous"),
                delete_when_done: flag("delete-when-done", false),
            });
            ok(json!("Successfully added file to list"))
        }
        "pcap-file-number" => ok(json!(q.lock().pending.len())),
        "pcap-file-list" => {
            let st = q.lock();
            let files: Vec<String> = st.pending.iter().map(|j| j.path.display().to_string()).collect();
            ok(json!({"count": files.len(), "files": files}))
        }
        "pcap-current" => match &q.lock().current {
            Some(p) => ok(json!(p.display().to_string())),
            None => ok(json!("None")),
        },
        "pcap-last-processed" => ok(json!(q.lock().last_processed_ms)),
        "pcap-interrupt" => {
            q.interrupt();
            ok(json!("Interrupted"))
        }
        other => nok(&format!("Unknown command {other:?} (see command-list)")),
    }
}

/// Where the unix-socket runmode listens: `--unix-socket=PATH`, else as
/// `unix-command.filename` says.
pub fn unix_socket_path(setup: &Setup, given: Option<&Path>) -> PathBuf {
    match given {
        Some(p) if !p.as_os_str().is_empty() => crate::socket::socket_path(p.to_str()),
        _ => crate::socket::socket_path(setup.config.runtime.unix_command.filename.as_deref()),
    }
}

/// Serves the socket and reads what is queued until `shutdown` (or
/// SIGINT/SIGTERM); `done` hears how each file went.
pub fn run_unix_socket(
    setup: &Setup,
    opts: &RunOptions,
    path: &Path,
    done: &mut dyn FnMut(&Path, Result<Summary, EngineError>),
) -> Result<(), EngineError> {
    let control = &opts.control;
    control.rules_in_use(&setup.rules, false);
    let queue = Arc::new(PcapQueue::default());
    let _socket = ControlSocket::start(path, control.clone(), Facts::unix_socket(setup, queue.clone()))
        .map_err(|error| EngineError::Output { path: path.display().to_string(), error })?;
    let mut setup = setup.clone();
    // Each file's run must not open a socket of its own.
    setup.config.runtime.unix_command.enabled = Some(false);
    while !control.stopping() {
        if control.take_reload() {
            reload_now(&mut setup, opts);
        }
        let Some((job, interrupt)) = queue.take(IDLE) else { continue };
        let mut one = setup.clone();
        one.log_dir = job.output_dir.clone();
        one.config.pcap_file.continuous = job.continuous;
        one.config.pcap_file.delete_when_done = job.delete_when_done;
        let job_opts = RunOptions { inputs: vec![job.path.clone()], control: control.inner(interrupt), ..opts.clone() };
        let outcome = crate::run::run_setup(&one, &job_opts, &mut |_| {});
        queue.finished(&job);
        done(&job.path, outcome);
    }
    Ok(())
}

/// Builds the rules again now; they serve the files that follow.
fn reload_now(setup: &mut Setup, opts: &RunOptions) {
    let mut reload = Reload::default();
    reload.start(setup, opts);
    let mut summary = Summary::default();
    while reload.busy() {
        if let Some(rules) = reload.poll(setup, &mut summary) {
            setup.rules = rules;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_commands_in_suricatas_words() {
        let q = PcapQueue::default();
        let dir = std::env::temp_dir().join(format!("vigil-unixq-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("a.pcap");
        std::fs::write(&file, b"x").unwrap();
        let add = |f: &Path, out: &Path| command("pcap-file", &json!({"filename": f, "output-dir": out}), &q);
        assert_eq!(add(&dir.join("nope"), &dir), json!({"return": "NOK", "message": "filename does not exist"}));
        assert_eq!(add(&file, &dir.join("nope")), json!({"return": "NOK", "message": "output-dir does not exist"}));
        assert_eq!(add(&file, &dir)["message"], "Successfully added file to list");
        let cont = command("pcap-file-continuous", &json!({"filename": dir, "output-dir": dir}), &q);
        assert_eq!(cont["return"], "OK");
        let tenant = command("pcap-file", &json!({"filename": file, "output-dir": dir, "tenant": 2}), &q);
        assert_eq!(tenant["return"], "NOK");
        assert_eq!(command("pcap-file-number", &Value::Null, &q)["message"], 2);
        let list = command("pcap-file-list", &Value::Null, &q);
        assert_eq!(list["message"]["files"][0], file.display().to_string());
        assert_eq!(command("pcap-current", &Value::Null, &q)["message"], "None");
        let (job, interrupt) = q.take(Duration::ZERO).unwrap();
        assert!(!job.continuous);
        assert_eq!(command("pcap-current", &Value::Null, &q)["message"], file.display().to_string());
        assert_eq!(command("pcap-interrupt", &Value::Null, &q)["message"], "Interrupted");
        assert!(interrupt.load(Ordering::Relaxed));
        q.finished(&job);
        assert!(command("pcap-last-processed", &Value::Null, &q)["message"].as_u64().unwrap() > 0);
        let (job, interrupt) = q.take(Duration::ZERO).unwrap();
        assert!(job.continuous && !interrupt.load(Ordering::Relaxed), "each file gets a fresh interrupt");
        assert!(q.take(Duration::from_millis(1)).is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
