//! `pcre`: PCRE2 with JIT, bounded by PCRE2's own match and depth limits so
//! a pathological expression cannot stall a worker.

use pcre2::bytes::{Regex, RegexBuilder};

/// PCRE2 match and depth limits, set inside the pattern so they hold whatever
/// the library's defaults (Suricata's `pcre.match-limit`/`match-limit-recursion`).
const MATCH_LIMIT: u32 = 3500;
const DEPTH_LIMIT: u32 = 1500;

/// A compiled `pcre` keyword.
#[derive(Debug)]
pub struct PcreStep {
    re: Regex,
    pub relative: bool,
    pub negated: bool,
    /// Groups whose text goes to a variable when the signature matches.
    pub captures: Vec<Capture>,
}

/// Where a captured group goes (Suricata's `flow:`, `pkt:` and `alert:`
/// targets, or a group named `flow_x`, `pkt_x`, `alert_x`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarKind {
    /// A flow variable: the flow's records carry it (`metadata.flowvars`).
    Flow,
    /// A packet variable: the alert's `metadata.pktvars`.
    Pkt,
    /// The alert's `context`.
    Alert,
}

/// One captured group and its variable.
#[derive(Debug, Clone)]
pub struct Capture {
    pub group: usize,
    pub kind: VarKind,
    pub name: std::sync::Arc<str>,
}

/// One captured variable: its kind, its name and its bytes.
pub type CapturedVar = (VarKind, std::sync::Arc<str>, Vec<u8>);

/// What a signature's captures took: each variable with its bytes.
pub type Captured = Vec<CapturedVar>;

/// Why a search gave no answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PcreError {
    /// A match or depth limit stopped the search.
    Limit,
}

/// The PCRE options Suricata's flags map to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PcreFlags {
    pub caseless: bool,
    pub dotall: bool,
    pub multi_line: bool,
    pub extended: bool,
    /// `A`: anchored at the search start.
    pub anchored: bool,
    /// `E`: `$` matches only at the very end.
    pub dollar_endonly: bool,
    /// `G`: ungreedy.
    pub ungreedy: bool,
}

impl PcreStep {
    pub fn new(pattern: &str, flags: PcreFlags, relative: bool, negated: bool) -> Result<Self, String> {
        let mut inline = format!("(*LIMIT_MATCH={MATCH_LIMIT})(*LIMIT_DEPTH={DEPTH_LIMIT})");
        // Start-of-pattern items such as (*UTF) must stay at the very start, before any group.
        let mut pattern = pattern;
        while let Some(end) = pattern.strip_prefix("(*").and_then(|r| r.find(')')) {
            inline.push_str(&pattern[..end + 3]);
            pattern = &pattern[end + 3..];
        }
        if flags.anchored {
            // Anchor at the start of the subject, as PCRE2_ANCHORED does.
            inline.push_str("\\A(?:");
        }
        if flags.ungreedy {
            inline.push_str("(?U)");
        }
        inline.push_str(pattern);
        if flags.anchored {
            inline.push(')');
        }
        let mut b = RegexBuilder::new();
        b.jit_if_available(true)
            .caseless(flags.caseless)
            .dotall(flags.dotall)
            .multi_line(flags.multi_line)
            .extended(flags.extended);
        let _ = flags.dollar_endonly; // pcre2 0.2 exposes no DOLLAR_ENDONLY; `$` before a final newline still matches.
        let re = b.build(&inline).map_err(|e| e.to_string())?;
        Ok(PcreStep { re, relative, negated, captures: Vec::new() })
    }

    /// Sets where groups go: `listed` names groups 1, 2, ... in order
    /// (`flow:a, pkt:b`); groups named `flow_x`, `pkt_x` or `alert_x` go
    /// to `x` of their kind.
    pub fn with_captures(mut self, listed: &[(VarKind, String)]) -> Result<Self, String> {
        let groups = self.re.captures_len().saturating_sub(1);
        if listed.len() > groups {
            return Err(format!("{} capture targets for {groups} groups", listed.len()));
        }
        for (i, (kind, name)) in listed.iter().enumerate() {
            self.captures.push(Capture { group: i + 1, kind: *kind, name: name.as_str().into() });
        }
        for (i, n) in self.re.capture_names().iter().enumerate() {
            let Some(n) = n else { continue };
            let target = [("flow_", VarKind::Flow), ("pkt_", VarKind::Pkt), ("alert_", VarKind::Alert)]
                .into_iter()
                .find_map(|(p, k)| n.strip_prefix(p).map(|rest| (k, rest)));
            if let Some((kind, name)) = target.filter(|(_, r)| !r.is_empty()) {
                self.captures.push(Capture { group: i, kind, name: name.into() });
            }
        }
        Ok(self)
    }

    /// The captured groups of the first match in `buf[from..]` (see
    /// [`Self::find`]), pushed to `out`; the match's start and end.
    pub fn find_capturing(
        &self,
        buf: &[u8],
        from: usize,
        out: &mut Captured,
    ) -> Result<Option<(usize, usize)>, PcreError> {
        let Some(rest) = buf.get(from..) else { return Ok(None) };
        let caps = match self.re.captures(rest) {
            Ok(Some(c)) => c,
            Ok(None) => return Ok(None),
            Err(_) => return Err(PcreError::Limit),
        };
        for c in &self.captures {
            if let Some(m) = caps.get(c.group) {
                out.push((c.kind, c.name.clone(), m.as_bytes().to_vec()));
            }
        }
        Ok(caps.get(0).map(|m| (from + m.start(), from + m.end())))
    }

    /// The first match in `buf[from..]`: its start and end in `buf`. The
    /// expression sees only that part, so `^` and the `A` flag anchor at
    /// `from`, as Suricata runs a relative pcre on the rest of the buffer.
    pub fn find(&self, buf: &[u8], from: usize) -> Result<Option<(usize, usize)>, PcreError> {
        let Some(rest) = buf.get(from..) else { return Ok(None) };
        match self.re.find(rest) {
            Ok(m) => Ok(m.map(|m| (from + m.start(), from + m.end()))),
            Err(_) => Err(PcreError::Limit),
        }
    }
}
