//! Live capture from a Linux interface through AF_PACKET: a TPACKET_V3
//! memory-mapped ring (or plain `recvfrom` without mmap), joined to a
//! `PACKET_FANOUT` group so the kernel spreads packets over several sockets,
//! one per worker, by a symmetric flow hash (or round robin, CPU, queue,
//! rollover). The kernel's own counters (received, dropped because the ring
//! was full, queue freezes) are read cumulatively.
//!
//! ```no_run
//! use std::time::Duration;
//! use vigil_capture::{AfPacket, AfPacketConfig};
//! let mut cap = AfPacket::open(&AfPacketConfig::new("eth0")).unwrap();
//! while let Some(frame) = cap.next(Duration::from_millis(100)).unwrap() {
//!     println!("{} bytes", frame.raw.data.len());
//! }
//! println!("{:?}", cap.stats());
//! ```

mod bpf;
mod bpf_vm;
mod ring;
mod sys;

pub use bpf::{compile_bpf, BpfInsn};
pub use bpf_vm::bpf_accepts;

use crate::RawPacket;
use ring::Ring;
use std::fmt;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use vigil_types::{LinkType, Timestamp};

/// How the kernel spreads a fanout group's packets over its sockets
/// (Suricata's `cluster-type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FanoutKind {
    /// `cluster_flow`: by the kernel's flow hash, both directions alike.
    Hash,
    /// `cluster_round_robin`: in turn.
    Lb,
    /// `cluster_cpu`: by the CPU that received the packet.
    Cpu,
    /// `cluster_qm`: by the NIC's receive queue.
    Qm,
    /// `cluster_rollover`: fill one socket, then the next.
    Rollover,
}

impl FanoutKind {
    /// Suricata's `cluster-type` names (and the kernel's short names).
    pub fn parse(name: &str) -> Option<FanoutKind> {
        Some(match name {
            "cluster_flow" | "hash" => FanoutKind::Hash,
            "cluster_round_robin" | "lb" => FanoutKind::Lb,
            "cluster_cpu" | "cpu" => FanoutKind::Cpu,
            "cluster_qm" | "qm" => FanoutKind::Qm,
            "cluster_rollover" | "rollover" => FanoutKind::Rollover,
            _ => return None,
        })
    }

    fn kernel(self) -> u32 {
        match self {
            FanoutKind::Hash => libc::PACKET_FANOUT_HASH,
            FanoutKind::Lb => libc::PACKET_FANOUT_LB,
            FanoutKind::Cpu => libc::PACKET_FANOUT_CPU,
            FanoutKind::Qm => libc::PACKET_FANOUT_QM,
            FanoutKind::Rollover => libc::PACKET_FANOUT_ROLLOVER,
        }
    }
}

/// A fanout group to join (`cluster-id`, `cluster-type`, `defrag`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fanout {
    pub id: u16,
    pub kind: FanoutKind,
    /// Reassemble IP fragments before hashing, so every fragment of a
    /// datagram reaches the same socket.
    pub defrag: bool,
}

/// How to open one capture socket.
#[derive(Debug, Clone)]
pub struct AfPacketConfig {
    pub iface: String,
    pub fanout: Option<Fanout>,
    /// `use-mmap`: a TPACKET_V3 ring; else one `recvfrom` per packet.
    pub use_mmap: bool,
    /// `mmap-locked`: lock the ring in memory.
    pub mmap_locked: bool,
    /// `ring-size`: frames the ring holds.
    pub ring_frames: u32,
    /// `block-size`: bytes per ring block (a multiple of the page size).
    pub block_size: u32,
    /// `block-timeout`: ms after which a part-filled block is handed over.
    pub block_timeout_ms: u32,
    /// Bytes kept of each frame (`snaplen`).
    pub snaplen: u32,
    /// Put the interface in promiscuous mode while the socket is open.
    pub promisc: bool,
    /// `buffer-size`: the socket receive buffer without mmap (bytes; 0 = default).
    pub buffer_size: u32,
    /// A compiled BPF program (`bpf-filter`), attached before the ring fills.
    pub bpf: Option<Vec<BpfInsn>>,
    /// Skip frames the host itself sent (for an inline bridge, whose own
    /// forwarded frames would come back).
    pub ignore_outgoing: bool,
}

