//! `base64_decode` and `base64_data`: decode part of the inspected buffer
//! and run the keywords after `base64_data` on the decoded bytes.
//!
//! Where the encoded text starts and how much of it is read follow
//! Suricata: `offset` from the buffer's start, or from the end of the
//! previous match with `relative`; at most `bytes` bytes, else the rest of
//! the buffer. Decoding is the `from_base64` transform's RFC 4648 mode, as
//! Suricata shares it: it stops at the first byte outside the alphabet and
//! keeps what was decoded up to there, the unfinished group decoded as if
//! padded (issue 5223); a group it cannot decode (`=` too early, one lone
//! character) spoils the whole decode. A decode that yields nothing does not
//! match.

use super::Step;
use crate::transform::decode_rfc4648;

/// Encoded bytes read at most (Suricata's `BASE64_DECODE_MAX`): also the
/// size `bytes` defaults to, so the decoded buffer stays under 48 KiB.
pub const MAX_ENCODED: u32 = 65_535;

/// `base64_decode` with the keywords of its `base64_data`.
#[derive(Debug)]
pub struct Base64Step {
    /// Encoded bytes to read at most (`bytes`, capped at [`MAX_ENCODED`]).
    pub bytes: u32,
    pub offset: u32,
    pub relative: bool,
    /// The keywords after `base64_data`, run on the decoded bytes.
    pub steps: Vec<Step>,
}

impl Base64Step {
    pub fn new(bytes: Option<u32>, offset: u32, relative: bool) -> Base64Step {
        let bytes = bytes.filter(|&b| b > 0).unwrap_or(MAX_ENCODED).min(MAX_ENCODED);
        Base64Step { bytes, offset, relative, steps: Vec::new() }
    }

    /// Decodes the encoded text of `buf` (`prev_end`: where the previous match
    /// ended) into `out`, which is cleared first. False when nothing decoded.
    pub fn decode_into(&self, buf: &[u8], prev_end: usize, out: &mut Vec<u8>) -> bool {
        out.clear();
        let from = if self.relative { prev_end } else { 0 };
        let Some(rest) = buf.get(from..) else { return false };
        // An offset that leaves nothing to read fails outright.
        let Some(text) = rest.get(self.offset as usize..).filter(|t| !t.is_empty()) else { return false };
        let text = text.get(..self.bytes as usize).unwrap_or(text);
        if !decode_rfc4648(text, out) {
            out.clear();
        }
        !out.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(text: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        Base64Step::new(None, 0, false).decode_into(text, 0, &mut out);
        out
    }

    #[test]
    fn whole_groups_and_padding() {
        assert_eq!(decode(b"dGhpc2lzYXRlc3QK"), b"thisisatest\n");
        assert_eq!(decode(b"YQ=="), b"a");
        assert_eq!(decode(b"YWI="), b"ab");
        assert_eq!(decode(b"YWJj"), b"abc");
        assert_eq!(decode(b""), b"");
        assert_eq!(decode(b"YQ==YWI="), b"aab");
        // A group that cannot be decoded spoils what came before it too.
        assert_eq!(decode(b"YWJj=WJj"), b"");
        assert_eq!(decode(b"===="), b"");
    }

    #[test]
    fn stops_at_the_first_byte_outside_the_alphabet() {
        // suricata-verify base64-issue-5223: "np" then a URL escape gives 0x9e.
        assert_eq!(decode(b"np%2BA%2BbSdU3SD33cQXeLxh9gXqjV4t2Q0cOWQ20vCv74%3D"), [0x9e]);
        assert_eq!(decode(b"YWJj YWJj"), b"abc");
        // Three characters before the stop give two bytes; one alone is no group.
        assert_eq!(decode(b"YWJ\n"), b"ab");
        assert_eq!(decode(b"YWJjY!"), b"");
    }

    #[test]
    fn text_ending_inside_a_group() {
        // base64 test sid 3: ten characters give "thisis" and one byte more.
        assert_eq!(decode(b"dGhpc2lzYX"), b"thisisa");
        // A lone last character is no group: the decode fails as a whole.
        assert_eq!(decode(b"dGhpc2lzY"), b"");
    }

    #[test]
    fn window_offset_relative_and_bytes() {
        let uri = b"/?arg=dGhpc2lzYXRlc3QK";
        let mut out = Vec::new();
        // content:"arg" ends at 5; offset 1 skips the '='.
        let step = Base64Step::new(Some(17), 1, true);
        assert!(step.decode_into(uri, 5, &mut out));
        assert_eq!(out, b"thisisatest\n");
        let step = Base64Step::new(Some(10), 1, true);
        assert!(step.decode_into(uri, 5, &mut out));
        assert_eq!(out, b"thisisa");
        // Absolute offset 6 from the start, whatever matched before.
        let step = Base64Step::new(None, 6, false);
        assert!(step.decode_into(uri, 20, &mut out));
        assert_eq!(out, b"thisisatest\n");
        // Nothing left to read, or nothing decodable: no match, and nothing kept.
        assert!(!Base64Step::new(None, 30, false).decode_into(uri, 0, &mut out));
        assert!(out.is_empty());
        assert!(!Base64Step::new(None, 1, true).decode_into(uri, uri.len(), &mut out));
        assert!(!Base64Step::new(None, 0, false).decode_into(b"%%%%", 0, &mut out));
        assert!(!Base64Step::new(None, 0, true).decode_into(uri, usize::MAX, &mut out));
    }

    #[test]
    fn the_read_is_bounded() {
        assert_eq!(Base64Step::new(None, 0, false).bytes, MAX_ENCODED);
        assert_eq!(Base64Step::new(Some(u32::MAX), 0, false).bytes, MAX_ENCODED);
        let big = b"QUFB".repeat(40_000);
        let mut out = Vec::new();
        assert!(Base64Step::new(None, 0, false).decode_into(&big, 0, &mut out));
        assert_eq!(out.len(), MAX_ENCODED as usize / 4 * 3 + 2);
    }
}
