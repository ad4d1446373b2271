//! Frames: the records of a protocol (a PDU, its header, its data, a
//! request line) as places in a direction's stream, which rules inspect
//! with `frame:<proto>.<type>` and EVE `frame` records show.
//!
//! A parser tells where its records lie in the bytes it was offered
//! ([`FrameLog`]); it need not know where those bytes lie in the stream,
//! nor keep them. The flow ([`FrameTrack`]) turns those marks into stream
//! offsets, collects each frame's bytes as they pass (within
//! [`MAX_FRAME_BYTES`]), and hands a frame over once it is whole, or once
//! its direction ends or loses bytes. Nothing is recorded unless a rule or
//! an output asks for frames ([`crate::AppConfig::frames`]).

use vigil_types::{Direction, PerDir};

/// Bytes kept of one frame: a longer frame is inspected and logged by its
/// first bytes (counted in [`FrameTrack::truncated`]).
pub const MAX_FRAME_BYTES: usize = 256 * 1024;
/// Bytes the open frames of one flow hold together; past it new bytes are
/// not kept (counted as truncation).
const MAX_OPEN_BYTES: usize = 1 << 20;
/// Frames of one flow open at once; past it new ones are not recorded.
const MAX_OPEN: usize = 256;
/// Bytes kept of a whole-stream frame: what its record shows and a
/// `<proto>.stream` rule inspects.
pub const MAX_STREAM_FRAME_BYTES: usize = 64 * 1024;

/// What a parser says of its frames, relative to the bytes of its current
/// [`crate::proto::ProtoParser::parse`] call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mark {
    /// A frame of type `ftype` (its place in [`crate::proto::ProtoDef::frames`])
    /// starts `at` bytes into the data offered (before it, for a parser
    /// that kept earlier bytes itself), `len` long (`None`: not known yet,
    /// see [`Mark::Len`]). `handle` names it in later marks. `bytes`: its
    /// first bytes, from a parser that kept them itself; else they are
    /// taken from the data offered.
    New { dir: Direction, handle: u32, at: At, len: Option<u64>, ftype: u8, tx: Option<u64>, bytes: Option<Vec<u8>> },
    /// The frame's length is now known.
    Len { dir: Direction, handle: u32, len: u64 },
    /// The frame belongs to transaction `tx`.
    Tx { dir: Direction, handle: u32, tx: u64 },
}

/// Where a frame starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum At {
    /// Relative to the data of the current parse call (before it when
    /// negative).
    Rel(i64),
    /// At this offset of its direction's stream, as a parser that counts
    /// the bytes (and gaps) it was offered knows it; it must not leave
    /// bytes unconsumed for the flow to offer again. In a datagram, from
    /// its start.
    Stream(u64),
}

/// A parser's record of its frames between two calls. Off, it records
/// nothing and costs a branch per record.
#[derive(Debug, Default, Clone)]
pub struct FrameLog {
    on: bool,
    /// Added to transaction ids where frames show them (see [`Frame::tx_shown`]).
    tx_base: u8,
    next: u32,
    marks: Vec<Mark>,
}

impl FrameLog {
    pub fn new(on: bool) -> FrameLog {
        FrameLog { on, ..FrameLog::default() }
    }

    /// The same, for a protocol Suricata parses in Rust: its frames show
    /// transaction ids counted from 1, as that parser numbers them.
    pub fn counted_from_one(on: bool) -> FrameLog {
        FrameLog { on, tx_base: 1, ..FrameLog::default() }
    }

    pub fn is_on(&self) -> bool {
        self.on
    }

    /// The marks since the last call and what their transaction ids show
    /// (see [`FrameLog::counted_from_one`]).
    pub fn tx_base(&self) -> u8 {
        self.tx_base
    }

    /// A frame of `ftype` at `at` of the data offered, `len` long when
    /// known; the handle later marks name it by.
    pub fn add(&mut self, dir: Direction, at: usize, len: Option<u64>, ftype: u8, tx: Option<u64>) -> u32 {
        self.mark(dir, At::Rel(at as i64), len, ftype, tx, None)
    }

