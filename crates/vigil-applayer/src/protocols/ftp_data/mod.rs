//! FTP data channels (`ftp-data`): flows no probe finds, named by the FTP
//! control channel that announced them ([`crate::proto::Expectation`]):
//! the next connection between the two hosts to the port a PORT, EPRT,
//! PASV or EPSV set up, after a transfer command. One transaction per flow,
//! carrying the file of a RETR, STOR, APPE or STOU (named by the command)
//! on the side it travels, through the file service; a listing is data,
//! not a file. EVE `ftp_data` records name the command and file, and every
//! record of the flow carries the control flow's id as `parent_id`.
//!
//! ```
//! use std::sync::Arc;
//! use vigil_applayer::protocols::ftp_data::{DataChannel, PROTO};
//! use vigil_applayer::proto::{Expected, ParserInit};
//! use vigil_applayer::{AppConfig, Transport};
//! use vigil_types::Direction::ToClient;
//!
//! let channel: Expected = Arc::new(DataChannel { command: "RETR", file_name: Some(b"a.txt".to_vec()), file_dir: ToClient });
//! let app = AppConfig::default();
//! let init = ParserInit { app: &app, transport: Transport::Tcp, first_tx_id: 0, options: 0, settings: &[], expected: Some(&channel), client: None };
//! let mut p = (PROTO.new_parser)(&init);
//! p.parse(ToClient, b"hello");
//! p.close(ToClient, b"");
//! let tx = p.tx(0).unwrap();
//! assert_eq!(tx.files(ToClient)[0].size, 5);
//! assert_eq!(tx.eve(), serde_json::json!({"filename": "a.txt", "command": "RETR"}));
//! ```

use std::any::Any;

use serde_json::{Map, Value};
use vigil_rules::Value as RuleValue;
use vigil_types::{Direction, PerDir};

use crate::files::{File, FileConfig};
use crate::parser::{AppEvent, ParseResult};
use crate::progress::Progress;
use crate::proto::{CheckDef, Detection, Expected, ParserInit, Probe, ProtoDef, ProtoParser, ProtoTx, TxCheck};

/// What the control channel said of a data channel it set up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataChannel {
    /// The transfer command (`RETR`, `STOR`, `LIST`, ...).
    pub command: &'static str,
    /// The file's name, for a file transfer that named one.
    pub file_name: Option<Vec<u8>>,
    /// The side of the data flow the file travels on.
    pub file_dir: Direction,
}

/// The first bytes of a file kept for `file.data`.
const WINDOW: usize = 256 * 1024;

#[derive(Debug, Clone)]
pub struct FtpDataTx {
    id: u64,
    channel: DataChannel,
    files: PerDir<Vec<File>>,
    closed: PerDir<bool>,
}

impl FtpDataTx {
    pub fn channel(&self) -> &DataChannel {
        &self.channel
    }
}

impl ProtoTx for FtpDataTx {
    fn id(&self) -> u64 {
        self.id
    }

    fn progress(&self, dir: Direction) -> Progress {
        if *self.closed.get(dir) {
            Progress::Complete
        } else {
            Progress::Headers
        }
    }

    fn buffer(&self, _dir: Direction, _id: u8, _index: usize) -> Option<&[u8]> {
        None
    }

    fn eve(&self) -> Value {
        let mut m = Map::new();
        if let Some(name) = &self.channel.file_name {
            m.insert("filename".into(), crate::proto::eve_text(name));
        }
        m.insert("command".into(), self.channel.command.into());
        Value::Object(m)
    }

    fn files(&self, dir: Direction) -> &[File] {
        self.files.get(dir)
    }

