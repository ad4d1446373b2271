//! `ldap.request.operation` (the request's operation, by number or name),
//! `ldap.responses.operation` and `ldap.responses.result_code` (a name or
//! number, then optionally which response: an index from the first, or
//! negative from the last, `any` (the default) or `all`), and
//! `ldap.responses.count` (an integer comparison).

use vigil_rules::{IntCmp, Value};
use vigil_types::Direction;

use super::msg::{self, Message};
use super::LdapTx;
use crate::progress::Progress;
use crate::proto::{CheckDef, ProtoTx, TxCheck};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    Any,
    All,
    At(i64),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LdapCheck {
    RequestOp(IntCmp),
    ResponseOp(u8, Which),
    ResultCode(u32, Which),
    Count(IntCmp),
}

fn text(v: &Value) -> Result<&str, String> {
    match v {
        Value::Text(t) | Value::Str(t) => Ok(t.trim()),
        _ => Err("expects a value".into()),
    }
}

/// `value[,index]`.
fn with_index(s: &str) -> Result<(&str, Which), String> {
    let (v, i) = match s.split_once(',') {
        Some((v, i)) => (v.trim(), i.trim()),
        None => (s.trim(), "any"),
    };
    let which = match i {
        "any" => Which::Any,
        "all" => Which::All,
        n => Which::At(n.parse().map_err(|_| format!("invalid index '{n}'"))?),
    };
    Ok((v, which))
}

fn request_op(v: &Value) -> Result<Box<dyn TxCheck>, String> {
    let cmp = match v {
        Value::Int(c) => *c,
        other => {
            let t = text(other)?;
            IntCmp::Eq(msg::op_of(t).ok_or_else(|| format!("unknown operation '{t}'"))?.into())
        }
    };
    Ok(Box::new(LdapCheck::RequestOp(cmp)))
}

fn response_op(v: &Value) -> Result<Box<dyn TxCheck>, String> {
    let (name, which) = with_index(text(v)?)?;
    let op = msg::op_of(name).ok_or_else(|| format!("unknown operation '{name}'"))?;
    Ok(Box::new(LdapCheck::ResponseOp(op, which)))
}

fn result_code(v: &Value) -> Result<Box<dyn TxCheck>, String> {
    let (name, which) = with_index(text(v)?)?;
    let code = msg::result_of(name).ok_or_else(|| format!("unknown result code '{name}'"))?;
    Ok(Box::new(LdapCheck::ResultCode(code, which)))
}

fn count(v: &Value) -> Result<Box<dyn TxCheck>, String> {
    match v {
        Value::Int(c) => Ok(Box::new(LdapCheck::Count(*c))),
        _ => Err("expects an integer comparison".into()),
    }
}

pub(super) const CHECKS: &[CheckDef] = &[
    CheckDef { name: "ldap.request.operation", side: Some(Direction::ToServer), need: Progress::Complete, both_ways: false, compile: request_op },
    CheckDef { name: "ldap.responses.operation", side: Some(Direction::ToClient), need: Progress::Headers, both_ways: false, compile: response_op },
    CheckDef { name: "ldap.responses.result_code", side: Some(Direction::ToClient), need: Progress::Headers, both_ways: false, compile: result_code },
    CheckDef { name: "ldap.responses.count", side: Some(Direction::ToClient), need: Progress::Headers, both_ways: false, compile: count },
];

/// Whether the responses picked by `which` satisfy `ok`.
fn pick(rs: &[Message], which: Which, ok: impl Fn(&Message) -> bool) -> bool {
    match which {
        Which::Any => rs.iter().any(ok),
        Which::All => !rs.is_empty() && rs.iter().all(ok),
        Which::At(i) => {
            let at = if i < 0 { rs.len().checked_sub(i.unsigned_abs() as usize) } else { Some(i as usize) };
            at.and_then(|a| rs.get(a)).is_some_and(ok)
        }
    }
}

impl TxCheck for LdapCheck {
    fn matches(&self, tx: &dyn ProtoTx, _dir: Direction, _now_secs: i64) -> bool {
        let Some(t) = tx.as_any().downcast_ref::<LdapTx>() else { return false };
        match self {
            LdapCheck::RequestOp(c) => t.request.as_ref().is_some_and(|r| c.matches(r.op.into())),
            LdapCheck::ResponseOp(op, which) => pick(&t.responses, *which, |r| r.op == *op),
            LdapCheck::ResultCode(code, which) => pick(&t.responses, *which, |r| r.result == Some(*code)),
            LdapCheck::Count(c) => c.matches(t.responses.len() as u64),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexes_pick_responses() {
        let m = |op: u8| Message { id: 1, op, body: None, dn: None, result: Some(0), message: None, attribute_types: Vec::new(), name: None };
        let rs = [m(4), m(5)];
        assert!(pick(&rs, Which::At(1), |r| r.op == 5));
        assert!(pick(&rs, Which::At(-1), |r| r.op == 5));
        assert!(!pick(&rs, Which::At(0), |r| r.op == 5));
        assert!(!pick(&rs, Which::All, |r| r.op == 5));
        assert!(pick(&rs, Which::Any, |r| r.op == 5));
        assert!(!pick(&rs, Which::At(-3), |_| true));
        assert!(response_op(&Value::Text("search_result_done,-1".into())).is_ok());
        assert!(response_op(&Value::Text("bogus".into())).is_err());
        assert!(result_code(&Value::Text("size_limit_exceeded,all".into())).is_ok());
    }
}
