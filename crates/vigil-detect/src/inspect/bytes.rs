//! `byte_test`, `byte_jump`, `byte_extract` and `byte_math`: read a number
//! from the buffer (binary, or written out as text) and test it, jump by it,
//! or keep it in a variable.

use super::MAX_VARS;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endian {
    Big,
    Little,
    /// `dce`: the order the DCE/RPC PDU's data representation names
    /// (big-endian where none is known, as Suricata).
    Dce,
}

/// How a number is written when the keyword says `string`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NumBase {
    Binary,
    Dec,
    Hex,
    Oct,
}

/// A literal operand, or a variable set by `byte_extract`/`byte_math`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value {
    Lit(u64),
    Var(u8),
}

impl Value {
    fn get(self, vars: &[u64; MAX_VARS]) -> u64 {
        match self {
            Value::Lit(v) => v,
            Value::Var(i) => vars[i as usize % MAX_VARS],
        }
    }
}

/// How a number is read: how many bytes, where, and how they are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Read {
    pub nbytes: u8,
    pub offset: i32,
    pub endian: Endian,
    pub base: NumBase,
    /// `bitmask`: AND with the mask, then shift right past its trailing zeros.
    pub bitmask: Option<u64>,
}

impl Read {
    /// The number and the position just after it; `dce_little`: the
    /// DCE/RPC data being inspected is little-endian.
    fn read(&self, buf: &[u8], base_pos: usize, dce_little: bool) -> Option<(u64, usize)> {
        let start = base_pos as i64 + self.offset as i64;
        if start < 0 {
            return None;
        }
        let start = start as usize;
        let end = start.checked_add(self.nbytes as usize)?;
        let bytes = buf.get(start..end)?;
        let mut v = match self.base {
            NumBase::Binary => {
                if self.nbytes == 0 || self.nbytes > 8 {
                    return None;
                }
                let mut v = 0u64;
                let little = match self.endian {
                    Endian::Big => false,
                    Endian::Little => true,
                    Endian::Dce => dce_little,
                };
                if little {
                    bytes.iter().rev().for_each(|&b| v = v << 8 | b as u64);
                } else {
                    bytes.iter().for_each(|&b| v = v << 8 | b as u64);
                }
                v
            }
            base => {
                let radix = match base {
                    NumBase::Dec => 10,
                    NumBase::Hex => 16,
                    _ => 8,
                };
                // Like strtoull: leading digits only; none at all is no number.
                let text = std::str::from_utf8(bytes).ok()?;
                let digits: &str = &text[..text.find(|c: char| !c.is_digit(radix)).unwrap_or(text.len())];
                u64::from_str_radix(digits, radix).ok()?
            }
        };
        if let Some(mask) = self.bitmask {
            v &= mask;
            if mask != 0 {
                v >>= mask.trailing_zeros();
            }
        }
        Some((v, end))
    }

    fn base(&self, prev_end: usize, relative: bool) -> usize {
        if relative {
            prev_end
        } else {
            0
        }
    }
}

/// The most digits a `string` read may take (Suricata's limit for a
/// number written out in text).
const MAX_STRING_BYTES: u64 = 23;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestOp {
    Lt,
    Gt,
    Eq,
    Le,
    Ge,
    /// `&`: any bit of the value set.
    And,
    /// `^`: XOR non-zero.
    Xor,
}

/// `byte_test`.
#[derive(Debug, Clone)]
pub struct ByteTest {
    pub read: Read,
    pub relative: bool,
    pub negated: bool,
    pub op: TestOp,
    pub value: Value,
}

impl ByteTest {
    pub(super) fn eval(&self, buf: &[u8], prev_end: usize, vars: &[u64; MAX_VARS], dce_little: bool) -> Option<bool> {
        let (v, _) = self.read.read(buf, self.read.base(prev_end, self.relative), dce_little)?;
        let t = self.value.get(vars);
        let r = match self.op {
            TestOp::Lt => v < t,
            TestOp::Gt => v > t,
            TestOp::Eq => v == t,
            TestOp::Le => v <= t,
            TestOp::Ge => v >= t,
            TestOp::And => v & t != 0,
            TestOp::Xor => v ^ t != 0,
        };
        Some(r != self.negated)
    }
}

