//! The app-layer state of one flow: protocol detection first, then one
//! parser, with the bytes a parser left unfinished kept (within a bound)
//! and offered again in front of the next ones.
//!
//! The engine hands every direction's in-order bytes to [`AppFlow::feed`],
//! however they were cut; detection keeps the first bytes until a
//! direction matches, then replays them into the chosen parser. After an
//! HTTP CONNECT or Upgrade the HTTP parser keeps its transactions and
//! detection runs again on the bytes inside the tunnel (TLS through a
//! proxy, as Suricata re-detects); transaction ids go on growing across
//! the change, so they stay unique within the flow.

use std::fmt;
use std::mem;

use vigil_types::{AppProto, Direction, PerDir};

use crate::config::{AppConfig, Encryption, Transport};
use crate::detect::{Detect, Detector, Probes, Replay, Step, Verdict};
use crate::frames::{Frame, FrameTrack};
use crate::other_side::OtherSide;
use crate::parser::{AppEvent, ParseResult};
use crate::proto::{Expected, ParserInit, ProtoDef, ProtoParser};
use crate::txref::TxRef;

/// Tunnels followed per flow (CONNECT inside CONNECT ...); past it the
/// bytes inside are not parsed. Each one keeps a retired parser around.
const MAX_TUNNELS: usize = 4;

/// A pending buffer that grew past this is freed once empty rather than
/// kept for the next unit: most flows never need more than a line.
const KEEP_CAPACITY: usize = 64 * 1024;

/// What one flow's app layer counted, for stats. Each is a per-flow count
/// the engine sums over flows (names after Suricata's `app_layer.*` counters).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AppCounters {
    /// Times detection gave up (Suricata `app_layer.flow.failed_tcp` / `failed_udp`): once for
    /// the flow, and once more for each tunnel whose contents were not recognized.
    pub detect_failed: u64,
    /// Times a parser declared a direction not its protocol (Suricata
    /// `app_layer.error.<proto>.parser`); a TCP direction is then no longer parsed, a UDP
    /// datagram is skipped.
    pub parser_errors: u64,
    /// Capture gaps reported for the flow.
    pub gaps: u64,
    /// Gaps its parser could not go on after (TLS): Suricata's
    /// `app_layer.error.<proto>.gap`, which parsers that accept gaps never raise.
    pub gap_errors: u64,
    /// Errors `app-layer.error-policy` applies to: a parser error, or a gap in a protocol
    /// whose parser cannot resume after one (TLS). A TCP flow's parsing stops at the first.
    pub policy_errors: u64,
    /// Times an unfinished unit outgrew [`AppConfig::max_pending`] and was dropped, the parser
    /// being told of a gap instead.
    pub pending_overflows: u64,
    /// Payload bytes of a detected protocol its parser never saw: dropped pending bytes,
    /// bytes of a direction given up after an error, bytes past the detection limit, an
    /// unfinished unit at a capture gap or stream end. Bytes of flows whose detection failed
    /// are not counted.
    pub bytes_dropped: u64,
    /// HTTP CONNECT / Upgrade tunnels after which detection ran again.
    pub tunnels: u64,
    /// Transactions a parser dropped unpruned at its own limit (`HttpConfig::max_txs`, DNS's
    /// 256), i.e. that the engine never saw.
    pub txs_evicted: u64,
}

/// The parser a flow was found to need, beside its protocol's definition.
struct Parser {
    def: &'static ProtoDef,
    p: Box<dyn ProtoParser>,
}

