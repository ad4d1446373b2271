//! JA3 and JA3S fingerprints (salesforce/ja3): decimal fields joined by `,`, lists joined by
//! `-`, GREASE values (RFC 8701) left out, and the MD5 of that string in lowercase hex.
//!
//! JA3 = `version,ciphers,extensions,groups,point_formats` of the ClientHello;
//! JA3S = `version,cipher,extensions` of the ServerHello. Versions are the legacy version
//! fields (771 for TLS 1.2 and 1.3).

use md5::{Digest, Md5};

use super::handshake::{ClientHello, ServerHello};

/// A fingerprint string and its MD5.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ja3 {
    pub string: String,
    pub hash: String,
}

impl Ja3 {
    fn new(string: String) -> Ja3 {
        let hash = Md5::digest(string.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
        Ja3 { string, hash }
    }
}

/// GREASE values are `0x?a?a` with both bytes equal.
pub fn is_grease(v: u16) -> bool {
    v & 0x0f0f == 0x0a0a && v >> 8 == v & 0xff
}

fn join<T: Copy + Into<u32>>(values: &[T], skip_grease: bool) -> String {
    let kept = values.iter().map(|&v| v.into()).filter(|&v| !(skip_grease && v <= 0xffff && is_grease(v as u16)));
    kept.map(|v| v.to_string()).collect::<Vec<_>>().join("-")
}

/// The client fingerprint.
pub fn ja3(ch: &ClientHello) -> Ja3 {
    Ja3::new(format!(
        "{},{},{},{},{}",
        ch.version,
        join(&ch.ciphers, true),
        join(&ch.extensions, true),
        join(&ch.groups, true),
        join(&ch.ec_point_formats, false),
    ))
}

/// The server fingerprint.
pub fn ja3s(sh: &ServerHello) -> Ja3 {
    Ja3::new(format!("{},{},{}", sh.version, sh.cipher, join(&sh.extensions, true)))
}
