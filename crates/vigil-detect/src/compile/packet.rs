//! Header keywords: checks on fields of the packet's IP, TCP and ICMP headers.

use std::net::IpAddr;
use vigil_decode::{DecodeEvent, LayerKind, Packet, Transport};
use vigil_rules::keywords::packet::{FlagMode, Fragbits, TcpFlags};
use vigil_rules::{IntCmp, Kind, Rule, Value};
use vigil_stream::{StreamEvent, StreamEventSet};
use vigil_types::PerDir;
use vigil_wire::checksum;
use vigil_wire::icmp::Icmp;
use vigil_wire::ipv4::{Ipv4, Ipv4Option};

/// A packet header check.
#[derive(Debug, Clone)]
pub enum PacketCheck {
    Dsize(IntCmp),
    Ttl(IntCmp),
    Tos(IntCmp),
    IpId(IntCmp),
    IpProto(IntCmp),
    Flags(TcpFlags),
    Seq(IntCmp),
    Ack(IntCmp),
    Window(IntCmp),
    /// `tcp.mss`: the MSS option's value (packets without one fail).
    Mss(IntCmp),
    Itype(IntCmp),
    Icode(IntCmp),
    IcmpId(IntCmp),
    IcmpSeq(IntCmp),
    SameIp,
    /// `ipv4-csum`, `tcpv4-csum`, ...: the checksum is (in)valid, computed
    /// here whatever `-k` says.
    Checksum {
        which: Csum,
        valid: bool,
    },
    /// `decode-event`: the decoder raised this event on the packet.
    DecodeEvent(DecodeEvent),
    /// `stream-event`: the stream engine raised this event on the packet.
    StreamEvent(StreamEvent),
    /// `app-layer-event:applayer_*`: protocol detection raised this event
    /// (its bit in [`FlowInfo::detect_events`]) on the packet.
    DetectEvent(u8),
    /// `stream_size`: bytes a side of the TCP session sent, by sequence numbers.
    StreamSize {
        side: SizeSide,
        cmp: IntCmp,
    },
    /// `vlan.id`: the VLAN id at a layer, at any, or at all of them
    /// (packets without a VLAN fail).
    VlanId {
        cmp: IntCmp,
        layer: VlanLayer,
    },
    /// `vlan.layers`: how many VLAN headers the packet has.
    VlanLayers(IntCmp),
    /// `flow.age`: whole seconds since the flow's first packet.
    FlowAge(IntCmp),
    /// `flow.pkts*` (`bytes` false) and `flow.bytes*`: the flow's packets
    /// or bytes so far, this packet included, one way or either way.
    FlowCount {
        bytes: bool,
        dir: CountDir,
        cmp: IntCmp,
    },
    /// `fragbits`: the IPv4 header's reserved (R), don't-fragment (D) and
    /// more-fragments (M) bits.
    Fragbits(Fragbits),
    /// `fragoffset`: the fragment offset field of an IPv4 header or an
    /// IPv6 fragment header (in 8-byte units, as written on the wire).
    FragOffset(IntCmp),
    /// `ipopts`: the IPv4 header carries an option of this type
    /// (`None`: any option).
    IpOpt(Option<u8>),
    /// `tcp.wscale`: the window scale option's shift count.
    Wscale(IntCmp),
    /// `icmpv6.mtu`: the MTU of an ICMPv6 packet-too-big message.
    Icmpv6Mtu(IntCmp),
    /// `l3_proto`: the packet's network layer is IPv6 (`true`) or IPv4.
    L3Ipv6(bool),
    /// `rpc`: the packet's payload is an ONC RPC call of this program (and
    /// version and procedure, where given).
    Rpc {
        prog: u32,
        vers: Option<u32>,
        proc: Option<u32>,
    },
    /// `flow`: direction and state of the packet's flow.
    Flow {
        to_server: Option<bool>,
        established: Option<bool>,
        /// `only_stream` (the packet belongs to a tracked TCP session) or `no_stream`.
        stream: Option<bool>,
    },
}

/// Which way `flow.pkts` and `flow.bytes` count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CountDir {
    ToServer,
    ToClient,
    /// Either direction's count passes.
    Either,
}

