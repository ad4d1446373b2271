//! Files as a shared service: any protocol that carries files (HTTP bodies
//! today) opens a [`File`], feeds it bytes in order or at offsets, reports
//! gaps and closes it. The service keeps what detection and logging need:
//! name, size, state, gaps, the hashes asked for (computed as bytes arrive,
//! never over a hole), and, while the `file-store` output may still want
//! them, the bytes themselves (bounded per file).
//!
//! A file's hashes, kept bytes and store marks live in the file, owned by
//! its transaction and so by one worker: no lock, no global state. Its type
//! description (`magic`) comes from a function the engine hands in
//! ([`FileConfig::magic`], libmagic), over the file's first bytes.

use std::sync::atomic::{AtomicU64, Ordering};

use md5::{Digest, Md5};
use sha1::Sha1;
use sha2::Sha256;

/// What the file service computes and keeps, from the outputs and rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileConfig {
    /// Hashes to compute (`force-hash`, `filemd5`/`filesha1`/`filesha256`
    /// rules, and sha256 whenever files are stored: they are named by it).
    pub md5: bool,
    pub sha1: bool,
    pub sha256: bool,
    /// The `file-store` output is on: the bytes of files to be stored are
    /// held until the file is logged and written out.
    pub keep: bool,
    /// `force-filestore`: every file is stored.
    pub store_all: bool,
    /// With `keep`: every file's bytes are held from its start until its
    /// transaction is logged, so a rule that decides to store it later
    /// (`filemagic:"PDF"; filestore;`, which needs the first bytes to
    /// decide) still gets it whole, as Suricata's file buffering allows.
    /// Costs up to `max_kept` per open file, within `hold_budget` for all
    /// of them; off unless `filestore` rules are loaded.
    pub hold: bool,
    /// The bound on the bytes held for files nothing asked to store yet,
    /// shared by every worker; past it a file is no longer held (and a
    /// store decided later does not get it whole).
    pub hold_budget: Option<&'static HoldBudget>,
    /// `file-store.stream-depth` (0: none): a file is tracked up to this
    /// many bytes, then truncated.
    pub depth: u64,
    /// A file nothing asked to store is tracked up to this many bytes, then
    /// truncated (0: none): HTTP's body limits, which Suricata's files
    /// follow unless they are to be stored.
    pub unstored_depth: u64,
    /// The most bytes kept per file for storage; past it the file is
    /// tracked and hashed on but cannot be stored whole (counted).
    pub max_kept: u64,
    /// Describes a file's type from its first bytes (`filemagic`,
    /// `file.magic`, fileinfo `magic`); `None`: not asked for.
    pub magic: Option<MagicFn>,
}

/// Bytes held for files not (yet) asked to be stored, against a cap, for
/// a whole run: made once when the run starts, shared by its workers.
#[derive(Debug)]
pub struct HoldBudget {
    cap: u64,
    used: AtomicU64,
    /// Files no longer held because the cap was reached.
    hits: AtomicU64,
}

impl HoldBudget {
    pub fn new(cap: u64) -> Self {
        HoldBudget { cap, used: AtomicU64::new(0), hits: AtomicU64::new(0) }
    }

    /// Takes `n` bytes, if they fit under the cap.
    fn take(&self, n: u64) -> bool {
        self.used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |u| u.checked_add(n).filter(|&t| t <= self.cap))
            .is_ok()
    }

    fn give(&self, n: u64) {
        self.used.fetch_sub(n, Ordering::Relaxed);
    }

    /// Bytes held now.
    pub fn used(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }

    /// Times a file stopped being held at the cap.
    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }
}

impl PartialEq for HoldBudget {
    /// The same budget.
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}

impl Eq for HoldBudget {}

/// One file's bytes taken from a [`HoldBudget`], given back when the file
/// goes (or stops being held). A copy of the file takes its own.
#[derive(Debug, Default)]
struct Held {
    budget: Option<&'static HoldBudget>,
    bytes: u64,
}

impl Held {
    fn release(&mut self) {
        if let Some(b) = self.budget {
            b.give(std::mem::take(&mut self.bytes));
        }
    }
}

impl Clone for Held {
    fn clone(&self) -> Self {
        if let Some(b) = self.budget {
            b.used.fetch_add(self.bytes, Ordering::Relaxed);
        }
        Held { budget: self.budget, bytes: self.bytes }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.release();
    }
}

