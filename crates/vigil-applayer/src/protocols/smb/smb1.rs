//! SMB1 (MS-CIFS, MS-SMB) messages: the 32-byte header, parameter words
//! and bytes, AndX chains (each command of a chain its own transaction),
//! and the commands Suricata logs the contents of: negotiate, session
//! setup, tree connect, NT create, reads, writes and pipe transactions.

use vigil_types::Direction;

use super::parser::{Handle, SmbParser, Tree};
use crate::protocols::dcerpc::carried as pipe;
use super::smb2::{le16, le32, le64};
use super::tx::{self, Create, Kind, Negotiate, SessionSetup, Status, TreeConnect};
use crate::codecs::ntlmssp;

const HEADER: usize = 32;
const FLAGS_REPLY: u8 = 0x80;
const FLAGS2_UNICODE: u16 = 0x8000;
const FLAGS2_NT_STATUS: u16 = 0x4000;

const CLOSE: u8 = 0x04;
const LOCKING_ANDX: u8 = 0x24;
const TRANS: u8 = 0x25;
const TRANS2: u8 = 0x32;
const READ_ANDX: u8 = 0x2e;
const WRITE_ANDX: u8 = 0x2f;
const NEGOTIATE: u8 = 0x72;
const SESSION_SETUP_ANDX: u8 = 0x73;
const TREE_CONNECT_ANDX: u8 = 0x75;
const NT_CREATE_ANDX: u8 = 0xa2;

/// Commands whose parameters start with the next command of the chain.
fn is_andx(c: u8) -> bool {
    matches!(c, 0x24 | 0x2d | 0x2e | 0x2f | 0x73 | 0x74 | 0x75 | 0xa2)
}

struct Hdr {
    status: Status,
    flags2: u16,
    tree_id: u16,
    uid: u16,
    /// Multiplex and process ids: what pairs an answer with its request.
    key: u64,
}

/// One command of a message: its parameter words and bytes, with the
/// bytes' offset from the header (where SMB1 aligns Unicode text).
struct Block<'a> {
    words: &'a [u8],
    bytes: &'a [u8],
    bytes_at: usize,
}

fn block(m: &[u8], at: usize) -> Option<Block<'_>> {
    let wc = usize::from(*m.get(at)?);
    let words = m.get(at + 1..at + 1 + 2 * wc)?;
    let bc_at = at + 1 + 2 * wc;
    let bc = usize::from(le16(m, bc_at).unwrap_or(0));
    let bytes_at = bc_at + 2;
    let bytes = m.get(bytes_at..).map(|b| &b[..bc.min(b.len())]).unwrap_or_default();
    Some(Block { words, bytes, bytes_at })
}

/// A NUL-terminated string at `at` of `m` (UTF-16LE aligned to two bytes
/// from the header when `unicode`); the string and where the next begins.
fn string(m: &[u8], mut at: usize, unicode: bool) -> (String, usize) {
    if unicode {
        at += at % 2;
        let mut end = at;
        while end + 1 < m.len() && (m[end] != 0 || m[end + 1] != 0) {
            end += 2;
        }
        (super::smb2::utf16(m.get(at..end).unwrap_or_default()), end + 2)
    } else {
        let rest = m.get(at..).unwrap_or_default();
        let end = rest.iter().position(|&c| c == 0).unwrap_or(rest.len());
        (rest[..end].iter().map(|&c| char::from(c)).collect(), at + end + 1)
    }
}

