//! Suricata 8's multi-integers: an integer keyword over a transaction that
//! holds several values (`mqtt.type`, `mqtt.reason_code`, ...), with an
//! optional index saying which of them must match: `any` (the default),
//! `all` (every one, and at least one), `all_or_absent`, `or_absent` (any,
//! or none at all), `nb<cmp>` (how many match), or a position (negative
//! from the end).

use vigil_rules::{IntCmp, Value};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Index {
    Any,
    All,
    AllOrAbsent,
    OrAbsent,
    Count(IntCmp),
    At(i64),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MultiInt {
    pub cmp: IntCmp,
    pub index: Index,
}

impl MultiInt {
    /// From a keyword's value: a comparison (at most `max`) or, where
    /// `lookup` knows it, a `[!]name`, then an optional index word.
    pub fn compile(value: &Value, max: u64, lookup: impl Fn(&str) -> Option<u64>) -> Result<MultiInt, String> {
        let (cmp, words): (IntCmp, Vec<String>) = match value {
            Value::Int(c) => (*c, Vec::new()),
            Value::IntWith(c, w) => (*c, w.clone()),
            Value::Text(t) | Value::Str(t) => {
                let mut parts = t.split(',').map(str::trim);
                let first = parts.next().unwrap_or_default();
                let (neg, name) = match first.strip_prefix('!') {
                    Some(rest) => (true, rest.trim()),
                    None => (false, first),
                };
                let v = lookup(name).ok_or_else(|| format!("unknown value '{name}'"))?;
                (if neg { IntCmp::Ne(v) } else { IntCmp::Eq(v) }, parts.map(String::from).collect())
            }
            _ => return Err("expects an integer comparison".into()),
        };
        if !cmp.fits(max) {
            return Err(format!("value out of range (at most {max})"));
        }
        let index = match words.as_slice() {
            [] => Index::Any,
            [w] => parse_index(w)?,
            _ => return Err("at most one index after the value".into()),
        };
        Ok(MultiInt { cmp, index })
    }

    /// Whether `values` (in their order) satisfy it.
    pub fn matches(&self, values: &[u64]) -> bool {
        let hit = |v: &u64| self.cmp.matches(*v);
        match &self.index {
            Index::Any => values.iter().any(hit),
            Index::All => !values.is_empty() && values.iter().all(hit),
            Index::AllOrAbsent => values.iter().all(hit),
            Index::OrAbsent => values.is_empty() || values.iter().any(hit),
            Index::Count(c) => c.matches(values.iter().filter(|v| hit(v)).count() as u64),
            Index::At(i) => {
                let at = if *i < 0 { values.len().checked_sub(i.unsigned_abs() as usize) } else { Some(*i as usize) };
                at.and_then(|a| values.get(a)).is_some_and(hit)
            }
        }
    }
}

fn parse_index(w: &str) -> Result<Index, String> {
    Ok(match w {
        "any" => Index::Any,
        "all" => Index::All,
        "all_or_absent" => Index::AllOrAbsent,
        "or_absent" => Index::OrAbsent,
        _ => {
            if let Some(rest) = w.strip_prefix("nb") {
                return IntCmp::parse(rest.trim(), u64::MAX)
                    .map(Index::Count)
                    .map_err(|e| format!("invalid count: {e:?}"));
            }
            Index::At(w.parse().map_err(|_| format!("unknown index '{w}'"))?)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mi(v: &str) -> MultiInt {
        let value = match v.split_once(',') {
            Some((c, w)) => Value::IntWith(IntCmp::parse(c, 255).unwrap(), vec![w.into()]),
            None => Value::Int(IntCmp::parse(v, 255).unwrap()),
        };
        MultiInt::compile(&value, 255, |_| None).unwrap()
    }

    #[test]
    fn each_index_reads_the_values_its_way() {
        let vals = [1, 2, 2];
        assert!(mi("2").matches(&vals));
        assert!(!mi("2,all").matches(&vals));
        assert!(mi("<3,all").matches(&vals));
        assert!(!mi("<3,all").matches(&[]));
        assert!(mi("<3,all_or_absent").matches(&[]));
        assert!(mi("9,or_absent").matches(&[]));
        assert!(!mi("9,or_absent").matches(&vals));
        assert!(mi("1,0").matches(&vals) && !mi("1,1").matches(&vals));
        assert!(mi("1,-3").matches(&vals) && !mi("1,-4").matches(&vals));
        assert!(mi("2,nb2").matches(&vals) && !mi("2,nb>2").matches(&vals));
    }

    #[test]
    fn names_come_from_the_keyword() {
        let look = |n: &str| (n.eq_ignore_ascii_case("two")).then_some(2);
        let m = MultiInt::compile(&Value::Text("two,1".into()), 255, look).unwrap();
        assert_eq!(m, MultiInt { cmp: IntCmp::Eq(2), index: Index::At(1) });
        assert!(MultiInt::compile(&Value::Text("!two".into()), 255, look).unwrap().matches(&[3]));
        assert!(MultiInt::compile(&Value::Text("three".into()), 255, look).is_err());
    }
}
