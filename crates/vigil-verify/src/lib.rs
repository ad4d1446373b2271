//! Runs Suricata's own regression suite, [suricata-verify], against the `vigil`
//! binary: the conformance yardstick of the project.
//!
//! It owns everything between a suite directory and a verdict per test: finding the
//! tests (`discover`), deciding which apply to the Suricata version and build
//! features vigil claims (`requires`, `version`), turning a `test.yaml` into a vigil
//! command line (`invocation`, `command`, `srcdir`), running it with a deadline
//! (`process`), evaluating the checks on its output with upstream's Python semantics
//! (`checks`, `matching`, `yaml`), and reporting (`report`).
//!
//! ```text
//! <suite>/tests/**/test.yaml ─> discover ─> runner (per test, on N threads)
//!     requires/skip ─> invocation ─> vigil -r pcap -l out ─> checks(out/eve.json)
//!                                                  └─> Summary ─> report / JSON
//! ```
//!
//! The library entry point is [`run`]; the `vigil-verify` binary is a thin CLI over it.
//!
//! ```no_run
//! use vigil_verify::{run, Options};
//! let mut opts = Options::new("/work/shared/conformance/suricata-verify");
//! opts.vigil = Some("target/debug/vigil".into());
//! opts.list = Some("tests/conformance-passing.txt".into());
//! let summary = run(&opts).expect("usable options");
//! for failure in summary.failures() {
//!     eprintln!("{}: {}", failure.name, failure.reason.as_deref().unwrap_or(""));
//! }
//! assert!(summary.all_passed());
//! ```
//!
//! [suricata-verify]: https://github.com/OISF/suricata-verify

mod checks;
mod command;
mod discover;
mod invocation;
mod matching;
mod process;
mod report;
mod requires;
mod runner;
mod srcdir;
mod version;
mod yaml;

use std::collections::HashMap;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::Serialize;

pub use invocation::{Honoured, Takes, HONOURED};
pub use version::{SuricataVersion, CLAIMED as CLAIMED_VERSION};

/// What to run and how.
#[derive(Debug, Clone)]
pub struct Options {
    /// The suite: a directory with `tests/` (and optionally `manifest.json`, `etc/`).
    pub suite_root: PathBuf,
    /// The vigil binary; `None` looks next to the current executable, then in `$PATH`.
    pub vigil: Option<PathBuf>,
    /// Tests run at once; 0 means one per CPU.
    pub jobs: usize,
    /// Keep only tests whose path contains one of these (all tests when empty).
    pub filters: Vec<String>,
    /// Keep only the tests named in this file (one per line, `#` comments).
    pub list: Option<PathBuf>,
    /// Deadline for one test, all of its processes together.
    pub timeout: Duration,
    /// Keep each test's output directory under this directory.
    pub keep_output: Option<PathBuf>,
    /// Passed as `-c` to tests without their own `suricata.yaml`.
    pub default_config: Option<PathBuf>,
    /// Build features vigil has (for `requires: features` and `skip: feature`).
    pub features: Vec<String>,
    /// Print one progress line per finished test on stderr.
    pub progress: bool,
}

impl Options {
    pub fn new(suite_root: impl Into<PathBuf>) -> Options {
        Options {
            suite_root: suite_root.into(),
            vigil: None,
            jobs: 0,
            filters: Vec::new(),
            list: None,
            timeout: Duration::from_secs(60),
            keep_output: None,
            default_config: None,
            features: Vec::new(),
            progress: false,
        }
    }
}

/// A test's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Pass,
    Fail,
    Skip,
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Status::Pass => "PASS",
            Status::Fail => "FAIL",
            Status::Skip => "SKIP",
        })
    }
}

/// The result of one test.
#[derive(Debug, Clone, Serialize)]
pub struct TestResult {
    /// Path under `tests/`, e.g. `detect-http-uri/UriTestSig01`.
    pub name: String,
    pub theme: String,
    pub status: Status,
    /// Why it failed or was skipped (one line).
    pub reason: Option<String>,
    pub duration_ms: u64,
    /// Every check expects `count: 0`, so an engine that emits nothing passes.
    pub negative_only: bool,
}