/// A file type describer: libmagic's, as the engine loads it.
#[derive(Clone, Copy)]
pub struct MagicFn(pub fn(&[u8]) -> Option<String>);

impl PartialEq for MagicFn {
    /// The same function.
    fn eq(&self, other: &Self) -> bool {
        self.0 as usize == other.0 as usize
    }
}

impl Eq for MagicFn {}

impl std::fmt::Debug for MagicFn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MagicFn")
    }
}

/// Bytes of a file gathered before its type is described: once it has
/// this many (or ends, or loses bytes), its type is looked up over what it
/// has, as Suricata waits for 512 bytes.
const MAGIC_MIN: usize = 512;
/// The most bytes handed to the describer at once.
const MAGIC_MAX: usize = 64 * 1024;

impl Default for FileConfig {
    fn default() -> Self {
        FileConfig {
            md5: false,
            sha1: false,
            sha256: false,
            keep: false,
            store_all: false,
            hold: false,
            hold_budget: None,
            depth: 0,
            unstored_depth: 0,
            max_kept: 64 * 1024 * 1024,
            magic: None,
        }
    }
}

/// The part of a file a transfer carries (HTTP `206` with
/// `Content-Range: bytes start-end/total`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteRange {
    pub start: u64,
    /// The last byte's offset.
    pub end: u64,
    /// The whole file's size.
    pub total: u64,
}

/// A file that is one part of a larger one, and where its parts meet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangePart {
    pub range: ByteRange,
    /// The parts of one file share it, whatever flow or protocol version
    /// brought them: the host (lower case, no port), a space, the URI as sent.
    pub key: Vec<u8>,
    /// The name the whole file is logged by (the URI's path).
    pub whole_name: Vec<u8>,
    /// Whether the part's `fileinfo` shows `start` and `end` (Suricata
    /// 8.0.6 writes them for HTTP/1's parts, not for HTTP/2's).
    pub logged: bool,
}

impl ByteRange {
    /// `bytes <start>-<end>/<total>` (a `Content-Range` value), when it
    /// names a non-empty part of a file of known size.
    pub fn parse(v: &[u8]) -> Option<ByteRange> {
        let v = std::str::from_utf8(v).ok()?.trim();
        let rest = v.strip_prefix("bytes")?.trim_start();
        let (span, total) = rest.split_once('/')?;
        let (start, end) = span.trim().split_once('-')?;
        let r = ByteRange {
            start: start.trim().parse().ok()?,
            end: end.trim().parse().ok()?,
            total: total.trim().parse().ok()?,
        };
        (r.start <= r.end && r.end < r.total).then_some(r)
    }

    /// It is all of the file (`bytes 0-67/68`): a file like any other.
    pub fn is_whole(&self) -> bool {
        self.start == 0 && self.end + 1 == self.total
    }
}

/// Where a file stands, as EVE `fileinfo.state` says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileState {
    /// Still receiving bytes.
    Open,
    /// Whole: every byte seen, in order.
    Closed,
    /// Cut short: the transfer ended early, a gap lost bytes, or the
    /// stream depth was reached.
    Truncated,
    /// The protocol reported the transfer failed.
    Error,
}

impl FileState {
    pub fn name(self) -> &'static str {
        match self {
            FileState::Open => "OPEN",
            FileState::Closed => "CLOSED",
            FileState::Truncated => "TRUNCATED",
            FileState::Error => "ERROR",
        }
    }
}

#[derive(Clone)]
struct Hashers {
    md5: Option<Md5>,
    sha1: Option<Sha1>,
    sha256: Option<Sha256>,
}

/// Finished digests.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hashes {
    pub md5: Option<[u8; 16]>,
    pub sha1: Option<[u8; 20]>,
    pub sha256: Option<[u8; 32]>,
}

