//! The `dataset` and `datarep` keywords' values, as Suricata 8 writes them:
//! `dataset:<set|unset|isset|isnotset>,<name>[, type <t>, load <file>,
//! save <file>, state <file>, memcap <size>, hashsize <n>]` and
//! `datarep:<name>,<op>,<value>[, ...the same options]`. What a set holds
//! and how it is matched is the engine's; this is the syntax, and which
//! file names a rule may write to (the loader's `datasets.rules` policy).

use std::fmt;
use std::path::{Component, Path};

use crate::error::{verr, VResult};
use crate::lexer::{split_commas, trim};
use crate::options::Value;

/// What a `dataset` keyword does with the buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DatasetCmd {
    /// Adds it; matches when it was not there yet.
    Set,
    /// Removes it; matches when it was there.
    Unset,
    IsSet,
    IsNotSet,
}

impl DatasetCmd {
    pub fn as_str(self) -> &'static str {
        match self {
            DatasetCmd::Set => "set",
            DatasetCmd::Unset => "unset",
            DatasetCmd::IsSet => "isset",
            DatasetCmd::IsNotSet => "isnotset",
        }
    }
}

/// What a set holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SetKind {
    /// Any bytes (files hold them in base64).
    String,
    Md5,
    Sha256,
    Ipv4,
    /// IPv6 addresses, IPv4 ones among them (`ip` and `ipv6`).
    Ip,
}

impl SetKind {
    pub fn parse(s: &str) -> Option<SetKind> {
        Some(match s {
            "string" => SetKind::String,
            "md5" => SetKind::Md5,
            "sha256" => SetKind::Sha256,
            "ipv4" => SetKind::Ipv4,
            "ip" | "ipv6" => SetKind::Ip,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            SetKind::String => "string",
            SetKind::Md5 => "md5",
            SetKind::Sha256 => "sha256",
            SetKind::Ipv4 => "ipv4",
            SetKind::Ip => "ip",
        }
    }
}

/// `datarep`'s comparison of the value's reputation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RepOp {
    Lt,
    Gt,
    Eq,
}

impl RepOp {
    pub fn holds(self, rep: u16, against: u16) -> bool {
        match self {
            RepOp::Lt => rep < against,
            RepOp::Gt => rep > against,
            RepOp::Eq => rep == against,
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            RepOp::Lt => "<",
            RepOp::Gt => ">",
            RepOp::Eq => "=",
        }
    }
}

/// One `dataset` or `datarep` option.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DatasetSpec {
    /// `None` for `datarep`, whose test is `rep`.
    pub cmd: Option<DatasetCmd>,
    pub rep: Option<(RepOp, u16)>,
    pub name: String,
    pub kind: Option<SetKind>,
    pub load: Option<String>,
    pub save: Option<String>,
    /// Loaded at start and saved at exit.
    pub state: Option<String>,
    pub memcap: Option<u64>,
    pub hashsize: Option<u64>,
    /// Options Suricata has that vigil does not run yet (`format json`,
    /// `context_key`, `match subdomain`, ...), with their values.
    pub unsupported: Vec<(String, String)>,
}

/// The longest set name Suricata takes.
const MAX_NAME: usize = 63;

/// A byte size: a number with an optional `kb`, `mb` or `gb` (powers of 1024).
fn parse_size(at: usize, s: &str) -> VResult<u64> {
    let lower = s.to_ascii_lowercase();
    let (digits, unit) = match lower.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => lower.split_at(i),
        None => (lower.as_str(), ""),
    };
    let mult: u64 = match unit.trim() {
        "" | "b" => 1,
        "kb" | "kib" => 1 << 10,
        "mb" | "mib" => 1 << 20,
        "gb" | "gib" => 1 << 30,
        u => return verr(at, format!("unknown size unit '{u}'")),
    };
    let n: u64 = digits.parse().or_else(|_| verr(at, format!("'{s}' is not a size")))?;
    n.checked_mul(mult).map_or_else(|| verr(at, format!("'{s}' is too large")), Ok)
}

