//! `byte_test`, `byte_jump`, `byte_extract`, `byte_math` and `isdataat`:
//! reading numbers out of the buffer, with `byte_extract`/`byte_math`
//! variables usable wherever a number goes.

use super::{kw, KeywordDef, Kind};
use crate::content::{parse_numvar, NumVar};
use crate::error::{verr, VResult};
use crate::intcmp::{parse_i64, parse_u64};
use crate::lexer::{split_commas, trim};
use crate::options::Value;
use std::fmt;

pub(crate) const ROWS: &[KeywordDef] = &[
    kw!("byte_test", Kind::Payload, Required, p_byte_test, "compare bytes read from the buffer with a value"),
    kw!("byte_jump", Kind::Payload, Required, p_byte_jump, "move the cursor by a number read from the buffer"),
    kw!("byte_extract", Kind::Payload, Required, p_byte_extract, "read a number into a variable"),
    kw!("byte_math", Kind::Payload, Required, p_byte_math, "arithmetic on a number read from the buffer"),
];

/// An option of the byte keywords, in the order written.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ByteOpt {
    Relative,
    Big,
    Little,
    Dce,
    /// `string` (the base follows as its own item).
    Str,
    Hex,
    Dec,
    Oct,
    Align,
    /// `align N` (byte_extract).
    AlignTo(u8),
    FromBeginning,
    FromEnd,
    Multiplier(u64),
    PostOffset(i64),
    Bitmask(u64),
}

impl fmt::Display for ByteOpt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ByteOpt::Relative => f.write_str("relative"),
            ByteOpt::Big => f.write_str("big"),
            ByteOpt::Little => f.write_str("little"),
            ByteOpt::Dce => f.write_str("dce"),
            ByteOpt::Str => f.write_str("string"),
            ByteOpt::Hex => f.write_str("hex"),
            ByteOpt::Dec => f.write_str("dec"),
            ByteOpt::Oct => f.write_str("oct"),
            ByteOpt::Align => f.write_str("align"),
            ByteOpt::AlignTo(n) => write!(f, "align {n}"),
            ByteOpt::FromBeginning => f.write_str("from_beginning"),
            ByteOpt::FromEnd => f.write_str("from_end"),
            ByteOpt::Multiplier(n) => write!(f, "multiplier {n}"),
            ByteOpt::PostOffset(n) => write!(f, "post_offset {n}"),
            ByteOpt::Bitmask(n) => write!(f, "bitmask {n:#x}"),
        }
    }
}

/// Which keyword the options belong to: each allows a different set.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Which {
    Test,
    Jump,
    Extract,
}

fn parse_opt(item: &str, which: Which) -> VResult<ByteOpt> {
    let (off, t) = trim(item);
    let (word, arg) = match t.split_once(char::is_whitespace) {
        Some((w, a)) => (w, Some(a)),
        None => (t, None),
    };
    let arg_at = off + word.len();
    let num = |max: u64| -> VResult<u64> {
        match arg {
            Some(a) => parse_u64(a, max).map_err(|e| e.shift(arg_at)),
            None => verr(off, format!("'{word}' needs a number")),
        }
    };
    let opt = match (word, which) {
        ("relative", _) => ByteOpt::Relative,
        ("big", _) => ByteOpt::Big,
        ("little", _) => ByteOpt::Little,
        ("dce", _) => ByteOpt::Dce,
        ("string", _) => ByteOpt::Str,
        ("hex", _) => ByteOpt::Hex,
        ("dec", _) => ByteOpt::Dec,
        ("oct", _) => ByteOpt::Oct,
        ("bitmask", _) => ByteOpt::Bitmask(num(u32::MAX as u64)?),
        ("align", Which::Jump) if arg.is_none() => ByteOpt::Align,
        ("align", Which::Extract) => {
            let n = num(4)?;
            if n != 2 && n != 4 {
                return verr(arg_at, "align must be 2 or 4");
            }
            ByteOpt::AlignTo(n as u8)
        }
        ("from_beginning", Which::Jump) => ByteOpt::FromBeginning,
        ("from_end", Which::Jump) => ByteOpt::FromEnd,
        ("multiplier", Which::Jump | Which::Extract) => {
            let n = num(u16::MAX as u64)?;
            if n == 0 {
                return verr(arg_at, "multiplier must be at least 1");
            }
            ByteOpt::Multiplier(n)
        }
        ("post_offset", Which::Jump) => match arg {
            Some(a) => ByteOpt::PostOffset(parse_i64(a, -65535, 65535).map_err(|e| e.shift(arg_at))?),
            None => return verr(off, "'post_offset' needs a number"),
        },
        _ => return verr(off, format!("unknown option '{t}'")),
    };
    if arg.is_some()
        && matches!(
            opt,
            ByteOpt::Relative
                | ByteOpt::Big
                | ByteOpt::Little
                | ByteOpt::Dce
                | ByteOpt::Str
                | ByteOpt::Hex
                | ByteOpt::Dec
                | ByteOpt::Oct
                | ByteOpt::FromBeginning
                | ByteOpt::FromEnd
        )
    {
        return verr(off, format!("unknown option '{t}'"));
    }
    Ok(opt)
}

