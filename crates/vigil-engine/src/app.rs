//! The worker's application-layer side: what a flow keeps besides its
//! parser (which transactions detection saw at which progress, which were
//! logged), feeding a TCP session's ordered bytes to the parser, and the
//! transactions that progressed since a flow's last packet.

use vigil_applayer::protocols::ALL;
use vigil_applayer::{AppFlow, Progress, Transport, TxRef};
use vigil_detect::TxInput;
use vigil_stream::{StreamCtx, TcpSession};
use vigil_types::{AppProto, Direction, PerDir};

const DIRS: [Direction; 2] = [Direction::ToServer, Direction::ToClient];

/// A flow's application layer.
pub(crate) struct FlowApp {
    pub layer: AppFlow,
    /// Per transaction id, what detection last inspected it at, sorted by
    /// id: a flow may hold a thousand transactions waiting for their
    /// answers, each looked up on every packet.
    inspected: Vec<Seen>,
    /// Transactions below this id were logged.
    pub logged: u64,
    /// Ids at or above `logged` already logged out of order (HTTP/2
    /// streams, each written when it finishes), sorted.
    logged_ahead: Vec<u64>,
    /// `close` was given for the direction.
    closed: PerDir<bool>,
    /// Transactions a `config` rule excluded from logging.
    pub no_log: Vec<u64>,
    /// Groups ([`TxRef::log_group`]: DNS ids) whose first transaction was
    /// excluded from logging: the rest of each group is too.
    pub no_log_groups: Vec<u64>,
    /// Encryption started and the streams before it were inspected: no
    /// more payload inspection on this flow.
    pub raw_off: bool,
    /// The flow was counted under its protocol in `app_layer.flow.*`.
    pub counted: bool,
    /// The flow that announced this one (`parent_id`), until the outputs are told.
    pub parent: Option<u64>,
    /// The protocol's own reassembly depth was looked up.
    depth_asked: bool,
    /// A `tls.store` rule matched: the certificate chains go to the
    /// `tls-store` output as they come, each side once.
    pub tls_store: bool,
    /// The side's chain was stored (server's, client's).
    pub tls_stored: [bool; 2],
    /// Logged transactions whose files are not logged yet.
    pub files_pending: Vec<u64>,
    /// A Lua streaming script was given a piece of this side (to server,
    /// to client): the next is no opening, and the side's end is told.
    pub streamed: [bool; 2],
}

impl std::fmt::Debug for FlowApp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FlowApp").field("proto", &self.layer.proto()).field("logged", &self.logged).finish()
    }
}

impl FlowApp {
    pub(crate) fn new(layer: AppFlow) -> Self {
        FlowApp {
            layer,
            inspected: Vec::new(),
            logged: 0,
            logged_ahead: Vec::new(),
            closed: PerDir::default(),
            no_log: Vec::new(),
            no_log_groups: Vec::new(),
            raw_off: false,
            counted: false,
            parent: None,
            depth_asked: false,
            tls_store: false,
            tls_stored: [false; 2],
            files_pending: Vec::new(),
            streamed: [false; 2],
        }
    }

