//! Lua rule scripts: the `lua:[!]<file>` keyword, as Suricata 8 runs it.
//!
//! A script is read and checked when its rule loads: it must define
//! `init` and `match`, and `init` must return a table (its needs: with
//! `payload`, the script runs on packets that carry one; `match` gets an
//! empty table, as in Suricata 8.0.6, and reads what it wants through the
//! libraries). Each worker then keeps its own Lua state
//! per script, made the first time the script runs (Lua states are not
//! shared between threads), in [`LuaStates`].
//!
//! A script runs in Suricata's sandbox: only the base, `string`, `table`,
//! `math` and `utf8` libraries, with `load`, `loadfile`, `dofile`, `pcall`,
//! `xpcall`, `collectgarbage`, `getmetatable` and `setmetatable` replaced by
//! functions that fail (`Blocked Lua function called: pcall`), a memory
//! limit on its state (`security.lua.max-bytes`) and an instruction budget
//! per call (`security.lua.max-instructions`). `require` gives the
//! `suricata.*` libraries ([`libs`]). A script that fails is a non-match,
//! logged as Suricata logs it and counted in `detect.lua.*`.
//!
//! Scripts see the packet, its flow and the transaction the signature is
//! inspecting through [`LuaInput`]; the libraries read them only while
//! `match` runs (scoped functions), so nothing is copied for a script that
//! does not ask.

mod libs;
mod output;
mod xform;

pub use output::{LuaLogs, LuaOutput, LuaOutputScript, StreamArgs};

pub use xform::{take_messages as take_transform_messages, LuaXform};

use mlua::{Function, HookTriggers, Lua, LuaOptions, StdLib, Value, VmState};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use vigil_decode::Packet;
use vigil_types::{Direction, Timestamp};

/// `security.lua` and where scripts are found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LuaSettings {
    /// `allow-rules`: a rule with `lua` loads at all.
    pub allow_rules: bool,
    pub max_bytes: u64,
    pub max_instructions: u64,
    /// `allow-restricted-functions`: the standard library unrestricted.
    pub allow_restricted_functions: bool,
    /// `default-rule-path`: a script's name is taken relative to it.
    pub rule_path: Option<PathBuf>,
}

impl Default for LuaSettings {
    /// Suricata 8.0.6's defaults.
    fn default() -> Self {
        LuaSettings {
            allow_rules: true,
            max_bytes: 500_000,
            max_instructions: 500_000,
            allow_restricted_functions: false,
            rule_path: None,
        }
    }
}

/// What a script's `init` asked for (of these, only `payload` changes
/// where it runs: `match` is handed an empty table).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Needs {
    pub packet: bool,
    pub payload: bool,
    pub stream: bool,
}

/// A loaded script, shared by the signatures of its rule.
#[derive(Debug)]
pub struct LuaScript {
    /// Unique in the process: a reload's scripts get new states.
    id: usize,
    /// The file, as found.
    pub path: PathBuf,
    source: Vec<u8>,
    pub needs: Needs,
    /// `lua:!file`: the rule matches where the script does not.
    pub negated: bool,
    settings: LuaSettings,
    /// Counters its `init` registered (`suricata.flowint`): they are the
    /// engine's, as `flowint` keywords' are.
    pub flowints: Vec<String>,
}

static NEXT_SCRIPT: AtomicUsize = AtomicUsize::new(0);

impl LuaScript {
    /// Reads and checks `name` (`!` first negates) for a rule of file `rule_file`.
    pub fn load(name: &str, rule_file: &str, settings: &LuaSettings) -> Result<LuaScript, String> {
        if !settings.allow_rules {
            return Err("Lua rules are disabled by security configuration: security.lua.allow-rules".into());
        }
        let name = name.trim();
        let (negated, name) = match name.strip_prefix('!') {
            Some(n) => (true, n.trim()),
            None => (false, name),
        };
        let path = find(name, rule_file, settings.rule_path.as_deref())
            .ok_or_else(|| format!("couldn't load file {name}: No such file or directory"))?;
        let source = std::fs::read(&path).map_err(|e| format!("couldn't load file {}: {e}", path.display()))?;
        let mut script = LuaScript {
            id: NEXT_SCRIPT.fetch_add(1, Ordering::Relaxed),
            path,
            source,
            needs: Needs::default(),
            negated,
            settings: settings.clone(),
            flowints: Vec::new(),
        };
        let state = script.state().map_err(|e| format!("lua script {name}: {}", message(&e)))?;
        let needs: Value = state
            .init
            .call(state.lua.create_table().map_err(|e| e.to_string())?)
            .map_err(|e| format!("lua script {name}: init failed: {}", message(&e)))?;
        let Value::Table(needs) = needs else {
            return Err(format!("lua script {name}: init function did not return a table"));
        };
        script.flowints = libs::registered_flowints(&state.lua);
        for pair in needs.pairs::<Value, Value>() {
            let (k, v) = pair.map_err(|e| e.to_string())?;
            let Value::String(k) = k else { continue };
            // Suricata 7 scripts write `needs["packet"] = tostring(true)`.
            let on = match &v {
                Value::Boolean(b) => *b,
                Value::String(s) => s.to_str().is_ok_and(|s| s == "true"),
                Value::Nil => false,
                _ => true,
            };
            match &*k.to_string_lossy() {
                "packet" => script.needs.packet = on,
                "payload" => script.needs.payload = on,
                "stream" => script.needs.stream = on,
                _ => {}
            }
        }
        Ok(script)
    }

