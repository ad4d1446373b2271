//! `pcre` values: `[!]"/regex/flags[, capture, ...]"`.
//!
//! The regex itself is kept as written (escapes included) for the engine to
//! compile; here the delimiters, the flags and the capture list are checked.
//! Flags are PCRE's (`i s m x A E G`) and Suricata's (`R` relative, `O`
//! override match limit, `B` accepted for Snort compatibility, and one
//! buffer flag: `U I P Q H D M C S Y V W Z`).

use crate::error::{verr, VResult};
use crate::lexer::trim;
use std::fmt;

/// A parsed `pcre` value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Pcre {
    /// `pcre:!"..."`: matches when the regex does not.
    pub negated: bool,
    /// The regex between the slashes, exactly as written.
    pub pattern: String,
    /// The flag letters, as written (validated).
    pub flags: String,
    /// Capture targets (`flow:name`, `pkt:name`, `alert:name`).
    pub captures: Vec<String>,
}

/// How many slashes from the end may be the closing one.
const MAX_CLOSE_CANDIDATES: usize = 32;

/// Flags PCRE itself understands.
const PCRE_FLAGS: &str = "ismxAEG";
/// Suricata's flags that select no buffer.
const SURICATA_FLAGS: &str = "ROB";

/// The buffer a pcre flag selects, if it selects one.
pub fn flag_buffer(flag: char) -> Option<&'static str> {
    Some(match flag {
        'U' => "http.uri",
        'I' => "http.uri.raw",
        'P' => "http.request_body",
        'Q' => "http.response_body",
        'H' => "http.header",
        'D' => "http.header.raw",
        'M' => "http.method",
        'C' => "http.cookie",
        'S' => "http.stat_code",
        'Y' => "http.stat_msg",
        'V' => "http.user_agent",
        'W' => "http.host",
        'Z' => "http.host.raw",
        _ => return None,
    })
}

fn check_flags(flags: &str) -> Result<(), (usize, String)> {
    let mut buffer: Option<char> = None;
    for (i, c) in flags.char_indices() {
        if let Some(_b) = flag_buffer(c) {
            if let Some(prev) = buffer.filter(|p| *p != c) {
                return Err((i, format!("flags '{prev}' and '{c}' select two different buffers")));
            }
            buffer = Some(c);
        } else if !PCRE_FLAGS.contains(c) && !SURICATA_FLAGS.contains(c) {
            return Err((i, format!("unknown flag '{c}'")));
        }
    }
    Ok(())
}

/// Whether `s` (what follows a candidate closing slash) is flags plus an
/// optional capture list.
fn is_tail(s: &str) -> bool {
    let (flags, rest) = s.split_at(s.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(s.len()));
    if check_flags(flags).is_err() {
        return false;
    }
    let rest = rest.trim_start();
    rest.is_empty() || (rest.starts_with(',') && captures(&rest[1..]).is_ok())
}

fn captures(s: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for item in s.split(',') {
        let item = item.trim();
        match item.split_once(':') {
            Some((scope, name)) if matches!(scope, "flow" | "pkt" | "alert") && !name.is_empty() => {
                out.push(item.to_string())
            }
            _ => return Err(format!("invalid capture '{item}': expected flow:NAME, pkt:NAME or alert:NAME")),
        }
    }
    Ok(out)
}

/// Whether PCRE2 compiles the regex under its flags: Suricata refuses a
/// rule whose regex does not, and so does vigil (an error, not a rule the
/// engine merely cannot run).
fn check_regex(pattern: &str, flags: &str) -> Result<(), String> {
    let mut b = pcre2::bytes::RegexBuilder::new();
    b.caseless(flags.contains('i'))
        .dotall(flags.contains('s'))
        .multi_line(flags.contains('m'))
        .extended(flags.contains('x'));
    b.build(pattern).map(|_| ()).map_err(|e| format!("invalid regex: {e}"))
}

