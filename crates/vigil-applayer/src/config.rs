//! The limits of one flow's app layer, and the transport it runs over.

use crate::http::HttpConfig;
use vigil_types::PerDir;

/// What happens to a flow once its traffic is encrypted (Suricata's
/// `encryption-handling` of TLS and SSH).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Encryption {
    /// Keep parsing the protocol, stop inspecting payload (the default).
    #[default]
    TrackOnly,
    /// Stop processing the flow: it is bypassed.
    Bypass,
    /// Keep inspecting everything, payload included.
    Full,
}

impl Encryption {
    /// `track-only` (or Suricata 7's `default`), `bypass`, `full`.
    pub fn parse(v: &str) -> Option<Encryption> {
        match v {
            "track-only" | "default" => Some(Encryption::TrackOnly),
            "bypass" => Some(Encryption::Bypass),
            "full" => Some(Encryption::Full),
            _ => None,
        }
    }
}

/// Limits of the app layer of one flow.
#[derive(Debug, Clone)]
pub struct AppConfig {
    /// Limits of the HTTP parser.
    pub http: HttpConfig,
    /// How SMTP reads its messages (`app-layer.protocols.smtp.mime`).
    pub smtp_mime: SmtpMime,
    /// Which protocols of the table ([`crate::protocols::ALL`]) detection may pick, by
    /// their place in it (see [`AppConfig::set_enabled`]).
    pub table_enabled: u64,
    /// Which of them are detected but not parsed (`enabled: detection-only`), by place.
    pub table_detection_only: u64,
    /// Their own stream reassembly depths (`stream-depth`; 0: all), by
    /// place; `None`: `stream.reassembly.depth`.
    pub table_stream_depth: Vec<Option<u64>>,
    /// The `encryption-handling` of the table's protocols that have one,
    /// by their place in it (empty: the default for all).
    pub table_encryption: Vec<Encryption>,
    /// The table's protocols' switches that are on ([`crate::proto::ParserInit::options`]),
    /// by their place in it (empty: none on).
    pub table_options: Vec<u32>,
    /// The table's protocols' [`crate::proto::ProtoDef::settings`] as configured, by their
    /// place in it (empty: the defaults).
    pub table_settings: Vec<Vec<u64>>,
    /// The ports the table's port-bound protocols ([`crate::proto::Detection::ports_only`])
    /// are probed on when the configuration names them (`detection-ports`), by place, TCP
    /// then UDP; `None`: the protocol's own ports.
    pub table_ports: Vec<[Option<ProbePorts>; 2]>,
    /// Bytes of one direction kept for an unfinished unit (a header line, a record) when a
    /// parser says `Incomplete`; past it those bytes are dropped and the parser told of a gap
    /// (counted in [`AppCounters::pending_overflows`](crate::AppCounters)). The default,
    /// 256 KiB, is above every unit the parsers ask for by themselves (an HTTP line is cut at
    /// `http.max_header_bytes`, a TLS record is at most 18 KiB, a DNS message 64 KiB), so in
    /// practice it only bounds the bytes a client sends behind a CONNECT before the answer.
    pub max_pending: usize,
    /// Bytes of each direction protocol detection keeps before giving that direction up.
    /// Every probe decides within its first 16 bytes, so this mostly bounds what a flow holds
    /// while the other direction decides, for replay into the parser once it has. The
    /// default, 4 KiB, holds a full-size first segment or two (a request, a ClientHello);
    /// bytes past it reach the parser as a gap.
    pub detect_limit: usize,
    /// QA simulation (Suricata's `--simulate-applayer-error-at-offset-ts`/`-tc`): the parser
    /// of a TCP direction fails when it is handed bytes at or past this stream offset.
    pub simulate_error_at: PerDir<Option<u64>>,
    /// Parsers mark their frames ([`crate::frames`]): a rule inspects
    /// frames, or an output logs them. Off, nothing is recorded.
    pub frames: bool,
    /// TCP flows have a whole-stream frame (id 1 each way): an output logs
    /// frames, or a rule inspects `<proto>.stream`.
    pub stream_frames: bool,
    /// UDP detection also takes a protocol's port at the flow's source (a
    /// flow first seen from its server), as Suricata does only with
    /// `stream.midstream` on; off, only the destination port counts.
    pub udp_source_port: bool,
}

impl Default for AppConfig {
    fn default() -> Self {
        AppConfig {
            http: HttpConfig::default(),
            smtp_mime: SmtpMime::default(),
            table_enabled: u64::MAX,
            table_detection_only: 0,
            table_stream_depth: Vec::new(),
            table_encryption: Vec::new(),
            table_options: Vec::new(),
            table_settings: Vec::new(),
            table_ports: Vec::new(),
            max_pending: 256 * 1024,
            detect_limit: 4096,
            simulate_error_at: PerDir::default(),
            frames: false,
            stream_frames: false,
            udp_source_port: false,
        }
    }
}

impl AppConfig {
    /// Lets detection pick the table's protocol `name`, or not. False when
    /// no protocol of the table has that name.
    pub fn set_enabled(&mut self, name: &str, on: bool) -> bool {
        let Some(i) = crate::proto::index(name) else { return false };
        let bit = 1u64 << i;
        if on {
            self.table_enabled |= bit;
        } else {
            self.table_enabled &= !bit;
        }
        true
    }

    /// Whether any protocol may be detected at all.
    pub fn any_enabled(&self) -> bool {
        let table = crate::protocols::ALL.len();
        table > 0 && self.table_enabled & (u64::MAX >> (64 - table.min(64))) != 0
    }
}

/// Ports a protocol is probed on: the server's (`dp`) and the client's
/// (`sp`), as lists of inclusive ranges. A `dp` port at either end counts,
/// as the built-in ports do: a flow picked up at its answer has its ends
/// the other way round.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProbePorts {
    pub dp: Vec<(u16, u16)>,
    pub sp: Vec<(u16, u16)>,
}

impl ProbePorts {
    /// A flow from client port `client` to server port `server` is on them.
    pub fn matches(&self, client: u16, server: u16) -> bool {
        let within = |list: &[(u16, u16)], p: u16| list.iter().any(|&(lo, hi)| (lo..=hi).contains(&p));
        within(&self.dp, server) || within(&self.dp, client) || within(&self.sp, client)
    }
}

/// What a flow's payload travels over, which decides how [`AppFlow::feed`](crate::AppFlow::feed)
/// reads it: a byte stream, or one datagram per call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    Tcp,
    Udp,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encryption_handling_values() {
        assert_eq!(Encryption::parse("bypass"), Some(Encryption::Bypass));
        assert_eq!(Encryption::parse("full"), Some(Encryption::Full));
        assert_eq!(Encryption::parse("track-only"), Some(Encryption::TrackOnly));
        assert_eq!(Encryption::parse("default"), Some(Encryption::TrackOnly));
        assert_eq!(Encryption::parse("Bypass"), None);
        assert_eq!(Encryption::default(), Encryption::TrackOnly);
    }
}

/// `app-layer.protocols.smtp.mime`: whether messages are read as MIME at
/// all (`decode-mime`), and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SmtpMime {
    pub decode_mime: bool,
    pub reader: crate::codecs::mime::MimeConfig,
    /// `app-layer.protocols.smtp.raw-extraction`: each message as sent is a
    /// file, `rawmsg` (only without `decode-mime`, as in Suricata).
    pub raw_extraction: bool,
}

impl Default for SmtpMime {
    fn default() -> Self {
        SmtpMime { decode_mime: true, reader: crate::codecs::mime::MimeConfig::default(), raw_extraction: false }
    }
}
