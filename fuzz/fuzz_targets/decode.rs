//! Arbitrary bytes as a captured frame: decoding must never panic or hang,
//! whatever the link type, configuration or nesting of tunnels.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vigil_decode::{DecodeConfig, Decoder, UdpTunnel};
use vigil_types::{LinkType, Timestamp};

const LINKS: [u32; 10] = [0, 1, 9, 101, 104, 113, 228, 229, 276, 147];

fuzz_target!(|data: &[u8]| {
    let Some((&sel, frame)) = data.split_first() else { return };
    let any = UdpTunnel { enabled: true, ports: None };
    let cfg = DecodeConfig {
        max_layers: 1 + (sel as usize >> 4),
        validate_checksums: sel & 1 == 1,
        // Any-port tunnels make every UDP payload a tunnel candidate: deeper nesting for the fuzzer.
        vxlan: if sel & 2 == 2 { any.clone() } else { DecodeConfig::default().vxlan },
        geneve: if sel & 4 == 4 { any.clone() } else { DecodeConfig::default().geneve },
        teredo: if sel & 8 == 8 { any } else { DecodeConfig::default().teredo },
        erspan_type1: true,
    };
    let mut dec = Decoder::new(cfg);
    let link = LinkType::from_dlt(LINKS[sel as usize % LINKS.len()]);
    let p = dec.decode(frame, Timestamp::default(), link, 1);
    for l in p.layers() {
        assert!(l.offset as usize + l.len as usize <= frame.len());
    }
    assert!(p.payload().len() <= frame.len());
});
