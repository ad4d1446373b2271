use serde_json::Value;
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// Appends EVE records, one JSON object per line, to a file.
pub struct EveWriter {
    path: PathBuf,
    out: BufWriter<File>,
    records: u64,
}

impl EveWriter {
    /// Opens (creating or, with `append`, extending) the EVE file.
    pub fn create(path: impl AsRef<Path>, append: bool) -> io::Result<Self> {
        let path = path.as_ref().to_path_buf();
        let file = OpenOptions::new().create(true).write(true).append(append).truncate(!append).open(&path)?;
        Ok(EveWriter { path, out: BufWriter::with_capacity(1 << 16, file), records: 0 })
    }

    pub fn write(&mut self, record: &Value) -> io::Result<()> {
        serde_json::to_writer(&mut self.out, record)?;
        self.out.write_all(b"\n")?;
        self.records += 1;
        Ok(())
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    pub fn records(&self) -> u64 {
        self.records
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}
