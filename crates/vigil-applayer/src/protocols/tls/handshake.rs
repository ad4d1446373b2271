//! Handshake message bodies: ClientHello, ServerHello and Certificate (with tls-parser), and
//! the SSLv2 CLIENT-HELLO / SERVER-HELLO.
//!
//! Extensions are walked here as a raw (type, length, data) list so their ids keep wire order
//! and unknown or GREASE ids survive for JA3; tls-parser decodes the contents of the ones we
//! keep (SNI, ALPN, groups, point formats, signature algorithms).

use tls_parser::TlsExtension;

/// Handshake message types seen in the clear.
pub const CLIENT_HELLO: u8 = 1;
pub const SERVER_HELLO: u8 = 2;
pub const CERTIFICATE: u8 = 11;
pub const CERTIFICATE_REQUEST: u8 = 13;
pub const SERVER_HELLO_DONE: u8 = 14;
pub const CLIENT_KEY_EXCHANGE: u8 = 16;

/// Every handshake type a TLS 1.0–1.3 peer may send (RFC 8446 B.3, plus SSLv3/TLS 1.2 types,
/// NextProtocol and DTLS's HelloVerifyRequest); any other is `tls.invalid_handshake_message`.
pub fn known_handshake_type(t: u8) -> bool {
    matches!(t, 0..=6 | 8 | 11..=16 | 20..=25 | 67 | 254)
}

pub const EXT_SNI: u16 = 0;
pub const EXT_SUPPORTED_GROUPS: u16 = 10;
pub const EXT_EC_POINT_FORMATS: u16 = 11;
pub const EXT_SIGNATURE_ALGORITHMS: u16 = 13;
pub const EXT_ALPN: u16 = 16;
pub const EXT_SUPPORTED_VERSIONS: u16 = 43;

/// Suricata's version for TLS 1.3 drafts before 16, whatever number they sent.
pub const TLS13_PRE_DRAFT16: u16 = 0x7f01;

/// The ServerHello random that marks a TLS 1.3 HelloRetryRequest (RFC 8446 4.1.3).
const HELLO_RETRY_RANDOM: [u8; 32] = [
    0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91, 0xc2, 0xa2, 0x11,
    0x16, 0x7a, 0xbb, 0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c,
];

/// What a ClientHello offered.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientHello {
    /// The legacy version field (`0x0303` for TLS 1.2 and 1.3 clients).
    pub version: u16,
    pub random: Vec<u8>,
    pub session_id: Vec<u8>,
    pub ciphers: Vec<u16>,
    /// Extension ids in wire order, GREASE included.
    pub extensions: Vec<u16>,
    /// The first host_name of the server_name extension.
    pub sni: Option<Vec<u8>>,
    pub alpn: Vec<Vec<u8>>,
    pub groups: Vec<u16>,
    pub ec_point_formats: Vec<u8>,
    pub sig_algs: Vec<u16>,
    pub supported_versions: Vec<u16>,
    /// Sent in SSLv2 framing.
    pub sslv2: bool,
}

/// What a ServerHello chose.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerHello {
    /// The legacy version field.
    pub version: u16,
    pub random: Vec<u8>,
    pub session_id: Vec<u8>,
    pub cipher: u16,
    pub extensions: Vec<u16>,
    /// From supported_versions (TLS 1.3 and its drafts).
    pub selected_version: Option<u16>,
    pub alpn: Option<Vec<u8>>,
}

impl ServerHello {
    /// The version in use: supported_versions if present, else the legacy field.
    pub fn negotiated_version(&self) -> u16 {
        self.selected_version.unwrap_or(self.version)
    }

    /// TLS 1.3 or one of its drafts: everything after this message is encrypted.
    pub fn is_tls13(&self) -> bool {
        is_tls13(self.negotiated_version())
    }

    /// A TLS 1.3 HelloRetryRequest: the client will send a second ClientHello in the clear.
    pub fn is_retry_request(&self) -> bool {
        self.random == HELLO_RETRY_RANDOM
    }
}

/// A version a peer can speak as Suricata counts them (SSL 3.0 to TLS 1.3,
/// the TLS 1.3 drafts from 16 and Facebook's): what it takes from a
/// client's supported_versions, the first such one.
pub fn speakable(v: u16) -> bool {
    matches!(v, 0x0300..=0x0304 | 0x7f10..=0x7f1c | 0xfb00..=0xfbff)
}

impl ClientHello {
    /// The version the client offers first: its first speakable
    /// supported_versions entry, else the legacy field.
    pub fn offered_version(&self) -> u16 {
        self.supported_versions.iter().copied().find(|v| speakable(*v)).unwrap_or(self.version)
    }
}

