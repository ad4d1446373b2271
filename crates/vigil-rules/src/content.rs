//! `content` values (`"abc|0d 0a|def"`, negation, escapes), the modifiers
//! that attach to the content before them (`nocase`, `depth`, `offset`,
//! `distance`, `within`, `startswith`, `endswith`, `rawbytes`,
//! `fast_pattern`), and Snort 3's inline form
//! (`content:"x",nocase,depth 4;`).

use crate::error::{verr, VResult};
use crate::intcmp::{parse_i64, parse_u64};
use crate::lexer::{split_commas, trim};
use std::fmt;

/// A `content` (or `uricontent`) value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Content {
    /// `content:!"..."`: the rule matches when the bytes are absent.
    pub negated: bool,
    /// The bytes to find, escapes and hex resolved.
    pub bytes: Vec<u8>,
    /// Snort 3 modifiers written inside the option, in order. Suricata does
    /// not accept these; the rule checker reports them.
    pub inline: Vec<ContentModifier>,
}

/// A number or the name of a `byte_extract`/`byte_math` variable.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum NumVar {
    Num(i64),
    Var(String),
}

impl fmt::Display for NumVar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NumVar::Num(n) => write!(f, "{n}"),
            NumVar::Var(v) => f.write_str(v),
        }
    }
}

/// Parses a number in `min..=max`, or a variable name.
pub(crate) fn parse_numvar(s: &str, min: i64, max: i64) -> VResult<NumVar> {
    let (off, t) = trim(s);
    if t.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') && !t.starts_with("0x") {
        if !t.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-' || c == b'.') {
            return verr(off, format!("invalid variable name '{t}'"));
        }
        return Ok(NumVar::Var(t.to_string()));
    }
    parse_i64(t, min, max).map(NumVar::Num).map_err(|e| e.shift(off))
}

/// `distance`/`within` reach at most 1 MiB either way, as in Suricata.
pub const MAX_RELATIVE: i64 = 1 << 20;

/// `fast_pattern` forms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FastPattern {
    /// `fast_pattern;`
    Plain,
    /// `fast_pattern:only;` (accepted and treated as plain by Suricata).
    Only,
    /// `fast_pattern:offset,length;`: use only this slice as the pattern.
    Chop { offset: u16, length: u16 },
}

/// A content modifier, standalone (`depth:4;`) or Snort 3 inline
/// (`,depth 4`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ContentModifier {
    Nocase,
    Rawbytes,
    Depth(NumVar),
    Offset(NumVar),
    Distance(NumVar),
    Within(NumVar),
    Startswith,
    Endswith,
    FastPattern(FastPattern),
    /// Snort 3 inline `fast_pattern_offset N`.
    FastPatternOffset(u16),
    /// Snort 3 inline `fast_pattern_length N`.
    FastPatternLength(u16),
}

