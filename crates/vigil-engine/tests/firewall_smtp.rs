//! Firewall mode on SMTP, built with vigil's packet builders: Suricata
//! 8.0.7's mail states (`request_started`, `request_data`,
//! `request_complete` and the `response_` ones) and bits kept per
//! transaction (`xbits:...,track tx`), a sender and its recipients
//! checked before the message may go.

mod common;

use common::{of_type, tcp_conversation, tempdir, write_pcap};
use serde_json::Value;
use vigil_engine::RunOptions;

const C: [u8; 4] = [198, 18, 0, 1];
const S: [u8; 4] = [198, 18, 0, 2];

/// Accepts the TCP traffic, then every mail state, DATA only when the
/// sender and a recipient were allowed; a recipient of `blocked.test`
/// drops the flow.
const RULES: &str = r#"
accept:hook tcp:all any any <> any any (sid:1;)
accept:hook,alert smtp:request_started any any -> any any (sid:10; smtp.mail_from; content:"@good.test>"; endswith; xbits:set,sender_ok,track tx;)
drop:flow smtp:request_started any any -> any any (alert; sid:11; smtp.rcpt_to; content:"@blocked.test>"; endswith;)
accept:hook,alert smtp:request_started any any -> any any (sid:12; smtp.rcpt_to; content:"@good.test>"; endswith; xbits:set,rcpt_ok,track tx;)
accept:hook smtp:request_started any any -> any any (sid:13;)
accept:hook smtp:request_data any any -> any any (sid:14; xbits:isset,sender_ok,track tx; xbits:isset,rcpt_ok,track tx;)
accept:hook smtp:request_complete any any -> any any (sid:15;)
accept:hook smtp:response_started any any -> any any (sid:20;)
accept:hook smtp:response_data any any -> any any (sid:21;)
accept:hook smtp:response_complete any any -> any any (sid:22;)
"#;

/// A session sending one mail from `from` to `to`, each recipient in a
/// command of its own; the number of packets before the DATA command.
fn session(from: &str, to: &[&str]) -> (Vec<Vec<u8>>, usize) {
    let mut cmds: Vec<(bool, Vec<u8>)> = vec![
        (false, b"220 mx.good.test ESMTP\r\n".to_vec()),
        (true, b"HELO client.good.test\r\n".to_vec()),
        (false, b"250 mx.good.test\r\n".to_vec()),
        (true, format!("MAIL FROM:<{from}>\r\n").into_bytes()),
        (false, b"250 Ok\r\n".to_vec()),
    ];
    for r in to {
        cmds.push((true, format!("RCPT TO:<{r}>\r\n").into_bytes()));
        cmds.push((false, b"250 Ok\r\n".to_vec()));
    }
    // Handshake, then each server message and its acknowledgement, each
    // client command answered at once.
    let before_data = 3 + cmds.len() + cmds.iter().filter(|(c, _)| !c).count();
    cmds.extend([
        (true, b"DATA\r\n".to_vec()),
        (false, b"354 End data with <CR><LF>.<CR><LF>\r\n".to_vec()),
        (true, b"Subject: hello\r\n\r\nbody\r\n.\r\n".to_vec()),
        (false, b"250 Ok: queued\r\n".to_vec()),
        (true, b"QUIT\r\n".to_vec()),
        (false, b"221 Bye\r\n".to_vec()),
    ]);
    let msgs: Vec<(bool, &[u8])> = cmds.iter().map(|(c, m)| (*c, m.as_slice())).collect();
    (tcp_conversation((C, 40000), (S, 25), &msgs), before_data)
}

fn run(name: &str, frames: &[Vec<u8>]) -> Vec<Value> {
    let dir = tempdir("firewall-smtp", name);
    write_pcap(&dir.join("in.pcap"), common::spaced(frames));
    std::fs::write(dir.join("fw.rules"), RULES).unwrap();
    let eve = "outputs:\n  - eve-log:\n      enabled: yes\n      filename: eve.json\n      types: [alert, {drop: {flows: all}}, smtp]\n";
    std::fs::write(dir.join("vigil.yaml"), eve).unwrap();
    let opts = RunOptions {
        config: Some(dir.join("vigil.yaml")),
        inputs: vec![dir.join("in.pcap")],
        log_dir: Some(dir.clone()),
        checksum: Some("none".into()),
        simulate_ips: true,
        firewall_rules: Some(dir.join("fw.rules")),
        ..Default::default()
    };
    common::run_eve(&dir, &opts)
}

fn alerts(recs: &[Value]) -> Vec<(u64, Vec<String>)> {
    of_type(recs, "alert")
        .iter()
        .map(|a| {
            let rcpt = a["smtp"]["rcpt_to"]
                .as_array()
                .map_or(Vec::new(), |l| l.iter().map(|v| v.as_str().unwrap().to_string()).collect());
            (a["alert"]["signature_id"].as_u64().unwrap(), rcpt)
        })
        .collect()
}

/// The capture's packet numbers (from 1) the firewall dropped.
fn dropped(recs: &[Value]) -> Vec<u64> {
    of_type(recs, "drop").iter().map(|d| d["pcap_cnt"].as_u64().unwrap()).collect()
}

#[test]
fn allowed_sender_and_recipient_deliver() {
    let (frames, _) = session("alice@good.test", &["bob@good.test"]);
    let recs = run("allowed", &frames);
    assert!(dropped(&recs).is_empty(), "{recs:#?}");
    // The sender is checked when the envelope starts, the recipient when
    // DATA moves the mail on.
    assert_eq!(alerts(&recs), [(10, vec![]), (12, vec!["<bob@good.test>".to_string()])]);
    let smtp = of_type(&recs, "smtp");
    assert_eq!(smtp.len(), 1);
    assert_eq!(smtp[0]["smtp"]["mail_from"], "<alice@good.test>");
}

#[test]
fn one_blocked_recipient_drops_the_flow_at_data() {
    let (frames, before_data) = session("alice@good.test", &["carol@blocked.test", "bob@good.test"]);
    let recs = run("blocked-rcpt", &frames);
    // Both recipients were there when the drop rule ran: the state is not
    // looked at again for each RCPT TO.
    let both = vec!["<carol@blocked.test>".to_string(), "<bob@good.test>".to_string()];
    assert_eq!(alerts(&recs), [(10, vec![]), (11, both)]);
    let want: Vec<u64> = (before_data as u64 + 1..=frames.len() as u64).collect();
    assert_eq!(dropped(&recs), want);
    assert!(of_type(&recs, "smtp").is_empty(), "a mail dropped before it completed is not logged");
}

#[test]
fn unknown_sender_meets_the_default_policy_at_data() {
    let (frames, before_data) = session("mallory@evil.test", &["bob@good.test"]);
    let recs = run("blocked-sender", &frames);
    let drops = of_type(&recs, "drop");
    assert_eq!(drops.first().and_then(|d| d["pcap_cnt"].as_u64()), Some(before_data as u64 + 1));
    assert_eq!(drops[0]["drop"]["reason"], "firewall default app policy");
    assert_eq!(alerts(&recs), [(12, vec!["<bob@good.test>".to_string()])]);
}
