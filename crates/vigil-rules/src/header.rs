//! The rule header: `action protocol src sport -> dst dport`, Suricata 8
//! firewall forms (`accept:hook tls:client_hello_done ...`), and Snort 3's
//! header-less rules (`alert http (...)`).

use crate::address::{parse_address, AddrExpr};
use crate::error::{ErrorKind, ValueError};
use crate::port::{parse_port, PortExpr};
use crate::span::Span;
use std::fmt;

/// What a rule does when it matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ActionKind {
    Alert,
    Pass,
    Drop,
    Reject,
    RejectSrc,
    RejectDst,
    RejectBoth,
    /// Suricata 8 firewall rules.
    Accept,
    /// Suricata config rules.
    Config,
    /// Snort actions Suricata does not have.
    Log,
    Sdrop,
    Block,
    React,
    Rewrite,
}

impl ActionKind {
    pub fn parse(s: &str) -> Option<ActionKind> {
        Some(match s {
            "alert" => ActionKind::Alert,
            "pass" => ActionKind::Pass,
            "drop" => ActionKind::Drop,
            "reject" => ActionKind::Reject,
            "rejectsrc" => ActionKind::RejectSrc,
            "rejectdst" => ActionKind::RejectDst,
            "rejectboth" => ActionKind::RejectBoth,
            "accept" => ActionKind::Accept,
            "config" => ActionKind::Config,
            "log" => ActionKind::Log,
            "sdrop" => ActionKind::Sdrop,
            "block" => ActionKind::Block,
            "react" => ActionKind::React,
            "rewrite" => ActionKind::Rewrite,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ActionKind::Alert => "alert",
            ActionKind::Pass => "pass",
            ActionKind::Drop => "drop",
            ActionKind::Reject => "reject",
            ActionKind::RejectSrc => "rejectsrc",
            ActionKind::RejectDst => "rejectdst",
            ActionKind::RejectBoth => "rejectboth",
            ActionKind::Accept => "accept",
            ActionKind::Config => "config",
            ActionKind::Log => "log",
            ActionKind::Sdrop => "sdrop",
            ActionKind::Block => "block",
            ActionKind::React => "react",
            ActionKind::Rewrite => "rewrite",
        }
    }

    /// Snort actions Suricata does not know.
    pub fn is_snort_only(self) -> bool {
        matches!(
            self,
            ActionKind::Log | ActionKind::Sdrop | ActionKind::Block | ActionKind::React | ActionKind::Rewrite
        )
    }
}

/// An action, with the scope a firewall rule gives it (`drop:flow`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Action {
    pub kind: ActionKind,
    pub scope: Option<String>,
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kind.as_str())?;
        if let Some(s) = &self.scope {
            write!(f, ":{s}")?;
        }
        Ok(())
    }
}

/// How a protocol name is matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProtoClass {
    /// Decoded packets: ip, tcp, udp, icmp, ...
    Packet,
    /// An application-layer protocol: http, dns, tls, ...
    App,
    /// Snort 3 only (`file`).
    Snort,
}

/// Protocols of the rule header, with their class.
const PROTOCOLS: &[(&str, ProtoClass)] = &[
    ("ip", ProtoClass::Packet),
    ("ipv4", ProtoClass::Packet),
    ("ipv6", ProtoClass::Packet),
    ("tcp", ProtoClass::Packet),
    ("udp", ProtoClass::Packet),
    ("icmp", ProtoClass::Packet),
    ("icmpv4", ProtoClass::Packet),
    ("icmpv6", ProtoClass::Packet),
    ("sctp", ProtoClass::Packet),
    ("igmp", ProtoClass::Packet),
    ("pkthdr", ProtoClass::Packet),
    ("tcp-pkt", ProtoClass::Packet),
    ("tcp-stream", ProtoClass::Packet),
    ("ether", ProtoClass::Packet),
    ("http", ProtoClass::App),
    ("http1", ProtoClass::App),
    ("http2", ProtoClass::App),
    ("ftp", ProtoClass::App),
    ("ftp-data", ProtoClass::App),
    ("smtp", ProtoClass::App),
    ("imap", ProtoClass::App),
    ("pop3", ProtoClass::App),
    ("tls", ProtoClass::App),
    ("ssl", ProtoClass::App),
    ("ssh", ProtoClass::App),
    ("smb", ProtoClass::App),
    ("dcerpc", ProtoClass::App),
    ("dns", ProtoClass::App),
    ("doh2", ProtoClass::App),
    ("mdns", ProtoClass::App),
    ("llmnr", ProtoClass::App),
    ("modbus", ProtoClass::App),
    ("enip", ProtoClass::App),
    ("dnp3", ProtoClass::App),
    ("nfs", ProtoClass::App),
    ("ntp", ProtoClass::App),
    ("tftp", ProtoClass::App),
    ("ike", ProtoClass::App),
    ("ikev2", ProtoClass::App),
    ("krb5", ProtoClass::App),
    ("dhcp", ProtoClass::App),
    ("snmp", ProtoClass::App),
    ("sip", ProtoClass::App),
    ("rfb", ProtoClass::App),
    ("mqtt", ProtoClass::App),
    ("pgsql", ProtoClass::App),
    ("telnet", ProtoClass::App),
    ("websocket", ProtoClass::App),
    ("ldap", ProtoClass::App),
    ("quic", ProtoClass::App),
    ("rdp", ProtoClass::App),
    ("bittorrent-dht", ProtoClass::App),
    ("template", ProtoClass::App),
    ("file", ProtoClass::Snort),
];

