//! Classic pcap: byte orders, clock precisions, link types, big records, and
//! readers that hand out bytes awkwardly.

mod common;

use std::io::Cursor;

use common::*;
use vigil_capture::{FileFormat, PcapFile};
use vigil_types::LinkType;

#[test]
fn both_byte_orders_and_both_precisions() {
    for be in [false, true] {
        for nanos in [false, true] {
            let frac = if nanos { 123_456_789 } else { 123_456 };
            let mut pcap = Pcap::new(be, nanos, 65535, 1);
            pcap.record(1_700_000_000, frac, &frame(1, 60), 60).record(1_700_000_001, 0, &frame(2, 1514), 1514).record(
                u32::MAX,
                999_999,
                &frame(3, 1),
                9000,
            );
            let pkts = read_ok(&pcap.bytes());
            let case = format!("be={be} nanos={nanos}");
            assert_eq!(pkts.len(), 3, "{case}");
            let first_ns = if nanos { 123_456_789 } else { 123_456_000 };
            assert_eq!(pkts[0].ts, 1_700_000_000 * SEC + first_ns, "{case}");
            assert_eq!(pkts[1].ts, 1_700_000_001 * SEC, "{case}");
            let last_ns = if nanos { 999_999 } else { 999_999_000 };
            assert_eq!(pkts[2].ts, i64::from(u32::MAX) * SEC + last_ns, "{case}");
            assert_eq!(pkts[0].data, frame(1, 60), "{case}");
            assert_eq!(pkts[1].data, frame(2, 1514), "{case}");
            assert_eq!(pkts[2].orig_len, 9000, "{case}");
            assert!(pkts.iter().all(|p| p.linktype == LinkType::Ethernet && p.iface == 0));
        }
    }
}

#[test]
fn link_types_map_and_fcs_bits_are_ignored() {
    let cases = [
        (1, LinkType::Ethernet),
        (101, LinkType::Raw),
        (113, LinkType::LinuxSll),
        (276, LinkType::LinuxSll2),
        (0, LinkType::Null),
        (1 | 0x1400_0000, LinkType::Ethernet), // FCS length 4 announced in the top bits
        (4242, LinkType::Other(4242)),
    ];
    for (dlt, want) in cases {
        let mut pcap = Pcap::new(false, false, 65535, dlt);
        pcap.record(1, 0, &[0xab; 20], 20);
        assert_eq!(read_ok(&pcap.bytes())[0].linktype, want, "dlt {dlt:#x}");
    }
}

#[test]
fn a_header_alone_is_an_empty_capture() {
    let bytes = Pcap::new(false, false, 65535, 1).bytes();
    let mut src = PcapFile::from_reader("empty.pcap", Cursor::new(bytes)).unwrap();
    assert_eq!(src.format(), FileFormat::Pcap);
    let (pkts, err) = drain(&mut src);
    assert!(pkts.is_empty());
    assert!(err.is_none());
    assert_eq!(src.position(), 24);
}

#[test]
fn snapped_and_empty_frames_keep_their_wire_length() {
    let mut pcap = Pcap::new(false, false, 96, 1);
    pcap.record(5, 0, &frame(7, 96), 1500).record(6, 0, &[], 0);
    let pkts = read_ok(&pcap.bytes());
    assert_eq!(pkts[0].data.len(), 96);
    assert_eq!(pkts[0].orig_len, 1500);
    assert!(pkts[1].data.is_empty());
}

#[test]
fn records_larger_than_the_initial_buffer() {
    let big = frame(9, 200_000);
    let mut pcap = Pcap::new(true, true, 262_144, 1);
    pcap.record(1, 1, &frame(1, 100), 100).record(2, 2, &big, 200_000).record(3, 3, &frame(2, 100), 100);
    let pkts = read_ok(&pcap.bytes());
    assert_eq!(pkts.len(), 3);
    assert_eq!(pkts[1].data, big);
    assert_eq!(pkts[2].data, frame(2, 100));
}

#[test]
fn records_beyond_libpcaps_limit_are_read_when_the_snaplen_allows_them() {
    let big = frame(4, 300_000);
    let mut pcap = Pcap::new(false, false, 1_000_000, 1);
    pcap.record(1, 0, &big, 300_000);
    assert_eq!(read_ok(&pcap.bytes())[0].data, big);
}

#[test]
fn modified_format_records_have_eight_more_header_bytes() {
    let mut pcap = Pcap::with_magic(false, 0xa1b2_cd34, 65535, 1);
    for (i, len) in [60u32, 61, 62].into_iter().enumerate() {
        // ifindex, protocol, pkt_type, padding
        pcap.record(10 + i as u32, 5, &[], len);
        let n = pcap.0.out.len();
        pcap.0.out[n - 8..n - 4].copy_from_slice(&len.to_le_bytes()); // caplen
        pcap.0.raw(&[0; 8]).raw(&frame(i as u8, len as usize));
    }
    let pkts = read_ok(&pcap.bytes());
    assert_eq!(pkts.len(), 3);
    assert_eq!(pkts[2].data, frame(2, 62));
    assert_eq!(pkts[2].ts, 12 * SEC + 5_000);
}

#[test]
fn awkward_readers_change_nothing() {
    let mut pcap = Pcap::new(false, true, 262_144, 1);
    for i in 0..50u32 {
        let len = [0, 1, 59, 1514, 70_000][i as usize % 5];
        pcap.record(i, i, &frame(i as u8, len), len as u32);
    }
    let bytes = pcap.bytes();
    let want = read_ok(&bytes);
    for chunk in [1, 3, 4096] {
        let reader = Trickle { inner: Cursor::new(bytes.clone()), chunk, interrupt: false };
        let mut src = PcapFile::from_reader("trickle.pcap", reader).unwrap();
        let (got, err) = drain(&mut src);
        assert!(err.is_none(), "chunk {chunk}: {err:?}");
        assert_eq!(got, want, "chunk {chunk}");
        assert_eq!(src.position(), bytes.len() as u64);
    }
}

#[test]
fn open_reads_a_file_from_disk() {
    let mut pcap = Pcap::new(false, false, 65535, 1);
    pcap.record(1, 2, &frame(3, 42), 42);
    let path = std::env::temp_dir().join(format!("vigil-capture-open-{}.pcap", std::process::id()));
    std::fs::write(&path, pcap.bytes()).unwrap();
    let mut src = PcapFile::open(&path).unwrap();
    let (pkts, err) = drain(&mut src);
    std::fs::remove_file(&path).unwrap();
    assert!(err.is_none());
    assert_eq!(pkts.len(), 1);
    assert_eq!(src.path(), path);
}

#[test]
fn a_pcap_file_can_move_to_a_reader_thread() {
    fn is_send<T: Send>() {}
    is_send::<PcapFile>();
}
