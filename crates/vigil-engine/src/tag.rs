//! `tag`: an alert whose rule says `tag` has the next packets of its session,
//! or of one of its hosts, logged too, as EVE `packet` records (with the
//! alert output's `tagged-packets: yes`). A tag lasts a number of packets or
//! bytes, the alerting packet counting as the first, or a number of seconds
//! from it. Session tags live with the flow; host tags in a table of each
//! worker, bounded, as hostbits are (with several workers, a host's tag is
//! seen by the worker that set it only).

use std::collections::HashMap;
use std::net::IpAddr;
use vigil_rules::keywords::post::{Tag, TagHost, TagMetric, TagScope};
use vigil_types::Timestamp;

/// Hosts a worker keeps tags for; tags for more are not kept (counted).
pub(crate) const MAX_TAGGED_HOSTS: usize = 1 << 16;
/// Tags one session or host keeps; Suricata keeps a handful too.
const MAX_TAGS_EACH: usize = 8;

/// What is left of one tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tagged {
    /// The signature that set it: setting it again starts it over.
    sid: u32,
    left: Left,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Left {
    Packets(u32),
    Bytes(u64),
    Until(Timestamp),
}

impl Tagged {
    /// The tag an alert on a packet of `len` bytes at `ts` starts; `None`
    /// when that packet used it all.
    fn start(tag: &Tag, sid: u32, len: usize, ts: Timestamp) -> Option<Tagged> {
        let left = match tag.metric {
            TagMetric::Packets => Left::Packets(tag.count.checked_sub(1).filter(|&n| n > 0)?),
            TagMetric::Bytes => Left::Bytes(u64::from(tag.count).checked_sub(len as u64).filter(|&n| n > 0)?),
            TagMetric::Seconds => {
                Left::Until(Timestamp::from_nanos(ts.as_nanos().saturating_add(i64::from(tag.count) * 1_000_000_000)))
            }
        };
        Some(Tagged { sid, left })
    }

    /// Counts a packet against the tag: whether it is tagged.
    fn take(&mut self, len: usize, ts: Timestamp) -> bool {
        match &mut self.left {
            Left::Packets(n) if *n > 0 => {
                *n -= 1;
                true
            }
            Left::Bytes(n) if *n > 0 => {
                *n = n.saturating_sub(len as u64);
                true
            }
            Left::Until(t) => ts <= *t,
            _ => false,
        }
    }

    fn spent(&self, now: Timestamp) -> bool {
        match self.left {
            Left::Packets(n) => n == 0,
            Left::Bytes(n) => n == 0,
            Left::Until(t) => now > t,
        }
    }
}

/// Adds `new` to `tags`, replacing a tag of the same signature; false when full.
fn add(tags: &mut Vec<Tagged>, new: Tagged) -> bool {
    if let Some(t) = tags.iter_mut().find(|t| t.sid == new.sid) {
        *t = new;
        return true;
    }
    if tags.len() >= MAX_TAGS_EACH {
        return false;
    }
    tags.push(new);
    true
}

/// Counts a packet against every tag of `tags`, dropping spent ones:
/// whether any tagged it.
fn take_all(tags: &mut Vec<Tagged>, len: usize, ts: Timestamp) -> bool {
    let mut tagged = false;
    for t in tags.iter_mut() {
        tagged |= t.take(len, ts);
    }
    tags.retain(|t| !t.spent(ts));
    tagged
}

/// A tag an alert of the packet in hand set, to start once the packet is done.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NewTag {
    pub tag: Tag,
    pub sid: u32,
}

/// One worker's host tags, and what tagging did.
#[derive(Debug, Default)]
pub(crate) struct Tags {
    hosts: HashMap<IpAddr, Vec<Tagged>>,
    /// Packets tagged (logged or not).
    pub tagged: u64,
    /// Tags not kept: the host table or a session's list was full.
    pub refused: u64,
    /// When the full host table was last swept (at most once a second, so
    /// that alerts on a full table cannot make every packet expensive).
    swept: Option<Timestamp>,
}

impl Tags {
    /// No host has a tag: a packet of an untagged session needs no look.
    pub(crate) fn idle(&self) -> bool {
        self.hosts.is_empty()
    }

