//! `asn1`: BER-encoded objects read from the buffer, checked for lengths
//! and encodings known to break ASN.1 decoders. The options, separated by
//! commas or spaces: `bitstring_overflow`, `double_overflow`,
//! `oversize_length <n>`, `absolute_offset <n>`, `relative_offset <n>`.

use crate::error::{verr, VResult};

/// A parsed `asn1` option.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Asn1Spec {
    /// A primitive BIT STRING whose unused-bit count exceeds its bits.
    pub bitstring_overflow: bool,
    /// A primitive REAL in decimal (character) form longer than 256 bytes.
    pub double_overflow: bool,
    /// An object whose length exceeds this.
    pub oversize_length: Option<u32>,
    /// Where decoding starts: from the buffer's start...
    pub absolute_offset: Option<u16>,
    /// ...or from the end of the previous match.
    pub relative_offset: Option<i32>,
}

/// Parses the option's text; errors carry the offset into `s`.
pub fn parse(s: &str) -> VResult<Asn1Spec> {
    let mut spec = Asn1Spec::default();
    let mut words = s
        .char_indices()
        .filter(|&(i, c)| !is_sep(c) && (i == 0 || s[..i].chars().next_back().is_some_and(is_sep)))
        .map(|(i, _)| (i, s[i..].split(is_sep).next().unwrap_or_default()));
    let mut any = false;
    while let Some((at, word)) = words.next() {
        any = true;
        let mut number = |min: i64, max: i64| -> VResult<i64> {
            let Some((nat, n)) = words.next() else { return verr(at, format!("asn1: {word} needs a number")) };
            match n.parse::<i64>() {
                Ok(v) if (min..=max).contains(&v) => Ok(v),
                _ => verr(nat, format!("Malformed asn1 argument: {word} {n}")),
            }
        };
        match word {
            "bitstring_overflow" => spec.bitstring_overflow = true,
            "double_overflow" => spec.double_overflow = true,
            "oversize_length" => spec.oversize_length = Some(number(0, u32::MAX as i64)? as u32),
            "absolute_offset" => spec.absolute_offset = Some(number(0, u16::MAX as i64)? as u16),
            "relative_offset" => spec.relative_offset = Some(number(-65535, 65535)? as i32),
            _ => return verr(at, format!("Malformed asn1 argument: unknown option '{word}'")),
        }
    }
    if !any {
        return verr(0, "asn1 needs an option");
    }
    Ok(spec)
}

fn is_sep(c: char) -> bool {
    c == ',' || c.is_ascii_whitespace()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options() {
        let s = parse("double_overflow, bitstring_overflow, relative_offset 54, oversize_length 2048").unwrap();
        assert!(s.double_overflow && s.bitstring_overflow);
        assert_eq!((s.relative_offset, s.oversize_length, s.absolute_offset), (Some(54), Some(2048), None));
        assert_eq!(parse("oversize_length 132 absolute_offset 0").unwrap().absolute_offset, Some(0));
        for bad in ["", "nope", "oversize_length -1", "absolute_offset -5", "relative_offset 70000", "oversize_length"]
        {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
