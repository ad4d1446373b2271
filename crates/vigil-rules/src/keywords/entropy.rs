//! `entropy:[bytes N,] [offset N,] value <comparison>`: the Shannon entropy
//! (bits per byte, 0 to 8) of a window of the current buffer, compared as a
//! floating-point number. The syntax is Suricata 8.0.6's: options in any
//! order, each at most once, `value` required, no `relative`.

use crate::error::{verr, VResult};

/// A parsed `entropy` option.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EntropySpec {
    /// Bytes of the window (0 or less: up to the buffer's end).
    pub bytes: i32,
    /// Where the window starts (0 or less: the buffer's start).
    pub offset: i32,
    pub value: FloatCmp,
}

/// A comparison of a floating-point value; ranges exclude their ends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FloatCmp {
    Eq(f64),
    Ne(f64),
    Lt(f64),
    Le(f64),
    Gt(f64),
    Ge(f64),
    Range(f64, f64),
    NotRange(f64, f64),
}

impl FloatCmp {
    pub fn matches(&self, v: f64) -> bool {
        match *self {
            FloatCmp::Eq(x) => v == x,
            FloatCmp::Ne(x) => v != x,
            FloatCmp::Lt(x) => v < x,
            FloatCmp::Le(x) => v <= x,
            FloatCmp::Gt(x) => v > x,
            FloatCmp::Ge(x) => v >= x,
            FloatCmp::Range(a, b) => a < v && v < b,
            FloatCmp::NotRange(a, b) => v <= a || v >= b,
        }
    }
}

/// The most an `offset` may be, either way.
const MAX_OFFSET: i32 = 65535;

/// Parses the option's text; errors carry the offset into `s`.
pub fn parse(s: &str) -> VResult<EntropySpec> {
    let (mut bytes, mut offset, mut value) = (None, None, None);
    let mut at = 0;
    let items: Vec<&str> = s.split(',').collect();
    if items.len() > 4 {
        return verr(0, "entropy takes at most bytes, offset and value");
    }
    for item in items {
        let here = at + (item.len() - item.trim_start().len());
        at += item.len() + 1;
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        let (name, rest) = item.split_once(|c: char| c.is_ascii_whitespace()).unwrap_or((item, ""));
        let rest = rest.trim();
        let int = |what: &str| -> VResult<i32> {
            rest.parse::<i32>().or_else(|_| verr(here, format!("entropy: {what} needs a number, got '{rest}'")))
        };
        match name {
            "bytes" if bytes.is_none() => bytes = Some(int("bytes")?),
            "offset" if offset.is_none() => {
                let n = int("offset")?;
                if !(-MAX_OFFSET..=MAX_OFFSET).contains(&n) {
                    return verr(here, format!("entropy: offset {n} is out of range (-65535 to 65535)"));
                }
                offset = Some(n);
            }
            "value" if value.is_none() => {
                value = Some(parse_float_cmp(rest).or_else(|e| verr(here, format!("entropy: value {e}")))?);
            }
            "bytes" | "offset" | "value" => return verr(here, format!("entropy: {name} given twice")),
            _ => return verr(here, format!("entropy: unknown option '{name}' (bytes, offset, value)")),
        }
    }
    let Some(value) = value else {
        return verr(0, "entropy needs a value");
    };
    Ok(EntropySpec { bytes: bytes.unwrap_or(0), offset: offset.unwrap_or(0), value })
}

/// `N`, `=N`, `!=N`, `<N`, `<=N`, `>N`, `>=N`, `A-B` or `A<>B` (A < B,
/// ends excluded), `!A-B`.
pub fn parse_float_cmp(s: &str) -> Result<FloatCmp, String> {
    let s = s.trim();
    let one = |rest: &str, f: fn(f64) -> FloatCmp| -> Result<FloatCmp, String> {
        let (v, tail) = float_prefix(rest.trim_start())?;
        if !tail.trim().is_empty() {
            return Err(format!("'{s}' has '{}' after the number", tail.trim()));
        }
        Ok(f(v))
    };
    if let Some(rest) = s.strip_prefix("!=") {
        return one(rest, FloatCmp::Ne);
    }
    if let Some(rest) = s.strip_prefix('!') {
        let (a, b) = range(rest.trim_start(), s)?.ok_or_else(|| format!("'{s}': '!' needs a range"))?;
        return Ok(FloatCmp::NotRange(a, b));
    }
    for (op, f) in [
        ("<=", FloatCmp::Le as fn(f64) -> FloatCmp),
        (">=", FloatCmp::Ge),
        ("<", FloatCmp::Lt),
        (">", FloatCmp::Gt),
        ("=", FloatCmp::Eq),
    ] {
        if let Some(rest) = s.strip_prefix(op) {
            return one(rest, f);
        }
    }
    match range(s, s)? {
        Some((a, b)) => Ok(FloatCmp::Range(a, b)),
        None => one(s, FloatCmp::Eq),
    }
}