fn parse_opts(items: &[(usize, &str)], which: Which) -> VResult<Vec<ByteOpt>> {
    let mut out = Vec::with_capacity(items.len());
    for (at, item) in items {
        out.push(parse_opt(item, which).map_err(|e| e.shift(*at))?);
    }
    let has = |o: &ByteOpt| out.contains(o);
    let bases = [ByteOpt::Hex, ByteOpt::Dec, ByteOpt::Oct].iter().filter(|b| has(b)).count();
    if bases > 1 {
        return verr(0, "more than one of hex, dec, oct");
    }
    if bases == 1 && !has(&ByteOpt::Str) {
        return verr(0, "hex/dec/oct need 'string'");
    }
    if has(&ByteOpt::Big) && has(&ByteOpt::Little) {
        return verr(0, "both big and little endian");
    }
    if has(&ByteOpt::Dce) && (has(&ByteOpt::Big) || has(&ByteOpt::Little) || has(&ByteOpt::Str)) {
        return verr(0, "'dce' takes the byte order from the DCE/RPC data: no big, little or string with it");
    }
    if has(&ByteOpt::FromBeginning) && has(&ByteOpt::FromEnd) {
        return verr(0, "both from_beginning and from_end");
    }
    Ok(out)
}

/// The number of bytes to read: 1-8, or up to 23 digits with `string`,
/// where 0 means the whole buffer (`http.content_len; byte_test:0,>=,1,0,
/// string,dec`).
fn nbytes(s: &str, opts_have_string: bool, allow_zero: bool) -> VResult<NumVar> {
    let v = parse_numvar(s, 0, 255)?;
    if let NumVar::Num(n) = v {
        let max = if opts_have_string { 23 } else { 8 };
        if (n == 0 && !allow_zero && !opts_have_string) || n > max {
            return verr(0, format!("number of bytes must be 1-{max}, got {n}"));
        }
    }
    Ok(v)
}

fn fields<'a>(s: &'a str, min: usize, what: &str) -> VResult<Vec<(usize, &'a str)>> {
    let parts = split_commas(s);
    if parts.len() < min {
        return verr(0, format!("expected {what}"));
    }
    Ok(parts)
}

/// `byte_test:nbytes, [!]op, value, offset [, options]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ByteTest {
    pub nbytes: NumVar,
    pub negated: bool,
    /// `<`, `>`, `=`, `<=`, `>=`, `&`, `^`.
    pub op: String,
    pub value: NumVar,
    pub offset: NumVar,
    pub opts: Vec<ByteOpt>,
}

fn p_byte_test(s: &str) -> VResult<Value> {
    let p = fields(s, 4, "nbytes, operator, value, offset")?;
    let opts = parse_opts(&p[4..], Which::Test)?;
    let string = opts.contains(&ByteOpt::Str);
    let n = nbytes(p[0].1, string, false).map_err(|e| e.shift(p[0].0))?;
    let (oo, op) = trim(p[1].1);
    let (negated, op) = match op.strip_prefix('!') {
        Some("=") => (true, "="),
        Some(o) => (true, o.trim_start()),
        None => (false, op),
    };
    if !matches!(op, "<" | ">" | "=" | "<=" | ">=" | "&" | "^") {
        return verr(p[1].0 + oo, format!("unknown operator '{}'", p[1].1.trim()));
    }
    let value = parse_numvar(p[2].1, 0, i64::MAX).map_err(|e| e.shift(p[2].0))?;
    let offset = parse_numvar(p[3].1, -65535, 65535).map_err(|e| e.shift(p[3].0))?;
    Ok(Value::ByteTest(ByteTest { nbytes: n, negated, op: op.to_string(), value, offset, opts }))
}

/// `byte_jump:nbytes, offset [, options]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ByteJump {
    pub nbytes: NumVar,
    pub offset: NumVar,
    pub opts: Vec<ByteOpt>,
}

