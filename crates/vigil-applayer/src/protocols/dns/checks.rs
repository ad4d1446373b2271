//! DNS's value checks: `dns.opcode`, `dns.rcode` and `dns.rrtype`, on
//! requests and responses alike, as Suricata matches them. The opcode is a
//! plain number (Suricata parses it as a u8); the code and the type also
//! take their names (`nxdomain`, `TXT`), any case, negated with `!`.

use vigil_rules::{IntCmp, Value};
use vigil_types::Direction;

use super::{rcode_name, rrtype_name, DnsTx};
use crate::progress::Progress;
use crate::proto::{CheckDef, ProtoTx, TxCheck};

/// A compiled DNS check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DnsCheck {
    /// The header opcode of the message.
    Opcode(IntCmp),
    /// The header rcode of the message.
    Rcode(IntCmp),
    /// Any question type of a request, any answer type of a response.
    Rrtype(IntCmp),
}

fn boxed(c: DnsCheck) -> Box<dyn TxCheck> {
    Box::new(c)
}

/// A check of one message, whichever way it went.
const fn message(name: &'static str, compile: fn(&Value) -> Result<Box<dyn TxCheck>, String>) -> CheckDef {
    CheckDef { name, side: None, need: Progress::Complete, both_ways: false, compile }
}

pub(super) const CHECKS: &[CheckDef] = &[
    message("dns.opcode", |v| Ok(boxed(DnsCheck::Opcode(int_or_name(v, u8::MAX.into(), |_| None)?)))),
    message("dns.rcode", |v| {
        let code = |n: &str| (0..=u8::MAX).find(|&c| rcode_name(c).eq_ignore_ascii_case(n)).map(u64::from);
        Ok(boxed(DnsCheck::Rcode(int_or_name(v, u16::MAX.into(), code)?)))
    }),
    message("dns.rrtype", |v| {
        let rrtype = |n: &str| (0..=u16::MAX).find(|&t| rrtype_name(t).eq_ignore_ascii_case(n)).map(u64::from);
        Ok(boxed(DnsCheck::Rrtype(int_or_name(v, u16::MAX.into(), rrtype)?)))
    }),
];

impl TxCheck for DnsCheck {
    fn matches(&self, tx: &dyn ProtoTx, dir: Direction, _now_secs: i64) -> bool {
        let any = tx.as_any();
        // A DNS-over-HTTP/2 stream's: the message of the side inspected.
        let msg = any.downcast_ref::<DnsTx>().or_else(|| any.downcast_ref::<super::CarriedDns>()?.side(dir));
        msg.is_some_and(|tx| self.matches_dns(tx))
    }
}

impl DnsCheck {
    pub fn matches_dns(&self, tx: &DnsTx) -> bool {
        match self {
            DnsCheck::Opcode(c) => c.matches(tx.opcode().into()),
            DnsCheck::Rcode(c) => c.matches(tx.rcode().into()),
            DnsCheck::Rrtype(c) if tx.is_response() => tx.message().answers.iter().any(|r| c.matches(r.rrtype.into())),
            DnsCheck::Rrtype(c) => tx.rrtypes().any(|t| c.matches(t.into())),
        }
    }
}

/// An integer comparison, or `[!]name` looked up with `lookup`.
fn int_or_name(value: &Value, max: u64, lookup: impl Fn(&str) -> Option<u64>) -> Result<IntCmp, String> {
    match value {
        Value::Int(c) if c.fits(max) => Ok(*c),
        Value::Int(_) => Err(format!("value out of range (at most {max})")),
        Value::IntWith(..) => Err("index forms (`value,index`) are not supported".into()),
        Value::Text(t) => {
            let (neg, name) = match t.trim().strip_prefix('!') {
                Some(rest) => (true, rest.trim()),
                None => (false, t.trim()),
            };
            match lookup(name) {
                Some(v) if neg => Ok(IntCmp::Ne(v)),
                Some(v) => Ok(IntCmp::Eq(v)),
                None => Err(format!("unknown name '{name}'")),
            }
        }
        _ => Err("expects an integer comparison".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_numbers() {
        let text = |s: &str| Value::Text(s.into());
        let rcode = |n: &str| int_or_name(&text(n), u16::MAX.into(), |n| (n == "NXDOMAIN").then_some(3));
        assert_eq!(rcode("!NXDOMAIN"), Ok(IntCmp::Ne(3)));
        assert_eq!(rcode("NXDOMAIN"), Ok(IntCmp::Eq(3)));
        assert!(rcode("bogus").is_err());
        assert!(int_or_name(&Value::Int(IntCmp::Eq(300)), u8::MAX.into(), |_| None).is_err());
        let compiled = |name: &str, v: &str| {
            let def = CHECKS.iter().find(|c| c.name == name).unwrap();
            format!("{:?}", (def.compile)(&text(v)).unwrap())
        };
        assert_eq!(compiled("dns.rcode", "!NXDOMAIN"), "Rcode(Ne(3))");
        assert_eq!(compiled("dns.rrtype", "txt"), "Rrtype(Eq(16))");
    }
}
