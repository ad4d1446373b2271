//! Datasets, as Suricata's `dataset` and `datarep` keywords use them: named
//! sets of strings, MD5 or SHA-256 digests or addresses that a rule looks
//! its buffer up in (after the buffer's transforms), adds it to or removes
//! it from; `datarep` sets give each value a reputation (0 to 65535) a rule
//! compares.
//!
//! A set is made by the first rule (or `datasets` entry of the config) that
//! names it with a type, and shared by every rule that names it and by
//! every worker: signatures hold it behind an [`Arc`], its values behind a
//! lock only rules that use it take. `load` reads a file at start (relative
//! names from the rule file's directory, then the default rule path),
//! `state` reads and writes one in the data directory (`--data-dir`),
//! `save` writes one there when vigil stops ([`Datasets::save_all`]). Files
//! hold one value a line: strings in base64, digests in hex, addresses as
//! text, and `datarep` sets `value,reputation`.
//!
//! Each set is bounded by its `memcap` (100 MiB unless the set or
//! `datasets.defaults` says otherwise); a value that would pass it is not
//! added, and counted ([`Dataset::refused`]).

mod values;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use vigil_rules::keywords::dataset::{DatasetCmd, DatasetSpec, RepOp, SetKind};

pub use values::{format_value, parse_line};

/// A set's memory bound where nothing names one.
pub const DEFAULT_MEMCAP: u64 = 100 << 20;
/// A set's `hashsize` where nothing names one (counted against the limits).
pub const DEFAULT_HASHSIZE: u64 = 2048;
/// What one value costs against the memcap besides its bytes.
const VALUE_OVERHEAD: u64 = 48;

/// Where sets' files are and what bounds them.
#[derive(Debug, Clone)]
pub struct DatasetsSetup {
    /// Where `save` and `state` files go (`--data-dir`).
    pub data_dir: PathBuf,
    /// Where a `load` file not found beside its rule file is looked for
    /// (`default-rule-path`).
    pub rule_path: Option<PathBuf>,
    pub default_memcap: u64,
    pub default_hashsize: u64,
    /// The largest `hashsize` one set may ask for.
    pub single_hashsize: u64,
    /// The most all sets together may ask for.
    pub total_hashsizes: u64,
}

impl Default for DatasetsSetup {
    /// Suricata 8's: its data directory, its limits.
    fn default() -> Self {
        DatasetsSetup {
            data_dir: PathBuf::from("/var/lib/suricata/data"),
            rule_path: None,
            default_memcap: DEFAULT_MEMCAP,
            default_hashsize: DEFAULT_HASHSIZE,
            single_hashsize: 65_536,
            total_hashsizes: 16_777_216,
        }
    }
}

/// A set declared by the config or a rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetDecl<'a> {
    pub name: &'a str,
    pub kind: Option<SetKind>,
    pub load: Option<&'a str>,
    pub save: Option<&'a str>,
    pub state: Option<&'a str>,
    pub memcap: Option<u64>,
    pub hashsize: Option<u64>,
    /// Values carry a reputation (a `datarep` set).
    pub rep: bool,
    /// Declared by the config (its `load` file is in the data directory,
    /// and it stays across rule reloads).
    pub config: bool,
}

impl<'a> SetDecl<'a> {
    pub fn of_rule(spec: &'a DatasetSpec) -> SetDecl<'a> {
        SetDecl {
            name: &spec.name,
            kind: spec.kind,
            load: spec.load.as_deref(),
            save: spec.save.as_deref(),
            state: spec.state.as_deref(),
            memcap: spec.memcap,
            hashsize: spec.hashsize,
            rep: spec.rep.is_some(),
            config: false,
        }
    }
}

/// Every set of a run.
#[derive(Debug, Default)]
pub struct Datasets {
    setup: DatasetsSetup,
    sets: Mutex<Vec<Arc<Dataset>>>,
}

/// One set.
#[derive(Debug)]
pub struct Dataset {
    pub name: String,
    pub kind: SetKind,
    /// Values carry a reputation.
    pub rep: bool,
    load: Option<PathBuf>,
    save: Option<PathBuf>,
    /// Declared by the config, not a rule.
    from_config: bool,
    memcap: u64,
    hashsize: u64,
    values: RwLock<Values>,
    refused: AtomicU64,
}

#[derive(Debug, Default)]
struct Values {
    /// Each value with the order it came in (files are written in it) and
    /// its reputation.
    map: HashMap<Box<[u8]>, (u64, u16)>,
    next: u64,
    bytes: u64,
}

impl Datasets {
    pub fn new(setup: DatasetsSetup) -> Datasets {
        Datasets { setup, sets: Mutex::new(Vec::new()) }
    }

