//! Flow keywords: `flow` state and direction, flow/host/ip-pair bits,
//! `flowint`, `stream_size`, and the protocol/event checks tied to a flow.

use super::{kw, p_none, p_text, p_u32, p_u64, KeywordDef, Kind};
use crate::error::{verr, VResult};
use crate::intcmp::{parse_u64, IntCmp};
use crate::lexer::{split_commas, trim};
use crate::options::Value;
use std::fmt;

pub(crate) const ROWS: &[KeywordDef] = &[
    kw!("flow", Kind::Flow, Required, p_flow, "flow state and direction: established, to_server, ..."),
    kw!("flowbits", Kind::Flow, Required, p_flowbits, "set/check named bits on the flow"),
    kw!("xbits", Kind::Flow, Required, p_xbits, "set/check named bits on a host or ip pair"),
    kw!("hostbits", Kind::Flow, Required, p_hostbits, "set/check named bits on a host"),
    kw!("flowint", Kind::Flow, Required, p_flowint, "integer flow variables: set, change, compare"),
    kw!("flowvar", Kind::Flow, Required, p_var_match, "a flow variable holds this content: name, content"),
    kw!("pktvar", Kind::Flow, Required, p_var_match, "a packet variable holds this content: name, content"),
    kw!("stream_size", Kind::Flow, Required, p_stream_size, "bytes seen on the stream: side, operator, value"),
    kw!("flow.age", Kind::Flow, Required, p_u32, "flow age in seconds"),
    kw!(
        "flow.pkts",
        Kind::Flow,
        Required,
        p_flow_count,
        "packets in the flow: toserver, toclient or either, then a comparison"
    ),
    kw!(
        "flow.bytes",
        Kind::Flow,
        Required,
        p_flow_count,
        "bytes in the flow: toserver, toclient or either, then a comparison"
    ),
    kw!("flow.pkts_toserver", Kind::Flow, Required, p_u32, "packets to the server"),
    kw!("flow.pkts_toclient", Kind::Flow, Required, p_u32, "packets to the client"),
    kw!("flow.bytes_toserver", Kind::Flow, Required, p_u64, "bytes to the server"),
    kw!("flow.bytes_toclient", Kind::Flow, Required, p_u64, "bytes to the client"),
    kw!("app-layer-protocol", Kind::Flow, Required, p_text, "the detected application protocol"),
    kw!("app-layer-event", Kind::Flow, Required, p_text, "an application-layer parser event"),
    kw!("app-layer-state", Kind::Flow, Required, p_text, "application transaction progress"),
    kw!("decode-event", Kind::Flow, Required, p_text, "a decoder event"),
    kw!("stream-event", Kind::Flow, Required, p_text, "a TCP stream event"),
    kw!("engine-event", Kind::Flow, Required, p_text, "an engine event"),
    kw!("bypass", Kind::Flow, None, p_none, "bypass the rest of the flow"),
    kw!("tcp.session", Kind::Flow, Required, p_text, "TCP session state(s)"),
];

/// Flow state required by `flow:`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FlowState {
    Established,
    NotEstablished,
    Stateless,
}

/// Direction required by `flow:` (`from_client` is `ToServer`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FlowDir {
    ToServer,
    ToClient,
}

/// `flow:` options.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Flow {
    pub state: Option<FlowState>,
    pub dir: Option<FlowDir>,
    /// `Some(true)`: only_stream; `Some(false)`: no_stream.
    pub stream: Option<bool>,
    /// `Some(true)`: only_frag; `Some(false)`: no_frag.
    pub frag: Option<bool>,
}

fn p_flow(s: &str) -> VResult<Value> {
    let mut f = Flow::default();
    for (at, item) in split_commas(s) {
        let (o, t) = trim(item);
        let at = at + o;
        let clash = |what: &str| verr(at, format!("'{t}' conflicts with an earlier {what} option"));
        match t {
            "established" | "not_established" | "stateless" => {
                if f.state.is_some() {
                    return clash("state");
                }
                f.state = Some(match t {
                    "established" => FlowState::Established,
                    "not_established" => FlowState::NotEstablished,
                    _ => FlowState::Stateless,
                });
            }
            "to_server" | "from_client" | "to_client" | "from_server" => {
                if f.dir.is_some() {
                    return clash("direction");
                }
                f.dir =
                    Some(if matches!(t, "to_server" | "from_client") { FlowDir::ToServer } else { FlowDir::ToClient });
            }
            "only_stream" | "no_stream" => {
                if f.stream.is_some() {
                    return clash("stream");
                }
                f.stream = Some(t == "only_stream");
            }
            "only_frag" | "no_frag" => {
                if f.frag.is_some() {
                    return clash("fragment");
                }
                f.frag = Some(t == "only_frag");
            }
            "" => return verr(at, "empty flow option"),
            _ => return verr(at, format!("unknown flow option '{t}'")),
        }
    }
    Ok(Value::Flow(f))
}

