//! An SMB transaction as Suricata forms them: a command and its answer,
//! or a file read or written through one handle (many commands, one
//! transaction, until the handle is closed), or a DCE/RPC call through a
//! named pipe; and its EVE `smb` record.

use std::any::Any;

use serde_json::{json, Map, Value};
use vigil_types::Direction;

use super::names;
use crate::protocols::dcerpc::carried::Call;
use crate::codecs::ntlmssp::{Auth, Ticket};
use crate::offsets::Waiting;
use crate::files::File;
use crate::progress::Progress;
use crate::proto::{ProtoTx, RecordOptions};

/// Buffer ids: [`super::PROTO`]'s buffers.
pub const SHARE: u8 = 0;
pub const NAMED_PIPE: u8 = 1;
pub const NTLMSSP_USER: u8 = 2;
pub const NTLMSSP_DOMAIN: u8 = 3;

/// The status of an answer: an NT status, or an SMB1 DOS error's class and code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Nt(u32),
    Dos { class: u8, code: u16 },
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Negotiate {
    pub dialects: Vec<String>,
    pub client_guid: Option<[u8; 16]>,
    pub server_guid: Option<[u8; 16]>,
    /// An SMB2 answer's largest read and write.
    pub max_sizes: Option<(u32, u32)>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionSetup {
    pub ntlmssp: Option<Auth>,
    pub kerberos: Option<Ticket>,
    /// SMB1's native OS and LAN manager, of the request and of the answer.
    pub request: Option<(String, String)>,
    pub response: Option<(String, String)>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TreeConnect {
    pub share: String,
    pub pipe: bool,
    /// SMB2's share type from the answer.
    pub share_type: Option<u8>,
    /// SMB1's service, asked for and given.
    pub service: Option<(String, Option<String>)>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Create {
    pub name: String,
    pub directory: bool,
    pub disposition: u32,
    pub delete_on_close: bool,
    /// From the answer: the four times (Unix seconds), the size and the handle.
    pub times: [u32; 4],
    pub size: u64,
    pub fuid: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileTx {
    pub name: String,
    pub share: String,
    pub fuid: String,
    pub dir: Option<Direction>,
    /// The file, fed through the file service by offset.
    pub file: File,
    /// Bytes that came ahead of the file's end (reads answered out of
    /// order), by offset, until the bytes before them come.
    pub ahead: Waiting,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    Generic,
    Negotiate(Negotiate),
    SessionSetup(Box<SessionSetup>),
    TreeConnect(TreeConnect),
    Create(Box<Create>),
    Ioctl(u32),
    Dcerpc(Box<Call>),
    File(Box<FileTx>),
    /// A file marked for deletion on close (`SET_INFO` with disposition information).
    Delete { name: String, fuid: String },
    Rename { from: String, to: String, fuid: String },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SmbTx {
    pub(super) id: u64,
    /// 1 or 2 (SMB3 is 2).
    pub version: u8,
    pub command: u16,
    pub dialect: String,
    pub status: Option<Status>,
    pub session_id: u64,
    pub tree_id: u32,
    /// What the answer is found by: SMB2's message id, SMB1's multiplex
    /// and process ids.
    pub(super) key: u64,
    pub request_done: bool,
    pub response_done: bool,
    pub kind: Kind,
}

/// A 16-byte handle or GUID as Suricata writes it.
pub fn guid_text(g: &[u8; 16]) -> String {
    let order = [3, 2, 1, 0, 5, 4, 7, 6, 9, 8, 11, 10, 15, 14, 13, 12];
    let mut s = String::with_capacity(36);
    for (i, &at) in order.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            s.push('-');
        }
        s.push_str(&format!("{:02x}", g[at]));
    }
    s
}

impl SmbTx {
    fn command_name(&self) -> String {
        let named = if self.version == 1 { names::smb1_command(self.command as u8) } else { names::smb2_command(self.command) };
        named.map_or_else(|| self.command.to_string(), str::to_string)
    }

    /// The kind of transaction, as an output's `types` list names it.
    pub fn type_name(&self) -> &'static str {
        match &self.kind {
            Kind::Generic => "generic",
            Kind::Negotiate(_) => "negotiate",
            Kind::SessionSetup(_) => "session_setup",
            Kind::TreeConnect(_) => "tree_connect",
            Kind::Create(_) => "create",
            Kind::Ioctl(_) => "ioctl",
            Kind::Dcerpc(_) => "dcerpc",
            Kind::File(_) => "file",
            Kind::Rename { .. } => "rename",
            Kind::Delete { .. } => "set_file_path_info",
        }
    }

    pub fn share(&self) -> Option<&str> {
        match &self.kind {
            Kind::TreeConnect(t) if !t.pipe => Some(&t.share),
            _ => None,
        }
    }

    pub fn named_pipe(&self) -> Option<&str> {
        match &self.kind {
            Kind::TreeConnect(t) if t.pipe => Some(&t.share),
            _ => None,
        }
    }

    pub fn ntlmssp(&self) -> Option<&Auth> {
        match &self.kind {
            Kind::SessionSetup(s) => s.ntlmssp.as_ref(),
            _ => None,
        }
    }

    pub fn call(&self) -> Option<&Call> {
        match &self.kind {
            Kind::Dcerpc(c) => Some(c),
            _ => None,
        }
    }
}

impl ProtoTx for SmbTx {
    fn id(&self) -> u64 {
        self.id
    }

    fn progress(&self, dir: Direction) -> Progress {
        let done = match dir {
            // Whether a tree is a share or a pipe (what `smb.share` and
            // `smb.named_pipe` tell apart) is known from the answer only.
            Direction::ToServer if matches!(self.kind, Kind::TreeConnect(_)) => self.request_done && self.response_done,
            Direction::ToServer => self.request_done,
            Direction::ToClient => self.response_done,
        };
        if done {
            Progress::Complete
        } else {
            Progress::Headers
        }
    }

    fn buffer(&self, _dir: Direction, id: u8, index: usize) -> Option<&[u8]> {
        if index != 0 {
            return None;
        }
        let s = match id {
            SHARE => self.share()?,
            NAMED_PIPE => self.named_pipe()?,
            NTLMSSP_USER => &self.ntlmssp()?.user,
            NTLMSSP_DOMAIN => &self.ntlmssp()?.domain,
            _ => return None,
        };
        Some(s.as_bytes())
    }

    fn eve(&self) -> Value {
        let mut m = Map::new();
        m.insert("id".into(), (self.id + 1).into());
        m.insert("dialect".into(), self.dialect.clone().into());
        m.insert("command".into(), self.command_name().into());
        match self.status {
            Some(Status::Nt(s)) => {
                m.insert("status".into(), names::ntstatus(s).map_or_else(|| s.to_string(), str::to_string).into());
                m.insert("status_code".into(), format!("{s:#x}").into());
            }
            Some(Status::Dos { class, code }) => {
                m.insert("status".into(), names::dos_error(class, code).into());
                m.insert("status_code".into(), format!("0x{code:04x}").into());
            }
            None => {}
        }
        m.insert("session_id".into(), self.session_id.into());
        m.insert("tree_id".into(), self.tree_id.into());
        match &self.kind {
            Kind::Generic => {}
            Kind::Negotiate(n) => {
                m.insert("client_dialects".into(), n.dialects.clone().into());
                if let Some(g) = &n.client_guid {
                    m.insert("client_guid".into(), guid_text(g).into());
                }
                if let Some(g) = &n.server_guid {
                    m.insert("server_guid".into(), guid_text(g).into());
                }
                if let Some((r, w)) = n.max_sizes {
                    m.insert("max_read_size".into(), r.into());
                    m.insert("max_write_size".into(), w.into());
                }
            }
            Kind::SessionSetup(s) => {
                if let Some(a) = &s.ntlmssp {
                    let mut o = Map::new();
                    o.insert("domain".into(), a.domain.clone().into());
                    o.insert("user".into(), a.user.clone().into());
                    o.insert("host".into(), a.host.clone().into());
                    if let Some(v) = &a.version {
                        o.insert("version".into(), v.clone().into());
                    }
                    m.insert("ntlmssp".into(), Value::Object(o));
                }
                if let Some(k) = &s.kerberos {
                    m.insert("kerberos".into(), json!({"realm": k.realm, "snames": k.snames}));
                }
                for (key, v) in [("request", &s.request), ("response", &s.response)] {
                    if let Some((os, lm)) = v {
                        m.insert(key.into(), json!({"native_os": os, "native_lm": lm}));
                    }
                }
            }
            Kind::TreeConnect(t) => {
                m.insert(if t.pipe { "named_pipe" } else { "share" }.into(), t.share.clone().into());
                if let Some(st) = t.share_type {
                    m.insert("share_type".into(), names::share_type(st).into());
                }
                if let Some((req, res)) = &t.service {
                    let mut o = Map::new();
                    o.insert("request".into(), req.clone().into());
                    if let Some(r) = res {
                        o.insert("response".into(), r.clone().into());
                    }
                    m.insert("service".into(), Value::Object(o));
                }
            }
            Kind::Create(c) => {
                let name = if c.name.is_empty() { "<share_root>".to_string() } else { c.name.clone() };
                // The share's root is named a file whatever the request said.
                m.insert(if c.directory && !c.name.is_empty() { "directory" } else { "filename" }.into(), name.into());
                m.insert("disposition".into(), names::disposition(c.disposition).into());
                m.insert("access".into(), if c.delete_on_close { "delete on close" } else { "normal" }.into());
                for (key, t) in ["created", "accessed", "modified", "changed"].iter().zip(c.times) {
                    m.insert((*key).into(), t.into());
                }
                m.insert("size".into(), c.size.into());
                m.insert("fuid".into(), c.fuid.clone().unwrap_or_default().into());
            }
            Kind::Ioctl(f) => {
                m.insert("function".into(), names::fsctl(*f).into());
            }
            Kind::Dcerpc(c) => {
                m.insert("dcerpc".into(), c.eve());
            }
            Kind::File(f) => {
                m.insert("filename".into(), f.name.clone().into());
                m.insert("share".into(), f.share.clone().into());
                m.insert("fuid".into(), f.fuid.clone().into());
            }
            Kind::Delete { name, fuid } => {
                m.insert("filename".into(), name.clone().into());
                m.insert("access".into(), "delete on close".into());
                m.insert("fuid".into(), fuid.clone().into());
            }
            Kind::Rename { from, to, fuid } => {
                m.insert("rename".into(), json!({"from": from, "to": to}));
                m.insert("fuid".into(), fuid.clone().into());
            }
        }
        Value::Object(m)
    }

    fn finished(&self) -> bool {
        self.request_done && self.response_done
    }

    fn files(&self, dir: Direction) -> &[File] {
        match &self.kind {
            Kind::File(f) if f.dir == Some(dir) => std::slice::from_ref(&f.file),
            _ => &[],
        }
    }

    fn file_size(&self, dir: Direction) -> Option<(u64, bool)> {
        let f = self.files(dir).first()?;
        (!f.is_open()).then_some((f.size, !f.gaps))
    }

    fn carried(&self, proto: &str) -> Option<&dyn ProtoTx> {
        self.call().filter(|_| proto == "dcerpc").map(|c| c as &dyn ProtoTx)
    }

    fn logs_with(&self, opts: &RecordOptions) -> bool {
        opts.types.as_ref().is_none_or(|t| t.iter().any(|n| n == self.type_name()))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// FILETIME (100 ns since 1601) as Unix seconds; 0 before 1970.
pub fn filetime(t: u64) -> u32 {
    const EPOCH: u64 = 116_444_736_000_000_000;
    if t > EPOCH {
        ((t - EPOCH) / 10_000_000) as u32
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_and_times_are_written_as_suricata_writes_them() {
        let g = [0x65, 0, 0, 0, 0x30, 0, 0, 0, 0x25, 0, 0x20, 0, 0xff, 0xff, 0xff, 0xff];
        assert_eq!(guid_text(&g), "00000065-0030-0000-0025-0020ffffffff");
        assert_eq!(filetime(0), 0);
        assert_eq!(filetime(116_444_736_000_000_000 + 10_000_000 * 1_465_811_553), 1_465_811_553);
    }
}
