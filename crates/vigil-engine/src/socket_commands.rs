//! The control socket's commands: Suricata's names, arguments and replies
//! for the ones that apply to vigil. Commands that need the pipeline
//! (counters, reload, stop) go through [`Control`]; the rest answer from
//! [`Facts`] fixed at start-up, or from the unix-socket runmode's queue.
//!
//! Not served, and so not listed (suricatasc refuses them before sending):
//! tenants (vigil has no multi-tenancy), `add-hostbit`/`remove-hostbit`/
//! `list-hostbit` (host bits live inside each worker), datasets,
//! `get-flow-stats-by-id`, `memcap-set` (memcaps are fixed at start-up) and
//! the eBPF bypass counters.

use crate::control::Control;
use crate::unix_runmode::PcapQueue;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use vigil_config::ConfigTree;
use vigil_types::Timestamp;

/// How long a command waits for the pipeline (it answers between packets;
/// after the last one nobody does).
const PIPELINE_WAIT: Duration = Duration::from_secs(5);
/// How long `reload-rules` waits for the new rules to be built.
const RELOAD_WAIT: Duration = Duration::from_secs(300);

/// What the socket knows of the run from its start.
#[derive(Clone)]
pub(crate) struct Facts {
    /// `single`, `autofp` or `workers`.
    pub running_mode: &'static str,
    /// Suricata's names: `PCAP_FILE`, `AF_PACKET_DEV`, `NFQ`, `UNIX_SOCKET`.
    pub capture_mode: &'static str,
    /// The configuration as read, for `conf-get`.
    pub tree: Arc<ConfigTree>,
    /// `default-log-dir` as the run uses it (`-l` wins over the file).
    pub log_dir: PathBuf,
    /// `memcap-list`, in Suricata's names.
    pub memcaps: Vec<(&'static str, u64)>,
    /// Live interfaces (`iface-list`, `iface-stat`).
    pub ifaces: Vec<String>,
    /// The files queued in the unix-socket runmode.
    pub queue: Option<Arc<PcapQueue>>,
    /// The run's datasets (`dataset-*`).
    pub datasets: Arc<vigil_detect::datasets::Datasets>,
}

impl Facts {
    fn of(setup: &crate::Setup, capture_mode: &'static str) -> Facts {
        let c = &setup.config;
        Facts {
            running_mode: setup.runmode.name(),
            capture_mode,
            tree: setup.tree.clone(),
            log_dir: setup.log_dir.clone(),
            memcaps: vec![
                ("stream", c.stream.memcap),
                ("stream-reassembly", c.stream.reassembly_memcap),
                ("flow", c.flow.memcap),
                ("defrag", c.defrag.memcap),
            ],
            ifaces: Vec::new(),
            queue: None,
            datasets: Arc::clone(&setup.rules.datasets),
        }
    }

    /// Reading capture files (`-r`).
    pub(crate) fn offline(setup: &crate::Setup) -> Facts {
        Facts::of(setup, "PCAP_FILE")
    }

    /// Capturing live: AF_PACKET interfaces, or NFQUEUE when there are none.
    pub(crate) fn live(setup: &crate::Setup, ifaces: Vec<String>) -> Facts {
        let mode = if ifaces.is_empty() { "NFQ" } else { "AF_PACKET_DEV" };
        Facts { ifaces, ..Facts::of(setup, mode) }
    }

    /// The unix-socket runmode: files come through the queue.
    pub(crate) fn unix_socket(setup: &crate::Setup, queue: Arc<PcapQueue>) -> Facts {
        Facts { queue: Some(queue), ..Facts::of(setup, "UNIX_SOCKET") }
    }

