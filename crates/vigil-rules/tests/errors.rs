//! Typical rule-writing mistakes and the exact messages they produce.
//! Each message names file, line, column and keyword, and one bad rule
//! never stops the others from loading.

use vigil_rules::{Classifications, ErrorKind, Loader};

/// Each line: a rule with one mistake, and the message it must give.
const CASES: &[(&str, &str)] = &[
    (
        r#"alert tcp any any -> any any (msg:"missing semicolon" sid:1;)"#,
        "test.rules:1:55: msg: unexpected 'sid:1' after the closing quote (missing ';'?)",
    ),
    (r#"alert tcp any any -> any any (msg:"unterminated; sid:2;)"#, "test.rules:2:35: msg: unterminated quoted string"),
    (r#"alert tcp any any -> any any (msg:"unknown keyword"; foo:bar; sid:3;)"#, "test.rules:3:54: foo: unknown keyword"),
    (
        r#"alert tcp any any -> any any (msg:"bad pcre flag"; content:"abc"; pcre:"/abc/iJ"; sid:4;)"#,
        "test.rules:4:79: pcre: unknown flag 'J'",
    ),
    (
        r#"alert tcp any any -> any any (msg:"modifier without content"; nocase; sid:5;)"#,
        "test.rules:5:63: nocase: needs a preceding content",
    ),
    (
        r#"alert tcp any any -> any any (msg:"depth 0"; content:"abc"; depth:0; sid:6;)"#,
        "test.rules:6:61: depth: must be at least 1",
    ),
    (
        r#"alert tcp 1.2.3.256 any -> any any (msg:"bad address"; sid:7;)"#,
        "test.rules:7:11: source address: invalid IP address '1.2.3.256'",
    ),
    (
        r#"alert tcp any any -> any 70000 (msg:"bad port"; sid:8;)"#,
        "test.rules:8:26: destination port: port 70000 is out of range (0-65535)",
    ),
    (
        r#"alert tcp $NOT_DEFINED any -> any any (msg:"undefined variable"; sid:9;)"#,
        "test.rules:9:11: source address: undefined variable $NOT_DEFINED",
    ),
    (
        r#"alert tcp [1.2.3.4,[5.6.7.8] any -> any any (msg:"unbalanced brackets"; sid:10;)"#,
        "test.rules:10:11: unbalanced brackets: '[' without ']' in the header",
    ),
    (r#"alert tcp any any -> any any (msg:"missing sid"; content:"x";)"#, "test.rules:11:1: rule has no sid"),
    (r#"alert tcp any any -> any any (msg:"first"; sid:12;)"#, ""),
    (
        r#"alert tcp any any -> any any (msg:"duplicate sid"; sid:12;)"#,
        "test.rules:13:52: sid: duplicate sid 12 (gid 1): first defined at test.rules:12",
    ),
    (
        r#"alert tcp any any -> any any (msg:"unbalanced parens"; sid:14;"#,
        // Suricata loads a rule whose closing parenthesis is missing.
        "",
    ),
    (
        r#"alert tcp any any -> any any (msg:"bad hex"; content:"|4g|"; sid:15;)"#,
        "test.rules:15:57: content: Invalid hex code in content - |4g|, hex g. Invalidating signature.",
    ),
    (
        r#"alert tcp any any <- any any (msg:"reverse direction"; sid:16;)"#,
        "test.rules:16:19: direction '<-' is not supported: swap source and destination and use '->'",
    ),
    (
        r#"alert tcp any any -> any any (msg:"within < content"; content:"a"; content:"bcd"; distance:0; within:2; sid:17;)"#,
        "test.rules:17:95: within: 2 is smaller than the content length (3 bytes): it can never match",
    ),
    (
        r#"alert tcp any any -> any any (msg:"bad flow"; flow:established,sideways; sid:18;)"#,
        "test.rules:18:64: flow: unknown flow option 'sideways'",
    ),
    (
        r#"alert tcp any any -> any any (msg:"bad byte_test"; byte_test:4,~,1,0; sid:19;)"#,
        "test.rules:19:64: byte_test: unknown operator '~'",
    ),
    (
        r#"alert tcp any any -> any any (msg:"relative and absolute"; content:"a"; depth:4; distance:1; sid:20;)"#,
        "test.rules:20:82: distance: can't use a relative keyword like within/distance with a absolute relative keyword like depth/offset for the same content.",
    ),
    (
        r#"alert http any any -> any any (msg:"no content"; http_uri; content:"/x"; sid:21;)"#,
        "test.rules:21:50: http_uri: needs a preceding content (or use the sticky buffer 'http.uri;' before the content)",
    ),
    (
        r#"alert tcp any any -> any any (msg:"unknown classtype"; classtype:no-such-class; sid:22;)"#,
        "test.rules:22:56: classtype: unknown classtype 'no-such-class'",
    ),
    (
        r#"alert tcp any any -> any any (msg:"snort 3 inline"; content:"USER",depth 4; sid:23;)"#,
        "test.rules:23:53: content: Snort 3 inline modifiers (,depth 4) are not Suricata syntax; write them as options after the content",
    ),
    (
        r#"alert tcp any any -> any any (msg:"unknown byte_extract var"; content:"a"; byte_jump:len,0,relative; sid:24;)"#,
        "test.rules:24:76: byte_jump: Unknown byte_extract var seen in byte_jump - len",
    ),
    (r#"alert tcp any any -> any any (msg:"good"; content:"ok"; sid:25;)"#, ""),
];

#[test]
fn typical_mistakes_give_exact_messages() {
    let text: String = CASES.iter().map(|(r, _)| format!("{r}\n")).collect();
    let classes =
        Classifications::parse("config classification: trojan-activity,A Network Trojan was detected,1\n", "c").0;
    let set = Loader::new().classifications(classes).load_str(&text, "test.rules").unwrap();
    let got: Vec<String> = set.errors.iter().map(|e| e.to_string()).collect();
    let want: Vec<&str> = CASES.iter().map(|(_, m)| *m).filter(|m| !m.is_empty()).collect();
    assert_eq!(got, want);
    // The good rules of the file still load.
    let sids: Vec<u32> = set.rules.iter().map(|r| r.sid()).collect();
    assert_eq!(sids, vec![12, 14, 25]);
    assert!(Loader::new().strict(true).load_str(&text, "test.rules").is_err());
}

#[test]
fn errors_carry_kind_keyword_and_sid() {
    let set = Loader::new()
        .load_str(r#"alert tcp any any -> any any (msg:"x"; content:"a"; pcre:"/a/J"; sid:7;)"#, "k.rules")
        .unwrap();
    let e = &set.errors[0];
    assert_eq!((e.kind, e.keyword.as_deref(), e.sid, e.line), (ErrorKind::Value, Some("pcre"), Some(7), 1));
}
