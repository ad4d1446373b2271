//! The protocol API: what a protocol folder provides so that detection,
//! flow driving and logging can use it without naming it.
//!
//! A protocol is one static [`ProtoDef`] (its name, transports, probe,
//! parser factory, buffers, value checks, event names) plus the types behind
//! it: a [`ProtoParser`] per flow, which answers its transactions as
//! [`ProtoTx`] trait objects. Buffers and fields are numbered by the
//! protocol's own enum (`u8` at this boundary), so the protocol matches them
//! exhaustively and nothing outside it keeps a list of them.
//!
//! The static table [`crate::protocols::ALL`] lists every protocol; the
//! lookups here ([`find`], [`buffer`], [`check`]) walk it. It is built by the
//! compiler, immutable, and has no ids handed out at run time: a protocol's
//! identity is its name ([`AppProto::Plugin`]).
//!
//! ```
//! use vigil_applayer::{proto, protocols::ALL};
//! for def in ALL {
//!     assert!(std::ptr::eq(proto::find(def.name).unwrap(), *def));
//!     for b in def.buffers {
//!         assert_eq!(proto::buffer(b.name).unwrap().0.name, def.name);
//!     }
//! }
//! ```

mod hooks;
pub mod kit;
pub mod multiint;
mod txqueue;
pub use hooks::Hooks;
pub use txqueue::TxQueue;
pub(crate) use txqueue::{datagram_txs, delegate_txs};

use std::any::Any;
use std::fmt;

use vigil_rules::Value;
use vigil_types::{AppProto, Direction, PerDir};

use crate::config::{AppConfig, Transport};
use crate::parser::{AppEvent, ParseResult};
use crate::progress::Progress;
use crate::protocols::ALL;

/// What a probe says of the first bytes of one direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    Match,
    NeedMore,
    NoMatch,
}

/// The sides of a transaction a buffer exists on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sides {
    ToServer,
    ToClient,
    /// Both sides have one (each its own value).
    Both,
}

/// A sticky buffer a protocol answers (`ssh.software`, ...).
#[derive(Debug, Clone, Copy)]
pub struct BufferDef {
    /// The rule keyword's canonical name.
    pub name: &'static str,
    /// The protocol's own buffer number, handed back to [`ProtoTx::buffer`].
    pub id: u8,
    pub sides: Sides,
    /// The side a rule that names no direction inspects. A buffer on
    /// [`Sides::Both`] with `both_ways` is inspected on each side instead.
    pub default: Direction,
    /// Inspected on both sides by a rule that names no direction, as
    /// Suricata registers such buffers for both.
    pub both_ways: bool,
    /// How far the side must be parsed before the buffer is final.
    pub need: Progress,
    /// It holds several values, any of which may match.
    pub multi: bool,
}

/// An `app-layer-event` a rule can wait for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventDef {
    /// Its bit in [`ProtoTx::events`].
    pub bit: u64,
    /// The side that raises it; `None`: the side the rule inspects.
    pub side: Option<Direction>,
    /// How far that side must be parsed before its absence is final.
    pub need: Progress,
}

/// [`ProtoDef::event`] of a protocol whose events are all in its list.
pub fn no_other_events(_name: &str) -> Option<EventDef> {
    None
}

/// A value check compiled from a rule keyword's value (`ssh_state:...`).
pub trait TxCheck: fmt::Debug + Send + Sync {
    /// Whether the transaction matches, inspected from side `dir`, at
    /// packet time `now_secs` (unix seconds; certificate validity).
    fn matches(&self, tx: &dyn ProtoTx, dir: Direction, now_secs: i64) -> bool;
}

/// A rule keyword that checks a value of a transaction rather than a buffer.
pub struct CheckDef {
    /// The rule keyword's canonical name.
    pub name: &'static str,
    /// The side whose progress it waits for, or `None`: the rule's side.
    pub side: Option<Direction>,
    /// How far that side must be parsed.
    pub need: Progress,
    /// A rule that names no direction checks it on each side (once per
    /// side and transaction), as Suricata registers such keywords for both.
    pub both_ways: bool,
    pub compile: fn(&Value) -> Result<Box<dyn TxCheck>, String>,
}

