//! `dcerpc.iface` (`dce_iface`): the interface a request's context was
//! bound to and accepted for, `uuid[,<op>version][,any_frag]`, the version
//! the interface's major one; `dcerpc.opnum` (`dce_opnum`): the request's
//! operation, a list of numbers and ranges (`1,5-7`).

use vigil_rules::Value;
use vigil_types::Direction;

use super::carried::Call;
use super::parser::DcerpcTx;
use super::pdu::{self, Context};
use super::udp::UdpCall;
use crate::progress::Progress;
use crate::proto::{CheckDef, ProtoTx, TxCheck};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DcerpcCheck {
    Iface { uuid: [u8; 16], version: Option<(char, u16)> },
    Opnum(Vec<(u16, u16)>),
}

fn text(v: &Value) -> Result<&str, String> {
    match v {
        Value::Text(t) | Value::Str(t) => Ok(t.trim()),
        _ => Err("expects a value".into()),
    }
}

/// A UUID in its text form.
fn parse_uuid(s: &str) -> Result<[u8; 16], String> {
    let hex: String = s.chars().filter(|&c| c != '-').collect();
    let groups: Vec<usize> = s.split('-').map(str::len).collect();
    if hex.len() != 32 || groups != [8, 4, 4, 4, 12] {
        return Err(format!("invalid UUID '{s}'"));
    }
    let mut out = [0u8; 16];
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|_| format!("invalid UUID '{s}'"))?;
    }
    Ok(out)
}

fn iface(v: &Value) -> Result<Box<dyn TxCheck>, String> {
    let mut parts = text(v)?.split(',').map(str::trim);
    let uuid = parse_uuid(parts.next().unwrap_or_default())?;
    let mut version = None;
    for p in parts {
        if p == "any_frag" {
            continue;
        }
        let op = p.chars().next().filter(|c| matches!(c, '<' | '>' | '=' | '!')).ok_or_else(|| format!("invalid version '{p}'"))?;
        let n = p[1..].trim().parse::<u16>().map_err(|_| format!("invalid version '{p}'"))?;
        version = Some((op, n));
    }
    Ok(Box::new(DcerpcCheck::Iface { uuid, version }))
}

fn opnum(v: &Value) -> Result<Box<dyn TxCheck>, String> {
    let mut ranges = Vec::new();
    for item in text(v)?.split(',').map(str::trim) {
        let n = |s: &str| s.trim().parse::<u16>().map_err(|_| format!("invalid opnum '{}'", s.trim()));
        let r = match item.split_once('-') {
            Some((a, b)) => (n(a)?, n(b)?),
            None => (n(item)?, n(item)?),
        };
        if r.0 > r.1 {
            return Err(format!("range '{item}' runs backwards"));
        }
        ranges.push(r);
    }
    Ok(Box::new(DcerpcCheck::Opnum(ranges)))
}

pub(super) const CHECKS: &[CheckDef] = &[
    // Inspected on both sides of a call by a rule that names no direction, as Suricata registers them.
    CheckDef { name: "dcerpc.iface", side: None, need: Progress::Complete, both_ways: true, compile: iface },
    CheckDef { name: "dcerpc.opnum", side: None, need: Progress::Complete, both_ways: true, compile: opnum },
];

/// A request's operation and the contexts it was bound through that the
/// server accepted, over TCP or through a pipe; over UDP, its own.
fn request(tx: &dyn ProtoTx) -> Option<(u16, Vec<Context>)> {
    if let Some(t) = tx.as_any().downcast_ref::<DcerpcTx>() {
        let accepted = t.ifaces.iter().filter(|i| i.result == Some(0)).map(|i| i.ctx).collect();
        return (t.kind == Some(pdu::REQUEST)).then_some((t.opnum, accepted));
    }
    // Over UDP every request names its interface.
    if let Some(c) = tx.as_any().downcast_ref::<UdpCall>() {
        return c.requested.then(|| (c.opnum, vec![c.iface]));
    }
    // A call through a pipe lists its context only once the bind was accepted.
    let c = tx.as_any().downcast_ref::<Call>().filter(|c| c.kind == pdu::REQUEST)?;
    Some((c.opnum, c.ifaces.iter().map(|b| b.ctx).collect()))
}

impl TxCheck for DcerpcCheck {
    fn matches(&self, tx: &dyn ProtoTx, _dir: Direction, _now_secs: i64) -> bool {
        let Some((opnum, ifaces)) = request(tx) else { return false };
        match self {
            DcerpcCheck::Iface { uuid, version } => ifaces.iter().any(|ctx| {
                let v = ctx.major;
                ctx.uuid == *uuid
                    && version.is_none_or(|(op, n)| match op {
                        '<' => v < n,
                        '>' => v > n,
                        '!' => v != n,
                        _ => v == n,
                    })
            }),
            DcerpcCheck::Opnum(ranges) => ranges.iter().any(|&(lo, hi)| (lo..=hi).contains(&opnum)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_parse_or_are_refused() {
        assert_eq!(parse_uuid("e1af8308-5d1f-11c9-91a4-08002b14a0fa").unwrap()[0], 0xe1);
        assert!(parse_uuid("e1af8308-5d1f-11c9-91a4").is_err());
        assert!(iface(&Value::Text("e1af8308-5d1f-11c9-91a4-08002b14a0fa,>2,any_frag".into())).is_ok());
        assert!(iface(&Value::Text("e1af8308-5d1f-11c9-91a4-08002b14a0fa,2".into())).is_err());
        assert!(opnum(&Value::Text("1,5-7, 20".into())).is_ok());
        assert!(opnum(&Value::Text("7-5".into())).is_err());
    }
}
