//! Decode events: every malformed or suspicious condition the decoder sees,
//! under Suricata's names (`decoder.<proto>.<what>`), so counters, EVE
//! `anomaly` records and `decode-event` rules line up with Suricata's.

macro_rules! events {
    ($($variant:ident => $name:literal,)*) => {
        /// One named decode event.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(u8)]
        pub enum DecodeEvent { $($variant,)* }

        impl DecodeEvent {
            /// Every event, in declaration order (the order of counters in stats).
            pub const ALL: &'static [DecodeEvent] = &[$(DecodeEvent::$variant,)*];

            /// The event's name without the `decoder.` prefix, e.g. `ipv4.trunc_pkt`.
            pub const fn name(self) -> &'static str {
                match self { $(DecodeEvent::$variant => $name,)* }
            }
        }
    };
}

events! {
    Ipv4PktTooSmall => "ipv4.pkt_too_small",
    Ipv4HlenTooSmall => "ipv4.hlen_too_small",
    Ipv4IplenSmallerThanHlen => "ipv4.iplen_smaller_than_hlen",
    Ipv4TruncPkt => "ipv4.trunc_pkt",
    Ipv4OptInvalid => "ipv4.opt_invalid",
    Ipv4OptInvalidLen => "ipv4.opt_invalid_len",
    Ipv4OptMalformed => "ipv4.opt_malformed",
    Ipv4OptPadRequired => "ipv4.opt_pad_required",
    Ipv4OptEolRequired => "ipv4.opt_eol_required",
    Ipv4OptDuplicate => "ipv4.opt_duplicate",
    Ipv4OptUnknown => "ipv4.opt_unknown",
    Ipv4WrongIpVersion => "ipv4.wrong_ip_version",
    Ipv4Icmpv6 => "ipv4.icmpv6",
    Icmpv4PktTooSmall => "icmpv4.pkt_too_small",
    Icmpv4UnknownType => "icmpv4.unknown_type",
    Icmpv4UnknownCode => "icmpv4.unknown_code",
    Icmpv4Ipv4TruncPkt => "icmpv4.ipv4_trunc_pkt",
    Icmpv4Ipv4UnknownVer => "icmpv4.ipv4_unknown_ver",
    Icmpv6UnknownType => "icmpv6.unknown_type",
    Icmpv6UnknownCode => "icmpv6.unknown_code",
    Icmpv6PktTooSmall => "icmpv6.pkt_too_small",
    Icmpv6Ipv6UnknownVersion => "icmpv6.ipv6_unknown_version",
    Icmpv6Ipv6TruncPkt => "icmpv6.ipv6_trunc_pkt",
    Icmpv6MldMessageWithInvalidHl => "icmpv6.mld_message_with_invalid_hl",
    Icmpv6UnassignedType => "icmpv6.unassigned_type",
    Icmpv6ExperimentationType => "icmpv6.experimentation_type",
    Ipv6PktTooSmall => "ipv6.pkt_too_small",
    Ipv6TruncPkt => "ipv6.trunc_pkt",
    Ipv6TruncExthdr => "ipv6.trunc_exthdr",
    Ipv6ExthdrDuplFh => "ipv6.exthdr_dupl_fh",
    Ipv6ExthdrUselessFh => "ipv6.exthdr_useless_fh",
    Ipv6ExthdrDuplRh => "ipv6.exthdr_dupl_rh",
    Ipv6ExthdrDuplHh => "ipv6.exthdr_dupl_hh",
    Ipv6ExthdrDuplDh => "ipv6.exthdr_dupl_dh",
    Ipv6ExthdrDuplAh => "ipv6.exthdr_dupl_ah",
    Ipv6ExthdrDuplEh => "ipv6.exthdr_dupl_eh",
    Ipv6ExthdrInvalidOptlen => "ipv6.exthdr_invalid_optlen",
    Ipv6WrongIpVersion => "ipv6.wrong_ip_version",
    Ipv6ExthdrAhResNotNull => "ipv6.exthdr_ah_res_not_null",
    Ipv6HopoptsUnknownOpt => "ipv6.hopopts_unknown_opt",
    Ipv6HopoptsOnlyPadding => "ipv6.hopopts_only_padding",
    Ipv6DstoptsUnknownOpt => "ipv6.dstopts_unknown_opt",
    Ipv6DstoptsOnlyPadding => "ipv6.dstopts_only_padding",
    Ipv6RhType0 => "ipv6.rh_type_0",
    Ipv6ZeroLenPadn => "ipv6.zero_len_padn",
    Ipv6FhNonZeroReservedField => "ipv6.fh_non_zero_reserved_field",
    Ipv6DataAfterNoneHeader => "ipv6.data_after_none_header",
    Ipv6UnknownNextHeader => "ipv6.unknown_next_header",
    Ipv6Icmpv4 => "ipv6.icmpv4",
    Ipv6FragPktTooLarge => "ipv6.frag_pkt_too_large",
    Ipv6FragOverlap => "ipv6.frag_overlap",
    Ipv6FragInvalidLength => "ipv6.frag_invalid_length",
    Ipv6FragIgnored => "ipv6.frag_ignored",
    Ipv6Ipv4InIpv6TooSmall => "ipv6.ipv4_in_ipv6_too_small",
    Ipv6Ipv4InIpv6WrongVersion => "ipv6.ipv4_in_ipv6_wrong_version",
    Ipv6Ipv6InIpv6TooSmall => "ipv6.ipv6_in_ipv6_too_small",
    Ipv6Ipv6InIpv6WrongVersion => "ipv6.ipv6_in_ipv6_wrong_version",
    Ipv4FragPktTooLarge => "ipv4.frag_pkt_too_large",
    Ipv4FragOverlap => "ipv4.frag_overlap",
    Ipv4FragIgnored => "ipv4.frag_ignored",
    TcpPktTooSmall => "tcp.pkt_too_small",
    TcpHlenTooSmall => "tcp.hlen_too_small",
    TcpInvalidOptlen => "tcp.invalid_optlen",
    TcpOptInvalidLen => "tcp.opt_invalid_len",
    TcpOptDuplicate => "tcp.opt_duplicate",
    UdpPktTooSmall => "udp.pkt_too_small",
    UdpHlenTooSmall => "udp.hlen_too_small",
    UdpHlenInvalid => "udp.hlen_invalid",
    UdpLenInvalid => "udp.len_invalid",
    SllPktTooSmall => "sll.pkt_too_small",
    Sll2PktTooSmall => "sll2.pkt_too_small",
    EthernetPktTooSmall => "ethernet.pkt_too_small",
    EthernetUnknownEthertype => "ethernet.unknown_ethertype",
    PppPktTooSmall => "ppp.pkt_too_small",
    PppVjuPktTooSmall => "ppp.vju_pkt_too_small",
    PppIp4PktTooSmall => "ppp.ip4_pkt_too_small",
    PppIp6PktTooSmall => "ppp.ip6_pkt_too_small",
    PppWrongType => "ppp.wrong_type",
    PppUnsupProto => "ppp.unsup_proto",
    PppoePktTooSmall => "pppoe.pkt_too_small",
    PppoeWrongCode => "pppoe.wrong_code",
    PppoeMalformedTags => "pppoe.malformed_tags",
    GrePktTooSmall => "gre.pkt_too_small",
    GreWrongVersion => "gre.wrong_version",
    GreVersion0Recur => "gre.version0_recur",
    GreVersion0Flags => "gre.version0_flags",
    GreVersion0HdrTooBig => "gre.version0_hdr_too_big",
    GreVersion0MalformedSreHdr => "gre.version0_malformed_sre_hdr",
    GreVersion1Chksum => "gre.version1_chksum",
    GreVersion1Route => "gre.version1_route",
    GreVersion1Ssr => "gre.version1_ssr",
    GreVersion1Recur => "gre.version1_recur",
    GreVersion1Flags => "gre.version1_flags",
    GreVersion1NoKey => "gre.version1_no_key",
    GreVersion1WrongProtocol => "gre.version1_wrong_protocol",
    GreVersion1MalformedSreHdr => "gre.version1_malformed_sre_hdr",
    GreVersion1HdrTooBig => "gre.version1_hdr_too_big",
    VlanHeaderTooSmall => "vlan.header_too_small",
    VlanUnknownType => "vlan.unknown_type",
    VlanTooManyLayers => "vlan.too_many_layers",
    Ieee8021ahHeaderTooSmall => "ieee8021ah.header_too_small",
    IprawInvalidIpVersion => "ipraw.invalid_ip_version",
    LtnullPktTooSmall => "ltnull.pkt_too_small",
    LtnullUnsupportedType => "ltnull.unsupported_type",
    SctpPktTooSmall => "sctp.pkt_too_small",
    EspPktTooSmall => "esp.pkt_too_small",
    MplsHeaderTooSmall => "mpls.header_too_small",
    MplsPktTooSmall => "mpls.pkt_too_small",
    MplsBadLabelRouterAlert => "mpls.bad_label_router_alert",
    MplsBadLabelImplicitNull => "mpls.bad_label_implicit_null",
    MplsBadLabelReserved => "mpls.bad_label_reserved",
    MplsUnknownPayloadType => "mpls.unknown_payload_type",
    VxlanUnknownPayloadType => "vxlan.unknown_payload_type",
    GeneveUnknownPayloadType => "geneve.unknown_payload_type",
    ErspanHeaderTooSmall => "erspan.header_too_small",
    ErspanUnsupportedVersion => "erspan.unsupported_version",
    ErspanTooManyVlanLayers => "erspan.too_many_vlan_layers",
    DcePktTooSmall => "dce.pkt_too_small",
    ChdlcPktTooSmall => "chdlc.pkt_too_small",
    ArpPktTooSmall => "arp.pkt_too_small",
    NshHeaderTooSmall => "nsh.header_too_small",
    VntagHeaderTooSmall => "vntag.header_too_small",
}

