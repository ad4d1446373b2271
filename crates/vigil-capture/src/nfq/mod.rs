//! NFQUEUE: packets an iptables/nftables rule queued to userspace, each of
//! which waits in the kernel for our verdict (inline IPS mode).
//!
//! One [`NfQueue`] is one netlink socket bound to one queue number, meant to
//! be owned by one worker thread: [`NfQueue::next`] hands out a packet
//! borrowed from the socket's receive buffer, and [`NfQueue::verdict`] must
//! then be called exactly once for its id. The kernel side is
//! `nfnetlink_queue`, spoken over raw netlink (see `netlink.rs`).
//!
//! ```no_run
//! use std::time::Duration;
//! use vigil_capture::{NfQueue, NfqMode, NfqOptions, Verdict};
//! // iptables -A FORWARD -j NFQUEUE --queue-num 3
//! let opts = NfqOptions { queue: 3, fail_open: true, max_len: 4096, batch: 1, mode: NfqMode::Accept };
//! let mut q = NfQueue::open(&opts).unwrap();
//! loop {
//!     let Some(pkt) = q.next(Duration::from_millis(100)).unwrap() else { continue };
//!     let (id, bad) = (pkt.id, pkt.raw.data.windows(4).any(|w| w == b"evil"));
//!     q.verdict(id, if bad { Verdict::Drop } else { Verdict::Accept }).unwrap();
//! }
//! ```
//!
//! Packets are IP datagrams without a link layer ([`LinkType::Raw`]), with
//! the kernel's timestamp when the skb carries one, else the wall clock.

mod netlink;
mod stats;
mod verdict;

pub use stats::{NfqKernelStats, NfqStats};

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::ops::Range;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use vigil_types::{LinkType, Timestamp};

use self::netlink::*;
use self::verdict::{Out, Verdicts, NF_ACCEPT, NF_DROP, NF_QUEUE, NF_REPEAT};
use crate::{CaptureError, RawPacket};

/// How to open a queue. Mirrors Suricata's `nfq:` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NfqOptions {
    /// The queue number (`--queue-num`).
    pub queue: u16,
    /// When the queue is full (or our socket buffer overruns), let the
    /// kernel accept packets unseen instead of dropping them (`fail-open`;
    /// the kernel then counts them in neither drop counter).
    pub fail_open: bool,
    /// The most packets the kernel keeps waiting for a verdict
    /// (`queue-maxlen`); 0 keeps the kernel's default (1024).
    pub max_len: u32,
    /// Verdicts collected into one batch message (`batchcount`); 0 or 1
    /// sends each verdict at once. Batches are flushed when full, by
    /// [`NfQueue::flush_verdicts`], and by a drop or an out-of-order verdict.
    pub batch: u32,
    pub mode: NfqMode,
}

impl Default for NfqOptions {
    fn default() -> Self {
        NfqOptions { queue: 0, fail_open: false, max_len: 0, batch: 1, mode: NfqMode::Accept }
    }
}

/// What an accepted packet's verdict becomes (Suricata's `nfq.mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NfqMode {
    /// `NF_ACCEPT`: the packet continues after the queueing rule's chain.
    Accept,
    /// `NF_REPEAT` with the packet's mark set to `(mark & mask) | (old & !mask)`:
    /// the packet goes through the hook again, so the ruleset must skip
    /// marked packets (`-m mark ! --mark mark/mask -j NFQUEUE`).
    Repeat { mark: u32, mask: u32 },
    /// `NF_QUEUE` to another queue, e.g. for a second inspection stage.
    Route { next_queue: u16 },
}

/// The decision for one packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Accept,
    Drop,
}

/// One queued packet, borrowed from the queue's receive buffer.
#[derive(Debug, Clone, Copy)]
pub struct NfqPacket<'a> {
    /// Pass to [`NfQueue::verdict`].
    pub id: u32,
    /// The IP datagram (`LinkType::Raw`).
    pub raw: RawPacket<'a>,
    /// The packet's netfilter mark when it was queued.
    pub mark: u32,
}

/// Receive buffer: the largest copy range (0xffff) plus room for headers
/// and attributes, so a packet message is never truncated.
const RECV_BUF: usize = 0x10000 + 8192;
/// How long `open` waits for the kernel's answer to its configuration.
const ACK_TIMEOUT: Duration = Duration::from_secs(2);