impl SmbParser {
    pub(super) fn smb1(&mut self, dir: Direction, m: &[u8]) {
        if m.len() < HEADER + 1 {
            return;
        }
        let flags2 = le16(m, 10).unwrap_or(0);
        let status = if flags2 & FLAGS2_NT_STATUS != 0 {
            Status::Nt(le32(m, 5).unwrap_or(0))
        } else {
            Status::Dos { class: m[5], code: le16(m, 7).unwrap_or(0) }
        };
        let pid = u64::from(le16(m, 12).unwrap_or(0)) << 16 | u64::from(le16(m, 26).unwrap_or(0));
        let h = Hdr { status, flags2, tree_id: le16(m, 24).unwrap_or(0), uid: le16(m, 28).unwrap_or(0), key: pid << 16 | u64::from(le16(m, 30).unwrap_or(0)) };
        // A server's oplock break is a request, sent to the client.
        let reply = m[9] & FLAGS_REPLY != 0;
        let _ = dir;
        let (mut command, mut at) = (m[4], HEADER);
        // An AndX chain: each offset must move forward, so it ends.
        for _ in 0..16 {
            let Some(b) = block(m, at) else { return };
            if reply {
                self.response1(&h, command, m, &b);
            } else {
                self.request1(&h, command, m, &b);
            }
            if !is_andx(command) || b.words.len() < 4 || b.words[0] == 0xff {
                return;
            }
            let next = usize::from(le16(b.words, 2).unwrap_or(0));
            if next <= at {
                return;
            }
            (command, at) = (b.words[0], next);
        }
    }

    fn request1(&mut self, h: &Hdr, command: u8, m: &[u8], b: &Block<'_>) {
        let unicode = h.flags2 & FLAGS2_UNICODE != 0;
        let (session, tree, key) = (u64::from(h.uid), u32::from(h.tree_id), h.key);
        let w = b.words;
        let kind = match command {
            NEGOTIATE => {
                let offered: Vec<String> = b.bytes.split(|&c| c == 0).filter_map(|d| d.strip_prefix(&[2])).map(|d| d.iter().map(|&c| char::from(c)).collect()).take(64).collect();
                self.offered1 = offered.clone();
                Kind::Negotiate(Negotiate { dialects: offered, ..Negotiate::default() })
            }
            SESSION_SETUP_ANDX => {
                let mut s = SessionSetup::default();
                let names_at = match w.len() {
                    24 => {
                        let blob_len = usize::from(le16(w, 14).unwrap_or(0));
                        let blob = &b.bytes[..blob_len.min(b.bytes.len())];
                        s.ntlmssp = ntlmssp::authenticate(blob);
                        s.kerberos = ntlmssp::ap_req_ticket(blob);
                        b.bytes_at + blob_len
                    }
                    26 => {
                        let passwords = usize::from(le16(w, 14).unwrap_or(0)) + usize::from(le16(w, 16).unwrap_or(0));
                        let (_, at) = string(m, b.bytes_at + passwords, unicode);
                        let (_, at) = string(m, at, unicode);
                        at
                    }
                    _ => b.bytes_at,
                };
                let (os, at) = string(m, names_at, unicode);
                let (lm, _) = string(m, at, unicode);
                s.request = Some((os, lm));
                Kind::SessionSetup(Box::new(s))
            }
            TREE_CONNECT_ANDX => {
                let pw = usize::from(le16(w, 6).unwrap_or(0));
                let (path, at) = string(m, b.bytes_at + pw, unicode);
                let (service, _) = string(m, at, false);
                // Suricata names an SMB1 share with one leading backslash (`\\host\share`).
                let share = path.strip_prefix('\\').filter(|p| p.starts_with('\\')).map_or(path.clone(), str::to_string);
                Kind::TreeConnect(TreeConnect { share, service: Some((service, None)), ..TreeConnect::default() })
            }
            NT_CREATE_ANDX => {
                let (name, _) = string(m, b.bytes_at, unicode);
                let options = le32(w, 39).unwrap_or(0);
                Kind::Create(Box::new(Create {
                    name,
                    directory: options & 0x1 != 0,
                    disposition: le32(w, 35).unwrap_or(0),
                    delete_on_close: options & 0x1000 != 0,
                    ..Create::default()
                }))
            }
            CLOSE => {
                if let Some(fid) = w.get(0..2) {
                    self.close_handle(fid);
                }
                Kind::Generic
            }
            READ_ANDX => {
                if let Some(fid) = w.get(4..6) {
                    let high = if w.len() >= 24 { le32(w, 20).unwrap_or(0) } else { 0 };
                    let at = u64::from(high) << 32 | u64::from(le32(w, 6).unwrap_or(0));
                    Self::remember(&mut self.reads, key | 1 << 63, (fid.to_vec(), at));
                }
                return;
            }
            WRITE_ANDX => {
                let Some(fid) = w.get(4..6).map(<[u8]>::to_vec) else { return };
                let len = usize::from(le16(w, 20).unwrap_or(0)) | usize::from(le16(w, 18).unwrap_or(0)) << 16;
                let off = usize::from(le16(w, 22).unwrap_or(0));
                let data = m.get(off..).map(|d| &d[..len.min(d.len())]).unwrap_or_default();
                let fuid = fid_text(&fid);
                let high = if w.len() >= 28 { le32(w, 24).unwrap_or(0) } else { 0 };
                let at = u64::from(high) << 32 | u64::from(le32(w, 6).unwrap_or(0));
                if let Some(written) = self.data(1, u16::from(WRITE_ANDX), (session, tree, key), &fid, fuid, Direction::ToServer, data, (at, len as u64), None) {
                    Self::remember(&mut self.answers_to, key | 1 << 63, written);
                }
                return;
            }
            TRANS => {
                let setup_count = usize::from(*w.get(26).unwrap_or(&0));
                let setup = w.get(28..28 + 2 * setup_count).unwrap_or_default();
                let data = m.get(usize::from(le16(w, 24).unwrap_or(0))..).map(|d| &d[..usize::from(le16(w, 22).unwrap_or(0)).min(d.len())]).unwrap_or_default();
                // TransactNmPipe: a DCE/RPC PDU written to the pipe and its answer read
                // back. Suricata keeps no transaction for LAN Manager's remote calls.
                let (name, _) = string(m, b.bytes_at, unicode);
                match (le16(setup, 0), pipe::open(data, &self.bound)) {
                    (Some(0x26), Some(call)) => Kind::Dcerpc(Box::new(call)),
                    _ if name.eq_ignore_ascii_case("\\PIPE\\LANMAN") => return,
                    _ => Kind::Generic,
                }
            }
            // Suricata keeps transactions of its own for some second-level commands only.
            TRANS2 => return,
            _ => Kind::Generic,
        };
        // A negotiate comes before any session or tree.
        let (session, tree) = if command == NEGOTIATE { (0, 0) } else { (session, tree) };
        let at = self.open_tx(1, u16::from(command), key, session, tree, kind);
        if command == LOCKING_ANDX {
            self.txs[at].response_done = true;
        }
    }

