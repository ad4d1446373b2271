//! LDAPv3 messages (RFC 4511): the message id, the operation and what
//! logging and detection use of each, read with [`crate::codecs::ber`].
//! Search filters and controls are not kept.

use serde_json::{json, Map, Value};

use crate::codecs::ber::{self, Reader, Tlv};
use crate::proto::escaped_text;

/// Values kept per list (attributes, values, changes).
const MAX_ITEMS: usize = 256;

/// Operations by their application tag number.
pub fn op_name(op: u8) -> Option<&'static str> {
    Some(match op {
        0 => "bind_request",
        1 => "bind_response",
        2 => "unbind_request",
        3 => "search_request",
        4 => "search_result_entry",
        5 => "search_result_done",
        6 => "modify_request",
        7 => "modify_response",
        8 => "add_request",
        9 => "add_response",
        10 => "del_request",
        11 => "del_response",
        12 => "mod_dn_request",
        13 => "mod_dn_response",
        14 => "compare_request",
        15 => "compare_response",
        16 => "abandon_request",
        19 => "search_result_reference",
        23 => "extended_request",
        24 => "extended_response",
        25 => "intermediate_response",
        _ => return None,
    })
}

/// The operation named `name`, or numbered so.
pub fn op_of(name: &str) -> Option<u8> {
    name.parse::<u8>().ok().filter(|&n| op_name(n).is_some()).or_else(|| (0..=25).find(|&n| op_name(n) == Some(name)))
}

pub fn is_request(op: u8) -> bool {
    matches!(op, 0 | 2 | 3 | 6 | 8 | 10 | 12 | 14 | 16 | 23)
}

/// Whether a response of `op` ends its request's exchange (a search's
/// entries, references and intermediate responses do not).
pub fn is_final(op: u8) -> bool {
    !matches!(op, 4 | 19 | 25)
}

/// LDAP result codes by their names.
pub fn result_name(code: u32) -> String {
    let n = match code {
        0 => "success",
        1 => "operations_error",
        2 => "protocol_error",
        3 => "time_limit_exceeded",
        4 => "size_limit_exceeded",
        5 => "compare_false",
        6 => "compare_true",
        7 => "auth_method_not_supported",
        8 => "stronger_auth_required",
        10 => "referral",
        11 => "admin_limit_exceeded",
        12 => "unavailable_critical_extension",
        13 => "confidentiality_required",
        14 => "sasl_bind_in_progress",
        16 => "no_such_attribute",
        17 => "undefined_attribute_type",
        18 => "inappropriate_matching",
        19 => "constraint_violation",
        20 => "attribute_or_value_exists",
        21 => "invalid_attribute_syntax",
        32 => "no_such_object",
        33 => "alias_problem",
        34 => "invalid_dns_syntax",
        35 => "is_leaf",
        36 => "alias_dereferencing_problem",
        48 => "inappropriate_authentication",
        49 => "invalid_credentials",
        50 => "insufficient_access_rights",
        51 => "busy",
        52 => "unavailable",
        53 => "unwilling_to_perform",
        54 => "loop_detect",
        64 => "naming_violation",
        65 => "object_class_violation",
        66 => "not_allowed_on_non_leaf",
        67 => "not_allowed_on_rdn",
        68 => "entry_already_exists",
        69 => "object_class_mods_prohibited",
        71 => "affects_multiple_dsas",
        80 => "other",
        _ => return code.to_string(),
    };
    n.into()
}

/// The result code named `name`, or numbered so.
pub fn result_of(name: &str) -> Option<u32> {
    name.parse().ok().or_else(|| (0..=80).find(|&c| result_name(c) == name))
}

/// One message, as far as it is read.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub id: u32,
    pub op: u8,
    /// The operation's own object, as EVE writes it (none for an unbind).
    pub body: Option<Value>,
    /// Its distinguished name (a request's subject, a response's matched DN
    /// or entry name), result code and diagnostic message, and attribute types.
    pub dn: Option<String>,
    pub result: Option<u32>,
    pub message: Option<String>,
    pub attribute_types: Vec<String>,
    /// An extended request's or response's name.
    pub name: Option<String>,
}

