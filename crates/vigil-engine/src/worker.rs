//! One worker's pipeline for a decoded packet: IP reassembly, the flow
//! table, TCP stream tracking, detection, and the records they produce.
//! The packet clock is the packet's own timestamp throughout.

use crate::app::{AppStats, FlowApp};
use crate::detector::{apply_requests, Detector};
use crate::error::EngineError;
use crate::outputs::{FlowAtAlert, Outputs};
use crate::setup::Setup;
use crate::simulate::Simulation;
use crate::tcp::{pseudo_packet, FlowExt};
use std::sync::Arc;
use vigil_applayer::{AppConfig, AppFlow, Transport};
use vigil_config::ExceptionTarget;
use vigil_decode::{DecodeConfig, Decoder, Packet, PacketSource};
use vigil_defrag::Defragmenter;
use vigil_detect::compile::{DirProto, FlowInfo};
use vigil_detect::engine::firewall::{FwApp, PacketHook};
use vigil_detect::host_state::Hosts;
use vigil_detect::{AppInput, DetectScratch, StreamInput, TxInput};
use vigil_flow::{Flow, FlowHandle, FlowState, FlowTable};
use vigil_output::DropReason;
use vigil_stream::{Segment, StreamCtx, StreamEvent, StreamEventSet, TcpState};
use vigil_types::{AppProto, Direction, LinkType, PerDir, Timestamp};

/// Reassembled datagrams may themselves carry fragments (a fragmented
/// tunnel holding fragments): this many levels are reassembled.
const MAX_REASSEMBLY_DEPTH: usize = 3;

pub(crate) struct Worker {
    pub decoder: Decoder,
    pub defrag: Defragmenter,
    pub flows: FlowTable<FlowExt>,
    pub stream: StreamCtx,
    /// Stream events seen, by [`StreamEvent::ALL`] index.
    pub stream_events: [u64; StreamEvent::ALL.len()],
    /// Per nesting level, reused across packets: the datagram reassembly
    /// writes, and the frame it is decoded from (the completing fragment's
    /// headers before IP, then the datagram, as Suricata rebuilds it).
    buffers: Vec<(Vec<u8>, Vec<u8>)>,
    /// Reused for the stream bytes a packet brings to detection.
    stream_buf: Vec<u8>,
    /// Frames handed over on the packet being processed (reused).
    frames: Vec<vigil_applayer::Frame>,
    /// The application layer's limits; `None` when it is off.
    app_cfg: Option<AppConfig>,
    /// Reused for the stream bytes given to the application layer.
    app_buf: Vec<u8>,
    pub app_stats: AppStats,
    /// Decodes pseudo packets without touching the capture's counters.
    pseudo_decoder: Decoder,
    /// The time flow records and pseudo packets are stamped with: the
    /// packet in hand's, or the capture clock's when later.
    pub now: Timestamp,
    /// What flows and datagrams time out by, when no reader keeps it.
    clock: vigil_flow::CaptureClock,
    pub detector: Detector,
    /// Limits pretended reached (`--simulate-packet-*`).
    simulate: Simulation,
    /// Host tags, and what tagging did.
    pub tags: crate::tag::Tags,
    /// `stream.bypass`: a session whose directions both reached the
    /// reassembly depth is bypassed.
    stream_bypass: bool,
    /// Packets and bytes of bypassed flows, after their bypass
    /// (`flow_bypassed.local_pkts`, `flow_bypassed.local_bytes`).
    pub bypassed: (u64, u64),
    /// IPS: packets let through and dropped by threat detection
    /// (`ips.accepted`, `ips.blocked`).
    pub ips_verdicts: (u64, u64),
    /// How flows ended, beyond what the flow table knows.
    pub flow_ends: crate::stats::FlowEnds,
    /// The highest `memcap.pressure` a stats record showed.
    pub pressure_max: std::cell::Cell<u64>,
    /// With a `tcp-data` output: the stream pieces given to the parsers
    /// since they were last written.
    pub tcp_tap: Option<Vec<(Direction, Vec<u8>)>>,
    /// Flows announced by other flows, shared by the workers.
    pub expect: std::sync::Arc<crate::expect::Expectations>,
}

/// A reader's capture clock at a frame: what flows time out by, and the
/// time what that frame makes is stamped with (the frame's own, when later).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ClockAt {
    pub clock: Timestamp,
    pub stamp: Timestamp,
}

impl ClockAt {
    /// Observes a frame's time on `clock`.
    pub(crate) fn observe(clock: &mut vigil_flow::CaptureClock, ts: Timestamp) -> ClockAt {
        let now = clock.observe(ts);
        ClockAt { clock: now, stamp: now.max(ts) }
    }

    /// A time to trust as it is (live: the kernel's receive time, or the
    /// wall clock while no packet comes).
    pub(crate) fn at(ts: Timestamp) -> ClockAt {
        ClockAt { clock: ts, stamp: ts }
    }

    /// The end of the capture: no frame follows.
    pub(crate) fn end(clock: &vigil_flow::CaptureClock) -> ClockAt {
        ClockAt { clock: clock.end(), stamp: clock.end() }
    }
}

/// What tracking a TCP packet's session found.
#[derive(Default)]
struct Tracked {
    /// The payload went into the stream.
    in_stream: bool,
    /// The range of the packet's direction ready for raw inspection (its bytes in `stream_buf`).
    ready: Option<(u64, u64)>,
    /// Where the bytes of `ready` not inspected before begin (inline, `ready`
    /// starts a window earlier).
    fresh_from: u64,
    /// Whether the session was established before the packet.
    established: Option<bool>,
    /// Encryption started with this packet: what came before is inspected now, nothing after.
    encrypted_now: bool,
    /// The stream events the packet raised that rules and EVE see.
    events: StreamEventSet,
    /// The flow state the session is in after the packet.
    flow_state: Option<FlowState>,
}

/// The flow state of a TCP session's state, as Suricata sets it: new until
/// the handshake completes, established until the last FIN's ACK is awaited
/// (the flow then closes, timing out sooner).
fn flow_state_of(s: TcpState) -> FlowState {
    match s {
        TcpState::SynSent | TcpState::SynRecv => FlowState::New,
        TcpState::Established | TcpState::FinWait1 | TcpState::FinWait2 | TcpState::Closing | TcpState::CloseWait => {
            FlowState::Established
        }
        TcpState::LastAck | TcpState::TimeWait | TcpState::Closed => FlowState::Closed,
    }
}

/// The flow as an alert describes it, with the protocol it spoke before a
/// change (Suricata's alerts name it `app_proto_orig`).
fn at_alert(f: &Flow<FlowExt>) -> FlowAtAlert {
    FlowAtAlert { orig: f.ext.app.as_deref().and_then(|a| a.layer.orig_proto()), ..FlowAtAlert::of(f) }
}

