use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};
use vigil_engine::Progress;

/// A progress bar that appears only on a terminal, and only once a run has
/// taken more than a second (short runs stay quiet).
pub struct Bar {
    enabled: bool,
    start: Instant,
    bar: Option<ProgressBar>,
}

impl Bar {
    pub fn new(quiet: bool) -> Self {
        Bar { enabled: !quiet && std::io::stderr().is_terminal(), start: Instant::now(), bar: None }
    }

    pub fn update(&mut self, p: Progress) {
        if !self.enabled || self.start.elapsed() < Duration::from_secs(1) {
            return;
        }
        let bar = self.bar.get_or_insert_with(|| {
            let b = ProgressBar::new(p.bytes_total);
            b.set_style(
                ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {binary_bytes_per_sec} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            b
        });
        bar.set_position(p.bytes_done.min(p.bytes_total));
        bar.set_message(format!("{} packets", p.packets));
    }

    pub fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}
