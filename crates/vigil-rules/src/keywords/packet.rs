//! Packet header keywords: IP, TCP, ICMP, VLAN fields and checksums.

use super::{kw, p_int_or_name, p_int_with, p_none, p_text, p_u16, p_u32, p_u8, KeywordDef, Kind};
use crate::error::{verr, VResult};
use crate::intcmp::IntCmp;
use crate::lexer::trim;
use crate::options::Value;
use std::fmt;

pub(crate) const ROWS: &[KeywordDef] = &[
    kw!("ttl", Kind::Packet, Required, p_u8, "IP time to live"),
    kw!("tos", Kind::Packet, Required, p_tos, "IP type of service (x prefix for hex)"),
    kw!("id", Kind::Packet, Required, p_u16, "IPv4 identification"),
    kw!("ipopts", Kind::Packet, Required, p_ipopts, "IPv4 option present: rr, eol, nop, ts, sec, ..."),
    kw!("fragbits", Kind::Packet, Required, p_fragbits, "IPv4 fragment bits M, D, R with + * ! modifiers"),
    kw!("fragoffset", Kind::Packet, Required, p_fragoffset, "fragment offset field (8-byte units): [<|>]n"),
    kw!("sameip", Kind::Packet, None, p_none, "source and destination address are equal"),
    kw!("ip_proto", Kind::Packet, Required, p_ip_proto, "IP protocol number (0-255, [!<>]) or name"),
    kw!("flags", Kind::Packet, Required, p_flags, "TCP flags with + * ! modifiers and an optional mask"),
    kw!("tcp.flags" => "flags", Kind::Packet, Required, p_flags, "TCP flags (same as flags)"),
    kw!("seq", Kind::Packet, Required, p_u32, "TCP sequence number"),
    kw!("tcp.seq" => "seq", Kind::Packet, Required, p_u32, "TCP sequence number (same as seq)"),
    kw!("ack", Kind::Packet, Required, p_u32, "TCP acknowledgement number"),
    kw!("tcp.ack" => "ack", Kind::Packet, Required, p_u32, "TCP acknowledgement number (same as ack)"),
    kw!("window", Kind::Packet, Required, p_u16, "TCP window size"),
    kw!("tcp.window" => "window", Kind::Packet, Required, p_u16, "TCP window size (same as window)"),
    kw!("l3_proto", Kind::Packet, Required, p_l3_proto, "the network layer protocol: ipv4 or ipv6"),
    kw!("template2", Kind::Packet, Required, p_u8, "Suricata's example keyword, kept for its tests"),
    kw!("tcp.mss", Kind::Packet, Required, p_u16, "TCP MSS option value"),
    kw!("tcp.wscale", Kind::Packet, Required, p_u8, "TCP window scale option value"),
    kw!("itype", Kind::Packet, Required, p_u8, "ICMP type"),
    kw!("icode", Kind::Packet, Required, p_u8, "ICMP code"),
    kw!("icmp_id", Kind::Packet, Required, p_u16, "ICMP echo id"),
    kw!("icmp_seq", Kind::Packet, Required, p_u16, "ICMP echo sequence"),
    kw!("icmpv6.mtu", Kind::Packet, Required, p_u32, "ICMPv6 MTU of packet-too-big"),
    kw!("ipv4-csum", Kind::Packet, Required, p_csum, "IPv4 checksum valid or invalid"),
    kw!("tcpv4-csum", Kind::Packet, Required, p_csum, "TCP over IPv4 checksum valid or invalid"),
    kw!("tcpv6-csum", Kind::Packet, Required, p_csum, "TCP over IPv6 checksum valid or invalid"),
    kw!("udpv4-csum", Kind::Packet, Required, p_csum, "UDP over IPv4 checksum valid or invalid"),
    kw!("udpv6-csum", Kind::Packet, Required, p_csum, "UDP over IPv6 checksum valid or invalid"),
    kw!("icmpv4-csum", Kind::Packet, Required, p_csum, "ICMPv4 checksum valid or invalid"),
    kw!("icmpv6-csum", Kind::Packet, Required, p_csum, "ICMPv6 checksum valid or invalid"),
    kw!("igmp-csum", Kind::Packet, Required, p_csum, "IGMP checksum valid or invalid"),
    kw!("vlan.id", Kind::Packet, Required, p_int_with, "VLAN id (optionally ,layer)"),
    kw!("vlan.layers", Kind::Packet, Required, p_u8, "number of VLAN layers"),
    kw!("igmp.type", Kind::Packet, Required, p_u8, "IGMP message type"),
    kw!("sctp.chunk_type", Kind::Packet, Required, p_int_or_name, "SCTP chunk type"),
    kw!("sctp.chunk_cnt", Kind::Packet, Required, p_u32, "number of SCTP chunks"),
    kw!("sctp.vtag", Kind::Packet, Required, p_u32, "SCTP verification tag"),
    kw!("geoip", Kind::Packet, Required, p_text, "country of src/dst/both/any address"),
    kw!("iprep", Kind::Packet, Required, p_text, "IP reputation: side, category, operator, value"),
];

