//! SMB over TCP, parsed: NetBIOS session messages framed (a message too
//! big to hold is read from its head and the rest passed over), each
//! holding an SMB1 command chain or SMB2/3 compound commands
//! ([`super::smb1`], [`super::smb2`]); what the session learns on the way
//! (dialect, trees, file names by handle, the pipes' DCE/RPC bindings) is
//! kept here, bounded, for the transactions that need it.

use std::collections::HashMap;

use vigil_types::{Direction, PerDir};

use crate::protocols::dcerpc::carried::{self as pipe, Bound};
use super::tx::{FileTx, Kind, SmbTx, Status};
use super::names;
use crate::files::{File, FileConfig};
use crate::offsets::OffsetFiles;
use crate::tail::{self, Tail, Take};
use crate::parser::{AppEvent, ParseResult};
use crate::proto::{ParserInit, ProtoParser, ProtoTx, TxQueue};

/// Transactions held at once; the oldest go first.
const MAX_TXS: usize = 1024;
/// DCE/RPC stub bytes the pipe calls of one flow hold together; past it
/// the oldest transactions go (counted as evicted), as over TCP.
const FLOW_STUB_BUDGET: usize = 8 << 20;
/// Trees, file handles and reads awaiting their answer, each.
pub(super) const MAX_KNOWN: usize = 4096;

/// A share as a tree connect named it.
#[derive(Debug, Clone, Default)]
pub(super) struct Tree {
    pub share: String,
    pub pipe: bool,
}

/// A file (or pipe) opened by a create, by its handle.
#[derive(Debug, Clone, Default)]
pub(super) struct Handle {
    pub name: String,
    pub share: String,
    pub pipe: bool,
    /// Whether the pipe carries DCE/RPC, as its first data said.
    pub dcerpc: Option<bool>,
}

#[derive(Debug)]
pub struct SmbParser {
    pub(super) txs: TxQueue<SmbTx>,
    /// The SMB2 dialect the server chose (`0x02ff`: it asked for SMB2 in answer to SMB1).
    pub(super) dialect2: Option<u16>,
    /// The SMB1 dialect the server chose, by name.
    pub(super) dialect1: Option<String>,
    /// The dialects the last SMB1 negotiate offered, for its answer's index.
    pub(super) offered1: Vec<String>,
    /// Shares by session and tree id.
    pub(super) trees: HashMap<(u64, u32), Tree>,
    /// Files and pipes by handle (SMB2's 16 bytes, SMB1's two).
    pub(super) handles: HashMap<Vec<u8>, Handle>,
    /// Reads awaiting their answer: their key, the handle and offset read.
    pub(super) reads: HashMap<u64, (Vec<u8>, u64)>,
    /// Writes awaiting their answer: their key, the transaction written to
    /// and whether the write opened it.
    pub(super) answers_to: HashMap<u64, (u64, bool)>,
    /// The open file transaction of a handle and direction.
    pub(super) file_txs: HashMap<(Vec<u8>, bool), u64>,
    /// The contexts the pipes' DCE/RPC associations bound.
    pub(super) bound: Vec<Bound>,
    /// The name the last create asked for (what a compound's later commands act on).
    pub(super) last_create: String,
    /// The rest of a message too big to hold, passed over, with the file
    /// bytes of a read or write in it.
    tails: PerDir<Tail>,
    /// What the file service computes and keeps.
    files: FileConfig,
    /// What the flow's files hold together (`file.data` windows, bytes
    /// waiting for those before them).
    offsets: OffsetFiles,
    /// A gap left message boundaries unknown: the next header is looked for.
    resync: PerDir<bool>,
    /// Message bytes read since the stubs were last weighed: an upper
    /// bound of what they grew by, so they are weighed only past the budget.
    unweighed: usize,
    frames: crate::frames::FrameLog,
}

impl SmbParser {
    pub(crate) fn boxed(init: &ParserInit) -> Box<dyn ProtoParser> {
        let mut p = Self::new(init.first_tx_id, init.app.http.files);
        p.frames = crate::frames::FrameLog::counted_from_one(init.app.frames);
        Box::new(p)
    }

