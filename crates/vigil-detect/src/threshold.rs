//! `threshold` and `detection_filter`: how often a matching signature may
//! alert, counted per rule, per source, per destination, per address pair or
//! per flow, over windows of packet time.
//!
//! Suricata's semantics: `limit` alerts on the first `count` matches of each
//! window; `threshold` on every `count`-th match; `both` once per window once
//! `count` matches were seen; `detection_filter` on every match after the
//! first `count`. `backoff` alerts on the 1st, `count`-th, then each
//! `multiplier` times later match.
//!
//! `rate_filter` (threshold.config only) changes what a match does rather
//! than whether it alerts: once a tracker has seen more than `count` matches
//! within `seconds`, its matches take `new_action` for `timeout` seconds.

use std::collections::HashMap;
use std::net::IpAddr;
use vigil_rules::keywords::post::{ThresholdType, Track};
use vigil_types::Timestamp;

/// A signature's alert-rate rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateRule {
    pub kind: RateKind,
    pub track: Track,
    pub count: u32,
    /// Window length (absent for `backoff`).
    pub seconds: u32,
    pub multiplier: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateKind {
    Limit,
    Threshold,
    Both,
    Backoff,
    DetectionFilter,
}

impl RateRule {
    pub(crate) fn from_keyword(t: &vigil_rules::keywords::post::Threshold, detection_filter: bool) -> Option<Self> {
        let kind = if detection_filter {
            RateKind::DetectionFilter
        } else {
            match t.kind? {
                ThresholdType::Limit => RateKind::Limit,
                ThresholdType::Threshold => RateKind::Threshold,
                ThresholdType::Both => RateKind::Both,
                ThresholdType::Backoff => RateKind::Backoff,
            }
        };
        if t.unique_on.is_some() || matches!(t.track, Track::ByEither) {
            return None;
        }
        Some(RateRule {
            kind,
            track: t.track,
            count: t.count,
            seconds: t.seconds.unwrap_or(0),
            multiplier: t.multiplier.unwrap_or(1),
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Key {
    sid: u32,
    gid: u32,
    a: Option<IpAddr>,
    b: Option<IpAddr>,
    flow: u64,
}

impl Key {
    /// The tracker a match of `sid`/`gid` by `m` counts in. `pair`: an
    /// address pair is one tracker in both directions (`rate_filter`).
    pub(crate) fn new(track: Track, pair: bool, sid: u32, gid: u32, m: &MatchSubject) -> Key {
        let (a, b, flow) = match track {
            Track::BySrc => (m.src, None, 0),
            Track::ByDst => (m.dst, None, 0),
            Track::ByBoth if pair => (m.src.min(m.dst), m.src.max(m.dst), 0),
            Track::ByBoth => (m.src, m.dst, 0),
            Track::ByFlow => (None, None, m.flow),
            Track::ByRule | Track::ByEither => (None, None, 0),
        };
        Key { sid, gid, a, b, flow }
    }
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    window_start: Timestamp,
    count: u32,
    /// `backoff`: the match count at which the next alert falls.
    next: u64,
    seen: u64,
}

/// The counting state of every tracked (signature, address) pair. Bounded:
/// when full, a match that needs a new tracker alerts (fail open) and is counted.
pub struct RateTable {
    map: HashMap<Key, Entry>,
    max: usize,
    /// Matches that could not be tracked because the table was full.
    pub full: u64,
}

/// Trackers kept at most, for all workers (Suricata bounds its host table by memcap).
pub const DEFAULT_MAX_TRACKERS: usize = 65_536;

impl Default for RateTable {
    fn default() -> Self {
        RateTable::new(DEFAULT_MAX_TRACKERS)
    }
}

/// Who a match was about: the packet's addresses and flow.
#[derive(Debug, Clone, Copy)]
pub struct MatchSubject {
    pub src: Option<IpAddr>,
    pub dst: Option<IpAddr>,
    pub flow: u64,
    pub ts: Timestamp,
}

impl RateTable {
    pub fn new(max: usize) -> Self {
        RateTable { map: HashMap::new(), max, full: 0 }
    }

    /// Counts a match of signature `sid`/`gid`; true when it should alert.
    pub fn allow(&mut self, rule: &RateRule, sid: u32, gid: u32, m: MatchSubject) -> bool {
        self.allow_at(Key::new(rule.track, false, sid, gid, &m), rule, m)
    }

    pub(crate) fn allow_at(&mut self, key: Key, rule: &RateRule, m: MatchSubject) -> bool {
        let window = rule.seconds as i64 * 1_000_000_000;
        let now = m.ts;
        if !self.map.contains_key(&key) {
            if self.map.len() >= self.max {
                // Expired windows make room first; otherwise fail open.
                self.map.retain(|_, e| now.as_nanos() - e.window_start.as_nanos() <= window);
                if self.map.len() >= self.max {
                    self.full += 1;
                    return true;
                }
            }
            // Backoff alerts on the first match, then at `count` (or `multiplier` when count is 1), then
            // at each `multiplier` times the previous.
            let next = if rule.count > 1 { rule.count as u64 } else { rule.multiplier.max(2) as u64 };
            let e = Entry { window_start: now, count: 1, next, seen: 1 };
            self.map.insert(key, e);
            return match rule.kind {
                RateKind::Limit => rule.count >= 1,
                RateKind::Threshold | RateKind::Both => rule.count <= 1,
                RateKind::DetectionFilter => rule.count == 0,
                RateKind::Backoff => true,
            };
        }
        let Some(e) = self.map.get_mut(&key) else { return true };
        let in_window = now.as_nanos() - e.window_start.as_nanos() <= window;
        match rule.kind {
            RateKind::Backoff => {
                e.seen += 1;
                if e.seen == e.next {
                    e.next = e.next.saturating_mul(rule.multiplier.max(2) as u64);
                    return true;
                }
                false
            }
            _ if !in_window => {
                e.window_start = now;
                e.count = 1;
                match rule.kind {
                    RateKind::Limit => rule.count >= 1,
                    RateKind::Threshold | RateKind::Both => rule.count <= 1,
                    _ => rule.count == 0,
                }
            }
            RateKind::Limit => {
                e.count += 1;
                e.count <= rule.count
            }
            RateKind::Threshold => {
                e.count += 1;
                if e.count >= rule.count {
                    e.count = 0;
                    return true;
                }
                false
            }
            RateKind::Both => {
                e.count += 1;
                e.count == rule.count
            }
            RateKind::DetectionFilter => {
                e.count += 1;
                e.count > rule.count
            }
        }
    }
}

/// The action a `rate_filter` gives a match once the rate is exceeded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NewAction {
    Alert,
    Drop,
    Pass,
    /// `reject`, `rejectsrc`, `rejectdst`, `rejectboth`: a drop for the packet verdict.
    Reject,
}

impl NewAction {
    fn parse(s: &str) -> Option<NewAction> {
        Some(match s {
            "alert" => NewAction::Alert,
            "drop" => NewAction::Drop,
            "pass" => NewAction::Pass,
            "reject" | "rejectsrc" | "rejectdst" | "rejectboth" => NewAction::Reject,
            _ => return None,
        })
    }
}

/// A `rate_filter` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateFilter {
    pub track: Track,
    pub count: u32,
    pub seconds: u32,
    pub new_action: NewAction,
    /// How long the new action lasts once triggered, in seconds.
    pub timeout: u32,
}

#[derive(Debug, Clone, Copy)]
struct FilterEntry {
    window_start: Timestamp,
    count: u32,
    /// When the new action took effect; `None` while the rate is not exceeded.
    since: Option<Timestamp>,
}

/// The counting state of every `rate_filter` tracker. Bounded like
/// [`RateTable`]: when full, an untracked match keeps its own action.
pub struct RateFilterTable {
    map: HashMap<Key, FilterEntry>,
    max: usize,
    /// Matches that could not be tracked because the table was full.
    pub full: u64,
}

impl Default for RateFilterTable {
    fn default() -> Self {
        RateFilterTable::new(DEFAULT_MAX_TRACKERS)
    }
}

impl RateFilterTable {
    pub fn new(max: usize) -> Self {
        RateFilterTable { map: HashMap::new(), max, full: 0 }
    }

    /// Counts a match of signature `sid`/`gid`; the action it takes instead
    /// of its own, if the filter is in force.
    pub fn apply(&mut self, f: &RateFilter, sid: u32, gid: u32, m: MatchSubject) -> Option<NewAction> {
        // An address pair is the same pair in both directions.
        self.apply_at(Key::new(f.track, true, sid, gid, &m), f, m)
    }

    pub(crate) fn apply_at(&mut self, key: Key, f: &RateFilter, m: MatchSubject) -> Option<NewAction> {
        let now = m.ts.as_nanos();
        let secs = |n: u32| n as i64 * 1_000_000_000;
        if !self.map.contains_key(&key) {
            if self.map.len() >= self.max {
                let keep = secs(f.seconds.max(f.timeout));
                self.map.retain(|_, e| now - e.since.unwrap_or(e.window_start).as_nanos() <= keep);
                if self.map.len() >= self.max {
                    self.full += 1;
                    return None;
                }
            }
            let exceeded = f.count == 0;
            self.map.insert(key, FilterEntry { window_start: m.ts, count: 1, since: exceeded.then_some(m.ts) });
            return exceeded.then_some(f.new_action);
        }
        let e = self.map.get_mut(&key)?;
        if let Some(since) = e.since {
            if now - since.as_nanos() <= secs(f.timeout) {
                return Some(f.new_action);
            }
            e.since = None;
        }
        if now - e.window_start.as_nanos() < secs(f.seconds) {
            e.count += 1;
            if e.count > f.count {
                e.since = Some(m.ts);
                return Some(f.new_action);
            }
        } else {
            e.window_start = m.ts;
            e.count = 1;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: i64) -> MatchSubject {
        MatchSubject { src: Some("198.18.0.1".parse().unwrap()), dst: None, flow: 0, ts: Timestamp::from_micros(s, 0) }
    }

    fn run(kind: RateKind, count: u32, seconds: u32, times: &[i64]) -> Vec<bool> {
        let rule = RateRule { kind, track: Track::BySrc, count, seconds, multiplier: 10 };
        let mut t = RateTable::default();
        times.iter().map(|&s| t.allow(&rule, 1, 1, at(s))).collect()
    }

    #[test]
    fn limit_threshold_both_and_detection_filter() {
        let t = [0, 1, 2, 3, 4, 100, 101];
        assert_eq!(run(RateKind::Limit, 2, 60, &t), [true, true, false, false, false, true, true]);
        assert_eq!(run(RateKind::Threshold, 2, 60, &t), [false, true, false, true, false, false, true]);
        assert_eq!(run(RateKind::Both, 2, 60, &t), [false, true, false, false, false, false, true]);
        assert_eq!(run(RateKind::DetectionFilter, 2, 60, &t), [false, false, true, true, true, false, false]);
    }

    #[test]
    fn backoff_alerts_on_1st_then_count_then_multiples() {
        let t: Vec<i64> = (0..120).collect();
        let alerts: Vec<usize> =
            run(RateKind::Backoff, 1, 0, &t).iter().enumerate().filter(|(_, a)| **a).map(|(i, _)| i + 1).collect();
        assert_eq!(alerts, [1, 10, 100]);
    }

    fn globals(text: &str) -> (GlobalThresholds, Vec<String>) {
        let (cfg, errs) = vigil_rules::ThresholdConfig::parse(text, "threshold.config");
        assert!(errs.is_empty(), "{errs:?}");
        let vars = vigil_rules::Vars::new(&[("LAB".into(), "[198.18.0.0/16]".into())], &[]);
        GlobalThresholds::from_config(&cfg, &vars, "threshold.config")
    }

    #[test]
    fn suppress_lines_by_rule_source_destination_either_and_gid_wide() {
        let (g, msgs) = globals(
            "suppress gen_id 1, sig_id 10\n\
             suppress gen_id 1, sig_id 11, track by_src, ip $LAB\n\
             suppress gen_id 1, sig_id 12, track by_dst, ip 203.0.113.0/24\n\
             suppress gen_id 1, sig_id 13, track by_either, ip 203.0.113.7\n\
             suppress gen_id 3, sig_id 0\n",
        );
        assert!(msgs.is_empty(), "{msgs:?}");
        let (lab, net, other) = (
            Some("198.18.1.1".parse().unwrap()),
            Some("203.0.113.7".parse().unwrap()),
            Some("192.0.2.1".parse().unwrap()),
        );
        assert!(g.suppressed(1, 10, other, other));
        assert!(g.suppressed(1, 11, lab, other) && !g.suppressed(1, 11, other, lab));
        assert!(g.suppressed(1, 12, other, net) && !g.suppressed(1, 12, net, other));
        assert!(
            g.suppressed(1, 13, net, other) && g.suppressed(1, 13, other, net) && !g.suppressed(1, 13, other, other)
        );
        assert!(g.suppressed(3, 99, other, other), "sig_id 0 covers the whole gid");
        assert!(!g.suppressed(1, 99, lab, net));
    }

    #[test]
    fn config_thresholds_override_rules_and_sid_zero_fills_in() {
        let (g, msgs) = globals(
            "threshold gen_id 1, sig_id 20, type limit, track by_src, count 1, seconds 60\n\
             event_filter gen_id 1, sig_id 0, type threshold, track by_dst, count 5, seconds 10\n\
             rate_filter gen_id 1, sig_id 21, track by_rule, count 1, seconds 60, new_action drop, timeout 10\n",
        );
        assert!(msgs.is_empty(), "{msgs:?}");
        let f = g.rate_filter(1, 21).unwrap();
        assert_eq!((f.track, f.count, f.new_action, f.timeout), (Track::ByRule, 1, NewAction::Drop, 10));
        assert!(g.rate_filter(1, 20).is_none());
        let own = RateRule { kind: RateKind::Both, track: Track::ByRule, count: 2, seconds: 1, multiplier: 1 };
        assert_eq!(g.rate_for(1, 20, Some(&own)).unwrap().kind, RateKind::Limit, "a line for the sid wins");
        assert_eq!(g.rate_for(1, 21, Some(&own)).unwrap().kind, RateKind::Both, "the rule's own next");
        assert_eq!(g.rate_for(1, 22, None).unwrap().kind, RateKind::Threshold, "then sig_id 0");
        assert!(g.rate_for(2, 22, None).is_none());
    }

    fn filter(track: Track, count: u32, new_action: NewAction) -> RateFilter {
        RateFilter { track, count, seconds: 60, new_action, timeout: 10 }
    }

    #[test]
    fn rate_filter_switches_action_past_count_for_timeout() {
        let f = filter(Track::ByRule, 2, NewAction::Drop);
        let mut t = RateFilterTable::default();
        let got: Vec<_> = [0, 1, 2, 3, 12, 13, 14].iter().map(|&s| t.apply(&f, 1, 1, at(s))).collect();
        // Matches 1 and 2 keep their action; the 3rd exceeds the rate and
        // starts 10 s of the new action. At 13 s the timeout has passed:
        // the window (from 0 s) is still open, so the count (4) is over
        // again and the new action restarts.
        let d = Some(NewAction::Drop);
        assert_eq!(got, [None, None, d, d, d, d, d]);
        let mut t = RateFilterTable::default();
        let late: Vec<_> = [0, 1, 2, 100, 101].iter().map(|&s| t.apply(&f, 1, 1, at(s))).collect();
        // Past both the timeout and the window, counting starts over.
        assert_eq!(late, [None, None, d, None, None]);
    }

    #[test]
    fn rate_filter_tracks_by_address_pair_in_both_directions() {
        let f = filter(Track::ByBoth, 1, NewAction::Alert);
        let mut t = RateFilterTable::default();
        let (x, y) = ("198.18.0.1".parse().ok(), "198.18.0.2".parse().ok());
        let m = |src, dst| MatchSubject { src, dst, flow: 0, ts: Timestamp::from_micros(0, 0) };
        assert_eq!(t.apply(&f, 1, 1, m(x, y)), None);
        assert_eq!(t.apply(&f, 1, 1, m(y, x)), Some(NewAction::Alert), "the reply counts for the same pair");
        let by_src = filter(Track::BySrc, 1, NewAction::Pass);
        let mut t = RateFilterTable::default();
        assert_eq!(t.apply(&by_src, 1, 1, m(x, y)), None);
        assert_eq!(t.apply(&by_src, 1, 1, m(y, x)), None, "another source");
        assert_eq!(t.apply(&by_src, 1, 1, m(x, y)), Some(NewAction::Pass));
    }

    #[test]
    fn rate_filter_trackers_are_bounded() {
        let f = filter(Track::BySrc, 0, NewAction::Drop);
        let mut t = RateFilterTable::new(4);
        for i in 0..10u8 {
            let m = MatchSubject {
                src: Some(IpAddr::from([198, 18, 0, i])),
                dst: None,
                flow: 0,
                ts: Timestamp::from_micros(0, 0),
            };
            let expected = if i < 4 { Some(NewAction::Drop) } else { None };
            assert_eq!(t.apply(&f, 1, 1, m), expected);
        }
        assert_eq!(t.full, 6);
    }

    #[test]
    fn trackers_are_bounded() {
        let rule = RateRule { kind: RateKind::Limit, track: Track::BySrc, count: 1, seconds: 60, multiplier: 1 };
        let mut t = RateTable::new(10);
        for i in 0..100u8 {
            let m = MatchSubject {
                src: Some(IpAddr::from([198, 18, 0, i])),
                dst: None,
                flow: 0,
                ts: Timestamp::from_micros(0, 0),
            };
            assert!(t.allow(&rule, 1, 1, m));
        }
        assert_eq!(t.full, 90);
    }
}

/// What `threshold.config` says: suppressions, and rate rules that replace
/// (or, for `sig_id 0`, provide) signatures' own thresholds.
#[derive(Debug, Default)]
pub struct GlobalThresholds {
    suppress: Vec<Suppress>,
    by_sig: HashMap<(u32, u32), RateRule>,
    /// `sig_id 0` entries, by gid.
    all: HashMap<u32, RateRule>,
    /// `rate_filter` lines, by (gid, sid), and by gid for `sig_id 0`.
    filters: HashMap<(u32, u32), RateFilter>,
    filters_all: HashMap<u32, RateFilter>,
}

#[derive(Debug)]
struct Suppress {
    gid: u32,
    /// 0: every signature of the gid.
    sid: u32,
    track: Option<Track>,
    ip: Option<vigil_rules::AddressSet>,
}

impl GlobalThresholds {
    /// Builds from a parsed file; entries vigil cannot apply are returned as messages.
    pub fn from_config(
        cfg: &vigil_rules::ThresholdConfig,
        vars: &vigil_rules::Vars,
        file: &str,
    ) -> (Self, Vec<String>) {
        use vigil_rules::ThresholdEntry as E;
        let mut g = GlobalThresholds::default();
        let mut msgs = Vec::new();
        for (line, e) in &cfg.entries {
            match e {
                E::Suppress { gid, sid, track, ip } => {
                    let ip = match ip.as_ref().map(|x| vars.resolve_address(x)) {
                        None => None,
                        Some(Ok(set)) => Some(set),
                        Some(Err(err)) => {
                            msgs.push(format!("{file}:{line}: suppress: {err}"));
                            continue;
                        }
                    };
                    g.suppress.push(Suppress { gid: *gid, sid: *sid, track: *track, ip });
                }
                E::Threshold { gid, sid, threshold } => match RateRule::from_keyword(threshold, false) {
                    Some(r) if *sid == 0 => {
                        g.all.insert(*gid, r);
                    }
                    Some(r) => {
                        g.by_sig.insert((*gid, *sid), r);
                    }
                    None => msgs.push(format!("{file}:{line}: threshold: this form is not supported yet")),
                },
                E::RateFilter { gid, sid, track, count, seconds, new_action, timeout } => {
                    let Some(new_action) = NewAction::parse(new_action) else {
                        msgs.push(format!("{file}:{line}: rate_filter: unknown new_action '{new_action}'"));
                        continue;
                    };
                    if *track == Track::ByEither {
                        msgs.push(format!("{file}:{line}: rate_filter: track by_either is for suppress only"));
                        continue;
                    }
                    let f =
                        RateFilter { track: *track, count: *count, seconds: *seconds, new_action, timeout: *timeout };
                    if *sid == 0 {
                        g.filters_all.insert(*gid, f);
                    } else {
                        g.filters.insert((*gid, *sid), f);
                    }
                }
            }
        }
        (g, msgs)
    }

    /// True when a `suppress` line silences this alert.
    pub fn suppressed(&self, gid: u32, sid: u32, src: Option<IpAddr>, dst: Option<IpAddr>) -> bool {
        self.suppress.iter().any(|s| {
            if s.gid != gid || (s.sid != 0 && s.sid != sid) {
                return false;
            }
            let Some(set) = &s.ip else { return true };
            let has = |a: Option<IpAddr>| a.is_some_and(|a| set.contains(a));
            match s.track {
                Some(Track::BySrc) => has(src),
                Some(Track::ByDst) => has(dst),
                Some(Track::ByEither) | Some(Track::ByBoth) => has(src) || has(dst),
                _ => true,
            }
        })
    }

    /// The rate rule that governs a signature: a `threshold.config` line for
    /// it, else its own, else a `sig_id 0` line.
    pub fn rate_for<'a>(&'a self, gid: u32, sid: u32, own: Option<&'a RateRule>) -> Option<&'a RateRule> {
        self.by_sig.get(&(gid, sid)).or(own).or_else(|| self.all.get(&gid))
    }

    /// The `rate_filter` for a signature: its own line, else a `sig_id 0` one.
    pub fn rate_filter(&self, gid: u32, sid: u32) -> Option<&RateFilter> {
        self.filters.get(&(gid, sid)).or_else(|| self.filters_all.get(&gid))
    }
}
