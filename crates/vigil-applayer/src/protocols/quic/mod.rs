//! QUIC over UDP ports 443 and 80 (where Suricata looks for it): IETF QUIC (version 1, version 2, drafts 23 to 32)
//! and Google QUIC (Q039 to Q050). Each packet read before its side's hello
//! is a transaction, logged as EVE `quic` with the version; the packet that
//! completes a hello adds what it said. IETF Initial packets are opened
//! with the keys the client's first destination connection id gives
//! ([`keys`]); their CRYPTO frames are put back in order across packets
//! ([`frames`]) up to the TLS ClientHello (server name, JA3, JA4, the
//! extensions) or ServerHello (JA3S, extensions). Google QUIC's clear
//! `CHLO` gives the server name, user agent and CYU fingerprint
//! ([`gquic`]).
//!
//! A side is no longer read once its TLS hello was read or it sends a
//! short header (what follows is encrypted with keys an observer lacks);
//! Google QUIC's sides run until their short headers. After a Retry the
//! client's next Initial to a new connection id starts the client's side
//! over with keys from that id (RFC 9000 17.2.5).
//!
//! Keywords: `quic.version` (the four version bytes), `quic.sni`, `quic.ua`,
//! `quic.cyu.hash`, `quic.cyu.string`, and TLS's `ja3.hash`, `ja3.string`,
//! `ja3s.hash`, `ja3s.string`, `ja4.hash` in rules whose header says
//! `quic`. Events: Suricata's four QUIC events.
//!
//! ```
//! use vigil_applayer::protocols::quic::PROTO;
//! use vigil_applayer::proto::ParserInit;
//! use vigil_applayer::{AppConfig, Transport};
//!
//! let app = AppConfig::default();
//! let init = ParserInit { app: &app, transport: Transport::Udp, first_tx_id: 0, options: 0, settings: &[], expected: None, client: None };
//! let mut p = (PROTO.new_parser)(&init);
//! for (dir, datagram) in (PROTO.sample)() {
//!     p.parse(dir, &datagram);
//! }
//! let hello = p.tx(0).unwrap().eve();
//! assert_eq!((hello["version"].as_str(), hello["sni"].as_str()), (Some("1"), Some("quic.example")));
//! assert!(hello["ja4"].as_str().unwrap().starts_with("q13d"));
//! ```

pub mod frames;
pub mod gquic;
pub mod header;
pub mod keys;

use std::any::Any;

use serde_json::{json, Map, Value};
use vigil_types::Direction;

use super::tls::handshake::{self, ClientHello, ServerHello};
use super::tls::ja3::{self, is_grease, Ja3};
use super::tls::ja4::{self, Transport as Ja4Transport};
use super::tls::Buffer as TlsBuffer;
use crate::parser::{AppEvent, ParseResult};
use crate::progress::Progress;
use crate::proto::{BufferDef, Detection, ParserInit, ProbeCx, Probe, ProtoDef, ProtoParser, ProtoTx, SettingDef, Sides, TxQueue};
use frames::{Added, CryptoStream};
use header::{Header, PacketType};
use keys::Keys;

/// Suricata's QUIC events.
pub const EVENTS: &[&str] = &["failed_decrypt", "error_on_data", "error_on_header", "crypto_frag_too_long"];
const FAILED_DECRYPT: usize = 0;
const ERROR_ON_DATA: usize = 1;
const ERROR_ON_HEADER: usize = 2;
const CRYPTO_FRAG_TOO_LONG: usize = 3;

/// An extension of a hello, with the values EVE lists for the few it
/// decodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extension {
    pub kind: u16,
    pub values: Vec<String>,
}

/// One packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuicTx {
    id: u64,
    dir: Direction,
    pub version: u32,
    version_bytes: [u8; 4],
    pub sni: Option<Vec<u8>>,
    pub ua: Option<Vec<u8>>,
    /// CYU (string, hash).
    pub cyu: Option<(String, String)>,
    pub ja3: Option<Ja3>,
    pub ja4: Option<String>,
    pub ja3s: Option<Ja3>,
    pub extensions: Vec<Extension>,
    events: u64,
}