    /// The commands this run answers, in Suricata's order.
    pub(crate) fn commands(&self) -> Vec<&'static str> {
        let mut list = vec![
            "shutdown",
            "command-list",
            "help",
            "version",
            "uptime",
            "running-mode",
            "capture-mode",
            "conf-get",
            "dump-counters",
            "reload-rules",
            "ruleset-reload-rules",
            "ruleset-reload-nonblocking",
            "ruleset-reload-time",
            "ruleset-stats",
            "ruleset-failed-rules",
            "reopen-log-files",
            "memcap-show",
            "memcap-list",
            "dataset-add",
            "dataset-remove",
            "dataset-dump",
            "dataset-clear",
            "dataset-lookup",
        ];
        if self.queue.is_some() {
            list.extend([
                "pcap-file",
                "pcap-file-continuous",
                "pcap-file-number",
                "pcap-file-list",
                "pcap-last-processed",
                "pcap-interrupt",
                "pcap-current",
            ]);
        } else if !self.ifaces.is_empty() {
            list.extend(["iface-stat", "iface-list"]);
        }
        list
    }
}

/// One command's answer.
pub(crate) fn command(msg: &Value, control: &Control, facts: &Facts, started: Instant) -> Value {
    let Some(name) = msg.get("command").and_then(Value::as_str) else {
        return nok("no \"command\" in the message");
    };
    if !facts.commands().contains(&name) {
        return nok(&format!("Unknown command {name:?} (see command-list)"));
    }
    let args = msg.get("arguments").unwrap_or(&Value::Null);
    let uptime = started.elapsed().as_secs();
    match name {
        "command-list" | "help" => {
            let list = facts.commands();
            ok(json!({"count": list.len(), "commands": list}))
        }
        "version" => ok(json!(format!("{} RELEASE (vigil {})", crate::SURICATA_VERSION, env!("CARGO_PKG_VERSION")))),
        "uptime" => ok(json!(uptime)),
        "running-mode" => ok(json!(facts.running_mode)),
        "capture-mode" => ok(json!(facts.capture_mode)),
        "conf-get" => conf_get(args, facts),
        "dump-counters" => match control.ask_counters().recv_timeout(PIPELINE_WAIT) {
            Ok(counters) => ok(vigil_output::stats_record(Timestamp::default(), uptime, &counters)["stats"].clone()),
            Err(_) => nok("stats not yet synchronized"),
        },
        "reload-rules" | "ruleset-reload-rules" => reload_and_wait(control),
        "ruleset-reload-nonblocking" => {
            control.request_reload();
            ok(json!("done"))
        }
        "ruleset-reload-time" => {
            let f = control.ruleset();
            let at = f.loaded_at.map(system_time_text).unwrap_or_default();
            ok(json!([{"id": 0, "last_reload": at}]))
        }
        "ruleset-stats" => {
            let f = control.ruleset();
            ok(json!([{"id": 0, "rules_loaded": f.loaded, "rules_failed": f.failed, "rules_skipped": f.skipped}]))
        }
        "ruleset-failed-rules" => {
            let f = control.ruleset();
            let list: Vec<Value> = f
                .failed_rules
                .iter()
                .map(|r| json!({"tenant_id": 0, "rule": r.rule, "filename": r.filename, "line": r.line}))
                .collect();
            ok(Value::Array(list))
        }
        "reopen-log-files" => {
            control.request_reopen();
            ok(json!("done"))
        }
        "shutdown" => {
            control.request_stop();
            if let Some(q) = &facts.queue {
                q.interrupt();
            }
            ok(json!("Closing vigil"))
        }
        "memcap-list" => {
            let list: Vec<Value> =
                facts.memcaps.iter().map(|(n, v)| json!({"name": n, "value": memcap_text(*v)})).collect();
            ok(Value::Array(list))
        }
        "memcap-show" => {
            let Some(which) = args.get("config").and_then(Value::as_str) else {
                return nok("memcap key is missing or not a string");
            };
            match facts.memcaps.iter().find(|(n, _)| *n == which) {
                Some((_, v)) => ok(json!({"value": memcap_text(*v)})),
                None => nok("Memcap value not found. Use 'memcap-list' to show all"),
            }
        }
        "iface-list" => ok(json!({"count": facts.ifaces.len(), "ifaces": facts.ifaces})),
        "dataset-add" | "dataset-remove" | "dataset-lookup" | "dataset-clear" => dataset_command(name, args, facts),
        "dataset-dump" => {
            let failed: Vec<String> = facts.datasets.save_all().into_iter().filter_map(Result::err).collect();
            match failed.is_empty() {
                true => ok(json!("datasets dump done")),
                false => nok(&failed.join("; ")),
            }
        }
        "iface-stat" => iface_stat(args, control, facts),
        _ => match &facts.queue {
            Some(q) => crate::unix_runmode::command(name, args, q),
            None => nok(&format!("Unknown command {name:?} (see command-list)")),
        },
    }
}