/// One file of a transaction.
#[derive(Clone)]
pub struct File {
    pub name: Vec<u8>,
    /// Bytes seen (or lost to gaps) from `start` on.
    pub size: u64,
    /// The offset of the first byte (non-zero for a range request).
    pub start: u64,
    pub state: FileState,
    /// Some bytes were lost. The digests and the kept copy stop at the
    /// first hole: they are of the bytes before it, as Suricata's are.
    pub gaps: bool,
    /// The size when the first hole came: nothing after it is hashed or kept.
    cut_at: Option<u64>,
    hashers: Option<Box<Hashers>>,
    /// The digests, once the file is closed (only for a file without gaps).
    pub hashes: Hashes,
    /// A rule or `force-filestore` asked for it to be stored.
    pub store: bool,
    /// The bytes held for storage (with `keep`, once `store`), from `start`.
    pub kept: Vec<u8>,
    /// More bytes came than a file may hold (or a gap lost some): it
    /// cannot be stored whole.
    pub kept_overflow: bool,
    /// It was asked for after its first bytes went by, unkept: it is not
    /// stored (no error: the file store never had it).
    pub store_late: bool,
    /// The signatures that asked for it to be stored (EVE `fileinfo.sid`).
    pub sids: Vec<u32>,
    /// Its first bytes, for `file.data`, kept by the protocol that feeds
    /// it within that protocol's inspection budget (empty where the
    /// protocol answers `file.data` from elsewhere, as HTTP does for a
    /// whole body).
    pub window: Vec<u8>,
    /// Its type as libmagic describes it, once looked up.
    pub magic: Option<String>,
    /// The part of a larger file it is (its bytes are kept, within
    /// `max_kept`, so the parts of several transfers can make the file).
    pub range: Option<RangePart>,
    /// What its held bytes take from the hold budget.
    held: Held,
    /// The describer and the first bytes, while the type is still to be
    /// looked up.
    magic_head: Option<(MagicFn, Vec<u8>)>,
}

impl std::fmt::Debug for File {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("File")
            .field("name", &String::from_utf8_lossy(&self.name))
            .field("size", &self.size)
            .field("state", &self.state)
            .field("gaps", &self.gaps)
            .finish()
    }
}

impl PartialEq for File {
    fn eq(&self, o: &Self) -> bool {
        self.name == o.name
            && self.size == o.size
            && self.start == o.start
            && self.state == o.state
            && self.gaps == o.gaps
            && self.hashes == o.hashes
            && self.store == o.store
            && self.kept == o.kept
            && self.sids == o.sids
            && self.window == o.window
            && self.magic == o.magic
    }
}

impl Eq for File {}

impl File {
    /// A file starting at `start` of its content.
    pub fn open(name: Vec<u8>, start: u64, cfg: &FileConfig) -> File {
        let hashers = (cfg.md5 || cfg.sha1 || cfg.sha256).then(|| {
            Box::new(Hashers {
                md5: cfg.md5.then(Md5::new),
                sha1: cfg.sha1.then(Sha1::new),
                sha256: cfg.sha256.then(Sha256::new),
            })
        });
        File {
            name,
            size: 0,
            start,
            state: FileState::Open,
            gaps: false,
            cut_at: None,
            hashers,
            hashes: Hashes::default(),
            store: cfg.store_all,
            kept: Vec::new(),
            kept_overflow: false,
            store_late: false,
            sids: Vec::new(),
            window: Vec::new(),
            magic: None,
            magic_head: cfg.magic.map(|f| (f, Vec::new())),
            range: None,
            held: Held { budget: cfg.hold_budget, bytes: 0 },
        }
    }

    /// A file that is the part `part.range` of a larger one.
    pub fn open_range(name: Vec<u8>, part: RangePart, cfg: &FileConfig) -> File {
        let start = part.range.start;
        File { range: Some(part), ..File::open(name, start, cfg) }
    }

    /// Gathers the first bytes for the type lookup, and looks it up once
    /// there are enough.
    fn magic_bytes(&mut self, data: &[u8]) {
        let Some((_, head)) = self.magic_head.as_mut() else { return };
        let room = MAGIC_MAX - head.len();
        head.extend_from_slice(&data[..data.len().min(room)]);
        if head.len() >= MAGIC_MIN {
            self.describe();
        }
    }

    /// Looks the type up over the bytes gathered, if any.
    fn describe(&mut self) {
        if let Some((f, head)) = self.magic_head.take() {
            if !head.is_empty() {
                self.magic = (f.0)(&head);
            }
        }
    }

    pub fn is_open(&self) -> bool {
        self.state == FileState::Open
    }

