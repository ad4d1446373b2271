//! The per-keyword part of a `rules.json` record, in Suricata's shape:
//! which keywords run on the packet (`lists.packet`), on the payload
//! (`lists.payload`) and after a match (`lists.postmatch`), each with its
//! values; the fast pattern (`mpm`); what a packet must be for the rule to
//! be tried at all (`requirements`); the packet engines; the address and
//! port flags; the keyword a `prefilter` chose; and the notes on what was
//! rewritten (a `within` with no content before it is a `depth`).
//!
//! It describes the rule as vigil parsed it. Keywords of application-layer
//! buffers are not listed yet (Suricata's `engines`).

use serde_json::{json, Map, Value};
use vigil_detect::Signature;
use vigil_rules::content::{FastPattern, NumVar};
use vigil_rules::keywords::bytes::ByteOpt;
use vigil_rules::keywords::flow::BitCmd;
use vigil_rules::{IntCmp, Kind, Rule, Value as RuleValue};

/// Adds `lists`, `mpm`, `requirements`, `pkt_engines`, `flags`,
/// `prefilter` and `notes` to `rec`.
pub(super) fn describe(rule: &Rule, sig: &Signature, rec: &mut Map<String, Value>) {
    let mut packet = Vec::new();
    let mut payload: Vec<(Value, bool)> = Vec::new();
    let mut postmatch = Vec::new();
    let mut notes = Vec::new();
    let mut sticky = false;
    let mut content_i = 0usize;
    let mut prefilter = None;
    let mut previous: Option<&str> = None;
    for o in &rule.options {
        let name = o.keyword.canonical;
        match (o.keyword.kind, &o.value) {
            (Kind::Buffer(b), _) => sticky = b != "pkt_data",
            (_, RuleValue::Content(c)) => {
                let info = rule.contents.get(content_i);
                content_i += 1;
                let Some(info) = info.filter(|i| i.buffer.is_none() && !sticky) else { continue };
                let m = &info.mods;
                let first = !payload.iter().any(|(v, _)| v["name"] == "content");
                let mut d = Map::new();
                d.insert("pattern".into(), json!(pretty(&c.bytes)));
                d.insert("length".into(), json!(c.bytes.len()));
                d.insert("nocase".into(), json!(m.nocase));
                d.insert("negated".into(), json!(c.negated));
                d.insert("starts_with".into(), json!(m.startswith));
                d.insert("ends_with".into(), json!(m.endswith));
                d.insert("fast_pattern".into(), json!(m.fast_pattern.is_some()));
                let num = |v: &Option<NumVar>| match v {
                    Some(NumVar::Num(n)) => Some(*n),
                    _ => None,
                };
                let (mut offset, mut depth) = (num(&m.offset), num(&m.depth));
                let (mut distance, mut within) = (num(&m.distance), num(&m.within));
                // With no content before it, a relative position is an absolute one.
                if first {
                    if let Some(dist) = distance.take() {
                        offset = Some(dist.max(0));
                    }
                    if let Some(w) = within.take() {
                        depth = Some(w + offset.unwrap_or(0));
                        notes.push("'within' option for pattern w/o previous content was converted to 'depth'");
                    }
                }
                for (k, v) in [("offset", offset), ("depth", depth), ("distance", distance), ("within", within)] {
                    if let Some(v) = v {
                        d.insert(k.into(), json!(v));
                    }
                }
                let relative = !first && (m.distance.is_some() || m.within.is_some());
                payload.push((json!({ "name": "content", "content": Value::Object(d) }), relative));
            }
            (_, RuleValue::Pcre(p)) if !sticky && !pcre_in_buffer(&p.flags) => {
                let relative = p.flags.contains('R');
                payload.push((json!({ "name": "pcre", "pcre": { "relative": relative } }), relative));
            }
            (_, RuleValue::ByteJump(b)) if !sticky => payload.push(byte_match(name, &b.nbytes, &b.offset, &b.opts)),
            (_, RuleValue::ByteTest(b)) if !sticky => payload.push(byte_match(name, &b.nbytes, &b.offset, &b.opts)),
            (_, RuleValue::Isdataat(i)) if !sticky => {
                payload.push((
                    json!({ "name": name, name: { "relative": i.relative, "negated": i.negated } }),
                    i.relative,
                ));
            }
            (_, RuleValue::Bits(b)) if name == "flowbits" => {
                let mut d = json!({ "cmd": b.cmd.as_str(), "names": b.names });
                if b.names.len() > 1 {
                    d["operator"] = json!(if b.any { "or" } else { "and" });
                }
                let m = json!({ "name": "flowbits", "flowbits": d });
                match b.cmd {
                    BitCmd::IsSet | BitCmd::IsNotSet => packet.push(m),
                    BitCmd::NoAlert => {}
                    _ => postmatch.push(m),
                }
            }
            (Kind::Packet | Kind::Flow | Kind::Payload, RuleValue::Int(cmp)) => {
                let (shown, key) = packet_names(name);
                packet.push(json!({ "name": shown, key: int_detail(name, cmp) }));
            }
            (Kind::Flow, _) if name == "flow" => packet.push(json!({ "name": "flow" })),
            _ => {}
        }
        if name == "prefilter" {
            prefilter = previous;
        }
        previous = Some(o.keyword.name);
    }
    // A keyword's `relative_next`: the one after it in its list is relative to it.
    for i in 0..payload.len() {
        let next_relative = payload.get(i + 1).is_some_and(|(_, r)| *r);
        let m = &mut payload[i].0;
        let name = m["name"].as_str().unwrap_or_default().to_string();
        if let Some(d) = m.get_mut(&name).and_then(Value::as_object_mut) {
            d.insert("relative_next".into(), json!(next_relative));
        }
    }
    let payload_list: Vec<Value> = payload.into_iter().map(|(m, _)| m).collect();
    let mpm = mpm(rule, sig);
    if let Some(m) = &mpm {
        rec.insert("mpm".into(), m.clone());
    }
    let requirements = requirements(rule, sig);
    if !requirements.is_empty() {
        rec.insert("requirements".into(), json!(requirements));
    }
    let mut engines = Vec::new();
    if !packet.is_empty() {
        engines.push(json!({ "name": "packet", "is_mpm": false }));
    }
    if !payload_list.is_empty() {
        engines.push(json!({ "name": "payload", "is_mpm": mpm.as_ref().is_some_and(|m| m["buffer"] == "payload") }));
    }
    if !engines.is_empty() {
        rec.insert("pkt_engines".into(), json!(engines));
    }
    let mut lists = Map::new();
    for (k, v) in [("packet", packet), ("payload", payload_list), ("postmatch", postmatch)] {
        if !v.is_empty() {
            lists.insert(k.into(), json!({ "matches": v }));
        }
    }
    if !lists.is_empty() {
        rec.insert("lists".into(), Value::Object(lists));
    }
    rec.insert("flags".into(), json!(flags(sig)));
    if let Some(name) = prefilter {
        rec.insert("prefilter".into(), json!({ "buffer": "packet", "name": name }));
    }
    if !notes.is_empty() {
        rec.insert("notes".into(), json!(notes));
    }
}