    /// Gives the parser what `ssn` has ready (acknowledged data in IDS mode,
    /// everything with `flush`), reports holes as gaps, and tells it when a
    /// side has finished. `buf` is reused scratch space.
    /// `tap`: where a `tcp-data` output wants a copy of each piece given
    /// to the parser (`None` when there is none: no copy is made).
    pub(crate) fn feed_tcp(
        &mut self,
        ssn: &mut TcpSession,
        ctx: &mut StreamCtx,
        flush: bool,
        buf: &mut Vec<u8>,
        mut tap: Option<&mut Vec<(Direction, Vec<u8>)>>,
    ) {
        for dir in DIRS {
            while let Some((skipped, start, end)) = ssn.app_ready(ctx, dir, flush || ssn.reset) {
                if skipped > 0 {
                    self.layer.gap(dir, skipped);
                }
                buf.clear();
                ssn.read(dir, start, end, buf);
                if let Some(t) = tap.as_deref_mut() {
                    t.push((dir, buf.clone()));
                }
                self.layer.feed(dir, buf);
                ssn.app_done(ctx, dir, end);
            }
            let s = ssn.dirs.get(dir);
            // In IDS mode a side ends once its FIN is acknowledged, as its data is
            // given on acknowledgement (Suricata's end of stream comes with the ACK).
            let fin_acked = |fin: u64| ctx.cfg.inline || !s.acks_seen || s.acked > fin;
            let finished = ssn.reset || s.fin.is_some_and(|fin| s.app_progress >= fin && fin_acked(fin));
            if (finished || flush) && !*self.closed.get(dir) {
                *self.closed.get_mut(dir) = true;
                self.layer.close(dir);
            }
        }
        // Asked once the protocol is known (a protocol's depth applies from its detection on).
        if !self.depth_asked && !matches!(self.layer.proto(), AppProto::Unknown) {
            self.depth_asked = true;
            ssn.depth = self.layer.stream_depth();
        }
        for dir in DIRS {
            if self.layer.take_raw_trigger(dir) {
                let s = ssn.dirs.get_mut(dir);
                s.raw_trigger = Some(s.app_progress);
            }
        }
        // Nothing more to parse: the stream keeps data for raw inspection only.
        if ssn.app_enabled
            && (self.layer.proto() == AppProto::Failed
                || self.layer.no_inspection() && !self.layer.frames_after_encryption()
                || !self.layer.wants_data())
        {
            ssn.app_disable(ctx);
        }
    }

    /// The transactions whose progress (or, for those that count them, whose
    /// changes) moved since detection last saw them, and what detection
    /// will have seen of them once it has (for [`FlowApp::mark_inspected`]).
    /// With a packet's direction, only that side's moves count: as in
    /// Suricata, a side's transactions are inspected on that side's
    /// packets, so what a packet's acknowledgement let the other side's
    /// parser read waits for the other side's next packet. Without one (the
    /// flow's end) both sides count.
    pub(crate) fn progressed(&self, dir: Option<Direction>) -> (Vec<TxInput<'_>>, Vec<Seen>) {
        let mut out = Vec::new();
        let mut seen = Vec::new();
        for tx in self.layer.txs() {
            let now = progress(tx);
            let (counted, counts) = updates(tx);
            let last = self.inspected.binary_search_by_key(&tx.id(), |e| e.id).map(|i| self.inspected[i]).ok();
            let from = last.map(|l| l.progress).unwrap_or_default();
            let before = last.map(|l| l.updates);
            let (to, counts) = match dir {
                None => (now, counts),
                Some(d) => {
                    let (mut to, mut c) = (from, before.unwrap_or_default());
                    *to.get_mut(d) = *now.get(d);
                    *c.get_mut(d) = *counts.get(d);
                    (to, c)
                }
            };
            let updated = counted && before.is_some_and(|b| b != counts);
            if to != from || updated {
                out.push(TxInput { tx, from, to, counted, updated });
                seen.push(Seen { id: tx.id(), progress: to, updates: counts });
            }
        }
        (out, seen)
    }

    /// Frees the logged transactions detection has seen whole. A logged
    /// transaction lives on until detection has seen each of its sides as
    /// it ended (a side's last bytes wait for that side's next packet), as
    /// Suricata frees a transaction only once both directions inspected it.
    pub(crate) fn prune_seen(&mut self) {
        let logged = self.logged;
        if self.layer.txs().next().is_none_or(|t| t.id() >= logged) {
            return;
        }
        let keep = self.layer.txs().take_while(|t| t.id() < logged).find(|&t| !self.seen_whole(t)).map(|t| t.id());
        self.layer.prune(keep.unwrap_or(logged));
    }

    /// [`FlowApp::files_seen`] by id; a transaction gone counts as seen.
    pub(crate) fn files_seen_id(&self, id: u64) -> bool {
        self.layer.txs().find(|t| t.id() == id).is_none_or(|t| self.files_seen(t))
    }

    /// Whether detection saw each side of `tx` that carries files as it is
    /// now: those files may be logged (and stored) then.
    pub(crate) fn files_seen(&self, tx: TxRef<'_>) -> bool {
        DIRS.iter().all(|&d| tx.files(d).is_empty() || self.side_seen(tx, d))
    }