impl Parser {
    fn txs(&self) -> impl Iterator<Item = TxRef<'_>> {
        let (def, p) = (self.def, &*self.p);
        (0..p.tx_count()).filter_map(move |i| p.tx(i).map(|tx| TxRef::new(def, tx)))
    }

    fn has_txs(&self) -> bool {
        self.p.tx_count() > 0
    }

    fn prune(&mut self, id: u64) {
        self.p.prune(id);
    }

    fn take_events(&mut self) -> Vec<AppEvent> {
        let mut out = Vec::new();
        self.p.drain_events(&mut out);
        out
    }

    fn next_tx_id(&self) -> u64 {
        self.p.next_tx_id()
    }

    fn txs_evicted(&self) -> u64 {
        self.p.txs_evicted()
    }

    fn parse(&mut self, dir: Direction, data: &[u8]) -> ParseResult {
        self.p.parse(dir, data)
    }

    /// Told of bytes it will not see; whether it goes on does not matter here.
    fn skip(&mut self, dir: Direction, len: u64) {
        self.p.on_gap(dir, len);
    }

    fn tunnel(&self) -> bool {
        self.p.tunnel()
    }

    fn wants_data(&self) -> bool {
        self.p.wants_data()
    }
}

enum Stage {
    Detect(Detector),
    Parse(Box<Parser>),
    /// Nothing more is read: detection failed, or a tunnel was not followed.
    Idle,
}

/// One direction's bytes between calls.
#[derive(Default)]
struct Side {
    /// What the parser left unfinished, offered again in front of the next bytes.
    held: Vec<u8>,
    /// More bytes the parser said it needs before offering `held` again is worth it.
    want: usize,
    /// The parser gave this direction up.
    stopped: bool,
    closed: bool,
}

impl Side {
    fn clear(&mut self) {
        if self.held.capacity() > KEEP_CAPACITY {
            self.held = Vec::new();
        } else {
            self.held.clear();
        }
        self.want = 0;
    }
}

/// The bytes a parser did not consume.
fn unparsed(result: ParseResult, data: &[u8]) -> &[u8] {
    match result {
        ParseResult::Incomplete { consumed, .. } => data.get(consumed..).unwrap_or_default(),
        ParseResult::Done | ParseResult::Error => &[],
    }
}

/// The app-layer state of one flow: detection first, then one parser.
pub struct AppFlow {
    cfg: AppConfig,
    transport: Transport,
    probes: Probes,
    proto: AppProto,
    /// What the flow spoke before its last change of protocol (HTTP before a CONNECT or
    /// Upgrade tunnel), for Suricata's `app_proto_orig`.
    orig: Option<AppProto>,
    stage: Stage,
    /// Parsers of the connection before each tunnel (HTTP's), oldest first: they parse no
    /// more, but their transactions stay until pruned.
    retired: Vec<Parser>,
    /// The first transaction id of the next parser.
    next_id: u64,
    tunnels: usize,
    /// Events of retired parsers not yet taken.
    events: Vec<AppEvent>,
    sides: PerDir<Side>,
    /// Stream bytes of each direction that reached the parser stage (offered or lost).
    parsed: PerDir<u64>,
    counters: AppCounters,
    /// Detection of the direction that did not decide the protocol.
    other: OtherSide,
    /// UDP: the first datagram of that side was no protocol (Suricata
    /// probes each side's first datagram once).
    udp_failed: PerDir<bool>,
    /// The client's address, for the parsers that check one against it.
    client: Option<std::net::IpAddr>,
    /// The parser's frames, when rules or outputs ask for them.
    frames: FrameTrack,
}

impl fmt::Debug for AppFlow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AppFlow")
            .field("transport", &self.transport)
            .field("proto", &self.proto)
            .field("counters", &self.counters)
            .finish_non_exhaustive()
    }
}

impl AppFlow {
    /// `client_port`/`server_port` are the flow's ports as seen to-server (source,
    /// destination): ports are only a hint.
    pub fn new(cfg: &AppConfig, transport: Transport, client_port: u16, server_port: u16) -> AppFlow {
        // Suricata's UDP probes look at the destination port only, unless
        // midstream pick-up is on.
        let client_port = if transport == Transport::Udp && !cfg.udp_source_port { 0 } else { client_port };
        let probes = Probes::new(cfg, transport, client_port, server_port);
        AppFlow {
            cfg: cfg.clone(),
            transport,
            probes,
            proto: AppProto::Unknown,
            orig: None,
            stage: Stage::Detect(Detector::new(probes, cfg.detect_limit)),
            retired: Vec::new(),
            next_id: 0,
            tunnels: 0,
            events: Vec::new(),
            sides: PerDir::default(),
            parsed: PerDir::default(),
            counters: AppCounters::default(),
            other: OtherSide::default(),
            udp_failed: PerDir::default(),
            client: None,
            frames: if cfg.stream_frames && transport == Transport::Tcp {
                FrameTrack::with_streams()
            } else {
                FrameTrack::default()
            },
        }
    }

