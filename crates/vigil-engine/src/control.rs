//! What an operator can ask of a running engine from outside its threads:
//! a stats record now, or a clean stop. The CLI sets these from signals
//! (SIGUSR1; SIGINT and SIGTERM); the engine looks at them between packets.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Requests to a run, shared with whoever raises them.
#[derive(Debug, Clone, Default)]
pub struct Control {
    stats: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
}

impl Control {
    /// The flag that asks for a stats record (for a signal handler to set).
    pub fn stats_flag(&self) -> Arc<AtomicBool> {
        self.stats.clone()
    }

    /// The flag that asks the run to stop reading and finish cleanly.
    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        self.stop.clone()
    }

    /// Asks for a stats record as soon as the packet in hand is done.
    pub fn request_stats(&self) {
        self.stats.store(true, Ordering::Relaxed);
    }

    /// Asks the run to stop reading: what was read is inspected, flows end
    /// (reason "shutdown"), a final stats record is written.
    pub fn request_stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Takes a pending stats request.
    pub(crate) fn take_stats(&self) -> bool {
        self.stats.load(Ordering::Relaxed) && self.stats.swap(false, Ordering::Relaxed)
    }

    pub(crate) fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}
