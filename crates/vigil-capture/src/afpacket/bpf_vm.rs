//! Runs a classic BPF program (as libpcap compiles a tcpdump expression)
//! on a frame in user space: the kernel runs the same program on live
//! sockets, and a capture file read with `-f` goes through this instead.
//! Classic BPF jumps only forward, so a run ends within the program's
//! length; a load past the frame's end rejects it, as the kernel does.

use super::BpfInsn;

// Instruction classes and fields (`linux/filter.h`).
const LD: u16 = 0x00;
const LDX: u16 = 0x01;
const ST: u16 = 0x02;
const STX: u16 = 0x03;
const ALU: u16 = 0x04;
const JMP: u16 = 0x05;
const RET: u16 = 0x06;
const MISC: u16 = 0x07;
const W: u16 = 0x00;
const H: u16 = 0x08;
const B: u16 = 0x10;
const IMM: u16 = 0x00;
const ABS: u16 = 0x20;
const IND: u16 = 0x40;
const MEM: u16 = 0x60;
const LEN: u16 = 0x80;
const MSH: u16 = 0xa0;
const X: u16 = 0x08;
const A_SRC: u16 = 0x10;
const MEM_WORDS: usize = 16;

/// Whether the program accepts `frame` (a non-zero return value).
pub fn bpf_accepts(program: &[BpfInsn], frame: &[u8]) -> bool {
    run(program, frame).is_some_and(|v| v != 0)
}

