//! Transforms: they rewrite the current sticky buffer before the keywords
//! after them inspect it (`dns.query; dotprefix; content:".evil.com";
//! endswith;`).

use super::{kw, p_none, p_opt_text, p_string, p_text, KeywordDef, Kind};
use crate::error::{verr, VResult};
use crate::options::{parse_quoted, Value};

pub(crate) const ROWS: &[KeywordDef] = &[
    kw!("dotprefix", Kind::Transform, None, p_none, "prepend a '.' (domain suffix matching)"),
    kw!("domain", Kind::Transform, None, p_none, "reduce a host name to its registered domain"),
    kw!("tld", Kind::Transform, None, p_none, "reduce a host name to its top-level domain"),
    kw!("strip_whitespace", Kind::Transform, None, p_none, "remove all whitespace"),
    kw!("compress_whitespace", Kind::Transform, None, p_none, "collapse whitespace runs to one space"),
    kw!("to_lowercase", Kind::Transform, None, p_none, "lower-case the buffer"),
    kw!("to_uppercase", Kind::Transform, None, p_none, "upper-case the buffer"),
    kw!("to_md5", Kind::Transform, None, p_none, "replace the buffer by its MD5"),
    kw!("to_sha1", Kind::Transform, None, p_none, "replace the buffer by its SHA-1"),
    kw!("to_sha256", Kind::Transform, None, p_none, "replace the buffer by its SHA-256"),
    kw!("url_decode", Kind::Transform, None, p_none, "decode %XX and '+'"),
    kw!("header_lowercase", Kind::Transform, None, p_none, "lower-case HTTP header names"),
    kw!("strip_pseudo_headers", Kind::Transform, None, p_none, "drop HTTP/2 pseudo headers"),
    kw!("pcrexform", Kind::Transform, Required, p_string, "replace the buffer by a regex capture"),
    kw!("xor", Kind::Transform, Required, p_xor, "XOR the buffer with a hex key"),
    kw!("from_base64", Kind::Transform, Optional, p_opt_text, "base64-decode (bytes, offset, mode options)"),
    kw!("luaxform", Kind::Transform, Required, p_text, "transform with a Lua script"),
    kw!("gunzip", Kind::Transform, Optional, p_opt_text, "gzip-decompress (max-size option)"),
    kw!("zlib_deflate", Kind::Transform, Optional, p_opt_text, "zlib-decompress (max-size option)"),
    kw!("subslice", Kind::Transform, Required, p_text, "keep a slice of the buffer: offset[,length]"),
];

fn p_xor(s: &str) -> VResult<Value> {
    let key = parse_quoted(s)?;
    if key.is_empty() || key.len() % 2 != 0 || !key.bytes().all(|c| c.is_ascii_hexdigit()) {
        return verr(0, format!("xor key must be an even number of hex digits, got \"{key}\""));
    }
    Ok(Value::Str(key))
}
