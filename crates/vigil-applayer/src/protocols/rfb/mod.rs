//! RFB, the remote framebuffer protocol of VNC (RFC 6143), up to where it
//! starts drawing: the protocol versions both sides announce, the security
//! handshake (the types offered and the one chosen, a VNC authentication's
//! challenge and response, the security result) and the initialisation
//! (whether the desktop is shared, the framebuffer's size, pixel format and
//! name). A connection is one transaction, logged as EVE `rfb` as Suricata
//! writes it; `rfb.name`, `rfb.sectype` and `rfb.secresult`. What follows
//! the server's initialisation is passed over.
//!
//! ```
//! use vigil_applayer::protocols::rfb::PROTO;
//! use vigil_applayer::proto::{ProbeCx, Probe};
//! use vigil_types::Direction::ToClient;
//! let probe = |d: &[u8]| (PROTO.detection.probe)(ToClient, d, ProbeCx::tcp(40000, 5900));
//! assert_eq!(probe(b"RFB 003.008\n"), Probe::Match);
//! assert_eq!(probe(b"RFB 0"), Probe::NeedMore);
//! assert_eq!(probe(b"SSH-2.0-x\r\n"), Probe::NoMatch);
//! ```

mod checks;

use std::any::Any;

use serde_json::{Map, Value};
use vigil_types::{Direction, PerDir};

use crate::parser::{AppEvent, ParseResult};
use crate::progress::Progress;
use crate::proto::{escaped_text, BufferDef, Detection, ParserInit, ProbeCx, Probe, ProtoDef, ProtoParser, ProtoTx, Sides, TxQueue};

/// What one side may send before the other answers (a ServerInit's name
/// included); more is not RFB as this parser follows it.
const MAX_PENDING: usize = 64 * 1024;

pub const EVENTS: &[&str] = &["unimplemented_security_type", "unknown_security_result", "malformed_message", "confused_state"];
/// [`EVENTS`] under the names `app-layer-event` and the anomaly records use.
const EVENT_NAMES: [&str; 4] =
    ["rfb.unimplemented_security_type", "rfb.unknown_security_result", "rfb.malformed_message", "rfb.confused_state"];
const UNIMPLEMENTED: usize = 0;
const UNKNOWN_RESULT: usize = 1;
const MALFORMED: usize = 2;
const CONFUSED: usize = 3;

/// A ProtocolVersion message: `RFB xxx.yyy\n`.
const VERSION_LEN: usize = 12;

/// The pixel format of a ServerInit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PixelFormat {
    pub bits_per_pixel: u8,
    pub depth: u8,
    pub big_endian: bool,
    pub true_color: bool,
    pub max: [u16; 3],
    pub shift: [u8; 3],
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Framebuffer {
    pub width: u16,
    pub height: u16,
    pub pixel_format: PixelFormat,
    pub name: Vec<u8>,
}

/// A connection's handshake.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RfbTx {
    id: u64,
    pub server_version: Option<(String, String)>,
    pub client_version: Option<(String, String)>,
    /// The security type in use: the one the server named (3.3) or the client chose.
    pub security_type: Option<u32>,
    pub challenge: Option<[u8; 16]>,
    pub response: Option<[u8; 16]>,
    /// The SecurityResult: 0 OK, 1 failed, 2 too many attempts.
    pub security_result: Option<u32>,
    pub shared: Option<bool>,
    pub framebuffer: Option<Framebuffer>,
    /// The handshake is over (initialised, refused, or not followed further).
    pub done: bool,
    events: u64,
}

fn version_eve(v: &(String, String)) -> Value {
    let mut o = Map::new();
    o.insert("major".into(), v.0.clone().into());
    o.insert("minor".into(), v.1.clone().into());
    Value::Object(o)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The names `rfb.secresult` and the record give a SecurityResult.
pub fn result_name(r: u32) -> &'static str {
    match r {
        0 => "OK",
        1 => "FAIL",
        2 => "TOOMANY",
        _ => "UNKNOWN",
    }
}

