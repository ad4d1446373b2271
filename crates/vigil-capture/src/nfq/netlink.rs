//! The netlink plumbing under [`super::NfQueue`]: one `NETLINK_NETFILTER`
//! socket (the only `unsafe` code of the module, each call explained), a
//! message builder and checked readers for messages and attributes.
//!
//! Wire format (all netlink headers in host byte order, nfnetlink payloads in
//! network byte order):
//!
//! ```text
//! nlmsghdr  len:u32 type:u16 flags:u16 seq:u32 pid:u32     (16 bytes)
//! nfgenmsg  family:u8 version:u8 res_id:be16               (4 bytes; res_id = queue number)
//! nlattr*   len:u16 type:u16 payload, padded to 4 bytes
//! ```

use std::io;
use std::mem;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

// Netlink message types and flags (linux/netlink.h).
pub(super) const NLMSG_ERROR: u16 = 2;
pub(super) const NLM_F_REQUEST: u16 = 1;
pub(super) const NLM_F_ACK: u16 = 4;
pub(super) const NLMSG_HDRLEN: usize = 16;
/// The nfgenmsg header after nlmsghdr, before the attributes.
pub(super) const NFGENMSG_LEN: usize = 4;
/// nlmsghdr + nfgenmsg.
#[cfg(test)]
pub(super) const NFNL_HDRLEN: usize = NLMSG_HDRLEN + NFGENMSG_LEN;

// nfnetlink_queue (linux/netfilter/nfnetlink_queue.h).
const NFNL_SUBSYS_QUEUE: u16 = 3;
pub(super) const NFQNL_MSG_PACKET: u16 = NFNL_SUBSYS_QUEUE << 8;
pub(super) const NFQNL_MSG_VERDICT: u16 = (NFNL_SUBSYS_QUEUE << 8) | 1;
pub(super) const NFQNL_MSG_CONFIG: u16 = (NFNL_SUBSYS_QUEUE << 8) | 2;
pub(super) const NFQNL_MSG_VERDICT_BATCH: u16 = (NFNL_SUBSYS_QUEUE << 8) | 3;

pub(super) const NFQA_PACKET_HDR: u16 = 1;
pub(super) const NFQA_VERDICT_HDR: u16 = 2;
pub(super) const NFQA_MARK: u16 = 3;
pub(super) const NFQA_TIMESTAMP: u16 = 4;
pub(super) const NFQA_PAYLOAD: u16 = 10;
pub(super) const NFQA_CAP_LEN: u16 = 13;

pub(super) const NFQA_CFG_CMD: u16 = 1;
pub(super) const NFQA_CFG_PARAMS: u16 = 2;
pub(super) const NFQA_CFG_QUEUE_MAXLEN: u16 = 3;
pub(super) const NFQA_CFG_MASK: u16 = 4;
pub(super) const NFQA_CFG_FLAGS: u16 = 5;
pub(super) const NFQA_CFG_F_FAIL_OPEN: u32 = 1;

pub(super) const NFQNL_CFG_CMD_BIND: u8 = 1;
pub(super) const NFQNL_COPY_PACKET: u8 = 2;

/// Attribute types carry two flag bits (nested, net byte order) on top.
const NLA_TYPE_MASK: u16 = 0x3fff;

pub(super) const fn align4(n: usize) -> usize {
    (n + 3) & !3
}

/// A `NETLINK_NETFILTER` socket bound to a kernel-assigned port id.
#[derive(Debug)]
pub(super) struct NlSocket {
    fd: OwnedFd,
    portid: u32,
}

