//! One datagram being reassembled: its fragments in offset order, the
//! overlap policy applied as each arrives, and the rebuild once complete.
//!
//! Insertion and rebuild follow Suricata's `DefragInsertFrag` and
//! `Defrag{4,6}Reassemble` step for step, so that every policy produces the
//! bytes Suricata produces: overlaps are resolved partly by trimming when a
//! fragment arrives and partly by the copy order of the rebuild (fragments
//! sorted by offset, equal offsets in arrival order, later copies on top).

use crate::fragment::Fragment;
use crate::policy::Policy;

/// Bookkeeping bytes charged per stored fragment, besides its data.
// Memory a stored fragment takes beyond its bytes: its entry in the
// tracker's vector (which may hold as much again spare) and the allocator's
// share of its two boxes. Counted so that the memcap bounds what the
// process really holds.
pub(crate) const FRAG_OVERHEAD: usize = 2 * std::mem::size_of::<Frag>() + 32;

/// Memory a datagram in progress takes before any fragment: the tracker,
/// and what the table keeps for it (its key in the index and in the slot,
/// hash slack, timer entries).
pub(crate) const TRACKER_BASE: usize = std::mem::size_of::<Tracker>() + 192;

/// The largest datagram IP can express.
const MAX_DATAGRAM: usize = 65_535;

#[derive(Debug)]
pub(crate) struct Frag {
    /// Offset of `data[0]` in the datagram (after any trim on arrival).
    offset: u32,
    data: Box<[u8]>,
    /// Bytes at the front that later fragments took over.
    ltrim: u32,
    more: bool,
    /// The IP header and unfragmentable part, for the fragment that stays at
    /// offset 0 (empty for every other fragment).
    header: Box<[u8]>,
}

impl Frag {
    fn len(&self) -> u32 {
        self.data.len() as u32
    }

    fn end(&self) -> u32 {
        self.offset + self.len()
    }

    pub(crate) fn mem(&self) -> usize {
        FRAG_OVERHEAD + self.data.len() + self.header.len()
    }
}

/// What inserting one fragment did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Inserted {
    /// It overlapped data already held.
    pub overlap: bool,
    /// Bytes of memory it added (it may also have freed some: see `freed`).
    pub added: usize,
    pub freed: usize,
    /// Fragments added minus fragments removed.
    pub stored: bool,
    pub removed: u32,
}

/// Why a rebuild was given up (the tracker must be dropped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RebuildError {
    TooLarge,
    Malformed,
}

#[derive(Debug)]
pub(crate) struct Tracker {
    pub policy: Policy,
    pub ipv6: bool,
    frags: Vec<Frag>,
    seen_last: bool,
    /// The furthest byte any fragment reaches: a new fragment starting at or
    /// after it cannot overlap, which spares the policy scan for in-order
    /// arrivals.
    max_end: u32,
    /// The tracker expires when packet time passes this second.
    pub deadline: i64,
    /// Bytes held (fragments plus the tracker itself).
    pub mem: usize,
    pub generation: u32,
}

impl Tracker {
    pub(crate) fn new(policy: Policy, ipv6: bool, deadline: i64, generation: u32) -> Self {
        Tracker {
            policy,
            ipv6,
            frags: Vec::new(),
            seen_last: false,
            max_end: 0,
            deadline,
            mem: TRACKER_BASE,
            generation,
        }
    }

    pub(crate) fn frag_count(&self) -> usize {
        self.frags.len()
    }

    /// Memory a fragment of this size would take when stored whole.
    pub(crate) fn cost(f: &Fragment<'_>) -> usize {
        FRAG_OVERHEAD + f.data.len() + if f.offset == 0 { f.header.len() } else { 0 }
    }

