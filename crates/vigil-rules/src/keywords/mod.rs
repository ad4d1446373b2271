//! The keyword table: one static row per keyword spelling (name, kind,
//! value presence, parse function, help), and the shared value parsers.
//!
//! Adding a keyword is one row, plus a parse function when none of the
//! shared ones fits. There is no registration at run time: the table is
//! `const` data, indexed once into a map on first use.

pub mod app;
pub mod asn1;
pub mod buffers;
pub mod bytes;
pub mod dataset;
pub mod entropy;
pub mod flow;
pub mod meta;
pub mod packet;
pub mod payload;
pub mod post;
pub mod snort;
pub mod suricata8;
pub mod transforms;

use crate::error::{verr, VResult};
use crate::intcmp::IntCmp;
use crate::lexer::{split_commas, trim};
use crate::options::{parse_quoted, Value};
use std::collections::HashMap;
use std::fmt;
use std::sync::OnceLock;

/// Parses a keyword's value text (untrimmed) into a typed value. Errors
/// carry the byte offset inside the value.
pub type ParseFn = fn(&str) -> VResult<Value>;

/// What a keyword does, coarsely: what the engine needs to run it and
/// where the checker looks for mistakes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Describes the rule; nothing to execute (`msg`, `sid`, `reference`).
    Meta,
    /// Inspects the current buffer (`content`, `pcre`, `byte_test`, ...).
    Payload,
    /// Modifies the content before it (`nocase`, `depth`, `fast_pattern`).
    Modifier,
    /// Sticky buffer: what follows inspects this buffer.
    Buffer(&'static str),
    /// Legacy content modifier: the content before it inspects this buffer
    /// (`content:"x"; http_uri;`). In Snort 3 it is sticky instead.
    LegacyBuffer(&'static str),
    /// Transforms the current buffer before inspection.
    Transform,
    /// Checks packet header fields (`ttl`, `flags`, `itype`, ...).
    Packet,
    /// Flow state and flow variables (`flow`, `flowbits`, `stream_size`).
    Flow,
    /// Checks an application-layer value that is not a buffer.
    App,
    /// Acts after a match (`threshold`, `tag`, `noalert`, `filestore`).
    Post,
    /// A Snort keyword Suricata does not have; the text says what to use.
    Snort(&'static str),
}

impl Kind {
    /// Whether a rule using the keyword needs a detection engine to run it.
    pub fn needs_engine(self) -> bool {
        !matches!(self, Kind::Meta)
    }

    /// A short name for reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Meta => "meta",
            Kind::Payload => "payload",
            Kind::Modifier => "content-modifier",
            Kind::Buffer(_) => "sticky-buffer",
            Kind::LegacyBuffer(_) => "buffer-modifier",
            Kind::Transform => "transform",
            Kind::Packet => "packet",
            Kind::Flow => "flow",
            Kind::App => "app-layer",
            Kind::Post => "post-match",
            Kind::Snort(_) => "snort-only",
        }
    }
}

/// Whether a keyword takes a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arg {
    /// `name;` only.
    None,
    /// `name:value;` only.
    Required,
    /// Either.
    Optional,
}

/// One row of the keyword table.
pub struct KeywordDef {
    /// The spelling this row matches (lower case).
    pub name: &'static str,
    /// The name reports use: for aliases the current spelling
    /// (`dns_query` → `dns.query`, `http_uri` → `http.uri`).
    pub canonical: &'static str,
    pub kind: Kind,
    pub arg: Arg,
    pub parse: ParseFn,
    /// One line of help.
    pub help: &'static str,
}

impl PartialEq for KeywordDef {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl fmt::Debug for KeywordDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeywordDef").field("name", &self.name).field("kind", &self.kind).finish()
    }
}

/// Builds a table row. `kw!("name", Kind, Arg, parse, "help")`, or with
/// `"alias" => "canonical"` as the first argument.
macro_rules! kw {
    ($name:literal => $canon:literal, $kind:expr, $arg:ident, $parse:expr, $help:literal) => {
        $crate::keywords::KeywordDef {
            name: $name,
            canonical: $canon,
            kind: $kind,
            arg: $crate::keywords::Arg::$arg,
            parse: $parse,
            help: $help,
        }
    };
    ($name:literal, $kind:expr, $arg:ident, $parse:expr, $help:literal) => {
        kw!($name => $name, $kind, $arg, $parse, $help)
    };
}
pub(crate) use kw;

