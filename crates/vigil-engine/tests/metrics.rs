//! `stats.prometheus`: while a run (two autofp workers) waits for more
//! files, a scrape of the endpoint has every counter a stats record taken
//! then has, with the same values, each worker's too (`threads: yes`), and Prometheus's own checker (`promtool check metrics`, Debian's
//! `prometheus` package, which `scripts/deps.sh --tests` installs) accepts it.

mod common;

use common::{short_session, spaced, tempdir, write_pcap};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};
use vigil_engine::{run_offline, RunOptions};

fn get(port: u16, path: &str) -> Option<(String, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(s, "GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n").ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    Some((head.lines().next()?.to_string(), body.to_string()))
}

/// Every number of a stats record, by its dotted name.
fn flatten(v: &serde_json::Value, prefix: &str, out: &mut Vec<(String, u64)>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, v) in m {
                let name = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                flatten(v, &name, out);
            }
        }
        serde_json::Value::Number(n) => out.extend(n.as_u64().map(|n| (prefix.to_string(), n))),
        _ => {}
    }
}

#[test]
fn a_scrape_has_the_stats_records_counters() {
    let dir = tempdir("metrics", "scrape");
    let input = dir.join("in");
    std::fs::create_dir_all(&input).unwrap();
    write_pcap(&input.join("a.pcap"), spaced(&short_session()));
    let port = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap().local_addr().unwrap().port();
    let yaml = format!(
        "pcap-file:\n  delay: 0\nstats:\n  prometheus:\n    enabled: yes\n    threads: yes\n    listen: 127.0.0.1:{port}\noutputs:\n  - eve-log:\n      enabled: yes\n      filename: eve.json\n      types:\n        - stats\n"
    );
    std::fs::write(dir.join("vigil.yaml"), yaml).unwrap();
    let opts = RunOptions {
        inputs: vec![input.clone()],
        log_dir: Some(dir.clone()),
        config: Some(dir.join("vigil.yaml")),
        checksum: Some("none".into()),
        pcap_continuous: true,
        runmode: Some("autofp".into()),
        threads: Some(2),
        ..Default::default()
    };
    let control = opts.control.clone();
    let run = std::thread::spawn(move || run_offline(&opts, &mut |_| {}).map(|s| s.packets));
    // The file is read once it has settled; then the run waits for more.
    let deadline = Instant::now() + Duration::from_secs(60);
    let body = loop {
        assert!(Instant::now() < deadline, "no scrape with the file's packets");
        if let Some((status, body)) = get(port, "/metrics") {
            if status.contains("200") && body.contains("vigil_decoder_pkts_total 8\n") {
                break body;
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(get(port, "/other").unwrap().0.contains("404"));
    // Each worker's series, labelled, adding up to the total.
    let per_worker: u64 = body
        .lines()
        .filter(|l| l.starts_with("vigil_decoder_pkts_total{thread=\"W#"))
        .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(per_worker, 8, "{body}");
    // A stats record now, with the run idle: the same counters.
    let before = std::fs::read_to_string(dir.join("eve.json")).unwrap_or_default().lines().count();
    control.request_stats();
    let record = loop {
        assert!(Instant::now() < deadline, "no stats record on request");
        let text = std::fs::read_to_string(dir.join("eve.json")).unwrap_or_default();
        if text.lines().count() > before {
            break text.lines().last().unwrap().to_string();
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    control.request_stop();
    assert_eq!(run.join().unwrap().unwrap(), 8);
    let v: serde_json::Value = serde_json::from_str(&record).unwrap();
    let mut counters = Vec::new();
    flatten(&v["stats"], "", &mut counters);
    assert!(counters.len() > 100, "{counters:?}");
    for (name, value) in counters.iter().filter(|(n, _)| n != "uptime" && !n.starts_with("detect.engines")) {
        let base = format!("vigil_{}", name.replace(['.', '-'], "_"));
        let found = body
            .lines()
            .filter(|l| !l.starts_with('#') && !l.contains('{'))
            .find(|l| l.split(' ').next().is_some_and(|m| m == base || m == format!("{base}_total")));
        let Some(line) = found else { panic!("{name} is not exposed") };
        assert_eq!(line.rsplit(' ').next().unwrap(), value.to_string(), "{name}");
    }
    // Prometheus's checker.
    let mut check = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("promtool (Debian package prometheus; scripts/deps.sh --tests installs it)");
    check.stdin.take().unwrap().write_all(body.as_bytes()).unwrap();
    let out = check.wait_with_output().unwrap();
    assert!(out.status.success(), "{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    std::fs::remove_dir_all(&dir).unwrap();
}