/// The name Suricata 8 lists a packet keyword under, and the key of its values.
fn packet_names(name: &str) -> (&str, &str) {
    match name {
        "seq" => ("tcp.seq", "seq"),
        "ack" => ("tcp.ack", "ack"),
        "tcp.mss" => ("tcp.mss", "tcp_mss"),
        "flow.age" => ("flow.age", "flow_age"),
        "icode" => ("icode", "code"),
        "itype" => ("itype", "type"),
        "icmp_id" => ("icmp_id", "id"),
        "icmp_seq" => ("icmp_seq", "seq"),
        other => (other, other),
    }
}

/// An integer comparison as Suricata's engine analysis writes it; the
/// sequence and id keywords, which only compare for equality, as a number.
fn int_detail(name: &str, cmp: &IntCmp) -> Value {
    match (name, *cmp) {
        ("seq" | "ack" | "icmp_id" | "icmp_seq", IntCmp::Eq(n)) => json!({ "number": n }),
        (_, IntCmp::Eq(n)) => json!({ "equal": n }),
        (_, IntCmp::Ne(n)) => json!({ "diff": n }),
        (_, IntCmp::Lt(n)) => json!({ "lt": n }),
        (_, IntCmp::Le(n)) => json!({ "lte": n }),
        (_, IntCmp::Gt(n)) => json!({ "gt": n }),
        (_, IntCmp::Ge(n)) => json!({ "gte": n }),
        (_, IntCmp::Range(lo, hi)) => json!({ "range": { "min": lo, "max": hi } }),
        (_, IntCmp::NotRange(lo, hi)) => json!({ "negated_range": { "min": lo, "max": hi } }),
        (_, IntCmp::Mask(m, v)) => json!({ "bitmask": { "mask": m, "value": v } }),
        (_, IntCmp::NotMask(m, v)) => json!({ "negated_bitmask": { "mask": m, "value": v } }),
    }
}

/// A `byte_jump` or `byte_test` in the payload list, and whether it is relative.
fn byte_match(name: &str, nbytes: &NumVar, offset: &NumVar, opts: &[ByteOpt]) -> (Value, bool) {
    (json!({ "name": name, name: byte_detail(nbytes, offset, opts) }), opts.contains(&ByteOpt::Relative))
}

