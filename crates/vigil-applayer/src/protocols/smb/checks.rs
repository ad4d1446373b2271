//! `smb.version`: the SMB version of a command, 1 or 2 (SMB3 is 2).

use vigil_rules::Value;
use vigil_types::Direction;

use super::tx::SmbTx;
use crate::progress::Progress;
use crate::proto::{CheckDef, ProtoTx, TxCheck};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Version(u8);

fn version(v: &Value) -> Result<Box<dyn TxCheck>, String> {
    let text = match v {
        Value::Text(t) | Value::Str(t) => t.trim(),
        _ => return Err("expects a version".into()),
    };
    match text.parse::<u8>() {
        Ok(n @ (1 | 2)) => Ok(Box::new(Version(n))),
        _ => Err(format!("invalid smb.version '{text}': it is 1 or 2")),
    }
}

pub(super) const CHECKS: &[CheckDef] = &[CheckDef { name: "smb.version", side: None, need: Progress::Headers, both_ways: true, compile: version }];

impl TxCheck for Version {
    fn matches(&self, tx: &dyn ProtoTx, _dir: Direction, _now_secs: i64) -> bool {
        tx.as_any().downcast_ref::<SmbTx>().is_some_and(|t| t.version == self.0)
    }
}
