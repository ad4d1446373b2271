//! NFS calls and replies turned into transactions as Suricata forms them:
//! each call a transaction its reply finishes (reads and writes apart:
//! those of one file handle and direction gather into one file
//! transaction), names learnt from lookups, creates and directory
//! listings kept by handle for the calls that follow. Over TCP, records
//! are framed by their marks; a record too big to hold (a read's answer,
//! a write of a megabyte) is read from its head and its data streamed
//! into the file.

use std::collections::HashMap;

use vigil_types::{Direction, PerDir};

use super::names::*;
use super::tx::{FileData, NfsTx};
use super::v4::{self, CallOp, ReplyOp};
use crate::codecs::rpc::{self, Body, Message, Xdr};
use crate::files::{File, FileConfig};
use crate::offsets::OffsetFiles;
use crate::tail::{self, Tail, Take};
use crate::parser::{AppEvent, ParseResult};
use crate::proto::{ProtoParser, TxQueue};

/// The NFS program number.
pub const PROGRAM: u32 = 100_003;
/// Longer records are not NFS (Linux caps reads and writes at 1 MiB).
const MAX_RECORD: usize = 32 << 20;
/// Calls awaiting their reply and names known by handle, each.
const MAX_KNOWN: usize = 4096;
/// Calls older than this many transactions still unanswered are given up.
const PATIENCE: usize = 64;
/// A write that asks the server to commit it to disk (FILE_SYNC) ends its file.
const FILE_SYNC: u32 = 2;

/// What a call said that its reply needs.
#[derive(Debug, Clone, Default)]
struct Pending {
    version: u32,
    procedure: u32,
    name: Vec<u8>,
    handle: Vec<u8>,
    offset: u64,
}

#[derive(Debug)]
pub struct NfsParser {
    pub(super) txs: TxQueue<NfsTx>,
    tcp: bool,
    pending: HashMap<u32, Pending>,
    names: HashMap<Vec<u8>, Vec<u8>>,
    files: FileConfig,
    /// What the flow's files hold together.
    offsets: OffsetFiles,
    /// The rest of a record too big to hold, passed over, with the file
    /// bytes of a read or write in it.
    tails: PerDir<Tail>,
    resync: PerDir<bool>,
    /// The side of the message being read.
    dir: Direction,
    /// The sides that ended: the flow's transactions end with both, as Suricata ends them.
    closed: PerDir<bool>,
}

impl NfsParser {
    pub(super) fn new(first_tx_id: u64, max_tx: usize, tcp: bool, files: FileConfig) -> Self {
        NfsParser {
            txs: TxQueue::new(first_tx_id, max_tx),
            tcp,
            pending: HashMap::new(),
            names: HashMap::new(),
            // Files are tracked whole (the inspection depth of HTTP bodies does not apply).
            files: FileConfig { unstored_depth: 0, ..files },
            offsets: OffsetFiles::default(),
            tails: PerDir::default(),
            resync: PerDir::default(),
            dir: Direction::ToServer,
            closed: PerDir::default(),
        }
    }

    fn name_of(&self, handle: &[u8]) -> Vec<u8> {
        self.names.get(handle).cloned().unwrap_or_default()
    }

    fn learn(&mut self, handle: &[u8], name: &[u8]) {
        if self.names.len() >= MAX_KNOWN && !self.names.contains_key(handle) {
            self.names.clear();
        }
        self.names.insert(handle.to_vec(), name.to_vec());
    }

    /// One RPC message, or the head of one whose rest is passed over.
    fn message(&mut self, data: &[u8]) {
        let Some(m) = rpc::parse(data) else { return };
        match m.body {
            Body::Call { program: PROGRAM, version: version @ 2..=4, procedure, .. } => self.call(&m, version, procedure),
            Body::Call { .. } => {}
            Body::Reply { state, accept } => {
                let Some(p) = self.pending.remove(&m.xid) else { return };
                let args = if accept == Some(0) { m.args } else { &[] };
                self.reply(m.xid, state, args, p);
            }
        }
    }