impl fmt::Debug for CheckDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CheckDef").field("name", &self.name).finish_non_exhaustive()
    }
}

/// Whether `data` starts with one of `openings` (any case when
/// `ignore_case`): a match once one is whole, more needed while `data` is a
/// prefix of one. The probe of the text protocols that open with a word.
pub fn probe_openings(data: &[u8], openings: &[&[u8]], ignore_case: bool) -> Probe {
    let mut need_more = false;
    for o in openings {
        let n = data.len().min(o.len());
        let same = if ignore_case { data[..n].eq_ignore_ascii_case(&o[..n]) } else { data[..n] == o[..n] };
        if same {
            if n == o.len() {
                return Probe::Match;
            }
            need_more = true;
        }
    }
    if need_more {
        Probe::NeedMore
    } else {
        Probe::NoMatch
    }
}

/// What a probe is told of the flow: its ports as seen to the server, and
/// what its payload travels over (a TCP stream's first bytes, or one UDP
/// datagram).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeCx {
    pub client: u16,
    pub server: u16,
    pub transport: Transport,
}

impl ProbeCx {
    pub fn tcp(client: u16, server: u16) -> Self {
        ProbeCx { client, server, transport: Transport::Tcp }
    }

    pub fn udp(client: u16, server: u16) -> Self {
        ProbeCx { client, server, transport: Transport::Udp }
    }

    /// Either end uses `port`.
    pub fn has(self, port: u16) -> bool {
        self.client == port || self.server == port
    }
}

impl Default for ProbeCx {
    /// A TCP flow without ports.
    fn default() -> Self {
        ProbeCx::tcp(0, 0)
    }
}

/// Where a protocol runs and how it is found. The table's protocols are
/// probed in the table's order: a protocol whose signature is weak goes
/// after those it could be mistaken for.
#[derive(Debug, Clone, Copy)]
pub struct Detection {
    pub tcp: bool,
    pub udp: bool,
    /// Ports that hint at the protocol (probes run on any port unless
    /// `ports_only`).
    pub ports: &'static [u16],
    /// Probed only when a port is one of `ports` (weak signatures).
    pub ports_only: bool,
    /// The first bytes of `dir` (some protocols start differently on a
    /// port of their own, as SMB after NetBIOS, or on each transport, as DNS).
    pub probe: fn(dir: Direction, data: &[u8], cx: ProbeCx) -> Probe,
    /// First bytes to the server that only a server sends (an HTTP status
    /// line): a TCP session picked up mid-stream had its ends the wrong way
    /// round, and Suricata's probing turns such a flow round.
    pub answers_first: Option<fn(data: &[u8]) -> bool>,
    /// Its `app_layer.*` counters carry the transport (`dcerpc_tcp`), as
    /// Suricata names the protocols it registers over both TCP and UDP.
    pub counters_by_transport: bool,
}

impl Detection {
    /// Whether probing can find it at all: a protocol bound to no port is
    /// only named by an [`Expectation`] (FTP's data channels).
    pub fn probed(&self) -> bool {
        !(self.ports_only && self.ports.is_empty())
    }
}

/// What a new parser is told about its flow.
#[derive(Debug, Clone, Copy)]
pub struct ParserInit<'a> {
    /// The app layer's settings, the protocol's own limits among them.
    pub app: &'a AppConfig,
    pub transport: Transport,
    /// The id of its first transaction (ids go on growing across a
    /// tunnel's change of protocol, so they stay unique in the flow).
    pub first_tx_id: u64,
    /// The protocol's [`ProtoDef::options`] that are on, bit `i` for the
    /// `i`th.
    pub options: u32,
    /// The protocol's [`ProtoDef::settings`], in their order, as configured
    /// (empty: every default).
    pub settings: &'a [u64],
    /// What the flow that announced this one said of it, for a flow found
    /// by an expectation ([`Expectation`]) rather than by probing.
    pub expected: Option<&'a Expected>,
    /// The address of the flow's client, where the engine knows it (FTP
    /// checks PORT's against it).
    pub client: Option<std::net::IpAddr>,
}

