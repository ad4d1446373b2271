//! The text `stats.log`: a block per stats interval, laid out as Suricata
//! lays its out (a dated header, then one `counter | thread | value` line
//! per counter: the totals as `Total`, then each thread's own with
//! `threads: yes`), so scripts that read Suricata's file read vigil's.

use crate::writer::EveWriter;
use std::io;
use std::path::Path;
use vigil_types::Timestamp;

/// Width of the counter column, and of the thread column.
const NAME_WIDTH: usize = 60;
const THREAD_WIDTH: usize = 25;

/// What a `- stats:` output shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatsLogOptions {
    /// `totals`: the counters summed over threads.
    pub totals: bool,
    /// `threads`: each thread's own.
    pub threads: bool,
    /// `null-values`: counters that are zero too.
    pub null_values: bool,
}

/// Appends stats blocks to a file.
pub struct StatsLog {
    lines: EveWriter,
    opts: StatsLogOptions,
}

impl StatsLog {
    /// Opens (creating or, with `append`, extending) the file.
    pub fn create(path: impl AsRef<Path>, append: bool, opts: StatsLogOptions) -> io::Result<Self> {
        Ok(StatsLog { lines: EveWriter::create(path, append)?, opts })
    }

    /// Another writer on the same file.
    pub fn share(&self) -> StatsLog {
        StatsLog { lines: self.lines.share(), opts: self.opts }
    }

    /// One block, written through at once (stats come seldom, and a reader
    /// tailing the file expects each block whole when it comes).
    pub fn write<S: AsRef<str>>(
        &mut self,
        now: Timestamp,
        uptime_secs: u64,
        totals: &[(S, u64)],
        threads: &[(String, Vec<(String, u64)>)],
    ) -> io::Result<()> {
        self.lines.write_line(&stats_block(now, uptime_secs, totals, threads, self.opts))?;
        self.lines.flush()
    }

    /// The writer the blocks go through (reopening after a rotation).
    pub fn writer_mut(&mut self) -> &mut EveWriter {
        &mut self.lines
    }

    pub fn path(&self) -> &Path {
        self.lines.path()
    }
}

/// A block of `stats.log` (without its last newline). `now` is the wall
/// clock, written in UTC as vigil writes every time.
pub fn stats_block<S: AsRef<str>>(
    now: Timestamp,
    uptime_secs: u64,
    totals: &[(S, u64)],
    threads: &[(String, Vec<(String, u64)>)],
    opts: StatsLogOptions,
) -> String {
    let rule = "-".repeat(NAME_WIDTH + THREAD_WIDTH + 14);
    let secs = now.secs();
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = crate::time::civil_from_days(secs.div_euclid(86_400));
    let up = uptime_secs;
    let mut out = format!(
        "{rule}\nDate: {m:02}/{d:02}/{y:04} -- {:02}:{:02}:{:02} (uptime: {}d, {:02}h {:02}m {:02}s)\n{rule}\n",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60,
        up / 86_400,
        (up / 3600) % 24,
        (up / 60) % 60,
        up % 60,
    );
    out.push_str(&format!("{:<NAME_WIDTH$} | {:<THREAD_WIDTH$} | Value\n{rule}", "Counter", "TM Name"));
    let mut line = |name: &str, thread: &str, value: u64| {
        if value != 0 || opts.null_values {
            out.push_str(&format!("\n{name:<NAME_WIDTH$} | {thread:<THREAD_WIDTH$} | {value}"));
        }
    };
    if opts.totals {
        for (name, value) in totals {
            line(name.as_ref(), "Total", *value);
        }
    }
    if opts.threads {
        for (thread, counters) in threads {
            for (name, value) in counters {
                line(name, thread, *value);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_in_suricatas_layout() {
        let opts = StatsLogOptions { totals: true, threads: false, null_values: false };
        // 2026-11-27 06:11:29 UTC, 1 day 2 h 3 min 4 s up.
        let now = Timestamp::from_micros(1_795_759_889, 0);
        let up = 86_400 + 2 * 3600 + 3 * 60 + 4;
        let threads = vec![("W#01".to_string(), vec![("decoder.pkts".to_string(), 7)])];
        let text = stats_block(now, up, &[("decoder.pkts", 35), ("decoder.ipv6", 0)], &threads, opts);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "-".repeat(99));
        assert_eq!(lines[1], "Date: 11/27/2026 -- 06:11:29 (uptime: 1d, 02h 03m 04s)");
        assert_eq!(lines[3], format!("Counter{} | TM Name{} | Value", " ".repeat(53), " ".repeat(18)));
        assert_eq!(lines[5], format!("decoder.pkts{} | Total{} | 35", " ".repeat(48), " ".repeat(20)));
        assert_eq!(lines.len(), 6, "zero counters are left out without null-values: {text}");
        let all = StatsLogOptions { threads: true, null_values: true, ..opts };
        let text = stats_block(now, up, &[("decoder.pkts", 35), ("decoder.ipv6", 0)], &threads, all);
        assert!(text.ends_with(&format!("decoder.pkts{} | W#01{} | 7", " ".repeat(48), " ".repeat(21))), "{text}");
        assert!(text.contains("decoder.ipv6"));
    }

    #[test]
    fn each_block_reaches_the_file_whole() {
        let dir = std::env::temp_dir().join(format!("vigil-statslog-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("stats.log");
        let opts = StatsLogOptions { totals: true, threads: false, null_values: false };
        let mut log = StatsLog::create(&path, false, opts).unwrap();
        log.write(Timestamp::default(), 0, &[("flow.total", 3)], &[]).unwrap();
        log.write(Timestamp::default(), 8, &[("flow.total", 5)], &[]).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.matches("Date: ").count(), 2, "written through, without a flush at the end");
        assert!(text.ends_with("| 5\n"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
