//! Per-protocol decode counters agree with tshark on conformance captures
//! that cover IPv6 extension headers, fragments, GRE, ERSPAN, VLAN, VXLAN,
//! PPPoE, SLL, SLL2 and null links.
//!
//! Both sides count layers: a GRE-tunnelled TCP segment counts two IPv4
//! headers. Two deliberate differences are accounted for here: vigil does
//! not decode the transport header of an IP fragment (reassembly comes
//! first, as in Suricata), and neither side counts the datagram quoted in
//! an ICMP error.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use vigil_capture::{PcapFile, Source};
use vigil_decode::{Counter, DecodeConfig, Decoder};

const CAPTURES: &[&str] = &[
    "ipv6-evasion/ipv6-malformed-fragments-23/frag-23.pcap",
    "ipv6-evasion/ipv6-dos-with-ext-headers-5/denial6-5.pcap",
    "defrag/bug-6887-defrag-ipv6-tcp/frag-ip-tcp.pcap",
    "defrag/bug-6887-defrag-ipv4-tcp-syn/frag-ip-tcp-syn.pcap",
    "defrag/bug-6887-defrag-eth-vlan-ipv4-tcp-syn/frag-eth-vlan-ip-tcp-syn.pcap",
    "bug-5633-gre-01/gre-udp.pcap",
    "bug-2576-01/temp6.pcap",
    "bug-5437-02/input.pcap",
    "decode-erspan-typeI-02/input.pcap",
    "eve-flow-vlan-02/input.pcap",
    "vxlan-decoder-02/vxlan.pcap",
    "tcp-fastopen-05/tfo.pcap",
    "decode-sll2-01/input.pcap",
    "bug-7552/bug-7552-01/input.pcap",
    "flow-pkt-recursion/tunnel-pkt-flows.pcap",
    "bug-4810/pppoe-session-http.pcap",
    "decode-sctp-01/input.pcap",
];

fn suite() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/suricata-verify/tests")
}

/// tshark's protocol names mapped to vigil's counters.
fn counter_for(tshark_proto: &str) -> Option<&'static str> {
    Some(match tshark_proto {
        "eth" => "ethernet",
        "vlan" => "vlan",
        "ip" => "ipv4",
        "ipv6" => "ipv6",
        "tcp" => "tcp",
        "udp" => "udp",
        "icmp" => "icmpv4",
        "icmpv6" => "icmpv6",
        "sctp" => "sctp",
        "gre" => "gre",
        "erspan" => "erspan",
        "vxlan" => "vxlan",
        "sll" => "sll",
        "null" => "null",
        "pppoes" => "pppoe",
        _ => return None,
    })
}

const UPPER: &[&str] = &["tcp", "udp", "icmp", "icmpv6", "sctp"];

fn tshark_counts(pcap: &Path) -> BTreeMap<&'static str, u64> {
    let out = Command::new("tshark")
        .args(["-n", "-o", "ip.defragment:FALSE", "-o", "ipv6.defragment:FALSE", "-T", "fields"])
        .args(["-e", "frame.protocols", "-e", "ip.flags.mf", "-e", "ip.frag_offset"])
        .args(["-e", "ipv6.fraghdr.more", "-e", "ipv6.fraghdr.offset", "-r"])
        .arg(pcap)
        .output()
        .expect("run tshark");
    assert!(out.status.success(), "tshark failed on {}", pcap.display());
    let mut counts = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let cols: Vec<&str> = line.split('\t').collect();
        // Only the outermost datagram's fragment fields count: an ICMP error may quote a fragment.
        let first = |i: usize| cols.get(i).and_then(|v| v.split(',').next()).unwrap_or("");
        let set = |v: &str| v == "1" || v == "True";
        let nonzero = |v: &str| !v.is_empty() && v != "0";
        let before_icmp: Vec<&str> = cols[0].split(':').take_while(|p| *p != "icmp" && *p != "icmpv6").collect();
        let v6_frag = before_icmp.contains(&"ipv6.fraghdr") && (set(first(3)) || nonzero(first(4)));
        let fragment = set(first(1)) || nonzero(first(2)) || v6_frag;
        for proto in cols[0].split(':') {
            if fragment && UPPER.contains(&proto) {
                break;
            }
            if let Some(c) = counter_for(proto) {
                *counts.entry(c).or_insert(0) += 1;
            }
            if proto == "icmp" || proto == "icmpv6" {
                break;
            }
        }
    }
    counts
}

fn vigil_counts(pcap: &Path) -> BTreeMap<&'static str, u64> {
    let mut dec = Decoder::new(DecodeConfig { validate_checksums: false, ..DecodeConfig::default() });
    let mut src = PcapFile::open(pcap).expect("open capture");
    let mut n = 0;
    while let Some(Ok(raw)) = src.next_packet() {
        n += 1;
        dec.decode(raw.data, raw.ts, raw.linktype, n);
    }
    let c = &dec.counters;
    let mut m = BTreeMap::new();
    for (name, v) in [
        ("ethernet", c.get(Counter::Ethernet)),
        ("vlan", c.get(Counter::Vlan) + c.get(Counter::VlanQinq) + c.get(Counter::VlanQinqinq)),
        ("ipv4", c.get(Counter::Ipv4)),
        ("ipv6", c.get(Counter::Ipv6)),
        ("tcp", c.get(Counter::Tcp)),
        ("udp", c.get(Counter::Udp)),
        ("icmpv4", c.get(Counter::Icmpv4)),
        ("icmpv6", c.get(Counter::Icmpv6)),
        ("sctp", c.get(Counter::Sctp)),
        ("gre", c.get(Counter::Gre)),
        ("erspan", c.get(Counter::Erspan)),
        ("vxlan", c.get(Counter::Vxlan)),
        ("sll", c.get(Counter::Sll) + c.get(Counter::Sll2)),
        ("null", c.get(Counter::Null)),
        ("pppoe", c.get(Counter::Pppoe)),
    ] {
        if v > 0 {
            m.insert(name, v);
        }
    }
    m
}

#[test]
fn decode_counters_agree_with_tshark() {
    if Command::new("tshark").arg("--version").output().is_err() {
        assert!(std::env::var_os("CI").is_none(), "tshark is required in CI (.ci/run installs it)");
        eprintln!("SKIPPED: tshark is not installed (apt-get install tshark)");
        return;
    }
    let root = suite();
    assert!(root.is_dir(), "conformance suite not found at {}", root.display());
    let mut failures = Vec::new();
    for rel in CAPTURES {
        let pcap = root.join(rel);
        let (theirs, ours) = (tshark_counts(&pcap), vigil_counts(&pcap));
        if theirs != ours {
            failures.push(format!("{rel}:\n  tshark {theirs:?}\n  vigil  {ours:?}"));
        }
    }
    assert!(failures.is_empty(), "counters differ:\n{}", failures.join("\n"));
}