fn text(v: &[u8]) -> String {
    escaped_text(v)
}

fn hex(v: &[u8]) -> String {
    v.iter().map(|b| format!("{b:02x}")).collect()
}

fn uint(v: &[u8]) -> Option<u32> {
    u32::try_from(ber::uint(v).ok()?).ok()
}

/// The elements of a constructed value.
fn items(v: &[u8]) -> Option<Vec<Tlv<'_>>> {
    let mut r = Reader::new(v);
    let mut out = Vec::new();
    while !r.is_empty() {
        out.push(r.any().ok()?);
        if out.len() > 4 * MAX_ITEMS {
            return None;
        }
    }
    Some(out)
}

/// An LDAPResult's code, matched DN and message; the elements after them.
fn result<'a>(e: &[Tlv<'a>]) -> Option<(u32, String, String)> {
    Some((uint(e.first().filter(|t| t.tag == 0x0a)?.value)?, text(e.get(1)?.value), text(e.get(2)?.value)))
}

/// A list of PartialAttribute { type, vals SET OF value }.
fn attributes(v: &[u8], names: &mut Vec<String>, type_key: &str) -> Option<Value> {
    let mut list = Vec::new();
    for a in items(v)?.into_iter().take(MAX_ITEMS) {
        let parts = items(a.value)?;
        let t = text(parts.first()?.value);
        let values: Vec<Value> = parts.get(1).map(|s| items(s.value)).unwrap_or(Some(Vec::new()))?.iter().take(MAX_ITEMS).map(|x| text(x.value).into()).collect();
        names.push(t.clone());
        let mut o = Map::new();
        o.insert(type_key.into(), t.into());
        o.insert("values".into(), values.into());
        list.push(Value::Object(o));
    }
    Some(Value::Array(list))
}

