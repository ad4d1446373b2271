//! Randomised checks (a fixed-seed generator, so failures reproduce):
//! without overlaps every policy rebuilds the original datagram whatever
//! the cut and the order; with random overlaps and limits nothing panics
//! and memory stays within the memcap.

mod common;

use common::*;
use vigil_defrag::{split, DefragConfig, HostPolicies, Policy};
use vigil_wire::build::PacketBuilder;
use vigil_wire::ip_proto;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn any_cut_in_any_order_rebuilds_the_datagram_under_every_policy() {
    let mut rng = Rng(0x5eed);
    for round in 0..300 {
        let len = 1 + rng.below(2000);
        let payload: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        let ipv6 = round % 2 == 1;
        let d = if ipv6 {
            PacketBuilder::ipv6([1; 16], [2; 16]).udp(1000, 2000).payload(&payload).build_ip()
        } else {
            PacketBuilder::ipv4([10, 0, 0, 1], [10, 0, 0, 2])
                .udp(1000, 2000)
                .ident(round as u16)
                .payload(&payload)
                .build_ip()
        };
        let body = d.len() - if ipv6 { 40 } else { 20 };
        // Random cut points on 8-byte boundaries.
        let mut cuts = vec![0usize];
        while *cuts.last().unwrap() < body {
            let step = 8 * (1 + rng.below(40));
            cuts.push((cuts.last().unwrap() + step).min(body));
        }
        let mut frags: Vec<Vec<u8>> = cuts
            .windows(2)
            .map(|w| {
                let more = w[1] < body;
                if ipv6 {
                    split::ipv6_fragment(&d, 77, w[0], w[1] - w[0], more)
                } else {
                    split::ipv4_fragment(&d, w[0], w[1] - w[0], more)
                }
            })
            .collect();
        if frags.len() < 2 {
            continue;
        }
        // Shuffle, keeping the datagram incomplete until the last one.
        for i in (1..frags.len()).rev() {
            let j = rng.below(i + 1);
            frags.swap(i, j);
        }
        for p in Policy::ALL {
            let mut h = Harness::with_policy(p);
            let mut got = None;
            for (i, f) in frags.iter().enumerate() {
                let r = h.feed(f);
                assert_eq!(r.is_some(), i + 1 == frags.len(), "{p:?} round {round}");
                got = r.or(got);
            }
            assert_eq!(got.unwrap(), d, "{p:?} round {round}");
            assert!(h.events.is_empty(), "{p:?} round {round}: {:?}", h.events);
        }
    }
}

#[test]
fn random_overlapping_fragments_stay_within_limits() {
    let mut rng = Rng(0xfeed_beef);
    for p in Policy::ALL {
        let cfg = DefragConfig {
            memcap: 64 * 1024,
            max_trackers: 16,
            max_frags: 200,
            max_frags_per_datagram: 50,
            policies: HostPolicies::uniform(p),
            ..DefragConfig::default()
        };
        let mut h = Harness::new(cfg);
        for n in 0..5000u32 {
            let id = rng.below(24) as u16;
            let off = 8 * rng.below(200);
            let len = rng.below(600);
            let more = rng.below(4) != 0;
            let data: Vec<u8> = (0..len).map(|i| (n as usize + i) as u8).collect();
            let f = if rng.below(2) == 0 {
                split::ipv4_raw(SRC4, DST4, id, ip_proto::UDP, off, more, &data)
            } else {
                split::ipv6_raw(SRC6, DST6, u32::from(id), ip_proto::UDP, off, more, &data)
            };
            if off == 0 && !more {
                continue;
            }
            if let Some(d) = h.feed(&f) {
                assert!(d.len() <= 65_535 + 60);
                assert!(matches!(d[0] >> 4, 4 | 6));
            }
            let c = h.defrag.counters();
            assert!(c.memuse <= 64 * 1024, "{p:?}: {c:?}");
            assert!(h.defrag.fragments() <= 200 && h.defrag.trackers() <= 16);
            if n % 500 == 0 {
                h.now = vigil_types::Timestamp::from_micros(h.now.secs() + 30, 0);
            }
        }
        h.now = vigil_types::Timestamp::from_micros(h.now.secs() + 1000, 0);
        h.defrag.expire(h.now);
        assert_eq!(h.defrag.trackers(), 0);
        assert_eq!(h.defrag.counters().memuse, 0);
    }
}