impl ProtoTx for RfbTx {
    fn id(&self) -> u64 {
        self.id
    }

    fn progress(&self, _dir: Direction) -> Progress {
        if self.done {
            Progress::Complete
        } else {
            Progress::None
        }
    }

    fn buffer(&self, dir: Direction, id: u8, index: usize) -> Option<&[u8]> {
        match (dir, id, index) {
            (Direction::ToClient, 0, 0) => self.framebuffer.as_ref().map(|f| &f.name[..]),
            _ => None,
        }
    }

    fn eve(&self) -> Value {
        let mut o = Map::new();
        if let Some(v) = &self.server_version {
            o.insert("server_protocol_version".into(), version_eve(v));
        }
        if let Some(v) = &self.client_version {
            o.insert("client_protocol_version".into(), version_eve(v));
        }
        if let Some(t) = self.security_type {
            let mut a = Map::new();
            a.insert("security_type".into(), t.into());
            if let (Some(c), Some(r)) = (&self.challenge, &self.response) {
                let mut vnc = Map::new();
                vnc.insert("challenge".into(), hex(c).into());
                vnc.insert("response".into(), hex(r).into());
                a.insert("vnc".into(), Value::Object(vnc));
            }
            if let Some(r) = self.security_result {
                a.insert("security_result".into(), result_name(r).into());
            }
            o.insert("authentication".into(), Value::Object(a));
        }
        if let Some(s) = self.shared {
            o.insert("screen_shared".into(), s.into());
        }
        if let Some(f) = &self.framebuffer {
            let p = &f.pixel_format;
            let pf = serde_json::json!({
                "bits_per_pixel": p.bits_per_pixel, "depth": p.depth, "big_endian": p.big_endian, "true_color": p.true_color,
                "red_max": p.max[0], "green_max": p.max[1], "blue_max": p.max[2],
                "red_shift": p.shift[0], "green_shift": p.shift[1], "blue_shift": p.shift[2],
            });
            let mut fb = Map::new();
            fb.insert("width".into(), f.width.into());
            fb.insert("height".into(), f.height.into());
            fb.insert("name".into(), escaped_text(&f.name).into());
            fb.insert("pixel_format".into(), pf);
            o.insert("framebuffer".into(), Value::Object(fb));
        }
        Value::Object(o)
    }

    fn events(&self) -> u64 {
        self.events
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// What the handshake waits for next, and from which side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    ServerVersion,
    ClientVersion,
    /// 3.3: the server names the security type (u32).
    ServerSecurityType,
    /// 3.7 on: the server lists the types it offers.
    SecurityTypes,
    /// 3.7 on: the client chooses one.
    ClientSecurityType,
    Challenge,
    Response,
    SecurityResult,
    /// A failure's reason (u32 length, then text).
    FailureReason,
    ClientInit,
    ServerInit,
    /// A security type not followed: the next bytes, whoever sends them,
    /// end the handshake's reading (Suricata's parser fails on them).
    Unfollowed,
    /// Over: the rest is passed over.
    Done,
}

impl Step {
    fn side(self) -> Direction {
        match self {
            Step::ClientVersion | Step::ClientSecurityType | Step::Response | Step::ClientInit => Direction::ToServer,
            _ => Direction::ToClient,
        }
    }
}

#[derive(Debug)]
pub struct RfbParser {
    txs: TxQueue<RfbTx>,
    step: Step,
    /// The minor version both sides speak (the client's answer; 8 for versions past 3).
    minor: u32,
    /// Bytes of each side not yet read: a side may speak ahead of its turn.
    pending: PerDir<Vec<u8>>,
    /// A gap lost the side's place.
    gapped: PerDir<bool>,
    events: Vec<AppEvent>,
    /// Bytes (and gaps) each side was offered: where its frames lie.
    offered: PerDir<u64>,
    frames: crate::frames::FrameLog,
}

impl RfbParser {
    fn tx(&mut self) -> &mut RfbTx {
        if self.txs.is_empty() {
            self.txs.push_with(|id| RfbTx { id, ..RfbTx::default() });
        }
        let last = self.txs.len() - 1;
        &mut self.txs[last]
    }