/// The IANA names of TLS extensions EVE writes by name.
fn extension_name(kind: u16) -> Option<&'static str> {
    const NAMES: [&str; 60] = [
        "server_name",
        "max_fragment_length",
        "client_certificate_url",
        "trusted_ca_keys",
        "truncated_hmac",
        "status_request",
        "user_mapping",
        "client_authz",
        "server_authz",
        "cert_type",
        "supported_groups",
        "ec_point_formats",
        "srp",
        "signature_algorithms",
        "use_srtp",
        "heartbeat",
        "alpn",
        "status_request_v2",
        "signed_certificate_timestamp",
        "client_certificate_type",
        "server_certificate_type",
        "padding",
        "encrypt_then_mac",
        "extended_master_secret",
        "token_binding",
        "cached_info",
        "tls_lts",
        "compress_certificate",
        "record_size_limit",
        "pwd_protect",
        "pwd_clear",
        "password_salt",
        "ticket_pinning",
        "tls_cert_with_extern_psk",
        "delegated_credentials",
        "session_ticket",
        "tlmsp",
        "tlmsp_proxying",
        "tlmsp_delegate",
        "supported_ekt_ciphers",
        "",
        "pre_shared_key",
        "early_data",
        "supported_versions",
        "cookie",
        "psk_key_exchange_modes",
        "",
        "certificate_authorities",
        "oid_filters",
        "post_handshake_auth",
        "signature_algorithms_cert",
        "key_share",
        "transparency_info",
        "",
        "connection_id",
        "external_id_hash",
        "external_session_id",
        "quic_transport_parameters",
        "ticket_request",
        "dnssec_chain",
    ];
    match kind {
        65281 => Some("renegotiation_info"),
        k => NAMES.get(usize::from(k)).copied().filter(|n| !n.is_empty()),
    }
}

fn version_text(v: u16) -> String {
    format!("{:?}", tls_parser::TlsVersion(v))
}

fn client_extensions(ch: &ClientHello) -> Vec<Extension> {
    ch.extensions
        .iter()
        .filter(|e| !is_grease(**e))
        .map(|&kind| {
            let values = match kind {
                handshake::EXT_SNI => ch.sni.iter().map(|s| String::from_utf8_lossy(s).into_owned()).collect(),
                handshake::EXT_ALPN => ch.alpn.iter().map(|a| String::from_utf8_lossy(a).into_owned()).collect(),
                handshake::EXT_SIGNATURE_ALGORITHMS => ch.sig_algs.iter().map(u16::to_string).collect(),
                handshake::EXT_SUPPORTED_VERSIONS => {
                    ch.supported_versions.iter().filter(|v| !is_grease(**v)).map(|v| version_text(*v)).collect()
                }
                _ => Vec::new(),
            };
            Extension { kind, values }
        })
        .collect()
}

fn server_extensions(sh: &ServerHello) -> Vec<Extension> {
    sh.extensions
        .iter()
        .filter(|e| !is_grease(**e))
        .map(|&kind| {
            let values = match (kind, sh.selected_version, &sh.alpn) {
                (handshake::EXT_SUPPORTED_VERSIONS, Some(v), _) => vec![version_text(v)],
                (handshake::EXT_ALPN, _, Some(a)) => vec![String::from_utf8_lossy(a).into_owned()],
                _ => Vec::new(),
            };
            Extension { kind, values }
        })
        .collect()
}

impl QuicTx {
    fn new(id: u64, dir: Direction, version: u32) -> QuicTx {
        QuicTx {
            id,
            dir,
            version,
            version_bytes: version.to_be_bytes(),
            sni: None,
            ua: None,
            cyu: None,
            ja3: None,
            ja4: None,
            ja3s: None,
            extensions: Vec::new(),
            events: 0,
        }
    }

    fn record(&self) -> Value {
        let text = |b: &[u8]| Value::from(String::from_utf8_lossy(b).into_owned());
        let ja = |j: &Ja3| json!({"hash": j.hash, "string": j.string});
        let mut o = Map::new();
        o.insert("version".into(), header::version_name(self.version).into());
        if let Some(s) = &self.sni {
            o.insert("sni".into(), text(s));
        }
        if let Some(u) = &self.ua {
            o.insert("ua".into(), text(u));
        }
        if let Some((string, hash)) = &self.cyu {
            o.insert("cyu".into(), json!([{"hash": hash, "string": string}]));
        }
        if let Some(j) = &self.ja3 {
            o.insert("ja3".into(), ja(j));
        }
        if let Some(j) = &self.ja4 {
            o.insert("ja4".into(), j.clone().into());
        }
        if let Some(j) = &self.ja3s {
            o.insert("ja3s".into(), ja(j));
        }
        if !self.extensions.is_empty() {
            let list = self
                .extensions
                .iter()
                .map(|e| {
                    let mut x = Map::new();
                    if let Some(n) = extension_name(e.kind) {
                        x.insert("name".into(), n.into());
                    }
                    x.insert("type".into(), e.kind.into());
                    if !e.values.is_empty() {
                        x.insert("values".into(), e.values.clone().into());
                    }
                    Value::Object(x)
                })
                .collect();
            o.insert("extensions".into(), Value::Array(list));
        }
        Value::Object(o)
    }
}

