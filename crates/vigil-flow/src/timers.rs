//! A timing wheel of one-second slots: each live flow has one entry, filed
//! under the second it would time out. Entries are checked when their
//! second comes; a flow that saw packets meanwhile is filed again under its
//! new deadline. Work per packet is bounded by the seconds that passed
//! (at most one turn of the wheel) plus the entries due.

/// Slots in the wheel: deadlines further out than this are revisited once
/// per turn until due.
const SLOTS: usize = 1024;

/// Entries a slot's emptied allocation may keep for its next turn. A burst
/// of new flows files many entries under a few seconds; keeping those
/// allocations would hold memory the flow memcap does not see.
const KEEP: usize = 1024;

/// (flow slot, generation): the generation tells a stale entry (its flow
/// ended and the slot was reused) from a live one.
pub(crate) type Entry = (u32, u32);

#[derive(Debug)]
pub(crate) struct Wheel {
    slots: Vec<Vec<Entry>>,
    /// The last second whose slot was processed (`None` before the first packet).
    now: Option<i64>,
    len: usize,
    /// Entries to file again after a tick (kept to reuse its allocation).
    refile: Vec<(Entry, i64)>,
}

impl Wheel {
    pub(crate) fn new() -> Self {
        Wheel { slots: (0..SLOTS).map(|_| Vec::new()).collect(), now: None, len: 0, refile: Vec::new() }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    fn index(sec: i64) -> usize {
        sec.rem_euclid(SLOTS as i64) as usize
    }

    /// Files `e` under second `due`. Deadlines already past go to the next
    /// second to be processed, so they are seen at once.
    pub(crate) fn insert(&mut self, e: Entry, due: i64) {
        let due = match self.now {
            Some(now) if due <= now => now + 1,
            _ => due,
        };
        self.slots[Self::index(due)].push(e);
        self.len += 1;
    }

    /// Moves the clock to `sec` and hands every entry filed under the
    /// seconds passed to `check` (with the current second), which returns
    /// `Some(new_due)` to refile the entry or `None` to drop it.
    pub(crate) fn advance(&mut self, sec: i64, mut check: impl FnMut(Entry, i64) -> Option<i64>) {
        let from = match self.now {
            None => {
                self.now = Some(sec);
                // Entries filed before the first tick are due no earlier.
                sec
            }
            Some(n) if sec <= n => return,
            Some(n) => n + 1,
        };
        self.now = Some(sec);
        // Past one full turn every slot has been visited once.
        let first = from.max(sec - SLOTS as i64 + 1);
        let mut refile = std::mem::take(&mut self.refile);
        for s in first..=sec {
            let i = Self::index(s);
            if self.slots[i].is_empty() {
                continue;
            }
            let mut batch = std::mem::take(&mut self.slots[i]);
            self.len -= batch.len();
            for e in batch.drain(..) {
                if let Some(due) = check(e, sec) {
                    refile.push((e, due));
                }
            }
            // Keep a modest allocation for the slot's next turn.
            if self.slots[i].is_empty() && batch.capacity() <= KEEP {
                self.slots[i] = batch;
            }
        }
        for (e, due) in refile.drain(..) {
            self.insert(e, due);
        }
        if refile.capacity() <= KEEP {
            self.refile = refile;
        }
    }

    /// Drops every entry (the table was flushed).
    pub(crate) fn clear(&mut self) {
        for s in &mut self.slots {
            if s.capacity() > KEEP {
                *s = Vec::new();
            } else {
                s.clear();
            }
        }
        self.len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_come_due_in_their_second() {
        let mut w = Wheel::new();
        w.advance(100, |_, _| None);
        w.insert((1, 0), 130);
        w.insert((2, 0), 101);
        w.insert((3, 0), 100 + 5000);
        let mut seen = Vec::new();
        w.advance(129, |e, now| {
            seen.push((e.0, now));
            None
        });
        assert_eq!(seen, vec![(2, 129)]);
        seen.clear();
        w.advance(130, |e, now| {
            seen.push((e.0, now));
            None
        });
        assert_eq!(seen, vec![(1, 130)]);
        // A far deadline is revisited each turn and refiled.
        seen.clear();
        w.advance(10_000, |e, now| {
            seen.push((e.0, now));
            if now >= 5100 {
                None
            } else {
                Some(5100)
            }
        });
        assert_eq!(seen, vec![(3, 10_000)]);
        assert_eq!(w.len(), 0);
    }

    #[test]
    fn time_going_back_is_ignored() {
        let mut w = Wheel::new();
        w.advance(50, |_, _| None);
        w.insert((1, 0), 40);
        w.advance(49, |_, _| panic!("no tick backwards"));
        let mut n = 0;
        w.advance(51, |_, _| {
            n += 1;
            None
        });
        assert_eq!(n, 1);
    }
}