/// `established`: what the TCP session said before this packet, when it is tracked.
fn flow_info(f: &Flow<FlowExt>, dir: Direction, established: Option<bool>) -> FlowInfo {
    let app = f.ext.app.as_deref();
    FlowInfo {
        to_server: dir == Direction::ToServer,
        established: established.unwrap_or(f.state == FlowState::Established),
        tracked: f.ext.tcp.is_some(),
        app_proto: app.map_or(AppProto::Unknown, |a| a.layer.proto()),
        dir_proto: app.map_or_else(PerDir::default, |a| PerDir {
            to_server: DirProto::of(a.layer.dir_proto(Direction::ToServer)),
            to_client: DirProto::of(a.layer.dir_proto(Direction::ToClient)),
        }),
        no_payload: app.is_some_and(|a| a.raw_off),
        stream_events: StreamEventSet::default(),
        stream_size: f.ext.tcp.as_deref().map(stream_sizes).unwrap_or_default(),
        age_secs: f.last.secs().saturating_sub(f.start.secs()).max(0) as u64,
        detect_events: 0,
        pkts: f.pkts,
        bytes: f.bytes,
    }
}

/// The stream pieces a flow's parser was just given, for the Lua scripts
/// streaming TCP: a side's first piece opens it.
fn lua_stream_pieces(
    f: &mut Flow<FlowExt>,
    p: Option<&Packet<'_>>,
    pieces: &[(Direction, Vec<u8>)],
    outputs: &mut Outputs,
) {
    let lf = lua_flow(f);
    for (dir, data) in pieces {
        let side = usize::from(*dir == Direction::ToClient);
        let open = match f.ext.app.as_deref_mut() {
            Some(a) => !std::mem::replace(&mut a.streamed[side], true),
            None => false,
        };
        let args = vigil_detect::lua::StreamArgs {
            data,
            open,
            close: false,
            to_server: *dir == Direction::ToServer,
            tx_id: None,
        };
        outputs.lua_stream(p, Some(&lf), &args);
    }
}

/// The end of each side a Lua streaming script was given pieces of.
fn lua_stream_close(f: &mut Flow<FlowExt>, outputs: &mut Outputs) {
    let lf = lua_flow(f);
    let Some(a) = f.ext.app.as_deref_mut() else { return };
    for (side, dir) in [Direction::ToServer, Direction::ToClient].into_iter().enumerate() {
        if std::mem::take(&mut a.streamed[side]) {
            let args = vigil_detect::lua::StreamArgs {
                data: &[],
                open: false,
                close: true,
                to_server: dir == Direction::ToServer,
                tx_id: None,
            };
            outputs.lua_stream(None, Some(&lf), &args);
        }
    }
}

/// The flow as Lua output scripts see it (`suricata.flow`).
fn lua_flow(f: &Flow<FlowExt>) -> vigil_detect::lua::LuaFlow {
    let app = f.ext.app.as_deref();
    let side = |d| app.and_then(|a| a.layer.side_proto(d));
    let sides = crate::outputs::LuaSides { ts: side(Direction::ToServer), tc: side(Direction::ToClient) };
    let at = FlowAtAlert { orig: app.and_then(|a| a.layer.orig_proto()), ..FlowAtAlert::of(f) };
    crate::outputs::lua_flow(&at, f.key.proto, f.last, app.map(|a| a.layer.proto()), sides)
}

/// Each side's `stream_size`, as detection sees it.
fn stream_sizes(ssn: &vigil_stream::TcpSession) -> PerDir<u32> {
    PerDir { to_server: ssn.stream_size(Direction::ToServer), to_client: ssn.stream_size(Direction::ToClient) }
}

/// The flow's endpoints and the packet time, for transaction signatures;
/// the frames handed over with the packet and, with them, the flow's transactions.
fn app_input<'a>(
    f: &Flow<FlowExt>,
    txs: &'a [TxInput<'a>],
    now: Timestamp,
    frames: &'a [vigil_applayer::Frame],
    frame_txs: &'a [vigil_applayer::TxRef<'a>],
) -> AppInput<'a> {
    AppInput {
        txs,
        client: (f.key.src_ip(), f.key.sport),
        server: (f.key.dst_ip(), f.key.dport),
        now_secs: now.secs(),
        frames,
        frame_txs,
    }
}

/// The frames of `f` handed over since the last call, into `out`.
fn take_frames(f: &mut Flow<FlowExt>, out: &mut Vec<vigil_applayer::Frame>) {
    out.clear();
    if let Some(a) = f.ext.app.as_deref_mut() {
        a.layer.take_frames(out);
    }
}

impl Worker {
    /// One of `workers` workers: the memcaps and the flow table are shared
    /// out, so together they hold what the configuration allows.
    pub(crate) fn new(setup: &Setup, workers: usize) -> Self {
        let n = workers.max(1) as u64;
        let flow = vigil_flow::FlowConfig {
            memcap: setup.flow.memcap / n,
            hash_size: (setup.flow.hash_size / n as u32).max(1),
            ..setup.flow.clone()
        };
        let defrag = vigil_defrag::DefragConfig { memcap: setup.defrag.memcap / n, ..setup.defrag.clone() };
        let stream = vigil_stream::StreamConfig {
            memcap: setup.stream.memcap / n,
            reassembly_memcap: setup.stream.reassembly_memcap / n,
            ..setup.stream.clone()
        };
        Worker {
            decoder: Decoder::new(setup.decode.clone()),
            // Random seeds: flow and fragment keys are attacker-chosen.
            defrag: Defragmenter::new(defrag, ahash::RandomState::new()),
            flows: FlowTable::new(flow, ahash::RandomState::new()),
            stream: StreamCtx::new(stream),
            stream_events: [0; StreamEvent::ALL.len()],
            buffers: (0..MAX_REASSEMBLY_DEPTH).map(|_| (Vec::new(), Vec::new())).collect(),
            stream_buf: Vec::new(),
            frames: Vec::new(),
            app_cfg: setup.app.clone(),
            expect: setup.expectations.clone(),
            app_buf: Vec::new(),
            app_stats: AppStats::default(),
            pseudo_decoder: Decoder::new(DecodeConfig { validate_checksums: false, ..DecodeConfig::default() }),
            now: Timestamp::default(),
            clock: vigil_flow::CaptureClock::default(),
            simulate: setup.simulate,
            detector: Detector {
                rules: setup.rules.clone(),
                scratch: DetectScratch::inline(setup.ips).with_hosts(Hosts::shared(setup.hosts.clone())),
                ips: setup.ips,
                alerts: 0,
                suppressed: 0,
                no_log: Vec::new(),
                store_files: Vec::new(),
                tls_store: false,
                bypass_flow: false,
                verdict_drop: false,
                fw: Default::default(),
                fw_blocked: false,
                respond: false,
                responses: Vec::new(),
                exceptions: crate::exception::ExceptionState::new(
                    &setup.config.exceptions,
                    setup.ips,
                    setup.stream.midstream,
                    setup.config.stats.exception_policy_per_app_proto_errors,
                ),
                drop_reasons: [0; DropReason::ALL.len()],
                urgent_drop: false,
                new_tags: Vec::new(),
                runtime_log: Some(Arc::new((setup.config.logging.clone(), setup.log_dir.clone()))),
            },
            tags: crate::tag::Tags::default(),
            stream_bypass: setup.config.stream.bypass,
            bypassed: (0, 0),
            ips_verdicts: (0, 0),
            flow_ends: crate::stats::FlowEnds::default(),
            pressure_max: std::cell::Cell::new(0),
            // Lua output scripts may stream TCP flows: their pieces are kept too.
            tcp_tap: (!setup.config.outputs.tcp_data.is_empty() || !setup.config.outputs.lua.is_empty()).then(Vec::new),
        }
    }

