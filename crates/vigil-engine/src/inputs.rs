//! The capture files of a run. `-r` arguments expand as Suricata's
//! pcap-file mode does: a file is read as given; a directory contributes
//! every regular file in it, in name order (with `recursive`, those of its
//! sub-directories too, to a bounded depth). With `continuous`, the
//! directories are then watched for new files until the run stops; with
//! `delete-when-done`, each file is removed once read.

use crate::options::RunOptions;
use std::collections::{HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// How deep `recursive` descends, as Suricata bounds it.
const MAX_DEPTH: usize = 255;
/// How often a waiting feed lets its caller look at requests (stop, counters).
const IDLE_TICK: Duration = Duration::from_millis(100);

/// `pcap-file` settings with the command line's over the configuration's.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct FeedOptions {
    pub recursive: bool,
    pub continuous: bool,
    pub delete: bool,
    pub delay: Duration,
    pub poll: Duration,
}

impl FeedOptions {
    pub(crate) fn new(config: &vigil_config::PcapFile, opts: &RunOptions) -> FeedOptions {
        FeedOptions {
            recursive: config.recursive || opts.pcap_recursive,
            continuous: config.continuous || opts.pcap_continuous,
            delete: config.delete_when_done || opts.pcap_delete,
            delay: Duration::from_secs(config.delay_secs),
            poll: Duration::from_secs(config.poll_interval_secs.max(1)),
        }
    }
}

/// The files to read, one after another.
pub(crate) struct Feed {
    queue: VecDeque<PathBuf>,
    /// Directories watched in continuous mode.
    dirs: Vec<PathBuf>,
    seen: HashSet<PathBuf>,
    opts: FeedOptions,
    last_poll: Option<Instant>,
}

impl Feed {
    pub(crate) fn new(inputs: &[PathBuf], opts: FeedOptions) -> Result<Feed, String> {
        let mut feed = Feed { queue: VecDeque::new(), dirs: Vec::new(), seen: HashSet::new(), opts, last_poll: None };
        for input in inputs {
            let meta = std::fs::metadata(input).map_err(|e| format!("{}: {e}", input.display()))?;
            if !meta.is_dir() {
                feed.seen.insert(input.clone());
                feed.queue.push_back(input.clone());
                continue;
            }
            if opts.continuous {
                // Files already there are read too, once settled.
                feed.dirs.push(input.clone());
                continue;
            }
            for f in dir_files(input, if opts.recursive { MAX_DEPTH } else { 0 })? {
                if feed.seen.insert(f.clone()) {
                    feed.queue.push_back(f);
                }
            }
        }
        if opts.continuous {
            feed.look();
        }
        Ok(feed)
    }

    /// The files known now (all of them unless continuous).
    pub(crate) fn known(&self) -> impl Iterator<Item = &PathBuf> {
        self.queue.iter()
    }

    /// The next file; continuous, waits for one, calling `idle` every tick
    /// (it returns false to stop waiting).
    pub(crate) fn next(&mut self, idle: &mut dyn FnMut() -> bool) -> Option<PathBuf> {
        loop {
            if let Some(f) = self.queue.pop_front() {
                return Some(f);
            }
            if self.dirs.is_empty() || !idle() {
                return None;
            }
            if self.last_poll.is_none_or(|t| t.elapsed() >= self.opts.poll) {
                self.look();
            }
            if self.queue.is_empty() {
                std::thread::sleep(IDLE_TICK);
            }
        }
    }

    /// A file read to its end: removed when asked to.
    pub(crate) fn done(&self, file: &Path) -> Result<(), String> {
        if self.opts.delete {
            std::fs::remove_file(file).map_err(|e| format!("{}: cannot delete: {e}", file.display()))?;
        }
        Ok(())
    }

    /// New settled files of the watched directories, oldest first. A file
    /// modified within `delay` waits for a later look (it may still be
    /// written); one that cannot be listed now is tried again next time.
    fn look(&mut self) {
        self.last_poll = Some(Instant::now());
        let now = SystemTime::now();
        let mut fresh: Vec<(SystemTime, PathBuf)> = Vec::new();
        for dir in &self.dirs {
            let Ok(files) = dir_files(dir, 0) else { continue };
            for f in files {
                if self.seen.contains(&f) {
                    continue;
                }
                let Ok(mtime) = std::fs::metadata(&f).and_then(|m| m.modified()) else { continue };
                if now.duration_since(mtime).unwrap_or_default() < self.opts.delay {
                    continue;
                }
                fresh.push((mtime, f));
            }
        }
        fresh.sort();
        for (_, f) in fresh {
            self.seen.insert(f.clone());
            self.queue.push_back(f);
        }
    }
}

