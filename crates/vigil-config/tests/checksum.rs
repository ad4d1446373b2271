//! `-k`, `capture.checksum-validation`, `stream.checksum-validation` and
//! `pcap-file.checksum-checks` combine as in Suricata.

use vigil_config::{ChecksumMode, ChecksumOverride, Config, ConfigTree};

fn config(yaml: &str) -> Config {
    let tree = ConfigTree::parse_str(yaml, "t.yaml").unwrap();
    let (c, errors, _) = Config::from_tree(&tree);
    assert!(errors.is_empty(), "{errors:?}");
    c
}

#[test]
fn modes() {
    use ChecksumMode::*;
    use ChecksumOverride::{All, Disabled as KNone};
    let stock = Config::default();
    assert_eq!(stock.pcap_checksum_mode(None), Auto);
    assert_eq!(stock.pcap_checksum_mode(Some(KNone)), Disabled);
    assert_eq!(stock.pcap_checksum_mode(Some(All)), Auto);

    let forced = config("pcap-file:\n  checksum-checks: yes\n");
    assert_eq!(forced.pcap_checksum_mode(None), Forced);
    assert_eq!(forced.pcap_checksum_mode(Some(KNone)), Disabled);

    let off = config("pcap-file:\n  checksum-checks: no\n");
    assert_eq!(off.pcap_checksum_mode(Some(All)), Disabled);

    let no_stream = config("stream:\n  checksum-validation: no\npcap-file:\n  checksum-checks: yes\n");
    assert_eq!(no_stream.pcap_checksum_mode(None), Disabled);
    assert_eq!(no_stream.pcap_checksum_mode(Some(All)), Forced);

    let capture_none = config("capture:\n  checksum-validation: none\n");
    assert_eq!(capture_none.checksum.capture_validation, Some(KNone));
    assert_eq!(capture_none.pcap_checksum_mode(None), Disabled);
    // -k on the command line wins over the file.
    assert_eq!(capture_none.pcap_checksum_mode(Some(All)), Auto);
}

#[test]
fn k_argument() {
    assert_eq!(ChecksumOverride::parse("all"), Ok(ChecksumOverride::All));
    assert_eq!(ChecksumOverride::parse("none"), Ok(ChecksumOverride::Disabled));
    assert!(ChecksumOverride::parse("auto").is_err());
}
