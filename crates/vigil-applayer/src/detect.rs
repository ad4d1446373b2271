//! Protocol detection: which parser a flow's bytes belong to, decided from
//! its first bytes the way Suricata does it: every enabled protocol is
//! probed whatever the ports, in the table's order (HTTP and TLS first, as
//! Suricata's pattern stage runs before its probing parsers, then DNS, then
//! the weaker signatures), and ports are only a hint, except for the protocols whose signature is too weak to stand on
//! its own (DNS is probed where a port is 53, since a 2-byte length and a
//! 12-byte header are too easy to match by chance).
//!
//! A flow's detector keeps each direction's first bytes, and the order in
//! which bytes, gaps and closes arrived, so that once a direction matches
//! the chosen parser sees the flow from its start as if it had been there
//! all along.

use vigil_types::{AppProto, Direction, PerDir};

use crate::config::{AppConfig, Transport};
use crate::proto::{Probe, ProbeCx};
use crate::protocols::ALL;

/// The table's protocols that may run on a flow over `transport` between these ports.
fn table_probes(cfg: &AppConfig, transport: Transport, client_port: u16, server_port: u16) -> u64 {
    let mut mask = 0;
    for (i, def) in ALL.iter().enumerate().take(64) {
        let d = &def.detection;
        let carried = match transport {
            Transport::Tcp => d.tcp,
            Transport::Udp => d.udp,
        };
        let configured = cfg.table_ports.get(i).and_then(|p| p[usize::from(transport == Transport::Udp)].as_ref());
        let port_ok = match configured {
            _ if !d.ports_only => true,
            // `detection-ports`: the server's or the client's, as Suricata reads them.
            Some(p) => p.matches(client_port, server_port),
            None => d.ports.contains(&client_port) || d.ports.contains(&server_port),
        };
        if carried && port_ok && cfg.table_enabled & (1u64 << i) != 0 {
            mask |= 1u64 << i;
        }
    }
    mask
}

/// What the first bytes of one direction say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detect {
    /// The flow speaks this protocol.
    Match(AppProto),
    /// No enabled protocol can be ruled in or out yet.
    NeedMore,
    /// No enabled protocol fits.
    NoMatch,
}

/// Probes the first bytes of `dir` of a flow (`client_port`/`server_port` as seen to-server),
/// as [`AppFlow`](crate::AppFlow) does. UDP `data` is one datagram, which decides at once.
pub fn probe(
    cfg: &AppConfig,
    transport: Transport,
    client_port: u16,
    server_port: u16,
    dir: Direction,
    data: &[u8],
) -> Detect {
    let probes = Probes::new(cfg, transport, client_port, server_port);
    match transport {
        Transport::Tcp => probes.tcp(dir, data),
        Transport::Udp => probes.udp(dir, data),
    }
}

/// Whether a TCP flow's first bytes to the server are a server's answer
/// (an HTTP status line), so a session picked up mid-stream had its ends
/// the wrong way round: Suricata's probing turns such a flow round.
pub fn answers_first(cfg: &AppConfig, data: &[u8]) -> bool {
    ALL.iter()
        .enumerate()
        .take(64)
        .any(|(i, def)| cfg.table_enabled & (1u64 << i) != 0 && def.detection.answers_first.is_some_and(|f| f(data)))
}

/// The protocols a flow may be found to speak.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Probes {
    cx: ProbeCx,
    /// Protocols of the table probed on this flow, by place (enabled, and
    /// on one of their ports where they ask for it).
    table: u64,
}

impl Probes {
    pub(crate) fn new(cfg: &AppConfig, transport: Transport, client_port: u16, server_port: u16) -> Self {
        Probes {
            cx: ProbeCx { client: client_port, server: server_port, transport },
            table: table_probes(cfg, transport, client_port, server_port),
        }
    }

    /// Probes the table's protocols in order; `None` when none decided.
    fn table(self, dir: Direction, data: &[u8], need_more: &mut bool) -> Option<AppProto> {
        if self.table == 0 {
            return None;
        }
        for (i, def) in ALL.iter().enumerate() {
            if self.table & (1u64 << i) == 0 {
                continue;
            }
            match (def.detection.probe)(dir, data, self.cx) {
                Probe::Match => return Some(def.app_proto()),
                Probe::NeedMore if self.cx.transport == Transport::Tcp => *need_more = true,
                Probe::NeedMore | Probe::NoMatch => {}
            }
        }
        None
    }

