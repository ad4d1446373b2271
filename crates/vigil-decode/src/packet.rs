//! The decoded packet: the raw bytes, where each layer sits in them, the
//! innermost 5-tuple, the payload range, the tunnel it came through, and the
//! decode events it raised.

use crate::event::EventList;
use std::net::IpAddr;
use vigil_types::{LinkType, Timestamp};

/// The most layers a packet records; `decoder.max-layers` is clamped to it.
pub const MAX_LAYERS: usize = 32;

/// The most VLAN tags a packet may carry, as in Suricata.
pub const MAX_VLANS: usize = 3;

/// What one decoded header was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum LayerKind {
    Ethernet = 0,
    Vlan,
    Ieee8021ah,
    Vntag,
    Mpls,
    Pppoe,
    Ppp,
    Sll,
    Sll2,
    Null,
    CiscoHdlc,
    Arp,
    Ipv4,
    Ipv6,
    /// An IPv6 extension header; [`Layer::ext`] holds its protocol number.
    Ipv6Ext,
    Tcp,
    Udp,
    Icmpv4,
    Icmpv6,
    Sctp,
    Esp,
    Gre,
    Erspan,
    Vxlan,
    Geneve,
    Teredo,
    Nsh,
}

/// One header: its kind and where it lies in the packet's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
///
/// Fieldless and all-zero by default, so a packet's layer table starts as one memset.
pub struct Layer {
    pub kind: LayerKind,
    /// For [`LayerKind::Ipv6Ext`], the extension header's protocol number (0 otherwise).
    pub ext: u8,
    /// The header's own length (not what it carries); headers are never longer than 64 KiB.
    pub len: u16,
    pub offset: u32,
}

impl Layer {
    const EMPTY: Layer = Layer { kind: LayerKind::Ethernet, ext: 0, len: 0, offset: 0 };
}

/// The innermost IP header's fields the pipeline keys on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpInfo {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub ttl: u8,
    /// Where the IP header starts and how long the datagram is (header included).
    pub offset: u32,
    pub len: u32,
}

/// The transport header of the innermost datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Transport {
    #[default]
    None,
    Tcp {
        sport: u16,
        dport: u16,
        flags: u8,
        seq: u32,
        ack: u32,
        window: u16,
    },
    Udp {
        sport: u16,
        dport: u16,
    },
    Icmp {
        kind: u8,
        code: u8,
    },
    Sctp {
        sport: u16,
        dport: u16,
    },
}

/// The outer datagram a tunnelled packet arrived in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TunnelInfo {
    pub src: IpAddr,
    pub dst: IpAddr,
    /// The outer IP protocol number (47 for GRE, 17 for VXLAN/Geneve/Teredo, 4/41 for IP-in-IP).
    pub proto: u8,
    pub sport: Option<u16>,
    pub dport: Option<u16>,
    /// How many tunnels enclose the inner packet (1 for a single tunnel).
    pub depth: u8,
}

/// Which checksums were checked and found wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ChecksumFlags {
    pub ipv4_bad: bool,
    pub l4_bad: bool,
}

/// Where a packet came from, as EVE `pkt_src` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PacketSource {
    /// Captured.
    #[default]
    Wire,
    /// An IP datagram rebuilt from its fragments.
    Defrag,
    /// Made when a flow ended, to inspect what was left of its streams and
    /// transactions (Suricata's flow-timeout pseudo packets).
    FlowTimeout,
}

impl PacketSource {
    /// Suricata's text for it.
    pub const fn name(self) -> &'static str {
        match self {
            PacketSource::Wire => "wire/pcap",
            PacketSource::Defrag => "defrag",
            PacketSource::FlowTimeout => "stream (flow timeout)",
        }
    }
}

/// A decoded frame. Typed views are rebuilt from the recorded offsets on demand.
#[derive(Debug, Clone)]
pub struct Packet<'a> {
    pub data: &'a [u8],
    pub ts: Timestamp,
    pub linktype: LinkType,
    /// The frame's number in the capture (1-based), for EVE `pcap_cnt`.
    pub pcap_cnt: u64,
    layers: [Layer; MAX_LAYERS],
    nlayers: u8,
    pub events: EventList,
    /// Decoding stopped on a malformed header (Suricata's "invalid" packets).
    pub invalid: bool,
    /// The innermost IP header, if any.
    pub ip: Option<IpInfo>,
    /// The innermost IP protocol number (0 when there is no IP layer).
    pub proto: u8,
    pub transport: Transport,
    payload_offset: u32,
    payload_len: u32,
    vlans: [u16; MAX_VLANS],
    nvlans: u8,
    pub tunnel: Option<TunnelInfo>,
    /// An IP fragment: upper layers were not decoded (defragmentation comes first).
    pub fragment: bool,
    pub checksum: ChecksumFlags,
    pub src: PacketSource,
}

