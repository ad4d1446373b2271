//! Flows announced by other flows (FTP data channels): Suricata's
//! expectations, shared by every worker, since the announcing flow and the
//! flow it announces hash to different workers as often as not.
//!
//! A parser says what comes ([`vigil_applayer::proto::Expectation`]); the
//! worker that owns the announcing flow files it here under the two hosts'
//! addresses, and the worker that sees the first data of a new TCP flow
//! between them to that port takes it, so the flow speaks the announced
//! protocol from its first byte. A new flow pays one atomic load while no
//! expectation waits, and a lookup by channel while some do, however many.
//! Entries are bounded in number (the oldest goes, counted) and in age
//! (packet time).

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use vigil_applayer::proto::{Expectation, Expected, ProtoDef};
use vigil_types::{Direction, FlowKey, Timestamp};

/// Expectations kept at once, over all workers.
pub(crate) const MAX_ENTRIES: usize = 4096;
/// Seconds of packet time an expectation waits for its flow.
pub(crate) const MAX_AGE_SECS: i64 = 3600;

/// A data channel: the opening end, the answering end, its port.
type Channel = ([u8; 16], [u8; 16], u16);

struct Entry {
    proto: &'static ProtoDef,
    data: Expected,
    /// The announcing flow's `flow_id`.
    parent: u64,
    /// Its place in [`Table::by_age`].
    age_key: (Timestamp, u64),
}

/// What a new flow gets from the expectation it met.
pub(crate) struct Met {
    pub proto: &'static ProtoDef,
    pub data: Expected,
    pub parent: u64,
}

/// The entries by channel, and the same channels oldest first, so that
/// filing, meeting and ageing out each cost a lookup, however many wait.
#[derive(Default)]
struct Table {
    by_channel: HashMap<Channel, Entry>,
    by_age: BTreeMap<(Timestamp, u64), Channel>,
    seq: u64,
}

impl Table {
    fn remove(&mut self, channel: &Channel) -> Option<Entry> {
        let e = self.by_channel.remove(channel)?;
        self.by_age.remove(&e.age_key);
        Some(e)
    }

    fn pop_oldest(&mut self) -> bool {
        match self.by_age.pop_first() {
            Some((_, channel)) => self.by_channel.remove(&channel).is_some(),
            None => false,
        }
    }
}

#[derive(Default)]
pub struct Expectations {
    table: Mutex<Table>,
    /// Entries waiting, read without the lock.
    len: AtomicUsize,
    /// Filed since the start.
    pub filed: AtomicU64,
    /// Met by a flow.
    pub met: AtomicU64,
    /// Dropped unmet: too old, or pushed out by newer ones.
    pub dropped: AtomicU64,
}

impl std::fmt::Debug for Expectations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Expectations").field("waiting", &self.waiting()).finish_non_exhaustive()
    }
}