    /// A match by any probe wins over another probe wanting more bytes.
    pub(crate) fn tcp(self, dir: Direction, data: &[u8]) -> Detect {
        let mut need_more = false;
        if let Some(proto) = self.table(dir, data, &mut need_more) {
            return Detect::Match(proto);
        }
        if need_more {
            Detect::NeedMore
        } else {
            Detect::NoMatch
        }
    }

    /// A datagram is all there is to judge by: what matches nothing now never will.
    pub(crate) fn udp(self, dir: Direction, data: &[u8]) -> Detect {
        match self.table(dir, data, &mut false) {
            Some(proto) => Detect::Match(proto),
            None => Detect::NoMatch,
        }
    }
}

/// One step of what happened to a flow during detection, in arrival order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Run {
    /// The next `len` bytes of that direction's kept bytes.
    Data(Direction, usize),
    /// Bytes that did not reach detection: a capture gap, or bytes past the detection limit.
    Gap(Direction, u64),
    Close(Direction),
}

/// Where detection of a TCP flow stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    Undecided,
    /// The flow speaks this protocol. The bytes of the call that decided were not taken: the
    /// caller replays what the detector kept, then hands the parser those bytes itself.
    Found(AppProto),
    /// Neither direction can match any more.
    Failed,
}

/// Run steps kept at most. Each step but a merged one needs a byte kept or a direction
/// failing, so only an adversary interleaving single bytes gets here; detection then gives up
/// rather than keep a long list.
const MAX_RUNS: usize = 1024;

#[derive(Debug, Default)]
struct Side {
    /// The direction's first bytes (at most the limit): probed, then replayed.
    kept: Vec<u8>,
    /// No probe can match any more: the bytes said no, the limit was reached, or a gap
    /// hid the start of the stream.
    failed: bool,
    closed: bool,
    /// Bytes or a gap went by: the flow carried payload.
    active: bool,
}

impl Side {
    fn done(&self) -> bool {
        self.failed || self.closed
    }
}

/// Detection state of one TCP flow.
#[derive(Debug)]
pub(crate) struct Detector {
    probes: Probes,
    limit: usize,
    sides: PerDir<Side>,
    runs: Vec<Run>,
    /// Bytes past the limit, which reach the parser as gaps.
    skipped: u64,
    /// Inside a tunnel (after an HTTP CONNECT or upgrade): one side that
    /// failed while the other ended silent fails the detection, as
    /// Suricata's tunnels do; a flow's first detection needs both sides.
    tunnel: bool,
}

impl Detector {
    pub(crate) fn new(probes: Probes, limit: usize) -> Self {
        Detector { probes, limit, sides: PerDir::default(), runs: Vec::new(), skipped: 0, tunnel: false }
    }

    /// Detection of what runs inside a tunnel.
    pub(crate) fn tunnel(probes: Probes, limit: usize) -> Self {
        Detector { tunnel: true, ..Detector::new(probes, limit) }
    }

    /// The next bytes of `dir`.
    pub(crate) fn feed(&mut self, dir: Direction, data: &[u8]) -> Verdict {
        let side = self.sides.get_mut(dir);
        side.active = true;
        let before = side.kept.len();
        let take = self.limit.saturating_sub(before).min(data.len());
        let head = data.get(..take).unwrap_or_default();
        let mut stored = false;
        if !side.failed {
            // The first chunk is probed in place: a flow decided by its first bytes copies nothing.
            let answer = if side.kept.is_empty() {
                self.probes.tcp(dir, head)
            } else {
                side.kept.extend_from_slice(head);
                stored = true;
                let answer = self.probes.tcp(dir, &side.kept);
                if matches!(answer, Detect::Match(_)) {
                    side.kept.truncate(before);
                }
                answer
            };
            match answer {
                Detect::Match(proto) => return Verdict::Found(proto),
                Detect::NoMatch => side.failed = true,
                Detect::NeedMore => side.failed = before + take >= self.limit,
            }
        }
        if !stored {
            side.kept.extend_from_slice(head);
        }
        let lost = (data.len() - take) as u64;
        self.skipped = self.skipped.saturating_add(lost);
        if take > 0 {
            self.push(Run::Data(dir, take));
        }
        if lost > 0 {
            self.push(Run::Gap(dir, lost));
        }
        self.verdict()
    }