/// Which VLAN header(s) `vlan.id` compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VlanLayer {
    /// Any of them matches.
    Any,
    /// Every one must.
    All,
    /// The one at this index: 0 is the outermost, -1 the innermost.
    At(i8),
}

/// Which checksum a `*-csum` keyword checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Csum {
    Ipv4,
    Tcpv4,
    Tcpv6,
    Udpv4,
    Udpv6,
    Icmpv4,
    Icmpv6,
}

/// Which sides of the session `stream_size` compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeSide {
    Server,
    Client,
    Both,
    Either,
}

/// What detection knows about the packet's flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FlowInfo {
    pub to_server: bool,
    pub established: bool,
    /// The stream engine tracks the flow's TCP session.
    pub tracked: bool,
    /// The application protocol detected on the flow.
    pub app_proto: vigil_types::AppProto,
    /// What each direction was detected as, where that is not `app_proto`
    /// (`Unknown` while it is still being detected).
    pub dir_proto: PerDir<DirProto>,
    /// Payload inspection has stopped on this flow (encrypted TLS).
    pub no_payload: bool,
    /// What the stream engine raised on this packet.
    pub stream_events: StreamEventSet,
    /// Per sender, what `stream_size` compares (see
    /// `TcpSession::stream_size`); meaningful only when `tracked`.
    pub stream_size: PerDir<u32>,
    /// Whole seconds between the flow's first packet and this one.
    pub age_secs: u64,
    /// What protocol detection raised on this packet, by [`DETECT_EVENTS`] bit.
    pub detect_events: u8,
    /// The flow's packets and bytes each way, this packet included.
    pub pkts: PerDir<u64>,
    pub bytes: PerDir<u64>,
}

/// What one direction of a flow was detected as, in a byte (detection
/// copies [`FlowInfo`] for every candidate signature): the flow's protocol,
/// or another one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DirProto(u8);

impl DirProto {
    const UNKNOWN: u8 = 1;
    const FAILED: u8 = 2;
    const TABLE: u8 = 3;

    /// `None`: the flow's protocol.
    pub fn of(p: Option<vigil_types::AppProto>) -> DirProto {
        use vigil_types::AppProto;
        DirProto(match p {
            None => 0,
            Some(AppProto::Unknown) => Self::UNKNOWN,
            Some(AppProto::Failed) => Self::FAILED,
            Some(other) => vigil_applayer::proto::index(other.name()).map_or(Self::FAILED, |i| Self::TABLE + i as u8),
        })
    }

    /// The protocol, given the flow's.
    pub fn get(self, flow: vigil_types::AppProto) -> vigil_types::AppProto {
        use vigil_types::AppProto;
        match self.0 {
            0 => flow,
            Self::UNKNOWN => AppProto::Unknown,
            Self::FAILED => AppProto::Failed,
            i => vigil_applayer::protocols::ALL
                .get((i - Self::TABLE) as usize)
                .map_or(AppProto::Failed, |d| d.app_proto()),
        }
    }
}

/// Protocol detection's events a rule can wait for, by bit.
pub const DETECT_EVENTS: [&str; 2] =
    ["applayer_mismatch_protocol_both_directions", "applayer_detect_protocol_only_one_direction"];

/// The bit of a protocol detection event (`app-layer-event` value).
pub fn detect_event_bit(name: &str) -> Option<u8> {
    let name = name.trim();
    DETECT_EVENTS.iter().position(|e| e.eq_ignore_ascii_case(name)).map(|i| 1 << i)
}