    fn open_tx(&mut self, m: &Message<'_>, version: u32, procedure: u32) -> usize {
        let tcp = self.tcp;
        let at = self.txs.push_with(|id| NfsTx::new(id, m.xid, version, procedure, tcp));
        let t = &mut self.txs[at];
        if let Body::Call { flavor, unix, .. } = &m.body {
            t.flavor = *flavor;
            t.unix.clone_from(unix);
        }
        t.request_done = true;
        at
    }

    fn call(&mut self, m: &Message<'_>, version: u32, procedure: u32) {
        let mut p = Pending { version, procedure, ..Pending::default() };
        let mut x = Xdr::new(m.args);
        let mut rename_to = None;
        match (version, procedure) {
            (2, V2_READ) => {
                if let (Some(h), Some(offset)) = (x.fixed(32), x.u32()) {
                    p.handle = h.to_vec();
                    p.offset = offset.into();
                    p.name = self.name_of(h);
                }
            }
            (3, V3_LOOKUP) => {
                if let Some(name) = x.opaque_max(64).and_then(|_| x.opaque()) {
                    p.name = name.to_vec();
                }
            }
            (3, V3_ACCESS | V3_GETATTR | V3_READDIRPLUS) => {
                if let Some(h) = x.opaque_max(64) {
                    p.handle = h.to_vec();
                    p.name = self.name_of(h);
                }
            }
            (3, V3_READ) => {
                if let (Some(h), Some(offset)) = (x.opaque_max(64), x.u64()) {
                    p.handle = h.to_vec();
                    p.offset = offset;
                    p.name = self.name_of(h);
                }
            }
            (3, V3_WRITE) => {
                if let Some(h) = x.opaque_max(64) {
                    let (offset, _count, stable) = (x.u64(), x.u32(), x.u32());
                    if let (Some(offset), Some(stable), Some(len)) = (offset, stable, x.u32()) {
                        let n = (len as usize).min(x.rest.len());
                        let data = &x.rest[..n];
                        self.write(m, 3, h, offset, stable == FILE_SYNC, len, data);
                    }
                }
            }
            (3, V3_CREATE | V3_REMOVE | V3_MKDIR | V3_RMDIR | V3_RENAME) => {
                if let Some(h) = x.opaque_max(64) {
                    p.handle = h.to_vec();
                    p.name = x.opaque().unwrap_or_default().to_vec();
                    if procedure == V3_RENAME {
                        rename_to = x.opaque_max(64).and_then(|_| x.opaque()).map(<[u8]>::to_vec);
                    }
                }
            }
            (3, V3_COMMIT) => {
                if let Some(h) = x.opaque_max(64) {
                    self.commit(m.xid, h, V3_COMMIT);
                }
            }
            (4, 1) => {
                self.compound_call(m, &mut p);
                self.remember(m.xid, p);
                return;
            }
            _ => {}
        }
        if procedure == 0 {
            // A ping (the NULL procedure) makes no transaction.
            self.remember(m.xid, p);
            return;
        }
        let file_call = version == 3 && matches!(procedure, V3_READ | V3_WRITE | V3_COMMIT) || version == 2 && procedure == V2_READ;
        if !file_call {
            let at = self.open_tx(m, version, procedure);
            let t = &mut self.txs[at];
            t.file_name.clone_from(&p.name);
            t.handle.clone_from(&p.handle);
            if procedure == rename_of(version) {
                t.rename_to = Some(rename_to.unwrap_or_default());
            }
        } else if version == 3 && procedure == V3_READ && self.file_tx(&p.handle, Direction::ToClient).is_none() {
            let at = self.new_file_tx(m.xid, version, &p.handle, &p.name, Direction::ToClient);
            let t = &mut self.txs[at];
            t.procedure = V3_READ;
            if let Body::Call { flavor, unix, .. } = &m.body {
                t.flavor = *flavor;
                t.unix.clone_from(unix);
            }
        }
        self.remember(m.xid, p);
    }

