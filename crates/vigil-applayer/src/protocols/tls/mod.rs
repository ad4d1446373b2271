//! TLS (and SSLv2/SSLv3) handshake inspection up to the point where the traffic is encrypted.
//!
//! What this module owns: the one [`TlsTx`] of a TLS flow (as Suricata keeps one), filled from
//! the plaintext handshake: ClientHello (version, SNI, ALPN, ciphers, extensions, groups, point
//! formats → JA3), ServerHello (version incl. TLS 1.3 supported_versions, cipher, extensions →
//! JA3S) and the Certificate messages (DER chain; leaf decoded with x509-parser); the `tls.*`
//! inspection buffers; the EVE `tls` object ([`TlsEve`]); Suricata's TLS anomaly events; and
//! [`probe`] for port-independent detection.
//!
//! How data flows: [`TlsParser::parse`] gets each direction's bytes in any chunking.
//! [`record::next_record`] frames records; a partial record is left to the caller with
//! [`ParseResult::Incomplete`]. Handshake records feed a per-direction reassembly buffer,
//! since a handshake message may span records; whole messages go to [`handshake`] and
//! [`cert`]. A handshake message longer than the limit (default [`DEFAULT_MAX_HANDSHAKE`]) is
//! `tls.handshake_invalid_length` and the direction is given up. Once a direction sends
//! ChangeCipherSpec or application data, or the ServerHello picks TLS 1.3 (after which both
//! handshakes are encrypted), that direction is no longer read: `parse` returns `Done` at once.
//! [`TlsParser::encrypted`] says when both are.
//!
//! ```
//! use vigil_applayer::tls::{probe, TlsParser, TlsProbe};
//! use vigil_applayer::ParseResult;
//! use vigil_types::Direction;
//!
//! // A ClientHello in a handshake record: TLS 1.2, no session id, one cipher, no extensions.
//! let mut hello = vec![0x16, 0x03, 0x01, 0x00, 0x2d, 0x01, 0x00, 0x00, 0x29, 0x03, 0x03];
//! hello.extend([0u8; 32]); // random
//! hello.extend([0x00, 0x00, 0x02, 0x00, 0x2f, 0x01, 0x00]);
//! assert_eq!(probe(&hello), TlsProbe::Tls);
//! let mut tls = TlsParser::new();
//! assert_eq!(tls.parse(Direction::ToServer, &hello), ParseResult::Done);
//! let tx = &tls.txs()[0];
//! assert!(tx.complete(Direction::ToServer));
//! assert_eq!(tx.ja3().unwrap().string, "771,47,,,");
//! ```

/// The names of a `tls` output's `custom` list that are no field Suricata
/// knows (they write nothing; the caller warns, as Suricata does).
pub fn unknown_custom_fields<'a>(names: &[&'a str]) -> Vec<&'a str> {
    eve::TlsEveOptions::from_config(false, Some(names), true).1
}

pub mod cert;
mod checks;
mod eve;
pub mod handshake;
pub mod ja3;
pub mod ja4;
mod proto;
pub mod record;
pub(crate) mod sample;
mod tx;

#[cfg(test)]
pub(crate) mod tests;

use std::borrow::Cow;

pub use cert::CertInfo;
pub use eve::{base64, EveCert, EveClientHandshake, EveJa3, EveServerHandshake, TlsEve, TlsEveOptions};
pub use handshake::{ClientHello, ServerHello};
pub use ja3::Ja3;
pub use proto::{Buffer, PROTO};
pub use tx::{CertChain, TlsTx};

use vigil_types::{Direction, PerDir};

use crate::parser::{AppEvent, ParseResult};
use record::{Frame, Record};