/// The protocol of the rule, with a firewall hook (`tls:client_hello_done`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Protocol {
    /// Lower-case name, as in the table of known protocols.
    pub name: &'static str,
    pub class: ProtoClass,
    pub hook: Option<String>,
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)?;
        if let Some(h) = &self.hook {
            write!(f, ":{h}")?;
        }
        Ok(())
    }
}

/// `->`, `<>`, and Suricata 8's `=>` (a transactional rule: one
/// transaction, both directions). `<-` is rejected: Suricata does not
/// have it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    ToDst,
    Both,
    Transactional,
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Direction::ToDst => "->",
            Direction::Both => "<>",
            Direction::Transactional => "=>",
        })
    }
}

/// Addresses, ports and direction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoints {
    pub src: AddrExpr,
    pub src_port: PortExpr,
    pub direction: Direction,
    pub dst: AddrExpr,
    pub dst_port: PortExpr,
    /// Spans of src, sport, direction, dst, dport.
    pub spans: [Span; 5],
}

/// The whole header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// One action, or several for firewall rules (`accept:flow,pass:flow`).
    pub actions: Vec<Action>,
    pub protocol: Protocol,
    /// `None` for Snort 3 header-less rules.
    pub endpoints: Option<Endpoints>,
    pub action_span: Span,
    pub protocol_span: Span,
}

impl Header {
    /// The first action: what the rule does for most purposes.
    pub fn action(&self) -> ActionKind {
        self.actions[0].kind
    }

    /// Whether this is a Suricata 8 firewall rule (scoped or `accept` actions).
    pub fn is_firewall(&self) -> bool {
        self.protocol.hook.is_some()
            || self
                .actions
                .iter()
                .any(|a| a.kind == ActionKind::Accept || (a.scope.is_some() && a.kind != ActionKind::Config))
    }
}

impl fmt::Display for Header {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, a) in self.actions.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{a}")?;
        }
        write!(f, " {}", self.protocol)?;
        if let Some(e) = &self.endpoints {
            write!(f, " {} {} {} {} {}", e.src, e.src_port, e.direction, e.dst, e.dst_port)?;
        }
        Ok(())
    }
}

/// A header parse problem at offset `.0` of the rule text.
pub(crate) type HeaderError = (usize, ValueError);

fn herr(at: usize, kind: ErrorKind, msg: impl Into<String>) -> HeaderError {
    (at, ValueError::new(0, msg).kind(kind))
}

/// Splits the header into blank-separated tokens, keeping `[...]` groups
/// whole (variables may be written with blanks inside brackets).
fn tokens(s: &str) -> Result<Vec<(usize, &str)>, HeaderError> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(7);
    let mut i = 0;
    while i < b.len() {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= b.len() {
            break;
        }
        let start = i;
        let mut depth = 0usize;
        while i < b.len() && (depth > 0 || !b[i].is_ascii_whitespace()) {
            match b[i] {
                b'[' => depth += 1,
                b']' => depth = depth.saturating_sub(1),
                _ => {}
            }
            i += 1;
        }
        if depth > 0 {
            return Err(herr(start, ErrorKind::Syntax, "unbalanced brackets: '[' without ']' in the header"));
        }
        out.push((start, &s[start..i]));
    }
    Ok(out)
}

