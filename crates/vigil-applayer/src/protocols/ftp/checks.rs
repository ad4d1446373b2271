//! FTP's value checks: `ftp.dynamic_port` (an integer comparison),
//! `ftp.mode` (`active` or `passive`), `ftp.reply_received` (`yes` or
//! `no`) and `ftpbounce` (no value).

use vigil_rules::{IntCmp, Value};
use vigil_types::Direction;

use super::FtpTx;
use crate::progress::Progress;
use crate::proto::{CheckDef, ProtoTx, TxCheck};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FtpCheck {
    DynamicPort(IntCmp),
    Active(bool),
    ReplyReceived(bool),
    Bounce,
}

fn boxed(c: FtpCheck) -> Box<dyn TxCheck> {
    Box::new(c)
}

/// One of two words, exactly (Suricata refuses anything else).
fn word(v: &Value, yes: &str, no: &str) -> Result<bool, String> {
    match v {
        Value::Text(t) | Value::Str(t) if t.trim() == yes => Ok(true),
        Value::Text(t) | Value::Str(t) if t.trim() == no => Ok(false),
        _ => Err(format!("expects {yes} or {no}")),
    }
}

pub(super) const CHECKS: &[CheckDef] = &[
    CheckDef {
        name: "ftp.dynamic_port",
        side: None,
        need: Progress::Complete,
        both_ways: true,
        compile: |v| match v {
            Value::Int(c) if c.fits(u16::MAX.into()) => Ok(boxed(FtpCheck::DynamicPort(*c))),
            _ => Err("expects a port comparison".into()),
        },
    },
    CheckDef {
        name: "ftp.mode",
        side: None,
        need: Progress::Complete,
        both_ways: true,
        compile: |v| Ok(boxed(FtpCheck::Active(word(v, "active", "passive")?))),
    },
    CheckDef {
        name: "ftp.reply_received",
        side: Some(Direction::ToClient),
        need: Progress::Complete,
        both_ways: false,
        compile: |v| Ok(boxed(FtpCheck::ReplyReceived(word(v, "yes", "no")?))),
    },
    CheckDef {
        name: "ftpbounce",
        side: Some(Direction::ToServer),
        need: Progress::Complete,
        both_ways: false,
        compile: |v| match v {
            Value::None => Ok(boxed(FtpCheck::Bounce)),
            _ => Err("takes no value".into()),
        },
    },
];

impl TxCheck for FtpCheck {
    fn matches(&self, tx: &dyn ProtoTx, _dir: Direction, _now_secs: i64) -> bool {
        let Some(tx) = tx.as_any().downcast_ref::<FtpTx>() else { return false };
        match self {
            FtpCheck::DynamicPort(c) => tx.dynamic_port.is_some_and(|p| c.matches(p.into())),
            FtpCheck::Active(active) => tx.mode().is_some_and(|m| (m == "active") == *active),
            FtpCheck::ReplyReceived(yes) => tx.reply_received == *yes,
            FtpCheck::Bounce => tx.bounce,
        }
    }
}
