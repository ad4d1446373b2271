//! MQTT's value checks. `mqtt.type` and `mqtt.reason_code` are
//! multi-integers over the packets of a transaction; `mqtt.qos` and
//! `mqtt.flags` match when any packet's fixed header does;
//! `mqtt.protocol_version`, `mqtt.connect.flags` and
//! `mqtt.connack.session_present` read the CONNECT or CONNACK.

use vigil_rules::{IntCmp, Value};
use vigil_types::Direction;

use super::message::{Body, CONNECT_FLAGS, TYPE_NAMES};
use super::MqttTx;
use crate::progress::Progress;
use crate::proto::multiint::MultiInt;
use crate::proto::{CheckDef, ProtoTx, TxCheck};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MqttCheck {
    Type(MultiInt),
    ReasonCode(MultiInt),
    Qos(IntCmp),
    ProtocolVersion(IntCmp),
    /// Bits that must be set, bits that must be clear, or a comparison
    /// of the whole byte.
    Flags(FlagTest),
    ConnectFlags(FlagTest),
    SessionPresent(bool),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FlagTest {
    Bits { set: u8, clear: u8 },
    Cmp(IntCmp),
}

impl FlagTest {
    fn compile(v: &Value, names: &[(&str, u8)]) -> Result<FlagTest, String> {
        let t = match v {
            Value::Int(c) if c.fits(u8::MAX.into()) => return Ok(FlagTest::Cmp(*c)),
            Value::Text(t) | Value::Str(t) => t,
            _ => return Err("expects a list of flags".into()),
        };
        if let Ok(c) = IntCmp::parse(t.trim(), u8::MAX.into()) {
            return Ok(FlagTest::Cmp(c));
        }
        let (mut set, mut clear) = (0u8, 0u8);
        for item in t.split(',').map(str::trim) {
            let (neg, name) = match item.strip_prefix('!') {
                Some(n) => (true, n.trim()),
                None => (false, item),
            };
            let bit = names.iter().find(|(n, _)| *n == name).map(|(_, b)| *b).ok_or_else(|| format!("unknown flag '{name}'"))?;
            if neg {
                clear |= bit;
            } else {
                set |= bit;
            }
        }
        if set & clear != 0 {
            return Err("a flag both set and negated".into());
        }
        Ok(FlagTest::Bits { set, clear })
    }

    fn matches(&self, v: u8) -> bool {
        match self {
            FlagTest::Bits { set, clear } => v & set == *set && v & clear == 0,
            FlagTest::Cmp(c) => c.matches(v.into()),
        }
    }
}

fn boxed(c: MqttCheck) -> Box<dyn TxCheck> {
    Box::new(c)
}

const fn check(name: &'static str, compile: fn(&Value) -> Result<Box<dyn TxCheck>, String>) -> CheckDef {
    CheckDef { name, side: None, need: Progress::Complete, both_ways: false, compile }
}

fn type_code(name: &str) -> Option<u64> {
    TYPE_NAMES.iter().position(|n| n.eq_ignore_ascii_case(name)).map(|i| i as u64)
}

fn yes_no(v: &Value) -> Result<bool, String> {
    match v {
        Value::Text(t) | Value::Str(t) => match t.trim() {
            "yes" | "true" => Ok(true),
            "no" | "false" => Ok(false),
            other => Err(format!("expects yes, true, no or false, got '{other}'")),
        },
        _ => Err("expects yes, true, no or false".into()),
    }
}

fn u8_cmp(v: &Value) -> Result<IntCmp, String> {
    match v {
        Value::Int(c) if c.fits(u8::MAX.into()) => Ok(*c),
        _ => Err("expects an integer comparison of at most 255".into()),
    }
}

pub(super) const CHECKS: &[CheckDef] = &[
    check("mqtt.type", |v| Ok(boxed(MqttCheck::Type(MultiInt::compile(v, u8::MAX.into(), type_code)?)))),
    check("mqtt.reason_code", |v| Ok(boxed(MqttCheck::ReasonCode(MultiInt::compile(v, u8::MAX.into(), |_| None)?)))),
    check("mqtt.qos", |v| match u8_cmp(v)? {
        IntCmp::Eq(q) if q <= 2 => Ok(boxed(MqttCheck::Qos(IntCmp::Eq(q)))),
        _ => Err("expects 0, 1 or 2".into()),
    }),
    check("mqtt.protocol_version", |v| Ok(boxed(MqttCheck::ProtocolVersion(u8_cmp(v)?)))),
    check("mqtt.flags", |v| Ok(boxed(MqttCheck::Flags(FlagTest::compile(v, &[("dup", 0x8), ("retain", 0x1)])?)))),
    check("mqtt.connect.flags", |v| Ok(boxed(MqttCheck::ConnectFlags(FlagTest::compile(v, &CONNECT_FLAGS)?)))),
    check("mqtt.connack.session_present", |v| Ok(boxed(MqttCheck::SessionPresent(yes_no(v)?)))),
];

impl TxCheck for MqttCheck {
    fn matches(&self, tx: &dyn ProtoTx, _dir: Direction, _now_secs: i64) -> bool {
        let Some(tx) = tx.as_any().downcast_ref::<MqttTx>() else { return false };
        match self {
            MqttCheck::Type(m) => {
                let kinds: Vec<u64> = tx.msgs.iter().map(|m| m.fixed.kind.into()).collect();
                m.matches(&kinds)
            }
            MqttCheck::ReasonCode(m) => {
                let codes: Vec<u64> = tx.msgs.iter().flat_map(|m| m.reason_codes()).collect();
                m.matches(&codes)
            }
            MqttCheck::Qos(c) => tx.msgs.iter().any(|m| c.matches(m.fixed.qos().into())),
            MqttCheck::Flags(f) => tx.msgs.iter().any(|m| f.matches(m.fixed.flags & 0x9)),
            MqttCheck::ProtocolVersion(c) => tx.connect().is_some_and(|con| c.matches(con.version.into())),
            MqttCheck::ConnectFlags(f) => tx.connect().is_some_and(|con| f.matches(con.flags)),
            MqttCheck::SessionPresent(want) => tx.msgs.iter().any(|m| match &m.body {
                Body::Connack { session_present, .. } => session_present == want,
                _ => false,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_are_names_with_negation() {
        let f = FlagTest::compile(&Value::Text("dup, !retain".into()), &[("dup", 0x8), ("retain", 0x1)]).unwrap();
        assert!(f.matches(0x8) && !f.matches(0x9) && !f.matches(0));
        assert!(FlagTest::compile(&Value::Text("dup,!dup".into()), &[("dup", 0x8)]).is_err());
        assert!(FlagTest::compile(&Value::Text("bogus".into()), &[("dup", 0x8)]).is_err());
    }

    #[test]
    fn types_go_by_name_or_number() {
        assert_eq!(type_code("connack"), Some(2));
        assert_eq!(type_code("UNASSIGNED"), Some(0));
        assert_eq!(type_code("nope"), None);
    }
}