pub const EVENT_INVALID_SSLV2_HEADER: &str = "tls.invalid_sslv2_header";
pub const EVENT_INVALID_TLS_HEADER: &str = "tls.invalid_tls_header";
pub const EVENT_INVALID_RECORD_VERSION: &str = "tls.invalid_record_version";
pub const EVENT_INVALID_RECORD_TYPE: &str = "tls.invalid_record_type";
/// A record longer than [`record::MAX_RECORD_LEN`].
pub const EVENT_INVALID_RECORD_LENGTH: &str = "tls.invalid_record_length";
pub const EVENT_INVALID_HANDSHAKE_MESSAGE: &str = "tls.invalid_handshake_message";
/// A handshake message or extension block whose length does not fit (or exceeds the limit).
pub const EVENT_HANDSHAKE_INVALID_LENGTH: &str = "tls.handshake_invalid_length";
/// A Certificate message whose lengths do not add up.
pub const EVENT_CERTIFICATE_INVALID_LENGTH: &str = "tls.certificate_invalid_length";
/// A leaf certificate x509-parser rejects.
pub const EVENT_INVALID_CERTIFICATE: &str = "tls.invalid_certificate";
pub const EVENT_MULTIPLE_SNI_EXTENSIONS: &str = "tls.multiple_sni_extensions";
pub const EVENT_INVALID_SNI_TYPE: &str = "tls.invalid_sni_type";
pub const EVENT_INVALID_SNI_LENGTH: &str = "tls.invalid_sni_length";
pub const EVENT_HEARTBEAT: &str = "tls.heartbeat_message";
/// A heartbeat claiming more payload than its record holds (Heartbleed).
pub const EVENT_OVERFLOW_HEARTBEAT: &str = "tls.overflow_heartbeat_message";
/// An SSLv2 ERROR message.
pub const EVENT_ERROR_MESSAGE: &str = "tls.error_message_encountered";

/// Default bound on one handshake message (and so on the reassembly buffer): room for long
/// certificate chains, far below the 16 MiB the length field allows.
pub const DEFAULT_MAX_HANDSHAKE: usize = 128 * 1024;

/// What [`probe`] thinks of the first bytes of a flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsProbe {
    NotTls,
    Tls,
    NeedMore,
}

/// Does this start of a stream look like TLS: a handshake record `16 03 0x` carrying a
/// ClientHello or ServerHello, or an SSLv2 CLIENT-HELLO / SERVER-HELLO?
pub fn probe(data: &[u8]) -> TlsProbe {
    match data {
        [] => TlsProbe::NeedMore,
        [0x16, rest @ ..] => match rest {
            [] | [3] | [3, 0..=4] | [3, 0..=4, _] | [3, 0..=4, _, _] => TlsProbe::NeedMore,
            [3, 0..=4, _, _, 1 | 2, ..] => TlsProbe::Tls,
            _ => TlsProbe::NotTls,
        },
        // An alert record, what a server refusing the hello answers: two
        // bytes, a level (warning or fatal) and a description.
        [0x15, rest @ ..] => match rest {
            [] | [3] | [3, 0..=4] | [3, 0..=4, 0] | [3, 0..=4, 0, 2] => TlsProbe::NeedMore,
            [3, 0..=4, 0, 2, 1 | 2, ..] => TlsProbe::Tls,
            _ => TlsProbe::NotTls,
        },
        [b0, rest @ ..] if b0 & 0x80 != 0 => match rest {
            [] | [_] | [_, _] | [_, _, _] => TlsProbe::NeedMore,
            // Length, CLIENT-HELLO with version 0.2 or 3.x.
            [_, 1, 0 | 3, _, ..] => TlsProbe::Tls,
            // Length, SERVER-HELLO, session id hit, certificate type, then
            // version 0.2: a type byte of 4 alone is too common to say SSLv2.
            [_, 4, 0 | 1, _] | [_, 4, 0 | 1, _, 0] => TlsProbe::NeedMore,
            [_, 4, 0 | 1, _, 0, 2, ..] => TlsProbe::Tls,
            _ => TlsProbe::NotTls,
        },
        _ => TlsProbe::NotTls,
    }
}