    /// Applies the policy and stores what is left of `f`.
    pub(crate) fn insert(&mut self, f: &Fragment<'_>) -> Inserted {
        let mut r = Inserted::default();
        let frag_offset = f.offset;
        let data_len = f.data.len() as u32;
        let frag_end = frag_offset + data_len;
        let mut ltrim: u32 = 0;
        let mut drop_new = false;

        if !self.frags.is_empty() && frag_offset < self.max_end {
            // Suricata starts at the fragment before the first one at or past
            // the new offset; when none is, at the first fragment.
            let n = self.frags.partition_point(|x| x.offset < frag_offset);
            let mut prev = if n == self.frags.len() { 0 } else { n.saturating_sub(1) };
            while prev < self.frags.len() {
                let next = prev + 1;
                let has_next = next < self.frags.len();
                let (p_off, p_end, p_ltrim) = {
                    let p = &self.frags[prev];
                    (p.offset, p.end(), p.ltrim)
                };
                if frag_offset < p_end && p_off < frag_end {
                    r.overlap = true;
                }
                let mut skip_prev = false;
                let acted = match self.policy {
                    Policy::Bsd => {
                        if frag_offset < p_end {
                            if p_off <= frag_offset {
                                // The earlier fragment's data is preferred.
                                if p_end > frag_end {
                                    drop_new = true;
                                    true
                                } else {
                                    ltrim = p_end - frag_offset;
                                    if has_next && frag_end > self.frags[next].offset {
                                        self.frags[next].ltrim = frag_end - self.frags[next].offset;
                                    }
                                    true
                                }
                            } else {
                                // Starting before an existing fragment wins over its start.
                                if frag_offset <= p_off && frag_end > p_off + p_ltrim {
                                    let t = frag_end - p_off;
                                    if t > p_ltrim {
                                        self.frags[prev].ltrim = t;
                                    }
                                }
                                if has_next && frag_end > self.frags[next].offset {
                                    self.frags[next].ltrim = frag_end - self.frags[next].offset;
                                }
                                true
                            }
                        } else {
                            false
                        }
                    }
                    Policy::Linux => {
                        if p_off + p_ltrim < frag_offset + ltrim && p_end > frag_offset + ltrim {
                            ltrim += p_end - frag_offset;
                        }
                        if frag_offset + ltrim < p_off + p_ltrim && frag_end > p_off + p_ltrim {
                            self.frags[prev].ltrim += frag_end - (p_off + p_ltrim);
                            true
                        } else if frag_offset + ltrim <= p_off + p_ltrim && frag_end >= p_end {
                            skip_prev = true;
                            true
                        } else {
                            false
                        }
                    }
                    Policy::Windows => {
                        if frag_offset >= p_off && frag_end <= p_end {
                            drop_new = true;
                            true
                        } else if frag_offset < p_off && frag_end > p_end {
                            skip_prev = true;
                            true
                        } else if (frag_offset + ltrim > p_off + p_ltrim && frag_offset + ltrim < p_end)
                            || (frag_offset == p_off && frag_end > p_end)
                        {
                            // Overlapping its end, or starting with it: the old data wins.
                            ltrim += p_end - frag_offset;
                            true
                        } else {
                            false
                        }
                    }
                    Policy::Solaris => {
                        if frag_offset < p_end {
                            if frag_offset >= p_off {
                                ltrim = p_end - frag_offset;
                            }
                            if frag_offset < p_off && frag_end >= p_end {
                                skip_prev = true;
                            }
                            true
                        } else {
                            false
                        }
                    }
                    Policy::First => {
                        if frag_offset >= p_off && frag_end <= p_end {
                            drop_new = true;
                            true
                        } else if frag_offset < p_off {
                            true
                        } else if frag_offset < p_end {
                            ltrim = p_end - frag_offset;
                            true
                        } else {
                            false
                        }
                    }
                    Policy::Last => {
                        if frag_offset <= p_off {
                            if frag_end > p_off {
                                self.frags[prev].ltrim = frag_end - p_off;
                            }
                            true
                        } else {
                            false
                        }
                    }
                    Policy::BsdRight => false,
                };
                if !acted {
                    prev = next;
                    continue;
                }
                if !drop_new && (skip_prev || self.frags[prev].ltrim >= self.frags[prev].len()) {
                    // Completely covered now: no need to hold it.
                    let gone = self.frags.remove(prev);
                    r.freed += gone.mem();
                    r.removed += 1;
                }
                break;
            }
        }

        if drop_new || ltrim >= data_len {
            return r;
        }
        let offset = frag_offset + ltrim;
        let header: Box<[u8]> = if offset == 0 {
            let mut h = f.header.to_vec();
            if f.ipv6 {
                if let Some(b) = h.get_mut(f.next_header_at) {
                    *b = f.proto;
                }
            }
            h.into_boxed_slice()
        } else {
            Box::default()
        };
        let frag = Frag { offset, data: f.data[ltrim as usize..].into(), ltrim: 0, more: f.more, header };
        r.added = frag.mem();
        r.stored = true;
        self.max_end = self.max_end.max(frag.end());
        // After every fragment at the same offset: arrival order breaks ties.
        let at = self.frags.partition_point(|x| x.offset <= offset);
        self.frags.insert(at, frag);
        if !f.more {
            self.seen_last = true;
        }
        r
    }