    /// Whether detection saw side `dir` of `tx` as it is now.
    pub(crate) fn side_seen(&self, tx: TxRef<'_>, dir: Direction) -> bool {
        self.seen(tx.id()).progress.get(dir) == progress(tx).get(dir)
    }

    /// Whether detection saw `tx` as it is now, both sides.
    pub(crate) fn seen_whole(&self, tx: TxRef<'_>) -> bool {
        self.seen(tx.id()).progress == progress(tx)
    }

    /// What detection last saw of transaction `id` (nothing yet: no progress).
    fn seen(&self, id: u64) -> Seen {
        match self.inspected.binary_search_by_key(&id, |e| e.id) {
            Ok(i) => self.inspected[i],
            Err(_) => Seen { id, progress: PerDir::default(), updates: PerDir::default() },
        }
    }

    /// Detection saw these transactions as they are now.
    pub(crate) fn mark_inspected(&mut self, seen: &[Seen]) {
        for &s in seen {
            match self.inspected.binary_search_by_key(&s.id, |e| e.id) {
                Ok(i) => self.inspected[i] = s,
                Err(i) => self.inspected.insert(i, s),
            }
        }
    }

    /// Ids of transactions ready to be logged, in order: finished ones
    /// (or all of them at flow end), from the first not yet logged. A
    /// protocol whose transactions finish in any order
    /// ([`vigil_applayer::proto::ProtoTx::logs_out_of_order`]) has each
    /// logged as it finishes, past unfinished ones.
    pub(crate) fn loggable(&self, end: bool) -> Vec<u64> {
        let mut out = Vec::new();
        for tx in self.layer.txs().filter(|t| t.id() >= self.logged) {
            if self.logged_ahead.binary_search(&tx.id()).is_ok() {
                continue;
            }
            if end || tx.finished() {
                out.push(tx.id());
            } else if !tx.tx.logs_out_of_order() {
                break;
            }
        }
        out
    }

    /// Transactions `ids` were logged and inspected: those up to the first
    /// transaction not logged yet are freed, the others remembered.
    pub(crate) fn logged_txs(&mut self, ids: &[u64]) {
        self.logged_ahead.extend_from_slice(ids);
        self.logged_ahead.sort_unstable();
        self.logged_ahead.dedup();
        let mut logged = self.logged;
        for id in self.layer.txs().map(|t| t.id()).filter(|&i| i >= self.logged) {
            if self.logged_ahead.binary_search(&id).is_err() {
                break;
            }
            logged = id + 1;
        }
        self.logged = logged;
        self.logged_ahead.retain(|&i| i >= logged);
        self.prune_seen();
        let logged = self.logged;
        // A parser may keep a logged transaction (SSH's, until both sides
        // encrypt): what detection saw of it is kept as long as it lives.
        if self.inspected.first().is_some_and(|e| e.id < logged) {
            let layer = &self.layer;
            self.inspected.retain(|e| e.id >= logged || layer.txs().any(|t| t.id() == e.id));
        }
        self.no_log.retain(|i| *i >= logged);
    }
}

/// What detection saw of a transaction: its progress and its counts of changes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Seen {
    id: u64,
    progress: PerDir<Progress>,
    updates: PerDir<u64>,
}

/// Whether the transaction's protocol counts its changes, and the counts.
fn updates(tx: TxRef<'_>) -> (bool, PerDir<u64>) {
    let (s, c) = (tx.tx.detect_updates(Direction::ToServer), tx.tx.detect_updates(Direction::ToClient));
    (s.is_some() || c.is_some(), PerDir { to_server: s.unwrap_or(0), to_client: c.unwrap_or(0) })
}

pub(crate) fn progress(tx: TxRef<'_>) -> PerDir<Progress> {
    PerDir { to_server: tx.progress(Direction::ToServer), to_client: tx.progress(Direction::ToClient) }
}

