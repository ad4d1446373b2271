//! Port groups: `any`, `80`, `1024:`, `:1023`, `6000:6010`, `$HTTP_PORTS`,
//! `!x`, `[a, [b, !c]]`, and the port range sets they resolve to.

use crate::error::{verr, VResult};
use crate::group::{AtomParse, Group, RangeSet};
use crate::intcmp::parse_u64;
use std::fmt;

/// One port item.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PortAtom {
    /// A single port.
    Port(u16),
    /// `lo:hi`, `lo:` or `:hi`, inclusive.
    Range(Option<u16>, Option<u16>),
}

/// A port expression as written in a rule header or a variable.
pub type PortExpr = Group<PortAtom>;

/// A resolved port group.
pub type PortSet = RangeSet<u16>;

fn port(s: &str, at: usize) -> VResult<u16> {
    let t = s.trim();
    if t.is_empty() || !t.bytes().all(|c| c.is_ascii_digit()) {
        return verr(at, format!("invalid port '{t}'"));
    }
    match parse_u64(t, u64::MAX) {
        Ok(n) if n <= u16::MAX as u64 => Ok(n as u16),
        _ => verr(at, format!("port {t} is out of range (0-65535)")),
    }
}

impl AtomParse for PortAtom {
    const WHAT: &'static str = "port";

    fn parse_atom(s: &str) -> VResult<PortAtom> {
        match s.split_once(':') {
            None => Ok(PortAtom::Port(port(s, 0)?)),
            Some((a, b)) => {
                let lo = if a.trim().is_empty() { None } else { Some(port(a, 0)?) };
                let hi = if b.trim().is_empty() { None } else { Some(port(b, a.len() + 1)?) };
                match (lo, hi) {
                    (None, None) => verr(0, "port range ':' has no bounds"),
                    (Some(l), Some(h)) if l > h => verr(0, format!("port range {l}:{h} runs backwards")),
                    _ => Ok(PortAtom::Range(lo, hi)),
                }
            }
        }
    }
}

impl fmt::Display for PortAtom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PortAtom::Port(p) => write!(f, "{p}"),
            PortAtom::Range(a, b) => {
                if let Some(a) = a {
                    write!(f, "{a}")?;
                }
                f.write_str(":")?;
                if let Some(b) = b {
                    write!(f, "{b}")?;
                }
                Ok(())
            }
        }
    }
}

/// Parses a port expression (`[80,8000:8100,!8080]`).
pub fn parse_port(s: &str) -> VResult<PortExpr> {
    PortExpr::parse(s)
}

/// The set of one atom.
pub fn port_atom_set(a: &PortAtom) -> PortSet {
    match *a {
        PortAtom::Port(p) => RangeSet::range(p, p),
        PortAtom::Range(lo, hi) => RangeSet::range(lo.unwrap_or(0), hi.unwrap_or(u16::MAX)),
    }
}

/// Resolves `expr`, asking `var` for the set of each variable.
pub fn resolve_port<E>(expr: &PortExpr, var: &mut dyn FnMut(&str) -> Result<PortSet, E>) -> Result<PortSet, E> {
    expr.resolve(&mut port_atom_set, var)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(s: &str) -> PortSet {
        resolve_port(&parse_port(s).unwrap(), &mut |_| Err::<PortSet, ()>(())).unwrap()
    }

    #[test]
    fn forms() {
        assert_eq!(parse_port("[80, 1024:,:10,!8080]").unwrap().to_string(), "[80,1024:,:10,!8080]");
        assert_eq!(set("[1:100,!50]").ranges(), &[(1, 49), (51, 100)]);
        assert_eq!(set("!80").ranges(), &[(0, 79), (81, 65535)]);
        assert_eq!(set("1024:").ranges(), &[(1024, 65535)]);
        assert!(set("any").is_full());
    }

    #[test]
    fn errors() {
        assert_eq!(parse_port("70000").unwrap_err().reason, "port 70000 is out of range (0-65535)");
        assert_eq!(parse_port("http").unwrap_err().reason, "invalid port 'http'");
        assert_eq!(parse_port("90:80").unwrap_err().reason, "port range 90:80 runs backwards");
        assert!(parse_port("[80").is_err());
        assert!(parse_port("80]").is_err());
    }
}