fn p_byte_jump(s: &str) -> VResult<Value> {
    let p = fields(s, 2, "nbytes, offset")?;
    let opts = parse_opts(&p[2..], Which::Jump)?;
    // `byte_jump:0,0,from_end` jumps from the end without reading.
    let n = nbytes(p[0].1, opts.contains(&ByteOpt::Str), true).map_err(|e| e.shift(p[0].0))?;
    let offset = parse_numvar(p[1].1, -65535, 65535).map_err(|e| e.shift(p[1].0))?;
    Ok(Value::ByteJump(ByteJump { nbytes: n, offset, opts }))
}

/// `byte_extract:nbytes, offset, name [, options]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ByteExtract {
    pub nbytes: u8,
    pub offset: i64,
    pub name: String,
    pub opts: Vec<ByteOpt>,
}

fn p_byte_extract(s: &str) -> VResult<Value> {
    let p = fields(s, 3, "nbytes, offset, variable name")?;
    let opts = parse_opts(&p[3..], Which::Extract)?;
    let n = match nbytes(p[0].1, opts.contains(&ByteOpt::Str), false).map_err(|e| e.shift(p[0].0))? {
        NumVar::Num(n) => n as u8,
        NumVar::Var(_) => return verr(p[0].0, "number of bytes must be a number"),
    };
    let offset = parse_i64(p[1].1, -65535, 65535).map_err(|e| e.shift(p[1].0))?;
    let (no, name) = trim(p[2].1);
    if !valid_var(name) {
        return verr(p[2].0 + no, format!("invalid variable name '{name}'"));
    }
    Ok(Value::ByteExtract(ByteExtract { nbytes: n, offset, name: name.to_string(), opts }))
}

fn valid_var(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-' || c == b'.')
}

/// `byte_math:bytes N, offset N, oper OP, rvalue V, result NAME [, ...]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ByteMath {
    pub nbytes: NumVar,
    pub offset: i64,
    /// `+ - * / << >>`.
    pub oper: String,
    pub rvalue: NumVar,
    pub result: String,
    /// The optional items as written: `relative`, `endian big`, `string
    /// dec`, `dce`, `bitmask 0xff`.
    pub opts: Vec<String>,
}

fn p_byte_math(s: &str) -> VResult<Value> {
    let (mut nb, mut off, mut oper, mut rv, mut res) = (None, None, None, None, None);
    let mut opts = Vec::new();
    for (at, item) in split_commas(s) {
        let (o, t) = trim(item);
        let (k, v) = match t.split_once(char::is_whitespace) {
            Some((k, v)) => (k, v.trim()),
            None => (t, ""),
        };
        let vat = at + o + k.len();
        match k {
            "bytes" => nb = Some(parse_numvar(v, 1, 10).map_err(|e| e.shift(vat))?),
            "offset" => off = Some(parse_i64(v, -65535, 65535).map_err(|e| e.shift(vat))?),
            "oper" if matches!(v, "+" | "-" | "*" | "/" | "<<" | ">>") => oper = Some(v.to_string()),
            "oper" => return verr(vat, format!("unknown operator '{v}'")),
            "rvalue" => rv = Some(parse_numvar(v, 0, u32::MAX as i64).map_err(|e| e.shift(vat))?),
            "result" if valid_var(v) => res = Some(v.to_string()),
            "result" => return verr(vat, format!("invalid variable name '{v}'")),
            "relative" | "dce" if v.is_empty() => opts.push(k.to_string()),
            "endian" if matches!(v, "big" | "little" | "dce") => opts.push(format!("endian {v}")),
            "string" if matches!(v, "hex" | "dec" | "oct") => opts.push(format!("string {v}")),
            "bitmask" => {
                parse_u64(v, u32::MAX as u64).map_err(|e| e.shift(vat))?;
                opts.push(format!("bitmask {v}"));
            }
            _ => return verr(at + o, format!("unknown option '{t}'")),
        }
    }
    let missing = |what: &str| crate::error::ValueError::new(0, format!("missing '{what}'"));
    Ok(Value::ByteMath(ByteMath {
        nbytes: nb.ok_or_else(|| missing("bytes"))?,
        offset: off.ok_or_else(|| missing("offset"))?,
        oper: oper.ok_or_else(|| missing("oper"))?,
        rvalue: rv.ok_or_else(|| missing("rvalue"))?,
        result: res.ok_or_else(|| missing("result"))?,
        opts,
    }))
}

/// `isdataat:[!]N[,relative][,rawbytes]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Isdataat {
    pub negated: bool,
    pub position: NumVar,
    pub relative: bool,
    pub rawbytes: bool,
}