impl ParserInit<'_> {
    /// Setting `i` of the protocol's [`ProtoDef::settings`]: as configured,
    /// else its default.
    pub fn setting(&self, def: &ProtoDef, i: usize) -> u64 {
        self.settings.get(i).copied().or_else(|| def.settings.get(i).map(|s| s.default)).unwrap_or(0)
    }
}

/// A number a protocol reads from `app-layer.protocols.<name>.<key>`
/// (`max-tx`, `max-line-length`), with its default.
#[derive(Debug, Clone, Copy)]
pub struct SettingDef {
    pub key: &'static str,
    pub default: u64,
    /// A byte size (`64 MiB`, `4kb`) rather than a plain count.
    pub size: bool,
}

/// What an expected flow's parser is handed: the announcing protocol's own
/// description of it (FTP's command and file name), shared between workers.
pub type Expected = std::sync::Arc<dyn Any + Send + Sync>;

/// A flow a parser announced (an FTP data channel): the next flow between
/// the same two hosts, opened from `from` to port `port` of the other end,
/// speaks `proto`, whatever its first bytes (Suricata's expectations).
#[derive(Clone)]
pub struct Expectation {
    /// The end the new flow comes from, as a direction of the announcing
    /// flow: `ToServer`, its client connects to its server; `ToClient`, the
    /// other way round.
    pub from: Direction,
    /// The port the new flow goes to.
    pub port: u16,
    pub proto: &'static ProtoDef,
    pub data: Expected,
}

impl fmt::Debug for Expectation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Expectation")
            .field("from", &self.from)
            .field("port", &self.port)
            .field("proto", &self.proto.name)
            .finish_non_exhaustive()
    }
}

/// A switch of a protocol: on when `app-layer.protocols.<name>.<key>` is
/// true (`default` when not given), or when a loaded rule uses one of
/// `keywords` (a rule that asks for what the switch computes turns it on,
/// as in Suricata).
#[derive(Debug, Clone, Copy)]
pub struct ProtoOption {
    pub key: &'static str,
    pub keywords: &'static [&'static str],
    pub default: bool,
}

