//! The dispatch loop: each step decodes one header and names the next
//! protocol; only this loop recurses, so the layer cap lives in one place.

use crate::config::DecodeConfig;
use crate::counters::{Counter, DecodeCounters};
use crate::event::DecodeEvent;
use crate::packet::{LayerKind, Packet, TunnelInfo, MAX_LAYERS};
use vigil_types::{LinkType, Timestamp};

/// What follows the header just decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Next {
    Done,
    Ethernet,
    EtherType(u16),
    Ipv4,
    Ipv6,
    /// Raw IP: the version nibble decides.
    RawIp,
    /// An upper-layer protocol after an IPv4 or IPv6 header.
    IpProto(u8),
    Ppp,
    Mpls,
    ErspanII,
    ErspanIII,
    Vxlan,
    Geneve,
    Teredo,
}

/// One step's result: the next protocol and the byte range it occupies.
pub(crate) type Step = (Next, usize, usize);

/// Decodes frames. One per worker: it owns that worker's counters.
#[derive(Debug, Clone)]
pub struct Decoder {
    cfg: DecodeConfig,
    pub counters: DecodeCounters,
}

/// The state of one packet's walk.
pub(crate) struct Walk<'p, 'a> {
    pub cfg: &'p DecodeConfig,
    pub c: &'p mut DecodeCounters,
    pub p: &'p mut Packet<'a>,
    /// The IP version of the innermost IP header seen so far (4 or 6).
    pub ip_version: u8,
    /// Set when a tunnel payload is about to be decoded: the next IP header is
    /// an inner one and the current outer header becomes its tunnel parent.
    pub entering_tunnel: bool,
}

impl Decoder {
    pub fn new(mut cfg: DecodeConfig) -> Self {
        cfg.max_layers = cfg.max_layers.clamp(1, MAX_LAYERS);
        Decoder { cfg, counters: DecodeCounters::default() }
    }

    pub fn config(&self) -> &DecodeConfig {
        &self.cfg
    }

    /// Turns checksum validation on or off from the next packet on
    /// (Suricata's `auto` mode switches it off once offloading is evident).
    pub fn set_validate_checksums(&mut self, on: bool) {
        self.cfg.validate_checksums = on;
    }

    /// Decodes one captured frame. Never fails: what cannot be decoded is
    /// recorded as events and the `invalid` flag.
    #[inline]
    pub fn decode<'a>(&mut self, data: &'a [u8], ts: Timestamp, linktype: LinkType, pcap_cnt: u64) -> Packet<'a> {
        let mut p = Packet::new(data, ts, linktype, pcap_cnt);
        self.counters.incr(Counter::Pkts);
        self.counters.add(Counter::Bytes, data.len() as u64);
        self.counters.packet_size(data.len() as u64);
        {
            let mut w =
                Walk { cfg: &self.cfg, c: &mut self.counters, p: &mut p, ip_version: 0, entering_tunnel: false };
            w.run(linktype);
        }
        if p.invalid {
            self.counters.incr(Counter::Invalid);
        }
        for e in p.events.iter() {
            self.counters.event(e);
        }
        p
    }
}

impl Decoder {
    /// Decodes a datagram rebuilt by IP reassembly. `data` is the frame of
    /// the fragment that completed it (`outer`) up to that fragment's IP
    /// header, followed by the whole datagram: the headers before the IP
    /// header are taken over from `outer` as they are (same bytes, same
    /// offsets), with its time, capture number, link type, VLANs and
    /// tunnel, and decoding resumes at the IP header. (A datagram alone,
    /// with `outer` a raw IP packet, works too.)
    ///
    /// It is not a captured frame, so the capture counters (`pkts`,
    /// `bytes`, packet sizes, link types) are left alone.
    pub fn decode_reassembled<'a>(&mut self, data: &'a [u8], outer: &Packet<'_>) -> Packet<'a> {
        let at = outer.ip.map_or(0, |ip| ip.offset as usize).min(data.len());
        let mut p = Packet::new(data, outer.ts, outer.linktype, outer.pcap_cnt);
        p.inherit_context(outer, at);
        p.src = crate::packet::PacketSource::Defrag;
        let step = match data.get(at).map(|b| b >> 4) {
            Some(6) => (Next::Ipv6, at, data.len()),
            _ => (Next::Ipv4, at, data.len()),
        };
        {
            let mut w =
                Walk { cfg: &self.cfg, c: &mut self.counters, p: &mut p, ip_version: 0, entering_tunnel: false };
            w.walk_from(step);
        }
        if p.invalid {
            self.counters.incr(Counter::Invalid);
        }
        for e in p.events.iter() {
            self.counters.event(e);
        }
        p
    }
}

