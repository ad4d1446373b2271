//! Google QUIC's client hello: the `CHLO` tag-value message (little-endian
//! counts and end offsets) its first packets carry in the clear on stream 1
//! (Q039-Q046) or in CRYPTO frames (Q050), with the server name (`SNI`), the
//! user agent (`UAID`) and the CYU fingerprint: the version's number and the
//! tags in order, joined by `-`, and the MD5 of that.

use md5::{Digest, Md5};

/// What a client hello said.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Chlo {
    pub sni: Option<Vec<u8>>,
    pub ua: Option<Vec<u8>>,
    /// The tags in order, trailing NULs cut.
    pub tags: Vec<String>,
}

/// Reads a `CHLO` message at the start of `b`.
pub fn chlo(b: &[u8]) -> Option<Chlo> {
    if b.get(..4)? != b"CHLO" {
        return None;
    }
    let n = usize::from(u16::from_le_bytes([*b.get(4)?, *b.get(5)?]));
    let values = 8 + n * 8;
    let mut out = Chlo::default();
    let mut prev = 0usize;
    for i in 0..n {
        let e = b.get(8 + i * 8..16 + i * 8)?;
        let tag = &e[..4];
        let end = u32::from_le_bytes([e[4], e[5], e[6], e[7]]) as usize;
        let name: String = tag.iter().take_while(|&&c| c != 0).map(|&c| char::from(c)).collect();
        let value = if prev <= end { b.get(values + prev..values + end) } else { None };
        prev = end;
        match tag {
            b"SNI\0" => out.sni = value.map(<[u8]>::to_vec),
            b"UAID" => out.ua = value.map(<[u8]>::to_vec),
            _ => {}
        }
        out.tags.push(name);
    }
    Some(out)
}

/// The CYU fingerprint of a hello under `version` (`Q046` gives 46): (string, hash).
pub fn cyu(version: u32, c: &Chlo) -> (String, String) {
    let digits = String::from_utf8_lossy(&version.to_be_bytes()[1..]).into_owned();
    let number = digits.trim_start_matches('0');
    let string = format!("{},{}", if number.is_empty() { "0" } else { number }, c.tags.join("-"));
    let hash = crate::files::hex(&Md5::digest(string.as_bytes()));
    (string, hash)
}

/// The stream data of the first STREAM frames of an unencrypted Google QUIC
/// packet's frames (after its 12-byte message hash). Big-endian lengths
/// (Q039 on); padding and pings skipped, any other frame ends the walk.
pub fn stream_data(mut b: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    while let Some(&t) = b.first() {
        match t {
            0x80..=0xff => {
                let has_len = t & 0x20 != 0;
                let off_len = match (t >> 2) & 7 {
                    0 => 0,
                    n => usize::from(n) + 1,
                };
                let id_len = usize::from(t & 3) + 1;
                let mut at = 1 + id_len + off_len;
                let data = if has_len {
                    let Some(l) = b.get(at..at + 2) else { break };
                    let len = usize::from(u16::from_be_bytes([l[0], l[1]]));
                    at += 2;
                    let Some(d) = b.get(at..at + len) else { break };
                    at += len;
                    d
                } else {
                    let Some(d) = b.get(at..) else { break };
                    at = b.len();
                    d
                };
                out.push(data);
                b = &b[at..];
            }
            0x07 => b = &b[1..],
            _ => break,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(tags: &[(&[u8; 4], &[u8])]) -> Vec<u8> {
        let mut m = b"CHLO".to_vec();
        m.extend_from_slice(&(tags.len() as u16).to_le_bytes());
        m.extend_from_slice(&[0, 0]);
        let mut end = 0u32;
        for (t, v) in tags {
            end += v.len() as u32;
            m.extend_from_slice(&t[..]);
            m.extend_from_slice(&end.to_le_bytes());
        }
        for (_, v) in tags {
            m.extend_from_slice(v);
        }
        m
    }

    #[test]
    fn tags_values_and_fingerprint() {
        let m = message(&[(b"PAD\0", b"---"), (b"SNI\0", b"example.org"), (b"UAID", b"agent")]);
        let c = chlo(&m).unwrap();
        assert_eq!((c.sni.as_deref(), c.ua.as_deref()), (Some(&b"example.org"[..]), Some(&b"agent"[..])));
        assert_eq!(cyu(0x5130_3436, &c).0, "46,PAD-SNI-UAID");
        // The published CYU example of Suricata's documentation.
        let tags = "PAD-SNI-VER-CCS-UAID-TCID-PDMD-SMHL-ICSL-NONP-MIDS-SCLS-CSCT-COPT-IRTT-CFCW-SFCW";
        let c = Chlo { tags: tags.split('-').map(String::from).collect(), ..Chlo::default() };
        assert_eq!(cyu(0x5130_3436, &c).1, "910a5e3a4d51593bd59a44611544f209");
        assert_eq!(chlo(&m[..20]), None);
    }

    #[test]
    fn stream_frames() {
        // Stream 1, no offset, 2-byte length 3.
        let f = [0xa0, 0x01, 0x00, 0x03, b'a', b'b', b'c', 0x00, 0x00];
        assert_eq!(stream_data(&f), vec![&b"abc"[..]]);
        assert!(stream_data(&[0xa0, 0x01, 0x00, 0x09, 1]).is_empty());
    }
}