pub(super) fn compile(rule: &Rule, missing: &mut Vec<String>) -> Vec<PacketCheck> {
    let mut checks = Vec::new();
    for o in &rule.options {
        let name = o.keyword.canonical;
        match (name, &o.value) {
            ("rpc", Value::Text(t)) => {
                match vigil_rules::keywords::payload::rpc(t) {
                    Ok((prog, vers, proc)) => checks.push(PacketCheck::Rpc { prog, vers, proc }),
                    Err(e) => missing.push(format!("rpc ({})", e.reason)),
                }
                continue;
            }
            ("engine-event", Value::Text(t)) => {
                // The full event name: the last `a.b...` word, its module first.
                let full = t.split_whitespace().last().unwrap_or("").to_ascii_lowercase();
                let decoded =
                    full.strip_prefix("decoder.").and_then(|w| DecodeEvent::ALL.iter().find(|e| e.name() == w));
                let streamed =
                    full.strip_prefix("stream.").and_then(StreamEvent::from_name).filter(|e| e.is_suricata());
                match (decoded, streamed) {
                    (Some(e), _) => checks.push(PacketCheck::DecodeEvent(*e)),
                    (_, Some(e)) => checks.push(PacketCheck::StreamEvent(e)),
                    _ => missing.push(format!("engine-event:{full}")),
                }
                continue;
            }
            ("decode-event", Value::Text(t)) => {
                let wanted = t.trim().strip_prefix("decoder.").unwrap_or(t.trim());
                match DecodeEvent::ALL.iter().find(|e| e.name() == wanted) {
                    Some(e) => checks.push(PacketCheck::DecodeEvent(*e)),
                    None => missing.push(format!("decode-event:{wanted}")),
                }
                continue;
            }
            ("app-layer-event", Value::Text(t)) if detect_event_bit(t).is_some() => {
                checks.extend(detect_event_bit(t).map(PacketCheck::DetectEvent));
                continue;
            }
            ("stream-event", Value::Text(t)) => {
                let wanted = t.trim().strip_prefix("stream.").unwrap_or(t.trim());
                // Events vigil does not raise as Suricata does stay
                // unsupported rather than never (or wrongly) matching.
                match StreamEvent::from_name(wanted).filter(|e| e.is_suricata()) {
                    Some(e) => checks.push(PacketCheck::StreamEvent(e)),
                    None => missing.push(format!("stream-event:{wanted}")),
                }
                continue;
            }
            ("flow.age", Value::Int(c)) => {
                checks.push(PacketCheck::FlowAge(*c));
                continue;
            }
            ("flow.pkts" | "flow.bytes", Value::IntWith(cmp, words)) => {
                let dir = match words.first().map(String::as_str) {
                    Some("toserver") => CountDir::ToServer,
                    Some("toclient") => CountDir::ToClient,
                    _ => CountDir::Either,
                };
                checks.push(PacketCheck::FlowCount { bytes: name == "flow.bytes", dir, cmp: *cmp });
                continue;
            }
            (
                "flow.pkts_toserver" | "flow.pkts_toclient" | "flow.bytes_toserver" | "flow.bytes_toclient",
                Value::Int(cmp),
            ) => {
                let dir = if name.ends_with("toserver") { CountDir::ToServer } else { CountDir::ToClient };
                checks.push(PacketCheck::FlowCount { bytes: name.starts_with("flow.bytes"), dir, cmp: *cmp });
                continue;
            }
            ("stream_size", Value::StreamSize(s)) => {
                let side = match s.side.as_str() {
                    "server" => SizeSide::Server,
                    "client" => SizeSide::Client,
                    "both" => SizeSide::Both,
                    _ => SizeSide::Either,
                };
                checks.push(PacketCheck::StreamSize { side, cmp: s.cmp });
                continue;
            }
            ("flow", Value::Flow(f)) => {
                use vigil_rules::keywords::flow::{FlowDir, FlowState};
                if f.frag.is_some() {
                    missing.push("flow:only_frag/no_frag".into());
                    continue;
                }
                let to_server = f.dir.map(|d| d == FlowDir::ToServer);
                let established = match f.state {
                    Some(FlowState::Established) => Some(true),
                    Some(FlowState::NotEstablished) => Some(false),
                    Some(FlowState::Stateless) | None => None,
                };
                checks.push(PacketCheck::Flow { to_server, established, stream: f.stream });
                continue;
            }
            _ => {}
        }
        if !matches!(o.kind(), Kind::Packet) && name != "dsize" {
            continue;
        }
        let check = match (name, &o.value) {
            ("dsize", Value::Int(c)) => PacketCheck::Dsize(*c),
            ("ttl", Value::Int(c)) => PacketCheck::Ttl(*c),
            ("tos", Value::Int(c)) => PacketCheck::Tos(*c),
            ("id", Value::Int(c)) => PacketCheck::IpId(*c),
            ("ip_proto", Value::Int(c)) => PacketCheck::IpProto(*c),
            ("ip_proto", Value::Text(t)) => match proto_number(t) {
                Some(c) => PacketCheck::IpProto(c),
                None => {
                    missing.push(format!("ip_proto:{t}"));
                    continue;
                }
            },
            ("flags", Value::Flags(f)) => PacketCheck::Flags(*f),
            ("tcp.mss", Value::Int(c)) => PacketCheck::Mss(*c),
            ("tcp.wscale", Value::Int(c)) => PacketCheck::Wscale(*c),
            ("icmpv6.mtu", Value::Int(c)) => PacketCheck::Icmpv6Mtu(*c),
            ("fragbits", Value::Fragbits(f)) => PacketCheck::Fragbits(*f),
            ("fragoffset", Value::Int(c)) => PacketCheck::FragOffset(*c),
            ("ipopts", Value::Text(t)) => PacketCheck::IpOpt(ipopt_kind(t)),
            ("l3_proto", Value::Text(t)) => match t.as_str() {
                "ipv4" => PacketCheck::L3Ipv6(false),
                "ipv6" => PacketCheck::L3Ipv6(true),
                _ => {
                    missing.push(format!("l3_proto:{t}"));
                    continue;
                }
            },
            ("vlan.id", Value::Int(c)) => PacketCheck::VlanId { cmp: *c, layer: VlanLayer::Any },
            ("vlan.id", Value::IntWith(c, words)) => {
                let layer = match words.as_slice() {
                    [w] if w == "all" => Some(VlanLayer::All),
                    [w] if w == "any" => Some(VlanLayer::Any),
                    [w] => w.parse::<i8>().ok().filter(|i| (-3..=2).contains(i)).map(VlanLayer::At),
                    _ => None,
                };
                match layer {
                    Some(layer) => PacketCheck::VlanId { cmp: *c, layer },
                    None => {
                        missing.push(format!("vlan.id layer {}", words.join(",")));
                        continue;
                    }
                }
            }
            ("vlan.layers", Value::Int(c)) => PacketCheck::VlanLayers(*c),
            ("seq", Value::Int(c)) => PacketCheck::Seq(*c),
            ("ack", Value::Int(c)) => PacketCheck::Ack(*c),
            ("window", Value::Int(c)) => PacketCheck::Window(*c),
            ("itype", Value::Int(c)) => PacketCheck::Itype(*c),
            ("icode", Value::Int(c)) => PacketCheck::Icode(*c),
            ("icmp_id", Value::Int(c)) => PacketCheck::IcmpId(*c),
            ("icmp_seq", Value::Int(c)) => PacketCheck::IcmpSeq(*c),
            ("sameip", _) => PacketCheck::SameIp,
            // Compiled with the signature, against the run's reputation data.
            ("iprep", _) => continue,
            (csum, Value::Text(v)) if csum.ends_with("-csum") && csum != "igmp-csum" => {
                let which = match csum {
                    "ipv4-csum" => Csum::Ipv4,
                    "tcpv4-csum" => Csum::Tcpv4,
                    "tcpv6-csum" => Csum::Tcpv6,
                    "udpv4-csum" => Csum::Udpv4,
                    "udpv6-csum" => Csum::Udpv6,
                    "icmpv4-csum" => Csum::Icmpv4,
                    _ => Csum::Icmpv6,
                };
                PacketCheck::Checksum { which, valid: v == "valid" }
            }
            _ => {
                missing.push(o.keyword.canonical.to_string());
                continue;
            }
        };
        checks.push(check);
    }
    checks
}