/// One protocol, as the rest of vigil sees it.
pub struct ProtoDef {
    /// Suricata's name: rule headers, `app_proto`, EVE `event_type`,
    /// `app-layer.protocols.<name>`, counters.
    pub name: &'static str,
    /// Its EVE `event_type` where that is not its name (`ftp_data` for
    /// `ftp-data`).
    pub eve_name: Option<&'static str>,
    pub detection: Detection,
    pub new_parser: fn(&ParserInit) -> Box<dyn ProtoParser>,
    pub buffers: &'static [BufferDef],
    pub checks: &'static [CheckDef],
    /// `app-layer-event` names (without the `<name>.` prefix): bit `i` of
    /// [`ProtoTx::events`] for the `i`th, inspected on the rule's side.
    pub events: &'static [&'static str],
    /// Events beyond that list, with where they are raised (HTTP's, many
    /// of which only a response or a whole body can raise).
    pub event: fn(name: &str) -> Option<EventDef>,
    /// Its switches, at most 32 (see [`ParserInit::options`]).
    pub options: &'static [ProtoOption],
    /// Its numeric settings (see [`ParserInit::setting`]).
    pub settings: &'static [SettingDef],
    /// A short conversation of the protocol, in order (one datagram per
    /// entry over UDP): what the test kit ([`kit`]) runs every protocol
    /// through, and where fuzzing starts.
    pub sample: fn() -> Vec<(Direction, Vec<u8>)>,
    /// For a protocol only an expectation names: what the announcing flow
    /// hands its parser in the sample (and in fuzzing).
    pub sample_expected: Option<fn() -> Expected>,
    /// Whether its transactions carry files ([`ProtoTx::files`]): the file
    /// keywords (`file.data`, `filesize`, ...) apply to its flows.
    pub files: bool,
    /// Whether its parser forms transactions (and so EVE records). False
    /// for a protocol that is detected (its rules apply, its flows are
    /// named) but not parsed yet.
    pub transactions: bool,
    /// Other names rule headers and `app-layer-protocol` use for it
    /// (`http1`).
    pub aliases: &'static [&'static str],
    /// Protocols whose rules also apply to this one's flows: SMB carries
    /// DCE/RPC, so `alert dcerpc` rules inspect SMB flows, as in Suricata.
    pub includes: &'static [&'static str],
    /// Sticky buffers of another protocol that this one's transactions
    /// also serve, under the owner's buffer numbers, when a rule's header
    /// names this protocol (`alert quic ... ja3.hash`: QUIC carries TLS
    /// hellos).
    pub borrows: &'static [&'static str],
    /// How far each side must be parsed before a rule that names none of
    /// its buffers is inspected on it (TLS: the server's side is whole once
    /// its certificates came).
    pub base_need: PerDir<Progress>,
    /// The states its transactions go through, as firewall rules hook them.
    pub hooks: Hooks,
    /// Not detected unless `app-layer.protocols.<name>.enabled` says so
    /// (PostgreSQL, Modbus, DNP3, ENIP: off in Suricata unless asked for).
    pub off_by_default: bool,
    /// The stream reassembly depth its flows get unless
    /// `app-layer.protocols.<name>.stream-depth` says otherwise; `None`: the
    /// stream's. SMB's is 0 (all of it), as in Suricata.
    pub stream_depth: Option<u64>,
    /// Its frame types as `frame:` names them (`pdu`, `hdr`, `smb2.data`),
    /// numbered by their place here ([`crate::frames`]).
    pub frames: &'static [&'static str],
}

impl fmt::Debug for ProtoDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProtoDef").field("name", &self.name).finish_non_exhaustive()
    }
}

impl ProtoDef {
    /// The flow protocol this definition stands for.
    pub fn app_proto(&'static self) -> AppProto {
        AppProto::Plugin(self.name)
    }

    /// Its EVE `event_type`.
    pub fn eve_type(&self) -> &'static str {
        self.eve_name.unwrap_or(self.name)
    }
}

