//! The IPS verdict, end to end: which packets a drop rule drops (the packet
//! alone, or the rest of its flow), the `drop` records they get, and what
//! `suppress` and `rate_filter` in threshold.config do to both.

mod common;

use common::{of_type, offline_opts, run_eve, short_session, spaced, tempdir, write_pcap};
use serde_json::Value;
use vigil_engine::RunOptions;

fn run(name: &str, rules: &str, drop_opts: &str, threshold: Option<&str>, ips: bool) -> Vec<Value> {
    let dir = tempdir("ips", name);
    let pcap = dir.join("in.pcap");
    write_pcap(&pcap, spaced(&short_session()));
    std::fs::write(dir.join("test.rules"), rules).unwrap();
    let yaml = format!(
        "outputs:\n  - eve-log:\n      enabled: yes\n      filename: eve.json\n      types:\n        - alert\n        - drop:\n{drop_opts}"
    );
    std::fs::write(dir.join("vigil.yaml"), yaml).unwrap();
    let mut sets = Vec::new();
    if let Some(t) = threshold {
        std::fs::write(dir.join("threshold.config"), t).unwrap();
        sets.push(format!("threshold-file={}", dir.join("threshold.config").display()));
    }
    let opts = RunOptions { config: Some(dir.join("vigil.yaml")), sets, simulate_ips: ips, ..offline_opts(&dir) };
    run_eve(&dir, &opts)
}

const ALL_WITH_ALERTS: &str = "            flows: all\n            alerts: yes\n";

fn field<'a>(recs: &[&'a Value], f: impl Fn(&'a Value) -> &'a Value) -> Vec<String> {
    recs.iter().map(|r| f(r).as_str().unwrap_or_default().to_string()).collect()
}

#[test]
fn a_packet_rule_drops_each_matching_packet_even_when_its_alert_is_suppressed() {
    let recs = run(
        "suppress",
        "drop tcp any any -> any any (dsize:0; sid:1;)\n",
        ALL_WITH_ALERTS,
        Some("suppress gen_id 1, sig_id 1, track by_src, ip 198.18.0.1\n"),
        true,
    );
    let drops = of_type(&recs, "drop");
    assert_eq!(drops.len(), 6, "every empty packet: {recs:#?}");
    assert!(drops.iter().all(|d| d["drop"]["reason"] == "rules" && d["alert"]["signature_id"] == 1));
    assert!(drops.iter().all(|d| d["alert"]["action"] == "blocked" && d["flow_id"].is_u64()));
    let alerts = of_type(&recs, "alert");
    assert_eq!(field(&alerts, |a| &a["src_ip"]), ["198.18.0.2", "198.18.0.2"], "the client's alerts are suppressed");
    assert!(alerts.iter().all(|a| a["alert"]["action"] == "blocked"));
}

#[test]
fn an_address_rule_drops_the_rest_of_its_flow() {
    let rules = "drop ip 198.18.0.1 any -> any any (sid:2;)\n";
    let recs = run("flow-all", rules, ALL_WITH_ALERTS, None, true);
    let drops = of_type(&recs, "drop");
    assert_eq!(drops.len(), 8);
    assert_eq!(drops[0]["drop"]["reason"], "rules");
    assert_eq!(drops[0]["alert"]["signature_id"], 2);
    assert!(drops[1..].iter().all(|d| d["drop"]["reason"] == "flow drop" && d.get("alert").is_none()));
    assert_eq!(of_type(&recs, "alert").len(), 1, "later packets are not inspected");
    // `flows: start`: the rule's drop and the first of the other direction.
    let recs = run("flow-start", rules, "            flows: start\n", None, true);
    let drops = of_type(&recs, "drop");
    assert_eq!(field(&drops, |d| &d["drop"]["reason"]), ["rules", "flow drop"]);
    assert_eq!(drops[1]["src_ip"], "198.18.0.2");
    assert!(drops[0].get("alert").is_none(), "alerts: no");
}

#[test]
fn without_ips_nothing_is_dropped() {
    let recs = run("ids", "drop ip 198.18.0.1 any -> any any (sid:2;)\n", ALL_WITH_ALERTS, None, false);
    assert!(of_type(&recs, "drop").is_empty());
    let alerts = of_type(&recs, "alert");
    assert_eq!(alerts.len(), 1, "an IP-only rule sees the first packet of each direction");
    assert!(alerts.iter().all(|a| a["alert"]["action"] == "allowed"));
}

#[test]
fn a_rate_filter_turns_drops_into_alerts_past_its_count() {
    let recs = run(
        "rate-filter",
        "drop tcp any any -> any any (dsize:0; sid:3;)\n",
        ALL_WITH_ALERTS,
        Some("rate_filter gen_id 1, sig_id 3, track by_rule, count 2, seconds 60, new_action alert, timeout 60\n"),
        true,
    );
    let alerts = of_type(&recs, "alert");
    assert_eq!(
        field(&alerts, |a| &a["alert"]["action"]),
        ["blocked", "blocked", "allowed", "allowed", "allowed", "allowed"]
    );
    assert_eq!(of_type(&recs, "drop").len(), 2);
}
