//! `rule_group.json`: how the rules split by port, per transport and
//! direction, in the shape of Suricata's grouping dump (its signature
//! group heads). The port space is cut wherever some rule's ports begin or
//! end; each piece lists the rules that cover it; adjacent pieces with the
//! same rules are one. Pieces are ordered as Suricata orders its groups
//! (a single priority port first, then the most rules, then the lowest
//! port), at most the profile's number of groups per direction are kept
//! and the rest share one group over every port. Identical rule sets share
//! a group id.
//!
//! It is a report on the rules, for comparing with Suricata's: vigil's own
//! engine does not group by port (it prefilters per protocol, then checks
//! ports), so these groups are not what it runs.

use serde_json::{json, Value};
use std::collections::{BTreeSet, HashMap};
use vigil_detect::compile::{PacketCheck, Proto};
use vigil_detect::Signature;
use vigil_types::Direction;

/// What grouping needs of one signature.
#[derive(Debug, Clone)]
pub(crate) struct GroupSig {
    sid: u32,
    tcp: bool,
    udp: bool,
    to_server: bool,
    to_client: bool,
    /// Destination, then source ports.
    dports: Vec<(u16, u16)>,
    sports: Vec<(u16, u16)>,
}

impl GroupSig {
    /// `None` for signatures Suricata keeps out of port groups (IP-only,
    /// and protocols without ports).
    pub(crate) fn of(sig: &Signature) -> Option<GroupSig> {
        let (tcp, udp) = match sig.proto {
            Proto::Tcp => (true, false),
            Proto::Udp => (false, true),
            Proto::Ip | Proto::Ipv4 | Proto::Ipv6 if !sig.ip_only => (true, true),
            _ => return None,
        };
        let flow_dir = sig.checks.iter().find_map(|c| match c {
            PacketCheck::Flow { to_server, .. } => *to_server,
            _ => None,
        });
        let dir = flow_dir.or(sig.tx.as_ref().filter(|t| !t.either_side).map(|t| t.side == Direction::ToServer));
        Some(GroupSig {
            sid: sig.sid,
            tcp,
            udp,
            to_server: dir != Some(false),
            to_client: dir != Some(true),
            dports: sig.dport.ranges().to_vec(),
            sports: sig.sport.ranges().to_vec(),
        })
    }
}

/// How many groups a direction may have, and which ports get their own.
#[derive(Debug, Clone)]
pub(crate) struct Limits {
    pub toserver: usize,
    pub toclient: usize,
    pub tcp_priority: Vec<u16>,
    pub udp_priority: Vec<u16>,
}

impl Limits {
    /// From `detect.profile`, `detect.custom-values` and `detect.grouping`.
    pub(crate) fn from_config(profile: &str, raw: Option<&vigil_config::ConfigNode>) -> Limits {
        let (toclient, toserver) = match profile {
            "low" => (15, 25),
            "high" => (75, 75),
            "custom" => {
                let get = |k: &str, d: usize| {
                    raw.and_then(|n| n.get(&format!("custom-values.{k}")))
                        .and_then(|n| n.value())
                        .and_then(|v| v.trim().parse().ok())
                        .unwrap_or(d)
                };
                (get("toclient-groups", 3), get("toserver-groups", 25))
            }
            _ => (20, 40),
        };
        let ports = |k: &str, d: &[u16]| {
            raw.and_then(|n| n.get(&format!("grouping.{k}")))
                .and_then(|n| n.value())
                .map(|v| v.split(',').filter_map(|p| p.trim().parse().ok()).collect())
                .unwrap_or_else(|| d.to_vec())
        };
        Limits {
            toserver: toserver.max(1),
            toclient: toclient.max(1),
            tcp_priority: ports("tcp-priority-ports", &[53, 80, 139, 443, 445, 1433, 3306, 3389, 6666, 6667, 8080]),
            udp_priority: ports("udp-priority-ports", &[53, 135, 5060]),
        }
    }
}

/// One port range and the signatures (by index) that cover it.
struct Piece {
    lo: u16,
    hi: u16,
    sigs: BTreeSet<usize>,
}

