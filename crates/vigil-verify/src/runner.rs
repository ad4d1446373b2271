//! One test, start to finish: read `test.yaml`, decide skip or run, run vigil (or the
//! test's `command:`), compare the exit code, evaluate the checks.
//!
//! Order follows upstream: test `requires:` (plus the pcap requirement), `skip:`,
//! then the invocation, then `count`/`retry` rounds of run + checks.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::checks::{run_checks, ChecksOutcome, Outputs};
use crate::command::check_command;
use crate::discover::TestCase;
use crate::invocation::{default_args, files_with_ext, substitute, DefaultInputs};
use crate::matching::int_matches;
use crate::process::{self, Exit};
use crate::requires::{check_requires, check_skip, Claims, ReqContext, Verdict};
use crate::srcdir::FakeSrcDir;
use crate::yaml::Yaml;
use crate::Status;

/// Top-level `test.yaml` keys vigil-verify cannot honour.
const UNSUPPORTED_KEYS: &[&str] = &["unix-commands"];

/// Everything shared by the tests of one run.
pub(crate) struct Runner {
    pub claims: Claims,
    pub vigil: PathBuf,
    pub suite_root: PathBuf,
    pub srcdir: FakeSrcDir,
    /// Budget for everything one test runs (all rounds, scripts included).
    pub timeout: Duration,
    pub keep_output: Option<PathBuf>,
    pub default_config: Option<PathBuf>,
    /// Per-run scratch space; output directories live here unless kept.
    pub scratch: PathBuf,
}

/// The verdict on one test.
pub(crate) struct Outcome {
    pub status: Status,
    pub reason: Option<String>,
    pub negative_only: bool,
}

enum Invocation {
    Vigil(Vec<String>),
    Shell(String),
}

impl Runner {
    pub fn run_test(&self, case: &TestCase, index: usize) -> Outcome {
        let out_dir = match &self.keep_output {
            Some(dir) => dir.join(&case.name),
            None => self.scratch.join("out").join(index.to_string()),
        };
        let mut negative_only = false;
        let result = self.run_inner(case, &out_dir, &mut negative_only);
        if self.keep_output.is_none() {
            let _ = fs::remove_dir_all(&out_dir);
        }
        let (status, reason) = match result {
            Ok(ChecksOutcome::Pass) => (Status::Pass, None),
            Ok(ChecksOutcome::Skip(r)) => (Status::Skip, Some(r)),
            Ok(ChecksOutcome::Fail(r)) | Err(r) => (Status::Fail, Some(r)),
        };
        Outcome { status, reason: reason.map(|r| crate::clip(&r, 300)), negative_only }
    }

    /// `Err` is a failure reason; skips come back as `Ok(Skip)`.
    fn run_inner(&self, case: &TestCase, out_dir: &Path, negative_only: &mut bool) -> Result<ChecksOutcome, String> {
        let text = fs::read_to_string(case.dir.join("test.yaml")).map_err(|e| format!("cannot read test.yaml: {e}"))?;
        let config = match Yaml::parse(&text).map_err(|e| format!("test.yaml: {e}"))? {
            Yaml::Null => Yaml::Map(Vec::new()),
            map @ Yaml::Map(_) => map,
            other => return Err(format!("test.yaml: expected a mapping, got {}", crate::clip(&other.to_string(), 60))),
        };
        *negative_only = is_negative_only(&config);
        let deadline = Instant::now() + self.timeout;
        let test_dir = fs::canonicalize(&case.dir).map_err(|e| format!("test directory: {e}"))?;
        let env = self.env_for(&config, &test_dir, out_dir)?;
        let ctx = ReqContext { claims: &self.claims, cwd: &test_dir, env: &env, timeout: self.timeout };

        if let Some(skip) = unmet(check_requires(config.get("requires").unwrap_or(&Yaml::Null), &ctx))? {
            return Ok(skip);
        }
        if needs_missing_pcap(&config, &test_dir) {
            return Ok(ChecksOutcome::Skip("No pcap file found".to_string()));
        }
        if let Some(skip) = unmet(check_skip(config.get("skip").unwrap_or(&Yaml::Null), &self.claims))? {
            return Ok(skip);
        }
        if let Some(key) = UNSUPPORTED_KEYS.iter().find(|k| config.get(k).is_some()) {
            return Err(format!("unsupported: {key}"));
        }

        let vars = |name: &str| {
            env.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v.clone()).or_else(|| std::env::var(name).ok())
        };
        let invocation = match config.get("command") {
            Some(command) => {
                let raw = command.py_str();
                let cmd = substitute(&raw, &vars);
                check_command(&cmd)?;
                if raw.contains("SRCDIR}/suricata.yaml") || raw.contains("SRCDIR/suricata.yaml") {
                    self.srcdir.ensure_default_yaml().map_err(|_| "needs a default config".to_string())?;
                }
                Invocation::Shell(cmd)
            }
            None => Invocation::Vigil(default_args(&DefaultInputs {
                test_dir: &test_dir,
                config: &config,
                out_dir,
                suite_root: &self.suite_root,
                default_config: self.default_config.as_deref(),
                claimed: self.claims.version,
                vars: &vars,
            })?),
        };