impl ContentModifier {
    /// The keyword name of the modifier.
    pub fn name(&self) -> &'static str {
        match self {
            ContentModifier::Nocase => "nocase",
            ContentModifier::Rawbytes => "rawbytes",
            ContentModifier::Depth(_) => "depth",
            ContentModifier::Offset(_) => "offset",
            ContentModifier::Distance(_) => "distance",
            ContentModifier::Within(_) => "within",
            ContentModifier::Startswith => "startswith",
            ContentModifier::Endswith => "endswith",
            ContentModifier::FastPattern(_) => "fast_pattern",
            ContentModifier::FastPatternOffset(_) => "fast_pattern_offset",
            ContentModifier::FastPatternLength(_) => "fast_pattern_length",
        }
    }

    /// Parses the value of standalone modifier `name` (`None` for no value).
    pub(crate) fn parse_value(name: &str, v: Option<&str>) -> VResult<ContentModifier> {
        fn invalid(e: crate::error::ValueError, name: &str, v: Option<&str>, end: &str) -> crate::error::ValueError {
            crate::error::ValueError {
                reason: format!("invalid value for {name}: {}{end}", v.unwrap_or("").trim()),
                ..e
            }
        }
        fn need(v: Option<&str>) -> VResult<&str> {
            v.ok_or_else(|| crate::error::ValueError::new(0, "needs a value"))
        }
        Ok(match name {
            "nocase" => ContentModifier::Nocase,
            "rawbytes" => ContentModifier::Rawbytes,
            "startswith" => ContentModifier::Startswith,
            "endswith" => ContentModifier::Endswith,
            // A bad number is reported in Suricata's words (the period too).
            "depth" => ContentModifier::Depth(parse_numvar(need(v)?, 0, 65535).map_err(|e| invalid(e, name, v, "."))?),
            "offset" => {
                ContentModifier::Offset(parse_numvar(need(v)?, 0, 65535).map_err(|e| invalid(e, name, v, "."))?)
            }
            "distance" => ContentModifier::Distance(
                parse_numvar(need(v)?, -MAX_RELATIVE, MAX_RELATIVE).map_err(|e| invalid(e, name, v, ""))?,
            ),
            "within" => ContentModifier::Within(
                parse_numvar(need(v)?, -MAX_RELATIVE, MAX_RELATIVE).map_err(|e| invalid(e, name, v, ""))?,
            ),
            "fast_pattern" => ContentModifier::FastPattern(parse_fast_pattern(v)?),
            _ => return verr(0, format!("'{name}' is not a content modifier")),
        })
    }

    /// The value part as written after `name:` (empty for flags).
    pub(crate) fn value_text(&self) -> Option<String> {
        match self {
            ContentModifier::Depth(n)
            | ContentModifier::Offset(n)
            | ContentModifier::Distance(n)
            | ContentModifier::Within(n) => Some(n.to_string()),
            ContentModifier::FastPattern(FastPattern::Only) => Some("only".into()),
            ContentModifier::FastPattern(FastPattern::Chop { offset, length }) => Some(format!("{offset},{length}")),
            ContentModifier::FastPatternOffset(n) | ContentModifier::FastPatternLength(n) => Some(n.to_string()),
            _ => None,
        }
    }

    /// Writes the value of a standalone modifier (nothing for flags).
    pub(crate) fn fmt_value(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.value_text() {
            Some(t) => f.write_str(&t),
            None => Ok(()),
        }
    }
}

fn parse_fast_pattern(v: Option<&str>) -> VResult<FastPattern> {
    let Some(v) = v else { return Ok(FastPattern::Plain) };
    let (off, t) = trim(v);
    if t == "only" {
        return Ok(FastPattern::Only);
    }
    let parts = split_commas(t);
    if parts.len() != 2 {
        return verr(off, format!("expected 'only' or 'offset,length', got '{t}'"));
    }
    let offset = parse_u64(parts[0].1, 65535).map_err(|e| e.shift(off + parts[0].0))? as u16;
    let length = parse_u64(parts[1].1, 65535).map_err(|e| e.shift(off + parts[1].0))? as u16;
    if length == 0 {
        return verr(off + parts[1].0, "fast_pattern length must be at least 1");
    }
    Ok(FastPattern::Chop { offset, length })
}

impl Content {
    /// Parses a content value: `[!]"text|hex|text"[,snort3 modifiers]`.
    pub fn parse(s: &str) -> VResult<Content> {
        let (off, mut t) = trim(s);
        let mut at = off;
        let negated = t.starts_with('!');
        if negated {
            let rest = t[1..].trim_start();
            at += t.len() - rest.len();
            t = rest;
        }
        if !t.starts_with('"') {
            return verr(at, "content must be in double quotes");
        }
        let (bytes, used) = parse_content_string(&t[1..]).map_err(|e| e.shift(at + 1))?;
        if bytes.is_empty() {
            return verr(at, "content is empty");
        }
        let rest_at = at + 1 + used;
        let rest = &s[rest_at..];
        let mut inline = Vec::new();
        let (roff, r) = trim(rest);
        if !r.is_empty() {
            let Some(mods) = r.strip_prefix(',') else {
                if r.starts_with('"') {
                    return verr(rest_at + roff, "Invalid unescaped double quote within content section.");
                }
                return verr(rest_at + roff, format!("unexpected '{r}' after the closing quote (missing ';'?)"));
            };
            for (p, item) in split_commas(mods) {
                let item_at = rest_at + roff + 1 + p;
                inline.push(parse_inline(item).map_err(|e| e.shift(item_at))?);
            }
        }
        Ok(Content { negated, bytes, inline })
    }
}

