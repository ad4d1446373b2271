//! `nfs_procedure` (a procedure, or an NFSv4 operation, by number with an
//! integer comparison, or by name: the name is read in the transaction's
//! own version, so `WRITE` is 8 for v2, 7 for v3 and 38 for v4; a file
//! transaction also answers for the procedures that acted on its file
//! since, a commit) and `nfs.version` (an integer comparison).

use vigil_rules::{IntCmp, Value};
use vigil_types::Direction;

use super::names;
use super::tx::NfsTx;
use crate::progress::Progress;
use crate::proto::{CheckDef, ProtoTx, TxCheck};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NfsCheck {
    Procedure(IntCmp),
    ProcedureNamed(String),
    Version(IntCmp),
}

fn procedure(v: &Value) -> Result<Box<dyn TxCheck>, String> {
    match v {
        Value::Int(c) => Ok(Box::new(NfsCheck::Procedure(*c))),
        Value::Text(t) | Value::Str(t) => {
            let name = t.trim();
            if names::known_procedure(name) {
                Ok(Box::new(NfsCheck::ProcedureNamed(name.to_ascii_uppercase())))
            } else {
                Err(format!("unknown procedure '{name}'"))
            }
        }
        _ => Err("expects a procedure number or name".into()),
    }
}

fn version(v: &Value) -> Result<Box<dyn TxCheck>, String> {
    match v {
        Value::Int(c) => Ok(Box::new(NfsCheck::Version(*c))),
        _ => Err("expects a version number".into()),
    }
}

const fn check(name: &'static str, compile: fn(&Value) -> Result<Box<dyn TxCheck>, String>) -> CheckDef {
    CheckDef { name, side: None, need: Progress::Complete, both_ways: true, compile }
}

pub(super) const CHECKS: &[CheckDef] = &[check("nfs_procedure", procedure), check("nfs_version", version)];

impl TxCheck for NfsCheck {
    fn matches(&self, tx: &dyn ProtoTx, _dir: Direction, _now_secs: i64) -> bool {
        let Some(t) = tx.as_any().downcast_ref::<NfsTx>() else { return false };
        match self {
            NfsCheck::Procedure(c) => t.procedures().any(|p| c.matches(p.into())),
            NfsCheck::ProcedureNamed(n) => {
                let Some(want) = names::procedure_of(t.version, n) else { return false };
                t.procedures().any(|p| p == want)
            }
            NfsCheck::Version(c) => c.matches(t.version.into()),
        }
    }
}