/// The buffers, numbered for [`ProtoTx::buffer`] (TLS's own numbers for
/// the fingerprints this borrows).
const VERSION: u8 = 0;
const SNI: u8 = 1;
const UA: u8 = 2;
const CYU_HASH: u8 = 3;
const CYU_STRING: u8 = 4;

impl ProtoTx for QuicTx {
    fn id(&self) -> u64 {
        self.id
    }

    fn progress(&self, _dir: Direction) -> Progress {
        Progress::Complete
    }

    /// A packet's values are inspected on its own side.
    fn buffer(&self, dir: Direction, id: u8, index: usize) -> Option<&[u8]> {
        if dir != self.dir || index > 0 {
            return None;
        }
        match id {
            VERSION => Some(&self.version_bytes),
            SNI => self.sni.as_deref(),
            UA => self.ua.as_deref(),
            CYU_HASH => self.cyu.as_ref().map(|c| c.1.as_bytes()),
            CYU_STRING => self.cyu.as_ref().map(|c| c.0.as_bytes()),
            x if x == TlsBuffer::Ja3Hash as u8 => self.ja3.as_ref().map(|j| j.hash.as_bytes()),
            x if x == TlsBuffer::Ja3String as u8 => self.ja3.as_ref().map(|j| j.string.as_bytes()),
            x if x == TlsBuffer::Ja3sHash as u8 => self.ja3s.as_ref().map(|j| j.hash.as_bytes()),
            x if x == TlsBuffer::Ja3sString as u8 => self.ja3s.as_ref().map(|j| j.string.as_bytes()),
            x if x == TlsBuffer::Ja4Hash as u8 => self.ja4.as_ref().map(|j| j.as_bytes()),
            _ => None,
        }
    }

    fn eve(&self) -> Value {
        self.record()
    }

    fn record_dir(&self) -> Direction {
        self.dir
    }

