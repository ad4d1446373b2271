//! Connection-oriented DCE/RPC PDUs (C706 chapter 12): the common header
//! and the bodies of binds, their acknowledgements, requests, responses
//! and faults, in the byte order each PDU's data representation names.

use super::HEADER_LEN;

pub const REQUEST: u8 = 0;
pub const RESPONSE: u8 = 2;
pub const FAULT: u8 = 3;
pub const BIND: u8 = 11;
pub const BIND_ACK: u8 = 12;
pub const BIND_NAK: u8 = 13;
pub const ALTER_CONTEXT: u8 = 14;
pub const ALTER_CONTEXT_RESP: u8 = 15;

pub const FIRST_FRAG: u8 = 0x01;
pub const LAST_FRAG: u8 = 0x02;
const OBJECT_UUID: u8 = 0x80;

/// Contexts read from one bind; more are dropped.
const MAX_CONTEXTS: usize = 64;

/// The common header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub minor: u8,
    pub ptype: u8,
    pub flags: u8,
    pub little: bool,
    pub frag_len: u16,
    pub auth_len: u16,
    pub call_id: u32,
}

/// A cursor reading in the PDU's byte order.
pub(super) struct Reader<'a> {
    b: &'a [u8],
    at: usize,
    little: bool,
}

impl<'a> Reader<'a> {
    /// Reads `b` from `at` in the order `little` says.
    pub(super) fn at(b: &'a [u8], at: usize, little: bool) -> Self {
        Reader { b, at, little }
    }
    fn u8(&mut self) -> Option<u8> {
        let v = *self.b.get(self.at)?;
        self.at += 1;
        Some(v)
    }
    pub(super) fn u16(&mut self) -> Option<u16> {
        let x = self.b.get(self.at..self.at + 2)?;
        self.at += 2;
        Some(if self.little { u16::from_le_bytes([x[0], x[1]]) } else { u16::from_be_bytes([x[0], x[1]]) })
    }
    pub(super) fn u32(&mut self) -> Option<u32> {
        let x = self.b.get(self.at..self.at + 4)?;
        self.at += 4;
        let a = [x[0], x[1], x[2], x[3]];
        Some(if self.little { u32::from_le_bytes(a) } else { u32::from_be_bytes(a) })
    }
    fn skip(&mut self, n: usize) -> Option<()> {
        self.b.get(self.at..self.at + n)?;
        self.at += n;
        Some(())
    }
    /// A UUID: its first three fields in the PDU's byte order, then eight bytes as they are.
    pub(super) fn uuid(&mut self) -> Option<[u8; 16]> {
        let (a, b, c) = (self.u32()?, self.u16()?, self.u16()?);
        let rest = self.b.get(self.at..self.at + 8)?;
        self.at += 8;
        let mut u = [0u8; 16];
        u[0..4].copy_from_slice(&a.to_be_bytes());
        u[4..6].copy_from_slice(&b.to_be_bytes());
        u[6..8].copy_from_slice(&c.to_be_bytes());
        u[8..].copy_from_slice(rest);
        Some(u)
    }
}

/// A UUID in its usual text form.
pub fn uuid_text(u: &[u8; 16]) -> String {
    let h: Vec<String> = u.iter().map(|b| format!("{b:02x}")).collect();
    format!("{}-{}-{}-{}-{}", h[0..4].concat(), h[4..6].concat(), h[6..8].concat(), h[8..10].concat(), h[10..16].concat())
}

pub fn header(b: &[u8]) -> Option<Header> {
    if b.len() < HEADER_LEN || b[0] != 5 {
        return None;
    }
    let little = b[4] & 0x10 != 0;
    let mut r = Reader { b, at: 8, little };
    Some(Header { minor: b[1], ptype: b[2], flags: b[3], little, frag_len: r.u16()?, auth_len: r.u16()?, call_id: r.u32()? })
}

/// A presentation context a bind proposes: its id, interface and version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Context {
    pub id: u16,
    pub uuid: [u8; 16],
    pub major: u16,
    pub minor: u16,
}

