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
    /// `pcap-file.delete-when-done`. Always false: vigil refuses to delete
    /// its input, so `true` is reported as unsupported.
    pub delete_when_done: bool,
    /// `pcap-file.recursive`: descend into sub-directories when reading a
    /// directory. Default false.
    pub recursive: bool,
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
        PcapFile { checksum_checks: ChecksumChecks::Auto, buffer_size: None, delete_when_done: false, recursive: false }
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
        if sec.bool("delete-when-done", false, errs) {
            sec.error("delete-when-done", errs, "unsupported: vigil does not delete its input files");
        }
        PcapFile {
            checksum_checks: sec.convert("checksum-checks", errs, ChecksumChecks::parse).unwrap_or(d.checksum_checks),
            buffer_size: sec.size_max("buffer-size", MAX_BUFFER_SIZE, errs).map(|v| v as u32),
            delete_when_done: false,
            recursive: sec.bool("recursive", d.recursive, errs),
        }
    }
}