fn p_tos(s: &str) -> VResult<Value> {
    let (off, t) = trim(s);
    let (neg, body) = match t.strip_prefix('!') {
        Some(b) => ("!", b),
        None => ("", t),
    };
    match body.strip_prefix(['x', 'X']) {
        Some(hex) => match u8::from_str_radix(hex, 16) {
            Ok(n) => Ok(Value::Int(if neg.is_empty() { IntCmp::Eq(n as u64) } else { IntCmp::Ne(n as u64) })),
            Err(_) => verr(off, format!("invalid tos '{t}'")),
        },
        None => p_u8(s),
    }
}

/// IANA protocol names `ip_proto` takes, as the system's protocol database
/// lists them (Suricata asks it by name).
const IP_PROTOCOLS: &[(&str, u8)] = &[
    ("hopopt", 0),
    ("icmp", 1),
    ("igmp", 2),
    ("ggp", 3),
    ("ipencap", 4),
    ("st", 5),
    ("tcp", 6),
    ("egp", 8),
    ("igp", 9),
    ("pup", 12),
    ("udp", 17),
    ("hmp", 20),
    ("xns-idp", 22),
    ("rdp", 27),
    ("iso-tp4", 29),
    ("dccp", 33),
    ("xtp", 36),
    ("ddp", 37),
    ("idpr-cmtp", 38),
    ("ipv6", 41),
    ("ipv6-route", 43),
    ("ipv6-frag", 44),
    ("idrp", 45),
    ("rsvp", 46),
    ("gre", 47),
    ("esp", 50),
    ("ah", 51),
    ("skip", 57),
    ("ipv6-icmp", 58),
    ("icmpv6", 58),
    ("ipv6-nonxt", 59),
    ("ipv6-opts", 60),
    ("rspf", 73),
    ("vmtp", 81),
    ("eigrp", 88),
    ("ospf", 89),
    ("ax.25", 93),
    ("ipip", 94),
    ("etherip", 97),
    ("encap", 98),
    ("pim", 103),
    ("ipcomp", 108),
    ("vrrp", 112),
    ("l2tp", 115),
    ("isis", 124),
    ("sctp", 132),
    ("fc", 133),
    ("mobility-header", 135),
    ("udplite", 136),
    ("mpls-in-ip", 137),
    ("manet", 138),
    ("hip", 139),
    ("shim6", 140),
    ("wesp", 141),
    ("rohc", 142),
    ("ethernet", 143),
];

/// The protocol number of an `ip_proto` name: written in lower case, or
/// all in upper case (the database's alias); `TcP` is no name.
pub fn ip_proto_number(name: &str) -> Option<u8> {
    let lower = name.to_ascii_lowercase();
    if name != lower && name != lower.to_ascii_uppercase() {
        return None;
    }
    IP_PROTOCOLS.iter().find(|(n, _)| *n == lower).map(|(_, v)| *v)
}

/// `ip_proto:[!<>]<number or name>`: 0 to 255, or a protocol's name.
fn p_ip_proto(s: &str) -> VResult<Value> {
    let (off, t) = trim(s);
    let body = t.trim_start_matches(['!', '<', '>']).trim_start();
    if body.starts_with(|c: char| c.is_ascii_digit() || c == '-') {
        let cmp = p_u8(s)?;
        return Ok(cmp);
    }
    if ip_proto_number(body).is_none() {
        return verr(off, format!("invalid ip_proto '{t}': no such protocol"));
    }
    Ok(Value::Text(t.to_string()))
}