    fn events(&self) -> u64 {
        self.events
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// What one side has said.
#[derive(Debug, Default)]
struct Side {
    crypto: CryptoStream,
    /// Its hello was read, or it sent a short header: nothing more is read.
    done: bool,
    largest_pn: Option<u64>,
}

#[derive(Debug)]
pub struct QuicParser {
    txs: TxQueue<QuicTx>,
    keys: Option<Keys>,
    /// A Retry was seen: the client's next Initial to a new connection id
    /// starts its side over.
    retried: bool,
    sides: [Side; 2],
    crypto_limit: usize,
    events: Vec<AppEvent>,
}

const EVENT_NAMES: [&str; 4] =
    ["quic.failed_decrypt", "quic.error_on_data", "quic.error_on_header", "quic.crypto_frag_too_long"];

impl QuicParser {
    /// Reports the events a transaction got, now that it has its id.
    fn report(&mut self, tx_id: Option<u64>, bits: u64) {
        for (i, name) in EVENT_NAMES.iter().enumerate() {
            if bits & (1 << i) != 0 {
                self.events.push(AppEvent { name, tx_id });
            }
        }
    }

    /// Opens an IETF Initial packet and feeds its CRYPTO frames to the side's stream.
    fn initial(&mut self, dir: Direction, data: &[u8], h: &Header, tx: &mut QuicTx) {
        let s = side(dir);
        // A client Initial that does not open leaves no keys behind: the next
        // one (the real one, after spoofed junk) derives them again.
        let fresh = if dir == Direction::ToServer && self.keys.is_none() { Keys::initial(h.version, h.dcid) } else { None };
        let Some(k) = fresh.as_ref().or(self.keys.as_ref()) else { return };
        let sk = if dir == Direction::ToServer { &k.client } else { &k.server };
        let Some((plain, pn)) = sk.open(data, h, self.sides[s].largest_pn) else {
            tx.events |= 1 << FAILED_DECRYPT;
            return;
        };
        if fresh.is_some() {
            self.keys = fresh;
        }
        let side = &mut self.sides[s];
        side.largest_pn = Some(side.largest_pn.map_or(pn, |l| l.max(pn)));
        let google = header::is_google(h.version);
        let f = frames::parse(&plain, google);
        let mut too_long = false;
        for (offset, piece) in &f.crypto {
            if google {
                // Q050 carries Google's CHLO, whole, in each Initial that sends one.
                if let Some(c) = gquic::chlo(piece) {
                    tx.sni = c.sni;
                    tx.ua = c.ua;
                }
                continue;
            }
            too_long |= side.crypto.add(*offset, piece, self.crypto_limit) == Added::TooLong;
        }
        if !google {
            self.hello(dir, tx);
        }
        if f.malformed {
            tx.events |= 1 << ERROR_ON_DATA;
        }
        if too_long {
            tx.events |= 1 << CRYPTO_FRAG_TOO_LONG;
        }
    }

    /// Reads the side's hello once its CRYPTO stream holds it whole.
    fn hello(&mut self, dir: Direction, tx: &mut QuicTx) {
        let side = &mut self.sides[side(dir)];
        let Some((ty, body)) = side.crypto.first_message() else { return };
        let mut ignored = Vec::new();
        match (dir, ty) {
            (Direction::ToServer, handshake::CLIENT_HELLO) => {
                if let Some(ch) = handshake::parse_client_hello(body, &mut ignored) {
                    tx.sni = ch.sni.clone();
                    tx.ja3 = Some(ja3::ja3(&ch));
                    tx.ja4 = Some(ja4::ja4(&ch, Ja4Transport::Quic));
                    tx.extensions = client_extensions(&ch);
                }
            }
            (Direction::ToClient, handshake::SERVER_HELLO) => {
                if let Some(sh) = handshake::parse_server_hello(body, &mut ignored) {
                    tx.ja3s = Some(ja3::ja3s(&sh));
                    tx.extensions = server_extensions(&sh);
                }
            }
            _ => {}
        }
        side.done = true;
    }

    /// A Google QUIC packet in the clear: its CHLO, if it starts the frames.
    fn google(h: &Header, data: &[u8], tx: &mut QuicTx) {
        // Q044-Q046 long headers: only the Initial type (bits 00) is clear.
        if h.first & 0x80 != 0 && (h.first >> 4) & 3 != 0 {
            return;
        }
        let pn_len = if h.first & 0x80 != 0 { usize::from(h.first & 3) + 1 } else { 0 };
        // A 12-byte message hash precedes the frames.
        let Some(frames) = data.get(h.pn_offset + pn_len + 12..h.end) else { return };
        for piece in gquic::stream_data(frames) {
            if let Some(c) = gquic::chlo(piece) {
                tx.sni = c.sni.clone();
                tx.ua = c.ua.clone();
                // Suricata writes CYU for the hellos of Q043 on.
                if h.version >= 0x5130_3433 {
                    tx.cyu = Some(gquic::cyu(h.version, &c));
                }
                break;
            }
        }
    }
}

fn side(dir: Direction) -> usize {
    usize::from(dir == Direction::ToClient)
}

impl ProtoParser for QuicParser {
    fn parse(&mut self, dir: Direction, data: &[u8]) -> ParseResult {
        let mut at = 0;
        while at < data.len() {
            let Some(h) = header::parse(data, at) else {
                if !self.sides[side(dir)].done {
                    self.report(None, 1 << ERROR_ON_HEADER);
                }
                break;
            };
            // A short header first in a datagram ends its side; one after
            // coalesced long headers may be zero padding, and ends the datagram only.
            if h.ty == PacketType::Short {
                if at == 0 {
                    self.sides[side(dir)].done = true;
                }
                break;
            }
            at = h.end;
            let restart = dir == Direction::ToServer
                && h.ty == PacketType::Initial
                && self.retried
                && self.keys.as_ref().is_some_and(|k| k.dcid != h.dcid);
            if restart {
                self.keys = None;
                self.sides[0] = Side::default();
                self.retried = false;
            } else if self.sides[side(dir)].done {
                break;
            }
            let mut tx = QuicTx::new(0, dir, h.version);
            match h.ty {
                PacketType::Initial => self.initial(dir, data, &h, &mut tx),
                PacketType::Google => Self::google(&h, data, &mut tx),
                PacketType::Retry if dir == Direction::ToClient => self.retried = true,
                _ => {}
            }
            let bits = tx.events;
            self.txs.push_with(|id| QuicTx { id, ..tx });
            if bits != 0 {
                let id = self.txs.back_mut().map(|t| t.id);
                self.report(id, bits);
            }
        }
        ParseResult::Done
    }

    crate::proto::datagram_txs!(txs);

    fn drain_events(&mut self, out: &mut Vec<AppEvent>) {
        out.append(&mut self.events);
    }
}

pub const SETTINGS: &[SettingDef] =
    &[SettingDef { key: "max-tx", default: 256, size: false }, SettingDef { key: "crypto-memcap", default: 64 * 1024, size: true }];

fn new_parser(init: &ParserInit) -> Box<dyn ProtoParser> {
    let max_tx = init.setting(&PROTO, 0).clamp(1, 1 << 16) as usize;
    let crypto_limit = init.setting(&PROTO, 1).clamp(1024, 1 << 24) as usize;
    Box::new(QuicParser {
        txs: TxQueue::new(init.first_tx_id, max_tx),
        keys: None,
        retried: false,
        sides: [Side::default(), Side::default()],
        crypto_limit,
        events: Vec::new(),
    })
}

/// A header this reads: a long one, Google's public header with a
/// version, or a short one long enough for a connection id (a flow picked
/// up after its handshake is QUIC too, as Suricata names it).
fn probe(_dir: Direction, data: &[u8], _cx: ProbeCx) -> Probe {
    match header::parse(data, 0) {
        Some(h) if h.ty != PacketType::Short || data.len() > SHORT_PROBE_MIN => Probe::Match,
        _ => Probe::NoMatch,
    }
}

/// The bytes a short header must be followed by to count as QUIC: a
/// 16-byte connection id and something after it.
const SHORT_PROBE_MIN: usize = 17;

/// A version 1 client Initial with a ClientHello, and the server's Initial
/// with its ServerHello.
fn sample() -> Vec<(Direction, Vec<u8>)> {
    use super::tls::sample::{alpn, client_hello, hs, server_hello, sni, u16s};
    let dcid = [0x83, 0x94, 0xc8, 0xf0, 0x3e, 0x51, 0x57, 0x08];
    let keys = Keys::initial(1, &dcid).expect("version 1 has a salt");
    let versions = [vec![2], u16s(&[0x0304])].concat();
    let ch = hs(
        1,
        &client_hello(
            &[0x1301, 0x1302],
            &[(0, sni("quic.example")), (16, alpn(&["h3"])), (13, u16s(&[4, 0x0403, 0x0804])), (43, versions)],
        ),
    );
    let sh = hs(2, &server_hello(0x0303, &[7; 32], &[], 0x1301, &[(43, u16s(&[0x0304]))]));
    let packet = |client: bool, msg: &[u8]| {
        let mut frames = vec![0x06, 0x00];
        frames.extend_from_slice(&(0x4000u16 | msg.len() as u16).to_be_bytes());
        frames.extend_from_slice(msg);
        frames.resize(frames.len().max(64), 0);
        let (d, s): (&[u8], &[u8]) = if client { (&dcid, &[1, 2, 3, 4]) } else { (&[1, 2, 3, 4], &[5, 6, 7, 8]) };
        let mut head = vec![0xc0, 0, 0, 0, 1, d.len() as u8];
        head.extend_from_slice(d);
        head.push(s.len() as u8);
        head.extend_from_slice(s);
        head.push(0); // no token
        let len = 1 + frames.len() + 16;
        head.extend_from_slice(&(0x4000u16 | len as u16).to_be_bytes());
        head.push(0); // packet number 0
        let k = if client { &keys.client } else { &keys.server };
        k.seal(&head, 0, &frames)
    };
    vec![(Direction::ToServer, packet(true, &ch)), (Direction::ToClient, packet(false, &sh))]
}

const fn buffer(name: &'static str, id: u8) -> BufferDef {
    BufferDef { name, id, sides: Sides::Both, default: Direction::ToServer, both_ways: true, need: Progress::Complete, multi: false }
}

pub static PROTO: ProtoDef = ProtoDef {
    name: "quic",
    eve_name: None,
    detection: Detection { tcp: false, udp: true, ports: &[80, 443], ports_only: true, probe, counters_by_transport: false, answers_first: None },
    new_parser,
    buffers: &[
        buffer("quic.version", VERSION),
        buffer("quic.sni", SNI),
        buffer("quic.ua", UA),
        buffer("quic.cyu.hash", CYU_HASH),
        buffer("quic.cyu.string", CYU_STRING),
    ],
    checks: &[],
    events: EVENTS,
    event: crate::proto::no_other_events,
    options: &[],
    settings: SETTINGS,
    sample,
    sample_expected: None,
    files: false,
    transactions: true,
    aliases: &[],
    includes: &[],
    borrows: &["ja3.hash", "ja3.string", "ja3s.hash", "ja3s.string", "ja4.hash"],
    base_need: crate::proto::HEADERS_BOTH,
    hooks: crate::proto::Hooks::GENERIC,
    off_by_default: false,
    stream_depth: None,
    frames: &[],
};

#[cfg(test)]
mod tests;