    pub(super) fn new(first_tx_id: u64, files: FileConfig) -> Self {
        // Files are tracked whole (the inspection depth of HTTP bodies does not apply).
        let files = FileConfig { unstored_depth: 0, ..files };
        SmbParser {
            txs: TxQueue::new(first_tx_id, MAX_TXS),
            dialect2: None,
            dialect1: None,
            offered1: Vec::new(),
            trees: HashMap::new(),
            handles: HashMap::new(),
            reads: HashMap::new(),
            answers_to: HashMap::new(),
            file_txs: HashMap::new(),
            bound: Vec::new(),
            last_create: String::new(),
            tails: PerDir::default(),
            files,
            offsets: OffsetFiles::default(),
            resync: PerDir::default(),
            unweighed: 0,
            frames: crate::frames::FrameLog::default(),
        }
    }

    /// The frames of a session message of `total` bytes at `at` of the
    /// data offered, whose start `msg` holds: the session message, its
    /// header and data, and the SMB messages in it (each command of an
    /// SMB2 compound), each with its header and data.
    fn mark_frames(&mut self, dir: Direction, at: usize, total: usize, msg: &[u8]) {
        if !self.frames.is_on() {
            return;
        }
        let f = &mut self.frames;
        let len = |n: usize| Some(n as u64);
        f.add(dir, at, len(total), 0, None);
        f.add(dir, at, len(4), 1, None);
        f.add(dir, at + 4, len(total - 4), 2, None);
        // The SMB message's kind: its type's first frame, and its header's size.
        let (first, hdr) = match msg.get(4..8) {
            Some(b"\xffSMB") => (3, 32),
            Some(b"\xfeSMB") => (6, 64),
            Some(b"\xfdSMB") => (9, 52),
            _ => return,
        };
        let mut off = 4;
        loop {
            let left = total - off;
            // An SMB2 compound's next command, by its header's offset to it.
            let next = match first {
                6 => msg.get(off + 20..off + 24).map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize),
                _ => 0,
            };
            let part = if next == 0 || next > left { left } else { next };
            f.add(dir, at + off, len(part), first, None);
            f.add(dir, at + off, len(part.min(hdr)), first + 1, None);
            if part > hdr {
                f.add(dir, at + off + hdr, len(part - hdr), first + 2, None);
            }
            if part == left || next == 0 {
                return;
            }
            off += part;
        }
    }

    /// The dialect a transaction of SMB `version` is logged with.
    pub(super) fn dialect(&self, version: u8) -> String {
        let two = self.dialect2.map(names::dialect);
        let one = self.dialect1.clone();
        let pick = if version == 1 { one.or(two) } else { two.or(one) };
        pick.unwrap_or_else(|| "unknown".into())
    }

    /// A new transaction for a request; its place.
    pub(super) fn open_tx(&mut self, version: u8, command: u16, key: u64, session_id: u64, tree_id: u32, mut kind: Kind) -> usize {
        let dialect = self.dialect(version);
        // A file pushed out at the bound ends cut, and what it held is recounted.
        let mut file_goes = false;
        if self.txs.len() >= MAX_TXS {
            if let Some(SmbTx { kind: Kind::File(f), .. }) = self.txs.front_mut() {
                self.offsets.end(&mut f.file, &mut f.ahead, &self.files, true);
                file_goes = true;
            }
        }
        let at = self.txs.push_with(|id| {
            if let Kind::Dcerpc(c) = &mut kind {
                c.id = id;
            }
            SmbTx {
            id,
            version,
            command,
            dialect,
            status: None,
            session_id,
            tree_id,
            key,
            request_done: true,
            response_done: false,
            kind,
            }
        });
        if file_goes {
            self.recount_files();
        }
        at
    }

    /// The transaction of SMB `version` still waiting for the answer found by `key`.
    pub(super) fn waiting(&self, version: u8, key: u64, command: u16) -> Option<usize> {
        self.txs.iter().rposition(|t| t.version == version && t.key == key && !t.response_done && t.command == command && !matches!(t.kind, Kind::File(_)))
    }

    /// Records the answer's status on transaction `at`, and its end unless
    /// the server only said it is pending.
    pub(super) fn answered(&mut self, at: usize, status: Status) {
        let dialect = self.dialect(self.txs[at].version);
        let tx = &mut self.txs[at];
        tx.status = Some(status);
        tx.dialect = dialect;
        if status != Status::Nt(0x103) {
            tx.response_done = true;
        }
    }

    /// Remembers something bounded: past [`MAX_KNOWN`] entries the map starts over.
    pub(super) fn remember<K: std::hash::Hash + Eq, V>(map: &mut HashMap<K, V>, k: K, v: V) {
        if map.len() >= MAX_KNOWN && !map.contains_key(&k) {
            map.clear();
        }
        map.insert(k, v);
    }

    /// Data read from or written to the file or pipe `handle` (`fuid` its
    /// text), `data` what of it arrived, `status` the answer's that carried
    /// it: a pipe's DCE/RPC PDUs open or answer calls, a file's bytes go to
    /// the handle's file transaction. The transaction the data went to, and
    /// whether it opened it.
    ///
    /// A call takes the status of the answer that carried its reply; an
    /// SMB2 file transaction the status of each read that answers into it
    /// (a write's is set by its answer when it succeeded, SMB1's never), as
    /// Suricata's records have them.
    ///
    /// `at`: where in the file `data` goes; `len`: the bytes the command
    /// carries, of which those past `data` follow the message's head (a
    /// message too big to hold) and are passed to the file as they come.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn data(&mut self, version: u8, command: u16, hdr: (u64, u32, u64), handle: &[u8], fuid: String, dir: Direction, data: &[u8], (at, len): (u64, u64), status: Option<Status>) -> Option<(u64, bool)> {
        // A pipe's first data says whether it carries DCE/RPC; what one
        // carries that is not (a remote process's output) is a file's data.
        let pipe = match self.handles.get_mut(handle) {
            Some(h) if h.pipe => *h.dcerpc.get_or_insert_with(|| pipe::looks_like_pdu(data)),
            Some(_) => false,
            None => pipe::looks_like_pdu(data),
        };
        let known = self.handles.get(handle).cloned();
        let (session, tree, key) = hdr;
        if pipe {
            return match dir {
                Direction::ToServer => {
                    let call = pipe::open(data, &self.bound)?;
                    let at = self.open_tx(version, command, key, session, tree, Kind::Dcerpc(Box::new(call)));
                    Some((self.txs[at].id, true))
                }
                Direction::ToClient => {
                    for call_id in pipe::answer_ids(data) {
                        let found = self.txs.iter().rposition(|t| matches!(&t.kind, Kind::Dcerpc(c) if c.call_id == call_id && c.answer.is_none()));
                        if let Some(at) = found {
                            let mut bound = std::mem::take(&mut self.bound);
                            if let Kind::Dcerpc(c) = &mut self.txs[at].kind {
                                c.answer(data, &mut bound);
                            }
                            self.bound = bound;
                            let dialect = self.dialect(version);
                            let tx = &mut self.txs[at];
                            tx.status = status.or(tx.status);
                            tx.dialect = dialect;
                            tx.response_done = true;
                        }
                    }
                    None
                }
            };
        }
        let to_client = dir == Direction::ToClient;
        let open = self.file_txs.get(&(handle.to_vec(), to_client)).copied();
        if let Some(id) = open.filter(|&id| self.txs.place(id).is_some()) {
            if let Some(t) = self.txs.by_id_mut(id) {
                t.status = status.or(t.status);
            }
            self.feed(dir, id, at, data, len);
            return Some((id, false));
        }
        // The share is the tree's the command names (none for an async answer).
        let share = self.trees.get(&(session, tree)).map(|t| t.share.clone()).or_else(|| (version == 1).then(|| known.as_ref().map(|k| k.share.clone())).flatten()).unwrap_or_default();
        let name = known.map_or_else(|| "<unknown>".to_string(), |k| k.name);
        // SMB1's file transactions carry no session or tree; SMB2's writes no share.
        let (session, tree) = if version == 1 { (0, 0) } else { (session, tree) };
        let share = if version == 2 && !to_client { String::new() } else { share };
        let file = File::open(name.clone().into_bytes(), 0, &self.files);
        let tx = FileTx { name, share, fuid, dir: Some(dir), file, ahead: Default::default() };
        let place = self.open_tx(version, command, key, session, tree, Kind::File(Box::new(tx)));
        // A read opens its transaction with its answer's status (SMB2's; SMB1's has none).
        if version == 2 {
            self.txs[place].status = status;
        }
        let id = self.txs[place].id;
        Self::remember(&mut self.file_txs, (handle.to_vec(), to_client), id);
        self.feed(dir, id, at, data, len);
        Some((id, true))
    }

    /// Bytes for offset `at` of file transaction `id`: `data` now, and the
    /// rest of the command's `len` as the message's tail is passed over.
    fn feed(&mut self, dir: Direction, id: u64, at: u64, data: &[u8], len: u64) {
        let data = &data[..data.len().min(usize::try_from(len).unwrap_or(usize::MAX))];
        self.write(id, at, data);
        let left = len - data.len() as u64;
        self.tails.get_mut(dir).feed(id, at + data.len() as u64, left);
    }

    /// Writes file bytes at `at` of file transaction `id` ([`OffsetFiles`]).
    fn write(&mut self, id: u64, at: u64, data: &[u8]) {
        let cfg = self.files;
        let Some(tx) = self.txs.by_id_mut(id) else { return };
        if let Kind::File(f) = &mut tx.kind {
            self.offsets.write(&mut f.file, &mut f.ahead, at, data, &cfg);
        }
    }

    /// Counts again what the flow's files hold, after some went.
    fn recount_files(&mut self) {
        let files = self.txs.iter().filter_map(|t| match &t.kind {
            Kind::File(f) => Some((&f.file, &f.ahead)),
            _ => None,
        });
        self.offsets.recount(files);
    }

    /// The DCE/RPC stub bytes a transaction holds.
    fn stubs(t: &SmbTx) -> usize {
        match &t.kind {
            Kind::Dcerpc(c) => c.req.stub.len() + c.res.stub.len(),
            _ => 0,
        }
    }

    /// A message of `len` bytes was read: past the flow's stub budget the
    /// oldest transactions go until the stubs fit again.
    fn after_message(&mut self, len: usize) {
        self.unweighed += len;
        let (cfg, offsets) = (self.files, &mut self.offsets);
        let mut files_went = false;
        self.txs.keep_within(&mut self.unweighed, FLOW_STUB_BUDGET, Self::stubs, |t| {
            if let Kind::File(f) = &mut t.kind {
                offsets.end(&mut f.file, &mut f.ahead, &cfg, true);
                files_went = true;
            }
        });
        if files_went {
            self.recount_files();
        }
    }

    /// The handle was closed: its file transactions end.
    pub(super) fn close_handle(&mut self, handle: &[u8]) {
        for to_client in [false, true] {
            if let Some(id) = self.file_txs.remove(&(handle.to_vec(), to_client)) {
                if let Some(t) = self.txs.by_id_mut(id) {
                    t.request_done = true;
                    t.response_done = true;
                    if let Kind::File(f) = &mut t.kind {
                        self.offsets.end(&mut f.file, &mut f.ahead, &self.files, false);
                    }
                }
            }
        }
    }

    fn message(&mut self, dir: Direction, msg: &[u8]) {
        match msg.get(..4) {
            Some(b"\xfeSMB") => self.smb2(dir, msg),
            Some(b"\xffSMB") => self.smb1(dir, msg),
            // An SMB3 transform (encrypted) or compressed message: nothing to read.
            _ => {}
        }
    }

    /// Where a session message holding an SMB header starts in `data`.
    fn find_header(data: &[u8]) -> Option<usize> {
        (0..data.len().saturating_sub(7)).find(|&i| data[i] == 0 && matches!(&data[i + 4..i + 8], b"\xfeSMB" | b"\xffSMB" | b"\xfdSMB" | b"\xfcSMB"))
    }
}

