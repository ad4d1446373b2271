//! `krb5_msg_type` (the message's type, 30 for an error), `krb5_err_code`
//! (an error's code), `krb5.weak_encryption` (a reply encrypted with DES or
//! RC4) and `krb5.ticket_encryption` (`weak`, or a list of encryption
//! types by name or number, each may be negated with `!`: the ticket's
//! type is one of those listed and none of those negated).

use vigil_rules::{IntCmp, Value};
use vigil_types::Direction;

use super::msg;
use super::Krb5Tx;
use crate::progress::Progress;
use crate::proto::{CheckDef, ProtoTx, TxCheck};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Krb5Check {
    MsgType(IntCmp),
    ErrCode(i64),
    Weak,
    Ticket { weak: Option<bool>, any: Vec<i64>, none: Vec<i64> },
}

fn text(v: &Value) -> Result<&str, String> {
    match v {
        Value::Text(t) | Value::Str(t) => Ok(t.trim()),
        _ => Err("expects a value".into()),
    }
}

fn msg_type(v: &Value) -> Result<Box<dyn TxCheck>, String> {
    match v {
        Value::Int(c) => Ok(Box::new(Krb5Check::MsgType(*c))),
        _ => Err("expects a message type number".into()),
    }
}

fn err_code(v: &Value) -> Result<Box<dyn TxCheck>, String> {
    let t = text(v)?;
    let code = t.parse::<i64>().map_err(|_| format!("invalid error code '{t}'"))?;
    Ok(Box::new(Krb5Check::ErrCode(code)))
}

fn ticket(v: &Value) -> Result<Box<dyn TxCheck>, String> {
    let (mut weak, mut any, mut none) = (None, Vec::new(), Vec::new());
    for item in text(v)?.split(',').map(str::trim) {
        let (neg, name) = match item.strip_prefix('!') {
            Some(n) => (true, n.trim()),
            None => (false, item),
        };
        if name.eq_ignore_ascii_case("weak") {
            weak = Some(!neg);
            continue;
        }
        let e = msg::etype_of(name).ok_or_else(|| format!("unknown encryption type '{name}'"))?;
        if neg {
            none.push(e);
        } else {
            any.push(e);
        }
    }
    Ok(Box::new(Krb5Check::Ticket { weak, any, none }))
}

const fn check(name: &'static str, compile: fn(&Value) -> Result<Box<dyn TxCheck>, String>) -> CheckDef {
    CheckDef { name, side: None, need: Progress::Complete, both_ways: true, compile }
}

pub(super) const CHECKS: &[CheckDef] = &[
    check("krb5_msg_type", msg_type),
    check("krb5_err_code", err_code),
    check("krb5.weak_encryption", |_| Ok(Box::new(Krb5Check::Weak))),
    check("krb5.ticket_encryption", ticket),
];

impl TxCheck for Krb5Check {
    fn matches(&self, tx: &dyn ProtoTx, _dir: Direction, _now_secs: i64) -> bool {
        let Some(t) = tx.as_any().downcast_ref::<Krb5Tx>() else { return false };
        let m = &t.msg;
        match self {
            Krb5Check::MsgType(c) => c.matches(m.msg_type.into()),
            Krb5Check::ErrCode(code) => m.error_code == Some(*code),
            Krb5Check::Weak => m.etype.is_some_and(msg::weak),
            Krb5Check::Ticket { weak, any, none } => {
                let Some(e) = m.ticket_etype else { return false };
                weak.is_none_or(|w| msg::weak(e) == w) && (any.is_empty() || any.contains(&e)) && !none.contains(&e)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_parse_or_are_refused() {
        assert!(ticket(&Value::Text("weak".into())).is_ok());
        assert!(ticket(&Value::Text("rc4-hmac, !18".into())).is_ok());
        assert!(ticket(&Value::Text("nonsense".into())).is_err());
        assert!(err_code(&Value::Text("25".into())).is_ok());
        assert!(err_code(&Value::Text("x".into())).is_err());
    }
}
