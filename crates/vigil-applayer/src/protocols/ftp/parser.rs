//! The FTP control channel of one flow: command lines from the client,
//! reply lines from the server (RFC 959 4.2: a reply is one line, or the
//! lines from `ddd-` to `ddd `), paired in order.
//!
//! A command Suricata knows opens a transaction; each whole reply goes to
//! the oldest transaction still waiting for its final reply, or, when none
//! waits, to a transaction of its own (a banner). A preliminary reply (1xx)
//! leaves the transaction waiting. Lines are bounded by `max-line-length`
//! (the rest of a longer one is dropped and the transaction says so), the
//! lines of one reply by [`MAX_REPLY_LINES`], the transactions held by
//! `max-tx`. Since replies are told apart by their lines, not by the
//! segments they came in, the same stream cut differently gives the same
//! transactions; Suricata pairs by segment, so a multi-line reply that
//! spans segments is one record here and several there.

use std::net::IpAddr;
use std::sync::Arc;

use vigil_types::{Direction, PerDir};

use super::command::{self, Transfer};
use super::tx::{FtpTx, ReplyLine};
use super::DataChannel;
use crate::codecs::lines::Lines;
use crate::parser::{AppEvent, ParseResult};
use crate::proto::{Expectation, ProtoParser, TxQueue};

/// Lines kept of one reply; later ones are dropped and the transaction's
/// `reply_truncated` says so.
pub const MAX_REPLY_LINES: usize = 512;

/// A reply whose last line has not come yet.
#[derive(Debug, Default)]
struct Reply {
    /// The code of a multi-line reply (`ddd-` opened it).
    multi: Option<[u8; 3]>,
    lines: Vec<ReplyLine>,
    truncated: bool,
    /// A line of it was longer than `max-line-length`.
    too_long: bool,
}

/// The code a reply line starts with, and the byte after it.
fn code_of(line: &[u8]) -> Option<([u8; 3], Option<u8>)> {
    let code: [u8; 3] = line.get(..3)?.try_into().ok()?;
    code.iter().all(u8::is_ascii_digit).then(|| (code, line.get(3).copied()))
}

/// The FTP parser of one flow.
#[derive(Debug)]
pub struct FtpParser {
    txs: TxQueue<FtpTx>,
    max_line: usize,
    lines: PerDir<Lines>,
    /// The first `max_line` bytes of a longer line whose end is still to come.
    long: PerDir<Option<Vec<u8>>>,
    reply: Option<Reply>,
    /// The data port last set up, and whether the server is to connect (PORT/EPRT).
    port: Option<(u16, bool)>,
    /// The client's address, against which PORT's is checked (`ftpbounce`).
    client: Option<IpAddr>,
    events: Vec<AppEvent>,
    expectations: Vec<Expectation>,
}

impl FtpParser {
    pub fn new(first_tx_id: u64, max_line: usize, max_tx: usize, client: Option<IpAddr>) -> Self {
        FtpParser {
            txs: TxQueue::new(first_tx_id, max_tx),
            max_line: max_line.max(1),
            lines: PerDir::default(),
            long: PerDir::default(),
            reply: None,
            port: None,
            client,
            events: Vec::new(),
            expectations: Vec::new(),
        }
    }

    /// The transactions held, oldest first.
    pub fn txs(&self) -> impl Iterator<Item = &FtpTx> {
        self.txs.iter()
    }

    fn event(&mut self, name: &'static str, tx: Option<usize>) {
        let at = super::EVENTS.iter().position(|e| name.strip_prefix("ftp.") == Some(*e));
        let tx_id = tx.and_then(|i| self.txs.get_mut(i)).map(|t| {
            if let Some(bit) = at {
                t.events |= 1 << bit;
            }
            t.id
        });
        self.events.push(AppEvent { name, tx_id });
    }

    /// Holds `tx` (its id given here); its place.
    fn open(&mut self, tx: FtpTx) -> usize {
        self.txs.push_with(|id| FtpTx { id, ..tx })
    }

    fn command(&mut self, line: &[u8], cut: bool) {
        let Some(cmd) = command::parse(line) else {
            if cut {
                self.event("ftp.request_command_too_long", None);
            }
            return;
        };
        let tx = FtpTx {
            command: Some(cmd.name),
            transfer: Some(cmd.transfer),
            command_data: cmd.data.to_vec(),
            command_truncated: cut,
            ..FtpTx::default()
        };
        let (name, data, transfer) = (cmd.name, cmd.data.to_vec(), cmd.transfer);
        let at = self.open(tx);
        if cut {
            self.event("ftp.request_command_too_long", Some(at));
        }
        match transfer {
            Transfer::Active => {
                let named = match name {
                    "PORT" => command::port_command(&data),
                    _ => command::eprt_command(&data),
                };
                if let Some((addr, port)) = named {
                    let client = self.client;
                    let tx = &mut self.txs[at];
                    tx.dynamic_port = Some(port);
                    tx.check_bounce(addr, client);
                    self.port = Some((port, true));
                }
            }
            Transfer::Passive | Transfer::None => {}
            Transfer::Download | Transfer::Upload | Transfer::Listing => {
                let named = transfer == Transfer::Listing || !data.is_empty();
                if !named && name != "STOU" {
                    self.event("ftp.file_without_name", Some(at));
                } else if let Some((port, active)) = self.port {
                    let upload = transfer == Transfer::Upload;
                    // The file goes from the server to the client for a download,
                    // which is from the flow's opener to its answerer in active mode.
                    let file_dir = match (upload, active) {
                        (false, false) | (true, true) => Direction::ToClient,
                        (false, true) | (true, false) => Direction::ToServer,
                    };
                    let channel = DataChannel {
                        command: name,
                        // A STOU names no file: the server picks one, which Suricata calls `<stou>`.
                        file_name: match (transfer, data.is_empty()) {
                            (Transfer::Listing, _) => None,
                            (_, true) => Some(b"<stou>".to_vec()),
                            (_, false) => Some(data),
                        },
                        file_dir,
                    };
                    self.expectations.push(Expectation {
                        from: if active { Direction::ToClient } else { Direction::ToServer },
                        port,
                        proto: &super::DATA,
                        data: Arc::new(channel),
                    });
                } else {
                    self.event("ftp.file_before_port", Some(at));
                }
            }
        }
    }

