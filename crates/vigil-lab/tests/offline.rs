//! `vigil bench offline` on a small generated capture: every configuration
//! runs, alerts match the truth, the report has its fields.

mod common;

use vigil_lab::offline::{self, BenchOptions};

#[test]
fn the_benchmark_reports_throughput_alerts_and_the_stage_split() {
    let dir = common::scratch("bench");
    let (paths, truth) = common::write(&dir, &common::opts(80, |o| o.malicious = 20.0));
    let opts = BenchOptions {
        input: paths.pcap.clone(),
        rules: vec![paths.rules.clone()],
        checksum: Some("none".into()),
        repeat: 2,
        split: true,
        log_dir: dir.join("logs"),
        ..Default::default()
    };
    let report = offline::run(&opts).unwrap();
    assert_eq!(report.packets, truth.frames);
    assert_eq!(report.bytes, truth.bytes);
    assert_eq!(report.full.passes, 2);
    assert_eq!(report.full.run.alerts, truth.malicious.iter().sum::<u64>());
    let split = report.split.as_ref().unwrap();
    assert_eq!(split.no_detection.run.alerts, 0);
    assert!(split.decode > 0.0);
    let json = report.to_json();
    for key in ["packets_per_sec", "gbit_per_sec", "packets_per_cpu_sec", "gbit_per_cpu_sec", "alerts_per_pass"] {
        assert!(json[key].is_number(), "{key}");
    }
    assert!(json["stage_split"]["method"].as_str().unwrap().contains("switched off and subtracting"));
    let table = report.table();
    assert!(table.contains("per CPU-sec") && table.contains("detection") && table.contains("subtracting"), "{table}");
}