fn byte_detail(nbytes: &NumVar, offset: &NumVar, opts: &[ByteOpt]) -> Value {
    let num = |v: &NumVar| match v {
        NumVar::Num(n) => json!(n),
        NumVar::Var(name) => json!(name),
    };
    let flags: Vec<&str> = opts
        .iter()
        .filter_map(|o| match o {
            ByteOpt::Relative => Some("relative"),
            ByteOpt::Big => Some("big"),
            ByteOpt::Little => Some("little"),
            ByteOpt::Dce => Some("dce"),
            ByteOpt::Str => Some("string"),
            ByteOpt::Align | ByteOpt::AlignTo(_) => Some("align"),
            ByteOpt::FromBeginning => Some("from_beginning"),
            ByteOpt::FromEnd => Some("from_end"),
            _ => None,
        })
        .collect();
    let mut d = json!({ "nbytes": num(nbytes), "offset": num(offset) });
    if !flags.is_empty() {
        d["flags"] = json!(flags);
    }
    d
}

/// pcre's buffer flags (`U`, `H`, `P`, ...) move it off the payload.
fn pcre_in_buffer(flags: &str) -> bool {
    flags.chars().any(|f| "UIPQHDMCSYVWJ".contains(f))
}

/// The fast pattern: its list (the payload, or a buffer under Suricata's
/// list name) and its bytes as Suricata prints them.
fn mpm(rule: &Rule, sig: &Signature) -> Option<Value> {
    let fp = sig.fast_pattern.as_ref()?;
    let bytes = |c: &vigil_rules::ContentInfo| match &rule.options[c.option].value {
        RuleValue::Content(content) => Some(&content.bytes[..]),
        _ => None,
    };
    // The content it came from: the one marked, else the one with its bytes.
    let info = rule
        .contents
        .iter()
        .find(|c| c.mods.fast_pattern.is_some_and(|f| f != FastPattern::Plain || bytes(c) == Some(&fp.bytes[..])))
        .or_else(|| rule.contents.iter().find(|c| bytes(c) == Some(&fp.bytes[..])))?;
    let buffer = match info.buffer {
        None => "payload".to_string(),
        Some(b) => list_name(b),
    };
    Some(json!({ "buffer": buffer, "pattern": pretty(&fp.bytes), "length": fp.bytes.len() }))
}

/// Suricata's list name for a sticky buffer.
fn list_name(buffer: &str) -> String {
    vigil_detect::compile::list_name(buffer)
}

/// What a packet must be for the rule to be tried: with or without a
/// payload and a real packet (not a pseudo packet) for `dsize`, part of a
/// flow for application-layer rules.
fn requirements(rule: &Rule, sig: &Signature) -> Vec<&'static str> {
    let mut out = Vec::new();
    let dsize = rule.options.iter().find_map(|o| match (&o.value, o.keyword.canonical) {
        (RuleValue::Int(c), "dsize") => Some(*c),
        _ => None,
    });
    let mut real = false;
    if let Some(c) = dsize {
        if c == IntCmp::Eq(0) {
            out.push("no_payload");
        } else if !c.matches(0) {
            out.push("payload");
        }
        // A comparison that may hold for an empty payload, or a difference,
        // must not be tried on a pseudo packet.
        real = c.matches(0) || matches!(c, IntCmp::Ne(_));
        if matches!(c, IntCmp::Ne(_)) && !out.contains(&"payload") {
            out.push("payload");
        }
    }
    let flow = sig.app_proto.is_some() || rule.options.iter().any(|o| o.keyword.canonical == "flow");
    if flow {
        out.push("flow");
    }
    if real {
        out.push("real_pkt");
    }
    out
}

/// Suricata's signature flags that follow from the header and `noalert`.
fn flags(sig: &Signature) -> Vec<&'static str> {
    let mut out = Vec::new();
    for (set, name) in [
        (sig.src.is_any(), "src_any"),
        (sig.dst.is_any(), "dst_any"),
        (sig.sport.is_full(), "sp_any"),
        (sig.dport.is_full(), "dp_any"),
        (sig.noalert, "noalert"),
    ] {
        if set {
            out.push(name);
        }
    }
    out
}

/// Bytes as Suricata prints a pattern: printable text as is, other bytes
/// and the characters with a meaning in rules as `|hex|`.
pub(super) fn pretty(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    let mut hex = false;
    for &b in bytes {
        let plain = b.is_ascii_graphic() && !matches!(b, b'/' | b';' | b':' | b'\\' | b'|' | b'"' | b'`' | b'\'');
        if plain {
            if hex {
                out.push('|');
                hex = false;
            }
            out.push(b as char);
        } else {
            out.push_str(&format!("{}{b:02X}", if hex { " " } else { "|" }));
            hex = true;
        }
    }
    if hex {
        out.push('|');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_print_as_suricata_prints_them() {
        assert_eq!(pretty(b"in pkt data"), "in|20|pkt|20|data");
        assert_eq!(pretty(b"a\x00\x01b"), "a|00 01|b");
        assert_eq!(pretty(b"x;"), "x|3B|");
    }
}
