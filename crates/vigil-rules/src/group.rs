//! What address and port lists have in common: the `any` / `$VAR` / `!x` /
//! `[a, [b, !c]]` group grammar, and sets of inclusive integer ranges that
//! groups resolve to.

use crate::error::{verr, VResult};
use std::fmt;

/// Groups may nest (brackets and negations together) at most this deep.
/// Real rules and configs use two or three levels; the cap keeps hostile
/// input from recursing without end.
pub const MAX_GROUP_DEPTH: usize = 32;

/// An address or port expression as written.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Group<A> {
    /// `any`.
    Any,
    /// One address/network/range or port/range.
    Atom(A),
    /// `$NAME` (stored without the `$`).
    Var(String),
    /// `!x`.
    Not(Box<Group<A>>),
    /// `[x, y, ...]`.
    List(Vec<Group<A>>),
}

/// Parsing of the atoms of one kind of group (addresses, ports).
pub trait AtomParse: Sized {
    /// What the group is called in messages ("address", "port").
    const WHAT: &'static str;
    /// Parses one atom (no brackets, negation or variables).
    fn parse_atom(s: &str) -> VResult<Self>;
}

impl<A: AtomParse> Group<A> {
    /// Parses a whole group expression.
    pub fn parse(s: &str) -> VResult<Group<A>> {
        let mut p = GroupParser { s, i: 0 };
        let g = p.expr(0)?;
        p.blank();
        if p.i < s.len() {
            return verr(p.i, format!("unexpected '{}' after the {}", &s[p.i..], A::WHAT));
        }
        Ok(g)
    }
}

struct GroupParser<'a> {
    s: &'a str,
    i: usize,
}

impl GroupParser<'_> {
    fn blank(&mut self) {
        while self.s.as_bytes().get(self.i).is_some_and(|c| c.is_ascii_whitespace()) {
            self.i += 1;
        }
    }

    fn expr<A: AtomParse>(&mut self, depth: usize) -> VResult<Group<A>> {
        if depth > MAX_GROUP_DEPTH {
            return verr(self.i, format!("{} groups nest deeper than {MAX_GROUP_DEPTH} levels", A::WHAT));
        }
        self.blank();
        let b = self.s.as_bytes();
        match b.get(self.i) {
            None => verr(self.i, format!("empty {}", A::WHAT)),
            Some(b'!') => {
                self.i += 1;
                Ok(Group::Not(Box::new(self.expr(depth + 1)?)))
            }
            Some(b'[') => {
                let open = self.i;
                self.i += 1;
                let mut items = Vec::new();
                loop {
                    self.blank();
                    if b.get(self.i) == Some(&b']') && items.is_empty() {
                        return verr(open, format!("empty {} list '[]'", A::WHAT));
                    }
                    items.push(self.expr(depth + 1)?);
                    self.blank();
                    match b.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            return Ok(Group::List(items));
                        }
                        None => return verr(open, format!("unbalanced brackets: '[' without ']' in {} list", A::WHAT)),
                        Some(_) => return verr(self.i, format!("expected ',' or ']' in {} list", A::WHAT)),
                    }
                }
            }
            Some(b']') => verr(self.i, format!("unbalanced brackets: ']' without '[' in {} list", A::WHAT)),
            Some(_) => {
                let start = self.i;
                let len = self.s[start..].find([',', ']', '[']).unwrap_or(self.s.len() - start);
                self.i = start + len;
                let atom = self.s[start..start + len].trim_end();
                if atom.is_empty() {
                    return verr(start, format!("empty {} in list", A::WHAT));
                }
                if atom.eq_ignore_ascii_case("any") {
                    return Ok(Group::Any);
                }
                if let Some(name) = atom.strip_prefix('$') {
                    if name.is_empty() || !name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-') {
                        return verr(start, format!("invalid variable name '{atom}'"));
                    }
                    return Ok(Group::Var(name.to_string()));
                }
                A::parse_atom(atom).map(Group::Atom).map_err(|e| e.shift(start))
            }
        }
    }
}

impl<A: fmt::Display> fmt::Display for Group<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Group::Any => f.write_str("any"),
            Group::Atom(a) => a.fmt(f),
            Group::Var(v) => write!(f, "${v}"),
            Group::Not(g) => write!(f, "!{g}"),
            Group::List(items) => {
                f.write_str("[")?;
                for (i, g) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    g.fmt(f)?;
                }
                f.write_str("]")
            }
        }
    }
}

impl<A> Group<A> {
    /// The variables the expression names, in order of appearance.
    pub fn vars(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.collect_vars(&mut out);
        out
    }

