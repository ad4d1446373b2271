//! `luaxform:<script>[, arg]...`: a sticky buffer transformed by a Lua
//! script's `transform(input, args)`, as Suricata 8 runs it. `args` holds
//! the keyword's arguments after the script's name, as written; the
//! script returns the new buffer and its length (the buffer is cut to
//! that length). Any other answer, or a failure, leaves the buffer as it
//! was, silently (Suricata counts and logs nothing for a transform).
//!
//! Transforms run where buffers are inspected, without a worker's
//! scratch space at hand: each thread keeps its own state per script.

use super::{find, message, LuaSettings};
use mlua::{Function, Lua, Value};
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// A loaded transform script. Equal (and hashed) by the script's file and
/// what the rule wrote, so two rules with the same transform share a
/// prefilter.
#[derive(Clone)]
pub struct LuaXform {
    spec: String,
    inner: Arc<Loaded>,
}

struct Loaded {
    id: usize,
    path: PathBuf,
    source: Vec<u8>,
    args: Vec<String>,
    settings: LuaSettings,
}

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// A thread's state of one script: the state, its `transform`, its budget.
type Started = (Lua, Function, Arc<AtomicU64>);

thread_local! {
    /// This thread's states, by script (`None`: it failed to start here).
    static STATES: RefCell<HashMap<usize, Option<Started>>> = RefCell::new(HashMap::new());
    /// What scripts wrote with `suricata.log`, until the engine logs it.
    static LOGGED: RefCell<Vec<(&'static str, String)>> = const { RefCell::new(Vec::new()) };
}

/// Some transform script was loaded: the engine then collects their log
/// lines ([`take_messages`]).
pub(super) static LOADED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The lines this thread's transform scripts logged since the last call.
pub fn take_messages() -> Vec<(&'static str, String)> {
    LOGGED.with(|l| std::mem::take(&mut *l.borrow_mut()))
}

impl LuaXform {
    /// `spec` as the rule wrote it (`transform.lua, bytes 0, offset 2`).
    pub fn load(spec: &str, rule_file: &str, settings: &LuaSettings) -> Result<LuaXform, String> {
        if !settings.allow_rules {
            return Err("Lua rules are disabled by security configuration: security.lua.allow-rules".into());
        }
        let mut parts = spec.trim().split(',');
        let name = parts.next().map(str::trim).filter(|n| !n.is_empty()).ok_or("luaxform needs a script name")?;
        // Each argument as written after its comma, its leading space kept, as Suricata hands it over.
        let args: Vec<String> = parts.map(str::to_string).collect();
        let path = find(name, rule_file, settings.rule_path.as_deref())
            .ok_or_else(|| format!("couldn't load file {name}: No such file or directory"))?;
        let source = std::fs::read(&path).map_err(|e| format!("couldn't load file {}: {e}", path.display()))?;
        let inner = Arc::new(Loaded {
            id: NEXT.fetch_add(1, Ordering::Relaxed),
            path,
            source,
            args,
            settings: settings.clone(),
        });
        // Checked once here: the script runs and has its function.
        inner.start().map_err(|e| format!("lua transform {name}: {}", message(&e)))?;
        let spec = format!("{}|{}", inner.path.display(), spec.trim());
        LOADED.store(true, Ordering::Relaxed);
        Ok(LuaXform { spec, inner })
    }

    /// `input` transformed into `out`.
    pub fn apply(&self, input: &[u8], out: &mut Vec<u8>) {
        out.clear();
        STATES.with(|states| {
            let mut states = states.borrow_mut();
            let slot = states.entry(self.inner.id).or_insert_with(|| self.inner.start().ok());
            let Some((lua, transform, budget)) = slot.as_ref() else {
                out.extend_from_slice(input);
                return;
            };
            budget.store(0, Ordering::Relaxed);
            let r = (|| -> mlua::Result<Option<Vec<u8>>> {
                let args = lua.create_sequence_from(self.inner.args.iter().map(String::as_str))?;
                let (v, n): (Value, Value) = transform.call((lua.create_string(input)?, args))?;
                Ok(match (v, n) {
                    (Value::String(s), Value::Integer(n)) => {
                        let b = s.as_bytes();
                        Some(b[..usize::try_from(n).unwrap_or(0).min(b.len())].to_vec())
                    }
                    _ => None,
                })
            })();
            match r {
                Ok(Some(v)) => out.extend_from_slice(&v),
                _ => out.extend_from_slice(input),
            }
            let lines: Vec<_> = match lua.app_data_ref::<super::libs::Logged>() {
                Some(log) => log.0.borrow_mut().drain(..).collect(),
                None => Vec::new(),
            };
            LOGGED.with(|l| l.borrow_mut().extend(lines));
        });
    }
}

impl Loaded {
    fn start(&self) -> mlua::Result<Started> {
        let (lua, budget) = super::sandboxed(&self.source, &self.path, &self.settings)?;
        let transform: Function = lua
            .globals()
            .get::<Option<Function>>("transform")?
            .ok_or_else(|| mlua::Error::RuntimeError("no transform function in script".into()))?;
        Ok((lua, transform, budget))
    }
}

impl std::fmt::Debug for LuaXform {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("LuaXform").field(&self.spec).finish()
    }
}

impl PartialEq for LuaXform {
    fn eq(&self, other: &Self) -> bool {
        self.spec == other.spec
    }
}

impl Eq for LuaXform {}

impl std::hash::Hash for LuaXform {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.spec.hash(h);
    }
}
