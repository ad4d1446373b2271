//! `base64_decode` / `base64_data` from rule text to alerts: where the
//! encoded text is read, what the decoded bytes are matched with, and that
//! the prefilter never looks for a decoded content in the raw bytes.

use vigil_decode::{DecodeConfig, Decoder};
use vigil_detect::prefilter::Algo;
use vigil_detect::{compile, DetectEngine, DetectScratch};
use vigil_rules::{Classifications, Loader, Rule};
use vigil_types::{LinkType, Timestamp};
use vigil_wire::build::PacketBuilder;

fn rule(text: &str) -> Rule {
    let set = Loader::new().load_str(text, "test.rules").expect("loads");
    assert!(set.errors.is_empty(), "{:?}", set.errors);
    set.rules.into_iter().next().expect("one rule")
}

/// The sids of `rules` that alert on one TCP packet carrying `payload`.
fn sids(rules: &[&str], payload: &[u8]) -> Vec<u32> {
    let classes = Classifications::default();
    let sigs: Vec<_> =
        rules.iter().map(|r| compile(&rule(r), &classes).unwrap_or_else(|u| panic!("{r}: {u:?}"))).collect();
    let e = DetectEngine::build(sigs, Algo::best()).unwrap();
    let frame = PacketBuilder::ipv4([10, 0, 0, 1], [10, 0, 0, 2]).tcp(40000, 80).payload(payload).build_ethernet();
    let mut dec = Decoder::new(DecodeConfig::default());
    let p = dec.decode(&frame, Timestamp::default(), LinkType::Ethernet, 1);
    let mut out = Vec::new();
    e.inspect(&p, None, None, &mut DetectScratch::default(), &mut |s| out.push(s.sid));
    out.sort();
    out
}

const REQUEST: &[u8] = b"GET /?arg=dGhpc2lzYXRlc3QK HTTP/1.1\r\n";

#[test]
fn decoded_bytes_after_a_relative_match() {
    let rules = [
        // The whole value: decoding stops at the space after it.
        r#"alert tcp any any -> any any (content:"arg="; base64_decode:relative; base64_data; content:"thisisatest"; sid:1;)"#,
        // Ten characters decode to "thisisa".
        r#"alert tcp any any -> any any (content:"arg"; base64_decode:bytes 10, offset 1, relative; base64_data; content:"test"; sid:2;)"#,
        r#"alert tcp any any -> any any (content:"arg"; base64_decode:bytes 10, offset 1, relative; base64_data; content:"thisisa"; startswith; sid:3;)"#,
        r#"alert tcp any any -> any any (content:"arg="; base64_decode:relative; base64_data; content:"toast"; sid:4;)"#,
        // Relative keywords in the decoded bytes count from their start.
        r#"alert tcp any any -> any any (content:"arg="; base64_decode:relative; base64_data; content:"this"; content:"test"; distance:3; within:4; sid:5;)"#,
        r#"alert tcp any any -> any any (content:"arg="; base64_decode:relative; base64_data; pcre:"/^thisis[a-z]+\n$/"; sid:6;)"#,
    ];
    assert_eq!(sids(&rules, REQUEST), [1, 3, 5, 6]);
}

#[test]
fn absolute_offsets_and_failed_decodes() {
    let rules = [
        r#"alert tcp any any -> any any (content:"GET"; base64_decode:offset 10; base64_data; content:"atest"; sid:1;)"#,
        // "GET " gives two bytes: a decode alone, with nothing after base64_data, matches.
        r#"alert tcp any any -> any any (content:"GET"; base64_decode:offset 0, bytes 4; base64_data; sid:2;)"#,
        // Nothing decodable where it points (a space): no match.
        r#"alert tcp any any -> any any (content:"GET"; base64_decode:offset 3; sid:3;)"#,
        // Past the end.
        r#"alert tcp any any -> any any (content:"GET"; base64_decode:offset 5000; base64_data; sid:4;)"#,
    ];
    assert_eq!(sids(&rules, REQUEST), [1, 2]);
}

#[test]
fn an_earlier_content_is_retried_when_the_decode_fails() {
    let rules = [
        r#"alert tcp any any -> any any (content:"k="; base64_decode:bytes 4, relative; base64_data; content:"abc"; sid:1;)"#,
    ];
    assert_eq!(sids(&rules, b"k=!!!! k=YWJj"), [1]);
    assert!(sids(&rules, b"k=!!!! k=YWJk").is_empty());
}

#[test]
fn a_url_escape_ends_the_text() {
    // suricata-verify base64-issue-5223: "np" before "%2B" decodes to 0x9e alone.
    let rules = [
        r#"alert tcp any any -> any any (content:"foobar="; base64_decode:relative; base64_data; content:"|9e|"; startswith; sid:1;)"#,
        r#"alert tcp any any -> any any (content:"foobar="; base64_decode:relative; base64_data; content:"|9e|"; isdataat:!1,relative; sid:2;)"#,
    ];
    assert_eq!(sids(&rules, b"Cookie: foobar=np%2BA%2BbSdU3SD33cQXeLxh9gXqjV4t2Q0cOWQ20vCv74%3D\r\n"), [1, 2]);
}

#[test]
fn the_fast_pattern_is_never_a_decoded_content() {
    let r = rule(
        r#"alert tcp any any -> any any (content:"arg"; base64_decode:relative; base64_data; content:"a much longer decoded content"; sid:1;)"#,
    );
    let sig = compile(&r, &Classifications::default()).unwrap();
    assert_eq!(sig.fast_pattern.map(|p| p.bytes), Some(b"arg".to_vec()));
}

#[test]
fn forms_that_do_not_compile() {
    for text in [
        r#"alert tcp any any -> any any (content:"a"; base64_data; content:"b"; sid:1;)"#,
        r#"alert tcp any any -> any any (content:"a"; base64_decode:depth 3; base64_data; content:"b"; sid:1;)"#,
        r#"alert tcp any any -> any any (content:"a"; base64_decode; base64_data; base64_decode; content:"b"; sid:1;)"#,
    ] {
        assert!(compile(&rule(text), &Classifications::default()).is_err(), "{text}");
    }
}
