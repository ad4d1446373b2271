//! How a test becomes a vigil command line: the table of Suricata arguments vigil
//! honours, `args:` translation, pcap and rule-file discovery, and the default
//! invocation upstream's runner builds.

use std::path::{Path, PathBuf};

use crate::version::{self, Cmp, SuricataVersion};
use crate::yaml::Yaml;

/// What an honoured argument takes after it.
#[derive(Debug, Clone, Copy)]
pub enum Takes {
    Nothing,
    /// Any value, as the next word or attached (`--set=k=v`, `-Sfile`).
    Value,
    /// One of these values.
    OneOf(&'static [&'static str]),
    /// A value only when attached (`--flag=value`); alone, the flag takes none.
    Attached,
}

/// A Suricata argument vigil accepts with the same meaning.
#[derive(Debug, Clone, Copy)]
pub struct Honoured {
    pub flag: &'static str,
    pub takes: Takes,
}

/// Every Suricata argument vigil honours. Anything not listed fails a test with
/// `unsupported argument: X`; grow this table as vigil's CLI grows.
pub const HONOURED: &[Honoured] = &[
    Honoured { flag: "-k", takes: Takes::OneOf(&["none", "all", "auto"]) },
    Honoured { flag: "--set", takes: Takes::Value },
    Honoured { flag: "--simulate-ips", takes: Takes::Nothing },
    Honoured { flag: "--simulate-packet-flow-memcap", takes: Takes::Value },
    Honoured { flag: "--simulate-packet-tcp-ssn-memcap", takes: Takes::Value },
    Honoured { flag: "--simulate-packet-tcp-reassembly-memcap", takes: Takes::Value },
    Honoured { flag: "--simulate-packet-defrag-memcap", takes: Takes::Value },
    Honoured { flag: "--simulate-applayer-error-at-offset-ts", takes: Takes::Value },
    Honoured { flag: "--simulate-applayer-error-at-offset-tc", takes: Takes::Value },
    Honoured { flag: "--runmode", takes: Takes::OneOf(&["single", "autofp", "workers"]) },
    // `-v`, `-vv`, `-vvv`, ... are recognised as repeats of this one.
    Honoured { flag: "-v", takes: Takes::Nothing },
    Honoured { flag: "--init-errors-fatal", takes: Takes::Nothing },
    Honoured { flag: "-h", takes: Takes::Nothing },
    Honoured { flag: "--include", takes: Takes::Value },
    Honoured { flag: "-S", takes: Takes::Value },
    Honoured { flag: "-s", takes: Takes::Value },
    Honoured { flag: "-r", takes: Takes::Value },
    Honoured { flag: "-l", takes: Takes::Value },
    Honoured { flag: "-c", takes: Takes::Value },
    Honoured { flag: "--disable-detection", takes: Takes::Nothing },
    Honoured { flag: "-T", takes: Takes::Nothing },
    Honoured { flag: "--engine-analysis", takes: Takes::Nothing },
    Honoured { flag: "--strict-rule-keywords", takes: Takes::Attached },
    Honoured { flag: "--no-random", takes: Takes::Nothing },
    Honoured { flag: "--dump-config", takes: Takes::Nothing },
    Honoured { flag: "--build-info", takes: Takes::Nothing },
    Honoured { flag: "-V", takes: Takes::Nothing },
    Honoured { flag: "--data-dir", takes: Takes::Value },
    Honoured { flag: "--list-runmodes", takes: Takes::Nothing },
    Honoured { flag: "--list-app-layer-protos", takes: Takes::Nothing },
    Honoured { flag: "--list-keywords", takes: Takes::Attached },
    Honoured { flag: "--pcap-file-continuous", takes: Takes::Nothing },
    Honoured { flag: "--pcap-file-delete", takes: Takes::Nothing },
    Honoured { flag: "--pcap-file-recursive", takes: Takes::Nothing },
];

fn lookup(flag: &str) -> Option<&'static Honoured> {
    HONOURED.iter().find(|h| h.flag == flag)
}