    fn remember(&mut self, xid: u32, p: Pending) {
        if self.pending.len() >= MAX_KNOWN && !self.pending.contains_key(&xid) {
            // Calls never answered pile up no further.
            self.pending.clear();
        }
        self.pending.insert(xid, p);
    }

    fn compound_call(&mut self, m: &Message<'_>, p: &mut Pending) {
        let mut putfh: Option<&[u8]> = None;
        let mut main = None;
        let mut rename_to = None;
        for op in v4::call(m.args) {
            match op {
                CallOp::PutFh(h) => putfh = Some(h),
                CallOp::Read { offset } => {
                    if let Some(h) = putfh {
                        p.offset = offset;
                        p.handle = h.to_vec();
                        p.name = self.name_of(h);
                    }
                }
                CallOp::Open { name: Some(n) } | CallOp::Lookup(n) => p.name = n.to_vec(),
                CallOp::Write { offset, stable, len, data } => {
                    if let Some(h) = putfh {
                        self.write(m, 4, h, offset, stable == FILE_SYNC, len, data);
                    }
                }
                CallOp::Commit => {
                    if let Some(h) = putfh {
                        self.commit(m.xid, h, V4_COMMIT);
                    }
                }
                CallOp::Create(n) => {
                    if let Some(h) = putfh {
                        p.handle = h.to_vec();
                    }
                    p.name = n.to_vec();
                    main = Some(V4_CREATE);
                }
                CallOp::Remove(n) => {
                    p.name = n.to_vec();
                    main = Some(V4_REMOVE);
                }
                CallOp::Rename { from, to } => {
                    p.name = from.to_vec();
                    rename_to = Some(to.to_vec());
                    main = Some(V4_RENAME);
                }
                CallOp::Open { name: None } | CallOp::Other => {}
            }
        }
        p.procedure = main.unwrap_or(1);
        if let Some(op) = main {
            let at = self.open_tx(m, 4, op);
            let t = &mut self.txs[at];
            t.file_name.clone_from(&p.name);
            t.handle = putfh.map(<[u8]>::to_vec).unwrap_or_default();
            t.rename_to = rename_to;
        }
    }

    /// The open file transaction of `handle` whose bytes go `dir`.
    fn file_tx(&self, handle: &[u8], dir: Direction) -> Option<usize> {
        self.txs.iter().rposition(|t| t.handle == handle && t.file.as_ref().is_some_and(|f| f.dir == dir && f.file.is_open()))
    }

    fn new_file_tx(&mut self, xid: u32, version: u32, handle: &[u8], name: &[u8], dir: Direction) -> usize {
        let tcp = self.tcp;
        let file = File::open(name.to_vec(), 0, &self.files);
        let at = self.txs.push_with(|id| NfsTx::new(id, xid, version, 0, tcp));
        let t = &mut self.txs[at];
        t.handle = handle.to_vec();
        t.file_name = name.to_vec();
        t.first = true;
        t.file = Some(FileData { dir, file, last_xid: 0, chunks: 0, extra: Vec::new(), ahead: Default::default(), ends_at: None });
        at
    }

    /// A write's chunk: `data` is the head of `len` bytes when the record was cut.
    #[allow(clippy::too_many_arguments)]
    fn write(&mut self, m: &Message<'_>, version: u32, handle: &[u8], offset: u64, last: bool, len: u32, data: &[u8]) {
        if len == 0 || len > 1 << 24 {
            return;
        }
        let name = self.name_of(handle);
        let at = match self.file_tx(handle, Direction::ToServer) {
            Some(at) => {
                if let Some(f) = self.txs[at].file.as_mut() {
                    f.chunks += 1;
                }
                at
            }
            None => {
                let at = self.new_file_tx(m.xid, version, handle, &name, Direction::ToServer);
                self.txs[at].procedure = write_of(version);
                at
            }
        };
        let t = &mut self.txs[at];
        if last {
            t.last = true;
            // A v4 reply finishes no file transaction: it is logged when the flow ends, as Suricata's.
            t.response_done = version < 4;
            t.done_dir = Direction::ToServer;
            if let Some(f) = t.file.as_mut() {
                f.last_xid = m.xid;
            }
        }
        let id = t.id;
        self.chunk(at, offset, data);
        self.finish_chunk(id, offset, data.len(), len, last);
    }

