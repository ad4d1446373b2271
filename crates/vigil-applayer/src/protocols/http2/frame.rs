//! HTTP/2 frames (RFC 9113 4 and 6): the nine-byte header, the types,
//! settings and error codes under the names Suricata writes and matches.

/// The client's connection preface.
pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
pub const HEADER_LEN: usize = 9;

pub const DATA: u8 = 0;
pub const HEADERS: u8 = 1;
pub const PRIORITY: u8 = 2;
pub const RST_STREAM: u8 = 3;
pub const SETTINGS: u8 = 4;
pub const PUSH_PROMISE: u8 = 5;
pub const PING: u8 = 6;
pub const GOAWAY: u8 = 7;
pub const WINDOW_UPDATE: u8 = 8;
pub const CONTINUATION: u8 = 9;

pub const FLAG_END_STREAM: u8 = 0x1;
pub const FLAG_ACK: u8 = 0x1;
pub const FLAG_END_HEADERS: u8 = 0x4;
pub const FLAG_PADDED: u8 = 0x8;
pub const FLAG_PRIORITY: u8 = 0x20;

/// A frame's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub len: usize,
    pub kind: u8,
    pub flags: u8,
    pub stream: u32,
}

/// The header at the start of `b`, if it is all there.
pub fn header(b: &[u8]) -> Option<Header> {
    let h = b.get(..HEADER_LEN)?;
    Some(Header {
        len: (usize::from(h[0]) << 16) | (usize::from(h[1]) << 8) | usize::from(h[2]),
        kind: h[3],
        flags: h[4],
        stream: u32::from_be_bytes([h[5], h[6], h[7], h[8]]) & 0x7fff_ffff,
    })
}

/// Frame type names, as `http2.frametype` takes them.
pub const TYPE_NAMES: [&str; 10] =
    ["DATA", "HEADERS", "PRIORITY", "RSTSTREAM", "SETTINGS", "PUSHPROMISE", "PING", "GOAWAY", "WINDOWUPDATE", "CONTINUATION"];

/// Error code names (RFC 9113 7), as `http2.errorcode` takes them and EVE writes them.
pub const ERROR_NAMES: [&str; 14] = [
    "NO_ERROR",
    "PROTOCOL_ERROR",
    "INTERNAL_ERROR",
    "FLOW_CONTROL_ERROR",
    "SETTINGS_TIMEOUT",
    "STREAM_CLOSED",
    "FRAME_SIZE_ERROR",
    "REFUSED_STREAM",
    "CANCEL",
    "COMPRESSION_ERROR",
    "CONNECT_ERROR",
    "ENHANCE_YOUR_CALM",
    "INADEQUATE_SECURITY",
    "HTTP_1_1_REQUIRED",
];

/// An error code's name, or its number for codes the RFC does not name.
pub fn error_name(code: u32) -> String {
    ERROR_NAMES.get(code as usize).map_or_else(|| code.to_string(), |n| (*n).to_string())
}

/// Setting names as Suricata writes them (`SETTINGSHEADERTABLESIZE`).
pub fn setting_name(id: u16) -> String {
    match id {
        1 => "SETTINGSHEADERTABLESIZE".into(),
        2 => "SETTINGSENABLEPUSH".into(),
        3 => "SETTINGSMAXCONCURRENTSTREAMS".into(),
        4 => "SETTINGSINITIALWINDOWSIZE".into(),
        5 => "SETTINGSMAXFRAMESIZE".into(),
        6 => "SETTINGSMAXHEADERLISTSIZE".into(),
        8 => "SETTINGSENABLECONNECTPROTOCOL".into(),
        9 => "SETTINGSNORFC7540PRIORITIES".into(),
        n => n.to_string(),
    }
}

/// The (id, value) pairs of a SETTINGS payload; a trailing partial entry is left out.
pub fn settings(payload: &[u8]) -> Vec<(u16, u32)> {
    payload
        .chunks_exact(6)
        .map(|c| (u16::from_be_bytes([c[0], c[1]]), u32::from_be_bytes([c[2], c[3], c[4], c[5]])))
        .collect()
}

/// The header block fragment of a HEADERS or PUSH_PROMISE payload: padding
/// and priority (HEADERS) or the promised stream (PUSH_PROMISE) removed.
/// Returns the fragment, the weight of a priority given, and the promised stream.
pub fn block_fragment(h: &Header, payload: &[u8]) -> Option<(Vec<u8>, Option<u8>, Option<u32>)> {
    let mut p = payload;
    let mut pad = 0usize;
    if h.flags & FLAG_PADDED != 0 {
        pad = usize::from(*p.first()?);
        p = &p[1..];
    }
    let mut weight = None;
    let mut promised = None;
    if h.kind == HEADERS && h.flags & FLAG_PRIORITY != 0 {
        weight = Some(*p.get(4)?);
        p = p.get(5..)?;
    }
    if h.kind == PUSH_PROMISE {
        let s = p.get(..4)?;
        promised = Some(u32::from_be_bytes([s[0], s[1], s[2], s[3]]) & 0x7fff_ffff);
        p = &p[4..];
    }
    let end = p.len().checked_sub(pad)?;
    Some((p[..end].to_vec(), weight, promised))
}

/// The dynamic table size updates at the start of a header block (RFC 7541
/// 4.2 allows them nowhere else): their values, and where the rest starts.
pub fn size_updates(block: &[u8]) -> (Vec<u64>, usize) {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(&b) = block.get(at) {
        if b & 0xe0 != 0x20 {
            break;
        }
        let Some((v, n)) = hpack_int(&block[at..], 5) else { break };
        out.push(v);
        at += n;
    }
    (out, at)
}

/// An HPACK integer with an `prefix`-bit prefix (RFC 7541 5.1).
fn hpack_int(b: &[u8], prefix: u32) -> Option<(u64, usize)> {
    let max = (1u64 << prefix) - 1;
    let first = u64::from(*b.first()?) & max;
    if first < max {
        return Some((first, 1));
    }
    let mut v = max;
    let mut shift = 0u32;
    for (i, &x) in b[1..].iter().enumerate() {
        if shift > 56 {
            return None;
        }
        v = v.checked_add(u64::from(x & 0x7f) << shift)?;
        shift += 7;
        if x & 0x80 == 0 {
            return Some((v, i + 2));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_and_payload_parts() {
        let h = header(&[0, 0, 6, 4, 0, 0, 0, 0, 0]).unwrap();
        assert_eq!((h.len, h.kind, h.stream), (6, SETTINGS, 0));
        assert_eq!(settings(&[0, 1, 0, 0, 0x10, 0, 9]), vec![(1, 4096)]);
        // Padded HEADERS with a priority: pad 1, dependency 4 bytes, weight 15.
        let h = Header { len: 9, kind: HEADERS, flags: FLAG_PADDED | FLAG_PRIORITY, stream: 1 };
        assert_eq!(block_fragment(&h, &[1, 0, 0, 0, 0, 15, 0x82, 0x84, 0]), Some((vec![0x82, 0x84], Some(15), None)));
        assert_eq!(size_updates(&[0x3f, 0xe1, 0x1f, 0x82]), (vec![4096], 3));
        assert_eq!(error_name(8), "CANCEL");
        assert_eq!(error_name(99), "99");
    }
}
