//! What an operator can ask of a running engine from outside its threads:
//! a stats record now, new rules, log files opened again, or a clean stop.
//! The CLI sets these from signals (SIGUSR1; SIGUSR2; SIGHUP; SIGINT and
//! SIGTERM); the engine looks at them between packets.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};

/// Every counter, by dotted name.
pub(crate) type Counters = Vec<(String, u64)>;

/// Requests to a run, shared with whoever raises them.
#[derive(Debug, Clone, Default)]
pub struct Control {
    stats: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    reload: Arc<AtomicBool>,
    reopen: Arc<AtomicBool>,
    /// Who waits for the counters (the control socket's `dump-counters`).
    counters: Arc<Mutex<Vec<Sender<Counters>>>>,
    counters_wanted: Arc<AtomicBool>,
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

    /// The flag that asks for the rules to be loaded again.
    pub fn reload_flag(&self) -> Arc<AtomicBool> {
        self.reload.clone()
    }

    /// The flag that asks for the log files to be opened again (SIGHUP).
    pub fn reopen_flag(&self) -> Arc<AtomicBool> {
        self.reopen.clone()
    }

    /// Asks for every output file to be opened again by name, as after a
    /// log rotation moved them (Suricata's `reopen-log-files`).
    pub fn request_reopen(&self) {
        self.reopen.store(true, Ordering::Relaxed);
    }

    /// Takes a pending reopen request.
    pub(crate) fn take_reopen(&self) -> bool {
        self.reopen.load(Ordering::Relaxed) && self.reopen.swap(false, Ordering::Relaxed)
    }

    /// Asks for the rule files to be read again and the new rules swapped
    /// in, while packets keep flowing; rules with errors keep the old ones.
    pub fn request_reload(&self) {
        self.reload.store(true, Ordering::Relaxed);
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

    /// Asks the run for every counter, answered after the packet in hand.
    pub(crate) fn ask_counters(&self) -> Receiver<Counters> {
        let (tx, rx) = channel();
        self.counters.lock().unwrap_or_else(|p| p.into_inner()).push(tx);
        self.counters_wanted.store(true, Ordering::Relaxed);
        rx
    }

    /// Whether someone waits for the counters.
    pub(crate) fn counters_wanted(&self) -> bool {
        self.counters_wanted.load(Ordering::Relaxed)
    }

    /// Gives the counters to everyone waiting.
    pub(crate) fn answer_counters(&self, counters: &Counters) {
        self.counters_wanted.store(false, Ordering::Relaxed);
        let waiting = std::mem::take(&mut *self.counters.lock().unwrap_or_else(|p| p.into_inner()));
        for w in waiting {
            let _ = w.send(counters.clone());
        }
    }

    /// Takes a pending reload request.
    pub(crate) fn take_reload(&self) -> bool {
        self.reload.load(Ordering::Relaxed) && self.reload.swap(false, Ordering::Relaxed)
    }

    pub(crate) fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}