impl ProtoParser for SmbParser {
    fn parse(&mut self, dir: Direction, data: &[u8]) -> ParseResult {
        let mut at = 0;
        loop {
            let (n, file) = self.tails.get_mut(dir).pass(&data[at..]);
            if let Some(f) = file {
                self.write(f.id, f.offset, f.bytes);
            }
            at += n;
            if *self.resync.get(dir) {
                match Self::find_header(&data[at..]) {
                    Some(i) => {
                        at += i;
                        *self.resync.get_mut(dir) = false;
                    }
                    None => return ParseResult::Done,
                }
            }
            let rest = &data[at..];
            if rest.is_empty() {
                return ParseResult::Done;
            }
            if rest.len() < 4 {
                return ParseResult::Incomplete { consumed: at, needed: 4 - rest.len() };
            }
            // A session message's length is 17 bits on port 139, 24 on 445: read 24.
            let len = usize::from(rest[1]) << 16 | usize::from(rest[2]) << 8 | usize::from(rest[3]);
            let total = 4 + len;
            if rest[0] != 0 {
                // A control message of the session service (request, answer, keepalive).
                if !matches!(rest[0], 0x81..=0x85) {
                    *self.resync.get_mut(dir) = true;
                    at += 1;
                    continue;
                }
                let n = total.min(rest.len());
                self.tails.get_mut(dir).skip(total - n);
                at += n;
                continue;
            }
            // A session message holds an SMB message: anything else means the
            // boundaries were lost (a gap) and the next header is looked for.
            if rest.len() < 8 {
                return ParseResult::Incomplete { consumed: at, needed: 8 - rest.len() };
            }
            if !matches!(&rest[4..8], b"\xfeSMB" | b"\xffSMB" | b"\xfdSMB" | b"\xfcSMB") {
                *self.resync.get_mut(dir) = true;
                at += 1;
                continue;
            }
            match tail::take(rest.len(), total, 4) {
                Take::Whole => {
                    self.mark_frames(dir, at, total, &rest[..total]);
                    self.message(dir, &rest[4..total]);
                    self.after_message(total);
                    at += total;
                }
                Take::Wait(needed) => return ParseResult::Incomplete { consumed: at, needed },
                Take::Head => {
                    self.mark_frames(dir, at, total, rest);
                    self.tails.get_mut(dir).skip(total - rest.len());
                    self.message(dir, &rest[4..]);
                    self.after_message(rest.len());
                    at = data.len();
                }
            }
        }
    }

