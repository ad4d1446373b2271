//! Datasets end to end: DNS queries built with vigil's packet builder, run
//! offline with `dataset`/`datarep` rules; what matches, and the sets'
//! files as the run leaves them in the data directory.

mod common;

use common::{of_type, spaced, tempdir, write_pcap};
use vigil_engine::{run_offline, RunOptions};
use vigil_wire::build::PacketBuilder;

const C: [u8; 4] = [198, 18, 0, 1];
const S: [u8; 4] = [198, 18, 0, 2];

fn query(id: u16, name: &str) -> Vec<u8> {
    let mut m = vec![(id >> 8) as u8, id as u8, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0];
    for label in name.split('.') {
        m.push(label.len() as u8);
        m.extend_from_slice(label.as_bytes());
    }
    m.extend_from_slice(&[0, 0, 1, 0, 1]);
    PacketBuilder::ipv4(C, S).udp(5300 + id, 53).payload(&m).build_ethernet()
}

fn sids(recs: &[serde_json::Value]) -> Vec<u64> {
    let mut v: Vec<u64> = of_type(recs, "alert").iter().map(|r| r["alert"]["signature_id"].as_u64().unwrap()).collect();
    v.sort_unstable();
    v
}

#[test]
fn sets_are_matched_changed_and_written_back() {
    let dir = tempdir("datasets", "state");
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    // Known before the run: example.com (state), and two names' MD5s with their reputations.
    std::fs::write(data.join("seen.lst"), "ZXhhbXBsZS5jb20=\n").unwrap();
    let md5 = |s: &str| {
        use md5::Digest;
        md5::Md5::digest(s.as_bytes()).iter().map(|b| format!("{b:02x}")).collect::<String>()
    };
    std::fs::write(dir.join("bad.rep"), format!("{},300\n{},10\n", md5("evil.example"), md5("meh.example"))).unwrap();
    let rules = "alert dns any any -> any any (dns.query; dataset:set,seen,type string,state seen.lst; sid:1;)\n\
                 alert dns any any -> any any (dns.query; dataset:isset,seen; sid:2;)\n\
                 alert dns any any -> any any (dns.query; to_md5; datarep:bad,>,100,load bad.rep,type md5; sid:3;)\n\
                 alert dns any any -> any any (ip.dst; dataset:set,servers,type ipv4,save servers.lst; sid:4;)\n";
    std::fs::write(dir.join("test.rules"), rules).unwrap();
    let frames = [query(1, "example.com"), query(2, "evil.example"), query(3, "evil.example"), query(4, "meh.example")];
    write_pcap(&dir.join("in.pcap"), spaced(&frames));
    let opts = RunOptions {
        inputs: vec![dir.join("in.pcap")],
        log_dir: Some(dir.clone()),
        data_dir: Some(data.clone()),
        checksum: Some("none".into()),
        exclusive_rules: vec![dir.join("test.rules")],
        ..Default::default()
    };
    run_offline(&opts, &mut |_| {}).unwrap();
    let text = std::fs::read_to_string(dir.join("eve.json")).unwrap();
    let recs: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    // `set` matches what it adds: not example.com (the state file had it), evil.example once.
    let got = sids(&recs);
    assert!(got.contains(&2), "example.com is in the set: {got:?}");
    assert_eq!(got.iter().filter(|&&s| s == 1).count(), 2, "evil.example and meh.example were new: {got:?}");
    assert_eq!(got.iter().filter(|&&s| s == 3).count(), 2, "evil.example's reputation, twice: {got:?}");
    assert_eq!(got.iter().filter(|&&s| s == 4).count(), 1, "one server: {got:?}");
    let seen = std::fs::read_to_string(data.join("seen.lst")).unwrap();
    assert_eq!(seen, "ZXhhbXBsZS5jb20=\nZXZpbC5leGFtcGxl\nbWVoLmV4YW1wbGU=\n");
    assert_eq!(std::fs::read_to_string(data.join("servers.lst")).unwrap(), "198.18.0.2\n");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_rule_whose_set_file_does_not_read_fails_and_says_why() {
    let dir = tempdir("datasets", "bad");
    std::fs::write(dir.join("bad.rep"), "00000000000000000000000000000000,65536\n").unwrap();
    std::fs::write(
        dir.join("test.rules"),
        "alert dns any any -> any any (dns.query; to_md5; datarep:bad,>,1,load bad.rep,type md5; sid:1;)\n\
         alert dns any any -> any any (dns.query; dataset:isset,x,type string,state /etc/x.lst; sid:2;)\n",
    )
    .unwrap();
    write_pcap(&dir.join("in.pcap"), spaced(&[query(1, "a.example")]));
    let opts = RunOptions {
        inputs: vec![dir.join("in.pcap")],
        log_dir: Some(dir.clone()),
        checksum: Some("none".into()),
        exclusive_rules: vec![dir.join("test.rules")],
        ..Default::default()
    };
    let setup = vigil_engine::setup(&opts).unwrap();
    assert_eq!((setup.rules.loaded, setup.rules.failed), (0, 2));
    let said = setup.rules.messages.join("\n");
    assert!(said.contains("invalid datarep value"), "{said}");
    assert!(said.contains("Absolute paths not allowed: /etc/x.lst"), "{said}");
    std::fs::remove_dir_all(&dir).unwrap();
}
