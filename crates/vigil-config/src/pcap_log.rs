//! `- pcap-log:` — packets written to pcap files, all of them or those of
//! alerted or tagged flows, rotated by size and kept as a ring of files.

use crate::read::{Errors, Section};

/// The smallest `limit` Suricata accepts.
pub const MIN_PCAP_LIMIT: u64 = 4 << 20;

/// `- pcap-log:`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PcapLog {
    /// `filename`: `log.pcap` (normal mode: `.<seconds>` is added; multi
    /// mode: `%n` thread number, `%i` thread id, `%t` time are replaced).
    pub filename: String,
    /// `limit`: bytes per file before the next one is started. Default 100 MiB.
    pub limit: u64,
    /// `max-files`: the newest this many files are kept; 0 keeps all.
    pub max_files: u32,
    /// `mode: multi`: a file per worker instead of one for all.
    pub multi: bool,
    /// `dir`: where the files go (default: the log directory).
    pub dir: Option<String>,
    /// `ts-format: usec`: file times with microseconds.
    pub usec: bool,
    /// `use-stream-depth`: packets past the stream's reassembly depth are not logged.
    pub use_stream_depth: bool,
    /// `honor-pass-rules`: packets of a flow a `pass` rule matched are not logged.
    pub honor_pass_rules: bool,
    pub conditional: PcapCondition,
    /// `compression: lz4`, which vigil does not write (warned, written uncompressed).
    pub lz4: bool,
    /// `bpf-filter`: only the frames this tcpdump expression keeps are written.
    pub bpf_filter: Option<String>,
}

/// `conditional`: which packets are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PcapCondition {
    /// Every packet.
    #[default]
    All,
    /// Packets that alerted, and every packet of a flow after its first alert.
    Alerts,
    /// Packets the `tag` keyword tagged.
    Tag,
}

impl PcapLog {
    /// `None` when disabled.
    pub(crate) fn read(sec: &Section<'_>, errs: &mut Errors) -> Option<PcapLog> {
        let mut e = Errors::new();
        if !sec.bool("enabled", false, &mut e) {
            return None;
        }
        let multi = match sec.string("mode", &mut e).as_deref() {
            None | Some("normal") => false,
            Some("multi") => true,
            Some(other) => {
                sec.error("mode", &mut e, format!("expected normal or multi, got '{other}'"));
                false
            }
        };
        let conditional = match sec.string("conditional", &mut e).as_deref() {
            None | Some("all") => PcapCondition::All,
            Some("alerts") => PcapCondition::Alerts,
            Some("tag") => PcapCondition::Tag,
            Some(other) => {
                sec.error("conditional", &mut e, format!("expected all, alerts or tag, got '{other}'"));
                PcapCondition::All
            }
        };
        let usec = match sec.string("ts-format", &mut e).as_deref() {
            None | Some("sec") => false,
            Some("usec") => true,
            Some(other) => {
                sec.error("ts-format", &mut e, format!("expected sec or usec, got '{other}'"));
                false
            }
        };
        let lz4 = match sec.string("compression", &mut e).as_deref() {
            None | Some("none") => false,
            Some("lz4") => true,
            Some(other) => {
                sec.error("compression", &mut e, format!("expected none or lz4, got '{other}'"));
                false
            }
        };
        let mut limit = sec.size_max("limit", u64::MAX, &mut e).unwrap_or(100 << 20);
        if limit < MIN_PCAP_LIMIT {
            sec.error("limit", &mut e, format!("less than the allowed minimum of {MIN_PCAP_LIMIT} bytes"));
            if let Some(err) = e.pop() {
                e.push(err.fatal());
            }
            limit = MIN_PCAP_LIMIT;
        }
        let max_files = sec.int_in("max-files", 0, i64::from(u32::MAX), &mut e).unwrap_or(0) as u32;
        let filename = sec.string("filename", &mut e).unwrap_or_else(|| "log.pcap".into());
        if multi && !filename.contains('%') {
            sec.error("filename", &mut e, "multi mode needs at least one of %n, %i, %t in the filename");
            if let Some(err) = e.pop() {
                e.push(err.fatal());
            }
        }
        if multi && max_files > 0 && filename.contains("%i") {
            sec.error("filename", &mut e, "%i (thread id) is not allowed with max-files (ring buffer mode)");
            if let Some(err) = e.pop() {
                e.push(err.fatal());
            }
        }
        let log = PcapLog {
            filename,
            limit,
            max_files,
            multi,
            dir: sec.string("dir", &mut e),
            usec,
            use_stream_depth: sec.bool("use-stream-depth", false, &mut e),
            honor_pass_rules: sec.bool("honor-pass-rules", false, &mut e),
            conditional,
            lz4,
            bpf_filter: sec.string("bpf-filter", &mut e).filter(|f| !f.trim().is_empty()),
        };
        // Suricata's lz4 knobs, read so they are not taken for typos.
        sec.bool("lz4-checksum", false, &mut e);
        sec.int_in("lz4-level", 0, 16, &mut e);
        sec.size_max("buffer-size", u64::MAX, &mut e);
        errs.extend(e);
        Some(log)
    }
}