pub(crate) fn p_isdataat(s: &str) -> VResult<Value> {
    let p = split_commas(s);
    let (o, first) = trim(p[0].1);
    let (negated, num, nat) = match first.strip_prefix('!') {
        Some(r) => (true, r, p[0].0 + o + 1),
        None => (false, first, p[0].0 + o),
    };
    let position = parse_numvar(num, 0, 65535).map_err(|e| e.shift(nat))?;
    let (mut relative, mut rawbytes) = (false, false);
    for (at, item) in &p[1..] {
        let (io, t) = trim(item);
        match t {
            "relative" => relative = true,
            "rawbytes" => rawbytes = true,
            _ => return verr(at + io, format!("unknown option '{t}'")),
        }
    }
    Ok(Value::Isdataat(Isdataat { negated, position, relative, rawbytes }))
}

fn join<T: fmt::Display>(f: &mut fmt::Formatter<'_>, items: &[T]) -> fmt::Result {
    for i in items {
        write!(f, ",{i}")?;
    }
    Ok(())
}

impl fmt::Display for ByteTest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let neg = if self.negated { "!" } else { "" };
        write!(f, "{},{}{},{},{}", self.nbytes, neg, self.op, self.value, self.offset)?;
        join(f, &self.opts)
    }
}

impl fmt::Display for ByteJump {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{},{}", self.nbytes, self.offset)?;
        join(f, &self.opts)
    }
}

impl fmt::Display for ByteExtract {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{},{},{}", self.nbytes, self.offset, self.name)?;
        join(f, &self.opts)
    }
}

impl fmt::Display for ByteMath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bytes {}, offset {}, oper {}, rvalue {}, result {}",
            self.nbytes, self.offset, self.oper, self.rvalue, self.result
        )?;
        for o in &self.opts {
            write!(f, ", {o}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Isdataat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.negated {
            f.write_str("!")?;
        }
        write!(f, "{}", self.position)?;
        if self.relative {
            f.write_str(",relative")?;
        }
        if self.rawbytes {
            f.write_str(",rawbytes")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rt(v: Value) -> String {
        match v {
            Value::ByteTest(b) => b.to_string(),
            Value::ByteJump(b) => b.to_string(),
            Value::ByteExtract(b) => b.to_string(),
            Value::ByteMath(b) => b.to_string(),
            Value::Isdataat(b) => b.to_string(),
            _ => unreachable!(),
        }
    }

    #[test]
    fn byte_test_forms() {
        assert_eq!(rt(p_byte_test("4,!&,0x10,12,relative,little").unwrap()), "4,!&,16,12,relative,little");
        assert_eq!(rt(p_byte_test("2, !=, 6, 0").unwrap()), "2,!=,6,0");
        assert_eq!(rt(p_byte_test("10,>,1000,0,relative,string,dec").unwrap()), "10,>,1000,0,relative,string,dec");
        assert_eq!(rt(p_byte_test("2,=,var,13").unwrap()), "2,=,var,13");
        assert_eq!(p_byte_test("9,=,1,0").unwrap_err().reason, "number of bytes must be 1-8, got 9");
        assert_eq!(p_byte_test("4,~,1,0").unwrap_err().reason, "unknown operator '~'");
        assert_eq!(p_byte_test("4,=,1").unwrap_err().reason, "expected nbytes, operator, value, offset");
        assert!(p_byte_test("4,=,1,0,dec").is_err());
    }

    #[test]
    fn jump_extract_math_isdataat() {
        assert_eq!(
            rt(p_byte_jump("4,-8,relative,from_beginning,little,post_offset -2").unwrap()),
            "4,-8,relative,from_beginning,little,post_offset -2"
        );
        assert_eq!(rt(p_byte_jump("0,0, from_end, post_offset -8").unwrap()), "0,0,from_end,post_offset -8");
        assert_eq!(rt(p_byte_extract("2,0,size,relative,align 4").unwrap()), "2,0,size,relative,align 4");
        assert!(p_byte_extract("2,0,9bad").is_err());
        let m = p_byte_math("bytes 4, offset 0, oper +, rvalue 248, result var, relative").unwrap();
        assert_eq!(rt(m), "bytes 4, offset 0, oper +, rvalue 248, result var, relative");
        assert_eq!(p_byte_math("bytes 4, offset 0, oper +, rvalue 1").unwrap_err().reason, "missing 'result'");
        assert_eq!(rt(p_isdataat("!1, relative").unwrap()), "!1,relative");
        assert!(p_isdataat("1,sideways").is_err());
    }
}