    /// True once the last fragment was seen and no byte is missing.
    pub(crate) fn complete(&self) -> bool {
        if !self.seen_last {
            return false;
        }
        let Some(first) = self.frags.first() else { return false };
        if first.offset != 0 {
            return false;
        }
        let mut len = 0u32;
        for f in &self.frags {
            if f.offset > len {
                return false;
            }
            len = len.max(f.end());
        }
        true
    }

    /// Writes the reassembled datagram (IP header first) into `out`.
    pub(crate) fn rebuild(&self, out: &mut Vec<u8>) -> Result<(), RebuildError> {
        out.clear();
        let mut hlen = 0usize;
        let mut have_first = false;
        let mut fragmentable_len = 0usize;
        let mut prev_offset = 0u32;
        let mut more = true;
        for f in &self.frags {
            // A fragment past one without "more fragments" is not part of
            // the datagram, but one at the same offset may still win.
            if !more && f.offset > prev_offset {
                break;
            }
            if f.ltrim >= f.len() {
                continue;
            }
            if f.offset == 0 && !f.header.is_empty() {
                hlen = f.header.len();
                write_at(out, 0, &f.header);
                write_at(out, hlen, &f.data);
                fragmentable_len = f.data.len();
                have_first = true;
            } else {
                if !have_first {
                    return Err(RebuildError::Malformed);
                }
                let end = hlen + f.end() as usize;
                if end > MAX_DATAGRAM + hlen {
                    return Err(RebuildError::TooLarge);
                }
                write_at(out, hlen + (f.offset + f.ltrim) as usize, &f.data[f.ltrim as usize..]);
                fragmentable_len = fragmentable_len.max(f.end() as usize);
            }
            more = f.more;
            prev_offset = f.offset;
        }
        if !have_first {
            return Err(RebuildError::Malformed);
        }
        out.resize(hlen + fragmentable_len, 0);
        if self.ipv6 {
            let plen = hlen.checked_sub(40).ok_or(RebuildError::Malformed)? + fragmentable_len;
            if plen > MAX_DATAGRAM {
                return Err(RebuildError::TooLarge);
            }
            out[4..6].copy_from_slice(&(plen as u16).to_be_bytes());
        } else {
            let total = hlen + fragmentable_len;
            if total > MAX_DATAGRAM || hlen < 20 {
                return Err(if hlen < 20 { RebuildError::Malformed } else { RebuildError::TooLarge });
            }
            // New length, no fragment bits; the checksum is updated rather
            // than recomputed, so a bad one stays bad (RFC 1624).
            let old = [u16::from_be_bytes([out[2], out[3]]), u16::from_be_bytes([out[6], out[7]])];
            let new = [total as u16, 0u16];
            let mut sum = u16::from_be_bytes([out[10], out[11]]);
            for (o, n) in old.iter().zip(new.iter()) {
                sum = checksum_update(sum, *o, *n);
            }
            out[2..4].copy_from_slice(&new[0].to_be_bytes());
            out[6..8].copy_from_slice(&0u16.to_be_bytes());
            out[10..12].copy_from_slice(&sum.to_be_bytes());
        }
        Ok(())
    }

    pub(crate) fn frags_mem(&self) -> usize {
        self.frags.iter().map(Frag::mem).sum()
    }
}

/// Copies `data` to `out[at..]`, growing `out` (zero-filled) as needed.
fn write_at(out: &mut Vec<u8>, at: usize, data: &[u8]) {
    let end = at + data.len();
    if out.len() < end {
        out.resize(end, 0);
    }
    out[at..end].copy_from_slice(data);
}

/// RFC 1624 eqn. 3: the checksum after one 16-bit word changes from `old` to `new`.
fn checksum_update(hc: u16, old: u16, new: u16) -> u16 {
    let mut s = u32::from(!hc) + u32::from(!old) + u32::from(new);
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn incremental_checksum_matches_full() {
        let mut h = vec![0x45, 0, 0, 40, 0, 1, 0x20, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2];
        let full = |h: &[u8]| {
            let mut s = 0u32;
            for c in h.chunks(2) {
                s += u32::from(u16::from_be_bytes([c[0], c[1]]));
            }
            while s > 0xffff {
                s = (s & 0xffff) + (s >> 16);
            }
            !(s as u16)
        };
        let c = full(&h);
        h[10..12].copy_from_slice(&c.to_be_bytes());
        let mut sum = c;
        sum = checksum_update(sum, 40, 1500);
        sum = checksum_update(sum, 0x2000, 0);
        h[2..4].copy_from_slice(&1500u16.to_be_bytes());
        h[6..8].copy_from_slice(&[0, 0]);
        h[10..12].copy_from_slice(&[0, 0]);
        assert_eq!(sum, full(&h));
    }
}
