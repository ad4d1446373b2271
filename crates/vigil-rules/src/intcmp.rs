//! The one integer comparison every numeric keyword shares: `dsize`,
//! `bsize`, `urilen`, `ttl`, `itype`, `icode`, `window`, `tcp.mss`, ...
//!
//! Suricata's modes: `N` and `=N` (equal), `!N` and `!=N`, `<N`, `<=N`,
//! `>N`, `>=N`, `A-B` and `A<>B` (strictly between), `!A-B` (outside), and
//! the bitmask forms `&M=V`, `&M!=V`. Numbers are decimal or `0x` hex, with
//! an optional `kb`/`mb`/`gb` (or `kib`/`mib`/`gib`) multiplier.

use crate::error::{verr, VResult};
use std::fmt;

/// A parsed integer comparison. Ranges are exclusive at both ends, as in
/// Suricata: `1-4` matches 2 and 3.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IntCmp {
    Eq(u64),
    Ne(u64),
    Lt(u64),
    Le(u64),
    Gt(u64),
    Ge(u64),
    /// `lo < x < hi`.
    Range(u64, u64),
    /// `x <= lo || x >= hi`.
    NotRange(u64, u64),
    /// `x & mask == value`.
    Mask(u64, u64),
    /// `x & mask != value`.
    NotMask(u64, u64),
}

impl IntCmp {
    /// Every operand is at most `max` (a keyword's width; Suricata rejects wider ones).
    pub fn fits(&self, max: u64) -> bool {
        match *self {
            IntCmp::Eq(a) | IntCmp::Ne(a) | IntCmp::Lt(a) | IntCmp::Le(a) | IntCmp::Gt(a) | IntCmp::Ge(a) => a <= max,
            IntCmp::Range(a, b) | IntCmp::NotRange(a, b) | IntCmp::Mask(a, b) | IntCmp::NotMask(a, b) => {
                a <= max && b <= max
            }
        }
    }

    /// Parses `s`, rejecting numbers above `max` (the keyword's width).
    pub fn parse(s: &str, max: u64) -> VResult<IntCmp> {
        let mut p = Cursor { s, i: 0, max };
        p.blank();
        let cmp = if p.eat("&") {
            let mask = p.number()?;
            p.blank();
            let neg = if p.eat("!=") {
                true
            } else if p.eat("=") {
                false
            } else {
                return verr(p.i, "expected '=' or '!=' after the bitmask");
            };
            let value = p.number()?;
            if value & !mask != 0 {
                return verr(p.i, format!("value {value:#x} has bits outside mask {mask:#x}: it can never match"));
            }
            if neg {
                IntCmp::NotMask(mask, value)
            } else {
                IntCmp::Mask(mask, value)
            }
        } else if p.eat("!=") {
            IntCmp::Ne(p.number()?)
        } else if p.eat("!") {
            let a = p.number()?;
            match p.range_end()? {
                Some(b) => checked_range(a, b, true, p.i)?,
                None => IntCmp::Ne(a),
            }
        } else if p.eat("<=") {
            IntCmp::Le(p.number()?)
        } else if p.eat(">=") {
            IntCmp::Ge(p.number()?)
        } else if p.eat("<") {
            IntCmp::Lt(p.number()?)
        } else if p.eat(">") {
            IntCmp::Gt(p.number()?)
        } else if p.eat("=") {
            IntCmp::Eq(p.number()?)
        } else {
            let a = p.number()?;
            match p.range_end()? {
                Some(b) => checked_range(a, b, false, p.i)?,
                None => IntCmp::Eq(a),
            }
        };
        p.blank();
        if p.i < s.len() {
            return verr(p.i, format!("unexpected '{}' after the number", &s[p.i..]));
        }
        Ok(cmp)
    }

