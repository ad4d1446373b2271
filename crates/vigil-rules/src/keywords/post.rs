//! Keywords that act once a rule matched, or on the matching machinery:
//! thresholds, tagging, alert suppression, file storing, scripting and
//! datasets.

use super::{kw, p_none, p_opt_text, p_text, KeywordDef, Kind};
use crate::content::Content;
use crate::error::{verr, VResult};
use crate::intcmp::parse_u64;
use crate::lexer::{split_commas, trim};
use crate::options::Value;
use std::fmt;

pub(crate) const ROWS: &[KeywordDef] = &[
    kw!("threshold", Kind::Post, Required, p_threshold, "limit alerting: type, track, count, seconds"),
    kw!("detection_filter", Kind::Post, Required, p_detection_filter, "alert only after count matches in seconds"),
    kw!("tag", Kind::Post, Required, p_tag, "log more packets of the session or host after a match"),
    kw!("noalert", Kind::Post, None, p_none, "match without alerting (for flowbits setters)"),
    kw!("alert", Kind::Post, None, p_none, "firewall rule: also alert when it matches"),
    kw!("filestore", Kind::Post, Optional, p_opt_text, "store the file: direction, scope"),
    kw!("replace", Kind::Post, Required, p_replace, "IPS: rewrite the preceding content's bytes"),
    kw!(
        "nfq_set_mark",
        Kind::Post,
        Required,
        p_text,
        "IPS: the netfilter mark (mark/mask) set on the packet's verdict"
    ),
    kw!("lua", Kind::Post, Required, p_text, "run a Lua script as a match"),
    kw!("luajit", Kind::Post, Required, p_text, "run a Lua script as a match (old name)"),
    kw!("dataset", Kind::Post, Required, super::dataset::p_dataset, "match the buffer against a dataset"),
    kw!("datarep", Kind::Post, Required, super::dataset::p_datarep, "match the buffer's reputation in a dataset"),
    kw!("config", Kind::Post, Required, p_text, "config rule: change logging for the flow/tx"),
];

/// `threshold` `type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ThresholdType {
    Limit,
    Threshold,
    Both,
    Backoff,
}

/// What thresholds count by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Track {
    BySrc,
    ByDst,
    ByRule,
    ByBoth,
    ByFlow,
    /// Only in `threshold.config` suppress lines.
    ByEither,
}

