//! The EVE `tls` object, Suricata 8 names: by default what Suricata's `extended: yes` logs
//! (certificate fields, SNI, version, validity, JA3/JA3S, ALPNs, client certificate); the
//! base64 certificates and the raw handshake lists on request ([`TlsEveOptions`]).

use serde::Serialize;

use super::cert::{format_time, CertInfo};
use super::handshake::ClientHello;
use super::ja3::{is_grease, Ja3};
use super::tx::{CertChain, TlsTx};
use super::version_name;

/// Optional parts of the record (Suricata's `custom` fields).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TlsEveOptions {
    /// `certificate` and `chain` (base64 DER), for the server and the client.
    pub certificates: bool,
    /// `client_handshake` and `server_handshake`.
    pub handshake: bool,
}

/// The `tls` object of an EVE record; absent values are left out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TlsEve {
    #[serde(flatten)]
    pub server: EveCert,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sni: Option<String>,
    /// Suricata's name for the server's version, `UNDETERMINED` before one was seen.
    pub version: String,
    #[serde(skip_serializing_if = "is_false")]
    pub session_resumed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ja3: Option<EveJa3>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ja3s: Option<EveJa3>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub client_alpns: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub server_alpns: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<EveCert>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_handshake: Option<EveClientHandshake>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_handshake: Option<EveServerHandshake>,
}

/// The certificate fields, for the server (top level) or the client (`client`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct EveCert {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub issuerdn: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notbefore: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notafter: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub subjectaltname: Vec<String>,
    /// Base64 DER of the leaf.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub certificate: Option<String>,
    /// Base64 DER of each certificate, leaf first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub chain: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EveJa3 {
    pub hash: String,
    pub string: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EveClientHandshake {
    pub version: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ciphers: Vec<u16>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub exts: Vec<u16>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sig_algs: Vec<u16>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EveServerHandshake {
    pub version: String,
    pub cipher: u16,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub exts: Vec<u16>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl TlsTx {
    /// The EVE `tls` object with the default fields.
    pub fn eve(&self) -> TlsEve {
        self.eve_with(TlsEveOptions::default())
    }

    /// The EVE `tls` object with optional parts.
    pub fn eve_with(&self, opts: TlsEveOptions) -> TlsEve {
        let ch = self.client_hello.as_ref();
        let sh = self.server_hello.as_ref();
        let ja = |j: &Ja3| EveJa3 { hash: j.hash.clone(), string: j.string.clone() };
        TlsEve {
            server: cert_fields(&self.server_certs, opts.certificates),
            sni: self.sni().map(text),
            version: self.version_name().into_owned(),
            session_resumed: self.session_resumed,
            ja3: self.ja3.as_ref().map(ja),
            ja3s: self.ja3s.as_ref().map(ja),
            client_alpns: self.alpn().iter().map(|p| text(p)).collect(),
            server_alpns: self.server_alpn().map(text).into_iter().collect(),
            client: (!self.client_certs.certs.is_empty()).then(|| cert_fields(&self.client_certs, opts.certificates)),
            client_handshake: ch.filter(|_| opts.handshake && !ch.is_some_and(|c| c.sslv2)).map(|c| {
                EveClientHandshake {
                    version: version_name(offered_version(c)).into_owned(),
                    ciphers: no_grease(&c.ciphers),
                    exts: no_grease(&c.extensions),
                    sig_algs: c.sig_algs.clone(),
                }
            }),
            server_handshake: sh.filter(|_| opts.handshake).map(|s| EveServerHandshake {
                version: version_name(s.negotiated_version()).into_owned(),
                cipher: s.cipher,
                exts: no_grease(&s.extensions),
            }),
        }
    }
}

/// The highest version a client offers: its supported_versions, else the legacy field.
fn offered_version(c: &ClientHello) -> u16 {
    c.supported_versions.iter().copied().filter(|&v| !is_grease(v)).max().unwrap_or(c.version)
}

fn no_grease(v: &[u16]) -> Vec<u16> {
    v.iter().copied().filter(|&x| !is_grease(x)).collect()
}

fn cert_fields(chain: &CertChain, with_der: bool) -> EveCert {
    let mut out = EveCert::default();
    if let Some(c) = &chain.leaf {
        let CertInfo { subject, issuer, serial, fingerprint, not_before, not_after, sans } = c;
        out.subject = Some(subject.clone());
        out.issuerdn = Some(issuer.clone());
        out.serial = Some(serial.clone());
        out.fingerprint = Some(fingerprint.clone());
        out.notbefore = Some(format_time(*not_before));
        out.notafter = Some(format_time(*not_after));
        out.subjectaltname = sans.clone();
    }
    if with_der {
        out.certificate = chain.certs.first().map(|c| base64(c));
        out.chain = chain.certs.iter().map(|c| base64(c)).collect();
    }
    out
}

/// Bytes as text: UTF-8 as is, other bytes as `\xNN` (Suricata's JSON builder does the same).
fn text(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_owned(),
        Err(_) => {
            bytes.iter().map(|&b| if b < 0x80 { char::from(b).to_string() } else { format!("\\x{b:02x}") }).collect()
        }
    }
}

/// Standard base64 with padding.
pub fn base64(data: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [chunk[0], chunk.get(1).copied().unwrap_or(0), chunk.get(2).copied().unwrap_or(0)];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}