/// Reads one LDAPMessage (its SEQUENCE's contents).
pub fn parse(seq: &[u8]) -> Option<Message> {
    let mut r = Reader::new(seq);
    let id = uint(r.expect(ber::INTEGER).ok()?)?;
    let op_tlv = r.any().ok()?;
    if op_tlv.tag & 0xc0 != 0x40 {
        return None;
    }
    let op = op_tlv.tag & 0x1f;
    op_name(op)?;
    let v = op_tlv.value;
    let mut m = Message { id, op, body: None, dn: None, result: None, message: None, attribute_types: Vec::new(), name: None };
    let body = match op {
        0 => {
            let e = items(v)?;
            let name = text(e.get(1)?.value);
            let mut o = Map::new();
            o.insert("version".into(), uint(e.first()?.value)?.into());
            o.insert("name".into(), name.clone().into());
            // RFC 4511's choices only, simple and SASL, as Suricata reads them
            // (Microsoft's NTLM "sicily" binds are not LDAPv3).
            let auth = e.get(2)?;
            if !matches!(auth.tag, 0x80 | 0xa3) {
                return None;
            }
            if let Some(auth) = Some(auth).filter(|t| t.tag == 0xa3) {
                let s = items(auth.value)?;
                let mut sasl = Map::new();
                sasl.insert("mechanism".into(), text(s.first()?.value).into());
                if let Some(c) = s.get(1) {
                    sasl.insert("credentials".into(), hex(c.value).into());
                }
                o.insert("sasl".into(), Value::Object(sasl));
            }
            m.dn = Some(name);
            Some(Value::Object(o))
        }
        3 => {
            let e = items(v)?;
            let base = text(e.first()?.value);
            let mut o = Map::new();
            o.insert("base_object".into(), base.clone().into());
            o.insert("scope".into(), uint(e.get(1)?.value)?.into());
            o.insert("deref_alias".into(), uint(e.get(2)?.value)?.into());
            o.insert("size_limit".into(), uint(e.get(3)?.value)?.into());
            o.insert("time_limit".into(), uint(e.get(4)?.value)?.into());
            o.insert("types_only".into(), (e.get(5)?.value.first().copied().unwrap_or(0) != 0).into());
            // Suricata 8.0.6 writes the filter when it is a presence test only.
            if let Some(f) = e.get(6).filter(|f| f.tag == 0x87) {
                o.insert("filter".into(), json!({"type": "present", "value": text(f.value)}));
            }
            let attrs: Vec<String> = e.get(7).map(|a| items(a.value)).unwrap_or(Some(Vec::new()))?.iter().take(MAX_ITEMS).map(|a| text(a.value)).collect();
            if !attrs.is_empty() {
                o.insert("attributes".into(), attrs.clone().into());
            }
            m.attribute_types = attrs;
            m.dn = Some(base);
            Some(Value::Object(o))
        }
        4 => {
            let e = items(v)?;
            let base = text(e.first()?.value);
            let mut o = Map::new();
            o.insert("base_object".into(), base.clone().into());
            o.insert("attributes".into(), attributes(e.get(1)?.value, &mut m.attribute_types, "type")?);
            m.dn = Some(base);
            Some(Value::Object(o))
        }
        6 => {
            let e = items(v)?;
            let object = text(e.first()?.value);
            let mut changes = Vec::new();
            for c in items(e.get(1)?.value)?.into_iter().take(MAX_ITEMS) {
                let parts = items(c.value)?;
                let operation = match uint(parts.first()?.value)? {
                    0 => "add".to_string(),
                    1 => "delete".to_string(),
                    2 => "replace".to_string(),
                    n => n.to_string(),
                };
                let attr = items(parts.get(1)?.value)?;
                let t = text(attr.first()?.value);
                let values: Vec<Value> = attr.get(1).map(|s| items(s.value)).unwrap_or(Some(Vec::new()))?.iter().take(MAX_ITEMS).map(|x| text(x.value).into()).collect();
                m.attribute_types.push(t.clone());
                changes.push(json!({"operation": operation, "modification": {"attribute_type": t, "attribute_values": values}}));
            }
            m.dn = Some(object.clone());
            Some(json!({"object": object, "changes": changes}))
        }
        8 => {
            let e = items(v)?;
            let entry = text(e.first()?.value);
            let attrs = attributes(e.get(1)?.value, &mut m.attribute_types, "name")?;
            m.dn = Some(entry.clone());
            Some(json!({"entry": entry, "attributes": attrs}))
        }
        10 => {
            let dn = text(v);
            m.dn = Some(dn.clone());
            Some(json!({"dn": dn}))
        }
        12 => {
            let e = items(v)?;
            let entry = text(e.first()?.value);
            let mut o = Map::new();
            o.insert("entry".into(), entry.clone().into());
            o.insert("new_rdn".into(), text(e.get(1)?.value).into());
            o.insert("delete_old_rdn".into(), (e.get(2)?.value.first().copied().unwrap_or(0) != 0).into());
            if let Some(s) = e.get(3).filter(|t| t.tag == 0x80) {
                o.insert("new_superior".into(), text(s.value).into());
            }
            m.dn = Some(entry);
            Some(Value::Object(o))
        }
        14 => {
            let e = items(v)?;
            let entry = text(e.first()?.value);
            let ava = items(e.get(1)?.value)?;
            let desc = text(ava.first()?.value);
            m.attribute_types.push(desc.clone());
            m.dn = Some(entry.clone());
            Some(json!({"entry": entry, "attribute_value_assertion": {"description": desc, "value": text(ava.get(1)?.value)}}))
        }
        // Suricata 8.0.6 logs an abandon without the id it abandons.
        16 => {
            uint(v)?;
            None
        }
        23 => {
            let e = items(v)?;
            let name = text(e.iter().find(|t| t.tag == 0x80)?.value);
            let mut o = Map::new();
            o.insert("name".into(), name.clone().into());
            if let Some(val) = e.iter().find(|t| t.tag == 0x81) {
                o.insert("value".into(), text(val.value).into());
            }
            m.name = Some(name);
            Some(Value::Object(o))
        }
        25 => {
            let e = items(v)?;
            let mut o = Map::new();
            if let Some(n) = e.iter().find(|t| t.tag == 0x80) {
                o.insert("name".into(), text(n.value).into());
            }
            if let Some(val) = e.iter().find(|t| t.tag == 0x81) {
                o.insert("value".into(), text(val.value).into());
            }
            Some(Value::Object(o))
        }
        2 => None,
        19 => {
            let urls: Vec<Value> = items(v)?.iter().take(MAX_ITEMS).map(|u| text(u.value).into()).collect();
            Some(json!({"urls": urls}))
        }
        // The responses that are an LDAPResult, with what some add.
        _ => {
            let e = items(v)?;
            let (code, matched, message) = result(&e)?;
            let mut o = Map::new();
            o.insert("result_code".into(), result_name(code).into());
            o.insert("matched_dn".into(), matched.clone().into());
            o.insert("message".into(), message.clone().into());
            if op == 1 {
                if let Some(c) = e.iter().find(|t| t.tag == 0x87) {
                    o.insert("server_sasl_creds".into(), hex(c.value).into());
                }
            }
            if op == 24 {
                if let Some(n) = e.iter().find(|t| t.tag == 0x8a) {
                    let n = text(n.value);
                    m.name = Some(n.clone());
                    o.insert("name".into(), n.into());
                }
                if let Some(val) = e.iter().find(|t| t.tag == 0x8b) {
                    o.insert("value".into(), text(val.value).into());
                }
            }
            m.result = Some(code);
            m.message = Some(message);
            m.dn = Some(matched);
            Some(Value::Object(o))
        }
    };
    m.body = body;
    Some(m)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub use crate::codecs::ber::tlv;

    /// An LDAPMessage with `id` and operation `op` (tag and contents).
    pub fn message(id: u8, op: u8, v: &[u8]) -> Vec<u8> {
        tlv(0x30, &[tlv(0x02, &[id]), tlv(op, v)].concat())
    }

    #[test]
    fn operations_are_read_and_named() {
        let search = [
            tlv(0x04, b"dc=example,dc=com"),
            tlv(0x0a, &[2]),
            tlv(0x0a, &[0]),
            tlv(0x02, &[0]),
            tlv(0x02, &[0]),
            tlv(0x01, &[0]),
            tlv(0x87, b"objectClass"),
            tlv(0x30, &[tlv(0x04, b"*"), tlv(0x04, b"+")].concat()),
        ]
        .concat();
        let m = message(2, 0x63, &search);
        let r = Reader::new(&m).expect(0x30).unwrap();
        let s = parse(r).unwrap();
        assert_eq!((s.id, s.op, s.dn.as_deref()), (2, 3, Some("dc=example,dc=com")));
        assert_eq!(s.attribute_types, ["*", "+"]);
        assert_eq!(s.body.unwrap()["scope"], 2);
        let done = message(2, 0x65, &[tlv(0x0a, &[4]), tlv(0x04, b""), tlv(0x04, b"too many")].concat());
        let d = parse(Reader::new(&done).expect(0x30).unwrap()).unwrap();
        assert_eq!((d.result, d.message.as_deref()), (Some(4), Some("too many")));
        assert_eq!(d.body.unwrap()["result_code"], "size_limit_exceeded");
        assert_eq!(op_of("search_request"), Some(3));
        assert_eq!(op_of("19"), Some(19));
        assert_eq!(result_of("invalid_credentials"), Some(49));
        // Not a known operation, a cut one.
        assert!(parse(Reader::new(&message(1, 0x7f, b"")).expect(0x30).unwrap()).is_none());
        assert!(parse(&Reader::new(&m).expect(0x30).unwrap()[..20]).is_none());
    }
}