    /// The next bytes of the file, in order.
    /// How far it is tracked: `file-store.stream-depth`, and the bound of
    /// files nothing asked to store.
    fn depth(&self, cfg: &FileConfig) -> u64 {
        let unstored = if self.store { 0 } else { cfg.unstored_depth };
        match (cfg.depth, unstored) {
            (0, d) | (d, 0) => d,
            (a, b) => a.min(b),
        }
    }

    pub fn append(&mut self, data: &[u8], cfg: &FileConfig) {
        if !self.is_open() || data.is_empty() {
            return;
        }
        let depth = self.depth(cfg);
        let data = match depth {
            0 => data,
            depth => {
                let room = depth.saturating_sub(self.size);
                &data[..data.len().min(usize::try_from(room).unwrap_or(usize::MAX))]
            }
        };
        self.size = self.size.saturating_add(data.len() as u64);
        self.magic_bytes(data);
        if self.cut_at.is_some() {
            // Past a hole: counted, but neither hashed nor kept.
            if depth != 0 && self.size >= depth {
                self.finish(FileState::Truncated);
            }
            return;
        }
        if let Some(h) = self.hashers.as_deref_mut() {
            if let Some(m) = h.md5.as_mut() {
                m.update(data);
            }
            if let Some(s) = h.sha1.as_mut() {
                s.update(data);
            }
            if let Some(s) = h.sha256.as_mut() {
                s.update(data);
            }
        }
        // Only files already asked for are held: a store decided after
        // bytes went by cannot be whole (see `mark_store`).
        let keeping = (cfg.keep && (self.store || cfg.hold)) || self.range.is_some();
        if keeping && !self.kept_overflow && !self.store_late {
            // Held on the chance a rule asks for it: within the budget.
            let on_budget = !self.store && self.range.is_none();
            let budget_ok = !on_budget || self.held.budget.is_none_or(|b| b.take(data.len() as u64));
            if (self.kept.len() + data.len()) as u64 > cfg.max_kept || !budget_ok {
                if !budget_ok {
                    self.held.budget.inspect(|b| {
                        b.hits.fetch_add(1, Ordering::Relaxed);
                    });
                }
                self.kept_overflow = true;
                self.kept = Vec::new();
                self.held.release();
            } else {
                if on_budget {
                    self.held.bytes += data.len() as u64;
                }
                self.kept.extend_from_slice(data);
            }
        }
        if depth != 0 && self.size >= depth {
            self.finish(FileState::Truncated);
        }
    }

    /// Bytes for `offset` of the content (protocols that write at offsets).
    /// In-order bytes are appended; bytes past the end leave a gap before
    /// them; bytes already seen are ignored (the first copy wins).
    pub fn write_at(&mut self, offset: u64, data: &[u8], cfg: &FileConfig) {
        let end = self.start.saturating_add(self.size);
        if offset > end {
            self.gap(offset - end);
            self.append(data, cfg);
        } else {
            let skip = usize::try_from(end - offset).unwrap_or(usize::MAX);
            if skip < data.len() {
                self.append(&data[skip..], cfg);
            }
        }
    }

    /// `len` bytes of the file were lost.
    pub fn gap(&mut self, len: u64) {
        if !self.is_open() || len == 0 {
            return;
        }
        self.gaps = true;
        // The digests and the copy are of what came before the first hole.
        self.cut_at.get_or_insert(self.size);
        self.size = self.size.saturating_add(len);
        // What follows a hole is not the file's start.
        self.describe();
    }

    /// The transfer ended normally: closed, or truncated if bytes were lost.
    pub fn close(&mut self) {
        let state = if self.gaps { FileState::Truncated } else { FileState::Closed };
        self.finish(state);
    }

    /// The transfer stopped early (the flow ended, the message was cut).
    pub fn truncate(&mut self) {
        self.finish(FileState::Truncated);
    }

    /// The flow ended with the transfer still open: truncated, its digests
    /// never taken, as Suricata marks a file its flow's end finds open;
    /// only one being stored keeps its SHA-256 (the store names it by it).
    pub fn abandon(&mut self) {
        if !self.is_open() {
            return;
        }
        self.finish(FileState::Truncated);
        self.hashes = Hashes { sha256: self.hashes.sha256.filter(|_| self.store), ..Hashes::default() };
    }

    /// The protocol says the transfer failed.
    pub fn error(&mut self) {
        self.finish(FileState::Error);
    }