/// `app_layer.flow.*` and `app_layer.tx.*`, under Suricata's names.
#[derive(Debug, Default, Clone)]
pub(crate) struct AppStats {
    /// Flows whose detection failed, by [`FLOW_NAMES`] slot.
    flows: [u64; FLOW_NAMES.len()],
    /// Their `app_layer.error.failed_*` counters: parser and gap.
    errors: [[u64; 2]; FLOW_NAMES.len()],
    /// The same for the application layer's table, by [`table_slot`]:
    /// flows, transactions, parser errors, gap errors.
    table: Vec<[u64; 4]>,
    /// Frames whose bytes were not all kept, and frames not recorded (too
    /// many open at once), of ended flows.
    frames_lost: [u64; 2],
}

/// The row of a table protocol's flow in [`AppStats::table`] and the
/// per-protocol exception counters: two per protocol, by its place in the
/// table, TCP then UDP; a protocol whose counter names carry no transport
/// uses the first for both.
fn table_slot(proto: AppProto, transport: Transport) -> Option<usize> {
    let def = vigil_applayer::proto::of(proto)?;
    let i = vigil_applayer::proto::index(def.name)?;
    Some(2 * i + usize::from(def.detection.counters_by_transport && transport == Transport::Udp))
}

/// The table's counter names (`ssh`, `dcerpc_tcp`), each with its
/// [`table_slot`] and whether it runs over TCP (which has gap counters).
pub(crate) fn table_names() -> impl Iterator<Item = (usize, String, bool)> {
    ALL.iter().enumerate().flat_map(|(i, d)| {
        let t = d.detection;
        let names = if t.counters_by_transport {
            [
                t.tcp.then(|| (2 * i, format!("{}_tcp", d.name), true)),
                t.udp.then(|| (2 * i + 1, format!("{}_udp", d.name), false)),
            ]
        } else {
            [Some((2 * i, d.name.to_string(), t.tcp)), None]
        };
        names.into_iter().flatten()
    })
}

const FLOW_NAMES: [&str; 2] = ["failed_tcp", "failed_udp"];

/// The [`FLOW_NAMES`] slot of a flow whose detection failed.
fn failed_slot(proto: AppProto, transport: Transport) -> Option<usize> {
    match (proto, transport) {
        (AppProto::Failed, Transport::Tcp) => Some(0),
        (AppProto::Failed, Transport::Udp) => Some(1),
        (AppProto::Unknown | AppProto::Plugin(_), _) => None,
    }
}

/// The place of a protocol's app-layer errors among [`error_names`].
pub(crate) fn error_slot(proto: AppProto, transport: Transport) -> Option<usize> {
    table_slot(proto, transport)
}

/// Every protocol's counter name with its [`error_slot`], for per-protocol
/// error counters.
pub(crate) fn error_names() -> impl Iterator<Item = (usize, String)> {
    table_names().map(|(i, n, _)| (i, n))
}

/// The number of [`error_slot`]s.
pub(crate) fn error_slots() -> usize {
    2 * ALL.len()
}

impl AppStats {
    /// Counts the flow once its protocol is known (or detection failed).
    pub(crate) fn flow(&mut self, app: &mut FlowApp) {
        if app.counted {
            return;
        }
        if let Some(i) = failed_slot(app.layer.proto(), app.layer.transport()) {
            self.flows[i] += 1;
            app.counted = true;
        } else if let Some(i) = table_slot(app.layer.proto(), app.layer.transport()) {
            self.table_row(i)[0] += 1;
            app.counted = true;
        }
    }

    fn table_row(&mut self, i: usize) -> &mut [u64; 4] {
        if self.table.len() <= i {
            self.table.resize((2 * ALL.len()).max(i + 1), [0; 4]);
        }
        &mut self.table[i]
    }

    pub(crate) fn tx(&mut self, tx: TxRef<'_>, transport: Transport) {
        if let Some(i) = table_slot(tx.proto(), transport) {
            self.table_row(i)[1] += 1;
        }
    }