    /// `len` bytes of `dir` were lost: what follows is not the start of the stream, so that
    /// direction is no longer probed.
    pub(crate) fn gap(&mut self, dir: Direction, len: u64) -> Verdict {
        let side = self.sides.get_mut(dir);
        side.active = true;
        side.failed = true;
        self.push(Run::Gap(dir, len));
        self.verdict()
    }

    pub(crate) fn close(&mut self, dir: Direction) -> Verdict {
        let side = self.sides.get_mut(dir);
        if !side.closed {
            side.closed = true;
            self.push(Run::Close(dir));
        }
        self.verdict()
    }

    fn push(&mut self, run: Run) {
        let full = self.runs.len() >= MAX_RUNS;
        match (self.runs.last_mut(), run) {
            (Some(Run::Data(d, n)), Run::Data(dir, len)) if *d == dir => *n = n.saturating_add(len),
            (Some(Run::Gap(d, n)), Run::Gap(dir, len)) if *d == dir => *n = n.saturating_add(len),
            _ if full => {
                self.sides.to_server.failed = true;
                self.sides.to_client.failed = true;
            }
            _ => self.runs.push(run),
        }
    }

    /// Failed once neither direction can still match, provided both carried something: a
    /// flow that ends without payload, or with payload one way only, stays unknown, as in
    /// Suricata.
    fn verdict(&self) -> Verdict {
        let s = &self.sides;
        let carried = if self.tunnel {
            s.to_server.active || s.to_client.active
        } else {
            s.to_server.active && s.to_client.active
        };
        if s.to_server.done() && s.to_client.done() && carried {
            Verdict::Failed
        } else {
            Verdict::Undecided
        }
    }

    /// Whether `dir`'s first bytes matched nothing, and what it sent that
    /// is still undecided.
    pub(crate) fn side(&self, dir: Direction) -> (bool, &[u8]) {
        let s = self.sides.get(dir);
        (s.failed && s.active, if s.failed { &[] } else { &s.kept })
    }

    /// What was kept, for the chosen parser.
    pub(crate) fn into_replay(self) -> Replay {
        Replay {
            kept: PerDir { to_server: self.sides.to_server.kept, to_client: self.sides.to_client.kept },
            runs: self.runs,
            skipped: self.skipped,
        }
    }
}

/// A detector's kept bytes and the order they came in.
#[derive(Debug)]
pub(crate) struct Replay {
    kept: PerDir<Vec<u8>>,
    runs: Vec<Run>,
    /// Bytes past the detection limit (inside the [`Step::Gap`]s).
    pub(crate) skipped: u64,
}

/// One step of a replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step<'a> {
    Data(Direction, &'a [u8]),
    Gap(Direction, u64),
    Close(Direction),
}

