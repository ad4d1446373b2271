//! Sequences of IP fragments (built from the input, or raw bytes) through
//! the decoder and the reassembler under tight limits: reassembly must
//! never panic or hang, memory must stay within the memcap, and whatever
//! it rebuilds must be a datagram IP can express.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vigil_decode::{DecodeConfig, Decoder};
use vigil_defrag::{split, DefragConfig, Defragmenter, HostPolicies, Policy};
use vigil_types::{LinkType, Timestamp};

fuzz_target!(|data: &[u8]| {
    let Some((&sel, mut rest)) = data.split_first() else { return };
    let cfg = DefragConfig {
        memcap: 16 * 1024,
        max_trackers: 8,
        max_frags: 64,
        max_frags_per_datagram: 32,
        timeout_secs: 2,
        policies: HostPolicies::uniform(Policy::ALL[sel as usize % Policy::ALL.len()]),
        ..DefragConfig::default()
    };
    let memcap = cfg.memcap;
    let mut dec = Decoder::new(DecodeConfig { validate_checksums: false, ..DecodeConfig::default() });
    let mut defrag = Defragmenter::new(cfg, ahash::RandomState::with_seeds(1, 2, 3, 4));
    let mut out = Vec::new();
    let mut secs = 1_000i64;
    let mut n = 0u64;
    // Each record: kind, id, offset (u16), length, then for raw packets the bytes.
    while rest.len() >= 5 && n < 512 {
        n += 1;
        let (kind, id, off, len) = (rest[0], rest[1], u16::from_be_bytes([rest[2], rest[3]]), rest[4] as usize);
        rest = &rest[5..];
        secs += i64::from(kind >> 6);
        let more = kind & 1 == 1;
        let body: Vec<u8> = (0..len).map(|i| id.wrapping_add(i as u8)).collect();
        let pkt = match (kind >> 1) & 3 {
            0 => split::ipv4_raw([10, 0, 0, 1], [10, 0, 0, 2], u16::from(id & 3), 17, usize::from(off), more, &body),
            1 => split::ipv6_raw([1; 16], [2; 16], u32::from(id & 3), 17, usize::from(off), more, &body),
            2 => {
                // A whole UDP datagram cut where the input says.
                let d = vigil_wire::build::PacketBuilder::ipv4([10, 0, 0, 1], [10, 0, 0, 3])
                    .udp(1, 2)
                    .ident(u16::from(id & 3))
                    .payload(&body)
                    .build_ip();
                split::ipv4_fragment(&d, usize::from(off) & !7, len / 2, more)
            }
            _ => {
                let take = len.min(rest.len());
                let raw = rest[..take].to_vec();
                rest = &rest[take..];
                raw
            }
        };
        let now = Timestamp::from_secs_nanos(secs, 0);
        let p = dec.decode(&pkt, now, LinkType::Raw, n);
        let o = defrag.handle(&p, &mut out);
        assert!(defrag.counters().memuse <= memcap);
        if o.reassembled {
            assert!(out.len() <= 65_535 + 60);
            assert!(matches!(out[0] >> 4, 4 | 6));
            let whole = dec.decode_reassembled(&out, &p);
            assert!(whole.payload().len() <= out.len());
        }
    }
    defrag.expire(Timestamp::from_secs_nanos(secs + 10, 0));
    assert_eq!(defrag.trackers(), 0);
    assert_eq!(defrag.counters().memuse, 0);
});
