//! ONC RPC (RFC 5531) as NFS and its helpers carry it: XDR values read
//! from a byte slice ([`Xdr`]), a call's or reply's header with the
//! caller's credentials ([`Message`]), and TCP's record marking ([`mark`]).
//! Every length is checked against what is there; nothing is copied but
//! the names a log keeps.

/// Credentials and verifiers are at most this long (RFC 5531, 8.2).
const MAX_AUTH: usize = 400;

/// Authentication flavors.
pub const AUTH_NULL: u32 = 0;
pub const AUTH_UNIX: u32 = 1;
pub const RPCSEC_GSS: u32 = 6;

/// XDR values read in turn; every read fails past the end.
#[derive(Debug, Clone, Copy)]
pub struct Xdr<'a> {
    pub rest: &'a [u8],
}

impl<'a> Xdr<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Xdr { rest: data }
    }

    pub fn u32(&mut self) -> Option<u32> {
        let (v, rest) = self.rest.split_first_chunk::<4>()?;
        self.rest = rest;
        Some(u32::from_be_bytes(*v))
    }

    pub fn u64(&mut self) -> Option<u64> {
        let (v, rest) = self.rest.split_first_chunk::<8>()?;
        self.rest = rest;
        Some(u64::from_be_bytes(*v))
    }

    pub fn bool(&mut self) -> Option<bool> {
        self.u32().map(|v| v != 0)
    }

    /// `n` bytes of fixed-length opaque data (and their padding).
    pub fn fixed(&mut self, n: usize) -> Option<&'a [u8]> {
        let padded = n.checked_add(3)? & !3;
        if self.rest.len() < padded {
            return None;
        }
        let v = &self.rest[..n];
        self.rest = &self.rest[padded..];
        Some(v)
    }

    /// Variable-length opaque data or a string.
    pub fn opaque(&mut self) -> Option<&'a [u8]> {
        let n = usize::try_from(self.u32()?).ok()?;
        self.fixed(n)
    }

    /// Variable-length opaque data of at most `max` bytes.
    pub fn opaque_max(&mut self, max: usize) -> Option<&'a [u8]> {
        let v = self.opaque()?;
        (v.len() <= max).then_some(v)
    }

    pub fn skip(&mut self, n: usize) -> Option<()> {
        self.fixed(n).map(|_| ())
    }

    /// An array of `u32`s (a bitmap), skipped.
    pub fn skip_words(&mut self) -> Option<()> {
        let n = usize::try_from(self.u32()?).ok()?;
        self.skip(n.checked_mul(4)?)
    }
}

/// What AUTH_UNIX credentials say of the caller.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UnixCreds {
    pub machine_name: Vec<u8>,
    pub uid: u32,
    pub gid: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    Call {
        program: u32,
        version: u32,
        procedure: u32,
        flavor: u32,
        unix: Option<UnixCreds>,
    },
    /// `state`: accepted (0) or denied (1); `accept`: why an accepted call
    /// did or did not run (0: it ran, and the results follow).
    Reply {
        state: u32,
        accept: Option<u32>,
    },
}

/// An RPC message's header and what follows it (a call's arguments, a
/// reply's results).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message<'a> {
    pub xid: u32,
    pub body: Body,
    pub args: &'a [u8],
}