/// All results of a run, in test-path order.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    pub results: Vec<TestResult>,
}

impl Summary {
    pub fn count(&self, status: Status) -> usize {
        self.results.iter().filter(|r| r.status == status).count()
    }

    /// No selected test failed (skips are fine).
    pub fn all_passed(&self) -> bool {
        self.count(Status::Fail) == 0
    }

    pub fn failures(&self) -> impl Iterator<Item = &TestResult> {
        self.results.iter().filter(|r| r.status == Status::Fail)
    }

    pub fn get(&self, name: &str) -> Option<&TestResult> {
        self.results.iter().find(|r| r.name == name)
    }
}

/// A problem with the options themselves (exit status 2 in the CLI).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Runs the selected tests of a suite. Tests named in the `list` file but missing
/// from the suite are reported as failures, so a renamed test cannot silently drop
/// out of a ratchet.
pub fn run(opts: &Options) -> Result<Summary, UsageError> {
    let usage = |msg: String| UsageError(msg);
    let suite_root = std::fs::canonicalize(&opts.suite_root)
        .map_err(|e| usage(format!("suite root {}: {e}", opts.suite_root.display())))?;
    let tests_dir = suite_root.join("tests");
    if !tests_dir.is_dir() {
        return Err(usage(format!("{} has no tests/ directory", suite_root.display())));
    }
    let vigil = resolve_vigil(opts.vigil.as_deref())?;
    let default_config = match &opts.default_config {
        Some(p) => Some(std::fs::canonicalize(p).map_err(|e| usage(format!("default config {}: {e}", p.display())))?),
        None => None,
    };
    let keep_output = match &opts.keep_output {
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(|e| usage(format!("keep-output {}: {e}", dir.display())))?;
            Some(std::fs::canonicalize(dir).map_err(|e| usage(e.to_string()))?)
        }
        None => None,
    };

    let all = discover::discover(&tests_dir).map_err(|e| usage(format!("reading {}: {e}", tests_dir.display())))?;
    let listed = match &opts.list {
        Some(path) => Some(discover::read_list(path).map_err(|e| usage(format!("list {}: {e}", path.display())))?),
        None => None,
    };
    let keep = |name: &str| opts.filters.is_empty() || opts.filters.iter().any(|f| name.contains(f.as_str()));
    let mut selected: Vec<discover::TestCase> = all
        .iter()
        .filter(|t| keep(&t.name))
        .filter(|t| listed.as_ref().is_none_or(|l| l.contains(&t.name)))
        .cloned()
        .collect();
    let themes = discover::manifest_themes(&suite_root);
    let mut missing: Vec<TestResult> = listed
        .iter()
        .flatten()
        .filter(|name| keep(name) && !all.iter().any(|t| &t.name == *name))
        .map(|name| TestResult {
            name: name.clone(),
            theme: discover::theme_of(name, &themes),
            status: Status::Fail,
            reason: Some("not found in suite".to_string()),
            duration_ms: 0,
            negative_only: false,
        })
        .collect();
    missing.sort_by(|a, b| a.name.cmp(&b.name));
    missing.dedup_by(|a, b| a.name == b.name);
    selected.dedup_by(|a, b| a.name == b.name);

    let scratch = std::env::temp_dir().join(format!(
        "vigil-verify-{}-{}",
        std::process::id(),
        SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0)
    ));
    let _cleanup = RemoveOnDrop(scratch.clone());
    let srcdir = srcdir::FakeSrcDir::create(&scratch.join("srcdir"), &vigil, &suite_root, default_config.as_deref())
        .map_err(|e| usage(format!("creating scratch directory {}: {e}", scratch.display())))?;
    let runner = runner::Runner {
        claims: {
            let mut claims = requires::Claims::default();
            claims.features.extend(opts.features.iter().cloned());
            claims.features.extend(built_features(&vigil));
            claims
        },
        vigil,
        suite_root,
        srcdir,
        timeout: opts.timeout,
        keep_output,
        default_config,
        scratch,
    };

    let mut results = run_all(&runner, &selected, &themes, opts);
    results.append(&mut missing);
    results.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(Summary { results })
}