/// The option type `ipopts` names; `None` for `any`.
fn ipopt_kind(name: &str) -> Option<u8> {
    Some(match name {
        "eol" => 0,
        "nop" => 1,
        "rr" => 7,
        "ts" => 68,
        "sec" => 130,
        "lsrr" => 131,
        // Snort's loose source route "with error", its own option type.
        "lsrre" => 132,
        "esec" => 133,
        "satid" => 136,
        "ssrr" => 137,
        "qs" => 25,
        "cipso" => 134,
        "rtralt" => 148,
        _ => return None,
    })
}

/// An `ip_proto` name (`!` before it negates).
fn proto_number(name: &str) -> Option<IntCmp> {
    let (neg, name) = match name.strip_prefix('!') {
        Some(n) => (true, n.trim()),
        None => (false, name),
    };
    let n = u64::from(vigil_rules::keywords::packet::ip_proto_number(name)?);
    Some(if neg { IntCmp::Ne(n) } else { IntCmp::Eq(n) })
}

impl PacketCheck {
    /// True when the packet passes the check; a field the packet lacks fails it.
    pub fn matches(&self, p: &Packet<'_>, flow: Option<FlowInfo>) -> bool {
        let tcp = match p.transport {
            Transport::Tcp { flags, seq, ack, window, .. } => Some((flags, seq, ack, window)),
            _ => None,
        };
        let icmp = match p.transport {
            Transport::Icmp { kind, code } => Some((kind, code)),
            _ => None,
        };
        match self {
            PacketCheck::Dsize(c) => {
                let len = p.payload().len() as u64;
                // Suricata gives these forms a "requires payload" mask, so a
                // packet without payload never matches them, `dsize:!9` included.
                let needs_payload = matches!(c, IntCmp::Ne(_) | IntCmp::Gt(_) | IntCmp::Ge(_) | IntCmp::Range(..));
                (len > 0 || !needs_payload) && c.matches(len)
            }
            PacketCheck::Ttl(c) => p.ip.is_some_and(|ip| c.matches(ip.ttl as u64)),
            PacketCheck::Tos(c) => ipv4(p).is_some_and(|ip| c.matches(ip.tos() as u64)),
            PacketCheck::IpId(c) => ipv4(p).is_some_and(|ip| c.matches(ip.ident() as u64)),
            PacketCheck::IpProto(c) => p.ip.is_some() && c.matches(p.proto as u64),
            PacketCheck::Flags(f) => tcp.is_some_and(|t| flags_match(f, t.0)),
            PacketCheck::Seq(c) => tcp.is_some_and(|t| c.matches(t.1 as u64)),
            PacketCheck::Ack(c) => tcp.is_some_and(|t| c.matches(t.2 as u64)),
            PacketCheck::Window(c) => tcp.is_some_and(|t| c.matches(t.3 as u64)),
            PacketCheck::Mss(c) => mss(p).is_some_and(|m| c.matches(m as u64)),
            PacketCheck::Itype(c) => icmp.is_some_and(|i| c.matches(i.0 as u64)),
            PacketCheck::Icode(c) => icmp.is_some_and(|i| c.matches(i.1 as u64)),
            PacketCheck::IcmpId(c) => echo(p).is_some_and(|h| c.matches(h.ident() as u64)),
            PacketCheck::IcmpSeq(c) => echo(p).is_some_and(|h| c.matches(h.seq() as u64)),
            PacketCheck::SameIp => p.ip.is_some_and(|ip| ip.src == ip.dst),
            PacketCheck::VlanId { cmp, layer } => {
                let ids = p.vlans();
                let ok = |id: &u16| cmp.matches(u64::from(*id));
                match layer {
                    _ if ids.is_empty() => false,
                    VlanLayer::Any => ids.iter().any(ok),
                    VlanLayer::All => ids.iter().all(ok),
                    VlanLayer::At(i) => {
                        let at = if *i < 0 { ids.len() as i64 + i64::from(*i) } else { i64::from(*i) };
                        usize::try_from(at).ok().and_then(|at| ids.get(at)).is_some_and(ok)
                    }
                }
            }
            PacketCheck::VlanLayers(c) => c.matches(p.vlans().len() as u64),
            PacketCheck::FlowAge(c) => flow.is_some_and(|f| c.matches(f.age_secs)),
            PacketCheck::FlowCount { bytes, dir, cmp } => flow.is_some_and(|f| {
                let n = if *bytes { f.bytes } else { f.pkts };
                match dir {
                    CountDir::ToServer => cmp.matches(n.to_server),
                    CountDir::ToClient => cmp.matches(n.to_client),
                    CountDir::Either => cmp.matches(n.to_server) || cmp.matches(n.to_client),
                }
            }),
            PacketCheck::Fragbits(f) => ipv4(p).is_some_and(|ip| {
                let v = u8::from(ip.more_fragments())
                    | u8::from(ip.dont_fragment()) << 1
                    | u8::from(ip.reserved_flag()) << 2;
                match f.mode {
                    // Unlike `flags`, Suricata's `+` here wants another bit besides.
                    FlagMode::All => v & f.bits == f.bits && v != f.bits,
                    mode => flags_match(&TcpFlags { mode, bits: f.bits, ignore: 0 }, v),
                }
            }),
            PacketCheck::FragOffset(c) => frag_offset(p).is_some_and(|o| c.matches(u64::from(o))),
            PacketCheck::IpOpt(kind) => ipv4(p).is_some_and(|ip| {
                ip.options().any(|o| match (o, kind) {
                    (Ipv4Option::EndOfList, Some(0)) | (Ipv4Option::Nop, Some(1)) => true,
                    (Ipv4Option::Tlv { kind: k, .. } | Ipv4Option::BadLength { kind: k }, Some(want)) => k == *want,
                    (_, None) => true,
                    _ => false,
                })
            }),
            // A shift above RFC 7323's 14 reads as 0, as in Suricata.
            PacketCheck::Wscale(c) => tcp_option(p, vigil_wire::tcp::option_kind::WSCALE)
                .and_then(|d| d.first().copied())
                .is_some_and(|w| c.matches(if w > 14 { 0 } else { u64::from(w) })),
            PacketCheck::Icmpv6Mtu(c) => icmpv6_mtu(p).is_some_and(|m| c.matches(u64::from(m))),
            PacketCheck::L3Ipv6(v6) => p.ip.is_some_and(|ip| ip.src.is_ipv6() == *v6),
            PacketCheck::Rpc { prog, vers, proc } => {
                // Over TCP the call follows a 4-byte record mark.
                let call = match p.transport {
                    Transport::Tcp { .. } => p.payload().get(4..).filter(|_| p.payload().len() >= 28),
                    Transport::Udp { .. } => Some(p.payload()).filter(|b| b.len() >= 24),
                    _ => None,
                };
                // xid, message type (0: a call), RPC version, program, version, procedure.
                call.is_some_and(|c| {
                    let mut x = vigil_applayer::codecs::rpc::Xdr::new(c);
                    let h: [Option<u32>; 6] = std::array::from_fn(|_| x.u32());
                    h[1] == Some(0)
                        && h[3] == Some(*prog)
                        && vers.is_none_or(|v| h[4] == Some(v))
                        && proc.is_none_or(|v| h[5] == Some(v))
                })
            }
            PacketCheck::Checksum { which, valid } => checksum_ok(p, *which) == Some(*valid),
            PacketCheck::DecodeEvent(e) => p.events.contains(*e),
            PacketCheck::StreamEvent(e) => flow.is_some_and(|f| f.stream_events.contains(*e)),
            PacketCheck::DetectEvent(bit) => flow.is_some_and(|f| f.detect_events & bit != 0),
            PacketCheck::StreamSize { side, cmp } => {
                // Suricata needs a TCP packet of a session it tracks.
                let Some(f) = flow.filter(|f| f.tracked && tcp.is_some()) else { return false };
                let server = cmp.matches(f.stream_size.to_client as u64);
                let client = cmp.matches(f.stream_size.to_server as u64);
                match side {
                    SizeSide::Server => server,
                    SizeSide::Client => client,
                    SizeSide::Both => server && client,
                    SizeSide::Either => server || client,
                }
            }
            PacketCheck::Flow { to_server, established, stream } => flow.is_some_and(|f| {
                to_server.is_none_or(|d| d == f.to_server)
                    && established.is_none_or(|e| e == f.established)
                    && (*stream != Some(true) || f.tracked)
            }),
        }
    }
}