    fn response1(&mut self, h: &Hdr, command: u8, m: &[u8], b: &Block<'_>) {
        let unicode = h.flags2 & FLAGS2_UNICODE != 0;
        let w = b.words;
        // More processing required is a session setup's step, not a failure.
        let failed = matches!(h.status, Status::Nt(s) if s >> 30 == 3 && s != 0xc000_0016) || matches!(h.status, Status::Dos { class, .. } if class != 0);
        match command {
            READ_ANDX => {
                let Some((fid, at)) = self.reads.remove(&(h.key | 1 << 63)) else { return };
                if failed {
                    return;
                }
                let len = usize::from(le16(w, 10).unwrap_or(0)) | usize::from(le16(w, 14).unwrap_or(0)) << 16;
                let off = usize::from(le16(w, 12).unwrap_or(0));
                let data = m.get(off..).map(|d| &d[..len.min(d.len())]).unwrap_or_default();
                let fuid = fid_text(&fid);
                self.data(1, u16::from(READ_ANDX), (u64::from(h.uid), u32::from(h.tree_id), h.key), &fid, fuid, Direction::ToClient, data, (at, len as u64), None);
                return;
            }
            WRITE_ANDX => {
                // A call written to a pipe takes the write's status (a file's transaction none).
                if let Some((id, _)) = self.answers_to.remove(&(h.key | 1 << 63)) {
                    if let Some(t) = self.txs.by_id_mut(id).filter(|t| matches!(t.kind, Kind::Dcerpc(_))) {
                        t.status = Some(h.status);
                    }
                }
                return;
            }
            _ => {}
        }
        // Locking requests are not paired with their answers (an oplock break has none).
        if command == LOCKING_ANDX {
            return;
        }
        let Some(at) = self.waiting(1, h.key, u16::from(command)) else { return };
        if !failed {
            self.response1_body(at, h, command, m, b, unicode);
        }
        self.answered(at, h.status);
        if command == SESSION_SETUP_ANDX {
            self.txs[at].session_id = u64::from(h.uid);
        }

    }