/// Runs the tests on `jobs` threads; results come back in input order.
fn run_all(
    runner: &runner::Runner,
    tests: &[discover::TestCase],
    themes: &HashMap<String, String>,
    opts: &Options,
) -> Vec<TestResult> {
    let jobs = match opts.jobs {
        0 => std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        n => n,
    }
    .min(tests.len().max(1));
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let slots: Mutex<Vec<Option<TestResult>>> = Mutex::new(vec![None; tests.len()]);
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(case) = tests.get(i) else { break };
                let start = Instant::now();
                let outcome = runner.run_test(case, i);
                let result = TestResult {
                    name: case.name.clone(),
                    theme: discover::theme_of(&case.name, themes),
                    status: outcome.status,
                    reason: outcome.reason,
                    duration_ms: start.elapsed().as_millis() as u64,
                    negative_only: outcome.negative_only,
                };
                if opts.progress {
                    let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                    let _ =
                        writeln!(std::io::stderr().lock(), "[{n}/{}] {} {}", tests.len(), result.status, result.name);
                }
                if let Ok(mut slots) = slots.lock() {
                    slots[i] = Some(result);
                }
            });
        }
    });
    slots.into_inner().unwrap_or_default().into_iter().flatten().collect()
}

/// The features the binary says it was built with (`--build-info`'s
/// `Features:` line), as suricata-verify reads Suricata's: some, such as
/// `MAGIC`, depend on the machine it runs on.
fn built_features(vigil: &Path) -> Vec<String> {
    let Ok(out) = std::process::Command::new(vigil).arg("--build-info").output() else { return Vec::new() };
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().find_map(|l| l.strip_prefix("Features:")).unwrap_or_default();
    line.split_whitespace().map(str::to_string).collect()
}

/// The vigil binary: as given (a bare name is looked up in `$PATH`), else `vigil`
/// next to this executable (or one level up from Cargo's `deps/`), else `$PATH`.
fn resolve_vigil(given: Option<&Path>) -> Result<PathBuf, UsageError> {
    let found = match given {
        Some(p) if p.components().count() > 1 || p.is_file() => Some(p.to_path_buf()).filter(|p| p.is_file()),
        Some(p) => search_path(p.as_os_str()),
        None => {
            let exe_dir = std::env::current_exe().ok().and_then(|e| e.parent().map(Path::to_path_buf));
            let mut near = Vec::new();
            if let Some(dir) = exe_dir {
                near.push(dir.join("vigil"));
                if dir.file_name().is_some_and(|n| n == "deps") {
                    if let Some(up) = dir.parent() {
                        near.push(up.join("vigil"));
                    }
                }
            }
            near.into_iter().find(|p| p.is_file()).or_else(|| search_path("vigil".as_ref()))
        }
    };
    let found = found.ok_or_else(|| {
        UsageError(match given {
            Some(p) => format!("vigil binary {} not found", p.display()),
            None => "cannot find the vigil binary; pass --vigil PATH".to_string(),
        })
    })?;
    std::fs::canonicalize(&found).map_err(|e| UsageError(format!("vigil binary {}: {e}", found.display())))
}

fn search_path(name: &std::ffi::OsStr) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|p| p.is_file())
}

struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Shortens text for one-line reports (newlines become spaces).
pub(crate) fn clip(text: &str, max_chars: usize) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= max_chars {
        return one_line;
    }
    let mut cut: String = one_line.chars().take(max_chars.saturating_sub(3)).collect();
    cut.push_str("...");
    cut
}
