//! The stats record's `detect.engines` rule counts: loaded, failed, and
//! skipped by `requires`, the same whichever runmode wrote the record.

mod common;

use common::{of_type, run_eve, spaced, tempdir, write_pcap};
use vigil_engine::RunOptions;
use vigil_wire::build::PacketBuilder;

const RULES: &str = "\
alert tcp any any -> any any (msg:\"runs\"; content:\"hello\"; requires: version >= 8; sid:1;)
alert vxlan any any -> any any (msg:\"for a later version\"; requires: version >= 10; sid:2;)
alert tcp any any -> any any (msg:\"unknown need\"; requires: foo bar; sid:3;)
alert tcp any any -> any any (msg:\"broken\"; content:\"x\"; depth:0x; sid:4;)
";

#[test]
fn stats_count_loaded_failed_and_skipped_rules() {
    for (runmode, threads) in [("single", 1), ("autofp", 2)] {
        let dir = tempdir("rule-counts", runmode);
        let pcap = dir.join("in.pcap");
        let frame = PacketBuilder::ipv4([10, 0, 0, 1], [10, 0, 0, 2]).tcp(1000, 80).payload(b"hello").build_ethernet();
        write_pcap(&pcap, spaced(&[frame]));
        let rules = dir.join("test.rules");
        std::fs::write(&rules, RULES).unwrap();
        let opts = RunOptions {
            inputs: vec![pcap],
            log_dir: Some(dir.clone()),
            exclusive_rules: vec![rules],
            checksum: Some("none".into()),
            runmode: Some(runmode.into()),
            threads: Some(threads),
            ..RunOptions::default()
        };
        let recs = run_eve(&dir, &opts);
        let alerts = of_type(&recs, "alert");
        assert_eq!(alerts.len(), 1, "{runmode}");
        assert_eq!(alerts[0]["alert"]["signature_id"], 1);
        let stats = of_type(&recs, "stats");
        let engine = &stats.last().expect("a stats record")["stats"]["detect"]["engines"][0];
        assert_eq!(
            (&engine["rules_loaded"], &engine["rules_failed"], &engine["rules_skipped"]),
            (&1.into(), &1.into(), &2.into()),
            "{runmode}: {engine}"
        );
    }
}
