//! Every capture of the conformance suite (many malformed on purpose) is read
//! and decoded without a panic, and decoding ends for each one.

use std::path::{Path, PathBuf};
use vigil_capture::{PcapFile, Source};
use vigil_decode::{Counter, DecodeConfig, Decoder};

fn captures(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            captures(&p, out);
        } else if is_capture(&p) {
            out.push(p);
        }
    }
}

/// Captures are found by their magic number: some carry odd extensions (`.pcap_`, `.bak`, none).
fn is_capture(p: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 4];
    let ok = std::fs::File::open(p).and_then(|mut f| f.read_exact(&mut magic)).is_ok();
    ok && matches!(
        magic,
        [0xd4, 0xc3, 0xb2, 0xa1]
            | [0xa1, 0xb2, 0xc3, 0xd4]
            | [0x4d, 0x3c, 0xb2, 0xa1]
            | [0xa1, 0xb2, 0x3c, 0x4d]
            | [0x0a, 0x0d, 0x0d, 0x0a]
    )
}

#[test]
fn every_conformance_capture_decodes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance");
    assert!(root.is_dir(), "conformance suite not found at {}", root.display());
    let mut files = Vec::new();
    captures(&root, &mut files);
    files.sort();
    assert!(files.len() > 1000, "expected the whole suite, found {} captures", files.len());
    let mut dec = Decoder::new(DecodeConfig::default());
    let (mut errors, mut unreadable, mut n) = (0, 0, 0u64);
    for f in &files {
        let Ok(mut src) = PcapFile::open(f) else {
            unreadable += 1;
            continue;
        };
        while let Some(next) = src.next_packet() {
            match next {
                Ok(raw) => {
                    n += 1;
                    dec.decode(raw.data, raw.ts, raw.linktype, n);
                }
                Err(_) => errors += 1,
            }
        }
    }
    assert_eq!(dec.counters.get(Counter::Pkts), n);
    eprintln!(
        "{} captures, {} packets, {} invalid, {} capture errors, {} unreadable",
        files.len(),
        n,
        dec.counters.get(Counter::Invalid),
        errors,
        unreadable
    );
}