    /// Takes host state (thresholds, host bits) in capture order, as worker
    /// `me` of an offline run with `seq` (see [`vigil_detect::host_state`]).
    pub(crate) fn in_order(&mut self, seq: Arc<vigil_detect::host_state::Sequencer>, me: usize) {
        self.detector.scratch.hosts = self.detector.scratch.hosts.clone().in_order(seq, me);
    }

    /// Inspects from now on with `rules`. Flows keep their flowbits (under
    /// the new engine's ids, by name); the thresholds' state is by signature
    /// id and stays.
    pub(crate) fn swap_rules(&mut self, rules: Arc<crate::rules::LoadedRules>) {
        // Scratch space is sized for the engine it served; its counter and
        // the host state (which outlives a reload, as Suricata's host table
        // does) stay.
        let scratch = self.detector.scratch.carried_over();
        if let (Some(old), Some(new)) = (self.detector.rules.engine.as_deref(), rules.engine.as_deref()) {
            let (bits, ints) = (new.flowbit_ids_from(old), new.flowint_ids_from(old));
            for f in self.flows.iter_mut() {
                f.ext.detect.bits = f.ext.detect.bits.remapped(&bits);
                f.ext.detect.ints = f.ext.detect.ints.remapped(&ints);
            }
        }
        self.detector.rules = rules;
        self.detector.scratch = scratch;
    }

    /// Alerts dropped because one packet had too many.
    pub(crate) fn alert_queue_overflow(&self) -> u64 {
        self.detector.scratch.alerts_over_limit
    }

    /// Runs a captured, decoded packet through reassembly and the flow
    /// table, writes its records, and logs flows that ended meanwhile.
    /// `clock`: the capture clock of a reader that sees every frame;
    /// `None`: this worker sees them all and keeps its own.
    pub(crate) fn packet(
        &mut self,
        p: &mut Packet<'_>,
        clock: Option<ClockAt>,
        outputs: &mut Outputs,
    ) -> Result<(), EngineError> {
        self.detector.verdict_drop = false;
        self.detector.fw_blocked = false;
        self.detector.responses.clear();
        self.detector.exceptions.clear();
        self.detector.new_tags.clear();
        // Flows and datagrams time out by the capture's clock, which one
        // packet's broken time cannot move on its own; what the packet
        // makes (flows it ends, pseudo packets) carries its own time.
        let at = clock.unwrap_or_else(|| ClockAt::observe(&mut self.clock, p.ts));
        self.now = at.stamp;
        self.defrag.expire(at.clock);
        self.flows.tick(at.clock);
        self.inspect(p, 0, outputs)?;
        // What the IPS let through and stopped; a packet the firewall
        // stopped never reached threat detection.
        if self.detector.ips && !self.detector.fw_blocked {
            if self.detector.verdict_drop {
                self.ips_verdicts.1 += 1;
            } else {
                self.ips_verdicts.0 += 1;
            }
        }
        self.log_ended(outputs)
    }

    /// The capture's clock reached `now` (autofp: told by the reader, as
    /// this worker may see none of the packets that moved it): flows and
    /// datagrams whose time passed end, as they would on one thread.
    /// `at`: the capture clock ([`vigil_flow::CaptureClock`]) and what the
    /// frame that moved it stamps its records with, as [`Worker::packet`]
    /// has them when it sees that frame itself.
    pub(crate) fn tick(&mut self, at: ClockAt, outputs: &mut Outputs) -> Result<(), EngineError> {
        self.now = at.stamp;
        self.defrag.expire(at.clock);
        self.flows.tick(at.clock);
        self.log_ended(outputs)
    }

    /// How full the fullest of this worker's memcaps is, in percent (each
    /// worker has its share of every memcap, so the one closest to its
    /// limit is the one that will refuse first).
    pub(crate) fn memcap_pressure(&self) -> u64 {
        let pct = |used: u64, cap: u64| (used.saturating_mul(100)).checked_div(cap).unwrap_or(0);
        [
            pct(self.flows.counters().memuse, self.flows.config().memcap),
            pct(self.stream.ssn_memuse, self.stream.cfg.memcap),
            pct(self.stream.reassembly_memuse, self.stream.cfg.reassembly_memcap),
            pct(self.defrag.counters().memuse, self.defrag.config().memcap),
        ]
        .into_iter()
        .max()
        .unwrap_or(0)
    }