/// A protocol's parser for one flow, the one streaming contract: bytes
/// arrive in order, per direction, in chunks of any size, and the same
/// stream cut differently yields the same transactions.
pub trait ProtoParser: Send {
    /// Consumes a chunk of the `dir` byte stream (TCP) or one datagram (UDP).
    fn parse(&mut self, dir: Direction, data: &[u8]) -> ParseResult;
    /// `len` bytes of `dir` were lost. False: the parser cannot go on after
    /// a gap (an error for `app-layer.error-policy`).
    fn on_gap(&mut self, dir: Direction, len: u64) -> bool;
    /// `dir` will send nothing more; `held` is what the parser left unfinished.
    fn close(&mut self, dir: Direction, held: &[u8]);
    fn tx_count(&self) -> usize;
    /// The `i`th transaction held, oldest first.
    fn tx(&self, i: usize) -> Option<&dyn ProtoTx>;
    /// Frees transactions with an id below `id`.
    fn prune(&mut self, id: u64);
    /// Anomalies seen so far, moved to `out`.
    fn drain_events(&mut self, out: &mut Vec<AppEvent>);
    /// The id the next transaction will get.
    fn next_tx_id(&self) -> u64;
    /// Payload inspection should stop (encryption started both ways).
    fn inspection_done(&self) -> bool {
        false
    }
    /// The flow stopped speaking this protocol (an HTTP CONNECT or
    /// Upgrade): the parser reads no more, its transactions stay, and
    /// detection runs again on what follows.
    fn tunnel(&self) -> bool {
        false
    }
    /// The protocol a tunnel speaks when the parser knows it (an HTTP
    /// upgrade to WebSocket the server accepted): its parser takes over
    /// without detection. `None`: what follows is detected.
    fn tunnel_to(&self) -> Option<&'static str> {
        None
    }
    /// What the parser of [`ProtoParser::tunnel_to`] is handed (as
    /// [`ParserInit::expected`]): the HTTP/1 request an `h2c` upgrade
    /// carried, which is HTTP/2's stream 1.
    fn handover(&self) -> Option<Expected> {
        None
    }
    /// Marks files for the file store on behalf of signature `sid`: those
    /// of transaction `tx` on the sides in `dirs`, or (`tx` `None`) every
    /// file from now on.
    fn store_files(&mut self, _tx: Option<u64>, _dirs: &[Direction], _sid: u32) {}
    /// Transactions dropped unpruned at the parser's own limit.
    fn txs_evicted(&self) -> u64 {
        0
    }
    /// Flows it announced since the last call (an FTP data channel), moved
    /// to `out`; the engine matches them against the flows that come.
    fn take_expectations(&mut self, _out: &mut Vec<Expectation>) {}
    /// Whether it still reads the flow's bytes. False: they need not be
    /// handed over, reassembled or kept for it (a protocol detected but not
    /// parsed, or one that lost its place).
    fn wants_data(&self) -> bool {
        true
    }
    /// The protocol of the table the flow goes by from now on, parsed on by
    /// this same parser (an HTTP/2 flow once a stream carried DNS is
    /// `doh2`): Suricata's change of protocol without a new parser.
    fn renamed(&self) -> Option<&'static str> {
        None
    }
    /// Whether a record of `dir` ended since the last call, so raw stream
    /// inspection of `dir` need not wait for a chunk of bytes (Suricata's
    /// parsers ask for it at their record boundaries).
    fn take_raw_trigger(&mut self, _dir: Direction) -> bool {
        false
    }
    /// The frames it marked in its last calls ([`crate::frames::FrameLog`]),
    /// moved to `out`, and what their transaction ids show
    /// ([`crate::frames::FrameLog::tx_base`]). Only parsers of protocols
    /// with frame types mark any, and only when [`AppConfig::frames`] is on.
    fn take_frames(&mut self, _out: &mut Vec<crate::frames::Mark>) -> u8 {
        0
    }
}

/// [`ProtoDef::base_need`] of a protocol whose sides are each ready once
/// their first unit is parsed.
pub const HEADERS_BOTH: PerDir<Progress> = PerDir { to_server: Progress::Headers, to_client: Progress::Headers };

/// The parser of a protocol that is detected but not parsed: it reads
/// nothing and forms no transactions, and a flow of it keeps the name.
#[derive(Debug, Default)]
pub struct NotParsed {
    next_id: u64,
}

impl NotParsed {
    pub fn boxed(init: &ParserInit) -> Box<dyn ProtoParser> {
        Box::new(NotParsed { next_id: init.first_tx_id })
    }
}

impl ProtoParser for NotParsed {
    fn parse(&mut self, _dir: Direction, _data: &[u8]) -> ParseResult {
        ParseResult::Done
    }
    fn on_gap(&mut self, _dir: Direction, _len: u64) -> bool {
        true
    }
    fn close(&mut self, _dir: Direction, _held: &[u8]) {}
    fn tx_count(&self) -> usize {
        0
    }
    fn tx(&self, _i: usize) -> Option<&dyn ProtoTx> {
        None
    }
    fn prune(&mut self, _id: u64) {}
    fn drain_events(&mut self, _out: &mut Vec<AppEvent>) {}
    fn next_tx_id(&self) -> u64 {
        self.next_id
    }
    fn wants_data(&self) -> bool {
        false
    }
}

