//! `requires:` and `skip:` evaluation, for a whole test and for single checks.
//!
//! Keys are evaluated in file order and the first unmet one gives the reason, as
//! upstream does. What vigil cannot evaluate is a failure, not a skip, so it shows up
//! in the pass rate instead of silently shrinking the suite.

use std::collections::BTreeSet;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::Duration;

use crate::process::{self, Exit};
use crate::version::{self, Cmp, SuricataVersion};
use crate::yaml::Yaml;

/// What the engine under test claims to be.
#[derive(Debug, Clone)]
pub struct Claims {
    pub version: SuricataVersion,
    /// Build features (`HAVE_LUA`, `HAVE_JA3`, ...) vigil really has.
    pub features: BTreeSet<String>,
}

/// Build features every vigil has: `QA_SIMULATION` is the `--simulate-*` switches.
pub const BUILT_IN_FEATURES: &[&str] = &["QA_SIMULATION"];

impl Default for Claims {
    fn default() -> Self {
        Claims { version: version::CLAIMED, features: BUILT_IN_FEATURES.iter().map(|f| f.to_string()).collect() }
    }
}

/// Where requirement scripts and `files:` are evaluated.
pub struct ReqContext<'a> {
    pub claims: &'a Claims,
    /// Directory `files:` are relative to and `script:` runs in.
    pub cwd: &'a Path,
    /// Extra environment for `script:` (TEST_DIR, SRCDIR, OUTPUT_DIR, ...).
    pub env: &'a [(String, String)],
    pub timeout: Duration,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Met,
    /// Skip, with the reason.
    Unmet(String),
    /// The requirement itself is unusable or unsupported.
    Fail(String),
}

/// Evaluates a `requires:` mapping. `null` or an empty mapping is met.
pub fn check_requires(requires: &Yaml, ctx: &ReqContext<'_>) -> Verdict {
    let entries = match requires {
        Yaml::Null => return Verdict::Met,
        Yaml::Map(entries) => entries,
        other => return Verdict::Fail(format!("requires: expected a mapping, got {other}")),
    };
    for (key, value) in entries {
        let verdict = match key.as_str() {
            Some(k @ ("min-version" | "lt-version" | "gt-version" | "version")) => version_req(k, value, ctx),
            Some("features") => each_item(value, |f| {
                if ctx.claims.features.contains(f) {
                    Verdict::Met
                } else {
                    Verdict::Unmet(format!("requires feature {f}"))
                }
            }),
            Some("env") => each_item(value, |name| {
                if std::env::var_os(name).is_some() {
                    Verdict::Met
                } else {
                    Verdict::Unmet(format!("requires env var {name}"))
                }
            }),
            Some("files") => each_item(value, |file| {
                if ctx.cwd.join(file).exists() {
                    Verdict::Met
                } else {
                    Verdict::Unmet(format!("requires file {file}"))
                }
            }),
            Some("script") => each_item(value, |script| match process::shell(script, ctx.cwd, ctx.env, ctx.timeout) {
                Ok(Exit::Code(0)) => Verdict::Met,
                _ => Verdict::Unmet("requires script returned false".to_string()),
            }),
            // Decided by the runner together with the test's own `pcap:` key.
            Some("pcap") => Verdict::Met,
            Some("lambda") => lambda(value),
            Some("os") => prefix_req(value, std::env::consts::OS),
            Some("arch") => prefix_req(value, std::env::consts::ARCH),
            _ => Verdict::Fail(format!("unknown requires type: {key}")),
        };
        if verdict != Verdict::Met {
            return verdict;
        }
    }
    Verdict::Met
}

fn version_req(key: &str, value: &Yaml, ctx: &ReqContext<'_>) -> Verdict {
    let (cmp, reason) = match key {
        "min-version" => (Cmp::Gte, "requires at least version"),
        "lt-version" => (Cmp::Lt, "for version less than"),
        "gt-version" => (Cmp::Gt, "for version greater than"),
        _ => (Cmp::Equal, "only for version"),
    };
    let text = value.py_str();
    match version::check(ctx.claims.version, cmp, &text) {
        Ok(true) => Verdict::Met,
        Ok(false) => Verdict::Unmet(format!("{reason} {text}")),
        Err(e) => Verdict::Fail(format!("requires {key}: {e}")),
    }
}

