//! AF_PACKET capture on a veth pair between two network namespaces this
//! test creates (198.18.0.0/15 addresses, a bounded number of UDP datagrams,
//! namespaces removed even when an assertion fails). Skipped, with a message
//! saying why, where namespaces cannot be made (not root, no `ip`).

#![cfg(target_os = "linux")]

use std::net::UdpSocket;
use std::os::fd::AsRawFd;
use std::process::Command;
use std::time::{Duration, Instant};
use vigil_capture::{compile_bpf, AfPacket, AfPacketConfig, Fanout, FanoutKind};

/// Two namespaces joined by a veth pair: `a` (198.18.0.1) and `b` (198.18.0.2).
struct Pair {
    a: String,
    b: String,
}

impl Pair {
    fn new(tag: &str) -> Result<Pair, String> {
        let id = std::process::id();
        let pair = Pair { a: format!("vcap-{tag}-a-{id}"), b: format!("vcap-{tag}-b-{id}") };
        let (a, b) = (&pair.a, &pair.b);
        for cmd in [
            format!("ip netns add {a}"),
            format!("ip netns add {b}"),
            format!("ip link add va-{id} netns {a} type veth peer name vb-{id} netns {b}"),
            format!("ip -n {a} addr add 198.18.0.1/30 dev va-{id}"),
            format!("ip -n {b} addr add 198.18.0.2/30 dev vb-{id}"),
            format!("ip -n {a} link set va-{id} up"),
            format!("ip -n {b} link set vb-{id} up"),
        ] {
            sh(&cmd)?;
        }
        Ok(pair)
    }

    fn iface_b(&self) -> String {
        format!("vb-{}", std::process::id())
    }

    /// Runs `f` on a thread inside namespace `ns` (sockets it makes stay there).
    fn within<T: Send + 'static>(ns: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
        let path = format!("/var/run/netns/{ns}");
        std::thread::spawn(move || {
            let file = std::fs::File::open(&path).expect("namespace file");
            // SAFETY: setns on this thread only, with a namespace file we hold open.
            let rc = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
            assert_eq!(rc, 0, "setns {path}: {}", std::io::Error::last_os_error());
            f()
        })
        .join()
        .expect("namespace thread")
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        // Deleting a namespace removes its end of the veth, and with it the pair.
        let _ = sh(&format!("ip netns del {}", self.a));
        let _ = sh(&format!("ip netns del {}", self.b));
    }
}

