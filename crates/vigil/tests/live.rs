//! Live capture and inline prevention end to end, as root, inside network
//! namespaces this test creates: a client and a server (and, for the IPS
//! cases, a sensor between them), HTTP and DNS exchanged between them only,
//! vigil started with `ip netns exec` and stopped with SIGTERM.

#![cfg(target_os = "linux")]

mod netns;

use netns::{stop, Lab, Running};
use serde_json::Value;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const RULES: &str = "\
alert http any any -> any any (msg:\"lab: shell in uri\"; http.uri; content:\"/bin/sh\"; sid:1000001; rev:1;)
alert dns any any -> any any (msg:\"lab: listed domain\"; dns.query; content:\"evil.example\"; sid:1000002; rev:1;)
drop http any any -> any any (msg:\"lab: block passwd\"; http.uri; content:\"/etc/passwd\"; sid:1000003; rev:1;)
reject http any any -> any any (msg:\"lab: refuse shadow\"; http.uri; content:\"/etc/shadow\"; sid:1000004; rev:1;)
";

fn out_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("vigil-live-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("lab.rules"), RULES).unwrap();
    d
}

/// Starts vigil in `ns` with `args`, and waits until its capture is open
/// (its control socket appears once the sockets are bound).
fn start_vigil(lab: &Lab, ns: &str, dir: &Path, args: &[&str]) -> Running {
    let rules = dir.join("lab.rules");
    let socket = dir.join("vigil-command.socket");
    let socket_set = format!("unix-command.filename={}", socket.display());
    let mut all =
        vec!["-l", dir.to_str().unwrap(), "-S", rules.to_str().unwrap(), "-k", "none", "--quiet", "--set", &socket_set];
    all.extend_from_slice(args);
    let mut child = Running(lab.spawn(ns, env!("CARGO_BIN_EXE_vigil"), &all));
    let deadline = Instant::now() + Duration::from_secs(30);
    while !socket.exists() {
        if let Ok(Some(st)) = child.0.try_wait() {
            let mut err = String::new();
            child.0.stderr.take().unwrap().read_to_string(&mut err).unwrap();
            panic!("vigil exited early ({st}): {err}");
        }
        assert!(Instant::now() < deadline, "vigil did not start in 30 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

/// One HTTP exchange; returns the response, or the error the client saw.
fn http_get(ns: &str, server: &'static str, path: &'static str) -> Result<String, String> {
    Lab::within(ns, move || {
        let mut s =
            TcpStream::connect_timeout(&server.parse().unwrap(), Duration::from_secs(2)).map_err(|e| e.to_string())?;
        s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let req =
            format!("GET {path} HTTP/1.1\r\nHost: lab.test\r\nUser-Agent: vigil-test\r\nConnection: close\r\n\r\n");
        s.write_all(req.as_bytes()).map_err(|e| e.to_string())?;
        let mut resp = String::new();
        s.read_to_string(&mut resp).map_err(|e| e.to_string())?;
        if resp.is_empty() {
            return Err("empty response".into());
        }
        Ok(resp)
    })
}

/// A DNS query for `name` (A record), sent once; no answer is awaited.
fn dns_query(ns: &str, server: &'static str, name: &'static str) {
    Lab::within(ns, move || {
        let s = UdpSocket::bind("0.0.0.0:0").unwrap();
        let mut q = vec![0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0];
        for label in name.split('.') {
            q.push(label.len() as u8);
            q.extend_from_slice(label.as_bytes());
        }
        q.extend_from_slice(&[0, 0, 1, 0, 1]);
        s.send_to(&q, server).unwrap();
    });
}

/// A tiny HTTP server in `ns` answering every request with 200, on its own thread.
fn http_server(ns: &str, addr: &'static str) {
    http_server_after(ns, addr, Duration::ZERO);
}

/// An HTTP server that answers each request `delay` after it came.
fn http_server_after(ns: &str, addr: &'static str, delay: Duration) {
    let ns = ns.to_string();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        Lab::within(&ns, move || {
            let l = TcpListener::bind(addr).unwrap();
            // A DNS "server": a bound socket, so no port-unreachable replies.
            let _dns = UdpSocket::bind(format!("{}:53", addr.split(':').next().unwrap())).unwrap();
            tx.send(()).unwrap();
            for conn in l.incoming() {
                let Ok(mut c) = conn else { continue };
                c.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
                let mut buf = [0u8; 2048];
                let mut req = Vec::new();
                while !req.windows(4).any(|w| w == b"\r\n\r\n") {
                    match c.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => req.extend_from_slice(&buf[..n]),
                    }
                }
                std::thread::sleep(delay);
                let _ = c.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
            }
        })
    });
    rx.recv_timeout(Duration::from_secs(5)).unwrap();
}

fn eve(dir: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join("eve.json")).unwrap();
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn alert_sids(records: &[Value]) -> Vec<u64> {
    let mut sids: Vec<u64> = records
        .iter()
        .filter(|r| r["event_type"] == "alert")
        .map(|r| r["alert"]["signature_id"].as_u64().unwrap())
        .collect();
    sids.sort_unstable();
    sids
}

fn last_stats(records: &[Value]) -> Value {
    records.iter().rev().find(|r| r["event_type"] == "stats").expect("a stats record")["stats"].clone()
}

fn mac(ns: &str, dev: &str) -> String {
    let out = std::process::Command::new("ip")
        .args(["netns", "exec", ns, "cat", &format!("/sys/class/net/{dev}/address")])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Each end knows the other's MAC address: no ARP is ever sent.
fn neighbours(lab: &Lab, a: (&str, &str, &str), b: (&str, &str, &str)) {
    let (ma, mb) = (mac(a.0, a.1), mac(b.0, b.1));
    lab.run(a.0, &format!("ip neigh replace {} lladdr {mb} dev {} nud permanent", b.2, a.1));
    lab.run(b.0, &format!("ip neigh replace {} lladdr {ma} dev {} nud permanent", a.2, b.1));
}

#[test]
fn ids_with_af_packet_fanout_and_two_workers() {
    let Some(mut lab) = Lab::new("ids") else { return };
    let client = lab.ns("c");
    let server = lab.ns("s");
    let (vc, vs) = (format!("lc{}", std::process::id()), format!("ls{}", std::process::id()));
    lab.veth(&client, &vc, &server, &vs);
    lab.run(&client, &format!("ip addr add 198.18.2.1/24 dev {vc}"));
    lab.run(&server, &format!("ip addr add 198.18.2.2/24 dev {vs}"));
    // Static neighbours: no ARP on the wire, so every packet is the test's.
    neighbours(&lab, (&client, &vc, "198.18.2.1"), (&server, &vs, "198.18.2.2"));
    http_server(&server, "198.18.2.2:80");

    let dir = out_dir("ids");
    let mut vigil = start_vigil(&lab, &server, &dir, &["-i", &vs, "--runmode", "workers", "--threads", "2"]);
    let before = lab.counter(&server, &vs, "rx_packets") + lab.counter(&server, &vs, "tx_packets");
    let resp = http_get(&client, "198.18.2.2:80", "/cgi-bin/run?cmd=/bin/sh").expect("http");
    assert!(resp.starts_with("HTTP/1.1 200"), "{resp}");
    http_get(&client, "198.18.2.2:80", "/index.html").expect("benign http");
    dns_query(&client, "198.18.2.2:53", "www.evil.example");
    dns_query(&client, "198.18.2.2:53", "www.good.example");
    // Let the last frames reach the ring before the stop.
    std::thread::sleep(Duration::from_millis(300));
    let after = lab.counter(&server, &vs, "rx_packets") + lab.counter(&server, &vs, "tx_packets");
    stop(&mut vigil.0);

    let records = eve(&dir);
    assert_eq!(alert_sids(&records), vec![1000001, 1000002], "one alert each, no more");
    let stats = last_stats(&records);
    let received = stats["capture"]["kernel_packets"].as_u64().unwrap();
    let drops = stats["capture"]["kernel_drops"].as_u64().unwrap();
    let decoded = stats["decoder"]["pkts"].as_u64().unwrap();
    assert_eq!(received, after - before, "vigil received what crossed the interface");
    assert_eq!(drops, 0);
    assert_eq!(decoded + drops, received, "{stats}");
    // Both workers reported, and their counts add up.
    let threads = stats["threads"].as_object();
    if let Some(t) = threads {
        let sum: u64 = t.values().map(|w| w["decoder"]["pkts"].as_u64().unwrap_or(0)).sum();
        assert_eq!(sum, decoded);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ids_rejects_at_layer_2_out_of_the_reject_dev() {
    // The sensor is a kernel bridge between client and server, with no
    // address: a refusal it routed would go nowhere, so a reset the client
    // sees came out of the --reject-dev interface.
    let Some(mut lab) = Lab::new("rjd") else { return };
    let client = lab.ns("c");
    let sensor = lab.ns("b");
    let server = lab.ns("s");
    let id = std::process::id();
    let (vc, b1, b2, vs) = (format!("rc{id}"), format!("r1{id}"), format!("r2{id}"), format!("rs{id}"));
    lab.veth(&client, &vc, &sensor, &b1);
    lab.veth(&sensor, &b2, &server, &vs);
    let br = format!("rb{id}");
    lab.run(&sensor, &format!("ip link add {br} type bridge"));
    lab.run(&sensor, &format!("ip link set {b1} master {br}"));
    lab.run(&sensor, &format!("ip link set {b2} master {br}"));
    lab.run(&sensor, &format!("ip link set {br} up"));
    lab.run(&client, &format!("ip addr add 198.18.7.1/24 dev {vc}"));
    lab.run(&server, &format!("ip addr add 198.18.7.2/24 dev {vs}"));
    neighbours(&lab, (&client, &vc, "198.18.7.1"), (&server, &vs, "198.18.7.2"));
    // IDS: the request reaches the server, and the reset races its answer;
    // a slow answer leaves the reset first.
    http_server_after(&server, "198.18.7.2:80", Duration::from_millis(1500));
    assert!(http_get(&client, "198.18.7.2:80", "/index.html").is_ok(), "the bridge forwards");

    let dir = out_dir("rejectdev");
    // A packet rule sees the request as it passes (a transaction rule would
    // see it on the client's next packet, after the slow answer, as in
    // Suricata); both ends are refused, the client included.
    let both = "rejectboth tcp-pkt any any -> any 80 (msg:\"lab: refuse group\"; content:\"/etc/group\"; sid:1000005; rev:1;)\n";
    std::fs::write(dir.join("lab.rules"), format!("{RULES}{both}")).unwrap();
    let mut vigil = start_vigil(&lab, &sensor, &dir, &["-i", &b1, "--runmode", "single", "--reject-dev", &b1]);
    let refused = http_get(&client, "198.18.7.2:80", "/download?f=/etc/group");
    assert!(refused.as_ref().is_err_and(|e| e.contains("reset")), "the reject must reset the client: {refused:?}");
    stop(&mut vigil.0);
    assert!(alert_sids(&eve(&dir)).contains(&1000005), "the reject rule alerted");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ips_as_an_af_packet_bridge() {
    let Some(mut lab) = Lab::new("brg") else { return };
    let client = lab.ns("c");
    let sensor = lab.ns("b");
    let server = lab.ns("s");
    let id = std::process::id();
    let (vc, b1, b2, vs) = (format!("bc{id}"), format!("b1{id}"), format!("b2{id}"), format!("bs{id}"));
    lab.veth(&client, &vc, &sensor, &b1);
    lab.veth(&sensor, &b2, &server, &vs);
    lab.run(&client, &format!("ip addr add 198.18.3.1/24 dev {vc}"));
    lab.run(&server, &format!("ip addr add 198.18.3.2/24 dev {vs}"));
    // Static neighbours: the check below that nothing crosses an empty
    // bridge must not leave a failed ARP entry behind.
    neighbours(&lab, (&client, &vc, "198.18.3.1"), (&server, &vs, "198.18.3.2"));
    http_server(&server, "198.18.3.2:80");

    let dir = out_dir("bridge");
    let yaml = format!(
        "%YAML 1.1\n---\naf-packet:\n  - interface: {b1}\n    threads: 1\n    cluster-id: 97\n    copy-mode: ips\n    copy-iface: {b2}\n  - interface: {b2}\n    threads: 1\n    cluster-id: 96\n    copy-mode: ips\n    copy-iface: {b1}\n"
    );
    std::fs::write(dir.join("bridge.yaml"), yaml).unwrap();
    let cfg = dir.join("bridge.yaml");
    // Nothing passes the sensor before vigil runs.
    assert!(http_get(&client, "198.18.3.2:80", "/index.html").is_err(), "traffic crossed an empty bridge");
    let mut vigil = start_vigil(&lab, &sensor, &dir, &["--include", cfg.to_str().unwrap(), "--af-packet"]);
    let ok = http_get(&client, "198.18.3.2:80", "/index.html");
    assert!(ok.as_deref().is_ok_and(|r| r.starts_with("HTTP/1.1 200")), "benign traffic must pass: {ok:?}");
    let blocked = http_get(&client, "198.18.3.2:80", "/download?f=/etc/passwd");
    assert!(blocked.is_err(), "the drop rule must block the request: {blocked:?}");
    let again = http_get(&client, "198.18.3.2:80", "/index.html");
    assert!(again.is_ok(), "a new benign connection passes after the block: {again:?}");
    // A reject rule answers the client with a reset, sent back out of the port it came in by.
    let refused = http_get(&client, "198.18.3.2:80", "/download?f=/etc/shadow");
    assert!(refused.as_ref().is_err_and(|e| e.contains("reset")), "the reject rule must reset the client: {refused:?}");
    stop(&mut vigil.0);

    let records = eve(&dir);
    assert!(alert_sids(&records).contains(&1000003), "the drop rule alerted");
    let drop_alert =
        records.iter().find(|r| r["event_type"] == "alert" && r["alert"]["signature_id"] == 1000003).unwrap();
    assert_eq!(drop_alert["alert"]["action"], "blocked");
    let stats = last_stats(&records);
    assert!(stats["ips"]["blocked"].as_u64().unwrap() >= 1, "{stats}");
    assert!(stats["ips"]["accepted"].as_u64().unwrap() >= 10, "{stats}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Client and server on two subnets, a router between them whose FORWARD
/// chain sends every packet to NFQUEUE `queue`.
fn routed(tag: &str, queue: u16) -> Option<(Lab, String, String, String)> {
    let mut lab = Lab::new(tag)?;
    if std::process::Command::new("iptables").arg("--version").output().is_err() {
        eprintln!("skipped: iptables is not installed (./scripts/deps.sh --tests installs it)");
        return None;
    }
    let client = lab.ns("c");
    let router = lab.ns("r");
    let server = lab.ns("s");
    let id = std::process::id();
    let (vc, r1, r2, vs) = (format!("qc{id}"), format!("q1{id}"), format!("q2{id}"), format!("qs{id}"));
    lab.veth(&client, &vc, &router, &r1);
    lab.veth(&router, &r2, &server, &vs);
    lab.run(&client, &format!("ip addr add 198.18.4.1/24 dev {vc}"));
    lab.run(&client, "ip route add default via 198.18.4.254");
    lab.run(&router, &format!("ip addr add 198.18.4.254/24 dev {r1}"));
    lab.run(&router, &format!("ip addr add 198.18.5.254/24 dev {r2}"));
    lab.run(&router, "sysctl -q -w net.ipv4.ip_forward=1");
    lab.run(&server, &format!("ip addr add 198.18.5.1/24 dev {vs}"));
    lab.run(&server, "ip route add default via 198.18.5.254");
    lab.run(&router, &format!("iptables -A FORWARD -j NFQUEUE --queue-num {queue}"));
    Some((lab, client, router, server))
}

#[test]
fn ips_with_nfqueue() {
    let Some((lab, client, router, server)) = routed("nfq", 5) else { return };
    http_server(&server, "198.18.5.1:80");
    // No listener on the queue: the kernel drops what it would queue.
    assert!(http_get(&client, "198.18.5.1:80", "/index.html").is_err(), "traffic crossed an unserved queue");
    let dir = out_dir("nfq");
    let mut vigil = start_vigil(&lab, &router, &dir, &["-q", "5"]);
    let ok = http_get(&client, "198.18.5.1:80", "/index.html");
    assert!(ok.as_deref().is_ok_and(|r| r.starts_with("HTTP/1.1 200")), "benign traffic must pass: {ok:?}");
    let blocked = http_get(&client, "198.18.5.1:80", "/download?f=/etc/passwd");
    assert!(blocked.is_err(), "the drop rule must block the request: {blocked:?}");
    let alerted = http_get(&client, "198.18.5.1:80", "/x?cmd=/bin/sh");
    assert!(alerted.is_ok(), "an alert rule does not block: {alerted:?}");
    // A reject rule answers the client with a reset (the router routes it back).
    let refused = http_get(&client, "198.18.5.1:80", "/download?f=/etc/shadow");
    assert!(refused.as_ref().is_err_and(|e| e.contains("reset")), "the reject rule must reset the client: {refused:?}");
    stop(&mut vigil.0);

    let records = eve(&dir);
    let sids = alert_sids(&records);
    assert!(sids.contains(&1000003) && sids.contains(&1000001) && sids.contains(&1000004), "{sids:?}");
    let stats = last_stats(&records);
    let (accepted, blocked) = (stats["ips"]["accepted"].as_u64().unwrap(), stats["ips"]["blocked"].as_u64().unwrap());
    // Every packet the queue handed over got exactly one verdict.
    assert_eq!(accepted + blocked, stats["decoder"]["pkts"].as_u64().unwrap(), "{stats}");
    assert!(blocked >= 1, "{stats}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn nfqueue_fail_open_keeps_traffic_flowing_when_the_queue_is_full() {
    let Some((lab, client, router, server)) = routed("nfo", 6) else { return };
    http_server(&server, "198.18.5.1:80");
    let dir = out_dir("failopen");
    std::fs::write(dir.join("nfq.yaml"), "%YAML 1.1\n---\nnfq:\n  fail-open: yes\n  queue-maxlen: 2\n").unwrap();
    let inc = dir.join("nfq.yaml");
    let mut vigil = start_vigil(&lab, &router, &dir, &["-q", "6", "--include", inc.to_str().unwrap()]);
    let pid = vigil.0.id();
    // A stopped vigil reads nothing: the queue fills with two datagrams...
    // SAFETY: signals to our own child process.
    unsafe { libc::kill(pid as i32, libc::SIGSTOP) };
    // The signal takes hold asynchronously: a vigil still running could
    // give the datagrams their verdicts and leave the queue with room.
    wait_for("vigil to stop", Duration::from_secs(10), || stopped(pid));
    Lab::within(&client, || {
        let s = UdpSocket::bind("0.0.0.0:0").unwrap();
        for _ in 0..4 {
            s.send_to(b"fill", "198.18.5.1:53").unwrap();
        }
    });
    let router_ns = router.clone();
    wait_for("the queue to fill", Duration::from_secs(10), || nfqueue_waiting(&router_ns, 6).is_none_or(|n| n >= 2));
    // ...and with fail-open the kernel lets the rest through unseen (a few
    // tries: a loaded machine may be slow to answer, never to pass it).
    let ok = (0..3)
        .map(|_| http_get(&client, "198.18.5.1:80", "/index.html"))
        .find(Result::is_ok)
        .unwrap_or_else(|| http_get(&client, "198.18.5.1:80", "/index.html"));
    // SAFETY: as above.
    unsafe { libc::kill(pid as i32, libc::SIGCONT) };
    assert!(ok.is_ok(), "fail-open must keep traffic flowing: {ok:?}");
    stop(&mut vigil.0);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Waits until `done`, failing the test after `limit`.
fn wait_for(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Whether every thread of process `pid` is stopped.
fn stopped(pid: u32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return false };
    tasks.filter_map(Result::ok).all(|t| {
        // The state follows the command name, which is in parentheses.
        std::fs::read_to_string(t.path().join("stat"))
            .ok()
            .and_then(|s| s.rsplit(')').next().map(|rest| matches!(rest.trim_start().chars().next(), Some('T' | 't'))))
            .unwrap_or(false)
    })
}

/// Packets of NFQUEUE `queue` in namespace `ns` waiting for a verdict;
/// `None` where the kernel does not list its queues.
fn nfqueue_waiting(ns: &str, queue: u16) -> Option<u64> {
    Lab::within(ns, move || {
        let text = std::fs::read_to_string("/proc/thread-self/net/netfilter/nfnetlink_queue").ok()?;
        text.lines().find_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.first()?.parse::<u16>().ok()? == queue).then(|| f.get(2)?.parse().ok())?
        })
    })
}

/// Lines of a log file that mention `needle` (the file may not exist yet).
fn lines_with(path: &Path, needle: &str) -> usize {
    std::fs::read_to_string(path).map_or(0, |t| t.lines().filter(|l| l.contains(needle)).count())
}

/// Waits until `path` has `n` lines with `needle`; how long that took, or None after `limit`.
fn wait_lines(path: &Path, needle: &str, n: usize, limit: Duration) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if lines_with(path, needle) >= n {
            return Some(start.elapsed());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

#[test]
fn live_records_reach_disk_within_the_flush_interval_and_survive_kill_9() {
    let Some(mut lab) = Lab::new("flush") else { return };
    let client = lab.ns("c");
    let server = lab.ns("s");
    let (vc, vs) = (format!("fc{}", std::process::id()), format!("fs{}", std::process::id()));
    lab.veth(&client, &vc, &server, &vs);
    lab.run(&client, &format!("ip addr add 198.18.6.1/24 dev {vc}"));
    lab.run(&server, &format!("ip addr add 198.18.6.2/24 dev {vs}"));
    neighbours(&lab, (&client, &vc, "198.18.6.1"), (&server, &vs, "198.18.6.2"));
    http_server(&server, "198.18.6.2:80");

    let dir = out_dir("flush");
    let mut vigil = start_vigil(&lab, &server, &dir, &["-i", &vs, "--set", "heartbeat.output-flush-interval=1"]);
    let (eve_path, fast_path) = (dir.join("eve.json"), dir.join("fast.log"));
    let alert = "\"signature_id\":1000001";

    // vigil keeps running: the alert must be on disk within the interval and a margin.
    http_get(&client, "198.18.6.2:80", "/cgi-bin/run?cmd=/bin/sh").expect("http");
    let took = wait_lines(&eve_path, alert, 1, Duration::from_secs(2));
    assert!(took.is_some(), "no alert in eve.json 2 s after the exchange");
    assert!(wait_lines(&fast_path, "[1:1000001:1]", 1, Duration::from_secs(2)).is_some(), "fast.log");

    // A rotation: the files are moved away, SIGHUP opens them again by name.
    std::fs::rename(&eve_path, dir.join("eve.json.1")).unwrap();
    std::fs::rename(&fast_path, dir.join("fast.log.1")).unwrap();
    // SAFETY: a signal to our own child process.
    unsafe { libc::kill(vigil.0.id() as i32, libc::SIGHUP) };
    let deadline = Instant::now() + Duration::from_secs(5);
    while !eve_path.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(eve_path.exists() && fast_path.exists(), "SIGHUP opened the files again");
    http_get(&client, "198.18.6.2:80", "/two/bin/sh").expect("http");
    http_get(&client, "198.18.6.2:80", "/three/bin/sh").expect("http");
    assert!(wait_lines(&eve_path, alert, 2, Duration::from_secs(2)).is_some(), "alerts after the rotation");
    // Older than the flush window: a kill -9 must not lose them.
    std::thread::sleep(Duration::from_millis(1200));
    // SAFETY: as above.
    unsafe { libc::kill(vigil.0.id() as i32, libc::SIGKILL) };
    let _ = vigil.0.wait();
    assert_eq!(lines_with(&dir.join("eve.json.1"), alert), 1, "the first alert stayed in the rotated file");
    assert_eq!(lines_with(&eve_path, alert), 2, "both later alerts survived kill -9");
    assert_eq!(lines_with(&fast_path, "[1:1000001:1]"), 2, "fast.log too");
    // Every line on disk is whole.
    for line in std::fs::read_to_string(&eve_path).unwrap().lines() {
        serde_json::from_str::<Value>(line).expect("whole JSON lines");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A collector on a unix stream socket: every line any connection brings,
/// until it is shut (its socket file removed, connections closed).
struct Collector {
    path: PathBuf,
    lines: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    open: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Collector {
    fn start(path: &Path, lines: std::sync::Arc<std::sync::Mutex<Vec<String>>>) -> Collector {
        use std::sync::atomic::Ordering;
        let listener = std::os::unix::net::UnixListener::bind(path).unwrap();
        listener.set_nonblocking(true).unwrap();
        let open = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
        let (keep, sink) = (open.clone(), lines.clone());
        let thread = std::thread::spawn(move || {
            let mut conns = Vec::new();
            let mut pending = Vec::new();
            while keep.load(Ordering::Relaxed) {
                if let Ok((c, _)) = listener.accept() {
                    c.set_nonblocking(true).unwrap();
                    conns.push(c);
                    pending.push(Vec::new());
                }
                let mut buf = [0u8; 65536];
                for (c, part) in conns.iter_mut().zip(pending.iter_mut()) {
                    while let Ok(n) = c.read(&mut buf) {
                        if n == 0 {
                            break;
                        }
                        part.extend_from_slice(&buf[..n]);
                    }
                    while let Some(end) = part.iter().position(|&b| b == b'\n') {
                        let line: Vec<u8> = part.drain(..=end).collect();
                        sink.lock().unwrap().push(String::from_utf8_lossy(&line[..end]).into_owned());
                    }
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        });
        Collector { path: path.to_path_buf(), lines, open, thread: Some(thread) }
    }

    fn shut(mut self) {
        self.open.store(false, std::sync::atomic::Ordering::Relaxed);
        self.thread.take().unwrap().join().unwrap();
        std::fs::remove_file(&self.path).unwrap();
    }

    fn count(&self) -> usize {
        self.lines.lock().unwrap().len()
    }
}

/// The file's DNS and alert records, as written.
fn dns_and_alerts(dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join("eve.json")).unwrap_or_default();
    text.lines().filter(|l| !l.contains("\"event_type\":\"stats\"")).map(str::to_string).collect()
}

#[test]
fn eve_to_a_unix_socket_survives_the_collector_going_away() {
    let Some(mut lab) = Lab::new("snk") else { return };
    let client = lab.ns("c");
    let server = lab.ns("s");
    let (vc, vs) = (format!("kc{}", std::process::id()), format!("ks{}", std::process::id()));
    lab.veth(&client, &vc, &server, &vs);
    lab.run(&client, &format!("ip addr add 198.18.4.1/24 dev {vc}"));
    lab.run(&server, &format!("ip addr add 198.18.4.2/24 dev {vs}"));
    neighbours(&lab, (&client, &vc, "198.18.4.1"), (&server, &vs, "198.18.4.2"));
    http_server(&server, "198.18.4.2:80");

    let dir = out_dir("sink");
    let sock = dir.join("collector.sock");
    let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let collector = Collector::start(&sock, lines.clone());
    let item = |filetype: &str, filename: &str| {
        format!("  - eve-log:\n      enabled: yes\n      filetype: {filetype}\n      filename: {filename}\n      types:\n        - alert\n        - dns\n")
    };
    let yaml = format!(
        "%YAML 1.1\n---\noutputs:\n{}{}  - eve-log:\n      enabled: yes\n      filename: stats.json\n      types:\n        - stats\n",
        item("regular", "eve.json"),
        item("unix_stream", &sock.display().to_string()),
    );
    std::fs::write(dir.join("sink.yaml"), yaml).unwrap();
    let cfg = dir.join("sink.yaml");
    let mut vigil = start_vigil(&lab, &server, &dir, &["-c", cfg.to_str().unwrap(), "-i", &vs, "--runmode", "single"]);
    let queries = |n: usize, gap: Duration| {
        for _ in 0..n {
            dns_query(&client, "198.18.4.2:53", "www.evil.example");
            std::thread::sleep(gap);
        }
    };
    // Caught up: the collector has every record the file has (the file is
    // written within a second, live).
    let caught_up = |collector: &Collector| {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let want = dns_and_alerts(&dir).len();
            if want > 0 && collector.count() == want {
                return want;
            }
            assert!(Instant::now() < deadline, "collector has {} of {want}", collector.count());
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    queries(10, Duration::from_millis(20));
    let first = caught_up(&collector);
    // The collector goes away for 5 s while traffic goes on.
    collector.shut();
    queries(20, Duration::from_millis(250));
    let collector = Collector::start(&sock, lines.clone());
    queries(10, Duration::from_millis(20));
    std::thread::sleep(Duration::from_secs(2));
    let stats_before_stop = std::fs::read_to_string(dir.join("stats.json")).unwrap_or_default();
    stop(&mut vigil.0);
    std::thread::sleep(Duration::from_millis(200));
    collector.shut();

    let file = dns_and_alerts(&dir);
    // 40 queries, each a dns record and an alert.
    assert_eq!(file.len(), 80, "{file:?}");
    let got = lines.lock().unwrap().clone();
    assert!(got.len() > first, "delivery resumed");
    for l in &got {
        assert!(file.contains(l), "the collector got a record the file lacks: {l}");
    }
    let stats = std::fs::read_to_string(dir.join("stats.json")).unwrap();
    let last: Value = serde_json::from_str(stats.lines().last().unwrap()).unwrap();
    let dropped = last["stats"]["eve_log"]["1"]["dropped"].as_u64().unwrap();
    let sent = last["stats"]["eve_log"]["1"]["sent"].as_u64().unwrap();
    assert_eq!(file.len() - got.len(), dropped as usize, "what did not arrive is counted ({stats_before_stop})");
    assert!(sent as usize <= got.len());
    assert_eq!(last["stats"]["eve_log"]["1"]["reconnects"], 1);
    let _ = std::fs::remove_dir_all(&dir);
}
