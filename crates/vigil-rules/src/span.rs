//! Source positions: where in a rule file a piece of a rule was written.

/// A byte range in the source a rule came from, with the 1-based line and
/// column of its first byte.
///
/// Offsets are into the whole file (or string) given to the parser, not into
/// the rule's own text, so a span stays meaningful for rules continued over
/// several lines with a trailing backslash.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Span {
    /// Byte offset of the first byte.
    pub start: u32,
    /// Byte offset one past the last byte.
    pub end: u32,
    /// 1-based line of `start`.
    pub line: u32,
    /// 1-based column (in bytes) of `start`.
    pub column: u32,
}

impl Span {
    /// The empty span used when a node was built rather than parsed.
    pub const NONE: Span = Span { start: 0, end: 0, line: 0, column: 0 };
}

/// One physical piece of a logical rule: where logical offset `logical`
/// sits in the file.
#[derive(Clone, Copy, Debug)]
struct Segment {
    logical: u32,
    file: u32,
    line: u32,
    column: u32,
}

/// Maps offsets in a logical rule text (continuation lines joined, the `#`
/// of a disabled rule dropped) back to file positions.
#[derive(Clone, Debug, Default)]
pub(crate) struct PosMap {
    segments: Vec<Segment>,
}

impl PosMap {
    /// A map for text that starts at file offset `file`, line `line`,
    /// column `column`.
    pub(crate) fn new(file: usize, line: u32, column: u32) -> PosMap {
        let mut m = PosMap { segments: Vec::with_capacity(1) };
        m.push(0, file, line, column);
        m
    }

    /// Logical offset `logical` continues at file offset `file`.
    pub(crate) fn push(&mut self, logical: usize, file: usize, line: u32, column: u32) {
        self.segments.push(Segment { logical: clamp(logical), file: clamp(file), line, column });
    }

    /// The span of logical range `start..end`.
    pub(crate) fn span(&self, start: usize, end: usize) -> Span {
        let (s, line, column) = self.locate(start);
        let (e, _, _) = self.locate(end);
        Span { start: s, end: e.max(s), line, column }
    }

    fn locate(&self, off: usize) -> (u32, u32, u32) {
        let off = clamp(off);
        let i = self.segments.partition_point(|s| s.logical <= off).saturating_sub(1);
        match self.segments.get(i) {
            Some(s) => {
                let d = off - s.logical;
                (s.file.saturating_add(d), s.line, s.column.saturating_add(d))
            }
            None => (off, 1, off.saturating_add(1)),
        }
    }
}

fn clamp(v: usize) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continuation_maps_to_second_line() {
        let mut m = PosMap::new(100, 7, 1);
        m.push(10, 120, 8, 1);
        assert_eq!(m.span(2, 4), Span { start: 102, end: 104, line: 7, column: 3 });
        assert_eq!(m.span(12, 15), Span { start: 122, end: 125, line: 8, column: 3 });
    }
}