    fn reply_line(&mut self, line: &[u8], cut: bool) {
        let code = code_of(line);
        let mut reply = self.reply.take().unwrap_or_default();
        let last = match (reply.multi, code) {
            (None, Some((c, Some(b'-')))) if reply.lines.is_empty() => {
                reply.multi = Some(c);
                false
            }
            (Some(open), Some((c, sep))) => c == open && sep != Some(b'-'),
            (Some(_), None) => false,
            (None, _) => true,
        };
        let entry = match code {
            Some((c, Some(b' '))) => ReplyLine { code: Some(c), text: line[4..].to_vec() },
            _ => ReplyLine { code: None, text: line.to_vec() },
        };
        if reply.lines.len() < MAX_REPLY_LINES {
            reply.lines.push(entry);
        } else {
            reply.truncated = true;
        }
        reply.truncated |= cut;
        reply.too_long |= cut;
        if last {
            let preliminary = code.is_some_and(|(c, _)| c[0] == b'1');
            self.attach(reply, preliminary, code.map(|(c, _)| c));
        } else {
            self.reply = Some(reply);
        }
    }

    /// Gives a whole reply to the oldest transaction waiting for one.
    fn attach(&mut self, reply: Reply, preliminary: bool, code: Option<[u8; 3]>) {
        let waiting = self.txs.iter().position(|t| t.command.is_some() && !t.reply_received && !t.closed);
        let at = match waiting {
            Some(i) => i,
            None => self.open(FtpTx::default()),
        };
        let tx = &mut self.txs[at];
        if reply.truncated {
            tx.reply_truncated = true;
        }
        tx.replies.extend(reply.lines);
        if preliminary {
            tx.preliminary = true;
        } else {
            tx.reply_received = true;
        }
        if tx.transfer == Some(Transfer::Passive) {
            let text = &tx.replies.last().map(|r| r.text.clone()).unwrap_or_default();
            let port = match code.as_ref().map(|c| &c[..]) {
                Some(b"227") => command::pasv_reply(text),
                Some(b"229") => command::epsv_reply(text),
                _ => None,
            };
            if let Some(p) = port {
                tx.dynamic_port = Some(p);
                self.port = Some((p, false));
            }
        }
        if reply.too_long {
            self.event("ftp.response_command_too_long", Some(at));
        }
    }
}

impl ProtoParser for FtpParser {
    fn parse(&mut self, dir: Direction, mut data: &[u8]) -> ParseResult {
        let max = self.max_line;
        let mut lines = std::mem::take(self.lines.get_mut(dir));
        while let Some((line, whole)) = lines.next(&mut data, max) {
            let long = self.long.get_mut(dir);
            if !whole {
                // The rest of a line past the limit is dropped.
                long.get_or_insert_with(|| line.to_vec());
                continue;
            }
            let kept = long.take();
            let (line, cut) = match &kept {
                Some(first) => (&first[..], true),
                None if line.len() > max => (&line[..max], true),
                None => (line, false),
            };
            match dir {
                Direction::ToServer => self.command(line, cut),
                Direction::ToClient => self.reply_line(line, cut),
            }
        }
        *self.lines.get_mut(dir) = lines;
        ParseResult::Done
    }

    fn on_gap(&mut self, dir: Direction, _len: u64) -> bool {
        self.lines.get_mut(dir).clear();
        *self.long.get_mut(dir) = None;
        if dir == Direction::ToClient {
            self.reply = None;
        }
        true
    }

    fn close(&mut self, dir: Direction, _held: &[u8]) {
        if dir == Direction::ToClient {
            if let Some(reply) = self.reply.take() {
                self.attach(reply, false, None);
            }
            for tx in self.txs.iter_mut().filter(|t| !t.reply_received) {
                tx.closed = true;
            }
        }
    }

    crate::proto::delegate_txs!(txs);

    fn prune(&mut self, id: u64) {
        self.txs.prune_while(id, |_| true);
    }

    fn drain_events(&mut self, out: &mut Vec<AppEvent>) {
        out.append(&mut self.events);
    }

    fn take_expectations(&mut self, out: &mut Vec<Expectation>) {
        out.append(&mut self.expectations);
    }
}
