//! Hostile input: garbage, megabyte lines, unbalanced quotes and brackets,
//! deep nesting. Each must give errors (never a panic) in time linear in
//! the input: every case here is about a megabyte and must finish in a few
//! seconds even in a debug build, which a quadratic path would not.

use std::time::{Duration, Instant};
use vigil_rules::{Loader, Rule, Vars};

const MB: usize = 1 << 20;

fn load(name: &str, text: &str) -> vigil_rules::RuleSet {
    let t = Instant::now();
    let set = Loader::new().load_str(text, name).unwrap();
    let took = t.elapsed();
    eprintln!("{name}: {took:?}");
    assert!(took < Duration::from_secs(10), "{name}: {took:?}");
    for e in &set.errors {
        assert!(e.reason.len() < 300, "{name}: reason not truncated");
    }
    set
}

/// A cheap deterministic byte generator (xorshift).
fn noise(n: usize, mut seed: u64) -> Vec<u8> {
    (0..n)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed as u8
        })
        .collect()
}

#[test]
fn binary_garbage() {
    let bytes = noise(MB, 0x9e37_79b9_7f4a_7c15);
    let text = String::from_utf8_lossy(&bytes);
    let set = load("garbage", &text);
    assert!(set.rules.is_empty());
    // Garbage that happens to look like rule starts.
    let mut s = String::new();
    for (i, b) in noise(MB / 8, 7).iter().enumerate() {
        s.push_str(
            ["alert ", "(", ")", ";", "\"", "[", "]", "!", "$", ":", "|", "\\", "\n", "tcp ", "any "][*b as usize % 15],
        );
        if i % 100 == 0 {
            s.push('\n');
        }
    }
    load("rule-shaped garbage", &s);
}

#[test]
fn megabyte_lines() {
    let head = "alert tcp any any -> any any (";
    let cases = [
        ("long msg", format!("{head}msg:\"{}\"; sid:1;)", "a".repeat(MB))),
        ("unterminated msg", format!("{head}msg:\"{} sid:1;)", "a".repeat(MB))),
        ("many options", format!("{head}{}sid:1;)", "content:\"ab\"; ".repeat(MB / 14))),
        ("many escapes", format!("{head}msg:\"{}\"; sid:1;)", "\\;".repeat(MB / 2))),
        ("no semicolons", format!("{head}{}", "msg:x ".repeat(MB / 6))),
        ("huge hex", format!("{head}content:\"|{}|\"; sid:1;)", "41 ".repeat(MB / 3))),
        ("odd hex", format!("{head}content:\"|{}\"; sid:1;)", "4".repeat(MB))),
        ("pcre slashes", format!("{head}pcre:\"/{}/\"; sid:1;)", "a/".repeat(MB / 2))),
        ("pcre captures", format!("{head}pcre:\"/a/{}x\"; sid:1;)", ",flow:a/".repeat(MB / 8))),
        (
            "long address list",
            format!("alert tcp [{}] any -> any any (sid:1;)", "10.0.0.1,".repeat(MB / 9) + "1.1.1.1"),
        ),
        ("long port list", format!("alert tcp any [{}80] -> any any (sid:1;)", "1:2,".repeat(MB / 4))),
        ("metadata commas", format!("{head}metadata:{}; sid:1;)", "a b,".repeat(MB / 4))),
        ("flowbits names", format!("{head}flowbits:isset,{}a; sid:1;)", "a|".repeat(MB / 2))),
        ("backslashes", format!("{head}content:\"{}\"; sid:1;)", "\\".repeat(MB))),
        ("parens", "(".repeat(MB)),
        ("quotes", "\"".repeat(MB)),
        ("header only", "alert ".repeat(MB / 6)),
    ];
    for (name, text) in &cases {
        load(name, text);
    }
}

#[test]
fn deep_nesting_is_capped() {
    for (open, close) in [("[", "]"), ("![", "]"), ("!", "")] {
        let depth = 100_000;
        let addr = format!("{}1.2.3.4{}", open.repeat(depth), close.repeat(depth));
        let set = load("deep address", &format!("alert tcp {addr} any -> any any (sid:1;)"));
        assert_eq!(set.errors.len(), 1);
        assert!(set.errors[0].reason.contains("nest deeper than"), "{}", set.errors[0]);
        let port = format!("{}80{}", open.repeat(depth), close.repeat(depth));
        let set = load("deep port", &format!("alert tcp any {port} -> any any (sid:1;)"));
        assert_eq!(set.errors.len(), 1);
    }
    // Variables that refer to each other in a long chain or a cycle.
    let mut defs: Vec<(String, String)> = (0..200).map(|i| (format!("V{i}"), format!("$V{}", i + 1))).collect();
    defs.push(("V200".into(), "$V0".into()));
    let vars = Vars::new(&defs, &[]);
    let set = Loader::new().vars(vars).load_str("alert tcp $V0 any -> any any (sid:1;)", "v.rules").unwrap();
    assert_eq!(set.errors.len(), 1);
}

#[test]
fn unbalanced_everything() {
    let cases = [
        r#"alert tcp any any -> any any (msg:"x; sid:1;)"#,
        r#"alert tcp any any -> any any (msg:"x"; sid:1;"#,
        r#"alert tcp any any -> any any msg:"x"; sid:1;)"#,
        r#"alert tcp [any any -> any any (sid:1;)"#,
        r#"alert tcp any] any -> any any (sid:1;)"#,
        r#"alert tcp any any -> any any (content:"|41"; sid:1;)"#,
        r#"alert tcp any any -> any any (pcre:"/abc; sid:1;)"#,
        r#"alert tcp any any -> any any ((((sid:1;)"#,
        r#"alert tcp any any -> any any ()"#,
        r#"alert tcp any any -> any any (;)"#,
        "alert",
        "",
        "\u{0}\u{0}\u{0}",
        "alert tcp any any -> any any (sid:1;)\u{0}",
        "alert tcp any any -> any any (content:\"\u{fffd}\u{1F600}\"; sid:1;)",
    ];
    for c in cases {
        let _ = Rule::parse(c);
        load("unbalanced", c);
    }
}