/// A bound NFQUEUE queue. See the [module docs](self).
#[derive(Debug)]
pub struct NfQueue {
    sock: NlSocket,
    queue: u16,
    mode: NfqMode,
    seq: u32,
    /// The last datagram received, and where in it the next message starts.
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    verdicts: Verdicts,
    out: Vec<Out>,
    msg: Vec<u8>,
    stats: NfqStats,
    /// `/proc/.../nfnetlink_queue` opened in the queue's network namespace.
    proc_file: Option<File>,
}

/// Where a packet sits in the receive buffer (so `next` can search with
/// `&mut self` and borrow only at the end).
struct Found {
    id: u32,
    mark: u32,
    payload: Range<usize>,
    orig_len: u32,
    ts: Option<Timestamp>,
}

impl NfQueue {
    /// Binds queue `opts.queue` in the calling thread's network namespace
    /// and configures it: full-payload copies, queue length, fail-open.
    /// Fails when not permitted (needs CAP_NET_ADMIN) or when another socket
    /// already holds the queue (EBUSY).
    pub fn open(opts: &NfqOptions) -> Result<NfQueue, CaptureError> {
        let queue = opts.queue;
        let sock = NlSocket::open().map_err(|e| live_err(queue, "open netlink socket", e))?;
        let want = (u64::from(opts.max_len.max(1024)) * 4096).clamp(4 << 20, 64 << 20) as u32;
        let rcvbuf = sock.set_rcvbuf(want).map_err(|e| live_err(queue, "set receive buffer", e))?;
        let mut q = NfQueue {
            sock,
            queue,
            mode: opts.mode,
            seq: 0,
            buf: vec![0; RECV_BUF],
            pos: 0,
            end: 0,
            verdicts: Verdicts::new(opts.batch),
            out: Vec::new(),
            msg: Vec::with_capacity(256),
            stats: NfqStats { rcvbuf, ..NfqStats::default() },
            proc_file: None,
        };

        // Bind and configure in one message: the kernel applies the command
        // first, then the parameters, so almost no packet is queued before
        // the copy mode is set.
        q.seq += 1;
        let seq = q.seq;
        q.msg.clear();
        let mut m = MsgBuilder::new(&mut q.msg, NFQNL_MSG_CONFIG, NLM_F_REQUEST | NLM_F_ACK, seq, queue);
        // nfqnl_msg_config_cmd { command: u8, pad: u8, pf: be16 }
        m.attr(NFQA_CFG_CMD, &[NFQNL_CFG_CMD_BIND, 0, 0, 0]);
        // nfqnl_msg_config_params { copy_range: be32, copy_mode: u8 } (packed)
        let mut params = [0u8; 5];
        params[..4].copy_from_slice(&0xffffu32.to_be_bytes());
        params[4] = NFQNL_COPY_PACKET;
        m.attr(NFQA_CFG_PARAMS, &params);
        if opts.max_len > 0 {
            m.attr_be32(NFQA_CFG_QUEUE_MAXLEN, opts.max_len);
        }
        m.attr_be32(NFQA_CFG_MASK, NFQA_CFG_F_FAIL_OPEN);
        m.attr_be32(NFQA_CFG_FLAGS, if opts.fail_open { NFQA_CFG_F_FAIL_OPEN } else { 0 });
        m.finish();
        q.sock.send(&q.msg).map_err(|e| live_err(queue, "send bind request", e))?;
        q.wait_ack(seq).map_err(|e| live_err(queue, "bind and configure queue", e))?;

        // Opened here, in the queue's network namespace, so that later reads
        // see that namespace even when `stats()` runs on another thread. The
        // file exists once nfnetlink_queue is loaded, which binding ensures.
        q.proc_file = File::open("/proc/thread-self/net/netfilter/nfnetlink_queue")
            .or_else(|_| File::open("/proc/self/net/netfilter/nfnetlink_queue"))
            .ok();
        Ok(q)
    }

    /// The queue number.
    pub fn queue(&self) -> u16 {
        self.queue
    }

    /// Sets the netlink socket's receive buffer (`open` already enlarges it
    /// to 4-64 MiB depending on `max_len`) and returns the size the kernel
    /// granted (it doubles the request for bookkeeping). A buffer that
    /// overruns loses packets: see [`NfqStats::enobufs`].
    pub fn set_recv_buffer(&mut self, bytes: u32) -> Result<u32, CaptureError> {
        let got = self.sock.set_rcvbuf(bytes).map_err(|e| live_err(self.queue, "set receive buffer", e))?;
        self.stats.rcvbuf = got;
        Ok(got)
    }