impl Pcre {
    /// Parses a pcre value.
    pub fn parse(s: &str) -> VResult<Pcre> {
        let (off, t) = trim(s);
        let (negated, at, t) = match t.strip_prefix('!') {
            Some(r) => (true, off + 1 + (r.len() - r.trim_start().len()), r.trim_start()),
            None => (false, off, t),
        };
        // The quotes are the first and the last character: ET rules carry
        // unescaped quotes inside the regex, and Suricata reads them so.
        // Suricata also takes the regex unquoted.
        let (inner, inner_at) = if t.len() >= 2 && t.starts_with('"') && t.ends_with('"') {
            (&t[1..t.len() - 1], at + 1)
        } else if t.starts_with('/') {
            (t, at)
        } else {
            return verr(at, "pcre must be \"/regex/flags\"");
        };
        if !inner.starts_with('/') {
            return verr(inner_at, "pcre regex must start with '/'");
        }
        let body = &inner[1..];
        // The closing slash is the last unescaped one that is followed by
        // valid flags and captures; capture names may contain slashes too.
        let slashes: Vec<usize> =
            body.char_indices().filter(|&(i, c)| c == '/' && !escaped(body.as_bytes(), i)).map(|(i, _)| i).collect();
        let Some(&last) = slashes.last() else {
            return verr(inner_at, "pcre regex has no closing '/'");
        };
        // Only the last few slashes are candidates: real capture lists are
        // short, and trying every slash of a hostile value is quadratic.
        let close =
            slashes.iter().rev().take(MAX_CLOSE_CANDIDATES).copied().find(|&i| is_tail(&body[i + 1..])).unwrap_or(last);
        let pattern = &body[..close];
        let tail = &body[close + 1..];
        let tail_at = inner_at + 1 + close + 1;
        let flen = tail.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(tail.len());
        let flags = &tail[..flen];
        check_flags(flags).or_else(|(i, m)| verr(tail_at + i, m))?;
        let rest = tail[flen..].trim_start();
        let caps = if rest.is_empty() {
            Vec::new()
        } else if let Some(c) = rest.strip_prefix(',') {
            captures(c).or_else(|m| verr(tail_at + flen, m))?
        } else {
            return verr(tail_at + flen, format!("unexpected '{rest}' after the pcre flags"));
        };
        check_regex(pattern, flags).or_else(|m| verr(inner_at + 1, m))?;
        Ok(Pcre { negated, pattern: pattern.to_string(), flags: flags.to_string(), captures: caps })
    }

    /// Whether flag `c` is set.
    pub fn has_flag(&self, c: char) -> bool {
        self.flags.contains(c)
    }

    /// `R`: match relative to the previous match.
    pub fn relative(&self) -> bool {
        self.has_flag('R')
    }

    /// The HTTP buffer a flag selects (`U` → `http.uri`), if any.
    pub fn buffer(&self) -> Option<&'static str> {
        self.flags.chars().find_map(flag_buffer)
    }
}

fn escaped(b: &[u8], i: usize) -> bool {
    let mut n = 0;
    while n < i && b[i - 1 - n] == b'\\' {
        n += 1;
    }
    n % 2 == 1
}

impl fmt::Display for Pcre {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.negated {
            f.write_str("!")?;
        }
        write!(f, "\"/{}/{}", self.pattern, self.flags)?;
        for (i, c) in self.captures.iter().enumerate() {
            f.write_str(if i == 0 { ", " } else { "," })?;
            f.write_str(c)?;
        }
        f.write_str("\"")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        let p = Pcre::parse(r#""/^GET\s\/x"y/Ui""#).unwrap();
        assert_eq!((p.pattern.as_str(), p.flags.as_str()), (r#"^GET\s\/x"y"#, "Ui"));
        assert_eq!(p.buffer(), Some("http.uri"));
        let p = Pcre::parse(r#"!"/a\;b/R""#).unwrap();
        assert!(p.negated && p.relative());
        let p = Pcre::parse(r#""/([a-z]+)\/(.+)$/GUR, flow:ua/ubuntu/repo,flow:ua/pkg/version""#).unwrap();
        assert_eq!(p.pattern, r#"([a-z]+)\/(.+)$"#);
        assert_eq!(p.captures, vec!["flow:ua/ubuntu/repo", "flow:ua/pkg/version"]);
        assert_eq!(Pcre::parse(&p.to_string()).unwrap(), p);
        let p = Pcre::parse(r#""/a/b/""#).unwrap();
        assert_eq!((p.pattern.as_str(), p.flags.as_str()), ("a/b", ""));
    }

    #[test]
    fn errors() {
        let e = Pcre::parse(r#""/abc/iJ""#).unwrap_err();
        assert_eq!((e.reason.as_str(), e.at), ("unknown flag 'J'", 7));
        assert_eq!(Pcre::parse(r#""/abc/UH""#).unwrap_err().reason, "flags 'U' and 'H' select two different buffers");
        assert_eq!(Pcre::parse(r#""abc""#).unwrap_err().reason, "pcre regex must start with '/'");
        assert_eq!(Pcre::parse(r#""/abc""#).unwrap_err().reason, "pcre regex has no closing '/'");
        assert_eq!(Pcre::parse(r#"/abc/i"#).unwrap().flags, "i");
        assert!(Pcre::parse(r#"abc"#).is_err());
        assert_eq!(Pcre::parse(r#""//i""#).unwrap().pattern, "");
        // A regex PCRE2 refuses is an error at its start, as in Suricata.
        let e = Pcre::parse(r#""/foo(/""#).unwrap_err();
        assert!(e.reason.starts_with("invalid regex: PCRE2:"), "{}", e.reason);
        assert_eq!(e.at, 2);
        // `x` lets whitespace and comments stand in the regex.
        assert!(Pcre::parse(r#""/a b # c/x""#).is_ok());
    }
}
