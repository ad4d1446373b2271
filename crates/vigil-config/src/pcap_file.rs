//! `pcap-file`: reading capture files.

use crate::read::{Errors, Section};

/// `pcap-file`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PcapFile {
    /// `pcap-file.checksum-checks`. Default auto.
    pub checksum_checks: ChecksumChecks,
    /// `pcap-file.buffer-size`: read buffer in bytes (size units, at most
    /// 64 MiB). `None`: the C library's default.
    pub buffer_size: Option<u32>,
    /// `pcap-file.delete-when-done`: remove each file once read. Default false.
    pub delete_when_done: bool,
    /// `pcap-file.recursive`: descend into sub-directories when reading a
    /// directory. Default false.
    pub recursive: bool,
    /// `pcap-file.continuous`: watch a directory for new files until
    /// stopped. Default false; not with `recursive`, as in Suricata.
    pub continuous: bool,
    /// `pcap-file.delay`: seconds a new file must have gone unmodified
    /// before it is read (it may still be written). Default 30.
    pub delay_secs: u64,
    /// `pcap-file.poll-interval`: seconds between looks at a watched
    /// directory. Default 5.
    pub poll_interval_secs: u64,
}

/// Whether packet checksums of a capture are validated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ChecksumChecks {
    /// `auto`: validate, unless the first packets show checksum offloading
    /// (decided by the engine from the invalid-checksum ratio).
    #[default]
    Auto,
    /// `yes` (any true value): always validate.
    Yes,
    /// `no` (any false value): never validate.
    No,
}

/// Largest `pcap-file.buffer-size` Suricata accepts.
const MAX_BUFFER_SIZE: u64 = 64 * 1024 * 1024;

impl Default for PcapFile {
    fn default() -> Self {
        PcapFile {
            checksum_checks: ChecksumChecks::Auto,
            buffer_size: None,
            delete_when_done: false,
            recursive: false,
            continuous: false,
            delay_secs: 30,
            poll_interval_secs: 5,
        }
    }
}

impl ChecksumChecks {
    /// Read a `checksum-checks` value: `auto`, or a boolean.
    pub fn parse(s: &str) -> Result<ChecksumChecks, String> {
        if s == "auto" {
            return Ok(ChecksumChecks::Auto);
        }
        match crate::value::parse_bool(s) {
            Some(true) => Ok(ChecksumChecks::Yes),
            Some(false) => Ok(ChecksumChecks::No),
            None => Err(format!("unknown checksum mode {s:?} (expected auto, yes or no)")),
        }
    }
}

impl PcapFile {
    pub(crate) fn read(sec: &Section<'_>, errs: &mut Errors) -> PcapFile {
        let d = PcapFile::default();
        let secs =
            |key: &str, default: u64, errs: &mut Errors| sec.int_in(key, 0, 86_400, errs).map_or(default, |v| v as u64);
        let p = PcapFile {
            checksum_checks: sec.convert("checksum-checks", errs, ChecksumChecks::parse).unwrap_or(d.checksum_checks),
            buffer_size: sec.size_max("buffer-size", MAX_BUFFER_SIZE, errs).map(|v| v as u32),
            delete_when_done: sec.bool("delete-when-done", d.delete_when_done, errs),
            recursive: sec.bool("recursive", d.recursive, errs),
            continuous: sec.bool("continuous", d.continuous, errs),
            delay_secs: secs("delay", d.delay_secs, errs),
            poll_interval_secs: secs("poll-interval", d.poll_interval_secs, errs),
        };
        if p.recursive && p.continuous {
            sec.error("continuous", errs, "cannot be combined with recursive");
        }
        p
    }
}
