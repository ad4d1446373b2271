//! Printing is the inverse of parsing: `parse(print(parse(x))) ==
//! parse(x)` (spans aside), over generated rules and over every rule of the
//! shared rulesets; and printing is stable (`print∘parse` is a fixed point
//! after one step).

use proptest::prelude::*;
use vigil_rules::{Loader, Rule};

fn shared(path: &str) -> String {
    format!("{}/../../../shared/{path}", env!("CARGO_MANIFEST_DIR"))
}

fn rule_files(dir: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(shared(dir))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "rules"))
        .map(|p| p.display().to_string())
        .collect();
    v.sort();
    v
}

fn same_ast(a: &Rule, b: &Rule) -> bool {
    let (mut a, mut b) = (a.clone(), b.clone());
    a.clear_spans();
    b.clear_spans();
    a.resolved = None;
    b.resolved = None;
    a == b
}

fn check_round_trip(rule: &Rule) -> Result<(), String> {
    let printed = rule.to_string();
    let again = Rule::parse(&printed).map_err(|e| format!("{e}\n  printed: {printed}"))?;
    if !same_ast(rule, &again) {
        return Err(format!("AST changed\n  printed: {printed}\n  before: {rule:?}\n  after: {again:?}"));
    }
    let twice = again.to_string();
    if twice != printed {
        return Err(format!("printing not stable\n  1: {printed}\n  2: {twice}"));
    }
    Ok(())
}

#[test]
fn every_shared_rule_round_trips() {
    let mut files = rule_files("rules/et-open");
    files.extend(rule_files("rules/snort2-community"));
    let mut n = 0;
    let mut failures = Vec::new();
    for f in files {
        let set = Loader::new().load_files(&[&f]).unwrap();
        for r in set.rules.iter().chain(&set.disabled) {
            n += 1;
            if let Err(e) = check_round_trip(r) {
                failures.push(format!("{f}:{}: {e}", r.span.line));
            }
        }
    }
    assert!(n > 37_000, "{n}");
    assert!(
        failures.is_empty(),
        "{} of {n} rules do not round-trip:\n{}",
        failures.len(),
        failures[..failures.len().min(5)].join("\n")
    );
}

/// The conformance rules use the widest range of keywords and syntax.
#[test]
fn every_conformance_rule_round_trips() {
    let mut stack = vec![std::path::PathBuf::from(shared("conformance/suricata-verify/tests"))];
    let mut n = 0;
    let mut failures = Vec::new();
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rules") {
                let set = Loader::new().load_files(&[&p]).unwrap();
                for r in set.rules.iter().chain(&set.disabled) {
                    n += 1;
                    if let Err(e) = check_round_trip(r) {
                        failures.push(format!("{}:{}: {e}", p.display(), r.span.line));
                    }
                }
            }
        }
    }
    assert!(n > 8_000, "{n}");
    assert!(failures.is_empty(), "{} of {n}:\n{}", failures.len(), failures[..failures.len().min(5)].join("\n"));
}

// ---- generated rules ------------------------------------------------------

fn ident() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9_]{0,8}"
}

fn ipv4() -> impl Strategy<Value = String> {
    (any::<[u8; 4]>(), proptest::option::of(0u8..=32)).prop_map(|(a, p)| {
        let ip = format!("{}.{}.{}.{}", a[0], a[1], a[2], a[3]);
        match p {
            Some(p) => format!("{ip}/{p}"),
            None => ip,
        }
    })
}

fn address() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("any".to_string()),
        ipv4(),
        Just("2001:db8::/32".to_string()),
        Just("$HOME_NET".to_string()),
        Just("$EXTERNAL_NET".to_string()),
    ];
    leaf.prop_recursive(3, 8, 4, |inner| {
        prop_oneof![
            inner.clone().prop_map(|x| format!("!{x}")),
            proptest::collection::vec(inner, 1..4).prop_map(|v| format!("[{}]", v.join(","))),
        ]
    })
}

fn port() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("any".to_string()),
        any::<u16>().prop_map(|p| p.to_string()),
        (0u16..1000, 1000u16..2000).prop_map(|(a, b)| format!("{a}:{b}")),
        (1u16..60000).prop_map(|a| format!("{a}:")),
        (1u16..60000).prop_map(|a| format!(":{a}")),
        Just("$HTTP_PORTS".to_string()),
    ];
    leaf.prop_recursive(2, 6, 3, |inner| {
        prop_oneof![
            inner.clone().prop_map(|x| format!("!{x}")),
            proptest::collection::vec(inner, 1..4).prop_map(|v| format!("[{}]", v.join(","))),
        ]
    })
}

fn content_text() -> impl Strategy<Value = String> {
    proptest::collection::vec(any::<u8>(), 1..12).prop_map(|bytes| {
        let mut s = String::from("\"");
        for b in bytes {
            if b.is_ascii_alphanumeric() || b == b' ' {
                s.push(b as char);
            } else {
                s.push_str(&format!("|{b:02x}|"));
            }
        }
        s.push('"');
        s
    })
}

