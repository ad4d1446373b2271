//! Rules in, alerts out: rule text through the loader, the compiler and the
//! engine, against packets built with vigil's own builders.

use vigil_decode::{DecodeConfig, Decoder};
use vigil_detect::compile::{ActionOrder, FlowInfo};
use vigil_detect::prefilter::Algo;
use vigil_detect::{compile, DetectEngine, DetectScratch};
use vigil_rules::{Classifications, Loader};
use vigil_types::{LinkType, Timestamp};
use vigil_wire::build::PacketBuilder;
use vigil_wire::tcp::flags::{ACK, PSH, SYN};

const CLIENT: [u8; 4] = [192, 168, 1, 10];
const SERVER: [u8; 4] = [198, 18, 0, 80];

fn engine(rules: &str, algo: Algo) -> DetectEngine {
    let set = Loader::new().load_str(rules, "test.rules").expect("loads");
    assert!(set.errors.is_empty(), "{:?}", set.errors);
    let classes = Classifications::default();
    let sigs: Vec<_> = set.rules.iter().map(|r| compile(r, &classes).unwrap_or_else(|u| panic!("{u:?}"))).collect();
    DetectEngine::build(sigs, algo).unwrap()
}

fn sids(e: &DetectEngine, frame: &[u8]) -> Vec<u32> {
    let mut dec = Decoder::new(DecodeConfig::default());
    let p = dec.decode(frame, Timestamp::default(), LinkType::Ethernet, 1);
    let mut out = Vec::new();
    e.inspect(&p, None, None, &mut DetectScratch::default(), &mut |s| out.push(s.sid));
    out
}

const RULES: &str = r#"
alert tcp $HOME_NET any -> $EXTERNAL_NET 80 (msg:"evil uri"; content:"GET"; depth:3; content:"/evil.php"; distance:0; nocase; sid:1; rev:1;)
alert tcp any any -> any any (msg:"syn only"; flags:S; sid:2;)
alert udp any any -> any 53 (msg:"dns to 53"; content:"|07|example"; sid:3;)
alert icmp any any -> any any (msg:"ping"; itype:8; sid:4;)
alert ip any any -> any any (msg:"ttl 1"; ttl:1; sid:5;)
alert tcp any any <> any 80 (msg:"both ways"; content:"HTTP/1.1 200"; sid:6;)
alert tcp any any -> any any (msg:"big payload"; dsize:>1000; sid:7;)
alert tcp any any -> any any (msg:"pcre"; content:"id="; pcre:"/^[0-9]{3}\;/R"; sid:8;)
alert tcp any any -> any any (msg:"not admin"; content:"login"; content:!"admin"; sid:9;)
"#;