    /// Counts the packet against its session's tags (`session`) and its
    /// hosts' tags, then starts the tags its alerts set (`new`): whether the
    /// packet is tagged. The alerting packet is never tagged by its own tag.
    pub(crate) fn packet(
        &mut self,
        hosts: Option<(IpAddr, IpAddr)>,
        session: Option<&mut Vec<Tagged>>,
        new: &[NewTag],
        len: usize,
        ts: Timestamp,
    ) -> bool {
        let mut tagged = false;
        let mut session = session;
        if let Some(s) = session.as_deref_mut().filter(|s| !s.is_empty()) {
            tagged |= take_all(s, len, ts);
        }
        if let (Some((src, dst)), false) = (hosts, self.hosts.is_empty()) {
            for ip in [src, dst] {
                if let Some(t) = self.hosts.get_mut(&ip) {
                    tagged |= take_all(t, len, ts);
                    if t.is_empty() {
                        self.hosts.remove(&ip);
                    }
                }
                if src == dst {
                    break;
                }
            }
        }
        for n in new {
            let Some(t) = Tagged::start(&n.tag, n.sid, len, ts) else { continue };
            let kept = match n.tag.scope {
                // A packet without a flow has no session to tag, as in Suricata.
                TagScope::Session => session.as_deref_mut().is_none_or(|s| add(s, t)),
                TagScope::Host => match hosts {
                    Some((src, dst)) => {
                        let ip = if n.tag.host == TagHost::Src { src } else { dst };
                        self.add_host(ip, t, ts)
                    }
                    None => true,
                },
            };
            if !kept {
                self.refused += 1;
            }
        }
        self.tagged += u64::from(tagged);
        tagged
    }

    fn add_host(&mut self, ip: IpAddr, t: Tagged, now: Timestamp) -> bool {
        if !self.hosts.contains_key(&ip) && self.hosts.len() >= MAX_TAGGED_HOSTS {
            // Tags that ran out of time are freed only when their host is
            // seen again: sweep them before refusing.
            if self.swept.is_none_or(|s| now.secs() > s.secs()) {
                self.swept = Some(now);
                self.hosts.retain(|_, tags| {
                    tags.retain(|t| !t.spent(now));
                    !tags.is_empty()
                });
            }
            if self.hosts.len() >= MAX_TAGGED_HOSTS {
                return false;
            }
        }
        add(self.hosts.entry(ip).or_default(), t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tag(scope: TagScope, count: u32, metric: TagMetric, host: TagHost) -> NewTag {
        NewTag { tag: Tag { scope, count, metric, host }, sid: 1 }
    }

    fn ts(s: i64) -> Timestamp {
        Timestamp::from_micros(1_700_000_000 + s, 0)
    }

    #[test]
    fn a_session_tag_counts_the_alerting_packet_first() {
        let mut tags = Tags::default();
        let mut session = Vec::new();
        let new = [tag(TagScope::Session, 3, TagMetric::Packets, TagHost::Dst)];
        assert!(!tags.packet(None, Some(&mut session), &new, 60, ts(0)), "the alerting packet");
        assert!(tags.packet(None, Some(&mut session), &[], 60, ts(1)));
        assert!(tags.packet(None, Some(&mut session), &[], 60, ts(2)));
        assert!(!tags.packet(None, Some(&mut session), &[], 60, ts(3)), "three packets in all");
        assert!(session.is_empty());
        // By bytes: the alerting packet's bytes count too; the packet that crosses the count is in.
        let new = [tag(TagScope::Session, 150, TagMetric::Bytes, TagHost::Dst)];
        tags.packet(None, Some(&mut session), &new, 100, ts(0));
        assert!(tags.packet(None, Some(&mut session), &[], 100, ts(0)));
        assert!(!tags.packet(None, Some(&mut session), &[], 100, ts(0)));
        // By time: until the seconds have passed.
        let new = [tag(TagScope::Session, 10, TagMetric::Seconds, TagHost::Dst)];
        tags.packet(None, Some(&mut session), &new, 1, ts(0));
        assert!(tags.packet(None, Some(&mut session), &[], 1, ts(10)));
        assert!(!tags.packet(None, Some(&mut session), &[], 1, ts(11)));
        assert_eq!(tags.tagged, 4);
    }

    #[test]
    fn a_host_tag_follows_the_host_either_way() {
        let (a, b, c) = ("198.18.0.1".parse().unwrap(), "198.18.0.2".parse().unwrap(), "198.18.0.3".parse().unwrap());
        let mut tags = Tags::default();
        tags.packet(Some((a, b)), None, &[tag(TagScope::Host, 3, TagMetric::Packets, TagHost::Src)], 1, ts(0));
        assert!(!tags.packet(Some((b, c)), None, &[], 1, ts(0)), "neither end is the tagged host");
        assert!(tags.packet(Some((b, a)), None, &[], 1, ts(0)), "to the host");
        assert!(tags.packet(Some((a, c)), None, &[], 1, ts(0)), "from it, in another flow");
        assert!(!tags.packet(Some((a, c)), None, &[], 1, ts(0)));
        assert!(tags.hosts.is_empty(), "spent tags are freed");
    }
}
