//! Arbitrary bytes as a pcap/pcapng file: opening and draining must never
//! panic, hang or allocate without bound, and must keep the `Source`
//! contract (at most one error, then nothing).
#![no_main]

use libfuzzer_sys::fuzz_target;
use vigil_capture::{PcapFile, Source};

fuzz_target!(|data: &[u8]| {
    let Ok(mut src) = PcapFile::from_reader("fuzz", std::io::Cursor::new(data.to_vec())) else {
        return;
    };
    loop {
        match src.next_packet() {
            Some(Ok(pkt)) => assert!(pkt.data.len() <= data.len()),
            Some(Err(_)) | None => break,
        }
    }
    assert!(src.next_packet().is_none());
});