    /// A fresh sandboxed state with the script run once (its top level)
    /// and its `init` and `match` found.
    fn state(&self) -> mlua::Result<State> {
        let (lua, budget) = sandboxed(&self.source, &self.path, &self.settings)?;
        let globals = lua.globals();
        let init: Function = globals
            .get::<Option<Function>>("init")?
            .ok_or_else(|| mlua::Error::RuntimeError("no init function in script".into()))?;
        let matcher: Function = globals
            .get::<Option<Function>>("match")?
            .ok_or_else(|| mlua::Error::RuntimeError("no match function in script".into()))?;
        // `thread_init`, where the script has one, runs once in each state
        // (Suricata runs it once per thread), before any `match`.
        if let Some(thread_init) = globals.get::<Option<Function>>("thread_init")? {
            budget.store(0, Ordering::Relaxed);
            thread_init.call::<()>(())?;
        }
        Ok(State { lua, init, matcher, budget })
    }
}

/// Whether a `luaxform` script was loaded in this process.
pub fn transforms_loaded() -> bool {
    xform::LOADED.load(Ordering::Relaxed)
}

/// A state in Suricata's sandbox (unless `settings` allow the restricted
/// functions) with the libraries, an instruction budget per call (reset
/// through the counter it returns) and a memory limit, `source` run once.
fn sandboxed(source: &[u8], path: &Path, settings: &LuaSettings) -> mlua::Result<(Lua, Arc<AtomicU64>)> {
    let restricted = settings.allow_restricted_functions;
    let libs = if restricted { StdLib::ALL_SAFE } else { StdLib::TABLE | StdLib::STRING | StdLib::MATH | StdLib::UTF8 };
    let lua = Lua::new_with(libs, LuaOptions::default())?;
    if !restricted {
        lua.load(BLOCKED).set_name("=sandbox").exec()?;
    }
    libs::install(&lua)?;
    let budget = Arc::new(AtomicU64::new(0));
    let limit = settings.max_instructions;
    let b = Arc::clone(&budget);
    // Counted in steps of 1,000 instructions, as a budget per call.
    lua.set_hook(HookTriggers::new().every_nth_instruction(1000), move |_, _| {
        if b.fetch_add(1000, Ordering::Relaxed) + 1000 > limit {
            return Err(mlua::Error::RuntimeError(INSTRUCTION_LIMIT.into()));
        }
        Ok(VmState::Continue)
    })?;
    // The script's top level (and its `require`s) counts against the budget too.
    lua.load(source).set_name(format!("@{}", path.display())).exec()?;
    lua.set_memory_limit(usize::try_from(settings.max_bytes).unwrap_or(usize::MAX))?;
    Ok((lua, budget))
}

/// Where a script named `name` is: as given when absolute, else in
/// `default-rule-path`, else beside the rule file.
fn find(name: &str, rule_file: &str, rule_path: Option<&Path>) -> Option<PathBuf> {
    let p = Path::new(name);
    if p.is_absolute() {
        return Some(p.to_path_buf());
    }
    let beside = Path::new(rule_file).parent().map(|d| d.join(name));
    rule_path.map(|d| d.join(name)).into_iter().chain(beside).find(|c| c.is_file())
}

/// The sandbox's stand-ins: each fails where it is called, naming itself,
/// as Suricata's do.
const BLOCKED: &str = r#"
for _, name in ipairs({"collectgarbage", "dofile", "getmetatable", "loadfile", "load", "pcall", "setmetatable", "xpcall"}) do
    local blocked = "Blocked Lua function called: " .. name
    _G[name] = function() error(blocked, 2) end