/// Checks Suricata arguments against [`HONOURED`] and spells them the way vigil takes
/// them (flag and value as separate words). The error is the reason to fail the test.
pub fn translate_args(args: &[String]) -> Result<Vec<String>, String> {
    let unsupported = |what: &str| Err(format!("unsupported argument: {what}"));
    let mut out = Vec::with_capacity(args.len());
    let mut words = args.iter();
    while let Some(word) = words.next() {
        let (flag, attached) = if word.starts_with("--") {
            match word.split_once('=') {
                Some((flag, value)) => (flag, Some(value)),
                None => (word.as_str(), None),
            }
        } else if word.len() > 2 && word.starts_with('-') && word[1..].bytes().all(|b| b == b'v') {
            out.push(word.clone());
            continue;
        } else if word.len() > 2 && word.starts_with('-') && word.is_char_boundary(2) {
            (&word[..2], Some(&word[2..]))
        } else {
            (word.as_str(), None)
        };
        let Some(spec) = lookup(flag).filter(|_| flag.starts_with('-')) else {
            // Name only the flag: values often hold per-run paths, and reasons are diffed.
            return unsupported(if word.starts_with("--") { flag } else { word });
        };
        match spec.takes {
            Takes::Nothing if attached.is_some() => return unsupported(word),
            Takes::Nothing => out.push(spec.flag.to_string()),
            // Kept in one word: a value in the next word would be a new argument.
            Takes::Attached => out.push(match attached {
                Some(v) => format!("{}={v}", spec.flag),
                None => spec.flag.to_string(),
            }),
            Takes::Value | Takes::OneOf(_) => {
                out.push(spec.flag.to_string());
                let value = match attached {
                    Some(v) => v.to_string(),
                    None => match words.next() {
                        Some(v) => v.clone(),
                        None => return unsupported(&format!("{word} (missing value)")),
                    },
                };
                if let Takes::OneOf(allowed) = spec.takes {
                    if !allowed.contains(&value.as_str()) {
                        return unsupported(&format!("{flag} {value}"));
                    }
                }
                out.push(value);
            }
        }
    }
    Ok(out)
}

/// Python `string.Template.substitute` on `$NAME` / `${NAME}` / `$$`, as upstream
/// applies it to `args:` and `command:`. Unknown names and stray `$` are left alone
/// for the shell (upstream would raise there).
pub fn substitute(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find('$') {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 1..];
        if let Some(r) = after.strip_prefix('$') {
            out.push('$');
            rest = r;
            continue;
        }
        let (name, consumed) = if let Some(body) = after.strip_prefix('{') {
            match body.find('}') {
                Some(end) if is_identifier(&body[..end]) => (&body[..end], end + 2),
                _ => ("", 0),
            }
        } else {
            let end = after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(after.len());
            let name = &after[..end];
            if is_identifier(name) {
                (name, end)
            } else {
                ("", 0)
            }
        };
        match (consumed > 0).then(|| lookup(name)).flatten() {
            Some(value) => {
                out.push_str(&value);
                rest = &after[consumed..];
            }
            None => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Splits `args:` entries on whitespace, as upstream does before substituting.
pub fn split_args(args: Option<&Yaml>) -> Result<Vec<String>, String> {
    match args {
        None | Some(Yaml::Null) => Ok(Vec::new()),
        Some(Yaml::Seq(items)) => Ok(items
            .iter()
            .flat_map(|item| item.py_str().split_whitespace().map(str::to_string).collect::<Vec<_>>())
            .collect()),
        Some(other) => Err(format!("args: expected a list, got {other}")),
    }
}

/// What the rule files of a test directory ask for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rules {
    /// No rules: `--disable-detection`.
    Disabled,
    /// Load this file with `-S`.
    Load(PathBuf),
    /// Firewall mode: this file with `--firewall-rules-exclusive`, and the
    /// threat detection file, if any, with `-S`.
    Firewall(PathBuf, Option<PathBuf>),
}

/// Upstream's rule-file discovery over the `*.rules` of a test directory.
pub fn discover_rules(dir: &Path, claimed: SuricataVersion) -> Result<Rules, String> {
    let files = files_with_ext(dir, &["rules"]);
    match files.as_slice() {
        [] => Ok(Rules::Disabled),
        [only] => {
            let base = file_name(only);
            if base.ends_with("firewall.rules") {
                return Ok(Rules::Firewall(only.clone(), None));
            }
            match base.strip_prefix("min").and_then(|r| r.strip_suffix(".rules")) {
                Some(v) => match version::check(claimed, Cmp::Gte, v) {
                    Ok(true) => Ok(Rules::Load(only.clone())),
                    Ok(false) => Ok(Rules::Disabled),
                    Err(e) => Err(format!("rule file {base}: {e}")),
                },
                None => Ok(Rules::Load(only.clone())),
            }
        }
        [first, second] => {
            if !file_name(first).ends_with("firewall.rules") {
                return Err(format!(
                    "multi rule file should have firewall.rules and td.rules. Got {} {}",
                    file_name(first),
                    file_name(second)
                ));
            }
            if !file_name(second).ends_with("td.rules") {
                return Err("multi rule file should have firewall.rules and td.rules".to_string());
            }
            Ok(Rules::Firewall(first.clone(), Some(second.clone())))
        }
        _ => Err("More than 1 rule file found".to_string()),
    }
}

fn file_name(p: &Path) -> String {
    p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// Regular files of `dir` ending in `.ext`, sorted.
pub fn files_with_ext(dir: &Path, exts: &[&str]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let name = file_name(p);
            // A leading-dot file has no extension to Python's glob: `*.pcap` skips `.pcap`.
            !name.starts_with('.') && exts.iter().any(|ext| name.ends_with(&format!(".{ext}"))) && p.is_file()
        })
        .collect();
    out.sort();
    out
}

