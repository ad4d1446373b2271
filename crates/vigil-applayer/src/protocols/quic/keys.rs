//! Initial packet protection (RFC 9001 5, RFC 9369 3.3): the keys any
//! observer can derive from the client's first destination connection id
//! and the version's public salt, header protection removal and AES-128-GCM
//! opening. Versions without a known salt are not opened.

use aes::cipher::{BlockEncrypt, KeyInit};
use aes_gcm::aead::AeadInPlace;
use aes_gcm::{Aes128Gcm, Nonce, Tag};
use hkdf::Hkdf;
use sha2::Sha256;

use super::header::{Header, Q050, V2};

/// The salt of the versions whose Initial packets can be opened.
fn salt(version: u32) -> Option<&'static [u8; 20]> {
    const V1_SALT: [u8; 20] = [
        0x38, 0x76, 0x2c, 0xf7, 0xf5, 0x59, 0x34, 0xb3, 0x4d, 0x17, 0x9a, 0xe6, 0xa4, 0xc8, 0x0c, 0xad, 0xcc, 0xbb, 0x7f,
        0x0a,
    ];
    const V2_SALT: [u8; 20] = [
        0x0d, 0xed, 0xe3, 0xde, 0xf7, 0x00, 0xa6, 0xdb, 0x81, 0x93, 0x81, 0xbe, 0x6e, 0x26, 0x9d, 0xcb, 0xf9, 0xbd, 0x2e,
        0xd9,
    ];
    // Drafts 29 to 32.
    const D29_SALT: [u8; 20] = [
        0xaf, 0xbf, 0xec, 0x28, 0x99, 0x93, 0xd2, 0x4c, 0x9e, 0x97, 0x86, 0xf1, 0x9c, 0x61, 0x11, 0xe0, 0x43, 0x90, 0xa8,
        0x99,
    ];
    // Drafts 23 to 28.
    const D23_SALT: [u8; 20] = [
        0xc3, 0xee, 0xf7, 0x12, 0xc7, 0x2e, 0xbb, 0x5a, 0x11, 0xa7, 0xd2, 0x43, 0x2b, 0xb4, 0x63, 0x65, 0xbe, 0xf9, 0xf5,
        0x02,
    ];
    const Q050_SALT: [u8; 20] = [
        0x50, 0x45, 0x74, 0xef, 0xd0, 0x66, 0xfe, 0x2f, 0x9d, 0x94, 0x5c, 0xfc, 0xdb, 0xd3, 0xa7, 0xf0, 0xd3, 0xb5, 0x6b,
        0x45,
    ];
    match version {
        1 => Some(&V1_SALT),
        V2 => Some(&V2_SALT),
        0xff00_001d..=0xff00_0020 => Some(&D29_SALT),
        0xff00_0017..=0xff00_001c => Some(&D23_SALT),
        Q050 => Some(&Q050_SALT),
        _ => None,
    }
}

/// HKDF-Expand-Label (RFC 8446 7.1) with an empty context.
fn expand_label(secret: &[u8], label: &str, out: &mut [u8]) -> Option<()> {
    let hk = Hkdf::<Sha256>::from_prk(secret).ok()?;
    let full = format!("tls13 {label}");
    let mut info = Vec::with_capacity(4 + full.len());
    info.extend_from_slice(&(out.len() as u16).to_be_bytes());
    info.push(full.len() as u8);
    info.extend_from_slice(full.as_bytes());
    info.push(0);
    hk.expand(&info, out).ok()
}

/// One side's Initial keys.
#[derive(Clone)]
pub struct SideKeys {
    aead: Aes128Gcm,
    iv: [u8; 12],
    hp: aes::Aes128,
}

impl std::fmt::Debug for SideKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SideKeys")
    }
}

/// Both sides' Initial keys, and the connection id they came from.
#[derive(Debug, Clone)]
pub struct Keys {
    pub dcid: Vec<u8>,
    pub client: SideKeys,
    pub server: SideKeys,
}

impl Keys {
    /// The keys of a connection whose client first wrote to `dcid`, or
    /// `None` for a version without a known salt.
    pub fn initial(version: u32, dcid: &[u8]) -> Option<Keys> {
        let salt = salt(version)?;
        let (prk, _) = Hkdf::<Sha256>::extract(Some(salt), dcid);
        let side = |label: &str| -> Option<SideKeys> {
            let mut secret = [0u8; 32];
            expand_label(&prk, label, &mut secret)?;
            let v2 = version == V2;
            let (kl, il, hl) = if v2 { ("quicv2 key", "quicv2 iv", "quicv2 hp") } else { ("quic key", "quic iv", "quic hp") };
            let (mut key, mut iv, mut hp) = ([0u8; 16], [0u8; 12], [0u8; 16]);
            expand_label(&secret, kl, &mut key)?;
            expand_label(&secret, il, &mut iv)?;
            expand_label(&secret, hl, &mut hp)?;
            Some(SideKeys {
                aead: Aes128Gcm::new_from_slice(&key).ok()?,
                iv,
                hp: aes::Aes128::new_from_slice(&hp).ok()?,
            })
        };
        Some(Keys { dcid: dcid.to_vec(), client: side("client in")?, server: side("server in")? })
    }
}