/// Whether the checksum a keyword names is right; `None` when the packet
/// has no such header.
fn checksum_ok(p: &Packet<'_>, which: Csum) -> Option<bool> {
    let ip = p.ip?;
    let l4 = |kind: LayerKind| {
        let l = p.layers().iter().rev().find(|l| l.kind == kind)?;
        p.data.get(l.offset as usize..(ip.offset + ip.len) as usize)
    };
    let v4 = match (ip.src, ip.dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => Some((s.octets(), d.octets())),
        _ => None,
    };
    let v6 = match (ip.src, ip.dst) {
        (IpAddr::V6(s), IpAddr::V6(d)) => Some((s.octets(), d.octets())),
        _ => None,
    };
    Some(match which {
        Csum::Ipv4 => checksum::verify(ipv4(p)?.header()),
        Csum::Tcpv4 => checksum::verify_l4_v4(v4?.0, v4?.1, 6, l4(LayerKind::Tcp)?),
        Csum::Tcpv6 => checksum::verify_l4_v6(v6?.0, v6?.1, 6, l4(LayerKind::Tcp)?),
        Csum::Udpv4 => {
            let seg = l4(LayerKind::Udp)?;
            // An all-zero UDP checksum over IPv4 means "not computed" (RFC 768).
            seg.get(6..8) == Some(&[0, 0]) || checksum::verify_l4_v4(v4?.0, v4?.1, 17, seg)
        }
        Csum::Udpv6 => checksum::verify_l4_v6(v6?.0, v6?.1, 17, l4(LayerKind::Udp)?),
        Csum::Icmpv4 => {
            v4?;
            checksum::verify(l4(LayerKind::Icmpv4)?)
        }
        Csum::Icmpv6 => checksum::verify_l4_v6(v6?.0, v6?.1, 58, l4(LayerKind::Icmpv6)?),
    })
}