/// Suricata's name for a protocol version, as EVE logs `tls.version`.
pub fn version_name(v: u16) -> Cow<'static, str> {
    let name = match v {
        0 => "UNDETERMINED",
        0x0002 => "SSLv2",
        0x0300 => "SSLv3",
        0x0301 => "TLSv1",
        0x0302 => "TLS 1.1",
        0x0303 => "TLS 1.2",
        0x0304 => "TLS 1.3",
        0x7f01..=0x7f0f => "TLS 1.3 draft-<16",
        0x7f10..=0x7f1c => return Cow::Owned(format!("TLS 1.3 draft-{}", v & 0xff)),
        0xfb14..=0xfb17 | 0xfb1a => return Cow::Owned(format!("TLS 1.3 draft-{}-fb", v & 0xff)),
        // Suricata writes other versions as decimal numbers.
        _ => return Cow::Owned(v.to_string()),
    };
    Cow::Borrowed(name)
}

#[derive(Debug, Clone, Default)]
struct DirState {
    /// A handshake message still arriving across records.
    hs: Vec<u8>,
    /// ChangeCipherSpec, application data or TLS 1.3 seen: nothing more is readable.
    encrypted: bool,
    /// Framing lost to a capture gap: the rest of this direction is ignored.
    lost: bool,
    /// Not TLS: `parse` answers `Error`.
    failed: bool,
}

/// TLS parser for one flow.
#[derive(Debug, Clone)]
pub struct TlsParser {
    tx: TlsTx,
    pruned: bool,
    dirs: PerDir<DirState>,
    events: Vec<AppEvent>,
    max_handshake: usize,
    /// The server asked for a client certificate that has not come yet: the client's side is
    /// not complete before it (or the client's encryption), so records and client-certificate
    /// rules see it.
    client_cert_pending: bool,
    /// Whether JA3/JA3S and JA4 are computed (both unless told otherwise).
    ja3: bool,
    ja4: bool,
    /// Records marked as frames; with it on, records are framed on after
    /// encryption too.
    pub(crate) frames: crate::frames::FrameLog,
}

impl Default for TlsParser {
    fn default() -> Self {
        Self::new()
    }
}

impl TlsParser {
    pub fn new() -> Self {
        Self::with_max_handshake(DEFAULT_MAX_HANDSHAKE)
    }

    /// Sets the longest handshake message accepted (certificate chains are the long ones).
    pub fn with_max_handshake(max: usize) -> Self {
        TlsParser {
            tx: TlsTx::default(),
            pruned: false,
            dirs: PerDir::default(),
            events: Vec::new(),
            max_handshake: max,
            client_cert_pending: false,
            ja3: true,
            ja4: true,
            frames: crate::frames::FrameLog::default(),
        }
    }

    /// Which fingerprints are computed (and so logged and inspected).
    pub(crate) fn with_fingerprints(mut self, ja3: bool, ja4: bool) -> Self {
        self.ja3 = ja3;
        self.ja4 = ja4;
        self
    }

    /// Gives the one transaction the id `id` instead of 0. A parser that takes over a flow from
    /// another (inside an HTTP tunnel) continues its ids, keeping them unique within the flow.
    pub(crate) fn with_first_tx_id(mut self, id: u64) -> Self {
        self.tx.id = id;
        self
    }

    /// The id a transaction after this parser's one would get.
    pub(crate) fn next_tx_id(&self) -> u64 {
        self.tx.id.saturating_add(1)
    }

    /// Both directions are encrypted: nothing further will be inspected.
    pub fn encrypted(&self) -> bool {
        self.dirs.to_server.encrypted && self.dirs.to_client.encrypted
    }

    /// The flow's transaction, also after it was pruned.
    pub fn tx(&self) -> &TlsTx {
        &self.tx
    }

    fn event(&mut self, name: &'static str) {
        self.events.push(AppEvent { name, tx_id: Some(self.tx.id) });
    }

    /// Stops reading `dir`: from here on it is ciphertext.
    fn encrypt(&mut self, dir: Direction) {
        let st = self.dirs.get_mut(dir);
        st.encrypted = true;
        st.hs = Vec::new();
        *self.tx.done.get_mut(dir) = true;
        // Its handshake is done; it finishes when the side ends.
        self.tx.reach(dir, if dir == Direction::ToServer { 3 } else { 4 });
    }