        let rounds = positive_int(config.get("count")).unwrap_or(1);
        let mut retries = positive_int(config.get("retry")).unwrap_or(1);
        loop {
            retries -= 1;
            let mut last = ChecksOutcome::Pass;
            // As upstream: the exit code must hold every round, the checks of the last decide.
            for _ in 0..rounds {
                last = self.run_round(&config, &invocation, &test_dir, out_dir, &env, deadline)?;
            }
            if matches!(last, ChecksOutcome::Fail(_)) && retries > 0 {
                continue;
            }
            return Ok(last);
        }
    }

    fn run_round(
        &self,
        config: &Yaml,
        invocation: &Invocation,
        test_dir: &Path,
        out_dir: &Path,
        env: &[(String, String)],
        deadline: Instant,
    ) -> Result<ChecksOutcome, String> {
        let left = || deadline.saturating_duration_since(Instant::now());
        let _ = fs::remove_dir_all(out_dir);
        fs::create_dir_all(out_dir).map_err(|e| format!("cannot create {}: {e}", out_dir.display()))?;
        for step in items(config.get("setup")) {
            if let Some(script) = step.get("script") {
                if !matches!(process::shell(&script.py_str(), out_dir, env, left()), Ok(Exit::Code(0))) {
                    return Err("setup script failed".to_string());
                }
            }
        }

        let (mut cmd, cmdline) = match invocation {
            Invocation::Vigil(args) => {
                let mut cmd = Command::new(&self.vigil);
                cmd.args(args);
                let line = std::iter::once(self.vigil.display().to_string()).chain(args.iter().cloned());
                (cmd, line.collect::<Vec<_>>().join(" "))
            }
            Invocation::Shell(line) => {
                let mut cmd = Command::new("sh");
                cmd.arg("-c").arg(line);
                (cmd, line.clone())
            }
        };
        let _ = fs::write(out_dir.join("cmdline"), format!("{cmdline}\n"));
        let stdout = File::create(out_dir.join("stdout")).map_err(|e| e.to_string())?;
        let stderr = File::create(out_dir.join("stderr")).map_err(|e| e.to_string())?;
        cmd.current_dir(test_dir)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr);
        let code = match process::run(&mut cmd, left()) {
            Ok(Exit::Code(code)) => code,
            Ok(Exit::TimedOut) => return Err("timeout".to_string()),
            Err(e) => return Err(format!("cannot run {}: {e}", self.vigil.display())),
        };
        // Suricata's console is its stdout, where checks look for its
        // messages; vigil's is its stderr, added to `stdout` after the run.
        if let Ok(console) = fs::read(out_dir.join("stderr")) {
            let mut out =
                fs::OpenOptions::new().append(true).open(out_dir.join("stdout")).map_err(|e| e.to_string())?;
            std::io::Write::write_all(&mut out, &console).map_err(|e| e.to_string())?;
        }
        let expected = config.get("exit-code").cloned().unwrap_or(Yaml::Int(0));
        if !int_matches(code.into(), &expected) {
            return Err(format!("got exit code {code}, expected {expected}"));
        }

        if let Some(pre) = config.get("pre-check") {
            // Upstream ignores how the pre-check ends.
            let _ = process::shell(&pre.py_str(), out_dir, env, left());
        }
        let ctx = ReqContext { claims: &self.claims, cwd: out_dir, env, timeout: left() };
        Ok(run_checks(config.get("checks"), &mut Outputs::new(out_dir), &ctx))
    }

    /// The environment upstream gives the engine and scripts, plus the test's `env:`.
    fn env_for(&self, config: &Yaml, test_dir: &Path, out_dir: &Path) -> Result<Vec<(String, String)>, String> {
        let mut env = vec![
            ("SRCDIR".to_string(), self.srcdir.root.display().to_string()),
            ("TZ".to_string(), "UTC".to_string()),
            ("TEST_DIR".to_string(), test_dir.display().to_string()),
            ("OUTPUT_DIR".to_string(), out_dir.display().to_string()),
        ];
        if std::env::var_os("ASAN_OPTIONS").is_none() {
            env.push(("ASAN_OPTIONS".to_string(), "detect_leaks=1".to_string()));
        }
        match config.get("env") {
            None | Some(Yaml::Null) => {}
            Some(Yaml::Map(entries)) => env.extend(entries.iter().map(|(k, v)| (k.py_str(), v.py_str()))),
            Some(other) => return Err(format!("env: expected a mapping, got {other}")),
        }
        Ok(env)
    }
}

