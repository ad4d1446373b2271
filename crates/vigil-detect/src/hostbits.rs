//! `xbits` and `hostbits`: named bits kept per host (`track ip_src|ip_dst`,
//! `hostbits:...,src|dst`) or per IP pair (`track ip_pair`), each with an
//! expiry in packet time, so a rule can depend on what an earlier flow
//! between the same hosts showed.
//!
//! As in Suricata, `hostbits` and `xbits` on a host share their bits (one
//! name is one bit, whichever keyword set it), and an IP pair is the same
//! pair in either direction.
//!
//! The tables live in [`crate::host_state::HostState`], which every worker
//! shares, so a bit one worker set is seen by all. Each table's size is
//! capped ([`HostBits::with_capacity`]); a set that finds it full of live
//! bits is not kept and is counted. A bit is known by a hash of its name
//! ([`bit_id`]), not by an engine's numbering, so a rule reload (which each
//! worker takes at its own time) finds the bits the old rules set.

use std::collections::HashMap;
use std::net::IpAddr;
use vigil_rules::keywords::flow::{BitCmd, Bits};
use vigil_types::Timestamp;

/// Suricata's expiry when a rule names none, in seconds.
pub const DEFAULT_EXPIRE_SECS: u32 = 30;

/// Bits a worker keeps by default; about 48 bytes each with the hash table's overhead.
pub const DEFAULT_CAPACITY: usize = 1 << 16;

/// Whose bit a keyword reads or writes: the packet's source or destination
/// host, or the pair of both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Track {
    Src,
    Dst,
    Pair,
}

/// One `xbits`/`hostbits` keyword; `N` is the bit name as written, then its id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostBitOp<N> {
    pub name: N,
    pub track: Track,
    /// Set, unset, toggle, isset or isnotset.
    pub cmd: BitCmd,
    pub expire_secs: u32,
}

impl HostBitOp<String> {
    /// Reads a parsed keyword; `Ok(None)` for `noalert`, `Err` for what the
    /// engine does not run (the rule is then not loaded).
    pub fn from_keyword(keyword: &str, b: &Bits) -> Result<Option<HostBitOp<String>>, String> {
        if b.cmd == BitCmd::NoAlert {
            return Ok(None);
        }
        // Several names joined by `|` or `&` are a flowbits form only.
        let [name] = b.names.as_slice() else {
            return Err(format!("{keyword} with several names"));
        };
        let mut track = if keyword == "hostbits" { Some(Track::Src) } else { None };
        let mut expire_secs = DEFAULT_EXPIRE_SECS;
        for a in &b.args {
            let mut words = a.split_whitespace();
            match (words.next(), words.next()) {
                (Some("track"), Some("ip_src")) | (Some("src"), None) => track = Some(Track::Src),
                (Some("track"), Some("ip_dst")) | (Some("dst"), None) => track = Some(Track::Dst),
                (Some("track"), Some("ip_pair")) => track = Some(Track::Pair),
                (Some("expire"), Some(n)) => {
                    expire_secs = n.parse().map_err(|_| format!("{keyword} expire '{n}'"))?;
                }
                _ => return Err(format!("{keyword} option '{a}'")),
            }
        }
        let track = track.ok_or_else(|| format!("{keyword} without a track"))?;
        Ok(Some(HostBitOp { name: name.clone(), track, cmd: b.cmd, expire_secs }))
    }
}