fn ipv4<'a>(p: &Packet<'a>) -> Option<Ipv4<'a>> {
    let ip = p.ip?;
    if !ip.src.is_ipv4() {
        return None;
    }
    Ipv4::header_only(p.data.get(ip.offset as usize..)?).ok()
}

/// The value of the TCP header's MSS option.
fn mss(p: &Packet<'_>) -> Option<u16> {
    match tcp_option(p, vigil_wire::tcp::option_kind::MSS)? {
        [a, b] => Some(u16::from_be_bytes([*a, *b])),
        _ => None,
    }
}

/// The data of the TCP header's first option of this kind.
fn tcp_option<'a>(p: &Packet<'a>, want: u8) -> Option<&'a [u8]> {
    let l = p.layers().iter().rev().find(|l| l.kind == LayerKind::Tcp)?;
    let h = vigil_wire::tcp::Tcp::new_checked(p.data.get(l.offset as usize..)?).ok()?;
    h.options().find_map(|o| match o {
        vigil_wire::tcp::TcpOption::Tlv { kind, data } if kind == want => Some(data),
        _ => None,
    })
}

/// The fragment offset field (8-byte units) of the IPv4 header, or of the
/// IPv6 fragment header; `None` for an IPv6 packet without one.
fn frag_offset(p: &Packet<'_>) -> Option<u16> {
    if let Some(ip) = ipv4(p) {
        return Some(ip.frag_offset());
    }
    let l = p.layers().iter().rev().find(|l| l.kind == LayerKind::Ipv6Ext && l.ext == 44)?;
    let h = p.data.get(l.offset as usize..l.offset as usize + 4)?;
    Some(u16::from_be_bytes([h[2], h[3]]) >> 3)
}