/// How many events exist; sizes counter arrays.
pub const EVENT_COUNT: usize = DecodeEvent::ALL.len();

/// The events one packet raised, in the order they were raised.
///
/// Bounded like Suricata's per-packet event list (15): a hostile packet cannot
/// make the list grow; later events are still counted through `dropped`.
#[derive(Debug, Clone, Copy, Default)]
pub struct EventList {
    items: [Option<DecodeEvent>; EventList::CAPACITY],
    len: u8,
    /// Events raised after the list was full.
    pub dropped: u8,
}

impl EventList {
    pub const CAPACITY: usize = 15;

    /// Records `e` unless already present (an event is raised once per packet).
    pub fn push(&mut self, e: DecodeEvent) {
        if self.contains(e) {
            return;
        }
        if (self.len as usize) < Self::CAPACITY {
            self.items[self.len as usize] = Some(e);
            self.len += 1;
        } else {
            self.dropped = self.dropped.saturating_add(1);
        }
    }

    pub fn contains(&self, e: DecodeEvent) -> bool {
        self.iter().any(|x| x == e)
    }

    pub fn iter(&self) -> impl Iterator<Item = DecodeEvent> + '_ {
        self.items[..self.len as usize].iter().flatten().copied()
    }

    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn clear(&mut self) {
        *self = EventList::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_dotted() {
        let mut seen = std::collections::HashSet::new();
        for e in DecodeEvent::ALL {
            assert!(seen.insert(e.name()), "duplicate {}", e.name());
            assert_eq!(e.name().matches('.').count(), 1, "{}", e.name());
        }
    }

    #[test]
    fn list_is_bounded_and_deduplicated() {
        let mut l = EventList::default();
        l.push(DecodeEvent::Ipv4TruncPkt);
        l.push(DecodeEvent::Ipv4TruncPkt);
        assert_eq!(l.len(), 1);
        for e in DecodeEvent::ALL.iter().take(20) {
            l.push(*e);
        }
        assert_eq!(l.len(), EventList::CAPACITY);
        assert!(l.dropped > 0);
    }
}