/// `ipopts:<name>`: one option, by name, in any case.
fn p_ipopts(s: &str) -> VResult<Value> {
    let (off, t) = trim(s);
    const OPTS: &[&str] =
        &["rr", "eol", "nop", "ts", "sec", "esec", "lsrr", "ssrr", "satid", "qs", "cipso", "rtralt", "any"];
    let name = t.to_ascii_lowercase();
    if !OPTS.contains(&name.as_str()) {
        return verr(off, format!("unknown IP option '{t}'"));
    }
    Ok(Value::Text(name))
}

/// `fragoffset:[<|>]<n>`: the 13-bit field, equal, below or above. As in
/// Suricata, anything after the number is ignored and `!` is refused.
fn p_fragoffset(s: &str) -> VResult<Value> {
    let (off, t) = trim(s);
    let (op, rest) = match t.as_bytes().first() {
        Some(b'<') => (Some(false), &t[1..]),
        Some(b'>') => (Some(true), &t[1..]),
        _ => (None, t),
    };
    let rest = rest.trim_start();
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return verr(off, format!("invalid fragoffset '{t}': [<|>]number"));
    }
    let Ok(n) = rest[..digits].parse::<u16>() else {
        return verr(off, format!("fragment offset {} is not valid", &rest[..digits]));
    };
    let n = u64::from(n);
    Ok(Value::Int(match op {
        None => IntCmp::Eq(n),
        Some(false) => IntCmp::Lt(n),
        Some(true) => IntCmp::Gt(n),
    }))
}

/// `l3_proto:ipv4|ip4|ipv6|ip6`, in any case.
fn p_l3_proto(s: &str) -> VResult<Value> {
    let (off, t) = trim(s);
    match t.to_ascii_lowercase().as_str() {
        "ipv4" | "ip4" => Ok(Value::Text("ipv4".into())),
        "ipv6" | "ip6" => Ok(Value::Text("ipv6".into())),
        _ => verr(off, format!("invalid l3 proto '{t}' (ipv4, ipv6)")),
    }
}

fn p_csum(s: &str) -> VResult<Value> {
    let (off, t) = trim(s);
    if t != "valid" && t != "invalid" {
        return verr(off, format!("expected valid or invalid, got '{t}'"));
    }
    Ok(Value::Text(t.to_string()))
}

/// How a flag set is compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FlagMode {
    /// Exactly these flags (after the mask).
    Exact,
    /// `+`: these flags and possibly others.
    All,
    /// `*`: any of these flags.
    Any,
    /// `!`: not these flags.
    Not,
}

impl FlagMode {
    fn prefix(self) -> &'static str {
        match self {
            FlagMode::Exact => "",
            FlagMode::All => "+",
            FlagMode::Any => "*",
            FlagMode::Not => "!",
        }
    }
}

/// `flags:[+*!]FSRPAUCE0[,mask]`. Bits as in the TCP header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TcpFlags {
    pub mode: FlagMode,
    /// Flag bits; 0 with `flags:0`.
    pub bits: u8,
    /// Bits to ignore.
    pub ignore: u8,
}

const TCP_LETTERS: &[(char, u8)] =
    &[('F', 0x01), ('S', 0x02), ('R', 0x04), ('P', 0x08), ('A', 0x10), ('U', 0x20), ('C', 0x80), ('E', 0x40)];

fn tcp_bit(c: char) -> Option<u8> {
    match c.to_ascii_uppercase() {
        // Snort's names for the two reserved (now CWR/ECE) bits.
        '1' => Some(0x80),
        '2' => Some(0x40),
        u => TCP_LETTERS.iter().find(|(l, _)| *l == u).map(|(_, b)| *b),
    }
}

fn mode_of(c: char) -> Option<FlagMode> {
    match c {
        '+' => Some(FlagMode::All),
        '*' => Some(FlagMode::Any),
        '!' => Some(FlagMode::Not),
        _ => None,
    }
}

