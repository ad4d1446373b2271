//! SMB2 and SMB3 (MS-SMB2) messages: the 64-byte header, compound
//! messages chained by their next-command offset, and the commands whose
//! contents Suricata logs or detects on. A request opens a transaction
//! found again by its message id when its answer comes; reads and writes
//! go to the handle's file transaction or, on a pipe, to DCE/RPC calls.

use vigil_types::Direction;

use super::parser::{Handle, SmbParser, Tree};
use crate::protocols::dcerpc::carried as pipe;
use super::tx::{self, Create, Kind, Negotiate, SessionSetup, Status, TreeConnect};
use crate::codecs::ntlmssp;

const HEADER: usize = 64;
const FLAG_ASYNC: u32 = 0x2;
const FSCTL_PIPE_TRANSCEIVE: u32 = 0x0011_c017;
const STATUS_PENDING: u32 = 0x103;

const NEGOTIATE: u16 = 0;
const SESSION_SETUP: u16 = 1;
const TREE_CONNECT: u16 = 3;
const CREATE: u16 = 5;
const CLOSE: u16 = 6;
const READ: u16 = 8;
const WRITE: u16 = 9;
const IOCTL: u16 = 11;
const CANCEL: u16 = 12;
const GET_INFO: u16 = 16;
const SET_INFO: u16 = 17;

/// Dialects one negotiate may list that are kept.
const MAX_DIALECTS: usize = 64;

pub(super) struct Hdr {
    pub status: u32,
    pub command: u16,
    pub next: u32,
    pub msg_id: u64,
    pub tree_id: u32,
    pub session_id: u64,
}

pub(super) fn le16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

pub(super) fn le32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

pub(super) fn le64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

fn guid(b: &[u8], at: usize) -> Option<[u8; 16]> {
    b.get(at..at + 16)?.try_into().ok()
}

/// UTF-16LE text, as far as it goes.
pub(super) fn utf16(b: &[u8]) -> String {
    let units: Vec<u16> = b.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).take_while(|&u| u != 0).collect();
    String::from_utf16_lossy(&units)
}

/// The bytes at an offset from the header and a length, as far as they arrived.
fn span(m: &[u8], off: usize, len: usize) -> &[u8] {
    let end = off.saturating_add(len).min(m.len());
    m.get(off..end).unwrap_or_default()
}

fn header(m: &[u8]) -> Option<Hdr> {
    if m.len() < HEADER || &m[..4] != b"\xfeSMB" {
        return None;
    }
    let flags = le32(m, 16)?;
    // An async message carries an async id where the tree id would be.
    let tree_id = if flags & FLAG_ASYNC != 0 { 0 } else { le32(m, 36)? };
    Some(Hdr { status: le32(m, 8)?, command: le16(m, 12)?, next: le32(m, 20)?, msg_id: le64(m, 24)?, tree_id, session_id: le64(m, 40)? })
}

impl SmbParser {
    pub(super) fn smb2(&mut self, dir: Direction, msg: &[u8]) {
        let mut off = 0;
        // Compound messages: each names where the next starts, 8-byte aligned past a header.
        for _ in 0..64 {
            let rest = &msg[off..];
            let Some(h) = header(rest) else { return };
            let next = h.next as usize;
            let one = if next >= HEADER && next < rest.len() { &rest[..next] } else { rest };
            match dir {
                Direction::ToServer => self.request2(&h, one),
                Direction::ToClient => self.response2(&h, one),
            }
            if next < HEADER || next >= rest.len() {
                return;
            }
            off += next;
        }
    }

