//! `heartbeat`: how often buffered EVE output is pushed to its file.

use crate::read::{Errors, Section};

/// `heartbeat`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Heartbeat {
    /// `output-flush-interval`: seconds (0-60) a record may wait in an
    /// output's buffer. `None` when absent: vigil then bounds live output
    /// by one second and leaves offline runs to fill their buffers (Suricata
    /// does no periodic flush without it, but writes unbuffered by default).
    /// `Some(0)`: no periodic flush, as in Suricata.
    pub output_flush_interval: Option<u32>,
}

impl Heartbeat {
    pub(crate) fn read(sec: &Section<'_>, errs: &mut Errors) -> Heartbeat {
        Heartbeat { output_flush_interval: sec.int_in("output-flush-interval", 0, 60, errs).map(|v| v as u32) }
    }
}
