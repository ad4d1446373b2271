//! Helpers shared by the lab's tests: scratch directories and generated captures.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use vigil_lab::gen::options::{Amount, GenOptions};
use vigil_lab::gen::truth::Truth;
use vigil_lab::gen::{self, OutputPaths};

/// A fresh directory under the system temp dir, unique to this test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vigil-lab-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Small options: `flows` flows of the defaults, then `f` adjusts them.
pub fn opts(flows: u64, f: impl FnOnce(&mut GenOptions)) -> GenOptions {
    let mut o = GenOptions { amount: Amount::Flows(flows), ..GenOptions::default() };
    f(&mut o);
    o
}

/// Writes `out.pcap` (+ rules, truth) for `o` into `dir`.
pub fn write(dir: &Path, o: &GenOptions) -> (OutputPaths, Truth) {
    let paths = OutputPaths::beside(&dir.join("out.pcap"), None, None);
    let truth = gen::write_files(o, &paths).unwrap();
    (paths, truth)
}
