//! `runmode`, `max-pending-packets`, `threading` and `unix-command`: how a
//! run is spread over threads and how an operator reaches it.

use crate::read::{Errors, Section};

/// Top-level run settings.
#[derive(Clone, Debug, PartialEq)]
pub struct Runtime {
    /// `runmode` (`single`, `autofp`, `workers`), as written. `None`: the
    /// capture method's default.
    pub runmode: Option<String>,
    /// `max-pending-packets` (1-2147483647). Default 1024.
    pub max_pending_packets: u32,
    /// `threading`.
    pub threading: Threading,
    /// `unix-command`.
    pub unix_command: UnixCommand,
}

/// `unix-command`: the control socket.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct UnixCommand {
    /// `enabled`: `Some(true)`/`Some(false)` as set, `None` for `auto`
    /// (on for live capture only, as in Suricata: off when reading files).
    pub enabled: Option<bool>,
    /// `filename`, as written (relative names are placed by the engine).
    pub filename: Option<String>,
}

/// `threading`.
#[derive(Clone, Debug, PartialEq)]
pub struct Threading {
    /// `threading.set-cpu-affinity`. Default false.
    pub set_cpu_affinity: bool,
    /// `threading.autopin`. Default false.
    pub autopin: bool,
    /// `threading.detect-thread-ratio`: detect threads per CPU. Default 1.0.
    pub detect_thread_ratio: f64,
    /// `threading.cpu-affinity`: the named CPU sets, in file order. Both the
    /// 8.0 map form and the older list form (`- worker-cpu-set: ...`) are
    /// read.
    pub cpu_affinity: Vec<CpuSet>,
}

/// One CPU set (`worker-cpu-set`, or an `interface-specific-cpu-set` item).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct CpuSet {
    /// The set's name (`management-cpu-set`), or the interface for an
    /// interface-specific set.
    pub name: String,
    /// `cpu`: CPU numbers, ranges or `all`, as written.
    pub cpu: Vec<String>,
    /// `mode`: `exclusive` or `balanced`, as written.
    pub mode: Option<String>,
    /// `prio`: (`low`/`medium`/`high`, CPUs as written) in file order.
    pub prio: Vec<(String, Vec<String>)>,
    /// `prio.default`.
    pub prio_default: Option<String>,
    /// `interface-specific-cpu-set` items.
    pub interface_specific: Vec<CpuSet>,
}

impl Default for Runtime {
    /// The stock `suricata.yaml` values.
    fn default() -> Self {
        let list = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let simple = |name: &str, cpu: &[&str]| CpuSet { name: name.into(), cpu: list(cpu), ..CpuSet::default() };
        let prio = |low: &[&str], medium: &[&str], high: &[&str]| {
            let mut p = Vec::new();
            for (k, v) in [("low", low), ("medium", medium), ("high", high)] {
                if !v.is_empty() {
                    p.push((k.to_string(), list(v)));
                }
            }
            p
        };
        Runtime {
            threading: Threading {
                cpu_affinity: vec![
                    simple("management-cpu-set", &["0"]),
                    simple("receive-cpu-set", &["0"]),
                    CpuSet {
                        name: "worker-cpu-set".into(),
                        cpu: list(&["all"]),
                        mode: Some("exclusive".into()),
                        prio: prio(&["0"], &["1-2"], &["3"]),
                        prio_default: Some("medium".into()),
                        interface_specific: vec![CpuSet {
                            name: "enp4s0f0".into(),
                            cpu: list(&["1", "3", "5", "7", "9"]),
                            mode: Some("exclusive".into()),
                            prio: prio(&[], &[], &["all"]),
                            prio_default: Some("medium".into()),
                            interface_specific: Vec::new(),
                        }],
                    },
                ],
                ..Threading::builtin()
            },
            ..Runtime::builtin()
        }
    }
}

impl Runtime {
    /// Suricata's values when the keys are absent.
    pub(crate) fn builtin() -> Self {
        Runtime {
            runmode: None,
            max_pending_packets: 1024,
            threading: Threading::builtin(),
            unix_command: UnixCommand::default(),
        }
    }