    /// Event [`EVENTS`]`[i]` on the connection's transaction.
    fn event(&mut self, i: usize) {
        let t = self.tx();
        t.events |= 1 << i;
        let tx_id = Some(t.id);
        self.events.push(AppEvent { name: EVENT_NAMES[i], tx_id });
    }

    fn finish(&mut self) {
        self.step = Step::Done;
        self.tx().done = true;
        self.pending = PerDir::default();
    }

    /// Reads what the step waits for from `b`: the bytes it took, `None`
    /// while more are needed, `Some(0)` never (a message is at least a byte).
    fn step(&mut self, b: &[u8]) -> Option<usize> {
        let u32_at = |i: usize| b.get(i..i + 4).map(|x| u32::from_be_bytes([x[0], x[1], x[2], x[3]]));
        match self.step {
            Step::ServerVersion | Step::ClientVersion => {
                let line = b.get(..VERSION_LEN)?;
                let Some((major, minor)) = parse_version(line) else {
                    self.event(MALFORMED);
                    self.finish();
                    return Some(b.len());
                };
                if self.step == Step::ServerVersion {
                    self.tx().server_version = Some((major, minor));
                    self.step = Step::ClientVersion;
                } else {
                    // Versions past 3 (RealVNC's 4.1) handshake as 3.8 does.
                    let (maj, min) = (major.parse::<u32>().unwrap_or(3), minor.parse::<u32>().unwrap_or(8));
                    self.minor = if maj > 3 { 8 } else { min };
                    self.tx().client_version = Some((major, minor));
                    self.step = if self.minor < 7 { Step::ServerSecurityType } else { Step::SecurityTypes };
                }
                Some(VERSION_LEN)
            }
            Step::ServerSecurityType => {
                let t = u32_at(0)?;
                self.tx().security_type = Some(t);
                self.step = match t {
                    0 => Step::FailureReason,
                    1 => Step::ClientInit,
                    2 => Step::Challenge,
                    _ => return Some(self.unimplemented(4)),
                };
                Some(4)
            }
            Step::SecurityTypes => {
                let n = usize::from(*b.first()?);
                if n == 0 {
                    self.step = Step::FailureReason;
                    return Some(1);
                }
                b.get(1..1 + n)?;
                self.step = Step::ClientSecurityType;
                Some(1 + n)
            }
            Step::ClientSecurityType => {
                let t = u32::from(*b.first()?);
                self.tx().security_type = Some(t);
                self.step = match t {
                    // 3.8 answers even no authentication with a result.
                    1 if self.minor >= 8 => Step::SecurityResult,
                    1 => Step::ClientInit,
                    2 => Step::Challenge,
                    _ => return Some(self.unimplemented(1)),
                };
                Some(1)
            }
            Step::Challenge | Step::Response => {
                let mut v = [0u8; 16];
                v.copy_from_slice(b.get(..16)?);
                if self.step == Step::Challenge {
                    self.tx().challenge = Some(v);
                    self.step = Step::Response;
                } else {
                    self.tx().response = Some(v);
                    self.step = Step::SecurityResult;
                }
                Some(16)
            }
            Step::SecurityResult => {
                let r = u32_at(0)?;
                self.tx().security_result = Some(r);
                match r {
                    0 => self.step = Step::ClientInit,
                    // 3.8 says why; before it the server just closes.
                    1 | 2 if self.minor >= 8 => self.step = Step::FailureReason,
                    1 | 2 => self.finish(),
                    _ => {
                        self.event(UNKNOWN_RESULT);
                        self.finish();
                    }
                }
                Some(4)
            }
            Step::FailureReason => {
                let len = u32_at(0)? as usize;
                if len > MAX_PENDING {
                    self.event(MALFORMED);
                    self.finish();
                    return Some(b.len());
                }
                b.get(4..4 + len)?;
                self.finish();
                Some(4 + len)
            }
            Step::ClientInit => {
                let shared = *b.first()? != 0;
                self.tx().shared = Some(shared);
                self.step = Step::ServerInit;
                Some(1)
            }
            Step::ServerInit => {
                let len = u32_at(20)? as usize;
                if len > MAX_PENDING - 24 {
                    self.event(MALFORMED);
                    self.finish();
                    return Some(b.len());
                }
                let name = b.get(24..24 + len)?.to_vec();
                let u16_at = |i: usize| u16::from_be_bytes([b[i], b[i + 1]]);
                let pixel_format = PixelFormat {
                    bits_per_pixel: b[4],
                    depth: b[5],
                    big_endian: b[6] != 0,
                    true_color: b[7] != 0,
                    max: [u16_at(8), u16_at(10), u16_at(12)],
                    shift: [b[14], b[15], b[16]],
                };
                self.tx().framebuffer = Some(Framebuffer { width: u16_at(0), height: u16_at(2), pixel_format, name });
                self.finish();
                Some(24 + len)
            }
            Step::Unfollowed => {
                self.finish();
                Some(b.len())
            }
            Step::Done => Some(b.len()),
        }
    }