impl AfPacketConfig {
    /// Suricata's defaults for one interface, no fanout.
    pub fn new(iface: &str) -> Self {
        AfPacketConfig {
            iface: iface.to_string(),
            fanout: None,
            use_mmap: true,
            mmap_locked: false,
            ring_frames: 2048,
            // Big enough for a 64 KiB GSO frame (veth and loopback pass them unsegmented).
            block_size: 128 * 1024,
            block_timeout_ms: 10,
            snaplen: 65535,
            promisc: true,
            buffer_size: 0,
            bpf: None,
            ignore_outgoing: false,
        }
    }
}

/// Why a capture socket could not be opened or read.
#[derive(Debug)]
pub struct AfPacketError {
    pub iface: String,
    /// What was being done (`"bind"`, `"PACKET_FANOUT"`, ...).
    pub what: &'static str,
    pub source: io::Error,
}

impl fmt::Display for AfPacketError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "af-packet {}: {}: {}", self.iface, self.what, self.source)?;
        if self.source.raw_os_error() == Some(libc::EPERM) {
            f.write_str(" (live capture needs root or CAP_NET_RAW)")?;
        }
        Ok(())
    }
}

impl std::error::Error for AfPacketError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// The kernel's counters for one socket, since it was opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KernelStats {
    /// Frames that reached the socket (`tp_packets`, drops included).
    pub packets: u64,
    /// Frames lost because the ring or buffer was full (`tp_drops`).
    pub drops: u64,
    /// Times the ring froze its queue (`tp_freeze_q_cnt`, TPACKET_V3 only).
    pub freeze_q: u64,
}

/// One captured frame.
#[derive(Debug, Clone, Copy)]
pub struct LiveFrame<'a> {
    pub raw: RawPacket<'a>,
    /// The kernel has not filled in the checksums (an outgoing frame with
    /// offload, or a veth): they must not be validated.
    pub csum_not_ready: bool,
}

enum Rx {
    Ring(Box<Ring>),
    /// Without mmap: the receive buffer.
    Recv(Vec<u8>),
}

/// An open capture socket on one interface.
pub struct AfPacket {
    fd: OwnedFd,
    iface: String,
    linktype: LinkType,
    rx: Rx,
    v3: bool,
    stats: KernelStats,
    ignore_outgoing: bool,
    /// A frame rebuilt with the VLAN tag the kernel took off.
    scratch: Vec<u8>,
}

