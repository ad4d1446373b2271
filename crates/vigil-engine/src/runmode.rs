//! Which threading model a run uses, from `--runmode`/`--threads` or the
//! configuration's `runmode` and `threading.detect-thread-ratio`.

use crate::error::EngineError;
use crate::options::RunOptions;
use vigil_config::Config;

/// How packets reach the pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Runmode {
    /// One thread reads, decodes, inspects and logs.
    #[default]
    Single,
    /// A reader spreads packets over this many workers by a symmetric hash of
    /// their IP addresses; each worker owns its flows. Offline, a full worker
    /// ring makes the reader wait: no packet is lost.
    Autofp { workers: usize },
    /// Reading files: every worker reads them and inspects the frames whose
    /// flow hash is its own (the same split as autofp), with no reader
    /// thread handing frames over. Live, each capture socket feeds a worker.
    Workers { workers: usize },
}

/// Suricata's upper bound on detect threads, which also bounds a hostile
/// `--threads` or ratio.
const MAX_WORKERS: usize = 1024;

impl Runmode {
    pub fn resolve(opts: &RunOptions, config: &Config) -> Result<Runmode, EngineError> {
        let name = opts.runmode.as_deref().or(config.runtime.runmode.as_deref()).unwrap_or("single");
        match name {
            "single" => Ok(Runmode::Single),
            "autofp" => Ok(Runmode::Autofp { workers: workers(opts.threads, config)? }),
            "workers" => Ok(Runmode::Workers { workers: workers(opts.threads, config)? }),
            other => Err(EngineError::Usage(format!("unknown runmode {other:?}: use single, autofp or workers"))),
        }
    }

    pub fn workers(self) -> usize {
        match self {
            Runmode::Single => 1,
            Runmode::Autofp { workers } | Runmode::Workers { workers } => workers,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Runmode::Single => "single",
            Runmode::Autofp { .. } => "autofp",
            Runmode::Workers { .. } => "workers",
        }
    }
}

/// `--threads`, else one worker per CPU times `threading.detect-thread-ratio`.
fn workers(threads: Option<usize>, config: &Config) -> Result<usize, EngineError> {
    if let Some(n) = threads {
        if n == 0 || n > MAX_WORKERS {
            return Err(EngineError::Usage(format!("--threads {n}: give 1 to {MAX_WORKERS} workers")));
        }
        return Ok(n);
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let ratio = config.runtime.threading.detect_thread_ratio;
    let n = if ratio.is_finite() && ratio > 0.0 { (cpus as f64 * ratio).round() as usize } else { cpus };
    Ok(n.clamp(1, MAX_WORKERS))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(runmode: Option<&str>, threads: Option<usize>) -> RunOptions {
        RunOptions { runmode: runmode.map(String::from), threads, ..RunOptions::default() }
    }

    #[test]
    fn command_line_over_config_and_thread_counts() {
        let mut config = Config::default();
        assert_eq!(Runmode::resolve(&opts(None, None), &config).unwrap(), Runmode::Single);
        config.runtime.runmode = Some("autofp".into());
        assert_eq!(Runmode::resolve(&opts(None, Some(3)), &config).unwrap(), Runmode::Autofp { workers: 3 });
        assert_eq!(Runmode::resolve(&opts(Some("single"), None), &config).unwrap(), Runmode::Single);
        assert_eq!(Runmode::resolve(&opts(Some("workers"), Some(2)), &config).unwrap().workers(), 2);
        config.runtime.threading.detect_thread_ratio = 0.0001;
        assert_eq!(Runmode::resolve(&opts(None, None), &config).unwrap().workers(), 1);
        assert!(Runmode::resolve(&opts(Some("autofp"), Some(0)), &config).is_err());
        assert!(Runmode::resolve(&opts(Some("autofp"), Some(100_000)), &config).is_err());
        let err = Runmode::resolve(&opts(Some("fast"), None), &config).unwrap_err().to_string();
        assert!(err.contains("unknown runmode"), "{err}");
    }
}
