//! The one TLS transaction of a flow: what each side's handshake said, up to encryption.

use std::borrow::Cow;

use vigil_types::{Direction, PerDir};

use super::cert::CertInfo;
use super::handshake::{ClientHello, ServerHello};
use super::ja3::Ja3;
use super::Buffer;

/// One side's certificate chain.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CertChain {
    /// DER certificates, leaf first.
    pub certs: Vec<Vec<u8>>,
    /// The decoded leaf, if it decoded.
    pub leaf: Option<CertInfo>,
}

/// The handshake of a TLS flow (Suricata keeps one transaction per TLS flow).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsTx {
    /// 0 unless the TLS session runs inside a tunnel whose HTTP transactions came first.
    pub(crate) id: u64,
    pub(crate) client_hello: Option<ClientHello>,
    pub(crate) server_hello: Option<ServerHello>,
    /// Version from an SSLv2 SERVER-HELLO, which has no [`ServerHello`].
    pub(crate) ssl2_server_version: Option<u16>,
    pub(crate) ja3: Option<Ja3>,
    pub(crate) ja3s: Option<Ja3>,
    pub(crate) ja4: Option<String>,
    /// The version of the server's last record header, for `tls.version`
    /// when no ServerHello came.
    pub(crate) server_record_version: Option<u16>,
    pub(crate) server_certs: CertChain,
    pub(crate) client_certs: CertChain,
    pub(crate) session_resumed: bool,
    pub(crate) done: PerDir<bool>,
    /// The handshake state each side reached, as firewall hooks number
    /// them (client: in progress, hello done, cert done, handshake done,
    /// finished; server: in progress, hello, cert done, hello done,
    /// handshake done, finished).
    pub(crate) hook: PerDir<u8>,
    /// Records of each side parsed into it.
    pub(crate) updates: PerDir<u64>,
}

impl TlsTx {
    /// Side `dir` reached hook state `state` (states only move on).
    pub(crate) fn reach(&mut self, dir: Direction, state: u8) {
        let h = self.hook.get_mut(dir);
        *h = (*h).max(state);
    }

    /// Whether any handshake message was seen: a session whose parsing failed before
    /// one has nothing to log.
    pub fn has_handshake(&self) -> bool {
        self.client_hello.is_some()
            || self.server_hello.is_some()
            || self.ssl2_server_version.is_some()
            || !self.server_certs.certs.is_empty()
            || !self.client_certs.certs.is_empty()
            || self.session_resumed
    }

    pub fn client_hello(&self) -> Option<&ClientHello> {
        self.client_hello.as_ref()
    }

    pub fn server_hello(&self) -> Option<&ServerHello> {
        self.server_hello.as_ref()
    }

    /// `tls.sni`: the host name the client asked for.
    pub fn sni(&self) -> Option<&[u8]> {
        self.client_hello.as_ref()?.sni.as_deref()
    }

    /// The ClientHello version (legacy field), as `tls.version` matches to-server.
    pub fn client_version(&self) -> Option<u16> {
        self.client_hello.as_ref().map(|c| c.version)
    }

    /// The version the server chose (supported_versions for TLS 1.3), as `tls.version` matches
    /// to-client and EVE logs it.
    pub fn server_version(&self) -> Option<u16> {
        self.server_hello.as_ref().map(ServerHello::negotiated_version).or(self.ssl2_server_version)
    }

    /// The negotiated version if the server answered, else what the client sent.
    pub fn version(&self) -> Option<u16> {
        self.server_version().or(self.client_version())
    }

