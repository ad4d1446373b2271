//! `flowint`: named unsigned 32-bit counters kept per flow, which one
//! signature sets or changes and another compares, with Suricata's rules for
//! variables that were never set.
//!
//! Suricata runs `flowint` among a signature's match keywords, in the order
//! written, so a change made by one `flowint` stays even when a later
//! condition of the same signature fails; [`FlowintStep::run`] keeps that.

use vigil_rules::keywords::flow::Flowint;

/// A flow's counters, indexed by the ids the engine gave the names; `None`: never set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlowInts(Vec<Option<u32>>);

impl FlowInts {
    pub fn get(&self, id: u16) -> Option<u32> {
        self.0.get(id as usize).copied().flatten()
    }

    pub fn set(&mut self, id: u16, v: u32) {
        let i = id as usize;
        if self.0.len() <= i {
            // Ids come from the rule set, so this grows at most to its number of names.
            self.0.resize(i + 1, None);
        }
        self.0[i] = Some(v);
    }

    /// The same counters under another engine's ids (`map[old] = new`);
    /// counters the other engine has no name for are dropped.
    pub fn remapped(&self, map: &[Option<u16>]) -> FlowInts {
        let mut out = FlowInts::default();
        for (old, v) in self.0.iter().enumerate() {
            if let (Some(v), Some(Some(new))) = (v, map.get(old)) {
                out.set(*new, *v);
            }
        }
        out
    }
}

/// The right-hand side: a number, or another counter of the flow (read as 0 when unset).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operand<N> {
    Value(u32),
    Var(N),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    Eq,
    Ne,
    Lt,
    Gt,
    Le,
    Ge,
}

/// One `flowint` keyword; `N` is the counter name as written, then its id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IntOp<N> {
    Set(Operand<N>),
    Add(Operand<N>),
    Sub(Operand<N>),
    Compare(Cmp, Operand<N>),
    IsSet,
    NotSet,
}

impl<N> IntOp<N> {
    /// Whether the keyword writes the counter (for the order signatures run in).
    pub fn writes(&self) -> bool {
        matches!(self, IntOp::Set(_) | IntOp::Add(_) | IntOp::Sub(_))
    }

    /// The same operation with names numbered by `id`.
    pub fn map<M>(&self, mut id: impl FnMut(&N) -> M) -> IntOp<M> {
        let mut operand = |o: &Operand<N>| match o {
            Operand::Value(v) => Operand::Value(*v),
            Operand::Var(n) => Operand::Var(id(n)),
        };
        match self {
            IntOp::Set(o) => IntOp::Set(operand(o)),
            IntOp::Add(o) => IntOp::Add(operand(o)),
            IntOp::Sub(o) => IntOp::Sub(operand(o)),
            IntOp::Compare(c, o) => IntOp::Compare(*c, operand(o)),
            IntOp::IsSet => IntOp::IsSet,
            IntOp::NotSet => IntOp::NotSet,
        }
    }
}

/// A parsed `flowint` keyword, names not yet numbered.
pub type FlowintSpec = (String, IntOp<String>);

/// Reads the keyword's value as the engine runs it; `Err` names what is not
/// understood (the rule is then not loaded).
pub fn from_keyword(f: &Flowint) -> Result<FlowintSpec, String> {
    let operand = || -> Result<Operand<String>, String> {
        let v = f.value.as_deref().ok_or_else(|| format!("flowint '{}' needs a value", f.op))?;
        if v.starts_with(|c: char| c.is_ascii_digit()) {
            v.parse::<u32>().map(Operand::Value).map_err(|_| format!("flowint value '{v}' is not a 32-bit number"))
        } else {
            Ok(Operand::Var(v.to_string()))
        }
    };
    let op = match f.op.as_str() {
        "=" => IntOp::Set(operand()?),
        "+" => IntOp::Add(operand()?),
        "-" => IntOp::Sub(operand()?),
        "==" => IntOp::Compare(Cmp::Eq, operand()?),
        "!=" => IntOp::Compare(Cmp::Ne, operand()?),
        "<" => IntOp::Compare(Cmp::Lt, operand()?),
        ">" => IntOp::Compare(Cmp::Gt, operand()?),
        "<=" => IntOp::Compare(Cmp::Le, operand()?),
        ">=" => IntOp::Compare(Cmp::Ge, operand()?),
        "isset" => IntOp::IsSet,
        "notset" | "isnotset" => IntOp::NotSet,
        other => return Err(format!("flowint operator '{other}'")),
    };
    Ok((f.name.clone(), op))
}

/// A numbered `flowint` keyword, run when the rest of the signature matched.
#[derive(Debug, Clone)]
pub struct FlowintStep {
    pub id: u16,
    pub op: IntOp<u16>,
}