impl Track {
    pub fn parse(s: &str) -> Option<Track> {
        Some(match s {
            "by_src" => Track::BySrc,
            "by_dst" => Track::ByDst,
            "by_rule" => Track::ByRule,
            "by_both" => Track::ByBoth,
            "by_flow" => Track::ByFlow,
            "by_either" => Track::ByEither,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Track::BySrc => "by_src",
            Track::ByDst => "by_dst",
            Track::ByRule => "by_rule",
            Track::ByBoth => "by_both",
            Track::ByFlow => "by_flow",
            Track::ByEither => "by_either",
        }
    }
}

impl ThresholdType {
    pub fn parse(s: &str) -> Option<ThresholdType> {
        Some(match s {
            "limit" => ThresholdType::Limit,
            "threshold" => ThresholdType::Threshold,
            "both" => ThresholdType::Both,
            "backoff" => ThresholdType::Backoff,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ThresholdType::Limit => "limit",
            ThresholdType::Threshold => "threshold",
            ThresholdType::Both => "both",
            ThresholdType::Backoff => "backoff",
        }
    }
}

/// `threshold` and `detection_filter` (which has no `type`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Threshold {
    pub kind: Option<ThresholdType>,
    pub track: Track,
    pub count: u32,
    /// Absent for `type backoff`.
    pub seconds: Option<u32>,
    /// `type backoff` only.
    pub multiplier: Option<u32>,
    /// `detection_filter` `unique_on src_port|dst_port`.
    pub unique_on: Option<String>,
}

/// Parsed `key value` items of a threshold-like list.
#[derive(Default)]
pub(crate) struct ThresholdItems {
    pub kind: Option<ThresholdType>,
    pub track: Option<Track>,
    pub count: Option<u32>,
    pub seconds: Option<u32>,
    pub multiplier: Option<u32>,
    pub unique_on: Option<String>,
}

/// Reads one `key value` item into `items`. Returns `Ok(false)` when the
/// key is not a threshold key, for callers with more keys of their own.
pub(crate) fn threshold_item(items: &mut ThresholdItems, key: &str, val: &str, at: usize) -> VResult<bool> {
    let dup = |k: &str| verr(at, format!("'{k}' given twice"));
    match key {
        "type" => {
            if items.kind.is_some() {
                return dup(key);
            }
            items.kind = Some(ThresholdType::parse(val).ok_or_else(|| {
                crate::error::ValueError::new(at, format!("unknown type '{val}' (limit, threshold, both, backoff)"))
            })?);
        }
        "track" => {
            if items.track.is_some() {
                return dup(key);
            }
            items.track = Some(Track::parse(val).ok_or_else(|| {
                crate::error::ValueError::new(
                    at,
                    format!("unknown track '{val}' (by_src, by_dst, by_rule, by_both, by_flow)"),
                )
            })?);
        }
        "count" | "seconds" | "multiplier" => {
            let n = parse_u64(val, u32::MAX as u64).map_err(|e| e.shift(at))? as u32;
            let slot = match key {
                "count" => &mut items.count,
                "seconds" => &mut items.seconds,
                _ => &mut items.multiplier,
            };
            if slot.is_some() {
                return dup(key);
            }
            *slot = Some(n);
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// Splits `key value` out of a comma item.
pub(crate) fn key_value(item: &str) -> (usize, &str, &str) {
    let (o, t) = trim(item);
    match t.split_once(char::is_whitespace) {
        Some((k, v)) => (o, k, v.trim()),
        None => (o, t, ""),
    }
}

fn parse_threshold_like(s: &str, with_type: bool) -> VResult<Threshold> {
    let mut items = ThresholdItems::default();
    for (at, item) in split_commas(s) {
        let (o, k, v) = key_value(item);
        if !with_type && k == "unique_on" {
            if !matches!(v, "src_port" | "dst_port") || items.unique_on.is_some() {
                return verr(at + o, format!("invalid unique_on '{v}' (src_port or dst_port)"));
            }
            items.unique_on = Some(v.to_string());
            continue;
        }
        let ok = (with_type || k != "type") && threshold_item(&mut items, k, v, at + o + k.len())?;
        if !ok {
            return verr(at + o, format!("unknown option '{k}'"));
        }
    }
    finish_threshold(items, with_type).map_err(|m| crate::error::ValueError::new(0, m))
}

pub(crate) fn finish_threshold(items: ThresholdItems, with_type: bool) -> Result<Threshold, String> {
    let kind = if with_type { Some(items.kind.ok_or("missing 'type'")?) } else { None };
    let track = items.track.ok_or("missing 'track'")?;
    let count = items.count.ok_or("missing 'count'")?;
    let backoff = kind == Some(ThresholdType::Backoff);
    if backoff {
        if items.multiplier.is_none() {
            return Err("type backoff needs 'multiplier'".into());
        }
    } else {
        if items.seconds.is_none() {
            return Err("missing 'seconds'".into());
        }
        if items.multiplier.is_some() {
            return Err("'multiplier' is only for type backoff".into());
        }
    }
    if track == Track::ByEither {
        return Err("track by_either is only for suppress".into());
    }
    Ok(Threshold {
        kind,
        track,
        count,
        seconds: items.seconds,
        multiplier: items.multiplier,
        unique_on: items.unique_on,
    })
}

fn p_threshold(s: &str) -> VResult<Value> {
    parse_threshold_like(s, true).map(Value::Threshold)
}

fn p_detection_filter(s: &str) -> VResult<Value> {
    parse_threshold_like(s, false).map(Value::Threshold)
}

impl fmt::Display for Threshold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(k) = self.kind {
            write!(f, "type {}, ", k.as_str())?;
        }
        write!(f, "track {}, count {}", self.track.as_str(), self.count)?;
        if let Some(s) = self.seconds {
            write!(f, ", seconds {s}")?;
        }
        if let Some(m) = self.multiplier {
            write!(f, ", multiplier {m}")?;
        }
        if let Some(u) = &self.unique_on {
            write!(f, ", unique_on {u}")?;
        }
        Ok(())
    }
}

fn p_replace(s: &str) -> VResult<Value> {
    let c = Content::parse(s)?;
    if c.negated || !c.inline.is_empty() {
        return verr(0, "replace takes a plain quoted string");
    }
    Ok(Value::Content(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threshold_forms() {
        let Value::Threshold(t) = p_threshold("type limit, track by_src, seconds 60, count 1").unwrap() else {
            unreachable!()
        };
        assert_eq!(t.to_string(), "type limit, track by_src, count 1, seconds 60");
        assert!(p_threshold("type backoff, track by_flow, count 1, multiplier 10").is_ok());
        assert_eq!(p_threshold("type limit, track by_src, count 1").unwrap_err().reason, "missing 'seconds'");
        assert_eq!(
            p_threshold("type limit, track by_host, count 1, seconds 1").unwrap_err().reason,
            "unknown track 'by_host' (by_src, by_dst, by_rule, by_both, by_flow)"
        );
        assert!(p_detection_filter("track by_dst, count 5, seconds 60").is_ok());
        assert!(p_detection_filter("type limit, track by_dst, count 5, seconds 60").is_err());
    }
}

/// `tag`: which later packets a match has logged too.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tag {
    pub scope: TagScope,
    /// How much is tagged, counting the matching packet itself.
    pub count: u32,
    pub metric: TagMetric,
    /// For `host`: which address of the matching packet is the tagged host.
    pub host: TagHost,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TagScope {
    /// The packets of the flow.
    Session,
    /// The packets to or from a host.
    Host,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TagMetric {
    Packets,
    Bytes,
    Seconds,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TagHost {
    Src,
    Dst,
}

/// Suricata's count when a rule gives none: 256 packets (of the session,
/// or of the alert's destination host).
pub const TAG_DEFAULT_PACKETS: u32 = 256;

fn p_tag(s: &str) -> VResult<Value> {
    let parts: Vec<(usize, &str)> = split_commas(s)
        .into_iter()
        .map(|(at, p)| {
            let (o, t) = trim(p);
            (at + o, t)
        })
        .collect();
    let scope = match parts[0].1 {
        "session" => TagScope::Session,
        "host" => TagScope::Host,
        other => return verr(parts[0].0, format!("invalid tag scope '{other}' (session or host)")),
    };
    let mut tag = Tag { scope, count: TAG_DEFAULT_PACKETS, metric: TagMetric::Packets, host: TagHost::Dst };
    match parts.len() {
        1 => return Ok(Value::Tag(tag)),
        2 => return verr(parts[1].0, "a tag count needs a metric (packets, bytes or seconds)"),
        3 | 4 => {}
        _ => return verr(parts[4].0, "too many tag options"),
    }
    let (at, count) = parts[1];
    tag.count = match parse_u64(count, u64::from(u32::MAX)) {
        Ok(n) if n > 0 => n as u32,
        _ => return verr(at, format!("invalid tag count '{count}'")),
    };
    tag.metric = match parts[2].1 {
        "packets" => TagMetric::Packets,
        "bytes" => TagMetric::Bytes,
        "seconds" => TagMetric::Seconds,
        other => return verr(parts[2].0, format!("invalid tag metric '{other}' (packets, bytes or seconds)")),
    };
    if let Some(&(at, dir)) = parts.get(3) {
        if scope != TagScope::Host {
            return verr(at, "a tag direction is for host tags only");
        }
        tag.host = match dir {
            "src" => TagHost::Src,
            "dst" => TagHost::Dst,
            other => return verr(at, format!("invalid tag direction '{other}' (src or dst)")),
        };
    }
    Ok(Value::Tag(tag))
}

impl fmt::Display for Tag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scope = match self.scope {
            TagScope::Session => "session",
            TagScope::Host => "host",
        };
        let metric = match self.metric {
            TagMetric::Packets => "packets",
            TagMetric::Bytes => "bytes",
            TagMetric::Seconds => "seconds",
        };
        write!(f, "{scope},{},{metric}", self.count)?;
        if self.scope == TagScope::Host {
            f.write_str(if self.host == TagHost::Src { ",src" } else { ",dst" })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tag_tests {
    use super::*;

    fn tag(s: &str) -> Result<Tag, String> {
        match p_tag(s) {
            Ok(Value::Tag(t)) => Ok(t),
            Ok(v) => Err(format!("{v:?}")),
            Err(e) => Err(e.to_string()),
        }
    }

    #[test]
    fn tag_forms_and_defaults() {
        let t = tag("session").unwrap();
        assert_eq!((t.scope, t.count, t.metric), (TagScope::Session, 256, TagMetric::Packets));
        let t = tag("host").unwrap();
        assert_eq!((t.scope, t.host), (TagScope::Host, TagHost::Dst));
        let t = tag("host, 100, packets, src").unwrap();
        assert_eq!((t.count, t.metric, t.host), (100, TagMetric::Packets, TagHost::Src));
        assert_eq!(tag("session,10,seconds").unwrap().metric, TagMetric::Seconds);
        assert_eq!(tag("host,3600,seconds,dst").unwrap().to_string(), "host,3600,seconds,dst");
        for bad in [
            "flow",
            "session,10",
            "session,0,packets",
            "session,10,minutes",
            "session,10,bytes,src",
            "host,1,packets,up",
            "host,1,packets,src,x",
        ] {
            assert!(tag(bad).is_err(), "{bad}");
        }
    }
}