    /// The set `decl` names: the one already made under that name (whose
    /// type and files it must agree with), or a new one, its `load` or
    /// `state` file read. `rule_file`: the file of the rule naming it.
    pub fn get(&self, decl: &SetDecl<'_>, rule_file: Option<&str>) -> Result<Arc<Dataset>, String> {
        let name = decl.name;
        if let Some(s) = self.existing(decl, rule_file)? {
            return Ok(s);
        }
        let set = self.make(decl, rule_file)?;
        // Read without the registry locked (socket commands go on); a rule
        // that made the same set meanwhile wins.
        if let Some(path) = &set.load {
            // A state file not written yet is an empty set; a file to load must be there.
            set.read_file(path, decl.state.is_some())?;
        }
        let mut sets = self.sets.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = sets.iter().find(|s| s.name == name) {
            return Ok(Arc::clone(s));
        }
        let set = Arc::new(set);
        sets.push(Arc::clone(&set));
        Ok(set)
    }

    /// The set already made under `decl`'s name, where its type and files agree.
    fn existing(&self, decl: &SetDecl<'_>, rule_file: Option<&str>) -> Result<Option<Arc<Dataset>>, String> {
        let sets = self.sets.lock().unwrap_or_else(|e| e.into_inner());
        let name = decl.name;
        if let Some(s) = sets.iter().find(|s| s.name == name) {
            if decl.kind.is_some_and(|k| k != s.kind) {
                return Err(format!("dataset '{name}' already exists with type {}", s.kind.as_str()));
            }
            let same = |given: Option<PathBuf>, have: &Option<PathBuf>| given.is_none() || given == *have;
            let (load, save) = self.files(decl, rule_file);
            if !same(load, &s.load) || !same(save, &s.save) {
                return Err(format!("dataset '{name}' already exists with other files"));
            }
            return Ok(Some(Arc::clone(s)));
        }
        Ok(None)
    }

    /// A new set for `decl`, its limits checked, its file not read yet.
    fn make(&self, decl: &SetDecl<'_>, rule_file: Option<&str>) -> Result<Dataset, String> {
        let name = decl.name;
        let Some(kind) = decl.kind else {
            return Err(format!("dataset '{name}' has no type and no other rule or the config made it"));
        };
        let hashsize = decl.hashsize.unwrap_or(self.setup.default_hashsize);
        if hashsize > self.setup.single_hashsize {
            return Err(format!(
                "hashsize {hashsize} in dataset '{name}' exceeds configured 'single-hashsize' limit ({})",
                self.setup.single_hashsize
            ));
        }
        let total: u64 = self.sets().iter().map(|s| s.hashsize).sum::<u64>() + hashsize;
        if total > self.setup.total_hashsizes {
            return Err(format!(
                "hashsize {hashsize} in dataset '{name}' exceeds configured 'total-hashsizes' limit ({})",
                self.setup.total_hashsizes
            ));
        }
        let (load, save) = self.files(decl, rule_file);
        Ok(Dataset {
            name: name.to_string(),
            kind,
            rep: decl.rep,
            load,
            save,
            from_config: decl.config,
            memcap: decl.memcap.unwrap_or(self.setup.default_memcap),
            hashsize,
            values: RwLock::new(Values::default()),
            refused: AtomicU64::new(0),
        })
    }

    /// Makes ready for a rule reload: the sets the config declared and
    /// those written back (`save`, `state`) stay, values and all; sets only
    /// loaded from a file are let go (the running rules keep theirs until
    /// they go), so the reloaded rules read an updated list again, as in
    /// Suricata.
    pub fn prepare_reload(&self) {
        let mut sets = self.sets.lock().unwrap_or_else(|e| e.into_inner());
        sets.retain(|s| s.from_config || s.save.is_some());
    }

    /// The file a set is read from and the one it is written to.
    fn files(&self, decl: &SetDecl<'_>, rule_file: Option<&str>) -> (Option<PathBuf>, Option<PathBuf>) {
        let in_data = |f: &str| self.setup.data_dir.join(f);
        if let Some(state) = decl.state {
            let p = in_data(state);
            return (Some(p.clone()), Some(p));
        }
        let load = decl.load.map(|f| match decl.config {
            true => in_data(f),
            false => self.load_path(f, rule_file),
        });
        (load, decl.save.map(in_data))
    }

