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
    /// Each worker's counters as the last answer had them.
    threads: Arc<Mutex<Vec<(String, Counters)>>>,
    /// The rules in use, as the control socket reports them.
    ruleset: Arc<Mutex<RulesetFacts>>,
    /// A run inside a longer one (a file of the unix-socket runmode)
    /// also stops when the longer one does.
    outer_stop: Option<Arc<AtomicBool>>,
}

/// What `ruleset-stats`, `ruleset-failed-rules` and `ruleset-reload-time`
/// tell, and how the last reload ended (for `reload-rules`, which waits).
#[derive(Debug, Clone, Default)]
pub(crate) struct RulesetFacts {
    pub loaded: usize,
    pub failed: usize,
    /// Rules vigil reads but does not run: `requires` unmet, or keywords
    /// it does not run yet.
    pub skipped: usize,
    pub failed_rules: Vec<crate::log::FailedRule>,
    pub loaded_at: Option<std::time::SystemTime>,
    /// Reloads that ended, applied or refused.
    pub reloads_done: u64,
    /// Why the last reload was refused; `None` when it was applied.
    pub last_refusal: Option<String>,
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

    /// Gives the counters to everyone waiting, and keeps each worker's
    /// (`threads`, by thread name) for those who ask for them too.
    pub(crate) fn answer_counters_of(&self, counters: &Counters, threads: &[(String, Counters)]) {
        *self.threads.lock().unwrap_or_else(|p| p.into_inner()) = threads.to_vec();
        self.answer_counters(counters);
    }

    /// Each worker's counters as of the last answer.
    pub(crate) fn thread_counters(&self) -> Vec<(String, Counters)> {
        self.threads.lock().unwrap_or_else(|p| p.into_inner()).clone()
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

    /// The rules now in use (start-up, or a reload applied).
    pub(crate) fn rules_in_use(&self, rules: &crate::rules::LoadedRules, reloaded: bool) {
        let mut f = self.ruleset.lock().unwrap_or_else(|p| p.into_inner());
        f.loaded = rules.loaded;
        f.failed = rules.failed;
        f.skipped = rules.skipped + rules.unsupported;
        f.failed_rules = rules.failed_rules.clone();
        f.loaded_at = Some(rules.loaded_at);
        if reloaded {
            f.reloads_done += 1;
            f.last_refusal = None;
        }
    }

    /// A reload refused: the rules in use stay.
    pub(crate) fn reload_refused(&self, why: String) {
        let mut f = self.ruleset.lock().unwrap_or_else(|p| p.into_inner());
        f.reloads_done += 1;
        f.last_refusal = Some(why);
    }

    pub(crate) fn ruleset(&self) -> RulesetFacts {
        self.ruleset.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub(crate) fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || self.outer_stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed))
    }

    /// The control of a run inside this one: it stops on `interrupt` or
    /// when this one stops; counters, stats and reopen requests reach it;
    /// reloads stay with this one (they are applied between the inner runs).
    pub(crate) fn inner(&self, interrupt: Arc<AtomicBool>) -> Control {
        Control { stop: interrupt, reload: Arc::default(), outer_stop: Some(self.stop.clone()), ..self.clone() }
    }
}
