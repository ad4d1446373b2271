//! ASN.1 BER (X.690) as network protocols carry it (SNMP now, Kerberos and
//! LDAP later): tag, definite length, value, read from a slice without
//! copying. Indefinite lengths and tags past one byte of number are not
//! accepted: the protocols read here use neither.

/// One element: its identifier octet and its contents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tlv<'a> {
    pub tag: u8,
    pub value: &'a [u8],
}

pub const INTEGER: u8 = 0x02;
pub const OCTET_STRING: u8 = 0x04;
pub const NULL: u8 = 0x05;
pub const OID: u8 = 0x06;
pub const SEQUENCE: u8 = 0x30;

/// The data is not the BER expected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BerError;

/// A cursor over consecutive elements.
#[derive(Debug, Clone, Copy)]
pub struct Reader<'a> {
    data: &'a [u8],
}

impl<'a> Reader<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Reader { data }
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The next element, whatever its tag.
    pub fn any(&mut self) -> Result<Tlv<'a>, BerError> {
        let (&tag, rest) = self.data.split_first().ok_or(BerError)?;
        if tag & 0x1f == 0x1f {
            return Err(BerError);
        }
        let (&first, mut rest) = rest.split_first().ok_or(BerError)?;
        let len = if first < 0x80 {
            usize::from(first)
        } else {
            let n = usize::from(first & 0x7f);
            if n == 0 || n > 4 || rest.len() < n {
                return Err(BerError);
            }
            let len = rest[..n].iter().fold(0usize, |a, &b| a << 8 | usize::from(b));
            rest = &rest[n..];
            len
        };
        let value = rest.get(..len).ok_or(BerError)?;
        self.data = &rest[len..];
        Ok(Tlv { tag, value })
    }

    /// The next element, which must have tag `tag`.
    pub fn expect(&mut self, tag: u8) -> Result<&'a [u8], BerError> {
        let t = self.any()?;
        if t.tag == tag {
            Ok(t.value)
        } else {
            Err(BerError)
        }
    }

    /// The next element as a non-negative INTEGER of at most 64 bits
    /// (negative values and longer ones are refused).
    pub fn uint(&mut self) -> Result<u64, BerError> {
        uint(self.expect(INTEGER)?)
    }
}

/// One element written with a definite length (up to 64 KiB of contents):
/// what the protocols' sample conversations and tests build messages from.
pub fn tlv(tag: u8, content: &[u8]) -> Vec<u8> {
    let n = content.len();
    let mut v = vec![tag];
    match n {
        0..=127 => v.push(n as u8),
        128..=255 => v.extend([0x81, n as u8]),
        _ => v.extend([0x82, (n >> 8) as u8, n as u8]),
    }
    v.extend_from_slice(content);
    v
}

/// The contents of an INTEGER, read as unsigned.
pub fn uint(v: &[u8]) -> Result<u64, BerError> {
    let v = match v {
        [0, rest @ ..] => rest,
        [b, ..] if b & 0x80 != 0 => return Err(BerError),
        [] => return Err(BerError),
        _ => v,
    };
    if v.len() > 8 {
        return Err(BerError);
    }
    Ok(v.iter().fold(0u64, |a, &b| a << 8 | u64::from(b)))
}

/// An OBJECT IDENTIFIER's contents in dotted form (`1.3.6.1.2.1.1.3.0`).
pub fn oid_string(v: &[u8]) -> Result<String, BerError> {
    let mut arcs: Vec<u64> = Vec::new();
    let mut acc = 0u64;
    for (i, &b) in v.iter().enumerate() {
        if acc > u64::MAX >> 7 {
            return Err(BerError);
        }
        acc = acc << 7 | u64::from(b & 0x7f);
        if b & 0x80 == 0 {
            if arcs.is_empty() {
                // The first subidentifier holds two arcs.
                let first = (acc / 40).min(2);
                arcs.push(first);
                arcs.push(acc - first * 40);
            } else {
                arcs.push(acc);
            }
            acc = 0;
        } else if i + 1 == v.len() {
            return Err(BerError);
        }
    }
    if arcs.is_empty() {
        return Err(BerError);
    }
    Ok(arcs.iter().map(u64::to_string).collect::<Vec<_>>().join("."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_and_long_lengths() {
        let mut r = Reader::new(b"\x04\x02hi\x30\x81\x03\x02\x01\x05");
        assert_eq!(r.expect(OCTET_STRING), Ok(&b"hi"[..]));
        let mut inner = Reader::new(r.expect(SEQUENCE).unwrap());
        assert_eq!(inner.uint(), Ok(5));
        assert!(r.is_empty() && inner.is_empty());
        for bad in [&b"\x04\x05hi"[..], b"\x04\x80", b"\x04\x85\x01\x01\x01\x01\x01", b"\x1f\x01\x00", b"\x04"] {
            assert_eq!(Reader::new(bad).any(), Err(BerError), "{bad:?}");
        }
    }

    #[test]
    fn integers_and_oids() {
        assert_eq!(uint(b"\x00\xff"), Ok(255));
        assert_eq!(uint(b"\xff"), Err(BerError));
        assert_eq!(oid_string(b"\x2b\x06\x01\x02\x01\x01\x03\x00").as_deref(), Ok("1.3.6.1.2.1.1.3.0"));
        assert_eq!(oid_string(b"\x01").as_deref(), Ok("0.1"));
        assert_eq!(oid_string(b"\x2b\x86").as_deref(), Err(&BerError));
        assert_eq!(oid_string(b"\x88\x37\x01").as_deref(), Ok("2.999.1"));
    }
}