#[test]
fn rules_fire_on_the_packets_they_describe() {
    for algo in [Algo::best(), Algo::AhoCorasick] {
        let e = engine(RULES, algo);
        let get = PacketBuilder::ipv4(CLIENT, SERVER)
            .tcp(40000, 80)
            .tcp_flags(PSH | ACK)
            .payload(b"GET /EVIL.PHP HTTP/1.1\r\n");
        assert_eq!(sids(&e, &get.build_ethernet()), vec![1], "{algo:?}");
        // The same request from outside HOME_NET to inside does not match sid 1.
        let inbound = PacketBuilder::ipv4(SERVER, CLIENT).tcp(40000, 80).payload(b"GET /evil.php HTTP/1.1\r\n");
        assert!(sids(&e, &inbound.build_ethernet()).is_empty());
        let syn = PacketBuilder::ipv4(CLIENT, SERVER).tcp(40000, 80).tcp_flags(SYN);
        assert_eq!(sids(&e, &syn.build_ethernet()), vec![2]);
        let dns = PacketBuilder::ipv4(CLIENT, SERVER)
            .udp(5353, 53)
            .payload(b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07example\x03com\x00");
        assert_eq!(sids(&e, &dns.build_ethernet()), vec![3]);
        let ping = PacketBuilder::ipv4(CLIENT, SERVER).icmp(8, 0).ttl(1);
        assert_eq!(sids(&e, &ping.build_ethernet()), vec![4, 5]);
        let reply = PacketBuilder::ipv4(SERVER, CLIENT).tcp(80, 40000).payload(b"HTTP/1.1 200 OK\r\n");
        assert_eq!(sids(&e, &reply.build_ethernet()), vec![6], "bidirectional rule");
        let big = PacketBuilder::ipv4(CLIENT, SERVER).tcp(1, 2).payload(&[b'x'; 1200]);
        assert_eq!(sids(&e, &big.build_ethernet()), vec![7]);
        let pcre = PacketBuilder::ipv4(CLIENT, SERVER).tcp(1, 2).payload(b"id=ab; id=123;");
        assert_eq!(sids(&e, &pcre.build_ethernet()), vec![8]);
        let login = |body: &[u8]| PacketBuilder::ipv4(CLIENT, SERVER).tcp(1, 2).payload(body).build_ethernet();
        assert_eq!(sids(&e, &login(b"login user")), vec![9]);
        assert!(sids(&e, &login(b"login admin")).is_empty());
    }
}

#[test]
fn pass_rules_come_first_and_stop_inspection() {
    let rules = r#"
alert tcp any any -> any any (msg:"a"; content:"secret"; sid:10;)
pass tcp any any -> any any (msg:"p"; content:"secret"; sid:11;)
"#;
    let e = engine(rules, Algo::best());
    let f = PacketBuilder::ipv4(CLIENT, SERVER).tcp(1, 2).payload(b"the secret").build_ethernet();
    assert_eq!(sids(&e, &f), vec![11]);
}

#[test]
fn unsupported_keywords_are_named() {
    let set = Loader::new()
        .load_str(
            r#"alert http any any -> any any (msg:"x"; geoip:src,US; app-layer-event:http.lzma_memlimit_reached; sid:1;)"#,
            "t.rules",
        )
        .unwrap();
    let err = compile(&set.rules[0], &Classifications::default()).unwrap_err();
    assert!(err.keywords.iter().any(|k| k.contains("geoip")), "{err:?}");
    assert!(err.keywords.iter().any(|k| k.contains("lzma_memlimit_reached")), "{err:?}");
    // Transaction xbits outside a hooked rule are refused when loading, as Suricata refuses them.
    let set = Loader::new()
        .load_str(r#"alert tcp any any -> any any (msg:"x"; xbits:isset,x,track tx; sid:2;)"#, "t.rules")
        .unwrap();
    assert!(set.rules.is_empty() && set.errors[0].to_string().contains("tx xbits require an explicit rule hook"));
}

#[test]
fn flowbits_carry_state_between_packets_of_a_flow() {
    let rules = r#"
alert tcp any any -> any any (msg:"checker"; content:"second"; flowbits:isset,seen_first; sid:21;)
alert tcp any any -> any any (msg:"setter"; content:"first"; flowbits:set,seen_first; flowbits:noalert; sid:20;)
alert tcp any any -> any any (msg:"unset"; content:"reset"; flowbits:unset,seen_first; flowbits:noalert; sid:22;)
"#;
    let e = engine(rules, Algo::best());
    let mut bits = vigil_detect::FlowDetect::default();
    let mut dec = Decoder::new(DecodeConfig::default());
    let mut run = |payload: &[u8], bits: &mut vigil_detect::FlowDetect| {
        let f = PacketBuilder::ipv4(CLIENT, SERVER).tcp(1, 2).payload(payload).build_ethernet();
        let p = dec.decode(&f, Timestamp::default(), LinkType::Ethernet, 1);
        let mut out = Vec::new();
        e.inspect(&p, None, Some(bits), &mut DetectScratch::default(), &mut |s| out.push((s.sid, s.noalert)));
        out
    };
    assert!(run(b"second", &mut bits).is_empty(), "not set yet");
    assert_eq!(run(b"first", &mut bits), vec![(20, true)]);
    assert_eq!(run(b"second", &mut bits), vec![(21, false)]);
    // Setter and checker in one packet: the setter runs first.
    let mut fresh = vigil_detect::FlowDetect::default();
    assert_eq!(run(b"first second", &mut fresh), vec![(20, true), (21, false)]);
    run(b"reset", &mut bits);
    assert!(run(b"second", &mut bits).is_empty(), "unset");
}

#[test]
fn a_pass_match_passes_the_rest_of_the_flow() {
    let rules = r#"
pass tcp any any -> any 443 (msg:"allowed service"; sid:30;)
alert tcp any any -> any any (msg:"later content"; content:"secret"; sid:31;)
"#;
    let e = engine(rules, Algo::best());
    let mut state = vigil_detect::FlowDetect::default();
    let mut dec = Decoder::new(DecodeConfig::default());
    let mut run = |sport, dport, payload: &[u8], st: &mut vigil_detect::FlowDetect| {
        let f = PacketBuilder::ipv4(CLIENT, SERVER).tcp(sport, dport).payload(payload).build_ethernet();
        let p = dec.decode(&f, Timestamp::default(), LinkType::Ethernet, 1);
        let mut out = Vec::new();
        e.inspect(&p, None, Some(st), &mut DetectScratch::default(), &mut |s| out.push(s.sid));
        out
    };
    assert_eq!(run(40000, 443, b"hello", &mut state), vec![30]);
    assert!(state.passed);
    // The server's reply does not match the pass rule's header, but the flow is passed.
    assert!(run(443, 40000, b"secret", &mut state).is_empty());
    let mut other = vigil_detect::FlowDetect::default();
    assert_eq!(run(40001, 80, b"secret", &mut other), vec![31]);
}

/// Runs `payload` from client to server (or back) through `e` with the
/// flow state `st`; `inline`: IPS scratch.
fn run_flow(
    e: &DetectEngine,
    to_server: bool,
    payload: &[u8],
    st: &mut vigil_detect::FlowDetect,
    inline: bool,
) -> Vec<u32> {
    let (src, dst, sport, dport) = if to_server { (CLIENT, SERVER, 40000, 80) } else { (SERVER, CLIENT, 80, 40000) };
    let f = PacketBuilder::ipv4(src, dst).tcp(sport, dport).payload(payload).build_ethernet();
    let p = Decoder::new(DecodeConfig::default()).decode(&f, Timestamp::default(), LinkType::Ethernet, 1);
    let flow = Some(FlowInfo { to_server, ..FlowInfo::default() });
    let mut out = Vec::new();
    e.inspect(&p, flow, Some(st), &mut DetectScratch::inline(inline), &mut |s| out.push(s.sid));
    out
}

#[test]
fn a_pass_on_payload_passes_only_the_packet() {
    let rules = r#"
pass tcp any any -> any any (content:"wo"; sid:40;)
alert tcp any any -> any any (content:"Hi"; sid:41;)
"#;
    let e = engine(rules, Algo::best());
    let mut st = vigil_detect::FlowDetect::default();
    assert_eq!(run_flow(&e, true, b"Hi world", &mut st, false), vec![40]);
    assert!(!st.passed, "a packet match of a payload signature is the packet's alone");
    assert_eq!(run_flow(&e, true, b"Hi all", &mut st, false), vec![41]);
}

#[test]
fn action_order_decides_which_signatures_come_first() {
    let rules = r#"
alert tcp any any -> any any (content:"Hi"; sid:50;)
pass tcp any any -> any any (content:"Hi"; sid:51;)
drop tcp any any -> any any (content:"Hi"; sid:52;)
"#;
    let set = Loader::new().load_str(rules, "t.rules").unwrap();
    let sigs = || set.rules.iter().map(|r| compile(r, &Classifications::default()).unwrap()).collect::<Vec<_>>();
    let order = ActionOrder::from_names(&["drop", "alert", "reject", "pass"]).unwrap();
    let e = DetectEngine::build_ordered(sigs(), Algo::best(), order).unwrap();
    let mut st = vigil_detect::FlowDetect::default();
    assert_eq!(run_flow(&e, true, b"Hi", &mut st, true), vec![52, 50, 51]);
    // Suricata's default: pass first, and it stops the packet's inspection.
    let e = DetectEngine::build(sigs(), Algo::best()).unwrap();
    assert_eq!(run_flow(&e, true, b"Hi", &mut st, true), vec![51]);
    assert!(ActionOrder::from_names(&["drop", "alert", "pass"]).is_none());
}

#[test]
fn inline_a_pass_after_a_drop_does_not_pass_the_flow() {
    let rules = r#"
pass tcp any any -> any any (sid:60;)
drop tcp any any -> any any (content:"Hi"; sid:61;)
"#;
    let set = Loader::new().load_str(rules, "t.rules").unwrap();
    let sigs: Vec<_> = set.rules.iter().map(|r| compile(r, &Classifications::default()).unwrap()).collect();
    let order = ActionOrder::from_names(&["drop", "pass", "reject", "alert"]).unwrap();
    let e = DetectEngine::build_ordered(sigs, Algo::best(), order).unwrap();
    for inline in [true, false] {
        let mut st = vigil_detect::FlowDetect::default();
        assert_eq!(run_flow(&e, true, b"Hi", &mut st, inline), vec![61, 60]);
        assert_eq!(st.passed, !inline, "inline: the dropped packet's pass stays the packet's");
    }
}

#[test]
fn ip_only_signatures_see_the_first_packet_of_each_direction() {
    let rules = r#"
alert tcp any any -> any any (msg:"ip-only"; sid:70;)
alert tcp any any -> any 80 (msg:"a port: every packet"; sid:71;)
"#;
    let e = engine(rules, Algo::best());
    let mut st = vigil_detect::FlowDetect::default();
    assert_eq!(run_flow(&e, true, b"a", &mut st, false), vec![70, 71]);
    assert_eq!(run_flow(&e, true, b"b", &mut st, false), vec![71]);
    assert_eq!(run_flow(&e, false, b"c", &mut st, false), vec![70]);
    assert!(run_flow(&e, false, b"d", &mut st, false).is_empty());
    // Without a flow, every packet.
    let f = PacketBuilder::ipv4(CLIENT, SERVER).tcp(40000, 80).payload(b"e").build_ethernet();
    assert_eq!(sids(&e, &f), vec![70, 71]);
    assert_eq!(sids(&e, &f), vec![70, 71]); // A negated address (Suricata's like_ip_only): every packet.
    let e = engine("alert tcp !198.18.9.9 any -> any any (sid:72;)\n", Algo::best());
    let mut st = vigil_detect::FlowDetect::default();
    assert_eq!(run_flow(&e, true, b"a", &mut st, false), vec![72]);
    assert_eq!(run_flow(&e, true, b"b", &mut st, false), vec![72]);
}

#[test]
fn anchored_stream_contents_inspect_the_packet_too() {
    // An absolute content or stream_size: the packet is inspected even when
    // its payload went into the stream; a floating content waits for the stream.
    let rules = r#"
alert tcp any any -> any any (content:"GNUTELLA"; depth:8; sid:80;)
alert tcp any any -> any any (content:"GNUTELLA"; sid:81;)
alert tcp any any -> any any (content:"GNU"; startswith; sid:82;)
alert tcp any any -> any any (stream_size:server,<,1000; content:"TELLA"; sid:83;)
alert tcp any any -> any any (flow:only_stream; content:"GNU"; depth:3; sid:84;)
"#;
    for algo in [Algo::best(), Algo::AhoCorasick] {
        let e = engine(rules, algo);
        assert!(e.signatures().iter().filter(|s| s.require_packet).map(|s| s.sid).eq([80, 82, 83]));
        let f = PacketBuilder::ipv4(CLIENT, SERVER).tcp(40000, 80).payload(b"GNUTELLA CONNECT/0.6").build_ethernet();
        let p = Decoder::new(DecodeConfig::default()).decode(&f, Timestamp::default(), LinkType::Ethernet, 1);
        let flow = Some(FlowInfo { to_server: true, tracked: true, ..FlowInfo::default() });
        let in_stream =
            vigil_detect::StreamInput { chunk: None, payload_in_stream: true, pseudo: false, fresh_from: 0 };
        let mut out = Vec::new();
        e.inspect_stream(&p, flow, None, in_stream, &mut DetectScratch::default(), &mut |s| out.push(s.sid));
        out.sort_unstable();
        assert_eq!(out, [80, 82, 83], "the floating and the stream-only contents wait for the stream");
    }
}

#[test]
fn address_list_rules_without_content_are_found_by_address() {
    // Reputation-list style: no content, a source (or destination) list.
    let rules = r#"
alert ip [198.18.5.0/24,198.18.7.7] any -> any any (msg:"listed source"; sid:40;)
alert ip any any -> [198.19.0.0/16,2001:db8::/32] any (msg:"listed destination"; sid:41;)
alert ip ![198.18.0.0/15] any -> any any (msg:"outside the lab"; sid:42;)
"#;
    let e = engine(rules, Algo::best());
    let from = |src: [u8; 4], dst: [u8; 4]| PacketBuilder::ipv4(src, dst).udp(1, 2).payload(b"x").build_ethernet();
    assert_eq!(sids(&e, &from([198, 18, 5, 9], [198, 18, 0, 1])), vec![40]);
    assert_eq!(sids(&e, &from([198, 18, 7, 7], [198, 19, 1, 1])), vec![40, 41]);
    assert_eq!(sids(&e, &from([198, 18, 7, 8], [198, 18, 0, 1])), Vec::<u32>::new());
    assert_eq!(sids(&e, &from([203, 0, 113, 1], [198, 18, 0, 1])), vec![42]);
    let v6 = PacketBuilder::ipv6(
        [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
        [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2],
    )
    .udp(1, 2)
    .payload(b"x")
    .build_ethernet();
    assert_eq!(sids(&e, &v6), vec![41, 42]);
}

fn sids_with_flow(e: &DetectEngine, frame: &[u8], flow: Option<vigil_detect::compile::FlowInfo>) -> Vec<u32> {
    let mut dec = Decoder::new(DecodeConfig { validate_checksums: false, ..DecodeConfig::default() });
    let p = dec.decode(frame, Timestamp::default(), LinkType::Ethernet, 1);
    let mut out = Vec::new();
    e.inspect(&p, flow, None, &mut DetectScratch::default(), &mut |s| out.push(s.sid));
    out
}

#[test]
fn flow_keyword_direction_and_state() {
    let rules = r#"
alert tcp any any -> any any (msg:"to server, established"; flow:established,to_server; sid:50;)
alert tcp any any -> any any (msg:"to client"; flow:to_client; sid:51;)
alert tcp any any -> any any (msg:"not established"; flow:not_established; sid:52;)
"#;
    let e = engine(rules, Algo::best());
    let f = PacketBuilder::ipv4(CLIENT, SERVER).tcp(1, 2).payload(b"x").build_ethernet();
    let fi = |to_server, established| Some(FlowInfo { to_server, established, ..FlowInfo::default() });
    assert_eq!(sids_with_flow(&e, &f, fi(true, true)), vec![50]);
    assert_eq!(sids_with_flow(&e, &f, fi(false, true)), vec![51]);
    assert_eq!(sids_with_flow(&e, &f, fi(true, false)), vec![52]);
    assert!(sids_with_flow(&e, &f, None).is_empty(), "no flow: flow keywords cannot match");
}

#[test]
fn app_layer_protocol_looks_at_the_direction_its_mode_names() {
    use vigil_types::{AppProto, PerDir};
    let rules = r#"
alert tcp any any -> any any (app-layer-protocol:ssh; sid:1;)
alert tcp any any -> any any (app-layer-protocol:ssh,final; sid:2;)
alert tcp any any -> any any (app-layer-protocol:unknown; sid:3;)
alert tcp any any -> any any (app-layer-protocol:!ssh; sid:4;)
alert tcp any any -> any any (app-layer-protocol:ssh,either; sid:5;)
alert tcp any any -> any any (app-layer-protocol:ssh,to_server; sid:6;)
alert tcp any any -> any any (app-layer-protocol:unknown,to_client; sid:7;)
alert tcp any any -> any any (app-layer-protocol:!tls; sid:8;)
"#;
    let e = engine(rules, Algo::best());
    let ssh = vigil_applayer::proto::find("ssh").unwrap().app_proto();
    let f = PacketBuilder::ipv4(SERVER, CLIENT).tcp(22, 40000).tcp_flags(ACK).build_ethernet();
    // The client's banner named the flow SSH; the server has sent nothing yet.
    let fi = FlowInfo {
        to_server: false,
        app_proto: ssh,
        dir_proto: PerDir {
            to_server: vigil_detect::compile::DirProto::of(None),
            to_client: vigil_detect::compile::DirProto::of(Some(AppProto::Unknown)),
        },
        ..FlowInfo::default()
    };
    let mut got = sids_with_flow(&e, &f, Some(fi));
    got.sort();
    // A negation never matches a direction not known yet (4, 8).
    assert_eq!(got, vec![2, 3, 5, 6, 7]);
    // Once the server spoke SSH too, the packet's own direction is SSH.
    let known = Some(FlowInfo { dir_proto: PerDir::default(), ..fi });
    let mut got = sids_with_flow(&e, &f, known);
    got.sort();
    assert_eq!(got, vec![1, 2, 5, 6, 8]);
}

#[test]
fn flow_age_compares_whole_seconds_since_the_first_packet() {
    let rules = r#"
alert tcp any any -> any any (flow.age:>=20; sid:53;)
alert tcp any any -> any any (flow.age:!19-22; sid:54;)
"#;
    let e = engine(rules, Algo::best());
    let f = PacketBuilder::ipv4(CLIENT, SERVER).tcp(1, 2).payload(b"x").build_ethernet();
    let fi = |age_secs| Some(FlowInfo { to_server: true, age_secs, ..FlowInfo::default() });
    assert_eq!(sids_with_flow(&e, &f, fi(0)), vec![54]);
    assert_eq!(sids_with_flow(&e, &f, fi(20)), vec![53]);
    assert_eq!(sids_with_flow(&e, &f, fi(22)), vec![53, 54]);
    assert!(sids_with_flow(&e, &f, None).is_empty(), "no flow: no age");
}

#[test]
fn checksum_keywords_and_decode_events() {
    let rules = r#"
alert ip any any -> any any (msg:"bad ipv4 checksum"; ipv4-csum:invalid; sid:60;)
alert tcp any any -> any any (msg:"good tcp checksum"; tcpv4-csum:valid; sid:61;)
alert pkthdr any any -> any any (msg:"truncated ipv4"; decode-event:ipv4.trunc_pkt; sid:62;)
"#;
    let e = engine(rules, Algo::best());
    let good = PacketBuilder::ipv4(CLIENT, SERVER).tcp(1, 2).payload(b"abc").build_ethernet();
    assert_eq!(sids_with_flow(&e, &good, None), vec![61]);
    let mut bad = good.clone();
    bad[14 + 10] ^= 0xff; // IPv4 header checksum
    assert_eq!(sids_with_flow(&e, &bad, None), vec![60, 61]);
    let mut cut = good.clone();
    cut.truncate(good.len() - 2);
    assert_eq!(sids_with_flow(&e, &cut, None), vec![62], "no IP layer decoded: only the pkthdr rule");
}

#[test]
fn dsize_inequalities_never_match_an_empty_payload() {
    let rules = r#"
alert tcp any any -> any any (msg:"not 9"; dsize:!9; sid:70;)
alert tcp any any -> any any (msg:"at least 0"; dsize:>=0; sid:71;)
alert tcp any any -> any any (msg:"under 10"; dsize:<10; sid:72;)
alert tcp any any -> any any (msg:"zero"; dsize:0; sid:73;)
"#;
    let e = engine(rules, Algo::best());
    let empty = PacketBuilder::ipv4(CLIENT, SERVER).tcp(1, 2).tcp_flags(ACK).build_ethernet();
    assert_eq!(sids(&e, &empty), vec![72, 73], "only < and = 0 hold without payload");
    let five = PacketBuilder::ipv4(CLIENT, SERVER).tcp(1, 2).payload(b"12345").build_ethernet();
    assert_eq!(sids(&e, &five), vec![70, 71, 72]);
}

#[test]
fn contents_of_an_absent_or_else_buffer_are_not_the_fast_pattern() {
    let set = Loader::new()
        .load_str(
            r#"alert http any any -> any any (http.uri; content:"/"; http.referer; absent: or_else; content:"example"; sid:1;)"#,
            "t.rules",
        )
        .unwrap();
    let sig = compile(&set.rules[0], &Classifications::default()).unwrap();
    let tx = sig.tx.as_ref().expect("a transaction signature");
    let fast = tx.fast.expect("a fast pattern buffer");
    assert_eq!(tx.buffers[fast].absent, None, "the fast pattern is in http.uri");
    let uri = vigil_applayer::BufferId::Proto(vigil_applayer::http::Buffer::Uri as u8);
    assert_eq!(tx.buffers[fast].id, uri);
}

#[test]
fn flags_and_dsize_make_packet_signatures() {
    // A SYN whose payload (TCP Fast Open) went into the stream: stream
    // signatures wait for the stream, but one with `flags` or `dsize` is a
    // packet signature in Suricata and looks at the packet itself.
    let e = engine(
        r#"
alert tcp any any -> any any (msg:"stream"; content:"GET"; sid:1;)
alert tcp any any -> any any (msg:"flags"; flags:S; content:"GET"; sid:2;)
alert tcp any any -> any any (msg:"dsize"; dsize:>2; content:"GET"; sid:3;)
"#,
        Algo::best(),
    );
    let syn = PacketBuilder::ipv4(CLIENT, SERVER).tcp(40000, 80).tcp_flags(SYN).payload(b"GET /").build_ethernet();
    let mut dec = Decoder::new(DecodeConfig::default());
    let p = dec.decode(&syn, Timestamp::default(), LinkType::Ethernet, 1);
    let flow = vigil_detect::compile::FlowInfo {
        to_server: true,
        established: false,
        tracked: true,
        app_proto: vigil_types::AppProto::Unknown,
        dir_proto: Default::default(),
        no_payload: false,
        stream_events: Default::default(),
        stream_size: Default::default(),
        age_secs: 0,
        ..Default::default()
    };
    let stream = vigil_detect::StreamInput { chunk: None, payload_in_stream: true, pseudo: false, fresh_from: 0 };
    let mut out = Vec::new();
    let mut scratch = DetectScratch::default();
    e.inspect_app(&p, Some(flow), None, stream, None, &mut scratch, &mut |s, _, _| out.push(s.sid));
    out.sort();
    assert_eq!(out, [2, 3]);
}

#[test]
fn alert_keyword_makes_a_pass_signature_alert_too() {
    let set = Loader::new()
        .load_str(
            "pass tcp any any -> any any (content:\"ok\"; alert; sid:1;)\npass tcp any any -> any any (sid:2;)\n",
            "t.rules",
        )
        .unwrap();
    let classes = Classifications::default();
    let sigs: Vec<_> = set.rules.iter().map(|r| compile(r, &classes).unwrap_or_else(|u| panic!("{u:?}"))).collect();
    assert_eq!((sigs[0].also_alert, sigs[1].also_alert), (true, false));
}

#[test]
fn stream_event_keyword_matches_the_packet_that_raised_it() {
    use vigil_stream::{StreamEvent, StreamEventSet};
    let rules = r#"
alert tcp any any -> any any (msg:"bad timestamp"; stream-event:pkt_invalid_timestamp; sid:70;)
alert tcp any any -> any any (msg:"depth"; stream-event:reassembly_depth_reached; sid:71;)
"#;
    let e = engine(rules, Algo::best());
    let f = PacketBuilder::ipv4(CLIENT, SERVER).tcp(1, 2).tcp_flags(ACK).build_ethernet();
    let mut raised = StreamEventSet::default();
    raised.insert(StreamEvent::PktInvalidTimestamp);
    let fi = |stream_events| Some(FlowInfo { tracked: true, stream_events, ..FlowInfo::default() });
    assert_eq!(sids_with_flow(&e, &f, fi(raised)), vec![70]);
    assert!(sids_with_flow(&e, &f, fi(StreamEventSet::default())).is_empty());
    assert!(sids_with_flow(&e, &f, None).is_empty(), "no flow, no stream events");

    // Names vigil does not raise as Suricata does stay unsupported.
    let set = Loader::new()
        .load_str("alert tcp any any -> any any (stream-event:rst_invalid_ack; sid:72;)\n", "t.rules")
        .unwrap();
    let unsupported = compile(&set.rules[0], &Classifications::default()).expect_err("unsupported");
    assert!(format!("{unsupported:?}").contains("stream-event:rst_invalid_ack"), "{unsupported:?}");
}

#[test]
fn protocol_detection_events_match_the_packet_that_raised_them() {
    let rules = r#"
alert ip any any -> any any (msg:"mismatch"; flow:established; app-layer-event:applayer_mismatch_protocol_both_directions; sid:90;)
alert ip any any -> any any (msg:"one way"; app-layer-event:APPLAYER_DETECT_PROTOCOL_ONLY_ONE_DIRECTION; sid:91;)
"#;
    let e = engine(rules, Algo::best());
    let f = PacketBuilder::ipv4(CLIENT, SERVER).tcp(1, 2).tcp_flags(ACK).build_ethernet();
    let bit = |name| vigil_detect::compile::detect_event_bit(name).unwrap();
    let fi = |detect_events| Some(FlowInfo { established: true, detect_events, ..FlowInfo::default() });
    assert_eq!(sids_with_flow(&e, &f, fi(bit("applayer_mismatch_protocol_both_directions"))), vec![90]);
    assert_eq!(sids_with_flow(&e, &f, fi(bit("applayer_detect_protocol_only_one_direction"))), vec![91]);
    assert!(sids_with_flow(&e, &f, fi(0)).is_empty(), "on the packet that raised it only");
    // The detection events vigil does not raise stay unsupported.
    let set = Loader::new()
        .load_str(
            "alert ip any any -> any any (app-layer-event:applayer_proto_detection_skipped; sid:82;)\n",
            "t.rules",
        )
        .unwrap();
    assert!(compile(&set.rules[0], &Classifications::default()).is_err());
}

#[test]
fn stream_size_compares_the_sides_of_the_session() {
    use vigil_types::PerDir;
    let rules = r#"
alert tcp any any -> any any (msg:"server"; stream_size:server,>,1111; sid:80;)
alert tcp any any -> any any (msg:"client"; stream_size:client,<=,10; sid:81;)
alert tcp any any -> any any (msg:"both"; stream_size:both,!=,5; sid:82;)
alert tcp any any -> any any (msg:"either"; stream_size:either,=,5; sid:83;)
"#;
    let e = engine(rules, Algo::best());
    let f = PacketBuilder::ipv4(CLIENT, SERVER).tcp(1, 2).tcp_flags(ACK).build_ethernet();
    let fi = |client, server| {
        Some(FlowInfo {
            tracked: true,
            stream_size: PerDir { to_server: client, to_client: server },
            ..FlowInfo::default()
        })
    };
    let mut got = sids_with_flow(&e, &f, fi(10, 1112));
    got.sort();
    assert_eq!(got, vec![80, 81, 82]);
    let mut got = sids_with_flow(&e, &f, fi(5, 1111));
    got.sort();
    assert_eq!(got, vec![81, 83]);
    // Without a tracked session (or a flow) nothing is compared.
    assert!(sids_with_flow(&e, &f, Some(FlowInfo { tracked: false, ..fi(10, 1112).unwrap() })).is_empty());
    assert!(sids_with_flow(&e, &f, None).is_empty());
    let udp = PacketBuilder::ipv4(CLIENT, SERVER).udp(1, 2).payload(b"x").build_ethernet();
    let any = "alert ip any any -> any any (stream_size:either,>=,0; sid:84;)";
    assert!(sids_with_flow(&engine(any, Algo::best()), &udp, fi(10, 10)).is_empty(), "TCP only");
}

#[test]
fn frame_rules_inspect_the_frames_of_their_type_on_their_side() {
    use vigil_applayer::{frames::STREAM, Frame};
    use vigil_detect::{AppInput, StreamInput};
    use vigil_types::Direction;
    let rules = r#"
alert mqtt any any -> any any (frame:pdu; content:"|10|"; startswith; sid:1;)
alert mqtt any any -> any any (flow:to_client; frame:mqtt.header; content:"|20|"; sid:2;)
alert tcp any any -> any any (frame:mqtt.data; content:"abc"; bsize:3; sid:3;)
alert udp any any -> any any (frame:mqtt.data; content:"abc"; sid:4;)
alert mqtt any any -> any any (frame:mqtt.stream; content:"xyz"; sid:5;)
"#;
    let e = engine(rules, Algo::best());
    assert_eq!(e.signatures().len(), 5, "every frame rule compiles");
    let frame = |ftype: u8, dir: Direction, data: &[u8]| Frame {
        proto: "mqtt",
        ftype,
        dir,
        id: 2,
        offset: Some(0),
        len: Some(data.len() as u64),
        complete: true,
        tx_id: None,
        tx_base: 0,
        data: data.to_vec(),
    };
    let frames = [
        frame(0, Direction::ToServer, b"\x10\x02ab"),
        frame(1, Direction::ToServer, b"\x20\x02"),
        frame(1, Direction::ToClient, b"\x20\x02"),
        frame(2, Direction::ToServer, b"abc"),
        frame(2, Direction::ToServer, b"abcd"),
        frame(STREAM, Direction::ToClient, b"..xyz"),
    ];
    let app = AppInput {
        txs: &[],
        client: (std::net::Ipv4Addr::from(CLIENT).into(), 40000),
        server: (std::net::Ipv4Addr::from(SERVER).into(), 1883),
        now_secs: 0,
        frames: &frames,
        frame_txs: &[],
    };
    let pkt = PacketBuilder::ipv4(CLIENT, SERVER).tcp(40000, 1883).tcp_flags(ACK).build_ethernet();
    let mut dec = Decoder::new(DecodeConfig { validate_checksums: false, ..DecodeConfig::default() });
    let p = dec.decode(&pkt, Timestamp::default(), LinkType::Ethernet, 1);
    let mqtt = vigil_applayer::proto::find("mqtt").unwrap().app_proto();
    let flow = FlowInfo { to_server: true, established: true, tracked: true, app_proto: mqtt, ..FlowInfo::default() };
    let stream = StreamInput::default();
    let mut out = Vec::new();
    e.inspect_phase(
        &p,
        Some(flow),
        None,
        stream,
        Some(&app),
        false,
        &mut DetectScratch::default(),
        &mut |s, _, f, _| out.push((s.sid, f)),
    );
    out.sort();
    // The header frame to the client only for sid 2; bsize holds the longer data frame back.
    assert_eq!(out, vec![(1, Some(0)), (2, Some(2)), (3, Some(3)), (5, Some(5))]);
    // A frame type the protocol does not have is refused, naming it.
    let bad =
        Loader::new().load_str("alert mqtt any any -> any any (frame:mqtt.body; content:\"a\"; sid:9;)", "t.rules");
    let err = compile::compile(&bad.unwrap().rules[0], &Classifications::default()).unwrap_err();
    assert!(err.keywords.iter().any(|k| k.contains("mqtt has no frame type body")), "{err:?}");
}

#[test]
fn app_layer_event_matches_the_transaction_that_raised_it() {
    use vigil_applayer::http::{HttpConfig, HttpParser, PROTO};
    use vigil_applayer::TxRef;

    use vigil_detect::{AppInput, StreamInput, TxInput};
    use vigil_types::{Direction, PerDir};
    let rules = r#"
alert http any any -> any any (msg:"double"; flow:established,to_server; app-layer-event:http.double_encoded_uri; sid:90;)
alert http any any -> any any (msg:"no host"; flow:established,to_server; app-layer-event:http.missing_host_header; sid:91;)
"#;
    let e = engine(rules, Algo::best());
    let mut parser = HttpParser::new(HttpConfig::default());
    parser.parse(Direction::ToServer, b"GET /%252e%252e/x HTTP/1.1\r\nHost: h\r\n\r\n");
    let tx = TxRef::new(&PROTO, &parser.txs()[0]);
    let to = PerDir { to_server: tx.progress(Direction::ToServer), to_client: tx.progress(Direction::ToClient) };
    let txs = [TxInput { tx, from: PerDir::default(), to, counted: false, updated: false }];
    let app = AppInput {
        txs: &txs,
        client: (std::net::Ipv4Addr::from(CLIENT).into(), 40000),
        server: (std::net::Ipv4Addr::from(SERVER).into(), 80),
        now_secs: 0,
        frames: &[],
        frame_txs: &[],
    };
    let frame = PacketBuilder::ipv4(CLIENT, SERVER).tcp(40000, 80).tcp_flags(ACK).build_ethernet();
    let mut dec = Decoder::new(DecodeConfig { validate_checksums: false, ..DecodeConfig::default() });
    let p = dec.decode(&frame, Timestamp::default(), LinkType::Ethernet, 1);
    let flow = FlowInfo {
        to_server: true,
        established: true,
        tracked: true,
        app_proto: PROTO.app_proto(),
        ..FlowInfo::default()
    };
    let stream = StreamInput { chunk: None, payload_in_stream: false, pseudo: false, fresh_from: 0 };
    let mut out = Vec::new();
    e.inspect_app(&p, Some(flow), None, stream, Some(&app), &mut DetectScratch::default(), &mut |s, tx, _| {
        out.push((s.sid, tx))
    });
    assert_eq!(out, vec![(90, Some(0))]);

    // An event vigil's parsers never raise makes the rule unsupported, not silent.
    let set = Loader::new()
        .load_str("alert http any any -> any any (app-layer-event:http.lzma_memlimit_reached; sid:92;)\n", "t.rules")
        .unwrap();
    let unsupported = compile(&set.rules[0], &Classifications::default()).expect_err("unsupported");
    assert!(format!("{unsupported:?}").contains("app-layer-event:http.lzma_memlimit_reached"), "{unsupported:?}");
}

#[test]
fn header_buffers_inspect_the_packets_own_headers() {
    let rules = r#"
alert tcp any any -> any any (msg:"tcp seq 0x12345678"; tcp.hdr; content:"|12 34 56 78|"; offset:4; depth:4; sid:20;)
alert ip any any -> any any (msg:"ipv4 ttl 7"; ipv4.hdr; content:"|07|"; offset:8; depth:1; sid:21;)
alert udp any any -> any any (msg:"udp dport 53 and payload"; udp.hdr; content:"|00 35|"; offset:2; depth:2; pkt_data; content:"abc"; sid:22;)
alert tcp any any -> any any (msg:"header sized"; tcp.hdr; bsize:20; content:"|00 50|"; offset:2; depth:2; sid:23;)
"#;
    for algo in [Algo::best(), Algo::AhoCorasick] {
        let e = engine(rules, algo);
        let tcp = PacketBuilder::ipv4(CLIENT, SERVER).tcp(40000, 80).tcp_seq_ack(0x1234_5678, 0).ttl(7).payload(b"x");
        assert_eq!(sids(&e, &tcp.build_ethernet()), vec![20, 21, 23], "{algo:?}");
        // The same bytes in the payload are not the header.
        let other = PacketBuilder::ipv4(CLIENT, SERVER).tcp(40000, 81).payload(&[0x12, 0x34, 0x56, 0x78, 7]);
        assert!(sids(&e, &other.build_ethernet()).is_empty(), "{algo:?}");
        let udp = |payload: &[u8]| PacketBuilder::ipv4(CLIENT, SERVER).udp(5000, 53).payload(payload).build_ethernet();
        assert_eq!(sids(&e, &udp(b"xabcx")), vec![22]);
        assert!(sids(&e, &udp(b"xyz")).is_empty(), "both buffers must match");
    }
}

#[test]
fn vlan_keywords_compare_the_packets_vlan_headers() {
    let rules = r#"
alert ip any any -> any any (msg:"outer 100"; vlan.id:100,0; sid:30;)
alert ip any any -> any any (msg:"any 200"; vlan.id:200; sid:31;)
alert ip any any -> any any (msg:"innermost 200"; vlan.id:200,-1; sid:32;)
alert ip any any -> any any (msg:"all above 50"; vlan.id:>50,all; sid:33;)
alert ip any any -> any any (msg:"two layers"; vlan.layers:2; sid:34;)
alert ip any any -> any any (msg:"no vlan"; vlan.layers:0; sid:35;)
"#;
    let e = engine(rules, Algo::best());
    use vigil_wire::build::vlan_tag;
    let plain = PacketBuilder::ipv4(CLIENT, SERVER).udp(1, 2).payload(b"x").build_ethernet();
    assert_eq!(sids(&e, &vlan_tag(&plain, 0x8100, &[100, 200])), vec![30, 31, 32, 33, 34]);
    assert!(sids(&e, &vlan_tag(&plain, 0x8100, &[40])).is_empty(), "one layer, 40: none of them");
    assert_eq!(sids(&e, &plain), vec![35], "without a VLAN, vlan.id matches nothing");
}

#[test]
fn traffic_flowbits_tag_the_flow() {
    let rules = r#"
alert tcp any any -> any any (content:"curl"; flowbits:set,traffic/id/curl; flowbits:set,traffic/label/cli; flowbits:set,other; sid:90;)
alert tcp any any -> any any (content:"none"; flowbits:set,traffic/kind/x; sid:91;)
"#;
    let e = engine(rules, Algo::best());
    let mut st = vigil_detect::FlowDetect::default();
    assert!(e.traffic(&st.bits).is_empty());
    assert_eq!(run_flow(&e, true, b"curl/8.0 none", &mut st, false), vec![90, 91]);
    let t = e.traffic(&st.bits);
    assert_eq!((t.ids, t.labels), (vec!["curl"], vec!["cli"]), "only traffic/id and traffic/label tag");
}

#[test]
fn rules_without_a_direction_on_two_sided_buffers_run_both_ways() {
    let count = |rule: &str| {
        let set = Loader::new().load_str(rule, "t.rules").unwrap();
        let sigs = vigil_detect::compile_all(&set.rules[0], &Classifications::default()).unwrap();
        sigs.iter().map(|s| s.tx.as_ref().map(|t| t.side)).collect::<Vec<_>>()
    };
    use vigil_types::Direction::{ToClient, ToServer};
    assert_eq!(
        count(r#"alert http any any -> any any (http.header; content:"a"; sid:1;)"#),
        [Some(ToServer), Some(ToClient)]
    );
    // A direction, a one-sided buffer, a two-way header or a value check: one signature.
    assert_eq!(count(r#"alert http any any -> any any (flow:to_server; http.header; content:"a"; sid:1;)"#).len(), 1);
    assert_eq!(count(r#"alert http any any -> any any (http.uri; content:"a"; sid:1;)"#).len(), 1);
    assert_eq!(count(r#"alert http any any <> any any (http.header; content:"a"; sid:1;)"#).len(), 1);
    assert_eq!(count(r#"alert dns any any -> any any (dns.queries.rrname; content:"a"; sid:1;)"#).len(), 2);
    assert_eq!(count(r#"alert tls any any -> any any (tls.version:1.2; sid:1;)"#).len(), 1);
    assert_eq!(count(r#"alert tcp any any -> any any (content:"a"; sid:1;)"#), [None]);
}

/// `alert http1` names HTTP/1 alone: its transaction signature runs on
/// HTTP/1 transactions only, not on the HTTP view of an HTTP/2 stream;
/// `alert http` covers both, as in Suricata.
#[test]
fn http1_rules_are_for_http1_alone() {
    let set = Loader::new()
        .load_str(
            "alert http1 any any -> any any (http.uri; content:\"/a\"; sid:1;)\n\
             alert http any any -> any any (http.uri; content:\"/a\"; sid:2;)\n\
             alert http2 any any -> any any (http.uri; content:\"/a\"; sid:3;)\n",
            "t.rules",
        )
        .unwrap();
    let exact: Vec<bool> =
        set.rules.iter().map(|r| compile(r, &Classifications::default()).unwrap().tx.unwrap().exact).collect();
    assert_eq!(exact, [true, false, false]);
}

/// Keywords of several protocols one rule's header carries (`alert doh2`:
/// HTTP and DNS; `alert smb`: SMB and DCE/RPC): the signature stays the
/// header's, and each buffer or check reads its own protocol's view. A
/// header that carries them not is still refused.
#[test]
fn keywords_of_the_protocols_a_header_carries_mix() {
    let compiled = |rule: &str| {
        let set = Loader::new().load_str(rule, "t.rules").unwrap();
        compile(&set.rules[0], &Classifications::default())
    };
    let sig =
        compiled(r#"alert doh2 any any -> any any (dns.opcode:0; http.host; content:"dns.google"; sid:1;)"#).unwrap();
    let tx = sig.tx.unwrap();
    assert!(tx.mixed);
    assert_eq!(tx.proto.name(), "doh2");
    assert_eq!(tx.buffers[0].via.map(|p| p.name()), Some("http"));
    let sig = compiled(r#"alert smb any any -> any any (smb.share; content:"IPC$"; dcerpc.opnum:15; sid:1;)"#).unwrap();
    let tx = sig.tx.unwrap();
    assert!(tx.mixed && tx.proto.name() == "smb" && tx.buffers[0].via.is_none());
    // One protocol: nothing to mix.
    let sig = compiled(r#"alert doh2 any any -> any any (dns.query; content:"a"; sid:1;)"#).unwrap();
    assert!(!sig.tx.unwrap().mixed);
    let refused = r#"alert http any any -> any any (http.uri; content:"a"; dns.query; content:"b"; sid:1;)"#;
    let set = Loader::new().load_str(refused, "t.rules").unwrap();
    assert!(set.rules.iter().all(|r| compile(r, &Classifications::default()).is_err()));
}

/// `frame` (Ethernet, IPv4 at 14) with `opts` appended to the IPv4 header
/// (padded to 4 bytes) and the flags/fragment-offset word set to `frag`.
fn ipv4_with(frame: &[u8], opts: &[u8], frag: u16) -> Vec<u8> {
    let mut opts = opts.to_vec();
    opts.resize(opts.len().div_ceil(4) * 4, 0);
    let mut out = frame[..34].to_vec();
    out.extend_from_slice(&opts);
    out.extend_from_slice(&frame[34..]);
    out[14] = 0x40 | (5 + opts.len() / 4) as u8;
    let total = u16::from_be_bytes([out[16], out[17]]) + opts.len() as u16;
    out[16..18].copy_from_slice(&total.to_be_bytes());
    out[20..22].copy_from_slice(&frag.to_be_bytes());
    out
}

#[test]
fn ip_header_keywords_read_options_fragment_bits_and_offset() {
    let rules = r#"
alert ip any any -> any any (msg:"router alert"; ipopts:rtralt; sid:1;)
alert ip any any -> any any (msg:"record route"; ipopts:RR; sid:2;)
alert ip any any -> any any (msg:"more fragments"; fragbits:M; sid:3;)
alert ip any any -> any any (msg:"DF and another"; fragbits:+D; sid:4;)
alert ip any any -> any any (msg:"not DF"; fragbits:!D; sid:5;)
alert ip any any -> any any (msg:"offset above 100"; fragoffset:>100; sid:6;)
alert ip any any -> any any (msg:"first fragment"; fragbits:M; fragoffset:0; sid:7;)
alert ip any any -> any any (msg:"any option"; ipopts:any; sid:8;)
"#;
    let e = engine(rules, Algo::best());
    let base = PacketBuilder::ipv4(CLIENT, SERVER).udp(1, 2).payload(b"data").build_ethernet();
    const DF: u16 = 0x4000;
    const MF: u16 = 0x2000;
    assert_eq!(sids(&e, &ipv4_with(&base, &[148, 4, 0, 0], DF)), vec![1, 8], "router alert, DF alone");
    assert_eq!(sids(&e, &ipv4_with(&base, &[7, 7, 4, 0, 0, 0, 0], DF | MF)), vec![2, 4, 8], "M alone is exact");
    assert_eq!(sids(&e, &ipv4_with(&base, &[], MF)), vec![3, 5, 7], "first fragment of several");
    assert_eq!(sids(&e, &ipv4_with(&base, &[], 185)), vec![5, 6], "a last fragment at 1480 bytes");
    let v6 = PacketBuilder::ipv6([0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], [0x20; 16])
        .udp(1, 2)
        .payload(b"x")
        .build_ethernet();
    assert!(sids(&e, &v6).is_empty(), "IPv4 header keywords never match IPv6");
}

#[test]
fn ip_header_keywords_refuse_what_suricata_refuses() {
    for bad in ["fragoffset:!5", "fragbits:m", "fragbits:X", "ipopts:lsrre", "ipopts:rr,ts", "l3_proto:ip"] {
        let set = Loader::new().load_str(&format!("alert ip any any -> any any ({bad}; sid:1;)\n"), "t.rules").unwrap();
        assert_eq!(set.errors.len(), 1, "{bad} is refused");
    }
    // Suricata reads the first run of bits and the leading number.
    for ok in ["fragbits:M,D", "fragoffset:0x10", "ipopts:LSRR", "l3_proto:IP6"] {
        let set = Loader::new().load_str(&format!("alert ip any any -> any any ({ok}; sid:1;)\n"), "t.rules").unwrap();
        assert!(set.errors.is_empty(), "{ok}: {:?}", set.errors);
    }
}

#[test]
fn tcp_window_scale_and_l3_proto() {
    let rules = r#"
alert tcp any any -> any any (msg:"wscale 7"; tcp.wscale:7; sid:1;)
alert tcp any any -> any any (msg:"wscale not 7"; tcp.wscale:!7; sid:2;)
alert tcp any any -> any any (msg:"ipv4 and syn"; l3_proto:ipv4; flags:S; sid:3;)
alert tcp any any -> any any (msg:"ipv6 and syn"; l3_proto:ipv6; flags:S; sid:4;)
"#;
    let e = engine(rules, Algo::best());
    let syn = PacketBuilder::ipv4(CLIENT, SERVER).tcp(1, 2).tcp_flags(SYN).build_ethernet();
    assert_eq!(sids(&e, &syn), vec![3], "without the option, no tcp.wscale matches");
    // Options after the 20-byte TCP header: NOP, window scale 7 (then a shift of 15, read as 0).
    for (shift, want) in [(7u8, vec![1, 3]), (15, vec![2, 3])] {
        let mut f = syn[..54].to_vec();
        f.extend_from_slice(&[1, 3, 3, shift]);
        f[46] = 6 << 4;
        let total = u16::from_be_bytes([f[16], f[17]]) + 4;
        f[16..18].copy_from_slice(&total.to_be_bytes());
        assert_eq!(sids(&e, &f), want, "shift {shift}");
    }
}

#[test]
fn flow_packet_and_byte_counts_include_the_packet() {
    let rules = r#"
alert tcp any any -> any any (flow.pkts:toserver,3; sid:1;)
alert tcp any any -> any any (flow.pkts_toclient:>=2; sid:2;)
alert tcp any any -> any any (flow.bytes:either,>1000; sid:3;)
alert tcp any any -> any any (flow.bytes_toserver:100-200; sid:4;)
"#;
    let e = engine(rules, Algo::best());
    let f = PacketBuilder::ipv4(CLIENT, SERVER).tcp(1, 2).payload(b"x").build_ethernet();
    let fi = |pkts: (u64, u64), bytes: (u64, u64)| {
        Some(FlowInfo {
            to_server: true,
            pkts: vigil_types::PerDir { to_server: pkts.0, to_client: pkts.1 },
            bytes: vigil_types::PerDir { to_server: bytes.0, to_client: bytes.1 },
            ..FlowInfo::default()
        })
    };
    assert_eq!(sids_with_flow(&e, &f, fi((3, 0), (150, 0))), vec![1, 4]);
    assert_eq!(sids_with_flow(&e, &f, fi((4, 2), (200, 2000))), vec![2, 3], "ranges exclude their ends");
    assert!(sids_with_flow(&e, &f, None).is_empty(), "no flow: no counts");
    let refused = Loader::new().load_str("alert tcp any any -> any any (flow.pkts:both,3; sid:1;)\n", "t").unwrap();
    assert_eq!(refused.errors.len(), 1, "both is not a direction Suricata 8 knows");
}

#[test]
fn entropy_compares_a_window_of_the_buffer() {
    let rules = r#"
alert tcp any any -> any any (msg:"high"; entropy:value >= 7.9; sid:1;)
alert tcp any any -> any any (msg:"low start"; entropy:bytes 16, value 0; sid:2;)
alert tcp any any -> any any (msg:"window past the end"; entropy:offset 300, value >= 0; sid:3;)
alert tcp any any -> any any (msg:"after the zeros"; entropy:offset 16, value 8; sid:4;)
"#;
    let e = engine(rules, Algo::best());
    let mut payload = vec![0u8; 16];
    payload.extend(0..=255u8);
    let f = PacketBuilder::ipv4(CLIENT, SERVER).tcp(1, 2).payload(&payload).build_ethernet();
    assert_eq!(sids(&e, &f), vec![2, 4]);
    let all: Vec<u8> = (0..=255).collect();
    let f = PacketBuilder::ipv4(CLIENT, SERVER).tcp(1, 2).payload(&all).build_ethernet();
    assert_eq!(sids(&e, &f), vec![1]);
}

#[test]
fn ip_proto_and_pcre_flags_refuse_what_suricata_refuses() {
    let loads = |opts: &str| {
        let set =
            Loader::new().load_str(&format!("alert http any any -> any any ({opts} sid:1;)\n"), "t.rules").unwrap();
        set.errors.is_empty()
    };
    for ok in ["ip_proto:tcp;", "ip_proto:TCP;", "ip_proto:!6;", "ip_proto:<17;", "http.request_body; pcre:\"/a/P\";"] {
        assert!(loads(ok), "{ok}");
    }
    // A name in neither case of the protocol database, a number past 255, a
    // buffer flag against another sticky buffer in force.
    for bad in ["ip_proto:TcP;", "ip_proto:295;", "ip_proto:\"not-a-protocol\";", "http.header; pcre:\"/a/P\";"] {
        assert!(!loads(bad), "{bad}");
    }
    assert!(loads("file.data; pcre:\"/a/Q\";"), "the response body is file.data's list");
}

#[test]
fn packet_alert_max_keeps_the_signatures_evaluated_first() {
    let rules = "alert tcp any any -> any any (content:\"a\"; sid:1;)\nalert tcp any any -> any any (content:\"b\"; sid:2;)\nalert tcp any any -> any any (content:\"c\"; sid:3;)\n";
    let f = PacketBuilder::ipv4(CLIENT, SERVER).tcp(1, 2).payload(b"abc").build_ethernet();
    assert_eq!(sids(&engine(rules, Algo::best()), &f).len(), 3);
    let e = engine(rules, Algo::best()).with_alert_max(2);
    let mut dec = Decoder::new(DecodeConfig::default());
    let p = dec.decode(&f, Timestamp::default(), LinkType::Ethernet, 1);
    let mut scratch = DetectScratch::default();
    let mut out = Vec::new();
    e.inspect(&p, None, None, &mut scratch, &mut |s| out.push(s.sid));
    assert_eq!(out.len(), 2, "{out:?}");
    assert_eq!(scratch.alerts_over_limit, 1, "the third is counted (detect.alert_queue_overflow)");
}

#[test]
fn rpc_icmpv6_mtu_and_engine_event() {
    let rules = r#"
alert udp any any -> any any (msg:"nfs v3 getattr"; rpc:100003,3,1; sid:1;)
alert udp any any -> any any (msg:"nfs any"; rpc:100003,*,*; sid:2;)
alert udp any any -> any any (msg:"portmap"; rpc:100000; sid:3;)
alert icmp any any -> any any (msg:"too big, small mtu"; icmpv6.mtu:<1280; sid:4;)
alert pkthdr any any -> any any (msg:"truncated"; engine-event:decoder.ipv4.trunc_pkt; sid:5;)
"#;
    let e = engine(rules, Algo::best());
    // xid, CALL, RPC version 2, program, version, procedure, then credentials.
    let call = |prog: u32, vers: u32, proc_: u32, kind: u32| {
        [1u32, kind, 2, prog, vers, proc_, 0, 0].iter().flat_map(|w| w.to_be_bytes()).collect::<Vec<u8>>()
    };
    let udp = |p: &[u8]| PacketBuilder::ipv4(CLIENT, SERVER).udp(800, 2049).payload(p).build_ethernet();
    assert_eq!(sids(&e, &udp(&call(100003, 3, 1, 0))), vec![1, 2]);
    assert_eq!(sids(&e, &udp(&call(100003, 4, 1, 0))), vec![2]);
    assert!(sids(&e, &udp(&call(100003, 3, 1, 1))).is_empty(), "a reply is no call");
    assert!(sids(&e, &udp(&call(100003, 3, 1, 0)[..20])).is_empty(), "too short");
    let v6 = |a: u8| {
        let mut x = [0u8; 16];
        x[0] = 0x20;
        x[1] = 0x01;
        x[2] = 0x0d;
        x[3] = 0xb8;
        x[15] = a;
        x
    };
    let ptb = |code: u8| PacketBuilder::ipv6(v6(1), v6(2)).icmp_error(2, code).payload(&[0u8; 40]).build_ethernet();
    // The builder's second word is zero: an MTU of 0, below 1280.
    assert_eq!(sids(&e, &ptb(0)), vec![4]);
    assert!(sids(&e, &ptb(1)).is_empty(), "only code 0 carries an MTU");
    let good = PacketBuilder::ipv4(CLIENT, SERVER).udp(1, 2).payload(b"abc").build_ethernet();
    let mut cut = good.clone();
    cut.truncate(good.len() - 2);
    assert_eq!(sids(&e, &cut), vec![5]);
}

#[test]
fn pktvar_sees_what_an_earlier_signature_captured_from_the_packet() {
    let rules = r#"
alert tcp any any -> any any (msg:"capture"; content:"user="; pcre:"/user=(?P<pkt_user>\w+)/"; sid:1;)
alert tcp any any -> any any (msg:"admin"; pktvar:user,"admin"; sid:2;)
alert tcp any any -> any any (msg:"bob"; pktvar:user,"bob"; sid:3;)
"#;
    let e = engine(rules, Algo::best());
    let f = PacketBuilder::ipv4(CLIENT, SERVER).tcp(1, 2).payload(b"user=admin;").build_ethernet();
    assert_eq!(sids(&e, &f), vec![1, 2]);
}

#[test]
fn obsolete_or_impossible_keywords_are_refused() {
    for bad in [
        "alert ssh any any -> any any (ssh.protoversion:2.0; sid:1;)",
        "alert ssh any any -> any any (ssh.softwareversion:OpenSSH; sid:1;)",
        "alert tls any any -> any any (tls.cert_fingerprint; content:\"aa:bb\"; sid:1;)",
    ] {
        let set = Loader::new().load_str(&format!("{bad}\n"), "t.rules").unwrap();
        assert_eq!(set.errors.len(), 1, "{bad}");
    }
    let whole = "alert tls any any -> any any (tls.cert_fingerprint; content:\"3a:0b:3b:23:15:2c:44:5c:27:ac:6a:0c:41:d6:fa:74:af:b4:09:5b\"; sid:1;)\n";
    assert!(Loader::new().load_str(whole, "t.rules").unwrap().errors.is_empty());
}

#[test]
fn an_alert_carries_every_packet_variable_of_its_packet() {
    let rules = r#"
alert tcp any any -> any any (content:"a="; pcre:"/a=(?P<pkt_a>\w+)/"; sid:1;)
alert tcp any any -> any any (content:"b="; pcre:"/b=(?P<pkt_b>\w*)\./"; sid:2;)
"#;
    let e = engine(rules, Algo::best());
    let f = PacketBuilder::ipv4(CLIENT, SERVER).tcp(1, 2).payload(b"a=x b=.").build_ethernet();
    let mut dec = Decoder::new(DecodeConfig::default());
    let p = dec.decode(&f, Timestamp::default(), LinkType::Ethernet, 1);
    let mut scratch = DetectScratch::default();
    e.inspect(&p, None, None, &mut scratch, &mut |_| {});
    for sig in e.signatures() {
        let vars: Vec<(String, Vec<u8>)> =
            e.captured_by(&scratch, sig).iter().map(|(_, n, v)| (n.to_string(), v.clone())).collect();
        assert_eq!(vars, [("a".to_string(), b"x".to_vec()), ("b".to_string(), Vec::new())], "sid {}", sig.sid);
    }
}
