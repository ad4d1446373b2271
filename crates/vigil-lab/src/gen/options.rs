//! What `vigil gen` is asked for: profile, sizes, MTU, encapsulation,
//! malicious share; each parses from its command-line spelling.

use std::fmt;
use std::str::FromStr;

/// The kind of traffic generated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// TCP flows with handshakes (HTTP/1.1, TLS), DNS over UDP, plain UDP, ICMP echo.
    Mixed,
    /// Bytes shaped like the enterprise mix of the 60 Gbit/s Suricata study.
    Enterprise,
    /// An nmap-like SYN scan: one source, many ports.
    Synscan,
    /// Plain UDP flows.
    Udp,
    /// ICMP echo request/reply pairs.
    Icmp,
}

/// Which IP versions flows use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IpMix {
    V4,
    V6,
    /// Each flow IPv4 or IPv6, half and half.
    Mix,
}

/// The size of the IP datagrams that carry bulk data (HTTP bodies, TLS
/// records, UDP, ICMP echo); handshakes and requests keep their natural size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeSpec {
    Fixed(usize),
    /// Uniform in `a..=b`.
    Uniform(usize, usize),
    /// Simple IMIX: 40, 576 and 1500 bytes in the ratio 7:4:1.
    Imix,
}

/// How each frame is carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encap {
    None,
    /// One 802.1Q tag (VLAN 100).
    Vlan,
    /// IPv4/GRE around the IP packet.
    Gre,
    /// IPv4/GRE/ERSPAN type II around the Ethernet frame.
    Erspan2,
    /// IPv4/GRE/ERSPAN type III around the Ethernet frame.
    Erspan3,
    /// IPv4/UDP 4789/VXLAN around the Ethernet frame.
    Vxlan,
}

/// Which protocols carry malicious markers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MalProto {
    Tcp,
    Udp,
    Icmp,
    All,
}

/// How much to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Amount {
    /// At least this many frames (the last flow is completed).
    Packets(u64),
    /// Exactly this many flows (for `synscan`, probes).
    Flows(u64),
}

/// Everything that decides a capture: equal options give identical bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct GenOptions {
    pub seed: u64,
    pub amount: Amount,
    pub ip: IpMix,
    pub size: SizeSpec,
    /// The senders' MTU (256..=9000): IP datagrams over it are fragmented.
    pub mtu: usize,
    pub encap: Encap,
    pub profile: Profile,
    /// Share of flows (0..=100 percent) that are malicious.
    pub malicious: f64,
    pub malicious_proto: MalProto,
}

impl Default for GenOptions {
    fn default() -> Self {
        GenOptions {
            seed: 1,
            amount: Amount::Packets(10_000),
            ip: IpMix::V4,
            size: SizeSpec::Imix,
            mtu: 1500,
            encap: Encap::None,
            profile: Profile::Mixed,
            malicious: 0.0,
            malicious_proto: MalProto::All,
        }
    }
}

/// The smallest and largest datagram a size spec may ask for.
pub const MIN_SIZE: usize = 40;
pub const MAX_SIZE: usize = 65_000;
pub const MIN_MTU: usize = 256;
pub const MAX_MTU: usize = 9000;

impl GenOptions {
    /// Checks ranges that the types alone do not.
    pub fn validate(&self) -> Result<(), String> {
        if !(MIN_MTU..=MAX_MTU).contains(&self.mtu) {
            return Err(format!("--mtu {}: must be {MIN_MTU}..={MAX_MTU}", self.mtu));
        }
        if !(0.0..=100.0).contains(&self.malicious) {
            return Err(format!("--malicious {}: must be 0..=100", self.malicious));
        }
        match self.amount {
            Amount::Packets(0) | Amount::Flows(0) => {
                Err("nothing to generate: give at least one packet or flow".into())
            }
            _ => Ok(()),
        }
    }
}

impl SizeSpec {
    /// The mean datagram size, for shaping byte shares.
    pub fn mean(self) -> f64 {
        match self {
            SizeSpec::Fixed(n) => n as f64,
            SizeSpec::Uniform(a, b) => (a + b) as f64 / 2.0,
            SizeSpec::Imix => (7.0 * 40.0 + 4.0 * 576.0 + 1500.0) / 12.0,
        }
    }
}