/// `A-B` or `A<>B`; `None` when `s` is one number.
fn range(s: &str, whole: &str) -> Result<Option<(f64, f64)>, String> {
    let (a, tail) = float_prefix(s)?;
    let tail = tail.trim_start();
    let Some(rest) = tail.strip_prefix("<>").or_else(|| tail.strip_prefix('-')) else {
        return if tail.is_empty() { Ok(None) } else { Err(format!("'{whole}' has '{tail}' after the number")) };
    };
    let (b, tail) = float_prefix(rest.trim_start())?;
    if !tail.trim().is_empty() {
        return Err(format!("'{whole}' has '{}' after the range", tail.trim()));
    }
    if b <= a {
        return Err(format!("'{whole}': the range's end must be above its start"));
    }
    Ok(Some((a, b)))
}

/// A decimal number at the start of `s` (sign, digits, fraction, exponent;
/// a fraction needs digits on its right) and what follows it.
fn float_prefix(s: &str) -> Result<(f64, &str), String> {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let digits = |i: usize| b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
    let int = digits(i);
    i += int;
    let mut frac = 0;
    if b.get(i) == Some(&b'.') {
        frac = digits(i + 1);
        if frac == 0 {
            return Err(format!("'{s}' is not a number"));
        }
        i += 1 + frac;
    }
    if int + frac == 0 {
        return Err(format!("'{s}' is not a number"));
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(b.get(i + 1), Some(b'+' | b'-')));
        let exp = digits(i + 1 + sign);
        if exp > 0 {
            i += 1 + sign + exp;
        }
    }
    if b.get(i).is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'.') {
        return Err(format!("'{s}' is not a number"));
    }
    s[..i].parse::<f64>().map(|v| (v, &s[i..])).map_err(|_| format!("'{s}' is not a number"))
}

/// The entropy in bits per byte of `data` (0 for nothing).
pub fn shannon(data: &[u8]) -> f64 {
    if data.is_empty() {
        return 0.0;
    }
    let mut counts = [0u32; 256];
    for &b in data {
        counts[b as usize] += 1;
    }
    let n = data.len() as f64;
    counts.iter().filter(|&&c| c > 0).map(|&c| c as f64 / n).map(|p| -p * p.log2()).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options() {
        let e = parse("value > 4").unwrap();
        assert_eq!(e, EntropySpec { bytes: 0, offset: 0, value: FloatCmp::Gt(4.0) });
        let e = parse(" offset 10, value > 4.14, bytes 5,").unwrap();
        assert_eq!((e.offset, e.bytes, e.value), (10, 5, FloatCmp::Gt(4.14)));
        for bad in ["bytes 1", "value 1, value 2", "value 1, relative", "offset 70000, value 1", "value ==1"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn comparisons() {
        let ok = |s: &str| parse_float_cmp(s).unwrap();
        assert_eq!(ok("4-5"), FloatCmp::Range(4.0, 5.0));
        assert_eq!(ok("4 <> 5"), FloatCmp::Range(4.0, 5.0));
        assert_eq!(ok("!4-5"), FloatCmp::NotRange(4.0, 5.0));
        assert_eq!(ok("!= 4"), FloatCmp::Ne(4.0));
        assert_eq!(ok("<= .5"), FloatCmp::Le(0.5));
        assert_eq!(ok("1.5e0"), FloatCmp::Eq(1.5));
        assert_eq!(ok("-1"), FloatCmp::Eq(-1.0));
        for bad in ["!4", "4.", "0x10", "5-4", "<>4", "&4=4", "==1", ""] {
            assert!(parse_float_cmp(bad).is_err(), "{bad}");
        }
        assert!(FloatCmp::Range(4.0, 5.0).matches(4.5) && !FloatCmp::Range(4.0, 5.0).matches(4.0));
    }

    #[test]
    fn shannon_entropy() {
        assert_eq!(shannon(b""), 0.0);
        assert_eq!(shannon(b"aaaa"), 0.0);
        assert_eq!(shannon(b"abab"), 1.0);
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(shannon(&all), 8.0);
    }
}
