//! The `vars` of Suricata 8.0's stock `suricata.yaml`: the defaults both the
//! configuration (no `vars` section) and the rule loader (no configuration)
//! fall back to, kept in one place so the two cannot drift apart.

/// `vars.address-groups`: (name, value), in the stock file's order.
pub const SURICATA_ADDRESS_GROUPS: &[(&str, &str)] = &[
    ("HOME_NET", "[192.168.0.0/16,10.0.0.0/8,172.16.0.0/12]"),
    ("EXTERNAL_NET", "!$HOME_NET"),
    ("HTTP_SERVERS", "$HOME_NET"),
    ("SMTP_SERVERS", "$HOME_NET"),
    ("SQL_SERVERS", "$HOME_NET"),
    ("DNS_SERVERS", "$HOME_NET"),
    ("TELNET_SERVERS", "$HOME_NET"),
    ("AIM_SERVERS", "$EXTERNAL_NET"),
    ("DC_SERVERS", "$HOME_NET"),
    ("DNP3_SERVER", "$HOME_NET"),
    ("DNP3_CLIENT", "$HOME_NET"),
    ("MODBUS_CLIENT", "$HOME_NET"),
    ("MODBUS_SERVER", "$HOME_NET"),
    ("ENIP_CLIENT", "$HOME_NET"),
    ("ENIP_SERVER", "$HOME_NET"),
];

/// `vars.port-groups`: (name, value), in the stock file's order.
pub const SURICATA_PORT_GROUPS: &[(&str, &str)] = &[
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
];
