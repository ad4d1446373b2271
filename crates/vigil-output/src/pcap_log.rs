//! The `pcap-log` output's files: classic pcap (microsecond times, the
//! packet's own link type), a new file once one would pass its size limit
//! (or the link type changes), named by its first packet's time, and only
//! the newest `max-files` kept. Normal mode shares one series of files
//! among the workers; multi mode gives each worker its own (`%n` in the
//! name is the worker's number).

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use vigil_capture::{PcapWriter, SNAPLEN};
use vigil_types::{LinkType, Timestamp};

const FILE_HEADER: u64 = 24;
const RECORD_HEADER: u64 = 16;

/// Where and how the files are written.
#[derive(Debug, Clone)]
pub struct PcapLogOptions {
    pub dir: PathBuf,
    pub filename: String,
    /// Bytes a file may reach.
    pub limit: u64,
    /// Files kept (the oldest removed first); 0 keeps all.
    pub max_files: usize,
    pub multi: bool,
    /// File times with microseconds (`ts-format: usec`).
    pub usec: bool,
}

/// A writer of pcap-log files.
pub struct PcapLog {
    files: Arc<Mutex<Files>>,
    opts: Arc<PcapLogOptions>,
}

struct Files {
    out: Option<Current>,
    /// Files written, oldest first (for the ring).
    kept: VecDeque<PathBuf>,
    /// 1-based worker number (multi mode's `%n` and `%i`).
    thread: usize,
    packets: u64,
}

struct Current {
    w: PcapWriter<BufWriter<File>>,
    path: PathBuf,
    size: u64,
    linktype: LinkType,
}

impl PcapLog {
    /// The writer of worker 1 (no file is made before the first packet).
    pub fn new(opts: PcapLogOptions) -> PcapLog {
        PcapLog { files: Arc::new(Mutex::new(Files::new(1))), opts: Arc::new(opts) }
    }

    /// The writer of worker `index` (0-based): the same files in normal
    /// mode, its own in multi mode.
    pub fn share(&self, index: usize) -> PcapLog {
        let files = if self.opts.multi { Arc::new(Mutex::new(Files::new(index + 1))) } else { self.files.clone() };
        PcapLog { files, opts: self.opts.clone() }
    }

    /// Writes one packet.
    pub fn write(&mut self, ts: Timestamp, linktype: LinkType, data: &[u8]) -> io::Result<()> {
        let mut files = self.files.lock().unwrap_or_else(|p| p.into_inner());
        let caplen = data.len().min(SNAPLEN as usize);
        let record = RECORD_HEADER + caplen as u64;
        let full = files.out.as_ref().is_some_and(|c| c.size > FILE_HEADER && c.size + record > self.opts.limit);
        if files.out.as_ref().is_none_or(|c| c.linktype != linktype) || full {
            files.open(&self.opts, ts, linktype)?;
        }
        let Some(c) = files.out.as_mut() else { return Ok(()) };
        // pcap has 32-bit seconds: a time outside them (a broken capture's)
        // is written at the nearest end rather than failing the run.
        let secs = ts.secs().clamp(0, i64::from(u32::MAX));
        c.w.write_packet(Timestamp::from_secs_nanos(secs, ts.subsec_nanos()), data)?;
        c.size += record;
        files.packets += 1;
        Ok(())
    }

    /// Sends what is buffered to the file.
    pub fn flush(&mut self) -> io::Result<()> {
        let mut files = self.files.lock().unwrap_or_else(|p| p.into_inner());
        match files.out.as_mut() {
            Some(c) => c.w.flush(),
            None => Ok(()),
        }
    }

    /// The file being written, if any.
    pub fn path(&self) -> PathBuf {
        let files = self.files.lock().unwrap_or_else(|p| p.into_inner());
        files.out.as_ref().map_or_else(|| self.opts.dir.clone(), |c| c.path.clone())
    }

    /// Packets written by this writer's series of files.
    pub fn packets(&self) -> u64 {
        self.files.lock().unwrap_or_else(|p| p.into_inner()).packets
    }
}

impl Files {
    fn new(thread: usize) -> Files {
        Files { out: None, kept: VecDeque::new(), thread, packets: 0 }
    }

