//! ENIP's value checks. Each reads the message of the side inspected (a
//! rule that names no direction inspects both): `enip_command` and
//! `enip.status` (a number or a name), `cip_service` (`service[,class[,
//! attribute]]`), the CIP path and status keywords (multi-integers over the
//! services a message holds) and the identity and service fields.

use vigil_rules::{IntCmp, Value};
use vigil_types::Direction;

use super::{EnipTx, Message, COMMANDS, STATUSES};
use crate::progress::Progress;
use crate::proto::multiint::MultiInt;
use crate::proto::{CheckDef, ProtoTx, TxCheck};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnipCheck {
    Command(IntCmp),
    Status(IntCmp),
    Service { service: u8, class: Option<u32>, attribute: Option<u32> },
    /// A path segment's value (0 class, 1 instance, 4 attribute) over the services of a request.
    Path(u8, MultiInt),
    CipStatus(MultiInt),
    ExtendedStatus(MultiInt),
    ProtocolVersion(IntCmp),
    Identity(IdField, IntCmp),
    Capabilities(IntCmp),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdField {
    Revision,
    Status,
    State,
    Serial,
    ProductCode,
    DeviceType,
    VendorId,
}

fn int(v: &Value, max: u64) -> Result<IntCmp, String> {
    match v {
        Value::Int(c) if c.fits(max) => Ok(*c),
        _ => Err(format!("expects an integer comparison of at most {max}")),
    }
}

fn named(v: &Value, max: u64, names: &[(&str, u64)]) -> Result<IntCmp, String> {
    match v {
        Value::Text(t) | Value::Str(t) => {
            let (neg, name) = match t.trim().strip_prefix('!') {
                Some(n) => (true, n.trim()),
                None => (false, t.trim()),
            };
            let code = names.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, c)| *c);
            let code = code.ok_or_else(|| format!("unknown value '{name}'"))?;
            Ok(if neg { IntCmp::Ne(code) } else { IntCmp::Eq(code) })
        }
        other => int(other, max),
    }
}

fn service(v: &Value) -> Result<Box<dyn TxCheck>, String> {
    let t = match v {
        Value::Text(t) | Value::Str(t) => t,
        _ => return Err("expects service[,class[,attribute]]".into()),
    };
    let parts: Vec<&str> = t.split(',').map(str::trim).collect();
    let n = |s: &str| s.parse::<u32>().map_err(|_| format!("invalid number '{s}'"));
    if parts.len() > 3 {
        return Err("at most service, class and attribute".into());
    }
    let service = u8::try_from(n(parts[0])?).map_err(|_| "a service is at most 255".to_string())?;
    Ok(Box::new(EnipCheck::Service {
        service,
        class: parts.get(1).map(|s| n(s)).transpose()?,
        attribute: parts.get(2).map(|s| n(s)).transpose()?,
    }))
}

const fn message(name: &'static str, compile: fn(&Value) -> Result<Box<dyn TxCheck>, String>) -> CheckDef {
    CheckDef { name, side: None, need: Progress::Complete, both_ways: true, compile }
}

fn boxed(c: EnipCheck) -> Result<Box<dyn TxCheck>, String> {
    Ok(Box::new(c))
}

fn identity(field: IdField, max: u64) -> impl Fn(&Value) -> Result<Box<dyn TxCheck>, String> {
    move |v| boxed(EnipCheck::Identity(field, int(v, max)?))
}

const U16: u64 = u16::MAX as u64;
const U32: u64 = u32::MAX as u64;

pub(super) const CHECKS: &[CheckDef] = &[
    message("enip_command", |v| {
        let names: Vec<(&str, u64)> = COMMANDS.iter().map(|(n, c)| (*n, u64::from(*c))).collect();
        boxed(EnipCheck::Command(named(v, U16, &names)?))
    }),
    message("enip.status", |v| {
        let names: Vec<(&str, u64)> = STATUSES.iter().map(|(n, c)| (*n, u64::from(*c))).collect();
        boxed(EnipCheck::Status(named(v, U32, &names)?))
    }),
    message("cip_service", service),
    message("enip.cip_class", |v| boxed(EnipCheck::Path(0, MultiInt::compile(v, U32, |_| None)?))),
    message("enip.cip_instance", |v| boxed(EnipCheck::Path(1, MultiInt::compile(v, U32, |_| None)?))),
    message("enip.cip_attribute", |v| boxed(EnipCheck::Path(4, MultiInt::compile(v, U32, |_| None)?))),
    message("enip.cip_status", |v| boxed(EnipCheck::CipStatus(MultiInt::compile(v, u8::MAX.into(), |_| None)?))),
    message("enip.cip_extendedstatus", |v| boxed(EnipCheck::ExtendedStatus(MultiInt::compile(v, U16, |_| None)?))),
    message("enip.protocol_version", |v| boxed(EnipCheck::ProtocolVersion(int(v, U16)?))),
    message("enip.revision", |v| identity(IdField::Revision, U16)(v)),
    message("enip.identity_status", |v| identity(IdField::Status, U16)(v)),
    message("enip.state", |v| identity(IdField::State, u8::MAX.into())(v)),
    message("enip.serial", |v| identity(IdField::Serial, U32)(v)),
    message("enip.product_code", |v| identity(IdField::ProductCode, U16)(v)),
    message("enip.device_type", |v| identity(IdField::DeviceType, U16)(v)),
    message("enip.vendor_id", |v| identity(IdField::VendorId, U16)(v)),
    message("enip.capabilities", |v| boxed(EnipCheck::Capabilities(int(v, U16)?))),
];