impl NlSocket {
    pub(super) fn open() -> io::Result<NlSocket> {
        // SAFETY: socket(2) takes only integers; it returns a fresh descriptor or -1.
        let raw =
            unsafe { libc::socket(libc::AF_NETLINK, libc::SOCK_RAW | libc::SOCK_CLOEXEC, libc::NETLINK_NETFILTER) };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` was just returned by socket(2), is open, and nothing
        // else owns it, so OwnedFd may take it over (and close it once).
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };

        let mut addr = sockaddr_nl(0);
        let mut len = mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t;
        // SAFETY: `addr` is a valid, initialised sockaddr_nl and `len` is its
        // exact size; the kernel only reads that many bytes.
        let rc = unsafe { libc::bind(fd.as_raw_fd(), (&addr as *const libc::sockaddr_nl).cast(), len) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: getsockname writes at most `len` bytes into `addr`, which is
        // a sockaddr_nl of exactly that size, and updates `len`.
        let rc = unsafe { libc::getsockname(fd.as_raw_fd(), (&mut addr as *mut libc::sockaddr_nl).cast(), &mut len) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(NlSocket { fd, portid: addr.nl_pid })
    }

    pub(super) fn portid(&self) -> u32 {
        self.portid
    }

    /// Sets the receive buffer: SO_RCVBUFFORCE (needs CAP_NET_ADMIN,
    /// ignores net.core.rmem_max), else SO_RCVBUF (capped by rmem_max).
    /// Returns the size the kernel actually granted.
    pub(super) fn set_rcvbuf(&self, bytes: u32) -> io::Result<u32> {
        let val = bytes.min(i32::MAX as u32) as libc::c_int;
        if self.setsockopt_int(libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, val).is_err() {
            self.setsockopt_int(libc::SOL_SOCKET, libc::SO_RCVBUF, val)?;
        }
        let mut got: libc::c_int = 0;
        let mut len = mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: the kernel writes at most `len` bytes (one c_int) into `got`.
        let rc = unsafe {
            libc::getsockopt(
                self.fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVBUF,
                (&mut got as *mut libc::c_int).cast(),
                &mut len,
            )
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(got.max(0) as u32)
    }

    fn setsockopt_int(&self, level: libc::c_int, name: libc::c_int, val: libc::c_int) -> io::Result<()> {
        // SAFETY: the option value is one c_int living on our stack for the
        // duration of the call, and we pass its exact size.
        let rc = unsafe {
            libc::setsockopt(
                self.fd.as_raw_fd(),
                level,
                name,
                (&val as *const libc::c_int).cast(),
                mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if rc < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }

    /// Sends one datagram (one or more netlink messages) to the kernel.
    pub(super) fn send(&self, msg: &[u8]) -> io::Result<()> {
        let addr = sockaddr_nl(0);
        loop {
            // SAFETY: `msg` is a live slice we only lend for reading, and
            // `addr` a valid sockaddr_nl of the size we pass.
            let rc = unsafe {
                libc::sendto(
                    self.fd.as_raw_fd(),
                    msg.as_ptr().cast(),
                    msg.len(),
                    0,
                    (&addr as *const libc::sockaddr_nl).cast(),
                    mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
                )
            };
            if rc >= 0 {
                return Ok(());
            }
            let err = io::Error::last_os_error();
            if err.kind() != io::ErrorKind::Interrupted {
                return Err(err);
            }
        }
    }

    /// Receives one datagram without blocking. Returns its full length,
    /// which exceeds `buf.len()` when it was truncated (MSG_TRUNC).
    pub(super) fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        // SAFETY: the kernel writes at most `buf.len()` bytes into `buf`, a
        // live, exclusively borrowed slice.
        let rc = unsafe {
            libc::recv(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), libc::MSG_DONTWAIT | libc::MSG_TRUNC)
        };
        if rc < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(rc as usize)
        }
    }

    /// Waits until the socket is readable or `timeout` passes. `Ok(false)` on
    /// timeout, and also on EINTR (the caller re-checks its deadline).
    pub(super) fn wait_readable(&self, timeout: Duration) -> io::Result<bool> {
        // Round up so that a sub-millisecond remainder still waits.
        let ms = timeout.as_nanos().div_ceil(1_000_000).min(i32::MAX as u128) as libc::c_int;
        let mut pfd = libc::pollfd { fd: self.fd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one pollfd, exclusively borrowed for the call.
        let rc = unsafe { libc::poll(&mut pfd, 1, ms) };
        if rc < 0 {
            let err = io::Error::last_os_error();
            return if err.kind() == io::ErrorKind::Interrupted { Ok(false) } else { Err(err) };
        }
        Ok(rc > 0)
    }
}

fn sockaddr_nl(pid: u32) -> libc::sockaddr_nl {
    // SAFETY: sockaddr_nl is plain old data (integers and padding), for which
    // all-zero bytes are a valid value.
    let mut addr: libc::sockaddr_nl = unsafe { mem::zeroed() };
    addr.nl_family = libc::AF_NETLINK as libc::sa_family_t;
    addr.nl_pid = pid;
    addr
}

/// Appends nfnetlink messages to a reusable buffer.
pub(super) struct MsgBuilder<'b> {
    buf: &'b mut Vec<u8>,
    start: usize,
}

impl<'b> MsgBuilder<'b> {
    /// Starts a message of `msg_type` for queue `res_id` at the end of `buf`.
    pub(super) fn new(buf: &'b mut Vec<u8>, msg_type: u16, flags: u16, seq: u32, res_id: u16) -> Self {
        let start = buf.len();
        buf.extend_from_slice(&0u32.to_ne_bytes()); // length, patched by finish
        buf.extend_from_slice(&msg_type.to_ne_bytes());
        buf.extend_from_slice(&flags.to_ne_bytes());
        buf.extend_from_slice(&seq.to_ne_bytes());
        buf.extend_from_slice(&0u32.to_ne_bytes()); // pid: 0, the kernel fills it in
        buf.push(libc::AF_UNSPEC as u8); // nfgen_family
        buf.push(0); // NFNETLINK_V0
        buf.extend_from_slice(&res_id.to_be_bytes());
        MsgBuilder { buf, start }
    }

    pub(super) fn attr(&mut self, ty: u16, payload: &[u8]) -> &mut Self {
        let len = 4 + payload.len();
        self.buf.extend_from_slice(&(len as u16).to_ne_bytes());
        self.buf.extend_from_slice(&ty.to_ne_bytes());
        self.buf.extend_from_slice(payload);
        self.buf.resize(self.buf.len() + (align4(len) - len), 0);
        self
    }

    pub(super) fn attr_be32(&mut self, ty: u16, v: u32) -> &mut Self {
        self.attr(ty, &v.to_be_bytes())
    }

    pub(super) fn finish(self) {
        let len = (self.buf.len() - self.start) as u32;
        self.buf[self.start..self.start + 4].copy_from_slice(&len.to_ne_bytes());
    }
}

/// One netlink message inside a received datagram.
#[derive(Debug, Clone, Copy)]
pub(super) struct NlMsg {
    pub(super) ty: u16,
    pub(super) seq: u32,
    /// Offset of the payload (after nlmsghdr) within the datagram.
    pub(super) body: usize,
    /// One past the end of this message.
    pub(super) end: usize,
}

/// Reads the message at `pos` of `dgram`; `None` when what is left is too
/// short to be a message or declares an impossible length (the rest of the
/// datagram is then skipped). On success, the next message starts at
/// `align4(msg.end)`.
pub(super) fn read_msg(dgram: &[u8], pos: usize) -> Option<NlMsg> {
    let hdr = dgram.get(pos..pos.checked_add(NLMSG_HDRLEN)?)?;
    let len = u32::from_ne_bytes(hdr[0..4].try_into().ok()?) as usize;
    if len < NLMSG_HDRLEN || len > dgram.len() - pos {
        return None;
    }
    Some(NlMsg {
        ty: u16::from_ne_bytes([hdr[4], hdr[5]]),
        seq: u32::from_ne_bytes(hdr[8..12].try_into().ok()?),
        body: pos + NLMSG_HDRLEN,
        end: pos + len,
    })
}

/// The errno of an NLMSG_ERROR message (0 is an acknowledgement).
pub(super) fn error_code(dgram: &[u8], msg: &NlMsg) -> Option<i32> {
    let b = dgram.get(msg.body..msg.body + 4)?;
    Some(-i32::from_ne_bytes(b.try_into().ok()?))
}

/// Iterates over the attributes in `bytes` as `(type, payload offset range)`;
/// stops at the first malformed attribute.
pub(super) struct Attrs<'d> {
    bytes: &'d [u8],
    pos: usize,
}

impl<'d> Attrs<'d> {
    pub(super) fn new(bytes: &'d [u8]) -> Self {
        Attrs { bytes, pos: 0 }
    }
}

impl<'d> Iterator for Attrs<'d> {
    type Item = (u16, std::ops::Range<usize>);

    fn next(&mut self) -> Option<Self::Item> {
        let hdr = self.bytes.get(self.pos..self.pos + 4)?;
        let len = u16::from_ne_bytes([hdr[0], hdr[1]]) as usize;
        let ty = u16::from_ne_bytes([hdr[2], hdr[3]]) & NLA_TYPE_MASK;
        if len < 4 || len > self.bytes.len() - self.pos {
            self.pos = self.bytes.len();
            return None;
        }
        let range = self.pos + 4..self.pos + len;
        self.pos = (self.pos + align4(len)).min(self.bytes.len());
        Some((ty, range))
    }
}

pub(super) fn be32(b: &[u8]) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(..4)?.try_into().ok()?))
}

pub(super) fn be64(b: &[u8]) -> Option<u64> {
    Some(u64::from_be_bytes(b.get(..8)?.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builder_pads_and_patches_length() {
        let mut buf = Vec::new();
        let mut m = MsgBuilder::new(&mut buf, NFQNL_MSG_VERDICT, NLM_F_REQUEST, 7, 0x0102);
        m.attr(NFQA_VERDICT_HDR, &[0, 0, 0, 1, 0, 0, 0, 42]).attr(NFQA_CFG_PARAMS, &[0, 0, 0xff, 0xff, 2]);
        m.finish();
        // 16 + 4 + (4 + 8) + (4 + 5 + 3 padding)
        assert_eq!(buf.len(), 44);
        assert_eq!(u32::from_ne_bytes(buf[0..4].try_into().unwrap()), 44);
        assert_eq!(&buf[18..20], &[0x01, 0x02][..]); // res_id is big-endian
        let msg = read_msg(&buf, 0).unwrap();
        assert_eq!((msg.ty, msg.seq, msg.end), (NFQNL_MSG_VERDICT, 7, 44));
        let attrs: Vec<_> = Attrs::new(&buf[NFNL_HDRLEN..]).collect();
        assert_eq!(attrs.len(), 2);
        assert_eq!(attrs[0].0, NFQA_VERDICT_HDR);
        assert_eq!(attrs[1], (NFQA_CFG_PARAMS, 16..21));
    }

    #[test]
    fn hostile_lengths_stop_parsing() {
        // A message claiming more bytes than the datagram holds.
        let mut buf = vec![0u8; 20];
        buf[0..4].copy_from_slice(&100u32.to_ne_bytes());
        assert!(read_msg(&buf, 0).is_none());
        buf[0..4].copy_from_slice(&3u32.to_ne_bytes());
        assert!(read_msg(&buf, 0).is_none());
        assert!(read_msg(&buf, 18).is_none());
        assert!(read_msg(&buf, usize::MAX).is_none());
        // Attributes with a length below the header or past the end.
        assert_eq!(Attrs::new(&[2, 0, 1, 0, 9, 9]).count(), 0);
        assert_eq!(Attrs::new(&[8, 0, 1, 0, 9]).count(), 0);
        // A last attribute without its padding is still read.
        assert_eq!(Attrs::new(&[5, 0, 1, 0, 9]).collect::<Vec<_>>(), vec![(1, 4..5)]);
    }
}