    /// Tells the flow its client's address (FTP checks PORT's against it).
    pub fn with_client(mut self, client: std::net::IpAddr) -> AppFlow {
        self.client = Some(client);
        self
    }

    /// What `dir` was found to speak, when detection of that direction did
    /// not agree with the flow's protocol (Suricata's `app_proto_ts` and
    /// `app_proto_tc`): `Failed` when it matched nothing.
    pub fn side_proto(&self, dir: Direction) -> Option<AppProto> {
        // Judged against what was first detected, before any tunnel.
        self.other.differs(dir, self.orig.unwrap_or(self.proto))
    }

    /// What direction `dir` speaks for `app-layer-protocol`'s modes, where
    /// it is not the flow's protocol ([`proto`](Self::proto)): `Unknown`
    /// while that direction is still being detected.
    pub fn dir_proto(&self, dir: Direction) -> Option<AppProto> {
        match self.proto {
            AppProto::Unknown | AppProto::Failed => None,
            p => self.other.dir_proto(dir, self.orig.unwrap_or(p)),
        }
    }

    fn raise(&mut self, raised: Option<&'static str>) {
        if let Some(name) = raised {
            self.events.push(AppEvent { name, tx_id: None });
        }
    }

    /// Unknown while detecting; a protocol of the table once detected;
    /// Failed when detection gave up.
    /// After a tunnel it stays HTTP until what runs inside is recognized, and becomes Failed
    /// if it is not (see [`orig_proto`](Self::orig_proto)).
    pub fn proto(&self) -> AppProto {
        self.proto
    }

    /// The stream reassembly depth the flow's protocol asks for
    /// (`app-layer.protocols.<name>.stream-depth`), if it has one.
    pub fn stream_depth(&self) -> Option<u64> {
        if self.cfg.table_stream_depth.is_empty() {
            return None;
        }
        let i = crate::proto::index(self.proto.name())?;
        self.cfg.table_stream_depth.get(i).copied().flatten()
    }

    /// The protocol before the flow's last change (HTTP before a tunnel), when it differs
    /// from [`proto`](Self::proto): while the tunnel is still being detected, or when what
    /// runs inside turned out to be something else (TLS) or nothing known (Failed).
    pub fn orig_proto(&self) -> Option<AppProto> {
        self.orig.filter(|&orig| orig != self.proto)
    }

    /// The protocol that asked for TLS (a STARTTLS the server accepted), once
    /// TLS runs: what Suricata's `tls` records name as `from_proto`. HTTP's
    /// CONNECT is a change of protocol, not such a request, and names none.
    pub fn upgraded_from(&self) -> Option<AppProto> {
        let orig = self.orig_proto()?;
        (self.proto.name() == "tls" && orig.name() != "http").then_some(orig)
    }

    pub fn transport(&self) -> Transport {
        self.transport
    }

