/// The protocol name EVE writes in `proto` (IANA keywords, as Suricata spells them).
pub fn proto_name(proto: u8) -> std::borrow::Cow<'static, str> {
    let name = match proto {
        0 => "HOPOPT",
        1 => "ICMP",
        2 => "IGMP",
        4 => "IP-in-IP",
        6 => "TCP",
        8 => "EGP",
        17 => "UDP",
        41 => "IPv6",
        43 => "IPv6-Route",
        44 => "IPv6-Frag",
        46 => "RSVP",
        47 => "GRE",
        50 => "ESP",
        51 => "AH",
        58 => "IPv6-ICMP",
        59 => "IPv6-NoNxt",
        60 => "IPv6-Opts",
        88 => "EIGRP",
        89 => "OSPF",
        103 => "PIM",
        112 => "VRRP",
        115 => "L2TP",
        132 => "SCTP",
        136 => "UDPLite",
        _ => return std::borrow::Cow::Owned(proto.to_string()),
    };
    std::borrow::Cow::Borrowed(name)
}
