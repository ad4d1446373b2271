//! `--engine-analysis`: `rules.json` in the log directory, one line per
//! signature that loaded (Suricata's file of the same name and fields for
//! what vigil reports: the rule's text, ids, message, application protocol,
//! signature type, and its packet-level keywords with their values, see
//! [`lists`]), `rule_group.json`, the rules split by port ([`groups`]),
//! and `rules_analysis.txt`, the readable account ([`text`]).
//! Rules that failed or that the engine cannot run are not in it; their
//! errors are in the run's messages, as for any run.

mod groups;
mod lists;
mod text;

use crate::error::EngineError;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use vigil_detect::Signature;
use vigil_rules::Rule;

/// The records, gathered while the rules compile.
#[derive(Debug, Default, Clone)]
pub struct Analysis {
    pub records: Vec<Value>,
    /// What `rule_group.json` needs of each signature.
    groups: Vec<groups::GroupSig>,
    /// Rule files' text, read once, for each rule's `raw`.
    texts: HashMap<Arc<str>, Option<Arc<str>>>,
    /// What `rules_analysis.txt` says of each record beyond it.
    notes: Vec<text::Notes>,
}

impl Analysis {
    /// The rule as written in its file.
    pub(crate) fn raw(&mut self, rule: &Rule) -> Option<String> {
        let text = self
            .texts
            .entry(rule.file.clone())
            .or_insert_with(|| std::fs::read_to_string(&*rule.file).ok().map(Arc::from))
            .clone();
        text.as_deref()
            .and_then(|t| t.get(rule.span.start as usize..rule.span.end as usize))
            .map(|r| r.trim().trim_start_matches('#').trim().to_string())
    }

    pub(crate) fn add(&mut self, rule: &Rule, sig: &Signature) {
        let raw = self.raw(rule);
        let mut rec = json!({
            "raw": raw,
            "id": sig.sid,
            "gid": sig.gid,
            "rev": sig.rev,
            "msg": sig.msg,
        });
        rec["app_proto"] = json!(app_proto_name(rule, sig));
        rec["type"] = json!(vigil_detect::analysis::rule_type(rule, sig).name());
        if let Value::Object(map) = &mut rec {
            lists::describe(rule, sig, map);
        }
        self.records.push(rec);
        self.notes.push(text::Notes { filestore: sig.filestore.is_some() });
        self.groups.extend(groups::GroupSig::of(sig));
    }
}

/// The application protocol as Suricata names it here: `http` in a rule's
/// header is either HTTP version (`http_any`); a rule for no protocol says `unknown`.
/// `app-layer-protocol` does not make a rule one of its protocol's.
fn app_proto_name(rule: &Rule, sig: &Signature) -> &'static str {
    let header_app = rule.header.protocol.class == vigil_rules::ProtoClass::App;
    match (sig.app_proto.filter(|_| header_app), rule.header.protocol.name) {
        (None, _) => "unknown",
        (Some(_), "http") => "http_any",
        (Some(p), _) => p.name(),
    }
}

/// Writes `rules.json` and `rule_group.json` under the run's log
/// directory; returns the path of `rules.json`.
pub(crate) fn write_rules_json(
    log_dir: &std::path::Path,
    analysis: &Analysis,
    config: &vigil_config::Config,
) -> Result<PathBuf, EngineError> {
    let path = log_dir.join("rules.json");
    let io = |p: &PathBuf, e: std::io::Error| EngineError::Config(vec![format!("{}: {e}", p.display())]);
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).map_err(|e| io(&path, e))?);
    for rec in &analysis.records {
        serde_json::to_writer(&mut out, rec).map_err(|e| io(&path, e.into()))?;
        out.write_all(b"\n").map_err(|e| io(&path, e))?;
    }
    out.flush().map_err(|e| io(&path, e))?;
    let limits = groups::Limits::from_config(&config.detect.profile, config.raw.detect.as_ref());
    let doc = groups::document(&analysis.groups, &limits);
    let group_path = log_dir.join("rule_group.json");
    std::fs::write(&group_path, format!("{doc}\n")).map_err(|e| io(&group_path, e))?;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let now = vigil_types::Timestamp::from_secs_nanos(now.as_secs() as i64, now.subsec_nanos());
    let file_store = !config.outputs.file_store.is_empty();
    let text_path = log_dir.join("rules_analysis.txt");
    std::fs::write(&text_path, text::document(&analysis.records, &analysis.notes, file_store, now))
        .map_err(|e| io(&text_path, e))?;
    Ok(path)
}

