//! Lua output scripts (`outputs: - lua: scripts: [...]`), as Suricata 8
//! runs them: `init` says what the script logs (`protocol = "http"`: each
//! transaction of that protocol as it is logged; `type = "packet"`: every
//! packet, or with `filter = "alerts"` each alert; `type = "flow"`: each
//! flow at its end; `type = "stats"`: each stats record), `setup` runs once
//! per worker, `log` for each of those, `deinit` at the end.
//!
//! Output scripts are the operator's own programs, not rules: they run
//! with Lua's whole standard library (they open their files with
//! `io.open`), as in Suricata, and with the `suricata.*` libraries.

use super::{libs, message, LuaInput};
use mlua::{Function, Lua, LuaOptions, StdLib, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What a script logs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LuaLogs {
    /// Transactions of the protocol so named, as their records are written.
    Protocol(String),
    Packets,
    Alerts,
    Flows,
    Stats,
    /// Files, as their `fileinfo` records are written.
    Files,
    /// `type = "streaming"`: a TCP flow's stream pieces as its parser is
    /// given them (`filter = "tcp"`), or HTTP bodies (`protocol = "http"`).
    Streaming {
        http: bool,
    },
}

/// One call of a streaming script: `args.stream` (and `args.tx_id` for
/// HTTP bodies).
#[derive(Debug, Clone, Copy)]
pub struct StreamArgs<'a> {
    pub data: &'a [u8],
    pub open: bool,
    pub close: bool,
    pub to_server: bool,
    pub tx_id: Option<u64>,
}

/// A script read and asked what it logs, once for the run.
#[derive(Debug)]
pub struct LuaOutputScript {
    pub path: PathBuf,
    source: Vec<u8>,
    pub logs: LuaLogs,
    log_dir: PathBuf,
}

impl LuaOutputScript {
    /// Reads `path` and runs its `init`; `log_dir` is what
    /// `suricata.config.log_path()` answers.
    pub fn load(path: &Path, log_dir: &Path) -> Result<Arc<LuaOutputScript>, String> {
        let source = std::fs::read(path).map_err(|e| format!("couldn't load file {}: {e}", path.display()))?;
        let mut script = LuaOutputScript {
            path: path.to_path_buf(),
            source,
            logs: LuaLogs::Packets,
            log_dir: log_dir.to_path_buf(),
        };
        let (lua, _) = script.state().map_err(|e| format!("lua output {}: {}", path.display(), message(&e)))?;
        let init: Function = lua
            .globals()
            .get::<Option<Function>>("init")
            .ok()
            .flatten()
            .ok_or_else(|| format!("lua output {}: no init function in script", path.display()))?;
        let needs: Value = init
            .call(lua.create_table().map_err(|e| e.to_string())?)
            .map_err(|e| format!("lua output {}: init failed: {}", path.display(), message(&e)))?;
        let Value::Table(needs) = needs else {
            return Err(format!("lua output {}: init function did not return a table", path.display()));
        };
        let text = |k: &str| needs.get::<Option<String>>(k).ok().flatten();
        script.logs = match (text("protocol"), text("type").as_deref(), text("filter").as_deref()) {
            (Some(p), Some("streaming"), _) if p.eq_ignore_ascii_case("http") => LuaLogs::Streaming { http: true },
            (None, Some("streaming"), Some("tcp")) => LuaLogs::Streaming { http: false },
            (_, Some("streaming"), _) => {
                return Err(format!("lua output {}: streaming needs filter tcp or protocol http", path.display()))
            }
            (Some(p), _, _) => LuaLogs::Protocol(p.to_ascii_lowercase()),
            (None, Some("packet"), Some("alerts")) => LuaLogs::Alerts,
            (None, Some("packet"), _) => LuaLogs::Packets,
            (None, Some("flow"), _) => LuaLogs::Flows,
            (None, Some("stats"), _) => LuaLogs::Stats,
            (None, Some("file"), _) => LuaLogs::Files,
            (None, Some(other), _) => {
                return Err(format!("lua output {}: type {other} is not supported by vigil yet", path.display()))
            }
            (None, None, _) => return Err(format!("lua output {}: init names no protocol or type", path.display())),
        };
        Ok(Arc::new(script))
    }