    /// TCP: the next in-order bytes of `dir`'s stream (any chunking). UDP: one whole datagram
    /// payload.
    pub fn feed(&mut self, dir: Direction, data: &[u8]) {
        if data.is_empty() {
            return;
        }
        if matches!(self.other, OtherSide::Waiting { .. }) {
            // Judged against what was detected, not a later name (`doh2`).
            let raised =
                self.other.feed(dir, data, self.orig.unwrap_or(self.proto), self.probes, self.cfg.detect_limit);
            self.raise(raised);
        }
        let verdict = match &mut self.stage {
            Stage::Idle => return,
            Stage::Parse(p) if !p.wants_data() => return,
            Stage::Parse(_) => {
                self.parse(dir, data);
                return self.follow_rename();
            }
            // Each side's first datagram is probed once, as Suricata does: a
            // side that was no protocol is not read, and the other side's
            // first datagram may still decide (`app_proto_ts: failed`).
            Stage::Detect(_) if self.transport == Transport::Udp => {
                if *self.udp_failed.get(dir) {
                    return;
                }
                match self.probes.udp(dir, data) {
                    Detect::Match(proto) => {
                        let other = dir.flip();
                        if *self.udp_failed.get(other) {
                            self.other = OtherSide::Decided { dir: other, proto: AppProto::Failed };
                        }
                        Verdict::Found(proto)
                    }
                    Detect::NeedMore | Detect::NoMatch => {
                        *self.udp_failed.get_mut(dir) = true;
                        if *self.udp_failed.get(dir.flip()) {
                            Verdict::Failed
                        } else {
                            Verdict::Undecided
                        }
                    }
                }
            }
            Stage::Detect(det) => det.feed(dir, data),
        };
        self.decide(verdict, Some((dir, data)));
    }

    /// Whether a record of `dir` was completed since the last call: raw
    /// stream inspection of `dir` need not wait for a chunk of bytes
    /// ([`ProtoParser::take_raw_trigger`]).
    pub fn take_raw_trigger(&mut self, dir: Direction) -> bool {
        match &mut self.stage {
            Stage::Parse(p) => p.p.take_raw_trigger(dir),
            Stage::Detect(_) | Stage::Idle => false,
        }
    }

    /// `len` bytes of `dir` were lost (TCP gap).
    pub fn gap(&mut self, dir: Direction, len: u64) {
        self.counters.gaps += 1;
        // The other direction's first bytes have a hole: its detection ends undecided.
        if matches!(self.other, OtherSide::Waiting { dir: d, .. } if d == dir) {
            self.other = OtherSide::Off;
        }
        self.lose(dir, len);
    }

    /// The flow ended: a UDP flow still waiting for its other side's first
    /// datagram failed detection.
    pub fn ended(&mut self) {
        if self.transport == Transport::Udp && matches!(self.stage, Stage::Detect(_)) {
            self.give_up();
        }
    }

    /// `dir` ended (FIN/RST or flow end): lets HTTP finish a body delimited by connection
    /// close, and detection give up on a direction that will send nothing more.
    pub fn close(&mut self, dir: Direction) {
        let side = self.sides.get_mut(dir);
        if !side.closed {
            side.closed = true;
            self.end(dir);
        }
    }

    /// Whether the flow's bytes are still of use here: false once detection is over (the
    /// other direction's too) and no parser reads them (a protocol detected but not parsed,
    /// or one that lost its place).
    pub fn wants_data(&self) -> bool {
        match &self.stage {
            Stage::Idle => false,
            Stage::Detect(_) => true,
            Stage::Parse(p) => p.wants_data() || matches!(self.other, OtherSide::Waiting { .. }),
        }
    }

    /// Payload inspection should stop for this flow: its traffic went encrypted both ways (its
    /// protocol says so), unless its `encryption-handling` is `full`.
    pub fn no_inspection(&self) -> bool {
        self.encrypted().is_some_and(|e| e != Encryption::Full)
    }

    /// Its parser goes on reading to mark frames after encryption (frames
    /// are asked for and its protocol has frame types).
    pub fn frames_after_encryption(&self) -> bool {
        self.cfg.frames && self.parser().is_some_and(|p| !p.def.frames.is_empty())
    }

    /// The flow went encrypted and its `encryption-handling` says to bypass it.
    pub fn bypass_encrypted(&self) -> bool {
        self.encrypted() == Some(Encryption::Bypass)
    }