    /// Where the next message starts is unknown: it is looked for.
    fn on_gap(&mut self, dir: Direction, len: u64) -> bool {
        // A gap in data being passed over anyway leaves a hole in the file it fed.
        if self.tails.get_mut(dir).gap(len).is_err() {
            *self.resync.get_mut(dir) = true;
        }
        true
    }

    /// The flow ended: files still open are cut short.
    fn close(&mut self, dir: Direction, _held: &[u8]) {
        for t in self.txs.iter_mut() {
            if let Kind::File(f) = &mut t.kind {
                if f.dir == Some(dir) {
                    self.offsets.abandon(&mut f.file, &mut f.ahead, &self.files);
                }
            }
        }
    }

    fn store_files(&mut self, tx: Option<u64>, dirs: &[Direction], sid: u32) {
        for t in self.txs.iter_mut().filter(|t| tx.is_none_or(|id| t.id == id)) {
            if let Kind::File(f) = &mut t.kind {
                if f.dir.is_some_and(|d| dirs.is_empty() || dirs.contains(&d)) {
                    f.file.mark_store(sid);
                }
            }
        }
    }

    crate::proto::delegate_txs!(txs);

    fn prune(&mut self, id: u64) {
        let files_go = self.txs.iter().take_while(|t| t.id < id && t.finished()).any(|t| matches!(t.kind, Kind::File(_)));
        self.txs.prune_while(id, |t| t.finished());
        if files_go {
            // What the files that went kept is free for the next ones.
            self.recount_files();
        }
    }