impl fmt::Display for Flow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<&str> = Vec::with_capacity(4);
        if let Some(s) = self.state {
            parts.push(match s {
                FlowState::Established => "established",
                FlowState::NotEstablished => "not_established",
                FlowState::Stateless => "stateless",
            });
        }
        if let Some(d) = self.dir {
            parts.push(if d == FlowDir::ToServer { "to_server" } else { "to_client" });
        }
        if let Some(s) = self.stream {
            parts.push(if s { "only_stream" } else { "no_stream" });
        }
        if let Some(s) = self.frag {
            parts.push(if s { "only_frag" } else { "no_frag" });
        }
        f.write_str(&parts.join(","))
    }
}

/// A bits command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BitCmd {
    Set,
    Unset,
    Toggle,
    IsSet,
    IsNotSet,
    NoAlert,
}

impl BitCmd {
    pub fn as_str(self) -> &'static str {
        match self {
            BitCmd::Set => "set",
            BitCmd::Unset => "unset",
            BitCmd::Toggle => "toggle",
            BitCmd::IsSet => "isset",
            BitCmd::IsNotSet => "isnotset",
            BitCmd::NoAlert => "noalert",
        }
    }

    /// Whether the command reads bits (a condition) rather than writes.
    pub fn is_check(self) -> bool {
        matches!(self, BitCmd::IsSet | BitCmd::IsNotSet)
    }
}

/// `flowbits`, `xbits`, `hostbits`: command, bit names and the rest.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Bits {
    pub cmd: BitCmd,
    /// One name, or several joined by `|` (any) or `&` (all).
    pub names: Vec<String>,
    /// `|` between names rather than `&`.
    pub any: bool,
    /// Further items as written (`track ip_src`, `expire 60`, `src`).
    pub args: Vec<String>,
}

/// Whether an `xbits` keyword keeps its bit per transaction (`track tx`).
pub fn tracks_tx(b: &Bits) -> bool {
    b.args.iter().any(|a| {
        let mut w = a.split_whitespace();
        w.next() == Some("track") && w.next() == Some("tx")
    })
}

fn parse_bits(s: &str, extra_ok: bool) -> VResult<Bits> {
    let parts = split_commas(s);
    let (o, c) = trim(parts[0].1);
    let cmd = match c {
        "set" => BitCmd::Set,
        "unset" => BitCmd::Unset,
        "toggle" => BitCmd::Toggle,
        "isset" => BitCmd::IsSet,
        "isnotset" => BitCmd::IsNotSet,
        "noalert" => BitCmd::NoAlert,
        _ => return verr(parts[0].0 + o, format!("unknown command '{c}'")),
    };
    if cmd == BitCmd::NoAlert {
        if parts.len() > 1 {
            return verr(parts[1].0, "noalert takes no name");
        }
        return Ok(Bits { cmd, names: Vec::new(), any: false, args: Vec::new() });
    }
    let Some(&(nat, name)) = parts.get(1) else {
        return verr(0, format!("'{c}' needs a bit name"));
    };
    let (no, name) = trim(name);
    let any = name.contains('|');
    if any && name.contains('&') {
        return verr(nat + no, "cannot mix '|' and '&' in bit names");
    }
    let mut names = Vec::new();
    for n in name.split(['|', '&']) {
        let n = n.trim();
        if n.is_empty() || n.contains(char::is_whitespace) {
            return verr(nat + no, format!("invalid bit name '{name}'"));
        }
        names.push(n.to_string());
    }
    let mut args = Vec::new();
    for (at, a) in &parts[2..] {
        let (ao, t) = trim(a);
        if !extra_ok || t.is_empty() {
            return verr(at + ao, format!("unexpected '{t}'"));
        }
        args.push(t.to_string());
    }
    Ok(Bits { cmd, names, any, args })
}

fn p_flowbits(s: &str) -> VResult<Value> {
    parse_bits(s, false).map(Value::Bits)
}