    /// Waits up to `timeout` for the next packet; `None` on timeout (a zero
    /// timeout only polls). Receive-buffer overruns are counted
    /// ([`NfqStats::enobufs`]) and reading goes on.
    pub fn next(&mut self, timeout: Duration) -> Result<Option<NfqPacket<'_>>, CaptureError> {
        let deadline = Instant::now().checked_add(timeout);
        let found = loop {
            if let Some(found) = self.next_in_buffer() {
                break found;
            }
            // Drain what is already there before waiting.
            match self.sock.recv(&mut self.buf) {
                Ok(n) => {
                    self.pos = 0;
                    // A datagram longer than the buffer (MSG_TRUNC) cannot
                    // be a packet we configured; read what fits.
                    self.end = n.min(self.buf.len());
                    continue;
                }
                Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => {
                    self.stats.enobufs += 1;
                    continue;
                }
                Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted) => {}
                Err(e) => return Err(live_err(self.queue, "receive", e)),
            }
            let left = match deadline {
                Some(d) => d.saturating_duration_since(Instant::now()),
                None => Duration::from_secs(3600),
            };
            if left.is_zero() {
                return Ok(None);
            }
            self.sock.wait_readable(left).map_err(|e| live_err(self.queue, "poll", e))?;
        };
        self.stats.packets += 1;
        self.verdicts.received(found.id, found.mark);
        let ts = found.ts.unwrap_or_else(wall_clock);
        let data = &self.buf[found.payload];
        Ok(Some(NfqPacket {
            id: found.id,
            mark: found.mark,
            raw: RawPacket { ts, linktype: LinkType::Raw, data, orig_len: found.orig_len, iface: 0 },
        }))
    }

    /// Gives packet `id` its verdict (see [`NfqMode`] for what Accept
    /// becomes). With batching the message may go out later; see
    /// [`NfQueue::flush_verdicts`]. Calling it for an id that is not waiting
    /// for a verdict (never handed out, or already decided) is an error
    /// (`InvalidInput`) and sends nothing.
    pub fn verdict(&mut self, id: u32, v: Verdict) -> Result<(), CaptureError> {
        let mode = self.mode;
        let decide = |pkt_mark: u32| match (v, mode) {
            (Verdict::Drop, _) => (NF_DROP, None),
            (Verdict::Accept, NfqMode::Accept) => (NF_ACCEPT, None),
            (Verdict::Accept, NfqMode::Repeat { mark, mask }) => (NF_REPEAT, Some((mark & mask) | (pkt_mark & !mask))),
            (Verdict::Accept, NfqMode::Route { next_queue }) => (NF_QUEUE | (u32::from(next_queue) << 16), None),
        };
        let mut out = std::mem::take(&mut self.out);
        out.clear();
        let known = self.verdicts.verdict(id, decide, &mut out);
        let sent = self.send_verdicts(&out);
        self.out = out;
        if !known {
            let msg = format!("packet id {id} is not waiting for a verdict");
            return Err(live_err(self.queue, "verdict", io::Error::new(io::ErrorKind::InvalidInput, msg)));
        }
        match v {
            Verdict::Accept => self.stats.accepted += 1,
            Verdict::Drop => self.stats.dropped += 1,
        }
        sent
    }

    /// Sends the verdicts a batch has collected so far. Call it when no
    /// packet arrived for a while, so batched packets are not held back.
    pub fn flush_verdicts(&mut self) -> Result<(), CaptureError> {
        let mut out = std::mem::take(&mut self.out);
        out.clear();
        self.verdicts.flush(&mut out);
        let sent = self.send_verdicts(&out);
        self.out = out;
        sent
    }

    /// Packets handed out that still wait for [`NfQueue::verdict`].
    pub fn pending_verdicts(&self) -> usize {
        self.verdicts.waiting()
    }

    /// Our counters plus the kernel's for this queue, read now from the
    /// queue's network namespace.
    pub fn stats(&self) -> NfqStats {
        let mut s = self.stats;
        s.kernel = self.proc_file.as_ref().and_then(|mut f| {
            let mut text = String::new();
            f.seek(SeekFrom::Start(0)).ok()?;
            f.read_to_string(&mut text).ok()?;
            // The port id check guards against reading another namespace's
            // line for the same queue number.
            stats::parse_proc(&text, self.queue).filter(|k| k.peer_portid == self.sock.portid())
        });
        s
    }

    fn send_verdicts(&mut self, out: &[Out]) -> Result<(), CaptureError> {
        if out.is_empty() {
            return Ok(());
        }
        self.msg.clear();
        for o in out {
            self.seq = self.seq.wrapping_add(1);
            let ty = if o.batch { NFQNL_MSG_VERDICT_BATCH } else { NFQNL_MSG_VERDICT };
            let mut m = MsgBuilder::new(&mut self.msg, ty, NLM_F_REQUEST, self.seq, self.queue);
            // nfqnl_msg_verdict_hdr { verdict: be32, id: be32 }
            let mut hdr = [0u8; 8];
            hdr[..4].copy_from_slice(&o.code.to_be_bytes());
            hdr[4..].copy_from_slice(&o.id.to_be_bytes());
            m.attr(NFQA_VERDICT_HDR, &hdr);
            if let Some(mark) = o.mark {
                m.attr_be32(NFQA_MARK, mark);
            }
            m.finish();
        }
        // Several messages in one datagram: the kernel handles them in order.
        self.sock.send(&self.msg).map_err(|e| live_err(self.queue, "send verdict", e))?;
        self.stats.verdict_msgs += out.len() as u64;
        Ok(())
    }

    /// Parses messages from the current datagram until a packet turns up.
    fn next_in_buffer(&mut self) -> Option<Found> {
        while self.pos < self.end {
            let dgram = &self.buf[..self.end];
            let Some(msg) = read_msg(dgram, self.pos) else {
                self.pos = self.end;
                break;
            };
            self.pos = align4(msg.end).min(self.end);
            match msg.ty {
                NFQNL_MSG_PACKET => {
                    if let Some(found) = parse_packet(dgram, msg.body + NFGENMSG_LEN, msg.end) {
                        if found.payload.is_empty() {
                            self.stats.no_payload += 1;
                        }
                        return Some(found);
                    }
                }
                NLMSG_ERROR if error_code(dgram, &msg).is_some_and(|e| e != 0) => self.stats.netlink_errors += 1,
                _ => {}
            }
        }
        None
    }

    /// Waits for the acknowledgement of message `seq`. Packet messages that
    /// arrive first (queued between bind and configuration) are sent back
    /// through the hook with NF_REPEAT, so they come again fully configured.
    fn wait_ack(&mut self, seq: u32) -> io::Result<()> {
        let deadline = Instant::now() + ACK_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(io::Error::new(io::ErrorKind::TimedOut, "no answer from nfnetlink_queue"));
            }
            if !self.sock.wait_readable(left)? {
                continue;
            }
            let n = match self.sock.recv(&mut self.buf) {
                Ok(n) => n.min(self.buf.len()),
                Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted) => continue,
                Err(e) => return Err(e),
            };
            let mut pos = 0;
            let mut strays = Vec::new();
            let mut result = None;
            while let Some(msg) = read_msg(&self.buf[..n], pos) {
                pos = align4(msg.end);
                match msg.ty {
                    NLMSG_ERROR if msg.seq == seq => {
                        let code = error_code(&self.buf[..n], &msg).unwrap_or(libc::EPROTO);
                        result = Some(if code == 0 { Ok(()) } else { Err(io::Error::from_raw_os_error(code)) });
                    }
                    NFQNL_MSG_PACKET => {
                        if let Some(f) = parse_packet(&self.buf[..n], msg.body + NFGENMSG_LEN, msg.end) {
                            strays.push(Out { batch: false, id: f.id, code: NF_REPEAT, mark: None });
                        }
                    }
                    _ => {}
                }
            }
            if !strays.is_empty() {
                self.send_verdicts(&strays).map_err(|e| io::Error::other(e.to_string()))?;
            }
            if let Some(r) = result {
                return r;
            }
        }
    }
}

