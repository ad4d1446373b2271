//! The control socket (`unix-command`): Suricata's JSON command protocol on
//! a unix stream socket, so `suricatasc`-style clients work. A client first
//! sends `{"version": "0.2"}`, then commands such as `{"command":
//! "dump-counters"}`; each gets `{"return": "OK"|"NOK", "message": ...}`.
//!
//! The socket is created with owner-only permissions. Each client gets a
//! thread of its own (a few at most, so an idle client blocks nobody);
//! commands that need the pipeline (counters, reload, shutdown) go through
//! [`Control`], answered between two packets. The commands themselves are
//! in `socket_commands`.
//!
//! Where it is: `unix-command.filename`, a relative name (or none: Suricata's
//! `suricata-command.socket`) under Suricata's run directory,
//! `/var/run/suricata/`, where `suricatasc` looks by default.

use crate::control::Control;
use crate::socket_commands::{command, Facts};
use serde_json::{json, Value};
use std::io::{self, Read, Write};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The protocol version clients announce (Suricata's).
const VERSION: &str = "0.2";
/// Bytes a client may send on one connection: commands are small.
const MAX_CLIENT_BYTES: u64 = 1 << 20;
/// Clients served at once; more are told to come back.
const MAX_CLIENTS: usize = 8;
/// Suricata's run directory, and its socket's name there.
pub(crate) const RUN_DIR: &str = "/var/run/suricata";
pub(crate) const DEFAULT_NAME: &str = "suricata-command.socket";

/// Where the socket goes: an absolute `filename` as given, a relative one
/// (or the default name) in the run directory.
pub(crate) fn socket_path(filename: Option<&str>) -> PathBuf {
    let name = filename.unwrap_or(DEFAULT_NAME);
    Path::new(RUN_DIR).join(name)
}

/// A running control socket; dropping it closes the socket and removes its file.
pub(crate) struct ControlSocket {
    path: PathBuf,
    done: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl ControlSocket {
    /// Listens on `path` (an old socket file left there is replaced; any
    /// other file is not touched). The run directory is made when missing.
    pub(crate) fn start(path: &Path, control: Control, facts: Facts) -> io::Result<ControlSocket> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        if let Ok(meta) = std::fs::symlink_metadata(path) {
            if !meta.file_type().is_socket() {
                return Err(io::Error::new(io::ErrorKind::AlreadyExists, "exists and is not a socket"));
            }
            std::fs::remove_file(path)?;
        }
        let listener = UnixListener::bind(path)?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
        listener.set_nonblocking(true)?;
        let done = Arc::new(AtomicBool::new(false));
        let stop = done.clone();
        let started = Instant::now();
        let thread = std::thread::Builder::new().name("unix-command".into()).spawn(move || {
            let clients = AtomicUsize::new(0);
            std::thread::scope(|scope| {
                while !stop.load(Ordering::Relaxed) {
                    let Ok((mut stream, _)) = listener.accept() else {
                        std::thread::sleep(Duration::from_millis(50));
                        continue;
                    };
                    if clients.fetch_add(1, Ordering::Relaxed) >= MAX_CLIENTS {
                        clients.fetch_sub(1, Ordering::Relaxed);
                        let _ = stream.set_nonblocking(false);
                        let _ = reply(&mut stream, &json!({"return": "NOK", "message": "too many clients"}));
                        continue;
                    }
                    let (control, facts, stop, clients) = (&control, &facts, &*stop, &clients);
                    scope.spawn(move || {
                        // A client's failure ends its connection, not the server.
                        let _ = serve(stream, control, facts, started, stop);
                        clients.fetch_sub(1, Ordering::Relaxed);
                    });
                }
            });
        })?;
        Ok(ControlSocket { path: path.to_path_buf(), done, thread: Some(thread) })
    }
}

impl Drop for ControlSocket {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let _ = std::fs::remove_file(&self.path);
    }
}

fn serve(stream: UnixStream, control: &Control, facts: &Facts, started: Instant, stop: &AtomicBool) -> io::Result<()> {
    stream.set_nonblocking(false)?;
    // Checked between messages so the run's end is not held up by an idle client.
    stream.set_read_timeout(Some(Duration::from_millis(200)))?;
    let mut out = stream.try_clone()?;
    let reader = Patient { inner: stream.take(MAX_CLIENT_BYTES), stop };
    let mut messages = serde_json::Deserializer::from_reader(reader).into_iter::<Value>();
    let Some(Ok(hello)) = messages.next() else { return Ok(()) };
    if hello.get("version").and_then(Value::as_str) != Some(VERSION) {
        return reply(
            &mut out,
            &json!({"return": "NOK", "message": format!("unsupported protocol version; use {VERSION}")}),
        );
    }
    reply(&mut out, &json!({"return": "OK"}))?;
    for msg in messages {
        let Ok(msg) = msg else {
            return reply(&mut out, &json!({"return": "NOK", "message": "not a JSON command"}));
        };
        reply(&mut out, &command(&msg, control, facts, started))?;
    }
    Ok(())
}

