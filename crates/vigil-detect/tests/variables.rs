//! `flowint`, `xbits` and `hostbits` through the loader, the compiler and
//! the engine: per-flow counters, and per-worker host bits that expire by
//! packet time and survive a rule reload.

use vigil_decode::{DecodeConfig, Decoder};
use vigil_detect::prefilter::Algo;
use vigil_detect::{compile, DetectEngine, DetectScratch, FlowDetect};
use vigil_rules::{Classifications, Loader};
use vigil_types::{LinkType, Timestamp};
use vigil_wire::build::PacketBuilder;

const CLIENT: [u8; 4] = [192, 168, 1, 10];
const SERVER: [u8; 4] = [198, 18, 0, 80];
const OTHER: [u8; 4] = [198, 18, 0, 99];

fn engine(rules: &str) -> DetectEngine {
    let set = Loader::new().load_str(rules, "test.rules").expect("loads");
    assert!(set.errors.is_empty(), "{:?}", set.errors);
    let classes = Classifications::default();
    let sigs: Vec<_> = set.rules.iter().map(|r| compile(r, &classes).unwrap_or_else(|u| panic!("{u:?}"))).collect();
    DetectEngine::build(sigs, Algo::best()).unwrap()
}

/// Runs one TCP packet from `src` to `dst` at second `secs`; the sids that matched.
fn run(
    e: &DetectEngine,
    src: [u8; 4],
    dst: [u8; 4],
    payload: &[u8],
    secs: i64,
    flow: Option<&mut FlowDetect>,
    scratch: &mut DetectScratch,
) -> Vec<u32> {
    let f = PacketBuilder::ipv4(src, dst).tcp(1000, 80).payload(payload).build_ethernet();
    let mut dec = Decoder::new(DecodeConfig::default());
    let p = dec.decode(&f, Timestamp::from_secs_nanos(secs, 0), LinkType::Ethernet, 1);
    let mut out = Vec::new();
    e.inspect(&p, None, flow, scratch, &mut |s| out.push(s.sid));
    out
}

#[test]
fn flowint_counts_per_flow_and_compares() {
    let e = engine(
        r#"
alert tcp any any -> any any (msg:"third hit"; content:"hit"; flowint:hits,+,1; flowint:hits,==,3; sid:1;)
alert tcp any any -> any any (msg:"first of the flow"; flowint:seen,notset; flowint:seen,=,1; sid:2;)
alert tcp any any -> any any (msg:"never set"; flowint:nope,>,0; sid:3;)
"#,
    );
    let mut s = DetectScratch::default();
    let mut flow = FlowDetect::default();
    assert_eq!(run(&e, CLIENT, SERVER, b"hit", 0, Some(&mut flow), &mut s), vec![2]);
    assert!(run(&e, CLIENT, SERVER, b"hit", 0, Some(&mut flow), &mut s).is_empty());
    // The add stays even when the comparison after it fails: the third hit alerts, the fourth not.
    assert_eq!(run(&e, CLIENT, SERVER, b"hit", 0, Some(&mut flow), &mut s), vec![1]);
    assert!(run(&e, CLIENT, SERVER, b"hit", 0, Some(&mut flow), &mut s).is_empty());
    // Another flow counts from nothing; no flow at all matches none.
    let mut other = FlowDetect::default();
    assert_eq!(run(&e, CLIENT, SERVER, b"x", 0, Some(&mut other), &mut s), vec![2]);
    assert!(run(&e, CLIENT, SERVER, b"hit", 0, None, &mut s).is_empty());
}

#[test]
fn xbits_cross_flows_of_the_same_hosts_until_they_expire() {
    let e = engine(
        r#"
alert tcp any any -> any any (msg:"download"; content:"GET /payload"; xbits:set,dl,track ip_dst,expire 10; xbits:noalert; sid:1;)
alert tcp any any -> any any (msg:"server talks back"; content:"beacon"; xbits:isset,dl,track ip_src; sid:2;)
alert tcp any any -> any any (msg:"pair"; content:"GET /payload"; xbits:set,p,track ip_pair; noalert; sid:3;)
alert tcp any any -> any any (msg:"pair seen"; content:"beacon"; xbits:isset,p,track ip_pair; sid:4;)
"#,
    );
    let mut s = DetectScratch::default();
    assert!(run(&e, SERVER, CLIENT, b"beacon", 0, None, &mut s).is_empty());
    assert_eq!(run(&e, CLIENT, SERVER, b"GET /payload", 100, None, &mut s), vec![1, 3]);
    // No flow is needed: the bits are on the hosts.
    assert_eq!(run(&e, SERVER, CLIENT, b"beacon", 105, None, &mut s), vec![2, 4]);
    assert_eq!(run(&e, SERVER, OTHER, b"beacon", 105, None, &mut s), vec![2], "host bit, other pair");
    assert_eq!(run(&e, SERVER, CLIENT, b"beacon", 110, None, &mut s), vec![4], "the host bit expired at 10 s");
    assert!(run(&e, SERVER, CLIENT, b"beacon", 130, None, &mut s).is_empty(), "the pair bit at the default 30 s");
}

#[test]
fn host_bits_survive_a_reload_by_name() {
    let old = engine(
        r#"
alert tcp any any -> any any (msg:"mark"; content:"mark"; hostbits:set,marked,src; hostbits:set,gone,src; sid:1;)
"#,
    );
    let new = engine(
        r#"
alert tcp any any -> any any (msg:"other"; hostbits:isset,unrelated; sid:5;)
alert tcp any any -> any any (msg:"marked"; content:"check"; hostbits:isset,marked,src; sid:6;)
"#,
    );
    let mut s = DetectScratch::default();
    assert_eq!(run(&old, CLIENT, SERVER, b"mark", 0, None, &mut s), vec![1]);
    // The first name of each engine differs: the bit must follow the name.
    let mut s = s.carried_over();
    assert_eq!(run(&new, CLIENT, SERVER, b"check", 1, None, &mut s), vec![6]);
}