/// Everything the default invocation depends on.
pub struct DefaultInputs<'a> {
    pub test_dir: &'a Path,
    pub config: &'a Yaml,
    pub out_dir: &'a Path,
    pub suite_root: &'a Path,
    pub default_config: Option<&'a Path>,
    pub claimed: SuricataVersion,
    /// Variables for `${...}` in `args:`.
    pub vars: &'a dyn Fn(&str) -> Option<String>,
}

/// Upstream's default command line (without the program):
/// `<args...> --set classification-file=... --set reference-config-file=...
/// --init-errors-fatal -l <out> [--simulate-ips] [-c <yaml>] [-r <pcap>]
/// (-S <rules> | --disable-detection)`.
pub fn default_args(inp: &DefaultInputs<'_>) -> Result<Vec<String>, String> {
    let raw: Vec<String> = split_args(inp.config.get("args"))?.iter().map(|a| substitute(a, inp.vars)).collect();
    let mut args = translate_args(&raw)?;
    let has = |args: &[String], flag: &str| args.iter().any(|a| a == flag);

    let etc = inp.suite_root.join("etc");
    for (key, file) in [("classification-file", "classification.config"), ("reference-config-file", "reference.config")]
    {
        let path = etc.join(file);
        if path.exists() {
            args.push("--set".to_string());
            args.push(format!("{key}={}", path.display()));
        }
    }
    // vigil rejects a repeated switch, so add these only once.
    if !has(&args, "--init-errors-fatal") {
        args.push("--init-errors-fatal".to_string());
    }
    args.push("-l".to_string());
    args.push(inp.out_dir.display().to_string());
    let basename = file_name(inp.test_dir);
    if basename.contains("ips") && !has(&args, "--simulate-ips") {
        args.push("--simulate-ips".to_string());
    }
    let own_yaml = inp.test_dir.join("suricata.yaml");
    let yaml = if own_yaml.exists() { Some(own_yaml) } else { inp.default_config.map(Path::to_path_buf) };
    if let Some(yaml) = yaml {
        args.push("-c".to_string());
        args.push(yaml.display().to_string());
    }
    if let Some(pcap) = find_pcap(inp.test_dir, inp.config)? {
        args.push("-r".to_string());
        args.push(pcap.display().to_string());
    }
    let rules = match inp.config.get("rules").filter(|r| r.truthy()) {
        Some(r) => {
            let path = inp.test_dir.join(r.py_str());
            if !path.exists() {
                return Err(format!("rules file does not exist: {}", r.py_str()));
            }
            Rules::Load(path)
        }
        None => discover_rules(inp.test_dir, inp.claimed)?,
    };
    match rules {
        Rules::Disabled => args.push("--disable-detection".to_string()),
        Rules::Load(path) => {
            args.push("-S".to_string());
            args.push(path.display().to_string());
        }
        Rules::Firewall(fw, td) => {
            args.push("--firewall-rules-exclusive".to_string());
            args.push(fw.display().to_string());
            if let Some(td) = td {
                args.push("-S".to_string());
                args.push(td.display().to_string());
            }
        }
    }
    Ok(args)
}