/// The contexts of a bind or alter context.
pub fn bind(h: &Header, pdu: &[u8]) -> Option<Vec<Context>> {
    let mut r = Reader { b: pdu, at: HEADER_LEN, little: h.little };
    r.skip(8)?;
    let n = r.u8()?;
    r.skip(3)?;
    let mut out = Vec::new();
    for _ in 0..n {
        let id = r.u16()?;
        let transfers = r.u8()?;
        r.skip(1)?;
        let uuid = r.uuid()?;
        let (major, minor) = (r.u16()?, r.u16()?);
        r.skip(20 * usize::from(transfers))?;
        if out.len() < MAX_CONTEXTS {
            out.push(Context { id, uuid, major, minor });
        }
    }
    Some(out)
}

/// The results of a bind acknowledgement with their reasons, in the order
/// of the bind's contexts.
pub fn bind_ack(h: &Header, pdu: &[u8]) -> Option<Vec<(u16, u16)>> {
    let mut r = Reader { b: pdu, at: HEADER_LEN, little: h.little };
    r.skip(8)?;
    let port_len = usize::from(r.u16()?);
    r.skip(port_len)?;
    // The result list starts on a four-byte boundary of the PDU.
    r.skip((4 - r.at % 4) % 4)?;
    let n = r.u8()?;
    r.skip(3)?;
    let mut out = Vec::new();
    for _ in 0..n {
        let result = r.u16()?;
        let reason = r.u16()?;
        r.skip(20)?;
        if out.len() < MAX_CONTEXTS {
            out.push((result, reason));
        }
    }
    Some(out)
}

/// A request's context and operation, and where its stub data lies.
pub struct Request<'a> {
    pub context: u16,
    pub opnum: u16,
    pub stub: &'a [u8],
}

/// The stub data of a request or response body starting at `at`: up to
/// the authentication trailer, and its padding, when there is one.
fn stub<'a>(h: &Header, pdu: &'a [u8], at: usize) -> &'a [u8] {
    let end = usize::from(h.frag_len).min(pdu.len());
    let trailer = if h.auth_len > 0 { usize::from(h.auth_len) + 8 } else { 0 };
    let end = end.saturating_sub(trailer);
    // The trailer's third byte is the padding put before it.
    let pad = if h.auth_len > 0 { usize::from(*pdu.get(end + 2).unwrap_or(&0)) } else { 0 };
    pdu.get(at..end.saturating_sub(pad).max(at)).unwrap_or_default()
}

pub fn request<'a>(h: &Header, pdu: &'a [u8]) -> Option<Request<'a>> {
    let mut r = Reader { b: pdu, at: HEADER_LEN, little: h.little };
    r.skip(4)?;
    let context = r.u16()?;
    let opnum = r.u16()?;
    if h.flags & OBJECT_UUID != 0 {
        r.skip(16)?;
    }
    Some(Request { context, opnum, stub: stub(h, pdu, r.at) })
}

/// A response's stub data.
pub fn response<'a>(h: &Header, pdu: &'a [u8]) -> Option<&'a [u8]> {
    pdu.get(HEADER_LEN + 8..)?;
    Some(stub(h, pdu, HEADER_LEN + 8))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_read_in_the_pdus_byte_order() {
        let wire = [0x08, 0x83, 0xaf, 0xe1, 0x1f, 0x5d, 0xc9, 0x11, 0x91, 0xa4, 0x08, 0x00, 0x2b, 0x14, 0xa0, 0xfa];
        let mut r = Reader { b: &wire, at: 0, little: true };
        assert_eq!(uuid_text(&r.uuid().unwrap()), "e1af8308-5d1f-11c9-91a4-08002b14a0fa");
    }

    #[test]
    fn damaged_pdus_read_nothing() {
        let h = Header { minor: 0, ptype: BIND, flags: 3, little: true, frag_len: 30, auth_len: 0, call_id: 1 };
        let mut pdu = vec![5, 0, 11, 3, 0x10, 0, 0, 0, 30, 0, 0, 0, 1, 0, 0, 0];
        pdu.extend_from_slice(&[0; 8]);
        pdu.extend_from_slice(&[5, 0, 0, 0]);
        assert!(bind(&h, &pdu).is_none());
        assert!(bind_ack(&h, &pdu).is_none());
        assert!(request(&h, &pdu[..18]).is_none());
    }
}