    /// EVE's `tls.version`, by Suricata's name: the server's version, else
    /// its record layer's (an alert refusing the hello, bytes that are no
    /// TLS), else what the client offered (the first version of its
    /// supported_versions a peer can speak, or its hello's); `UNDETERMINED`
    /// before any.
    pub fn version_name(&self) -> Cow<'static, str> {
        let client = self.client_hello.as_ref().map(ClientHello::offered_version);
        super::version_name(self.server_version().or(self.server_record_version).or(client).unwrap_or(0))
    }

    pub fn ja3(&self) -> Option<&Ja3> {
        self.ja3.as_ref()
    }

    pub fn ja3s(&self) -> Option<&Ja3> {
        self.ja3s.as_ref()
    }

    /// The server's chain (`tls.certs`) and decoded leaf.
    pub fn server_certs(&self) -> &CertChain {
        &self.server_certs
    }

    /// The client's chain, when the server asked for one.
    pub fn client_certs(&self) -> &CertChain {
        &self.client_certs
    }

    /// The server's decoded leaf certificate.
    pub fn server_cert(&self) -> Option<&CertInfo> {
        self.server_certs.leaf.as_ref()
    }

    /// The server leaf's (notBefore, notAfter) in epoch seconds.
    pub fn cert_validity(&self) -> Option<(i64, i64)> {
        self.server_cert().map(|c| (c.not_before, c.not_after))
    }

    /// `tls_cert_expired`: the server leaf is past its notAfter at `now_secs` (packet time).
    pub fn cert_expired(&self, now_secs: i64) -> bool {
        self.server_cert().is_some_and(|c| c.expired(now_secs))
    }

    /// `tls_cert_valid`: the server leaf is within its validity at `now_secs`.
    pub fn cert_valid(&self, now_secs: i64) -> bool {
        self.server_cert().is_some_and(|c| c.valid(now_secs))
    }

    /// ALPN protocols the client offered (`tls.alpn` to-server).
    pub fn alpn(&self) -> &[Vec<u8>] {
        self.client_hello.as_ref().map_or(&[], |c| c.alpn.as_slice())
    }

    /// The ALPN protocol the server chose (`tls.alpn` to-client).
    pub fn server_alpn(&self) -> Option<&[u8]> {
        self.server_hello.as_ref()?.alpn.as_deref()
    }

    /// The server resumed a session: it went to ChangeCipherSpec without a certificate.
    pub fn session_resumed(&self) -> bool {
        self.session_resumed
    }

    /// Like [`TlsTx::buffer`], but the certificate and ALPN buffers answer for the side
    /// `dir` inspects: to-server sees the client's certificate and offered protocols, to-client
    /// the server's (as Suricata matches `tls.cert_subject` and friends in each direction).
    pub fn buffer_dir(&self, dir: Direction, id: Buffer, index: usize) -> Option<&[u8]> {
        let chain = match dir {
            Direction::ToServer => &self.client_certs,
            Direction::ToClient => &self.server_certs,
        };
        let leaf = || chain.leaf.as_ref().filter(|_| index == 0);
        match id {
            Buffer::CertSubject => leaf().map(|c| c.subject.as_bytes()),
            Buffer::CertIssuer => leaf().map(|c| c.issuer.as_bytes()),
            Buffer::CertSerial => leaf().map(|c| c.serial.as_bytes()),
            Buffer::CertFingerprint => leaf().map(|c| c.fingerprint.as_bytes()),
            Buffer::Certs => chain.certs.get(index).map(Vec::as_slice),
            Buffer::SubjectAltName => chain.leaf.as_ref()?.sans.get(index).map(String::as_bytes),
            Buffer::Random | Buffer::RandomTime | Buffer::RandomBytes => {
                let random = match dir {
                    Direction::ToServer => self.client_hello.as_ref().filter(|c| !c.sslv2).map(|c| c.random.as_slice()),
                    Direction::ToClient => self.server_hello.as_ref().map(|s| s.random.as_slice()),
                };
                first(index, random.and_then(|r| random_part(id, r)))
            }
            Buffer::Alpn => match dir {
                Direction::ToServer => self.alpn().get(index).map(Vec::as_slice),
                Direction::ToClient => self.server_alpn().filter(|_| index == 0),
            },
            _ => self.buffer(id, index),
        }
    }
}

impl TlsTx {
    pub fn id(&self) -> u64 {
        self.id
    }

    /// To-server: the ClientHello was seen (or that side went encrypted or was given up).
    /// To-client: the server's part up to its certificates or ServerHelloDone was seen, or it
    /// went encrypted.
    pub fn complete(&self, dir: Direction) -> bool {
        *self.done.get(dir)
    }

    /// Certificate buffers answer for the server's chain and `tls.alpn` for the client's offer;
    /// see [`TlsTx::buffer_dir`] for the per-direction view.
    pub fn buffer(&self, id: Buffer, index: usize) -> Option<&[u8]> {
        match id {
            Buffer::Sni => first(index, self.sni()),
            Buffer::Ja3Hash => first(index, self.ja3.as_ref().map(|j| j.hash.as_bytes())),
            Buffer::Ja3String => first(index, self.ja3.as_ref().map(|j| j.string.as_bytes())),
            Buffer::Ja3sHash => first(index, self.ja3s.as_ref().map(|j| j.hash.as_bytes())),
            Buffer::Ja3sString => first(index, self.ja3s.as_ref().map(|j| j.string.as_bytes())),
            Buffer::Ja4Hash => first(index, self.ja4.as_deref().map(str::as_bytes)),
            Buffer::Alpn => self.alpn().get(index).map(Vec::as_slice),
            Buffer::CertSubject
            | Buffer::CertIssuer
            | Buffer::CertSerial
            | Buffer::CertFingerprint
            | Buffer::Certs
            | Buffer::SubjectAltName => self.buffer_dir(Direction::ToClient, id, index),
            // The client's random: a rule without a side inspects the client's hello.
            Buffer::Random | Buffer::RandomTime | Buffer::RandomBytes => {
                self.buffer_dir(Direction::ToServer, id, index)
            }
        }
    }
}

/// The part of a 32-byte hello random a `tls.random*` buffer names. SSLv2 challenges (16 to 32
/// bytes) are not TLS randoms, and Suricata fills these buffers only from 32-byte ones.
fn random_part(id: Buffer, random: &[u8]) -> Option<&[u8]> {
    if random.len() != 32 {
        return None;
    }
    match id {
        Buffer::RandomTime => random.get(..4),
        Buffer::RandomBytes => random.get(4..),
        _ => Some(random),
    }
}

/// Single-valued buffers answer only index 0.
fn first(index: usize, v: Option<&[u8]>) -> Option<&[u8]> {
    v.filter(|_| index == 0)
}