    /// A frame whose first bytes the parser holds itself (`bytes`, which
    /// start `at` bytes from the data offered, before it when negative).
    pub fn add_held(
        &mut self,
        dir: Direction,
        at: i64,
        len: Option<u64>,
        ftype: u8,
        tx: Option<u64>,
        bytes: &[u8],
    ) -> u32 {
        if !self.on {
            return 0;
        }
        let keep = bytes.len().min(MAX_FRAME_BYTES);
        self.mark(dir, At::Rel(at), len, ftype, tx, Some(bytes[..keep].to_vec()))
    }

    /// A frame at stream offset `offset` of `dir` whose first bytes the
    /// parser holds (`bytes`): for parsers that count what they were offered.
    pub fn add_at(
        &mut self,
        dir: Direction,
        offset: u64,
        len: Option<u64>,
        ftype: u8,
        tx: Option<u64>,
        bytes: &[u8],
    ) -> u32 {
        if !self.on {
            return 0;
        }
        let keep = bytes.len().min(MAX_FRAME_BYTES);
        self.mark(dir, At::Stream(offset), len, ftype, tx, Some(bytes[..keep].to_vec()))
    }

    fn mark(
        &mut self,
        dir: Direction,
        at: At,
        len: Option<u64>,
        ftype: u8,
        tx: Option<u64>,
        bytes: Option<Vec<u8>>,
    ) -> u32 {
        if !self.on {
            return 0;
        }
        self.next = self.next.wrapping_add(1).max(1);
        self.marks.push(Mark::New { dir, handle: self.next, at, len, ftype, tx, bytes });
        self.next
    }

    pub fn set_len(&mut self, dir: Direction, handle: u32, len: u64) {
        if self.on && handle != 0 {
            self.marks.push(Mark::Len { dir, handle, len });
        }
    }

    pub fn set_tx(&mut self, dir: Direction, handle: u32, tx: u64) {
        if self.on && handle != 0 {
            self.marks.push(Mark::Tx { dir, handle, tx });
        }
    }

    /// The marks since the last call, moved to `out`.
    pub fn drain(&mut self, out: &mut Vec<Mark>) {
        out.append(&mut self.marks);
    }
}

/// A frame handed to detection and logging.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The protocol whose frame it is (its [`crate::proto::ProtoDef`] name).
    pub proto: &'static str,
    /// Its type, by its place in the protocol's frame types.
    pub ftype: u8,
    pub dir: Direction,
    /// Numbered per direction of a TCP flow (from 2 when the stream frame
    /// is 1), per datagram over UDP.
    pub id: u64,
    /// Where it starts in its direction's stream; `None` over UDP.
    pub offset: Option<u64>,
    /// Its length, where known.
    pub len: Option<u64>,
    /// All of its bytes passed (none lost, none past the end of the stream).
    pub complete: bool,
    pub tx_id: Option<u64>,
    /// Added to `tx_id` where it is shown: 1 for the protocols Suricata
    /// parses in Rust, whose frames (and alerts on them) count
    /// transactions from 1.
    pub tx_base: u8,
    /// Its bytes, as far as kept.
    pub data: Vec<u8>,
}

impl Frame {
    /// The transaction id its records show.
    pub fn tx_shown(&self) -> Option<u64> {
        self.tx_id.map(|t| t + u64::from(self.tx_base))
    }

    /// Its type's name (`pdu`, `smb2.hdr`).
    pub fn type_name(&self) -> &'static str {
        if self.ftype == STREAM {
            return "stream";
        }
        crate::proto::find(self.proto).and_then(|d| d.frames.get(usize::from(self.ftype)).copied()).unwrap_or("")
    }
}

/// The type number of the whole-stream frame every TCP protocol has.
pub const STREAM: u8 = u8::MAX;

struct Open {
    handle: u32,
    frame: Frame,
    /// Where it starts: in its stream, or in its datagram.
    start: u64,
    /// Bytes of the frame that passed, kept or not.
    seen: u64,
    /// Some of its bytes were not kept.
    cut: bool,
    /// Some of its bytes were lost to a gap.
    gapped: bool,
}