/// Regular files of `dir` in name order, then (to `depth` levels) those of
/// its sub-directories, each in name order. Links to directories are not
/// followed, so a loop cannot make the list endless.
fn dir_files(dir: &Path, depth: usize) -> Result<Vec<PathBuf>, String> {
    let rd = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut entries: Vec<(PathBuf, std::fs::FileType)> =
        rd.filter_map(|e| e.ok()).filter_map(|e| e.file_type().ok().map(|t| (e.path(), t))).collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let mut files = Vec::new();
    let mut subdirs = Vec::new();
    for (path, kind) in entries {
        if kind.is_dir() {
            subdirs.push(path);
        } else if path.is_file() {
            files.push(path);
        }
    }
    if depth > 0 {
        for d in subdirs {
            files.extend(dir_files(&d, depth - 1)?);
        }
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("vigil-inputs-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("sub/deeper")).unwrap();
        for f in ["b.pcap", "a.pcap", "sub/c.pcap", "sub/deeper/d.pcap"] {
            std::fs::write(d.join(f), b"x").unwrap();
        }
        d
    }

    fn expand(inputs: &[PathBuf], recursive: bool) -> Result<Vec<PathBuf>, String> {
        Ok(Feed::new(inputs, FeedOptions { recursive, ..FeedOptions::default() })?.queue.into())
    }

    fn names(files: &[PathBuf], root: &Path) -> Vec<String> {
        files.iter().map(|f| f.strip_prefix(root).unwrap().display().to_string()).collect()
    }

    #[test]
    fn directories_in_name_order_and_recursive_descends() {
        let d = scratch("expand");
        assert_eq!(names(&expand(std::slice::from_ref(&d), false).unwrap(), &d), ["a.pcap", "b.pcap"]);
        assert_eq!(
            names(&expand(std::slice::from_ref(&d), true).unwrap(), &d),
            ["a.pcap", "b.pcap", "sub/c.pcap", "sub/deeper/d.pcap"]
        );
        // A file named twice (once through its directory) is read once.
        assert_eq!(expand(&[d.join("a.pcap"), d.clone()], false).unwrap().len(), 2);
        assert!(expand(&[d.join("nope")], false).is_err());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn continuous_watches_for_settled_files_and_delete_removes_them() {
        let d = scratch("watch");
        let opts = FeedOptions {
            continuous: true,
            delete: true,
            delay: Duration::ZERO,
            poll: Duration::from_millis(1),
            ..FeedOptions::default()
        };
        let mut feed = Feed::new(std::slice::from_ref(&d), opts).unwrap();
        let mut got = Vec::new();
        while got.len() < 2 {
            let f = feed.next(&mut || true).unwrap();
            feed.done(&f).unwrap();
            got.push(f);
        }
        // Oldest first; these two may share a modification time.
        let mut got_names = names(&got, &d);
        got_names.sort();
        assert_eq!(got_names, ["a.pcap", "b.pcap"]);
        assert!(!d.join("a.pcap").exists(), "deleted once read");
        // Nothing new: the wait ends when the caller says stop.
        let mut ticks = 0;
        assert!(feed
            .next(&mut || {
                ticks += 1;
                ticks < 3
            })
            .is_none());
        std::fs::write(d.join("e.pcap"), b"x").unwrap();
        assert_eq!(names(&[feed.next(&mut || true).unwrap()], &d), ["e.pcap"]);
        // A file still being written (modified within the delay) waits.
        let mut slow =
            Feed::new(std::slice::from_ref(&d), FeedOptions { delay: Duration::from_secs(3600), ..opts }).unwrap();
        std::fs::write(d.join("f.pcap"), b"x").unwrap();
        assert!(slow.next(&mut || false).is_none());
        std::fs::remove_dir_all(&d).unwrap();
    }
}