    fn response1_body(&mut self, at: usize, h: &Hdr, command: u8, m: &[u8], b: &Block<'_>, unicode: bool) {
        let w = b.words;
        match command {
            NEGOTIATE => {
                let Some(i) = le16(w, 0) else { return };
                self.dialect1 = self.offered1.get(usize::from(i)).cloned();
                // Suricata reads a GUID from the bytes whether or not extended
                // security put one there (else they are the challenge and domain).
                if let Kind::Negotiate(n) = &mut self.txs[at].kind {
                    n.server_guid = b.bytes.get(..16).and_then(|g| g.try_into().ok());
                }
            }
            SESSION_SETUP_ANDX => {
                let names_at = match w.len() {
                    8 => b.bytes_at + usize::from(le16(w, 6).unwrap_or(0)),
                    _ => b.bytes_at,
                };
                let (os, at2) = string(m, names_at, unicode);
                let (lm, _) = string(m, at2, unicode);
                if let Kind::SessionSetup(s) = &mut self.txs[at].kind {
                    s.response = Some((os, lm));
                }
            }
            TREE_CONNECT_ANDX => {
                let (service, _) = string(m, b.bytes_at, false);
                let tx = &mut self.txs[at];
                tx.tree_id = u32::from(h.tree_id);
                if let Kind::TreeConnect(t) = &mut tx.kind {
                    t.pipe = service == "IPC";
                    if let Some(s) = &mut t.service {
                        s.1 = Some(service);
                    }
                    let tree = Tree { share: t.share.clone(), pipe: t.pipe };
                    Self::remember(&mut self.trees, (u64::from(h.uid), u32::from(h.tree_id)), tree);
                }
            }
            NT_CREATE_ANDX => {
                let tree = self.trees.get(&(u64::from(h.uid), u32::from(h.tree_id))).cloned().unwrap_or_default();
                let Some(fid) = w.get(5..7) else { return };
                if let Kind::Create(c) = &mut self.txs[at].kind {
                    for (i, t) in c.times.iter_mut().enumerate() {
                        *t = tx::filetime(le64(w, 11 + 8 * i).unwrap_or(0));
                    }
                    // The allocation size, where SMB2's record gives the end of file.
                    c.size = le64(w, 47).unwrap_or(0);
                    c.fuid = Some(fid_text(fid));
                    let h = Handle { name: c.name.clone(), share: tree.share, pipe: tree.pipe, dcerpc: None };
                    Self::remember(&mut self.handles, fid.to_vec(), h);
                }
            }
            TRANS => {
                let data = m.get(usize::from(le16(w, 14).unwrap_or(0))..).map(|d| &d[..usize::from(le16(w, 12).unwrap_or(0)).min(d.len())]).unwrap_or_default();
                let mut bound = std::mem::take(&mut self.bound);
                if let Kind::Dcerpc(c) = &mut self.txs[at].kind {
                    c.answer(data, &mut bound);
                }
                self.bound = bound;
            }
            _ => {}
        }
    }
}

/// An SMB1 file id as Suricata writes it: its two bytes in hex, high first.
fn fid_text(fid: &[u8]) -> String {
    fid.iter().rev().map(|b| format!("{b:02x}")).collect()
}