    /// Whether `v` satisfies the comparison.
    pub fn matches(&self, v: u64) -> bool {
        match *self {
            IntCmp::Eq(n) => v == n,
            IntCmp::Ne(n) => v != n,
            IntCmp::Lt(n) => v < n,
            IntCmp::Le(n) => v <= n,
            IntCmp::Gt(n) => v > n,
            IntCmp::Ge(n) => v >= n,
            IntCmp::Range(a, b) => a < v && v < b,
            IntCmp::NotRange(a, b) => v <= a || v >= b,
            IntCmp::Mask(m, n) => v & m == n,
            IntCmp::NotMask(m, n) => v & m != n,
        }
    }
}

fn checked_range(a: u64, b: u64, negated: bool, at: usize) -> VResult<IntCmp> {
    if a >= b {
        return verr(at, format!("range {a}-{b} is empty: the first number must be lower"));
    }
    Ok(if negated { IntCmp::NotRange(a, b) } else { IntCmp::Range(a, b) })
}

impl fmt::Display for IntCmp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            IntCmp::Eq(n) => write!(f, "{n}"),
            IntCmp::Ne(n) => write!(f, "!{n}"),
            IntCmp::Lt(n) => write!(f, "<{n}"),
            IntCmp::Le(n) => write!(f, "<={n}"),
            IntCmp::Gt(n) => write!(f, ">{n}"),
            IntCmp::Ge(n) => write!(f, ">={n}"),
            IntCmp::Range(a, b) => write!(f, "{a}-{b}"),
            IntCmp::NotRange(a, b) => write!(f, "!{a}-{b}"),
            IntCmp::Mask(m, n) => write!(f, "&{m:#x}={n:#x}"),
            IntCmp::NotMask(m, n) => write!(f, "&{m:#x}!={n:#x}"),
        }
    }
}

struct Cursor<'a> {
    s: &'a str,
    i: usize,
    max: u64,
}

impl Cursor<'_> {
    fn blank(&mut self) {
        while self.s.as_bytes().get(self.i).is_some_and(|c| *c == b' ' || *c == b'\t') {
            self.i += 1;
        }
    }

    fn eat(&mut self, tok: &str) -> bool {
        if self.s[self.i..].starts_with(tok) {
            self.i += tok.len();
            true
        } else {
            false
        }
    }

    fn range_end(&mut self) -> VResult<Option<u64>> {
        self.blank();
        if self.eat("<>") || self.eat("-") {
            return Ok(Some(self.number()?));
        }
        Ok(None)
    }

    fn number(&mut self) -> VResult<u64> {
        self.blank();
        let start = self.i;
        let (n, len) = parse_number(&self.s[start..]).map_err(|e| e.shift(start))?;
        self.i += len;
        if n > self.max {
            return verr(start, format!("{n} is out of range (at most {})", self.max));
        }
        Ok(n)
    }
}

/// Parses a leading unsigned number (decimal or `0x` hex, with an optional
/// size multiplier) and returns it with the number of bytes it took.
pub(crate) fn parse_number(s: &str) -> VResult<(u64, usize)> {
    let b = s.as_bytes();
    let (radix, skip) = if b.len() > 2 && b[0] == b'0' && (b[1] | 0x20) == b'x' { (16, 2) } else { (10, 0) };
    let digits = b[skip..].iter().take_while(|c| (**c as char).is_digit(radix)).count();
    if digits == 0 {
        let shown: String = s.chars().take(12).collect();
        return verr(
            0,
            if shown.is_empty() {
                "expected a number".to_string()
            } else {
                format!("expected a number, got '{shown}'")
            },
        );
    }
    let end = skip + digits;
    let n = u64::from_str_radix(&s[skip..end], radix).or_else(|_| verr(0, format!("'{}' is too large", &s[..end])))?;
    let rest = &s[end..];
    let units: [(&str, u64); 6] =
        [("kib", 1 << 10), ("mib", 1 << 20), ("gib", 1 << 30), ("kb", 1 << 10), ("mb", 1 << 20), ("gb", 1 << 30)];
    for (u, mul) in units {
        if rest.len() >= u.len() && rest[..u.len()].eq_ignore_ascii_case(u) {
            let v = n.checked_mul(mul).ok_or_else(|| crate::error::ValueError::new(0, "number is too large"))?;
            return Ok((v, end + u.len()));
        }
    }
    Ok((n, end))
}

