//! Suricata version numbers as `requires:` and `min<version>.rules` use them.
//!
//! The comparisons follow upstream's runner, quirks included: missing parts count as 0
//! except for `version:` (where `8.0` means "any 8.0.x"), and `lt-version` does not look
//! at a larger minor number before the patch (only reachable with a claimed minor > 0).

use std::fmt;

/// The Suricata version vigil claims to be.
pub const CLAIMED: SuricataVersion = SuricataVersion { major: 8, minor: Some(0), patch: Some(7) };

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SuricataVersion {
    pub major: u64,
    pub minor: Option<u64>,
    pub patch: Option<u64>,
}

impl fmt::Display for SuricataVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.major)?;
        if let Some(minor) = self.minor {
            write!(f, ".{minor}")?;
            if let Some(patch) = self.patch {
                write!(f, ".{patch}")?;
            }
        }
        Ok(())
    }
}

/// Which requirement a version is read for; it decides what a missing part means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    /// `min-version`: claimed >= required.
    Gte,
    /// `gt-version`: claimed > required.
    Gt,
    /// `lt-version`: claimed < required.
    Lt,
    /// `version`: same release line; missing parts match anything.
    Equal,
}

/// Reads "8", "8.0", "7.0.14", "4.1.0-dev": leading digits, up to three dotted parts,
/// anything after ignored.
pub fn parse(text: &str, cmp: Cmp) -> Option<SuricataVersion> {
    let text = text.trim();
    let default = if cmp == Cmp::Equal { None } else { Some(0) };
    let mut rest = text;
    let major = take_digits(&mut rest)?;
    let mut parts = [None, None];
    for part in &mut parts {
        if let Some(r) = rest.strip_prefix('.') {
            rest = r;
        }
        *part = take_digits(&mut rest);
        if part.is_none() {
            break;
        }
    }
    Some(SuricataVersion { major, minor: parts[0].or(default), patch: parts[1].or(default) })
}

fn take_digits(rest: &mut &str) -> Option<u64> {
    let end = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    if end == 0 {
        return None;
    }
    let value = rest[..end].parse().ok()?;
    *rest = &rest[end..];
    Some(value)
}

/// Whether `claimed` satisfies the requirement `required` under `cmp`.
pub fn satisfies(claimed: SuricataVersion, cmp: Cmp, required: SuricataVersion) -> bool {
    let (a, b) = (claimed, required);
    match cmp {
        Cmp::Equal => a.major == b.major && both_or_any(a.minor, b.minor) && both_or_any(a.patch, b.patch),
        Cmp::Gte => triple(a) >= triple(b),
        Cmp::Gt => triple(a) > triple(b),
        Cmp::Lt => {
            let (a, b) = (triple(a), triple(b));
            if a.0 != b.0 {
                a.0 < b.0
            } else {
                // Upstream's order of tests, kept so results match it exactly.
                a.1 < b.1 || a.2 < b.2
            }
        }
    }
}

fn both_or_any(a: Option<u64>, b: Option<u64>) -> bool {
    match (a, b) {
        (Some(x), Some(y)) => x == y,
        _ => true,
    }
}

fn triple(v: SuricataVersion) -> (u64, u64, u64) {
    (v.major, v.minor.unwrap_or(0), v.patch.unwrap_or(0))
}

/// Checks a requirement given as YAML text (`min-version: 7.0.14`).
pub fn check(claimed: SuricataVersion, cmp: Cmp, required: &str) -> Result<bool, String> {
    let req = parse(required, cmp).ok_or_else(|| format!("cannot parse version {required:?}"))?;
    Ok(satisfies(claimed, cmp, req))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(cmp: Cmp, v: &str) -> bool {
        check(CLAIMED, cmp, v).unwrap()
    }

    #[test]
    fn parses_partial_and_suffixed_versions() {
        let v = parse("4.1.0-dev", Cmp::Gte).unwrap();
        assert_eq!((v.major, v.minor, v.patch), (4, Some(1), Some(0)));
        let v = parse("4", Cmp::Gte).unwrap();
        assert_eq!((v.major, v.minor, v.patch), (4, Some(0), Some(0)));
        let v = parse("8.0", Cmp::Equal).unwrap();
        assert_eq!((v.major, v.minor, v.patch), (8, Some(0), None));
        assert!(parse("imal", Cmp::Gte).is_none());
        assert!(parse("", Cmp::Gte).is_none());
    }

    #[test]
    fn min_version() {
        assert!(ok(Cmp::Gte, "7.0.14"));
        assert!(ok(Cmp::Gte, "8"));
        assert!(ok(Cmp::Gte, "8.0.7"));
        assert!(!ok(Cmp::Gte, "8.0.8"));
        assert!(!ok(Cmp::Gte, "9"));
        assert!(!ok(Cmp::Gte, "8.1"));
    }

    #[test]
    fn lt_and_gt_version() {
        assert!(!ok(Cmp::Lt, "8"));
        assert!(!ok(Cmp::Lt, "8.0"));
        assert!(!ok(Cmp::Lt, "8.0.7"));
        assert!(!ok(Cmp::Lt, "8.0.5"));
        assert!(ok(Cmp::Lt, "8.0.8"));
        assert!(ok(Cmp::Lt, "9"));
        assert!(ok(Cmp::Lt, "8.1"));
        assert!(ok(Cmp::Gt, "8.0.6"));
        assert!(ok(Cmp::Gt, "7"));
        assert!(!ok(Cmp::Gt, "8.0.7"));
        assert!(!ok(Cmp::Gt, "8.1.0"));
    }

    #[test]
    fn equal_version_matches_the_release_line() {
        assert!(ok(Cmp::Equal, "8"));
        assert!(ok(Cmp::Equal, "8.0"));
        assert!(ok(Cmp::Equal, "8.0.7"));
        assert!(!ok(Cmp::Equal, "8.0.6"));
        assert!(!ok(Cmp::Equal, "8.1"));
        assert!(!ok(Cmp::Equal, "7"));
    }

    #[test]
    fn lt_keeps_upstream_quirk() {
        let claimed = parse("8.1.0", Cmp::Gte).unwrap();
        // 8.1.0 < 8.0.5 is false, but upstream's check says true.
        assert!(satisfies(claimed, Cmp::Lt, parse("8.0.5", Cmp::Lt).unwrap()));
    }
}
