//! ISAKMP messages (IKEv1, RFC 2408/2409) and IKEv2 messages (RFC 7296):
//! the common header, then the chain of payloads, with what Suricata logs
//! of them read (security associations with their proposals and
//! transforms, key exchange, nonce, vendor ids, notifications).

/// The header every message starts with.
pub const HEADER: usize = 28;

/// Payloads read per message; a chain longer than this is malformed.
const MAX_PAYLOADS: usize = 64;

/// An SA attribute (IKEv1) or transform (IKEv2), by its number and value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attribute {
    /// IKEv1: the attribute type; IKEv2: the transform type.
    pub kind: u16,
    pub value: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Message {
    pub init_spi: [u8; 8],
    pub resp_spi: [u8; 8],
    pub major: u8,
    pub minor: u8,
    pub exchange: u8,
    pub flags: u8,
    pub message_id: u32,
    /// Payload types in the order met (those inside an SA after it).
    pub payloads: Vec<u8>,
    /// IKEv1: the SA's domain of interpretation.
    pub doi: Option<u32>,
    /// Each proposal's attributes (IKEv1: each transform's).
    pub proposals: Vec<Vec<Attribute>>,
    pub key_exchange: Option<Vec<u8>>,
    pub nonce: Option<Vec<u8>>,
    pub vendor_ids: Vec<Vec<u8>>,
    /// IKEv2 notify message types.
    pub notify: Vec<u16>,
    /// IKEv1 with the encryption flag, or an IKEv2 Encrypted payload.
    pub encrypted: bool,
    /// The chain did not add up (a length past the end, an unknown nesting).
    pub malformed: bool,
}

fn be16(b: &[u8], at: usize) -> Option<u16> {
    b.get(at..at + 2).map(|x| u16::from_be_bytes([x[0], x[1]]))
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at + 4).map(|x| u32::from_be_bytes([x[0], x[1], x[2], x[3]]))
}

/// Data attributes (RFC 2408 3.3): a fixed two-byte value (TV) or a
/// length and a value (TLV), read as an integer of up to eight bytes.
fn attributes(mut b: &[u8]) -> Vec<Attribute> {
    let mut out = Vec::new();
    while b.len() >= 4 && out.len() < 32 {
        let t = u16::from_be_bytes([b[0], b[1]]);
        if t & 0x8000 != 0 {
            out.push(Attribute { kind: t & 0x7fff, value: u64::from(u16::from_be_bytes([b[2], b[3]])) });
            b = &b[4..];
        } else {
            let len = usize::from(u16::from_be_bytes([b[2], b[3]]));
            let Some(v) = b.get(4..4 + len) else { break };
            let value = v.iter().rev().take(8).rev().fold(0u64, |a, &x| a << 8 | u64::from(x));
            out.push(Attribute { kind: t, value });
            b = &b[4 + len..];
        }
    }
    out
}

/// The proposals of an IKEv1 SA payload's body: the DOI, the situation,
/// then proposal payloads each holding transform payloads.
fn sa_v1(m: &mut Message, body: &[u8]) {
    m.doi = be32(body, 0);
    let mut at = 8;
    while let (Some(&next), Some(len)) = (body.get(at), be16(body, at + 2)) {
        let Some(p) = body.get(at..at + usize::from(len)) else { return m.malformed = true };
        m.payloads.push(2);
        // Proposal: number, protocol, SPI size, transform count, SPI, transforms.
        let spi = usize::from(*p.get(6).unwrap_or(&0));
        let mut t_at = 8 + spi;
        while let (Some(&t_next), Some(t_len)) = (p.get(t_at), be16(p, t_at + 2)) {
            let Some(t) = p.get(t_at..t_at + usize::from(t_len)) else { return m.malformed = true };
            m.payloads.push(3);
            // Transform: number, id, reserved, then attributes.
            m.proposals.push(attributes(t.get(8..).unwrap_or_default()));
            if t_next == 0 || t_len < 8 {
                break;
            }
            t_at += usize::from(t_len);
        }
        if next == 0 || len < 8 {
            break;
        }
        at += usize::from(len);
    }
}

/// The proposals of an IKEv2 SA payload's body: each with its transforms.
fn sa_v2(m: &mut Message, body: &[u8]) {
    let mut at = 0;
    while let (Some(&last), Some(len)) = (body.get(at), be16(body, at + 2)) {
        let Some(p) = body.get(at..at + usize::from(len)) else { return m.malformed = true };
        let spi = usize::from(*p.get(6).unwrap_or(&0));
        let mut t_at = 8 + spi;
        let mut transforms = Vec::new();
        while let (Some(&t_last), Some(t_len)) = (p.get(t_at), be16(p, t_at + 2)) {
            let Some(t) = p.get(t_at..t_at + usize::from(t_len)) else { return m.malformed = true };
            let kind = u16::from(*t.get(4).unwrap_or(&0));
            let id = u64::from(be16(t, 6).unwrap_or(0));
            transforms.push(Attribute { kind, value: id });
            // A key length attribute (14) follows an encryption transform's id.
            if let Some(a) = attributes(t.get(8..).unwrap_or_default()).into_iter().find(|a| a.kind == 14) {
                transforms.push(Attribute { kind: 0x100 | 14, value: a.value });
            }
            if t_last == 0 || t_len < 8 {
                break;
            }
            t_at += usize::from(t_len);
        }
        m.proposals.push(transforms);
        if last == 0 || len < 8 {
            break;
        }
        at += usize::from(len);
    }
}

