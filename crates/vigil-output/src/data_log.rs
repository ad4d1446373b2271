//! `tcp-data` and `http-body-data`: the bytes of a flow's streams (as the
//! application layer is given them) or of its HTTP bodies (dechunked and
//! decompressed), as Suricata writes them: `type: file`, one log with a
//! `<client>_<port>-<server>_<port>-ts:` (or `-tc:`) line and a hex dump per
//! piece; `type: dir`, the raw bytes appended to a file per flow, direction
//! and (HTTP) transaction under `tcp/` or `http/` in the log directory;
//! `type: both`, the two.

use crate::writer::EveWriter;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Where a data log writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataLogKind {
    File,
    Dir,
    Both,
}

/// A `tcp-data` or `http-body-data` output.
pub struct DataLog {
    file: Option<EveWriter>,
    dir: Option<PathBuf>,
}

impl DataLog {
    /// `file`: the log for `type: file`; `dir`: the directory for `type:
    /// dir` (made when missing).
    pub fn open(kind: DataLogKind, file: &Path, dir: &Path) -> io::Result<DataLog> {
        let file = match kind {
            DataLogKind::File | DataLogKind::Both => Some(EveWriter::create(file, true)?),
            DataLogKind::Dir => None,
        };
        let dir = match kind {
            DataLogKind::Dir | DataLogKind::Both => {
                std::fs::create_dir_all(dir)?;
                Some(dir.to_path_buf())
            }
            DataLogKind::File => None,
        };
        Ok(DataLog { file, dir })
    }

    pub fn share(&self) -> DataLog {
        DataLog { file: self.file.as_ref().map(EveWriter::share), dir: self.dir.clone() }
    }

    /// One piece of data of `flow` (`<client>_<port>-<server>_<port>`).
    pub fn write(&mut self, flow: &str, tx: Option<u64>, to_server: bool, data: &[u8]) -> io::Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        let side = if to_server { "ts" } else { "tc" };
        if let Some(w) = &mut self.file {
            let mut text = format!("{flow}-{side}:\n");
            crate::hexdump::hexdump(&mut text, data);
            w.write_line(text.trim_end_matches('\n'))?;
        }
        if let Some(dir) = &self.dir {
            let tx = tx.map(|t| t.to_string()).unwrap_or_default();
            let path = dir.join(format!("{flow}-{tx}-{side}.data"));
            std::fs::OpenOptions::new().create(true).append(true).open(path)?.write_all(data)?;
        }
        Ok(())
    }

    /// The writer of the `type: file` log, if any (flush policy, reopening).
    pub fn writer_mut(&mut self) -> Option<&mut EveWriter> {
        self.file.as_mut()
    }

    pub fn path(&self) -> PathBuf {
        self.file.as_ref().map(|w| w.path().to_path_buf()).or_else(|| self.dir.clone()).unwrap_or_default()
    }
}

/// A flow as the data logs name it: its client's address and port, then its server's.
pub fn data_flow_name(client: std::net::IpAddr, cport: u16, server: std::net::IpAddr, sport: u16) -> String {
    format!("{client}_{cport}-{server}_{sport}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_and_dir_in_suricatas_layout() {
        let d = std::env::temp_dir().join(format!("vigil-datalog-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let mut log = DataLog::open(DataLogKind::Both, &d.join("tcp-data.log"), &d.join("tcp")).unwrap();
        let flow = data_flow_name([198, 18, 0, 1].into(), 40000, [198, 18, 0, 2].into(), 80);
        log.write(&flow, None, true, b"GET / ").unwrap();
        log.write(&flow, None, true, b"HTTP/1.1").unwrap();
        log.write(&flow, None, false, b"").unwrap();
        log.writer_mut().unwrap().flush().unwrap();
        let text = std::fs::read_to_string(d.join("tcp-data.log")).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "198.18.0.1_40000-198.18.0.2_80-ts:");
        assert!(lines[1].starts_with(" 0000  47 45 54 20 2F 20"), "{text}");
        assert_eq!(lines.len(), 4, "{text}");
        let raw = std::fs::read(d.join("tcp/198.18.0.1_40000-198.18.0.2_80--ts.data")).unwrap();
        assert_eq!(raw, b"GET / HTTP/1.1");
        assert!(!d.join("tcp/198.18.0.1_40000-198.18.0.2_80--tc.data").exists(), "nothing to write, no file");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
