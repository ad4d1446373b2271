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
