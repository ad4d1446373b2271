//! Meta keywords: what a rule is called and how it is classified. None of
//! them needs an engine to run.

use super::{kw, p_text, KeywordDef, Kind};
use crate::error::{verr, VResult};
use crate::intcmp::parse_u64;
use crate::lexer::{split_commas, trim};
use crate::options::{parse_quoted, Value};
use std::fmt;

pub(crate) const ROWS: &[KeywordDef] = &[
    kw!("msg", Kind::Meta, Required, p_msg, "the alert message"),
    kw!("sid", Kind::Meta, Required, p_sid, "signature id (required, unique per gid)"),
    kw!("gid", Kind::Meta, Required, p_u32_plain, "generator id (default 1)"),
    kw!("rev", Kind::Meta, Required, p_u32_plain, "revision of the rule"),
    kw!("classtype", Kind::Meta, Required, p_classtype, "classification (from classification.config)"),
    kw!("priority", Kind::Meta, Required, p_priority, "priority 1 (high) to 255, overrides the classtype's"),
    kw!("reference", Kind::Meta, Required, p_reference, "external reference: system,id"),
    kw!("metadata", Kind::Meta, Required, p_metadata, "key value pairs, comma separated"),
    kw!("target", Kind::Meta, Required, p_target, "which side is the target: src_ip or dest_ip"),
    kw!("requires", Kind::Meta, Required, p_text, "engine version/feature requirements for loading the rule"),
];

fn p_msg(s: &str) -> VResult<Value> {
    let (off, t) = trim(s);
    if !t.starts_with('"') {
        return verr(off, "msg must be a quoted string");
    }
    parse_quoted(s).map(Value::Str)
}

fn p_u32_plain(s: &str) -> VResult<Value> {
    parse_u64(s, u32::MAX as u64).map(Value::Number)
}

fn p_sid(s: &str) -> VResult<Value> {
    let n = parse_u64(s, u32::MAX as u64)?;
    if n == 0 {
        return verr(0, "sid 0 is not allowed");
    }
    Ok(Value::Number(n))
}

fn p_priority(s: &str) -> VResult<Value> {
    let n = parse_u64(s, 255)?;
    if n == 0 {
        return verr(0, "priority must be 1-255");
    }
    Ok(Value::Number(n))
}

fn p_classtype(s: &str) -> VResult<Value> {
    let (off, t) = trim(s);
    if t.is_empty() || !t.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_') {
        return verr(off, format!("invalid classtype name '{t}'"));
    }
    Ok(Value::Text(t.to_string()))
}

/// `reference:system,id`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Reference {
    pub system: String,
    pub id: String,
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{},{}", self.system, self.id)
    }
}

fn p_reference(s: &str) -> VResult<Value> {
    let (off, t) = trim(s);
    let Some((sys, id)) = t.split_once(',') else {
        return verr(off, format!("expected 'system,id', got '{t}'"));
    };
    let (sys, id) = (sys.trim(), id.trim());
    if sys.is_empty() || id.is_empty() {
        return verr(off, format!("expected 'system,id', got '{t}'"));
    }
    Ok(Value::Reference(Reference { system: sys.to_string(), id: id.to_string() }))
}

fn p_metadata(s: &str) -> VResult<Value> {
    let mut out = Vec::new();
    for (at, item) in split_commas(s) {
        let (o, t) = trim(item);
        if t.is_empty() {
            // ET writes a trailing comma now and then; Suricata skips it.
            continue;
        }
        let _ = (at, o);
        match t.split_once(char::is_whitespace) {
            Some((k, v)) => out.push((k.to_string(), v.trim().to_string())),
            None => out.push((t.to_string(), String::new())),
        }
    }
    if out.is_empty() {
        return verr(0, "metadata is empty");
    }
    Ok(Value::Metadata(out))
}

/// `target:src_ip|dest_ip`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    Src,
    Dst,
}

fn p_target(s: &str) -> VResult<Value> {
    let (off, t) = trim(s);
    match t {
        "src_ip" => Ok(Value::Target(Target::Src)),
        "dest_ip" => Ok(Value::Target(Target::Dst)),
        _ => verr(off, format!("expected src_ip or dest_ip, got '{t}'")),
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Target::Src => "src_ip",
            Target::Dst => "dest_ip",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values() {
        assert_eq!(p_msg(r#" "a\;b" "#).unwrap(), Value::Str("a;b".into()));
        assert!(p_msg("abc").is_err());
        assert_eq!(p_sid("2001").unwrap(), Value::Number(2001));
        assert_eq!(p_sid("0").unwrap_err().reason, "sid 0 is not allowed");
        assert_eq!(
            p_reference("url, doc.example.com/a,b").unwrap(),
            Value::Reference(Reference { system: "url".into(), id: "doc.example.com/a,b".into() })
        );
        assert_eq!(
            p_metadata("created_at 2010_07_30, updated_at 2019_07_26,").unwrap(),
            Value::Metadata(vec![
                ("created_at".into(), "2010_07_30".into()),
                ("updated_at".into(), "2019_07_26".into())
            ])
        );
        assert!(p_target("both").is_err());
    }
}
