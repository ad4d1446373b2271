//! A transaction of whichever protocol a flow speaks, as detection and
//! logging see it: its protocol's definition beside it, one progress scale
//! and one buffer lookup for all.

use vigil_types::{AppProto, Direction};

use crate::files::File;
use crate::parser::BufferId;
use crate::progress::Progress;
use crate::proto::{ProtoDef, ProtoTx};

/// A transaction of a protocol of the table.
#[derive(Clone, Copy)]
pub struct TxRef<'a> {
    pub def: &'static ProtoDef,
    pub tx: &'a dyn ProtoTx,
}

impl std::fmt::Debug for TxRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple(self.def.name).field(&self.tx.id()).finish()
    }
}

impl<'a> TxRef<'a> {
    pub fn new(def: &'static ProtoDef, tx: &'a dyn ProtoTx) -> Self {
        TxRef { def, tx }
    }

    /// Unique within the flow, growing with each transaction (also across a tunnel's
    /// change of protocol).
    pub fn id(&self) -> u64 {
        self.tx.id()
    }

    pub fn proto(&self) -> AppProto {
        self.def.app_proto()
    }

    /// The transaction of protocol `proto` it is or carries ([`ProtoTx::carried`]).
    pub fn as_proto(&self, proto: AppProto) -> Option<TxRef<'a>> {
        if self.proto() == proto {
            return Some(*self);
        }
        let def = self.def.includes.iter().filter_map(|n| crate::proto::find(n)).find(|d| d.app_proto() == proto)?;
        self.tx.carried(def.name).map(|tx| TxRef::new(def, tx))
    }

    /// Whether the `dir` side is complete.
    pub fn complete(&self, dir: Direction) -> bool {
        self.tx.progress(dir) == Progress::Complete
    }

    /// Whether it makes an EVE record ([`ProtoTx::writes_record`]).
    pub fn writes_record(&self) -> bool {
        self.tx.writes_record()
    }

    /// The direction its record is written in ([`ProtoTx::record_dir`]).
    pub fn record_dir(&self) -> Direction {
        self.tx.record_dir()
    }

    /// Whether its record takes the packet's direction ([`ProtoTx::logged_in_packet_dir`]).
    pub fn logged_in_packet_dir(&self) -> bool {
        self.tx.logged_in_packet_dir()
    }

    /// Its data's byte order for `dce` ([`ProtoTx::dce_little_endian`]).
    pub fn dce_little_endian(&self) -> bool {
        self.tx.dce_little_endian()
    }

    /// Its group of transactions that log as one ([`ProtoTx::log_group`]).
    pub fn log_group(&self) -> Option<u64> {
        self.tx.log_group()
    }

    /// Whether it will not change any more, so it can be logged.
    pub fn finished(&self) -> bool {
        self.tx.finished()
    }

    /// How far the `dir` side got: what detection waits for before inspecting a buffer
    /// ([`ProtoTx::progress`]).
    pub fn progress(&self, dir: Direction) -> Progress {
        self.tx.progress(dir)
    }

    /// The files side `dir` carried.
    pub fn files(&self, dir: Direction) -> &'a [File] {
        self.tx.files(dir)
    }

    /// What `filesize` reads of side `dir` ([`ProtoTx::file_size`]).
    pub fn file_size(&self, dir: Direction) -> Option<(u64, bool)> {
        self.tx.file_size(dir)
    }

    /// A buffer as seen by a rule inspecting side `dir`: the protocol's own
    /// ([`ProtoTx::buffer`]), or the file buffers every protocol with files has.
    pub fn buffer(&self, dir: Direction, id: BufferId, index: usize) -> Option<&'a [u8]> {
        match id {
            BufferId::FileName => self.files(dir).get(index).map(|f| f.name.as_slice()),
            // A file whose type was not (yet) looked up has nothing to inspect.
            BufferId::FileMagic => self.files(dir).get(index).and_then(|f| f.magic.as_deref()).map(str::as_bytes),
            BufferId::FileData => self.tx.file_data(dir, index),
            BufferId::Proto(n) => self.tx.buffer(dir, n, index),
        }
    }
}