    /// What follows a chunk's first bytes: streamed in when the record was
    /// cut; a last chunk says where the file ends.
    fn finish_chunk(&mut self, id: u64, offset: u64, got: usize, len: u32, last: bool) {
        let left = u64::from(len) - got as u64;
        if last {
            if let Some(f) = self.txs.by_id_mut(id).and_then(|t| t.file.as_mut()) {
                f.ends_at = Some(offset + u64::from(len));
                Self::settle(f);
            }
        }
        self.tails.get_mut(self.dir).feed(id, offset + got as u64, left);
    }

    /// A file whose bytes up to its known end are in is closed.
    fn settle(f: &mut FileData) {
        if f.file.is_open() && f.ends_at.is_some_and(|e| f.file.start + f.file.size >= e) {
            f.file.close();
        }
    }

    fn commit(&mut self, xid: u32, handle: &[u8], procedure: u32) {
        let Some(at) = self.file_tx(handle, Direction::ToServer) else { return };
        let t = &mut self.txs[at];
        t.last = true;
        if let Some(f) = t.file.as_mut() {
            f.chunks += 1;
            f.extra.push(procedure);
            f.last_xid = xid;
        }
        let id = t.id;
        self.end_file(id, false);
    }

    /// Bytes of the file of transaction `at` from `offset`
    /// ([`OffsetFiles`]); a rewrite of bytes already seen makes the file
    /// not what was sent.
    fn chunk(&mut self, at: usize, offset: u64, data: &[u8]) {
        let cfg = self.files;
        let Some(f) = self.txs[at].file.as_mut() else { return };
        if !f.file.is_open() || data.is_empty() {
            return;
        }
        if offset < f.file.start + f.file.size {
            f.file.truncate();
            return;
        }
        self.offsets.write(&mut f.file, &mut f.ahead, offset, data, &cfg);
        Self::settle(f);
    }

    /// The file of transaction `id` ends (`cut`: short of its end).
    fn end_file(&mut self, id: u64, cut: bool) {
        let cfg = self.files;
        let Some(f) = self.txs.by_id_mut(id).and_then(|t| t.file.as_mut()) else { return };
        self.offsets.end(&mut f.file, &mut f.ahead, &cfg, cut);
    }

    fn reply(&mut self, xid: u32, state: u32, args: &[u8], p: Pending) {
        let mut x = Xdr::new(args);
        let mut status = Xdr::new(args).u32().unwrap_or(0);
        let mut resp_handle: &[u8] = &[];
        match (p.version, p.procedure) {
            (2, V2_READ) if status == 0 => {
                x.u32();
                // The file's attributes: its size says whether this read reached its end.
                let size = x.fixed(68).map(|a| u32::from_be_bytes([a[20], a[21], a[22], a[23]]));
                if let Some(len) = x.u32() {
                    let n = (len as usize).min(x.rest.len());
                    let last = size.is_some_and(|s| s > 0 && p.offset + u64::from(len) == u64::from(s));
                    self.read(xid, state, status, &p, len, last, &x.rest[..n]);
                }
            }
            (3, V3_LOOKUP) => {
                x.u32();
                if let Some(h) = x.opaque_max(64) {
                    // Read whatever the status: an error's attributes read as a handle, as Suricata reads them.
                    self.learn(h, &p.name);
                    resp_handle = h;
                }
            }
            (3, V3_CREATE) => {
                x.u32();
                if status == 0 && x.bool() == Some(true) {
                    if let Some(h) = x.opaque_max(64) {
                        self.learn(h, &p.name);
                    }
                }
            }
            (3, V3_READ) => {
                x.u32();
                if x.bool() == Some(true) {
                    x.skip(84);
                }
                if status == 0 {
                    if let (Some(_count), Some(eof), Some(len)) = (x.u32(), x.bool(), x.u32()) {
                        let n = (len as usize).min(x.rest.len());
                        self.read(xid, state, status, &p, len, eof, &x.rest[..n]);
                    }
                }
                return;
            }
            (3, V3_READDIRPLUS) => {
                x.u32();
                if status == 0 {
                    self.readdirplus(&mut x);
                }
            }
            (4, _) => {
                let mut main_status = None;
                let mut open = false;
                for op in v4::reply(args) {
                    match op {
                        ReplyOp::Main(s) => {
                            main_status.get_or_insert(s);
                        }
                        ReplyOp::GetFh(h) if open => self.learn(h, &p.name),
                        ReplyOp::Open => open = true,
                        ReplyOp::Read { status: 0, eof, len, data } => self.read(xid, state, 0, &p, len, eof, data),
                        _ => {}
                    }
                }
                match main_status {
                    Some(s) => status = s,
                    None => return,
                }
            }
            _ => {}
        }
        if p.version == 3 && p.procedure == V3_WRITE {
            return;
        }
        self.answered(xid, state, status, resp_handle);
    }

