//! Damaged, hostile and non-capture input: every good packet first, then
//! exactly one error that says where and why, then nothing. Never a panic.

mod common;

use std::io::Cursor;

use common::*;
use vigil_capture::{CaptureError, PcapFile};

fn three_good(be: bool) -> Pcap {
    let mut pcap = Pcap::new(be, false, 65535, 1);
    for i in 0..3 {
        pcap.record(i, 0, &frame(i as u8, 60), 60);
    }
    pcap
}

#[test]
fn an_empty_file_is_not_a_capture() {
    let err = open_err(&[]);
    assert!(matches!(err, CaptureError::NotACapture { .. }));
    assert_eq!(err.to_string(), "test.pcap: not a pcap or pcapng file (empty)");
    assert_eq!(open_err(&[0xd4, 0xc3]).to_string(), "test.pcap: not a pcap or pcapng file (only 2 bytes)");
    assert_eq!(open_err(b"hello world").to_string(), "test.pcap: not a pcap or pcapng file (starts with 68 65 6c 6c)");
}

#[test]
fn a_cut_header_is_truncated() {
    let header = Pcap::new(false, false, 65535, 1).bytes();
    let err = open_err(&header[..10]);
    assert_eq!(err.to_string(), "test.pcap: truncated pcap file header at offset 0 (needs 24 bytes, 10 left)");
    let shb = Ng::new(true).bytes();
    let err = open_err(&shb[..20]);
    assert_eq!(err.to_string(), "test.pcap: truncated section header block at offset 0 (needs 28 bytes, 20 left)");
}

#[test]
fn a_truncated_last_record_ends_the_capture_after_the_good_ones() {
    for be in [false, true] {
        let mut pcap = three_good(be);
        pcap.record_claiming(9, 0, 1514, &frame(9, 200), 1514);
        let (pkts, err) = read(&pcap.bytes());
        assert_eq!(pkts.len(), 3);
        let err = err.expect("truncation reported");
        assert_eq!(err.offset(), Some(24 + 3 * 76));
        assert_eq!(err.to_string(), "test.pcap: truncated packet record at offset 252 (needs 1530 bytes, 216 left)");
    }
}

#[test]
fn a_file_cut_inside_a_record_header_is_truncated_too() {
    let mut bytes = three_good(false).bytes();
    bytes.extend_from_slice(&[1, 2, 3, 4, 5]);
    let (pkts, err) = read(&bytes);
    assert_eq!(pkts.len(), 3);
    assert!(matches!(err, Some(CaptureError::Truncated { needed: 16, available: 5, .. })), "{err:?}");
}

#[test]
fn garbage_after_good_records_is_one_error() {
    let mut bytes = three_good(true).bytes();
    bytes.extend_from_slice(&[0xff; 64]);
    let (pkts, err) = read(&bytes);
    assert_eq!(pkts.len(), 3);
    let err = err.unwrap();
    assert_eq!(err.to_string(), "test.pcap: packet record at offset 252 is too large (4294967295 bytes, limit 262144)");
}

#[test]
fn an_absurd_caplen_is_refused_without_reading_on() {
    let mut pcap = Pcap::new(false, false, 65535, 1);
    pcap.record_claiming(1, 0, 0xffff_fff0, &[0; 32], 60);
    let (pkts, err) = read(&pcap.bytes());
    assert!(pkts.is_empty());
    assert!(matches!(err, Some(CaptureError::TooLarge { len: 0xffff_fff0, .. })), "{err:?}");

    // A snaplen that allows anything still stops at the hard cap.
    let mut pcap = Pcap::new(false, false, u32::MAX, 1);
    pcap.record_claiming(1, 0, 300 << 20, &[0; 32], 60);
    let (_, err) = read(&pcap.bytes());
    assert!(matches!(err, Some(CaptureError::TooLarge { .. })), "{err:?}");

    // Under the cap, a lying caplen is just a truncated file.
    let mut pcap = Pcap::new(false, false, u32::MAX, 1);
    pcap.record_claiming(1, 0, 200 << 20, &[0; 32], 60);
    let (_, err) = read(&pcap.bytes());
    assert!(matches!(err, Some(CaptureError::Truncated { available: 48, .. })), "{err:?}");
}

fn ng_with_packets(be: bool) -> Ng {
    let mut ng = Ng::new(be);
    ng.interface(1, 0, &[]);
    for i in 0..3u8 {
        ng.epb(0, u64::from(i), &frame(i, 60), 60);
    }
    ng
}

#[test]
fn pcapng_truncated_last_block() {
    let mut bytes = ng_with_packets(false).bytes();
    let good = bytes.len();
    bytes.truncate(good - 10);
    let (pkts, err) = read(&bytes);
    assert_eq!(pkts.len(), 2);
    let err = err.unwrap();
    assert_eq!(
        err.to_string(),
        format!("test.pcap: truncated enhanced packet block at offset {} (needs 92 bytes, 82 left)", good - 92)
    );
}