impl AfPacket {
    /// Opens a socket on `cfg.iface`: binds it, sets up the ring, joins the
    /// fanout group, sets promiscuous mode and the filter.
    pub fn open(cfg: &AfPacketConfig) -> Result<AfPacket, AfPacketError> {
        let err = |what: &'static str| {
            let iface = cfg.iface.clone();
            move |source: io::Error| AfPacketError { iface, what, source }
        };
        let ifindex = sys::if_index(&cfg.iface).map_err(err("no such interface"))?;
        let fd = sys::packet_socket().map_err(err("socket"))?;
        let linktype = match sys::hw_type(&fd, &cfg.iface).map_err(err("SIOCGIFHWADDR"))? {
            libc::ARPHRD_ETHER | libc::ARPHRD_LOOPBACK => LinkType::Ethernet,
            libc::ARPHRD_NONE | libc::ARPHRD_TUNNEL | libc::ARPHRD_IPGRE => LinkType::Raw,
            libc::ARPHRD_PPP => LinkType::Raw,
            other => LinkType::Other(u32::from(other)),
        };
        // The filter goes on before the socket is bound, so no unfiltered frame slips in.
        if let Some(prog) = &cfg.bpf {
            bpf::attach(&fd, prog).map_err(err("SO_ATTACH_FILTER"))?;
        }
        let rx = if cfg.use_mmap {
            let version = libc::tpacket_versions::TPACKET_V3 as libc::c_int;
            sys::set_opt(&fd, libc::SOL_PACKET, libc::PACKET_VERSION, &version).map_err(err("TPACKET_V3"))?;
            let (req, blocks) = ring_request(cfg);
            sys::set_opt(&fd, libc::SOL_PACKET, libc::PACKET_RX_RING, &req).map_err(err("PACKET_RX_RING"))?;
            let ring = Ring::map(&fd, req.tp_block_size as usize, blocks, cfg.mmap_locked).map_err(err("mmap"))?;
            Rx::Ring(Box::new(ring))
        } else {
            if cfg.buffer_size > 0 {
                let size = cfg.buffer_size as libc::c_int;
                // FORCE passes rmem_max as root; without the privilege the plain option is capped, not refused.
                if sys::set_opt(&fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, &size).is_err() {
                    sys::set_opt(&fd, libc::SOL_SOCKET, libc::SO_RCVBUF, &size).map_err(err("SO_RCVBUF"))?;
                }
            }
            Rx::Recv(vec![0; cfg.snaplen.clamp(1514, 262_144) as usize])
        };
        sys::bind(&fd, ifindex).map_err(err("bind"))?;
        if cfg.promisc {
            let mreq = libc::packet_mreq {
                mr_ifindex: ifindex,
                mr_type: libc::PACKET_MR_PROMISC as u16,
                mr_alen: 0,
                mr_address: [0; 8],
            };
            sys::set_opt(&fd, libc::SOL_PACKET, libc::PACKET_ADD_MEMBERSHIP, &mreq).map_err(err("promiscuous mode"))?;
        }
        if let Some(f) = cfg.fanout {
            let mut kind = f.kind.kernel();
            if f.defrag {
                kind |= libc::PACKET_FANOUT_FLAG_DEFRAG;
            }
            let arg: u32 = u32::from(f.id) | (kind << 16);
            sys::set_opt(&fd, libc::SOL_PACKET, libc::PACKET_FANOUT, &arg).map_err(err("PACKET_FANOUT"))?;
        }
        let mut cap = AfPacket {
            fd,
            iface: cfg.iface.clone(),
            linktype,
            rx,
            v3: cfg.use_mmap,
            stats: KernelStats::default(),
            ignore_outgoing: cfg.ignore_outgoing,
            scratch: Vec::new(),
        };
        // Reading the counters resets them: start from zero at open.
        cap.stats();
        Ok(cap)
    }

    pub fn iface(&self) -> &str {
        &self.iface
    }

    /// Whether a frame may be waiting (a cheap look, no system call with a ring).
    pub fn ready(&mut self) -> bool {
        match &mut self.rx {
            Rx::Ring(ring) => ring.poll_block(),
            Rx::Recv(_) => sys::wait_readable(self.fd.as_raw_fd(), Duration::ZERO).unwrap_or(false),
        }
    }

    pub fn linktype(&self) -> LinkType {
        self.linktype
    }

    /// The next frame, waiting up to `timeout`; `None` when none came.
    pub fn next(&mut self, timeout: Duration) -> Result<Option<LiveFrame<'_>>, AfPacketError> {
        let fd = self.fd.as_raw_fd();
        let err = |what: &'static str, iface: &str| {
            let iface = iface.to_string();
            move |source: io::Error| AfPacketError { iface, what, source }
        };
        match &mut self.rx {
            Rx::Ring(ring) => {
                let mut waited = false;
                let h = loop {
                    if !ring.poll_block() {
                        if waited {
                            return Ok(None);
                        }
                        sys::wait_readable(fd, timeout).map_err(err("poll", &self.iface))?;
                        waited = true;
                        continue;
                    }
                    match ring.peek() {
                        None => continue,
                        Some(h) if self.ignore_outgoing && h.pkttype == libc::PACKET_OUTGOING => ring.skip(&h),
                        Some(h) => break h,
                    }
                };
                let data = ring.take(&h);
                let ts = Timestamp::from_secs_nanos(i64::from(h.sec), h.nsec);
                let csum_not_ready = h.status & libc::TP_STATUS_CSUMNOTREADY != 0;
                let (data, orig_len) =
                    if h.status & libc::TP_STATUS_VLAN_VALID != 0 && self.linktype == LinkType::Ethernet {
                        let tpid = if h.status & libc::TP_STATUS_VLAN_TPID_VALID != 0 { h.vlan_tpid } else { 0x8100 };
                        with_vlan(&mut self.scratch, data, tpid, h.vlan_tci);
                        (&self.scratch[..], h.len + 4)
                    } else {
                        (data, h.len)
                    };
                let raw = RawPacket { ts, linktype: self.linktype, data, orig_len, iface: 0 };
                Ok(Some(LiveFrame { raw, csum_not_ready }))
            }
            Rx::Recv(buf) => {
                let mut waited = false;
                loop {
                    match sys::recv(&self.fd, buf).map_err(err("recvfrom", &self.iface))? {
                        Some((_, kind)) if self.ignore_outgoing && kind == libc::PACKET_OUTGOING => continue,
                        Some((len, _)) => {
                            let ts = now();
                            let data = &buf[..len.min(buf.len())];
                            let raw = RawPacket { ts, linktype: self.linktype, data, orig_len: len as u32, iface: 0 };
                            // Without the ring's status word the kernel does not say; offloaded
                            // checksums are then the `checksum-checks` setting's problem.
                            return Ok(Some(LiveFrame { raw, csum_not_ready: false }));
                        }
                        None if waited => return Ok(None),
                        None => {
                            sys::wait_readable(fd, timeout).map_err(err("poll", &self.iface))?;
                            waited = true;
                        }
                    }
                }
            }
        }
    }

    /// The kernel's counters since the socket opened (the kernel resets
    /// them on every read; they are summed here).
    pub fn stats(&mut self) -> KernelStats {
        if self.v3 {
            // SAFETY: all-zero is a valid tpacket_stats_v3.
            let mut st: libc::tpacket_stats_v3 = unsafe { std::mem::zeroed() };
            if sys::get_opt(&self.fd, libc::SOL_PACKET, libc::PACKET_STATISTICS, &mut st).is_ok() {
                self.stats.packets += u64::from(st.tp_packets);
                self.stats.drops += u64::from(st.tp_drops);
                self.stats.freeze_q += u64::from(st.tp_freeze_q_cnt);
            }
        } else {
            // SAFETY: all-zero is a valid tpacket_stats.
            let mut st: libc::tpacket_stats = unsafe { std::mem::zeroed() };
            if sys::get_opt(&self.fd, libc::SOL_PACKET, libc::PACKET_STATISTICS, &mut st).is_ok() {
                self.stats.packets += u64::from(st.tp_packets);
                self.stats.drops += u64::from(st.tp_drops);
            }
        }
        self.stats
    }
}