/// The test's pcap: `pcap:` when truthy (it must exist), else the only
/// `*.pcap`/`*.pcapng` of the directory, else none.
pub fn find_pcap(test_dir: &Path, config: &Yaml) -> Result<Option<PathBuf>, String> {
    if let Some(pcap) = config.get("pcap").filter(|p| p.truthy()) {
        let name = pcap.py_str();
        let path = test_dir.join(&name);
        return match std::fs::canonicalize(&path) {
            Ok(real) => Ok(Some(real)),
            Err(_) => Err(format!("PCAP filename does not exist: {name}")),
        };
    }
    let pcaps = files_with_ext(test_dir, &["pcap", "pcapng"]);
    match pcaps.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(one.clone())),
        _ => Err("More than 1 pcap file found".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::version::CLAIMED;

    fn strs(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn honoured_arguments_pass_through_normalised() {
        let args = strs(&[
            "-k",
            "none",
            "--set",
            "a.b=1",
            "--runmode=single",
            "-vvv",
            "--simulate-ips",
            "--set=x=y",
            "-kall",
            "--include",
            "x.yaml",
            "--init-errors-fatal",
        ]);
        assert_eq!(
            translate_args(&args).unwrap(),
            strs(&[
                "-k",
                "none",
                "--set",
                "a.b=1",
                "--runmode",
                "single",
                "-vvv",
                "--simulate-ips",
                "--set",
                "x=y",
                "-k",
                "all",
                "--include",
                "x.yaml",
                "--init-errors-fatal"
            ])
        );
    }

    #[test]
    fn everything_else_is_unsupported() {
        let err = |v: &[&str]| translate_args(&strs(v)).unwrap_err();
        assert_eq!(err(&["--unix-socket"]), "unsupported argument: --unix-socket");
        assert_eq!(err(&["port", "22"]), "unsupported argument: port");
        assert_eq!(err(&["-k", "bogus"]), "unsupported argument: -k bogus");
        assert_eq!(err(&["--runmode"]), "unsupported argument: --runmode (missing value)");
        assert_eq!(err(&["--simulate-ips=1"]), "unsupported argument: --simulate-ips=1");
        assert_eq!(
            err(&["--simulate-packet-bogus-memcap", "1"]),
            "unsupported argument: --simulate-packet-bogus-memcap"
        );
        assert_eq!(
            err(&["--simulate-packet-flow-memcap"]),
            "unsupported argument: --simulate-packet-flow-memcap (missing value)"
        );
        assert_eq!(err(&["-T5"]), "unsupported argument: -T5");
        assert_eq!(err(&["--strict-rule-keywords", "content"]), "unsupported argument: content");
    }

    #[test]
    fn config_test_and_strict_keywords() {
        let args = strs(&["-T", "--strict-rule-keywords=content", "--strict-rule-keywords"]);
        assert_eq!(translate_args(&args).unwrap(), args);
    }

    #[test]
    fn args_split_on_whitespace_and_substitute() {
        let args = Yaml::parse("args: ['-k none --set stream.inline=true', '--set x=${TEST_DIR}/y']").unwrap();
        let split = split_args(args.get("args")).unwrap();
        assert_eq!(split, strs(&["-k", "none", "--set", "stream.inline=true", "--set", "x=${TEST_DIR}/y"]));
        let vars = |n: &str| (n == "TEST_DIR").then(|| "/t".to_string());
        assert_eq!(substitute(&split[5], &vars), "x=/t/y");
        assert_eq!(substitute("$TEST_DIR/a $$ $UNKNOWN ${TEST_DIR} $(x) $", &vars), "/t/a $ $UNKNOWN /t $(x) $");
    }

    /// A scratch directory holding empty files, removed when dropped.
    struct TempDir(PathBuf);

    impl std::ops::Deref for TempDir {
        type Target = Path;
        fn deref(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn suite(tag: &str, files: &[&str]) -> TempDir {
        let dir = std::env::temp_dir().join(format!("vigil-verify-inv-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for f in files {
            std::fs::write(dir.join(f), "").unwrap();
        }
        TempDir(dir)
    }

    #[test]
    fn rules_discovery() {
        let d = suite("s2", &[]);
        assert_eq!(discover_rules(&d, CLAIMED), Ok(Rules::Disabled));
        let d = suite("s3", &["test.rules"]);
        assert_eq!(discover_rules(&d, CLAIMED), Ok(Rules::Load(d.join("test.rules"))));
        let d = suite("s4", &["firewall.rules"]);
        assert_eq!(discover_rules(&d, CLAIMED), Ok(Rules::Firewall(d.join("firewall.rules"), None)));
        let d = suite("s5", &["firewall.rules", "td.rules"]);
        assert_eq!(
            discover_rules(&d, CLAIMED),
            Ok(Rules::Firewall(d.join("firewall.rules"), Some(d.join("td.rules"))))
        );
        let d = suite("s6", &["a.rules", "b.rules"]);
        assert!(discover_rules(&d, CLAIMED).unwrap_err().starts_with("multi rule file"));
        let d = suite("s7", &["a.rules", "b.rules", "c.rules"]);
        assert_eq!(discover_rules(&d, CLAIMED), Err("More than 1 rule file found".into()));
        let d = suite("s8", &["min8.rules"]);
        assert_eq!(discover_rules(&d, CLAIMED), Ok(Rules::Load(d.join("min8.rules"))));
        let d = suite("s9", &["min9.rules"]);
        assert_eq!(discover_rules(&d, CLAIMED), Ok(Rules::Disabled));
        let d = suite("s10", &["min7.0.5.rules"]);
        assert_eq!(discover_rules(&d, CLAIMED), Ok(Rules::Load(d.join("min7.0.5.rules"))));
    }

    fn build(dir: &Path, yaml: &str, default_config: Option<&Path>) -> Result<Vec<String>, String> {
        let config = Yaml::parse(yaml).unwrap();
        let vars = |n: &str| (n == "TEST_DIR").then(|| dir.display().to_string());
        default_args(&DefaultInputs {
            test_dir: dir,
            config: &config,
            out_dir: Path::new("/out"),
            suite_root: Path::new("/nonexistent-suite"),
            default_config,
            claimed: CLAIMED,
            vars: &vars,
        })
    }

    #[test]
    fn default_invocation() {
        let d = suite("s11", &["input.pcap", "test.rules"]);
        let args = build(&d, "args: ['-k none']", None).unwrap();
        let p = |f: &str| d.join(f).display().to_string();
        assert_eq!(
            args,
            strs(&["-k", "none", "--init-errors-fatal", "-l", "/out", "-r", &p("input.pcap"), "-S", &p("test.rules")])
        );
        let args = build(&d, "{}", Some(Path::new("/cfg.yaml"))).unwrap();
        assert!(args.windows(2).any(|w| w == ["-c", "/cfg.yaml"]), "{args:?}");
        assert_eq!(build(&d, "args: ['--unix-socket']", None), Err("unsupported argument: --unix-socket".into()));
        assert_eq!(build(&d, "pcap: nope.pcap", None), Err("PCAP filename does not exist: nope.pcap".into()));
    }

    #[test]
    fn ips_by_basename_and_no_duplicate_switches() {
        let base = suite("s12", &[]);
        let d = base.join("t-ipsubnet");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("input.pcap"), "").unwrap();
        let args = build(&d, "args: ['--simulate-ips --init-errors-fatal']", None).unwrap();
        assert_eq!(args.iter().filter(|a| *a == "--simulate-ips").count(), 1);
        assert_eq!(args.iter().filter(|a| *a == "--init-errors-fatal").count(), 1);
        assert_eq!(args.last().unwrap(), "--disable-detection");
        let args = build(&d, "{}", None).unwrap();
        assert!(args.contains(&"--simulate-ips".to_string()));
    }

    #[test]
    fn pcap_discovery() {
        let d = suite("s13", &["a.pcap", "b.pcapng"]);
        assert_eq!(find_pcap(&d, &Yaml::Null), Err("More than 1 pcap file found".into()));
        let d = suite("s14", &["a.pcapng"]);
        assert_eq!(find_pcap(&d, &Yaml::Null), Ok(Some(d.join("a.pcapng"))));
        // `pcap: false` falls back to the directory's own pcap, as upstream does.
        assert_eq!(find_pcap(&d, &Yaml::parse("pcap: false").unwrap()), Ok(Some(d.join("a.pcapng"))));
        let d = suite("s15", &["notes.txt"]);
        assert_eq!(find_pcap(&d, &Yaml::Null), Ok(None));
    }
}
