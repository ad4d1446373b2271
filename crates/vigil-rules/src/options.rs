//! Rule options: the `(name; name:value; ...)` list, scanned into
//! [`RuleOption`]s whose values are typed by the keyword table.

use crate::content::{Content, ContentModifier};
use crate::error::{verr, ErrorKind, VResult, ValueError};
use crate::intcmp::IntCmp;
use crate::keywords::bytes::{ByteExtract, ByteJump, ByteMath, ByteTest, Isdataat};
use crate::keywords::dataset::DatasetSpec;
use crate::keywords::flow::{Bits, Flow, Flowint, StreamSize};
use crate::keywords::meta::{Reference, Target};
use crate::keywords::packet::{Fragbits, TcpFlags};
use crate::keywords::post::{Tag, Threshold};
use crate::keywords::{KeywordDef, Kind};
use crate::lexer::option_end;
use crate::pcre::Pcre;
use crate::span::Span;

/// One option of a rule, in source order.
#[derive(Clone, Debug, PartialEq)]
pub struct RuleOption {
    /// The keyword (for aliases, the row of the spelling that was used).
    pub keyword: &'static KeywordDef,
    /// The typed value.
    pub value: Value,
    /// The whole option, name through `;`.
    pub span: Span,
    /// The value after the `:`, when there is one.
    pub value_span: Option<Span>,
}

impl RuleOption {
    /// The name as the keyword table spells it (lower case).
    pub fn name(&self) -> &'static str {
        self.keyword.name
    }

    /// The keyword's kind.
    pub fn kind(&self) -> Kind {
        self.keyword.kind
    }
}

/// A keyword's value, typed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// No value (`nocase;`, `http.uri;`, `noalert;`).
    None,
    /// A value kept as text: keywords whose values are names or small
    /// keyword-specific lists (`app-layer-event:http.invalid_header`).
    Text(String),
    /// A quoted string, unescaped (`msg:"..."`).
    Str(String),
    /// A plain unsigned number (`sid`, `rev`, `gid`, `priority`).
    Number(u64),
    /// An integer comparison (`dsize:>10`, `bsize:5<>10`).
    Int(IntCmp),
    /// An integer comparison followed by keyword-specific words
    /// (`urilen:>10,raw`, `vlan.id:200,1`).
    IntWith(IntCmp, Vec<String>),
    Content(Content),
    Modifier(ContentModifier),
    Pcre(Pcre),
    Flow(Flow),
    Flags(TcpFlags),
    Fragbits(Fragbits),
    /// `flowbits`, `xbits`, `hostbits`.
    Bits(Bits),
    Flowint(Flowint),
    StreamSize(StreamSize),
    ByteTest(ByteTest),
    ByteJump(ByteJump),
    ByteExtract(ByteExtract),
    ByteMath(ByteMath),
    Isdataat(Isdataat),
    /// `threshold`, `detection_filter`.
    Threshold(Threshold),
    /// `tag`.
    Tag(Tag),
    Reference(Reference),
    /// `metadata`: (key, value) pairs.
    Metadata(Vec<(String, String)>),
    Target(Target),
    /// A comma-separated list of names (`service:http,ssl`, `ssl_version`).
    List(Vec<String>),
    /// `dataset`, `datarep`.
    Dataset(Box<DatasetSpec>),
}

/// One option as scanned, before its value is typed.
pub(crate) struct RawOption<'a> {
    pub name: &'a str,
    pub name_at: usize,
    /// The value text after `:` (untrimmed) and its offset.
    pub value: Option<(usize, &'a str)>,
    pub start: usize,
    pub end: usize,
}

/// Scans the option list `body` (the text between the parentheses, which
/// starts at offset `base` of the rule text).
pub(crate) fn scan_options(body: &str, base: usize) -> Result<Vec<RawOption<'_>>, (usize, ValueError)> {
    let mut out = Vec::with_capacity(16);
    let b = body.as_bytes();
    let mut i = 0;
    loop {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= b.len() {
            return Ok(out);
        }
        let start = i;
        while i < b.len() && !matches!(b[i], b':' | b';') && !b[i].is_ascii_whitespace() {
            i += 1;
        }
        let name = &body[start..i];
        if name.is_empty() {
            // A stray ';' is an option with an empty name, as Suricata words it.
            let what = if b[i] == b';' { "unknown rule keyword ''." } else { "option has no name before ':'" };
            return Err((base + start, ValueError::new(0, what).kind(ErrorKind::Syntax)));
        }
        if let Some(c) = name.bytes().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'))) {
            let shown = if c.is_ascii_graphic() { format!("'{}'", c as char) } else { format!("byte {c:#04x}") };
            return Err((
                base + start,
                ValueError::new(0, format!("invalid character {shown} in option name")).kind(ErrorKind::Syntax),
            ));
        }
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        match b.get(i) {
            Some(b';') => {
                out.push(RawOption {
                    name,
                    name_at: base + start,
                    value: None,
                    start: base + start,
                    end: base + i + 1,
                });
                i += 1;
            }
            Some(b':') => {
                let vstart = i + 1;
                let Some(len) = option_end(&body[vstart..]) else {
                    return Err((
                        base + start,
                        ValueError::new(0, format!("{name}: no terminating ';' found")).kind(ErrorKind::Syntax),
                    ));
                };
                out.push(RawOption {
                    name,
                    name_at: base + start,
                    value: Some((base + vstart, &body[vstart..vstart + len])),
                    start: base + start,
                    end: base + vstart + len + 1,
                });
                i = vstart + len + 1;
            }
            _ => {
                return Err((
                    base + start,
                    ValueError::new(0, format!("{name}: no terminating ';' found")).kind(ErrorKind::Syntax),
                ))
            }
        }
    }
}

