//! NfQueue against the real kernel: a client, a router and a server in
//! three network namespaces, the router queueing forwarded UDP to us.
//!
//! ```text
//!  client 198.18.10.1 ──veth── 198.18.10.254  router  198.18.11.254 ──veth── 198.18.11.1 server
//!                                   iptables FORWARD -j NFQUEUE
//! ```
//!
//! Needs root (network namespaces, iptables); otherwise each test prints
//! `skipped: <reason>` to stderr and returns. Namespaces are named
//! `vnfq-{c,r,s}-<pid>-<case>` and deleted when the test ends, pass or fail.
#![cfg(target_os = "linux")]

use std::fs::File;
use std::io;
use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use vigil_capture::{CaptureError, NfQueue, NfqMode, NfqOptions, Verdict};
use vigil_types::LinkType;

const CLIENT: Ipv4Addr = Ipv4Addr::new(198, 18, 10, 1);
const SERVER: Ipv4Addr = Ipv4Addr::new(198, 18, 11, 1);
const WAIT: Duration = Duration::from_secs(3);

/// Three namespaces wired client <-> router <-> server; deleted on drop.
struct Topo {
    c: String,
    r: String,
    s: String,
    created: Vec<String>,
}

impl Topo {
    /// `Err` carries the reason to print when the test has to be skipped.
    fn new(case: &str) -> Result<Topo, String> {
        // SAFETY: geteuid has no preconditions and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            return Err("not running as root (needs network namespaces and iptables)".into());
        }
        let pid = std::process::id();
        let mut t = Topo {
            c: format!("vnfq-c-{pid}-{case}"),
            r: format!("vnfq-r-{pid}-{case}"),
            s: format!("vnfq-s-{pid}-{case}"),
            created: Vec::new(),
        };
        for ns in [t.c.clone(), t.r.clone(), t.s.clone()] {
            run("ip", &["netns", "add", &ns]).map_err(|e| format!("`ip netns add` failed: {e}"))?;
            t.created.push(ns);
        }
        let (c, r, s) = (t.c.as_str(), t.r.as_str(), t.s.as_str());
        let steps: &[&[&str]] = &[
            &["-n", c, "link", "add", "c0", "type", "veth", "peer", "name", "r0", "netns", r],
            &["-n", s, "link", "add", "s0", "type", "veth", "peer", "name", "r1", "netns", r],
            &["-n", c, "addr", "add", "198.18.10.1/24", "dev", "c0"],
            &["-n", r, "addr", "add", "198.18.10.254/24", "dev", "r0"],
            &["-n", r, "addr", "add", "198.18.11.254/24", "dev", "r1"],
            &["-n", s, "addr", "add", "198.18.11.1/24", "dev", "s0"],
            &["-n", c, "link", "set", "lo", "up"],
            &["-n", r, "link", "set", "lo", "up"],
            &["-n", s, "link", "set", "lo", "up"],
            &["-n", c, "link", "set", "c0", "up"],
            &["-n", r, "link", "set", "r0", "up"],
            &["-n", r, "link", "set", "r1", "up"],
            &["-n", s, "link", "set", "s0", "up"],
            &["-n", c, "route", "add", "default", "via", "198.18.10.254"],
            &["-n", s, "route", "add", "default", "via", "198.18.11.254"],
            &["netns", "exec", r, "sysctl", "-qw", "net.ipv4.ip_forward=1"],
        ];
        for args in steps {
            run("ip", args).map_err(|e| format!("building the namespaces failed: {e}"))?;
        }
        Ok(t)
    }

    /// Appends an iptables rule in the router's FORWARD chain.
    fn forward_rule(&self, rule: &str) -> Result<(), String> {
        let mut args = vec!["netns", "exec", self.r.as_str(), "iptables", "-A", "FORWARD"];
        args.extend(rule.split_whitespace());
        run("ip", &args).map_err(|e| format!("iptables NFQUEUE rule failed: {e}"))
    }

    fn open_queue(&self, opts: &NfqOptions) -> NfQueue {
        let opts = opts.clone();
        in_ns(&self.r, move || NfQueue::open(&opts)).unwrap_or_else(|e| panic!("NfQueue::open: {e}"))
    }

    fn server(&self, port: u16) -> UdpSocket {
        let sock = in_ns(&self.s, move || UdpSocket::bind((SERVER, port))).expect("bind server socket");
        sock.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
        sock
    }

    fn client(&self) -> UdpSocket {
        in_ns(&self.c, || UdpSocket::bind((CLIENT, 0))).expect("bind client socket")
    }
}