/// One flow's frames: those open, and those ready to be handed over.
#[derive(Default)]
pub struct FrameTrack {
    open: Vec<Open>,
    ready: Vec<Frame>,
    next_id: PerDir<u64>,
    marks: Vec<Mark>,
    held: usize,
    /// Each direction's whole-stream frame (id 1), when asked for.
    streams: bool,
    stream: PerDir<Option<Open>>,
    /// Bytes of the direction were lost: its stream frame is not complete.
    gapped: PerDir<bool>,
    /// Frames whose bytes were not all kept.
    pub truncated: u64,
    /// Frames not recorded because too many were open.
    pub refused: u64,
}

impl FrameTrack {
    /// Frames ids of a TCP flow start after `first` (1 when the stream
    /// frame takes id 1).
    pub fn new(reserved: u64) -> FrameTrack {
        FrameTrack { next_id: PerDir { to_server: reserved, to_client: reserved }, ..FrameTrack::default() }
    }

    /// A TCP flow's tracker with each direction's whole-stream frame (id 1),
    /// its app frames numbered from 2.
    pub fn with_streams() -> FrameTrack {
        FrameTrack { streams: true, ..FrameTrack::new(1) }
    }

    /// `data`, at stream offset `at` of `dir` of a flow of `proto`, passed:
    /// open frames of `dir` take what falls in them.
    pub fn pass(&mut self, proto: &'static str, dir: Direction, at: u64, data: &[u8]) {
        for o in self.open.iter_mut().filter(|o| o.frame.dir == dir) {
            let start = o.start + o.seen;
            take(o, &mut self.held, &mut self.truncated, at, data, start);
        }
        if self.streams {
            let o = self.stream.get_mut(dir).get_or_insert_with(|| Open {
                handle: 0,
                frame: Frame {
                    proto,
                    ftype: STREAM,
                    dir,
                    id: 1,
                    offset: Some(at),
                    len: None,
                    complete: false,
                    tx_id: None,
                    tx_base: 0,
                    data: Vec::new(),
                },
                start: at,
                seen: 0,
                cut: false,
                gapped: false,
            });
            let from = o.start + o.seen;
            if let Some(bytes) = from.checked_sub(at).and_then(|skip| data.get(skip as usize..)) {
                o.seen += bytes.len() as u64;
                let keep = bytes.len().min(MAX_STREAM_FRAME_BYTES.saturating_sub(o.frame.data.len()));
                o.frame.data.extend_from_slice(&bytes[..keep]);
            }
        }
        self.finish(dir);
    }

    /// `len` bytes of `dir` were lost: its open frames (its stream frame
    /// among them) go on past the hole, which their bytes show as
    /// `[N bytes missing]`, as Suricata shows it; they are not complete.
    pub fn lost(&mut self, dir: Direction, len: u64) {
        let opens = self.open.iter_mut().filter(|o| o.frame.dir == dir).chain(self.stream.get_mut(dir).as_mut());
        for o in opens {
            let end = o.frame.len.map_or(u64::MAX, |l| o.start + l);
            let missing = len.min(end.saturating_sub(o.start + o.seen));
            if missing == 0 {
                continue;
            }
            o.seen += missing;
            o.gapped = true;
            let note = format!("[{missing} bytes missing]");
            let cap = if o.frame.ftype == STREAM { MAX_STREAM_FRAME_BYTES } else { MAX_FRAME_BYTES };
            let keep = note.len().min(cap.saturating_sub(o.frame.data.len()));
            o.frame.data.extend_from_slice(&note.as_bytes()[..keep]);
            if o.frame.ftype != STREAM {
                self.held += keep;
            }
        }
        if self.stream.get(dir).is_some() {
            *self.gapped.get_mut(dir) = true;
        }
        self.finish(dir);
    }