/// The MTU field of an ICMPv6 packet-too-big message (type 2).
fn icmpv6_mtu(p: &Packet<'_>) -> Option<u32> {
    let l = p.layers().iter().rev().find(|l| l.kind == LayerKind::Icmpv6)?;
    let h = p.data.get(l.offset as usize..l.offset as usize + 8)?;
    (h[0] == 2 && h[1] == 0).then(|| u32::from_be_bytes([h[4], h[5], h[6], h[7]]))
}

/// The ICMP header of an echo request or reply (the only messages with id and sequence).
fn echo<'a>(p: &Packet<'a>) -> Option<Icmp<'a>> {
    let l = p.layers().iter().rev().find(|l| matches!(l.kind, LayerKind::Icmpv4 | LayerKind::Icmpv6))?;
    let h = Icmp::new_checked(p.data.get(l.offset as usize..)?).ok()?;
    matches!(h.kind(), 0 | 8 | 128 | 129).then_some(h)
}

/// Suricata's `flags` semantics: the ignore mask is removed first; exact,
/// all-of (`+`), any-of (`*`) or none-of (`!`).
fn flags_match(f: &TcpFlags, flags: u8) -> bool {
    let v = flags & !f.ignore;
    match f.mode {
        FlagMode::Exact => v == f.bits,
        FlagMode::All => v & f.bits == f.bits,
        FlagMode::Any => v & f.bits != 0 || f.bits == 0,
        FlagMode::Not => v & f.bits != f.bits,
    }
}