    /// The encryption handling in force, once the flow's traffic is encrypted.
    fn encrypted(&self) -> Option<Encryption> {
        match self.parser() {
            Some(Parser { def, p }) => p.inspection_done().then(|| {
                let at = crate::proto::index(def.name);
                at.and_then(|i| self.cfg.table_encryption.get(i).copied()).unwrap_or_default()
            }),
            _ => None,
        }
    }

    /// Transactions held, oldest first (ids growing).
    pub fn txs(&self) -> impl Iterator<Item = TxRef<'_>> + '_ {
        self.retired.iter().chain(self.parser()).flat_map(Parser::txs)
    }

    /// Marks files for the file store on behalf of signature `sid`: the
    /// files of transaction `tx` on the sides in `dirs`, or (with `tx`
    /// `None`) every file the flow carries from now on.
    pub fn store_files(&mut self, tx: Option<u64>, dirs: &[Direction], sid: u32) {
        let current = match &mut self.stage {
            Stage::Parse(p) => Some(&mut **p),
            _ => None,
        };
        for parser in self.retired.iter_mut().chain(current) {
            parser.p.store_files(tx, dirs, sid);
        }
    }

    /// Frees transactions with id < `id`.
    pub fn prune(&mut self, id: u64) {
        for p in &mut self.retired {
            p.prune(id);
        }
        self.retired.retain(Parser::has_txs);
        if let Stage::Parse(p) = &mut self.stage {
            p.prune(id);
        }
    }

    /// Parser anomaly events (Suricata names), drained.
    pub fn take_events(&mut self) -> Vec<AppEvent> {
        let mut events = mem::take(&mut self.events);
        if let Stage::Parse(p) = &mut self.stage {
            if events.is_empty() {
                return p.take_events();
            }
            events.extend(p.take_events());
        }
        events
    }

    /// Transactions the flow has had, tunnels included (EVE flow `tx_cnt`).
    pub fn tx_count(&self) -> u64 {
        match &self.stage {
            Stage::Parse(p) => p.next_tx_id(),
            Stage::Detect(_) | Stage::Idle => self.next_id,
        }
    }

    /// Errors the error policy applies to so far ([`AppCounters::policy_errors`]), read
    /// for every packet (without assembling the other counters).
    pub fn policy_errors(&self) -> u64 {
        self.counters.policy_errors
    }

    /// Counters for stats.
    pub fn counters(&self) -> AppCounters {
        let mut c = self.counters;
        c.txs_evicted += self.parser().map_or(0, Parser::txs_evicted);
        c
    }

    /// Bytes of `dir` held for the parser: an unfinished unit, at most
    /// [`AppConfig::max_pending`] between calls.
    pub fn pending(&self, dir: Direction) -> usize {
        self.sides.get(dir).held.len()
    }

    fn parser(&self) -> Option<&Parser> {
        match &self.stage {
            Stage::Parse(p) => Some(p),
            Stage::Detect(_) | Stage::Idle => None,
        }
    }

    /// Acts on what detection concluded; `then` are the bytes of the call that decided, which
    /// detection did not take.
    fn decide(&mut self, verdict: Verdict, then: Option<(Direction, &[u8])>) {
        match verdict {
            Verdict::Undecided => {}
            Verdict::Failed => self.give_up(),
            Verdict::Found(proto) => {
                let Stage::Detect(det) = mem::replace(&mut self.stage, Stage::Idle) else { return };
                // The other direction is judged on its own, on the flow's
                // first detection (not again inside a tunnel).
                let other = match then {
                    Some((dir, _)) if self.transport == Transport::Tcp && self.tunnels == 0 => {
                        let (failed, kept) = det.side(dir.flip());
                        Some(OtherSide::start(dir, proto, failed, kept, self.probes, self.cfg.detect_limit))
                    }
                    _ => None,
                };
                self.start(proto);
                self.replay(det.into_replay());
                if let Some((dir, data)) = then {
                    self.feed(dir, data);
                }
                // Set after the replay, which feeds the bytes already judged.
                if let Some((side, raised)) = other {
                    self.other = side;
                    self.raise(raised);
                }
            }
        }
    }