    /// Tracks the packet's TCP session: returns whether its payload went
    /// into the stream, the stream range now ready for inspection (its
    /// bytes in `stream_buf`), and whether the session was established
    /// when the packet came (a packet that closes it still belongs to it,
    /// as in Suricata). A session picked up from the server's SYN/ACK turns
    /// the flow round first, and `h` with it.
    fn track(&mut self, p: &Packet<'_>, h: &mut FlowHandle) -> Tracked {
        let none = Tracked::default();
        let Some(mut seg) = Segment::from_packet(p, h.dir) else { return none };
        if p.checksum.l4_bad {
            self.stream.counters.invalid_checksum += 1;
        }
        let Some(f) = self.flows.get_mut(*h) else { return none };
        // An inline drop or a bypass ends the session's tracking, as in
        // Suricata: nothing more of it is reassembled or parsed.
        if (f.ext.detect.dropped && self.detector.ips) || f.ext.detect.bypassed {
            return none;
        }
        let sim = self.simulate;
        if f.ext.tcp.is_none() {
            if h.dir == Direction::ToServer && self.stream.starts_from_server(&seg) {
                f.reverse();
                h.dir = Direction::ToClient;
                seg.dir = Direction::ToClient;
            }
            let memcap_drops = self.stream.counters.ssn_memcap_drop;
            self.stream.simulate_ssn_memcap = Simulation::hits(sim.tcp_ssn_memcap, p.pcap_cnt);
            f.ext.tcp = self.stream.start(&seg).map(Box::new);
            self.stream.simulate_ssn_memcap = false;
            if self.stream.counters.ssn_memcap_drop > memcap_drops {
                self.detector.exceptions.met(ExceptionTarget::StreamMemcap);
            } else if seg.flags & vigil_wire::tcp::flags::RST == 0 && seg.flags & vigil_wire::tcp::flags::ACK != 0 {
                // A session's first packet is not a SYN: picked up mid-stream
                // when `stream.midstream` allows it, else not tracked; either
                // way the midstream policy applies (Suricata's order).
                self.detector.exceptions.met(ExceptionTarget::StreamMidstream);
            }
            if let (Some(ssn), Some(_), None) = (f.ext.tcp.as_deref_mut(), &self.app_cfg, &f.ext.app) {
                ssn.app_enabled = true;
            }
        }
        // A session picked up mid-stream whose first data the "client"
        // sends is a server's answer had its ends the wrong way round: it
        // is turned round before that data goes into a stream, so the data
        // lands in the server's and the parser sees a response.
        let answers = h.dir == Direction::ToServer
            && !seg.payload.is_empty()
            && f.ext.app.is_none()
            && f.ext.tcp.as_deref().is_some_and(|s| s.midstream && s.untouched())
            && self.app_cfg.as_ref().is_some_and(|c| vigil_applayer::detect::answers_first(c, seg.payload));
        if answers {
            f.reverse();
            f.ext.detect.reverse();
            if let Some(ssn) = f.ext.tcp.as_deref_mut() {
                ssn.reverse();
            }
            h.dir = Direction::ToClient;
            seg.dir = Direction::ToClient;
        }
        let Some(ssn) = f.ext.tcp.as_deref_mut() else { return none };
        let before = ssn.state;
        let mut events = Vec::new();
        let segment_drops = self.stream.counters.segment_memcap_drop;
        self.stream.simulate_reassembly_memcap = Simulation::hits(sim.tcp_reassembly_memcap, p.pcap_cnt);
        let handled = ssn.handle(&mut self.stream, &seg, &mut |e| events.push(e));
        self.stream.simulate_reassembly_memcap = false;
        self.detector.urgent_drop = handled.urgent_drop;
        // The app layer's state comes with the session's first data: a flood
        // of sessions that never send any (SYNs) allocates none of it.
        if let (true, true, Some(cfg), None) = (handled.stream_added, ssn.app_enabled, &self.app_cfg, &f.ext.app) {
            // A flow another one announced (an FTP data channel) speaks what was announced.
            let met = self.expect.meet(&f.key, p.ts).filter(|m| {
                vigil_applayer::proto::index(m.proto.name).is_some_and(|i| cfg.table_enabled & (1 << i) != 0)
            });
            let app = match met {
                Some(m) => {
                    let mut app = FlowApp::new(AppFlow::expected(cfg, Transport::Tcp, m.proto, &m.data));
                    app.parent = Some(m.parent);
                    app
                }
                None => FlowApp::new(
                    AppFlow::new(cfg, Transport::Tcp, f.key.sport, f.key.dport).with_client(f.key.src_ip()),
                ),
            };
            f.ext.app = Some(Box::new(app));
        }
        if self.stream.counters.segment_memcap_drop > segment_drops {
            self.detector.exceptions.met(ExceptionTarget::StreamReassemblyMemcap);
        }
        // The ACK completing the handshake is not yet of the established
        // session, unless it carries data (its ACK-only twin may have been
        // lost): Suricata's rule since 7.0.7.
        let completes_with_data =
            before == TcpState::SynRecv && ssn.state == TcpState::Established && !seg.payload.is_empty();
        let established = Some((before >= TcpState::Established && before < TcpState::Closed) || completes_with_data);
        let flow_state = Some(flow_state_of(ssn.state));
        let mut raised = StreamEventSet::default();
        for e in events {
            if let Some(i) = StreamEvent::ALL.iter().position(|&x| x == e) {
                self.stream_events[i] += 1;
            }
            if e.is_suricata() {
                raised.insert(e);
            }
        }
        let mut encrypted_now = false;
        if let Some(app) = f.ext.app.as_deref_mut() {
            let errors = app.layer.policy_errors();
            app.feed_tcp(ssn, &mut self.stream, false, &mut self.app_buf, self.tcp_tap.as_mut());
            if app.layer.policy_errors() > errors {
                self.detector.exceptions.met_app_error(app.layer.proto(), Transport::Tcp);
            }
            if app.raw_off {
                // Encrypted: nothing more is inspected, so nothing (beyond the
                // inline window, bounded by a chunk) is kept for it.
                let end = ssn.dirs.get(h.dir).seen_end;
                ssn.raw_done(&mut self.stream, h.dir, end);
                return Tracked { in_stream: handled.stream_added, established, events: raised, flow_state, ..none };
            }
            encrypted_now = app.layer.no_inspection();
        }
        // A reset ends the session: what was sent is inspected, acknowledged
        // or not; so is what came before encryption started.
        let ready = ssn.raw_ready(&mut self.stream, h.dir, ssn.reset || encrypted_now);
        let fresh_from = ready.map_or(0, |(start, _)| start);
        let ready = ready.map(|(start, end)| (ssn.raw_window(&self.stream, h.dir, start), end));
        if let Some((from, end)) = ready {
            self.stream_buf.clear();
            ssn.read(h.dir, from, end, &mut self.stream_buf);
        }
        Tracked {
            in_stream: handled.stream_added,
            ready,
            fresh_from,
            established,
            encrypted_now,
            events: raised,
            flow_state,
        }
    }