/// Parses the header text `s` (everything before the option list's `(`).
/// `span` maps offsets of `s` to spans.
pub(crate) fn parse_header(s: &str, span: &dyn Fn(usize, usize) -> Span) -> Result<Header, HeaderError> {
    let toks = tokens(s)?;
    if toks.is_empty() {
        return Err(herr(0, ErrorKind::Syntax, "empty rule header"));
    }
    let (aat, atok) = toks[0];
    let mut actions = Vec::new();
    let mut off = aat;
    for part in atok.split(',') {
        let (name, scope) = match part.split_once(':') {
            Some((n, sc)) => (n, Some(sc.to_string())),
            None => (part, None),
        };
        let lower = name.to_ascii_lowercase();
        let Some(kind) = ActionKind::parse(&lower) else {
            return Err(herr(off, ErrorKind::Syntax, format!("unknown action '{name}'")));
        };
        if kind.is_snort_only() {
            return Err(herr(
                off,
                ErrorKind::Snort,
                format!("action '{name}' is Snort only; Suricata has no such action"),
            ));
        }
        if scope.as_deref() == Some("") {
            return Err(herr(off, ErrorKind::Syntax, format!("action '{part}' has an empty scope")));
        }
        actions.push(Action { kind, scope });
        off += part.len() + 1;
    }
    let Some(&(pat, ptok)) = toks.get(1) else {
        return Err(herr(aat + atok.len(), ErrorKind::Syntax, "rule header has no protocol"));
    };
    let (pname, hook) = match ptok.split_once(':') {
        Some((n, h)) => (n, Some(h.to_string())),
        None => (ptok, None),
    };
    let lower = pname.to_ascii_lowercase();
    let Some(&(name, class)) = PROTOCOLS.iter().find(|(n, _)| *n == lower) else {
        return Err(herr(pat, ErrorKind::Syntax, format!("unknown protocol '{pname}'")));
    };
    let protocol = Protocol { name, class, hook };
    let action_span = span(aat, aat + atok.len());
    let protocol_span = span(pat, pat + ptok.len());
    if toks.len() == 2 {
        return Ok(Header { actions, protocol, endpoints: None, action_span, protocol_span });
    }
    if toks.len() != 7 {
        let what = if toks.len() < 7 { "too few" } else { "too many" };
        return Err(herr(
            toks.get(2).map_or(0, |t| t.0),
            ErrorKind::Syntax,
            format!(
                "{what} fields in the rule header: expected 'action protocol src_addr src_port direction dst_addr dst_port', got {}",
                toks.len()
            ),
        ));
    }
    let addr = |i: usize, what: &str| -> Result<AddrExpr, HeaderError> {
        let (at, t) = toks[i];
        parse_address(t)
            .map_err(|e| (at + e.at, ValueError::new(0, format!("{what}: {}", e.reason)).kind(ErrorKind::Syntax)))
    };
    let port = |i: usize, what: &str| -> Result<PortExpr, HeaderError> {
        let (at, t) = toks[i];
        parse_port(t)
            .map_err(|e| (at + e.at, ValueError::new(0, format!("{what}: {}", e.reason)).kind(ErrorKind::Syntax)))
    };
    let src = addr(2, "source address")?;
    let src_port = port(3, "source port")?;
    let (dat, dtok) = toks[4];
    let direction = match dtok {
        "->" => Direction::ToDst,
        "<>" => Direction::Both,
        "=>" => Direction::Transactional,
        "<-" => {
            return Err(herr(
                dat,
                ErrorKind::Syntax,
                "direction '<-' is not supported: swap source and destination and use '->'",
            ))
        }
        _ => {
            return Err(herr(
                dat,
                ErrorKind::Syntax,
                format!("invalid direction '{dtok}': expected '->', '<>' or '=>'"),
            ))
        }
    };
    let dst = addr(5, "destination address")?;
    let dst_port = port(6, "destination port")?;
    let spans = [2, 3, 4, 5, 6].map(|i| span(toks[i].0, toks[i].0 + toks[i].1.len()));
    Ok(Header {
        actions,
        protocol,
        endpoints: Some(Endpoints { src, src_port, direction, dst, dst_port, spans }),
        action_span,
        protocol_span,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(s: &str) -> Result<Header, HeaderError> {
        parse_header(s, &|a, b| Span { start: a as u32, end: b as u32, line: 1, column: a as u32 + 1 })
    }

    #[test]
    fn forms() {
        let x = h("alert tcp $HOME_NET any -> [1.2.3.4, 5.6.7.8] [80,443]").unwrap();
        assert_eq!(x.to_string(), "alert tcp $HOME_NET any -> [1.2.3.4,5.6.7.8] [80,443]");
        let x = h("accept:flow,pass:flow tcp:all $HOME_NET any <> $EXTERNAL_NET 443").unwrap();
        assert!(x.is_firewall());
        assert_eq!(x.to_string(), "accept:flow,pass:flow tcp:all $HOME_NET any <> $EXTERNAL_NET 443");
        let x = h("alert http").unwrap();
        assert!(x.endpoints.is_none());
    }

    #[test]
    fn errors() {
        let e = |s| h(s).unwrap_err();
        assert_eq!(e("alert foo any any -> any any").1.reason, "unknown protocol 'foo'");
        assert_eq!(e("alarm tcp any any -> any any").1.reason, "unknown action 'alarm'");
        assert_eq!(
            e("alert tcp any any <- any any").1.reason,
            "direction '<-' is not supported: swap source and destination and use '->'"
        );
        assert_eq!(e("alert tcp 1.2.3.256 any -> any any").1.reason, "source address: invalid IP address '1.2.3.256'");
        assert_eq!(
            e("alert tcp any any -> any 70000").1.reason,
            "destination port: port 70000 is out of range (0-65535)"
        );
        assert_eq!(
            e("alert tcp any any -> any").1.reason.split(':').next().unwrap(),
            "too few fields in the rule header"
        );
        assert_eq!(e("sdrop tcp any any -> any any").1.kind, ErrorKind::Snort);
        let (at, _) = e("alert tcp any any -> [1.2.3.4 any");
        assert_eq!(at, 21);
    }
}