/// A transaction, as detection and logging see it.
pub trait ProtoTx: Any {
    fn id(&self) -> u64;
    fn progress(&self, dir: Direction) -> Progress;
    /// The number of the [`ProtoDef::hooks`] state side `dir` is in, for
    /// protocols that name more states than start and end (`None`: its
    /// progress says, see [`Hooks::of`]).
    fn hook_state(&self, _dir: Direction) -> Option<u8> {
        None
    }
    /// How many times the parser updated side `dir` of this transaction
    /// (a record, a message), for protocols that count: a firewall
    /// evaluates the state a side is in again with each update, as
    /// Suricata does. `None`: only a change of state counts.
    fn updates(&self, _dir: Direction) -> Option<u64> {
        None
    }
    /// How many times side `dir` changed in a way its keywords see (an LDAP
    /// request's responses), for protocols whose transactions Suricata
    /// inspects again as each change comes: their rules are run again on
    /// each, and match a transaction once. `None`: inspected once per step
    /// of progress.
    fn detect_updates(&self, _dir: Direction) -> Option<u64> {
        None
    }
    /// Its protocol's transactions finish in any order (HTTP/2 streams):
    /// each is logged when it finishes, not after those before it, as
    /// Suricata logs them.
    fn logs_out_of_order(&self) -> bool {
        false
    }
    /// Whether it will not change any more and can be logged.
    fn finished(&self) -> bool {
        self.progress(Direction::ToServer) == Progress::Complete
            && self.progress(Direction::ToClient) == Progress::Complete
    }
    /// Buffer `id` (the protocol's [`BufferDef::id`]) of side `dir`;
    /// multi-valued buffers answer each `index` in turn.
    fn buffer(&self, dir: Direction, id: u8, index: usize) -> Option<&[u8]>;
    /// The body of its EVE record (the object under the protocol's name).
    fn eve(&self) -> serde_json::Value;
    /// The body as an output with `opts` writes it (strings cut at a
    /// limit, passwords left out), for protocols that have such options.
    fn eve_with(&self, _opts: &RecordOptions) -> serde_json::Value {
        self.eve()
    }
    /// Whether an output with `opts` writes its record at all (DHCP's short
    /// form writes acknowledgements only).
    fn logs_with(&self, _opts: &RecordOptions) -> bool {
        true
    }
    /// Objects its records carry beside that one (SMTP's `email`), in order,
    /// with what the output asks of them beyond the usual fields.
    fn eve_siblings(&self, _opts: SiblingOptions<'_>) -> Vec<(&'static str, serde_json::Value)> {
        Vec::new()
    }
    /// The events raised on it: bit `i` for the protocol's
    /// [`ProtoDef::events`]`[i]` (what `app-layer-event` rules match).
    fn events(&self) -> u64 {
        0
    }
    /// Whether it makes an EVE record (a TLS session that failed before
    /// any handshake message has nothing to say).
    fn writes_record(&self) -> bool {
        true
    }
    /// Whether its record carries its `tx_id` (Suricata's HTTP/2 records
    /// do not).
    fn record_has_tx_id(&self) -> bool {
        true
    }
    /// The body alerts and `fileinfo` records carry of it (as an output
    /// with `opts` writes it), where that is not its record's: DNS leaves
    /// out the grouped answers there.
    fn eve_metadata(&self, opts: Option<&RecordOptions>) -> serde_json::Value {
        opts.map_or_else(|| self.eve(), |o| self.eve_with(o))
    }
    /// The direction its record is written in: the flow's (to-server), or
    /// its own (a DNS message, whose response record goes server to client).
    fn record_dir(&self) -> Direction {
        Direction::ToServer
    }
    /// Its record goes the way of the packet that has it written, whatever
    /// [`ProtoTx::record_dir`] says (Suricata's RDP records); at the flow's
    /// end it goes [`ProtoTx::record_dir`].
    fn logged_in_packet_dir(&self) -> bool {
        false
    }
    /// Its records in an older format `version` an output asks for
    /// (`- dns: version: 2`), each with the direction it is written in;
    /// `None` where the protocol has no such version (then [`ProtoTx::eve`]).
    fn eve_version(&self, _version: u8) -> Option<Vec<(Direction, serde_json::Value)>> {
        None
    }
    /// Whether its data is little-endian by its own say (a DCE/RPC call's
    /// data representation): the byte order `byte_test` and its kin read
    /// with `dce`. Big-endian where the protocol says none.
    fn dce_little_endian(&self) -> bool {
        false
    }
    /// Transactions of one group are one transaction to Suricata (a DNS
    /// query and its answer, by the message id): a rule that silences the
    /// logging of one silences the others.
    fn log_group(&self) -> Option<u64> {
        None
    }
    /// The files side `dir` carried, fed through [`crate::files`]; the
    /// file keywords, `fileinfo` records and the file store read them.
    fn files(&self, _dir: Direction) -> &[crate::files::File] {
        &[]
    }
    /// `file.data` value `index` of side `dir`: each file's data as far as
    /// kept.
    fn file_data(&self, dir: Direction, index: usize) -> Option<&[u8]> {
        self.files(dir).get(index).map(|f| f.window.as_slice()).filter(|w| !w.is_empty())
    }
    /// What `filesize` reads of side `dir`: the size of its file and
    /// whether that is the whole file; `None` while the side is unfinished
    /// or carries none.
    fn file_size(&self, _dir: Direction) -> Option<(u64, bool)> {
        None
    }
    /// The transaction of protocol `proto` this one carries
    /// ([`ProtoDef::includes`]), for rules written for that protocol: the
    /// DCE/RPC call an SMB command wrote to a pipe, the DNS messages of a
    /// DNS-over-HTTP/2 stream.
    fn carried(&self, _proto: &str) -> Option<&dyn ProtoTx> {
        None
    }
    /// The EVE type its record is written under where it is not its
    /// protocol's (a DNS-over-HTTP/2 stream makes a `dns` record, its HTTP
    /// object beside: [`ProtoTx::eve_siblings`]).
    fn record_type(&self) -> Option<&'static str> {
        None
    }
    fn as_any(&self) -> &dyn Any;
}