    fn inspect(&mut self, p: &mut Packet<'_>, depth: usize, outputs: &mut Outputs) -> Result<(), EngineError> {
        let root = depth == 0;
        // A fragment goes to reassembly before detection, as Suricata
        // defragments while decoding: its events (overlap, oversized, bad
        // length) are the fragment's own, for `decode-event` rules too.
        let mut defragged = None;
        if p.fragment {
            if let Some((mut datagram, frame)) = self.buffers.get_mut(depth).map(std::mem::take) {
                self.defrag.simulate_memcap(Simulation::hits(self.simulate.defrag_memcap, p.pcap_cnt));
                let o = self.defrag.handle(p, &mut datagram);
                self.defrag.simulate_memcap(false);
                if o.memcap {
                    self.detector.exceptions.met(ExceptionTarget::DefragMemcap);
                }
                for e in o.events.iter() {
                    p.events.push(e);
                    self.decoder.counters.event(e);
                }
                defragged = Some((o.reassembled, datagram, frame));
            }
        }
        if root && outputs.wants_arp() && p.ip.is_none() {
            outputs.arp(p)?;
        }
        // Firewall mode's `pre_flow` table: a packet it drops never reaches the flow table.
        let fw_pre = root && !p.fragment && self.detector.rules.firewall.is_some();
        if fw_pre && self.detector.fw_pre(PacketHook::PreFlow, p, None, None, None, outputs)? {
            if outputs.wants_lua_packets() {
                outputs.lua_packet(p, None);
            }
            return outputs.packet(p, StreamEventSet::default(), None);
        }
        // A fragment has no flow of its own, but the UDP tunnel it came in does.
        let flow_memcap = self.flows.counters().memcap;
        let simulated = root && Simulation::hits(self.simulate.flow_memcap, p.pcap_cnt);
        if simulated {
            self.flows.simulate_memcap(true);
        }
        let mut flow = self.flows.handle_packet(p, root);
        if simulated {
            self.flows.simulate_memcap(false);
        }
        if flow.is_none() && self.flows.counters().memcap > flow_memcap {
            self.detector.exceptions.met(ExceptionTarget::FlowMemcap);
        }
        if flow.and_then(|h| self.flows.get_mut(h)).is_some_and(|f| f.ext.detect.bypassed) {
            self.bypassed.0 += 1;
            self.bypassed.1 += p.data.len() as u64;
        }
        // Firewall mode's `pre_stream` table: a packet it drops never reaches its session.
        if let (Some(h), true) = (flow, fw_pre) {
            if let Some(f) = self.flows.get_mut(h) {
                let (info, at) = (flow_info(f, h.dir, None), at_alert(f));
                if self.detector.fw_pre(
                    PacketHook::PreStream,
                    p,
                    Some(info),
                    Some(&mut f.ext.detect),
                    Some(&at),
                    outputs,
                )? {
                    f.frozen |= f.ext.detect.dropped;
                    if outputs.wants_lua_packets() {
                        outputs.lua_packet(p, Some(&lua_flow(f)));
                    }
                    return outputs.packet(p, StreamEventSet::default(), Some(h.id));
                }
            }
        }
        let Tracked { in_stream, ready, fresh_from, established, encrypted_now, events, flow_state } =
            match flow.as_mut() {
                Some(h) => self.track(p, h),
                None => Tracked::default(),
            };
        if let (Some(h), Some(state)) = (flow, flow_state) {
            self.flows.set_state(h, state);
        }
        if let (Some(h), Some(tap)) = (flow, self.tcp_tap.as_mut().filter(|t| !t.is_empty())) {
            if let Some(f) = self.flows.get_mut(h).filter(|_| outputs.lua_streams(false)) {
                lua_stream_pieces(f, Some(p), tap, outputs);
            }
            let name = self.flows.get(h).map(data_flow_name).unwrap_or_default();
            outputs.tcp_data(&name, tap.drain(..))?;
        }
        let mut detect_events = 0u8;
        if let Some(h) = flow {
            self.feed_udp(p, h);
            // Flows this one announced (FTP data channels); no allocation when none.
            let mut announced = Vec::new();
            if let Some(a) = self.flows.get_mut(h).and_then(|f| f.ext.app.as_deref_mut()) {
                if let Some(parent) = a.parent.take() {
                    outputs.set_parent(h.id, parent);
                }
                a.layer.take_expectations(&mut announced);
                self.app_stats.flow(a);
                // Drained every packet, logged or not, so a long hostile flow
                // cannot pile them up (`app-layer-event` rules read the
                // transactions' own event bits, not this queue; protocol
                // detection's events are the packet's, kept for its rules).
                let events = a.layer.take_events();
                if !events.is_empty() {
                    detect_events = events
                        .iter()
                        .filter_map(|e| vigil_detect::compile::detect_event_bit(e.name))
                        .fold(0, |all, bit| all | bit);
                    outputs.app_anomalies(p, h.id, a.layer.proto(), &events)?;
                }
            }
            if let (false, Some(f)) = (announced.is_empty(), self.flows.get(h)) {
                self.expect.file(&f.key, h.id, p.ts, announced);
            }
        }
        let buf = std::mem::take(&mut self.stream_buf);
        // In IDS mode `offset`, `depth` and absolute `isdataat` count from the
        // start of the window inspected, as Suricata counts them in its raw
        // stream windows; inline, whose window reaches back over bytes already
        // inspected, from the stream's start.
        let inline = self.stream.cfg.inline;
        let stream = StreamInput {
            chunk: ready.map(|(start, end)| (&buf[..(end - start) as usize], if inline { start } else { 0 })),
            payload_in_stream: in_stream,
            pseudo: false,
            fresh_from: if inline { fresh_from } else { 0 },
        };
        let f = flow.and_then(|h| self.flows.get_mut(h).map(|f| (h, f)));
        // A packet without a flow that alerted (its flow's `alerted` says it otherwise).
        let mut alerted_now = false;
        let result = match f {
            Some((h, f)) => {
                let info = FlowInfo { stream_events: events, detect_events, ..flow_info(f, h.dir, established) };
                let mut frames = std::mem::take(&mut self.frames);
                take_frames(f, &mut frames);
                // A flow bypassed from here on sees no more packets: both
                // sides' transactions are inspected now, as Suricata does
                // before it bypasses.
                let bypassing = encrypted_now && f.ext.app.as_deref().is_some_and(|a| a.layer.bypass_encrypted());
                let side = (!bypassing).then_some(h.dir);
                let (txs, seen) = f.ext.app.as_deref().map(|a| a.progressed(side)).unwrap_or_default();
                let frame_txs: Vec<vigil_applayer::TxRef<'_>> = match f.ext.app.as_deref() {
                    Some(a) if !frames.is_empty() => a.layer.txs().collect(),
                    _ => Vec::new(),
                };
                let app =
                    (!txs.is_empty() || !frames.is_empty()).then(|| app_input(f, &txs, p.ts, &frames, &frame_txs));
                let at = at_alert(f);
                let log_stream = f.ext.tcp.as_deref().map(|ssn| (ssn, h.dir));
                // Firewall mode's application filter sees every live transaction.
                let fw_txs: Vec<vigil_applayer::TxRef<'_>> = match (&self.detector.rules.firewall, f.ext.app.as_deref())
                {
                    (Some(_), Some(a)) => a.layer.txs().collect(),
                    _ => Vec::new(),
                };
                let fw_app = match (&self.detector.rules.firewall, f.ext.app.as_deref()) {
                    (Some(_), Some(a)) => vigil_applayer::proto::of(a.layer.proto()).map(|def| FwApp {
                        def,
                        txs: &fw_txs,
                        client: (f.key.src_ip(), f.key.sport),
                        server: (f.key.dst_ip(), f.key.dport),
                        now_secs: p.ts.secs(),
                        updated: !p.payload().is_empty(),
                    }),
                    _ => None,
                };
                let alerted = self.detector.run(
                    p,
                    Some((at, info, &mut f.ext.detect)),
                    stream,
                    app.as_ref(),
                    fw_app.as_ref(),
                    log_stream,
                    outputs,
                );
                drop(fw_txs);
                drop(txs);
                drop(frame_txs);
                let alerted = match alerted {
                    Ok(a) if !frames.is_empty() && outputs.logs_frames() => {
                        let proto = f.ext.app.as_deref().map_or(AppProto::Unknown, |a| a.layer.proto());
                        outputs.frames(p, f.id, proto, h.dir == Direction::ToServer, &frames).map(|()| a)
                    }
                    other => other,
                };
                self.frames = frames;
                if matches!(alerted, Ok(true)) {
                    f.alerted = true;
                }
                f.frozen |= self.detector.ips && f.ext.detect.dropped;
                if let (Some((_, end)), Some(ssn)) = (ready, f.ext.tcp.as_deref_mut()) {
                    ssn.raw_done(&mut self.stream, h.dir, end);
                }
                // What bypasses the flow from the next packet on: a `bypass`
                // match, encryption under `encryption-handling: bypass`, or
                // both directions past the reassembly depth with `stream.bypass`.
                let encrypted_bypass =
                    encrypted_now && f.ext.app.as_deref().is_some_and(|a| a.layer.bypass_encrypted());
                let depth_bypass = self.stream_bypass
                    && f.ext.tcp.as_deref().is_some_and(|ssn| {
                        ssn.dirs.get(Direction::ToServer).depth_reached
                            && ssn.dirs.get(Direction::ToClient).depth_reached
                    });
                if std::mem::take(&mut self.detector.bypass_flow) || encrypted_bypass || depth_bypass {
                    f.ext.detect.bypassed = true;
                }
                if encrypted_now {
                    // The other direction's stream before encryption is inspected now.
                    let mut flusher = Flusher {
                        stream: &mut self.stream,
                        buf: &mut self.stream_buf,
                        decoder: &mut self.pseudo_decoder,
                        detector: &mut self.detector,
                        now: self.now,
                    };
                    let other = flusher.flush(f, h.dir.flip(), outputs);
                    if let Some(a) = f.ext.app.as_deref_mut() {
                        a.raw_off = true;
                    }
                    other?;
                }
                let lf = outputs.wants_lua_flows().then(|| lua_flow(f));
                let logged = match f.ext.app.as_deref_mut() {
                    // An IPS drop ended the flow: what it parsed since is not logged.
                    Some(_) if f.ext.detect.dropped => Ok(()),
                    Some(a) => {
                        a.mark_inspected(&seen);
                        apply_requests(Some(&mut *a), &mut self.detector);
                        let stored = if a.tls_store {
                            let flow = crate::outputs::StoreFlow {
                                src: (f.key.src_ip(), f.key.sport),
                                dst: (f.key.dst_ip(), f.key.dport),
                                proto: f.key.proto,
                            };
                            outputs.store_tls_certs(a, p, &flow)
                        } else {
                            Ok(())
                        };
                        stored.and_then(|()| {
                            log_transactions(a, p, f.id, h.dir, false, &mut self.app_stats, outputs, lf.as_ref())
                        })
                    }
                    None => {
                        apply_requests(None, &mut self.detector);
                        Ok(())
                    }
                };
                alerted.and(logged)
            }
            None => {
                let r = self.detector.run(p, None, stream, None, None, None, outputs).map(|a| alerted_now = a);
                self.detector.bypass_flow = false;
                r
            }
        };
        self.stream_buf = buf;
        result?;
        let tagged = self.tag(p, flow);
        if tagged {
            outputs.tagged_packet(p, flow.filter(|_| !p.fragment).map(|h| h.id))?;
        }
        if root && outputs.pcap_logging() {
            outputs.pcap_log(p, self.pcap_mark(flow, tagged, alerted_now))?;
        }
        let Some((reassembled, datagram, mut frame)) = defragged else {
            if outputs.wants_lua_packets() {
                // What this packet raised counts: packet loggers run after detection.
                let lf = flow.and_then(|h| self.flows.get(h)).map(lua_flow);
                let lf = lf.map(|f| vigil_detect::lua::LuaFlow { has_alerts: f.has_alerts || alerted_now, ..f });
                outputs.lua_packet(p, lf.as_ref());
            }
            return outputs.packet(p, events, flow.filter(|_| !p.fragment).map(|h| h.id));
        };
        if outputs.wants_lua_packets() {
            outputs.lua_packet(p, None);
        }
        let mut result = outputs.packet(p, events, None);
        if reassembled && result.is_ok() {
            // The datagram is inspected once, as a packet of its own in the
            // fragment's context (time, link headers, VLANs, tunnel).
            let ip_at = p.ip.map_or(0, |ip| ip.offset as usize).min(p.data.len());
            frame.clear();
            frame.extend_from_slice(&p.data[..ip_at]);
            frame.extend_from_slice(&datagram);
            let mut whole = self.decoder.decode_reassembled(&frame, p);
            result = self.inspect(&mut whole, depth + 1, outputs);
        }
        self.buffers[depth] = (datagram, frame);
        result
    }

    /// What the pcap-log outputs ask of the packet just inspected.
    fn pcap_mark(&self, flow: Option<FlowHandle>, tagged: bool, alerted_now: bool) -> crate::outputs::PcapMark {
        let f = flow.and_then(|h| self.flows.get(h).map(|f| (h.dir, f)));
        crate::outputs::PcapMark {
            alerted: alerted_now || f.is_some_and(|(_, f)| f.alerted),
            tagged,
            passed: f.is_some_and(|(_, f)| f.ext.detect.passed),
            past_depth: f
                .and_then(|(dir, f)| f.ext.tcp.as_deref().map(|s| s.dirs.get(dir).depth_reached))
                .unwrap_or(false),
        }
    }

    /// Counts the packet against the tags of its session and hosts, and
    /// starts the tags its alerts set: whether it is a tagged packet.
    fn tag(&mut self, p: &Packet<'_>, flow: Option<FlowHandle>) -> bool {
        let new = std::mem::take(&mut self.detector.new_tags);
        let session = flow.and_then(|h| self.flows.get_mut(h)).map(|f| &mut f.ext.tags);
        let tagged = if new.is_empty() && self.tags.idle() && session.as_ref().is_none_or(|s| s.is_empty()) {
            false
        } else {
            let hosts = p.ip.map(|ip| (ip.src, ip.dst));
            self.tags.packet(hosts, session, &new, p.data.len(), p.ts)
        };
        self.detector.new_tags = new;
        self.detector.new_tags.clear();
        tagged
    }

    /// Gives a UDP datagram of a flow to its application layer.
    fn feed_udp(&mut self, p: &Packet<'_>, h: FlowHandle) {
        let (Some(cfg), vigil_decode::Transport::Udp { .. }) = (&self.app_cfg, p.transport) else { return };
        let payload = p.payload();
        let Some(f) = self.flows.get_mut(h).filter(|_| !payload.is_empty() && !p.fragment) else { return };
        if (f.ext.detect.dropped && self.detector.ips) || f.ext.detect.bypassed {
            return;
        }
        let app = f
            .ext
            .app
            .get_or_insert_with(|| Box::new(FlowApp::new(AppFlow::new(cfg, Transport::Udp, f.key.sport, f.key.dport))));
        let errors = app.layer.policy_errors();
        app.layer.feed(h.dir, payload);
        if app.layer.policy_errors() > errors {
            self.detector.exceptions.met_app_error(app.layer.proto(), Transport::Udp);
        }
    }

    /// Inspects what is left of an ended flow's streams (through pseudo
    /// packets, as Suricata does), finishes its application layer (the
    /// transactions that progressed are inspected, every one is logged), and
    /// frees its session.
    fn flush_streams(&mut self, f: &mut Flow<FlowExt>, outputs: &mut Outputs) -> Result<(), EngineError> {
        let mut result = Ok(());
        if let (Some(ssn), Some(app)) = (f.ext.tcp.as_deref_mut(), f.ext.app.as_deref_mut()) {
            app.feed_tcp(ssn, &mut self.stream, true, &mut self.app_buf, self.tcp_tap.as_mut());
        }
        if let Some(tap) = self.tcp_tap.as_mut().filter(|t| !t.is_empty()) {
            if outputs.lua_streams(false) {
                lua_stream_pieces(f, None, tap, outputs);
            }
            result = outputs.tcp_data(&data_flow_name(f), tap.drain(..));
        }
        if outputs.lua_streams(false) {
            lua_stream_close(f, outputs);
        }
        for dir in [Direction::ToServer, Direction::ToClient] {
            if result.is_ok() {
                let before = self.stream.counters.pseudo;
                result = self.flusher().flush(f, dir, outputs);
                // Firewall mode: a session still open at its end may meet
                // the packet filter once more per direction (`fw_end_packet`).
                if result.is_ok() && self.stream.counters.pseudo == before && self.detector.rules.firewall.is_some() {
                    result = self.fw_end_packet(f, dir, outputs);
                }
            }
        }
        // The last inspection of the transactions still sees the session
        // (`stream_size`, `flow:established`), as Suricata's end-of-flow
        // pseudo packets do.
        if result.is_ok() && f.ext.app.is_some() {
            result = self.finish_app(f, outputs);
        }
        if let Some(mut ssn) = f.ext.tcp.take() {
            f.ext.tcp_end = Some(ssn.summary());
            self.stream.end(&mut ssn);
        }
        if let Some(a) = f.ext.app.as_deref() {
            self.app_stats.ended(a);
        }
        result
    }

    /// A pseudo packet of `dir` at a TCP flow's end, for the firewall's packet rules.
    fn fw_end_packet(
        &mut self,
        f: &mut Flow<FlowExt>,
        dir: Direction,
        outputs: &mut Outputs,
    ) -> Result<(), EngineError> {
        // Suricata's come where the stream still holds data not inspected
        // when a session still open ends (shutdown, timeout). vigil's
        // stand-in: an open session whose raw inspection stopped at
        // encryption (its stream flush above inspects nothing).
        let raw_off = f.ext.app.as_deref().is_some_and(|a| a.raw_off);
        if f.ext.tcp.is_none() || f.state.name() != "established" || !raw_off {
            return Ok(());
        }
        let frame = pseudo_packet(f, dir);
        let mut p = self.pseudo_decoder.decode(&frame, self.now, LinkType::Raw, 0);
        p.src = PacketSource::FlowTimeout;
        let info = flow_info(f, dir, None);
        let stream = StreamInput { chunk: None, payload_in_stream: true, pseudo: true, fresh_from: 0 };
        let at = at_alert(f);
        if self.detector.run(&p, Some((at, info, &mut f.ext.detect)), stream, None, None, None, outputs)? {
            f.alerted = true;
        }
        apply_requests(f.ext.app.as_deref_mut(), &mut self.detector);
        Ok(())
    }

    fn flusher(&mut self) -> Flusher<'_> {
        Flusher {
            stream: &mut self.stream,
            buf: &mut self.stream_buf,
            decoder: &mut self.pseudo_decoder,
            detector: &mut self.detector,
            now: self.now,
        }
    }

    /// The last inspection of an ended flow's transactions, and their records.
    fn finish_app(&mut self, f: &mut Flow<FlowExt>, outputs: &mut Outputs) -> Result<(), EngineError> {
        let frame = pseudo_packet(f, Direction::ToServer);
        let mut p = self.pseudo_decoder.decode(&frame, self.now, LinkType::Raw, 0);
        p.src = PacketSource::FlowTimeout;
        if let Some(a) = f.ext.app.as_deref_mut() {
            a.layer.ended();
            // A UDP flow whose detection only now failed is counted now.
            self.app_stats.flow(a);
        }
        // Suricata's end-of-flow pseudo packets count as established for a
        // session that got that far, however it ended since.
        let reached = f.ext.tcp.as_deref().map(|ssn| {
            !matches!(ssn.state, TcpState::SynSent | TcpState::SynRecv)
                && (ssn.state != TcpState::Closed || ssn.dirs.to_server.seen_end > 0 || ssn.dirs.to_client.seen_end > 0)
        });
        let info = flow_info(f, Direction::ToServer, reached);
        // Events the last bytes raised (flushed at the end, after the last packet's drain).
        if let Some(a) = f.ext.app.as_deref_mut() {
            let events = a.layer.take_events();
            if !events.is_empty() {
                outputs.app_anomalies(&p, f.id, a.layer.proto(), &events)?;
            }
        }
        let mut frames = std::mem::take(&mut self.frames);
        take_frames(f, &mut frames);
        let (txs, seen) = f.ext.app.as_deref().map(|a| a.progressed(None)).unwrap_or_default();
        let frame_txs: Vec<vigil_applayer::TxRef<'_>> = match f.ext.app.as_deref() {
            Some(a) if !frames.is_empty() => a.layer.txs().collect(),
            _ => Vec::new(),
        };
        let mut result = Ok(());
        if !txs.is_empty() || !frames.is_empty() {
            let app = app_input(f, &txs, self.now, &frames, &frame_txs);
            let stream = StreamInput { chunk: None, payload_in_stream: true, pseudo: true, fresh_from: 0 };
            let at = at_alert(f);
            match self.detector.run(&p, Some((at, info, &mut f.ext.detect)), stream, Some(&app), None, None, outputs) {
                Ok(true) => f.alerted = true,
                Ok(false) => {}
                Err(e) => result = Err(e),
            }
            drop(txs);
            drop(frame_txs);
            if result.is_ok() && !frames.is_empty() && outputs.logs_frames() {
                let proto = f.ext.app.as_deref().map_or(AppProto::Unknown, |a| a.layer.proto());
                result = outputs.frames(&p, f.id, proto, true, &frames);
            }
            if let Some(a) = f.ext.app.as_deref_mut() {
                a.mark_inspected(&seen);
            }
            apply_requests(f.ext.app.as_deref_mut(), &mut self.detector);
        }
        self.frames = frames;
        let lf = outputs.wants_lua_flows().then(|| lua_flow(f));
        match (result, f.ext.app.as_deref_mut()) {
            (Ok(()), Some(_)) if f.ext.detect.dropped => Ok(()),
            (Ok(()), Some(a)) => {
                log_transactions(a, &p, f.id, Direction::ToServer, true, &mut self.app_stats, outputs, lf.as_ref())
            }
            (r, _) => r,
        }
    }

    /// Writes the records of flows that ended.
    pub(crate) fn log_ended(&mut self, outputs: &mut Outputs) -> Result<(), EngineError> {
        let now = self.now;
        let mut result = Ok(());
        let mut ended = self.flows.take_ended();
        for mut f in ended.drain(..) {
            if result.is_ok() {
                result = self.flush_streams(&mut f, outputs);
            }
            self.flow_ends.count(&f);
            if result.is_ok() {
                let app = f.ext.app.as_deref().map_or(AppProto::Unknown, |a| a.layer.proto());
                let orig = f.ext.app.as_deref().and_then(|a| a.layer.orig_proto());
                let d = &f.ext.detect;
                let action = if d.dropped {
                    Some("drop")
                } else if d.fw.accepted {
                    Some("accept")
                } else if (d.passed || d.exception_passed) && !d.bypassed {
                    Some("pass")
                } else {
                    None
                };
                let exceptions = self.detector.exceptions.flow_list(d.exceptions);
                let tx_cnt = f.ext.app.as_deref().map_or(0, |a| a.layer.tx_count());
                let traffic = self.detector.rules.engine.as_deref().map(|e| e.traffic(&d.bits)).unwrap_or_default();
                let fate = crate::outputs::FlowFate {
                    action,
                    exception_policy: &exceptions,
                    bypassed: d.bypassed,
                    tx_cnt,
                    traffic: &traffic,
                };
                let side = |d| f.ext.app.as_deref().and_then(|a| a.layer.side_proto(d));
                let sides = PerDir { to_server: side(Direction::ToServer), to_client: side(Direction::ToClient) };
                let protos = crate::outputs::FlowProtos { app, orig, sides };
                result = outputs.flow(&f, now, protos, f.ext.tcp_end.as_ref(), fate);
            }
        }
        self.flows.give_back_ended(ended);
        result
    }

    /// End of input: every open flow ends (reason "shutdown") and is logged.
    pub(crate) fn finish(&mut self, outputs: &mut Outputs) -> Result<(), EngineError> {
        // In steps, each logged before the next: the flows are not all held twice.
        let mut from = 0;
        while let Some(next) = self.flows.flush_some(from, 1024) {
            self.log_ended(outputs)?;
            from = next;
        }
        self.log_ended(outputs)
    }
}