    /// A rule's `load` file: as named when absolute, else beside the rule
    /// file, else under the default rule path, as Suricata looks for it.
    fn load_path(&self, file: &str, rule_file: Option<&str>) -> PathBuf {
        let p = Path::new(file);
        if p.is_absolute() {
            return p.to_path_buf();
        }
        let beside = rule_file.and_then(|r| Path::new(r).parent()).map(|d| d.join(p));
        if let Some(b) = beside.filter(|b| b.exists()) {
            return b;
        }
        match &self.setup.rule_path {
            Some(dir) if dir.join(p).exists() => dir.join(p),
            _ => p.to_path_buf(),
        }
    }

    /// The set named `name`, of type `kind`.
    pub fn find(&self, name: &str, kind: SetKind) -> Option<Arc<Dataset>> {
        self.sets().into_iter().find(|s| s.name == name && s.kind == kind)
    }

    /// Every set made so far.
    pub fn sets(&self) -> Vec<Arc<Dataset>> {
        self.sets.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Writes every set that has a `save` or `state` file; a line for each
    /// written and each that could not be, and one for each set whose
    /// memcap kept values out.
    pub fn save_all(&self) -> Vec<Result<String, String>> {
        let sets = self.sets();
        let mut out: Vec<Result<String, String>> =
            sets.iter().filter_map(|s| s.save.as_ref().map(|p| s.write_file(p))).collect();
        out.extend(sets.iter().filter(|s| s.refused() > 0).map(|s| {
            Err(format!(
                "dataset '{}': {} values not added, its memcap ({} bytes) reached",
                s.name,
                s.refused(),
                s.memcap
            ))
        }));
        out
    }
}

impl Dataset {
    /// Reads `path` into the set; `optional`: a missing file is no error.
    fn read_file(&self, path: &Path, optional: bool) -> Result<(), String> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if optional && e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(format!("dataset '{}': cannot read {}: {e}", self.name, path.display())),
        };
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (value, rep) = parse_line(self.kind, self.rep, line)
                .map_err(|e| format!("dataset '{}': {}:{}: {e}", self.name, path.display(), i + 1))?;
            self.add(&value, rep);
        }
        Ok(())
    }

    fn write_file(&self, path: &Path) -> Result<String, String> {
        // Formatted under the lock, written without it: workers go on adding.
        let mut lines: Vec<(u64, String)> = {
            let v = self.values.read().unwrap_or_else(|e| e.into_inner());
            v.map
                .iter()
                .map(|(k, (seq, rep))| {
                    let text = format_value(self.kind, k);
                    (*seq, if self.rep { format!("{text},{rep}") } else { text })
                })
                .collect()
        };
        lines.sort_unstable_by_key(|(seq, _)| *seq);
        let mut out = String::with_capacity(lines.iter().map(|(_, l)| l.len() + 1).sum());
        for (_, l) in &lines {
            out.push_str(l);
            out.push('\n');
        }
        std::fs::write(path, out)
            .map(|()| format!("dataset '{}': {} values written to {}", self.name, lines.len(), path.display()))
            .map_err(|e| format!("dataset '{}': cannot write {}: {e}", self.name, path.display()))
    }

    /// Runs `f` on the value a buffer stands for in this set: the bytes of
    /// a string, a digest of its size, an address (an IPv4 one in an `ip`
    /// set as its four bytes and twelve zeros, as Suricata keeps it); `None`
    /// when the buffer is no such value.
    fn with_key<R>(&self, data: &[u8], f: impl FnOnce(&[u8]) -> R) -> Option<R> {
        match (self.kind, data.len()) {
            (SetKind::String, _)
            | (SetKind::Md5, 16)
            | (SetKind::Sha256, 32)
            | (SetKind::Ipv4, 4)
            | (SetKind::Ip, 16) => Some(f(data)),
            (SetKind::Ip, 4) => {
                let mut v4 = [0u8; 16];
                v4[..4].copy_from_slice(data);
                Some(f(&v4))
            }
            _ => None,
        }
    }

    /// Adds `value` (already in the set's form); false when it was there or
    /// the memcap refused it.
    fn add(&self, value: &[u8], rep: u16) -> bool {
        let mut v = self.values.write().unwrap_or_else(|e| e.into_inner());
        if v.map.contains_key(value) {
            return false;
        }
        let cost = value.len() as u64 + VALUE_OVERHEAD;
        if v.bytes + cost > self.memcap {
            self.refused.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        v.bytes += cost;
        let seq = v.next;
        v.next += 1;
        v.map.insert(value.into(), (seq, rep));
        true
    }

    fn remove(&self, value: &[u8]) -> bool {
        let mut v = self.values.write().unwrap_or_else(|e| e.into_inner());
        match v.map.remove(value) {
            Some(_) => {
                v.bytes -= value.len() as u64 + VALUE_OVERHEAD;
                true
            }
            None => false,
        }
    }

    fn lookup(&self, value: &[u8]) -> Option<u16> {
        self.values.read().unwrap_or_else(|e| e.into_inner()).map.get(value).map(|&(_, rep)| rep)
    }

    /// A value as its file writes it (strings in base64, as the unix
    /// socket's `dataset-*` commands take them), in the set's form.
    fn serialized(&self, text: &str) -> Result<Vec<u8>, String> {
        parse_line(self.kind, false, text.trim()).map(|(v, _)| v)
    }

    /// Adds a value written as its file writes it; whether it was new.
    pub fn add_serialized(&self, text: &str) -> Result<bool, String> {
        Ok(self.add(&self.serialized(text)?, 0))
    }

    /// Removes a value written as its file writes it; whether it was there.
    pub fn remove_serialized(&self, text: &str) -> Result<bool, String> {
        Ok(self.remove(&self.serialized(text)?))
    }

    /// Whether a value written as its file writes it is there.
    pub fn contains_serialized(&self, text: &str) -> Result<bool, String> {
        Ok(self.lookup(&self.serialized(text)?).is_some())
    }

    /// Empties it.
    pub fn clear(&self) {
        let mut v = self.values.write().unwrap_or_else(|e| e.into_inner());
        v.map.clear();
        v.bytes = 0;
    }

    /// How many values it holds.
    pub fn len(&self) -> usize {
        self.values.read().unwrap_or_else(|e| e.into_inner()).map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Values the memcap kept out.
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }
}