/// TLS 1.3, an IETF draft (`0x7fNN`) or a Facebook draft (`0xfbNN`).
pub fn is_tls13(v: u16) -> bool {
    v == 0x0304 || v >> 8 == 0x7f || v >> 8 == 0xfb
}

/// Decodes a ClientHello body; anomalies in its extensions go to `events`.
pub fn parse_client_hello(body: &[u8], events: &mut Vec<&'static str>) -> Option<ClientHello> {
    let (_, ch) = tls_parser::parse_tls_handshake_client_hello(body).ok()?;
    let mut out = ClientHello {
        version: ch.version.0,
        random: ch.random.to_vec(),
        session_id: ch.session_id.unwrap_or_default().to_vec(),
        ciphers: ch.ciphers.iter().map(|c| c.0).collect(),
        ..ClientHello::default()
    };
    let mut sni_seen = false;
    for (id, data) in extensions(ch.ext.unwrap_or_default(), events) {
        out.extensions.push(id);
        match id {
            EXT_SNI => {
                if sni_seen {
                    events.push(super::EVENT_MULTIPLE_SNI_EXTENSIONS);
                    continue;
                }
                sni_seen = true;
                match tls_parser::parse_tls_extension_sni_content(data) {
                    Ok((_, TlsExtension::SNI(names))) => {
                        if names.iter().any(|(t, _)| t.0 != 0) {
                            events.push(super::EVENT_INVALID_SNI_TYPE);
                        }
                        out.sni = names.iter().find(|(t, _)| t.0 == 0).map(|(_, n)| n.to_vec());
                    }
                    _ => events.push(super::EVENT_INVALID_SNI_LENGTH),
                }
            }
            EXT_SUPPORTED_GROUPS => {
                if let Ok((_, TlsExtension::EllipticCurves(g))) =
                    tls_parser::parse_tls_extension_elliptic_curves_content(data)
                {
                    out.groups = g.iter().map(|g| g.0).collect();
                }
            }
            EXT_EC_POINT_FORMATS => {
                if let Ok((_, TlsExtension::EcPointFormats(f))) =
                    tls_parser::parse_tls_extension_ec_point_formats_content(data)
                {
                    out.ec_point_formats = f.to_vec();
                }
            }
            EXT_SIGNATURE_ALGORITHMS => {
                if let Ok((_, TlsExtension::SignatureAlgorithms(s))) =
                    tls_parser::parse_tls_extension_signature_algorithms_content(data)
                {
                    out.sig_algs = s;
                }
            }
            EXT_ALPN => {
                if let Ok((_, TlsExtension::ALPN(protos))) = tls_parser::parse_tls_extension_alpn_content(data) {
                    out.alpn = protos.iter().map(|p| p.to_vec()).collect();
                }
            }
            EXT_SUPPORTED_VERSIONS => {
                // A one-byte list length, then 2-byte versions.
                if let Some((_, list)) = data.split_first() {
                    out.supported_versions = list.chunks_exact(2).map(|v| u16::from_be_bytes([v[0], v[1]])).collect();
                }
            }
            _ => {}
        }
    }
    Some(out)
}

/// Decodes a ServerHello body.
pub fn parse_server_hello(body: &[u8], events: &mut Vec<&'static str>) -> Option<ServerHello> {
    let legacy = u16::from_be_bytes([*body.first()?, *body.get(1)?]);
    // TLS 1.3 drafts 1 to 15 sent 0x0304 in this field, with the draft layout below; a final
    // TLS 1.3 server says 0x0303 here and 0x0304 in supported_versions.
    let pre_draft16 = legacy == 0x0304;
    let mut out = if legacy >> 8 == 0x7f || pre_draft16 {
        // TLS 1.3 drafts before 22 put the draft version here and have no session id or
        // compression; tls-parser only knows draft 18.
        let random = body.get(2..34)?;
        let cipher = u16::from_be_bytes([*body.get(34)?, *body.get(35)?]);
        let ext = length_prefixed(body.get(36..)?).unwrap_or_default();
        let mut sh = ServerHello { version: legacy, random: random.to_vec(), cipher, ..ServerHello::default() };
        sh.extensions = extension_ids(ext, &mut sh, events);
        sh
    } else {
        let (_, sh) = tls_parser::parse_tls_handshake_server_hello(body).ok()?;
        let mut out = ServerHello {
            version: sh.version.0,
            random: sh.random.to_vec(),
            session_id: sh.session_id.unwrap_or_default().to_vec(),
            cipher: sh.cipher.0,
            ..ServerHello::default()
        };
        out.extensions = extension_ids(sh.ext.unwrap_or_default(), &mut out, events);
        out
    };
    if out.selected_version.is_none() && legacy >> 8 == 0x7f {
        out.selected_version = Some(legacy);
    }
    // Early drafts that predate the 0x7fNN numbering cannot be told apart; Suricata files them
    // all (and draft numbers 1-15 themselves) under one "pre draft 16" version.
    if pre_draft16 || (0x7f01..0x7f10).contains(&out.negotiated_version()) {
        out.selected_version = Some(TLS13_PRE_DRAFT16);
    }
    Some(out)
}