/// Reads on through timeouts until the server stops.
struct Patient<'a, R> {
    inner: R,
    stop: &'a AtomicBool,
}

impl<R: Read> Read for Patient<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.inner.read(buf) {
                Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {
                    if self.stop.load(Ordering::Relaxed) {
                        return Ok(0);
                    }
                }
                r => return r,
            }
        }
    }
}

fn reply(out: &mut UnixStream, v: &Value) -> io::Result<()> {
    serde_json::to_writer(&mut *out, v)?;
    out.write_all(b"\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader};

    fn ask(stream: &mut UnixStream, lines: &mut impl BufRead, v: Value) -> Value {
        serde_json::to_writer(&mut *stream, &v).unwrap();
        let mut line = String::new();
        lines.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap()
    }

    #[test]
    fn protocol_permissions_and_commands() {
        let dir = std::env::temp_dir().join(format!("vigil-sock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("c.socket");
        let control = Control::default();
        let facts = crate::socket_commands::tests::facts(false, &[]);
        let server = ControlSocket::start(&path, control.clone(), facts.clone()).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "only the owner may command the engine");
        let mut s = UnixStream::connect(&path).unwrap();
        let mut lines = BufReader::new(s.try_clone().unwrap());
        assert_eq!(ask(&mut s, &mut lines, json!({"version": "0.2"}))["return"], "OK");
        assert_eq!(ask(&mut s, &mut lines, json!({"command": "uptime"}))["return"], "OK");
        let list = ask(&mut s, &mut lines, json!({"command": "command-list"}));
        assert!(list["message"]["commands"].as_array().unwrap().iter().any(|c| c == "dump-counters"));
        // The pipeline's side: answer the counters request as the reader would.
        let answering = control.clone();
        let pipeline = std::thread::spawn(move || {
            while !answering.counters_wanted() {
                std::thread::sleep(Duration::from_millis(5));
            }
            answering.answer_counters(&vec![("decoder.pkts".to_string(), 42)]);
        });
        let counters = ask(&mut s, &mut lines, json!({"command": "dump-counters"}));
        pipeline.join().unwrap();
        assert_eq!(counters["message"]["decoder"]["pkts"], 42);
        assert_eq!(ask(&mut s, &mut lines, json!({"command": "bogus"}))["return"], "NOK");
        assert!(!control.stopping());
        assert_eq!(ask(&mut s, &mut lines, json!({"command": "shutdown"}))["return"], "OK");
        assert!(control.stopping());
        assert!(!control.take_reload());
        // A second client is served while the first stays connected.
        let mut s2 = UnixStream::connect(&path).unwrap();
        let mut lines2 = BufReader::new(s2.try_clone().unwrap());
        assert_eq!(ask(&mut s2, &mut lines2, json!({"version": "0.2"}))["return"], "OK");
        assert_eq!(ask(&mut s2, &mut lines2, json!({"command": "ruleset-reload-nonblocking"}))["return"], "OK");
        assert!(control.take_reload());
        assert!(!control.take_reopen());
        let reopen = ask(&mut s2, &mut lines2, json!({"command": "reopen-log-files"}));
        assert_eq!((&reopen["return"], &reopen["message"]), (&json!("OK"), &json!("done")));
        assert!(control.take_reopen());
        assert!(!control.take_reopen(), "taken once");
        drop((s2, lines2));
        // A client that skips the version handshake is refused.
        let mut s = UnixStream::connect(&path).unwrap();
        let mut lines = BufReader::new(s.try_clone().unwrap());
        assert_eq!(ask(&mut s, &mut lines, json!({"command": "uptime"}))["return"], "NOK");
        drop((s, lines));
        drop(server);
        assert!(!path.exists(), "the socket file goes with the server");
        // A regular file in the way is not replaced.
        std::fs::write(&path, b"x").unwrap();
        assert!(ControlSocket::start(&path, Control::default(), facts).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