fn one_of<T: Copy>(s: &str, what: &str, table: &[(&str, T)]) -> Result<T, String> {
    table.iter().find(|(n, _)| n.eq_ignore_ascii_case(s)).map(|(_, v)| *v).ok_or_else(|| {
        let names: Vec<&str> = table.iter().map(|(n, _)| *n).collect();
        format!("unknown {what} `{s}` (one of: {})", names.join(", "))
    })
}

impl FromStr for Profile {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        use Profile::*;
        one_of(
            s,
            "profile",
            &[("mixed", Mixed), ("enterprise", Enterprise), ("synscan", Synscan), ("udp", Udp), ("icmp", Icmp)],
        )
    }
}

impl FromStr for IpMix {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        one_of(s, "IP version", &[("v4", IpMix::V4), ("v6", IpMix::V6), ("mix", IpMix::Mix)])
    }
}

impl FromStr for Encap {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        use Encap::*;
        one_of(
            s,
            "encapsulation",
            &[
                ("none", None),
                ("vlan", Vlan),
                ("gre", Gre),
                ("erspan2", Erspan2),
                ("erspan3", Erspan3),
                ("vxlan", Vxlan),
            ],
        )
    }
}

impl FromStr for MalProto {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        use MalProto::*;
        one_of(s, "malicious protocol", &[("tcp", Tcp), ("udp", Udp), ("icmp", Icmp), ("all", All)])
    }
}

impl FromStr for SizeSpec {
    type Err = String;
    /// `fixed:N`, `uniform:A-B` or `imix` (IP datagram sizes in bytes).
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("size `{s}`: expected fixed:N, uniform:A-B or imix ({MIN_SIZE}..={MAX_SIZE})");
        let num = |t: &str| -> Result<usize, String> {
            t.trim().parse::<usize>().ok().filter(|n| (MIN_SIZE..=MAX_SIZE).contains(n)).ok_or_else(bad)
        };
        if s.eq_ignore_ascii_case("imix") {
            return Ok(SizeSpec::Imix);
        }
        if let Some(n) = s.strip_prefix("fixed:") {
            return Ok(SizeSpec::Fixed(num(n)?));
        }
        if let Some(r) = s.strip_prefix("uniform:") {
            let (a, b) = r.split_once('-').ok_or_else(bad)?;
            let (a, b) = (num(a)?, num(b)?);
            return if a <= b { Ok(SizeSpec::Uniform(a, b)) } else { Err(bad()) };
        }
        Err(bad())
    }
}

impl fmt::Display for SizeSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SizeSpec::Fixed(n) => write!(f, "fixed:{n}"),
            SizeSpec::Uniform(a, b) => write!(f, "uniform:{a}-{b}"),
            SizeSpec::Imix => f.write_str("imix"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_and_print_back() {
        for s in ["fixed:1500", "uniform:64-9000", "imix"] {
            assert_eq!(s.parse::<SizeSpec>().unwrap().to_string(), s);
        }
        for s in ["fixed:", "fixed:10", "uniform:900-100", "uniform:64", "big"] {
            assert!(s.parse::<SizeSpec>().is_err(), "{s}");
        }
    }

    #[test]
    fn names_parse_and_unknown_ones_list_the_choices() {
        assert_eq!("erspan3".parse::<Encap>().unwrap(), Encap::Erspan3);
        assert_eq!("Mix".parse::<IpMix>().unwrap(), IpMix::Mix);
        let e = "ftp".parse::<Profile>().unwrap_err();
        assert!(e.contains("synscan"), "{e}");
    }

    #[test]
    fn validation_bounds_mtu_and_share() {
        assert!(GenOptions::default().validate().is_ok());
        assert!(GenOptions { mtu: 9001, ..Default::default() }.validate().is_err());
        assert!(GenOptions { malicious: 101.0, ..Default::default() }.validate().is_err());
        assert!(GenOptions { amount: Amount::Flows(0), ..Default::default() }.validate().is_err());
    }
}