pub(crate) fn ok(message: Value) -> Value {
    json!({"return": "OK", "message": message})
}

pub(crate) fn nok(message: &str) -> Value {
    json!({"return": "NOK", "message": message})
}

/// `dataset-add`, `-remove`, `-lookup` (`setname`, `settype`, `datavalue`
/// as the set's file writes it: strings in base64) and `dataset-clear`.
fn dataset_command(name: &str, args: &Value, facts: &Facts) -> Value {
    use vigil_rules::keywords::dataset::SetKind;
    let arg = |k: &str| args.get(k).and_then(Value::as_str);
    let Some(set_name) = arg("setname") else { return nok("setname is not a string") };
    let Some(kind) = arg("settype").and_then(SetKind::parse) else { return nok("unknown settype") };
    let Some(set) = facts.datasets.find(set_name, kind) else { return nok("set not found or wrong type") };
    if name == "dataset-clear" {
        set.clear();
        return ok(json!("dataset cleared"));
    }
    let Some(value) = arg("datavalue") else { return nok("datavalue is not a string") };
    let answer = match name {
        "dataset-add" => {
            set.add_serialized(value).map(|new| if new { Ok("data added") } else { Err("data already in set") })
        }
        "dataset-remove" => {
            set.remove_serialized(value).map(|had| if had { Ok("data removed") } else { Err("data is not in set") })
        }
        _ => set.contains_serialized(value).map(|found| {
            if found {
                Ok("item found in set")
            } else {
                Err("item not found in set")
            }
        }),
    };
    match answer {
        Ok(Ok(m)) => ok(json!(m)),
        Ok(Err(m)) => nok(m),
        Err(e) => nok(&format!("bad datavalue: {e}")),
    }
}

/// A scalar of the configuration by its dotted name; mappings and lists
/// have no value of their own, as in Suricata.
fn conf_get(args: &Value, facts: &Facts) -> Value {
    let Some(var) = args.get("variable").and_then(Value::as_str) else {
        return nok("'variable' argument is missing or not a string");
    };
    if var == "default-log-dir" {
        return ok(json!(facts.log_dir.display().to_string()));
    }
    match facts.tree.get(var).and_then(|n| n.value()) {
        Some(v) => ok(json!(v)),
        None => nok("Unable to get value"),
    }
}

