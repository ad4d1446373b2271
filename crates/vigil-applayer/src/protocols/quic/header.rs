//! QUIC packet headers, as an observer reads them without keys: the IETF
//! long header (RFC 8999/9000, version 2's type numbering from RFC 9369),
//! Google QUIC's long header (Q044 to Q046, connection id lengths in
//! nibbles, no length field) and its older public header (Q039 to Q043),
//! version negotiation, and the short header, which ends what can be read.

/// Versions the CYU fingerprint and EVE call by their Google names.
const GQUIC_NAMED: [u32; 5] = [0x5130_3339, 0x5130_3433, 0x5130_3434, 0x5130_3435, 0x5130_3436];
pub const V1: u32 = 1;
pub const V2: u32 = 0x6b33_43cf;
/// Google QUIC over the IETF invariants with TLS-like key derivation (Q050).
pub const Q050: u32 = 0x5130_3530;

/// The long header types, whatever the version numbers them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketType {
    Initial,
    ZeroRtt,
    Handshake,
    Retry,
    VersionNegotiation,
    /// A long header whose layout is Google's (Q044-Q046) or the public
    /// header (Q039-Q043): no length field, the packet runs to the end.
    Google,
    Short,
}

/// A Google QUIC version (`Q0xx`, `T0xx`).
pub fn is_google(version: u32) -> bool {
    matches!(version >> 24, 0x51 | 0x54)
}

/// How EVE writes a version: Google's by name, version 2 as `v2`, others
/// in hex without leading zeros (`1`, `ff00001d`).
pub fn version_name(version: u32) -> String {
    if GQUIC_NAMED.contains(&version) {
        String::from_utf8_lossy(&version.to_be_bytes()).into_owned()
    } else if version == V2 {
        "v2".into()
    } else {
        format!("{version:x}")
    }
}

/// One packet of a datagram.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header<'a> {
    /// Where the packet starts in the datagram.
    pub start: usize,
    /// The first byte, header protection still on.
    pub first: u8,
    pub ty: PacketType,
    pub version: u32,
    pub dcid: &'a [u8],
    pub scid: &'a [u8],
    /// Where the (protected) packet number starts.
    pub pn_offset: usize,
    /// Where this packet ends in the datagram (the next one, coalesced, starts there).
    pub end: usize,
}

/// A variable-length integer (RFC 9000 16) at the start of `b`: value and size.
pub fn varint(b: &[u8]) -> Option<(u64, usize)> {
    let first = *b.first()?;
    let len = 1usize << (first >> 6);
    let bytes = b.get(..len)?;
    let mut v = u64::from(first & 0x3f);
    for &x in &bytes[1..] {
        v = (v << 8) | u64::from(x);
    }
    Some((v, len))
}

