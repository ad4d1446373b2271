//! Sequences of synthetic TCP segments (flags, urgent pointers, sequence
//! and ack numbers, payloads and direction chosen by the input, under each
//! urgent data policy) through session tracking
//! and reassembly under tight memcaps: no panic, no hang, and the bytes
//! held never exceed the reassembly memcap.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vigil_stream::{HostPolicies, Policy, Segment, StreamConfig, StreamCtx, UrgentPolicy};
use vigil_types::Direction;

fuzz_target!(|data: &[u8]| {
    let Some((&sel, mut rest)) = data.split_first() else { return };
    let cfg = StreamConfig {
        midstream: sel & 1 != 0,
        async_oneside: sel & 2 != 0,
        inline: sel & 4 != 0,
        reassembly_memcap: 4096,
        depth: if sel & 8 != 0 { 2048 } else { 0 },
        toserver_chunk: 64,
        toclient_chunk: 64,
        policies: HostPolicies::uniform(Policy::ALL[(sel >> 4) as usize % Policy::ALL.len()]),
        // Urgent data under each policy, by the input's length.
        urgent: [UrgentPolicy::Inline, UrgentPolicy::Oob, UrgentPolicy::Gap, UrgentPolicy::Drop][rest.len() % 4],
        ..StreamConfig::default()
    };
    let mut ctx = StreamCtx::new(cfg);
    let dst = "198.18.0.2".parse().unwrap();
    let mut ssn = None;
    let mut out = Vec::new();
    // Each record: dir+flags, seq (u16, scaled), ack (u16, scaled), length, then the payload.
    while rest.len() >= 6 {
        let (h, tail) = rest.split_at(6);
        let len = (h[5] as usize).min(tail.len());
        let (payload, tail) = tail.split_at(len);
        rest = tail;
        let dir = if h[0] & 0x80 != 0 { Direction::ToClient } else { Direction::ToServer };
        let seq = u32::from(u16::from_be_bytes([h[1], h[2]])).wrapping_mul(97).wrapping_sub(1 << 12);
        let ack = u32::from(u16::from_be_bytes([h[3], h[4]])).wrapping_mul(97).wrapping_sub(1 << 12);
        // Timestamps from the sequence numbers, so PAWS is exercised too.
        let ts = (h[0] & 0x40 != 0).then_some((seq.rotate_left(7), ack.rotate_left(7)));
        // URG with a pointer from 0 to 7: inside, at and past short payloads.
        let urg = (h[0] & 0x20 != 0).then_some(u16::from(h[4] & 7));
        let seg = Segment { dir, flags: h[0] & 0x3f, seq, ack, payload, dst, ts, tfo: h[2] & 1 != 0, urg };
        if ssn.is_none() {
            ssn = ctx.start(&seg);
        }
        if let Some(s) = ssn.as_mut() {
            s.handle(&mut ctx, &seg, &mut |_| {});
            while let Some((start, end)) = s.raw_ready(&mut ctx, dir, h[0] & 0x20 != 0) {
                out.clear();
                s.read(dir, start, end, &mut out);
                assert!(out.len() as u64 <= end - start);
                s.raw_done(&mut ctx, dir, end);
            }
        }
        assert!(ctx.reassembly_memuse <= 4096);
    }
    if let Some(mut s) = ssn {
        ctx.end(&mut s);
        assert_eq!(ctx.reassembly_memuse, 0);
    }
});
