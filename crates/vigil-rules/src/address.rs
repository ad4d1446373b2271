//! Address groups: `any`, `1.2.3.4`, `10.0.0.0/8`, `10.0.0.0/255.0.0.0`,
//! `1.2.3.4-1.2.3.9`, `2001:db8::/32`, `$HOME_NET`, `!x`, `[a, [b, !c]]`,
//! and the IPv4/IPv6 range sets they resolve to.

use crate::error::{verr, VResult};
use crate::group::{AtomParse, Group, RangeSet};
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// One address item.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AddrAtom {
    /// An address with an optional prefix length (`None`: a single host).
    /// The address is kept as written; host bits under the prefix are
    /// ignored when resolving, as Suricata does.
    Net { addr: IpAddr, prefix: Option<u8> },
    /// `first-last`, inclusive, same family.
    Range(IpAddr, IpAddr),
}

/// An address expression as written in a rule header or a variable.
pub type AddrExpr = Group<AddrAtom>;

impl AtomParse for AddrAtom {
    const WHAT: &'static str = "address";

    fn parse_atom(s: &str) -> VResult<AddrAtom> {
        if let Some((a, b)) = s.split_once('-') {
            let lo = parse_ip(a.trim(), 0)?;
            let hi = parse_ip(b.trim(), a.len() + 1)?;
            if lo.is_ipv4() != hi.is_ipv4() {
                return verr(0, format!("address range '{s}' mixes IPv4 and IPv6"));
            }
            if lo > hi {
                return verr(0, format!("address range '{s}' runs backwards"));
            }
            return Ok(AddrAtom::Range(lo, hi));
        }
        let (a, mask) = match s.split_once('/') {
            Some((a, m)) => (a, Some(m)),
            None => (s, None),
        };
        let addr = parse_ip(a, 0)?;
        let bits: u8 = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = match mask {
            None => None,
            Some(m) => {
                let at = a.len() + 1;
                if let Ok(n) = m.parse::<u8>() {
                    if n > bits {
                        return verr(at, format!("prefix length /{n} is too long for '{a}' (at most /{bits})"));
                    }
                    Some(n)
                } else if let (true, Ok(mask)) = (addr.is_ipv4(), m.parse::<Ipv4Addr>()) {
                    let v = u32::from(mask);
                    if v.leading_ones() + v.trailing_zeros() != 32 {
                        return verr(at, format!("netmask '{m}' is not contiguous"));
                    }
                    Some(v.leading_ones() as u8)
                } else {
                    return verr(at, format!("invalid prefix length '/{m}'"));
                }
            }
        };
        Ok(AddrAtom::Net { addr, prefix })
    }
}

fn parse_ip(s: &str, at: usize) -> VResult<IpAddr> {
    s.parse::<IpAddr>().or_else(|_| verr(at, format!("invalid IP address '{s}'")))
}

impl fmt::Display for AddrAtom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AddrAtom::Net { addr, prefix: None } => write!(f, "{addr}"),
            AddrAtom::Net { addr, prefix: Some(p) } => write!(f, "{addr}/{p}"),
            AddrAtom::Range(a, b) => write!(f, "{a}-{b}"),
        }
    }
}

/// Parses an address expression (`[10.0.0.0/8,!$DNS_SERVERS]`).
pub fn parse_address(s: &str) -> VResult<AddrExpr> {
    AddrExpr::parse(s)
}

/// A resolved address group: the IPv4 and IPv6 addresses it covers.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct AddressSet {
    pub v4: RangeSet<u32>,
    pub v6: RangeSet<u128>,
}

impl AddressSet {
    /// Every address of both families (`any`).
    pub fn any() -> Self {
        AddressSet { v4: RangeSet::full(), v6: RangeSet::full() }
    }

    pub fn is_empty(&self) -> bool {
        self.v4.is_empty() && self.v6.is_empty()
    }

    pub fn is_any(&self) -> bool {
        self.v4.is_full() && self.v6.is_full()
    }

    pub fn contains(&self, ip: IpAddr) -> bool {
        match ip {
            IpAddr::V4(a) => self.v4.contains(u32::from(a)),
            IpAddr::V6(a) => self.v6.contains(u128::from(a)),
        }
    }

    /// The set of one atom.
    pub fn of_atom(a: &AddrAtom) -> AddressSet {
        let mut s = AddressSet::default();
        match *a {
            AddrAtom::Net { addr: IpAddr::V4(ip), prefix } => {
                let p = prefix.unwrap_or(32) as u32;
                let mask = if p == 0 { 0 } else { u32::MAX << (32 - p) };
                let lo = u32::from(ip) & mask;
                s.v4 = RangeSet::range(lo, lo | !mask);
            }
            AddrAtom::Net { addr: IpAddr::V6(ip), prefix } => {
                let p = prefix.unwrap_or(128) as u32;
                let mask = if p == 0 { 0 } else { u128::MAX << (128 - p) };
                let lo = u128::from(ip) & mask;
                s.v6 = RangeSet::range(lo, lo | !mask);
            }
            AddrAtom::Range(IpAddr::V4(a), IpAddr::V4(b)) => s.v4 = RangeSet::range(u32::from(a), u32::from(b)),
            AddrAtom::Range(IpAddr::V6(a), IpAddr::V6(b)) => s.v6 = RangeSet::range(u128::from(a), u128::from(b)),
            AddrAtom::Range(..) => {}
        }
        s
    }