impl<'p, 'a> Walk<'p, 'a> {
    fn run(&mut self, linktype: LinkType) {
        let end = self.p.data.len();
        let step: Step = match linktype {
            LinkType::Ethernet => (Next::Ethernet, 0, end),
            LinkType::Raw => {
                self.c.incr(Counter::Raw);
                (Next::RawIp, 0, end)
            }
            LinkType::Ipv4 => {
                self.c.incr(Counter::Raw);
                (Next::Ipv4, 0, end)
            }
            LinkType::Ipv6 => {
                self.c.incr(Counter::Raw);
                (Next::Ipv6, 0, end)
            }
            LinkType::Null => self.null(0, end),
            LinkType::LinuxSll => self.sll(0, end),
            LinkType::LinuxSll2 => self.sll2(0, end),
            LinkType::Ppp => (Next::Ppp, 0, end),
            LinkType::CiscoHdlc => self.chdlc(0, end),
            LinkType::Other(_) => (Next::Done, 0, end),
        };
        self.walk_from(step);
    }

    fn walk_from(&mut self, mut step: Step) {
        loop {
            let (next, at, end) = step;
            step = match next {
                Next::Done => return,
                Next::Ethernet => self.ethernet(at, end),
                Next::EtherType(t) => self.ethertype(t, at, end),
                Next::RawIp => self.raw_ip(at, end),
                Next::Ipv4 => self.ipv4(at, end),
                Next::Ipv6 => self.ipv6(at, end),
                Next::IpProto(proto) => self.ip_proto(proto, at, end),
                Next::Ppp => self.ppp(at, end),
                Next::Mpls => self.mpls(at, end),
                Next::ErspanII => self.erspan(2, at, end),
                Next::ErspanIII => self.erspan(3, at, end),
                Next::Vxlan => self.vxlan(at, end),
                Next::Geneve => self.geneve(at, end),
                Next::Teredo => self.teredo(at, end),
            };
        }
    }

    pub(crate) fn bytes(&self, at: usize, end: usize) -> &'a [u8] {
        self.p.data.get(at..end).unwrap_or(&[])
    }

    pub(crate) fn event(&mut self, e: DecodeEvent) {
        self.p.events.push(e);
    }

    /// Records an event that stops decoding and marks the packet invalid.
    pub(crate) fn invalid(&mut self, e: DecodeEvent) -> Step {
        self.p.events.push(e);
        self.p.invalid = true;
        (Next::Done, 0, 0)
    }

    /// Records a header, refusing the packet once `decoder.max-layers` is reached.
    pub(crate) fn layer(&mut self, kind: LayerKind, at: usize, len: usize) -> bool {
        self.layer_ext(kind, 0, at, len)
    }

    /// [`Walk::layer`] for an IPv6 extension header, which also records its protocol number.
    pub(crate) fn layer_ext(&mut self, kind: LayerKind, ext: u8, at: usize, len: usize) -> bool {
        if self.p.layer_count() >= self.cfg.max_layers || !self.p.push_layer(kind, ext, at, len) {
            if !self.p.invalid {
                self.c.incr(Counter::TooManyLayers);
            }
            self.p.invalid = true;
            return false;
        }
        true
    }

    /// Marks that what follows is carried inside the current IP datagram.
    pub(crate) fn tunnel_payload(&mut self) {
        self.entering_tunnel = true;
    }

    /// Called by an IP step before it overwrites the packet's IP info: moves the
    /// outer header into `tunnel` when a tunnel was entered.
    pub(crate) fn begin_ip(&mut self) {
        if !self.entering_tunnel {
            return;
        }
        self.entering_tunnel = false;
        if let Some(outer) = self.p.ip {
            let depth = self.p.tunnel.map_or(1, |t| t.depth.saturating_add(1));
            self.p.tunnel = Some(TunnelInfo {
                src: outer.src,
                dst: outer.dst,
                proto: self.p.proto,
                sport: self.p.sport(),
                dport: self.p.dport(),
                depth,
            });
            self.p.transport = crate::packet::Transport::None;
            self.p.proto = 0;
        }
    }
}