/// Waits until one of `caps` has a frame or `timeout` passes.
pub fn wait_any(caps: &[&AfPacket], timeout: Duration) -> Result<(), AfPacketError> {
    let fds: Vec<_> = caps.iter().map(|c| c.fd.as_raw_fd()).collect();
    sys::wait_any(&fds, timeout).map_err(|source| AfPacketError {
        iface: caps.iter().map(|c| c.iface.as_str()).collect::<Vec<_>>().join(","),
        what: "poll",
        source,
    })
}

/// A socket that sends frames out of one interface: the other side of an
/// inline AF_PACKET bridge (`copy-iface`).
pub struct AfPacketTx {
    fd: OwnedFd,
    iface: String,
}

impl AfPacketTx {
    pub fn open(iface: &str) -> Result<AfPacketTx, AfPacketError> {
        let err = |what: &'static str| {
            let iface = iface.to_string();
            move |source: io::Error| AfPacketError { iface, what, source }
        };
        let ifindex = sys::if_index(iface).map_err(err("no such interface"))?;
        let fd = sys::packet_socket().map_err(err("socket"))?;
        // Nothing is read from this socket: a filter that takes nothing keeps its queue empty.
        bpf::attach(&fd, &[BpfInsn { code: 0x06, jt: 0, jf: 0, k: 0 }]).map_err(err("SO_ATTACH_FILTER"))?;
        sys::bind(&fd, ifindex).map_err(err("bind"))?;
        Ok(AfPacketTx { fd, iface: iface.to_string() })
    }

    /// Sends one frame as it was captured.
    pub fn send(&self, frame: &[u8]) -> Result<(), AfPacketError> {
        sys::send(&self.fd, frame).map_err(|source| AfPacketError { iface: self.iface.clone(), what: "send", source })
    }
}