fn unmet(verdict: Verdict) -> Result<Option<ChecksOutcome>, String> {
    match verdict {
        Verdict::Met => Ok(None),
        Verdict::Unmet(reason) => Ok(Some(ChecksOutcome::Skip(reason))),
        Verdict::Fail(reason) => Err(reason),
    }
}

/// Upstream skips a test without `command:` that needs a pcap and has none: no
/// truthy `pcap:` key and no `*.pcap`/`*.pcapng`, unless `requires: pcap: false` or
/// `pcap: false` says none is needed.
fn needs_missing_pcap(config: &Yaml, test_dir: &Path) -> bool {
    if config.get("command").is_some() {
        return false;
    }
    let required = config.get("requires").and_then(|r| r.get("pcap")).is_none_or(Yaml::truthy);
    match config.get("pcap") {
        Some(p) if !p.truthy() => false,
        Some(_) => false,
        None => required && files_with_ext(test_dir, &["pcap", "pcapng"]).is_empty(),
    }
}

fn positive_int(value: Option<&Yaml>) -> Option<usize> {
    match value {
        Some(Yaml::Int(n)) => Some((*n).clamp(1, 1000) as usize),
        _ => None,
    }
}

fn items(value: Option<&Yaml>) -> &[Yaml] {
    match value {
        Some(Yaml::Seq(items)) => items,
        _ => &[],
    }
}

/// A test whose every check is a filter expecting `count: 0`: an engine that emits
/// nothing passes it, so the report counts these apart.
pub(crate) fn is_negative_only(config: &Yaml) -> bool {
    let checks = items(config.get("checks"));
    !checks.is_empty()
        && checks.iter().all(|check| {
            check.as_map().is_some_and(|entries| {
                !entries.is_empty()
                    && entries.iter().all(|(kind, body)| {
                        kind.as_str() == Some("filter") && body.get("count").is_some_and(|c| int_matches(0, c))
                    })
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_only() {
        let y = |t: &str| is_negative_only(&Yaml::parse(t).unwrap());
        assert!(y("checks: [{filter: {count: 0, match: {event_type: alert}}}]"));
        assert!(!y("checks: [{filter: {count: 0, match: {}}}, {filter: {count: 1, match: {}}}]"));
        assert!(!y("checks: [{filter: {count: 0, match: {}}}, {stats: {decoder.pkts: 0}}]"));
        assert!(!y("checks: []"));
        assert!(!y("pcap: x.pcap"));
    }

    #[test]
    fn pcap_requirement() {
        let dir = std::env::temp_dir().join(format!("vigil-verify-runner-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let needs = |t: &str| needs_missing_pcap(&Yaml::parse(t).unwrap(), &dir);
        assert!(needs("{}"));
        assert!(!needs("requires: {pcap: false}"));
        assert!(!needs("pcap: false"));
        assert!(!needs("pcap: ../other/input.pcap"));
        assert!(!needs("command: true"));
        fs::write(dir.join("input.pcap"), "").unwrap();
        assert!(!needs("{}"));
        let _ = fs::remove_dir_all(&dir);
    }
}
