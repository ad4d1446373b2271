//! The classic-BPF interpreter on arbitrary programs and frames: the first
//! byte says how many 8-byte instructions follow, the rest is the frame.
//! It must never panic and always end (programs jump only forward).
#![no_main]

use libfuzzer_sys::fuzz_target;
use vigil_capture::{bpf_accepts, BpfInsn};

fuzz_target!(|data: &[u8]| {
    let Some((&n, rest)) = data.split_first() else { return };
    let len = (usize::from(n) * 8).min(rest.len());
    let (code, frame) = rest.split_at(len);
    let program: Vec<BpfInsn> = code
        .chunks_exact(8)
        .map(|c| BpfInsn {
            code: u16::from_le_bytes([c[0], c[1]]),
            jt: c[2],
            jf: c[3],
            k: u32::from_le_bytes([c[4], c[5], c[6], c[7]]),
        })
        .collect();
    let _ = bpf_accepts(&program, frame);
});
