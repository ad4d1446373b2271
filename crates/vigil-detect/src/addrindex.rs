//! An index from IP address to the signatures whose address list admits it,
//! for signatures without a fast pattern (IP reputation lists and the like:
//! thousands of addresses, no content). Without it each such signature would
//! be checked on every packet.
//!
//! The address line is cut at every range boundary into disjoint segments;
//! each segment lists the signatures covering it. A lookup is one binary
//! search. The index is bounded: past a size cap, signatures stay on the
//! per-packet list instead.

use std::net::IpAddr;
use vigil_rules::AddressSet;

/// (segment start, signatures) pairs sorted by start; a segment runs to the next start.
#[derive(Debug, Default)]
struct Line<T> {
    starts: Vec<T>,
    sigs: Vec<Vec<u32>>,
}

/// Most (segment, signature) entries one index holds.
const MAX_ENTRIES: usize = 4_000_000;

/// Signatures indexed by the address on one side of the packet.
#[derive(Debug, Default)]
pub(crate) struct AddrIndex {
    v4: Line<u32>,
    v6: Line<u128>,
}

impl<T: Copy + Ord + Default + std::fmt::Debug> Line<T> {
    /// Builds from each signature's ranges; `None` when the index would exceed the cap.
    fn build(items: &[(u32, &[(T, T)])], succ: impl Fn(T) -> Option<T>) -> Option<Self> {
        let mut bounds: Vec<T> = Vec::new();
        for (_, ranges) in items {
            for &(lo, hi) in *ranges {
                bounds.push(lo);
                if let Some(n) = succ(hi) {
                    bounds.push(n);
                }
            }
        }
        bounds.sort_unstable();
        bounds.dedup();
        let mut sigs: Vec<Vec<u32>> = vec![Vec::new(); bounds.len()];
        let mut entries = 0usize;
        for (sig, ranges) in items {
            for &(lo, hi) in *ranges {
                let first = bounds.partition_point(|b| *b < lo);
                let end = match succ(hi) {
                    Some(n) => bounds.partition_point(|b| *b < n),
                    None => bounds.len(),
                };
                entries += end - first;
                if entries > MAX_ENTRIES {
                    return None;
                }
                for s in &mut sigs[first..end] {
                    s.push(*sig);
                }
            }
        }
        for s in &mut sigs {
            s.sort_unstable();
            s.dedup();
        }
        Some(Line { starts: bounds, sigs })
    }

    fn lookup(&self, v: T) -> &[u32] {
        let i = self.starts.partition_point(|s| *s <= v);
        if i == 0 {
            return &[];
        }
        &self.sigs[i - 1]
    }
}

impl AddrIndex {
    /// Indexes `(signature, address set)` pairs; `None` when too large.
    pub(crate) fn build(items: &[(u32, &AddressSet)]) -> Option<AddrIndex> {
        let v4: Vec<(u32, &[(u32, u32)])> = items.iter().map(|(s, a)| (*s, a.v4.ranges())).collect();
        let v6: Vec<(u32, &[(u128, u128)])> = items.iter().map(|(s, a)| (*s, a.v6.ranges())).collect();
        Some(AddrIndex {
            v4: Line::build(&v4, |x: u32| x.checked_add(1))?,
            v6: Line::build(&v6, |x: u128| x.checked_add(1))?,
        })
    }

    /// The signatures whose set contains `ip`, sorted.
    pub(crate) fn lookup(&self, ip: IpAddr) -> &[u32] {
        match ip {
            IpAddr::V4(a) => self.v4.lookup(u32::from(a)),
            IpAddr::V6(a) => self.v6.lookup(u128::from(a)),
        }
    }
}
