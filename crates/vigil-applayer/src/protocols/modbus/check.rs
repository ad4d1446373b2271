//! The `modbus` keyword: a comma-separated list of settings, each an
//! integer (`N`, `<N`, `>N`, `N<>M`, the range exclusive) or a word:
//! `function` (a code, or `[!]assigned|unassigned|public|user|reserved|all`),
//! `subfunction`, `access read|write [discretes|coils|input|holding]`,
//! `address`, `value` and `unit`. Addresses count from 1, as the Modbus
//! specification numbers them: the request's address 0 is address 1.

use vigil_rules::Value;
use vigil_types::Direction;

use super::pdu::{self, Category};
use super::ModbusTx;
use crate::progress::Progress;
use crate::proto::{CheckDef, ProtoTx, TxCheck};

/// A number or a range, as the keyword writes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Num {
    Eq(u64),
    Lt(u64),
    Gt(u64),
    /// Exclusive of both ends.
    Between(u64, u64),
}

impl Num {
    fn parse(s: &str) -> Result<Num, String> {
        let s = s.trim();
        let n = |t: &str| t.trim().parse::<u64>().map_err(|_| format!("invalid number '{}'", t.trim()));
        if let Some((a, b)) = s.split_once("<>") {
            return Ok(Num::Between(n(a)?, n(b)?));
        }
        if let Some(r) = s.strip_prefix('<') {
            return Ok(Num::Lt(n(r)?));
        }
        if let Some(r) = s.strip_prefix('>') {
            return Ok(Num::Gt(n(r)?));
        }
        Ok(Num::Eq(n(s)?))
    }

    fn matches(self, v: u64) -> bool {
        match self {
            Num::Eq(a) => v == a,
            Num::Lt(a) => v < a,
            Num::Gt(a) => v > a,
            Num::Between(a, b) => a < v && v < b,
        }
    }