    fn fail(&mut self, dir: Direction, event: &'static str) {
        self.event(event);
        let st = self.dirs.get_mut(dir);
        st.failed = true;
        st.hs = Vec::new();
        *self.tx.done.get_mut(dir) = true;
        self.tx.reach(dir, u8::MAX);
    }

    fn record(&mut self, dir: Direction, rec: Record<'_>) -> Result<(), &'static str> {
        *self.tx.updates.get_mut(dir) += 1;
        let (content_type, body) = match rec {
            Record::Ssl2 { body } => {
                self.sslv2(dir, body);
                return Ok(());
            }
            Record::Tls { content_type, body, .. } => (content_type, body),
        };
        match content_type {
            record::CHANGE_CIPHER_SPEC => {
                // A server that goes straight from its hello to ChangeCipherSpec resumed a session.
                if dir == Direction::ToClient && self.tx.server_hello.is_some() && self.tx.server_certs.certs.is_empty()
                {
                    self.tx.session_resumed = true;
                }
                self.encrypt(dir);
            }
            record::APPLICATION_DATA => self.encrypt(dir),
            record::HANDSHAKE => self.handshake_data(dir, body)?,
            record::HEARTBEAT => {
                self.event(EVENT_HEARTBEAT);
                // type(1) payload_length(2) payload padding(>= 16)
                if let [_, hi, lo, ..] = body {
                    if usize::from(u16::from_be_bytes([*hi, *lo])) + 3 + 16 > body.len() {
                        self.event(EVENT_OVERFLOW_HEARTBEAT);
                    }
                }
            }
            _ => {} // alerts
        }
        Ok(())
    }

    /// Adds a handshake record's bytes to the direction's stream of handshake messages.
    fn handshake_data(&mut self, dir: Direction, body: &[u8]) -> Result<(), &'static str> {
        let mut buf = std::mem::take(&mut self.dirs.get_mut(dir).hs);
        if buf.is_empty() {
            // The common case, whole messages in one record: no copy.
            let used = self.handshake_messages(dir, body)?;
            buf.extend_from_slice(&body[used..]);
        } else {
            buf.extend_from_slice(body);
            let used = self.handshake_messages(dir, &buf)?;
            buf.drain(..used);
        }
        let st = self.dirs.get_mut(dir);
        if !st.encrypted {
            st.hs = buf;
        }
        Ok(())
    }