fn p_xbits(s: &str) -> VResult<Value> {
    let b = parse_bits(s, true)?;
    for a in &b.args {
        let ok = match a.split_once(char::is_whitespace) {
            Some(("track", t)) => matches!(t.trim(), "ip_src" | "ip_dst" | "ip_pair" | "tx"),
            Some(("expire", n)) => parse_u64(n, u32::MAX as u64).is_ok(),
            _ => false,
        };
        if !ok {
            return verr(
                0,
                format!("unknown xbits option '{a}' (expected 'track ip_src|ip_dst|ip_pair' or 'expire N')"),
            );
        }
    }
    if b.cmd != BitCmd::NoAlert && !b.args.iter().any(|a| a.starts_with("track")) {
        return verr(0, "xbits needs 'track ip_src', 'track ip_dst' or 'track ip_pair'");
    }
    Ok(Value::Bits(b))
}

fn p_hostbits(s: &str) -> VResult<Value> {
    let b = parse_bits(s, true)?;
    for a in &b.args {
        let ok = match a.split_once(char::is_whitespace) {
            Some(("expire", n)) => parse_u64(n, u32::MAX as u64).is_ok(),
            _ => matches!(a.as_str(), "src" | "dst" | "both"),
        };
        if !ok {
            return verr(0, format!("unknown hostbits option '{a}' (expected src, dst, both or 'expire N')"));
        }
    }
    Ok(Value::Bits(b))
}

impl fmt::Display for Bits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.cmd.as_str())?;
        if !self.names.is_empty() {
            f.write_str(",")?;
            f.write_str(&self.names.join(if self.any { "|" } else { "&" }))?;
        }
        for a in &self.args {
            write!(f, ",{a}")?;
        }
        Ok(())
    }
}

/// `flowint:name, op[, value]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Flowint {
    pub name: String,
    /// `= + - == != < > <= >= isset notset isnotset`.
    pub op: String,
    /// A number or another flowint's name.
    pub value: Option<String>,
}

fn p_flowint(s: &str) -> VResult<Value> {
    let parts = split_commas(s);
    let (no, name) = trim(parts[0].1);
    if name.is_empty() || name.contains(char::is_whitespace) {
        return verr(no, format!("invalid flowint name '{name}'"));
    }
    let Some(&(oat, op)) = parts.get(1) else {
        return verr(0, "expected name, operator[, value]");
    };
    let (oo, op) = trim(op);
    let unary = matches!(op, "isset" | "notset" | "isnotset");
    if !unary && !matches!(op, "=" | "+" | "-" | "==" | "!=" | "<" | ">" | "<=" | ">=") {
        return verr(oat + oo, format!("unknown operator '{op}'"));
    }
    // A value after isset/notset is ignored by Suricata; keep it.
    let value = match parts.get(2) {
        None if unary => None,
        None => return verr(0, format!("'{op}' needs a value")),
        Some(&(at, v)) => {
            let (vo, v) = trim(v);
            if v.is_empty() || v.contains(char::is_whitespace) {
                return verr(at + vo, format!("invalid value '{v}'"));
            }
            Some(v.to_string())
        }
    };
    if parts.len() > 3 {
        return verr(parts[3].0, "too many values");
    }
    Ok(Value::Flowint(Flowint { name: name.to_string(), op: op.to_string(), value }))
}

impl fmt::Display for Flowint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{},{}", self.name, self.op)?;
        if let Some(v) = &self.value {
            write!(f, ",{v}")?;
        }
        Ok(())
    }
}

/// `stream_size:side, op, value`; the comparison is the shared
/// [`IntCmp`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StreamSize {
    /// `server`, `client`, `both` or `either`.
    pub side: String,
    pub cmp: IntCmp,
}

/// Checked here, kept as text: [`var_match`] reads it again.
fn p_var_match(s: &str) -> VResult<Value> {
    var_match(s)?;
    Ok(Value::Text(s.trim().to_string()))
}

/// The longest content `flowvar` and `pktvar` look for (Suricata's buffer).
const VAR_MATCH_MAX: usize = 63;

/// `flowvar:<name>,<content>` and `pktvar:`: the name is everything before
/// the last comma; the content, quoted or not, is written as `content`'s.
pub fn var_match(s: &str) -> VResult<(String, Vec<u8>)> {
    let Some(comma) = s.rfind(',') else {
        return verr(0, "expected a variable name, a comma and the content to look for");
    };
    let name = s[..comma].trim();
    if name.is_empty() {
        return verr(0, "no variable name");
    }
    let value = &s[comma + 1..];
    let at = comma + 1;
    let bytes = match value.strip_prefix('"') {
        Some(inner) => {
            let (bytes, used) = crate::content::parse_content_string(inner).map_err(|e| e.shift(at + 1))?;
            if !inner[used..].trim().is_empty() {
                return verr(at + 1 + used, "unexpected text after the closing quote");
            }
            bytes
        }
        None => {
            if value.contains('"') {
                return verr(at, "Invalid unescaped double quote within content section.");
            }
            let quoted = format!("{}\"", value.trim_end());
            crate::content::parse_content_string(&quoted).map_err(|e| e.shift(at))?.0
        }
    };
    if bytes.is_empty() {
        return verr(at, "the content is empty");
    }
    if bytes.len() > VAR_MATCH_MAX {
        return verr(at, format!("the content is longer than {VAR_MATCH_MAX} bytes"));
    }
    Ok((name.to_string(), bytes))
}

