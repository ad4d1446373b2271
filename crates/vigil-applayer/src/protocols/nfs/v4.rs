//! NFSv4 COMPOUND calls and replies (RFC 7530, RFC 8881), read an
//! operation at a time: what the transactions need (file handles, names,
//! file data, the status of the operations that make a transaction) is
//! kept, the rest skipped by its layout. An operation whose layout is not
//! known ends the reading (what came before it stands).

use super::names::*;
use crate::codecs::rpc::Xdr;

/// What a call's operation says that the parser uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallOp<'a> {
    PutFh(&'a [u8]),
    Read { offset: u64 },
    Open { name: Option<&'a [u8]> },
    Lookup(&'a [u8]),
    /// `data` may be the head of `len` bytes when the message was read
    /// from its head.
    Write { offset: u64, stable: u32, len: u32, data: &'a [u8] },
    Commit,
    Create(&'a [u8]),
    Remove(&'a [u8]),
    Rename { from: &'a [u8], to: &'a [u8] },
    Other,
}

/// What a reply's operation says that the parser uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplyOp<'a> {
    /// The status of an operation that makes a transaction (create, remove, rename).
    Main(u32),
    GetFh(&'a [u8]),
    PutRootFh(u32),
    Open,
    Read { status: u32, eof: bool, len: u32, data: &'a [u8] },
    Other,
}

const STATEID: usize = 16;

fn fattr(x: &mut Xdr<'_>) -> Option<()> {
    x.skip_words()?;
    x.opaque().map(|_| ())
}

fn owner(x: &mut Xdr<'_>) -> Option<()> {
    x.u64()?;
    x.opaque().map(|_| ())
}

fn channel_attrs(x: &mut Xdr<'_>) -> Option<()> {
    x.skip(24)?;
    x.skip_words()
}

/// Reads `len` bytes of data, or as many as there are (the message's head).
fn data<'a>(x: &mut Xdr<'a>) -> Option<(u32, &'a [u8])> {
    let len = x.u32()?;
    let n = usize::try_from(len).ok()?.min(x.rest.len());
    let d = &x.rest[..n];
    let padded = ((n + 3) & !3).min(x.rest.len());
    x.rest = &x.rest[padded..];
    Some((len, d))
}

/// The operations of a COMPOUND call's arguments.
pub fn call(args: &[u8]) -> Vec<CallOp<'_>> {
    let mut x = Xdr::new(args);
    let mut out = Vec::new();
    let Some(count) = x.opaque().and_then(|_| x.u32()).and_then(|_| x.u32()) else { return out };
    for _ in 0..count.min(128) {
        match call_op(&mut x) {
            Some(op) => out.push(op),
            None => break,
        }
    }
    out
}

fn call_op<'a>(x: &mut Xdr<'a>) -> Option<CallOp<'a>> {
    let op = x.u32()?;
    let skip = |x: &mut Xdr<'a>, n: usize| x.skip(n).map(|_| CallOp::Other);
    match op {
        3 => skip(x, 4),
        4 => skip(x, 4 + STATEID),
        V4_COMMIT => {
            x.skip(12)?;
            Some(CallOp::Commit)
        }
        V4_CREATE => {
            match x.u32()? {
                5 => {
                    x.opaque()?;
                }
                3 | 4 => x.skip(8)?,
                _ => {}
            }
            let name = x.opaque()?;
            fattr(x)?;
            Some(CallOp::Create(name))
        }
        7 | 30 | 57 => skip(x, 8),
        8 | 45 => skip(x, STATEID),
        9 => x.skip_words().map(|_| CallOp::Other),
        V4_GETFH | 16 | 27 | 31 | 32 | 24 | 23 => Some(CallOp::Other),
        11 | 33 => x.opaque().map(|_| CallOp::Other),
        12 => {
            x.skip(4 + 4 + 16)?;
            if x.bool()? {
                x.skip(4 + STATEID + 4)?;
                owner(x)?;
            } else {
                x.skip(STATEID + 4)?;
            }
            Some(CallOp::Other)
        }
        13 => {
            x.skip(4 + 16)?;
            owner(x).map(|_| CallOp::Other)
        }
        14 => skip(x, 8 + STATEID + 16),
        V4_LOOKUP => x.opaque().map(CallOp::Lookup),
        17 | 37 => fattr(x).map(|_| CallOp::Other),
        V4_OPEN => {
            x.skip(12)?;
            owner(x)?;
            if x.u32()? == 1 {
                match x.u32()? {
                    0 | 1 => fattr(x)?,
                    2 => x.skip(8)?,
                    3 => {
                        x.skip(8)?;
                        fattr(x)?;
                    }
                    _ => return None,
                }
            }
            let name = match x.u32()? {
                0 | 3 => Some(x.opaque()?),
                1 => {
                    x.u32()?;
                    None
                }
                2 => {
                    x.skip(STATEID)?;
                    Some(x.opaque()?)
                }
                5 => {
                    x.skip(STATEID)?;
                    None
                }
                4 | 6 => None,
                _ => return None,
            };
            Some(CallOp::Open { name })
        }
        19 | 58 => skip(x, 4),
        20 => skip(x, STATEID + 4),
        21 => skip(x, STATEID + 12),
        V4_PUTFH => x.opaque_max(128).map(CallOp::PutFh),
        V4_READ => {
            x.skip(STATEID)?;
            let offset = x.u64()?;
            x.u32()?;
            Some(CallOp::Read { offset })
        }
        26 => {
            x.skip(24)?;
            x.skip_words().map(|_| CallOp::Other)
        }
        V4_REMOVE => x.opaque().map(CallOp::Remove),
        V4_RENAME => {
            let from = x.opaque()?;
            Some(CallOp::Rename { from, to: x.opaque()? })
        }
        34 => {
            x.skip(STATEID)?;
            fattr(x).map(|_| CallOp::Other)
        }
        35 => {
            x.skip(8)?;
            x.opaque()?;
            x.u32()?;
            x.opaque()?;
            x.opaque()?;
            skip(x, 4)
        }
        36 => skip(x, 16),
        V4_WRITE => {
            x.skip(STATEID)?;
            let offset = x.u64()?;
            let stable = x.u32()?;
            let (len, data) = data(x)?;
            Some(CallOp::Write { offset, stable, len, data })
        }
        39 => owner(x).map(|_| CallOp::Other),
        42 => {
            x.skip(8)?;
            x.opaque()?;
            x.u32()?;
            if x.u32()? != 0 {
                return None;
            }
            for _ in 0..x.u32()?.min(1) {
                x.opaque()?;
                x.opaque()?;
                x.skip(12)?;
            }
            Some(CallOp::Other)
        }
        43 => {
            x.skip(16)?;
            channel_attrs(x)?;
            channel_attrs(x)?;
            x.u32()?;
            for _ in 0..x.u32()?.min(8) {
                match x.u32()? {
                    0 => {}
                    1 => {
                        x.u32()?;
                        x.opaque()?;
                        x.skip(8)?;
                        x.skip_words()?;
                    }
                    6 => {
                        x.u32()?;
                        x.opaque()?;
                        x.opaque()?;
                    }
                    _ => return None,
                }
            }
            Some(CallOp::Other)
        }
        44 => skip(x, 16),
        53 => skip(x, 32),
        52 => skip(x, 4),
        55 => {
            let n = usize::try_from(x.u32()?).ok()?;
            skip(x, n.checked_mul(STATEID)?)
        }
        50 => skip(x, 4 + 4 + 4 + 24 + STATEID + 4),
        51 => {
            x.skip(12)?;
            if x.u32()? == 1 {
                x.skip(16 + STATEID)?;
                x.opaque()?;
            }
            Some(CallOp::Other)
        }
        47 => {
            x.skip(16 + 8)?;
            x.skip_words().map(|_| CallOp::Other)
        }
        49 => {
            x.skip(16 + 4 + STATEID)?;
            if x.bool()? {
                x.skip(8)?;
            }
            if x.bool()? {
                x.skip(12)?;
            }
            x.u32()?;
            x.opaque().map(|_| CallOp::Other)
        }
        _ => None,
    }
}

/// The operations of a COMPOUND reply's results.
pub fn reply(results: &[u8]) -> Vec<ReplyOp<'_>> {
    let mut x = Xdr::new(results);
    let mut out = Vec::new();
    let Some(count) = x.u32().and_then(|_| x.opaque()).and_then(|_| x.u32()) else { return out };
    for _ in 0..count.min(128) {
        let (Some(op), Some(status)) = (x.u32(), x.u32()) else { break };
        let found = if status != 0 {
            // A failed operation is the last the server ran.
            Some(match op {
                V4_CREATE | V4_REMOVE | V4_RENAME => ReplyOp::Main(status),
                V4_PUTROOTFH => ReplyOp::PutRootFh(status),
                V4_READ => ReplyOp::Read { status, eof: false, len: 0, data: &[] },
                _ => ReplyOp::Other,
            })
        } else {
            reply_op(&mut x, op)
        };
        match found {
            Some(r) => out.push(r),
            None => break,
        }
        if status != 0 {
            break;
        }
    }
    out
}

fn delegation(x: &mut Xdr<'_>) -> Option<()> {
    let ace = |x: &mut Xdr<'_>| -> Option<()> {
        x.skip(12)?;
        x.opaque().map(|_| ())
    };
    match x.u32()? {
        0 => Some(()),
        1 => {
            x.skip(STATEID + 4)?;
            ace(x)
        }
        2 => {
            x.skip(STATEID + 4 + 4 + 8)?;
            ace(x)
        }
        3 => {
            if matches!(x.u32()?, 3 | 4) {
                x.u32()?;
            }
            Some(())
        }
        _ => None,
    }
}

