//! systemd's readiness notification (sd_notify): run as a `Type=notify`
//! service, vigil finds a datagram socket named in `NOTIFY_SOCKET` and
//! says `READY=1` once it captures, `STOPPING=1` when it stops, so
//! `systemctl start` returns when vigil really listens. Without the
//! variable nothing is sent; a message that cannot be sent is not an error.

use std::os::unix::net::UnixDatagram;

/// Tells the service manager `state` (`READY=1`, `STOPPING=1`, `STATUS=...`).
pub(crate) fn notify(state: &str) {
    if let Some(socket) = std::env::var_os("NOTIFY_SOCKET") {
        let _ = send(std::path::Path::new(&socket), state);
    }
}

fn send(socket: &std::path::Path, state: &str) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let sock = UnixDatagram::unbound()?;
    match socket.as_os_str().as_bytes().strip_prefix(b"@") {
        // An abstract socket (systemd's own are paths, containers' may not be).
        Some(name) => {
            use std::os::linux::net::SocketAddrExt;
            let addr = std::os::unix::net::SocketAddr::from_abstract_name(name)?;
            sock.send_to_addr(state.as_bytes(), &addr)?;
        }
        None => {
            sock.send_to(state.as_bytes(), socket)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_reaches_the_socket() {
        let dir = std::env::temp_dir().join(format!("vigil-notify-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("notify");
        let rx = UnixDatagram::bind(&path).unwrap();
        rx.set_read_timeout(Some(std::time::Duration::from_secs(5))).unwrap();
        send(&path, "READY=1\nSTATUS=capturing").unwrap();
        let mut buf = [0u8; 64];
        let n = rx.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"READY=1\nSTATUS=capturing");
        assert!(send(&dir.join("nobody"), "READY=1").is_err());
        std::fs::remove_dir_all(&dir).ok();
    }
}
