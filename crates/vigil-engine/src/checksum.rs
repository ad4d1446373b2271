//! Checksum validation modes, and Suricata's `auto` mode: validate, but give
//! up when the first packets show the capture was taken where checksums are
//! offloaded to the NIC (so most of them look wrong).

use crate::error::EngineError;
use vigil_config::{ChecksumMode, ChecksumOverride};
use vigil_decode::Packet;

/// How many packets `auto` looks at before deciding (Suricata's sample size).
const SAMPLE: u64 = 1000;
/// More than this share of bad checksums in the sample means offloading (10%).
const BAD_PERCENT: u64 = 10;

pub(crate) fn checksum_override(k: Option<&str>) -> Result<Option<ChecksumOverride>, EngineError> {
    match k {
        None | Some("auto") => Ok(None),
        Some(v) => ChecksumOverride::parse(v).map(Some).map_err(|e| EngineError::Usage(format!("-k: {e}"))),
    }
}

/// Tracks whether checksums are being validated as a capture is read.
#[derive(Debug, Clone)]
pub(crate) struct ChecksumState {
    mode: ChecksumMode,
    seen: u64,
    bad: u64,
    pub(crate) validating: bool,
}

impl ChecksumState {
    pub(crate) fn new(mode: ChecksumMode) -> Self {
        ChecksumState { mode, seen: 0, bad: 0, validating: mode != ChecksumMode::Disabled }
    }

    /// Still sampling packets in `auto` mode (they must be decoded with
    /// validation on and fed to [`ChecksumState::observe`]).
    pub(crate) fn deciding(&self) -> bool {
        self.mode == ChecksumMode::Auto && self.validating && self.seen < SAMPLE
    }

    /// Feeds one decoded packet; true when validation was just switched off.
    pub(crate) fn observe(&mut self, p: &Packet<'_>) -> bool {
        if self.mode != ChecksumMode::Auto || !self.validating || self.seen >= SAMPLE {
            return false;
        }
        self.seen += 1;
        if p.checksum.ipv4_bad || p.checksum.l4_bad {
            self.bad += 1;
        }
        if self.seen == SAMPLE && self.bad * 100 > self.seen * BAD_PERCENT {
            self.validating = false;
            return true;
        }
        false
    }
}
