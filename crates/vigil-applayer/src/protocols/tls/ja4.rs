//! The JA4 client fingerprint (FoxIO's JA4 specification): `a_b_c` where
//! `a` is the transport (`t` TCP, `q` QUIC), the highest TLS version
//! offered, `d`/`i` for a server name or none, the cipher and extension
//! counts (two digits each, at most 99) and the first ALPN's first and
//! last characters; `b` the first 12 hex digits of the SHA-256 of the sorted
//! ciphers; `c` the same of the sorted extensions (server name and ALPN
//! left out), `_`, and the signature algorithms in wire order.
//! GREASE values count nowhere; empty lists are hashed as they are.

use sha2::{Digest, Sha256};

use super::handshake::{ClientHello, EXT_ALPN, EXT_SNI};
use super::ja3::is_grease;

/// The transport a hello came over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    Tcp,
    Quic,
}

fn version_code(v: u16) -> &'static str {
    match v {
        0x0304 => "13",
        0x0303 => "12",
        0x0302 => "11",
        0x0301 => "10",
        0x0300 => "s3",
        0x0002 => "s2",
        0xfeff => "d1",
        0xfefd => "d2",
        0xfefc => "d3",
        _ => "00",
    }
}

/// Empty lists are hashed too (the hash of nothing), as Suricata writes them.
fn truncated_sha256(items: &[String]) -> String {
    let digest = Sha256::digest(items.join(",").as_bytes());
    crate::files::hex(&digest[..6])
}

/// The first ALPN's first and last characters; where either is not an
/// ASCII letter or digit, the first hex digit of the first byte and the
/// last hex digit of the last byte instead.
fn alpn_code(alpn: Option<&Vec<u8>>) -> String {
    let Some(p) = alpn.filter(|p| !p.is_empty()) else { return "00".into() };
    let (first, last) = (p[0], p[p.len() - 1]);
    if first.is_ascii_alphanumeric() && last.is_ascii_alphanumeric() {
        format!("{}{}", char::from(first), char::from(last))
    } else {
        let f = format!("{first:02x}");
        let l = format!("{last:02x}");
        format!("{}{}", &f[..1], &l[1..])
    }
}

/// The fingerprint of a ClientHello.
pub fn ja4(ch: &ClientHello, transport: Transport) -> String {
    // The client's version as Suricata takes it (drafts have no code of their own).
    let version = ch.offered_version();
    // An SSLv2 hello is fingerprinted as empty, as Suricata does.
    let (version, ciphers, exts): (u16, Vec<u16>, Vec<u16>) = if ch.sslv2 {
        (0, Vec::new(), Vec::new())
    } else {
        (
            version,
            ch.ciphers.iter().copied().filter(|c| !is_grease(*c)).collect(),
            ch.extensions.iter().copied().filter(|e| !is_grease(*e)).collect(),
        )
    };
    let a = format!(
        "{}{}{}{:02}{:02}{}",
        match transport {
            Transport::Tcp => 't',
            Transport::Quic => 'q',
        },
        version_code(version),
        if exts.contains(&EXT_SNI) { 'd' } else { 'i' },
        ciphers.len().min(99),
        exts.len().min(99),
        alpn_code(ch.alpn.first()),
    );
    let mut sorted_ciphers = ciphers;
    sorted_ciphers.sort_unstable();
    let b = truncated_sha256(&sorted_ciphers.iter().map(|c| format!("{c:04x}")).collect::<Vec<_>>());
    let mut sorted_exts: Vec<u16> = exts.into_iter().filter(|&e| e != EXT_SNI && e != EXT_ALPN).collect();
    sorted_exts.sort_unstable();
    // The underscore stays when there are no signature algorithms, as
    // the reference implementation (and Suricata) hash it.
    let ext_list = sorted_exts.iter().map(|e| format!("{e:04x}")).collect::<Vec<_>>().join(",");
    let sigs: Vec<String> = if ch.sslv2 {
        Vec::new()
    } else {
        ch.sig_algs.iter().filter(|s| !is_grease(**s)).map(|s| format!("{s:04x}")).collect()
    };
    let c = truncated_sha256(&[format!("{ext_list}_{}", sigs.join(","))]);
    format!("{a}_{b}_{c}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_specifications_parts() {
        let ch = ClientHello {
            version: 0x0303,
            ciphers: vec![0x0a0a, 0x1301, 0x1302, 0x1303],
            extensions: vec![0x0a0a, 0, 10, 16, 13, 43],
            alpn: vec![b"h3".to_vec()],
            sig_algs: vec![0x0403, 0x0804],
            supported_versions: vec![0x2a2a, 0x0304],
            sni: Some(b"example.org".to_vec()),
            ..ClientHello::default()
        };
        let f = ja4(&ch, Transport::Quic);
        assert!(f.starts_with("q13d0305h3_"), "{f}");
        // SHA-256 of "1301,1302,1303", as every JA4 of a TLS 1.3-only hello shows it.
        assert_eq!(&f[11..23], "55b375c5d22e");
        assert_eq!(alpn_code(Some(&b"\xff/\x01".to_vec())), "f1");
        assert_eq!(alpn_code(None), "00");
        // A TLS 1.0 hello without signature algorithms still hashes the underscore.
        let old = ClientHello { version: 0x0301, ciphers: vec![0x2f], extensions: vec![5, 10, 11, 35, 23, 65281], ..ClientHello::default() };
        assert!(ja4(&old, Transport::Tcp).ends_with("_ce66f3b797c1"), "{}", ja4(&old, Transport::Tcp));
    }
}