/// Walks a ServerHello's extensions: their ids, plus the chosen version and protocol.
fn extension_ids(ext: &[u8], sh: &mut ServerHello, events: &mut Vec<&'static str>) -> Vec<u16> {
    let mut ids = Vec::new();
    for (id, data) in extensions(ext, events) {
        ids.push(id);
        match (id, data) {
            (EXT_SUPPORTED_VERSIONS, [hi, lo]) => sh.selected_version = Some(u16::from_be_bytes([*hi, *lo])),
            (EXT_ALPN, _) => {
                if let Ok((_, TlsExtension::ALPN(p))) = tls_parser::parse_tls_extension_alpn_content(data) {
                    sh.alpn = p.first().map(|p| p.to_vec());
                }
            }
            _ => {}
        }
    }
    ids
}

/// The (id, data) list of an extensions block. A block that ends mid-extension is cut there
/// and flagged `tls.handshake_invalid_length`.
fn extensions<'a>(mut ext: &'a [u8], events: &mut Vec<&'static str>) -> Vec<(u16, &'a [u8])> {
    let mut out = Vec::new();
    while !ext.is_empty() {
        if ext.len() < 4 {
            events.push(super::EVENT_HANDSHAKE_INVALID_LENGTH);
            break;
        }
        let id = u16::from_be_bytes([ext[0], ext[1]]);
        let len = usize::from(u16::from_be_bytes([ext[2], ext[3]]));
        let Some(data) = ext.get(4..4 + len) else {
            events.push(super::EVENT_HANDSHAKE_INVALID_LENGTH);
            break;
        };
        out.push((id, data));
        ext = &ext[4 + len..];
    }
    out
}

fn length_prefixed(data: &[u8]) -> Option<&[u8]> {
    let len = usize::from(u16::from_be_bytes([*data.first()?, *data.get(1)?]));
    data.get(2..2 + len)
}

/// The DER certificates of a (TLS 1.0–1.2) Certificate message, leaf first.
pub fn parse_certificate_chain(body: &[u8]) -> Option<Vec<Vec<u8>>> {
    match tls_parser::parse_tls_handshake_msg_certificate(body) {
        Ok((_, tls_parser::TlsMessageHandshake::Certificate(c))) => {
            Some(c.cert_chain.iter().map(|c| c.data.to_vec()).collect())
        }
        _ => None,
    }
}

/// SSLv2 message types.
pub const SSL2_ERROR: u8 = 0;
pub const SSL2_CLIENT_HELLO: u8 = 1;
pub const SSL2_SERVER_HELLO: u8 = 4;

/// An SSLv2 CLIENT-HELLO (body after the record header). Only the cipher specs that map to TLS
/// suites (first byte zero) are kept.
pub fn parse_sslv2_client_hello(body: &[u8]) -> Option<ClientHello> {
    let field = |i: usize| Some(u16::from_be_bytes([*body.get(i)?, *body.get(i + 1)?]));
    if body.first() != Some(&SSL2_CLIENT_HELLO) {
        return None;
    }
    let (version, specs_len, sid_len, challenge_len) = (field(1)?, field(3)?, field(5)?, field(7)?);
    let specs_end = 9 + usize::from(specs_len);
    let sid_end = specs_end + usize::from(sid_len);
    let specs = body.get(9..specs_end)?;
    let session_id = body.get(specs_end..sid_end)?;
    let challenge = body.get(sid_end..sid_end + usize::from(challenge_len))?;
    Some(ClientHello {
        version,
        random: challenge.to_vec(),
        session_id: session_id.to_vec(),
        ciphers: specs.chunks_exact(3).filter(|s| s[0] == 0).map(|s| u16::from_be_bytes([s[1], s[2]])).collect(),
        sslv2: true,
        ..ClientHello::default()
    })
}

/// An SSLv2 SERVER-HELLO: the version and the server certificate, if any.
pub fn parse_sslv2_server_hello(body: &[u8]) -> Option<(u16, Option<Vec<u8>>)> {
    let field = |i: usize| Some(u16::from_be_bytes([*body.get(i)?, *body.get(i + 1)?]));
    if body.first() != Some(&SSL2_SERVER_HELLO) {
        return None;
    }
    let (version, cert_len) = (field(3)?, usize::from(field(5)?));
    let cert = body.get(11..11 + cert_len)?;
    Some((version, (!cert.is_empty()).then(|| cert.to_vec())))
}