/// Applies `f` to each item of a list (a lone scalar counts as a one-item list).
fn each_item(value: &Yaml, mut f: impl FnMut(&str) -> Verdict) -> Verdict {
    let items: Vec<String> = match value {
        Yaml::Seq(items) => items.iter().map(Yaml::py_str).collect(),
        Yaml::Null => Vec::new(),
        scalar => vec![scalar.py_str()],
    };
    for item in &items {
        let verdict = f(item);
        if verdict != Verdict::Met {
            return verdict;
        }
    }
    Verdict::Met
}

/// `os:` / `arch:`: the running platform's name must start with the value.
fn prefix_req(value: &Yaml, actual: &str) -> Verdict {
    let wanted = value.py_str();
    if actual.to_lowercase().starts_with(&wanted.to_lowercase()) {
        Verdict::Met
    } else {
        Verdict::Unmet(wanted)
    }
}

/// `lambda:` is a Python expression. Only the platform tests the suite actually uses
/// (`sys.platform == "win32"` and `!=`) are understood; anything else is a failure.
fn lambda(value: &Yaml) -> Verdict {
    let expr = value.py_str();
    let parsed = ["==", "!="].iter().find_map(|op| {
        let (lhs, rhs) = expr.split_once(op)?;
        if lhs.trim() != "sys.platform" {
            return None;
        }
        let rhs = rhs.trim();
        let quoted = (rhs.starts_with('"') && rhs.ends_with('"')) || (rhs.starts_with('\'') && rhs.ends_with('\''));
        (quoted && rhs.len() >= 2).then(|| (*op, rhs[1..rhs.len() - 1].to_string()))
    });
    match parsed {
        Some((op, platform)) => {
            // Python's sys.platform on Linux.
            let equal = std::env::consts::OS == platform;
            if equal == (op == "==") {
                Verdict::Met
            } else {
                Verdict::Unmet(expr)
            }
        }
        None => Verdict::Fail("requires lambda: unsupported".to_string()),
    }
}

/// Evaluates a test's `skip:` list. `{config: ...}` entries would need the effective
/// configuration of the engine, which vigil cannot dump; they never match.
pub fn check_skip(skip: &Yaml, claims: &Claims) -> Verdict {
    let entries = match skip {
        Yaml::Null | Yaml::Bool(false) => return Verdict::Met,
        Yaml::Bool(true) => return Verdict::Unmet("skipped by default".to_string()),
        Yaml::Seq(entries) => entries,
        other => return Verdict::Fail(format!("skip: expected a list, got {other}")),
    };
    for entry in entries {
        let msg = entry.get("msg").map(Yaml::py_str);
        if let Some(uid) = entry.get("uid") {
            if current_uid().is_some_and(|me| crate::matching::count_matches(me as usize, uid)) {
                return Verdict::Unmet(msg.unwrap_or_else(|| format!("not for uid {uid}")));
            }
        }
        if let Some(feature) = entry.get("feature") {
            let feature = feature.py_str();
            if claims.features.contains(&feature) {
                return Verdict::Unmet(msg.unwrap_or_else(|| format!("not for feature {feature}")));
            }
        }
    }
    Verdict::Met
}

/// The effective uid: `/proc/self` belongs to it.
fn current_uid() -> Option<u32> {
    std::fs::metadata("/proc/self").ok().map(|m| m.uid())
}