    /// Adds an ended flow's parser errors and gaps.
    pub(crate) fn ended(&mut self, app: &FlowApp) {
        let (cut, refused) = app.layer.frames_lost();
        self.frames_lost[0] += cut;
        self.frames_lost[1] += refused;
        if let Some(i) = failed_slot(app.layer.proto(), app.layer.transport()) {
            let c = app.layer.counters();
            self.errors[i][0] += c.parser_errors;
            self.errors[i][1] += c.gap_errors;
        } else if let Some(i) = table_slot(app.layer.proto(), app.layer.transport()) {
            let c = app.layer.counters();
            let row = self.table_row(i);
            row[2] += c.parser_errors;
            row[3] += c.gap_errors;
        }
    }

    /// Every counter, zeros included, in Suricata's shapes: per protocol
    /// `gap` (TCP only), `alloc`, `parser`, `internal`; `failed_tcp` has
    /// `gap` alone, `failed_udp` nothing. vigil's parsers cannot fail to
    /// allocate (an allocation failure ends the process) and have no
    /// internal error state to report, so `alloc` and `internal` are listed,
    /// as Suricata lists them, and stay 0.
    pub(crate) fn named(&self) -> impl Iterator<Item = (String, u64)> + '_ {
        let flows = FLOW_NAMES.iter().zip(self.flows).map(|(n, v)| (format!("app_layer.flow.{n}"), v));
        let errors = FLOW_NAMES.iter().zip(self.errors).flat_map(|(n, [parser, gap])| {
            let tcp = !n.ends_with("_udp");
            error_counters(n, tcp, parser, gap)
        });
        // Every protocol of the table is named, counted or not, as Suricata lists its
        // counters: once per transport it runs over when its names carry the transport.
        let table = table_names().flat_map(|(i, name, tcp)| {
            let [flows, txs, parser, gap] = self.table.get(i).copied().unwrap_or_default();
            let def = ALL[i / 2];
            let mut out = vec![(format!("app_layer.flow.{name}"), flows)];
            // A protocol detected but not parsed has no transactions to count.
            if def.transactions {
                out.push((format!("app_layer.tx.{name}"), txs));
            }
            out.extend(error_counters(&name, tcp, parser, gap));
            out
        });
        // vigil's own: what frames lost to their bounds (`frame:` rules and
        // `frame` records), written once something was (Suricata's schema
        // has no such counters).
        let frames =
            [("app_layer.frames.truncated", self.frames_lost[0]), ("app_layer.frames.refused", self.frames_lost[1])]
                .into_iter()
                .filter(|&(_, v)| v > 0)
                .map(|(n, v)| (n.to_string(), v));
        flows.chain(errors).chain(table).chain(frames)
    }
}