impl EnipCheck {
    fn matches_message(&self, m: &Message) -> bool {
        match self {
            EnipCheck::Command(c) => c.matches(m.command.into()),
            EnipCheck::Status(c) => c.matches(m.status.into()),
            EnipCheck::Service { service, class, attribute } => {
                let in_requests = m.cip_request.iter().flat_map(|r| r.all()).any(|r| {
                    r.service == *service
                        && class.is_none_or(|c| r.class() == Some(c))
                        && attribute.is_none_or(|a| r.path.iter().any(|s| s.kind == 4 && s.value == a) || r.attributes.contains(&a))
                });
                let in_responses =
                    class.is_none() && m.cip_response.iter().flat_map(|r| r.all()).any(|r| r.service & 0x7f == *service);
                in_requests || in_responses
            }
            EnipCheck::Path(kind, mi) => {
                let requests = || m.cip_request.iter().flat_map(|r| r.all());
                let mut values: Vec<u64> = requests()
                    .flat_map(|r| r.path.iter())
                    .filter(|s| s.kind == *kind)
                    .map(|s| u64::from(s.value))
                    .collect();
                if *kind == 4 {
                    values.extend(requests().flat_map(|r| r.attributes.iter()).map(|&a| u64::from(a)));
                }
                !values.is_empty() && mi.matches(&values)
            }
            EnipCheck::CipStatus(mi) => {
                let values: Vec<u64> = m.cip_response.iter().flat_map(|r| r.all()).map(|r| u64::from(r.status)).collect();
                !values.is_empty() && mi.matches(&values)
            }
            EnipCheck::ExtendedStatus(mi) => {
                let values: Vec<u64> =
                    m.cip_response.iter().flat_map(|r| r.all()).flat_map(|r| r.extended.iter()).map(|&e| u64::from(e)).collect();
                !values.is_empty() && mi.matches(&values)
            }
            EnipCheck::ProtocolVersion(c) => {
                let v = m.identity.as_ref().map(|i| i.protocol_version).or(m.protocol_version);
                let services = m.services.iter().any(|s| c.matches(s.protocol_version.into()));
                v.is_some_and(|v| c.matches(v.into())) || services
            }
            EnipCheck::Identity(field, c) => m.identity.as_ref().is_some_and(|i| {
                let v: u64 = match field {
                    IdField::Revision => u64::from(i.revision.0) << 8 | u64::from(i.revision.1),
                    IdField::Status => i.status.into(),
                    IdField::State => i.state.into(),
                    IdField::Serial => i.serial.into(),
                    IdField::ProductCode => i.product_code.into(),
                    IdField::DeviceType => i.device_type.into(),
                    IdField::VendorId => i.vendor_id.into(),
                };
                c.matches(v)
            }),
            EnipCheck::Capabilities(c) => m.services.iter().any(|s| c.matches(s.capabilities.into())),
        }
    }
}

impl TxCheck for EnipCheck {
    fn matches(&self, tx: &dyn ProtoTx, dir: Direction, _now_secs: i64) -> bool {
        tx.as_any().downcast_ref::<EnipTx>().and_then(|t| t.side(dir)).is_some_and(|m| self.matches_message(m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_compile_by_number_or_name() {
        assert!(named(&Value::Text("list_identity".into()), U16, &[("list_identity", 0x63)]).is_ok());
        assert!(named(&Value::Text("nope".into()), U16, &[("list_identity", 0x63)]).is_err());
        assert!(service(&Value::Text("16,246,6".into())).is_ok());
        assert!(service(&Value::Text("16,246,6,1".into())).is_err());
        assert!(service(&Value::Text("300".into())).is_err());
    }
}