/// Every table part.
const PARTS: &[&[KeywordDef]] = &[
    meta::ROWS,
    payload::ROWS,
    bytes::ROWS,
    buffers::ROWS,
    transforms::ROWS,
    packet::ROWS,
    flow::ROWS,
    post::ROWS,
    app::ROWS,
    snort::ROWS,
];

fn index() -> &'static HashMap<&'static str, &'static KeywordDef> {
    static INDEX: OnceLock<HashMap<&'static str, &'static KeywordDef>> = OnceLock::new();
    INDEX.get_or_init(|| {
        let mut m = HashMap::new();
        for part in PARTS {
            for row in part.iter() {
                m.entry(row.name).or_insert(row);
            }
        }
        m
    })
}

/// The row for `name` (case-insensitive), if any keyword is spelled so.
pub fn lookup(name: &str) -> Option<&'static KeywordDef> {
    let idx = index();
    if name.bytes().any(|c| c.is_ascii_uppercase()) {
        idx.get(name.to_ascii_lowercase().as_str()).copied()
    } else {
        idx.get(name).copied()
    }
}

/// Every row of the table, in table order.
pub fn all() -> impl Iterator<Item = &'static KeywordDef> {
    PARTS.iter().flat_map(|p| p.iter())
}

// ---- shared value parsers -------------------------------------------------

/// For keywords without a value; never called.
pub(crate) fn p_none(_: &str) -> VResult<Value> {
    Ok(Value::None)
}

/// Any non-empty text, kept as written (trimmed).
pub(crate) fn p_text(s: &str) -> VResult<Value> {
    let (off, t) = trim(s);
    if t.is_empty() {
        return verr(off, "needs a value");
    }
    Ok(Value::Text(t.to_string()))
}

/// One of `words`, exactly, as Suricata's FTP keywords take them.
fn one_of(s: &str, words: &[&str]) -> VResult<Value> {
    let (off, t) = trim(s);
    if words.contains(&t) {
        Ok(Value::Text(t.to_string()))
    } else {
        verr(off, format!("invalid value '{t}' (expected {})", words.join(" or ")))
    }
}

pub(crate) fn p_ftp_mode(s: &str) -> VResult<Value> {
    one_of(s, &["active", "passive"])
}

/// A boolean as Suricata's configuration reads one, kept as `yes` or `no`.
pub(crate) fn p_yes_no(s: &str) -> VResult<Value> {
    let (off, t) = trim(s);
    match t {
        "yes" | "on" | "true" | "1" => Ok(Value::Text("yes".into())),
        "no" | "off" | "false" | "0" => Ok(Value::Text("no".into())),
        _ => verr(off, format!("invalid value '{t}' (expected yes or no)")),
    }
}

/// The FTP commands that open a data channel.
pub(crate) fn p_ftpdata_command(s: &str) -> VResult<Value> {
    one_of(s, &["retr", "stor", "appe", "stou", "list", "nlst", "mlsd"])
}

/// Optional text: nothing (`name;`) or any text.
pub(crate) fn p_opt_text(s: &str) -> VResult<Value> {
    let (_, t) = trim(s);
    if t.is_empty() {
        return Ok(Value::None);
    }
    Ok(Value::Text(t.to_string()))
}

/// A quoted string, or unquoted text.
pub(crate) fn p_string(s: &str) -> VResult<Value> {
    let (off, t) = trim(s);
    if t.starts_with('"') {
        return parse_quoted(s).map(Value::Str);
    }
    if t.is_empty() {
        return verr(off, "needs a value");
    }
    Ok(Value::Text(t.to_string()))
}

fn int(s: &str, max: u64) -> VResult<Value> {
    IntCmp::parse(s, max).map(Value::Int)
}

pub(crate) fn p_u8(s: &str) -> VResult<Value> {
    int(s, u8::MAX as u64)
}
pub(crate) fn p_u16(s: &str) -> VResult<Value> {
    int(s, u16::MAX as u64)
}
pub(crate) fn p_u32(s: &str) -> VResult<Value> {
    int(s, u32::MAX as u64)
}
pub(crate) fn p_u64(s: &str) -> VResult<Value> {
    int(s, u64::MAX)
}