/// Writes the records of the flow's transactions that are finished (all of
/// them at flow `end`) and frees them. `dir`: the packet's direction.
#[allow(clippy::too_many_arguments)]
fn log_transactions(
    app: &mut FlowApp,
    p: &Packet<'_>,
    flow_id: u64,
    dir: Direction,
    end: bool,
    stats: &mut AppStats,
    outputs: &mut Outputs,
    lua_flow: Option<&vigil_detect::lua::LuaFlow>,
) -> Result<(), EngineError> {
    let ids = app.loggable(end);
    // Files of logged transactions wait for detection to see their side as
    // it is, as Suricata logs (and stores) files after its inspection of a
    // packet of their direction.
    let files_ready: Vec<u64> = app.files_pending.iter().copied().filter(|&id| end || app.files_seen_id(id)).collect();
    if ids.is_empty() && files_ready.is_empty() {
        // Logged transactions detection has now seen whole are freed.
        app.prune_seen();
        return Ok(());
    }
    if !files_ready.is_empty() {
        for tx in app.layer.txs().filter(|t| files_ready.contains(&t.id())) {
            let swap = (end || !tx.logged_in_packet_dir()) && tx.record_dir() != dir;
            outputs.tx_files(p, flow_id, tx, swap)?;
        }
        app.files_pending.retain(|id| !files_ready.contains(id));
    }
    let mut quiet = Vec::new();
    let mut pending = Vec::new();
    for tx in app.layer.txs().filter(|t| ids.contains(&t.id())) {
        stats.tx(tx, app.layer.transport());
        // Suricata keeps a DNS query and its answer in one transaction: what
        // silences the query silences the answer.
        let group = tx.log_group();
        if app.no_log.contains(&tx.id()) || group.is_some_and(|g| app.no_log_groups.contains(&g)) {
            quiet.extend(group);
            continue;
        }
        if outputs.wants_transactions() {
            // Records that follow the packet go the way of the data at the flow's end,
            // as Suricata's pseudo-packets for each side's last bytes write them.
            let swap = (end || !tx.logged_in_packet_dir()) && tx.record_dir() != dir;
            let with_files = end || app.files_seen(tx);
            if !with_files {
                pending.push(tx.id());
            }
            outputs.transaction(p, flow_id, tx, swap, app.layer.upgraded_from(), lua_flow, with_files)?;
        }
        if outputs.wants_http_bodies() || outputs.lua_streams(true) {
            if let Some(h) = tx.tx.as_any().downcast_ref::<vigil_applayer::http::HttpTx>() {
                if outputs.wants_http_bodies() {
                    outputs.http_bodies(p, dir, h)?;
                }
                if outputs.lua_streams(true) {
                    // Each body whole, as one piece that opens and closes it.
                    for side in [Direction::ToServer, Direction::ToClient] {
                        let data = h.body(side);
                        if !data.is_empty() {
                            let args = vigil_detect::lua::StreamArgs {
                                data,
                                open: true,
                                close: true,
                                to_server: side == Direction::ToServer,
                                tx_id: Some(tx.id()),
                            };
                            outputs.lua_stream(Some(p), lua_flow, &args);
                        }
                    }
                }
            }
        }
    }
    app.no_log_groups.extend(quiet);
    app.files_pending.extend(pending);
    app.logged_txs(&ids);
    Ok(())
}

