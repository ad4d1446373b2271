//! `- file-store:`: files written to disk, named by their sha256 under
//! two-hex-digit folders (Suricata's version 2 layout, the only one
//! Suricata 8 has).

use crate::read::{Errors, Section};

/// One enabled `- file-store:` output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileStore {
    /// `version`: Suricata 8 only has `2`, and refuses to start with any
    /// other (or none); the engine does the same.
    pub version: Option<String>,
    /// `dir`, relative to the log directory unless absolute. Default `filestore`.
    pub dir: String,
    /// `force-filestore`: store every file, not only those a `filestore`
    /// rule asks for. Default false.
    pub force_filestore: bool,
    /// `stream-depth`: the reassembly depth asked for flows that carry
    /// files (0: unlimited); `None` when absent.
    pub stream_depth: Option<u64>,
    /// `force-hash`: hashes computed for every file (`md5`, `sha1`, `sha256`).
    pub force_hash: Vec<String>,
    /// `write-fileinfo`: a `<sha256>.<time>.<id>.json` record beside each stored file.
    pub write_fileinfo: bool,
    /// `force-magic`: every file's libmagic description. Default false.
    pub force_magic: bool,
    /// `hold-memcap` (vigil's own): the most bytes held, for all workers,
    /// of files that `filestore` rules may still ask to store. Default 256 MiB.
    pub hold_memcap: u64,
}

impl FileStore {
    /// Reads one `- file-store:` item; `None` when it is not enabled.
    pub(crate) fn read(sec: &Section<'_>, errs: &mut Errors) -> Option<FileStore> {
        let mut e = Errors::new();
        if !sec.bool("enabled", false, &mut e) {
            return None;
        }
        let store = FileStore {
            version: sec.string("version", &mut e),
            dir: sec.string("dir", &mut e).unwrap_or_else(|| "filestore".into()),
            force_filestore: sec.bool("force-filestore", false, &mut e),
            stream_depth: sec.size_max("stream-depth", u64::MAX, &mut e),
            force_hash: sec.string_list("force-hash", &mut e).unwrap_or_default(),
            write_fileinfo: sec.bool("write-fileinfo", false, &mut e),
            force_magic: sec.bool("force-magic", false, &mut e),
            hold_memcap: sec.size_max("hold-memcap", u64::MAX, &mut e).unwrap_or(256 << 20),
        };
        for h in &store.force_hash {
            if !matches!(h.as_str(), "md5" | "sha1" | "sha256") {
                sec.error("force-hash", &mut e, format!("unknown hash '{h}' (expected md5, sha1 or sha256)"));
            }
        }
        errs.extend(e);
        Some(store)
    }
}