    /// Whether the addresses `first..=last` lie where it says.
    fn covers(self, first: u64, last: u64) -> bool {
        match self {
            Num::Eq(a) => first <= a && a <= last,
            Num::Lt(a) => last < a,
            Num::Gt(a) => first > a,
            Num::Between(a, b) => a <= first && last <= b,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Function {
    Code(u8),
    Categories { negated: bool, set: Vec<Category> },
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ModbusCheck {
    function: Option<Function>,
    subfunction: Option<u16>,
    /// Read or write, and the table.
    access: Option<(u16, u16)>,
    address: Option<Num>,
    value: Option<Num>,
    unit: Option<Num>,
}

impl ModbusCheck {
    fn compile(v: &Value) -> Result<ModbusCheck, String> {
        let text = match v {
            Value::Text(t) | Value::Str(t) => t,
            _ => return Err("expects function, access or unit settings".into()),
        };
        let mut c = ModbusCheck::default();
        for item in text.split(',').map(str::trim) {
            let (key, rest) = item.split_once(char::is_whitespace).ok_or_else(|| format!("'{item}' needs a value"))?;
            let rest = rest.trim();
            match key {
                "function" => {
                    let (negated, word) = match rest.strip_prefix('!') {
                        Some(w) => (true, w.trim()),
                        None => (false, rest),
                    };
                    let set = match word {
                        "assigned" => vec![Category::PublicAssigned],
                        "unassigned" => vec![Category::PublicUnassigned],
                        "public" => vec![Category::PublicAssigned, Category::PublicUnassigned],
                        "user" => vec![Category::User],
                        "reserved" => vec![Category::Reserved],
                        "all" => vec![Category::PublicAssigned, Category::PublicUnassigned, Category::User, Category::Reserved],
                        code if !negated => {
                            let n: u8 = code.parse().map_err(|_| format!("invalid function '{code}'"))?;
                            c.function = Some(Function::Code(n));
                            continue;
                        }
                        other => return Err(format!("invalid function '!{other}'")),
                    };
                    c.function = Some(Function::Categories { negated, set });
                }
                "subfunction" => c.subfunction = Some(rest.parse().map_err(|_| format!("invalid subfunction '{rest}'"))?),
                "access" => {
                    let mut words = rest.split_whitespace();
                    let kind = match words.next() {
                        Some("read") => pdu::READ,
                        Some("write") => pdu::WRITE,
                        other => return Err(format!("access must be read or write, got {other:?}")),
                    };
                    let table = match words.next() {
                        None => 0,
                        Some("discretes") => pdu::DISCRETES,
                        Some("coils") => pdu::COILS,
                        Some("input") => pdu::INPUT,
                        Some("holding") => pdu::HOLDING,
                        Some(other) => return Err(format!("unknown table '{other}'")),
                    };
                    c.access = Some((kind, table));
                }
                "address" => c.address = Some(Num::parse(rest)?),
                "value" => c.value = Some(Num::parse(rest)?),
                "unit" => c.unit = Some(Num::parse(rest)?),
                other => return Err(format!("unknown setting '{other}'")),
            }
        }
        if c.subfunction.is_some() && !matches!(c.function, Some(Function::Code(_))) {
            return Err("subfunction needs a function code".into());
        }
        if (c.address.is_some() || c.value.is_some()) && c.access.is_none() {
            return Err("address and value need an access".into());
        }
        Ok(c)
    }
}

pub(super) const CHECKS: &[CheckDef] = &[CheckDef {
    name: "modbus",
    side: Some(Direction::ToClient),
    need: Progress::Complete,
    both_ways: false,
    compile: |v| Ok(Box::new(ModbusCheck::compile(v)?)),
}];

impl TxCheck for ModbusCheck {
    fn matches(&self, tx: &dyn ProtoTx, _dir: Direction, _now_secs: i64) -> bool {
        let Some(r) = tx.as_any().downcast_ref::<ModbusTx>().and_then(|t| t.request.as_ref()) else { return false };
        if self.unit.is_some_and(|u| !u.matches(r.unit.into())) {
            return false;
        }
        match &self.function {
            Some(Function::Code(f)) if r.function != *f => return false,
            Some(Function::Categories { negated, set })
                if set.contains(&Category::of(r.function, r.subfunction())) == *negated =>
            {
                return false;
            }
            _ => {}
        }
        if self.subfunction.is_some_and(|s| r.subfunction() != Some(s)) {
            return false;
        }
        if let Some((kind, table)) = self.access {
            let a = pdu::access(r.function);
            if a & kind == 0 || (table != 0 && a & table == 0) {
                return false;
            }
            if self.address.is_some() || self.value.is_some() {
                let Some((first, count, value)) = r.accessed() else { return false };
                let first = u64::from(first) + 1;
                let last = first + u64::from(count.max(1)) - 1;
                if self.address.is_some_and(|n| !n.covers(first, last)) {
                    return false;
                }
                if self.value.is_some_and(|n| !value.is_some_and(|v| n.matches(v.into()))) {
                    return false;
                }
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tx(function: u8, data: &[u8]) -> ModbusTx {
        let request = pdu::Adu { transaction: 1, protocol: 0, unit: 10, function, data: data.to_vec() };
        ModbusTx { id: 0, request: Some(request), response: None, events: 0, ended: false }
    }

    fn hit(rule: &str, tx: &ModbusTx) -> bool {
        ModbusCheck::compile(&Value::Text(rule.into())).unwrap().matches(tx, Direction::ToClient, 0)
    }

    #[test]
    fn settings_combine() {
        let read0 = tx(1, b"\x00\x00\x00\x01");
        let read2 = tx(1, b"\x00\x02\x00\x02");
        let write = tx(6, b"\x01\xf3\x00\xc9");
        assert!(hit("function 1", &read0) && !hit("function 3", &read0));
        assert!(hit("function assigned", &read0) && !hit("function !public", &read0));
        assert!(hit("unit >9, access read coils, address 0<>2", &read0));
        assert!(!hit("unit >9, access read coils, address 0<>2", &read2));
        assert!(hit("access write holding, address 500, value >200", &write));
        assert!(!hit("access write holding, address 500, value >201", &write));
        assert!(!hit("access read", &write));
        assert!(hit("function 8, subfunction 4", &tx(8, b"\x00\x04\x00\x00")));
        for bad in ["function", "access read tables", "subfunction 4", "address 5", "colour blue", "function !12"] {
            assert!(ModbusCheck::compile(&Value::Text(bad.into())).is_err(), "{bad}");
        }
    }
}
