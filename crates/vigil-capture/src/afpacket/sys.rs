//! The socket calls an AF_PACKET capture needs, each a thin checked wrapper
//! that turns `-1` into the OS error.

use std::ffi::CString;
use std::io;
use std::mem::size_of;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

/// `ETH_P_ALL` in network byte order, as `socket()` and `bind()` want it.
pub(crate) const ETH_P_ALL_BE: u16 = (libc::ETH_P_ALL as u16).to_be();

fn check(rc: libc::c_int) -> io::Result<libc::c_int> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

/// A raw packet socket for every protocol, not yet bound.
pub(crate) fn packet_socket() -> io::Result<OwnedFd> {
    // SAFETY: plain socket(2); the returned descriptor is owned from here on.
    let fd =
        check(unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, i32::from(ETH_P_ALL_BE)) })?;
    // SAFETY: `fd` was just created and nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The interface's index, or an error naming it when it does not exist.
pub(crate) fn if_index(name: &str) -> io::Result<i32> {
    let c = CString::new(name).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "interface name has a NUL"))?;
    // SAFETY: `c` is a valid NUL-terminated string for the duration of the call.
    let idx = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if idx == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(idx as i32)
}

/// The interface's ARP hardware type (`ARPHRD_*`), which decides the link type.
pub(crate) fn hw_type(fd: &OwnedFd, name: &str) -> io::Result<u16> {
    // SAFETY: an all-zero ifreq is a valid value.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (dst, src) in req.ifr_name.iter_mut().zip(name.bytes().take(libc::IFNAMSIZ - 1)) {
        *dst = src as libc::c_char;
    }
    // SAFETY: SIOCGIFHWADDR reads `ifr_name` and fills `ifr_hwaddr` of the ifreq we own.
    check(unsafe { libc::ioctl(fd.as_raw_fd(), libc::SIOCGIFHWADDR, &mut req) })?;
    // SAFETY: after SIOCGIFHWADDR the union holds a sockaddr.
    Ok(unsafe { req.ifr_ifru.ifru_hwaddr.sa_family })
}

/// Binds a packet socket to one interface, every protocol.
pub(crate) fn bind(fd: &OwnedFd, ifindex: i32) -> io::Result<()> {
    // SAFETY: an all-zero sockaddr_ll is valid; the fields we need are set below.
    let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_protocol = ETH_P_ALL_BE;
    sll.sll_ifindex = ifindex;
    // SAFETY: `sll` is a properly sized, initialised sockaddr_ll.
    check(unsafe {
        libc::bind(
            fd.as_raw_fd(),
            (&sll as *const libc::sockaddr_ll).cast(),
            size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    })?;
    Ok(())
}

/// `setsockopt` with a plain-old-data value.
pub(crate) fn set_opt<T: Copy>(fd: &OwnedFd, level: libc::c_int, name: libc::c_int, value: &T) -> io::Result<()> {
    // SAFETY: `value` points to `size_of::<T>()` readable bytes; T is Copy (no drop, no interior pointers we own).
    check(unsafe {
        libc::setsockopt(fd.as_raw_fd(), level, name, (value as *const T).cast(), size_of::<T>() as libc::socklen_t)
    })?;
    Ok(())
}

/// `getsockopt` into a plain-old-data value.
pub(crate) fn get_opt<T: Copy>(fd: &OwnedFd, level: libc::c_int, name: libc::c_int, value: &mut T) -> io::Result<()> {
    let mut len = size_of::<T>() as libc::socklen_t;
    // SAFETY: `value` is writable for `len` bytes, and any bit pattern is valid for the u32 structs used here.
    check(unsafe { libc::getsockopt(fd.as_raw_fd(), level, name, (value as *mut T).cast(), &mut len) })?;
    Ok(())
}

/// Waits until the socket is readable or `timeout` passes; true when readable.
/// An interrupted wait counts as a timeout: the caller looks again.
pub(crate) fn wait_readable(fd: RawFd, timeout: Duration) -> io::Result<bool> {
    let mut pfd = libc::pollfd { fd, events: libc::POLLIN | libc::POLLERR, revents: 0 };
    let ms = timeout.as_millis().min(i32::MAX as u128) as libc::c_int;
    // SAFETY: one valid pollfd.
    let rc = unsafe { libc::poll(&mut pfd, 1, ms) };
    if rc < 0 {
        let e = io::Error::last_os_error();
        return if e.kind() == io::ErrorKind::Interrupted { Ok(false) } else { Err(e) };
    }
    Ok(rc > 0)
}

/// Waits until any of `fds` is readable or `timeout` passes.
pub(crate) fn wait_any(fds: &[RawFd], timeout: Duration) -> io::Result<()> {
    let mut pfds: Vec<libc::pollfd> =
        fds.iter().map(|&fd| libc::pollfd { fd, events: libc::POLLIN | libc::POLLERR, revents: 0 }).collect();
    let ms = timeout.as_millis().min(i32::MAX as u128) as libc::c_int;
    // SAFETY: `pfds` is a valid array of `pfds.len()` pollfds.
    let rc = unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, ms) };
    if rc < 0 {
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    Ok(())
}

/// Receives one frame without a ring; returns its wire length (may exceed
/// `buf`) and the packet type (`PACKET_OUTGOING`, ...). `None` when none waits.
pub(crate) fn recv(fd: &OwnedFd, buf: &mut [u8]) -> io::Result<Option<(usize, u8)>> {
    // SAFETY: an all-zero sockaddr_ll is valid for the kernel to fill.
    let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    let mut len = size_of::<libc::sockaddr_ll>() as libc::socklen_t;
    // SAFETY: `buf` is writable for its length, `sll` for `len` bytes.
    let n = unsafe {
        libc::recvfrom(
            fd.as_raw_fd(),
            buf.as_mut_ptr().cast(),
            buf.len(),
            libc::MSG_TRUNC | libc::MSG_DONTWAIT,
            (&mut sll as *mut libc::sockaddr_ll).cast(),
            &mut len,
        )
    };
    if n < 0 {
        let e = io::Error::last_os_error();
        return match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(None),
            _ => Err(e),
        };
    }
    Ok(Some((n as usize, sll.sll_pkttype)))
}

/// Sends one whole frame out of the interface the socket is bound to.
pub(crate) fn send(fd: &OwnedFd, frame: &[u8]) -> io::Result<()> {
    // SAFETY: `frame` is readable for its length.
    let n = unsafe { libc::send(fd.as_raw_fd(), frame.as_ptr().cast(), frame.len(), 0) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
