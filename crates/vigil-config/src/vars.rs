//! `vars`: address and port group variables, kept as written.
//!
//! The rules layer parses the values (`"[192.168.0.0/16,!$EXTERNAL_NET]"`);
//! here they are only collected, in file order. Names keep their `_`:
//! Suricata does not rewrite names under `address-groups`/`port-groups`.

use crate::read::{Errors, Section};

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
        let home = "$HOME_NET";
        Vars {
            address_groups: pairs(&[
                ("HOME_NET", "[192.168.0.0/16,10.0.0.0/8,172.16.0.0/12]"),
                ("EXTERNAL_NET", "!$HOME_NET"),
                ("HTTP_SERVERS", home),
                ("SMTP_SERVERS", home),
                ("SQL_SERVERS", home),
                ("DNS_SERVERS", home),
                ("TELNET_SERVERS", home),
                ("AIM_SERVERS", "$EXTERNAL_NET"),
                ("DC_SERVERS", home),
                ("DNP3_SERVER", home),
                ("DNP3_CLIENT", home),
                ("MODBUS_CLIENT", home),
                ("MODBUS_SERVER", home),
                ("ENIP_CLIENT", home),
                ("ENIP_SERVER", home),
            ]),
            port_groups: pairs(&[
                ("HTTP_PORTS", "80"),
                ("SHELLCODE_PORTS", "!80"),
                ("ORACLE_PORTS", "1521"),
                ("SSH_PORTS", "22"),
                ("DNP3_PORTS", "20000"),
                ("MODBUS_PORTS", "502"),
                ("FILE_DATA_PORTS", "[$HTTP_PORTS,110,143]"),
                ("FTP_PORTS", "21"),
                ("GENEVE_PORTS", "6081"),
                ("VXLAN_PORTS", "4789"),
                ("TEREDO_PORTS", "3544"),
                ("SIP_PORTS", "[5060, 5061]"),
            ]),
        }
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
