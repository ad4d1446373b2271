//! Suricata's rules for reading a scalar string as a bool, an integer, a
//! size or a duration.
//!
//! Suricata keeps every value as a string and converts at the point of use;
//! each converter here mirrors one of its conventions (`ConfValIsTrue`,
//! `ConfGetInt` with `strtoimax(.., 0)`, `ParseSizeString`,
//! `ParseTimeString`). The error strings are the `reason` part of a
//! [`ConfigError`](crate::ConfigError).

use std::time::Duration;

/// Suricata's truth table: `1`, `yes`, `true`, `on` are true and `0`, `no`,
/// `false`, `off` are false, compared without case. Anything else is `None`
/// (Suricata silently reads it as false; vigil reports it).
pub fn parse_bool(s: &str) -> Option<bool> {
    const TRUES: [&str; 4] = ["1", "yes", "true", "on"];
    const FALSES: [&str; 4] = ["0", "no", "false", "off"];
    if TRUES.iter().any(|t| t.eq_ignore_ascii_case(s)) {
        Some(true)
    } else if FALSES.iter().any(|f| f.eq_ignore_ascii_case(s)) {
        Some(false)
    } else {
        None
    }
}

/// The reason text for a value that is not a boolean.
pub(crate) fn bool_reason(s: &str) -> String {
    format!("expected a boolean (yes/no, true/false, on/off, 1/0), got {s:?}")
}

/// C `isspace` in the "C" locale, which is what `strtoimax`/`strtod` skip.
fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// An integer the way `ConfGetInt` reads one: `strtoimax(s, &end, 0)` that
/// must consume the whole string. Leading blanks and a sign are allowed;
/// `0x` selects hex and a leading `0` selects octal, so `010` is 8.
pub fn parse_int(s: &str) -> Result<i64, String> {
    let bad = || format!("expected an integer, got {s:?}");
    let bytes = s.as_bytes();
    let mut i = bytes.iter().take_while(|b| is_c_space(**b)).count();
    let negative = match bytes.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let rest = &bytes[i..];
    let (radix, digits) =
        if rest.len() > 2 && rest[0] == b'0' && (rest[1] | 0x20) == b'x' && rest[2].is_ascii_hexdigit() {
            (16, &rest[2..])
        } else if rest.len() > 1 && rest[0] == b'0' {
            (8, &rest[1..])
        } else {
            (10, rest)
        };
    if digits.is_empty() && radix != 8 {
        return Err(bad());
    }
    let mut magnitude: u128 = 0;
    for &b in digits {
        let d = match (b as char).to_digit(radix) {
            Some(d) => d,
            None => return Err(bad()),
        };
        magnitude = magnitude * u128::from(radix) + u128::from(d);
        if magnitude > u128::from(u64::MAX) {
            return Err(format!("integer out of range: {s:?}"));
        }
    }
    let value = if negative { 0i128 - magnitude as i128 } else { magnitude as i128 };
    i64::try_from(value).map_err(|_| format!("integer out of range: {s:?}"))
}

/// A non-negative decimal integer the way `StringParseUint*` reads one
/// (`strtoull(s, &end, 10)`, whole string consumed, range-checked).
pub fn parse_uint_decimal(s: &str, max: u64) -> Result<u64, String> {
    let bad = || format!("expected a non-negative integer, got {s:?}");
    let t = s.trim_start_matches(|c: char| c.is_ascii() && is_c_space(c as u8));
    let t = t.strip_prefix('+').unwrap_or(t);
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    match t.parse::<u64>() {
        Ok(v) if v <= max => Ok(v),
        _ => Err(format!("value out of range (0-{max}): {s:?}")),
    }
}

/// A float the way `ConfGetFloat`/`ConfGetDouble` read one (`strtod`, whole
/// string consumed). Non-finite values are refused.
pub fn parse_float(s: &str) -> Result<f64, String> {
    let t = s.trim_start_matches(|c: char| c.is_ascii() && is_c_space(c as u8));
    match t.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(format!("expected a number, got {s:?}")),
    }
}

/// PCRE's `\s`: the C blanks; used where Suricata matches with a regex.
fn trim_regex_space(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_ascii() && is_c_space(c as u8))
}

