//! The one transaction of an SSH flow: what each side said of itself.

use std::any::Any;

use serde_json::{json, Map, Value};
use vigil_types::{Direction, PerDir};

use super::Buffer;
use crate::progress::Progress;
use crate::proto::eve_text as text;
use crate::proto::ProtoTx;

/// What one side sent before it started encrypting.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SshSide {
    /// The banner line was read.
    pub banner: bool,
    /// Part of the banner line came, not its end yet.
    pub banner_partial: bool,
    /// It started encrypting (or closed): the last of its hook states.
    pub finished: bool,
    pub proto_version: Vec<u8>,
    pub software_version: Vec<u8>,
    /// The HASSH string of its KEXINIT and its MD5 (lowercase hex).
    pub hassh: Option<(Vec<u8>, Vec<u8>)>,
    /// Its KEXINIT was read, it started encrypting, or it closed: nothing
    /// more will be learnt of it.
    pub done: bool,
}

#[derive(Debug, Clone, Default)]
pub struct SshTx {
    pub(super) id: u64,
    pub(super) sides: PerDir<SshSide>,
    /// Events raised on it, by their place in [`super::EVENTS`].
    pub(super) events: u64,
}

impl SshTx {
    pub fn side(&self, dir: Direction) -> &SshSide {
        self.sides.get(dir)
    }
}

fn side_eve(s: &SshSide) -> Value {
    let mut m = Map::new();
    if s.banner {
        m.insert("proto_version".into(), text(&s.proto_version));
        m.insert("software_version".into(), text(&s.software_version));
    }
    if let Some((string, hash)) = &s.hassh {
        m.insert("hassh".into(), json!({"hash": text(hash), "string": text(string)}));
    }
    Value::Object(m)
}

impl ProtoTx for SshTx {
    fn id(&self) -> u64 {
        self.id
    }

    fn events(&self) -> u64 {
        self.events
    }

    fn progress(&self, dir: Direction) -> Progress {
        let s = self.sides.get(dir);
        if s.done {
            Progress::Complete
        } else if s.banner {
            Progress::Headers
        } else {
            Progress::None
        }
    }

    fn hook_state(&self, dir: Direction) -> Option<u8> {
        // in progress, banner waiting for its end of line, banner done, finished
        let s = self.sides.get(dir);
        Some(if s.finished {
            3
        } else if s.banner {
            2
        } else if s.banner_partial {
            1
        } else {
            0
        })
    }

    fn buffer(&self, dir: Direction, id: u8, index: usize) -> Option<&[u8]> {
        if index > 0 {
            return None;
        }
        let hassh = |d: Direction, string: bool| {
            self.sides.get(d).hassh.as_ref().map(|(s, h)| if string { &s[..] } else { &h[..] })
        };
        let s = self.sides.get(dir);
        match Buffer::from_id(id)? {
            Buffer::Proto => s.banner.then_some(&s.proto_version[..]),
            Buffer::Software => s.banner.then_some(&s.software_version[..]),
            Buffer::Hassh => hassh(Direction::ToServer, false),
            Buffer::HasshString => hassh(Direction::ToServer, true),
            Buffer::HasshServer => hassh(Direction::ToClient, false),
            Buffer::HasshServerString => hassh(Direction::ToClient, true),
        }
    }

    fn eve(&self) -> Value {
        let mut m = Map::new();
        for (key, dir) in [("client", Direction::ToServer), ("server", Direction::ToClient)] {
            let s = self.sides.get(dir);
            if s.banner || s.hassh.is_some() {
                m.insert(key.into(), side_eve(s));
            }
        }
        Value::Object(m)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