    /// A state with the script run once, and its `log` function.
    fn state(&self) -> mlua::Result<(Lua, Option<Function>)> {
        let lua = Lua::new_with(StdLib::ALL_SAFE, LuaOptions::default())?;
        libs::install(&lua)?;
        libs::set_log_path(&lua, Some(&self.log_dir))?;
        lua.load(&self.source[..]).set_name(format!("@{}", self.path.display())).exec()?;
        let log = lua.globals().get::<Option<Function>>("log")?;
        Ok((lua, log))
    }

    /// This worker's instance: a fresh state, its `setup` run.
    pub fn start(self: &Arc<Self>) -> Result<LuaOutput, String> {
        let (lua, log) = self.state().map_err(|e| format!("lua output {}: {}", self.path.display(), message(&e)))?;
        let log = log.ok_or_else(|| format!("lua output {}: no log function in script", self.path.display()))?;
        if let Some(setup) = lua.globals().get::<Option<Function>>("setup").ok().flatten() {
            setup
                .call::<()>(lua.create_table().map_err(|e| e.to_string())?)
                .map_err(|e| format!("lua output {}: setup failed: {}", self.path.display(), message(&e)))?;
        }
        Ok(LuaOutput { script: Arc::clone(self), lua, log, failed: 0, messages: Vec::new() })
    }
}

/// A worker's running output script.
pub struct LuaOutput {
    pub script: Arc<LuaOutputScript>,
    lua: Lua,
    log: Function,
    /// Calls of `log` that failed (the first is logged).
    pub failed: u64,
    /// Messages for vigil's log: the script's `suricata.log` lines, its
    /// first failure.
    pub messages: Vec<(&'static str, String)>,
}

impl std::fmt::Debug for LuaOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LuaOutput").field("script", &self.script.path).finish()
    }
}

impl LuaOutput {
    /// Calls `log` with `input` bound to the libraries.
    pub fn log(&mut self, input: &LuaInput<'_>) {
        let r = self.lua.scope(|scope| {
            libs::bind(&self.lua, scope, input)?;
            self.log.call::<()>(self.lua.create_table()?)
        });
        self.after(r);
    }

    /// Calls `log` with `args.stream` (and `args.tx_id`), `input` bound.
    pub fn stream(&mut self, input: &LuaInput<'_>, a: &StreamArgs<'_>) {
        let r = self.lua.scope(|scope| {
            libs::bind(&self.lua, scope, input)?;
            let args = self.lua.create_table()?;
            let stream = self.lua.create_table()?;
            stream.set("data", self.lua.create_string(a.data)?)?;
            stream.set("open", a.open)?;
            stream.set("close", a.close)?;
            stream.set("to_server", a.to_server)?;
            stream.set("to_client", !a.to_server)?;
            args.set("stream", stream)?;
            if let Some(id) = a.tx_id {
                // A float, as Suricata pushes it (`tostring` writes `0.0`).
                args.set("tx_id", id as f64)?;
            }
            self.log.call::<()>(args)
        });
        self.after(r);
    }

    /// Calls `log` with the counters of a stats record, each a table of
    /// `name`, `tmname` (`Total`), `value` and `pvalue` (the value at the
    /// previous record), as Suricata hands them over.
    pub fn stats(&mut self, counters: &[(String, u64, u64)]) {
        let r = (|| -> mlua::Result<()> {
            let args = self.lua.create_table()?;
            for (name, value, previous) in counters {
                let row = self.lua.create_table()?;
                row.set("name", name.as_str())?;
                row.set("tmname", "Total")?;
                row.set("value", *value as i64)?;
                row.set("pvalue", *previous as i64)?;
                args.push(row)?;
            }
            self.log.call::<()>(args)
        })();
        self.after(r);
    }

    fn after(&mut self, r: mlua::Result<()>) {
        if let Some(log) = self.lua.app_data_ref::<libs::Logged>() {
            self.messages.extend(log.0.borrow_mut().drain(..));
        }
        if let Err(e) = r {
            self.failed += 1;
            if self.failed == 1 {
                self.messages.push(("Warning", format!("lua output {}: {}", self.script.path.display(), message(&e))));
            }
        }
    }

    /// Runs `deinit`, at the end of the run.
    pub fn finish(&mut self) {
        if let Some(deinit) = self.lua.globals().get::<Option<Function>>("deinit").ok().flatten() {
            let r = self.lua.create_table().and_then(|t| deinit.call::<()>(t));
            self.after(r);
        }
    }
}
