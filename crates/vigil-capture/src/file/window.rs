//! The sliding window over a capture file: one buffer, refilled from the
//! reader, that always holds the current record contiguously.

use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::CaptureError;

/// What a fresh window allocates; most records fit many times over.
const INITIAL_CAPACITY: usize = 64 * 1024;

/// The largest record we will ever buffer. Anything claiming more is damage
/// (or an attack), and refusing it bounds our memory no matter the input.
pub(crate) const MAX_RECORD: usize = 256 * 1024 * 1024;

pub(crate) struct Window {
    path: PathBuf,
    reader: Box<dyn Read + Send>,
    buf: Vec<u8>,
    /// Unconsumed bytes are `buf[start..end]`.
    start: usize,
    end: usize,
    /// File offset of `buf[start]`.
    offset: u64,
    eof: bool,
}

impl Window {
    pub(crate) fn new(path: PathBuf, reader: Box<dyn Read + Send>) -> Self {
        Window { path, reader, buf: Vec::new(), start: 0, end: 0, offset: 0, eof: false }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The unconsumed bytes read so far.
    pub(crate) fn data(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    pub(crate) fn available(&self) -> usize {
        self.end - self.start
    }

    /// File offset of the first unconsumed byte.
    pub(crate) fn offset(&self) -> u64 {
        self.offset
    }

    pub(crate) fn consume(&mut self, n: usize) {
        let n = n.min(self.available());
        self.start += n;
        self.offset += n as u64;
        if self.start == self.end {
            // Nothing left to keep: the next read can start at the front for free.
            self.start = 0;
            self.end = 0;
        }
    }

    /// Makes at least `want` unconsumed bytes available. Returns `false` when
    /// the file ends first (what there is stays available).
    ///
    /// `want` must not exceed [`MAX_RECORD`]; callers check record lengths
    /// against it before asking. The buffer doubles only when it is full of
    /// real data, so a record that lies about its length costs at most twice
    /// the bytes the file actually has.
    pub(crate) fn fill(&mut self, want: usize) -> Result<bool, CaptureError> {
        debug_assert!(want <= MAX_RECORD);
        while self.available() < want {
            if self.eof {
                return Ok(false);
            }
            if self.end == self.buf.len() {
                self.make_room(want);
            }
            match self.reader.read(&mut self.buf[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(n) => self.end += n.min(self.buf.len() - self.end),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(source) => {
                    return Err(CaptureError::Io {
                        path: self.path.clone(),
                        offset: Some(self.offset + self.available() as u64),
                        source,
                    })
                }
            }
        }
        Ok(true)
    }

    fn make_room(&mut self, want: usize) {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buf.len() {
            let cap = want.next_power_of_two().clamp(INITIAL_CAPACITY, MAX_RECORD);
            let grown = (self.buf.len() * 2).clamp(INITIAL_CAPACITY, cap);
            self.buf.resize(grown, 0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(bytes: Vec<u8>) -> Window {
        Window::new("t".into(), Box::new(io::Cursor::new(bytes)))
    }

    #[test]
    fn fill_reports_eof_and_keeps_the_tail() {
        let mut w = window(vec![1, 2, 3]);
        assert!(w.fill(2).unwrap());
        w.consume(2);
        assert_eq!(w.offset(), 2);
        assert!(!w.fill(4).unwrap());
        assert_eq!(w.data(), &[3]);
    }

    #[test]
    fn a_record_longer_than_the_buffer_grows_it_just_enough() {
        let len = INITIAL_CAPACITY * 3 + 5;
        let mut w = window((0..len).map(|i| i as u8).collect());
        assert!(w.fill(len).unwrap());
        assert_eq!(w.buf.len(), INITIAL_CAPACITY * 4);
        assert_eq!(w.data()[len - 1], (len - 1) as u8);
    }

    #[test]
    fn a_lying_length_allocates_only_what_the_file_has() {
        let mut w = window(vec![0; 1000]);
        assert!(!w.fill(MAX_RECORD).unwrap());
        assert_eq!(w.buf.len(), INITIAL_CAPACITY);
        assert_eq!(w.available(), 1000);
    }
}