/// A whole message, or `None` when its header is not ISAKMP's.
pub fn parse(data: &[u8]) -> Option<Message> {
    if data.len() < HEADER {
        return None;
    }
    let version = data[17];
    let (major, minor) = (version >> 4, version & 0xf);
    if !(1..=2).contains(&major) {
        return None;
    }
    let length = usize::try_from(be32(data, 24)?).ok()?;
    if length < HEADER {
        return None;
    }
    let mut m = Message {
        init_spi: data[0..8].try_into().ok()?,
        resp_spi: data[8..16].try_into().ok()?,
        major,
        minor,
        exchange: data[18],
        flags: data[19],
        message_id: be32(data, 20)?,
        ..Message::default()
    };
    let body = &data[HEADER..length.min(data.len())];
    m.malformed = length > data.len();
    // IKEv1's encryption flag: the payloads after the header are ciphertext.
    if major == 1 && m.flags & 1 != 0 {
        m.encrypted = true;
        return Some(m);
    }
    let mut next = data[16];
    let mut at = 0;
    while next != 0 {
        if m.payloads.len() >= MAX_PAYLOADS {
            m.malformed = true;
            break;
        }
        let (Some(&following), Some(len)) = (body.get(at), be16(body, at + 2)) else {
            m.malformed = true;
            break;
        };
        let len = usize::from(len);
        let Some(p) = body.get(at + 4..at + len.max(4)).filter(|_| len >= 4) else {
            m.malformed = true;
            break;
        };
        m.payloads.push(next);
        match (major, next) {
            (1, 1) => sa_v1(&mut m, p),
            (2, 33) => sa_v2(&mut m, p),
            (1, 4) => m.key_exchange = Some(p.to_vec()),
            // IKEv2 KE: the DH group and a reserved field before the data.
            (2, 34) => m.key_exchange = Some(p.get(4..).unwrap_or_default().to_vec()),
            (1, 10) | (2, 40) => m.nonce = Some(p.to_vec()),
            (1, 13) | (2, 43) => m.vendor_ids.push(p.to_vec()),
            (2, 41) => {
                if let Some(t) = be16(p, 2) {
                    m.notify.push(t);
                }
            }
            // Everything after an Encrypted payload is ciphertext.
            (2, 46) => {
                m.encrypted = true;
                break;
            }
            _ => {}
        }
        next = following;
        at += len;
    }
    Some(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(next: u8, version: u8, exchange: u8, flags: u8, body: &[u8]) -> Vec<u8> {
        let mut m = vec![0x11; 8];
        m.extend_from_slice(&[0; 8]);
        m.extend_from_slice(&[next, version, exchange, flags, 0, 0, 0, 0]);
        m.extend_from_slice(&((HEADER + body.len()) as u32).to_be_bytes());
        m.extend_from_slice(body);
        m
    }

    #[test]
    fn an_ikev1_sa_gives_its_transforms_attributes() {
        // SA (DOI 1, situation 1) holding one proposal with one transform: AES-CBC 128, SHA, PSK, group 2, 86400 s.
        let attrs = b"\x80\x01\x00\x07\x80\x0e\x00\x80\x80\x02\x00\x02\x80\x03\x00\x01\x80\x04\x00\x02\x80\x0b\x00\x01\x00\x0c\x00\x04\x00\x01\x51\x80";
        let mut transform = vec![0, 0, 0, 0, 1, 1, 0, 0];
        transform.extend_from_slice(attrs);
        let tl = transform.len() as u16;
        transform[2..4].copy_from_slice(&tl.to_be_bytes());
        let mut proposal = vec![0, 0, 0, 0, 1, 1, 0, 1];
        proposal.extend_from_slice(&transform);
        let pl = proposal.len() as u16;
        proposal[2..4].copy_from_slice(&pl.to_be_bytes());
        let mut sa = vec![13, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1];
        sa.extend_from_slice(&proposal);
        let sl = sa.len() as u16;
        sa[2..4].copy_from_slice(&sl.to_be_bytes());
        sa.extend_from_slice(b"\x00\x00\x00\x08abcd");
        let m = parse(&header(1, 0x10, 2, 0, &sa)).unwrap();
        assert_eq!((m.doi, m.payloads.clone(), m.malformed), (Some(1), vec![1, 2, 3, 13], false));
        let a = &m.proposals[0];
        assert_eq!(a[0], Attribute { kind: 1, value: 7 });
        assert_eq!(a[6], Attribute { kind: 12, value: 86400 });
        assert_eq!(m.vendor_ids, [b"abcd".to_vec()]);
    }

    #[test]
    fn encrypted_and_broken_messages() {
        let m = parse(&header(8, 0x10, 5, 1, b"\xde\xad\xbe\xef")).unwrap();
        assert!(m.encrypted && m.payloads.is_empty());
        let m = parse(&header(40, 0x20, 34, 8, b"\x00\x00\x00\x30xx")).unwrap();
        assert!(m.malformed);
        assert!(parse(&header(0, 0x30, 34, 8, b"")).is_none());
        assert!(parse(b"short").is_none());
    }
}
