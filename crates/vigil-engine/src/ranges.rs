//! HTTP transfers of one file in parts (`206 Partial Content`), put
//! together across flows as Suricata's `byterange` container does: each
//! part is logged on its own (`fileinfo` with `start` and `end`), and once
//! the parts cover the whole file, the file is logged (and stored where
//! asked) as one.
//!
//! The parts are keyed by the host and the URI they were asked for. They
//! are shared by all workers (the parts come on different flows, which
//! different workers own): a lock taken only when a part of a range
//! transfer is logged, never on the path of other packets. Memory is
//! bounded by a memcap (`app-layer.protocols.http.byterange.memcap`,
//! 100 MiB) and a part waits at most `timeout` seconds (packet time) for
//! the rest (`byterange.timeout`, 60).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use vigil_applayer::ByteRange;

/// One file's parts so far.
struct Entry {
    total: u64,
    /// Part data by first offset; where parts overlap, the one that
    /// starts first gives the bytes.
    parts: BTreeMap<u64, Vec<u8>>,
    bytes: u64,
    /// Packet time of the last part, for the timeout.
    last: i64,
    /// A part was marked for the file store.
    store: bool,
}

impl Entry {
    /// The whole file, when the parts cover it.
    fn whole(&self) -> Option<Vec<u8>> {
        let mut next = 0u64;
        for (&start, data) in &self.parts {
            if start > next {
                return None;
            }
            next = next.max(start + data.len() as u64);
        }
        if next < self.total {
            return None;
        }
        let mut out = Vec::with_capacity(usize::try_from(self.total).unwrap_or(0));
        for (&start, data) in &self.parts {
            let have = out.len() as u64;
            let skip = usize::try_from(have.saturating_sub(start)).unwrap_or(usize::MAX);
            if let Some(rest) = data.get(skip..) {
                out.extend_from_slice(rest);
            }
        }
        out.truncate(usize::try_from(self.total).unwrap_or(usize::MAX));
        Some(out)
    }
}

#[derive(Default)]
struct Inner {
    entries: HashMap<Vec<u8>, Entry>,
    memuse: u64,
    /// Parts dropped at the memcap (`http.byterange.memcap`).
    memcap_hits: u64,
}

/// A file the parts completed.
pub(crate) struct Whole {
    pub data: Vec<u8>,
    /// A part of it was marked for the file store.
    pub store: bool,
}

/// The parts waiting for the rest of their file, shared by the workers.
#[derive(Clone)]
pub(crate) struct RangeFiles {
    inner: Arc<Mutex<Inner>>,
    memcap: u64,
    timeout: i64,
}

impl RangeFiles {
    pub(crate) fn new(memcap: u64, timeout_secs: u64) -> Self {
        RangeFiles { inner: Arc::default(), memcap, timeout: i64::try_from(timeout_secs).unwrap_or(i64::MAX) }
    }

    /// Adds part `range` of the file `key` names (its bytes `data`, all of
    /// the part); the whole file when this part completed it.
    pub(crate) fn add(&self, key: &[u8], range: ByteRange, data: &[u8], store: bool, now: i64) -> Option<Whole> {
        if data.is_empty() {
            return None;
        }
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let inner = &mut *inner;
        // Parts left waiting too long go first.
        let timeout = self.timeout;
        let mut freed = 0;
        inner.entries.retain(|_, e| {
            let keep = now.saturating_sub(e.last) <= timeout;
            if !keep {
                freed += e.bytes;
            }
            keep
        });
        inner.memuse -= freed;
        let len = data.len() as u64;
        if inner.memuse.saturating_add(len) > self.memcap {
            inner.memcap_hits += 1;
            return None;
        }
        let entry = inner.entries.entry(key.to_vec()).or_insert_with(|| Entry {
            total: range.total,
            parts: BTreeMap::new(),
            bytes: 0,
            last: now,
            store: false,
        });
        if entry.total != range.total || entry.parts.contains_key(&range.start) {
            // Another file under the same name, or this part again.
            return None;
        }
        entry.parts.insert(range.start, data.to_vec());
        entry.bytes += len;
        entry.last = now;
        entry.store |= store;
        inner.memuse += len;
        let whole = entry.whole()?;
        let done = inner.entries.remove(key)?;
        inner.memuse -= done.bytes;
        Some(Whole { data: whole, store: done.store })
    }

    /// `http.byterange.memuse` and `http.byterange.memcap`.
    pub(crate) fn counters(&self) -> (u64, u64) {
        let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        (inner.memuse, inner.memcap_hits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(start: u64, end: u64, total: u64) -> ByteRange {
        ByteRange { start, end, total }
    }

    #[test]
    fn parts_in_any_order_make_the_file_once() {
        let file: Vec<u8> = (0..25u8).collect();
        let r = RangeFiles::new(1 << 20, 60);
        assert!(r.add(b"h/f", range(10, 19, 25), &file[10..20], false, 0).is_none());
        // Overlapping the first part: the part that starts first gives the bytes.
        assert!(r.add(b"h/f", range(5, 14, 25), &[0xff; 10], false, 1).is_none());
        assert!(r.add(b"h/f", range(20, 24, 25), &file[20..], true, 2).is_none());
        let whole = r.add(b"h/f", range(0, 4, 25), &file[..5], false, 3).expect("complete");
        let mut want = file.clone();
        want[5..15].copy_from_slice(&[0xff; 10]);
        assert_eq!(whole.data, want);
        assert!(whole.store);
        assert_eq!(r.counters(), (0, 0), "its parts are freed");
    }

    #[test]
    fn the_memcap_and_the_timeout_bound_what_waits() {
        let r = RangeFiles::new(10, 60);
        assert!(r.add(b"a", range(0, 7, 100), &[1; 8], false, 0).is_none());
        assert!(r.add(b"b", range(0, 7, 100), &[1; 8], false, 0).is_none());
        assert_eq!(r.counters(), (8, 1));
        // Later than the timeout: the waiting part is dropped, the new one fits.
        assert!(r.add(b"b", range(0, 7, 100), &[1; 8], false, 61).is_none());
        assert_eq!(r.counters(), (8, 1));
    }
}
