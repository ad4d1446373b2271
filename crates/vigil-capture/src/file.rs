//! Reading pcap and pcapng files as a [`Source`].
//!
//! The file is read through one growing window ([`window`]); the format
//! modules ([`classic`], [`ng`]) find the next packet record in it and say
//! where its bytes are, and [`PcapFile`] lends those bytes out until the next
//! call, when the record is consumed.
//!
//! Decisions worth knowing:
//! - A file holding only a header (pcap global header, or pcapng blocks
//!   without packets) is a valid, empty capture: no packets, no error.
//! - A 0-byte file, or one starting with an unknown magic number, is
//!   [`CaptureError::NotACapture`], reported by `open`.
//! - Unknown link types are not errors: they arrive as `LinkType::Other(n)`
//!   for the decoder to count.

mod classic;
mod ng;
mod window;

use std::fmt;
use std::fs::File;
use std::io::Read;
use std::ops::Range;
use std::path::{Path, PathBuf};

use vigil_types::{LinkType, Timestamp};

use crate::{CaptureError, RawPacket, Source};
use classic::Classic;
use ng::PcapNg;
use window::Window;

/// The container format of a capture file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileFormat {
    /// Classic libpcap format (either byte order, micro- or nanosecond).
    Pcap,
    /// pcapng.
    PcapNg,
}

/// A pcap or pcapng file read as a stream of packets.
///
/// Memory use is one buffer, grown to the power of two above the largest
/// record seen (at least 64 KiB, at most 256 MiB); the file is never read
/// whole. `Send`, so a reader thread can own it.
pub struct PcapFile {
    window: Window,
    format: Format,
    /// Length of the record lent out by the previous `next_packet`, consumed
    /// at the start of the next one (the packet borrows the window until then).
    lent: usize,
    finished: bool,
}

enum Format {
    Classic(Classic),
    Ng(PcapNg),
}

/// Where the next packet is, as found by a format module: metadata plus the
/// range of its bytes within the window.
struct Found {
    ts: Timestamp,
    linktype: LinkType,
    orig_len: u32,
    iface: u32,
    data: Range<usize>,
    record_len: usize,
}

impl PcapFile {
    /// Opens a capture file and reads its header.
    pub fn open(path: impl AsRef<Path>) -> Result<PcapFile, CaptureError> {
        let path = path.as_ref();
        let file =
            File::open(path).map_err(|source| CaptureError::Io { path: path.to_path_buf(), offset: None, source })?;
        PcapFile::from_reader(path, file)
    }

    /// Reads a capture from any byte stream; `name` stands in for the path in
    /// error messages. Reads the header before returning.
    pub fn from_reader(name: impl Into<PathBuf>, reader: impl Read + Send + 'static) -> Result<PcapFile, CaptureError> {
        let mut window = Window::new(name.into(), Box::new(reader));
        window.fill(4)?;
        let format = match window.data() {
            [a, b, c, d, ..] if ng::is_magic([*a, *b, *c, *d]) => Format::Ng(PcapNg::start(&mut window)?),
            [a, b, c, d, ..] if classic::is_magic([*a, *b, *c, *d]) => Format::Classic(Classic::start(&mut window)?),
            head => {
                return Err(CaptureError::NotACapture {
                    path: window.path().to_path_buf(),
                    head: head[..head.len().min(4)].to_vec(),
                })
            }
        };
        Ok(PcapFile { window, format, lent: 0, finished: false })
    }

    /// The path given to `open` (or the name given to `from_reader`).
    pub fn path(&self) -> &Path {
        self.window.path()
    }

    pub fn format(&self) -> FileFormat {
        match self.format {
            Format::Classic(_) => FileFormat::Pcap,
            Format::Ng(_) => FileFormat::PcapNg,
        }
    }

    /// Bytes of the file consumed so far, for progress reporting.
    pub fn position(&self) -> u64 {
        self.window.offset() + self.lent as u64
    }
}

impl Source for PcapFile {
    fn next_packet(&mut self) -> Option<Result<RawPacket<'_>, CaptureError>> {
        if self.finished {
            return None;
        }
        self.window.consume(self.lent);
        self.lent = 0;
        let step = match &mut self.format {
            Format::Classic(c) => c.next(&mut self.window),
            Format::Ng(n) => n.next(&mut self.window),
        };
        let found = match step {
            Ok(Some(found)) => found,
            Ok(None) => {
                self.finished = true;
                return None;
            }
            Err(e) => {
                self.finished = true;
                return Some(Err(e));
            }
        };
        self.lent = found.record_len;
        // The format module checked the range against the buffered record, so
        // the empty fallback is never taken; it just keeps this path panic-free.
        let data = self.window.data().get(found.data).unwrap_or_default();
        Some(Ok(RawPacket {
            ts: found.ts,
            linktype: found.linktype,
            data,
            orig_len: found.orig_len,
            iface: found.iface,
        }))
    }
}

/// The `u32` at `at`, or 0 past the end (callers check lengths first; the
/// fallback only keeps hostile input from panicking).
fn u32_at(bytes: &[u8], at: usize, big_endian: bool) -> u32 {
    let word = bytes.get(at..at.saturating_add(4)).and_then(|b| <[u8; 4]>::try_from(b).ok()).unwrap_or_default();
    match big_endian {
        true => u32::from_be_bytes(word),
        false => u32::from_le_bytes(word),
    }
}

impl fmt::Debug for PcapFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PcapFile")
            .field("path", &self.path())
            .field("format", &self.format())
            .field("position", &self.position())
            .field("finished", &self.finished)
            .finish()
    }
}
