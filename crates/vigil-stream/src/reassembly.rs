//! One direction's reassembly: the segments a sender sent, the bytes the
//! receiver is taken to keep where they overlap, and how far consumers have
//! read.
//!
//! Offsets are stream offsets (0 is the first byte after the SYN), so
//! sequence wrap-around never reaches this module. Segment records keep
//! their original extents even after their bytes were overwritten, because
//! overlap policies judge a new segment against the segments as sent.

use crate::policy::Policy;
use std::borrow::Cow;
use std::collections::BTreeMap;

/// What inserting one segment found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Inserted {
    /// It overlapped data already held.
    pub overlap: bool,
    /// ... and the overlapping bytes differed.
    pub different: bool,
    /// Bytes actually stored (after clipping to the consumed base and depth).
    pub stored: usize,
    /// Bytes newly held (stored bytes that did not replace held ones): what
    /// the memcap is charged.
    pub added: usize,
    /// Some bytes lay beyond the reassembly depth and were not kept.
    pub depth_reached: bool,
}

/// Segments and data of one direction.
#[derive(Debug, Default, Clone)]
pub struct Reassembly {
    /// Offsets below this are consumed and freed.
    base: u64,
    /// Segment extents as sent, by (start, end).
    segs: BTreeMap<(u64, u64), ()>,
    /// The bytes kept: non-overlapping chunks by start offset; contiguous
    /// writes are appended to the chunk they extend.
    data: BTreeMap<u64, Vec<u8>>,
    /// Bytes held in `data`.
    held: usize,
    /// Gaps wider than [`REGION_GAP`] between consecutive chunks.
    far_gaps: u32,
    /// The most regions held at once.
    max_regions: u32,
}

/// Held data this far from other held data counts as a region of its own,
/// as in Suricata's streaming buffer (its default `region_gap`).
const REGION_GAP: u64 = 256 * 1024;

impl Reassembly {
    pub fn base(&self) -> u64 {
        self.base
    }

    pub fn held(&self) -> usize {
        self.held
    }

    /// The most disjoint regions of data held at once (EVE flow
    /// `ts_max_regions`/`tc_max_regions`): 1 unless data arrived far ahead
    /// of the rest.
    pub fn max_regions(&self) -> u32 {
        self.max_regions.max(1)
    }

    /// Stores `payload` at `off` under `policy`, keeping nothing at or beyond
    /// `depth` (0: no limit) and nothing below the consumed base.
    /// `budget` is how many new bytes may be held (the memcap's headroom).
    pub fn insert(&mut self, off: u64, payload: &[u8], policy: Policy, depth: u64, budget: usize) -> Inserted {
        let mut out = Inserted::default();
        let mut start = off;
        let mut end = off + payload.len() as u64;
        if depth > 0 && end > depth {
            out.depth_reached = true;
            end = end.min(depth);
        }
        start = start.max(self.base);
        if start >= end {
            return out;
        }
        // Copied only when an overlap keeps held bytes: the usual segment is written straight from the packet.
        let mut buf = Cow::Borrowed(&payload[(start - off) as usize..(end - off) as usize]);
        // Overlaps are judged against every held segment as sent.
        let overlapping: Vec<(u64, u64)> =
            self.segs.range(..(end, 0)).filter(|((s, e), _)| *e > start && *s < end).map(|(k, _)| *k).collect();
        for (os, oe) in overlapping {
            let (lo, hi) = (os.max(start).max(self.base), oe.min(end));
            if lo >= hi {
                continue;
            }
            out.overlap = true;
            let mut old = Vec::with_capacity((hi - lo) as usize);
            self.read_into(lo, hi, &mut old);
            let new = &buf[(lo - start) as usize..(hi - start) as usize];
            // Bytes a previous overwrite freed (none normally) compare as absent.
            if old.len() as u64 != hi - lo || old == new {
                continue;
            }
            out.different = true;
            if !policy.new_wins(start, end, os, oe) {
                buf.to_mut()[(lo - start) as usize..(hi - start) as usize].copy_from_slice(&old);
            }
        }
        let Some(added) = self.write(start, &buf, budget) else { return out };
        out.stored = buf.len();
        out.added = added;
        self.segs.insert((start, end), ());
        out
    }

    /// Writes `buf` at `start`, replacing what lies there. `None` when the
    /// new bytes do not fit the budget (nothing is written).
    fn write(&mut self, start: u64, buf: &[u8], budget: usize) -> Option<usize> {
        let end = start + buf.len() as u64;
        let covered = self.covered(start, end);
        let fresh = buf.len() - covered;
        if fresh > budget {
            return None;
        }
        // Only the gaps from the chunk before `start` to the first one at or
        // after `end` can change: counted around the write, not over the stream.
        let span = (
            self.data.range(..start).next_back().map_or(start, |(s, _)| *s),
            self.data.range(end..).next().map_or(end, |(s, _)| *s),
        );
        let gaps_before = self.far_gaps_in(span);
        self.write_chunks(start, buf);
        self.far_gaps = (self.far_gaps + self.far_gaps_in(span)).saturating_sub(gaps_before);
        self.max_regions = self.max_regions.max(self.far_gaps + 1);
        Some(fresh)
    }