    fn drain_events(&mut self, _out: &mut Vec<AppEvent>) {}

    fn take_frames(&mut self, out: &mut Vec<crate::frames::Mark>) -> u8 {
        self.frames.drain(out);
        self.frames.tx_base()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use Direction::{ToClient, ToServer};

    fn run(p: &mut SmbParser) {
        for (dir, data) in super::super::sample() {
            assert_eq!(p.parse(dir, &data), ParseResult::Done);
        }
    }

    #[test]
    fn a_pipe_session_is_logged_as_suricata_logs_it() {
        let mut p = SmbParser::new(0, FileConfig::default());
        run(&mut p);
        let records: Vec<_> = (0..p.tx_count()).map(|i| p.tx(i).unwrap().eve()).collect();
        assert_eq!(records.len(), 6, "{records:#?}");
        assert_eq!(records[0]["command"], "SMB2_COMMAND_NEGOTIATE_PROTOCOL");
        assert_eq!(records[0]["dialect"], "2.10");
        assert_eq!(records[0]["client_dialects"], json!(["2.10"]));
        assert_eq!(records[0]["max_read_size"], 65536);
        assert_eq!(records[1]["named_pipe"], "\\\\host\\IPC$");
        assert_eq!(records[1]["share_type"], "PIPE");
        assert_eq!(records[1]["tree_id"], 1);
        assert_eq!(records[2]["filename"], "srvsvc");
        assert_eq!(records[2]["fuid"], "00000001-0000-0000-0002-0000ffffffff");
        assert_eq!(
            records[3]["dcerpc"],
            json!({"request": "BIND", "response": "BINDACK", "interfaces": [{"uuid": "4b324fc8-1670-01d3-1278-5a47bf6ee188",
                "version": "3.0", "ack_result": 0, "ack_reason": 0}], "call_id": 1})
        );
        assert_eq!(records[3]["status"], "STATUS_SUCCESS");
        assert_eq!(
            records[4]["dcerpc"],
            json!({"request": "REQUEST", "response": "RESPONSE", "opnum": 15, "req": {"frag_cnt": 1, "stub_data_size": 8},
                "interfaces": [{"uuid": "4b324fc8-1670-01d3-1278-5a47bf6ee188", "version": "3.0"}],
                "res": {"frag_cnt": 1, "stub_data_size": 4}, "call_id": 2})
        );
        let call = p.tx(4).unwrap().carried("dcerpc").expect("the call is a DCE/RPC transaction");
        assert_eq!(call.buffer(ToServer, 0, 0), Some(&b"ABCDEFGH"[..]));
        assert_eq!(records[5]["command"], "SMB2_COMMAND_CLOSE");
        assert!((0..p.tx_count()).all(|i| p.tx(i).unwrap().finished()));
        assert_eq!(p.tx(1).unwrap().buffer(ToServer, super::super::tx::NAMED_PIPE, 0), Some(&b"\\\\host\\IPC$"[..]));
        assert_eq!(p.tx(1).unwrap().buffer(ToClient, super::super::tx::SHARE, 0), None);
    }

    #[test]
    fn a_message_too_big_to_hold_is_read_from_its_head() {
        let mut p = SmbParser::new(0, FileConfig::default());
        let mut m = vec![0, 0x04, 0x00, 0x00];
        m.extend_from_slice(b"\xfeSMB");
        m.extend_from_slice(&[64, 0, 0, 0, 0, 0, 0, 0, 13, 0]);
        m.resize(4 + 0x40000, 0);
        // Its head comes first; the rest passes over without being held.
        let (head, tail) = m.split_at(5000);
        assert_eq!(p.parse(ToServer, head), ParseResult::Done);
        assert_eq!(p.tx_count(), 1);
        assert_eq!(p.parse(ToServer, tail), ParseResult::Done);
        let mut next = vec![0, 0, 0, 64];
        next.extend_from_slice(b"\xfeSMB");
        next.extend_from_slice(&[64, 0, 0, 0, 0, 0, 0, 0, 13, 0]);
        next.resize(68, 0);
        assert_eq!(p.parse(ToServer, &next), ParseResult::Done);
        assert_eq!(p.tx_count(), 2);
    }

    #[test]
    fn after_a_gap_the_next_message_is_found() {
        let mut p = SmbParser::new(0, FileConfig::default());
        assert!(p.on_gap(ToServer, 100));
        let mut d = b"junk bytes".to_vec();
        d.extend_from_slice(&[0, 0, 0, 64]);
        d.extend_from_slice(b"\xfeSMB");
        d.extend_from_slice(&[64, 0, 0, 0, 0, 0, 0, 0, 13, 0]);
        d.resize(10 + 68, 0);
        assert_eq!(p.parse(ToServer, &d), ParseResult::Done);
        assert_eq!(p.tx(0).unwrap().eve()["command"], "SMB2_COMMAND_KEEPALIVE");
    }
}

#[cfg(test)]
mod file_tests {
    use super::*;
    use Direction::{ToClient, ToServer};

