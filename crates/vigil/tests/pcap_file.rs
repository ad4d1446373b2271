//! Suricata's pcap-file directory switches through the binary:
//! `--pcap-file-recursive` reads sub-directories, `--pcap-file-continuous`
//! watches a directory for new files until stopped, `--pcap-file-delete`
//! removes each file once read.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("vigil-pcapfile-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let demo = Command::new(env!("CARGO_BIN_EXE_vigil")).args(["demo", "-q", "-l"]).arg(d.join("demo")).output();
    assert!(demo.unwrap().status.success());
    d
}

fn alerts(dir: &Path) -> usize {
    let eve = std::fs::read_to_string(dir.join("eve.json")).unwrap_or_default();
    eve.lines().filter(|l| l.contains("\"event_type\":\"alert\"")).count()
}

fn vigil(dir: &Path, input: &Path, out: &Path, extra: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_vigil"));
    c.arg("-r").arg(input).arg("-l").arg(out).arg("-S").arg(dir.join("demo/demo.rules"));
    c.args(["-k", "none", "--quiet"]).args(extra);
    c
}

#[test]
fn recursive_reads_sub_directories() {
    let d = scratch("recursive");
    std::fs::create_dir_all(d.join("in/a/b")).unwrap();
    std::fs::copy(d.join("demo/demo.pcap"), d.join("in/a/b/x.pcap")).unwrap();
    for (name, extra) in [("flat", &[][..]), ("deep", &["--pcap-file-recursive"][..])] {
        let out = d.join(name);
        std::fs::create_dir_all(&out).unwrap();
        let run = vigil(&d, &d.join("in"), &out, extra).output().unwrap();
        assert!(run.status.success(), "{name}: {}", String::from_utf8_lossy(&run.stderr));
    }
    assert_eq!(alerts(&d.join("flat")), 0, "without the switch, sub-directories are not read");
    assert!(alerts(&d.join("deep")) > 0);
    assert_eq!(alerts(&d.join("deep")), alerts(&d.join("demo")), "the same alerts as the demo's own run");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn continuous_reads_new_files_until_stopped_and_delete_removes_them() {
    let d = scratch("continuous");
    let watched = d.join("in");
    let out = d.join("out");
    std::fs::create_dir_all(&watched).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    let extra = [
        "--pcap-file-continuous",
        "--pcap-file-delete",
        "--set",
        "pcap-file.delay=0",
        "--set",
        "pcap-file.poll-interval=1",
    ];
    let mut child = vigil(&d, &watched, &out, &extra).stderr(Stdio::piped()).spawn().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    assert!(child.try_wait().unwrap().is_none(), "an empty watched directory keeps the run waiting");
    // Written elsewhere, then moved in whole.
    std::fs::copy(d.join("demo/demo.pcap"), d.join("x.pcap")).unwrap();
    let arrived = watched.join("x.pcap");
    std::fs::rename(d.join("x.pcap"), &arrived).unwrap();
    let start = Instant::now();
    while arrived.exists() {
        assert!(start.elapsed() < Duration::from_secs(60), "the new file was not read and deleted");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(child.try_wait().unwrap().is_none(), "still watching after the file");
    let term = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status().unwrap();
    assert!(term.success());
    let out_status = child.wait_with_output().unwrap();
    assert!(out_status.status.success(), "{}", String::from_utf8_lossy(&out_status.stderr));
    assert_eq!(alerts(&out), alerts(&d.join("demo")), "the file was inspected in full");
    std::fs::remove_dir_all(&d).unwrap();
}