/// A Snort 3 inline modifier: `nocase`, `depth 4`, `offset var`, ...
fn parse_inline(item: &str) -> VResult<ContentModifier> {
    let (off, t) = trim(item);
    let (name, arg) = match t.find(char::is_whitespace) {
        Some(i) => (&t[..i], Some(&t[i..])),
        None => (t, None),
    };
    let shift = |e: crate::error::ValueError| e.shift(off + name.len());
    let m = match (name, arg) {
        ("nocase", None) => ContentModifier::Nocase,
        ("fast_pattern", None) => ContentModifier::FastPattern(FastPattern::Plain),
        ("depth", Some(a)) => ContentModifier::Depth(parse_numvar(a, 0, 65535).map_err(shift)?),
        ("offset", Some(a)) => ContentModifier::Offset(parse_numvar(a, 0, 65535).map_err(shift)?),
        ("distance", Some(a)) => ContentModifier::Distance(parse_numvar(a, -65535, 65535).map_err(shift)?),
        ("within", Some(a)) => ContentModifier::Within(parse_numvar(a, -65535, 65535).map_err(shift)?),
        ("fast_pattern_offset", Some(a)) => {
            ContentModifier::FastPatternOffset(parse_u64(a, 65535).map_err(shift)? as u16)
        }
        ("fast_pattern_length", Some(a)) => {
            ContentModifier::FastPatternLength(parse_u64(a, 65535).map_err(shift)? as u16)
        }
        _ => return verr(off, format!("unknown inline content modifier '{t}'")),
    };
    Ok(m)
}

/// Parses the inside of a quoted content string, starting after the opening
/// quote. Returns the bytes and how many bytes of `s` were used, closing
/// quote included.
pub(crate) fn parse_content_string(s: &str) -> VResult<(Vec<u8>, usize)> {
    let b = s.as_bytes();
    // Hex errors quote the content as written, in Suricata's words (which
    // operators grep their logs for).
    let written = || {
        let end = b.iter().enumerate().position(|(i, &c)| c == b'"' && (i == 0 || b[i - 1] != b'\\'));
        &s[..end.unwrap_or(s.len())]
    };
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let mut hex_start: Option<usize> = None;
    let mut nibble: Option<(u8, usize)> = None;
    while i < b.len() {
        let c = b[i];
        if let Some(hs) = hex_start {
            match c {
                b'|' => {
                    if let Some((_, at)) = nibble {
                        return verr(
                            at,
                            format!("Incomplete hex code in content - {}. Invalidating signature.", written()),
                        );
                    }
                    hex_start = None;
                }
                b' ' | b'\t' => {
                    if let Some((_, at)) = nibble {
                        return verr(
                            at,
                            format!("Incomplete hex code in content - {}. Invalidating signature.", written()),
                        );
                    }
                }
                b'"' => return verr(hs, unterminated_hex(written())),
                _ => {
                    let Some(v) = (c as char).to_digit(16) else {
                        return verr(
                            i,
                            format!(
                                "Invalid hex code in content - {}, hex {}. Invalidating signature.",
                                written(),
                                c as char
                            ),
                        );
                    };
                    match nibble.take() {
                        None => nibble = Some((v as u8, i)),
                        Some((hi, _)) => out.push(hi << 4 | v as u8),
                    }
                }
            }
            i += 1;
            continue;
        }
        match c {
            b'"' => return Ok((out, i + 1)),
            b'|' => hex_start = Some(i),
            b'\\' => match b.get(i + 1) {
                Some(&e @ (b'"' | b'\\' | b';' | b':')) => {
                    out.push(e);
                    i += 1;
                }
                Some(&e) => return verr(i, format!("invalid escape '\\{}' in content", e as char)),
                None => return verr(i, "unterminated content string"),
            },
            _ => out.push(c),
        }
        i += 1;
    }
    if let Some(hs) = hex_start {
        return verr(hs, unterminated_hex(written()));
    }
    verr(0, "unterminated content string (no closing quote)")
}