    fn finish(&mut self, state: FileState) {
        if !self.is_open() {
            return;
        }
        self.state = state;
        self.describe();
        if let Some(h) = self.hashers.take() {
            self.hashes = digests(*h, state);
        }
    }

    /// The file as a record reports it now: its state and digests once
    /// finished; while still open, closed if the transfer it belongs to is
    /// `complete` (a response's trailing bytes may still extend it), else
    /// truncated, with digests of what came so far.
    pub fn settled(&self, complete: bool) -> (FileState, Hashes) {
        if !self.is_open() {
            return (self.state, self.hashes.clone());
        }
        let state = if complete && !self.gaps { FileState::Closed } else { FileState::Truncated };
        let hashes = self.hashers.as_deref().map(|h| digests(h.clone(), state)).unwrap_or_default();
        (state, hashes)
    }

    /// Marks it for storage on behalf of signature `sid` (0: no signature).
    pub fn mark_store(&mut self, sid: u32) {
        let held = self.kept.len() as u64 == self.cut_at.unwrap_or(self.size) || self.kept_overflow;
        if !self.store && self.size > 0 && !held {
            // Its first bytes were not kept.
            self.store_late = true;
        }
        self.store = true;
        if sid != 0 && !self.sids.contains(&sid) {
            self.sids.push(sid);
        }
    }

    /// Whether it is to be stored and the kept bytes are all of it.
    pub fn storable(&self) -> bool {
        self.store && !self.kept_overflow && !self.store_late
    }

    /// The extension: what follows the last `.` of the last path element.
    pub fn extension(&self) -> Option<&[u8]> {
        let base = self.name.rsplit(|&b| b == b'/' || b == b'\\').next()?;
        let dot = base.iter().rposition(|&b| b == b'.')?;
        Some(&base[dot + 1..])
    }
}

/// The digests `cfg` asks for of a whole file's bytes (a file put
/// together from parts).
pub fn hashes_of(data: &[u8], cfg: &FileConfig) -> Hashes {
    Hashes {
        md5: cfg.md5.then(|| Md5::digest(data).into()),
        sha1: cfg.sha1.then(|| Sha1::digest(data).into()),
        sha256: cfg.sha256.then(|| Sha256::digest(data).into()),
    }
}

/// A partial file still gets its sha256 (files are stored by it); md5 and
/// sha1 are only reported for whole files.
fn digests(h: Hashers, state: FileState) -> Hashes {
    let whole = state == FileState::Closed;
    Hashes {
        md5: h.md5.filter(|_| whole).map(|m| m.finalize().into()),
        sha1: h.sha1.filter(|_| whole).map(|s| s.finalize().into()),
        sha256: h.sha256.map(|s| s.finalize().into()),
    }
}