/// The options after the command (or test) and the name.
fn options(spec: &mut DatasetSpec, parts: &[(usize, &str)]) -> VResult<()> {
    for &(off, part) in parts {
        let (o, t) = trim(part);
        let at = off + o;
        let (key, value) = match t.split_once(char::is_whitespace) {
            Some((k, v)) => (k, v.trim()),
            None => (t, ""),
        };
        if value.is_empty() && key != "remove_key" {
            return verr(at, format!("'{key}' needs a value"));
        }
        let file = || -> VResult<Option<String>> { Ok(Some(value.to_string())) };
        match key {
            "type" => match SetKind::parse(value) {
                Some(k) => spec.kind = Some(k),
                None => return verr(at, format!("bad type '{value}': string, md5, sha256, ipv4, ip or ipv6")),
            },
            "load" => spec.load = file()?,
            "save" => spec.save = file()?,
            "state" => spec.state = file()?,
            "memcap" => spec.memcap = Some(parse_size(at, value)?),
            "hashsize" => spec.hashsize = Some(value.parse().or_else(|_| verr(at, format!("bad hashsize '{value}'")))?),
            "format" | "context_key" | "value_key" | "array_key" | "enrichment_key" | "remove_key" | "match" => {
                spec.unsupported.push((key.to_string(), value.to_string()))
            }
            _ => return verr(at, format!("unknown dataset option '{key}'")),
        }
    }
    if spec.state.is_some() && (spec.load.is_some() || spec.save.is_some()) {
        return verr(0, "'state' cannot be combined with 'load' or 'save'");
    }
    Ok(())
}

fn name(at: usize, s: &str) -> VResult<String> {
    let (o, t) = trim(s);
    if t.is_empty() {
        return verr(at + o, "needs a set name");
    }
    if t.len() > MAX_NAME || t.contains(char::is_whitespace) {
        return verr(at + o, format!("bad set name '{t}' (at most {MAX_NAME} characters, no spaces)"));
    }
    Ok(t.to_string())
}

pub(crate) fn p_dataset(s: &str) -> VResult<Value> {
    let parts = split_commas(s);
    let (off, cmd) = match parts.first() {
        Some(&(off, c)) => (off, trim(c).1),
        None => return verr(0, "needs a command and a set name"),
    };
    let cmd = match cmd {
        "set" => DatasetCmd::Set,
        "unset" => DatasetCmd::Unset,
        "isset" => DatasetCmd::IsSet,
        "isnotset" => DatasetCmd::IsNotSet,
        c => return verr(off, format!("bad command '{c}': set, unset, isset or isnotset")),
    };
    let Some(&(at, n)) = parts.get(1) else { return verr(s.len(), "needs a set name") };
    let mut spec = DatasetSpec {
        cmd: Some(cmd),
        rep: None,
        name: name(at, n)?,
        kind: None,
        load: None,
        save: None,
        state: None,
        memcap: None,
        hashsize: None,
        unsupported: Vec::new(),
    };
    options(&mut spec, &parts[2..])?;
    Ok(Value::Dataset(Box::new(spec)))
}

pub(crate) fn p_datarep(s: &str) -> VResult<Value> {
    let parts = split_commas(s);
    let Some(&(at, n)) = parts.first() else { return verr(0, "needs a set name") };
    let name = name(at, n)?;
    let (op, value) = match (parts.get(1), parts.get(2)) {
        (Some(&(oa, o)), Some(&(va, v))) => {
            let op = match trim(o).1 {
                "<" => RepOp::Lt,
                ">" => RepOp::Gt,
                "=" | "==" => RepOp::Eq,
                x => return verr(oa, format!("bad operator '{x}': <, >, = or ==")),
            };
            let value = trim(v).1;
            let Ok(v) = value.parse::<u16>() else {
                return verr(va, format!("invalid datarep value '{value}' (0 to 65535)"));
            };
            (op, v)
        }
        _ => return verr(s.len(), "needs a set name, an operator and a value"),
    };
    let mut spec = DatasetSpec {
        cmd: None,
        rep: Some((op, value)),
        name,
        kind: None,
        load: None,
        save: None,
        state: None,
        memcap: None,
        hashsize: None,
        unsupported: Vec::new(),
    };
    options(&mut spec, &parts[3..])?;
    Ok(Value::Dataset(Box::new(spec)))
}

impl DatasetSpec {
    /// The files the rule would write (`save`, `state`).
    pub fn written(&self) -> impl Iterator<Item = &str> {
        self.save.iter().chain(&self.state).map(String::as_str)
    }
}

/// Where rules may have sets written (`datasets.rules` in the config).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DatasetRules {
    /// `allow-write` (yes by default): rules may `save` or keep `state`.
    pub allow_write: bool,
    /// `allow-absolute-filenames` (no by default): a file they write may be
    /// named by an absolute path.
    pub allow_absolute: bool,
}

impl Default for DatasetRules {
    fn default() -> Self {
        DatasetRules { allow_write: true, allow_absolute: false }
    }
}

impl DatasetRules {
    /// Whether a rule's set may be written where it says: an error, as
    /// Suricata words it, or the notices to log.
    pub fn check(&self, spec: &DatasetSpec) -> Result<Vec<String>, String> {
        let mut notices = Vec::new();
        for file in spec.written() {
            if !self.allow_write {
                return Err("Rules containing save/state datasets have been disabled".into());
            }
            let path = Path::new(file);
            if self.allow_absolute {
                // Whatever the name: the notice says writes may go anywhere.
                notices.push(format!("Allowing absolute filename for dataset rule: {file}"));
            } else if path.is_absolute() {
                return Err(format!("Absolute paths not allowed: {file}"));
            } else if path.components().any(|c| c == Component::ParentDir) {
                return Err(format!("Directory traversals not allowed: {file}"));
            }
        }
        Ok(notices)
    }
}