    fn give_up(&mut self) {
        self.stage = Stage::Idle;
        self.counters.detect_failed += 1;
        // Inside a tunnel too, as Suricata does: the original protocol is remembered apart.
        self.proto = AppProto::Failed;
        self.drop_held();
    }

    /// Nothing will parse what the sides held.
    fn drop_held(&mut self) {
        for side in [&mut self.sides.to_server, &mut self.sides.to_client] {
            side.held = Vec::new();
            side.want = 0;
        }
    }

    fn start(&mut self, proto: AppProto) {
        let first = self.next_id;
        let parser = match proto {
            AppProto::Plugin(name) => match crate::proto::find(name) {
                Some(def) => self.new_parser(def, first, None),
                None => return self.give_up(),
            },
            AppProto::Unknown | AppProto::Failed => return self.give_up(),
        };
        self.proto = proto;
        self.stage = Stage::Parse(Box::new(parser));
    }

    fn new_parser(&self, def: &'static ProtoDef, first_tx_id: u64, expected: Option<&Expected>) -> Parser {
        let at = crate::proto::index(def.name);
        let options = at.and_then(|i| self.cfg.table_options.get(i).copied()).unwrap_or(0);
        let settings = at.and_then(|i| self.cfg.table_settings.get(i)).map_or(&[][..], Vec::as_slice);
        let init = ParserInit {
            app: &self.cfg,
            transport: self.transport,
            first_tx_id,
            options,
            settings,
            expected,
            client: self.client,
        };
        // `enabled: detection-only`: the flow is named, nothing is parsed (as in Suricata).
        if at.is_some_and(|i| i < 64 && self.cfg.table_detection_only & (1 << i) != 0) {
            return Parser { def, p: crate::proto::NotParsed::boxed(&init) };
        }
        Parser { def, p: (def.new_parser)(&init) }
    }

    /// A flow another one announced ([`crate::proto::Expectation`]): it
    /// speaks `def` from its first byte, no detection asked, and its parser
    /// is handed what the announcing flow said of it.
    pub fn expected(cfg: &AppConfig, transport: Transport, def: &'static ProtoDef, data: &Expected) -> AppFlow {
        let mut flow = AppFlow::new(cfg, transport, 0, 0);
        let parser = flow.new_parser(def, 0, Some(data));
        flow.proto = def.app_proto();
        flow.stage = Stage::Parse(Box::new(parser));
        flow
    }

    /// Frames handed over since the last call ([`crate::frames`]): whole,
    /// or cut by the end of their direction or a gap.
    pub fn take_frames(&mut self, out: &mut Vec<Frame>) {
        self.frames.take(out);
    }

    /// Frames whose bytes were not all kept, and frames not recorded.
    pub fn frames_lost(&self) -> (u64, u64) {
        (self.frames.truncated, self.frames.refused)
    }

    /// Flows the parser announced since the last call.
    pub fn take_expectations(&mut self, out: &mut Vec<crate::proto::Expectation>) {
        if let Stage::Parse(p) = &mut self.stage {
            p.p.take_expectations(out);
        }
    }

    /// Hands the chosen parser what detection kept, in the order it came.
    fn replay(&mut self, replay: Replay) {
        self.counters.bytes_dropped += replay.skipped;
        for step in replay.steps() {
            match step {
                Step::Data(dir, bytes) => self.feed(dir, bytes),
                Step::Gap(dir, len) => self.lose(dir, len),
                Step::Close(dir) => self.end(dir),
            }
        }
    }

