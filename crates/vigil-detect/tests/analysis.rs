//! The signature types `--engine-analysis` reports, on rules of each kind.

use vigil_detect::analysis::rule_type;
use vigil_detect::compile;
use vigil_rules::{Classifications, Loader};

fn types(rules: &str) -> Vec<(u32, &'static str)> {
    let set = Loader::new().load_str(rules, "t.rules").expect("loads");
    assert!(set.errors.is_empty(), "{:?}", set.errors);
    set.rules
        .iter()
        .map(|r| {
            let sig = compile(r, &Classifications::default()).unwrap_or_else(|u| panic!("{u:?}"));
            (sig.sid, rule_type(r, &sig).name())
        })
        .collect()
}

#[test]
fn each_kind_of_rule_gets_its_type() {
    let rules = r#"
alert ip 198.18.0.0/15 any -> any any (msg:"addresses only"; sid:1;)
alert tcp-pkt any any -> any any (flowbits:set,seen; sid:2;)
alert tcp ![198.18.0.1] any -> any any (sid:3;)
alert ip $EXTERNAL_NET any -> $HOME_NET any (sid:4;)
alert tcp any any -> any 443 (sid:5;)
alert tcp any any -> any any (ttl:64; sid:6;)
alert udp any any -> any any (flow:to_server; sid:7;)
alert tcp any any -> any any (content:"evil"; sid:8;)
alert tcp any any -> any any (content:"evil"; depth:4; sid:9;)
alert tcp-pkt any any -> any any (content:"evil"; sid:10;)
alert tcp any any -> any any (flow:only_stream; content:"evil"; startswith; sid:11;)
alert udp any any -> any 53 (content:"evil"; sid:12;)
alert tcp any any -> any any (app-layer-protocol:!http; sid:13;)
alert tcp any any -> any any (app-layer-protocol:tls; flow:to_client; sid:14;)
alert http any any -> any any (msg:"protocol only"; sid:15;)
alert http any any -> any any (http.uri; content:"/a"; sid:16;)
alert pkthdr any any -> any any (decode-event:ipv4.opt_invalid_len; sid:17;)
"#;
    assert_eq!(
        types(rules),
        [
            (1, "ip_only"),
            (2, "ip_only"),
            (3, "like_ip_only"),
            (4, "like_ip_only"),
            (5, "pkt"),
            (6, "pkt"),
            (7, "pkt"),
            (8, "stream"),
            (9, "pkt_stream"),
            (10, "pkt"),
            (11, "stream"),
            (12, "pkt"),
            (13, "pd_only"),
            (14, "pd_only"),
            (15, "app_layer"),
            (16, "app_tx"),
            (17, "de_only"),
        ]
    );
}
