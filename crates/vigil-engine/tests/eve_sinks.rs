//! EVE to sockets and Redis end to end: every record the file output
//! writes reaches a unix stream socket, a unix datagram socket and a Redis
//! list too, in every runmode, and the sinks' counters say so.

mod common;

use common::{offline_opts, short_session, spaced, tempdir, write_pcap};
use std::io::Read;
use std::os::unix::net::{UnixDatagram, UnixListener};
use std::path::Path;
use std::time::{Duration, Instant};
use vigil_engine::{run_offline, RunOptions};

const RULES: &str = "alert tcp any any -> any any (msg:\"hello\"; content:\"hello\"; sid:1;)\n";

fn eve_item(filetype: &str, filename: &str, extra: &str) -> String {
    format!(
        "  - eve-log:\n      enabled: yes\n      filetype: {filetype}\n      filename: {filename}\n{extra}      types:\n        - alert\n        - flow\n"
    )
}

/// The file's alert and flow records, sorted.
fn file_records(dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join("eve.json")).unwrap();
    let mut v: Vec<String> = text.lines().map(str::to_string).collect();
    v.sort();
    v
}

fn run(dir: &Path, yaml: &str, runmode: &str) -> serde_json::Value {
    std::fs::write(dir.join("vigil.yaml"), yaml).unwrap();
    std::fs::write(dir.join("test.rules"), RULES).unwrap();
    let opts = RunOptions {
        config: Some(dir.join("vigil.yaml")),
        runmode: Some(runmode.into()),
        threads: Some(2),
        ..offline_opts(dir)
    };
    run_offline(&opts, &mut |_| {}).unwrap();
    let stats = std::fs::read_to_string(dir.join("stats.json")).unwrap();
    serde_json::from_str(stats.lines().last().unwrap()).unwrap()
}

#[test]
fn unix_sockets_get_what_the_file_gets() {
    for runmode in ["single", "workers"] {
        let dir = tempdir("eve-sinks", &format!("unix-{runmode}"));
        write_pcap(&dir.join("in.pcap"), spaced(&short_session()));
        let (stream_path, dgram_path) = (dir.join("stream.sock"), dir.join("dgram.sock"));
        let listener = UnixListener::bind(&stream_path).unwrap();
        let dgram = UnixDatagram::bind(&dgram_path).unwrap();
        dgram.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let reader = std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            let mut text = String::new();
            conn.read_to_string(&mut text).unwrap();
            text
        });
        let yaml = format!(
            "outputs:\n{}{}{}  - eve-log:\n      enabled: yes\n      filename: stats.json\n      types:\n        - stats\n",
            eve_item("regular", "eve.json", ""),
            eve_item("unix_stream", &stream_path.display().to_string(), ""),
            eve_item("unix_dgram", &dgram_path.display().to_string(), "      prefix: \"@cee: \"\n"),
        );
        let stats = run(&dir, &yaml, runmode);
        let want = file_records(&dir);
        assert!(want.iter().any(|l| l.contains("\"event_type\":\"alert\"")), "{want:?}");
        let mut streamed: Vec<String> = reader.join().unwrap().lines().map(str::to_string).collect();
        streamed.sort();
        assert_eq!(streamed, want, "{runmode}: unix_stream");
        let mut datagrams = Vec::new();
        let mut buf = vec![0u8; 1 << 16];
        while datagrams.len() < want.len() {
            let n = dgram.recv(&mut buf).unwrap();
            let text = std::str::from_utf8(&buf[..n]).unwrap();
            datagrams.push(text.strip_prefix("@cee: ").expect("prefixed").to_string());
        }
        datagrams.sort();
        assert_eq!(datagrams, want, "{runmode}: unix_dgram");
        // The stats record is written before the sinks' last records go
        // out; what it counts was sent, nothing was dropped.
        for i in [1, 2] {
            assert_eq!(stats["stats"]["eve_log"][i.to_string()]["dropped"], 0, "{stats}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn a_redis_list_gets_what_the_file_gets() {
    let port = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap().local_addr().unwrap().port();
    let dir = tempdir("eve-sinks", "redis");
    let mut server = std::process::Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
        .arg("--dir")
        .arg(&dir)
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("redis-server (Debian package redis-server; scripts/deps.sh --tests installs it)");
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "redis-server did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    write_pcap(&dir.join("in.pcap"), spaced(&short_session()));
    let redis = format!("      redis:\n        server: 127.0.0.1\n        port: {port}\n        mode: rpush\n        key: vigil-eve\n        pipelining:\n          enabled: yes\n          batch-size: 4\n");
    let yaml = format!(
        "outputs:\n{}{}  - eve-log:\n      enabled: yes\n      filename: stats.json\n      types:\n        - stats\n",
        eve_item("regular", "eve.json", ""),
        eve_item("redis", "ignored.json", &redis),
    );
    run(&dir, &yaml, "autofp");
    let out = std::process::Command::new("redis-cli")
        .args(["-p", &port.to_string(), "--raw", "LRANGE", "vigil-eve", "0", "-1"])
        .output()
        .unwrap();
    let mut listed: Vec<String> = String::from_utf8(out.stdout).unwrap().lines().map(str::to_string).collect();
    listed.sort();
    assert_eq!(listed, file_records(&dir));
    let _ = server.kill();
    let _ = server.wait();
    std::fs::remove_dir_all(&dir).unwrap();
}