    /// Offers `data`, after what `dir` held, to the parser of a detected flow.
    fn parse(&mut self, dir: Direction, data: &[u8]) {
        let Stage::Parse(parser) = &mut self.stage else { return };
        let side = self.sides.get_mut(dir);
        let counters = &mut self.counters;
        if side.stopped {
            counters.bytes_dropped += data.len() as u64;
            return;
        }
        if self.transport == Transport::Udp {
            // Datagrams are independent: one that is not DNS does not spoil the next.
            if parser.parse(dir, data) == ParseResult::Error {
                counters.parser_errors += 1;
                counters.policy_errors += 1;
            }
            if self.cfg.frames {
                let p = &mut parser.p;
                self.frames.marked(parser.def.name, dir, None, data, &mut |out| p.take_frames(out));
            }
            return;
        }
        let parsed = self.parsed.get_mut(dir);
        let offset = *parsed;
        *parsed += data.len() as u64;
        let end = *parsed;
        let name = parser.def.name;
        let mut frames = self.cfg.frames.then_some(&mut self.frames);
        if let Some(f) = frames.as_deref_mut() {
            f.pass(name, dir, offset, data);
        }
        if self.cfg.simulate_error_at.get(dir).is_some_and(|at| offset >= at) {
            counters.parser_errors += 1;
            counters.bytes_dropped += (side.held.len() + data.len()) as u64;
            return self.fail();
        }
        let result = if side.held.is_empty() {
            // The common case: nothing held, nothing copied unless the parser leaves a tail.
            let result = parser.parse(dir, data);
            if let Some(f) = frames {
                let p = &mut parser.p;
                f.marked(name, dir, Some(offset), data, &mut |out| p.take_frames(out));
            }
            if parser.tunnel() {
                let rest = unparsed(result, data).to_vec();
                return self.enter_tunnel(dir, rest);
            }
            if let ParseResult::Incomplete { consumed, needed } = result {
                side.held.extend_from_slice(data.get(consumed..).unwrap_or_default());
                side.want = needed;
            }
            result
        } else {
            side.held.extend_from_slice(data);
            if data.len() < side.want {
                // Still short of what the unit needs: parsing it again would only find that out.
                side.want -= data.len();
                ParseResult::Incomplete { consumed: 0, needed: side.want }
            } else {
                let result = parser.parse(dir, &side.held);
                if let Some(f) = frames {
                    let p = &mut parser.p;
                    f.marked(name, dir, Some(end - side.held.len() as u64), &side.held, &mut |out| p.take_frames(out));
                }
                if parser.tunnel() {
                    let rest = unparsed(result, &side.held).to_vec();
                    side.clear();
                    return self.enter_tunnel(dir, rest);
                }
                match result {
                    ParseResult::Incomplete { consumed, needed } => {
                        side.held.drain(..consumed.min(side.held.len()));
                        side.want = needed;
                    }
                    ParseResult::Done | ParseResult::Error => side.clear(),
                }
                result
            }
        };
        if result == ParseResult::Error {
            counters.parser_errors += 1;
            self.fail();
        } else if side.held.len() > self.cfg.max_pending {
            let lost = side.held.len() as u64;
            side.clear();
            counters.pending_overflows += 1;
            counters.bytes_dropped += lost;
            parser.skip(dir, lost);
        }
    }

    /// The parser renamed the flow ([`ProtoParser::renamed`]: HTTP/2 that
    /// carried DNS is `doh2`): it reads on under the new name, and the old
    /// one is `app_proto_orig`.
    fn follow_rename(&mut self) {
        let Stage::Parse(parser) = &mut self.stage else { return };
        let Some(def) = parser.p.renamed().and_then(crate::proto::find) else { return };
        if std::ptr::eq(def, parser.def) {
            return;
        }
        parser.def = def;
        self.orig = Some(self.proto);
        self.proto = def.app_proto();
    }

    /// The parser failed: as Suricata disables the app layer of the session, neither
    /// direction is parsed any more (its transactions stay, to be inspected and logged).
    fn fail(&mut self) {
        self.counters.policy_errors += 1;
        for side in [&mut self.sides.to_server, &mut self.sides.to_client] {
            side.stopped = true;
            side.clear();
        }
    }