/// The requirements of a single check: its `requires:` block plus the older spellings
/// upstream still honours directly on a check (`version`, `min-version`, `lt-version`,
/// `feature`).
pub fn check_level_requires(check: &Yaml) -> Yaml {
    let mut entries = match check.get("requires") {
        Some(Yaml::Map(entries)) => entries.clone(),
        _ => Vec::new(),
    };
    for key in ["version", "min-version", "lt-version"] {
        if let Some(v) = check.get(key) {
            entries.push((Yaml::Str(key.to_string()), v.clone()));
        }
    }
    if let Some(f) = check.get("feature") {
        entries.push((Yaml::Str("features".to_string()), Yaml::Seq(vec![f.clone()])));
    }
    Yaml::Map(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(text: &str, features: &[&str]) -> Verdict {
        let claims = Claims { features: features.iter().map(|s| s.to_string()).collect(), ..Claims::default() };
        let dir = std::env::temp_dir();
        let ctx = ReqContext { claims: &claims, cwd: &dir, env: &[], timeout: Duration::from_secs(10) };
        check_requires(&Yaml::parse(text).unwrap(), &ctx)
    }

    #[test]
    fn versions() {
        assert_eq!(eval("min-version: 7.0.14", &[]), Verdict::Met);
        assert_eq!(eval("min-version: 8", &[]), Verdict::Met);
        assert_eq!(eval("min-version: 9", &[]), Verdict::Unmet("requires at least version 9".into()));
        assert_eq!(eval("lt-version: 8", &[]), Verdict::Unmet("for version less than 8".into()));
        assert_eq!(eval("lt-version: 9", &[]), Verdict::Met);
        assert_eq!(eval("version: 8.0", &[]), Verdict::Met);
        assert_eq!(eval("version: 7", &[]), Verdict::Unmet("only for version 7".into()));
        assert_eq!(eval("gt-version: 6.0.11", &[]), Verdict::Met);
        assert!(matches!(eval("min-version: banana", &[]), Verdict::Fail(_)));
    }

    #[test]
    fn first_unmet_key_in_file_order_wins() {
        assert_eq!(
            eval("features: [HAVE_LUA]\nmin-version: 9", &[]),
            Verdict::Unmet("requires feature HAVE_LUA".into())
        );
        assert_eq!(
            eval("min-version: 9\nlambda: 'anything'", &[]),
            Verdict::Unmet("requires at least version 9".into())
        );
    }

    #[test]
    fn features_files_env_os_arch() {
        assert_eq!(eval("features: [HAVE_LUA]", &["HAVE_LUA"]), Verdict::Met);
        assert_eq!(
            eval("files: [definitely-not-here.txt]", &[]),
            Verdict::Unmet("requires file definitely-not-here.txt".into())
        );
        assert_eq!(eval("env: [PATH]", &[]), Verdict::Met);
        assert_eq!(
            eval("env: [VIGIL_VERIFY_NO_SUCH_VAR]", &[]),
            Verdict::Unmet("requires env var VIGIL_VERIFY_NO_SUCH_VAR".into())
        );
        assert_eq!(eval("os: linux", &[]), Verdict::Met);
        assert_eq!(eval("os: windows", &[]), Verdict::Unmet("windows".into()));
        assert_eq!(eval(&format!("arch: {}", std::env::consts::ARCH), &[]), Verdict::Met);
        assert_eq!(eval("pcap: false", &[]), Verdict::Met);
        assert_eq!(eval("", &[]), Verdict::Met);
        assert!(matches!(eval("bogus: 1", &[]), Verdict::Fail(_)));
    }

    #[test]
    fn scripts_and_lambdas() {
        assert_eq!(eval("script: ['true']", &[]), Verdict::Met);
        assert_eq!(eval("script: ['true', 'exit 1']", &[]), Verdict::Unmet("requires script returned false".into()));
        assert_eq!(eval("lambda: sys.platform != \"win32\"", &[]), Verdict::Met);
        assert!(matches!(eval("lambda: sys.platform == \"win32\"", &[]), Verdict::Unmet(_)));
        assert_eq!(eval("lambda: len(x) > 2", &[]), Verdict::Fail("requires lambda: unsupported".into()));
    }

    #[test]
    fn skip_conditions() {
        let claims = Claims { features: ["HAVE_JA3".to_string()].into_iter().collect(), ..Claims::default() };
        let skip = |t: &str| check_skip(&Yaml::parse(t).unwrap(), &claims);
        assert_eq!(skip("- feature: HAVE_JA3"), Verdict::Unmet("not for feature HAVE_JA3".into()));
        assert_eq!(skip("- feature: FUZZ"), Verdict::Met);
        let me = current_uid().unwrap();
        assert_eq!(skip(&format!("- uid: {me}\n  msg: not as me")), Verdict::Unmet("not as me".into()));
        assert_eq!(skip(&format!("- uid: {}", me + 1)), Verdict::Met);
        assert_eq!(skip("- config: {stream.inline: 'true'}"), Verdict::Met);
        assert_eq!(skip("true"), Verdict::Unmet("skipped by default".into()));
    }

    #[test]
    fn check_level_legacy_keys_join_requires() {
        let check = Yaml::parse("requires: {min-version: 7}\nlt-version: 8\nfeature: X\ncount: 1").unwrap();
        let req = check_level_requires(&check);
        assert_eq!(req.to_string(), "{min-version: 7, lt-version: 8, features: [X]}");
    }
}
