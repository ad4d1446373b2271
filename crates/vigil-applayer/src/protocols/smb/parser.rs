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
use crate::parser::{AppEvent, ParseResult};
use crate::proto::{ParserInit, ProtoParser, ProtoTx, TxQueue};

/// Messages up to this size are held whole (a compound answer listing a
/// directory, then closing it, runs past 64 KiB; the app layer holds at
/// most 256 KiB by default); past it they are read from their first
/// [`HEAD`] bytes (all the headers and names a read or write has) and
/// their data passed over.
const BIG: usize = 192 * 1024;
const HEAD: usize = 4096;
/// Transactions held at once; the oldest go first.
const MAX_TXS: usize = 1024;
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
    /// Reads awaiting their answer: their key, the handle read.
    pub(super) reads: HashMap<u64, Vec<u8>>,
    /// Writes awaiting their answer: their key, the transaction written to
    /// and whether the write opened it.
    pub(super) answers_to: HashMap<u64, (u64, bool)>,
    /// The open file transaction of a handle and direction.
    pub(super) file_txs: HashMap<(Vec<u8>, bool), u64>,
    /// The contexts the pipes' DCE/RPC associations bound.
    pub(super) bound: Vec<Bound>,
    /// The name the last create asked for (what a compound's later commands act on).
    pub(super) last_create: String,
    /// Bytes of the current message still to pass over.
    skip: PerDir<usize>,
    /// A gap left message boundaries unknown: the next header is looked for.
    resync: PerDir<bool>,
    /// The side's next message began in data given before (it did not arrive in one piece).
    resumed: PerDir<bool>,
}

impl SmbParser {
    pub(crate) fn boxed(init: &ParserInit) -> Box<dyn ProtoParser> {
        Box::new(Self::new(init.first_tx_id))
    }

    pub(super) fn new(first_tx_id: u64) -> Self {
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
            skip: PerDir::default(),
            resync: PerDir::default(),
            resumed: PerDir::default(),
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
        self.txs.push_with(|id| {
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
        })
    }

    /// The transaction of SMB `version` still waiting for the answer found by `key`.
    pub(super) fn waiting(&self, version: u8, key: u64, command: u16) -> Option<usize> {
        self.txs.iter().rposition(|t| t.version == version && t.key == key && !t.response_done && t.command == command && !matches!(t.kind, Kind::File(_)))
    }

    pub(super) fn by_id(&mut self, id: u64) -> Option<&mut SmbTx> {
        self.txs.iter_mut().find(|t| t.id == id)
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
    /// Suricata sets a status on a call when its answer is read, and on a
    /// file's transaction when a later command than the one that opened it
    /// is answered; this follows it.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn data(&mut self, version: u8, command: u16, hdr: (u64, u32, u64), handle: &[u8], fuid: String, dir: Direction, data: &[u8], len: u64, status: Option<Status>) -> Option<(u64, bool)> {
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
        if let Some(t) = open.and_then(|id| self.by_id(id)) {
            if let Kind::File(f) = &mut t.kind {
                f.size += len;
            }
            t.status = status.or(t.status);
            return Some((t.id, false));
        }
        // The share is the tree's the command names (none for an async answer).
        let share = self.trees.get(&(session, tree)).map(|t| t.share.clone()).or_else(|| (version == 1).then(|| known.as_ref().map(|k| k.share.clone())).flatten()).unwrap_or_default();
        let name = known.map_or_else(|| "<unknown>".to_string(), |k| k.name);
        // SMB1's file transactions carry no session or tree; SMB2's writes no share.
        let (session, tree) = if version == 1 { (0, 0) } else { (session, tree) };
        let share = if version == 2 && !to_client { String::new() } else { share };
        let file = FileTx { name, share, fuid, dir: Some(dir), size: len };
        let at = self.open_tx(version, command, key, session, tree, Kind::File(file));
        // A read opens its transaction with its answer's status (SMB2's; SMB1's has none).
        if version == 2 {
            self.txs[at].status = status;
        }
        let id = self.txs[at].id;
        Self::remember(&mut self.file_txs, (handle.to_vec(), to_client), id);
        Some((id, true))
    }

    /// The handle was closed: its file transactions end.
    pub(super) fn close_handle(&mut self, handle: &[u8]) {
        for to_client in [false, true] {
            if let Some(id) = self.file_txs.remove(&(handle.to_vec(), to_client)) {
                if let Some(t) = self.by_id(id) {
                    t.request_done = true;
                    t.response_done = true;
                }
            }
        }
    }

    /// `whole`: the message arrived in one piece (what Suricata's records
    /// of reads depend on: a read answered in pieces is logged without its status).
    fn message(&mut self, dir: Direction, msg: &[u8], whole: bool) {
        match msg.get(..4) {
            Some(b"\xfeSMB") => self.smb2(dir, msg, whole),
            Some(b"\xffSMB") => self.smb1(dir, msg, whole),
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
        let mut resumed = std::mem::take(self.resumed.get_mut(dir));
        loop {
            let skip = self.skip.get_mut(dir);
            if *skip > 0 {
                let n = (*skip).min(data.len() - at);
                *skip -= n;
                at += n;
            }
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
                *self.skip.get_mut(dir) = total - n;
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
            if rest.len() >= total {
                self.message(dir, &rest[4..total], !std::mem::take(&mut resumed));
                at += total;
            } else if total <= BIG {
                *self.resumed.get_mut(dir) = true;
                return ParseResult::Incomplete { consumed: at, needed: total - rest.len() };
            } else if rest.len() < 4 + HEAD {
                *self.resumed.get_mut(dir) = true;
                return ParseResult::Incomplete { consumed: at, needed: 4 + HEAD - rest.len() };
            } else {
                self.message(dir, &rest[4..], false);
                *self.skip.get_mut(dir) = total - rest.len();
                at = data.len();
            }
        }
    }

    /// Where the next message starts is unknown: it is looked for.
    fn on_gap(&mut self, dir: Direction, len: u64) -> bool {
        let skip = self.skip.get_mut(dir);
        if (*skip as u64) >= len {
            // The gap fell in data being passed over anyway.
            *skip -= len as usize;
        } else {
            *skip = 0;
            *self.resync.get_mut(dir) = true;
        }
        true
    }

    fn close(&mut self, _dir: Direction, _held: &[u8]) {}

    crate::proto::delegate_txs!(txs);

    fn prune(&mut self, id: u64) {
        self.txs.prune_while(id, |t| t.finished());
    }

    fn drain_events(&mut self, _out: &mut Vec<AppEvent>) {}
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
        let mut p = SmbParser::new(0);
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
        let call = p.tx(4).unwrap().carried().expect("the call is a DCE/RPC transaction");
        assert_eq!(call.buffer(ToServer, 0, 0), Some(&b"ABCDEFGH"[..]));
        assert_eq!(records[5]["command"], "SMB2_COMMAND_CLOSE");
        assert!((0..p.tx_count()).all(|i| p.tx(i).unwrap().finished()));
        assert_eq!(p.tx(1).unwrap().buffer(ToServer, super::super::tx::NAMED_PIPE, 0), Some(&b"\\\\host\\IPC$"[..]));
        assert_eq!(p.tx(1).unwrap().buffer(ToClient, super::super::tx::SHARE, 0), None);
    }

    #[test]
    fn a_message_too_big_to_hold_is_read_from_its_head() {
        let mut p = SmbParser::new(0);
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
        let mut p = SmbParser::new(0);
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