/// Parses a quoted string value: `"..."` with `\"`, `\\`, `\;` and `\:`
/// escapes. Other backslashes are kept as written. Returns the unescaped
/// text; anything after the closing quote is an error.
pub(crate) fn parse_quoted(s: &str) -> VResult<String> {
    let (off, t) = crate::lexer::trim(s);
    let Some(inner) = t.strip_prefix('"') else {
        return verr(off, "expected a quoted string");
    };
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some((_, e @ ('"' | '\\' | ';' | ':'))) => out.push(e),
                Some((_, e)) => {
                    out.push('\\');
                    out.push(e);
                }
                None => return verr(off, "unterminated quoted string"),
            },
            '"' => {
                let rest = inner[i + 1..].trim();
                if !rest.is_empty() {
                    let at = off + 1 + i + 1 + (inner[i + 1..].len() - inner[i + 1..].trim_start().len());
                    return verr(at, format!("unexpected '{rest}' after the closing quote (missing ';'?)"));
                }
                return Ok(out);
            }
            _ => out.push(c),
        }
    }
    verr(off, "unterminated quoted string")
}

/// Writes `s` as a quoted string that [`parse_quoted`] reads back.
pub(crate) fn write_quoted(f: &mut std::fmt::Formatter<'_>, s: &str) -> std::fmt::Result {
    // A backslash is doubled only where the reader would otherwise take it
    // as an escape, so regex-like strings (`pcrexform`) keep their text.
    f.write_str("\"")?;
    let b = s.as_bytes();
    let mut from = 0;
    for (i, &c) in b.iter().enumerate() {
        let escape = match c {
            b'"' | b';' => true,
            b'\\' => matches!(b.get(i + 1), None | Some(b'"' | b'\\' | b';' | b':')),
            _ => false,
        };
        if escape {
            f.write_str(&s[from..i])?;
            f.write_str("\\")?;
            from = i;
        }
    }
    f.write_str(&s[from..])?;
    f.write_str("\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_names_and_values() {
        let body = r#" msg:"a\;b"; nocase; content: "x" ;sid:1;"#;
        let opts = scan_options(body, 0).unwrap();
        let got: Vec<_> = opts.iter().map(|o| (o.name, o.value.map(|v| v.1))).collect();
        assert_eq!(
            got,
            vec![("msg", Some(r#""a\;b""#)), ("nocase", None), ("content", Some(r#" "x" "#)), ("sid", Some("1"))]
        );
    }

    #[test]
    fn scan_errors() {
        let e = scan_options("msg:\"x\"; sid:1", 0).err().unwrap();
        assert_eq!(e.1.reason, "sid: no terminating ';' found");
        assert_eq!(e.0, 9);
        assert!(scan_options("; sid:1;", 0).is_err());
        assert!(scan_options("a b;", 0).is_err());
    }

    struct Q<'a>(&'a str);
    impl std::fmt::Display for Q<'_> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write_quoted(f, self.0)
        }
    }

    #[test]
    fn quoted_round_trip() {
        for s in [r#"a"b"#, r"a\b", r"\s+(.*)", "x;y", r"end\", r"a\:b", r"\\"] {
            let printed = Q(s).to_string();
            assert_eq!(parse_quoted(&printed).unwrap(), s, "{printed}");
        }
        assert_eq!(Q(r"\s+").to_string(), r#""\s+""#);
    }

    #[test]
    fn quoted_strings() {
        assert_eq!(parse_quoted(r#" "a\"b\\c\;d\x" "#).unwrap(), r#"a"b\c;d\x"#);
        assert_eq!(
            parse_quoted(r#""x" sid:1"#).unwrap_err().reason,
            "unexpected 'sid:1' after the closing quote (missing ';'?)"
        );
        assert_eq!(parse_quoted(r#""abc"#).unwrap_err().reason, "unterminated quoted string");
    }
}