    /// Resolves `expr`, asking `var` for the set of each variable.
    pub fn resolve<E>(expr: &AddrExpr, var: &mut dyn FnMut(&str) -> Result<AddressSet, E>) -> Result<AddressSet, E> {
        // Both families go through the same group algebra separately; the
        // variable lookup is shared, so cache its answers per call.
        let mut cache: Vec<(String, AddressSet)> = Vec::new();
        let mut lookup = |name: &str| -> Result<AddressSet, E> {
            if let Some((_, s)) = cache.iter().find(|(n, _)| n == name) {
                return Ok(s.clone());
            }
            let s = var(name)?;
            cache.push((name.to_string(), s.clone()));
            Ok(s)
        };
        let v4 = expr.resolve(&mut |a| AddressSet::of_atom(a).v4, &mut |n| lookup(n).map(|s| s.v4))?;
        let v6 = expr.resolve(&mut |a| AddressSet::of_atom(a).v6, &mut |n| lookup(n).map(|s| s.v6))?;
        Ok(AddressSet { v4, v6 })
    }
}

impl fmt::Display for AddressSet {
    /// Lists the ranges (`10.0.0.0-10.255.255.255, ...`); `any` for all.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_any() {
            return f.write_str("any");
        }
        let mut first = true;
        let mut sep = |f: &mut fmt::Formatter<'_>| {
            let r = if first { Ok(()) } else { f.write_str(", ") };
            first = false;
            r
        };
        for &(a, b) in self.v4.ranges() {
            sep(f)?;
            if a == b {
                write!(f, "{}", Ipv4Addr::from(a))?;
            } else {
                write!(f, "{}-{}", Ipv4Addr::from(a), Ipv4Addr::from(b))?;
            }
        }
        for &(a, b) in self.v6.ranges() {
            sep(f)?;
            if a == b {
                write!(f, "{}", Ipv6Addr::from(a))?;
            } else {
                write!(f, "{}-{}", Ipv6Addr::from(a), Ipv6Addr::from(b))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(s: &str) -> AddressSet {
        let e = parse_address(s).unwrap();
        AddressSet::resolve(&e, &mut |_| Err::<AddressSet, ()>(())).unwrap()
    }

    #[test]
    fn parse_forms() {
        let e = parse_address("[10.0.0.0/8, !10.1.0.0/255.255.0.0 ,[::1,1.2.3.4-1.2.3.9]]").unwrap();
        assert_eq!(e.to_string(), "[10.0.0.0/8,!10.1.0.0/16,[::1,1.2.3.4-1.2.3.9]]");
        assert_eq!(parse_address("!$HOME_NET").unwrap(), Group::Not(Box::new(Group::Var("HOME_NET".into()))));
    }

    #[test]
    fn errors_name_the_problem() {
        let e = parse_address("1.2.3.256").unwrap_err();
        assert_eq!(e.reason, "invalid IP address '1.2.3.256'");
        let e = parse_address("[1.2.3.4,[5.6.7.8]").unwrap_err();
        assert_eq!(e.reason, "unbalanced brackets: '[' without ']' in address list");
        assert_eq!(e.at, 0);
        assert!(parse_address("1.2.3.4/33").is_err());
        assert!(parse_address("1.2.3.4/255.0.255.0").is_err());
        assert!(parse_address("[]").is_err());
        let deep = format!("{}1.2.3.4{}", "[".repeat(100), "]".repeat(100));
        assert!(parse_address(&deep).unwrap_err().reason.contains("deeper"));
    }

    #[test]
    fn resolution() {
        let s = set("[10.0.0.0/8,!10.1.0.0/16]");
        assert!(s.contains("10.0.0.1".parse().unwrap()));
        assert!(!s.contains("10.1.2.3".parse().unwrap()));
        assert!(s.v6.is_empty());
        let s = set("!192.168.0.0/16");
        assert!(s.contains("::1".parse().unwrap()) && s.contains("1.1.1.1".parse().unwrap()));
        assert!(!s.contains("192.168.1.1".parse().unwrap()));
        assert!(set("[!1.2.3.4]").contains("1.2.3.5".parse().unwrap()));
        assert!(set("!any").is_empty());
        assert_eq!(set("1.2.3.5/24").to_string(), "1.2.3.0-1.2.3.255");
    }
}