/// What one `dataset` or `datarep` keyword does with its buffer.
#[derive(Debug, Clone)]
pub enum SetTest {
    Cmd(DatasetCmd),
    Rep(RepOp, u16),
}

/// One `dataset` or `datarep` keyword of a signature, its set resolved.
#[derive(Debug, Clone)]
pub struct SetOp {
    pub set: Arc<Dataset>,
    pub test: SetTest,
}

impl SetOp {
    /// Whether the (transformed) buffer `data` matches: `set` when it was
    /// added now, `unset` when it was there and is removed, `isset` and
    /// `isnotset` as they say, `datarep` when its reputation compares.
    pub fn matches(&self, data: &[u8]) -> bool {
        // An empty buffer matches nothing; one that is no value of the
        // set's type (IPv6 for an `ipv4` set) is not in it, as Suricata sees them.
        if data.is_empty() {
            return false;
        }
        let set = &self.set;
        let found = set.with_key(data, |key| match self.test {
            SetTest::Cmd(DatasetCmd::Set) => set.add(key, 0),
            SetTest::Cmd(DatasetCmd::Unset) => set.remove(key),
            SetTest::Cmd(DatasetCmd::IsSet) => set.lookup(key).is_some(),
            SetTest::Cmd(DatasetCmd::IsNotSet) => set.lookup(key).is_none(),
            SetTest::Rep(op, against) => set.lookup(key).is_some_and(|rep| op.holds(rep, against)),
        });
        found.unwrap_or(matches!(self.test, SetTest::Cmd(DatasetCmd::IsNotSet)))
    }

    /// The keyword of a rule, its set found or made in `sets`.
    pub fn of_rule(spec: &DatasetSpec, sets: &Datasets, rule_file: Option<&str>) -> Result<SetOp, String> {
        let set = sets.get(&SetDecl::of_rule(spec), rule_file)?;
        let test = match (spec.cmd, spec.rep) {
            (Some(c), _) => SetTest::Cmd(c),
            (None, Some((op, v))) => SetTest::Rep(op, v),
            (None, None) => return Err("dataset keyword without a command".into()),
        };
        if matches!(test, SetTest::Rep(..)) && !set.rep {
            return Err(format!("dataset '{}' holds no reputations", set.name));
        }
        Ok(SetOp { set, test })
    }
}

#[cfg(test)]
mod tests;
