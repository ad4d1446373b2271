//! Files written at offsets (SMB and NFS reads and writes), for a flow:
//! bytes that come past a file's end wait for those before them within the
//! flow's budget (past it they are written after a hole); each file's first
//! bytes are kept for `file.data`, within a budget for the flow's files
//! together. The totals are the flow's; the waiting bytes are each file's
//! ([`Waiting`]), owned by its transaction.

use std::collections::BTreeMap;

use crate::files::{File, FileConfig};

/// The first bytes of a file kept for `file.data`, and what the files of
/// one flow keep together.
pub const WINDOW: usize = 256 * 1024;
const FLOW_WINDOW: usize = 4 << 20;
/// File bytes that came ahead of those before them a flow holds.
const FLOW_AHEAD: usize = 16 << 20;

/// Bytes of one file waiting for those before them, by offset.
pub type Waiting = BTreeMap<u64, Vec<u8>>;

/// What the files of one flow hold together.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct OffsetFiles {
    waiting: usize,
    windows: usize,
}

impl OffsetFiles {
    /// Bytes for offset `at` of `file`: written if they start at its end or
    /// no room is left to wait, followed by those waiting that now join it.
    pub fn write(&mut self, file: &mut File, waiting: &mut Waiting, at: u64, data: &[u8], cfg: &FileConfig) {
        if !file.is_open() {
            return;
        }
        if at > file.start + file.size && self.waiting + data.len() <= FLOW_AHEAD {
            self.waiting += data.len();
            waiting.entry(at).or_insert_with(|| data.to_vec());
            return;
        }
        self.put(file, at, data, cfg);
        while let Some(entry) = waiting.first_entry() {
            if *entry.key() > file.start + file.size {
                break;
            }
            let (o, bytes) = entry.remove_entry();
            self.waiting -= bytes.len();
            self.put(file, o, &bytes, cfg);
        }
    }

    /// The file's transfer ended (`cut`: short of its end, the flow ended
    /// first): what still waits goes in after the holes before it.
    pub fn end(&mut self, file: &mut File, waiting: &mut Waiting, cfg: &FileConfig, cut: bool) {
        self.flush(file, waiting, cfg);
        if cut {
            file.truncate();
        } else {
            file.close();
        }
    }

    /// The flow ended with the file's transfer open ([`File::abandon`]).
    pub fn abandon(&mut self, file: &mut File, waiting: &mut Waiting, cfg: &FileConfig) {
        self.flush(file, waiting, cfg);
        file.abandon();
    }

    fn flush(&mut self, file: &mut File, waiting: &mut Waiting, cfg: &FileConfig) {
        for (at, bytes) in std::mem::take(waiting) {
            self.waiting -= bytes.len();
            file.write_at(at, &bytes, cfg);
        }
    }

    /// Counts again from the files still held (after some went unflushed:
    /// pruned, or evicted).
    pub fn recount<'a>(&mut self, files: impl Iterator<Item = (&'a File, &'a Waiting)>) {
        *self = OffsetFiles::default();
        for (file, waiting) in files {
            self.windows += file.window.len();
            self.waiting += waiting.values().map(Vec::len).sum::<usize>();
        }
    }

    /// Bytes waiting in the flow's files.
    pub fn waiting(&self) -> usize {
        self.waiting
    }

    fn put(&mut self, file: &mut File, at: u64, data: &[u8], cfg: &FileConfig) {
        if at == file.start + file.size {
            let take =
                data.len().min(WINDOW.saturating_sub(file.window.len())).min(FLOW_WINDOW.saturating_sub(self.windows));
            file.window.extend_from_slice(&data[..take]);
            self.windows += take;
        }
        file.write_at(at, data, cfg);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_ahead_wait_for_those_before_them() {
        let cfg = FileConfig::default();
        let (mut flow, mut file, mut waiting) =
            (OffsetFiles::default(), File::open(b"f".to_vec(), 0, &cfg), Waiting::new());
        flow.write(&mut file, &mut waiting, 4, b"BBBB", &cfg);
        assert_eq!((file.size, flow.waiting()), (0, 4));
        flow.write(&mut file, &mut waiting, 0, b"AAAA", &cfg);
        assert_eq!((file.size, file.gaps, flow.waiting()), (8, false, 0));
        assert_eq!(file.window, b"AAAABBBB");
        // At the end, what still waits goes in after its hole.
        flow.write(&mut file, &mut waiting, 20, b"CC", &cfg);
        flow.end(&mut file, &mut waiting, &cfg, false);
        assert_eq!(
            (file.size, file.gaps, flow.waiting(), file.state),
            (22, true, 0, crate::files::FileState::Truncated)
        );
        flow.recount(std::iter::once((&file, &waiting)));
        assert_eq!(flow, OffsetFiles { waiting: 0, windows: 8 });
    }
}