/// `data` with an 802.1Q tag put back after the MAC addresses.
fn with_vlan(out: &mut Vec<u8>, data: &[u8], tpid: u16, tci: u16) {
    out.clear();
    let macs = data.len().min(12);
    out.extend_from_slice(&data[..macs]);
    out.extend_from_slice(&tpid.to_be_bytes());
    out.extend_from_slice(&tci.to_be_bytes());
    out.extend_from_slice(&data[macs..]);
}

fn now() -> Timestamp {
    let d = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    Timestamp::from_secs_nanos(d.as_secs() as i64, d.subsec_nanos())
}

/// The ring request for `cfg`, and its block count: `ring-size` frames of
/// `snaplen` (plus headers) rounded up to whole blocks.
fn ring_request(cfg: &AfPacketConfig) -> (libc::tpacket_req3, usize) {
    let page = 4096u32;
    let block_size = cfg.block_size.max(page).div_ceil(page) * page;
    // The slot of a typical frame (headers and 1500 bytes): with TPACKET_V3
    // frames are packed by their real size, so this only sizes the ring;
    // one frame may take up to a whole block.
    let frame = 1600.min(block_size);
    let per_block = (block_size / frame).max(1);
    let blocks = cfg.ring_frames.max(1).div_ceil(per_block).max(2);
    let req = libc::tpacket_req3 {
        tp_block_size: block_size,
        tp_block_nr: blocks,
        tp_frame_size: frame,
        tp_frame_nr: per_block * blocks,
        tp_retire_blk_tov: cfg.block_timeout_ms.max(1),
        tp_sizeof_priv: 0,
        tp_feature_req_word: 0,
    };
    (req, blocks as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_is_whole_blocks_of_typical_frames() {
        let cfg = AfPacketConfig::new("lo");
        let (req, blocks) = ring_request(&cfg);
        assert_eq!(req.tp_block_size % 4096, 0);
        assert_eq!(req.tp_block_nr as usize, blocks);
        assert!(req.tp_frame_nr >= cfg.ring_frames);
        assert_eq!(req.tp_frame_nr, req.tp_block_nr * (req.tp_block_size / req.tp_frame_size));
    }

    #[test]
    fn vlan_tag_goes_back_after_the_addresses() {
        let frame: Vec<u8> = (0..20).collect();
        let mut out = Vec::new();
        with_vlan(&mut out, &frame, 0x8100, 0x0064);
        assert_eq!(&out[..12], &frame[..12]);
        assert_eq!(&out[12..16], &[0x81, 0x00, 0x00, 0x64]);
        assert_eq!(&out[16..], &frame[12..]);
    }

    #[test]
    fn cluster_type_names() {
        assert_eq!(FanoutKind::parse("cluster_flow"), Some(FanoutKind::Hash));
        assert_eq!(FanoutKind::parse("cluster_qm"), Some(FanoutKind::Qm));
        assert_eq!(FanoutKind::parse("cluster_ebpf"), None);
    }
}