/// A bit name's id: FNV-1a over its bytes, the same in every engine and run.
pub fn bit_id(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Key {
    Host(IpAddr, u64),
    /// The lower address first, so both directions find one bit.
    Pair(IpAddr, IpAddr, u64),
}

impl Key {
    /// Whose bit `op` means for a packet from `src` to `dst`.
    pub(crate) fn of(op: &HostBitOp<u64>, src: IpAddr, dst: IpAddr) -> Key {
        match op.track {
            Track::Src => Key::Host(src, op.name),
            Track::Dst => Key::Host(dst, op.name),
            Track::Pair => Key::Pair(src.min(dst), src.max(dst), op.name),
        }
    }

    /// The address a table shard is chosen by (the lower one for a pair).
    pub(crate) fn host(&self) -> IpAddr {
        match *self {
            Key::Host(a, _) | Key::Pair(a, _, _) => a,
        }
    }
}

/// Host and IP-pair bits, each with the packet second it expires at.
#[derive(Debug, Clone)]
pub struct HostBits {
    bits: HashMap<Key, i64>,
    capacity: usize,
    /// Sets not kept because the table was full of live bits.
    pub memcap_hits: u64,
}

impl Default for HostBits {
    fn default() -> Self {
        HostBits::with_capacity(DEFAULT_CAPACITY)
    }
}

impl HostBits {
    pub fn with_capacity(capacity: usize) -> HostBits {
        HostBits { bits: HashMap::new(), capacity, memcap_hits: 0 }
    }

    /// Bits held now, live or expired but not yet swept.
    pub fn len(&self) -> usize {
        self.bits.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bits.is_empty()
    }

    fn live(&self, key: &Key, now: i64) -> bool {
        self.bits.get(key).is_some_and(|&until| until > now)
    }

    /// `isset` / `isnotset` for a packet from `src` to `dst` at `ts`.
    pub fn test(&self, op: &HostBitOp<u64>, src: IpAddr, dst: IpAddr, ts: Timestamp) -> bool {
        let set = self.live(&Key::of(op, src, dst), ts.secs());
        match op.cmd {
            BitCmd::IsSet => set,
            BitCmd::IsNotSet => !set,
            _ => true,
        }
    }

    /// `set` / `unset` / `toggle`, after the signature matched.
    pub fn apply(&mut self, op: &HostBitOp<u64>, src: IpAddr, dst: IpAddr, ts: Timestamp) {
        let now = ts.secs();
        let key = Key::of(op, src, dst);
        let set = match op.cmd {
            BitCmd::Set => true,
            BitCmd::Unset => false,
            BitCmd::Toggle => !self.live(&key, now),
            _ => return,
        };
        if !set {
            self.bits.remove(&key);
            return;
        }
        if !self.bits.contains_key(&key) && self.bits.len() >= self.capacity {
            self.bits.retain(|_, until| *until > now);
            if self.bits.len() >= self.capacity {
                self.memcap_hits += 1;
                return;
            }
        }
        // Setting a set bit again renews its expiry.
        self.bits.insert(key, now.saturating_add(op.expire_secs as i64));
    }
}

/// Suricata's ordering rank for a signature's host bits, as for flowbits:
/// writers first, then writers that also read, then the rest, then readers.
pub fn rank(ops: &[HostBitOp<String>]) -> u8 {
    let writes = ops.iter().any(|o| !o.cmd.is_check());
    let reads = ops.iter().any(|o| o.cmd.is_check());
    match (writes, reads) {
        (true, false) => 0,
        (true, true) => 1,
        (false, false) => 2,
        (false, true) => 3,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(kw: &str, text: &str) -> HostBitOp<u64> {
        let b = Bits {
            cmd: match text.split(',').next().unwrap() {
                "set" => BitCmd::Set,
                "unset" => BitCmd::Unset,
                "toggle" => BitCmd::Toggle,
                "isset" => BitCmd::IsSet,
                _ => BitCmd::IsNotSet,
            },
            names: vec![text.split(',').nth(1).unwrap().to_string()],
            any: false,
            args: text.split(',').skip(2).map(|s| s.trim().to_string()).collect(),
        };
        let o = HostBitOp::from_keyword(kw, &b).unwrap().unwrap();
        HostBitOp { name: bit_id(&o.name), track: o.track, cmd: o.cmd, expire_secs: o.expire_secs }
    }

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([10, 0, 0, last])
    }

    fn at(secs: i64) -> Timestamp {
        Timestamp::from_secs_nanos(secs, 0)
    }

    #[test]
    fn a_host_bit_set_by_dst_is_seen_by_src_until_it_expires() {
        let mut t = HostBits::default();
        t.apply(&op("xbits", "set,a,track ip_dst,expire 10"), ip(1), ip(2), at(100));
        // The reply comes from host 2: its source.
        let reply = op("xbits", "isset,a,track ip_src");
        assert!(t.test(&reply, ip(2), ip(1), at(109)));
        assert!(!t.test(&reply, ip(1), ip(2), at(109)), "host 1 has no bit");
        assert!(!t.test(&reply, ip(2), ip(1), at(110)), "expired");
        // hostbits name the same bit.
        assert!(t.test(&op("hostbits", "isset,a,dst"), ip(1), ip(2), at(105)));
        assert!(t.test(&op("hostbits", "isnotset,a"), ip(1), ip(2), at(105)));
    }

    #[test]
    fn pairs_match_either_direction_and_toggle_flips() {
        let mut t = HostBits::default();
        let set = op("xbits", "toggle,a,track ip_pair");
        t.apply(&set, ip(1), ip(2), at(0));
        assert!(t.test(&op("xbits", "isset,a,track ip_pair"), ip(2), ip(1), at(29)));
        assert!(!t.test(&op("xbits", "isset,a,track ip_pair"), ip(2), ip(3), at(29)));
        assert!(!t.test(&op("xbits", "isset,b,track ip_pair"), ip(2), ip(1), at(29)));
        t.apply(&set, ip(2), ip(1), at(1));
        assert!(t.test(&op("xbits", "isnotset,a,track ip_pair"), ip(1), ip(2), at(1)));
        // Toggling an expired bit sets it again.
        t.apply(&set, ip(1), ip(2), at(2));
        t.apply(&set, ip(1), ip(2), at(40));
        assert!(t.test(&op("xbits", "isset,a,track ip_pair"), ip(1), ip(2), at(41)));
        t.apply(&op("xbits", "unset,a,track ip_pair"), ip(1), ip(2), at(42));
        assert!(t.is_empty());
    }

    #[test]
    fn a_full_table_sweeps_expired_bits_then_counts_refusals() {
        let mut t = HostBits::with_capacity(2);
        let set = op("hostbits", "set,a,src,expire 5");
        t.apply(&set, ip(1), ip(9), at(0));
        t.apply(&set, ip(2), ip(9), at(0));
        t.apply(&set, ip(3), ip(9), at(1));
        assert_eq!((t.len(), t.memcap_hits), (2, 1));
        // Renewing a bit held needs no room.
        t.apply(&set, ip(2), ip(9), at(3));
        assert_eq!(t.memcap_hits, 1);
        // At 5 host 1's bit is gone: room again.
        t.apply(&set, ip(3), ip(9), at(5));
        assert_eq!((t.len(), t.memcap_hits), (2, 1));
        assert!(t.test(&op("hostbits", "isset,a"), ip(3), ip(9), at(6)));
    }

    #[test]
    fn options_the_engine_cannot_run_are_refused() {
        let b = |args: &[&str]| Bits {
            cmd: BitCmd::Set,
            names: vec!["a".into()],
            any: false,
            args: args.iter().map(|s| s.to_string()).collect(),
        };
        assert!(HostBitOp::from_keyword("xbits", &b(&["track tx"])).is_err());
        assert!(HostBitOp::from_keyword("xbits", &b(&[])).is_err());
        assert!(HostBitOp::from_keyword("hostbits", &b(&["both"])).is_err());
        let o = HostBitOp::from_keyword("xbits", &b(&["track ip_src", "expire 60"])).unwrap().unwrap();
        assert_eq!((o.track, o.expire_secs), (Track::Src, 60));
    }

    #[test]
    fn a_name_has_one_id_in_every_engine() {
        assert_eq!(bit_id("a"), bit_id("a"));
        assert_ne!(bit_id("a"), bit_id("b"));
        // FNV-1a's published value for the empty string and for "a".
        assert_eq!(bit_id(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(bit_id("a"), 0xaf63_dc4c_8601_ec8c);
    }
}
