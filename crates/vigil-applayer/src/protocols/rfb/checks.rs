//! `rfb.sectype` (the security type in use, a number with a comparison)
//! and `rfb.secresult` (the SecurityResult: `ok`, `fail`, `toomany`,
//! `unknown` for any other value, or a number with a comparison).

use vigil_rules::{IntCmp, Value};
use vigil_types::Direction;

use super::RfbTx;
use crate::progress::Progress;
use crate::proto::{CheckDef, ProtoTx, TxCheck};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RfbCheck {
    SecType(IntCmp),
    SecResult(IntCmp),
    /// `unknown`: a result none of the named ones.
    UnknownResult,
}

fn sectype(v: &Value) -> Result<Box<dyn TxCheck>, String> {
    match v {
        Value::Int(c) => Ok(Box::new(RfbCheck::SecType(*c))),
        _ => Err("expects a security type number".into()),
    }
}

fn secresult(v: &Value) -> Result<Box<dyn TxCheck>, String> {
    let text = match v {
        Value::Int(c) => return Ok(Box::new(RfbCheck::SecResult(*c))),
        Value::Text(t) | Value::Str(t) => t.trim().to_ascii_lowercase(),
        _ => return Err("expects a result".into()),
    };
    let (negated, name) = match text.strip_prefix('!') {
        Some(n) => (true, n.trim()),
        None => (false, text.as_str()),
    };
    let code = match name {
        "ok" => 0,
        "fail" => 1,
        "toomany" => 2,
        "unknown" if !negated => return Ok(Box::new(RfbCheck::UnknownResult)),
        other => return Err(format!("unknown security result '{other}' (ok, fail, toomany, unknown)")),
    };
    Ok(Box::new(RfbCheck::SecResult(if negated { IntCmp::Ne(code) } else { IntCmp::Eq(code) })))
}

pub(super) const CHECKS: &[CheckDef] = &[
    CheckDef { name: "rfb.sectype", side: Some(Direction::ToServer), need: Progress::Complete, both_ways: false, compile: sectype },
    CheckDef { name: "rfb.secresult", side: Some(Direction::ToClient), need: Progress::Complete, both_ways: false, compile: secresult },
];

impl TxCheck for RfbCheck {
    fn matches(&self, tx: &dyn ProtoTx, _dir: Direction, _now_secs: i64) -> bool {
        let Some(t) = tx.as_any().downcast_ref::<RfbTx>() else { return false };
        match self {
            RfbCheck::SecType(c) => t.security_type.is_some_and(|v| c.matches(u64::from(v))),
            RfbCheck::SecResult(c) => t.security_result.is_some_and(|v| c.matches(u64::from(v))),
            RfbCheck::UnknownResult => t.security_result.is_some_and(|v| v > 2),
        }
    }
}