/// The pieces of one transport and direction, ordered and capped.
fn pieces(sigs: &[(usize, &[(u16, u16)])], max: usize, priority: &[u16]) -> Vec<Piece> {
    // Each range opens at its start and closes after its end.
    let mut events: Vec<(u32, bool, usize)> = Vec::new();
    for &(i, ranges) in sigs {
        for &(lo, hi) in ranges {
            events.push((u32::from(lo), true, i));
            events.push((u32::from(hi) + 1, false, i));
        }
    }
    events.sort_unstable();
    let mut out: Vec<Piece> = Vec::new();
    let mut active = BTreeSet::new();
    let mut k = 0;
    while k < events.len() {
        let at = events[k].0;
        while k < events.len() && events[k].0 == at {
            let (_, open, i) = events[k];
            if open {
                active.insert(i);
            } else {
                active.remove(&i);
            }
            k += 1;
        }
        let Some(&(next, _, _)) = events.get(k) else { break };
        if active.is_empty() || at > 65535 {
            continue;
        }
        let hi = (next - 1).min(65535) as u16;
        match out.last_mut() {
            Some(p) if u32::from(p.hi) + 1 == at && p.sigs == active => p.hi = hi,
            _ => out.push(Piece { lo: at as u16, hi, sigs: active.clone() }),
        }
    }
    let own = |p: &Piece| p.lo == p.hi && priority.contains(&p.lo);
    out.sort_by(|a, b| own(b).cmp(&own(a)).then(b.sigs.len().cmp(&a.sigs.len())).then(a.lo.cmp(&b.lo)));
    if out.len() > max {
        let rest: BTreeSet<usize> = out.drain(max..).flat_map(|p| p.sigs).collect();
        out.push(Piece { lo: 0, hi: 65535, sigs: rest });
    }
    out
}

/// The `rule_group.json` document.
pub(crate) fn document(sigs: &[GroupSig], limits: &Limits) -> Value {
    let mut doc = serde_json::Map::new();
    for (name, tcp) in [("tcp", true), ("udp", false)] {
        let mut dirs = serde_json::Map::new();
        for (dir, to_server) in [("toserver", true), ("toclient", false)] {
            let members: Vec<(usize, &[(u16, u16)])> = sigs
                .iter()
                .enumerate()
                .filter(|(_, s)| if tcp { s.tcp } else { s.udp })
                .filter(|(_, s)| if to_server { s.to_server } else { s.to_client })
                .map(|(i, s)| (i, if to_server { &s.dports[..] } else { &s.sports[..] }))
                .collect();
            if members.is_empty() {
                continue;
            }
            let max = if to_server { limits.toserver } else { limits.toclient };
            let priority = if tcp { &limits.tcp_priority } else { &limits.udp_priority };
            let mut ids: HashMap<BTreeSet<usize>, usize> = HashMap::new();
            let list: Vec<Value> = pieces(&members, max, priority)
                .into_iter()
                .map(|p| {
                    let next = ids.len();
                    let id = *ids.entry(p.sigs.clone()).or_insert(next);
                    let rules: Vec<Value> = p.sigs.iter().map(|&i| json!({ "sig_id": sigs[i].sid })).collect();
                    json!({ "port": p.lo, "port2": p.hi, "rulegroup": { "id": id, "rules": rules } })
                })
                .collect();
            dirs.insert(dir.into(), Value::Array(list));
        }
        if !dirs.is_empty() {
            doc.insert(name.into(), Value::Object(dirs));
        }
    }
    Value::Object(doc)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig(sid: u32, dports: &[(u16, u16)]) -> GroupSig {
        GroupSig {
            sid,
            tcp: true,
            udp: false,
            to_server: true,
            to_client: false,
            dports: dports.to_vec(),
            sports: vec![(0, 65535)],
        }
    }

    fn limits(toserver: usize) -> Limits {
        Limits { toserver, toclient: 3, tcp_priority: vec![80, 445], udp_priority: vec![] }
    }

    fn groups(doc: &Value) -> Vec<(u64, u64, u64, Vec<u64>)> {
        doc["tcp"]["toserver"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| {
                let rules = g["rulegroup"]["rules"].as_array().unwrap().iter().map(|r| r["sig_id"].as_u64().unwrap());
                (
                    g["port"].as_u64().unwrap(),
                    g["port2"].as_u64().unwrap(),
                    g["rulegroup"]["id"].as_u64().unwrap(),
                    rules.collect(),
                )
            })
            .collect()
    }

    #[test]
    fn priority_ports_then_most_rules_then_lowest_port() {
        let sigs = [sig(1, &[(0, 65535)]), sig(2, &[(80, 80)]), sig(3, &[(80, 81)]), sig(4, &[(445, 445)])];
        let g = groups(&document(&sigs, &limits(25)));
        assert_eq!(
            g,
            vec![
                (80, 80, 0, vec![1, 2, 3]),
                (445, 445, 1, vec![1, 4]),
                (81, 81, 2, vec![1, 3]),
                (0, 79, 3, vec![1]),
                (82, 444, 3, vec![1]),
                (446, 65535, 3, vec![1]),
            ]
        );
    }

    #[test]
    fn past_the_limit_the_rest_share_one_group() {
        let sigs: Vec<GroupSig> = (1..=5).map(|p| sig(p as u32, &[(p, p)])).collect();
        let g = groups(&document(&sigs, &limits(3)));
        assert_eq!(g.len(), 4);
        assert_eq!(g[3], (0, 65535, 3, vec![4, 5]));
    }

    #[test]
    fn adjacent_pieces_with_the_same_rules_are_one() {
        let g = groups(&document(&[sig(3, &[(2010, 2010), (2011, 2011)])], &limits(25)));
        assert_eq!(g, vec![(2010, 2011, 0, vec![3])]);
    }
}