impl SideKeys {
    /// The header protection mask of a 16-byte ciphertext sample (RFC 9001 5.4.3).
    fn mask(&self, sample: &[u8]) -> aes::Block {
        let mut mask = aes::Block::clone_from_slice(sample);
        self.hp.encrypt_block(&mut mask);
        mask
    }

    /// The AEAD nonce of packet number `pn`: the IV with the number XORed into its end.
    fn nonce(&self, pn: u64) -> [u8; 12] {
        let mut nonce = self.iv;
        for (i, b) in pn.to_be_bytes().iter().enumerate() {
            nonce[4 + i] ^= b;
        }
        nonce
    }

    /// Opens the long-header packet `h` of `datagram`: its plaintext frames
    /// and its packet number, or `None` when it does not authenticate.
    /// `largest` is the largest packet number opened so far on this side.
    pub fn open(&self, datagram: &[u8], h: &Header, largest: Option<u64>) -> Option<(Vec<u8>, u64)> {
        let packet = datagram.get(..h.end)?;
        let sample = packet.get(h.pn_offset + 4..h.pn_offset + 20)?;
        let mask = self.mask(sample);
        let mut head = packet.get(h.start..h.pn_offset)?.to_vec();
        head[0] ^= mask[0] & 0x0f;
        let pn_len = usize::from(head[0] & 3) + 1;
        let mut truncated = 0u64;
        for i in 0..pn_len {
            let b = *packet.get(h.pn_offset + i)? ^ mask[1 + i];
            head.push(b);
            truncated = (truncated << 8) | u64::from(b);
        }
        let pn = decode_pn(largest, truncated, pn_len);
        let nonce = self.nonce(pn);
        let body = packet.get(h.pn_offset + pn_len..)?;
        let (text, tag) = body.split_at(body.len().checked_sub(16)?);
        let mut out = text.to_vec();
        self.aead
            .decrypt_in_place_detached(Nonce::from_slice(&nonce), &head, &mut out, Tag::from_slice(tag))
            .ok()?;
        Some((out, pn))
    }

    /// Seals a packet whose header (packet number included, unprotected) is
    /// `head` and whose number is `pn`: what the tests and the sample send.
    pub fn seal(&self, head: &[u8], pn: u64, frames: &[u8]) -> Vec<u8> {
        let pn_len = usize::from(head[0] & 3) + 1;
        let nonce = self.nonce(pn);
        let mut body = frames.to_vec();
        let tag = self.aead.encrypt_in_place_detached(Nonce::from_slice(&nonce), head, &mut body).expect("sealing");
        let mut packet = head.to_vec();
        packet.extend_from_slice(&body);
        packet.extend_from_slice(&tag);
        let pn_offset = head.len() - pn_len;
        let mask = self.mask(&packet[pn_offset + 4..pn_offset + 20]);
        packet[0] ^= mask[0] & 0x0f;
        for i in 0..pn_len {
            packet[pn_offset + i] ^= mask[1 + i];
        }
        packet
    }
}

/// The full packet number from its truncated form (RFC 9000 A.3).
fn decode_pn(largest: Option<u64>, truncated: u64, len: usize) -> u64 {
    let expected = largest.map_or(0, |l| l + 1);
    let win = 1u64 << (len * 8);
    let half = win / 2;
    let candidate = (expected & !(win - 1)) | truncated;
    if candidate + half <= expected && candidate < (1 << 62) - win {
        candidate + win
    } else if candidate > expected + half && candidate >= win {
        candidate - win
    } else {
        candidate
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    #[test]
    fn rfc9001_appendix_a_keys() {
        let k = Keys::initial(1, &hex("8394c8f03e515708")).unwrap();
        assert_eq!(k.client.iv.to_vec(), hex("fa044b2f42a3fd3b46fb255c"));
        assert_eq!(k.server.iv.to_vec(), hex("0ac1493ca1905853b0bba03e"));
        // Version 2's labels give other keys from the same id.
        let k2 = Keys::initial(V2, &hex("8394c8f03e515708")).unwrap();
        assert_ne!(k2.client.iv, k.client.iv);
        assert!(Keys::initial(0xface_b001, b"x").is_none());
    }

    #[test]
    fn packet_numbers_decode_near_the_largest() {
        // RFC 9000 A.3's example.
        assert_eq!(decode_pn(Some(0xa82f30ea), 0x9b32, 2), 0xa82f9b32);
        assert_eq!(decode_pn(None, 1, 1), 1);
    }
}