/// Writes `firewall.json` (firewall mode): each table with its default
/// policy and its rules in evaluation order, a warning where an
/// application state has no rule to accept it, and the lists of firewall
/// and threat detection rules, in Suricata's layout.
pub(crate) fn write_firewall_json(
    log_dir: &std::path::Path,
    fw: &vigil_detect::engine::firewall::Firewall,
    analysis: &Analysis,
) -> Result<(), EngineError> {
    use vigil_detect::engine::firewall::{FwRule, PacketHook};
    use vigil_types::Direction;
    let raws = |rules: &[&FwRule]| -> Vec<Value> { rules.iter().map(|r| json!(r.raw)).collect() };
    let mut tables = serde_json::Map::new();
    for (hook, key) in [
        (PacketHook::PreFlow, "packet:pre_flow"),
        (PacketHook::PreStream, "packet:pre_stream"),
        (PacketHook::All, "packet:filter"),
    ] {
        let (policy, rules) = fw.packet_table(hook);
        if hook == PacketHook::All || !rules.is_empty() {
            tables.insert(key.into(), json!({"policy": policy, "rules": raws(&rules)}));
        }
    }
    for def in vigil_applayer::protocols::ALL {
        let mut states = serde_json::Map::new();
        for side in [Direction::ToServer, Direction::ToClient] {
            for (i, name) in def.hooks.states(side).iter().enumerate() {
                let (policy, rules) = fw.app_table(def, side, i as u8);
                let mut t = json!({"policy": policy, "rules": raws(&rules)});
                if !rules.iter().any(|r| r.accept) {
                    t["warnings"] = json!(["no accept rules for state, default policy will be applied"]);
                }
                // Suricata writes the generic states of a protocol that names none with dashes.
                let generic = match side {
                    Direction::ToServer => def.hooks.to_server.is_empty(),
                    Direction::ToClient => def.hooks.to_client.is_empty(),
                };
                let name = if generic { name.replace('_', "-") } else { name.to_string() };
                states.insert(format!("app:{}:{name}", def.name), t);
            }
        }
        tables.insert(def.name.into(), Value::Object(states));
    }
    // Threat detection's rules: those of transactions in the application table.
    let (mut packet_td, mut app_td) = (Vec::new(), Vec::new());
    for rec in &analysis.records {
        let raw = rec.get("raw").cloned().unwrap_or(Value::Null);
        if rec.get("type").and_then(Value::as_str) == Some("app_tx") {
            app_td.push(raw);
        } else {
            packet_td.push(raw);
        }
    }
    tables.insert("packet:td".into(), json!({"policy": "accept:hook", "rules": packet_td}));
    tables.insert("app:td".into(), json!({"policy": "accept:hook", "rules": app_td}));
    let fw_list: Vec<Value> = fw.rules().iter().map(|r| json!(r.raw)).collect();
    let td_list: Vec<Value> = analysis.records.iter().map(|r| r.get("raw").cloned().unwrap_or(Value::Null)).collect();
    let all: Vec<Value> = fw_list.iter().chain(&td_list).cloned().collect();
    let doc = json!({
        "tables": tables,
        "lists": {"firewall": {"rules": fw_list}, "td": {"rules": td_list}, "all": {"rules": all}},
    });
    let path = log_dir.join("firewall.json");
    std::fs::write(&path, format!("{doc}\n")).map_err(|e| EngineError::Config(vec![format!("{}: {e}", path.display())]))
}
