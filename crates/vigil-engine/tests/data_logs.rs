//! `tcp-data` and `http-body-data` end to end: the bytes each side sent,
//! as its parser was given them, and an HTTP exchange's bodies, in the
//! log file and in a file per flow and side.

mod common;

use common::{offline_opts, spaced, tcp_session, tempdir, write_pcap};
use vigil_engine::{run_offline, RunOptions};

#[test]
fn stream_bytes_and_http_bodies_by_flow_and_side() {
    let dir = tempdir("datalogs", "both");
    let request: &[u8] = b"POST /up HTTP/1.1\r\nHost: lab.test\r\nContent-Length: 5\r\n\r\nhello";
    let response: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\ngoodbye";
    write_pcap(&dir.join("in.pcap"), spaced(&tcp_session(80, &[(request, response)])));
    std::fs::write(dir.join("test.rules"), "").unwrap();
    let yaml = "outputs:\n  - tcp-data:\n      enabled: yes\n      type: both\n  - http-body-data:\n      enabled: yes\n      type: dir\n";
    std::fs::write(dir.join("vigil.yaml"), yaml).unwrap();
    let opts = RunOptions { config: Some(dir.join("vigil.yaml")), ..offline_opts(&dir) };
    run_offline(&opts, &mut |_| {}).unwrap();
    let flow = "198.18.0.1_40000-198.18.0.2_80";
    let read = |p: &str| std::fs::read(dir.join(p)).unwrap_or_else(|e| panic!("{p}: {e}"));
    assert_eq!(read(&format!("tcp/{flow}--ts.data")), request);
    assert_eq!(read(&format!("tcp/{flow}--tc.data")), response);
    assert_eq!(read(&format!("http/{flow}-0-ts.data")), b"hello");
    assert_eq!(read(&format!("http/{flow}-0-tc.data")), b"goodbye");
    let log = String::from_utf8(read("tcp-data.log")).unwrap();
    assert!(log.starts_with(&format!("{flow}-ts:\n 0000  50 4F 53 54 20")), "{log}");
    assert!(log.contains(&format!("{flow}-tc:\n 0000  48 54 54 50")), "{log}");
    assert!(!dir.join("http-data.log").exists(), "type dir writes no log file");
    std::fs::remove_dir_all(&dir).unwrap();
}
