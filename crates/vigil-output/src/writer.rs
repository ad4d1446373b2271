use serde_json::Value;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::sink::Sink;

/// Bytes of whole records a writer gathers before it takes the file, unless
/// told otherwise ([`EveWriter::set_flush`]).
const BUFFER: usize = 1 << 16;

/// When a writer's gathered records go to the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlushPolicy {
    /// Once this many bytes are gathered (0: every record as it is made).
    pub bytes: usize,
    /// Once the oldest gathered record has waited this long, checked on
    /// every record and on [`EveWriter::poll`]. `None`: only by size (offline
    /// runs, where nothing reads the file before the end and speed matters).
    pub age: Option<Duration>,
}

impl Default for FlushPolicy {
    fn default() -> Self {
        FlushPolicy { bytes: BUFFER, age: None }
    }
}

/// Where a writer's records go.
#[derive(Clone)]
enum Target {
    File(Arc<Mutex<File>>),
    /// A socket, syslog or Redis ([`crate::sink`]): never waited on.
    Sink(Arc<Sink>),
}

/// Appends EVE records, one JSON object per line, to a file or a sink.
///
/// Several writers may share one file (one per worker, see [`EveWriter::share`]):
/// each gathers whole lines in a buffer of its own and writes them under the
/// file's lock, so records never interleave mid-line and workers rarely wait.
pub struct EveWriter {
    path: PathBuf,
    target: Target,
    /// Written before each record (`eve-log.prefix`).
    prefix: Option<Arc<str>>,
    buf: Vec<u8>,
    records: u64,
    policy: FlushPolicy,
    /// When the oldest record in `buf` was gathered (only kept with an age bound).
    since: Option<Instant>,
}

impl EveWriter {
    /// Opens (creating or, with `append`, extending) the EVE file.
    pub fn create(path: impl AsRef<Path>, append: bool) -> io::Result<Self> {
        let path = path.as_ref().to_path_buf();
        let file = OpenOptions::new().create(true).write(true).append(append).truncate(!append).open(&path)?;
        Ok(EveWriter {
            path,
            target: Target::File(Arc::new(Mutex::new(file))),
            prefix: None,
            buf: Vec::with_capacity(BUFFER),
            records: 0,
            policy: FlushPolicy::default(),
            since: None,
        })
    }

    /// Records to `sink`; `name` is what [`EveWriter::path`] answers.
    pub fn to_sink(name: impl AsRef<Path>, sink: Arc<Sink>) -> EveWriter {
        EveWriter {
            path: name.as_ref().to_path_buf(),
            target: Target::Sink(sink),
            prefix: None,
            buf: Vec::with_capacity(BUFFER),
            records: 0,
            policy: FlushPolicy::default(),
            since: None,
        }
    }

    /// The sink this writer sends to, if not a file.
    pub fn sink(&self) -> Option<&Arc<Sink>> {
        match &self.target {
            Target::Sink(s) => Some(s),
            Target::File(_) => None,
        }
    }

    /// Writes `prefix` before each record from now on.
    pub fn set_prefix(&mut self, prefix: Option<&str>) {
        self.prefix = prefix.filter(|p| !p.is_empty()).map(Arc::from);
    }

    /// Another writer on the same file, with its own buffer and record count
    /// and the same flush policy.
    pub fn share(&self) -> EveWriter {
        EveWriter {
            path: self.path.clone(),
            target: self.target.clone(),
            prefix: self.prefix.clone(),
            buf: Vec::with_capacity(self.policy.bytes.min(BUFFER)),
            records: 0,
            policy: self.policy,
            since: None,
        }
    }

    /// When gathered records are written from now on.
    pub fn set_flush(&mut self, policy: FlushPolicy) {
        self.policy = policy;
    }

    /// Writes the gathered records if the oldest has waited its time: for a
    /// live worker to call now and then, traffic or not.
    pub fn poll(&mut self) -> io::Result<()> {
        match (self.since, self.policy.age) {
            (Some(since), Some(age)) if since.elapsed() >= age => self.write_out(),
            _ => Ok(()),
        }
    }

    /// Opens the file again by its name, appending (after a log rotation
    /// moved it away): every writer sharing it writes to the new file.
    pub fn reopen(&mut self) -> io::Result<()> {
        self.write_out()?;
        let Target::File(shared) = &self.target else { return Ok(()) };
        let file = OpenOptions::new().create(true).append(true).open(&self.path)?;
        *shared.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = file;
        Ok(())
    }

