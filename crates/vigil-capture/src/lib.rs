//! Packet sources: where vigil's packets come from.
//!
//! Files: [`PcapFile`] (pcap and pcapng). Live, on Linux: [`AfPacket`] (a
//! TPACKET_V3 ring in a fanout group, BPF filters, the kernel's counters)
//! and [`AfPacketTx`] for an inline bridge; [`NfQueue`] for inline verdicts
//! through NFQUEUE (its own netlink code: the `nfq` crate has no batch
//! verdicts and copies every packet); [`RawIpSender`] for the refusals of
//! `reject` rules. [`drop_privileges`] and
//! [`check_log_dir`] keep a live sensor from running as root longer than
//! needed. This crate holds all of vigil's `unsafe` (mmap rings, sockets),
//! each block with the reason it is sound.
//!
//! A [`Source`] hands out one [`RawPacket`] at a time, borrowed from the
//! source's own buffer, so reading a file copies nothing per packet. Damage in
//! the middle of a file is not fatal to what came before it: the source yields
//! every good packet, then one [`CaptureError`], then nothing.
//!
//! ```no_run
//! use vigil_capture::{PcapFile, Source};
//! let mut src = PcapFile::open("input.pcap").unwrap();
//! while let Some(next) = src.next_packet() {
//!     match next {
//!         Ok(pkt) => println!("{} bytes at {:?}", pkt.data.len(), pkt.ts),
//!         Err(e) => eprintln!("capture ended early: {e}"),
//!     }
//! }
//! ```

#[cfg(target_os = "linux")]
mod afpacket;
mod error;
mod file;
mod magic;
#[cfg(target_os = "linux")]
mod nfq;
#[cfg(target_os = "linux")]
mod privileges;
#[cfg(target_os = "linux")]
mod raw;
mod writer;

#[cfg(target_os = "linux")]
pub use afpacket::{
    bpf_accepts, compile_bpf, wait_any, AfPacket, AfPacketConfig, AfPacketError, AfPacketTx, BpfInsn, Fanout,
    FanoutKind, KernelStats, LiveFrame,
};
pub use error::CaptureError;
pub use file::{FileFormat, PcapFile};
pub use magic::{describe as describe_magic, magic_available, set_database as set_magic_database};
#[cfg(target_os = "linux")]
pub use nfq::{NfQueue, NfqKernelStats, NfqMode, NfqOptions, NfqPacket, NfqStats, Verdict};
#[cfg(target_os = "linux")]
pub use privileges::{check_log_dir, drop_privileges};
#[cfg(target_os = "linux")]
pub use raw::RawIpSender;
pub use writer::{PcapWriter, SNAPLEN};

use vigil_types::{LinkType, Timestamp};

/// One captured frame as the source saw it, before any decoding.
#[derive(Debug, Clone, Copy)]
pub struct RawPacket<'a> {
    pub ts: Timestamp,
    pub linktype: LinkType,
    /// The captured bytes (may be shorter than `orig_len` when the capture snapped them).
    pub data: &'a [u8],
    /// The length of the frame on the wire.
    pub orig_len: u32,
    /// The pcapng interface the frame was captured on (0 for classic pcap).
    pub iface: u32,
}

/// Anything that produces packets: files now, live interfaces and queues later.
pub trait Source {
    /// The next packet, `Some(Err(_))` once when the source is damaged or fails
    /// (after which it yields `None`), and `None` at its end.
    fn next_packet(&mut self) -> Option<Result<RawPacket<'_>, CaptureError>>;
}
