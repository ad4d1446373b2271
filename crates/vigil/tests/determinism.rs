//! The same capture and rules give the same records, run after run: alerts,
//! flow ids and all (only the stats record's wall-clock uptime may differ).

use std::path::Path;
use std::process::Command;

fn run(dir: &Path) -> Vec<String> {
    let _ = std::fs::remove_dir_all(dir);
    let st = Command::new(env!("CARGO_BIN_EXE_vigil")).args(["demo", "-q", "-l"]).arg(dir).status().unwrap();
    assert!(st.success());
    let text = std::fs::read_to_string(dir.join("eve.json")).unwrap();
    let lines = text.lines().filter(|l| !l.contains("\"event_type\":\"stats\"")).map(str::to_string).collect();
    std::fs::remove_dir_all(dir).unwrap();
    lines
}

#[test]
fn two_runs_write_the_same_records() {
    let base = std::env::temp_dir().join(format!("vigil-determinism-{}", std::process::id()));
    let a = run(&base.join("a"));
    let b = run(&base.join("b"));
    assert!(a.iter().any(|l| l.contains("\"event_type\":\"alert\"")), "the demo raises alerts");
    assert!(a.iter().any(|l| l.contains("\"flow_id\"")));
    assert_eq!(a, b);
}