    /// Closes the file in hand and starts the next, named by `ts`; the
    /// oldest files beyond `max_files` go.
    fn open(&mut self, opts: &PcapLogOptions, ts: Timestamp, linktype: LinkType) -> io::Result<()> {
        if let Some(mut c) = self.out.take() {
            c.w.flush()?;
        }
        let mut path = opts.dir.join(file_name(opts, self.thread, ts));
        // Two files started in one second (sec format): the later one gets a suffix.
        let mut n = 1;
        while self.kept.contains(&path) {
            path = opts.dir.join(format!("{}.{n}", file_name(opts, self.thread, ts)));
            n += 1;
        }
        let w = PcapWriter::new(BufWriter::with_capacity(64 * 1024, File::create(&path)?), linktype)?;
        self.kept.push_back(path.clone());
        while opts.max_files > 0 && self.kept.len() > opts.max_files {
            if let Some(old) = self.kept.pop_front() {
                remove_if_there(&old)?;
            }
        }
        self.out = Some(Current { w, path, size: FILE_HEADER, linktype });
        Ok(())
    }
}

fn remove_if_there(path: &Path) -> io::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// A file's name: normal mode `<filename>.<time>`; multi mode the filename
/// with `%n`/`%i` (the worker's number) and `%t` (the time) replaced.
fn file_name(opts: &PcapLogOptions, thread: usize, ts: Timestamp) -> String {
    let time = if opts.usec { format!("{}.{:06}", ts.secs(), ts.subsec_micros()) } else { ts.secs().to_string() };
    if opts.multi {
        opts.filename.replace("%n", &thread.to_string()).replace("%i", &thread.to_string()).replace("%t", &time)
    } else {
        format!("{}.{time}", opts.filename)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (seconds, microseconds, link type, frame) of every record, as vigil's reader reads them.
    fn records(path: &Path) -> Vec<(i64, u32, LinkType, Vec<u8>)> {
        use vigil_capture::Source;
        let mut f = vigil_capture::PcapFile::open(path).unwrap();
        let mut out = Vec::new();
        while let Some(r) = f.next_packet() {
            let r = r.unwrap();
            out.push((r.ts.secs(), r.ts.subsec_micros(), r.linktype, r.data.to_vec()));
        }
        out
    }

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("vigil-pcaplog-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    }

    #[test]
    fn files_rotate_by_size_and_the_ring_keeps_the_newest() {
        let dir = scratch("ring");
        let opts = PcapLogOptions {
            dir: dir.clone(),
            filename: "log.pcap".into(),
            limit: FILE_HEADER + 2 * (RECORD_HEADER + 100),
            max_files: 2,
            multi: false,
            usec: false,
        };
        let mut log = PcapLog::new(opts);
        for i in 0..7u8 {
            log.write(Timestamp::from_micros(1000 + i64::from(i), 5), LinkType::Ethernet, &[i; 100]).unwrap();
        }
        log.flush().unwrap();
        // Two packets a file: 1000-1001, 1002-1003, 1004-1005, 1006; the ring keeps two.
        assert_eq!(names(&dir), ["log.pcap.1004", "log.pcap.1006"]);
        let recs = records(&dir.join("log.pcap.1004"));
        assert_eq!(recs.len(), 2);
        assert_eq!((recs[0].0, recs[0].1, recs[0].3[0]), (1004, 5, 4));
        assert_eq!(log.packets(), 7);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn multi_mode_gives_each_worker_its_files() {
        let dir = scratch("multi");
        let opts = PcapLogOptions {
            dir: dir.clone(),
            filename: "log.%n.%t.pcap".into(),
            limit: 1 << 20,
            max_files: 0,
            multi: true,
            usec: true,
        };
        let mut one = PcapLog::new(opts);
        let mut two = one.share(1);
        one.write(Timestamp::from_micros(7, 42), LinkType::Ethernet, b"a").unwrap();
        two.write(Timestamp::from_micros(8, 0), LinkType::Raw, b"b").unwrap();
        one.flush().unwrap();
        two.flush().unwrap();
        assert_eq!(names(&dir), ["log.1.7.000042.pcap", "log.2.8.000000.pcap"]);
        assert_eq!(records(&dir.join("log.2.8.000000.pcap"))[0].2, LinkType::Raw);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn times_outside_pcaps_seconds_are_written_at_the_nearest_end() {
        let dir = scratch("clamp");
        let opts = PcapLogOptions {
            dir: dir.clone(),
            filename: "log.pcap".into(),
            limit: 1 << 20,
            max_files: 0,
            multi: false,
            usec: false,
        };
        let mut log = PcapLog::new(opts);
        log.write(Timestamp::from_micros(-5, 7), LinkType::Ethernet, b"a").unwrap();
        log.write(Timestamp::from_micros(i64::from(u32::MAX) + 9, 7), LinkType::Ethernet, b"b").unwrap();
        log.flush().unwrap();
        let name = names(&dir).remove(0);
        let secs: Vec<i64> = records(&dir.join(name)).iter().map(|r| r.0).collect();
        assert_eq!(secs, [0, i64::from(u32::MAX)]);
        assert_eq!(log.packets(), 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