impl<'a> Packet<'a> {
    pub fn new(data: &'a [u8], ts: Timestamp, linktype: LinkType, pcap_cnt: u64) -> Self {
        Packet {
            data,
            ts,
            linktype,
            pcap_cnt,
            layers: [Layer::EMPTY; MAX_LAYERS],
            nlayers: 0,
            events: EventList::default(),
            invalid: false,
            ip: None,
            proto: 0,
            transport: Transport::None,
            payload_offset: 0,
            payload_len: 0,
            vlans: [0; MAX_VLANS],
            nvlans: 0,
            tunnel: None,
            fragment: false,
            checksum: ChecksumFlags::default(),
            src: PacketSource::Wire,
        }
    }

    pub fn layers(&self) -> &[Layer] {
        &self.layers[..self.nlayers as usize]
    }

    /// The first layer of `kind`, outermost first.
    pub fn layer(&self, kind: LayerKind) -> Option<Layer> {
        self.layers().iter().copied().find(|l| l.kind == kind)
    }

    /// The bytes a layer's header occupies.
    pub fn layer_bytes(&self, l: Layer) -> &'a [u8] {
        let start = l.offset as usize;
        self.data.get(start..start + l.len as usize).unwrap_or(&[])
    }

    /// The application payload: TCP/UDP/SCTP data or the ICMP message body.
    pub fn payload(&self) -> &'a [u8] {
        let start = self.payload_offset as usize;
        self.data.get(start..start + self.payload_len as usize).unwrap_or(&[])
    }

    pub fn vlans(&self) -> &[u16] {
        &self.vlans[..self.nvlans as usize]
    }

    pub fn sport(&self) -> Option<u16> {
        match self.transport {
            Transport::Tcp { sport, .. } | Transport::Udp { sport, .. } | Transport::Sctp { sport, .. } => Some(sport),
            _ => None,
        }
    }

    pub fn dport(&self) -> Option<u16> {
        match self.transport {
            Transport::Tcp { dport, .. } | Transport::Udp { dport, .. } | Transport::Sctp { dport, .. } => Some(dport),
            _ => None,
        }
    }

    /// Takes over what the packet this one was rebuilt from (by IP
    /// reassembly) had before byte `before`: its headers there, its VLANs
    /// and its tunnel, so it keys and logs like its fragments.
    pub(crate) fn inherit_context(&mut self, outer: &Packet<'_>, before: usize) {
        for l in outer.layers().iter().take_while(|l| (l.offset as usize) < before) {
            self.push_layer(l.kind, l.ext, l.offset as usize, l.len as usize);
        }
        self.vlans = outer.vlans;
        self.nvlans = outer.nvlans;
        self.tunnel = outer.tunnel;
    }

    pub(crate) fn push_layer(&mut self, kind: LayerKind, ext: u8, offset: usize, len: usize) -> bool {
        if self.nlayers as usize >= MAX_LAYERS {
            return false;
        }
        self.layers[self.nlayers as usize] =
            Layer { kind, ext, len: len.min(u16::MAX as usize) as u16, offset: offset as u32 };
        self.nlayers += 1;
        true
    }

    pub(crate) fn layer_count(&self) -> usize {
        self.nlayers as usize
    }

    pub(crate) fn push_vlan(&mut self, vid: u16) -> bool {
        if self.nvlans as usize >= MAX_VLANS {
            return false;
        }
        self.vlans[self.nvlans as usize] = vid;
        self.nvlans += 1;
        true
    }

    pub(crate) fn vlan_count(&self) -> usize {
        self.nvlans as usize
    }

    pub(crate) fn set_payload(&mut self, offset: usize, len: usize) {
        self.payload_offset = offset as u32;
        self.payload_len = len as u32;
    }
}