    /// Names of a directory listing's entries, by their handles.
    fn readdirplus(&mut self, x: &mut Xdr<'_>) -> Option<()> {
        if x.bool()? {
            x.skip(84)?;
        }
        x.skip(8)?;
        for _ in 0..MAX_KNOWN {
            if !x.bool()? {
                break;
            }
            x.u64()?;
            let name = x.opaque()?;
            x.u64()?;
            if x.bool()? {
                x.skip(84)?;
            }
            if x.bool()? {
                let h = x.opaque_max(64)?;
                self.learn(h, name);
            }
        }
        Some(())
    }

    /// A read's answer: `len` bytes from the call's offset, `data` their
    /// head when the record was cut.
    #[allow(clippy::too_many_arguments)]
    fn read(&mut self, xid: u32, state: u32, status: u32, p: &Pending, len: u32, last: bool, data: &[u8]) {
        if len == 0 || len > 1 << 24 {
            return;
        }
        let at = match self.file_tx(&p.handle, Direction::ToClient) {
            Some(at) => {
                if let Some(f) = self.txs[at].file.as_mut() {
                    f.chunks += 1;
                }
                at
            }
            None => {
                let at = self.new_file_tx(xid, p.version, &p.handle, &p.name, Direction::ToClient);
                self.txs[at].procedure = read_of(p.version);
                at
            }
        };
        let t = &mut self.txs[at];
        if last {
            if let Some(f) = t.file.as_mut() {
                f.last_xid = xid;
            }
            t.rpc_state = state;
            t.status = status;
            t.last = true;
            t.request_done = true;
            t.response_done = true;
            t.done_dir = self.dir;
        }
        let id = t.id;
        self.chunk(at, p.offset, data);
        self.finish_chunk(id, p.offset, data.len(), len, last);
    }

    /// The reply to call `xid` came: its transaction is done.
    fn answered(&mut self, xid: u32, state: u32, status: u32, handle: &[u8]) {
        let Some(at) = self.txs.iter().rposition(|t| t.file.is_none() && t.xid == xid && !t.response_done) else { return };
        let dir = self.dir;
        let t = &mut self.txs[at];
        t.response_done = true;
        t.done_dir = dir;
        t.rpc_state = state;
        t.status = status;
        if t.handle.is_empty() {
            t.handle = handle.to_vec();
        }
        // Calls long unanswered are given up, so those after them are logged.
        if at > PATIENCE {
            for t in self.txs.range_mut(..at - PATIENCE) {
                if t.file.is_none() && !t.response_done {
                    t.ended = true;
                }
            }
        }
    }