fn sh(cmd: &str) -> Result<(), String> {
    let mut parts = cmd.split_whitespace();
    let prog = parts.next().unwrap_or_default();
    let out = Command::new(prog).args(parts).output().map_err(|e| format!("{cmd}: {e}"))?;
    if !out.status.success() {
        return Err(format!("{cmd}: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(())
}

fn pair_or_skip(tag: &str) -> Option<Pair> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: AF_PACKET tests need root to create network namespaces");
        return None;
    }
    match Pair::new(tag) {
        Ok(p) => Some(p),
        Err(e) => {
            eprintln!("skipped: cannot create network namespaces: {e}");
            None
        }
    }
}

/// Sends `n` UDP datagrams from namespace a to b, port 9, each carrying its number.
fn send_udp(pair: &Pair, n: u32, size: usize) {
    Pair::within(&pair.a, move || {
        let s = UdpSocket::bind("198.18.0.1:40000").expect("bind sender");
        for i in 0..n {
            let mut payload = vec![b'x'; size];
            payload[..4].copy_from_slice(&i.to_be_bytes());
            s.send_to(&payload, "198.18.0.2:9").expect("send");
        }
    });
}

fn udp_filter() -> Option<Vec<vigil_capture::BpfInsn>> {
    match compile_bpf("udp and dst port 9", 1) {
        Ok(p) => Some(p),
        Err(e) => {
            eprintln!("skipped: {e}");
            None
        }
    }
}

#[test]
fn fanout_sockets_see_every_datagram_once() {
    let Some(pair) = pair_or_skip("fan") else { return };
    let Some(filter) = udp_filter() else { return };
    let iface = pair.iface_b();
    // A listener on b so no port-unreachable replies cross the wire.
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let b = pair.b.clone();
    let capture = std::thread::spawn(move || {
        Pair::within(&b, move || {
            let _sink = UdpSocket::bind("198.18.0.2:9").expect("listener");
            let fanout = Some(Fanout { id: 77, kind: FanoutKind::Hash, defrag: true });
            let mut socks: Vec<AfPacket> = (0..2)
                .map(|_| {
                    AfPacket::open(&AfPacketConfig { fanout, bpf: Some(filter.clone()), ..AfPacketConfig::new(&iface) })
                        .expect("open")
                })
                .collect();
            ready_tx.send(()).unwrap();
            let mut seen = vec![0u32; 2];
            let mut numbers = Vec::new();
            let deadline = Instant::now() + Duration::from_secs(10);
            let mut sender_done = false;
            while Instant::now() < deadline {
                sender_done |= done_rx.try_recv().is_ok();
                let mut got = false;
                for (i, s) in socks.iter_mut().enumerate() {
                    while let Some(f) = s.next(Duration::from_millis(20)).expect("next") {
                        let d = f.raw.data;
                        // Ethernet 14 + IPv4 20 + UDP 8, then the number.
                        numbers.push(u32::from_be_bytes([d[42], d[43], d[44], d[45]]));
                        seen[i] += 1;
                        got = true;
                    }
                }
                if sender_done && !got && numbers.len() >= 200 {
                    break;
                }
            }
            let stats: Vec<_> = socks.iter_mut().map(|s| s.stats()).collect();
            (seen, numbers, stats)
        })
    });
    ready_rx.recv_timeout(Duration::from_secs(10)).expect("capture ready");
    send_udp(&pair, 200, 64);
    done_tx.send(()).unwrap();
    let (seen, mut numbers, stats) = capture.join().unwrap();
    numbers.sort_unstable();
    assert_eq!(numbers, (0..200).collect::<Vec<_>>(), "every datagram exactly once");
    // One flow: the hash sends all of it to one socket.
    assert!(seen.contains(&200), "{seen:?}");
    let total: u64 = stats.iter().map(|s| s.packets).sum();
    assert_eq!(total, 200, "{stats:?}");
    assert!(stats.iter().all(|s| s.drops == 0), "{stats:?}");
}

#[test]
fn a_tiny_ring_overrun_is_counted_by_the_kernel() {
    let Some(pair) = pair_or_skip("drop") else { return };
    let Some(filter) = udp_filter() else { return };
    let iface = pair.iface_b();
    let b = pair.b.clone();
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
    let capture = std::thread::spawn(move || {
        Pair::within(&b, move || {
            let _sink = UdpSocket::bind("198.18.0.2:9").expect("listener");
            // Two 4 KiB blocks: a handful of 1 KiB frames fill it.
            let cfg = AfPacketConfig {
                ring_frames: 4,
                block_size: 4096,
                block_timeout_ms: 1,
                bpf: Some(filter),
                ..AfPacketConfig::new(&iface)
            };
            let mut s = AfPacket::open(&cfg).expect("open");
            ready_tx.send(()).unwrap();
            // Nothing is read until the sender is done: the ring overflows.
            go_rx.recv().unwrap();
            std::thread::sleep(Duration::from_millis(50));
            let mut read = 0u64;
            while s.next(Duration::from_millis(50)).expect("next").is_some() {
                read += 1;
            }
            (read, s.stats())
        })
    });
    ready_rx.recv_timeout(Duration::from_secs(10)).expect("capture ready");
    send_udp(&pair, 300, 1000);
    go_tx.send(()).unwrap();
    let (read, stats) = capture.join().unwrap();
    assert_eq!(stats.packets, 300, "{stats:?}");
    assert!(stats.drops > 0, "the ring should have overflowed: {stats:?}");
    assert_eq!(read + stats.drops, stats.packets, "read {read}, {stats:?}");
}