/// `flow.pkts` and `flow.bytes`: `toserver`, `toclient` or `either`, then
/// an integer comparison (kept as the comparison with the direction word).
fn p_flow_count(s: &str) -> VResult<Value> {
    let Some((dir, cmp)) = s.split_once(',') else {
        return verr(0, "expected a direction (toserver, toclient, either) and a comparison");
    };
    let (off, d) = trim(dir);
    if !matches!(d, "toserver" | "toclient" | "either") {
        return verr(off, format!("unknown direction '{d}' (toserver, toclient, either)"));
    }
    let at = dir.len() + 1;
    let cmp = IntCmp::parse(cmp, u64::MAX).map_err(|e| e.shift(at))?;
    Ok(Value::IntWith(cmp, vec![d.to_string()]))
}

fn p_stream_size(s: &str) -> VResult<Value> {
    let parts = split_commas(s);
    if parts.len() != 3 {
        return verr(0, "expected side, operator, value");
    }
    let (so, side) = trim(parts[0].1);
    if !matches!(side, "server" | "client" | "both" | "either") {
        return verr(parts[0].0 + so, format!("unknown side '{side}' (server, client, both, either)"));
    }
    let (oo, op) = trim(parts[1].1);
    let value = parse_u64(parts[2].1, u32::MAX as u64).map_err(|e| e.shift(parts[2].0))?;
    let cmp = match op {
        "<" => IntCmp::Lt(value),
        ">" => IntCmp::Gt(value),
        "=" => IntCmp::Eq(value),
        "!=" => IntCmp::Ne(value),
        "<=" => IntCmp::Le(value),
        ">=" => IntCmp::Ge(value),
        _ => return verr(parts[1].0 + oo, format!("unknown operator '{op}'")),
    };
    Ok(Value::StreamSize(StreamSize { side: side.to_string(), cmp }))
}

impl fmt::Display for StreamSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (op, v) = match self.cmp {
            IntCmp::Lt(v) => ("<", v),
            IntCmp::Gt(v) => (">", v),
            IntCmp::Ne(v) => ("!=", v),
            IntCmp::Le(v) => ("<=", v),
            IntCmp::Ge(v) => (">=", v),
            // Ranges and masks cannot be written in stream_size; only
            // the parser builds values, so this is equality.
            IntCmp::Eq(v)
            | IntCmp::Range(v, _)
            | IntCmp::NotRange(v, _)
            | IntCmp::Mask(_, v)
            | IntCmp::NotMask(_, v) => ("=", v),
        };
        write!(f, "{},{op},{v}", self.side)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flow_options() {
        let Value::Flow(f) = p_flow("established, from_client ,no_stream").unwrap() else { unreachable!() };
        assert_eq!(f.to_string(), "established,to_server,no_stream");
        assert_eq!(
            p_flow("to_server,to_client").unwrap_err().reason,
            "'to_client' conflicts with an earlier direction option"
        );
        assert_eq!(p_flow("sideways").unwrap_err().reason, "unknown flow option 'sideways'");
    }

    #[test]
    fn bits() {
        let Value::Bits(b) = p_flowbits("isset, a|b").unwrap() else { unreachable!() };
        assert!(b.any && b.names == ["a", "b"]);
        assert_eq!(b.to_string(), "isset,a|b");
        assert!(p_flowbits("noalert").is_ok());
        assert_eq!(p_flowbits("sett,a").unwrap_err().reason, "unknown command 'sett'");
        assert!(p_flowbits("set").is_err());
        assert!(p_xbits("set,a,track ip_src,expire 60").is_ok());
        assert!(p_xbits("set,a").is_err());
        assert!(p_hostbits("set,a,src").is_ok());
    }

    #[test]
    fn flowint_and_stream_size() {
        assert!(p_flowint("cnt, +, 1").is_ok());
        assert!(p_flowint("cnt, isset").is_ok());
        assert!(p_flowint("cnt, >").is_err());
        assert!(p_flowint("cnt, ~, 1").is_err());
        let Value::StreamSize(s) = p_stream_size("server,<,6").unwrap() else { unreachable!() };
        assert_eq!(s.to_string(), "server,<,6");
        assert!(p_stream_size("up,<,6").is_err());
    }
}
