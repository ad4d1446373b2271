use serde_json::Value;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Bytes of whole records a writer gathers before it takes the file.
const BUFFER: usize = 1 << 16;

/// Appends EVE records, one JSON object per line, to a file.
///
/// Several writers may share one file (one per worker, see [`EveWriter::share`]):
/// each gathers whole lines in a buffer of its own and writes them under the
/// file's lock, so records never interleave mid-line and workers rarely wait.
pub struct EveWriter {
    path: PathBuf,
    file: Arc<Mutex<File>>,
    buf: Vec<u8>,
    records: u64,
}

impl EveWriter {
    /// Opens (creating or, with `append`, extending) the EVE file.
    pub fn create(path: impl AsRef<Path>, append: bool) -> io::Result<Self> {
        let path = path.as_ref().to_path_buf();
        let file = OpenOptions::new().create(true).write(true).append(append).truncate(!append).open(&path)?;
        Ok(EveWriter { path, file: Arc::new(Mutex::new(file)), buf: Vec::with_capacity(BUFFER), records: 0 })
    }

    /// Another writer on the same file, with its own buffer and record count.
    pub fn share(&self) -> EveWriter {
        EveWriter { path: self.path.clone(), file: self.file.clone(), buf: Vec::with_capacity(BUFFER), records: 0 }
    }

    pub fn write(&mut self, record: &Value) -> io::Result<()> {
        let len = self.buf.len();
        if let Err(e) = serde_json::to_writer(&mut self.buf, record) {
            // A record that cannot be written leaves no partial line behind.
            self.buf.truncate(len);
            return Err(e.into());
        }
        self.buf.push(b'\n');
        self.records += 1;
        if self.buf.len() >= BUFFER {
            self.write_out()?;
        }
        Ok(())
    }

    /// Appends one line of text (a newline is added), under the same
    /// whole-line guarantee as records: for text logs such as `fast.log`.
    pub fn write_line(&mut self, line: &str) -> io::Result<()> {
        self.buf.extend_from_slice(line.as_bytes());
        self.buf.push(b'\n');
        self.records += 1;
        if self.buf.len() >= BUFFER {
            self.write_out()?;
        }
        Ok(())
    }

    /// Writes the gathered records to the file.
    pub fn flush(&mut self) -> io::Result<()> {
        self.write_out()
    }

    fn write_out(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        // A worker that panicked while holding the lock wrote whole lines or
        // none: the file is still usable.
        let mut file = self.file.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let result = file.write_all(&self.buf);
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