/// One option group: a content with modifiers, or another keyword.
fn option_group() -> impl Strategy<Value = String> {
    prop_oneof![
        (content_text(), any::<bool>(), any::<bool>(), proptest::option::of(20u16..500), any::<bool>()).prop_map(
            |(c, neg, nocase, depth, fp)| {
                let mut s = format!("content:{}{c};", if neg { "!" } else { "" });
                if nocase {
                    s.push_str(" nocase;");
                }
                if let Some(d) = depth {
                    s.push_str(&format!(" depth:{d};"));
                }
                if fp && !neg {
                    s.push_str(" fast_pattern;");
                }
                s
            }
        ),
        (content_text(), prop_oneof![Just("http_uri"), Just("http_header"), Just("http_cookie")])
            .prop_map(|(c, m)| format!("content:{c}; {m};")),
        (prop_oneof![Just("http.uri"), Just("dns.query"), Just("tls.sni"), Just("file.data")], content_text())
            .prop_map(|(b, c)| format!("{b}; content:{c}; endswith;")),
        ("[a-z]{1,6}", "[imsR]{0,3}").prop_map(|(re, fl)| format!("pcre:\"/{re}/{fl}\";")),
        prop_oneof![
            Just("flow:established,to_server;".to_string()),
            Just("flow:to_client,established,no_stream;".to_string()),
            Just("flow:stateless;".to_string()),
        ],
        (0u16..1500).prop_map(|n| format!("dsize:>{n};")),
        (1u16..100, 100u16..200).prop_map(|(a, b)| format!("urilen:{a}<>{b};")),
        (ident(), prop_oneof![Just("set"), Just("isset"), Just("unset"), Just("isnotset")])
            .prop_map(|(n, c)| format!("flowbits:{c},{n};")),
        (1u8..8, 0u16..100).prop_map(|(n, o)| format!("byte_test:{n},>,10,{o},relative;")),
        (1u8..8, 0u16..100).prop_map(|(n, o)| format!("byte_jump:{n},{o},relative,little;")),
        (0u16..100).prop_map(|n| format!("isdataat:!{n},relative;")),
        (1u32..100, 1u32..3600)
            .prop_map(|(c, s)| format!("threshold:type limit, track by_src, count {c}, seconds {s};")),
        prop_oneof![Just("flags:S,12;"), Just("flags:+AP;"), Just("fragbits:M;"), Just("ttl:<10;"), Just("itype:8;")]
            .prop_map(str::to_string),
        ("[a-z]{1,8}", "[a-z0-9./]{1,12}").prop_map(|(s, i)| format!("reference:{s},{i};")),
        "[a-z ;\"\\\\]{0,20}".prop_map(|m| {
            let esc = m.replace('\\', "\\\\").replace('"', "\\\"").replace(';', "\\;");
            format!("metadata:created_at 2020, tag x{}y;", esc.len()).replace("xy", "x")
        }),
    ]
}

fn rule_text() -> impl Strategy<Value = String> {
    (
        prop_oneof![Just("alert"), Just("drop"), Just("pass"), Just("reject"), Just("rejectboth")],
        prop_oneof![Just("tcp"), Just("udp"), Just("http"), Just("ip"), Just("dns"), Just("tls")],
        address(),
        port(),
        prop_oneof![Just("->"), Just("<>")],
        address(),
        port(),
        "[a-zA-Z0-9 ;\"\\\\]{0,30}",
        proptest::collection::vec(option_group(), 0..6),
        1u32..10_000_000,
        any::<bool>(),
    )
        .prop_map(|(act, proto, sa, sp, dir, da, dp, msg, groups, sid, disabled)| {
            let msg = msg.replace('\\', "\\\\").replace('"', "\\\"").replace(';', "\\;");
            format!(
                "{}{act} {proto} {sa} {sp} {dir} {da} {dp} (msg:\"{msg}\"; {} sid:{sid}; rev:1;)",
                if disabled { "#" } else { "" },
                groups.join(" ")
            )
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn generated_rules_round_trip(text in rule_text()) {
        // Generated rules may be semantically wrong (two fast_patterns, a
        // depth shorter than the content): those must fail cleanly, and the
        // rest must round-trip.
        if let Ok(rule) = Rule::parse(&text) {
            prop_assert!(check_round_trip(&rule).is_ok(), "{}", check_round_trip(&rule).unwrap_err());
        }
    }

    #[test]
    fn arbitrary_text_never_panics(text in ".{0,300}") {
        let _ = Rule::parse(&text);
        let _ = Loader::new().load_str(&text, "x.rules");
    }

    #[test]
    fn rule_shaped_noise_never_panics(
        head in "(alert|drop|#alert) (tcp|http|ip) [\\[\\]!$a-z0-9.,:/ ]{0,30} (->|<>) [\\[\\]!$a-z0-9.,:/ ]{0,20} \\(",
        body in "[a-z_.:;\"\\\\|!, 0-9()]{0,120}",
    ) {
        let _ = Rule::parse(&format!("{head}{body}"));
    }
}
