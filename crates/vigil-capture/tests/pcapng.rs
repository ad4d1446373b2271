//! pcapng: interfaces with their own link types and clocks, all packet block
//! kinds, skipped blocks, several sections.

mod common;

use std::io::Cursor;

use common::*;
use vigil_capture::{CaptureError, FileFormat, PcapFile};
use vigil_types::LinkType;

/// SHB, two interfaces (Ethernet in µs; raw IP in ns, shifted by 100 s),
/// EPBs on both, an SPB, and every kind of block we must step over.
fn two_interfaces(be: bool) -> Vec<u8> {
    let mut ng = Ng::new(be);
    ng.interface(1, 128, &[(2, b"eth0")]);
    let offset = ng.tsoffset(100);
    ng.interface(101, 0, &[(IF_TSRESOL, &[9]), (IF_TSOFFSET, &offset)]);
    ng.epb(0, 1_700_000_000_123_456, &frame(1, 60), 60)
        .block(NRB, &[0; 8])
        .epb(1, 1_700_000_000_123_456_789, &frame(2, 41), 41)
        .block(ISB, &[0; 20])
        .block(DSB, &[0; 12])
        .block(CUSTOM, &[1, 2, 3, 4, 5])
        .block(0x4242, &[])
        .spb(&frame(3, 200), 200)
        .epb_with(1, 5, 3, &frame(4, 3), 1000, &[(2, &[0, 0, 0, 1])]);
    ng.bytes()
}

#[test]
fn interfaces_keep_their_own_link_type_and_clock() {
    for be in [false, true] {
        let bytes = two_interfaces(be);
        let mut src = PcapFile::from_reader("two.pcapng", Cursor::new(bytes.clone())).unwrap();
        assert_eq!(src.format(), FileFormat::PcapNg);
        let (pkts, err) = drain(&mut src);
        assert!(err.is_none(), "{err:?}");
        assert_eq!(src.position(), bytes.len() as u64);
        assert_eq!(pkts.len(), 4, "be={be}");

        assert_eq!(pkts[0].iface, 0);
        assert_eq!(pkts[0].linktype, LinkType::Ethernet);
        assert_eq!(pkts[0].ts, 1_700_000_000 * SEC + 123_456_000);
        assert_eq!(pkts[0].data, frame(1, 60));

        assert_eq!(pkts[1].iface, 1);
        assert_eq!(pkts[1].linktype, LinkType::Raw);
        assert_eq!(pkts[1].ts, 1_700_000_100 * SEC + 123_456_789);
        assert_eq!(pkts[1].data, frame(2, 41));

        // The SPB: interface 0, cut to its snaplen, and no clock of its own.
        assert_eq!(pkts[2].iface, 0);
        assert_eq!(pkts[2].linktype, LinkType::Ethernet);
        assert_eq!(pkts[2].data, frame(3, 128));
        assert_eq!(pkts[2].orig_len, 200);
        assert_eq!(pkts[2].ts, pkts[1].ts);

        // Padding and options after the data are not data.
        assert_eq!(pkts[3].data, frame(4, 3));
        assert_eq!(pkts[3].orig_len, 1000);
        assert_eq!(pkts[3].ts, 100 * SEC + 5);
    }
}

#[test]
fn binary_and_coarse_resolutions() {
    let mut ng = Ng::new(false);
    ng.interface(1, 0, &[(IF_TSRESOL, &[0x80 | 20])]) // 2^-20 s
        .interface(1, 0, &[(IF_TSRESOL, &[0])]) // whole seconds
        .epb(0, 3 << 20 | 1 << 19, &[1], 1)
        .epb(1, 42, &[2], 1);
    let pkts = read_ok(&ng.bytes());
    assert_eq!(pkts[0].ts, 3 * SEC + SEC / 2);
    assert_eq!(pkts[1].ts, 42 * SEC);
}

#[test]
fn negative_offsets_reach_before_the_epoch() {
    let mut ng = Ng::new(true);
    let offset = ng.tsoffset(-10);
    ng.interface(1, 0, &[(IF_TSOFFSET, &offset)]).epb(0, 1_500_000, &[0], 1);
    assert_eq!(read_ok(&ng.bytes())[0].ts, -10 * SEC + 1_500_000_000);
}

