//! `requires:` — what a rule needs of the engine, checked before the rest of
//! the rule is parsed, with Suricata 8's semantics: a rule whose needs are
//! not met is skipped (neither loaded nor failed), so rules written for a
//! newer engine, with syntax this one does not know, load cleanly.
//!
//! `requires: version >= 7.0.3 < 8 | >= 9, keyword foo` is met when the
//! version is in one of the `|`-separated ranges (each an intersection of
//! comparisons) and every named keyword exists. Any other kind of
//! requirement is unmet: Suricata 8 skips rules that need something it does
//! not know of (its `ignore-unknown-requirements` is no longer honoured).

/// The Suricata version vigil's rule language matches (the version
/// vigil-verify claims for the conformance suite).
pub const SURICATA_VERSION: [u64; 3] = [8, 0, 7];

/// Whether the requirements hold: `Ok(None)` when they do, `Ok(Some(why))`
/// when the rule is to be skipped, `Err` when they cannot be read.
pub fn unmet(text: &str) -> Result<Option<String>, String> {
    let mut why = None;
    for item in text.split(',') {
        let item = item.trim();
        let (kind, rest) = item.split_once(char::is_whitespace).unwrap_or((item, ""));
        let rest = rest.trim();
        match kind {
            "version" => {
                if !version_ok(rest, SURICATA_VERSION)? {
                    why.get_or_insert_with(|| format!("version {rest}"));
                }
            }
            "keyword" => {
                if rest.is_empty() {
                    return Err("'keyword' needs a name".into());
                }
                if crate::keywords::lookup(rest).is_none() {
                    why.get_or_insert_with(|| format!("keyword {rest}"));
                }
            }
            "" => return Err("empty requirement".into()),
            _ => {
                why.get_or_insert_with(|| format!("unknown requirement '{item}'"));
            }
        }
    }
    Ok(why)
}

/// The verdict on a rule's `requires` option, found without parsing the
/// rest of the rule (which may be in a syntax of a later version); `None`
/// when the rule has none or its option list cannot even be scanned.
pub(crate) fn prescan(rule: &str) -> Option<Result<Option<String>, String>> {
    let open = rule.find('(')?;
    let close = rule.rfind(')').filter(|&c| c > open)?;
    let options = crate::options::scan_options(&rule[open + 1..close], open + 1).ok()?;
    let (_, value) = options.iter().find(|o| o.name.eq_ignore_ascii_case("requires"))?.value?;
    Some(unmet(value.trim()))
}

/// `>= 7 < 8 | >= 9.0.1` against `have`.
fn version_ok(expr: &str, have: [u64; 3]) -> Result<bool, String> {
    let mut any = false;
    for range in expr.split('|') {
        let mut all = true;
        let mut rest = range.trim();
        if rest.is_empty() {
            return Err(format!("empty version range in '{expr}'"));
        }
        while !rest.is_empty() {
            let op_len = rest.bytes().take_while(|c| matches!(c, b'<' | b'>' | b'=')).count();
            let (op, after) = rest.split_at(op_len);
            let after = after.trim_start();
            let ver_len = after.bytes().take_while(|c| c.is_ascii_digit() || *c == b'.').count();
            let (ver, after) = after.split_at(ver_len);
            let want = parse_version(ver).ok_or_else(|| format!("bad version '{ver}' in '{expr}'"))?;
            all &= match op {
                ">=" => have >= want,
                ">" => have > want,
                "<=" => have <= want,
                "<" => have < want,
                "=" | "==" => have == want,
                _ => return Err(format!("bad version operator '{op}' in '{expr}'")),
            };
            rest = after.trim_start();
        }
        any |= all;
    }
    Ok(any)
}

/// "8", "7.0", "7.0.3": parts missing count as 0.
fn parse_version(s: &str) -> Option<[u64; 3]> {
    let mut out = [0; 3];
    let mut parts = s.split('.');
    for slot in out.iter_mut() {
        match parts.next() {
            Some(p) => *slot = p.parse().ok()?,
            None => break,
        }
    }
    parts.next().is_none().then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_ranges() {
        let v = |e: &str| version_ok(e, [8, 0, 7]).unwrap();
        assert!(v(">= 8"));
        assert!(v(">= 8.0.0") && v(">=8.0.7") && !v("> 8.0.7"));
        assert!(!v(">= 7 < 8"));
        assert!(!v(">= 7.0.3 < 8 | >= 9.0.99"));
        assert!(v(">= 7.0.3 < 8 | >= 8.0.1"));
        assert!(!v(">= 10") && v("< 10") && v("<= 8.0.7"));
        assert!(version_ok(">= x", [8, 0, 7]).is_err());
        assert!(version_ok("~ 8", [8, 0, 7]).is_err());
        assert!(version_ok(">= 8 |", [8, 0, 7]).is_err());
    }

    #[test]
    fn found_before_the_rule_is_parsed() {
        let r = |t: &str| prescan(t).map(|v| v.map(|w| w.is_some()));
        assert_eq!(r("alert vxlan any any -> any any (requires: version >= 10; sid:1;)"), Some(Ok(true)));
        assert_eq!(r("alert http any any => any any (requires: version >= 8; sid:3;)"), Some(Ok(false)));
        assert_eq!(r(r#"alert tcp any any -> any any (content:"requires: foo;"; sid:2;)"#), None);
        assert_eq!(r("alert tcp any any -> any any (sid:2;"), None);
    }

    #[test]
    fn requirements() {
        assert_eq!(unmet("version >= 8.0.0, keyword sid"), Ok(None));
        assert_eq!(unmet("version >= 8, keyword foobar"), Ok(Some("keyword foobar".into())));
        assert_eq!(unmet("foo bar"), Ok(Some("unknown requirement 'foo bar'".into())));
        assert_eq!(unmet("version >= 9.0.0, keyword sid"), Ok(Some("version >= 9.0.0".into())));
        assert!(unmet("keyword").is_err());
        assert!(unmet("version >= 8,").is_err());
    }
}
