//! Reads every capture in the suricata-verify corpus to its end: no panic, no
//! hang, at most one error each. Skipped when the corpus is not checked out.

mod common;

use std::path::{Path, PathBuf};

use vigil_capture::PcapFile;

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/conformance/suricata-verify/tests");

fn captures(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            captures(&path, out);
        } else if matches!(path.extension().and_then(|e| e.to_str()), Some("pcap" | "pcapng" | "cap")) {
            out.push(path);
        }
    }
}

#[test]
fn every_suricata_verify_capture_reads_to_its_end() {
    let corpus = Path::new(CORPUS);
    if !corpus.is_dir() {
        println!("skipping: no corpus at {}", corpus.display());
        return;
    }
    let mut files = Vec::new();
    captures(corpus, &mut files);
    files.sort();

    let (mut packets, mut errors, mut unopened) = (0usize, 0usize, 0usize);
    for path in &files {
        match PcapFile::open(path) {
            Ok(mut src) => {
                let (pkts, err) = common::drain(&mut src);
                packets += pkts.len();
                if let Some(e) = err {
                    errors += 1;
                    println!("{e}");
                }
            }
            Err(e) => {
                unopened += 1;
                println!("{e}");
            }
        }
    }
    println!("conformance: {} files, {packets} packets, {errors} read errors, {unopened} not opened", files.len());
    assert!(!files.is_empty(), "corpus directory holds no captures");
}
