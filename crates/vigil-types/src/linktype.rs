/// The data link type a capture declares for its packets (pcap's DLT/LINKTYPE values).
///
/// Only the types vigil decodes get a variant; anything else is kept as
/// `Other(n)` so it can be counted and reported by number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinkType {
    /// BSD loopback (DLT_NULL, 0): a 4-byte address family in host byte order.
    Null,
    /// Ethernet II / 802.3 (1).
    Ethernet,
    /// PPP (9).
    Ppp,
    /// Raw IP, IPv4 or IPv6 told apart by the version nibble (101; 12 and 14 on some systems).
    Raw,
    /// Cisco HDLC (104).
    CiscoHdlc,
    /// Linux cooked capture v1 (113).
    LinuxSll,
    /// Raw IPv4 only (228).
    Ipv4,
    /// Raw IPv6 only (229).
    Ipv6,
    /// Linux cooked capture v2 (276).
    LinuxSll2,
    Other(u32),
}

impl LinkType {
    pub const fn from_dlt(dlt: u32) -> Self {
        match dlt {
            0 => LinkType::Null,
            1 => LinkType::Ethernet,
            9 => LinkType::Ppp,
            12 | 14 | 101 => LinkType::Raw,
            104 => LinkType::CiscoHdlc,
            113 => LinkType::LinuxSll,
            228 => LinkType::Ipv4,
            229 => LinkType::Ipv6,
            276 => LinkType::LinuxSll2,
            n => LinkType::Other(n),
        }
    }

    /// The number written to EVE `packet_info.linktype` (the canonical LINKTYPE value).
    pub const fn dlt(self) -> u32 {
        match self {
            LinkType::Null => 0,
            LinkType::Ethernet => 1,
            LinkType::Ppp => 9,
            LinkType::Raw => 101,
            LinkType::CiscoHdlc => 104,
            LinkType::LinuxSll => 113,
            LinkType::Ipv4 => 228,
            LinkType::Ipv6 => 229,
            LinkType::LinuxSll2 => 276,
            LinkType::Other(n) => n,
        }
    }

    pub const fn name(self) -> &'static str {
        match self {
            LinkType::Null => "NULL",
            LinkType::Ethernet => "EN10MB",
            LinkType::Ppp => "PPP",
            LinkType::Raw => "RAW",
            LinkType::CiscoHdlc => "C_HDLC",
            LinkType::LinuxSll => "LINUX_SLL",
            LinkType::Ipv4 => "IPv4",
            LinkType::Ipv6 => "IPv6",
            LinkType::LinuxSll2 => "LINUX_SLL2",
            LinkType::Other(_) => "UNKNOWN",
        }
    }
}