impl fmt::Display for DatasetSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.cmd, self.rep) {
            (Some(c), _) => write!(f, "{},{}", c.as_str(), self.name)?,
            (None, Some((op, v))) => write!(f, "{},{},{v}", self.name, op.as_str())?,
            (None, None) => f.write_str(&self.name)?,
        }
        if let Some(k) = self.kind {
            write!(f, ", type {}", k.as_str())?;
        }
        for (key, v) in [("load", &self.load), ("save", &self.save), ("state", &self.state)] {
            if let Some(v) = v {
                write!(f, ", {key} {v}")?;
            }
        }
        if let Some(m) = self.memcap {
            write!(f, ", memcap {m}")?;
        }
        if let Some(h) = self.hashsize {
            write!(f, ", hashsize {h}")?;
        }
        for (key, value) in &self.unsupported {
            match value.is_empty() {
                true => write!(f, ", {key}")?,
                false => write!(f, ", {key} {value}")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(v: VResult<Value>) -> DatasetSpec {
        match v {
            Ok(Value::Dataset(d)) => *d,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn commands_names_and_options() {
        let d = spec(p_dataset("set,dns-seen, type string, memcap 100mb, hashsize 2048, state state.csv"));
        assert_eq!((d.cmd, d.name.as_str(), d.kind), (Some(DatasetCmd::Set), "dns-seen", Some(SetKind::String)));
        assert_eq!((d.memcap, d.hashsize, d.state.as_deref()), (Some(100 << 20), Some(2048), Some("state.csv")));
        let d = spec(p_dataset(" isnotset , dns-seen.md5"));
        assert_eq!((d.cmd, d.kind, d.name.as_str()), (Some(DatasetCmd::IsNotSet), None, "dns-seen.md5"));
        assert_eq!(spec(p_dataset("isset,x,type ipv6")).kind, Some(SetKind::Ip));
        let d = spec(p_datarep("dns_md5, >, 200, load dns_md5.rep, type md5"));
        assert_eq!((d.rep, d.load.as_deref()), (Some((RepOp::Gt, 200)), Some("dns_md5.rep")));
        let j = spec(p_dataset("isset,x,format json,value_key d"));
        assert_eq!(j.unsupported, [("format".into(), "json".into()), ("value_key".into(), "d".into())]);
        assert_eq!(j.to_string(), "isset,x, format json, value_key d");
        assert_eq!(d.to_string(), "dns_md5,>,200, type md5, load dns_md5.rep");
    }

    #[test]
    fn what_suricata_refuses() {
        assert!(p_dataset("add,x").is_err());
        assert!(p_dataset("set").is_err());
        assert!(p_dataset("set,x,type float").is_err());
        assert!(p_dataset("set,x,colour red").is_err());
        assert!(p_dataset("set,x,state a, save b").is_err());
        assert!(p_dataset("set,x,memcap lots").is_err());
        assert!(p_datarep("x,>,65536").unwrap_err().reason.contains("invalid datarep value"));
        assert!(p_datarep("x,!,1").is_err());
        assert!(p_dataset(&format!("set,{}", "n".repeat(64))).is_err());
    }

    #[test]
    fn written_files_follow_the_policy() {
        let d = |s: &str| spec(p_dataset(s));
        let default = DatasetRules::default();
        assert_eq!(default.check(&d("set,x,load /etc/list.txt")), Ok(vec![]));
        assert_eq!(default.check(&d("set,x,state s.csv")), Ok(vec![]));
        assert_eq!(default.check(&d("set,x,state /s.csv")), Err("Absolute paths not allowed: /s.csv".into()));
        assert_eq!(
            default.check(&d("set,x,save ns/../s.csv")),
            Err("Directory traversals not allowed: ns/../s.csv".into())
        );
        let open = DatasetRules { allow_absolute: true, ..default };
        assert_eq!(
            open.check(&d("set,x,save /tmp/../tmp/s.csv")),
            Ok(vec!["Allowing absolute filename for dataset rule: /tmp/../tmp/s.csv".into()])
        );
        assert_eq!(
            open.check(&d("set,x,state ns/../s.csv")),
            Ok(vec!["Allowing absolute filename for dataset rule: ns/../s.csv".into()])
        );
        let closed = DatasetRules { allow_write: false, ..default };
        assert_eq!(
            closed.check(&d("set,x,state s.csv")),
            Err("Rules containing save/state datasets have been disabled".into())
        );
    }
}