/// What an EVE output asks of a protocol's records (`- mqtt:
/// string-log-limit: 1kb`, `passwords: no`); each protocol reads the
/// options it has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordOptions {
    /// `passwords`: credentials are written; `None` when not given (the
    /// protocol's default: yes for MQTT, no for PostgreSQL).
    pub passwords: Option<bool>,
    /// `string-log-limit`: strings are cut after so many bytes; `None`
    /// when not given (the protocol's default).
    pub string_log_limit: Option<usize>,
    /// `extended`: the long form of the records. Default no.
    pub extended: bool,
    /// `types`: the kinds of transaction written (SMB's `[create, file]`); `None`: all.
    pub types: Option<Vec<String>>,
    /// `custom`: the fields written, in place of the usual set (TLS's
    /// `[client_handshake, sni]`); `None`: the usual set.
    pub custom: Option<Vec<String>>,
}

/// What an output asks of the objects beside a record beyond their usual
/// fields.
#[derive(Debug, Clone, Copy, Default)]
pub struct SiblingOptions<'a> {
    /// `- smtp: custom: [subject, date]`: header fields `email` adds, in
    /// place of the usual extras (its URLs).
    pub custom: Option<&'a [String]>,
    /// `- smtp: md5: [body, subject]`: the digests `email` adds.
    pub md5: &'a [String],
}

impl RecordOptions {
    pub const DEFAULT: RecordOptions =
        RecordOptions { passwords: None, string_log_limit: None, extended: false, types: None, custom: None };
}

impl Default for RecordOptions {
    fn default() -> Self {
        RecordOptions::DEFAULT
    }
}

