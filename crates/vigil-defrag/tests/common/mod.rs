//! Feeding fragments built with `vigil_defrag::split` through the decoder
//! and a reassembler, as the engine does.

#![allow(dead_code)]

use vigil_decode::{DecodeConfig, DecodeEvent, Decoder, Packet};
use vigil_defrag::{DefragConfig, Defragmenter, HostPolicies, Policy};
use vigil_types::{LinkType, Timestamp};

pub const SRC4: [u8; 4] = [1, 1, 1, 1];
pub const DST4: [u8; 4] = [2, 2, 2, 2];
pub const SRC6: [u8; 16] = [1; 16];
pub const DST6: [u8; 16] = [2; 16];

pub struct Harness {
    pub dec: Decoder,
    pub defrag: Defragmenter,
    pub out: Vec<u8>,
    pub now: Timestamp,
    pub events: Vec<DecodeEvent>,
}

impl Harness {
    pub fn new(cfg: DefragConfig) -> Self {
        Harness {
            dec: Decoder::new(DecodeConfig::default()),
            defrag: Defragmenter::new(cfg, ahash::RandomState::with_seeds(1, 2, 3, 4)),
            out: Vec::new(),
            now: Timestamp::from_micros(1_700_000_000, 0),
            events: Vec::new(),
        }
    }

    pub fn with_policy(policy: Policy) -> Self {
        Harness::new(DefragConfig { policies: HostPolicies::uniform(policy), ..DefragConfig::default() })
    }

    /// Feeds one raw IP packet; `Some(datagram)` when it completed one.
    pub fn feed(&mut self, ip: &[u8]) -> Option<Vec<u8>> {
        let p = self.dec.decode(ip, self.now, LinkType::Raw, 1);
        assert!(p.fragment, "not a fragment: {p:?}");
        let o = self.defrag.handle(&p, &mut self.out);
        self.events.extend(o.events.iter());
        o.reassembled.then(|| self.out.clone())
    }

    /// Decodes a reassembled datagram as the engine does.
    pub fn decode<'a>(&mut self, datagram: &'a [u8]) -> Packet<'a> {
        self.dec.decode(datagram, self.now, LinkType::Raw, 1)
    }

    pub fn saw(&self, e: DecodeEvent) -> bool {
        self.events.contains(&e)
    }
}

/// `n` copies of byte `c`.
pub fn fill(c: u8, n: usize) -> Vec<u8> {
    vec![c; n]
}
