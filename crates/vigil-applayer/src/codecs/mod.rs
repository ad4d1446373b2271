//! Decoders protocols share: what more than one protocol carries (MIME
//! multipart bodies in HTTP uploads and mail, and later ASN.1/BER,
//! base64, NTLMSSP) lives here once.

/// Where `needle` first stands in `hay` (`None` for an empty needle).
pub(crate) fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || hay.len() < needle.len() {
        return None;
    }
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Where a header block in `data` ends: its length, and the length of the
/// blank line after it (CR LF CR LF, or LF LF).
pub(crate) fn header_block_end(data: &[u8]) -> Option<(usize, usize)> {
    find(data, b"\r\n\r\n").map(|i| (i, 4)).or_else(|| find(data, b"\n\n").map(|i| (i, 2)))
}

pub mod ber;
pub mod lines;
pub mod mime;
pub mod multipart;
pub mod ntlmssp;
pub mod rpc;
