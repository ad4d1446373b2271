//! Live counters of the engine under test while a step sends, read through
//! vigil's control socket (Suricata's JSON protocol, `dump-counters`), so the
//! operator sees received, inspected and dropped grow during the step and
//! not only in the table at its end.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

/// The counters shown while a step runs.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LiveCounters {
    /// `capture.kernel_packets`
    pub received: u64,
    /// `decoder.pkts`
    pub inspected: u64,
    /// `capture.kernel_drops`
    pub dropped: u64,
    /// `detect.alert`
    pub alerts: u64,
}

impl LiveCounters {
    /// From a stats object with Suricata's counter names.
    pub fn from_stats(stats: &Value) -> LiveCounters {
        let get = |a: &str, b: &str| stats[a][b].as_u64().unwrap_or(0);
        LiveCounters {
            received: get("capture", "kernel_packets"),
            inspected: get("decoder", "pkts"),
            dropped: get("capture", "kernel_drops"),
            alerts: get("detect", "alert"),
        }
    }
}

/// A connection to a running vigil's control socket.
pub struct Watch {
    out: UnixStream,
    input: BufReader<UnixStream>,
}

impl Watch {
    /// Connects and says hello; `None` when nothing answers as vigil does.
    pub fn connect(socket: &Path) -> Option<Watch> {
        let stream = UnixStream::connect(socket).ok()?;
        // A busy engine answers between two packets; a stuck one must not stall the sweep.
        stream.set_read_timeout(Some(Duration::from_secs(1))).ok()?;
        let mut w = Watch { out: stream.try_clone().ok()?, input: BufReader::new(stream) };
        let hello = w.ask(&json!({"version": "0.2"}))?;
        (hello["return"] == "OK").then_some(w)
    }

    /// The counters now.
    pub fn counters(&mut self) -> Option<LiveCounters> {
        let answer = self.ask(&json!({"command": "dump-counters"}))?;
        (answer["return"] == "OK").then(|| LiveCounters::from_stats(&answer["message"]))
    }

    fn ask(&mut self, msg: &Value) -> Option<Value> {
        serde_json::to_writer(&mut self.out, msg).ok()?;
        self.out.write_all(b"\n").ok()?;
        let mut line = String::new();
        // Bounded: an answer is one line of counters, far below this.
        let n = (&mut self.input).take(1 << 20).read_line(&mut line).ok()?;
        (n > 0).then(|| serde_json::from_str(&line).ok()).flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixListener;

    #[test]
    fn speaks_the_control_protocol() {
        let dir = std::env::temp_dir().join(format!("vigil-watch-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s.socket");
        let _ = std::fs::remove_file(&path);
        let listener = UnixListener::bind(&path).unwrap();
        let server = std::thread::spawn(move || {
            let (s, _) = listener.accept().unwrap();
            let mut out = s.try_clone().unwrap();
            let mut lines = BufReader::new(s).lines();
            let hello: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
            assert_eq!(hello["version"], "0.2");
            writeln!(out, r#"{{"return":"OK"}}"#).unwrap();
            let cmd: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
            assert_eq!(cmd["command"], "dump-counters");
            let stats =
                r#"{"capture":{"kernel_packets":10,"kernel_drops":2},"decoder":{"pkts":8},"detect":{"alert":1}}"#;
            writeln!(out, r#"{{"return":"OK","message":{stats}}}"#).unwrap();
        });
        let mut w = Watch::connect(&path).unwrap();
        assert_eq!(w.counters(), Some(LiveCounters { received: 10, inspected: 8, dropped: 2, alerts: 1 }));
        server.join().unwrap();
        // The server is gone: no answer, no hang.
        assert_eq!(w.counters(), None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