    /// Handles the whole messages at the start of `data`; returns the bytes they took.
    fn handshake_messages(&mut self, dir: Direction, data: &[u8]) -> Result<usize, &'static str> {
        let mut used = 0;
        while let [ty, a, b, c, rest @ ..] = &data[used..] {
            let len = usize::from(*a) << 16 | usize::from(*b) << 8 | usize::from(*c);
            if len > self.max_handshake {
                return Err(EVENT_HANDSHAKE_INVALID_LENGTH);
            }
            let Some(body) = rest.get(..len) else { break };
            self.handshake_message(dir, *ty, body)?;
            used += 4 + len;
            if self.dirs.get(dir).encrypted {
                return Ok(data.len());
            }
        }
        Ok(used)
    }

    fn handshake_message(&mut self, dir: Direction, ty: u8, body: &[u8]) -> Result<(), &'static str> {
        let mut events = Vec::new();
        match (ty, dir) {
            (handshake::CLIENT_HELLO, Direction::ToServer) => {
                // A second hello (after a HelloRetryRequest) keeps the first one's fingerprint.
                if self.tx.client_hello.is_none() {
                    match handshake::parse_client_hello(body, &mut events) {
                        Some(ch) => {
                            if self.ja3 {
                                self.tx.ja3 = Some(ja3::ja3(&ch));
                            }
                            if self.ja4 {
                                self.tx.ja4 = Some(ja4::ja4(&ch, ja4::Transport::Tcp));
                            }
                            self.tx.client_hello = Some(ch);
                        }
                        None => events.push(EVENT_INVALID_HANDSHAKE_MESSAGE),
                    }
                }
                self.tx.done.to_server = !self.client_cert_pending;
                self.tx.reach(dir, 1);
            }
            (handshake::SERVER_HELLO, Direction::ToClient) => match handshake::parse_server_hello(body, &mut events) {
                Some(sh) => {
                    let tls13 = sh.is_tls13() && !sh.is_retry_request();
                    if self.tx.server_hello.is_none() || tls13 {
                        if self.ja3 {
                            self.tx.ja3s = Some(ja3::ja3s(&sh));
                        }
                        self.tx.server_hello = Some(sh);
                    }
                    self.tx.reach(dir, 1);
                    if tls13 {
                        self.encrypt(Direction::ToServer);
                        self.encrypt(Direction::ToClient);
                    }
                }
                None => events.push(EVENT_INVALID_HANDSHAKE_MESSAGE),
            },
            (handshake::CERTIFICATE, _) => {
                match handshake::parse_certificate_chain(body) {
                    Some(certs) => self.store_chain(dir, certs, &mut events),
                    None => events.push(EVENT_CERTIFICATE_INVALID_LENGTH),
                }
                match dir {
                    Direction::ToClient => self.tx.done.to_client = true,
                    Direction::ToServer => {
                        self.client_cert_pending = false;
                        self.tx.done.to_server = true;
                    }
                }
                self.tx.reach(dir, 2);
            }
            (handshake::CERTIFICATE_REQUEST, Direction::ToClient) => {
                // The client's side, complete since its hello, now waits for its certificate;
                // a side already encrypted or given up has nothing more to send.
                let client = self.dirs.get(Direction::ToServer);
                if !(client.encrypted || client.failed || client.lost) && self.tx.client_certs.certs.is_empty() {
                    self.client_cert_pending = true;
                    self.tx.done.to_server = false;
                }
            }
            (handshake::SERVER_HELLO_DONE, Direction::ToClient) => {
                self.tx.done.to_client = true;
                self.tx.reach(dir, 3);
            }
            // The client's key exchange ends its handshake messages.
            (handshake::CLIENT_KEY_EXCHANGE, Direction::ToServer) => self.tx.reach(dir, 3),
            (t, _) if handshake::known_handshake_type(t) => {}
            _ => return Err(EVENT_INVALID_HANDSHAKE_MESSAGE),
        }
        for e in events {
            self.event(e);
        }
        Ok(())
    }

    fn store_chain(&mut self, dir: Direction, certs: Vec<Vec<u8>>, events: &mut Vec<&'static str>) {
        let chain = match dir {
            Direction::ToClient => &mut self.tx.server_certs,
            Direction::ToServer => &mut self.tx.client_certs,
        };
        if !chain.certs.is_empty() {
            return;
        }
        if let Some(leaf) = certs.first() {
            chain.leaf = CertInfo::parse(leaf);
            if chain.leaf.is_none() {
                events.push(EVENT_INVALID_CERTIFICATE);
            }
        }
        chain.certs = certs;
    }

    /// An SSLv2 record. Only the hellos are plaintext; after the SERVER-HELLO the rest of an
    /// SSLv2 session is encrypted.
    fn sslv2(&mut self, dir: Direction, body: &[u8]) {
        match (body.first().copied(), dir) {
            (Some(handshake::SSL2_CLIENT_HELLO), Direction::ToServer) => {
                if self.tx.client_hello.is_none() {
                    match handshake::parse_sslv2_client_hello(body) {
                        Some(ch) => {
                            if self.ja4 {
                                self.tx.ja4 = Some(ja4::ja4(&ch, ja4::Transport::Tcp));
                            }
                            self.tx.client_hello = Some(ch);
                        }
                        None => self.event(EVENT_INVALID_HANDSHAKE_MESSAGE),
                    }
                }
                self.tx.done.to_server = true;
                self.tx.reach(dir, 1);
            }
            (Some(handshake::SSL2_SERVER_HELLO), Direction::ToClient) => {
                match handshake::parse_sslv2_server_hello(body) {
                    Some((version, cert)) => {
                        self.tx.ssl2_server_version = Some(version);
                        let mut events = Vec::new();
                        self.store_chain(dir, cert.into_iter().collect(), &mut events);
                        for e in events {
                            self.event(e);
                        }
                    }
                    None => self.event(EVENT_INVALID_HANDSHAKE_MESSAGE),
                }
                self.encrypt(Direction::ToServer);
                self.encrypt(Direction::ToClient);
            }
            (Some(handshake::SSL2_ERROR), _) => self.event(EVENT_ERROR_MESSAGE),
            _ => {}
        }
    }
}