/// A flow as the data logs name it: client, then server.
fn data_flow_name<E>(f: &Flow<E>) -> String {
    vigil_output::data_flow_name(f.key.src_ip(), f.key.sport, f.key.dst_ip(), f.key.dport)
}

/// The worker's parts that inspect a stream's held bytes through pseudo
/// packets (borrowed apart from its flow table).
struct Flusher<'w> {
    stream: &'w mut StreamCtx,
    buf: &'w mut Vec<u8>,
    decoder: &'w mut Decoder,
    detector: &'w mut Detector,
    now: Timestamp,
}

impl Flusher<'_> {
    /// Inspects what is held of `dir`'s stream.
    fn flush(&mut self, f: &mut Flow<FlowExt>, dir: Direction, outputs: &mut Outputs) -> Result<(), EngineError> {
        let mut result = Ok(());
        if f.ext.app.as_deref().is_some_and(|a| a.raw_off) {
            return result;
        }
        // Out of the flow while the flow describes the pseudo packets.
        let Some(mut ssn) = f.ext.tcp.take() else { return result };
        // Nothing is freed until every chunk is inspected: an alert logs
        // what the stream held at the end, as Suricata's does.
        let mut seen = None;
        while let Some((start, end)) = ssn.raw_ready(self.stream, dir, true) {
            self.buf.clear();
            ssn.read(dir, start, end, self.buf);
            ssn.raw_seen(dir, end);
            seen = Some(end);
            if result.is_err() || self.buf.is_empty() {
                continue;
            }
            self.stream.counters.pseudo += 1;
            let frame = pseudo_packet(f, dir);
            let mut p = self.decoder.decode(&frame, self.now, LinkType::Raw, 0);
            p.src = PacketSource::FlowTimeout;
            // Positions count from the window's start in IDS mode, as in the packets' windows.
            let base = if self.stream.cfg.inline { start } else { 0 };
            let stream =
                StreamInput { chunk: Some((self.buf, base)), payload_in_stream: true, pseudo: true, fresh_from: 0 };
            let info = FlowInfo { tracked: true, stream_size: stream_sizes(&ssn), ..flow_info(f, dir, None) };
            let at = at_alert(f);
            match self.detector.run(
                &p,
                Some((at, info, &mut f.ext.detect)),
                stream,
                None,
                None,
                Some((&ssn, dir)),
                outputs,
            ) {
                Ok(true) => f.alerted = true,
                Ok(false) => {}
                Err(e) => result = Err(e),
            }
            apply_requests(f.ext.app.as_deref_mut(), self.detector);
        }
        if let Some(end) = seen {
            ssn.raw_done(self.stream, dir, end);
        }
        f.ext.tcp = Some(ssn);
        result
    }
}
