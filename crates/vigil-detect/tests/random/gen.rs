//! Random rules and packets drawn from a byte string: the `detect` fuzz
//! target feeds it libFuzzer's input, the bounded test in `random_rules.rs`
//! a seeded generator. Rules are mostly well formed (options from the
//! keywords detection runs, with random values) with some raw text mixed in,
//! so both the compiler's error paths and the inspection code are reached.

#![allow(dead_code)]

use vigil_wire::build::PacketBuilder;

/// Reads numbers and bytes off the input; past its end, zeros.
pub struct Draw<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Draw<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Draw { data, at: 0 }
    }

    pub fn done(&self) -> bool {
        self.at >= self.data.len()
    }

    pub fn byte(&mut self) -> u8 {
        let b = self.data.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        let v = u16::from_le_bytes([self.byte(), self.byte()]) as usize;
        v % n.max(1)
    }

    pub fn bytes(&mut self, max: usize) -> Vec<u8> {
        let n = self.below(max + 1);
        (0..n).map(|_| self.byte()).collect()
    }
}

/// Bytes as a content string: printable ones plain, the rest in `|hex|`.
fn content_text(bytes: &[u8]) -> String {
    let mut s = String::new();
    for &b in bytes {
        if b.is_ascii_alphanumeric() {
            s.push(b as char);
        } else {
            s.push_str(&format!("|{b:02x}|"));
        }
    }
    s
}

const PCRES: &[&str] =
    &["/a+b/", "/^GET\\s/i", "/(a|b)*c/sm", "/x{2,5}/R", "/[^\\x00]{3}$/", "/(?:a+)+$/", "/\\d+/B", "/evil/Ui"];

const BUFFERS: &[&str] = &[
    "http.uri",
    "http.method",
    "http.header",
    "http.host",
    "file.data",
    "dns.query",
    "tls.sni",
    "tcp.hdr",
    "ipv4.hdr",
    "udp.hdr",
    "pkt_data",
];

const OPS: &[&str] = &["<", ">", "=", "!=", "<=", ">=", "&", "^"];

/// One rule option, its trailing `;` included.
fn option(d: &mut Draw<'_>) -> String {
    let n = |d: &mut Draw<'_>| d.below(64);
    match d.below(24) {
        0..=5 => {
            let neg = if d.below(8) == 0 { "!" } else { "" };
            let mut s =
                format!("content:{neg}\"{}\";", content_text(&d.bytes(6).iter().map(|&b| b | 1).collect::<Vec<_>>()));
            for _ in 0..d.below(3) {
                s.push_str(match d.below(9) {
                    0 => " nocase;",
                    1 => " startswith;",
                    2 => " endswith;",
                    3 => " fast_pattern;",
                    _ => "",
                });
                match d.below(5) {
                    0 => s.push_str(&format!(" offset:{};", n(d))),
                    1 => s.push_str(&format!(" depth:{};", 1 + n(d))),
                    2 => s.push_str(&format!(" distance:{};", n(d) as i64 - 8)),
                    3 => s.push_str(&format!(" within:{};", 1 + n(d))),
                    _ => {}
                }
            }
            s
        }
        6 => format!("pcre:\"{}\";", PCRES[d.below(PCRES.len())]),
        7 => format!("isdataat:{}{};", n(d), if d.below(2) == 0 { ",relative" } else { "" }),
        8 => format!(
            "byte_test:{},{},{},{}{};",
            1 + d.below(4),
            OPS[d.below(OPS.len())],
            n(d),
            n(d),
            if d.below(2) == 0 { ",relative" } else { "" }
        ),
        9 => format!("byte_jump:{},{}{};", 1 + d.below(4), n(d), if d.below(2) == 0 { ",relative" } else { "" }),
        10 => format!("byte_extract:1,{},v{}; content:\"a\"; offset:v{};", n(d), d.below(2), d.below(2)),
        11 => format!("dsize:{}{};", ["", "<", ">", "!"][d.below(4)], n(d)),
        12 => format!("flags:{};", ["S", "SA", "A+", "FPU", "0", "*AP"][d.below(6)]),
        13 => format!("flow:{};", ["established", "to_server", "to_client,stateless", "not_established"][d.below(4)]),
        14 => format!("{};", BUFFERS[d.below(BUFFERS.len())]),
        15 => format!("ttl:{}{};", ["", "<", ">"][d.below(3)], n(d)),
        16 => format!("bsize:{};", n(d)),
        17 => format!("flowbits:{},f{};", ["set", "isset", "isnotset", "unset", "toggle"][d.below(5)], d.below(3)),
        18 => format!("tag:{};", ["session", "host,3,packets,src", "session,10,bytes"][d.below(3)]),
        19 => format!(
            "asn1:{}{};",
            ["bitstring_overflow", "double_overflow", "oversize_length 3"][d.below(3)],
            [", relative_offset 1", ", absolute_offset 2", ""][d.below(3)]
        ),
        20 => format!(
            "entropy:{}value {}{};",
            ["", "offset 4, ", "bytes 8, "][d.below(3)],
            ["<", ">"][d.below(2)],
            d.below(9)
        ),
        21 => format!(
            "{};",
            ["fragbits:*MD", "ipopts:any", "tcp.wscale:>2", "flow.pkts:either,>1", "rpc:100003,*,*", "fragoffset:>0"]
                [d.below(6)]
        ),
        22 => format!("http.uri; {} content:\"a\";", ["gunzip;", "zlib_deflate:max-size 64;"][d.below(2)]),
        // Raw text: whatever the parser makes of it.
        _ => format!("{};", String::from_utf8_lossy(&d.bytes(12)).replace(['(', ')', ';'], " ")),
    }
}

/// A rule with a few random options and sid `sid`.
pub fn rule(d: &mut Draw<'_>, sid: u32) -> String {
    let proto = ["tcp", "udp", "ip", "icmp", "http", "tcp-pkt"][d.below(6)];
    let mut opts = String::new();
    for _ in 0..1 + d.below(5) {
        opts.push_str(&option(d));
        opts.push(' ');
    }
    format!("alert {proto} any any -> any any ({opts}sid:{sid};)")
}

/// A random TCP, UDP or ICMP frame (Ethernet) with a random payload.
pub fn frame(d: &mut Draw<'_>) -> Vec<u8> {
    let payload = d.bytes(80);
    let b = PacketBuilder::ipv4([198, 18, 0, 1 + d.below(3) as u8], [198, 18, 1, 1]).ttl(d.byte());
    let b = match d.below(3) {
        0 => b.tcp(1024 + d.below(4) as u16, 80).tcp_flags(d.byte()).tcp_seq_ack(d.below(9999) as u32, 0),
        1 => b.udp(5353, 53),
        _ => b.icmp(d.below(20) as u8, 0),
    };
    b.payload(&payload).build_ethernet()
}
