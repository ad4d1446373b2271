//! `vigil demo`: builds a small capture with vigil's own packet builders
//! (benchmarking addresses only: 198.18.0.0/15 and 2001:db8::/32), writes it
//! as `demo.pcap` with a small ruleset `demo.rules` that matches parts of it,
//! and processes both with decode anomalies logged, so a first run needs no
//! capture, no rules and no network.

use crate::cli::DemoArgs;
use std::process::ExitCode;
use vigil_capture::PcapWriter;
use vigil_types::{LinkType, Timestamp};
use vigil_wire::build::{self, PacketBuilder};
use vigil_wire::tcp::flags::{ACK, FIN, PSH, SYN};
use vigil_wire::{ethertype, ip_proto};

const CLIENT: [u8; 4] = [198, 18, 0, 10];
const SERVER: [u8; 4] = [198, 18, 1, 20];
const CLIENT6: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10];
const SERVER6: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x20];

pub fn run(args: &DemoArgs) -> ExitCode {
    if let Err(e) = std::fs::create_dir_all(&args.log_dir) {
        eprintln!("vigil: {}: {e}", args.log_dir.display());
        return ExitCode::FAILURE;
    }
    let pcap = args.log_dir.join("demo.pcap");
    if let Err(e) = write_demo(&pcap) {
        eprintln!("vigil: {}: {e}", pcap.display());
        return ExitCode::FAILURE;
    }
    let rules = args.log_dir.join("demo.rules");
    let classes = args.log_dir.join("demo-classification.config");
    for (path, text) in [(&rules, DEMO_RULES), (&classes, DEMO_CLASSES)] {
        if let Err(e) = std::fs::write(path, text) {
            eprintln!("vigil: {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    }
    let opts = vigil_engine::RunOptions {
        inputs: vec![pcap.clone()],
        exclusive_rules: vec![rules.clone()],
        log_dir: Some(args.log_dir.clone()),
        // Decode anomalies are off in Suricata's defaults; the demo shows them.
        sets: vec![
            format!("classification-file={}", classes.display()),
            "outputs.1.eve-log.types.2.anomaly.types.decode=yes".into(),
            "outputs.1.eve-log.types.2.anomaly.packethdr=yes".into(),
        ],
        ..Default::default()
    };
    let code = crate::run_options(&opts, args.quiet);
    if !args.quiet {
        eprintln!("  capture        {}", pcap.display());
        eprintln!("  rules          {}", rules.display());
        eprintln!("  eve            {}", args.log_dir.join("eve.json").display());
    }
    code
}

/// Rules that fire on the demo traffic: a web request (after the TCP
/// handshake), a DNS query, a ping, a payload inside a tunnel, and a
/// truncated packet.
const DEMO_RULES: &str = r#"alert tcp any any -> any 80 (msg:"VIGIL DEMO web request for index.html"; flow:established,to_server; content:"GET"; depth:3; content:"/index.html"; distance:0; classtype:policy-violation; sid:9000001; rev:1;)
alert udp any any -> any 53 (msg:"VIGIL DEMO DNS query for demo.example"; content:"|04|demo|07|example|00|"; nocase; classtype:policy-violation; sid:9000002; rev:1;)
alert icmp any any -> any any (msg:"VIGIL DEMO ICMP echo request"; itype:8; icode:0; classtype:misc-activity; sid:9000003; rev:1;)
alert tcp any any -> any any (msg:"VIGIL DEMO payload inside a tunnel"; content:"inside"; classtype:misc-activity; sid:9000004; rev:1;)
alert pkthdr any any -> any any (msg:"VIGIL DEMO truncated IPv4 packet"; decode-event:ipv4.trunc_pkt; classtype:protocol-command-decode; sid:9000005; rev:1;)
"#;

/// The demo's classtypes (the same names as Suricata's; vigil's own wording).
const DEMO_CLASSES: &str = "\
config classification: policy-violation,Traffic a site policy forbids (vigil demo),1
config classification: misc-activity,Other notable activity (vigil demo),3
config classification: protocol-command-decode,Malformed or unusual protocol use (vigil demo),3
";

fn write_demo(path: &std::path::Path) -> std::io::Result<()> {
    let file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut w = PcapWriter::new(file, LinkType::Ethernet)?;
    for (i, frame) in demo_frames().iter().enumerate() {
        w.write_packet(Timestamp::from_micros(1_763_712_000 + i as i64, 125 * i as u32), frame)?;
    }
    w.into_inner().into_inner().map_err(|e| e.into_error()).map(|_| ())
}

/// The demo's frames: ordinary traffic, tunnels, and a few malformed packets.
pub fn demo_frames() -> Vec<Vec<u8>> {
    let mut f = Vec::new();
    let tcp = |flags, seq, ack, payload: &[u8]| {
        PacketBuilder::ipv4(CLIENT, SERVER).tcp(40000, 80).tcp_flags(flags).tcp_seq_ack(seq, ack).payload(payload)
    };
    let reply = |flags, seq, ack, payload: &[u8]| {
        PacketBuilder::ipv4(SERVER, CLIENT).tcp(80, 40000).tcp_flags(flags).tcp_seq_ack(seq, ack).payload(payload)
    };
    // An HTTP exchange with its handshake and close.
    let get = b"GET /index.html HTTP/1.1\r\nHost: demo.example\r\nUser-Agent: vigil-demo\r\n\r\n";
    let resp = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
    f.push(tcp(SYN, 1000, 0, b"").build_ethernet());
    f.push(reply(SYN | ACK, 5000, 1001, b"").build_ethernet());
    f.push(tcp(ACK, 1001, 5001, b"").build_ethernet());
    f.push(tcp(PSH | ACK, 1001, 5001, get).build_ethernet());
    f.push(reply(PSH | ACK, 5001, 1001 + get.len() as u32, resp).build_ethernet());
    f.push(tcp(FIN | ACK, 1001 + get.len() as u32, 5001 + resp.len() as u32, b"").build_ethernet());
    // A DNS query and its answer.
    let query = [
        0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 4, b'd', b'e', b'm', b'o', 7, b'e', b'x', b'a', b'm', b'p',
        b'l', b'e', 0, 0, 1, 0, 1,
    ];
    f.push(PacketBuilder::ipv4(CLIENT, SERVER).udp(53000, 53).payload(&query).build_ethernet());
    let mut answer = query.to_vec();
    answer[2] = 0x81;
    answer[3] = 0x80;
    answer[7] = 1;
    answer.extend_from_slice(&[0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0x0e, 0x10, 0, 4, 198, 18, 1, 20]);
    f.push(PacketBuilder::ipv4(SERVER, CLIENT).udp(53, 53000).payload(&answer).build_ethernet());
    // Ping and pong.
    f.push(PacketBuilder::ipv4(CLIENT, SERVER).icmp(8, 0).payload(b"vigil-demo").build_ethernet());
    f.push(PacketBuilder::ipv4(SERVER, CLIENT).icmp(0, 0).payload(b"vigil-demo").build_ethernet());
    // IPv6: a SYN, and an ICMPv6 echo.
    f.push(PacketBuilder::ipv6(CLIENT6, SERVER6).tcp(40001, 443).tcp_flags(SYN).build_ethernet());
    f.push(PacketBuilder::ipv6(CLIENT6, SERVER6).icmp(128, 0).payload(b"demo6").build_ethernet());
    // 802.1Q and QinQ tagged UDP.
    let udp = PacketBuilder::ipv4(CLIENT, SERVER).udp(5000, 5001).payload(b"tagged").build_ethernet();
    f.push(build::vlan_tag(&udp, ethertype::VLAN, &[100]));
    f.push(build::vlan_tag(&udp, ethertype::QINQ, &[200, 100]));
    // Tunnels: GRE around IPv4, VXLAN and ERSPAN II around Ethernet.
    let inner = tcp(PSH | ACK, 2000, 6000, b"inside a tunnel").build_ip();
    let gre = build::gre(ethertype::IPV4, Some(7), None, &inner);
    f.push(
        PacketBuilder::ipv4([198, 19, 0, 1], [198, 19, 0, 2]).protocol(ip_proto::GRE).payload(&gre).build_ethernet(),
    );
    let inner_frame = tcp(PSH | ACK, 3000, 7000, b"inside vxlan").build_ethernet();
    let vx = build::vxlan(42, &inner_frame);
    f.push(PacketBuilder::ipv4([198, 19, 0, 1], [198, 19, 0, 2]).udp(49152, 4789).payload(&vx).build_ethernet());
    let mirrored = build::erspan2(9, 0, 1, &inner_frame);
    f.push(
        PacketBuilder::ipv4([198, 19, 0, 3], [198, 19, 0, 4])
            .protocol(ip_proto::GRE)
            .payload(&mirrored)
            .build_ethernet(),
    );
    // Malformed: an IPv4 packet cut short, an unknown ICMP type, a TCP option running past its header.
    let mut cut = tcp(PSH | ACK, 4000, 8000, b"this packet was truncated").build_ethernet();
    cut.truncate(cut.len() - 10);
    f.push(cut);
    f.push(PacketBuilder::ipv4(CLIENT, SERVER).icmp(42, 0).payload(b"?").build_ethernet());
    let mut bad_opt = tcp(SYN, 9000, 0, b"").build_ip();
    bad_opt[20 + 12] = 6 << 4; // data offset 24: four option bytes
    bad_opt.extend_from_slice(&[2, 9, 0, 0]); // MSS claiming 9 bytes
    let total = bad_opt.len() as u16;
    bad_opt[2..4].copy_from_slice(&total.to_be_bytes());
    f.push(build::ethernet(build::TEST_DST_MAC, build::TEST_SRC_MAC, ethertype::IPV4, &bad_opt));
    f
}