/// A `|` with no closing `|`.
fn unterminated_hex(written: &str) -> String {
    format!("Invalid hex code assembly in content - {written}.  Invalidating signature.")
}

/// Writes `bytes` as a quoted content string: printable text as is, other
/// bytes and the characters with a meaning (`"`, `;`, `\`, `|`) as hex.
pub(crate) fn write_content_bytes(f: &mut fmt::Formatter<'_>, bytes: &[u8]) -> fmt::Result {
    f.write_str("\"")?;
    let mut in_hex = false;
    for &c in bytes {
        let plain = (0x20..0x7f).contains(&c) && !matches!(c, b'"' | b';' | b'\\' | b'|');
        if plain {
            if in_hex {
                f.write_str("|")?;
                in_hex = false;
            }
            write!(f, "{}", c as char)?;
        } else {
            if in_hex {
                write!(f, " {c:02X}")?;
            } else {
                write!(f, "|{c:02X}")?;
                in_hex = true;
            }
        }
    }
    if in_hex {
        f.write_str("|")?;
    }
    f.write_str("\"")
}

impl fmt::Display for Content {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.negated {
            f.write_str("!")?;
        }
        write_content_bytes(f, &self.bytes)?;
        for m in &self.inline {
            write!(f, ",{}", m.name())?;
            if let Some(v) = m.value_text() {
                write!(f, " {v}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_hex_escapes() {
        let c = Content::parse(r#" "GET |20 2f|a\"b\\c\;d\:" "#).unwrap();
        assert_eq!(c.bytes, b"GET  /a\"b\\c;d:");
        assert!(!c.negated);
        let c = Content::parse(r#"!"|0D0A|""#).unwrap();
        assert_eq!((c.negated, c.bytes.as_slice()), (true, &b"\r\n"[..]));
    }

    #[test]
    fn snort3_inline() {
        let c = Content::parse(r#""USER",depth 4, nocase,fast_pattern"#).unwrap();
        assert_eq!(
            c.inline,
            vec![
                ContentModifier::Depth(NumVar::Num(4)),
                ContentModifier::Nocase,
                ContentModifier::FastPattern(FastPattern::Plain)
            ]
        );
        assert_eq!(c.to_string(), r#""USER",depth 4,nocase,fast_pattern"#);
    }

    #[test]
    fn errors() {
        let r = |s| Content::parse(s).unwrap_err().reason;
        assert_eq!(r(r#""abc"#), "unterminated content string (no closing quote)");
        assert_eq!(r(r#""|41 4""#), "Invalid hex code assembly in content - |41 4.  Invalidating signature.");
        assert_eq!(r(r#""|41 4|""#), "Incomplete hex code in content - |41 4|. Invalidating signature.");
        assert_eq!(r(r#""|4 1|""#), "Incomplete hex code in content - |4 1|. Invalidating signature.");
        assert_eq!(r(r#""|4g|""#), "Invalid hex code in content - |4g|, hex g. Invalidating signature.");
        assert_eq!(r(r#""a"""#), "Invalid unescaped double quote within content section.");
        assert_eq!(r(r#""a\qb""#), "invalid escape '\\q' in content");
        assert_eq!(r(r#"abc"#), "content must be in double quotes");
        assert_eq!(r(r#""""#), "content is empty");
        assert_eq!(r(r#""a" depth:3"#), "unexpected 'depth:3' after the closing quote (missing ';'?)");
    }

    #[test]
    fn printing_round_trips() {
        let c = Content::parse(r#""a|00 FF|;\"|7c|x""#).unwrap();
        let printed = c.to_string();
        assert_eq!(printed, r#""a|00 FF 3B 22 7C|x""#);
        assert_eq!(Content::parse(&printed).unwrap(), c);
    }

    #[test]
    fn fast_pattern_forms() {
        assert_eq!(parse_fast_pattern(None).unwrap(), FastPattern::Plain);
        assert_eq!(parse_fast_pattern(Some("only")).unwrap(), FastPattern::Only);
        assert_eq!(parse_fast_pattern(Some("3, 4")).unwrap(), FastPattern::Chop { offset: 3, length: 4 });
        assert!(parse_fast_pattern(Some("x")).is_err());
    }
}
