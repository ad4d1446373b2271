//! EVE records into a real Redis server (Debian's `redis-server`, which
//! `scripts/deps.sh --tests` installs): a list, a channel and a stream, and
//! the server going away mid-run and coming back.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use vigil_output::sink::{drain, RedisCommand, RedisTarget, Sink, SinkTarget};

struct Server {
    child: Child,
    port: u16,
    dir: PathBuf,
}

impl Server {
    fn start(port: u16, name: &str) -> Server {
        let dir = std::env::temp_dir().join(format!("vigil-redis-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server (Debian package redis-server; scripts/deps.sh --tests installs it)");
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "redis-server did not start on port {port}");
            std::thread::sleep(Duration::from_millis(20));
        }
        Server { child, port, dir }
    }

    /// One command, its reply as text lines.
    fn query(&self, args: &[&str]) -> Vec<String> {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut cmd = format!("*{}\r\n", args.len());
        for a in args {
            cmd.push_str(&format!("${}\r\n{a}\r\n", a.len()));
        }
        s.write_all(cmd.as_bytes()).unwrap();
        let mut r = BufReader::new(s);
        let mut out = Vec::new();
        read_value(&mut r, &mut out);
        out
    }
}

fn read_value(r: &mut BufReader<TcpStream>, out: &mut Vec<String>) {
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    let line = line.trim_end();
    match line.as_bytes()[0] {
        b'*' => {
            let n: i64 = line[1..].parse().unwrap();
            for _ in 0..n.max(0) {
                read_value(r, out);
            }
        }
        b'$' => {
            let n: i64 = line[1..].parse().unwrap();
            if n >= 0 {
                let mut buf = vec![0u8; n as usize + 2];
                r.read_exact(&mut buf).unwrap();
                out.push(String::from_utf8_lossy(&buf[..n as usize]).into_owned());
            }
        }
        _ => out.push(line.to_string()),
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap().local_addr().unwrap().port()
}

fn target(port: u16, command: RedisCommand, batch: usize) -> SinkTarget {
    SinkTarget::Redis(RedisTarget {
        server: "127.0.0.1".into(),
        port,
        command,
        key: "vigil-test".into(),
        batch,
        stream_maxlen: 1000,
        trim_exact: false,
    })
}

fn records(from: u32, to: u32) -> Vec<u8> {
    (from..to).flat_map(|i| format!("{{\"event_type\":\"alert\",\"n\":{i}}}\n").into_bytes()).collect()
}

#[test]
fn lists_and_streams_receive_every_record() {
    let server = Server::start(free_port(), "list");
    let sink = Sink::start(target(server.port, RedisCommand::Rpush, 10), 1 << 20).unwrap();
    sink.push(&records(0, 25));
    sink.push(&records(25, 40));
    let c = sink.close();
    assert_eq!((c.sent, c.dropped), (40, 0));
    let list = server.query(&["LRANGE", "vigil-test", "0", "-1"]);
    let want: Vec<String> = (0..40).map(|i| format!("{{\"event_type\":\"alert\",\"n\":{i}}}")).collect();
    assert_eq!(list, want, "RPUSH keeps the order");
    server.query(&["DEL", "vigil-test"]);

    let sink = Sink::start(target(server.port, RedisCommand::Xadd, 1), 1 << 20).unwrap();
    sink.push(&records(0, 3));
    assert_eq!(sink.close().sent, 3);
    let entries = server.query(&["XRANGE", "vigil-test", "-", "+"]);
    // Each entry: its id, then the field "eve" and the record.
    assert_eq!(entries.len(), 9, "{entries:?}");
    assert_eq!((entries[1].as_str(), entries[2].as_str()), ("eve", "{\"event_type\":\"alert\",\"n\":0}"));
}

#[test]
fn a_server_gone_for_a_while_costs_counted_records_only() {
    let port = free_port();
    let server = Server::start(port, "gone");
    let sink = Sink::start(target(port, RedisCommand::Lpush, 1), 1 << 20).unwrap();
    sink.push(&records(0, 10));
    drain(&sink, Duration::from_secs(10));
    // Gone: the queue holds what comes meanwhile, the sink keeps trying.
    drop(server);
    sink.push(&records(10, 20));
    std::thread::sleep(Duration::from_millis(300));
    sink.push(&records(20, 30));
    // Back on the same port, empty (no persistence).
    let server = Server::start(port, "back");
    let deadline = Instant::now() + Duration::from_secs(20);
    while sink.counts().sent + sink.counts().dropped < 30 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    sink.push(&records(30, 40));
    let c = sink.close();
    assert_eq!(c.sent + c.dropped, 40, "every record is delivered or counted: {c:?}");
    assert!(c.reconnects >= 1, "{c:?}");
    let list = server.query(&["LRANGE", "vigil-test", "0", "-1"]);
    // Everything after the outage arrived, and the records lost in it are at
    // most the ones the broken connection had in hand.
    for i in 20..40 {
        let rec = format!("{{\"event_type\":\"alert\",\"n\":{i}}}");
        assert!(list.contains(&rec), "record {i} missing: {list:?}");
    }
    assert_eq!(list.len() as u64 + 10, c.sent, "the first server took 10: {c:?}");
}