#[test]
fn pcapng_garbage_in_the_middle() {
    let garbage: [(&[u8], &str); 5] = [
        (&[6, 0, 0, 0, 0xf0, 0xff, 0xff, 0xff, 0, 0, 0, 0], "is too large"),
        (&[0xff; 16], "not a multiple of 4"),
        (&[6, 0, 0, 0, 13, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], "not a multiple of 4"),
        (&[6, 0, 0, 0, 12, 0, 0, 0, 16, 0, 0, 0], "trailing length 16 differs"),
        (&[6, 0, 0, 0, 16, 0, 0, 0, 0, 0, 0, 0, 16, 0, 0, 0], "malformed body"),
    ];
    for (junk, says) in garbage {
        let mut ng = ng_with_packets(false);
        ng.out.extend_from_slice(junk);
        let after = ng_with_packets(false).bytes();
        ng.out.extend_from_slice(&after[28..]); // more good blocks nobody will see
        let (pkts, err) = read(&ng.bytes());
        assert_eq!(pkts.len(), 3, "{says}");
        let err = err.unwrap();
        assert!(err.to_string().contains(says), "{err}");
    }
}

#[test]
fn pcapng_caplen_beyond_its_block() {
    let mut ng = Ng::new(false);
    ng.interface(1, 0, &[]).epb_with(0, 1, 500, &frame(1, 60), 60, &[]);
    let (_, err) = read(&ng.bytes());
    let err = err.unwrap();
    assert!(err.to_string().contains("captured length 500 overruns the block (60 bytes of data)"), "{err}");
}

#[test]
fn pcapng_bad_byte_order_magic() {
    let mut bytes = Ng::new(false).bytes();
    bytes[8..12].copy_from_slice(&[1, 2, 3, 4]);
    let err = open_err(&bytes);
    assert!(err.to_string().contains("unknown byte-order magic 0x04030201"), "{err}");
}

#[test]
fn read_errors_name_the_offset_and_keep_the_cause() {
    let reader = FailsAfter { inner: Cursor::new(three_good(false).bytes()) };
    let mut src = PcapFile::from_reader("flaky.pcap", reader).unwrap();
    let (pkts, err) = drain(&mut src);
    assert_eq!(pkts.len(), 3);
    let err = err.unwrap();
    assert_eq!(err.to_string(), "flaky.pcap: read error at offset 252: disk on fire");
    assert!(std::error::Error::source(&err).is_some());
}

#[test]
fn a_missing_file_fails_to_open() {
    let err = PcapFile::open("/nonexistent/vigil/input.pcap").unwrap_err();
    assert!(matches!(err, CaptureError::Io { offset: None, .. }));
    assert!(err.to_string().starts_with("/nonexistent/vigil/input.pcap: "), "{err}");
}

/// A small deterministic generator, so failures reproduce.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn mutated_captures_never_panic_or_hang() {
    let mut seeds = vec![three_good(false).bytes(), three_good(true).bytes(), ng_with_packets(true).bytes()];
    let mut ng = Ng::new(false);
    let offset = ng.tsoffset(-5);
    ng.interface(1, 64, &[(IF_TSRESOL, &[0x85]), (IF_TSOFFSET, &offset)])
        .spb(&frame(1, 80), 80)
        .opb(0, 9, &frame(2, 9), 9)
        .block(NRB, &[1; 12]);
    seeds.push(ng.bytes());

    let mut rng = Lcg(0x5eed);
    let (mut opened, mut errors) = (0, 0);
    for round in 0..4000 {
        let mut bytes = seeds[round % seeds.len()].clone();
        for _ in 0..=rng.below(4) {
            match rng.below(4) {
                0 if !bytes.is_empty() => {
                    let at = rng.below(bytes.len());
                    bytes[at] = rng.next() as u8;
                }
                1 => {
                    let at = rng.below(bytes.len() + 1);
                    bytes.truncate(at);
                }
                2 => {
                    let at = rng.below(bytes.len() + 1);
                    bytes.insert(at, rng.next() as u8);
                }
                _ if bytes.len() >= 4 => {
                    // Lengths are where the damage hurts most: hit one with a big value.
                    let at = rng.below(bytes.len() - 3);
                    bytes[at..at + 4].copy_from_slice(&(rng.next() as u32 | 0x8000_0000).to_le_bytes());
                }
                _ => {}
            }
        }
        if let Ok(mut src) = PcapFile::from_reader("mutant", Cursor::new(bytes)) {
            opened += 1;
            errors += usize::from(drain(&mut src).1.is_some());
        }
    }
    assert!(opened > 1000 && errors > 100, "opened {opened}, errors {errors}");
}