end
"#;

const INSTRUCTION_LIMIT: &str = "instruction limit exceeded";
const MEMORY_LIMIT: &str = "memory limit exceeded";

/// A runtime error's own message, without mlua's wrapping and traceback.
fn message(e: &mlua::Error) -> String {
    match e {
        mlua::Error::RuntimeError(m) | mlua::Error::SyntaxError { message: m, .. } => {
            m.split("\nstack traceback:").next().unwrap_or_default().to_string()
        }
        mlua::Error::MemoryError(_) => MEMORY_LIMIT.into(),
        mlua::Error::CallbackError { cause, .. } => message(cause),
        mlua::Error::WithContext { cause, .. } => message(cause),
        other => other.to_string(),
    }
}

struct State {
    lua: Lua,
    init: Function,
    matcher: Function,
    budget: Arc<AtomicU64>,
}

/// `detect.lua.*`: scripts that failed, by cause.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct LuaStats {
    pub errors: u64,
    pub blocked_function_errors: u64,
    pub instruction_limit_errors: u64,
    pub memory_limit_errors: u64,
}

impl LuaStats {
    /// The counters under Suricata's names.
    pub fn named(&self) -> [(&'static str, u64); 4] {
        [
            ("detect.lua.errors", self.errors),
            ("detect.lua.blocked_function_errors", self.blocked_function_errors),
            ("detect.lua.instruction_limit_errors", self.instruction_limit_errors),
            ("detect.lua.memory_limit_errors", self.memory_limit_errors),
        ]
    }
}

/// A worker's Lua states, one per script it ran, with what they raised.
#[derive(Default)]
pub struct LuaStates {
    states: HashMap<usize, Option<State>>,
    /// Scripts whose failure was logged: each is logged once per worker,
    /// as Suricata logs it once per thread (the counters count them all).
    logged: std::collections::HashSet<usize>,
    pub stats: LuaStats,
    /// Messages for the log, with their level (`Warning`: `Lua script
    /// failed to run successfully: ...`; scripts' own `suricata.log` lines),
    /// drained by the engine.
    pub messages: Vec<(&'static str, String)>,
}

/// The flow of the packet in hand, as `suricata.flow` shows it.
#[derive(Debug, Clone)]
pub struct LuaFlow {
    pub id: u64,
    pub start: Timestamp,
    pub last: Timestamp,
    /// The flow's client and server, and the IP protocol.
    pub src: std::net::IpAddr,
    pub dst: std::net::IpAddr,
    pub sport: u16,
    pub dport: u16,
    pub ip_proto: u8,
    /// `app_proto`, `app_proto_ts`, `app_proto_tc`, `app_proto_orig`,
    /// `app_proto_expected`, by name.
    pub app: [&'static str; 5],
    /// Packets and bytes to the server, then to the client.
    pub stats: [u64; 4],
    pub has_alerts: bool,
}

/// What a script can see of the match (or the record) in hand.
pub struct LuaInput<'a> {
    /// The packet (none for a flow's end or a stats record).
    pub p: Option<&'a Packet<'a>>,
    pub flow: Option<&'a LuaFlow>,
    /// The transaction the signature inspects, and the side.
    pub tx: Option<(vigil_applayer::TxRef<'a>, Direction)>,
    /// The reassembled stream chunk the signature inspects.
    pub stream: Option<&'a [u8]>,
    /// The signature that matched (`suricata.rule`).
    pub rule: Option<LuaRule<'a>>,
    /// The flow's variables, for `suricata.flowvar` and `suricata.flowint`
    /// (rules only).
    pub vars: Option<&'a dyn FlowVars>,
    /// The file a `file` output script is called for (`suricata.file`).
    pub file: Option<&'a LuaFile<'a>>,
}

/// A file as `suricata.file` shows it.
#[derive(Debug, Clone, Copy)]
pub struct LuaFile<'a> {
    pub file_id: u64,
    pub tx_id: u64,
    pub name: &'a [u8],
    pub size: u64,
    pub magic: Option<&'a str>,
    pub md5: Option<&'a str>,
    pub sha1: Option<&'a str>,
    pub sha256: Option<&'a str>,
    /// `CLOSED`, `TRUNCATED`, `ERROR`, `OPEN`.
    pub state: &'a str,
    pub stored: bool,
}

/// What a rule's script may read and change of its flow: its variables,
/// and the engine's names of its counters.
pub struct LuaVars<'a> {
    pub st: &'a mut crate::FlowDetect,
    pub int_names: &'a [String],
}

/// A flow's variables as scripts see them, by name.
pub trait FlowVars {
    fn flowvar(&self, name: &str) -> Option<Vec<u8>>;
    fn set_flowvar(&self, name: &str, value: &[u8]);
    fn flowint(&self, name: &str) -> Option<u32>;
    fn set_flowint(&self, name: &str, value: u32);
}

impl FlowVars for std::cell::RefCell<LuaVars<'_>> {
    fn flowvar(&self, name: &str) -> Option<Vec<u8>> {
        self.borrow().st.flowvars.iter().find(|(n, _)| &**n == name).map(|(_, v)| v.clone())
    }