impl Expectations {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Expectations::default())
    }

    /// Waiting now (`app_layer.expectations`).
    pub(crate) fn waiting(&self) -> u64 {
        self.len.load(Ordering::Relaxed) as u64
    }

    /// Files what the flow `key` (id `parent`) announced at `now`.
    pub(crate) fn file(&self, key: &FlowKey, parent: u64, now: Timestamp, list: Vec<Expectation>) {
        if list.is_empty() {
            return;
        }
        let mut t = self.table.lock().unwrap_or_else(|e| e.into_inner());
        for e in list {
            let channel = match e.from {
                Direction::ToServer => (key.src, key.dst, e.port),
                Direction::ToClient => (key.dst, key.src, e.port),
            };
            // A newer announcement of the same channel replaces the older.
            t.remove(&channel);
            if t.by_channel.len() >= MAX_ENTRIES && t.pop_oldest() {
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
            t.seq += 1;
            let age_key = (now, t.seq);
            t.by_age.insert(age_key, channel);
            t.by_channel.insert(channel, Entry { proto: e.proto, data: e.data, parent, age_key });
            self.filed.fetch_add(1, Ordering::Relaxed);
        }
        self.len.store(t.by_channel.len(), Ordering::Relaxed);
    }

    /// The expectation a new flow `key` meets at `now`, taken.
    pub(crate) fn meet(&self, key: &FlowKey, now: Timestamp) -> Option<Met> {
        if self.len.load(Ordering::Relaxed) == 0 {
            return None;
        }
        let mut t = self.table.lock().unwrap_or_else(|e| e.into_inner());
        while t.by_age.first_key_value().is_some_and(|((filed, _), _)| now.secs() - filed.secs() > MAX_AGE_SECS) {
            t.pop_oldest();
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
        // The flow as opened, or as picked up the other way round.
        let met = t
            .remove(&(key.src, key.dst, key.dport))
            .or_else(|| t.remove(&(key.dst, key.src, key.sport)))
            .map(|x| Met { proto: x.proto, data: x.data, parent: x.parent });
        if met.is_some() {
            self.met.fetch_add(1, Ordering::Relaxed);
        }
        self.len.store(t.by_channel.len(), Ordering::Relaxed);
        met
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::IpAddr;
    use std::sync::Arc;
    use vigil_applayer::protocols::ftp_data::{DataChannel, PROTO};

    fn key(src: &str, dst: &str, sport: u16, dport: u16) -> FlowKey {
        let (s, d): (IpAddr, IpAddr) = (src.parse().unwrap(), dst.parse().unwrap());
        FlowKey::new(s, sport, d, dport, 6)
    }

    fn channel(port: u16, from: Direction) -> Expectation {
        let data: Expected = Arc::new(DataChannel { command: "RETR", file_name: None, file_dir: Direction::ToClient });
        Expectation { from, port, proto: &PROTO, data }
    }

    #[test]
    fn a_channel_is_met_once_by_the_flow_it_names() {
        let t = Expectations::new();
        let control = key("198.18.0.1", "198.18.0.2", 40000, 21);
        let now = Timestamp::from_micros(100, 0);
        assert!(t.meet(&key("198.18.0.1", "198.18.0.2", 40001, 5001), now).is_none());
        t.file(&control, 7, now, vec![channel(5001, Direction::ToServer), channel(6000, Direction::ToClient)]);
        assert_eq!(t.waiting(), 2);
        assert!(t.meet(&key("198.18.0.9", "198.18.0.2", 40001, 5001), now).is_none(), "another host");
        let met = t.meet(&key("198.18.0.1", "198.18.0.2", 40001, 5001), now).unwrap();
        assert_eq!((met.parent, met.proto.name), (7, "ftp-data"));
        assert!(t.meet(&key("198.18.0.1", "198.18.0.2", 40002, 5001), now).is_none(), "taken");
        // Active mode: the server connects to the client's port.
        assert!(t.meet(&key("198.18.0.2", "198.18.0.1", 20, 6000), now).is_some());
        assert_eq!((t.waiting(), t.met.load(Ordering::Relaxed)), (0, 2));
    }

    #[test]
    fn old_and_excess_entries_are_dropped_and_counted() {
        let t = Expectations::new();
        let control = key("198.18.0.1", "198.18.0.2", 40000, 21);
        let then = Timestamp::from_micros(100, 0);
        t.file(&control, 1, then, (0..MAX_ENTRIES as u16 + 3).map(|p| channel(p + 1, Direction::ToServer)).collect());
        assert_eq!((t.waiting(), t.dropped.load(Ordering::Relaxed)), (MAX_ENTRIES as u64, 3));
        let later = Timestamp::from_micros(100 + MAX_AGE_SECS + 1, 0);
        assert!(t.meet(&key("198.18.0.1", "198.18.0.2", 40001, 10), later).is_none());
        assert_eq!((t.waiting(), t.dropped.load(Ordering::Relaxed)), (0, MAX_ENTRIES as u64 + 3));
    }
}