/// Dropping the queue sends the batched verdicts, then closes the socket,
/// which unbinds the queue: the kernel drops the packets still waiting for a
/// verdict, and later packets go where the rule says (`--queue-bypass`:
/// accepted; otherwise dropped).
impl Drop for NfQueue {
    fn drop(&mut self) {
        let _ = self.flush_verdicts();
    }
}

/// Reads an NFQNL_MSG_PACKET's attributes, `dgram[attrs..end]`.
fn parse_packet(dgram: &[u8], attrs: usize, end: usize) -> Option<Found> {
    let body = dgram.get(attrs..end)?;
    let mut id = None;
    let mut found = Found { id: 0, mark: 0, payload: 0..0, orig_len: 0, ts: None };
    let mut cap_len = None;
    for (ty, r) in Attrs::new(body) {
        let v = &body[r.clone()];
        match ty {
            // nfqnl_msg_packet_hdr { packet_id: be32, hw_protocol: be16, hook: u8 }
            NFQA_PACKET_HDR => id = be32(v),
            NFQA_MARK => found.mark = be32(v).unwrap_or(0),
            // nfqnl_msg_packet_timestamp { sec: be64, usec: be64 }
            NFQA_TIMESTAMP => {
                if let (Some(sec), Some(usec)) = (be64(v), v.get(8..).and_then(be64)) {
                    if let (Ok(sec), Ok(usec)) = (i64::try_from(sec), u32::try_from(usec)) {
                        if sec > 0 && sec < i64::MAX / 1_000_000_000 - 1 && usec < 1_000_000 {
                            found.ts = Some(Timestamp::from_micros(sec, usec));
                        }
                    }
                }
            }
            NFQA_PAYLOAD => found.payload = attrs + r.start..attrs + r.end,
            NFQA_CAP_LEN => cap_len = be32(v),
            _ => {}
        }
    }
    found.id = id?;
    found.orig_len = cap_len.unwrap_or(found.payload.len() as u32).max(found.payload.len() as u32);
    Some(found)
}

