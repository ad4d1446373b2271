//! The `http2.*` value keywords, on the side of the stream a rule
//! inspects: `http2.frametype` (a frame type it sent, by name or number),
//! `http2.errorcode` (of its RST_STREAM or GOAWAY), `http2.priority`,
//! `http2.window`, `http2.size_update` (any dynamic table size update of its
//! header blocks) and `http2.settings` (`SETTINGS_ID`, optionally followed
//! by a comparison of its value).

use vigil_rules::{IntCmp, Value};
use vigil_types::Direction;

use super::frame;
use super::tx::{Http2Tx, Side};
use crate::progress::Progress;
use crate::proto::{CheckDef, ProtoTx, TxCheck};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Http2Check {
    FrameType(u8),
    ErrorCode(u32),
    Priority(IntCmp),
    Window(IntCmp),
    SizeUpdate(IntCmp),
    Settings { id: u16, value: Option<IntCmp> },
}

/// A name without its underscores, in capitals: `RST_STREAM` and
/// `RSTSTREAM` are one.
fn squash(s: &str) -> String {
    s.chars().filter(|c| *c != '_').map(|c| c.to_ascii_uppercase()).collect()
}

fn number_or_name(v: &Value, names: &[&str], max: u64, what: &str) -> Result<u64, String> {
    match v {
        Value::Int(IntCmp::Eq(n)) if *n <= max => Ok(*n),
        Value::Text(t) | Value::Str(t) => {
            let t = squash(t.trim());
            names.iter().position(|n| squash(n) == t).map(|i| i as u64).ok_or_else(|| format!("unknown {what} '{t}'"))
        }
        _ => Err(format!("expects a {what} name or number")),
    }
}

fn int(v: &Value, max: u64) -> Result<IntCmp, String> {
    match v {
        Value::Int(c) if c.fits(max) => Ok(*c),
        _ => Err(format!("expects an integer comparison of at most {max}")),
    }
}

/// The setting names rules use (RFC 9113 6.5.2).
const SETTING_NAMES: [&str; 9] = [
    "",
    "SETTINGS_HEADER_TABLE_SIZE",
    "SETTINGS_ENABLE_PUSH",
    "SETTINGS_MAX_CONCURRENT_STREAMS",
    "SETTINGS_INITIAL_WINDOW_SIZE",
    "SETTINGS_MAX_FRAME_SIZE",
    "SETTINGS_MAX_HEADER_LIST_SIZE",
    "",
    "SETTINGS_ENABLE_CONNECT_PROTOCOL",
];

fn settings(v: &Value) -> Result<Box<dyn TxCheck>, String> {
    let t = match v {
        Value::Text(t) | Value::Str(t) => t.trim(),
        _ => return Err("expects a setting name".into()),
    };
    let at = t.find(['<', '>', '=', '!']).unwrap_or(t.len());
    let (name, rest) = t.split_at(at);
    let wanted = squash(name.trim());
    let id = SETTING_NAMES
        .iter()
        .position(|n| !n.is_empty() && squash(n) == wanted)
        .ok_or_else(|| format!("unknown setting '{}'", name.trim()))?;
    let rest = rest.trim_start_matches('=');
    let value = if rest.trim().is_empty() {
        None
    } else {
        Some(IntCmp::parse(rest, u32::MAX.into()).map_err(|e| e.reason)?)
    };
    Ok(Box::new(Http2Check::Settings { id: id as u16, value }))
}

const fn check(name: &'static str, compile: fn(&Value) -> Result<Box<dyn TxCheck>, String>) -> CheckDef {
    CheckDef { name, side: None, need: Progress::Headers, both_ways: true, compile }
}

pub(super) const CHECKS: &[CheckDef] = &[
    check("http2.frametype", |v| {
        Ok(Box::new(Http2Check::FrameType(number_or_name(v, &frame::TYPE_NAMES, u8::MAX.into(), "frame type")? as u8)))
    }),
    check("http2.errorcode", |v| {
        Ok(Box::new(Http2Check::ErrorCode(number_or_name(v, &frame::ERROR_NAMES, u32::MAX.into(), "error code")? as u32)))
    }),
    check("http2.priority", |v| Ok(Box::new(Http2Check::Priority(int(v, u8::MAX.into())?)))),
    check("http2.window", |v| Ok(Box::new(Http2Check::Window(int(v, u32::MAX.into())?)))),
    check("http2.size_update", |v| Ok(Box::new(Http2Check::SizeUpdate(int(v, u64::MAX)?)))),
    check("http2.settings", settings),
];

impl Http2Check {
    fn side_matches(&self, s: &Side) -> bool {
        match self {
            Http2Check::FrameType(t) => *t < 16 && s.frame_types & (1 << t) != 0,
            Http2Check::ErrorCode(c) => s.error_codes.contains(c),
            Http2Check::Priority(c) => s.priorities.iter().any(|&p| c.matches(p.into())),
            Http2Check::Window(c) => s.window.is_some_and(|w| c.matches(w.into())),
            Http2Check::SizeUpdate(c) => s.size_updates.iter().any(|u| c.matches(*u)),
            Http2Check::Settings { id, value } => {
                s.settings.iter().any(|(i, v)| i == id && value.is_none_or(|c| c.matches((*v).into())))
            }
        }
    }
}

impl TxCheck for Http2Check {
    fn matches(&self, tx: &dyn ProtoTx, dir: Direction, _now_secs: i64) -> bool {
        tx.as_any().downcast_ref::<Http2Tx>().is_some_and(|t| self.side_matches(t.sides.get(dir)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers() {
        let c = |name: &str, v: Value| (CHECKS.iter().find(|c| c.name == name).unwrap().compile)(&v);
        assert!(c("http2.frametype", Value::Text("GOAWAY".into())).is_ok());
        assert!(c("http2.frametype", Value::Text("RST_STREAM".into())).is_ok());
        assert!(c("http2.frametype", Value::Text("NOPE".into())).is_err());
        assert!(c("http2.errorcode", Value::Text("HTTP_1_1_REQUIRED".into())).is_ok());
        assert!(c("http2.settings", Value::Text("SETTINGS_ENABLE_PUSH=0".into())).is_ok());
        assert!(c("http2.settings", Value::Text("SETTINGS_MAX_CONCURRENT_STREAMS>100".into())).is_ok());
        assert!(c("http2.settings", Value::Text("SETTINGS_COLOUR".into())).is_err());
        let mut s = Side::default();
        s.settings = vec![(3, 250)];
        let Ok(check) = settings(&Value::Text("SETTINGS_MAX_CONCURRENT_STREAMS>100".into())) else { panic!() };
        let mut t = Http2Tx::new(0, 0);
        t.sides.to_client = s;
        assert!(check.matches(&t, Direction::ToClient, 0));
        assert!(!check.matches(&t, Direction::ToServer, 0));
    }
}