    /// Gaps wider than [`REGION_GAP`] between consecutive chunks starting in `[a, b]`.
    fn far_gaps_in(&self, (a, b): (u64, u64)) -> u32 {
        let mut n = 0;
        let mut prev_end: Option<u64> = None;
        for (&s, d) in self.data.range(a..=b) {
            if prev_end.is_some_and(|e| s.saturating_sub(e) > REGION_GAP) {
                n += 1;
            }
            prev_end = Some(s + d.len() as u64);
        }
        n
    }

    /// Replaces what lies at `[start, start + buf.len())` with `buf`.
    fn write_chunks(&mut self, start: u64, buf: &[u8]) {
        let end = start + buf.len() as u64;
        // Cut the chunks that overlap [start, end) down to what lies outside it.
        let hit: Vec<u64> =
            self.data.range(..end).filter(|(s, d)| *s + d.len() as u64 > start).map(|(s, _)| *s).collect();
        for s in hit {
            let Some(chunk) = self.data.remove(&s) else { continue };
            let e = s + chunk.len() as u64;
            self.held -= chunk.len();
            if s < start {
                let left = chunk[..(start - s) as usize].to_vec();
                self.held += left.len();
                self.data.insert(s, left);
            }
            if e > end {
                let right = chunk[(end - s) as usize..].to_vec();
                self.held += right.len();
                self.data.insert(end, right);
            }
        }
        self.held += buf.len();
        // Append to a chunk ending exactly at `start`, keeping reads cheap.
        if let Some((&s, prev)) = self.data.range_mut(..start).next_back() {
            if s + prev.len() as u64 == start {
                prev.extend_from_slice(buf);
                if let Some(next) = self.data.remove(&end) {
                    if let Some(prev) = self.data.get_mut(&s) {
                        prev.extend_from_slice(&next);
                    }
                }
                return;
            }
        }
        let mut chunk = buf.to_vec();
        if let Some(next) = self.data.remove(&end) {
            chunk.extend_from_slice(&next);
        }
        self.data.insert(start, chunk);
    }

    /// Bytes of `[start, end)` already held.
    fn covered(&self, start: u64, end: u64) -> usize {
        self.data
            .range(..end)
            .rev()
            .take_while(|(s, d)| *s + d.len() as u64 > start)
            .map(|(s, d)| (end.min(*s + d.len() as u64) - start.max(*s)) as usize)
            .sum()
    }

    /// Appends the held bytes of `[start, end)` to `out`, stopping at the first hole.
    pub fn read_into(&self, start: u64, end: u64, out: &mut Vec<u8>) {
        let mut at = start;
        let first = self.data.range(..=start).next_back().map(|(s, _)| *s).unwrap_or(start);
        for (&s, d) in self.data.range(first..end) {
            let e = s + d.len() as u64;
            if s > at || e <= at {
                if s > at {
                    return;
                }
                continue;
            }
            let hi = e.min(end);
            out.extend_from_slice(&d[(at - s) as usize..(hi - s) as usize]);
            at = hi;
            if at >= end {
                return;
            }
        }
    }

    /// The end of the contiguous data starting at `from`.
    pub fn contiguous_end(&self, from: u64) -> u64 {
        let mut at = from;
        let first = self.data.range(..=from).next_back().map(|(s, _)| *s).unwrap_or(from);
        for (&s, d) in self.data.range(first..) {
            let e = s + d.len() as u64;
            if s > at {
                break;
            }
            at = at.max(e);
        }
        at
    }

    /// Where the held bytes running without a hole up to `to` begin (`to`
    /// when the byte before it is not held).
    pub fn contiguous_start(&self, to: u64) -> u64 {
        let mut at = to;
        for (&s, d) in self.data.range(..to).rev() {
            if s + (d.len() as u64) < at {
                break;
            }
            at = at.min(s);
        }
        at
    }

    /// The start of the first data held at or after `from`, if any.
    pub fn next_data(&self, from: u64) -> Option<u64> {
        if let Some((&s, d)) = self.data.range(..=from).next_back() {
            if s + d.len() as u64 > from {
                return Some(from);
            }
        }
        self.data.range(from..).next().map(|(&s, _)| s)
    }

    /// Frees everything below `to`; returns the bytes freed.
    pub fn release(&mut self, to: u64) -> usize {
        if to <= self.base {
            return 0;
        }
        self.base = to;
        let before = self.held;
        let span =
            (self.data.first_key_value().map_or(to, |(s, _)| *s), self.data.range(to..).next().map_or(to, |(s, _)| *s));
        let gaps_before = self.far_gaps_in(span);
        // Chunks are few and ordered: pop them from the front until `to`.
        while let Some(entry) = self.data.first_entry() {
            let s = *entry.key();
            if s >= to {
                break;
            }
            let mut chunk = entry.remove();
            let e = s + chunk.len() as u64;
            if e > to {
                // Keep the tail in the same allocation.
                let cut = (to - s) as usize;
                self.held -= cut;
                chunk.drain(..cut);
                self.data.insert(to, chunk);
                break;
            }
            self.held -= chunk.len();
        }
        self.segs.retain(|&(_, e), _| e > to);
        self.far_gaps = (self.far_gaps + self.far_gaps_in(span)).saturating_sub(gaps_before);
        before - self.held
    }