/// Parses a whole string as one unsigned number no larger than `max`.
pub(crate) fn parse_u64(s: &str, max: u64) -> VResult<u64> {
    let (off, t) = crate::lexer::trim(s);
    let (n, len) = parse_number(t).map_err(|e| e.shift(off))?;
    if len != t.len() {
        return verr(off + len, format!("unexpected '{}' after the number", &t[len..]));
    }
    if n > max {
        return verr(off, format!("{n} is out of range (at most {max})"));
    }
    Ok(n)
}

/// Parses a whole string as a signed number (for `distance:-4`).
pub(crate) fn parse_i64(s: &str, min: i64, max: i64) -> VResult<i64> {
    let (off, t) = crate::lexer::trim(s);
    let (neg, body, boff) = match t.strip_prefix('-') {
        Some(b) => (true, b, 1),
        None => (false, t.strip_prefix('+').unwrap_or(t), usize::from(t.starts_with('+'))),
    };
    let n = parse_u64(body, i64::MAX as u64 + 1).map_err(|e| e.shift(off + boff))?;
    let v = if neg { (n as i128).wrapping_neg() } else { n as i128 };
    if v < min as i128 || v > max as i128 {
        return verr(off, format!("{v} is out of range ({min} to {max})"));
    }
    Ok(v as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> IntCmp {
        IntCmp::parse(s, u16::MAX as u64).unwrap()
    }

    #[test]
    fn every_mode() {
        assert_eq!(p("19"), IntCmp::Eq(19));
        assert_eq!(p("=0x13"), IntCmp::Eq(19));
        assert_eq!(p("!0x14"), IntCmp::Ne(20));
        assert_eq!(p("!=20"), IntCmp::Ne(20));
        assert_eq!(p("> 80"), IntCmp::Gt(80));
        assert_eq!(p(">=21"), IntCmp::Ge(21));
        assert_eq!(p("<22"), IntCmp::Lt(22));
        assert_eq!(p("<=22"), IntCmp::Le(22));
        assert_eq!(p("19-22"), IntCmp::Range(19, 22));
        assert_eq!(p("10<>20"), IntCmp::Range(10, 20));
        assert_eq!(p("!19-22"), IntCmp::NotRange(19, 22));
        assert_eq!(p("&0xc0=0x80"), IntCmp::Mask(0xc0, 0x80));
        assert_eq!(p("&0xc0!=0"), IntCmp::NotMask(0xc0, 0));
        assert_eq!(IntCmp::parse("2kb", u64::MAX).unwrap(), IntCmp::Eq(2048));
    }

    #[test]
    fn matching_is_strict_for_ranges() {
        let r = p("1-4");
        assert!(!r.matches(1) && r.matches(2) && r.matches(3) && !r.matches(4));
        let n = p("!1-4");
        assert!(n.matches(1) && !n.matches(2) && n.matches(4));
        assert!(p("&0xc0=0x80").matches(0x85));
    }

    #[test]
    fn errors() {
        assert_eq!(IntCmp::parse("70000", 65535).unwrap_err().reason, "70000 is out of range (at most 65535)");
        assert_eq!(
            IntCmp::parse("5-3", 65535).unwrap_err().reason,
            "range 5-3 is empty: the first number must be lower"
        );
        assert_eq!(IntCmp::parse("abc", 65535).unwrap_err().reason, "expected a number, got 'abc'");
        assert!(IntCmp::parse("&0x0f=0x10", 255).is_err());
        assert!(IntCmp::parse("5 x", 255).is_err());
    }

    #[test]
    fn display_round_trips() {
        for s in ["19", "!20", "<1", "<=2", ">3", ">=4", "5-9", "!5-9", "&0xc0=0x80", "&0xc0!=0x0"] {
            let c = p(s);
            assert_eq!(p(&c.to_string()), c, "{s}");
        }
    }

    #[test]
    fn signed() {
        assert_eq!(parse_i64(" -4 ", -65535, 65535).unwrap(), -4);
        assert!(parse_i64("-70000", -65535, 65535).is_err());
    }
}