/// Reads the header of the message `data` starts with.
pub fn parse(data: &[u8]) -> Option<Message<'_>> {
    let mut x = Xdr::new(data);
    let xid = x.u32()?;
    let body = match x.u32()? {
        0 => {
            if x.u32()? != 2 {
                return None;
            }
            let (program, version, procedure) = (x.u32()?, x.u32()?, x.u32()?);
            let flavor = x.u32()?;
            let cred = x.opaque_max(MAX_AUTH)?;
            let unix = (flavor == AUTH_UNIX).then(|| unix_creds(cred)).flatten();
            let _verifier_flavor = x.u32()?;
            x.opaque_max(MAX_AUTH)?;
            if flavor == RPCSEC_GSS {
                // With integrity the arguments come wrapped: their length and a sequence number first.
                let mut c = Xdr::new(cred);
                let (_version, _proc, _seq, service) = (c.u32(), c.u32(), c.u32(), c.u32());
                if service == Some(2) {
                    let len = usize::try_from(x.u32()?).ok()?;
                    x.u32()?;
                    let body = x.rest.get(..len.saturating_sub(4).min(x.rest.len()))?;
                    return Some(Message {
                        xid,
                        body: Body::Call { program, version, procedure, flavor, unix },
                        args: body,
                    });
                }
            }
            Body::Call { program, version, procedure, flavor, unix }
        }
        1 => {
            let state = x.u32()?;
            let accept = if state == 0 {
                x.u32()?;
                x.opaque_max(MAX_AUTH)?;
                Some(x.u32()?)
            } else {
                None
            };
            Body::Reply { state, accept }
        }
        _ => return None,
    };
    Some(Message { xid, body, args: x.rest })
}

fn unix_creds(cred: &[u8]) -> Option<UnixCreds> {
    let mut c = Xdr::new(cred);
    c.u32()?;
    let machine_name = c.opaque_max(255)?.to_vec();
    Some(UnixCreds { machine_name, uid: c.u32()?, gid: c.u32()? })
}

/// A TCP record mark: whether the fragment is the record's last, and its length.
pub fn mark(b: [u8; 4]) -> (bool, usize) {
    let v = u32::from_be_bytes(b);
    (v & 0x8000_0000 != 0, (v & 0x7fff_ffff) as usize)
}

/// The name of a reply's state as logs write it.
pub fn reply_state_name(state: u32) -> String {
    match state {
        0 => "ACCEPTED".into(),
        1 => "DENIED".into(),
        n => n.to_string(),
    }
}

/// The name of an authentication flavor as logs write it.
pub fn flavor_name(flavor: u32) -> String {
    match flavor {
        AUTH_NULL => "NULL".into(),
        AUTH_UNIX => "UNIX".into(),
        2 => "SHORT".into(),
        3 => "DH".into(),
        RPCSEC_GSS => "RPCSEC_GSS".into(),
        n => n.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_with_unix_credentials_and_its_reply_are_read() {
        let mut call = vec![0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1, 0x86, 0xa3, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 1];
        let cred =
            [&[0u8, 0, 0, 1][..], &[0, 0, 0, 4], b"host", &[0, 0, 1, 0xf4], &[0, 0, 0, 0x64], &[0, 0, 0, 0]].concat();
        call.extend_from_slice(&(cred.len() as u32).to_be_bytes());
        call.extend_from_slice(&cred);
        call.extend_from_slice(&[0; 8]);
        call.extend_from_slice(b"ARGS");
        let m = parse(&call).unwrap();
        assert_eq!(m.xid, 7);
        let unix = Some(UnixCreds { machine_name: b"host".to_vec(), uid: 500, gid: 100 });
        assert_eq!(m.body, Body::Call { program: 100_003, version: 3, procedure: 4, flavor: AUTH_UNIX, unix });
        assert_eq!(m.args, b"ARGS");
        let reply = [0, 0, 0, 7, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9, 9];
        let r = parse(&reply).unwrap();
        assert_eq!((r.body, r.args), (Body::Reply { state: 0, accept: Some(0) }, &[9u8, 9][..]));
        assert!(parse(&call[..30]).is_none());
        assert_eq!(mark([0x80, 0, 1, 0]), (true, 256));
    }

    #[test]
    fn lengths_past_the_end_fail() {
        let mut x = Xdr::new(&[0xff, 0xff, 0xff, 0xff, 1]);
        assert!(x.opaque().is_none());
        let mut x = Xdr::new(&[0, 0, 0, 1, b'a', 0, 0]);
        assert!(x.opaque().is_none(), "the padding is missing");
    }
}