impl FlowintStep {
    /// Applies or tests the keyword; false ends the signature's match.
    /// Arithmetic wraps at 32 bits, as Suricata's unsigned counters do.
    pub fn run(&self, ints: &mut FlowInts) -> bool {
        let value = |o: &Operand<u16>, ints: &FlowInts| match o {
            Operand::Value(v) => *v,
            Operand::Var(id) => ints.get(*id).unwrap_or(0),
        };
        let cur = ints.get(self.id);
        match &self.op {
            IntOp::Set(o) => {
                let v = value(o, ints);
                ints.set(self.id, v);
                true
            }
            // Adding to an unset counter starts it at the value.
            IntOp::Add(o) => {
                let v = value(o, ints);
                ints.set(self.id, cur.unwrap_or(0).wrapping_add(v));
                true
            }
            // Subtracting from an unset counter is no match and leaves it unset.
            IntOp::Sub(o) => match cur {
                Some(c) => {
                    let v = value(o, ints);
                    ints.set(self.id, c.wrapping_sub(v));
                    true
                }
                None => false,
            },
            IntOp::Compare(cmp, o) => {
                let Some(c) = cur else { return false };
                let v = value(o, ints);
                match cmp {
                    Cmp::Eq => c == v,
                    Cmp::Ne => c != v,
                    Cmp::Lt => c < v,
                    Cmp::Gt => c > v,
                    Cmp::Le => c <= v,
                    Cmp::Ge => c >= v,
                }
            }
            IntOp::IsSet => cur.is_some(),
            IntOp::NotSet => cur.is_none(),
        }
    }
}

/// Suricata's ordering rank for a signature's `flowint` keywords, like
/// [`crate::flowbits::FlowbitsSpec::rank`]: writers first, then writers
/// that also read, then signatures without, then readers.
pub fn rank(ops: &[FlowintSpec]) -> u8 {
    let writes = ops.iter().any(|(_, o)| o.writes());
    let reads = ops.iter().any(|(_, o)| !o.writes());
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

    fn step(op: &str, value: Option<&str>) -> FlowintStep {
        let f = Flowint { name: "x".into(), op: op.into(), value: value.map(Into::into) };
        let (_, op) = from_keyword(&f).unwrap();
        // "x" is id 0, any other name id 1.
        FlowintStep { id: 0, op: op.map(|n| u16::from(n != "x")) }
    }

    #[test]
    fn add_starts_an_unset_counter_and_sub_does_not() {
        let mut ints = FlowInts::default();
        assert!(!step("-", Some("1")).run(&mut ints));
        assert_eq!(ints.get(0), None);
        assert!(step("+", Some("2")).run(&mut ints));
        assert!(step("+", Some("3")).run(&mut ints));
        assert_eq!(ints.get(0), Some(5));
        assert!(step("-", Some("6")).run(&mut ints));
        assert_eq!(ints.get(0), Some(u32::MAX), "wraps like an unsigned counter");
    }

    #[test]
    fn comparisons_fail_on_unset_and_read_other_counters() {
        let mut ints = FlowInts::default();
        assert!(!step("==", Some("0")).run(&mut ints));
        assert!(!step("!=", Some("0")).run(&mut ints));
        assert!(step("notset", None).run(&mut ints) && step("isnotset", None).run(&mut ints));
        assert!(!step("isset", None).run(&mut ints));
        // Set from an unset counter reads it as 0.
        assert!(step("=", Some("other")).run(&mut ints));
        assert_eq!(ints.get(0), Some(0));
        ints.set(1, 7);
        assert!(step("<", Some("other")).run(&mut ints));
        assert!(step("=", Some("other")).run(&mut ints));
        assert!(step("==", Some("7")).run(&mut ints) && step(">=", Some("7")).run(&mut ints));
        assert!(!step(">", Some("7")).run(&mut ints) && step("<=", Some("other")).run(&mut ints));
        assert!(step("isset", None).run(&mut ints));
    }

    #[test]
    fn values_must_fit_32_bits() {
        let f = Flowint { name: "x".into(), op: "=".into(), value: Some("4294967296".into()) };
        assert!(from_keyword(&f).is_err());
        let f = Flowint { name: "x".into(), op: "+".into(), value: None };
        assert!(from_keyword(&f).is_err());
    }

    #[test]
    fn counters_follow_their_names_on_reload() {
        let mut ints = FlowInts::default();
        ints.set(0, 4);
        ints.set(3, 9);
        let new = ints.remapped(&[Some(2), None, None, Some(0)]);
        assert_eq!((new.get(0), new.get(2), new.get(3)), (Some(9), Some(4), None));
    }

    #[test]
    fn writers_rank_before_readers() {
        let w = ("x".to_string(), IntOp::Add(Operand::Value(1)));
        let r = ("x".to_string(), IntOp::<String>::IsSet);
        assert_eq!(rank(std::slice::from_ref(&w)), 0);
        assert_eq!(rank(&[r.clone(), w]), 1);
        assert_eq!(rank(&[]), 2);
        assert_eq!(rank(&[r]), 3);
    }
}
