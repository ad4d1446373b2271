//! The EVE `tls` object, Suricata 8 names: by default what Suricata's `extended: yes` logs
//! (certificate fields, SNI, version, validity, JA3/JA3S, ALPNs, client certificate); other
//! field sets (basic, a `custom` list with base64 certificates and the raw handshake lists)
//! through [`TlsEveOptions`].

use serde::Serialize;

use super::cert::{format_time, CertInfo};
use super::handshake::ClientHello;
use super::ja3::{is_grease, Ja3};
use super::tx::{CertChain, TlsTx};
use super::version_name;

/// Which fields the record carries: Suricata's `eve-log.types.tls` settings (`extended`,
/// `custom`, `session-resumption`). The default is the extended set with session resumption,
/// what Suricata logs with `extended: yes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TlsEveOptions {
    fields: u32,
}

impl TlsEveOptions {
    pub const VERSION: u32 = 1 << 0;
    pub const SUBJECT: u32 = 1 << 1;
    pub const ISSUER: u32 = 1 << 2;
    pub const SERIAL: u32 = 1 << 3;
    pub const FINGERPRINT: u32 = 1 << 4;
    pub const NOT_BEFORE: u32 = 1 << 5;
    pub const NOT_AFTER: u32 = 1 << 6;
    pub const SNI: u32 = 1 << 7;
    /// The server's leaf, base64 DER.
    pub const CERTIFICATE: u32 = 1 << 8;
    /// The server's chain, base64 DER each.
    pub const CHAIN: u32 = 1 << 9;
    pub const SESSION_RESUMED: u32 = 1 << 10;
    pub const JA3: u32 = 1 << 11;
    pub const JA3S: u32 = 1 << 12;
    /// The `client` object (client certificate fields), when the client sent one.
    pub const CLIENT: u32 = 1 << 13;
    pub const CLIENT_CERTIFICATE: u32 = 1 << 14;
    pub const CLIENT_CHAIN: u32 = 1 << 15;
    /// JA4, where `ja4-fingerprints` has it computed.
    pub const JA4: u32 = 1 << 16;
    pub const SUBJECTALTNAME: u32 = 1 << 17;
    pub const CLIENT_ALPNS: u32 = 1 << 18;
    pub const SERVER_ALPNS: u32 = 1 << 19;
    pub const CLIENT_HANDSHAKE: u32 = 1 << 20;
    pub const SERVER_HANDSHAKE: u32 = 1 << 21;

    /// What Suricata logs without `extended` or `custom`.
    pub const BASIC: u32 = Self::SUBJECT | Self::ISSUER | Self::SUBJECTALTNAME;
    /// What `extended: yes` logs.
    pub const EXTENDED: u32 = Self::BASIC
        | Self::VERSION
        | Self::SERIAL
        | Self::FINGERPRINT
        | Self::NOT_BEFORE
        | Self::NOT_AFTER
        | Self::JA3
        | Self::JA3S
        | Self::JA4
        | Self::CLIENT
        | Self::CLIENT_ALPNS
        | Self::SERVER_ALPNS
        | Self::SNI;

    /// Names of the `custom` list, as Suricata spells them.
    const NAMES: [(&'static str, u32); 22] = [
        ("version", Self::VERSION),
        ("subject", Self::SUBJECT),
        ("issuer", Self::ISSUER),
        ("serial", Self::SERIAL),
        ("fingerprint", Self::FINGERPRINT),
        ("not_before", Self::NOT_BEFORE),
        ("not_after", Self::NOT_AFTER),
        ("sni", Self::SNI),
        ("certificate", Self::CERTIFICATE),
        ("chain", Self::CHAIN),
        ("session_resumed", Self::SESSION_RESUMED),
        ("ja3", Self::JA3),
        ("ja3s", Self::JA3S),
        ("client", Self::CLIENT),
        ("client_certificate", Self::CLIENT_CERTIFICATE),
        ("client_chain", Self::CLIENT_CHAIN),
        ("ja4", Self::JA4),
        ("subjectaltname", Self::SUBJECTALTNAME),
        ("client_alpns", Self::CLIENT_ALPNS),
        ("server_alpns", Self::SERVER_ALPNS),
        ("client_handshake", Self::CLIENT_HANDSHAKE),
        ("server_handshake", Self::SERVER_HANDSHAKE),
    ];

    /// Exactly these fields (a union of the constants above).
    pub const fn fields(fields: u32) -> Self {
        TlsEveOptions { fields }
    }

    /// The options Suricata derives from an `eve-log.types.tls` node: `extended` (default no:
    /// the basic set), `custom` (a field list that replaces either set; unknown names are
    /// returned so the caller can warn, as Suricata does), `session_resumption` (default yes).
    pub fn from_config<'a>(
        extended: bool,
        custom: Option<&[&'a str]>,
        session_resumption: bool,
    ) -> (TlsEveOptions, Vec<&'a str>) {
        let mut fields = if extended { Self::EXTENDED } else { Self::BASIC };
        let mut unknown = Vec::new();
        if let Some(names) = custom {
            fields = 0;
            for &name in names {
                match Self::NAMES.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)) {
                    Some(&(_, f)) => fields |= f,
                    None => unknown.push(name),
                }
            }
        }
        if session_resumption {
            fields |= Self::SESSION_RESUMED;
        }
        // The client's certificate and chain go in the `client` object.
        if fields & (Self::CLIENT_CERTIFICATE | Self::CLIENT_CHAIN) != 0 {
            fields |= Self::CLIENT;
        }
        (TlsEveOptions { fields }, unknown)
    }

    /// Whether `field` (one of the constants) is logged.
    pub fn has(&self, field: u32) -> bool {
        self.fields & field != 0
    }

    /// These options plus `fields`.
    pub const fn with(self, fields: u32) -> Self {
        TlsEveOptions { fields: self.fields | fields }
    }
}