    fn file_size(&self, dir: Direction) -> Option<(u64, bool)> {
        let f = self.files.get(dir).first()?;
        (*self.closed.get(dir)).then_some((f.size, !f.gaps))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The parser of one data flow.
#[derive(Debug)]
pub struct FtpDataParser {
    tx: FtpDataTx,
    files: FileConfig,
    /// Signatures that asked for the file to be stored before it opened.
    store: Vec<u32>,
}

impl FtpDataParser {
    pub fn new(first_tx_id: u64, channel: DataChannel, files: FileConfig) -> Self {
        let tx = FtpDataTx { id: first_tx_id, channel, files: PerDir::default(), closed: PerDir::default() };
        FtpDataParser { tx, files: FileConfig { unstored_depth: 0, ..files }, store: Vec::new() }
    }

    fn carries_file(&self) -> bool {
        matches!(self.tx.channel.command, "RETR" | "STOR" | "APPE" | "STOU")
    }
}

impl ProtoParser for FtpDataParser {
    fn parse(&mut self, dir: Direction, data: &[u8]) -> ParseResult {
        if dir != self.tx.channel.file_dir || !self.carries_file() {
            return ParseResult::Done;
        }
        let cfg = self.files;
        let files = self.tx.files.get_mut(dir);
        if files.is_empty() {
            let mut f = File::open(self.tx.channel.file_name.clone().unwrap_or_default(), 0, &cfg);
            for &sid in &self.store {
                f.mark_store(sid);
            }
            files.push(f);
        }
        let f = &mut files[0];
        if f.is_open() {
            let room = WINDOW.saturating_sub(f.window.len());
            f.window.extend_from_slice(&data[..data.len().min(room)]);
            f.append(data, &cfg);
        }
        ParseResult::Done
    }

    fn on_gap(&mut self, dir: Direction, len: u64) -> bool {
        if let Some(f) = self.tx.files.get_mut(dir).first_mut() {
            f.gap(len);
        }
        true
    }

    fn close(&mut self, dir: Direction, _held: &[u8]) {
        *self.tx.closed.get_mut(dir) = true;
        if let Some(f) = self.tx.files.get_mut(dir).first_mut() {
            f.close();
        }
    }

    fn tx_count(&self) -> usize {
        1
    }

    fn tx(&self, i: usize) -> Option<&dyn ProtoTx> {
        (i == 0).then_some(&self.tx as &dyn ProtoTx)
    }

    // The one transaction lives as long as the flow.
    fn prune(&mut self, _id: u64) {}

    fn drain_events(&mut self, _out: &mut Vec<AppEvent>) {}

    fn next_tx_id(&self) -> u64 {
        self.tx.id + 1
    }

    fn store_files(&mut self, _tx: Option<u64>, dirs: &[Direction], sid: u32) {
        let dir = self.tx.channel.file_dir;
        if !dirs.is_empty() && !dirs.contains(&dir) {
            return;
        }
        match self.tx.files.get_mut(dir).first_mut() {
            Some(f) => f.mark_store(sid),
            None => self.store.push(sid),
        }
    }
}

fn new_parser(init: &ParserInit) -> Box<dyn ProtoParser> {
    let channel = init.expected.and_then(|e| e.downcast_ref::<DataChannel>()).cloned().unwrap_or(DataChannel {
        command: "",
        file_name: None,
        file_dir: Direction::ToClient,
    });
    Box::new(FtpDataParser::new(init.first_tx_id, channel, init.app.http.files))
}

/// `ftpdata_command:retr`: the command that opened the channel (Suricata
/// documents `retr` and `stor`, and takes the other transfer commands too).
#[derive(Debug, Clone, PartialEq, Eq)]
struct CommandCheck(&'static str);

impl TxCheck for CommandCheck {
    fn matches(&self, tx: &dyn ProtoTx, _dir: Direction, _now_secs: i64) -> bool {
        tx.as_any().downcast_ref::<FtpDataTx>().is_some_and(|t| t.channel.command == self.0)
    }
}

const CHECKS: &[CheckDef] = &[CheckDef {
    name: "ftpdata_command",
    side: None,
    need: Progress::Headers,
    both_ways: false,
    compile: |v| {
        let word = match v {
            RuleValue::Text(t) => t.trim().to_ascii_uppercase(),
            _ => String::new(),
        };
        match ["RETR", "STOR", "APPE", "STOU", "LIST", "NLST", "MLSD"].into_iter().find(|c| *c == word) {
            Some(c) => Ok(Box::new(CommandCheck(c))),
            None => Err("expects a data channel command (retr, stor, ...)".into()),
        }
    },
}];

/// The download the sample carries.
fn sample_channel() -> Expected {
    std::sync::Arc::new(DataChannel { command: "RETR", file_name: Some(b"passwd".to_vec()), file_dir: Direction::ToClient })
}

/// A download's bytes, server to client over a passive channel.
fn sample() -> Vec<(Direction, Vec<u8>)> {
    vec![(Direction::ToClient, b"root:x:0:0:root:/root:/bin/sh\n".to_vec())]
}

pub static PROTO: ProtoDef = ProtoDef {
    name: "ftp-data",
    eve_name: Some("ftp_data"),
    // Never probed: only an expectation names such a flow.
    detection: Detection {
        tcp: true,
        udp: false,
        ports: &[],
        ports_only: true,
        probe: |_, _, _| Probe::NoMatch,
        counters_by_transport: false,
        answers_first: None,
    },
    new_parser,
    buffers: &[],
    checks: CHECKS,
    events: &[],
    event: crate::proto::no_other_events,
    options: &[],
    settings: &[],
    sample,
    sample_expected: Some(sample_channel),
    files: true,
    transactions: true,
    aliases: &[],
    includes: &[],
    borrows: &[],
    base_need: crate::proto::HEADERS_BOTH,
    hooks: crate::proto::Hooks::GENERIC,
    off_by_default: false,
    stream_depth: None,
    frames: &[],
};