    fn request2(&mut self, h: &Hdr, m: &[u8]) {
        let b = HEADER;
        let (key, session, tree) = (h.msg_id, h.session_id, h.tree_id);
        let kind = match h.command {
            NEGOTIATE => {
                let count = usize::from(le16(m, b + 2).unwrap_or(0));
                let dialects = (0..count.min(MAX_DIALECTS)).map_while(|i| le16(m, b + 36 + 2 * i)).map(super::names::dialect).collect();
                Kind::Negotiate(Negotiate { dialects, client_guid: guid(m, b + 12), ..Negotiate::default() })
            }
            SESSION_SETUP => {
                let blob = span(m, usize::from(le16(m, b + 12).unwrap_or(0)), usize::from(le16(m, b + 14).unwrap_or(0)));
                Kind::SessionSetup(Box::new(SessionSetup { ntlmssp: ntlmssp::authenticate(blob), kerberos: ntlmssp::ap_req_ticket(blob), ..SessionSetup::default() }))
            }
            TREE_CONNECT => {
                let path = span(m, usize::from(le16(m, b + 4).unwrap_or(0)), usize::from(le16(m, b + 6).unwrap_or(0)));
                Kind::TreeConnect(TreeConnect { share: utf16(path), ..TreeConnect::default() })
            }
            CREATE => {
                let name = span(m, usize::from(le16(m, b + 44).unwrap_or(0)), usize::from(le16(m, b + 46).unwrap_or(0)));
                let options = le32(m, b + 40).unwrap_or(0);
                self.last_create = utf16(name);
                Kind::Create(Box::new(Create {
                    name: self.last_create.clone(),
                    directory: options & 0x1 != 0,
                    disposition: le32(m, b + 36).unwrap_or(0),
                    delete_on_close: options & 0x1000 != 0,
                    ..Create::default()
                }))
            }
            READ => {
                if let Some(handle) = m.get(b + 16..b + 32) {
                    Self::remember(&mut self.reads, key, (handle.to_vec(), le64(m, b + 8).unwrap_or(0)));
                }
                return;
            }
            WRITE => {
                let Some(handle) = m.get(b + 16..b + 32).map(<[u8]>::to_vec) else { return };
                let len = le32(m, b + 4).unwrap_or(0);
                let data = span(m, usize::from(le16(m, b + 2).unwrap_or(0)), len as usize);
                let fuid = tx::guid_text(&handle[..].try_into().unwrap_or([0; 16]));
                let at = le64(m, b + 8).unwrap_or(0);
                if let Some(written) = self.data(2, WRITE, (session, tree, key), &handle, fuid, Direction::ToServer, data, (at, u64::from(len)), None) {
                    Self::remember(&mut self.answers_to, key, written);
                }
                return;
            }
            IOCTL => {
                let code = le32(m, b + 4).unwrap_or(0);
                let input = span(m, le32(m, b + 24).unwrap_or(0) as usize, le32(m, b + 28).unwrap_or(0) as usize);
                if code == FSCTL_PIPE_TRANSCEIVE && pipe::looks_like_pdu(input) {
                    // A call, not a bind: Suricata logs a bind through a transceive as the IOCTL it is.
                    if let Some(call) = pipe::open(input, &self.bound).filter(|c| c.kind == crate::protocols::dcerpc::pdu::REQUEST) {
                        self.open_tx(2, IOCTL, key, session, tree, Kind::Dcerpc(Box::new(call)));
                        return;
                    }
                }
                Kind::Ioctl(code)
            }
            CLOSE => {
                if let Some(handle) = m.get(b + 8..b + 24) {
                    self.close_handle(handle);
                }
                Kind::Generic
            }
            // Suricata keeps no transaction for these but a deletion or a rename.
            SET_INFO => match self.set_info(m) {
                Some(k) => k,
                None => return,
            },
            GET_INFO => return,
            _ => Kind::Generic,
        };
        let at = self.open_tx(2, h.command, key, session, tree, kind);
        if h.command == CANCEL {
            // A cancel is never answered.
            self.txs[at].response_done = true;
        }
    }

    /// A set-info marking a file for deletion, or renaming it.
    fn set_info(&self, m: &[u8]) -> Option<Kind> {
        let b = HEADER;
        let (info_type, class) = (*m.get(b + 2)?, *m.get(b + 3)?);
        let buf = span(m, usize::from(le16(m, b + 8)?), le32(m, b + 4)? as usize);
        let handle = m.get(b + 16..b + 32)?;
        let fuid = tx::guid_text(&handle.try_into().ok()?);
        // A handle of all ones is the one the compound's create opened.
        let name = match self.handles.get(handle) {
            Some(h) => h.name.clone(),
            None if handle.iter().all(|&b| b == 0xff) => self.last_create.clone(),
            None => String::new(),
        };
        match (info_type, class) {
            // File information: disposition, rename.
            (1, 13) if buf.first() == Some(&1) => Some(Kind::Delete { name, fuid }),
            (1, 10) => {
                let len = le32(buf, 16)? as usize;
                Some(Kind::Rename { from: name, to: utf16(span(buf, 20, len)), fuid })
            }
            _ => None,
        }
    }

