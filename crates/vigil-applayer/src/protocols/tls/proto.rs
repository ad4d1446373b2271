//! TLS as a protocol of the table: its buffers, numbered by [`Buffer`],
//! its definition, and the protocol API over [`TlsParser`] and [`TlsTx`].

use serde_json::Value;
use vigil_types::{Direction, PerDir};

use super::{checks, probe, TlsParser, TlsProbe, TlsTx};
use crate::parser::{AppEvent, ParseResult};
use crate::progress::Progress;
use crate::proto::{BufferDef, Detection, ParserInit, ProbeCx, Probe, ProtoDef, ProtoOption, ProtoParser, ProtoTx, Sides};

/// The buffers, numbered for [`ProtoTx::buffer`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Buffer {
    /// `tls.sni`: the host name the client asked for.
    Sni = 0,
    /// `tls.cert_subject`: the leaf certificate's subject, as Suricata prints it.
    CertSubject = 1,
    /// `tls.cert_issuer`.
    CertIssuer = 2,
    /// `tls.cert_serial`: `XX:XX:...`, upper-case hex.
    CertSerial = 3,
    /// `tls.cert_fingerprint`: SHA-1 of the leaf's DER, `xx:xx:...`.
    CertFingerprint = 4,
    /// `tls.certs`: each certificate's DER.
    Certs = 5,
    /// `ja3.hash`: 32 lower-case hex characters.
    Ja3Hash = 6,
    /// `ja3.string`.
    Ja3String = 7,
    /// `ja3s.hash`.
    Ja3sHash = 8,
    /// `ja3s.string`.
    Ja3sString = 9,
    /// `tls.alpn`: each protocol the client offered (to-server), the
    /// server's choice (to-client).
    Alpn = 10,
    /// `tls.subjectaltname`: each DNS name or address of the leaf's subjectAltName.
    SubjectAltName = 11,
    /// `tls.random`: the 32-byte hello random of the side inspected.
    Random = 12,
    /// `tls.random_time`: its first 4 bytes.
    RandomTime = 13,
    /// `tls.random_bytes`: its last 28 bytes.
    RandomBytes = 14,
    /// `ja4.hash`: the JA4 fingerprint of the ClientHello.
    Ja4Hash = 15,
}

impl Buffer {
    const ALL: [Buffer; 16] = [
        Buffer::Sni,
        Buffer::CertSubject,
        Buffer::CertIssuer,
        Buffer::CertSerial,
        Buffer::CertFingerprint,
        Buffer::Certs,
        Buffer::Ja3Hash,
        Buffer::Ja3String,
        Buffer::Ja3sHash,
        Buffer::Ja3sString,
        Buffer::Alpn,
        Buffer::SubjectAltName,
        Buffer::Random,
        Buffer::RandomTime,
        Buffer::RandomBytes,
        Buffer::Ja4Hash,
    ];

    pub fn from_id(id: u8) -> Option<Buffer> {
        Buffer::ALL.get(usize::from(id)).copied().filter(|b| *b as u8 == id)
    }
}

/// A buffer of one side, final once that side's hello was seen.
const fn one(name: &'static str, id: Buffer, dir: Direction) -> BufferDef {
    let sides = match dir {
        Direction::ToServer => Sides::ToServer,
        Direction::ToClient => Sides::ToClient,
    };
    BufferDef { name, id: id as u8, sides, default: dir, both_ways: false, need: Progress::Headers, multi: false }
}

/// A buffer each side has its own of (certificates, ALPN, randoms): a rule
/// naming no direction inspects each side's, as Suricata 8 registers them
/// for both (a client's certificate matches `tls.cert_subject` too).
const fn each(name: &'static str, id: Buffer, default: Direction, need: Progress, multi: bool) -> BufferDef {
    BufferDef { name, id: id as u8, sides: Sides::Both, default, both_ways: true, need, multi }
}

use Direction::{ToClient, ToServer};
use Progress::{Complete, Headers};