impl Replay {
    pub(crate) fn steps(&self) -> impl Iterator<Item = Step<'_>> {
        let mut offset = PerDir::<usize>::default();
        self.runs.iter().map(move |run| match *run {
            Run::Data(dir, len) => {
                let at = offset.get_mut(dir);
                let end = at.saturating_add(len);
                let bytes = self.kept.get(dir).get(*at..end).unwrap_or_default();
                *at = end;
                Step::Data(dir, bytes)
            }
            Run::Gap(dir, len) => Step::Gap(dir, len),
            Run::Close(dir) => Step::Close(dir),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vigil_types::Direction::{ToClient, ToServer};

    const HTTP: AppProto = AppProto::Plugin("http");

    fn detector(limit: usize) -> Detector {
        Detector::new(Probes::new(&AppConfig::default(), Transport::Tcp, 40000, 80), limit)
    }

    #[test]
    fn first_bytes_decide_without_keeping_them() {
        let mut d = detector(4096);
        assert_eq!(d.feed(ToServer, b"GET / HTTP/1.1\r\n"), Verdict::Found(HTTP));
        assert!(d.into_replay().runs.is_empty());
    }

    #[test]
    fn bytes_are_kept_in_arrival_order_until_a_match() {
        let mut d = detector(4096);
        assert_eq!(d.feed(ToClient, b"220 hello\r\n"), Verdict::Undecided);
        assert_eq!(d.feed(ToServer, b"PO"), Verdict::Undecided);
        assert_eq!(d.feed(ToClient, b"more"), Verdict::Undecided);
        assert_eq!(d.feed(ToServer, b"ST /x HTTP/1.0\r\n"), Verdict::Found(HTTP));
        let r = d.into_replay();
        let steps: Vec<_> = r.steps().collect();
        assert_eq!(
            steps,
            [Step::Data(ToClient, b"220 hello\r\n"), Step::Data(ToServer, b"PO"), Step::Data(ToClient, b"more")]
        );
    }

    #[test]
    fn gives_up_when_both_sides_fail() {
        let mut d = detector(4096);
        assert_eq!(d.feed(ToClient, b"ZZP 003.008 ready\n"), Verdict::Undecided);
        assert_eq!(d.feed(ToServer, b"ZZP 003.003 hello\n"), Verdict::Failed);
    }

    #[test]
    fn limit_bounds_kept_bytes_and_ends_waiting() {
        let mut d = detector(8);
        // A prefix of "OPTIONS" keeps HTTP possible until the limit is reached.
        assert_eq!(d.feed(ToServer, b"OPTI"), Verdict::Undecided);
        assert_eq!(d.feed(ToClient, &[0u8; 100]), Verdict::Undecided);
        assert_eq!(d.sides.to_client.kept.len(), 8);
        assert_eq!(d.close(ToServer), Verdict::Failed);
        assert_eq!(d.skipped, 92);
    }

    #[test]
    fn a_flow_without_payload_stays_unknown() {
        let mut d = detector(4096);
        assert_eq!(d.close(ToServer), Verdict::Undecided);
        assert_eq!(d.close(ToClient), Verdict::Undecided);
        // Payload one way only that no protocol takes: unknown too, as in Suricata.
        let mut d = detector(4096);
        assert_eq!(d.feed(ToServer, b"ZZP 003.003 hello\n"), Verdict::Undecided);
        assert_eq!(d.close(ToServer), Verdict::Undecided);
        assert_eq!(d.close(ToClient), Verdict::Undecided);
    }

    #[test]
    fn dns_over_tcp_only_with_port_53() {
        let msg = b"\x00\x1d\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07example\x03com\x00\x00\x01\x00\x01";
        let cfg = AppConfig::default();
        let dns = crate::protocols::dns::PROTO.app_proto();
        assert_eq!(probe(&cfg, Transport::Tcp, 40000, 53, ToServer, msg), Detect::Match(dns));
        assert_eq!(probe(&cfg, Transport::Udp, 40000, 53, ToServer, &msg[2..]), Detect::Match(dns));
        assert_eq!(probe(&cfg, Transport::Tcp, 40000, 5353, ToServer, msg), Detect::NoMatch);
        // Ports the configuration names (`detection-ports`) replace DNS's own.
        let mut cfg = AppConfig::default();
        let at = crate::proto::index("dns").unwrap();
        cfg.table_ports = vec![[None, None]; crate::protocols::ALL.len()];
        cfg.table_ports[at][0] = Some(crate::config::ProbePorts { dp: vec![(5353, 5353)], sp: Vec::new() });
        assert_eq!(probe(&cfg, Transport::Tcp, 40000, 5353, ToServer, msg), Detect::Match(dns));
        assert_eq!(probe(&cfg, Transport::Tcp, 40000, 53, ToServer, msg), Detect::NoMatch);
        assert_eq!(probe(&cfg, Transport::Udp, 40000, 53, ToServer, &msg[2..]), Detect::Match(dns));
        let mut cfg = AppConfig::default();
        cfg.set_enabled("dns", false);
        assert_eq!(probe(&cfg, Transport::Tcp, 40000, 53, ToServer, msg), Detect::NoMatch);
    }
}
