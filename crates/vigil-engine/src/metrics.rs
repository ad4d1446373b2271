//! `stats.prometheus` (vigil's own): every stats counter over HTTP in
//! Prometheus's text format, for a scraper to read while vigil runs.
//!
//! A scrape asks the running engine for its counters the way the control
//! socket's `dump-counters` does (the reading loop answers between
//! packets), so it sees what a stats record written at that moment would:
//! the same totals under the same names. A counter `decoder.pkts` is the
//! metric `vigil_decoder_pkts_total`, a gauge such as `tcp.memuse` is
//! `vigil_tcp_memuse`; each metric's help text gives Suricata's name.
//! One thread serves the endpoint, one request at a time, with short
//! timeouts, so a stuck client holds nothing up for long.

use crate::control::Control;
use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How long a scrape waits for the engine's counters.
const ANSWER_WAIT: Duration = Duration::from_secs(5);
/// How long a client may take to send its request or read the answer.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(2);

/// The endpoint; dropping it stops the thread.
pub(crate) struct MetricsServer {
    done: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl MetricsServer {
    pub(crate) fn start(cfg: &vigil_config::Prometheus, control: Control) -> io::Result<MetricsServer> {
        let listener = TcpListener::bind(&cfg.listen)?;
        listener.set_nonblocking(true)?;
        let done = Arc::new(AtomicBool::new(false));
        let stop = done.clone();
        let (path, threads) = (cfg.path.clone(), cfg.threads);
        let thread = std::thread::Builder::new().name("metrics".into()).spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((conn, _)) => {
                        // A client that misbehaves loses its answer, nothing more.
                        let _ = answer(conn, &path, threads, &control);
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => std::thread::sleep(Duration::from_millis(20)),
                    Err(_) => std::thread::sleep(Duration::from_millis(100)),
                }
            }
        })?;
        Ok(MetricsServer { done, thread: Some(thread) })
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn answer(conn: TcpStream, path: &str, threads: bool, control: &Control) -> io::Result<()> {
    conn.set_nonblocking(false)?;
    conn.set_write_timeout(Some(CLIENT_TIMEOUT))?;
    // The request head within CLIENT_TIMEOUT in all, however it trickles in.
    let deadline = std::time::Instant::now() + CLIENT_TIMEOUT;
    let mut head = Vec::new();
    let mut reader = conn.try_clone()?;
    let mut buf = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 * 1024 {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        reader.set_read_timeout(Some(left))?;
        match reader.read(&mut buf)? {
            0 => break,
            n => head.extend_from_slice(&buf[..n]),
        }
    }
    let line = String::from_utf8_lossy(head.split(|&b| b == b'\n').next().unwrap_or_default()).into_owned();
    let mut words = line.split_whitespace();
    let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let target = target.split('?').next().unwrap_or("");
    let (status, body) = if method != "GET" {
        ("405 Method Not Allowed", "only GET\n".to_string())
    } else if target != path {
        ("404 Not Found", format!("metrics are at {path}\n"))
    } else {
        match control.ask_counters().recv_timeout(ANSWER_WAIT) {
            Ok(counters) => {
                let per_thread = if threads { control.thread_counters() } else { Vec::new() };
                ("200 OK", exposition(&counters, &per_thread))
            }
            Err(_) => ("503 Service Unavailable", "the engine did not answer in time\n".to_string()),
        }
    };
    let mut conn = conn;
    write!(
        conn,
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    conn.flush()
}

/// Counters that go up and down (sizes, fill levels, what is open now),
/// by the last part of their name; the rest only grow.
fn is_gauge(name: &str) -> bool {
    let last = name.rsplit('.').next().unwrap_or(name);
    matches!(
        last,
        "memuse"
            | "memcap"
            | "max_pkt_size"
            | "avg_pkt_size"
            | "pressure"
            | "pressure_max"
            | "active_sessions"
            | "spare"
            | "open_files"
            | "uptime"
            | "hold_memuse"
            | "hold_memcap"
            | "active"
    ) || last.ends_with("_memuse")
        || name == "uptime"
}

/// A Prometheus metric name for a Suricata counter name.
fn metric_name(name: &str, gauge: bool) -> String {
    let mut m = String::with_capacity(name.len() + 12);
    m.push_str("vigil_");
    for c in name.chars() {
        m.push(if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' });
    }
    if !gauge && !m.ends_with("_total") {
        m.push_str("_total");
    }
    m
}

/// The text exposition format of `counters`, and of each worker's
/// (`threads`, by thread name) as the same metrics labelled `thread`.
pub(crate) fn exposition(counters: &[(String, u64)], threads: &[(String, Vec<(String, u64)>)]) -> String {
    let mut out = String::new();
    let mut seen = std::collections::HashSet::new();
    let by_thread: Vec<(&str, std::collections::HashMap<&str, u64>)> =
        threads.iter().map(|(t, c)| (t.as_str(), c.iter().map(|(n, v)| (n.as_str(), *v)).collect())).collect();
    for (name, v) in counters {
        let gauge = is_gauge(name);
        let metric = metric_name(name, gauge);
        // Two Suricata names that read alike once cleaned: the first wins.
        if !seen.insert(metric.clone()) {
            continue;
        }
        let kind = if gauge { "gauge" } else { "counter" };
        out.push_str(&format!(
            "# HELP {metric} Suricata stats counter {name}.\n# TYPE {metric} {kind}\n{metric} {v}\n"
        ));
        for (t, c) in &by_thread {
            if let Some(v) = c.get(name.as_str()) {
                let label = t.replace('\\', "\\\\").replace('"', "\\\"");
                out.push_str(&format!("{metric}{{thread=\"{label}\"}} {v}\n"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_types() {
        let counters: Vec<(String, u64)> = vec![
            ("decoder.pkts".into(), 42),
            ("tcp.memuse".into(), 1024),
            ("flow.total".into(), 3),
            ("app_layer.flow.dns-tcp".into(), 1),
        ];
        let text = exposition(&counters, &[]);
        assert!(text.contains("# TYPE vigil_decoder_pkts_total counter\nvigil_decoder_pkts_total 42\n"), "{text}");
        assert!(text.contains("# TYPE vigil_tcp_memuse gauge\nvigil_tcp_memuse 1024\n"), "{text}");
        assert!(text.contains("vigil_flow_total 3\n"), "{text}");
        assert!(text.contains("vigil_app_layer_flow_dns_tcp_total 1\n"), "{text}");
        assert!(text.contains("# HELP vigil_decoder_pkts_total Suricata stats counter decoder.pkts.\n"));
        // A count of memcap hits is a counter, whatever its name holds.
        let memcap = exposition(&[("tcp.ssn_memcap_drop".into(), 2)], &[]);
        assert!(memcap.contains("# TYPE vigil_tcp_ssn_memcap_drop_total counter"), "{memcap}");
    }

    #[test]
    fn each_worker_is_a_labelled_series() {
        let threads = vec![
            ("W#01".to_string(), vec![("decoder.pkts".to_string(), 40)]),
            ("W#02".to_string(), vec![("decoder.pkts".to_string(), 2)]),
        ];
        let text = exposition(&[("decoder.pkts".into(), 42)], &threads);
        assert!(
            text.ends_with(
                "vigil_decoder_pkts_total 42\nvigil_decoder_pkts_total{thread=\"W#01\"} 40\nvigil_decoder_pkts_total{thread=\"W#02\"} 2\n"
            ),
            "{text}"
        );
    }
}
