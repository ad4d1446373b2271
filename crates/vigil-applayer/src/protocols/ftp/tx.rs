//! One FTP transaction: a command and the replies it got, or replies that
//! came with no command waiting (a banner, an unsolicited 421).

use std::any::Any;
use std::net::IpAddr;

use serde_json::{Map, Value};
use vigil_types::Direction;

use super::command::Transfer;
use super::Buffer;
use crate::progress::Progress;
use crate::proto::eve_text as text;
use crate::proto::ProtoTx;

/// One line of a reply: its completion code when the line carries one
/// (`226 Transfer complete.`), and its text, the code and its separator
/// off (the whole line when it carries no code).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplyLine {
    pub code: Option<[u8; 3]>,
    pub text: Vec<u8>,
}

#[derive(Debug, Clone, Default)]
pub struct FtpTx {
    pub(super) id: u64,
    /// The canonical command name; `None` for replies no command waited for.
    pub command: Option<&'static str>,
    pub(super) transfer: Option<Transfer>,
    pub command_data: Vec<u8>,
    pub command_truncated: bool,
    pub replies: Vec<ReplyLine>,
    pub reply_truncated: bool,
    /// A final (not 1xx) reply came.
    pub reply_received: bool,
    /// A preliminary (1xx) reply came; the final one is still to come.
    pub(super) preliminary: bool,
    /// The server's side ended before a final reply: nothing more will come.
    pub(super) closed: bool,
    /// The data port this command set up (PORT, EPRT, or the reply to PASV, EPSV).
    pub dynamic_port: Option<u16>,
    /// PORT or EPRT named an address other than the client's: an FTP bounce.
    pub bounce: bool,
    pub(super) events: u64,
}

impl FtpTx {
    /// `active` or `passive`, for the commands that set up a data channel:
    /// active only once PORT or EPRT gave a port.
    pub fn mode(&self) -> Option<&'static str> {
        match self.transfer? {
            Transfer::Active if self.dynamic_port.is_some() => Some("active"),
            Transfer::Active | Transfer::Passive => Some("passive"),
            _ => None,
        }
    }

    pub(super) fn check_bounce(&mut self, named: IpAddr, client: Option<IpAddr>) {
        self.bounce = client.is_some_and(|c| c != named);
    }

    fn codes(&self) -> impl Iterator<Item = &[u8]> {
        self.replies.iter().filter_map(|r| r.code.as_ref().map(|c| &c[..]))
    }
}

impl ProtoTx for FtpTx {
    fn id(&self) -> u64 {
        self.id
    }

    fn events(&self) -> u64 {
        self.events
    }

    fn progress(&self, dir: Direction) -> Progress {
        match dir {
            Direction::ToServer => Progress::Complete,
            Direction::ToClient if self.reply_received || self.closed => Progress::Complete,
            Direction::ToClient if self.preliminary => Progress::Headers,
            Direction::ToClient => Progress::None,
        }
    }

    fn buffer(&self, dir: Direction, id: u8, index: usize) -> Option<&[u8]> {
        match (Buffer::from_id(id)?, dir) {
            (Buffer::Command, Direction::ToServer) => self.command.filter(|_| index == 0).map(str::as_bytes),
            (Buffer::CommandData, Direction::ToServer) => {
                Some(&self.command_data[..]).filter(|d| index == 0 && self.command.is_some() && !d.is_empty())
            }
            (Buffer::Reply, Direction::ToClient) => self.replies.get(index).map(|r| &r.text[..]),
            (Buffer::CompletionCode, Direction::ToClient) => self.codes().nth(index),
            _ => None,
        }
    }

    fn eve(&self) -> Value {
        let mut m = Map::new();
        if let Some(c) = self.command {
            m.insert("command".into(), c.into());
            if !self.command_data.is_empty() {
                m.insert("command_data".into(), text(&self.command_data));
                m.insert("command_truncated".into(), self.command_truncated.into());
            }
        }
        let codes: Vec<Value> = self.codes().map(text).collect();
        if !codes.is_empty() {
            m.insert("completion_code".into(), Value::Array(codes));
        }
        if !self.replies.is_empty() {
            m.insert("reply".into(), self.replies.iter().map(|r| text(&r.text)).collect());
        }
        if let Some(p) = self.dynamic_port {
            m.insert("dynamic_port".into(), p.into());
        }
        if let Some(mode) = self.mode() {
            m.insert("mode".into(), mode.into());
        }
        m.insert("reply_received".into(), if self.reply_received { "yes" } else { "no" }.into());
        m.insert("reply_truncated".into(), self.reply_truncated.into());
        Value::Object(m)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