#[test]
fn a_new_section_resets_interfaces_and_may_switch_byte_order() {
    let mut ng = Ng::new(false);
    ng.interface(1, 0, &[]).interface(113, 0, &[]).epb(1, 1, &[1], 1);
    ng.section(true, 1).interface(276, 0, &[(IF_TSRESOL, &[3])]).epb(0, 2, &[2], 1);
    let pkts = read_ok(&ng.bytes());
    assert_eq!(pkts.len(), 2);
    assert_eq!((pkts[0].linktype, pkts[0].iface), (LinkType::LinuxSll, 1));
    assert_eq!((pkts[1].linktype, pkts[1].iface), (LinkType::LinuxSll2, 0));
    assert_eq!(pkts[1].ts, 2_000_000);

    // The old section's second interface is gone.
    ng.epb(1, 3, &[3], 1);
    let (pkts, err) = read(&ng.bytes());
    assert_eq!(pkts.len(), 2);
    let err = err.expect("packet on a forgotten interface");
    assert!(matches!(err, CaptureError::Corrupt { what: "enhanced packet block", .. }), "{err}");
    assert!(err.to_string().contains("interface 1, but the section declares 1"), "{err}");
}

#[test]
fn obsolete_packet_blocks_are_read() {
    for be in [false, true] {
        let mut ng = Ng::new(be);
        ng.interface(1, 0, &[]).interface(9, 0, &[]).opb(1, 7_000_001, &frame(5, 33), 40);
        let pkts = read_ok(&ng.bytes());
        assert_eq!(pkts[0].iface, 1);
        assert_eq!(pkts[0].linktype, LinkType::Ppp);
        assert_eq!(pkts[0].data, frame(5, 33));
        assert_eq!(pkts[0].orig_len, 40);
        assert_eq!(pkts[0].ts, 7 * SEC + 1_000);
    }
}

#[test]
fn headers_without_packets_are_an_empty_capture() {
    assert!(read_ok(&Ng::new(false).bytes()).is_empty());
    let mut ng = Ng::new(true);
    ng.interface(1, 0, &[]).block(ISB, &[0; 8]);
    assert!(read_ok(&ng.bytes()).is_empty());
}

#[test]
fn packets_need_a_declared_interface() {
    let mut ng = Ng::new(false);
    ng.spb(&[1, 2, 3], 3);
    let (pkts, err) = read(&ng.bytes());
    assert!(pkts.is_empty());
    let err = err.unwrap();
    assert_eq!(err.offset(), Some(28));
    assert_eq!(
        err.to_string(),
        "test.pcap: corrupt simple packet block at offset 28: \
         packet on interface 0, but the section declares 0 interface(s)"
    );
}

#[test]
fn other_pcapng_versions_are_refused_at_open() {
    let mut ng = Ng { be: false, out: Vec::new() };
    ng.section(false, 2);
    let err = open_err(&ng.bytes());
    assert!(matches!(err, CaptureError::Unsupported { .. }), "{err}");
    assert_eq!(err.to_string(), "test.pcap: unsupported pcapng version 2.0 at offset 0");
}

#[test]
fn large_blocks_and_awkward_readers() {
    let mut ng = Ng::new(false);
    ng.interface(1, 0, &[]);
    for i in 0..20u8 {
        let len = [0, 1, 3, 1514, 100_000][usize::from(i) % 5];
        ng.epb(0, u64::from(i), &frame(i, len), len as u32);
    }
    let bytes = ng.bytes();
    let want = read_ok(&bytes);
    assert_eq!(want.len(), 20);
    assert_eq!(want[4].data, frame(4, 100_000));
    let reader = Trickle { inner: Cursor::new(bytes), chunk: 7, interrupt: false };
    let mut src = PcapFile::from_reader("trickle.pcapng", reader).unwrap();
    let (got, err) = drain(&mut src);
    assert!(err.is_none());
    assert_eq!(got, want);
}
