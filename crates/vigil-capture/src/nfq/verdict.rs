//! Which verdict messages to send, and when: the bookkeeping behind
//! [`super::NfQueue::verdict`], free of any I/O so it can be tested alone.
//!
//! A batch verdict (`NFQNL_MSG_VERDICT_BATCH`) applies to *every* queued
//! packet whose id is at most the one given. So a batch may only grow while
//! verdicts arrive for the oldest packet still waiting; a verdict for a later
//! packet (out of order), a drop, or a change of verdict/mark flushes the
//! batch and goes out on its own (drops as in Suricata's verdict cache).

use std::collections::VecDeque;

pub(super) const NF_DROP: u32 = 0;
pub(super) const NF_ACCEPT: u32 = 1;
pub(super) const NF_QUEUE: u32 = 3;
pub(super) const NF_REPEAT: u32 = 4;

/// One verdict message to send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Out {
    /// A batch verdict (all ids `<= id`) rather than a single one.
    pub(super) batch: bool,
    pub(super) id: u32,
    pub(super) code: u32,
    pub(super) mark: Option<u32>,
}

#[derive(Debug, Clone, Copy)]
struct Cached {
    last_id: u32,
    code: u32,
    mark: Option<u32>,
    len: u32,
}

#[derive(Debug)]
pub(super) struct Verdicts {
    /// Packets handed out and not yet given a verdict: (id, mark), oldest first.
    waiting: VecDeque<(u32, u32)>,
    /// Verdicts to collect before sending one batch; 1 sends each at once.
    batch: u32,
    cache: Option<Cached>,
}

impl Verdicts {
    pub(super) fn new(batch: u32) -> Self {
        Verdicts { waiting: VecDeque::new(), batch: batch.max(1), cache: None }
    }

    pub(super) fn received(&mut self, id: u32, mark: u32) {
        self.waiting.push_back((id, mark));
    }

    /// Records the verdict for `id`. `decide` maps the packet's mark to the
    /// verdict code and the mark to set. Messages to send now are pushed to
    /// `out` in order. Returns `false` (and sends nothing) when `id` is not
    /// waiting for a verdict.
    pub(super) fn verdict(
        &mut self,
        id: u32,
        decide: impl FnOnce(u32) -> (u32, Option<u32>),
        out: &mut Vec<Out>,
    ) -> bool {
        let Some(pos) = self.waiting.iter().position(|&(w, _)| w == id) else {
            return false;
        };
        let (_, pkt_mark) = self.waiting.remove(pos).expect("position is in range");
        let (code, mark) = decide(pkt_mark);
        if self.batch > 1 && code != NF_DROP && pos == 0 {
            if let Some(c) = self.cache {
                if c.code != code || c.mark != mark {
                    self.flush(out);
                }
            }
            let c = self.cache.get_or_insert(Cached { last_id: id, code, mark, len: 0 });
            c.last_id = id;
            c.len += 1;
            if c.len >= self.batch {
                self.flush(out);
            }
        } else {
            self.flush(out);
            out.push(Out { batch: false, id, code, mark });
        }
        true
    }

    /// Sends whatever the batch holds.
    pub(super) fn flush(&mut self, out: &mut Vec<Out>) {
        if let Some(c) = self.cache.take() {
            out.push(Out { batch: c.len > 1, id: c.last_id, code: c.code, mark: c.mark });
        }
    }

    /// Verdicts collected and not yet sent.
    #[cfg(test)]
    pub(super) fn cached(&self) -> u32 {
        self.cache.map_or(0, |c| c.len)
    }

    pub(super) fn waiting(&self) -> usize {
        self.waiting.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accept(_: u32) -> (u32, Option<u32>) {
        (NF_ACCEPT, None)
    }

    fn drop(_: u32) -> (u32, Option<u32>) {
        (NF_DROP, None)
    }

    fn single(id: u32, code: u32) -> Out {
        Out { batch: false, id, code, mark: None }
    }

    #[test]
    fn unbatched_sends_each() {
        let mut v = Verdicts::new(1);
        let mut out = Vec::new();
        v.received(1, 0);
        v.received(2, 0);
        assert!(v.verdict(2, accept, &mut out));
        assert!(v.verdict(1, drop, &mut out));
        assert!(!v.verdict(1, drop, &mut out), "second verdict for the same id");
        assert!(!v.verdict(9, accept, &mut out), "never received");
        assert_eq!(out, vec![single(2, NF_ACCEPT), single(1, NF_DROP)]);
        assert_eq!(v.waiting(), 0);
    }

    #[test]
    fn in_order_accepts_batch_up() {
        let mut v = Verdicts::new(4);
        let mut out = Vec::new();
        for id in 10..20 {
            v.received(id, 0);
        }
        for id in 10..15 {
            v.verdict(id, accept, &mut out);
        }
        assert_eq!(out, vec![Out { batch: true, id: 13, code: NF_ACCEPT, mark: None }]);
        assert_eq!(v.cached(), 1);
        out.clear();
        // A drop flushes the batch (id 14) and goes out alone.
        v.verdict(15, drop, &mut out);
        assert_eq!(out, vec![single(14, NF_ACCEPT), single(15, NF_DROP)]);
        out.clear();
        // Out of order: 19 before 16..18 must not batch (it would cover them).
        v.verdict(19, accept, &mut out);
        assert_eq!(out, vec![single(19, NF_ACCEPT)]);
        out.clear();
        for id in 16..19 {
            v.verdict(id, accept, &mut out);
        }
        assert!(out.is_empty());
        v.flush(&mut out);
        assert_eq!(out, vec![Out { batch: true, id: 18, code: NF_ACCEPT, mark: None }]);
        assert_eq!(v.waiting(), 0);
    }

    #[test]
    fn a_batch_never_covers_a_packet_still_waiting() {
        let mut v = Verdicts::new(8);
        let mut out = Vec::new();
        for id in 1..=5 {
            v.received(id, 0);
        }
        // 2 is not the oldest waiting (1 is), so it goes alone.
        v.verdict(2, accept, &mut out);
        v.verdict(1, accept, &mut out);
        v.verdict(3, accept, &mut out);
        v.flush(&mut out);
        assert_eq!(out, vec![single(2, NF_ACCEPT), Out { batch: true, id: 3, code: NF_ACCEPT, mark: None }]);
    }

    #[test]
    fn differing_marks_split_batches() {
        let mut v = Verdicts::new(8);
        let mut out = Vec::new();
        for (id, mark) in [(1, 0), (2, 0), (3, 5)] {
            v.received(id, mark);
        }
        let repeat = |m: u32| (NF_REPEAT, Some(0x100 | m));
        v.verdict(1, repeat, &mut out);
        v.verdict(2, repeat, &mut out);
        v.verdict(3, repeat, &mut out);
        v.flush(&mut out);
        assert_eq!(
            out,
            vec![
                Out { batch: true, id: 2, code: NF_REPEAT, mark: Some(0x100) },
                Out { batch: false, id: 3, code: NF_REPEAT, mark: Some(0x105) },
            ]
        );
    }
}
