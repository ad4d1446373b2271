//! IKE's value checks: `ike.exchtype`, the key exchange and nonce payload
//! lengths (of the message inspected), and `ike.chosen_sa_attribute`
//! (`name=value` against the responder's chosen proposal).

use vigil_rules::{IntCmp, Value};
use vigil_types::Direction;

use super::{names, IkeTx};
use crate::progress::Progress;
use crate::proto::{CheckDef, ProtoTx, TxCheck};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IkeCheck {
    Exchange(IntCmp),
    KeyExchangeLength(IntCmp),
    NonceLength(IntCmp),
    Chosen { key: String, value: u64 },
}

fn int(v: &Value, max: u64) -> Result<IntCmp, String> {
    match v {
        Value::Int(c) if c.fits(max) => Ok(*c),
        _ => Err(format!("expects an integer comparison of at most {max}")),
    }
}

fn chosen(v: &Value) -> Result<Box<dyn TxCheck>, String> {
    let t = match v {
        Value::Text(t) | Value::Str(t) => t.trim(),
        _ => return Err("expects attribute=value".into()),
    };
    let (key, value) = t.split_once('=').ok_or("expects attribute=value")?;
    let key = key.trim();
    let known = (1..=16).any(|k| names::v1_key(k) == Some(key)) || key == "sa_esn";
    if !known {
        return Err(format!("unknown SA attribute '{key}'"));
    }
    let value = value.trim().parse().map_err(|_| format!("invalid value '{}'", value.trim()))?;
    Ok(Box::new(IkeCheck::Chosen { key: key.to_string(), value }))
}

const fn message(name: &'static str, compile: fn(&Value) -> Result<Box<dyn TxCheck>, String>) -> CheckDef {
    CheckDef { name, side: None, need: Progress::Complete, both_ways: true, compile }
}

pub(super) const CHECKS: &[CheckDef] = &[
    message("ike.exchtype", |v| Ok(Box::new(IkeCheck::Exchange(int(v, u8::MAX.into())?)))),
    message("ike.key_exchange_payload_length", |v| Ok(Box::new(IkeCheck::KeyExchangeLength(int(v, u32::MAX.into())?)))),
    message("ike.nonce_payload_length", |v| Ok(Box::new(IkeCheck::NonceLength(int(v, u32::MAX.into())?)))),
    message("ike.chosen_sa_attribute", chosen),
];

impl TxCheck for IkeCheck {
    fn matches(&self, tx: &dyn ProtoTx, dir: Direction, _now_secs: i64) -> bool {
        let Some(tx) = tx.as_any().downcast_ref::<IkeTx>().filter(|t| t.dir == dir) else { return false };
        let m = &tx.msg;
        match self {
            IkeCheck::Exchange(c) => c.matches(m.exchange.into()),
            IkeCheck::KeyExchangeLength(c) => m.key_exchange.as_ref().is_some_and(|k| c.matches(k.len() as u64)),
            IkeCheck::NonceLength(c) => m.nonce.as_ref().is_some_and(|n| c.matches(n.len() as u64)),
            IkeCheck::Chosen { key, value } => tx.exchange.chosen.iter().flatten().any(|a| {
                let name = if m.major == 1 { names::v1_key(a.kind) } else { names::v2_key(a.kind) };
                name == Some(key.as_str()) && a.value == *value
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chosen_attributes_are_name_equals_number() {
        assert!(chosen(&Value::Text("alg_hash=2".into())).is_ok());
        assert!(chosen(&Value::Text("sa_key_length=128".into())).is_ok());
        assert!(chosen(&Value::Text("alg_colour=2".into())).is_err());
        assert!(chosen(&Value::Text("alg_hash".into())).is_err());
    }
}