/// Asks for a reload and answers once it ended: `done`, or why it was refused.
fn reload_and_wait(control: &Control) -> Value {
    let before = control.ruleset().reloads_done;
    control.request_reload();
    let deadline = Instant::now() + RELOAD_WAIT;
    while Instant::now() < deadline {
        let f = control.ruleset();
        if f.reloads_done > before {
            return match f.last_refusal {
                None => ok(json!("done")),
                Some(why) => nok(&format!("rule reload refused, the running rules stay: {why}")),
            };
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    nok("the reload has not ended yet (it goes on; see ruleset-reload-time)")
}

/// Counters of the one live interface. With several, vigil counts them
/// together, so no figure would be the interface's own.
fn iface_stat(args: &Value, control: &Control, facts: &Facts) -> Value {
    let Some(iface) = args.get("iface").and_then(Value::as_str) else {
        return nok("Invalid argument");
    };
    if !facts.ifaces.iter().any(|i| i == iface) {
        return nok("Interface not found");
    }
    if facts.ifaces.len() > 1 {
        return nok(
            "vigil counts its interfaces together: see dump-counters (capture.kernel_packets, capture.kernel_drops)",
        );
    }
    match control.ask_counters().recv_timeout(PIPELINE_WAIT) {
        Ok(c) => {
            let get = |n: &str| c.iter().find(|(k, _)| k == n).map_or(0, |(_, v)| *v);
            ok(json!({
                "pkts": get("capture.kernel_packets"),
                "invalid-checksums": get("decoder.invalid_checksums"),
                "drop": get("capture.kernel_drops"),
                "bypassed": get("flow_bypassed.local_pkts"),
            }))
        }
        Err(_) => nok("stats not yet synchronized"),
    }
}

/// Suricata's way of showing a size: the largest unit it divides exactly.
fn memcap_text(bytes: u64) -> String {
    if bytes == 0 || bytes == u64::MAX {
        return "unlimited".into();
    }
    for (unit, size) in [("gb", 1u64 << 30), ("mb", 1 << 20), ("kb", 1 << 10)] {
        if bytes.is_multiple_of(size) {
            return format!("{}{unit}", bytes / size);
        }
    }
    bytes.to_string()
}

fn system_time_text(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    vigil_output::format_timestamp(Timestamp::from_secs_nanos(d.as_secs() as i64, d.subsec_nanos()))
}

/// A path argument that must exist; the two messages are Suricata's for
/// a missing argument and a path that is not there.
pub(crate) fn existing(args: &Value, key: &str, missing: &str, absent: &str) -> Result<PathBuf, Value> {
    let Some(p) = args.get(key).and_then(Value::as_str) else { return Err(nok(missing)) };
    if !Path::new(p).exists() {
        return Err(nok(absent));
    }
    Ok(PathBuf::from(p))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn facts(queue: bool, ifaces: &[&str]) -> Facts {
        let tree = ConfigTree::parse_str("vars:\n  address-groups:\n    HOME_NET: \"[10.0.0.0/8]\"\n", "t").unwrap();
        Facts {
            running_mode: "autofp",
            capture_mode: if queue { "UNIX_SOCKET" } else { "PCAP_FILE" },
            tree: Arc::new(tree),
            log_dir: PathBuf::from("/tmp/logs"),
            memcaps: vec![("stream", 64 << 20), ("flow", 3 << 29), ("defrag", 1000)],
            ifaces: ifaces.iter().map(|s| s.to_string()).collect(),
            queue: queue.then(|| Arc::new(PcapQueue::default())),
            datasets: Arc::default(),
        }
    }

    fn ask(c: &Control, f: &Facts, v: Value) -> Value {
        command(&v, c, f, Instant::now())
    }

    #[test]
    fn the_list_depends_on_the_mode_and_unlisted_commands_are_refused() {
        let c = Control::default();
        let file = facts(false, &[]);
        let list = ask(&c, &file, json!({"command": "command-list"}));
        let names: Vec<&str> =
            list["message"]["commands"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
        assert_eq!(list["message"]["count"], names.len());
        assert!(names.contains(&"ruleset-stats") && !names.contains(&"iface-list") && !names.contains(&"pcap-file"));
        assert_eq!(ask(&c, &file, json!({"command": "iface-list"}))["return"], "NOK");
        assert_eq!(ask(&c, &file, json!({"command": "memcap-set"}))["return"], "NOK");
        let live = facts(false, &["eth0"]);
        let ifaces = ask(&c, &live, json!({"command": "iface-list"}));
        assert_eq!(ifaces["message"], json!({"count": 1, "ifaces": ["eth0"]}));
        let unix = facts(true, &[]);
        assert_eq!(ask(&c, &unix, json!({"command": "pcap-file-number"})), json!({"return": "OK", "message": 0}));
        assert_eq!(ask(&c, &unix, json!({"command": "capture-mode"}))["message"], "UNIX_SOCKET");
        assert_eq!(ask(&c, &unix, json!({"command": "running-mode"}))["message"], "autofp");
    }

    #[test]
    fn conf_get_memcaps_and_ruleset_answers() {
        let c = Control::default();
        let f = facts(false, &[]);
        let get = |var: &str| ask(&c, &f, json!({"command": "conf-get", "arguments": {"variable": var}}));
        assert_eq!(get("vars.address-groups.HOME_NET"), json!({"return": "OK", "message": "[10.0.0.0/8]"}));
        assert_eq!(get("vars"), json!({"return": "NOK", "message": "Unable to get value"}));
        assert_eq!(get("default-log-dir")["message"], "/tmp/logs");
        let list = ask(&c, &f, json!({"command": "memcap-list"}));
        assert_eq!(
            list["message"],
            json!([{"name": "stream", "value": "64mb"}, {"name": "flow", "value": "1536mb"}, {"name": "defrag", "value": "1000"}])
        );
        let show = |which: &str| ask(&c, &f, json!({"command": "memcap-show", "arguments": {"config": which}}));
        assert_eq!(show("stream"), json!({"return": "OK", "message": {"value": "64mb"}}));
        assert_eq!(show("nope")["return"], "NOK");
        assert_eq!(memcap_text(2 << 30), "2gb");
        assert_eq!(memcap_text(0), "unlimited");

        let dir = std::env::temp_dir().join(format!("vigil-sockcmd-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("r.rules");
        std::fs::write(
            &path,
            "alert tcp any any -> any any (sid:1;)\nalert tcp any any -> any any (content:; sid:2;)\n",
        )
        .unwrap();
        let opts = crate::RunOptions { exclusive_rules: vec![path.clone()], ..Default::default() };
        let config = vigil_config::Config::default();
        let vars = vigil_rules::Vars::new(&config.vars.address_groups, &config.vars.port_groups);
        let rules = crate::rules::load(&opts, &config, vars, crate::setup::mpm_algo(&config, &mut Vec::new())).unwrap();
        c.rules_in_use(&rules, false);
        let stats = ask(&c, &f, json!({"command": "ruleset-stats"}));
        assert_eq!(stats["message"], json!([{"id": 0, "rules_loaded": 1, "rules_failed": 1, "rules_skipped": 0}]));
        let failed = ask(&c, &f, json!({"command": "ruleset-failed-rules"}));
        assert_eq!(
            failed["message"],
            json!([{"tenant_id": 0, "rule": "alert tcp any any -> any any (content:; sid:2;)",
                    "filename": path.display().to_string(), "line": 2}])
        );
        let at = ask(&c, &f, json!({"command": "ruleset-reload-time"}));
        let text = at["message"][0]["last_reload"].as_str().unwrap();
        assert!(text.ends_with("+0000") && text.len() == 31, "{text}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_blocking_reload_answers_when_the_reload_ends() {
        let c = Control::default();
        let f = facts(false, &[]);
        for refuse in [false, true] {
            let pipeline = c.clone();
            let t = std::thread::spawn(move || {
                while !pipeline.take_reload() {
                    std::thread::sleep(Duration::from_millis(5));
                }
                if refuse {
                    pipeline.reload_refused("1 rule(s) failed".into());
                } else {
                    pipeline.rules_in_use(&crate::rules::LoadedRules::empty(Vec::new()), true);
                }
            });
            let r = ask(&c, &f, json!({"command": "reload-rules"}));
            t.join().unwrap();
            assert_eq!(r["return"], if refuse { "NOK" } else { "OK" }, "{r}");
        }
        assert_eq!(ask(&c, &f, json!({"command": "ruleset-reload-nonblocking"}))["message"], "done");
        assert!(c.take_reload());
    }
}