    /// After a parse call on `buf` (at stream offset `base` of `dir`; `None`
    /// for a datagram): what the parser marked.
    pub fn marked(
        &mut self,
        proto: &'static str,
        dir: Direction,
        base: Option<u64>,
        buf: &[u8],
        log: &mut dyn FnMut(&mut Vec<Mark>) -> u8,
    ) {
        let tx_base = log(&mut self.marks);
        if self.marks.is_empty() {
            return;
        }
        let datagram = base.is_none();
        let base = base.unwrap_or(0);
        let mut ids = 0u64;
        for m in std::mem::take(&mut self.marks) {
            match m {
                Mark::New { dir: d, handle, at, len, ftype, tx, bytes } => {
                    if self.open.len() >= MAX_OPEN {
                        self.refused += 1;
                        continue;
                    }
                    let id = if datagram {
                        ids += 1;
                        ids
                    } else {
                        let n = self.next_id.get_mut(d);
                        *n += 1;
                        *n
                    };
                    let start = match at {
                        At::Rel(r) => (base as i64 + r).max(0) as u64,
                        At::Stream(o) => o,
                    };
                    let frame = Frame {
                        proto,
                        ftype,
                        dir: d,
                        id,
                        offset: (!datagram).then_some(start),
                        len,
                        complete: false,
                        tx_id: tx,
                        tx_base,
                        data: Vec::new(),
                    };
                    let mut o = Open { handle, frame, start, seen: 0, cut: false, gapped: false };
                    if let Some(mut b) = bytes {
                        if let Some(l) = len {
                            b.truncate(l.min(usize::MAX as u64) as usize);
                        }
                        let room = MAX_OPEN_BYTES.saturating_sub(self.held);
                        o.seen = b.len() as u64;
                        if b.len() > room {
                            b.truncate(room);
                            o.cut = true;
                            self.truncated += 1;
                        }
                        self.held += b.len();
                        o.frame.data = b;
                    }
                    if d == dir {
                        let from = start + o.seen;
                        take(&mut o, &mut self.held, &mut self.truncated, base, buf, from);
                    }
                    self.open.push(o);
                }
                Mark::Len { dir: d, handle, len } => {
                    if let Some(o) = self.open.iter_mut().find(|o| o.handle == handle && o.frame.dir == d) {
                        o.frame.len = Some(len);
                        if o.seen > len {
                            let keep = o.frame.data.len().min(len as usize);
                            self.held -= o.frame.data.len() - keep;
                            o.frame.data.truncate(keep);
                            o.seen = len;
                        }
                    }
                }
                Mark::Tx { dir: d, handle, tx } => {
                    if let Some(o) = self.open.iter_mut().find(|o| o.handle == handle && o.frame.dir == d) {
                        o.frame.tx_id = Some(tx);
                    }
                }
            }
        }
        if datagram {
            // A datagram's frames end with it.
            self.end(dir);
        } else {
            self.finish(dir);
        }
    }

    /// `dir` ended: its open frames, its stream frame among them, are handed
    /// over as they are.
    pub fn end(&mut self, dir: Direction) {
        self.end_app(dir);
        if let Some(mut o) = self.stream.get_mut(dir).take() {
            o.frame.len = Some(o.seen);
            o.frame.complete = !*self.gapped.get(dir);
            self.ready.push(o.frame);
            self.ready.sort_by_key(|f| (f.dir == Direction::ToClient, f.id));
        }
    }

    fn end_app(&mut self, dir: Direction) {
        let mut i = 0;
        while i < self.open.len() {
            if self.open[i].frame.dir == dir {
                let mut o = self.open.swap_remove(i);
                self.held -= o.frame.data.len();
                o.frame.complete = !o.gapped && o.frame.len.is_some_and(|l| o.seen >= l);
                if o.frame.len.is_none() {
                    o.frame.len = Some(o.seen);
                }
                self.ready.push(o.frame);
            } else {
                i += 1;
            }
        }
        self.ready.sort_by_key(|f| (f.dir == Direction::ToClient, f.id));
    }

    /// Frames handed over since the last call, in the order they were made per direction.
    pub fn take(&mut self, out: &mut Vec<Frame>) {
        out.append(&mut self.ready);
    }

    /// Frames of `dir` whose bytes all passed go to the ready list.
    fn finish(&mut self, dir: Direction) {
        let mut done = false;
        let mut i = 0;
        while i < self.open.len() {
            let o = &self.open[i];
            if o.frame.dir == dir && o.frame.len.is_some_and(|l| o.seen >= l) {
                let mut o = self.open.remove(i);
                self.held -= o.frame.data.len();
                o.frame.complete = !o.gapped;
                self.ready.push(o.frame);
                done = true;
            } else {
                i += 1;
            }
        }
        if done {
            self.ready.sort_by_key(|f| (f.dir == Direction::ToClient, f.id));
        }
    }
}