/// One protocol's `app_layer.error.*` counters.
fn error_counters(name: &str, tcp: bool, parser: u64, gap: u64) -> Vec<(String, u64)> {
    let key = |what: &str| format!("app_layer.error.{name}.{what}");
    match name {
        "failed_udp" => Vec::new(),
        "failed_tcp" => vec![(key("gap"), gap)],
        _ => {
            let mut out = Vec::with_capacity(4);
            if tcp {
                out.push((key("gap"), gap));
            }
            out.extend([(key("alloc"), 0), (key("parser"), parser), (key("internal"), 0)]);
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vigil_applayer::AppConfig;

    /// A flow of `ports` whose client sent `first`, counted and ended.
    fn count(stats: &mut AppStats, ports: (u16, u16), first: &[u8]) {
        let mut layer = AppFlow::new(&AppConfig::default(), Transport::Tcp, ports.0, ports.1);
        layer.feed(Direction::ToServer, first);
        let mut app = FlowApp::new(layer);
        stats.flow(&mut app);
        stats.ended(&app);
    }

    #[test]
    fn table_protocols_are_named_as_suricata_names_them() {
        let mut stats = AppStats::default();
        let bind = [5, 0, 11, 3, 0x10, 0, 0, 0, 16, 0, 0, 0, 1, 0, 0, 0];
        count(&mut stats, (40000, 135), &bind);
        count(&mut stats, (40000, 135), &bind);
        count(&mut stats, (40000, 445), b"\x00\x00\x00\x08\xfeSMBxxxx");
        let named: std::collections::BTreeMap<String, u64> = stats.named().collect();
        // Registered over both transports in Suricata: the name carries the transport.
        assert_eq!(named.get("app_layer.flow.dcerpc_tcp"), Some(&2));
        assert_eq!(named.get("app_layer.error.dcerpc_tcp.gap"), Some(&0));
        assert!(!named.contains_key("app_layer.flow.dcerpc"));
        assert_eq!(named.get("app_layer.flow.smb"), Some(&1));
        assert_eq!(named.get("app_layer.flow.ssh"), Some(&0));
        // Telnet is detected but not parsed: no transactions to count, so none named.
        assert!(!named.contains_key("app_layer.tx.telnet"));
        assert_eq!(named.get("app_layer.tx.smb"), Some(&0));
        // DCE/RPC forms transactions: its counter is named (counted as they are logged).
        assert_eq!(named.get("app_layer.tx.dcerpc_tcp"), Some(&0));
        assert_eq!(named.get("app_layer.tx.ssh"), Some(&0));
    }

    /// A side's changes wait for a packet of that side: a request read on
    /// the server's acknowledgement is inspected on the client's next packet.
    #[test]
    fn a_sides_changes_are_seen_on_its_own_packets() {
        let mut layer = AppFlow::new(&AppConfig::default(), Transport::Tcp, 40000, 80);
        layer.feed(Direction::ToServer, b"GET / HTTP/1.1\r\nHost: a\r\n\r\n");
        let mut app = FlowApp::new(layer);
        let (txs, seen) = app.progressed(Some(Direction::ToClient));
        assert!(txs.is_empty() && seen.is_empty(), "the server's packet does not see the request");
        drop(txs);
        let (txs, seen) = app.progressed(Some(Direction::ToServer));
        assert_eq!(txs.len(), 1);
        assert_eq!(txs[0].to.to_client, txs[0].from.to_client, "only the client's side moved");
        drop(txs);
        app.mark_inspected(&seen);
        let (txs, _) = app.progressed(Some(Direction::ToServer));
        assert!(txs.is_empty(), "seen once");
    }

    /// HTTP/2 streams are logged as each finishes: stream 3 before stream
    /// 1 when it finishes first, and nothing is logged twice.
    #[test]
    fn streams_are_logged_as_they_finish() {
        let frame = |kind: u8, flags: u8, stream: u32, payload: &[u8]| {
            let mut f = (payload.len() as u32).to_be_bytes()[1..].to_vec();
            f.extend_from_slice(&[kind, flags]);
            f.extend_from_slice(&stream.to_be_bytes());
            f.extend_from_slice(payload);
            f
        };
        let mut client = vigil_applayer::protocols::http2::frame::PREFACE.to_vec();
        // Two GETs (:method GET, :path /), each whole.
        client.extend(frame(1, 5, 1, &[0x82, 0x84]));
        client.extend(frame(1, 5, 3, &[0x82, 0x84]));
        let mut layer = AppFlow::new(&AppConfig::default(), Transport::Tcp, 40000, 80);
        layer.feed(Direction::ToServer, &client);
        let mut app = FlowApp::new(layer);
        assert!(app.loggable(false).is_empty());
        // Stream 3's answer comes whole first (:status 200, END_STREAM).
        app.layer.feed(Direction::ToClient, &frame(1, 5, 3, &[0x88]));
        let ids = app.loggable(false);
        assert_eq!(ids, vec![1]);
        app.logged_txs(&ids);
        assert_eq!(app.logged, 0, "stream 1 is still open");
        assert!(app.loggable(false).is_empty(), "stream 3 is not logged twice");
        app.layer.feed(Direction::ToClient, &frame(1, 5, 1, &[0x88]));
        let ids = app.loggable(false);
        assert_eq!(ids, vec![0]);
        app.logged_txs(&ids);
        assert_eq!(app.logged, 2);
        assert_eq!(app.layer.txs().count(), 2, "logged, but kept until detection saw them");
        let (txs, seen) = app.progressed(None);
        assert_eq!(txs.len(), 2);
        drop(txs);
        app.mark_inspected(&seen);
        app.prune_seen();
        assert_eq!(app.layer.txs().count(), 0, "both freed");
    }
}
