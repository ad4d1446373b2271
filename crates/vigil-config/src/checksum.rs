//! Checksum validation: `stream.checksum-validation`,
//! `capture.checksum-validation`, the `-k` option and
//! `pcap-file.checksum-checks`, combined as Suricata combines them.
//!
//! Suricata's order: `-k all|none` wins; without it,
//! `capture.checksum-validation: all|none` acts the same; either one
//! overwrites `stream.checksum-validation` (true for `all`, false for
//! `none`). With stream validation off nothing is rejected for a bad
//! checksum; with it on, the capture's `checksum-checks` decides (`auto`
//! lets the engine turn validation off when the first packets show
//! offloading). Note that `-k all` does not override `checksum-checks:
//! auto` in Suricata; it only turns stream validation on.

use crate::pcap_file::ChecksumChecks;
use crate::read::{Errors, Section};

/// The checksum keys outside `pcap-file`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checksum {
    /// `stream.checksum-validation`: drop packets with bad checksums from
    /// stream and app-layer processing. Default true.
    pub stream_validation: bool,
    /// `capture.checksum-validation` (`all` or `none`), the config-file
    /// form of `-k`. Default unset.
    pub capture_validation: Option<ChecksumOverride>,
}

/// `-k all` / `-k none` (or `capture.checksum-validation`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChecksumOverride {
    /// `all`: validate checksums (turns stream validation on).
    All,
    /// `none`: validate nothing.
    Disabled,
}

/// What the engine should do about checksums of captured packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChecksumMode {
    /// Never reject a packet for its checksum.
    Disabled,
    /// Always validate.
    Forced,
    /// Validate, but stop if the first packets (Suricata looks at the first
    /// 1000) show that checksums were offloaded (too many failures).
    Auto,
}

impl Default for Checksum {
    fn default() -> Self {
        Checksum { stream_validation: true, capture_validation: None }
    }
}

impl ChecksumOverride {
    /// Parse a `-k` argument or `capture.checksum-validation` value.
    pub fn parse(s: &str) -> Result<ChecksumOverride, String> {
        match s {
            "all" => Ok(ChecksumOverride::All),
            "none" => Ok(ChecksumOverride::Disabled),
            _ => Err(format!("unknown checksum validation {s:?} (expected all or none)")),
        }
    }
}

impl Checksum {
    pub(crate) fn read(stream: &Section<'_>, capture: &Section<'_>, errs: &mut Errors) -> Checksum {
        let d = Checksum::default();
        Checksum {
            stream_validation: stream.bool("checksum-validation", d.stream_validation, errs),
            capture_validation: capture.convert("checksum-validation", errs, ChecksumOverride::parse),
        }
    }

    /// Whether stream validation is on after `-k` (`cli`) is applied.
    pub fn effective_stream_validation(&self, cli: Option<ChecksumOverride>) -> bool {
        match cli.or(self.capture_validation) {
            Some(ChecksumOverride::All) => true,
            Some(ChecksumOverride::Disabled) => false,
            None => self.stream_validation,
        }
    }

    /// The mode for a capture whose `checksum-checks` is `capture`, after
    /// `-k` (`cli`) is applied.
    pub fn mode(&self, cli: Option<ChecksumOverride>, capture: ChecksumChecks) -> ChecksumMode {
        if !self.effective_stream_validation(cli) {
            return ChecksumMode::Disabled;
        }
        match capture {
            ChecksumChecks::Yes => ChecksumMode::Forced,
            ChecksumChecks::No => ChecksumMode::Disabled,
            ChecksumChecks::Auto => ChecksumMode::Auto,
        }
    }
}