/// Lower-case hex.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> FileConfig {
        FileConfig { md5: true, sha1: true, sha256: true, keep: true, store_all: true, ..FileConfig::default() }
    }

    #[test]
    fn hashes_are_the_same_however_the_bytes_arrive() {
        let c = cfg();
        let data: Vec<u8> = (0..5000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut whole = File::open(b"a.bin".to_vec(), 0, &c);
        whole.append(&data, &c);
        whole.close();
        let mut pieces = File::open(b"a.bin".to_vec(), 0, &c);
        for chunk in data.chunks(37) {
            pieces.append(chunk, &c);
        }
        pieces.close();
        assert_eq!(whole.hashes, pieces.hashes);
        assert_eq!(whole.state, FileState::Closed);
        assert_eq!(hex(&whole.hashes.md5.unwrap()), hex(&Md5::digest(&data)));
        assert_eq!(whole.kept, data);
        assert!(whole.storable() || !whole.store);
    }

    #[test]
    fn the_empty_file_has_the_empty_digests() {
        let c = cfg();
        let mut f = File::open(Vec::new(), 0, &c);
        f.close();
        assert_eq!(hex(&f.hashes.md5.unwrap()), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(hex(&f.hashes.sha256.unwrap()), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    }

    #[test]
    fn a_gap_truncates_and_cuts_digests_and_copy_at_the_hole() {
        use sha2::Digest;
        let c = cfg();
        let mut f = File::open(b"x".to_vec(), 0, &c);
        f.mark_store(0);
        f.append(b"abc", &c);
        f.gap(10);
        f.append(b"def", &c);
        f.close();
        assert_eq!(f.state, FileState::Truncated);
        assert!(f.gaps);
        assert_eq!(f.size, 16);
        // sha256 of the bytes before the hole; md5 and sha1 only of whole files.
        assert_eq!(f.hashes.sha256, Some(Sha256::digest(b"abc").into()));
        assert_eq!((f.hashes.md5, f.hashes.sha1), (None, None));
        assert_eq!(f.kept, b"abc");
        assert!(f.storable());
        // A hole before any byte: the digest of nothing, as Suricata logs it.
        let mut f = File::open(b"x".to_vec(), 0, &c);
        f.gap(5);
        f.append(b"late", &c);
        f.close();
        assert_eq!(hex(&f.hashes.sha256.unwrap()), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    }

    #[test]
    fn offsets_append_skip_overlaps_and_leave_gaps() {
        let c = cfg();
        let mut f = File::open(b"x".to_vec(), 0, &c);
        f.write_at(0, b"hello", &c);
        f.write_at(3, b"lo world", &c);
        assert_eq!(f.kept, b"hello world");
        f.write_at(20, b"!", &c);
        assert!(f.gaps);
        assert_eq!(f.size, 21);
    }

    #[test]
    fn stream_depth_truncates_and_memcap_stops_keeping() {
        let c = FileConfig { depth: 10, ..cfg() };
        let mut f = File::open(b"x".to_vec(), 0, &c);
        f.append(b"0123456", &c);
        f.append(b"789abcdef", &c);
        assert_eq!(f.state, FileState::Truncated);
        assert_eq!(f.size, 10);
        assert_eq!(f.kept, b"0123456789");
        f.append(b"more", &c);
        assert_eq!(f.size, 10);

        let c = FileConfig { max_kept: 4, ..cfg() };
        let mut f = File::open(b"x".to_vec(), 0, &c);
        f.mark_store(7);
        f.append(b"0123456", &c);
        f.close();
        assert!(f.kept_overflow && !f.storable());

        // Asked for after bytes went by: it cannot be stored whole.
        let c = FileConfig { store_all: false, ..cfg() };
        let mut f = File::open(b"x".to_vec(), 0, &c);
        f.append(b"ab", &c);
        assert!(f.kept.is_empty());
        f.mark_store(7);
        f.append(b"cd", &c);
        f.close();
        assert_eq!(f.state, FileState::Closed);
        assert!(f.store_late && !f.kept_overflow && !f.storable());
        assert!(f.kept.is_empty());
        assert_eq!(f.sids, [7]);

        // Held from the start: a store decided later still gets it whole.
        let c = FileConfig { store_all: false, hold: true, ..cfg() };
        let mut f = File::open(b"x".to_vec(), 0, &c);
        f.append(b"ab", &c);
        f.mark_store(7);
        f.append(b"cd", &c);
        f.close();
        assert!(!f.store_late && f.storable());
        assert_eq!(f.kept, b"abcd");

        // Still open: settled by whether its transfer is complete.
        let c = cfg();
        let mut f = File::open(b"x".to_vec(), 0, &c);
        f.append(b"abc", &c);
        let (state, h) = f.settled(true);
        assert_eq!(state, FileState::Closed);
        assert_eq!(hex(&h.md5.unwrap()), "900150983cd24fb0d6963f7d28e17f72");
        let (state, h) = f.settled(false);
        assert_eq!((state, h.md5), (FileState::Truncated, None));
        assert!(h.sha256.is_some());
        // Abandoned by the flow's end: no digests, but the SHA-256 of one
        // being stored.
        f.mark_store(1);
        f.abandon();
        assert_eq!((f.state, f.hashes.md5.is_some(), f.hashes.sha256.is_some()), (FileState::Truncated, false, true));
        let c = FileConfig { store_all: false, ..cfg() };
        let mut g = File::open(b"y".to_vec(), 0, &c);
        g.append(b"abc", &c);
        g.abandon();
        assert_eq!((g.state, g.hashes.sha256), (FileState::Truncated, None));
    }

    #[test]
    fn extensions() {
        let c = FileConfig::default();
        let ext = |n: &[u8]| File::open(n.to_vec(), 0, &c).extension().map(<[u8]>::to_vec);
        assert_eq!(ext(b"/a/b/r.PDF"), Some(b"PDF".to_vec()));
        assert_eq!(ext(b"/a.d/readme"), None);
        assert_eq!(ext(b"x.tar.gz"), Some(b"gz".to_vec()));
    }

    #[test]
    fn the_type_is_looked_up_over_the_first_bytes() {
        fn describe(data: &[u8]) -> Option<String> {
            Some(format!("{} bytes starting {:?}", data.len(), data.first().map(|b| *b as char)))
        }
        let c = FileConfig { magic: Some(MagicFn(describe)), ..cfg() };
        // Once 512 bytes came: over all the chunk that crossed the mark.
        let mut f = File::open(b"x".to_vec(), 0, &c);
        f.append(&[b'a'; 300], &c);
        assert_eq!(f.magic, None);
        f.append(&[b'b'; 300], &c);
        assert_eq!(f.magic.as_deref(), Some("600 bytes starting Some('a')"));
        f.append(&[b'c'; 300], &c);
        assert_eq!(f.magic.as_deref(), Some("600 bytes starting Some('a')"));
        // A short file: at its end.
        let mut f = File::open(b"x".to_vec(), 0, &c);
        f.append(b"tiny", &c);
        f.close();
        assert_eq!(f.magic.as_deref(), Some("4 bytes starting Some('t')"));
        // A hole: over what came before it.
        let mut f = File::open(b"x".to_vec(), 0, &c);
        f.append(b"head", &c);
        f.gap(10);
        f.append(b"tail", &c);
        assert_eq!(f.magic.as_deref(), Some("4 bytes starting Some('h')"));
        // Not asked for: never looked up.
        let mut f = File::open(b"x".to_vec(), 0, &cfg());
        f.append(&[0; 600], &cfg());
        f.close();
        assert_eq!(f.magic, None);
    }

    #[test]
    fn content_ranges_name_a_part_of_a_file_of_known_size() {
        let r = |v: &str| ByteRange::parse(v.as_bytes());
        assert_eq!(r("bytes 10-19/100"), Some(ByteRange { start: 10, end: 19, total: 100 }));
        assert_eq!(r("bytes  0-67/68").map(|b| b.is_whole()), Some(true));
        assert_eq!(r("bytes 0-9/100").map(|b| b.is_whole()), Some(false));
        for bad in ["bytes */100", "bytes 10-19/*", "bytes 20-10/100", "bytes 0-100/100", "items 0-1/2", "bytes x-1/2"]
        {
            assert_eq!(r(bad), None, "{bad}");
        }
    }

    #[test]
    fn held_files_stay_within_their_budget_and_give_it_back() {
        let budget: &'static HoldBudget = Box::leak(Box::new(HoldBudget::new(10)));
        let c = FileConfig { store_all: false, hold: true, hold_budget: Some(budget), ..cfg() };
        let mut a = File::open(b"a".to_vec(), 0, &c);
        a.append(b"012345", &c);
        assert_eq!(budget.used(), 6);
        // A copy takes its own share.
        let copy = a.clone();
        assert_eq!(budget.used(), 12);
        drop(copy);
        let mut b = File::open(b"b".to_vec(), 0, &c);
        b.append(b"01234", &c);
        // Past the cap: no longer held, counted, its share given back.
        assert!(b.kept.is_empty() && b.kept_overflow);
        assert_eq!((budget.used(), budget.hits()), (6, 1));
        // A file asked for is held on its own account, not the budget's.
        a.mark_store(1);
        a.append(b"6789abcdef", &c);
        assert_eq!(budget.used(), 6);
        assert!(a.storable());
        drop(a);
        drop(b);
        assert_eq!(budget.used(), 0);
    }

    #[test]
    fn files_nothing_asked_to_store_end_at_their_bound() {
        let c = FileConfig { store_all: false, unstored_depth: 4, ..cfg() };
        let mut f = File::open(b"x".to_vec(), 0, &c);
        f.append(b"abcdef", &c);
        assert_eq!((f.size, f.state), (4, FileState::Truncated));
        // One to be stored goes on.
        let mut f = File::open(b"x".to_vec(), 0, &c);
        f.mark_store(1);
        f.append(b"abcdef", &c);
        f.close();
        assert_eq!((f.size, f.state), (6, FileState::Closed));
    }
}