    fn collect_vars<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            Group::Var(v) => out.push(v),
            Group::Not(g) => g.collect_vars(out),
            Group::List(items) => items.iter().for_each(|g| g.collect_vars(out)),
            Group::Any | Group::Atom(_) => {}
        }
    }

    /// Resolves the expression to a set: `atom` gives an atom's set,
    /// `var` a variable's. A list is the union of its plain items (or
    /// everything when it has none) minus the union of its negated items.
    pub(crate) fn resolve<T: Bound, E>(
        &self,
        atom: &mut dyn FnMut(&A) -> RangeSet<T>,
        var: &mut dyn FnMut(&str) -> Result<RangeSet<T>, E>,
    ) -> Result<RangeSet<T>, E> {
        Ok(match self {
            Group::Any => RangeSet::full(),
            Group::Atom(a) => atom(a),
            Group::Var(v) => var(v)?,
            Group::Not(g) => g.resolve(atom, var)?.complement(),
            Group::List(items) => {
                // Collect first and normalise once: long lists stay linear.
                let mut plus = Vec::new();
                let mut minus = Vec::new();
                let mut any_plus = false;
                for g in items {
                    match g {
                        Group::Not(inner) => minus.extend_from_slice(inner.resolve(atom, var)?.ranges()),
                        _ => {
                            any_plus = true;
                            plus.extend_from_slice(g.resolve(atom, var)?.ranges());
                        }
                    }
                }
                let plus = if any_plus { RangeSet::from_ranges(plus) } else { RangeSet::full() };
                plus.difference(&RangeSet::from_ranges(minus))
            }
        })
    }
}

/// An unsigned integer type ranges are made of.
pub trait Bound: Copy + Ord + fmt::Debug {
    const MIN: Self;
    const MAX: Self;
    fn succ(self) -> Self;
    fn pred(self) -> Self;
}

macro_rules! bound {
    ($t:ty) => {
        impl Bound for $t {
            const MIN: Self = <$t>::MIN;
            const MAX: Self = <$t>::MAX;
            fn succ(self) -> Self {
                self.saturating_add(1)
            }
            fn pred(self) -> Self {
                self.saturating_sub(1)
            }
        }
    };
}
bound!(u16);
bound!(u32);
bound!(u128);

/// A set of values as sorted, disjoint, non-adjacent inclusive ranges.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct RangeSet<T> {
    ranges: Vec<(T, T)>,
}

impl<T: Bound> RangeSet<T> {
    /// No values.
    pub fn empty() -> Self {
        RangeSet { ranges: Vec::new() }
    }

    /// Every value.
    pub fn full() -> Self {
        RangeSet { ranges: vec![(T::MIN, T::MAX)] }
    }

    /// The values `lo..=hi` (empty when `lo > hi`).
    pub fn range(lo: T, hi: T) -> Self {
        if lo > hi {
            return Self::empty();
        }
        RangeSet { ranges: vec![(lo, hi)] }
    }

    /// From any ranges (normalised).
    pub fn from_ranges(mut r: Vec<(T, T)>) -> Self {
        r.retain(|(a, b)| a <= b);
        r.sort_unstable();
        let mut out: Vec<(T, T)> = Vec::with_capacity(r.len());
        for (a, b) in r {
            match out.last_mut() {
                Some(last) if a <= last.1.succ() || last.1 == T::MAX => last.1 = last.1.max(b),
                _ => out.push((a, b)),
            }
        }
        RangeSet { ranges: out }
    }

    /// The ranges, sorted and disjoint.
    pub fn ranges(&self) -> &[(T, T)] {
        &self.ranges
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    pub fn is_full(&self) -> bool {
        self.ranges == [(T::MIN, T::MAX)]
    }

    pub fn contains(&self, v: T) -> bool {
        let i = self.ranges.partition_point(|(_, hi)| *hi < v);
        self.ranges.get(i).is_some_and(|(lo, _)| *lo <= v)
    }

    pub fn union(&self, other: &Self) -> Self {
        if other.ranges.is_empty() {
            return self.clone();
        }
        let mut all = self.ranges.clone();
        all.extend_from_slice(&other.ranges);
        Self::from_ranges(all)
    }

    pub fn complement(&self) -> Self {
        let mut out = Vec::with_capacity(self.ranges.len() + 1);
        let mut next = Some(T::MIN);
        for &(lo, hi) in &self.ranges {
            if let Some(n) = next {
                if lo > n {
                    out.push((n, lo.pred()));
                }
            }
            next = if hi == T::MAX { None } else { Some(hi.succ()) };
        }
        if let Some(n) = next {
            out.push((n, T::MAX));
        }
        RangeSet { ranges: out }
    }

    pub fn intersection(&self, other: &Self) -> Self {
        let (mut i, mut j) = (0, 0);
        let mut out = Vec::new();
        while i < self.ranges.len() && j < other.ranges.len() {
            let (a1, b1) = self.ranges[i];
            let (a2, b2) = other.ranges[j];
            let lo = a1.max(a2);
            let hi = b1.min(b2);
            if lo <= hi {
                out.push((lo, hi));
            }
            if b1 < b2 {
                i += 1;
            } else {
                j += 1;
            }
        }
        RangeSet { ranges: out }
    }

    pub fn difference(&self, other: &Self) -> Self {
        if other.ranges.is_empty() {
            return self.clone();
        }
        self.intersection(&other.complement())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_algebra() {
        let a = RangeSet::<u16>::from_ranges(vec![(10, 20), (21, 30), (50, 60)]);
        assert_eq!(a.ranges(), &[(10, 30), (50, 60)]);
        assert_eq!(a.complement().ranges(), &[(0, 9), (31, 49), (61, 65535)]);
        assert_eq!(a.complement().complement(), a);
        let b = RangeSet::range(25u16, 55);
        assert_eq!(a.difference(&b).ranges(), &[(10, 24), (56, 60)]);
        assert_eq!(a.intersection(&b).ranges(), &[(25, 30), (50, 55)]);
        assert!(a.contains(55) && !a.contains(40));
        assert!(RangeSet::<u16>::full().complement().is_empty());
    }
}