    /// An SMB2 message of `command` in a session message.
    fn msg(command: u16, reply: bool, id: u64, body: &[u8]) -> Vec<u8> {
        let mut m = b"\xfeSMB".to_vec();
        m.extend_from_slice(&[64, 0, 1, 0, 0, 0, 0, 0]);
        m.extend_from_slice(&command.to_le_bytes());
        m.extend_from_slice(&[1, 0]);
        m.extend_from_slice(&u32::from(reply).to_le_bytes());
        m.extend_from_slice(&[0; 4]);
        m.extend_from_slice(&id.to_le_bytes());
        m.extend_from_slice(&[0; 4]);
        m.extend_from_slice(&1u32.to_le_bytes());
        m.extend_from_slice(&7u64.to_le_bytes());
        m.extend_from_slice(&[0; 16]);
        m.extend_from_slice(body);
        let mut n = (m.len() as u32).to_be_bytes().to_vec();
        n.extend_from_slice(&m);
        n
    }

    const HANDLE: [u8; 16] = [9; 16];

    /// A parser that saw `report.txt` opened on share `\\h\docs`.
    fn opened() -> SmbParser {
        let mut p = SmbParser::new(0, FileConfig { sha256: true, ..FileConfig::default() });
        let share: Vec<u8> = "\\\\h\\docs".encode_utf16().flat_map(u16::to_le_bytes).collect();
        let mut tree = vec![9, 0, 0, 0, 72, 0];
        tree.extend_from_slice(&(share.len() as u16).to_le_bytes());
        tree.extend_from_slice(&share);
        p.parse(ToServer, &msg(3, false, 1, &tree));
        p.parse(ToClient, &msg(3, true, 1, &[16, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]));
        let name: Vec<u8> = "report.txt".encode_utf16().flat_map(u16::to_le_bytes).collect();
        let mut create = vec![57, 0, 0, 0];
        create.resize(36, 0);
        create.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0, 120, 0]);
        create.extend_from_slice(&(name.len() as u16).to_le_bytes());
        create.extend_from_slice(&[0; 8]);
        create.extend_from_slice(&name);
        p.parse(ToServer, &msg(5, false, 2, &create));
        let mut created = vec![89, 0];
        created.resize(64, 0);
        created.extend_from_slice(&HANDLE);
        created.resize(88, 0);
        p.parse(ToClient, &msg(5, true, 2, &created));
        p
    }

    fn read(p: &mut SmbParser, id: u64, offset: u64) {
        let mut r = vec![49, 0, 0, 0, 0, 16, 0, 0];
        r.extend_from_slice(&offset.to_le_bytes());
        r.extend_from_slice(&HANDLE);
        r.extend_from_slice(&[0; 17]);
        assert_eq!(p.parse(ToServer, &msg(8, false, id, &r)), ParseResult::Done);
    }

    fn answer(p: &mut SmbParser, id: u64, data: &[u8]) {
        let mut d = vec![17, 0, 80, 0];
        d.extend_from_slice(&(data.len() as u32).to_le_bytes());
        d.extend_from_slice(&[0; 8]);
        d.extend_from_slice(data);
        assert_eq!(p.parse(ToClient, &msg(8, true, id, &d)), ParseResult::Done);
    }

    fn file(p: &SmbParser, dir: Direction) -> &File {
        (0..p.tx_count()).find_map(|i| p.tx(i).unwrap().files(dir).first()).expect("a file")
    }

    #[test]
    fn reads_answered_out_of_order_make_the_whole_file() {
        let mut p = opened();
        read(&mut p, 10, 0);
        read(&mut p, 11, 4);
        answer(&mut p, 11, b"BBBB");
        answer(&mut p, 10, b"AAAA");
        let mut close = vec![24, 0, 0, 0, 0, 0, 0, 0];
        close.extend_from_slice(&HANDLE);
        p.parse(ToServer, &msg(6, false, 12, &close));
        let f = file(&p, ToClient);
        assert_eq!((f.size, f.gaps, f.state), (8, false, crate::files::FileState::Closed));
        assert_eq!(f.window, b"AAAABBBB");
        assert_eq!(f.name, b"report.txt");
        let rec = (0..p.tx_count()).map(|i| p.tx(i).unwrap().eve()).find(|r| r["command"] == "SMB2_COMMAND_READ").unwrap();
        assert_eq!(rec["share"], "\\\\h\\docs");
        assert_eq!(p.offsets.waiting(), 0);
    }

    #[test]
    fn unanswered_pipe_calls_are_dropped_past_the_flows_stub_budget() {
        let mut p = SmbParser::new(0, FileConfig::default());
        for (dir, data) in super::super::sample() {
            p.parse(dir, &data);
        }
        let handle = *b"\x01\0\0\0\0\0\0\0\x02\0\0\0\xff\xff\xff\xff";
        // Requests of 60,000 stub bytes each written to the bound pipe, never answered.
        for call in 0..200u32 {
            let mut pdu = vec![5, 0, 0, 3, 0x10, 0, 0, 0];
            pdu.extend_from_slice(&(24u16 + 60_000).to_le_bytes());
            pdu.extend_from_slice(&[0, 0]);
            pdu.extend_from_slice(&(call + 100).to_le_bytes());
            pdu.extend_from_slice(&[0; 8]);
            pdu.resize(24 + 60_000, 0x41);
            let mut w = vec![49, 0, 112, 0];
            w.extend_from_slice(&(pdu.len() as u32).to_le_bytes());
            w.extend_from_slice(&[0; 8]);
            w.extend_from_slice(&handle);
            w.extend_from_slice(&[0; 16]);
            w.extend_from_slice(&pdu);
            assert_eq!(p.parse(ToServer, &msg(9, false, 1000 + u64::from(call), &w)), ParseResult::Done);
        }
        let calls = p.txs.iter().filter(|t| matches!(t.kind, Kind::Dcerpc(_))).count();
        let kept: usize = p.txs.iter().map(SmbParser::stubs).sum();
        assert!(kept <= FLOW_STUB_BUDGET, "{kept}");
        assert!(calls > 100, "only the oldest went: {calls}");
        assert!(p.txs_evicted() > 0);
        // The newest call is still there, whole.
        let last = p.txs.back().and_then(|t| t.carried("dcerpc")).expect("the last call");
        assert_eq!(last.buffer(ToServer, 0, 0).map(<[u8]>::len), Some(60_000));
    }

    #[test]
    fn a_write_too_big_to_hold_is_streamed_into_its_file() {
        let mut p = opened();
        let data = vec![0x5a; 300 * 1024];
        let mut w = vec![49, 0, 112, 0];
        w.extend_from_slice(&(data.len() as u32).to_le_bytes());
        w.extend_from_slice(&0u64.to_le_bytes());
        w.extend_from_slice(&HANDLE);
        w.extend_from_slice(&[0; 16]);
        w.extend_from_slice(&data);
        let m = msg(9, false, 20, &w);
        let held = crate::proto::kit::feed(&mut p, ToServer, &m, 1460);
        assert!(held <= 4 + tail::HEAD, "the message is never held whole");
        p.close(ToServer, &[]);
        let f = file(&p, ToServer);
        assert_eq!((f.size, f.gaps), (data.len() as u64, false));
        assert_eq!(f.window.len(), crate::offsets::WINDOW);
    }
}
