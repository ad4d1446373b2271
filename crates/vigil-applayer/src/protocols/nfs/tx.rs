//! An NFS transaction: one call and its reply, or the reads (writes) of
//! one file handle gathered as one file, as Suricata forms them; its EVE
//! `nfs` object and the `rpc` object beside it.

use std::any::Any;

use serde_json::{json, Map, Value};
use vigil_types::Direction;

use super::names;
use crate::codecs::rpc::{self, UnixCreds};
use crate::files::File;
use crate::offsets::Waiting;
use crate::progress::Progress;
use crate::proto::ProtoTx;

/// What a file transaction carries besides the call's fields.
#[derive(Debug, Clone, PartialEq)]
pub struct FileData {
    /// The side the file's bytes go: to the client for reads.
    pub dir: Direction,
    pub file: File,
    /// The call that carried the last chunk, once it came.
    pub last_xid: u32,
    /// Chunks after the first, and commits.
    pub chunks: u32,
    /// Procedures besides the first that acted on it (a commit).
    pub extra: Vec<u32>,
    /// Bytes past the file's end waiting for those before them, by offset.
    pub ahead: Waiting,
    /// Where the file ends, once its last chunk came: it closes when the
    /// bytes before are in.
    pub ends_at: Option<u64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NfsTx {
    pub(super) id: u64,
    pub xid: u32,
    pub version: u32,
    pub procedure: u32,
    pub file_name: Vec<u8>,
    pub handle: Vec<u8>,
    /// A rename's new name.
    pub rename_to: Option<Vec<u8>>,
    pub flavor: u32,
    pub unix: Option<UnixCreds>,
    pub rpc_state: u32,
    pub status: u32,
    pub request_done: bool,
    pub response_done: bool,
    pub first: bool,
    pub last: bool,
    pub file: Option<FileData>,
    /// The flow ended (TCP) or later calls were answered while this one
    /// was not (it is given up).
    pub(super) ended: bool,
    pub(super) tcp: bool,
    /// The side whose message finished it.
    pub(super) done_dir: Direction,
}

impl NfsTx {
    pub(super) fn new(id: u64, xid: u32, version: u32, procedure: u32, tcp: bool) -> Self {
        NfsTx {
            id,
            xid,
            version,
            procedure,
            file_name: Vec::new(),
            handle: Vec::new(),
            rename_to: None,
            flavor: rpc::AUTH_NULL,
            unix: None,
            rpc_state: 0,
            status: 0,
            request_done: false,
            response_done: false,
            first: false,
            last: false,
            file: None,
            ended: false,
            tcp,
            done_dir: Direction::ToClient,
        }
    }

    /// The procedures a rule's `nfs_procedure` looks at: the call's, then
    /// those that acted on its file since.
    pub fn procedures(&self) -> impl Iterator<Item = u32> + '_ {
        std::iter::once(self.procedure).chain(self.file.iter().flat_map(|f| f.extra.iter().copied()))
    }

    fn file_object(&self) -> Value {
        let mut o = Map::new();
        o.insert("first".into(), self.first.into());
        o.insert("last".into(), self.last.into());
        if let Some(f) = &self.file {
            o.insert("last_xid".into(), f.last_xid.into());
            o.insert("chunks".into(), f.chunks.into());
        }
        Value::Object(o)
    }

    fn rpc(&self) -> Value {
        let mut o = Map::new();
        o.insert("xid".into(), self.xid.into());
        o.insert("status".into(), rpc::reply_state_name(self.rpc_state).into());
        o.insert("auth_type".into(), rpc::flavor_name(self.flavor).into());
        if self.flavor == rpc::AUTH_UNIX {
            let u = self.unix.clone().unwrap_or_default();
            o.insert(
                "creds".into(),
                json!({"machine_name": String::from_utf8_lossy(&u.machine_name), "uid": u.uid, "gid": u.gid}),
            );
        }
        Value::Object(o)
    }
}

impl NfsTx {
    /// Its file is closed (committed, written to its end, cut short).
    fn file_ended(&self) -> bool {
        self.file.as_ref().is_some_and(|f| !f.file.is_open())
    }
}

impl ProtoTx for NfsTx {
    fn id(&self) -> u64 {
        self.id
    }

    fn progress(&self, dir: Direction) -> Progress {
        let done = match dir {
            Direction::ToServer => self.request_done,
            Direction::ToClient => self.response_done,
        };
        if done || self.ended {
            Progress::Complete
        } else {
            Progress::None
        }
    }

    fn finished(&self) -> bool {
        // A file committed or cut short is over, answered or not; over NFSv4
        // only the flow's end finishes a file transaction, as in Suricata.
        self.response_done || self.ended || (self.version < 4 && self.file_ended())
    }

    fn writes_record(&self) -> bool {
        // Attribute polls are not logged (as Suricata); a call given up
        // unanswered is logged only when a TCP flow ended under it; a file
        // is logged once it ended (committed, cut short), answered or not.
        let polled = self.version <= 3 && self.procedure == names::V3_GETATTR && self.file.is_none();
        !polled && (self.response_done || self.file_ended() || (self.ended && self.tcp))
    }

    fn record_dir(&self) -> Direction {
        self.done_dir
    }

    fn buffer(&self, _dir: Direction, _id: u8, _index: usize) -> Option<&[u8]> {
        None
    }

    /// The record as Suricata writes it whenever it logs the transaction
    /// (alerts on a call included): in its response form.
    fn eve(&self) -> Value {
        let mut o = Map::new();
        o.insert("version".into(), self.version.into());
        o.insert("procedure".into(), names::procedure(self.version, self.procedure).into());
        o.insert("filename".into(), String::from_utf8_lossy(&self.file_name).into());
        if !self.handle.is_empty() {
            o.insert("hhash".into(), names::hhash(&self.handle).into());
        }
        o.insert("id".into(), (self.id + 1).into());
        o.insert("file_tx".into(), self.file.is_some().into());
        o.insert("type".into(), "response".into());
        o.insert("status".into(), names::status(self.status).into());
        if self.procedure == names::read_of(self.version) {
            o.insert("read".into(), self.file_object());
        } else if self.procedure == names::write_of(self.version) {
            o.insert("write".into(), self.file_object());
        } else if self.procedure == names::rename_of(self.version) {
            let to = self.rename_to.as_deref().unwrap_or_default();
            o.insert("rename".into(), json!({"from": String::from_utf8_lossy(&self.file_name), "to": String::from_utf8_lossy(to)}));
        }
        Value::Object(o)
    }

    fn eve_siblings(&self, _opts: crate::proto::SiblingOptions<'_>) -> Vec<(&'static str, Value)> {
        vec![("rpc", self.rpc())]
    }

    fn files(&self, dir: Direction) -> &[File] {
        match &self.file {
            Some(f) if f.dir == dir => std::slice::from_ref(&f.file),
            _ => &[],
        }
    }

    fn file_size(&self, dir: Direction) -> Option<(u64, bool)> {
        match &self.file {
            Some(f) if f.dir == dir && !f.file.is_open() => Some((f.file.size, !f.file.gaps)),
            _ => None,
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
