//! Sending whole IP datagrams the host routes (raw sockets with the IP
//! header included): how an IDS, or an NFQUEUE IPS, puts a `reject` rule's
//! TCP reset or ICMP unreachable on the network. The kernel picks the route
//! and the link-layer header from the datagram's destination.

use std::io;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// Raw IPv4 and IPv6 sockets for datagrams built elsewhere. Sending from
/// several threads at once is fine: each `sendto` is one datagram.
#[derive(Debug)]
pub struct RawIpSender {
    v4: Option<OwnedFd>,
    v6: Option<OwnedFd>,
}

impl RawIpSender {
    /// Opens the sockets (needs CAP_NET_RAW: open before dropping
    /// privileges). Fails only when neither family can be had.
    pub fn open() -> io::Result<RawIpSender> {
        let v4 = raw_socket(libc::AF_INET);
        let v6 = raw_socket(libc::AF_INET6);
        match (v4, v6) {
            (Err(e), Err(_)) => Err(e),
            (v4, v6) => Ok(RawIpSender { v4: v4.ok(), v6: v6.ok() }),
        }
    }

    /// Sends one IP datagram (header included) to the address in its header.
    pub fn send(&self, datagram: &[u8]) -> io::Result<()> {
        let invalid = |what| io::Error::new(io::ErrorKind::InvalidInput, what);
        let unsupported = || io::Error::new(io::ErrorKind::Unsupported, "no raw socket for this IP version");
        match datagram.first().map(|b| b >> 4) {
            Some(4) if datagram.len() >= 20 => {
                let fd = self.v4.as_ref().ok_or_else(unsupported)?;
                let dst = Ipv4Addr::new(datagram[16], datagram[17], datagram[18], datagram[19]);
                // SAFETY: sockaddr_in is plain data; all-zero is a valid value.
                let mut sa: libc::sockaddr_in = unsafe { std::mem::zeroed() };
                sa.sin_family = libc::AF_INET as libc::sa_family_t;
                sa.sin_addr.s_addr = u32::from_ne_bytes(dst.octets());
                send_to(fd, datagram, (&sa as *const libc::sockaddr_in).cast(), std::mem::size_of_val(&sa))
            }
            Some(6) if datagram.len() >= 40 => {
                let fd = self.v6.as_ref().ok_or_else(unsupported)?;
                let mut dst = [0u8; 16];
                dst.copy_from_slice(&datagram[24..40]);
                // SAFETY: sockaddr_in6 is plain data; all-zero is a valid value.
                let mut sa: libc::sockaddr_in6 = unsafe { std::mem::zeroed() };
                sa.sin6_family = libc::AF_INET6 as libc::sa_family_t;
                sa.sin6_addr.s6_addr = Ipv6Addr::from(dst).octets();
                send_to(fd, datagram, (&sa as *const libc::sockaddr_in6).cast(), std::mem::size_of_val(&sa))
            }
            _ => Err(invalid("not an IPv4 or IPv6 datagram")),
        }
    }
}

/// A raw socket whose datagrams carry their own IP header: `IPPROTO_RAW`
/// implies `IP_HDRINCL` for IPv4 and, on Linux, for IPv6 too.
fn raw_socket(family: libc::c_int) -> io::Result<OwnedFd> {
    // SAFETY: plain socket(2); the returned descriptor is owned from here on.
    let fd = unsafe { libc::socket(family, libc::SOCK_RAW | libc::SOCK_CLOEXEC, libc::IPPROTO_RAW) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just created and nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn send_to(fd: &OwnedFd, buf: &[u8], addr: *const libc::sockaddr, len: usize) -> io::Result<()> {
    // SAFETY: `buf` is readable for its length; `addr` points to a live
    // sockaddr of `len` bytes owned by the caller for the duration of the call.
    let n = unsafe { libc::sendto(fd.as_raw_fd(), buf.as_ptr().cast(), buf.len(), 0, addr, len as libc::socklen_t) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_what_is_not_a_datagram() {
        // Without CAP_NET_RAW there is nothing to test beyond opening.
        let Ok(s) = RawIpSender::open() else { return };
        assert_eq!(s.send(&[]).unwrap_err().kind(), io::ErrorKind::InvalidInput);
        assert_eq!(s.send(&[0x45; 10]).unwrap_err().kind(), io::ErrorKind::InvalidInput);
        assert_eq!(s.send(&[0x75; 60]).unwrap_err().kind(), io::ErrorKind::InvalidInput);
    }
}