fn reply_op<'a>(x: &mut Xdr<'a>, op: u32) -> Option<ReplyOp<'a>> {
    let skip = |x: &mut Xdr<'a>, n: usize| x.skip(n).map(|_| ReplyOp::Other);
    match op {
        3 | 35 => skip(x, 8 + if op == 35 { 8 } else { 0 }),
        4 | 14 | 20 | 21 | 12 => skip(x, STATEID),
        V4_COMMIT => skip(x, 8),
        V4_CREATE => {
            x.skip(20)?;
            x.skip_words()?;
            Some(ReplyOp::Main(0))
        }
        9 => fattr(x).map(|_| ReplyOp::Other),
        V4_GETFH => x.opaque_max(128).map(ReplyOp::GetFh),
        11 => skip(x, 20),
        V4_OPEN => {
            x.skip(STATEID + 20 + 4)?;
            x.skip_words()?;
            delegation(x)?;
            Some(ReplyOp::Open)
        }
        V4_PUTROOTFH => Some(ReplyOp::PutRootFh(0)),
        7 | 8 | 13 | 15 | 16 | 17 | 19 | 22 | 23 | 30 | 31 | 32 | 36 | 37 | 39 | 44 | 45 | 57 | 58 => Some(ReplyOp::Other),
        V4_READ => {
            let eof = x.bool()?;
            let (len, data) = data(x)?;
            Some(ReplyOp::Read { status: 0, eof, len, data })
        }
        26 => {
            x.skip(8)?;
            let mut n = 0;
            while x.bool()? {
                n += 1;
                if n > 4096 {
                    return None;
                }
                x.u64()?;
                x.opaque()?;
                fattr(x)?;
            }
            skip(x, 4)
        }
        27 => x.opaque().map(|_| ReplyOp::Other),
        V4_REMOVE => {
            x.skip(20)?;
            Some(ReplyOp::Main(0))
        }
        V4_RENAME => {
            x.skip(40)?;
            Some(ReplyOp::Main(0))
        }
        33 | 52 => {
            for _ in 0..x.u32()?.min(64) {
                if x.u32()? == 6 {
                    x.opaque()?;
                    x.skip(8)?;
                }
            }
            Some(ReplyOp::Other)
        }
        34 => x.skip_words().map(|_| ReplyOp::Other),
        V4_WRITE => skip(x, 16),
        42 => {
            x.skip(16)?;
            match x.u32()? {
                0 => {}
                1 => {
                    x.skip_words()?;
                    x.skip_words()?;
                }
                _ => return None,
            }
            x.u64()?;
            x.opaque()?;
            x.opaque()?;
            for _ in 0..x.u32()?.min(1) {
                x.opaque()?;
                x.opaque()?;
                x.skip(12)?;
            }
            Some(ReplyOp::Other)
        }
        43 => {
            x.skip(24)?;
            channel_attrs(x)?;
            channel_attrs(x).map(|_| ReplyOp::Other)
        }
        53 => skip(x, 36),
        55 => x.skip_words().map(|_| ReplyOp::Other),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(v: u32) -> Vec<u8> {
        v.to_be_bytes().to_vec()
    }

    fn opaque(v: &[u8]) -> Vec<u8> {
        let mut o = word(v.len() as u32);
        o.extend_from_slice(v);
        o.resize(4 + v.len().div_ceil(4) * 4, 0);
        o
    }

    #[test]
    fn a_write_compound_is_read_to_its_data() {
        let args = [
            opaque(b""),
            word(1),
            word(3),
            word(53),
            vec![7; 32],
            word(V4_PUTFH),
            opaque(b"handle"),
            word(V4_WRITE),
            vec![0; 16],
            vec![0, 0, 0, 0, 0, 0, 0, 9],
            word(2),
            opaque(b"hello"),
        ]
        .concat();
        let ops = call(&args);
        assert_eq!(ops[1], CallOp::PutFh(b"handle"));
        assert_eq!(ops[2], CallOp::Write { offset: 9, stable: 2, len: 5, data: b"hello" });
        // Cut inside the data: what is there is the head.
        let ops = call(&args[..args.len() - 5]);
        assert_eq!(ops[2], CallOp::Write { offset: 9, stable: 2, len: 5, data: b"hel" });
    }

    #[test]
    fn a_reply_stops_at_the_failed_operation() {
        let res = [word(2), opaque(b""), word(3), word(V4_PUTFH), word(0), word(V4_REMOVE), word(2), word(9), word(0)].concat();
        assert_eq!(reply(&res), vec![ReplyOp::Other, ReplyOp::Main(2)]);
        let read = [word(0), opaque(b""), word(1), word(V4_READ), word(0), word(1), opaque(b"abc")].concat();
        assert_eq!(reply(&read), vec![ReplyOp::Read { status: 0, eof: true, len: 3, data: b"abc" }]);
    }
}
