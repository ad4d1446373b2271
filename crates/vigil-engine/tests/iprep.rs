//! IP reputation end to end: datagrams from hosts a reputation file scores,
//! run offline with `iprep` rules; which match, and a rule naming a
//! category the categories file lacks fails.

mod common;

use common::{of_type, spaced, tempdir, write_pcap};
use vigil_engine::{run_offline, RunOptions};
use vigil_wire::build::PacketBuilder;

fn datagram(src: [u8; 4], dst: [u8; 4]) -> Vec<u8> {
    PacketBuilder::ipv4(src, dst).udp(40000, 9999).payload(b"x").build_ethernet()
}

fn setup(name: &str, rules: &str) -> (std::path::PathBuf, RunOptions) {
    let dir = tempdir("iprep", name);
    std::fs::write(dir.join("categories.txt"), "1,bad,Known bad\n2,tor,Tor exits\n").unwrap();
    std::fs::write(dir.join("scores.list"), "# scores\n198.18.0.1,1,100\n198.18.1.0/24,1,30\n198.18.0.2,2,0\n")
        .unwrap();
    std::fs::write(dir.join("test.rules"), rules).unwrap();
    let frames = [datagram([198, 18, 0, 1], [198, 18, 9, 9]), datagram([198, 18, 1, 7], [198, 18, 0, 2])];
    write_pcap(&dir.join("in.pcap"), spaced(&frames));
    let opts = RunOptions {
        inputs: vec![dir.join("in.pcap")],
        log_dir: Some(dir.clone()),
        checksum: Some("none".into()),
        exclusive_rules: vec![dir.join("test.rules")],
        sets: vec![
            format!("reputation-categories-file={}", dir.join("categories.txt").display()),
            format!("default-reputation-path={}", dir.display()),
            "reputation-files.0=scores.list".into(),
        ],
        ..Default::default()
    };
    (dir, opts)
}

#[test]
fn reputations_of_hosts_and_networks_match() {
    let rules = "alert udp any any -> any any (iprep:src,bad,>,50; sid:1;)\n\
                 alert udp any any -> any any (iprep:src,bad,<,50; sid:2;)\n\
                 alert udp any any -> any any (iprep:dst,tor,=,0; sid:3;)\n\
                 alert udp any any -> any any (iprep:both,bad,isset; sid:4;)\n\
                 alert udp any any -> any any (iprep:any,tor,isset; sid:5;)\n\
                 alert udp any any -> any any (iprep:dst,bad,isnotset; sid:6;)\n";
    let (dir, opts) = setup("match", rules);
    run_offline(&opts, &mut |_| {}).unwrap();
    let text = std::fs::read_to_string(dir.join("eve.json")).unwrap();
    let recs: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let mut sids: Vec<u64> =
        of_type(&recs, "alert").iter().map(|a| a["alert"]["signature_id"].as_u64().unwrap()).collect();
    sids.sort_unstable();
    // 198.18.0.1 scores 100 (bad); 198.18.1.7 is in a network scoring 30;
    // 198.18.0.2 scores 0 for tor, a score all the same.
    assert_eq!(sids, [1, 2, 3, 5, 6, 6]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_unknown_category_fails_the_rule() {
    let (dir, opts) = setup("unknown", "alert udp any any -> any any (iprep:src,ugly,>,1; sid:1;)\n");
    let setup = vigil_engine::setup(&opts).unwrap();
    assert_eq!((setup.rules.loaded, setup.rules.failed), (0, 1));
    assert!(setup.rules.messages.join("\n").contains("unknown category 'ugly'"));
    std::fs::remove_dir_all(&dir).unwrap();
}