    /// Frees everything.
    pub fn clear(&mut self) -> usize {
        let held = self.held;
        self.data.clear();
        self.segs.clear();
        self.held = 0;
        self.far_gaps = 0;
        held
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(r: &Reassembly) -> Vec<u8> {
        let mut v = Vec::new();
        r.read_into(r.base(), u64::MAX, &mut v);
        v
    }

    #[test]
    fn in_order_and_out_of_order_join_up() {
        let mut r = Reassembly::default();
        r.insert(4, b"5678", Policy::Bsd, 0, usize::MAX);
        assert_eq!(r.contiguous_end(0), 0);
        r.insert(0, b"1234", Policy::Bsd, 0, usize::MAX);
        assert_eq!(r.contiguous_end(0), 8);
        assert_eq!(all(&r), b"12345678");
        assert_eq!(r.held(), 8);
        assert_eq!(r.release(6), 6);
        assert_eq!(all(&r), b"78");
        // Data below the base is ignored.
        let i = r.insert(0, b"xxxxxx", Policy::Last, 0, usize::MAX);
        assert_eq!(i.stored, 0);
    }

    #[test]
    fn overlap_policies_decide_the_bytes() {
        // Held [2, 8) "AAAAAA"; the new segment [2, 10) starts at the same
        // place and ends beyond it.
        for (policy, want) in [
            (Policy::First, &b"CCAAAAAABB"[..]),
            (Policy::Last, b"CCBBBBBBBB"),
            (Policy::Bsd, b"CCAAAAAABB"),
            (Policy::Linux, b"CCBBBBBBBB"),
            (Policy::OldLinux, b"CCBBBBBBBB"),
            (Policy::Solaris, b"CCBBBBBBBB"),
        ] {
            let mut r = Reassembly::default();
            r.insert(2, b"AAAAAA", Policy::Bsd, 0, usize::MAX);
            r.insert(0, b"CC", Policy::Bsd, 0, usize::MAX);
            let i = r.insert(2, b"BBBBBBBB", policy, 0, usize::MAX);
            assert!(i.overlap && i.different, "{policy:?}");
            assert_eq!(all(&r), want, "{policy:?}");
            assert_eq!(r.held(), 10);
        }
    }

    #[test]
    fn depth_and_budget_limit_what_is_kept() {
        let mut r = Reassembly::default();
        let i = r.insert(0, b"0123456789", Policy::Bsd, 6, usize::MAX);
        assert!(i.depth_reached);
        assert_eq!(all(&r), b"012345");
        let i = r.insert(6, b"abc", Policy::Bsd, 0, 2);
        assert_eq!(i.stored, 0);
        assert_eq!(r.held(), 6);
    }

    #[test]
    fn regions_are_data_far_apart_and_the_peak_is_kept() {
        let far = REGION_GAP + 10;
        let mut r = Reassembly::default();
        assert_eq!(r.max_regions(), 1);
        r.insert(0, b"a", Policy::Bsd, 0, usize::MAX);
        r.insert(100, b"b", Policy::Bsd, 0, usize::MAX);
        assert_eq!(r.max_regions(), 1, "a small hole is the same region");
        r.insert(100 + far, b"c", Policy::Bsd, 0, usize::MAX);
        r.insert(100 + 2 * far, b"d", Policy::Bsd, 0, usize::MAX);
        assert_eq!((r.far_gaps, r.max_regions()), (2, 3));
        // Filling in between joins regions up; the peak stays.
        let fill = vec![b'x'; (far - 1) as usize];
        r.insert(101, &fill, Policy::Bsd, 0, usize::MAX);
        assert_eq!((r.far_gaps, r.max_regions()), (1, 3));
        r.release(100 + far + 1);
        assert_eq!(r.far_gaps, 0);
        r.insert(100 + 3 * far, b"e", Policy::Bsd, 0, usize::MAX);
        r.insert(100 + 5 * far, b"f", Policy::Bsd, 0, usize::MAX);
        r.insert(100 + 7 * far, b"g", Policy::Bsd, 0, usize::MAX);
        assert_eq!((r.far_gaps, r.max_regions()), (3, 4));
        r.clear();
        assert_eq!(r.far_gaps, 0);
    }

    #[test]
    fn identical_retransmission_is_an_overlap_without_difference() {
        let mut r = Reassembly::default();
        r.insert(0, b"hello", Policy::Bsd, 0, usize::MAX);
        let i = r.insert(0, b"hello", Policy::Bsd, 0, usize::MAX);
        assert!(i.overlap && !i.different);
        // Only bytes not held before are charged to the memcap.
        assert_eq!((i.stored, i.added), (5, 0));
        let i = r.insert(3, b"lo, world", Policy::Last, 0, usize::MAX);
        assert_eq!((i.stored, i.added), (9, 7));
        assert_eq!(r.held(), 12);
        assert_eq!(r.next_data(12), None);
    }
}
