//! Splitting a rule file into logical rules, and the small scanners the
//! option parser shares.
//!
//! A logical rule is one line, or several joined where a line ends in a
//! backslash. `#` starts a comment line, except that a comment whose text is
//! itself a rule (`# alert ...`, `#alert ...`) is a *disabled* rule: it is
//! parsed and counted, but not loaded. Whether such a line really is a rule
//! is decided by the parser; a line that does not parse is just a comment.

use crate::span::PosMap;
use std::borrow::Cow;

/// One logical rule before parsing.
pub(crate) struct RawRule<'a> {
    /// The rule text: continuation lines joined, a disabled rule's `#` gone.
    pub text: Cow<'a, str>,
    /// Logical offsets of `text` to file positions.
    pub map: PosMap,
    /// The rule was commented out.
    pub disabled: bool,
}

/// Words that start a rule. Used only to tell disabled rules from prose.
const ACTION_WORDS: &[&str] = &[
    "alert",
    "pass",
    "drop",
    "reject",
    "rejectsrc",
    "rejectdst",
    "rejectboth",
    "accept",
    "log",
    "sdrop",
    "block",
    "react",
    "rewrite",
];

/// Whether `s` starts with a rule action followed by a separator.
fn starts_with_action(s: &str) -> bool {
    let end = s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(s.len());
    let word = &s[..end];
    let next = s[end..].chars().next();
    ACTION_WORDS.iter().any(|a| a.eq_ignore_ascii_case(word)) && matches!(next, Some(' ' | '\t' | ':' | ','))
}

/// Iterator over the logical rules of a file.
pub(crate) struct RawRules<'a> {
    src: &'a str,
    pos: usize,
    line: u32,
}

pub(crate) fn raw_rules(src: &str) -> RawRules<'_> {
    RawRules { src, pos: 0, line: 0 }
}

struct PhysLine<'a> {
    text: &'a str,
    start: usize,
    line: u32,
}

impl<'a> RawRules<'a> {
    fn next_line(&mut self) -> Option<PhysLine<'a>> {
        if self.pos >= self.src.len() {
            return None;
        }
        let rest = &self.src[self.pos..];
        let len = rest.find('\n').unwrap_or(rest.len());
        let mut text = &rest[..len];
        if let Some(t) = text.strip_suffix('\r') {
            text = t;
        }
        let start = self.pos;
        self.pos += len + 1;
        self.line += 1;
        Some(PhysLine { text, start, line: self.line })
    }
}

/// Leading blanks of `s` (spaces and tabs), in bytes.
fn blanks(s: &str) -> usize {
    s.len() - s.trim_start_matches([' ', '\t']).len()
}

impl<'a> Iterator for RawRules<'a> {
    type Item = RawRule<'a>;

    fn next(&mut self) -> Option<RawRule<'a>> {
        loop {
            let first = self.next_line()?;
            let lead = blanks(first.text);
            let body = &first.text[lead..];
            if body.is_empty() {
                continue;
            }
            let (disabled, skip) = if body.starts_with('#') {
                let hashes = body.len() - body.trim_start_matches('#').len();
                let after = &body[hashes..];
                let sp = blanks(after);
                if !starts_with_action(&after[sp..]) {
                    continue;
                }
                (true, lead + hashes + sp)
            } else {
                (false, lead)
            };
            let text = first.text[skip..].trim_end();
            let mut map = PosMap::new(first.start + skip, first.line, (skip + 1) as u32);
            let Some(mut joined) = text.strip_suffix('\\').map(str::to_string) else {
                return Some(RawRule { text: Cow::Borrowed(text), map, disabled });
            };
            // Continued: append following lines until one does not end in a
            // backslash. A continued disabled rule has a `#` on each line.
            while let Some(next) = self.next_line() {
                let mut skip = blanks(next.text);
                if disabled && next.text[skip..].starts_with('#') {
                    skip += next.text[skip..].len() - next.text[skip..].trim_start_matches('#').len();
                }
                map.push(joined.len(), next.start + skip, next.line, (skip + 1) as u32);
                let piece = next.text[skip..].trim_end();
                match piece.strip_suffix('\\') {
                    Some(p) => joined.push_str(p),
                    None => {
                        joined.push_str(piece);
                        break;
                    }
                }
            }
            return Some(RawRule { text: Cow::Owned(joined), map, disabled });
        }
    }
}

/// The end of an option value: the first `;` not directly preceded by a
/// backslash, as Suricata scans it (quotes do not protect a `;`).
pub(crate) fn option_end(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut from = 0;
    while let Some(i) = b[from..].iter().position(|&c| c == b';') {
        let at = from + i;
        if at > 0 && b[at - 1] == b'\\' {
            from = at + 1;
            continue;
        }
        return Some(at);
    }
    None
}

/// Splits `s` at unescaped commas, keeping each piece's offset. Used by the
/// comma-separated keyword values.
pub(crate) fn split_commas(s: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let b = s.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b',' => {
                out.push((start, &s[start..i]));
                i += 1;
                start = i;
            }
            _ => i += 1,
        }
    }
    out.push((start.min(s.len()), &s[start.min(s.len())..]));
    out
}

/// `s` without surrounding blanks, with the offset of what is left.
pub(crate) fn trim(s: &str) -> (usize, &str) {
    let t = s.trim_start();
    let off = s.len() - t.len();
    (off, t.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(src: &str) -> Vec<(String, bool)> {
        raw_rules(src).map(|r| (r.text.into_owned(), r.disabled)).collect()
    }

    #[test]
    fn comments_disabled_and_continuations() {
        let src = "# a comment\n\n#alert tcp any any -> any any (sid:1;)\n## alert ip any any -> any any (sid:2;)\n\
                   # alert when things happen\nalert tcp any any -> any any (msg:\"x\"; \\\n  sid:3;)\n";
        assert_eq!(
            texts(src),
            vec![
                ("alert tcp any any -> any any (sid:1;)".into(), true),
                ("alert ip any any -> any any (sid:2;)".into(), true),
                ("alert when things happen".into(), true),
                ("alert tcp any any -> any any (msg:\"x\"; sid:3;)".into(), false),
            ]
        );
    }

    #[test]
    fn continuation_positions() {
        let src = "alert tcp any any -> any any (msg:\"x\"; \\\n  sid:3;)\n";
        let r = raw_rules(src).next().unwrap();
        let at = r.text.find("sid").unwrap();
        let span = r.map.span(at, at + 3);
        assert_eq!((span.line, span.column), (2, 3));
        assert_eq!(&src[span.start as usize..span.end as usize], "sid");
    }

    #[test]
    fn option_end_honours_backslash() {
        assert_eq!(option_end(r#"content:"a\;b"; x"#), Some(14));
        assert_eq!(option_end("abc"), None);
    }

    #[test]
    fn commas() {
        assert_eq!(split_commas("a, b\\,c,"), vec![(0, "a"), (2, " b\\,c"), (8, "")]);
    }
}