impl Drop for Topo {
    fn drop(&mut self) {
        for ns in &self.created {
            if let Err(e) = run("ip", &["netns", "del", ns]) {
                eprintln!("warning: could not delete namespace {ns}: {e}");
            }
        }
    }
}

/// Builds the topology, or prints why the test is skipped.
macro_rules! topo_or_skip {
    ($case:expr) => {
        match Topo::new($case) {
            Ok(t) => t,
            Err(reason) => {
                eprintln!("skipped: {reason}");
                return;
            }
        }
    };
}

macro_rules! rule_or_skip {
    ($topo:expr, $rule:expr) => {
        if let Err(reason) = $topo.forward_rule($rule) {
            eprintln!("skipped: {reason}");
            return;
        }
    };
}

fn run(cmd: &str, args: &[&str]) -> Result<(), String> {
    let out = Command::new(cmd).args(args).output().map_err(|e| format!("{cmd}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("`{cmd} {}`: {} {}", args.join(" "), out.status, String::from_utf8_lossy(&out.stderr).trim()))
    }
}

/// Runs `f` on a fresh thread that first joins network namespace `ns`.
/// Sockets created there stay in that namespace when handed back.
fn in_ns<T: Send>(ns: &str, f: impl FnOnce() -> T + Send) -> T {
    let path = format!("/var/run/netns/{ns}");
    thread::scope(|scope| {
        scope
            .spawn(|| {
                let file = File::open(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
                // SAFETY: setns only changes this thread's network namespace;
                // the thread ends when `f` returns, and `file` is a live fd.
                let rc = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
                assert_eq!(rc, 0, "setns {path}: {}", io::Error::last_os_error());
                f()
            })
            .join()
            .expect("namespace thread panicked")
    })
}

fn send(client: &UdpSocket, port: u16, payloads: &[Vec<u8>]) {
    for p in payloads {
        client.send_to(p, (SERVER, port)).expect("send");
    }
}

/// What the server receives until `want` datagrams arrived or `wait` passed.
fn collect(server: &UdpSocket, want: usize, wait: Duration) -> Vec<Vec<u8>> {
    let deadline = Instant::now() + wait;
    let mut got = Vec::new();
    let mut buf = [0u8; 2048];
    while got.len() < want && Instant::now() < deadline {
        match server.recv_from(&mut buf) {
            Ok((n, from)) => {
                assert_eq!(from, SocketAddr::from((CLIENT, from.port())), "unexpected sender");
                got.push(buf[..n].to_vec());
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
                ) => {}
            Err(e) => panic!("server recv: {e}"),
        }
    }
    got
}

fn payloads(tag: &str, n: usize) -> Vec<Vec<u8>> {
    (0..n).map(|i| format!("vigil-nfq {tag} #{i:03}").into_bytes()).collect()
}

/// An owned copy of what `next` returned.
struct Got {
    id: u32,
    data: Vec<u8>,
}

/// Reads `n` packets without giving verdicts, checking each is a UDP/IPv4
/// datagram from client to server port `port`.
fn read_n(q: &mut NfQueue, n: usize, port: u16) -> Vec<Got> {
    let mut got = Vec::new();
    let deadline = Instant::now() + WAIT;
    while got.len() < n {
        let left = deadline.saturating_duration_since(Instant::now());
        assert!(!left.is_zero(), "only {} of {n} packets queued", got.len());
        let Some(p) = q.next(left).expect("next") else { continue };
        assert_eq!(p.raw.linktype, LinkType::Raw);
        assert_eq!(p.raw.orig_len as usize, p.raw.data.len());
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() as i64;
        assert!((p.raw.ts.secs() - now).abs() < 60, "timestamp {:?} is not now", p.raw.ts);
        let d = p.raw.data;
        assert!(d.len() >= 28, "short packet {d:02x?}");
        assert_eq!(d[0], 0x45, "IPv4 without options");
        assert_eq!(usize::from(u16::from_be_bytes([d[2], d[3]])), d.len(), "IP total length");
        assert_eq!(d[9], 17, "UDP");
        assert_eq!(d[12..16], CLIENT.octets());
        assert_eq!(d[16..20], SERVER.octets());
        assert_eq!(u16::from_be_bytes([d[22], d[23]]), port);
        got.push(Got { id: p.id, data: d[28..].to_vec() });
    }
    got
}

fn sorted(mut v: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    v.sort();
    v
}

/// (a) Datagrams arrive intact and reach the server once accepted.
#[test]
fn accepted_packets_arrive_intact() {
    let topo = topo_or_skip!("a");
    rule_or_skip!(topo, "-p udp --dport 9000 -j NFQUEUE --queue-num 5");
    let mut q = topo.open_queue(&NfqOptions { queue: 5, ..NfqOptions::default() });
    let server = topo.server(9000);
    let sent = payloads("a", 24);
    send(&topo.client(), 9000, &sent);

    let got = read_n(&mut q, sent.len(), 9000);
    assert_eq!(got.iter().map(|g| g.data.clone()).collect::<Vec<_>>(), sent, "bytes and order");
    for g in &got {
        q.verdict(g.id, Verdict::Accept).unwrap();
    }
    assert!(q.next(Duration::from_millis(100)).unwrap().is_none(), "nothing else was queued");
    assert_eq!(sorted(collect(&server, sent.len(), WAIT)), sorted(sent.clone()));

    // A second verdict for the same id is refused, and nothing is sent.
    match q.verdict(got[0].id, Verdict::Drop) {
        Err(CaptureError::Live { device, source, .. }) => {
            assert_eq!(device, "nfqueue 5");
            assert_eq!(source.kind(), io::ErrorKind::InvalidInput);
        }
        other => panic!("expected an error, got {other:?}"),
    }

    let st = q.stats();
    assert_eq!((st.packets, st.accepted, st.dropped, st.verdict_msgs), (24, 24, 0, 24));
    assert_eq!((st.enobufs, st.netlink_errors, st.no_payload), (0, 0, 0));
    assert!(st.rcvbuf >= 1 << 20, "receive buffer was not enlarged: {}", st.rcvbuf);
    let k = st.kernel.expect("kernel counters from /proc");
    assert_eq!((k.queue_total, k.queue_dropped, k.user_dropped), (0, 0, 0));
    assert!(k.id_sequence >= 24);

    // A second socket cannot take a bound queue.
    let err = in_ns(&topo.r, || NfQueue::open(&NfqOptions { queue: 5, ..NfqOptions::default() })).unwrap_err();
    assert!(err.to_string().starts_with("nfqueue 5: "), "{err}");
}

/// (b) Drop verdicts stop the marked packets, the rest pass.
#[test]
fn dropped_packets_never_arrive() {
    let topo = topo_or_skip!("b");
    rule_or_skip!(topo, "-p udp --dport 9000 -j NFQUEUE --queue-num 6");
    let mut q = topo.open_queue(&NfqOptions { queue: 6, ..NfqOptions::default() });
    let server = topo.server(9000);
    let sent: Vec<Vec<u8>> = (0..30)
        .map(|i| if i % 3 == 1 { format!("bad {i} DROPME") } else { format!("good {i}") }.into_bytes())
        .collect();
    send(&topo.client(), 9000, &sent);

    // Verdicts as the packets come, like a worker does.
    let mut seen = 0;
    let deadline = Instant::now() + WAIT;
    while seen < sent.len() && Instant::now() < deadline {
        let Some(p) = q.next(Duration::from_millis(200)).unwrap() else { continue };
        let bad = p.raw.data.windows(6).any(|w| w == b"DROPME");
        let id = p.id;
        q.verdict(id, if bad { Verdict::Drop } else { Verdict::Accept }).unwrap();
        seen += 1;
    }
    assert_eq!(seen, sent.len());
    let good: Vec<Vec<u8>> = sent.iter().filter(|p| !p.ends_with(b"DROPME")).cloned().collect();
    // Ask for one more than should come, so a leaked drop would show.
    let got = collect(&server, good.len() + 1, Duration::from_secs(1));
    assert_eq!(sorted(got), sorted(good));
    let st = q.stats();
    assert_eq!((st.packets, st.accepted, st.dropped), (30, 20, 10));
}

/// (c) Fail-open lets traffic through a full queue; without it the kernel
/// drops and counts; `--queue-bypass` passes traffic when nobody listens.
#[test]
fn fail_open_and_bypass() {
    let topo = topo_or_skip!("c");
    rule_or_skip!(topo, "-p udp --dport 9001 -j NFQUEUE --queue-num 11");
    rule_or_skip!(topo, "-p udp --dport 9002 -j NFQUEUE --queue-num 12");
    rule_or_skip!(topo, "-p udp --dport 9003 -j NFQUEUE --queue-num 13 --queue-bypass");
    rule_or_skip!(topo, "-p udp --dport 9004 -j NFQUEUE --queue-num 14");
    let client = topo.client();
    let n = 20;

    // Fail-open, queue of 1, and the reader does not read.
    let mut open_q = topo.open_queue(&NfqOptions { queue: 11, fail_open: true, max_len: 1, ..NfqOptions::default() });
    let server = topo.server(9001);
    let sent = payloads("fail-open", n);
    send(&client, 9001, &sent);
    let got = collect(&server, n, WAIT);
    assert_eq!(got.len(), n - 1, "all but the one packet held in the queue pass");
    let k = open_q.stats().kernel.expect("kernel counters");
    assert_eq!(k.queue_total, 1);
    assert_eq!((k.queue_dropped, k.user_dropped), (0, 0), "fail-open accepts are not counted as drops");
    // The held packet is still ours to decide.
    let held = read_n(&mut open_q, 1, 9001);
    assert!(sent.contains(&held[0].data));
    open_q.verdict(held[0].id, Verdict::Accept).unwrap();
    assert_eq!(collect(&server, 1, WAIT), vec![held[0].data.clone()]);

    // The same without fail-open: the kernel drops and counts.
    let closed_q = topo.open_queue(&NfqOptions { queue: 12, fail_open: false, max_len: 1, ..NfqOptions::default() });
    let server = topo.server(9002);
    send(&client, 9002, &payloads("closed", n));
    assert!(collect(&server, 1, Duration::from_secs(1)).is_empty());
    let k = closed_q.stats().kernel.expect("kernel counters");
    assert_eq!((k.queue_total, k.queue_dropped), (1, n as u64 - 1));

    // Nobody bound: --queue-bypass accepts, a plain NFQUEUE rule drops.
    let server = topo.server(9003);
    let sent = payloads("bypass", 10);
    send(&client, 9003, &sent);
    assert_eq!(sorted(collect(&server, sent.len(), WAIT)), sorted(sent));
    let server = topo.server(9004);
    send(&client, 9004, &payloads("unbound", 10));
    assert!(collect(&server, 1, Duration::from_millis(500)).is_empty());
}

/// (d) Batched verdicts: held until the batch fills or is flushed, split by
/// drops and out-of-order verdicts, never covering an undecided packet.
#[test]
fn batched_verdicts() {
    let topo = topo_or_skip!("d");
    rule_or_skip!(topo, "-p udp --dport 9000 -j NFQUEUE --queue-num 7");
    let mut q = topo.open_queue(&NfqOptions { queue: 7, batch: 4, ..NfqOptions::default() });
    let server = topo.server(9000);
    let sent = payloads("batch", 12);
    send(&topo.client(), 9000, &sent);
    let got = read_n(&mut q, 12, 9000);
    assert_eq!(q.pending_verdicts(), 12);
    assert!(collect(&server, 1, Duration::from_millis(200)).is_empty(), "nothing passes before a verdict");

    let ids: Vec<u32> = got.iter().map(|g| g.id).collect();
    let data = |i: usize| got[i].data.clone();
    // 0..=3 fill a batch (sent), 4 waits in the next one.
    for &id in &ids[0..5] {
        q.verdict(id, Verdict::Accept).unwrap();
    }
    assert_eq!(sorted(collect(&server, 5, Duration::from_secs(1))), sorted((0..4).map(data).collect()));
    // A drop flushes 4, then goes alone; 11 out of order goes alone.
    q.verdict(ids[5], Verdict::Drop).unwrap();
    q.verdict(ids[11], Verdict::Accept).unwrap();
    // 6..=9 fill a batch; 10 waits and must not pass yet.
    for &id in &ids[6..11] {
        q.verdict(id, Verdict::Accept).unwrap();
    }
    let want: Vec<Vec<u8>> = [4, 11, 6, 7, 8, 9].into_iter().map(data).collect();
    assert_eq!(sorted(collect(&server, want.len() + 1, Duration::from_secs(1))), sorted(want));
    q.flush_verdicts().unwrap();
    assert_eq!(collect(&server, 2, Duration::from_secs(1)), vec![data(10)]);

    let st = q.stats();
    assert_eq!((st.accepted, st.dropped), (11, 1));
    // batch(0..=3), single(4), drop(5), single(11), batch(6..=9), single(10)
    assert_eq!(st.verdict_msgs, 6);
    assert_eq!(st.netlink_errors, 0);
    assert_eq!(q.pending_verdicts(), 0);
    assert_eq!(st.kernel.expect("kernel counters").queue_total, 0);
}

/// (e) Repeat mode re-runs the hook with a mark; route mode hands the
/// packet to the next queue.
#[test]
fn repeat_and_route_modes() {
    let topo = topo_or_skip!("e");
    rule_or_skip!(topo, "-p udp --dport 9000 -m mark ! --mark 0x10/0x10 -j NFQUEUE --queue-num 21");
    rule_or_skip!(topo, "-p udp --dport 9001 -j NFQUEUE --queue-num 22");
    let client = topo.client();

    let mut rq = topo.open_queue(&NfqOptions {
        queue: 21,
        mode: NfqMode::Repeat { mark: 0x10, mask: 0x10 },
        batch: 3,
        ..NfqOptions::default()
    });
    let server = topo.server(9000);
    let sent = payloads("repeat", 6);
    send(&client, 9000, &sent);
    let mut seen = Vec::new();
    for _ in 0..sent.len() {
        let p = rq.next(WAIT).unwrap().expect("packet");
        assert_eq!(p.mark & 0x10, 0, "a repeated packet came back");
        seen.push(p.raw.data[28..].to_vec());
        let id = p.id;
        rq.verdict(id, Verdict::Accept).unwrap();
    }
    rq.flush_verdicts().unwrap();
    assert_eq!(seen, sent);
    assert_eq!(sorted(collect(&server, sent.len(), WAIT)), sorted(sent));
    assert!(rq.next(Duration::from_millis(200)).unwrap().is_none(), "marked packets are not queued again");

    let mut first =
        topo.open_queue(&NfqOptions { queue: 22, mode: NfqMode::Route { next_queue: 23 }, ..NfqOptions::default() });
    let mut second = topo.open_queue(&NfqOptions { queue: 23, ..NfqOptions::default() });
    let server = topo.server(9001);
    let sent = payloads("route", 5);
    send(&client, 9001, &sent);
    let a = read_n(&mut first, sent.len(), 9001);
    for g in &a {
        first.verdict(g.id, Verdict::Accept).unwrap();
    }
    assert!(collect(&server, 1, Duration::from_millis(200)).is_empty(), "held by the second queue");
    let b = read_n(&mut second, sent.len(), 9001);
    assert_eq!(b.iter().map(|g| g.data.clone()).collect::<Vec<_>>(), sent);
    for g in &b {
        second.verdict(g.id, Verdict::Accept).unwrap();
    }
    assert_eq!(sorted(collect(&server, sent.len(), WAIT)), sorted(sent));
}

/// (f) A receive-buffer overrun (ENOBUFS) is counted, and reading goes on.
#[test]
fn overrun_is_counted_and_reading_goes_on() {
    let topo = topo_or_skip!("f");
    rule_or_skip!(topo, "-p udp --dport 9000 -j NFQUEUE --queue-num 8");
    let mut q = topo.open_queue(&NfqOptions { queue: 8, ..NfqOptions::default() });
    assert!(q.stats().rcvbuf >= 4 << 20, "open enlarges the buffer");
    let granted = q.set_recv_buffer(4096).unwrap();
    assert!(granted < 64 << 10, "buffer not shrunk: {granted}");
    let server = topo.server(9000);
    let n = 60;
    send(&topo.client(), 9000, &payloads("overrun", n));
    // Every datagram is either queued or lost to the full socket buffer.
    let deadline = Instant::now() + WAIT;
    let k = loop {
        let k = q.stats().kernel.expect("kernel counters");
        if k.queue_total as u64 + k.user_dropped >= n as u64 || Instant::now() > deadline {
            break k;
        }
        thread::sleep(Duration::from_millis(20));
    };
    assert!(k.user_dropped > 0, "the small buffer did not overrun: {k:?}");

    let mut ids = Vec::new();
    while let Some(p) = q.next(Duration::from_millis(300)).unwrap() {
        ids.push(p.id);
    }
    for &id in &ids {
        q.verdict(id, Verdict::Accept).unwrap();
    }
    let st = q.stats();
    assert!(st.enobufs >= 1, "ENOBUFS not seen: {st:?}");
    assert_eq!(ids.len() as u64 + k.user_dropped, n as u64, "{st:?}");
    assert_eq!(collect(&server, ids.len() + 1, Duration::from_secs(1)).len(), ids.len());
}