    fn response2(&mut self, h: &Hdr, m: &[u8]) {
        let b = HEADER;
        let status = Status::Nt(h.status);
        // An error answer has a nine-byte body of its own; some errors still carry data.
        let ok = !matches!(h.status >> 30, 3) || le16(m, b) != Some(9);
        match h.command {
            READ => {
                let Some((handle, at)) = self.reads.remove(&h.msg_id) else { return };
                if h.status == STATUS_PENDING {
                    Self::remember(&mut self.reads, h.msg_id, (handle, at));
                    return;
                }
                if !ok {
                    return;
                }
                let len = le32(m, b + 4).unwrap_or(0);
                let data = span(m, usize::from(*m.get(b + 2).unwrap_or(&0)), len as usize);
                let fuid = tx::guid_text(&handle[..].try_into().unwrap_or([0; 16]));
                self.data(2, READ, (h.session_id, h.tree_id, h.msg_id), &handle, fuid, Direction::ToClient, data, (at, u64::from(len)), Some(status));
                return;
            }
            WRITE => {
                // A file's transaction takes the status of a write that succeeded (a
                // call written to a pipe takes its answer's, when that is read).
                if let Some((id, _)) = self.answers_to.remove(&h.msg_id).filter(|_| h.status == 0) {
                    if let Some(t) = self.txs.by_id_mut(id).filter(|t| matches!(t.kind, Kind::File(_))) {
                        t.status = Some(status);
                    }
                }
                return;
            }
            _ => {}
        }
        let at = match self.waiting(2, h.msg_id, h.command) {
            Some(at) => at,
            // An SMB1 negotiate answered the SMB2 way.
            None if h.command == NEGOTIATE => match self.txs.iter().rposition(|t| t.version == 1 && t.command == 0x72 && !t.response_done) {
                Some(at) => {
                    self.txs[at].tree_id = h.tree_id;
                    at
                }
                None => return,
            },
            // An answer to a request not seen (or a server's own oplock break): nothing to pair it with.
            None => return,
        };
        if h.session_id != 0 {
            self.txs[at].session_id = h.session_id;
        }
        if ok {
            self.response_body(at, h, m);
        }
        self.answered(at, status);
        if let Kind::Dcerpc(c) = &self.txs[at].kind {
            // The call ends with its answer; a pipe's answer may come in a later read.
            self.txs[at].response_done = c.answer.is_some() || !matches!(h.status, 0 | STATUS_PENDING);
        }
    }

    fn response_body(&mut self, at: usize, h: &Hdr, m: &[u8]) {
        let b = HEADER;
        match h.command {
            NEGOTIATE => {
                let Some(d) = le16(m, b + 4) else { return };
                self.dialect2 = Some(d);
                if let Kind::Negotiate(n) = &mut self.txs[at].kind {
                    n.server_guid = guid(m, b + 8);
                    n.max_sizes = le32(m, b + 28).zip(le32(m, b + 32));
                }
            }
            TREE_CONNECT => {
                let share_type = m.get(b + 2).copied();
                let tx = &mut self.txs[at];
                tx.tree_id = h.tree_id;
                if let Kind::TreeConnect(t) = &mut tx.kind {
                    t.share_type = share_type;
                    t.pipe = share_type == Some(2);
                    let tree = Tree { share: t.share.clone(), pipe: t.pipe };
                    Self::remember(&mut self.trees, (h.session_id, h.tree_id), tree);
                }
            }
            CREATE => {
                let tree = self.trees.get(&(self.txs[at].session_id, self.txs[at].tree_id)).cloned().unwrap_or_default();
                let Some(handle) = m.get(b + 64..b + 80) else { return };
                if let Kind::Create(c) = &mut self.txs[at].kind {
                    for (i, t) in c.times.iter_mut().enumerate() {
                        *t = tx::filetime(le64(m, b + 8 + 8 * i).unwrap_or(0));
                    }
                    c.size = le64(m, b + 48).unwrap_or(0);
                    c.fuid = Some(tx::guid_text(&handle.try_into().unwrap_or([0; 16])));
                    let h = Handle { name: c.name.clone(), share: tree.share, pipe: tree.pipe, dcerpc: None };
                    Self::remember(&mut self.handles, handle.to_vec(), h);
                }
            }
            IOCTL => {
                let output = span(m, le32(m, b + 32).unwrap_or(0) as usize, le32(m, b + 36).unwrap_or(0) as usize);
                let mut bound = std::mem::take(&mut self.bound);
                if let Kind::Dcerpc(c) = &mut self.txs[at].kind {
                    c.answer(output, &mut bound);
                }
                self.bound = bound;
            }
            _ => {}
        }
    }
}