/// Reads the header of the packet at `data[start..]`.
pub fn parse(data: &[u8], start: usize) -> Option<Header<'_>> {
    let p = data.get(start..)?;
    let first = *p.first()?;
    if first & 0x80 == 0 {
        return public_or_short(data, start);
    }
    let version = u32::from_be_bytes(p.get(1..5)?.try_into().ok()?);
    if is_google(version) && version < Q050 {
        // Q044-Q046: one byte of connection id lengths, 0 or 3 + the nibble.
        let lens = *p.get(5)?;
        let nib = |n: u8| if n == 0 { 0 } else { usize::from(n) + 3 };
        let (dl, sl) = (nib(lens >> 4), nib(lens & 0x0f));
        let dcid = p.get(6..6 + dl)?;
        let scid = p.get(6 + dl..6 + dl + sl)?;
        return Some(Header {
            start,
            first,
            ty: PacketType::Google,
            version,
            dcid,
            scid,
            pn_offset: start + 6 + dl + sl,
            end: data.len(),
        });
    }
    let dl = usize::from(*p.get(5)?);
    let dcid = p.get(6..6 + dl)?;
    let sl = usize::from(*p.get(6 + dl)?);
    let scid = p.get(7 + dl..7 + dl + sl)?;
    let mut at = 7 + dl + sl;
    if version == 0 {
        return Some(Header { start, first, ty: PacketType::VersionNegotiation, version, dcid, scid, pn_offset: start + at, end: data.len() });
    }
    // Connection ids longer than 20 bytes belong to no version this reads.
    if dl > 20 || sl > 20 {
        return None;
    }
    let bits = (first >> 4) & 3;
    let ty = match (version == V2, bits) {
        (false, 0) | (true, 1) => PacketType::Initial,
        (false, 1) | (true, 2) => PacketType::ZeroRtt,
        (false, 2) | (true, 3) => PacketType::Handshake,
        _ => PacketType::Retry,
    };
    if ty == PacketType::Retry {
        return Some(Header { start, first, ty, version, dcid, scid, pn_offset: start + at, end: data.len() });
    }
    if ty == PacketType::Initial {
        let (token_len, n) = varint(p.get(at..)?)?;
        at = at.checked_add(n)?.checked_add(usize::try_from(token_len).ok()?)?;
    }
    let (len, n) = varint(p.get(at..)?)?;
    at += n;
    let end = at.checked_add(usize::try_from(len).ok()?)?;
    if end > p.len() {
        return None;
    }
    Some(Header { start, first, ty, version, dcid, scid, pn_offset: start + at, end: start + end })
}

/// Below the long-header bit: Google's public header when it carries a
/// version (flag 0x01, 8-byte connection id flag 0x08, the IETF fixed bit
/// 0x40 clear), else a short header.
fn public_or_short(data: &[u8], start: usize) -> Option<Header<'_>> {
    let p = &data[start..];
    let first = p[0];
    if first & 0x40 == 0 && first & 0x09 == 0x09 {
        let version = u32::from_be_bytes(p.get(9..13)?.try_into().ok()?);
        if is_google(version) {
            // The packet number's length: 1, 2, 4 or 6 bytes.
            let pn = [1, 2, 4, 6][usize::from((first >> 4) & 3)];
            return Some(Header {
                start,
                first,
                ty: PacketType::Google,
                version,
                dcid: &p[1..9],
                scid: &[],
                pn_offset: start + 13 + pn,
                end: data.len(),
            });
        }
    }
    Some(Header { start, first, ty: PacketType::Short, version: 0, dcid: &[], scid: &[], pn_offset: start + 1, end: data.len() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_of_each_size() {
        assert_eq!(varint(&[0x25]), Some((37, 1)));
        assert_eq!(varint(&[0x7b, 0xbd]), Some((15293, 2)));
        assert_eq!(varint(&[0x9d, 0x7f, 0x3e, 0x7d]), Some((494_878_333, 4)));
        assert_eq!(varint(&[0xc2, 0x19, 0x7c, 0x5e, 0xff, 0x14, 0xe8, 0x8c]), Some((151_288_809_941_952_652, 8)));
        assert_eq!(varint(&[0x40]), None);
    }

    #[test]
    fn version_names() {
        assert_eq!(version_name(1), "1");
        assert_eq!(version_name(V2), "v2");
        assert_eq!(version_name(0x5130_3436), "Q046");
        assert_eq!(version_name(Q050), "51303530");
        assert_eq!(version_name(0xff00_001d), "ff00001d");
    }

    #[test]
    fn an_initial_and_what_follows_it() {
        // Initial: dcid 2 bytes, scid 0, token 1 byte, length 3; then a short header.
        let d = [0xc0, 0, 0, 0, 1, 2, 0xaa, 0xbb, 0, 1, 0x77, 3, 1, 2, 3, 0x40, 9];
        let h = parse(&d, 0).unwrap();
        assert_eq!((h.ty, h.dcid, h.pn_offset, h.end), (PacketType::Initial, &[0xaa, 0xbb][..], 12, 15));
        assert_eq!(parse(&d, h.end).unwrap().ty, PacketType::Short);
        // A length past the datagram is no packet.
        let mut cut = d;
        cut[11] = 9;
        assert_eq!(parse(&cut, 0), None);
    }
}