fn p_flags(s: &str) -> VResult<Value> {
    let (off, t) = trim(s);
    let (set, mask) = match t.split_once(',') {
        Some((a, m)) => (a.trim(), Some(m.trim())),
        None => (t, None),
    };
    let mut mode = FlagMode::Exact;
    let mut bits = 0u8;
    let mut zero = false;
    for (i, c) in set.char_indices() {
        if let Some(m) = mode_of(c) {
            if mode != FlagMode::Exact {
                return verr(off + i, "more than one flag modifier");
            }
            mode = m;
        } else if c == '0' {
            zero = true;
        } else if let Some(b) = tcp_bit(c) {
            bits |= b;
        } else {
            return verr(off + i, format!("unknown TCP flag '{c}'"));
        }
    }
    if zero && bits != 0 {
        return verr(off, "flag '0' (no flags) cannot be combined with other flags");
    }
    if !zero && bits == 0 {
        return verr(off, "no TCP flags given");
    }
    let mut ignore = 0u8;
    if let Some(m) = mask {
        for c in m.chars() {
            match tcp_bit(c) {
                Some(b) => ignore |= b,
                None => return verr(off + set.len() + 1, format!("unknown TCP flag '{c}' in mask")),
            }
        }
    }
    Ok(Value::Flags(TcpFlags { mode, bits, ignore }))
}

fn write_bits(f: &mut fmt::Formatter<'_>, bits: u8) -> fmt::Result {
    for (l, b) in TCP_LETTERS {
        if bits & b != 0 {
            write!(f, "{l}")?;
        }
    }
    Ok(())
}

impl fmt::Display for TcpFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.mode.prefix())?;
        if self.bits == 0 {
            f.write_str("0")?;
        } else {
            write_bits(f, self.bits)?;
        }
        if self.ignore != 0 {
            f.write_str(",")?;
            write_bits(f, self.ignore)?;
        }
        Ok(())
    }
}

/// `fragbits:[+*!]MDR`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Fragbits {
    pub mode: FlagMode,
    /// 0x01 M (more fragments), 0x02 D (don't fragment), 0x04 R (reserved).
    pub bits: u8,
}

/// `fragbits:[+*!]MDR`. Suricata reads the first run of upper-case bit
/// letters and ignores what follows it (`M,D` is `M`).
fn p_fragbits(s: &str) -> VResult<Value> {
    let (off, t) = trim(s);
    let (mode, rest, at) = match t.chars().next().and_then(mode_of) {
        Some(m) => (m, t[1..].trim_start(), off + 1 + (t.len() - 1 - t[1..].trim_start().len())),
        None => (FlagMode::Exact, t, off),
    };
    let mut bits = 0u8;
    for c in rest.chars() {
        bits |= match c {
            'M' => 0x01,
            'D' => 0x02,
            'R' => 0x04,
            _ => break,
        };
    }
    if bits == 0 {
        return verr(at, format!("invalid fragbits '{t}': [+*!] then M, D or R"));
    }
    Ok(Value::Fragbits(Fragbits { mode, bits }))
}

impl fmt::Display for Fragbits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.mode.prefix())?;
        for (l, b) in [('M', 0x01), ('D', 0x02), ('R', 0x04)] {
            if self.bits & b != 0 {
                write!(f, "{l}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(s: &str) -> TcpFlags {
        match p_flags(s).unwrap() {
            Value::Flags(f) => f,
            _ => unreachable!(),
        }
    }

    #[test]
    fn tcp_flags() {
        assert_eq!(flags("S,12"), TcpFlags { mode: FlagMode::Exact, bits: 0x02, ignore: 0xc0 });
        assert_eq!(flags("AS").to_string(), "SA");
        assert_eq!(flags("SA+").mode, FlagMode::All);
        assert_eq!(flags("!0").to_string(), "!0");
        assert_eq!(flags("*FPU,CE").to_string(), "*FPU,CE");
        assert_eq!(p_flags("SX").unwrap_err().reason, "unknown TCP flag 'X'");
        assert!(p_flags("+*S").is_err());
    }

    #[test]
    fn others() {
        assert_eq!(p_fragbits("+D").unwrap(), Value::Fragbits(Fragbits { mode: FlagMode::All, bits: 2 }));
        assert!(p_ipopts("lsrr").is_ok() && p_ipopts("bogus").is_err());
        assert_eq!(p_tos("x10").unwrap(), Value::Int(IntCmp::Eq(16)));
        assert!(p_csum("valid").is_ok() && p_csum("ok").is_err());
    }
}
