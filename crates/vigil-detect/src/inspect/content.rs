//! `content` and its modifiers: where in the buffer a pattern may match.

use memchr::memmem;

/// A compiled `content` keyword with its modifiers.
#[derive(Debug, Clone)]
pub struct ContentStep {
    pattern: Vec<u8>,
    nocase: bool,
    pub negated: bool,
    /// `offset`: where the search starts (absolute contents).
    pub offset: u32,
    /// `depth`: how many bytes from `offset` the match must lie within.
    pub depth: Option<u32>,
    /// `distance`: where the search starts, from the previous match's end.
    pub distance: Option<i32>,
    /// `within`: the match must end within this many bytes of the previous
    /// match's end (plus `distance`).
    pub within: Option<u32>,
    /// `endswith`: the match must end the buffer.
    pub endswith: bool,
    /// `offset`, `depth`, `distance`, `within` given as a `byte_extract`
    /// variable: its slot, read at inspection (the field above then only
    /// says the modifier is present).
    pub var_slots: [Option<u8>; 4],
    // Boxed: the searcher is large, and steps are scanned in order.
    finder: Box<memmem::Finder<'static>>,
}

impl ContentStep {
    /// `depth` or `offset` (so `startswith` too): the match is anchored to
    /// the buffer's start.
    pub fn is_absolute(&self) -> bool {
        self.depth.is_some() || self.offset > 0 || self.var_slots[0].is_some() || self.var_slots[1].is_some()
    }

    /// `startswith` is `offset 0, depth len`; pass it that way.
    pub fn new(pattern: Vec<u8>, nocase: bool) -> Self {
        let needle = if nocase { pattern.to_ascii_lowercase() } else { pattern.clone() };
        ContentStep {
            finder: Box::new(memmem::Finder::new(&needle).into_owned()),
            pattern,
            nocase,
            negated: false,
            offset: 0,
            depth: None,
            distance: None,
            within: None,
            endswith: false,
            var_slots: [None; 4],
        }
    }

    pub fn pattern(&self) -> &[u8] {
        &self.pattern
    }

    pub fn nocase(&self) -> bool {
        self.nocase
    }

    pub fn is_relative(&self) -> bool {
        self.distance.is_some() || self.within.is_some()
    }

    /// The window `[start, end)` the match must lie in, given the previous
    /// match's end and the stream offset of the buffer's start.
    fn window(&self, len: usize, prev_end: usize, base: u64, vars: &[u64]) -> Option<(usize, usize)> {
        // A variable's value, bounded so the arithmetic below cannot overflow.
        let var = |i: usize, fixed: i64| match self.var_slots[i] {
            Some(v) => vars.get(v as usize).map_or(0, |&x| x.min(u32::MAX as u64) as i64),
            None => fixed,
        };
        let (start, end) = if self.is_relative() {
            let d = var(2, self.distance.unwrap_or(0) as i64);
            let start = (prev_end as i64 + d).max(0) as usize;
            let end = match self.within {
                Some(w) => (prev_end as i64 + d + var(3, w as i64)).max(0) as usize,
                None => len,
            };
            (start, end)
        } else {
            // Absolute positions count from the stream's start: shift them into the buffer.
            let start = var(0, self.offset as i64) as u64;
            let end = self.depth.map_or(u64::MAX, |d| start + var(1, d as i64) as u64);
            if end < base {
                return None;
            }
            (start.saturating_sub(base) as usize, (end - base).min(len as u64) as usize)
        };
        let end = end.min(len);
        (start <= end).then_some((start, end))
    }

    /// The first match at or after `from` (when retrying) inside the window:
    /// its start and end.
    /// `vars`: the `byte_extract` variables, for modifiers given as one.
    pub fn find(
        &self,
        buf: &[u8],
        prev_end: usize,
        from: Option<usize>,
        base: u64,
        vars: &[u64],
    ) -> Option<(usize, usize)> {
        let (mut start, end) = self.window(buf.len(), prev_end, base, vars)?;
        if let Some(f) = from {
            start = start.max(f);
        }
        let plen = self.pattern.len();
        if end < start + plen {
            return None;
        }
        if self.endswith {
            let s = end - plen;
            return (end == buf.len() && s >= start && self.eq_at(buf, s)).then_some((s, end));
        }
        let hay = &buf[start..end];
        let pos = if self.nocase { self.find_nocase(hay) } else { self.finder.find(hay) }?;
        Some((start + pos, start + pos + plen))
    }

    fn eq_at(&self, buf: &[u8], at: usize) -> bool {
        let w = &buf[at..at + self.pattern.len()];
        if self.nocase {
            w.eq_ignore_ascii_case(&self.pattern)
        } else {
            w == self.pattern
        }
    }

    fn find_nocase(&self, hay: &[u8]) -> Option<usize> {
        let first = self.finder.needle()[0];
        let plen = self.pattern.len();
        let (lo, up) = (first.to_ascii_lowercase(), first.to_ascii_uppercase());
        let mut at = 0;
        while at + plen <= hay.len() {
            let i = at + memchr::memchr2(lo, up, &hay[at..=hay.len() - plen])?;
            if hay[i..i + plen].eq_ignore_ascii_case(self.finder.needle()) {
                return Some(i);
            }
            at = i + 1;
        }
        None
    }
}
