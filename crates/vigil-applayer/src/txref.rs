//! A transaction of whichever protocol a flow speaks, as detection and
//! logging see it: one progress scale and one buffer lookup for all.

use vigil_types::{AppProto, Direction};

use crate::files::File;
use crate::http::HttpTx;
use crate::parser::{BufferId, Transaction};
use crate::progress::Progress;
use crate::proto::{ProtoDef, ProtoTx};

/// A transaction of whichever protocol the flow speaks.
#[derive(Clone, Copy)]
pub enum TxRef<'a> {
    Http(&'a HttpTx),
    /// A transaction of a protocol of the table.
    Dyn(&'static ProtoDef, &'a dyn ProtoTx),
}

impl std::fmt::Debug for TxRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TxRef::Http(tx) => f.debug_tuple("Http").field(tx).finish(),
            TxRef::Dyn(def, tx) => f.debug_tuple(def.name).field(&tx.id()).finish(),
        }
    }
}

impl<'a> TxRef<'a> {
    /// Unique within the flow, growing with each transaction (also across a tunnel's
    /// change of protocol).
    pub fn id(&self) -> u64 {
        match *self {
            TxRef::Http(tx) => tx.id(),
            TxRef::Dyn(_, tx) => tx.id(),
        }
    }

    pub fn proto(&self) -> AppProto {
        match self {
            TxRef::Http(_) => AppProto::Http,
            TxRef::Dyn(def, _) => def.app_proto(),
        }
    }

    /// Whether the `dir` side is complete ([`Transaction::complete`]).
    pub fn complete(&self, dir: Direction) -> bool {
        match *self {
            TxRef::Http(tx) => tx.complete(dir),
            TxRef::Dyn(_, tx) => tx.progress(dir) == Progress::Complete,
        }
    }

    /// Whether it makes an EVE record ([`ProtoTx::writes_record`]).
    pub fn writes_record(&self) -> bool {
        match *self {
            TxRef::Http(_) => true,
            TxRef::Dyn(_, tx) => tx.writes_record(),
        }
    }

    /// The direction its record is written in ([`ProtoTx::record_dir`]).
    pub fn record_dir(&self) -> Direction {
        match *self {
            TxRef::Http(_) => Direction::ToServer,
            TxRef::Dyn(_, tx) => tx.record_dir(),
        }
    }

    /// Its group of transactions that log as one ([`ProtoTx::log_group`]).
    pub fn log_group(&self) -> Option<u64> {
        match *self {
            TxRef::Http(_) => None,
            TxRef::Dyn(_, tx) => tx.log_group(),
        }
    }

    /// Whether it will not change any more, so it can be logged.
    pub fn finished(&self) -> bool {
        let complete = |d| self.progress(d) == Progress::Complete;
        match self {
            TxRef::Http(_) => complete(Direction::ToServer) && complete(Direction::ToClient),
            TxRef::Dyn(_, tx) => tx.finished(),
        }
    }

    /// How far the `dir` side got: what detection waits for before inspecting a buffer.
    ///
    /// HTTP: `Headers` once that side's start line and headers are parsed. DNS: a transaction
    /// is one message, `Complete` on the side it travelled and `None` on the other (which
    /// never carries anything). The table's protocols say themselves ([`ProtoTx::progress`]).
    pub fn progress(&self, dir: Direction) -> Progress {
        let (complete, headers) = match *self {
            TxRef::Dyn(_, tx) => return tx.progress(dir),
            TxRef::Http(tx) => (tx.complete(dir), tx.headers_done(dir)),
        };
        if complete {
            Progress::Complete
        } else if headers {
            Progress::Headers
        } else {
            Progress::None
        }
    }

    /// The files side `dir` carried.
    pub fn files(&self, dir: Direction) -> &'a [File] {
        match *self {
            TxRef::Http(tx) => tx.files(dir),
            TxRef::Dyn(_, tx) => tx.files(dir),
        }
    }

    /// A buffer as seen by a rule inspecting side `dir`. The table's protocols answer per side
    /// ([`ProtoTx::buffer`]); HTTP and DNS buffers belong to one side already
    /// ([`Transaction::buffer`]).
    pub fn buffer(&self, dir: Direction, id: BufferId, index: usize) -> Option<&'a [u8]> {
        if id == BufferId::FileName {
            return self.files(dir).get(index).map(|f| f.name.as_slice());
        }
        if id == BufferId::FileData {
            return match *self {
                TxRef::Http(tx) => tx.file_data(dir, index),
                _ => self.files(dir).get(index).map(|f| f.window.as_slice()).filter(|w| !w.is_empty()),
            };
        }
        match *self {
            TxRef::Http(tx) => tx.buffer(id, index),
            TxRef::Dyn(_, tx) => match id {
                BufferId::Proto(n) => tx.buffer(dir, n, index),
                _ => None,
            },
        }
    }
}
