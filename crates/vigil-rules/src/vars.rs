//! Address and port variables (`$HOME_NET`, `$HTTP_PORTS`): their
//! definitions, resolved once into sets, and the resolution of rule headers
//! against them.
//!
//! A bad definition (undefined reference, a cycle, a syntax error) is not
//! an error by itself: it becomes an error for each rule that uses the
//! variable, as in Suricata.

use crate::address::{parse_address, AddrExpr, AddressSet};
use crate::port::{parse_port, resolve_port, PortExpr, PortSet};
use std::collections::HashMap;
use std::sync::Arc;

/// Why a variable cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VarError(pub String);

impl std::fmt::Display for VarError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

type Slot<T> = Result<Arc<T>, VarError>;

/// The variables rules are resolved against.
#[derive(Clone, Debug, Default)]
pub struct Vars {
    address: HashMap<String, Slot<AddressSet>>,
    port: HashMap<String, Slot<PortSet>>,
    address_raw: Vec<(String, String)>,
    port_raw: Vec<(String, String)>,
}

pub use vigil_types::suricata_vars::{SURICATA_ADDRESS_GROUPS, SURICATA_PORT_GROUPS};

/// Variables may refer to variables this deep; deeper is taken as a cycle.
const MAX_VAR_DEPTH: usize = 64;

impl Vars {
    /// Variables from `(name, value)` pairs, as `vars.address-groups` and
    /// `vars.port-groups` hold them (later definitions win).
    pub fn new(address_groups: &[(String, String)], port_groups: &[(String, String)]) -> Vars {
        let mut v = Vars { address_raw: address_groups.to_vec(), port_raw: port_groups.to_vec(), ..Vars::default() };
        let names: Vec<String> = v.address_raw.iter().map(|(k, _)| k.clone()).collect();
        for name in names {
            if !v.address.contains_key(&name) {
                let r = v.resolve_address_var(&name, &mut Vec::new());
                v.address.insert(name, r);
            }
        }
        let names: Vec<String> = v.port_raw.iter().map(|(k, _)| k.clone()).collect();
        for name in names {
            if !v.port.contains_key(&name) {
                let r = v.resolve_port_var(&name, &mut Vec::new());
                v.port.insert(name, r);
            }
        }
        v
    }

    /// The stock Suricata 8.0 variables.
    pub fn suricata_default() -> Vars {
        let own = |l: &[(&str, &str)]| l.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<Vec<_>>();
        Vars::new(&own(SURICATA_ADDRESS_GROUPS), &own(SURICATA_PORT_GROUPS))
    }

    /// Variables with no definitions at all.
    pub fn none() -> Vars {
        Vars::default()
    }

    fn raw<'a>(list: &'a [(String, String)], name: &str) -> Option<&'a str> {
        list.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    fn resolve_address_var(&mut self, name: &str, stack: &mut Vec<String>) -> Slot<AddressSet> {
        if let Some(r) = self.address.get(name) {
            return r.clone();
        }
        if stack.iter().any(|s| s == name) || stack.len() > MAX_VAR_DEPTH {
            return Err(VarError(format!("${name} refers to itself (through {})", cycle(stack, name))));
        }
        let Some(raw) = Self::raw(&self.address_raw, name).map(str::to_string) else {
            if Self::raw(&self.port_raw, name).is_some() {
                return Err(VarError(format!("${name} is a port variable, not an address variable")));
            }
            return Err(VarError(format!("undefined variable ${name}")));
        };
        let expr = parse_address(&raw).map_err(|e| VarError(format!("${name} is invalid: {}", e.reason)))?;
        stack.push(name.to_string());
        let r = AddressSet::resolve(&expr, &mut |n| self.resolve_address_var(n, stack).map(|s| (*s).clone()));
        stack.pop();
        let set = r?;
        let r = Ok(Arc::new(set));
        self.address.insert(name.to_string(), r.clone());
        r
    }

    fn resolve_port_var(&mut self, name: &str, stack: &mut Vec<String>) -> Slot<PortSet> {
        if let Some(r) = self.port.get(name) {
            return r.clone();
        }
        if stack.iter().any(|s| s == name) || stack.len() > MAX_VAR_DEPTH {
            return Err(VarError(format!("${name} refers to itself (through {})", cycle(stack, name))));
        }
        let Some(raw) = Self::raw(&self.port_raw, name).map(str::to_string) else {
            if Self::raw(&self.address_raw, name).is_some() {
                return Err(VarError(format!("${name} is an address variable, not a port variable")));
            }
            return Err(VarError(format!("undefined variable ${name}")));
        };
        let expr = parse_port(&raw).map_err(|e| VarError(format!("${name} is invalid: {}", e.reason)))?;
        stack.push(name.to_string());
        let r = resolve_port(&expr, &mut |n| self.resolve_port_var(n, stack).map(|s| (*s).clone()));
        stack.pop();
        let set = r?;
        let r = Ok(Arc::new(set));
        self.port.insert(name.to_string(), r.clone());
        r
    }

    /// The resolved set of address variable `name`.
    pub fn address(&self, name: &str) -> Slot<AddressSet> {
        match self.address.get(name) {
            Some(r) => r.clone(),
            None if Self::raw(&self.port_raw, name).is_some() => {
                Err(VarError(format!("${name} is a port variable, not an address variable")))
            }
            None => Err(VarError(format!("undefined variable ${name}"))),
        }
    }

    /// The resolved set of port variable `name`.
    pub fn port(&self, name: &str) -> Slot<PortSet> {
        match self.port.get(name) {
            Some(r) => r.clone(),
            None if Self::raw(&self.address_raw, name).is_some() => {
                Err(VarError(format!("${name} is an address variable, not a port variable")))
            }
            None => Err(VarError(format!("undefined variable ${name}"))),
        }
    }

    /// Whether `expr` negates anything (`!x`), through its variables too:
    /// Suricata then treats an otherwise IP-only signature as a packet one.
    pub fn address_negated(&self, expr: &AddrExpr) -> bool {
        self.negated_in(expr, &mut Vec::new())
    }

    /// `seen`: the variables already looked into. Each is looked into once,
    /// so variables that name each other many times cost no more than their
    /// number (and a cycle, reported when they were resolved, ends here).
    fn negated_in<'e>(&'e self, expr: &AddrExpr, seen: &mut Vec<&'e str>) -> bool {
        match expr {
            AddrExpr::Not(_) => true,
            AddrExpr::List(items) => items.iter().any(|i| self.negated_in(i, seen)),
            AddrExpr::Var(name) => {
                let Some(raw) = Self::raw(&self.address_raw, name) else { return false };
                if seen.contains(&raw) {
                    return false;
                }
                seen.push(raw);
                parse_address(raw).is_ok_and(|e| self.negated_in(&e, seen))
            }
            _ => false,
        }
    }

    /// Resolves an address expression; an empty result is an error.
    pub fn resolve_address(&self, expr: &AddrExpr) -> Result<AddressSet, VarError> {
        if let AddrExpr::Var(v) = expr {
            return self.address(v).map(|s| (*s).clone()).and_then(non_empty_addr);
        }
        AddressSet::resolve(expr, &mut |n| self.address(n).map(|s| (*s).clone())).and_then(non_empty_addr)
    }

    /// Resolves a port expression; an empty result is an error.
    pub fn resolve_port(&self, expr: &PortExpr) -> Result<PortSet, VarError> {
        let set = resolve_port(expr, &mut |n| self.port(n).map(|s| (*s).clone()))?;
        if set.is_empty() {
            return Err(VarError("port group matches no port".into()));
        }
        Ok(set)
    }

    /// The address group definitions as given: (name, value).
    pub fn address_definitions(&self) -> &[(String, String)] {
        &self.address_raw
    }

    /// The port group definitions as given: (name, value).
    pub fn port_definitions(&self) -> &[(String, String)] {
        &self.port_raw
    }
}