const BUFFERS: &[BufferDef] = &[
    one("tls.sni", Buffer::Sni, ToServer),
    one("ja3.hash", Buffer::Ja3Hash, ToServer),
    one("ja3.string", Buffer::Ja3String, ToServer),
    one("ja3s.hash", Buffer::Ja3sHash, ToClient),
    one("ja3s.string", Buffer::Ja3sString, ToClient),
    one("ja4.hash", Buffer::Ja4Hash, ToServer),
    each("tls.cert_subject", Buffer::CertSubject, ToClient, Complete, false),
    each("tls.cert_issuer", Buffer::CertIssuer, ToClient, Complete, false),
    each("tls.cert_serial", Buffer::CertSerial, ToClient, Complete, false),
    each("tls.cert_fingerprint", Buffer::CertFingerprint, ToClient, Complete, false),
    each("tls.certs", Buffer::Certs, ToClient, Complete, true),
    each("tls.alpn", Buffer::Alpn, ToServer, Headers, true),
    each("tls.subjectaltname", Buffer::SubjectAltName, ToClient, Complete, true),
    each("tls.random", Buffer::Random, ToServer, Headers, false),
    each("tls.random_time", Buffer::RandomTime, ToServer, Headers, false),
    each("tls.random_bytes", Buffer::RandomBytes, ToServer, Headers, false),
];

fn probe_tls(_dir: Direction, data: &[u8], _cx: ProbeCx) -> Probe {
    match probe(data) {
        TlsProbe::Tls => Probe::Match,
        TlsProbe::NeedMore => Probe::NeedMore,
        TlsProbe::NotTls => Probe::NoMatch,
    }
}

/// `ja3-fingerprints` (bit 0 of [`ParserInit::options`]): off unless set
/// or a rule asks for JA3, as Suricata's `auto`; `ja4-fingerprints` (bit
/// 1): on unless set to no, as Suricata 8 writes JA4 by default.
pub const OPTIONS: &[ProtoOption] = &[
    ProtoOption { key: "ja3-fingerprints", keywords: &["ja3.hash", "ja3.string", "ja3s.hash", "ja3s.string"], default: false },
    ProtoOption { key: "ja4-fingerprints", keywords: &["ja4.hash"], default: true },
];

fn new_parser(init: &ParserInit) -> Box<dyn ProtoParser> {
    let mut p =
        TlsParser::new().with_first_tx_id(init.first_tx_id).with_fingerprints(init.options & 1 != 0, init.options & 2 != 0);
    p.frames = crate::frames::FrameLog::new(init.app.frames);
    Box::new(p)
}

pub static PROTO: ProtoDef = ProtoDef {
    name: "tls",
    eve_name: None,
    detection: Detection {
        tcp: true,
        udp: false,
        ports: &[443],
        ports_only: false,
        probe: probe_tls,
        counters_by_transport: false,
        answers_first: None,
    },
    new_parser,
    buffers: BUFFERS,
    checks: checks::CHECKS,
    // Its anomalies are logged; `app-layer-event` rules on them are not run yet.
    events: &[],
    event: crate::proto::no_other_events,
    options: OPTIONS,
    settings: &[],
    sample: super::sample::conversation,
    sample_expected: None,
    files: false,
    transactions: true,
    aliases: &[],
    includes: &[],
    borrows: &[],
    // The server's certificates come after its hello.
    base_need: PerDir { to_server: Headers, to_client: Complete },
    hooks: crate::proto::Hooks {
        to_server: &[
            "client_in_progress",
            "client_hello_done",
            "client_cert_done",
            "client_handshake_done",
            "client_finished",
        ],
        to_client: &[
            "server_in_progress",
            "server_hello",
            "server_cert_done",
            "server_hello_done",
            "server_handshake_done",
            "server_finished",
        ],
    },
    off_by_default: false,
    stream_depth: None,
    frames: &["pdu", "hdr", "data", "alert", "heartbeat"],
};