/// `byte_jump`.
#[derive(Debug, Clone)]
pub struct ByteJump {
    /// `read.nbytes` 0 reads nothing and jumps by 0: only `post_offset` moves.
    pub read: Read,
    /// `byte_jump:<name>,...`: the byte count is a `byte_extract` variable's
    /// value at inspection; 0 behaves as a literal 0, more than a read can
    /// take fails the match.
    pub nbytes_var: Option<u8>,
    pub relative: bool,
    pub multiplier: u64,
    /// Round the jump up to a multiple of 4.
    pub align: bool,
    pub from_beginning: bool,
    pub from_end: bool,
    pub post_offset: i64,
}

impl ByteJump {
    /// The new position for relative keywords that follow.
    pub(super) fn eval(&self, buf: &[u8], prev_end: usize, vars: &[u64; MAX_VARS], dce_little: bool) -> Option<usize> {
        let mut read = self.read;
        if let Some(var) = self.nbytes_var {
            let n = Value::Var(var).get(vars);
            let max = if read.base == NumBase::Binary { 8 } else { MAX_STRING_BYTES };
            if n > max {
                return None;
            }
            read.nbytes = n as u8;
        }
        let pos = read.base(prev_end, self.relative);
        let (v, after) = if read.nbytes == 0 {
            let at = usize::try_from(pos as i64 + read.offset as i64).ok().filter(|&at| at <= buf.len())?;
            (0, at)
        } else {
            read.read(buf, pos, dce_little)?
        };
        let mut jump = v.checked_mul(self.multiplier.max(1))? as i64;
        if self.align && jump % 4 != 0 {
            jump += 4 - jump % 4;
        }
        let base = if self.from_beginning {
            0
        } else if self.from_end {
            buf.len() as i64
        } else {
            after as i64
        };
        let to = base.checked_add(jump)?.checked_add(self.post_offset)?;
        // Suricata clamps a jump before the buffer to its first byte; only a
        // jump past the end fails.
        (to <= buf.len() as i64).then_some(to.max(0) as usize)
    }
}

/// `byte_extract`: the value goes into a variable; relative keywords continue
/// after the bytes read.
#[derive(Debug, Clone)]
pub struct ByteExtract {
    pub read: Read,
    pub relative: bool,
    pub multiplier: u64,
    /// Round the value up to a multiple of this (`align 2|4`).
    pub align: u8,
    pub var: u8,
}

impl ByteExtract {
    pub(super) fn eval(&self, buf: &[u8], prev_end: usize, dce_little: bool) -> Option<(u64, usize)> {
        let (v, after) = self.read.read(buf, self.read.base(prev_end, self.relative), dce_little)?;
        let mut v = v.checked_mul(self.multiplier.max(1))?;
        if self.align > 1 && v % self.align as u64 != 0 {
            v += self.align as u64 - v % self.align as u64;
        }
        Some((v, after))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MathOp {
    Add,
    Sub,
    Mul,
    Div,
    Shl,
    Shr,
}

/// `byte_math`: `result = read <op> rvalue`, kept in a variable.
#[derive(Debug, Clone)]
pub struct ByteMath {
    pub read: Read,
    pub relative: bool,
    pub op: MathOp,
    pub rvalue: Value,
    pub var: u8,
}

impl ByteMath {
    pub(super) fn eval(&self, buf: &[u8], prev_end: usize, vars: &[u64; MAX_VARS], dce_little: bool) -> Option<u64> {
        let (v, _) = self.read.read(buf, self.read.base(prev_end, self.relative), dce_little)?;
        let r = self.rvalue.get(vars);
        match self.op {
            MathOp::Add => v.checked_add(r),
            MathOp::Sub => v.checked_sub(r),
            MathOp::Mul => v.checked_mul(r),
            MathOp::Div => v.checked_div(r),
            MathOp::Shl => (r < 64).then(|| v << r),
            MathOp::Shr => (r < 64).then(|| v >> r),
        }
    }
}