    /// A security type this parser does not follow: what it took of the
    /// message, and nothing more is read.
    fn unimplemented(&mut self, took: usize) -> usize {
        self.event(UNIMPLEMENTED);
        self.step = Step::Unfollowed;
        took
    }

    /// Reads all that the sides have, in turn.
    fn run(&mut self) {
        loop {
            if self.step == Step::Done {
                return;
            }
            let side = self.step.side();
            if *self.gapped.get(side) && self.step != Step::Unfollowed {
                self.finish();
                return;
            }
            let buf = std::mem::take(self.pending.get_mut(side));
            if buf.is_empty() {
                return;
            }
            match self.step(&buf) {
                Some(n) => {
                    if self.frames.is_on() {
                        let at = *self.offered.get(side) - buf.len() as u64;
                        let msg = &buf[..n.min(buf.len())];
                        self.frames.add_at(side, at, Some(msg.len() as u64), 0, None, msg);
                    }
                    if self.step != Step::Done {
                        *self.pending.get_mut(side) = buf[n.min(buf.len())..].to_vec();
                    }
                }
                None => {
                    *self.pending.get_mut(side) = buf;
                    return;
                }
            }
        }
    }
}

/// `RFB xxx.yyy\n`: the major and minor version as written.
fn parse_version(line: &[u8]) -> Option<(String, String)> {
    let rest = line.strip_prefix(b"RFB ")?;
    let ok = rest.len() == 8 && rest[3] == b'.' && rest[7] == b'\n';
    let digits = |s: &[u8]| s.iter().all(u8::is_ascii_digit);
    if !ok || !digits(&rest[..3]) || !digits(&rest[4..7]) {
        return None;
    }
    Some((String::from_utf8_lossy(&rest[..3]).into_owned(), String::from_utf8_lossy(&rest[4..7]).into_owned()))
}

impl ProtoParser for RfbParser {
    fn parse(&mut self, dir: Direction, data: &[u8]) -> ParseResult {
        if self.step == Step::Done {
            return ParseResult::Done;
        }
        if *self.gapped.get(dir) {
            // The other side may still have its turn; this one's bytes cannot be placed.
            if self.step == Step::Unfollowed {
                self.finish();
            }
            return ParseResult::Done;
        }
        *self.offered.get_mut(dir) += data.len() as u64;
        let pending = self.pending.get_mut(dir);
        if pending.len() + data.len() > MAX_PENDING {
            self.event(CONFUSED);
            self.finish();
            return ParseResult::Done;
        }
        pending.extend_from_slice(data);
        if self.step == Step::Unfollowed {
            self.finish();
            return ParseResult::Done;
        }
        self.run();
        ParseResult::Done
    }