/// The program's return value; `None` for a malformed program or a load
/// outside the frame (both reject).
fn run(program: &[BpfInsn], frame: &[u8]) -> Option<u32> {
    let (mut a, mut x) = (0u32, 0u32);
    let mut mem = [0u32; MEM_WORDS];
    let mut pc = 0usize;
    let load = |at: u32, size: u16| -> Option<u32> {
        let at = at as usize;
        let n = match size {
            W => 4,
            H => 2,
            B => 1,
            _ => return None,
        };
        let bytes = frame.get(at..at.checked_add(n)?)?;
        Some(bytes.iter().fold(0u32, |v, b| (v << 8) | u32::from(*b)))
    };
    loop {
        let i = *program.get(pc)?;
        pc += 1;
        let (class, size, mode) = (i.code & 0x07, i.code & 0x18, i.code & 0xe0);
        match class {
            LD => {
                a = match mode {
                    IMM => i.k,
                    ABS => load(i.k, size)?,
                    IND => load(x.wrapping_add(i.k), size)?,
                    MEM => *mem.get(i.k as usize)?,
                    LEN => frame.len() as u32,
                    _ => return None,
                };
            }
            LDX => {
                x = match mode {
                    IMM => i.k,
                    MEM => *mem.get(i.k as usize)?,
                    LEN => frame.len() as u32,
                    // The IPv4 header length: 4 * (low nibble of the byte at k).
                    MSH if size == B => (load(i.k, B)? & 0x0f) * 4,
                    _ => return None,
                };
            }
            ST => *mem.get_mut(i.k as usize)? = a,
            STX => *mem.get_mut(i.k as usize)? = x,
            ALU => {
                let operand = if i.code & X != 0 { x } else { i.k };
                a = match i.code & 0xf0 {
                    0x00 => a.wrapping_add(operand),
                    0x10 => a.wrapping_sub(operand),
                    0x20 => a.wrapping_mul(operand),
                    0x30 => a.checked_div(operand)?,
                    0x40 => a | operand,
                    0x50 => a & operand,
                    0x60 => a.checked_shl(operand).unwrap_or(0),
                    0x70 => a.checked_shr(operand).unwrap_or(0),
                    0x80 => a.wrapping_neg(),
                    0x90 => a.checked_rem(operand)?,
                    0xa0 => a ^ operand,
                    _ => return None,
                };
            }
            JMP => {
                let operand = if i.code & X != 0 { x } else { i.k };
                let op = i.code & 0xf0;
                if op == 0x00 {
                    pc = pc.checked_add(i.k as usize)?;
                    continue;
                }
                let taken = match op {
                    0x10 => a == operand,
                    0x20 => a > operand,
                    0x30 => a >= operand,
                    0x40 => a & operand != 0,
                    _ => return None,
                };
                pc += usize::from(if taken { i.jt } else { i.jf });
            }
            RET => return Some(if i.code & 0x18 == A_SRC { a } else { i.k }),
            MISC => {
                if i.code & 0xf8 == 0x00 {
                    x = a; // TAX
                } else {
                    a = x; // TXA
                }
            }
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn insn(code: u16, jt: u8, jf: u8, k: u32) -> BpfInsn {
        BpfInsn { code, jt, jf, k }
    }

    /// `tcp dst port 80` on Ethernet/IPv4, as libpcap compiles it (IPv4 part).
    fn port_80() -> Vec<BpfInsn> {
        vec![
            insn(0x28, 0, 0, 12),      // ldh [12]
            insn(0x15, 0, 8, 0x0800),  // jeq IPv4
            insn(0x30, 0, 0, 23),      // ldb [23]
            insn(0x15, 0, 6, 6),       // jeq TCP
            insn(0x28, 0, 0, 20),      // ldh [20]
            insn(0x45, 4, 0, 0x1fff),  // jset fragment offset
            insn(0xb1, 0, 0, 14),      // ldxb 4*([14]&0xf)
            insn(0x48, 0, 0, 16),      // ldh [x+16]
            insn(0x15, 0, 1, 80),      // jeq 80
            insn(0x06, 0, 0, 262_144), // ret accept
            insn(0x06, 0, 0, 0),       // ret reject
        ]
    }

    fn frame(dport: u16, proto: u8) -> Vec<u8> {
        let mut f = vec![0u8; 14 + 20 + 20];
        f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
        f[14] = 0x45;
        f[23] = proto;
        f[14 + 20 + 2..14 + 20 + 4].copy_from_slice(&dport.to_be_bytes());
        f
    }

    #[test]
    fn a_compiled_filter_accepts_and_rejects() {
        let p = port_80();
        assert!(bpf_accepts(&p, &frame(80, 6)));
        assert!(!bpf_accepts(&p, &frame(443, 6)));
        assert!(!bpf_accepts(&p, &frame(80, 17)), "UDP");
        assert!(!bpf_accepts(&p, &frame(80, 6)[..30]), "a load past the end rejects");
    }

    #[test]
    fn malformed_programs_reject_and_end() {
        assert!(!bpf_accepts(&[], b"x"));
        // A jump past the end, a division by zero, a scratch slot out of range.
        assert!(!bpf_accepts(&[insn(0x05, 0, 0, 10)], b"x"));
        assert!(!bpf_accepts(&[insn(0x34, 0, 0, 0), insn(0x06, 0, 0, 1)], b"x"));
        assert!(!bpf_accepts(&[insn(0x02, 0, 0, 99), insn(0x06, 0, 0, 1)], b"x"));
        // ret a; with a = frame length.
        assert!(bpf_accepts(&[insn(0x80, 0, 0, 0), insn(0x16, 0, 0, 0)], b"xy"));
        assert!(!bpf_accepts(&[insn(0x80, 0, 0, 0), insn(0x16, 0, 0, 0)], b""));
    }

    #[test]
    fn random_programs_end_without_panicking() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let frame: Vec<u8> = (0..64).map(|_| next() as u8).collect();
        for _ in 0..20_000 {
            let len = (next() % 12) as usize;
            let program: Vec<BpfInsn> = (0..len)
                .map(|_| {
                    let r = next();
                    insn(r as u16, (r >> 16) as u8, (r >> 24) as u8, (r >> 32) as u32 % 80)
                })
                .collect();
            let _ = bpf_accepts(&program, &frame[..(next() % 65) as usize]);
        }
    }
}