/// Bytes as Suricata writes a string it does not know to be text: UTF-8
/// as is; otherwise ASCII as is and every other byte as `\xNN`.
pub fn escaped_text(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_owned(),
        Err(_) => {
            let mut out = String::with_capacity(bytes.len() * 2);
            for &b in bytes {
                if b < 0x80 {
                    out.push(char::from(b));
                } else {
                    out.push_str(&format!("\\x{b:02x}"));
                }
            }
            out
        }
    }
}

/// Bytes as an EVE string: UTF-8 as is, anything else replaced (the
/// protocols' records share this rendering).
pub fn eve_text(b: &[u8]) -> serde_json::Value {
    serde_json::Value::String(String::from_utf8_lossy(b).into_owned())
}

/// The protocol named `name`.
pub fn find(name: &str) -> Option<&'static ProtoDef> {
    ALL.iter().copied().find(|d| d.name == name)
}

/// The first protocol of the table whose transactions carry files (HTTP):
/// the one the file keywords inspect in a rule whose header names no
/// protocol that carries files. A rule written for another that does
/// (`alert smtp`, `alert ftp-data`) inspects that protocol's files instead.
/// Not yet: one rule inspecting the files of every such protocol, as
/// Suricata's `alert tcp ... file.data` does.
pub fn files_proto() -> Option<&'static ProtoDef> {
    ALL.iter().copied().find(|d| d.files)
}

/// The protocol a rule names `name` (its name or one of its aliases).
pub fn by_rule_name(name: &str) -> Option<&'static ProtoDef> {
    ALL.iter().copied().find(|d| d.name == name || d.aliases.contains(&name))
}

/// The place of the protocol named `name` in the table: what per-protocol
/// bit masks and counter rows are indexed by.
pub fn index(name: &str) -> Option<usize> {
    ALL.iter().position(|d| d.name == name)
}

/// The protocol of a flow, when it is one of the table's.
pub fn of(proto: AppProto) -> Option<&'static ProtoDef> {
    match proto {
        AppProto::Plugin(name) => find(name),
        _ => None,
    }
}

/// The frame type a `frame:` keyword names: `<proto>.<type>` where the
/// part before the first dot names a protocol, else `<type>` of `rule`'s
/// protocol (`smb2.data` in an `alert smb` rule). `stream` is every TCP
/// protocol's whole-stream frame ([`crate::frames::STREAM`]).
pub fn frame_type(name: &str, rule: Option<&'static ProtoDef>) -> Result<(&'static ProtoDef, u8), String> {
    let name = name.trim();
    let (def, ty) = match name.split_once('.').and_then(|(p, t)| by_rule_name(p).map(|d| (d, t))) {
        Some((d, t)) => {
            if let Some(r) = rule.filter(|r| !std::ptr::eq(*r, d) && !r.includes.contains(&d.name)) {
                return Err(format!("frame {name} in a {} rule", r.name));
            }
            (d, t)
        }
        None => (rule.ok_or_else(|| format!("frame {name} needs a protocol in the rule header"))?, name),
    };
    if ty == "stream" {
        return Ok((def, crate::frames::STREAM));
    }
    match def.frames.iter().position(|&f| f == ty) {
        Some(i) => Ok((def, i as u8)),
        None => Err(format!("{} has no frame type {ty}", def.name)),
    }
}

/// The sticky buffer named `name` and its protocol.
pub fn buffer(name: &str) -> Option<(&'static ProtoDef, &'static BufferDef)> {
    ALL.iter().find_map(|d| d.buffers.iter().find(|b| b.name == name).map(|b| (*d, b)))
}

/// Whether rules written for `want` apply to a flow that speaks `have`:
/// the same protocol, or one that carries it ([`ProtoDef::includes`]).
pub fn applies(want: AppProto, have: AppProto) -> bool {
    want == have || of(have).is_some_and(|d| d.includes.contains(&want.name()))
}

/// The value check named `name` and its protocol.
pub fn check(name: &str) -> Option<(&'static ProtoDef, &'static CheckDef)> {
    ALL.iter().find_map(|d| d.checks.iter().find(|c| c.name == name).map(|c| (*d, c)))
}
