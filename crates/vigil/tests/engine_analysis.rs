//! `vigil --engine-analysis`: `rules.json` in the log directory, one line
//! per signature that loaded, `rule_group.json` beside it, and no packet read.

use std::process::Command;

#[test]
fn rules_json_lists_each_loaded_signature_with_its_type() {
    let dir = std::env::temp_dir().join(format!("vigil-engine-analysis-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let rules = dir.join("test.rules");
    std::fs::write(
        &rules,
        "alert ip any any -> any any (msg:\"any\"; sid:1; rev:2;)\n\
         # a comment\n\
         alert http any any -> any any (msg:\"uri\"; http.uri; content:\"/x\"; sid:2;)\n\
         alert tcp any any -> any any (geoip:src,US; sid:3;)\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_vigil"))
        .arg("--engine-analysis")
        .arg("-l")
        .arg(&dir)
        .arg("-S")
        .arg(&rules)
        .output()
        .expect("vigil runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(dir.join("rules.json")).unwrap();
    let recs: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(recs.len(), 2, "the geoip rule does not run on this engine: {text}");
    assert_eq!(recs[0]["raw"], "alert ip any any -> any any (msg:\"any\"; sid:1; rev:2;)");
    assert_eq!((&recs[0]["id"], &recs[0]["rev"], &recs[0]["type"]), (&1.into(), &2.into(), &"ip_only".into()));
    // `http` in a header is either HTTP version: Suricata's `http_any`.
    assert_eq!(
        (&recs[1]["app_proto"], &recs[1]["type"], &recs[1]["msg"]),
        (&"http_any".into(), &"app_tx".into(), &"uri".into())
    );
    assert_eq!(recs[0]["app_proto"], "unknown");
    assert_eq!((&recs[1]["mpm"]["buffer"], &recs[1]["mpm"]["pattern"]), (&"http_uri".into(), &"|2F|x".into()));
    // The port groups: both rules cover every TCP port to the server.
    let groups: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("rule_group.json")).unwrap()).unwrap();
    let toserver = &groups["tcp"]["toserver"];
    assert_eq!((&toserver[0]["port"], &toserver[0]["port2"]), (&0.into(), &65535.into()), "{groups}");
    assert_eq!(toserver[0]["rulegroup"]["rules"].as_array().map(Vec::len), Some(1), "the IP-only rule is not grouped");
    assert!(!dir.join("eve.json").exists(), "no packet is read, no record written");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Firewall mode adds `firewall.json`: each table with its default policy
/// and rules in evaluation order, as Suricata 8.0.6 writes it (checked
/// against it on these rules).
#[test]
fn firewall_json_lists_each_table_with_its_policy() {
    let dir = std::env::temp_dir().join(format!("vigil-engine-analysis-fw-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let fw = dir.join("firewall.rules");
    std::fs::write(
        &fw,
        "accept:hook tcp:all any any <> any 22 (alert; sid:1000;)\n\
         accept:hook ssh:request_started any any -> any any (alert; sid:2000;)\n\
         accept:tx ssh:<request_banner_done any any -> any any (sid:2002;)\n",
    )
    .unwrap();
    let td = dir.join("td.rules");
    std::fs::write(&td, "alert tls any any -> any any (tls.sni; content:\"a\"; sid:1;)\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_vigil"))
        .arg("--engine-analysis")
        .args(["-l".as_ref(), dir.as_os_str(), "-S".as_ref(), td.as_os_str()])
        .arg("--firewall-rules-exclusive")
        .arg(&fw)
        .output()
        .expect("vigil runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("firewall.json")).unwrap()).unwrap();
    let t = &doc["tables"];
    assert_eq!(t["packet:filter"]["policy"], "drop:packet");
    assert_eq!(t["packet:filter"]["rules"][0], "accept:hook tcp:all any any <> any 22 (alert; sid:1000;)");
    let ssh = &t["ssh"];
    assert_eq!(ssh["app:ssh:request_in_progress"]["rules"].as_array().map(Vec::len), Some(2), "{ssh}");
    assert_eq!(ssh["app:ssh:request_banner_wait_eol"]["rules"].as_array().map(Vec::len), Some(1), "the `<` rule");
    assert!(ssh["app:ssh:request_banner_done"].get("warnings").is_none());
    assert_eq!(
        ssh["app:ssh:request_finished"]["warnings"][0],
        "no accept rules for state, default policy will be applied"
    );
    assert_eq!(ssh["app:ssh:request_finished"]["policy"], "drop:flow");
    // A protocol without named states: Suricata writes them with dashes.
    assert!(t["dns"].get("app:dns:request-started").is_some(), "{}", t["dns"]);
    assert_eq!(t["app:td"]["rules"][0], "alert tls any any -> any any (tls.sni; content:\"a\"; sid:1;)");
    assert_eq!(doc["lists"]["firewall"]["rules"].as_array().map(Vec::len), Some(3));
    assert_eq!(doc["lists"]["all"]["rules"].as_array().map(Vec::len), Some(4));
    std::fs::remove_dir_all(&dir).unwrap();
}