/// The bytes of `data` (at stream offset `at`) that continue frame `o`
/// from `from`, up to its length.
fn take(o: &mut Open, held: &mut usize, truncated: &mut u64, at: u64, data: &[u8], from: u64) {
    let end = at + data.len() as u64;
    if from < at || from >= end {
        return;
    }
    let mut upto = end;
    if let Some(l) = o.frame.len {
        upto = upto.min(o.start + l);
    }
    if upto <= from {
        return;
    }
    let bytes = &data[(from - at) as usize..(upto - at) as usize];
    o.seen += bytes.len() as u64;
    let room = MAX_FRAME_BYTES.saturating_sub(o.frame.data.len()).min(MAX_OPEN_BYTES.saturating_sub(*held));
    let kept = bytes.len().min(room);
    if kept < bytes.len() && !o.cut {
        o.cut = true;
        *truncated += 1;
    }
    o.frame.data.extend_from_slice(&bytes[..kept]);
    *held += kept;
}

#[cfg(test)]
mod tests {
    use super::*;

    const TS: Direction = Direction::ToServer;

    fn marks(log: &mut FrameLog) -> impl FnMut(&mut Vec<Mark>) -> u8 + '_ {
        move |out| {
            log.drain(out);
            log.tx_base()
        }
    }

    #[test]
    fn frames_take_their_bytes_from_where_they_pass() {
        let mut t = FrameTrack::new(1);
        let mut log = FrameLog::new(true);
        // A record of 6 bytes whose first 4 came: the parser marks it whole.
        let h = log.add(TS, 2, Some(6), 0, None);
        t.marked("mqtt", TS, Some(100), b"xxABCD", &mut marks(&mut log));
        let mut out = Vec::new();
        t.take(&mut out);
        assert!(out.is_empty());
        t.pass("mqtt", TS, 106, b"EFGH");
        log.set_tx(TS, h, 3);
        t.marked("mqtt", TS, Some(106), b"EFGH", &mut marks(&mut log));
        t.take(&mut out);
        assert_eq!(out.len(), 1);
        let f = &out[0];
        assert_eq!(
            (f.id, f.offset, f.len, f.complete, f.data.as_slice()),
            (2, Some(102), Some(6), true, &b"ABCDEF"[..])
        );
        // The tx mark came after the frame was whole: it went with it unmarked.
        assert_eq!(f.tx_id, None);
    }

    #[test]
    fn a_frame_of_unknown_length_is_cut_when_it_is_known_and_ends_with_its_side() {
        let mut t = FrameTrack::new(0);
        let mut log = FrameLog::new(true);
        let h = log.add(TS, 0, None, 1, None);
        t.marked("telnet", TS, Some(0), b"abcdef", &mut marks(&mut log));
        log.set_len(TS, h, 4);
        t.marked("telnet", TS, Some(6), b"", &mut marks(&mut log));
        let mut out = Vec::new();
        t.take(&mut out);
        assert_eq!((out[0].data.as_slice(), out[0].complete, out[0].id), (&b"abcd"[..], true, 1));
        // One left open is handed over incomplete when its side ends.
        log.add(TS, 0, Some(10), 0, None);
        t.marked("telnet", TS, Some(7), b"xy", &mut marks(&mut log));
        t.end(TS);
        out.clear();
        t.take(&mut out);
        assert_eq!((out[0].data.as_slice(), out[0].complete, out[0].len), (&b"xy"[..], false, Some(10)));
    }

    #[test]
    fn datagram_frames_are_numbered_per_datagram_and_ready_at_once() {
        let mut t = FrameTrack::new(0);
        let mut log = FrameLog::new(true);
        log.add(TS, 0, Some(3), 0, Some(1));
        log.add(TS, 1, Some(9), 0, None);
        t.marked("ldap", TS, None, b"abcd", &mut marks(&mut log));
        let mut out = Vec::new();
        t.take(&mut out);
        assert_eq!(
            out.iter().map(|f| (f.id, f.complete, f.offset)).collect::<Vec<_>>(),
            [(1, true, None), (2, false, None)]
        );
        assert_eq!(out[1].data, b"bcd");
    }

    #[test]
    fn an_off_log_records_nothing() {
        let mut log = FrameLog::new(false);
        assert_eq!(log.add(TS, 0, Some(1), 0, None), 0);
        let mut v = Vec::new();
        log.drain(&mut v);
        assert!(v.is_empty());
    }
}
