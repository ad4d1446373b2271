//! Payload keywords: `content` and its modifiers, `pcre`, sizes, and the
//! other inspections of the current buffer.

use super::{kw, p_u16, p_u64, KeywordDef, Kind};
use crate::content::{Content, ContentModifier};
use crate::error::{verr, VResult};
use crate::intcmp::IntCmp;
use crate::lexer::{split_commas, trim};
use crate::options::Value;
use crate::pcre::Pcre;

pub(crate) const ROWS: &[KeywordDef] = &[
    kw!("content", Kind::Payload, Required, p_content, "match bytes in the current buffer"),
    kw!("uricontent", Kind::Payload, Required, p_content, "deprecated: content in http.uri"),
    kw!("pcre", Kind::Payload, Required, p_pcre, "Perl-compatible regular expression"),
    kw!("nocase", Kind::Modifier, None, p_nocase, "content: match case-insensitively"),
    kw!("rawbytes", Kind::Modifier, None, p_rawbytes, "content: accepted for Snort compatibility; no effect"),
    kw!("depth", Kind::Modifier, Required, p_depth, "content: how far from the buffer start to look"),
    kw!("offset", Kind::Modifier, Required, p_offset, "content: where in the buffer to start looking"),
    kw!("distance", Kind::Modifier, Required, p_distance, "content: start relative to the previous match"),
    kw!("within", Kind::Modifier, Required, p_within, "content: end within N bytes of the previous match"),
    kw!("startswith", Kind::Modifier, None, p_startswith, "content: must be at the start of the buffer"),
    kw!("endswith", Kind::Modifier, None, p_endswith, "content: must be at the end of the buffer"),
    kw!("fast_pattern", Kind::Modifier, Optional, p_fast_pattern, "content: use it for the prefilter"),
    kw!("prefilter", Kind::Modifier, None, super::p_none, "use the preceding keyword as the prefilter"),
    kw!("dsize", Kind::Payload, Required, p_u16, "packet payload size"),
    kw!("bsize", Kind::Payload, Required, p_u64, "size of the current buffer"),
    kw!("urilen", Kind::Payload, Required, p_urilen, "length of the HTTP URI (optionally ,norm or ,raw)"),
    kw!("isdataat", Kind::Payload, Required, super::bytes::p_isdataat, "is there data at this position"),
    kw!("absent", Kind::Payload, Optional, p_absent, "the sticky buffer is absent (or_else: or empty)"),
    kw!(
        "entropy",
        Kind::Payload,
        Required,
        p_entropy,
        "Shannon entropy of the buffer: [bytes n,] [offset n,] value cmp"
    ),
    kw!("base64_decode", Kind::Payload, Optional, super::p_opt_text, "decode base64 from the buffer into base64_data"),
    kw!(
        "asn1",
        Kind::Payload,
        Required,
        p_asn1,
        "BER objects: bitstring_overflow, double_overflow, oversize_length n, absolute_offset n, relative_offset n"
    ),
    kw!("rpc", Kind::Payload, Required, p_rpc, "ONC RPC call: program[,version|*[,procedure|*]]"),
];

/// Checked here, kept as text: [`super::asn1::parse`] reads it again.
fn p_asn1(s: &str) -> VResult<Value> {
    super::asn1::parse(s)?;
    Ok(Value::Text(s.trim().to_string()))
}

/// Checked here, kept as text: [`rpc`] reads it again.
fn p_rpc(s: &str) -> VResult<Value> {
    rpc(s)?;
    Ok(Value::Text(s.trim().to_string()))
}

/// `rpc:<program>[,<version>|*[,<procedure>|*]]`, decimal numbers: the
/// program, and the version and procedure when given and not `*`.
pub fn rpc(s: &str) -> VResult<(u32, Option<u32>, Option<u32>)> {
    let parts: Vec<&str> = s.split(',').collect();
    if parts.len() > 3 {
        return verr(0, "rpc takes a program, a version and a procedure");
    }
    let mut at = 0;
    let mut out = [None; 3];
    for (i, part) in parts.iter().enumerate() {
        let t = part.trim();
        let here = at + (part.len() - part.trim_start().len());
        at += part.len() + 1;
        if t == "*" && i > 0 {
            continue;
        }
        if t.is_empty() || t.len() > 10 || !t.bytes().all(|b| b.is_ascii_digit()) {
            return verr(here, format!("rpc: '{t}' is not a decimal number{}", if i > 0 { " or *" } else { "" }));
        }
        match t.parse::<u32>() {
            Ok(n) => out[i] = Some(n),
            Err(_) => return verr(here, format!("rpc: {t} is too large")),
        }
    }
    Ok((out[0].unwrap_or_default(), out[1], out[2]))
}

/// Checked here, kept as text: [`super::entropy::parse`] reads it again.
fn p_entropy(s: &str) -> VResult<Value> {
    super::entropy::parse(s)?;
    Ok(Value::Text(s.trim().to_string()))
}

fn p_content(s: &str) -> VResult<Value> {
    Content::parse(s).map(Value::Content)
}

fn p_pcre(s: &str) -> VResult<Value> {
    Pcre::parse(s).map(Value::Pcre)
}

fn modifier(name: &str, s: Option<&str>) -> VResult<Value> {
    ContentModifier::parse_value(name, s).map(Value::Modifier)
}

fn p_nocase(_: &str) -> VResult<Value> {
    modifier("nocase", None)
}
fn p_rawbytes(_: &str) -> VResult<Value> {
    modifier("rawbytes", None)
}
fn p_startswith(_: &str) -> VResult<Value> {
    modifier("startswith", None)
}
fn p_endswith(_: &str) -> VResult<Value> {
    modifier("endswith", None)
}
fn p_depth(s: &str) -> VResult<Value> {
    modifier("depth", Some(s))
}
fn p_offset(s: &str) -> VResult<Value> {
    modifier("offset", Some(s))
}
fn p_distance(s: &str) -> VResult<Value> {
    modifier("distance", Some(s))
}
fn p_within(s: &str) -> VResult<Value> {
    modifier("within", Some(s))
}

/// `fast_pattern` is called with `""` when written without a value.
pub(crate) fn p_fast_pattern(s: &str) -> VResult<Value> {
    modifier("fast_pattern", if s.trim().is_empty() { None } else { Some(s) })
}

fn p_urilen(s: &str) -> VResult<Value> {
    let parts = split_commas(s);
    let cmp = IntCmp::parse(parts[0].1, u16::MAX as u64).map_err(|e| e.shift(parts[0].0))?;
    match parts.get(1..) {
        None | Some([]) => Ok(Value::Int(cmp)),
        Some([(at, w)]) => {
            let (o, t) = trim(w);
            if t != "norm" && t != "raw" {
                return verr(at + o, format!("expected 'norm' or 'raw', got '{t}'"));
            }
            Ok(Value::IntWith(cmp, vec![t.to_string()]))
        }
        Some(_) => verr(parts[2].0, "too many values"),
    }
}

fn p_absent(s: &str) -> VResult<Value> {
    let (off, t) = trim(s);
    if t.is_empty() {
        return Ok(Value::None);
    }
    if t != "or_else" {
        return verr(off, format!("expected 'or_else', got '{t}'"));
    }
    Ok(Value::Text(t.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urilen_forms() {
        assert_eq!(p_urilen("> 80").unwrap(), Value::Int(IntCmp::Gt(80)));
        assert_eq!(p_urilen("5<>10,raw").unwrap(), Value::IntWith(IntCmp::Range(5, 10), vec!["raw".into()]));
        assert!(p_urilen("5,cooked").is_err());
    }
}
