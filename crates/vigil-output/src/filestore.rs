//! The `file-store` output (Suricata's version 2 layout): each stored file
//! is `<dir>/<first two hex digits of its sha256>/<sha256>`, written under
//! a temporary name and renamed into place, so a reader never sees half a
//! file and workers storing the same content need no lock (the last rename
//! wins with identical bytes). With `write-fileinfo`, its `fileinfo`
//! record goes beside it as `<sha256>.<seconds>.<file_id>.json`.

use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// One worker's handle on the file store; handles made by [`FileStore::share`]
/// write to the same folders and number files from the same counter.
#[derive(Debug)]
pub struct FileStore {
    dir: PathBuf,
    write_fileinfo: bool,
    /// The last `file_id` handed out, over all workers.
    ids: Arc<AtomicU64>,
    /// Distinguishes this handle's temporary files from other workers'.
    worker: u64,
    workers: Arc<AtomicU64>,
    pub counts: FileStoreCounts,
}

/// What a file store handle did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FileStoreCounts {
    /// Files written (or found already there).
    pub stored: u64,
    /// Files that could not be stored (`file_store.fs_errors`): a write
    /// failed, or the file was larger than a file may be held.
    pub fs_errors: u64,
}

impl FileStore {
    /// Creates `dir`, its `tmp` folder and the 256 `00`..`ff` folders.
    pub fn open(dir: &Path, write_fileinfo: bool) -> std::io::Result<FileStore> {
        std::fs::create_dir_all(dir.join("tmp"))?;
        for i in 0..=255u8 {
            std::fs::create_dir_all(dir.join(format!("{i:02x}")))?;
        }
        Ok(FileStore {
            dir: dir.to_path_buf(),
            write_fileinfo,
            ids: Arc::new(AtomicU64::new(0)),
            worker: 0,
            workers: Arc::new(AtomicU64::new(1)),
            counts: FileStoreCounts::default(),
        })
    }

    /// A handle for another worker.
    pub fn share(&self) -> FileStore {
        FileStore {
            dir: self.dir.clone(),
            write_fileinfo: self.write_fileinfo,
            ids: Arc::clone(&self.ids),
            worker: self.workers.fetch_add(1, Ordering::Relaxed),
            workers: Arc::clone(&self.workers),
            counts: FileStoreCounts::default(),
        }
    }

    /// Whether stored files get their `fileinfo` record beside them.
    pub fn writes_fileinfo(&self) -> bool {
        self.write_fileinfo
    }

    /// Where the file with this sha256 (lower-case hex) lives.
    pub fn path_of(&self, sha256: &str) -> PathBuf {
        self.dir.join(&sha256[..2.min(sha256.len())]).join(sha256)
    }

    /// Stores `data` under its sha256 and returns its `file_id`; a failure
    /// is counted in `fs_errors` and the file is reported not stored.
    pub fn store(&mut self, sha256: &str, data: &[u8]) -> Option<u64> {
        match self.write(sha256, data) {
            Ok(()) => {
                self.counts.stored += 1;
                Some(self.ids.fetch_add(1, Ordering::Relaxed) + 1)
            }
            Err(_) => {
                self.counts.fs_errors += 1;
                None
            }
        }
    }

    fn write(&self, sha256: &str, data: &[u8]) -> std::io::Result<()> {
        if sha256.len() != 64 || !sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a sha256"));
        }
        let target = self.path_of(sha256);
        // The same content stored before: nothing to write.
        if target.exists() {
            return Ok(());
        }
        let tmp = self.dir.join("tmp").join(format!("file.{}.{sha256}", self.worker));
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(data)?;
        drop(f);
        std::fs::rename(&tmp, &target)
    }

    /// With `write-fileinfo`, writes a stored file's record beside it.
    pub fn write_fileinfo(&mut self, sha256: &str, seconds: i64, file_id: u64, record: &Value) {
        if !self.write_fileinfo {
            return;
        }
        let path = self.path_of(sha256).with_file_name(format!("{sha256}.{seconds}.{file_id}.json"));
        let text = format!("{record}\n");
        if std::fs::write(path, text).is_err() {
            self.counts.fs_errors += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_land_under_their_sha256_once() {
        let dir = std::env::temp_dir().join(format!("vigil-filestore-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut fs = FileStore::open(&dir, true).unwrap();
        assert!(dir.join("ff").is_dir() && dir.join("00").is_dir());
        let sha = "48d179a2f8d17331446c7a75a082851eee9ad841705ed5fbce730f51a0598d62";
        assert_eq!(fs.store(sha, b"abc"), Some(1));
        let mut other = fs.share();
        assert_eq!(other.store(sha, b"abc"), Some(2));
        assert_eq!(std::fs::read(dir.join("48").join(sha)).unwrap(), b"abc");
        fs.write_fileinfo(sha, 1515441287, 1, &serde_json::json!({"x": 1}));
        assert!(dir.join("48").join(format!("{sha}.1515441287.1.json")).is_file());
        assert_eq!(fs.store("nothex", b"x"), None);
        assert_eq!(fs.counts.fs_errors, 1);
        assert_eq!(std::fs::read_dir(dir.join("tmp")).unwrap().count(), 0);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