    pub(crate) fn read(root: &Section<'_>, errs: &mut Errors) -> Runtime {
        let d = Runtime::builtin();
        Runtime {
            runmode: root.string("runmode", errs),
            max_pending_packets: root
                .int_in("max-pending-packets", 1, i64::from(i32::MAX), errs)
                .map_or(d.max_pending_packets, |v| v as u32),
            threading: Threading::read(&root.child("threading"), errs),
            unix_command: UnixCommand::read(&root.child("unix-command"), errs),
        }
    }
}

impl UnixCommand {
    fn read(sec: &Section<'_>, errs: &mut Errors) -> UnixCommand {
        UnixCommand {
            enabled: match sec.scalar("enabled", errs) {
                Some((v, _)) if v.eq_ignore_ascii_case("auto") => None,
                Some(_) => sec.opt_bool("enabled", errs),
                None => None,
            },
            filename: sec.string("filename", errs),
        }
    }
}

impl Threading {
    fn builtin() -> Self {
        Threading { set_cpu_affinity: false, autopin: false, detect_thread_ratio: 1.0, cpu_affinity: Vec::new() }
    }

    fn read(sec: &Section<'_>, errs: &mut Errors) -> Threading {
        let d = Threading::builtin();
        let mut sets = Vec::new();
        for item in sec.child("cpu-affinity").children() {
            let Some(node) = item.node else { continue };
            // List form: item "N" with value = set name and the set as child.
            let (name, set) = match node.value() {
                Some(v) if !node.children().is_empty() => (v.to_string(), item.child(v)),
                _ => (node.name().to_string(), item),
            };
            sets.push(CpuSet::read(name, &set, errs));
        }
        Threading {
            set_cpu_affinity: sec.bool("set-cpu-affinity", d.set_cpu_affinity, errs),
            autopin: sec.bool("autopin", d.autopin, errs),
            detect_thread_ratio: sec
                .convert("detect-thread-ratio", errs, crate::value::parse_float)
                .unwrap_or(d.detect_thread_ratio),
            cpu_affinity: sets,
        }
    }
}

impl CpuSet {
    fn read(name: String, sec: &Section<'_>, errs: &mut Errors) -> CpuSet {
        let prio_sec = sec.child("prio");
        let mut prio = Vec::new();
        for level in ["low", "medium", "high"] {
            if let Some(v) = cpu_list(&prio_sec, level, errs) {
                prio.push((level.to_string(), v));
            }
        }
        let mut interface_specific = Vec::new();
        for item in sec.child("interface-specific-cpu-set").children() {
            let name = item.node.and_then(|n| n.child_value("interface")).unwrap_or_default().to_string();
            interface_specific.push(CpuSet::read(name, &item, errs));
        }
        CpuSet {
            name,
            cpu: cpu_list(sec, "cpu", errs).unwrap_or_default(),
            mode: sec.string("mode", errs),
            prio,
            prio_default: prio_sec.string("default", errs),
            interface_specific,
        }
    }
}

/// A CPU list: `[0, "1-2"]`, or a single value.
fn cpu_list(sec: &Section<'_>, key: &str, errs: &mut Errors) -> Option<Vec<String>> {
    let node = sec.child(key).node?;
    if node.is_sequence() {
        sec.string_list(key, errs)
    } else {
        sec.string(key, errs).map(|v| vec![v])
    }
}

#[cfg(test)]
mod tests {
    use crate::{Config, ConfigTree};

    fn config(yaml: &str) -> (Config, usize) {
        let tree = ConfigTree::parse_str(yaml, "t.yaml").unwrap();
        let (c, errs, _) = Config::from_tree(&tree);
        (c, errs.len())
    }

    #[test]
    fn unix_command_auto_yes_no_and_filename() {
        let (c, errs) = config("unix-command:\n  enabled: auto\n");
        assert_eq!((c.runtime.unix_command.enabled, errs), (None, 0));
        let (c, _) = config("unix-command:\n  enabled: yes\n  filename: /tmp/x.socket\n");
        assert_eq!(c.runtime.unix_command.enabled, Some(true));
        assert_eq!(c.runtime.unix_command.filename.as_deref(), Some("/tmp/x.socket"));
        let (c, errs) = config("unix-command:\n  enabled: sometimes\n");
        assert_eq!((c.runtime.unix_command.enabled, errs), (None, 1), "a bad value is an error, the default stays");
    }
}
