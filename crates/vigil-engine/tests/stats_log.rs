//! The text `stats.log` end to end: a `- stats:` output gets a block at the
//! end of a run (and at every stats record), with the same counters as the
//! EVE stats record; `threads: yes` adds each worker's; `append: no`
//! starts the file again.

mod common;

use common::{offline_opts, short_session, spaced, tempdir, write_pcap};
use std::collections::HashMap;
use vigil_engine::{run_offline, RunOptions};

/// `counter -> value` of every line of one block, by thread name.
fn block(text: &str) -> HashMap<(String, String), u64> {
    text.lines()
        .filter(|l| l.contains(" | ") && !l.starts_with("Counter"))
        .map(|l| {
            let parts: Vec<&str> = l.split(" | ").map(str::trim).collect();
            ((parts[0].to_string(), parts[1].to_string()), parts[2].parse().unwrap())
        })
        .collect()
}

fn run(dir: &std::path::Path, yaml: &str, runmode: &str) -> String {
    std::fs::write(dir.join("vigil.yaml"), yaml).unwrap();
    let opts = RunOptions {
        config: Some(dir.join("vigil.yaml")),
        runmode: Some(runmode.into()),
        threads: Some(2),
        ..offline_opts(dir)
    };
    run_offline(&opts, &mut |_| {}).unwrap();
    std::fs::read_to_string(dir.join("stats.log")).unwrap()
}

#[test]
fn the_text_log_has_the_eve_counters() {
    let dir = tempdir("statslog", "totals");
    write_pcap(&dir.join("in.pcap"), spaced(&short_session()));
    let yaml = "outputs:\n  - eve-log:\n      enabled: yes\n      filename: eve.json\n      types:\n        - stats\n  - stats:\n      enabled: yes\n      filename: stats.log\n      append: no\n";
    let text = run(&dir, yaml, "single");
    assert_eq!(text.matches("\nDate: ").count(), 1, "one block, at the end: {text}");
    let lines = block(&text);
    let eve = std::fs::read_to_string(dir.join("eve.json")).unwrap();
    let stats: serde_json::Value = serde_json::from_str(eve.lines().last().unwrap()).unwrap();
    assert_eq!(lines[&("decoder.pkts".into(), "Total".into())], stats["stats"]["decoder"]["pkts"].as_u64().unwrap());
    assert_eq!(lines[&("flow.total".into(), "Total".into())], 1);
    assert!(lines.values().all(|v| *v != 0), "zero counters are left out by default");
    // `append: no`: a second run starts the file again.
    let again = run(&dir, yaml, "single");
    assert_eq!(again.matches("\nDate: ").count(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn threads_add_each_workers_counters() {
    let dir = tempdir("statslog", "threads");
    write_pcap(&dir.join("in.pcap"), spaced(&short_session()));
    let yaml = "outputs:\n  - stats:\n      enabled: yes\n      filename: stats.log\n      threads: yes\n      totals: no\n      null-values: yes\n";
    let lines = block(&run(&dir, yaml, "autofp"));
    assert!(lines.keys().all(|(_, t)| t.starts_with("W#")), "no totals: {lines:?}");
    let pkts: u64 = lines.iter().filter(|((n, _), _)| n == "decoder.pkts").map(|(_, v)| v).sum();
    assert_eq!(pkts, short_session().len() as u64, "the workers' packets add up");
    assert!(lines.values().any(|v| *v == 0), "null-values keeps zero counters");
    std::fs::remove_dir_all(&dir).unwrap();
}