    /// Bytes of `dir` did not arrive: a capture gap, or bytes detection could not keep.
    fn lose(&mut self, dir: Direction, len: u64) {
        if self.transport == Transport::Udp {
            return;
        }
        let verdict = match &mut self.stage {
            Stage::Idle => return,
            Stage::Detect(det) => det.gap(dir, len),
            Stage::Parse(parser) => {
                *self.parsed.get_mut(dir) += len;
                self.frames.lost(dir, len);
                let side = self.sides.get_mut(dir);
                if !side.stopped {
                    // An unfinished unit cut by the gap can never be finished.
                    self.counters.bytes_dropped += side.held.len() as u64;
                    side.clear();
                    let goes_on = parser.p.on_gap(dir, len);
                    if !goes_on {
                        self.counters.gap_errors += 1;
                        self.fail();
                    }
                }
                return;
            }
        };
        self.decide(verdict, None);
    }

    /// `dir` will send nothing more.
    fn end(&mut self, dir: Direction) {
        if self.transport == Transport::Udp {
            return;
        }
        let raised = self.other.close(dir);
        self.raise(raised);
        let verdict = match &mut self.stage {
            Stage::Idle => return,
            Stage::Detect(det) => det.close(dir),
            Stage::Parse(parser) => {
                let side = self.sides.get_mut(dir);
                let held = mem::take(&mut side.held);
                side.clear();
                // What a parser held is final now (HTTP: a last header line, a body up to the close).
                if side.stopped {
                    self.counters.bytes_dropped += held.len() as u64;
                } else {
                    parser.p.close(dir, &held);
                    if self.cfg.frames {
                        let end = *self.parsed.get(dir);
                        let p = &mut parser.p;
                        self.frames.marked(parser.def.name, dir, Some(end - held.len() as u64), &held, &mut |out| {
                            p.take_frames(out)
                        });
                    }
                }
                self.frames.end(dir);
                if parser.tunnel() {
                    self.enter_tunnel(dir, Vec::new());
                }
                return;
            }
        };
        self.decide(verdict, None);
    }

    /// The HTTP parser saw the connection turn into a tunnel; `rest` are the bytes of `dir`
    /// after the switch. The bytes the other direction held came before them.
    fn enter_tunnel(&mut self, dir: Direction, rest: Vec<u8>) {
        let Stage::Parse(mut parser) = mem::replace(&mut self.stage, Stage::Idle) else { return };
        let known = parser.p.tunnel_to().and_then(crate::proto::find).filter(|d| {
            crate::proto::index(d.name).is_some_and(|i| i < 64 && self.cfg.table_enabled & (1u64 << i) != 0)
        });
        let handover = parser.p.handover();
        self.orig = Some(self.proto);
        self.events.extend(parser.take_events());
        self.counters.txs_evicted += parser.txs_evicted();
        self.next_id = parser.next_tx_id();
        self.retired.push(*parser);
        let other = dir.flip();
        let early = mem::take(&mut self.sides.get_mut(other).held);
        if self.tunnels >= MAX_TUNNELS {
            self.sides.get_mut(other).clear();
            return;
        }
        self.tunnels += 1;
        self.counters.tunnels += 1;
        match (known, handover) {
            (Some(def), Some(h)) => {
                let parser = self.new_parser(def, self.next_id, Some(&h));
                self.proto = def.app_proto();
                self.stage = Stage::Parse(Box::new(parser));
            }
            (Some(def), None) => self.start(def.app_proto()),
            (None, _) => self.stage = Stage::Detect(Detector::tunnel(self.probes, self.cfg.detect_limit)),
        }
        for (d, bytes) in [(other, early), (dir, rest)] {
            let side = self.sides.get_mut(d);
            side.clear();
            let stopped = mem::take(&mut side.stopped);
            let closed = side.closed;
            if stopped {
                // Where that direction stands in the tunnel is unknown: it starts with a gap.
                self.lose(d, 0);
            }
            self.feed(d, &bytes);
            if closed {
                self.end(d);
            }
        }
    }
}