    fn on_gap(&mut self, dir: Direction, len: u64) -> bool {
        // That side's place in the handshake is lost with the bytes: its
        // next message ends the reading, the other side's are still read.
        *self.gapped.get_mut(dir) = true;
        *self.offered.get_mut(dir) += len;
        self.pending.get_mut(dir).clear();
        if self.step.side() == dir && !matches!(self.step, Step::Done | Step::Unfollowed) {
            self.finish();
        }
        true
    }

    fn close(&mut self, _dir: Direction, _held: &[u8]) {}

    crate::proto::delegate_txs!(txs);

    fn prune(&mut self, id: u64) {
        self.txs.prune_while(id, |t| t.done);
    }

    fn drain_events(&mut self, out: &mut Vec<AppEvent>) {
        out.append(&mut self.events);
    }

    fn wants_data(&self) -> bool {
        self.step != Step::Done
    }

    fn take_frames(&mut self, out: &mut Vec<crate::frames::Mark>) -> u8 {
        self.frames.drain(out);
        self.frames.tx_base()
    }
}

fn new_parser(init: &ParserInit) -> Box<dyn ProtoParser> {
    Box::new(RfbParser {
        txs: TxQueue::new(init.first_tx_id, 4),
        step: Step::ServerVersion,
        minor: 8,
        pending: PerDir::default(),
        gapped: PerDir::default(),
        events: Vec::new(),
        offered: PerDir::default(),
        frames: crate::frames::FrameLog::counted_from_one(init.app.frames),
    })
}

/// A ProtocolVersion message, from either side.
fn probe(_dir: Direction, data: &[u8], _cx: ProbeCx) -> Probe {
    let want = b"RFB 000.000\n";
    for (i, &b) in data.iter().take(VERSION_LEN).enumerate() {
        let fits = if want[i] == b'0' { b.is_ascii_digit() } else { b == want[i] };
        if !fits {
            return Probe::NoMatch;
        }
    }
    if data.len() < VERSION_LEN {
        Probe::NeedMore
    } else {
        Probe::Match
    }
}

/// A 3.8 session with VNC authentication, up to the server's initialisation.
fn sample() -> Vec<(Direction, Vec<u8>)> {
    use Direction::{ToClient, ToServer};
    let mut init = vec![0x05, 0x00, 0x03, 0x20, 32, 24, 0, 1, 0, 255, 0, 255, 0, 255, 16, 8, 0, 0, 0, 0];
    init.extend(9u32.to_be_bytes());
    init.extend_from_slice(b"desktop-1");
    vec![
        (ToClient, b"RFB 003.008\n".to_vec()),
        (ToServer, b"RFB 003.008\n".to_vec()),
        (ToClient, vec![2, 1, 2]),
        (ToServer, vec![2]),
        (ToClient, vec![0x11; 16]),
        (ToServer, vec![0x22; 16]),
        (ToClient, 0u32.to_be_bytes().to_vec()),
        (ToServer, vec![1]),
        (ToClient, init),
        // A framebuffer update request: drawing, passed over.
        (ToServer, vec![3, 0, 0, 0, 0, 0, 5, 0, 3, 0x20]),
    ]
}

pub static PROTO: ProtoDef = ProtoDef {
    name: "rfb",
    eve_name: None,
    detection: Detection {
        tcp: true,
        udp: false,
        ports: &[5900],
        ports_only: false,
        probe,
        counters_by_transport: false,
        answers_first: None,
    },
    new_parser,
    buffers: &[BufferDef {
        name: "rfb.name",
        id: 0,
        sides: Sides::ToClient,
        default: Direction::ToClient,
        both_ways: false,
        need: Progress::Complete,
        multi: false,
    }],
    checks: checks::CHECKS,
    events: EVENTS,
    event: crate::proto::no_other_events,
    options: &[],
    settings: &[],
    sample,
    sample_expected: None,
    files: false,
    transactions: true,
    aliases: &[],
    includes: &[],
    borrows: &[],
    base_need: crate::proto::HEADERS_BOTH,
    hooks: crate::proto::Hooks::GENERIC,
    off_by_default: false,
    stream_depth: None,
    frames: &["pdu"],
};

#[cfg(test)]
mod tests;