impl TlsParser {
    /// The next bytes of `dir`, in any chunking (the streaming contract of
    /// [`ProtoParser`](crate::proto::ProtoParser)).
    pub fn parse(&mut self, dir: Direction, data: &[u8]) -> ParseResult {
        let mut off = 0;
        loop {
            let st = self.dirs.get(dir);
            if st.failed {
                return ParseResult::Error;
            }
            if st.lost || off == data.len() || st.encrypted && !self.frames.is_on() {
                return ParseResult::Done;
            }
            // The server's record layer names the version until a
            // ServerHello does (an alert refusing the hello, or bytes that
            // are no TLS at all), as Suricata logs it.
            if let (Direction::ToClient, Some(v)) = (dir, data.get(off + 1..off + 3)) {
                self.tx.server_record_version = Some(u16::from_be_bytes([v[0], v[1]]));
            }
            match record::next_record(&data[off..]) {
                Frame::NeedMore(needed) => return ParseResult::Incomplete { consumed: off, needed },
                Frame::Bad(event) => self.fail(dir, event),
                Frame::Record(rec, len) => {
                    self.mark_frames(dir, off, len, &rec);
                    // Past encryption records are only framed.
                    if !self.dirs.get(dir).encrypted {
                        if let Err(event) = self.record(dir, rec) {
                            self.fail(dir, event);
                        }
                    }
                    off += len;
                }
            }
        }
    }

    /// A record of `len` bytes at `off` of the data: its frames (pdu,
    /// header, data; alert and heartbeat records once more as such).
    fn mark_frames(&mut self, dir: Direction, off: usize, len: usize, rec: &record::Record<'_>) {
        if !self.frames.is_on() {
            return;
        }
        let hdr = match rec {
            record::Record::Tls { .. } => 5,
            _ => 2,
        };
        self.frames.add(dir, off, Some(len as u64), 0, None);
        self.frames.add(dir, off, Some(hdr), 1, None);
        self.frames.add(dir, off + hdr as usize, Some(len as u64 - hdr), 2, None);
        if let record::Record::Tls { content_type, .. } = rec {
            let kind = match *content_type {
                record::ALERT => Some(3),
                record::HEARTBEAT => Some(4),
                _ => None,
            };
            if let Some(k) = kind {
                self.frames.add(dir, off + hdr as usize, Some(len as u64 - hdr), k, None);
            }
        }
    }

    /// Record framing is lost; unless the direction is already encrypted (and ignored anyway),
    /// its handshake is given up and counted complete so nothing waits for it.
    pub fn on_gap(&mut self, dir: Direction, _len: u64) {
        let st = self.dirs.get_mut(dir);
        st.lost = true;
        st.hs = Vec::new();
        *self.tx.done.get_mut(dir) = true;
        self.tx.reach(dir, u8::MAX);
    }

    pub fn txs(&self) -> &[TlsTx] {
        if self.pruned {
            &[]
        } else {
            std::slice::from_ref(&self.tx)
        }
    }

    pub fn prune(&mut self, id: u64) {
        self.pruned |= id > self.tx.id;
    }

    /// `dir` ended: its side of the handshake is finished.
    pub fn close_side(&mut self, dir: Direction) {
        self.tx.reach(dir, u8::MAX);
    }

    pub fn take_events(&mut self) -> Vec<AppEvent> {
        std::mem::take(&mut self.events)
    }
}