    /// Where a record that holds an RPC message starts in `data`, when
    /// boundaries were lost.
    fn find_record(data: &[u8]) -> Option<usize> {
        (0..data.len().saturating_sub(16)).find(|&i| {
            let (last, len) = rpc::mark([data[i], data[i + 1], data[i + 2], data[i + 3]]);
            let kind = u32::from_be_bytes([data[i + 8], data[i + 9], data[i + 10], data[i + 11]]);
            let vers = u32::from_be_bytes([data[i + 12], data[i + 13], data[i + 14], data[i + 15]]);
            last && (24..=MAX_RECORD).contains(&len) && (kind == 1 || kind == 0 && vers == 2)
        })
    }
}

impl ProtoParser for NfsParser {
    fn parse(&mut self, dir: Direction, data: &[u8]) -> ParseResult {
        self.dir = dir;
        if !self.tcp {
            self.message(data);
            return ParseResult::Done;
        }
        let mut at = 0;
        loop {
            let (n, file) = self.tails.get_mut(dir).pass(&data[at..]);
            if let Some((f, at)) = file.and_then(|f| Some((f, self.txs.place(f.id)?))) {
                self.chunk(at, f.offset, f.bytes);
            }
            at += n;
            if *self.resync.get(dir) {
                match Self::find_record(&data[at..]) {
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
            let Some(mark) = rest.first_chunk::<4>() else { return ParseResult::Incomplete { consumed: at, needed: 4 - rest.len() } };
            let (_, len) = rpc::mark(*mark);
            if len > MAX_RECORD {
                *self.resync.get_mut(dir) = true;
                at += 1;
                continue;
            }
            let total = 4 + len;
            match tail::take(rest.len(), total, 4) {
                Take::Whole => {
                    self.message(&rest[4..total]);
                    at += total;
                }
                Take::Wait(needed) => return ParseResult::Incomplete { consumed: at, needed },
                Take::Head => {
                    self.tails.get_mut(dir).skip(total - rest.len());
                    self.message(&rest[4..]);
                    at = data.len();
                }
            }
        }
    }

    fn on_gap(&mut self, dir: Direction, len: u64) -> bool {
        // A gap in data being passed over leaves a hole in the file it fed;
        // past it, that file is cut short and the next record looked for.
        if let Err(fed) = self.tails.get_mut(dir).gap(len) {
            if let Some(id) = fed {
                self.end_file(id, true);
            }
            *self.resync.get_mut(dir) = true;
        }
        true
    }

    fn close(&mut self, dir: Direction, _held: &[u8]) {
        let open: Vec<u64> = self.txs.iter().filter(|t| t.file.as_ref().is_some_and(|f| f.file.is_open())).map(|t| t.id).collect();
        for id in open {
            self.end_file(id, true);
        }
        *self.closed.get_mut(dir) = true;
        if self.tcp && self.closed.to_server && self.closed.to_client {
            for t in self.txs.iter_mut() {
                t.ended = true;
            }
        }
    }

    fn store_files(&mut self, tx: Option<u64>, dirs: &[Direction], sid: u32) {
        for t in self.txs.iter_mut().filter(|t| tx.is_none_or(|id| t.id == id)) {
            if let Some(f) = t.file.as_mut() {
                if dirs.is_empty() || dirs.contains(&f.dir) {
                    f.file.mark_store(sid);
                }
            }
        }
    }

    crate::proto::delegate_txs!(txs);

    fn prune(&mut self, id: u64) {
        let done = |t: &NfsTx| crate::proto::ProtoTx::finished(t) && t.file.as_ref().is_none_or(|f| !f.file.is_open());
        let files_go = self.txs.iter().take_while(|t| t.id < id && done(t)).any(|t| t.file.is_some());
        self.txs.prune_while(id, done);
        if !files_go {
            return;
        }
        // What the files that went held is free for the next ones.
        self.offsets.recount(self.txs.iter().filter_map(|t| t.file.as_ref()).map(|f| (&f.file, &f.ahead)));
    }

    fn drain_events(&mut self, _out: &mut Vec<AppEvent>) {}
}