    pub fn write(&mut self, record: &Value) -> io::Result<()> {
        let len = self.buf.len();
        if let Some(p) = &self.prefix {
            self.buf.extend_from_slice(p.as_bytes());
        }
        if let Err(e) = serde_json::to_writer(&mut self.buf, record) {
            // A record that cannot be written leaves no partial line behind.
            self.buf.truncate(len);
            return Err(e.into());
        }
        self.buf.push(b'\n');
        self.records += 1;
        self.gathered()
    }

    /// Appends one line of text (a newline is added), under the same
    /// whole-line guarantee as records: for text logs such as `fast.log`.
    pub fn write_line(&mut self, line: &str) -> io::Result<()> {
        self.buf.extend_from_slice(line.as_bytes());
        self.buf.push(b'\n');
        self.records += 1;
        self.gathered()
    }

    /// A record was added to `buf`: write it out if the policy says so.
    fn gathered(&mut self) -> io::Result<()> {
        if self.buf.len() >= self.policy.bytes {
            return self.write_out();
        }
        if let Some(age) = self.policy.age {
            // One clock read per first record of a batch and per record while one waits.
            match self.since {
                None => self.since = Some(Instant::now()),
                Some(since) if since.elapsed() >= age => return self.write_out(),
                Some(_) => {}
            }
        }
        Ok(())
    }

    /// Writes the gathered records to the file.
    pub fn flush(&mut self) -> io::Result<()> {
        self.write_out()
    }

    fn write_out(&mut self) -> io::Result<()> {
        self.since = None;
        if self.buf.is_empty() {
            return Ok(());
        }
        let result = match &self.target {
            Target::File(file) => {
                // A worker that panicked while holding the lock wrote whole
                // lines or none: the file is still usable.
                let mut file = file.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                file.write_all(&self.buf)
            }
            Target::Sink(sink) => {
                sink.push(&self.buf);
                Ok(())
            }
        };
        self.buf.clear();
        result
    }

    /// Records written by this writer (not by the others sharing its file).
    pub fn records(&self) -> u64 {
        self.records
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for EveWriter {
    fn drop(&mut self) {
        // Errors were reported by `flush` for callers that care.
        let _ = self.write_out();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn records_go_out_by_size_or_by_age() {
        let dir = std::env::temp_dir().join(format!("vigil-eve-flush-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (a, b) = (dir.join("a.json"), dir.join("b.json"));
        let lines = |p: &Path| std::fs::read_to_string(p).unwrap().lines().count();
        // Unbuffered, as Suricata's default `buffer-size: 0`.
        let mut now = EveWriter::create(&a, false).unwrap();
        now.set_flush(FlushPolicy { bytes: 0, age: None });
        now.write(&json!({"n": 1})).unwrap();
        assert_eq!(lines(&a), 1);
        // Buffered, with an age bound: nothing until the record has waited.
        let mut aged = EveWriter::create(&b, false).unwrap();
        aged.set_flush(FlushPolicy { bytes: 1 << 16, age: Some(Duration::from_millis(30)) });
        aged.write(&json!({"n": 1})).unwrap();
        aged.poll().unwrap();
        assert_eq!(lines(&b), 0);
        std::thread::sleep(Duration::from_millis(40));
        aged.poll().unwrap();
        assert_eq!(lines(&b), 1, "poll wrote the record that waited");
        // A rotation: the old name moved away, reopen writes to a new file.
        std::fs::rename(&b, dir.join("b.json.1")).unwrap();
        let mut shared = aged.share();
        aged.reopen().unwrap();
        shared.write(&json!({"n": 2})).unwrap();
        shared.flush().unwrap();
        assert_eq!(lines(&b), 1, "writers sharing the file follow the reopen");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn shared_writers_keep_lines_whole() {
        let dir = std::env::temp_dir().join(format!("vigil-eve-share-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("eve.json");
        let first = EveWriter::create(&path, false).unwrap();
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let mut w = first.share();
                std::thread::spawn(move || {
                    for i in 0..5000 {
                        w.write(&json!({"worker": t, "i": i, "pad": "x".repeat(i % 97)})).unwrap();
                    }
                    w.flush().unwrap();
                    w.records()
                })
            })
            .collect();
        let written: u64 = threads.into_iter().map(|t| t.join().unwrap()).sum();
        drop(first);
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(written, 20_000);
        assert_eq!(lines.len(), 20_000);
        for t in 0..4 {
            let seq: Vec<u64> = lines.iter().filter(|v| v["worker"] == t).map(|v| v["i"].as_u64().unwrap()).collect();
            assert_eq!(seq, (0..5000).collect::<Vec<_>>(), "a worker's records stay in its order");
        }
        std::fs::remove_dir_all(&dir).ok();
    }
}
