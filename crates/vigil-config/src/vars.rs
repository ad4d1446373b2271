//! `vars`: address and port group variables, kept as written.
//!
//! The rules layer parses the values (`"[192.168.0.0/16,!$EXTERNAL_NET]"`);
//! here they are only collected, in file order. Names keep their `_`:
//! Suricata does not rewrite names under `address-groups`/`port-groups`.

use crate::read::{Errors, Section};
use vigil_types::suricata_vars::{SURICATA_ADDRESS_GROUPS, SURICATA_PORT_GROUPS};

/// `vars`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Vars {
    /// `vars.address-groups`: (name, raw value) in file order.
    pub address_groups: Vec<(String, String)>,
    /// `vars.port-groups`: (name, raw value) in file order.
    pub port_groups: Vec<(String, String)>,
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

impl Default for Vars {
    /// The stock `suricata.yaml` groups.
    fn default() -> Self {
        Vars { address_groups: pairs(SURICATA_ADDRESS_GROUPS), port_groups: pairs(SURICATA_PORT_GROUPS) }
    }
}

impl Vars {
    pub(crate) fn read(sec: &Section<'_>, errs: &mut Errors) -> Vars {
        let group = |name: &str, errs: &mut Errors| {
            let mut out = Vec::new();
            for var in sec.child(name).children() {
                match var.own_scalar(errs) {
                    Some((v, node)) => out.push((node.name().to_string(), v.to_string())),
                    // An empty group variable is an error in Suricata as soon
                    // as a rule uses it; say so where it is defined.
                    None if var.node.is_some_and(|n| n.children().is_empty()) => {
                        var.error("", errs, "variable has no value");
                    }
                    None => {}
                }
            }
            out
        };
        Vars { address_groups: group("address-groups", errs), port_groups: group("port-groups", errs) }
    }

    /// The value of address group `name`.
    pub fn address_group(&self, name: &str) -> Option<&str> {
        self.address_groups.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// The value of port group `name`.
    pub fn port_group(&self, name: &str) -> Option<&str> {
        self.port_groups.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}
