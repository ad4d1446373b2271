//! The protocols written against [`crate::proto`]: one folder each, listed
//! once below. Adding a protocol is its folder and one line here; the macro
//! declares the module and puts its `PROTO` definition in [`ALL`].

use crate::proto::ProtoDef;

macro_rules! protocols {
    ($($name:ident),* $(,)?) => {
        $(pub mod $name;)*
        /// Every protocol of the table, in probing order.
        pub static ALL: &[&ProtoDef] = &[$(&$name::PROTO),*];
    };
}

protocols! {
    http,
    tls,
    dns,
    dcerpc,
    ssh,
    smb,
    telnet,
    ftp,
    ftp_data,
    tftp,
    smtp,
    pop3,
    imap,
    sip,
    mdns,
    mqtt,
    dhcp,
    snmp,
    ntp,
    bittorrent_dht,
    pgsql,
    dnp3,
    modbus,
    enip,
    ike,
    krb5,
    ldap,
    nfs,
    websocket,
    rdp,
    rfb,
    quic,
    http2,
    doh2,
}

/// The test kit on every protocol of the table.
#[cfg(test)]
mod kit_tests {
    use super::ALL;
    use crate::proto::kit;

    #[test]
    fn every_definition_agrees_with_the_keyword_table() {
        let problems: Vec<String> = ALL.iter().flat_map(|d| kit::definition_problems(d)).collect();
        assert!(problems.is_empty(), "{problems:#?}");
    }

    #[test]
    fn every_parser_survives_damaged_samples() {
        for def in ALL {
            kit::survives_damage(def, 0x5eed ^ def.name.len() as u64, 1500);
        }
    }

    #[test]
    fn every_sample_parses_alike_however_cut() {
        for def in ALL {
            let whole = kit::cuts_agree(def).unwrap_or_else(|e| panic!("{e}"));
            let made = !whole["txs"].as_array().unwrap().is_empty();
            assert_eq!(made, def.transactions, "{}: transactions from the sample, against the definition", def.name);
        }
    }
}