/// An integer comparison, or (for enumerations like `mqtt.type:CONNECT`)
/// names, kept as text; either may be followed by `,index` words.
pub(crate) fn p_int_or_name(s: &str) -> VResult<Value> {
    let first = split_commas(s)[0].1;
    let (off, t) = trim(first);
    let body = t.trim_start_matches(['!', '<', '>', '=', ' ']);
    if body.starts_with(|c: char| c.is_ascii_digit() || c == '&') {
        return p_int_with(s);
    }
    if t.is_empty() {
        return verr(off, "needs a value");
    }
    Ok(Value::Text(trim(s).1.to_string()))
}

/// An integer comparison optionally followed by `,word...` (multi-integer
/// index, layer, ...).
pub(crate) fn p_int_with(s: &str) -> VResult<Value> {
    let parts = split_commas(s);
    let cmp = IntCmp::parse(parts[0].1, u64::MAX).map_err(|e| e.shift(parts[0].0))?;
    if parts.len() == 1 {
        return Ok(Value::Int(cmp));
    }
    let mut words = Vec::new();
    for (at, w) in &parts[1..] {
        let (o, t) = trim(w);
        if t.is_empty() {
            return verr(at + o, "empty item after the comparison");
        }
        words.push(t.to_string());
    }
    Ok(Value::IntWith(cmp, words))
}

/// Checks that every table row parses its own help-free sanity: no
/// duplicate spellings, canonical names exist. Used by tests.
#[cfg(test)]
fn duplicates() -> Vec<&'static str> {
    let mut seen = std::collections::HashSet::new();
    all().filter(|r| !seen.insert(r.name)).map(|r| r.name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_consistent() {
        assert_eq!(duplicates(), Vec::<&str>::new());
        for row in all() {
            assert_eq!(row.name, row.name.to_ascii_lowercase(), "{}", row.name);
            assert!(lookup(row.canonical).is_some(), "{} -> {}", row.name, row.canonical);
            assert!(!row.help.is_empty(), "{}", row.name);
        }
        println!("{} keyword spellings, {} keywords", all().count(), all().filter(|r| r.name == r.canonical).count());
        assert!(all().count() > 350, "{}", all().count());
    }

    /// Every option name used by the shared rulesets and the conformance
    /// rules is in the table, except the test suite's deliberate unknowns
    /// and keywords newer than Suricata 9.
    #[test]
    fn every_keyword_in_the_shared_rules_is_known() {
        let shared = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared");
        let mut files = Vec::new();
        let mut stack =
            vec![std::path::PathBuf::from(format!("{shared}/rules")), format!("{shared}/conformance").into()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "rules") {
                    files.push(p);
                }
            }
        }
        assert!(files.len() > 1000);
        // `bidir.*` stand in commented-out rules only: proposed for Suricata, never merged.
        let allowed_unknown = ["foo", "vxlan_vni", "bidir.toserver", "bidir.toclient"];
        let mut unknown = std::collections::BTreeSet::new();
        for f in files {
            let text = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).into_owned();
            for raw in crate::lexer::raw_rules(&text) {
                let t: &str = &raw.text;
                let (Some(open), Some(close)) = (t.find('('), t.rfind(')')) else { continue };
                if close <= open {
                    continue;
                }
                let Ok(opts) = crate::options::scan_options(&t[open + 1..close], 0) else { continue };
                for o in opts {
                    if lookup(o.name).is_none() && !allowed_unknown.contains(&o.name) {
                        unknown.insert(format!("{} ({})", o.name, f.display()));
                    }
                }
            }
        }
        assert!(unknown.is_empty(), "{unknown:#?}");
    }

    #[test]
    fn lookup_ignores_case() {
        assert_eq!(lookup("Content").unwrap().name, "content");
        assert_eq!(lookup("dns_query").unwrap().canonical, "dns.query");
        assert!(lookup("nosuchkeyword").is_none());
    }

    #[test]
    fn int_or_name() {
        assert_eq!(p_int_or_name("!3").unwrap(), Value::Int(IntCmp::Ne(3)));
        assert_eq!(p_int_or_name("CONNECT").unwrap(), Value::Text("CONNECT".into()));
        assert_eq!(p_int_with("3,all").unwrap(), Value::IntWith(IntCmp::Eq(3), vec!["all".into()]));
    }
}