/// A byte size the way `ParseSizeStringU64` reads one: a decimal number
/// (optionally with a fraction), optional blanks, and an optional unit:
/// `kb`, `mb`, `gb` in any case, or exactly `KiB`, `MiB`, `GiB`. All units
/// are powers of 1024; a plain number is bytes. `1.5kb` is 1536.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let bad = || format!("invalid size argument {s:?} (expected a size like 64mb, 32 KiB or a number of bytes)");
    let t = trim_regex_space(s);
    let num_len = t.bytes().position(|b| !(b.is_ascii_digit() || b == b'.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(num_len);
    let unit = trim_regex_space(unit);
    // Suricata's regex: digits, optionally one separator and more digits.
    let valid_number = match num.split_once('.') {
        None => !num.is_empty(),
        Some((a, b)) => !a.is_empty() && !b.is_empty() && b.bytes().all(|c| c.is_ascii_digit()),
    };
    if !valid_number {
        return Err(bad());
    }
    let value: f64 = num.parse().map_err(|_| bad())?;
    let multiplier: f64 = match unit {
        "" => 1.0,
        u if u.eq_ignore_ascii_case("kb") || u == "KiB" => 1024.0,
        u if u.eq_ignore_ascii_case("mb") || u == "MiB" => 1024.0 * 1024.0,
        u if u.eq_ignore_ascii_case("gb") || u == "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => return Err(bad()),
    };
    let bytes = value * multiplier;
    // u64::MAX as f64 rounds up to 2^64, so `>=` is the exact overflow test.
    if bytes >= u64::MAX as f64 {
        return Err(format!("size out of range: {s:?}"));
    }
    Ok(bytes as u64)
}

/// A duration the way `ParseTimeString` reads one: digits, optional blanks,
/// and a lower-case unit `us`, `ms`, `s`, `m` or `h`.
///
/// A bare number is read as seconds. (Suricata's own parser accepts a bare
/// number but then leaves the result at zero, which is a bug nobody relies
/// on.)
pub fn parse_time(s: &str) -> Result<Duration, String> {
    let bad = || format!("expected a duration like 10s, 500ms, 5m or 1h, got {s:?}");
    let t = trim_regex_space(s);
    let num_len = t.bytes().take_while(u8::is_ascii_digit).count();
    if num_len == 0 {
        return Err(bad());
    }
    let (num, unit) = t.split_at(num_len);
    let unit = trim_regex_space(unit);
    let n: u64 = num.parse().map_err(|_| bad())?;
    let d = match unit {
        "us" => Some(Duration::from_micros(n)),
        "ms" => Some(Duration::from_millis(n)),
        "" | "s" => Some(Duration::from_secs(n)),
        "m" => n.checked_mul(60).map(Duration::from_secs),
        "h" => n.checked_mul(3600).map(Duration::from_secs),
        _ => return Err(bad()),
    };
    d.ok_or_else(|| format!("duration out of range: {s:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truth_table() {
        for t in ["1", "yes", "YeS", "true", "TRUE", "on", "ON"] {
            assert_eq!(parse_bool(t), Some(true), "{t}");
        }
        for f in ["0", "no", "NO", "false", "FalSE", "off", "OFF"] {
            assert_eq!(parse_bool(f), Some(false), "{f}");
        }
        for x in ["", "something", " yes", "2", "y"] {
            assert_eq!(parse_bool(x), None, "{x}");
        }
    }

    #[test]
    fn integers_follow_strtoimax_base0() {
        assert_eq!(parse_int("0"), Ok(0));
        assert_eq!(parse_int("-1"), Ok(-1));
        assert_eq!(parse_int("0xffff"), Ok(0xffff));
        assert_eq!(parse_int("010"), Ok(8));
        assert_eq!(parse_int("  42"), Ok(42));
        assert_eq!(parse_int("+7"), Ok(7));
        assert!(parse_int("08").is_err());
        assert!(parse_int("42 ").is_err());
        assert!(parse_int("not-an-int").is_err());
        assert!(parse_int("").is_err());
        assert!(parse_int("-").is_err());
        assert!(parse_int("0x").is_err());
        assert!(parse_int("99999999999999999999999").is_err());
        assert_eq!(parse_int("-9223372036854775808"), Ok(i64::MIN));
    }

    #[test]
    fn sizes_follow_parse_size_string() {
        assert_eq!(parse_size("10"), Ok(10));
        assert_eq!(parse_size("10kb"), Ok(10 * 1024));
        assert_eq!(parse_size("10Kb"), Ok(10 * 1024));
        assert_eq!(parse_size(" 10KB "), Ok(10 * 1024));
        assert_eq!(parse_size("64mb"), Ok(64 << 20));
        assert_eq!(parse_size("1gb"), Ok(1 << 30));
        assert_eq!(parse_size("100 KiB"), Ok(100 * 1024));
        assert_eq!(parse_size("32 MiB"), Ok(32 << 20));
        assert_eq!(parse_size("1.5kb"), Ok(1536));
        assert!(parse_size("10 kib").is_err());
        assert!(parse_size("10tb").is_err());
        assert!(parse_size("ten").is_err());
        assert!(parse_size("").is_err());
        assert!(parse_size("1.").is_err());
        assert!(parse_size("99999999999999999999gb").is_err());
    }

    #[test]
    fn times() {
        assert_eq!(parse_time("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_time(" 10 m "), Ok(Duration::from_secs(600)));
        assert_eq!(parse_time("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse_time("360ms"), Ok(Duration::from_millis(360)));
        assert_eq!(parse_time("10us"), Ok(Duration::from_micros(10)));
        assert_eq!(parse_time("30"), Ok(Duration::from_secs(30)));
        assert!(parse_time("32ns").is_err());
        assert!(parse_time("10mb").is_err());
        assert!(parse_time("10S").is_err());
    }

    #[test]
    fn decimals_and_floats() {
        assert_eq!(parse_uint_decimal("8", 100), Ok(8));
        assert_eq!(parse_uint_decimal("010", 100), Ok(10));
        assert!(parse_uint_decimal("-1", 100).is_err());
        assert!(parse_uint_decimal("101", 100).is_err());
        assert!(parse_uint_decimal("8s", 100).is_err());
        assert_eq!(parse_float("1.0"), Ok(1.0));
        assert_eq!(parse_float(" 0.5"), Ok(0.5));
        assert!(parse_float("nan").is_err());
        assert!(parse_float("1.0x").is_err());
    }
}