fn wall_clock() -> Timestamp {
    let d = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    Timestamp::from_secs_nanos(d.as_secs() as i64, d.subsec_nanos())
}

fn live_err(queue: u16, op: &'static str, source: io::Error) -> CaptureError {
    CaptureError::Live { device: format!("nfqueue {queue}"), op, source }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A packet message as nfnetlink_queue sends it for a 4-byte payload.
    fn packet_msg(id: u32, mark: Option<u32>, ts: Option<(u64, u64)>) -> Vec<u8> {
        let mut buf = Vec::new();
        let mut m = MsgBuilder::new(&mut buf, NFQNL_MSG_PACKET, 0, 0, 3);
        let mut hdr = [0u8; 7];
        hdr[..4].copy_from_slice(&id.to_be_bytes());
        hdr[4..6].copy_from_slice(&0x0800u16.to_be_bytes());
        m.attr(NFQA_PACKET_HDR, &hdr);
        if let Some(mark) = mark {
            m.attr_be32(NFQA_MARK, mark);
        }
        if let Some((s, us)) = ts {
            let mut t = [0u8; 16];
            t[..8].copy_from_slice(&s.to_be_bytes());
            t[8..].copy_from_slice(&us.to_be_bytes());
            m.attr(NFQA_TIMESTAMP, &t);
        }
        m.attr(NFQA_PAYLOAD, &[0x45, 1, 2, 3]);
        m.finish();
        buf
    }

    #[test]
    fn parses_packet_attributes() {
        let buf = packet_msg(0xdead_beef, Some(7), Some((1_700_000_000, 123_456)));
        let msg = read_msg(&buf, 0).unwrap();
        let f = parse_packet(&buf, msg.body + NFGENMSG_LEN, msg.end).unwrap();
        assert_eq!((f.id, f.mark, f.orig_len), (0xdead_beef, 7, 4));
        assert_eq!(&buf[f.payload], &[0x45, 1, 2, 3]);
        assert_eq!(f.ts, Some(Timestamp::from_micros(1_700_000_000, 123_456)));

        let buf = packet_msg(1, None, Some((5, 2_000_000))); // impossible usec
        let f = parse_packet(&buf, NFNL_HDRLEN, buf.len()).unwrap();
        assert_eq!((f.mark, f.ts), (0, None));
    }

    #[test]
    fn truncated_packet_messages_do_not_panic() {
        let buf = packet_msg(9, Some(1), Some((1, 1)));
        for cut in 0..buf.len() {
            let _ = parse_packet(&buf[..cut], NFNL_HDRLEN, cut);
            let _ = read_msg(&buf[..cut], 0);
        }
        // Without the packet header there is no id, so no packet.
        assert!(parse_packet(&buf, buf.len(), buf.len()).is_none());
    }
}