impl ProtoParser for TlsParser {
    fn parse(&mut self, dir: Direction, data: &[u8]) -> ParseResult {
        TlsParser::parse(self, dir, data)
    }

    /// Records cannot be found again after a hole (Suricata's TLS parser
    /// does not accept gaps either): an error.
    fn on_gap(&mut self, dir: Direction, len: u64) -> bool {
        TlsParser::on_gap(self, dir, len);
        false
    }

    /// An unfinished record at the end is dropped.
    fn close(&mut self, dir: Direction, _held: &[u8]) {
        self.close_side(dir);
    }

    fn tx_count(&self) -> usize {
        self.txs().len()
    }

    fn tx(&self, i: usize) -> Option<&dyn ProtoTx> {
        self.txs().get(i).map(|t| t as &dyn ProtoTx)
    }

    fn prune(&mut self, id: u64) {
        TlsParser::prune(self, id);
    }

    fn drain_events(&mut self, out: &mut Vec<AppEvent>) {
        out.append(&mut self.take_events());
    }

    fn next_tx_id(&self) -> u64 {
        TlsParser::next_tx_id(self)
    }

    fn inspection_done(&self) -> bool {
        self.encrypted()
    }

    fn take_frames(&mut self, out: &mut Vec<crate::frames::Mark>) -> u8 {
        self.frames.drain(out);
        self.frames.tx_base()
    }
}

impl ProtoTx for TlsTx {
    fn id(&self) -> u64 {
        self.id
    }

    /// `Headers` once that side's hello was seen.
    fn progress(&self, dir: Direction) -> Progress {
        let hello = match dir {
            Direction::ToServer => self.client_hello().is_some(),
            Direction::ToClient => self.server_version().is_some(),
        };
        if self.complete(dir) {
            Progress::Complete
        } else if hello {
            Progress::Headers
        } else {
            Progress::None
        }
    }

    fn hook_state(&self, dir: Direction) -> Option<u8> {
        Some(*self.hook.get(dir))
    }

    fn updates(&self, dir: Direction) -> Option<u64> {
        Some(*self.updates.get(dir))
    }

    fn buffer(&self, dir: Direction, id: u8, index: usize) -> Option<&[u8]> {
        self.buffer_dir(dir, Buffer::from_id(id)?, index)
    }

    fn eve(&self) -> Value {
        serde_json::to_value(TlsTx::eve(self)).unwrap_or(Value::Null)
    }

    /// A `custom` field list replaces the usual set, as Suricata's;
    /// without one, `extended: yes` gives [`ProtoTx::eve`]'s set and its
    /// absence Suricata's basic one (subject, issuer, subject alternative
    /// names, a resumed session).
    fn eve_with(&self, opts: &crate::proto::RecordOptions) -> Value {
        let names: Option<Vec<&str>> = opts.custom.as_ref().map(|c| c.iter().map(String::as_str).collect());
        if names.is_none() && opts.extended {
            return ProtoTx::eve(self);
        }
        let (fields, _) = super::eve::TlsEveOptions::from_config(opts.extended, names.as_deref(), true);
        serde_json::to_value(TlsTx::eve_with(self, fields)).unwrap_or(Value::Null)
    }

    /// Alerts carry the extended set whatever an output's records say.
    fn eve_metadata(&self, opts: Option<&crate::proto::RecordOptions>) -> Value {
        match opts {
            Some(o) => ProtoTx::eve_with(self, &crate::proto::RecordOptions { extended: true, ..o.clone() }),
            None => ProtoTx::eve(self),
        }
    }

    /// Suricata's basic output (no `extended`, no `custom`) leaves out a
    /// resumed session that showed no certificate (checked on realistic-a:
    /// 87 of its flows).
    fn logs_with(&self, opts: &crate::proto::RecordOptions) -> bool {
        opts.extended || opts.custom.is_some() || !self.session_resumed() || self.server_cert().is_some()
    }

    /// A session whose parsing failed before any handshake message has nothing to log.
    fn writes_record(&self) -> bool {
        self.has_handshake()
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