    fn set_flowvar(&self, name: &str, value: &[u8]) {
        self.borrow_mut().st.set_flowvar(&std::sync::Arc::from(name), value);
    }

    fn flowint(&self, name: &str) -> Option<u32> {
        let v = self.borrow();
        let id = v.int_names.iter().position(|n| n == name)?;
        v.st.ints.get(id as u16)
    }

    /// A counter no rule or script registered is not kept.
    fn set_flowint(&self, name: &str, value: u32) {
        let mut v = self.borrow_mut();
        if let Some(id) = v.int_names.iter().position(|n| n == name) {
            v.st.ints.set(id as u16, value);
            v.st.vars_changed = true;
        }
    }
}

/// A signature as `suricata.rule` shows it.
#[derive(Debug, Clone, Copy)]
pub struct LuaRule<'a> {
    pub sid: u32,
    pub gid: u32,
    pub rev: u32,
    pub msg: &'a str,
    pub action: &'a str,
    pub class_description: &'a str,
    pub priority: u32,
}

impl<'a> LuaRule<'a> {
    pub fn of(sig: &'a crate::Signature) -> LuaRule<'a> {
        LuaRule {
            sid: sig.sid,
            gid: sig.gid,
            rev: sig.rev,
            msg: &sig.msg,
            action: sig.action.as_str(),
            class_description: &sig.category,
            priority: sig.severity,
        }
    }
}

impl LuaStates {
    /// For another engine: the counters stay, the states (of the old
    /// engine's scripts) go.
    pub fn carried_over(&self) -> LuaStates {
        LuaStates { stats: self.stats, ..LuaStates::default() }
    }

    /// Runs `script` on `input`: whether the keyword matches (a negated
    /// keyword matches where the script does not; a script that fails
    /// matches nowhere).
    pub fn run(&mut self, script: &LuaScript, input: &LuaInput<'_>) -> bool {
        let slot = self.states.entry(script.id).or_insert_with(|| script.state().ok());
        let Some(state) = slot.as_ref() else { return false };
        // A script that asked for the payload runs on packets that have one.
        if script.needs.payload && input.tx.is_none() && input.p.is_none_or(|p| p.payload().is_empty()) {
            return false;
        }
        state.budget.store(0, Ordering::Relaxed);
        // Suricata 8.0.6 hands `match` an empty table whatever `init` asked
        // for: scripts read the data through the libraries.
        let r = state.lua.scope(|scope| {
            libs::bind(&state.lua, scope, input)?;
            state.matcher.call::<Value>(state.lua.create_table()?)
        });
        let (matched, failed) = match r {
            Ok(Value::Integer(n)) => (n == 1, None),
            Ok(Value::Number(n)) => (n == 1.0, None),
            Ok(Value::Boolean(b)) => (b, None),
            Ok(_) => (false, None),
            Err(e) => (false, Some(e)),
        };
        if let Some(log) = state.lua.app_data_ref::<libs::Logged>() {
            self.messages.extend(log.0.borrow_mut().drain(..));
        }
        if let Some(e) = failed {
            let m = message(&e);
            self.stats.errors += 1;
            if m.contains("Blocked Lua function called") {
                self.stats.blocked_function_errors += 1;
            } else if m == INSTRUCTION_LIMIT {
                self.stats.instruction_limit_errors += 1;
            } else if m == MEMORY_LIMIT {
                self.stats.memory_limit_errors += 1;
            }
            if self.logged.insert(script.id) {
                self.messages.push(("Warning", format!("Lua script failed to run successfully: {m}")));
            }
            // A state that ran out of memory may be left unusable.
            if m == MEMORY_LIMIT {
                self.states.remove(&script.id);
            }
            return false;
        }
        matched != script.negated
    }
}

#[cfg(test)]
mod tests;
