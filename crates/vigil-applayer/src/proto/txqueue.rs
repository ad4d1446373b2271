//! The transactions a parser holds, oldest first: ids handed out in order
//! from the flow's first, a bound past which the oldest goes unpruned
//! (counted for [`super::ProtoParser::txs_evicted`]), and the parser
//! contract's lookups, so a protocol writes only what is its own.

use std::collections::VecDeque;
use std::ops::{Deref, DerefMut};

use super::ProtoTx;

#[derive(Debug)]
pub struct TxQueue<T> {
    txs: VecDeque<T>,
    next_id: u64,
    max: usize,
    evicted: u64,
}

impl<T: ProtoTx> TxQueue<T> {
    /// Ids start at `first_id`; at most `max` (at least one) are held.
    pub fn new(first_id: u64, max: usize) -> Self {
        TxQueue { txs: VecDeque::new(), next_id: first_id, max: max.max(1), evicted: 0 }
    }

    /// The id the next transaction gets.
    pub fn next_id(&self) -> u64 {
        self.next_id
    }

    /// Adds the transaction `make` builds with the next id, the oldest
    /// going first when the queue is full; the new one's place.
    pub fn push_with(&mut self, make: impl FnOnce(u64) -> T) -> usize {
        if self.txs.len() >= self.max {
            self.txs.pop_front();
            self.evicted += 1;
        }
        let tx = make(self.next_id);
        self.next_id += 1;
        self.txs.push_back(tx);
        self.txs.len() - 1
    }

    /// Transactions dropped unpruned at the bound.
    pub fn evicted(&self) -> u64 {
        self.evicted
    }

    /// Drops the oldest transaction unpruned (a parser's own memory bound
    /// was reached), counted with those dropped at the bound.
    pub fn evict_oldest(&mut self) {
        if self.txs.pop_front().is_some() {
            self.evicted += 1;
        }
    }

    /// The place of transaction `id` (ids grow with the queue's order).
    pub fn place(&self, id: u64) -> Option<usize> {
        self.txs.binary_search_by_key(&id, |t| t.id()).ok()
    }

    /// Transaction `id`.
    pub fn by_id_mut(&mut self, id: u64) -> Option<&mut T> {
        let at = self.place(id)?;
        self.txs.get_mut(at)
    }

    /// Keeps what the transactions hold within `budget`: `held` is an
    /// upper bound the caller grows as bytes come, so they are weighed
    /// (`weight` of each) only past the budget; then the oldest go,
    /// counted as evicted and each shown to `going` first, until the rest
    /// fit (the newest always stays). `held` is left at the exact weight.
    pub fn keep_within(
        &mut self,
        held: &mut usize,
        budget: usize,
        weight: impl Fn(&T) -> usize,
        mut going: impl FnMut(&mut T),
    ) {
        if *held <= budget {
            return;
        }
        let weigh = |txs: &VecDeque<T>| txs.iter().map(&weight).sum::<usize>();
        *held = weigh(&self.txs);
        while self.txs.len() > 1 && *held > budget {
            if let Some(t) = self.txs.front_mut() {
                going(t);
            }
            self.evict_oldest();
            *held = weigh(&self.txs);
        }
    }

    /// Transaction `i` as the parser contract answers it.
    pub fn tx(&self, i: usize) -> Option<&dyn ProtoTx> {
        self.txs.get(i).map(|t| t as &dyn ProtoTx)
    }

    /// Frees the oldest transactions with an id below `id` that `done` says
    /// are finished (a logged transaction still under way stays).
    pub fn prune_while(&mut self, id: u64, done: impl Fn(&T) -> bool) {
        while self.txs.front().is_some_and(|t| t.id() < id && done(t)) {
            self.txs.pop_front();
        }
    }
}

impl<T> Deref for TxQueue<T> {
    type Target = VecDeque<T>;
    fn deref(&self) -> &VecDeque<T> {
        &self.txs
    }
}

impl<T> DerefMut for TxQueue<T> {
    fn deref_mut(&mut self) -> &mut VecDeque<T> {
        &mut self.txs
    }
}

/// The parser contract's transaction lookups ([`super::ProtoParser::tx_count`],
/// `tx`, `next_tx_id`, `txs_evicted`) answered from the parser's
/// [`TxQueue`] field `$field`: written inside `impl ProtoParser for ...`.
macro_rules! delegate_txs {
    ($field:ident) => {
        fn tx_count(&self) -> usize {
            self.$field.len()
        }

        fn tx(&self, i: usize) -> Option<&dyn $crate::proto::ProtoTx> {
            self.$field.tx(i)
        }

        fn next_tx_id(&self) -> u64 {
            self.$field.next_id()
        }

        fn txs_evicted(&self) -> u64 {
            self.$field.evicted()
        }
    };
}
pub(crate) use delegate_txs;

/// The rest of the parser contract for a datagram protocol whose every
/// message is a finished transaction ([`delegate_txs`] included): a
/// datagram stands alone, so a gap loses nothing after it, the flow's end
/// finishes nothing, and every logged transaction can go.
macro_rules! datagram_txs {
    ($field:ident) => {
        fn on_gap(&mut self, _dir: vigil_types::Direction, _len: u64) -> bool {
            true
        }

        fn close(&mut self, _dir: vigil_types::Direction, _held: &[u8]) {}

        $crate::proto::delegate_txs!($field);

        fn prune(&mut self, id: u64) {
            self.$field.prune_while(id, |_| true);
        }
    };
}
pub(crate) use datagram_txs;
