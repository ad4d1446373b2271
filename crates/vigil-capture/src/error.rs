use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// Why a capture could not be read (further).
///
/// Every variant names the file; all but [`CaptureError::NotACapture`] and a
/// failed open also give the byte offset of the record that went wrong, so a
/// message points straight at the damage:
///
/// ```text
/// input.pcap: truncated packet record at offset 12345 (needs 1514 bytes, 200 left)
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum CaptureError {
    /// Opening or reading the file failed. `offset` is where the failed read
    /// started; `None` when the file could not be opened at all.
    Io { path: PathBuf, offset: Option<u64>, source: io::Error },
    /// The file starts with neither a pcap nor a pcapng magic number (this
    /// includes an empty file). `head` holds its first bytes, at most four.
    NotACapture { path: PathBuf, head: Vec<u8> },
    /// The file ends inside a record: `what` at `offset` needs `needed` bytes
    /// but only `available` remain.
    Truncated { path: PathBuf, offset: u64, what: &'static str, needed: u64, available: u64 },
    /// A record declares a length beyond what we are willing to buffer, which
    /// in practice means the file is damaged or hostile.
    TooLarge { path: PathBuf, offset: u64, what: &'static str, len: u64, limit: u64 },
    /// A record contradicts itself or its context (block lengths that
    /// disagree, a packet on an undeclared interface, ...).
    Corrupt { path: PathBuf, offset: u64, what: &'static str, reason: String },
    /// Well-formed, but a variant of the format we do not read.
    Unsupported { path: PathBuf, offset: u64, what: String },
    /// A live source failed: `device` names it (`"nfqueue 3"`), `op` says
    /// what we were doing (`"bind and configure queue"`, `"receive"`), and
    /// `source` is the OS error. [`CaptureError::path`] returns `device`.
    Live { device: String, op: &'static str, source: io::Error },
}

impl CaptureError {
    /// The file (or the name given to [`crate::PcapFile::from_reader`]).
    pub fn path(&self) -> &Path {
        match self {
            CaptureError::Io { path, .. }
            | CaptureError::NotACapture { path, .. }
            | CaptureError::Truncated { path, .. }
            | CaptureError::TooLarge { path, .. }
            | CaptureError::Corrupt { path, .. }
            | CaptureError::Unsupported { path, .. } => path,
            CaptureError::Live { device, .. } => Path::new(device),
        }
    }

    /// The byte offset in the file where things went wrong, when known.
    pub fn offset(&self) -> Option<u64> {
        match self {
            CaptureError::Io { offset, .. } => *offset,
            CaptureError::Live { .. } => None,
            CaptureError::NotACapture { .. } => Some(0),
            CaptureError::Truncated { offset, .. }
            | CaptureError::TooLarge { offset, .. }
            | CaptureError::Corrupt { offset, .. }
            | CaptureError::Unsupported { offset, .. } => Some(*offset),
        }
    }
}

impl fmt::Display for CaptureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.path().display())?;
        match self {
            CaptureError::Io { offset: Some(offset), source, .. } => {
                write!(f, "read error at offset {offset}: {source}")
            }
            CaptureError::Io { offset: None, source, .. } => write!(f, "{source}"),
            CaptureError::NotACapture { head, .. } => {
                f.write_str("not a pcap or pcapng file (")?;
                match head.len() {
                    0 => f.write_str("empty")?,
                    n @ 1..=3 => write!(f, "only {n} bytes")?,
                    _ => {
                        f.write_str("starts with")?;
                        for b in head {
                            write!(f, " {b:02x}")?;
                        }
                    }
                }
                f.write_str(")")
            }
            CaptureError::Truncated { offset, what, needed, available, .. } => {
                write!(f, "truncated {what} at offset {offset} (needs {needed} bytes, {available} left)")
            }
            CaptureError::TooLarge { offset, what, len, limit, .. } => {
                write!(f, "{what} at offset {offset} is too large ({len} bytes, limit {limit})")
            }
            CaptureError::Corrupt { offset, what, reason, .. } => {
                write!(f, "corrupt {what} at offset {offset}: {reason}")
            }
            CaptureError::Unsupported { offset, what, .. } => {
                write!(f, "unsupported {what} at offset {offset}")
            }
            CaptureError::Live { op, source, .. } => write!(f, "{op}: {source}"),
        }
    }
}

impl std::error::Error for CaptureError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CaptureError::Io { source, .. } | CaptureError::Live { source, .. } => Some(source),
            _ => None,
        }
    }
}