impl Default for TlsEveOptions {
    fn default() -> Self {
        TlsEveOptions { fields: Self::EXTENDED | Self::SESSION_RESUMED }
    }
}

/// The `tls` object of an EVE record; absent values are left out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TlsEve {
    #[serde(flatten)]
    pub server: EveCert,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sni: Option<String>,
    /// Suricata's name for the server's version, `UNDETERMINED` before one was seen.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(skip_serializing_if = "is_false")]
    pub session_resumed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ja3: Option<EveJa3>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ja3s: Option<EveJa3>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ja4: Option<String>,
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

    /// The EVE `tls` object with the fields `opts` selects.
    pub fn eve_with(&self, opts: TlsEveOptions) -> TlsEve {
        use TlsEveOptions as F;
        let ch = self.client_hello.as_ref();
        let sh = self.server_hello.as_ref();
        let ja = |j: &Ja3| EveJa3 { hash: j.hash.clone(), string: j.string.clone() };
        let server_fields = CertFields {
            subject: opts.has(F::SUBJECT),
            issuer: opts.has(F::ISSUER),
            serial: opts.has(F::SERIAL),
            fingerprint: opts.has(F::FINGERPRINT),
            not_before: opts.has(F::NOT_BEFORE),
            not_after: opts.has(F::NOT_AFTER),
            sans: opts.has(F::SUBJECTALTNAME),
            certificate: opts.has(F::CERTIFICATE),
            chain: opts.has(F::CHAIN),
        };
        // The client object always has the certificate fields; the DER only on request.
        let client_fields = CertFields {
            sans: false,
            certificate: opts.has(F::CLIENT_CERTIFICATE),
            chain: opts.has(F::CLIENT_CHAIN),
            ..CertFields::ALL
        };
        let has_client_cert = self.client_certs.leaf.is_some();
        TlsEve {
            server: cert_fields(&self.server_certs, server_fields),
            sni: self.sni().filter(|_| opts.has(F::SNI)).map(text),
            version: opts.has(F::VERSION).then(|| self.version_name().into_owned()),
            session_resumed: self.session_resumed && opts.has(F::SESSION_RESUMED),
            ja3: self.ja3.as_ref().filter(|_| opts.has(F::JA3)).map(ja),
            ja3s: self.ja3s.as_ref().filter(|_| opts.has(F::JA3S)).map(ja),
            ja4: self.ja4.clone().filter(|_| opts.has(F::JA4)),
            client_alpns: if opts.has(F::CLIENT_ALPNS) {
                self.alpn().iter().map(|p| text(p)).collect()
            } else {
                Vec::new()
            },
            server_alpns: self.server_alpn().filter(|_| opts.has(F::SERVER_ALPNS)).map(text).into_iter().collect(),
            client: (has_client_cert && opts.has(F::CLIENT)).then(|| cert_fields(&self.client_certs, client_fields)),
            client_handshake: ch.filter(|c| opts.has(F::CLIENT_HANDSHAKE) && !c.sslv2).map(|c| EveClientHandshake {
                version: version_name(offered_version(c)).into_owned(),
                ciphers: no_grease(&c.ciphers),
                exts: no_grease(&c.extensions),
                sig_algs: c.sig_algs.clone(),
            }),
            server_handshake: sh.filter(|_| opts.has(F::SERVER_HANDSHAKE)).map(|s| EveServerHandshake {
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

/// Which certificate fields to fill.
#[derive(Clone, Copy)]
struct CertFields {
    subject: bool,
    issuer: bool,
    serial: bool,
    fingerprint: bool,
    not_before: bool,
    not_after: bool,
    sans: bool,
    certificate: bool,
    chain: bool,
}

impl CertFields {
    const ALL: CertFields = CertFields {
        subject: true,
        issuer: true,
        serial: true,
        fingerprint: true,
        not_before: true,
        not_after: true,
        sans: true,
        certificate: true,
        chain: true,
    };
}

fn cert_fields(chain: &CertChain, want: CertFields) -> EveCert {
    let mut out = EveCert::default();
    if let Some(c) = &chain.leaf {
        let CertInfo { subject, issuer, serial, fingerprint, not_before, not_after, sans } = c;
        out.subject = want.subject.then(|| subject.clone());
        out.issuerdn = want.issuer.then(|| issuer.clone());
        out.serial = want.serial.then(|| serial.clone());
        out.fingerprint = want.fingerprint.then(|| fingerprint.clone());
        out.notbefore = want.not_before.then(|| format_time(*not_before));
        out.notafter = want.not_after.then(|| format_time(*not_after));
        if want.sans {
            out.subjectaltname = sans.clone();
        }
    }
    if want.certificate {
        out.certificate = chain.certs.first().map(|c| base64(c));
    }
    if want.chain {
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