fn non_empty_addr(s: AddressSet) -> Result<AddressSet, VarError> {
    if s.is_empty() {
        return Err(VarError("address group matches no address (is the whole space negated?)".into()));
    }
    Ok(s)
}

fn cycle(stack: &[String], name: &str) -> String {
    let mut parts: Vec<String> = stack.iter().map(|s| format!("${s}")).collect();
    parts.push(format!("${name}"));
    parts.join(" -> ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(l: &[(&str, &str)]) -> Vec<(String, String)> {
        l.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn negation_is_found_through_variables_once_each() {
        let v = Vars::suricata_default();
        assert!(v.address_negated(&parse_address("$EXTERNAL_NET").unwrap()), "!$HOME_NET");
        assert!(!v.address_negated(&parse_address("$HOME_NET").unwrap()));
        assert!(v.address_negated(&parse_address("[10.0.0.0/8,!10.1.0.0/16]").unwrap()));
        // Each variable names the next twice: 2^40 paths, 40 variables to look into.
        let mut chain: Vec<(String, String)> =
            (0..40).map(|i| (format!("V{i}"), format!("[$V{0},$V{0}]", i + 1))).collect();
        chain.push(("V40".into(), "!10.0.0.1".into()));
        let v = Vars::new(&chain, &[]);
        assert!(v.address_negated(&parse_address("$V0").unwrap()));
    }

    #[test]
    fn defaults_resolve() {
        let v = Vars::suricata_default();
        let home = v.address("HOME_NET").unwrap();
        assert!(home.contains("10.1.2.3".parse().unwrap()));
        let ext = v.address("EXTERNAL_NET").unwrap();
        assert!(!ext.contains("10.1.2.3".parse().unwrap()) && ext.contains("8.8.8.8".parse().unwrap()));
        assert!(ext.contains("::1".parse().unwrap()));
        assert_eq!(v.port("FILE_DATA_PORTS").unwrap().ranges(), &[(80, 80), (110, 110), (143, 143)]);
        assert_eq!(v.port("SIP_PORTS").unwrap().ranges(), &[(5060, 5061)]);
    }

    #[test]
    fn problems_are_per_variable() {
        let v = Vars::new(
            &pairs(&[("A", "$B"), ("B", "[$A,1.2.3.4]"), ("BAD", "1.2.3.256"), ("UNDEF", "$NOPE"), ("OK", "1.2.3.4")]),
            &pairs(&[("P", "80")]),
        );
        assert_eq!(v.address("A").unwrap_err().0, "$A refers to itself (through $A -> $B -> $A)");
        assert_eq!(v.address("BAD").unwrap_err().0, "$BAD is invalid: invalid IP address '1.2.3.256'");
        assert_eq!(v.address("UNDEF").unwrap_err().0, "undefined variable $NOPE");
        assert_eq!(v.address("P").unwrap_err().0, "$P is a port variable, not an address variable");
        assert_eq!(v.address("ZZ").unwrap_err().0, "undefined variable $ZZ");
        assert!(v.address("OK").is_ok());
    }

    #[test]
    fn empty_is_an_error() {
        let v = Vars::new(&pairs(&[("HOME_NET", "any"), ("EXTERNAL_NET", "!$HOME_NET")]), &[]);
        let e = v.resolve_address(&parse_address("$EXTERNAL_NET").unwrap()).unwrap_err();
        assert!(e.0.contains("matches no address"));
    }
}
