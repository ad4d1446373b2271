//! The SMTP session of one flow (RFC 5321): commands from the client,
//! replies from the server (multi-line ones by their codes), paired in
//! order as pipelining (RFC 2920) allows; a message after DATA up to its
//! lone dot (dot-stuffing undone) or in BDAT chunks (RFC 3030), read by the
//! MIME reader ([`crate::codecs::mime`]) into the transaction's header
//! fields, URLs and attachments (files). STARTTLS accepted hands the flow
//! over to detection again (TLS), as Suricata does.
//!
//! A mail is a transaction from its first command to the end of its data,
//! or to RSET, QUIT or a new HELO/EHLO; the HELO name is the session's and
//! every transaction carries it. The client's data is read as soon as it
//! sends DATA (pipelining may put the message ahead of the 354 in the
//! stream); a DATA refused goes back to reading commands.


use std::collections::VecDeque;

use vigil_types::Direction;

use super::tx::SmtpTx;
use crate::codecs::lines::Lines;
use crate::codecs::mime::{Event, Mime, MimeConfig};
use crate::files::{File, FileConfig};
use crate::parser::{AppEvent, ParseResult};
use crate::proto::{ProtoParser, TxQueue};

/// A command line's limit, as Suricata's (RFC 5321 says 512 with CR LF,
/// which clients exceed); the rest of a longer one is dropped.
pub const MAX_COMMAND_LINE: usize = 4096;
/// A reply line's limit, likewise.
pub const MAX_REPLY_LINE: usize = 4096;
/// Pieces a message line is read in past this length.
const MAX_DATA_PIECE: usize = 64 * 1024;
/// Recipients kept per mail.
const MAX_RCPT: usize = 1024;
/// Commands waiting for their replies; more are not matched.
const MAX_PENDING: usize = 256;
/// The first bytes of each attachment kept for `file.data`.
const FILE_WINDOW: usize = 100_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Command {
    Helo,
    Mail,
    Rcpt,
    Data,
    Bdat,
    /// `BDAT n LAST`: its answer is the message's.
    BdatLast,
    Rset,
    Quit,
    StartTls,
    /// The end of a message (its lone dot, a last BDAT chunk): the server answers it.
    DataEnd,
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Commands,
    /// After DATA: message lines up to the lone dot.
    Data,
    /// Inside a BDAT chunk: its bytes left, and whether it is the last.
    Bdat { left: u64, last: bool },
}

/// The SMTP parser of one flow.
#[derive(Debug)]
pub struct SmtpParser {
    txs: TxQueue<SmtpTx>,
    helo: Option<Vec<u8>>,
    mode: Mode,
    commands: Lines,
    /// The lines of BDAT chunks (a chunk may end inside one).
    message: Lines,
    replies: Lines,
    /// The code of a multi-line reply under way.
    reply_code: Option<[u8; 3]>,
    pending: VecDeque<Command>,
    /// The server's greeting came (the first reply answers no command).
    greeted: bool,
    /// The rest of an over-long command or reply line is being dropped.
    skipping: [bool; 2],
    /// STARTTLS was accepted: what follows is not SMTP.
    tunnel: bool,
    /// A transaction was opened in this session.
    opened: bool,
    /// The message under way was checked for coming before the 354.
    data_early_checked: bool,
    /// Each side ended (client, server).
    closed: [bool; 2],
    /// How messages are read; `None`: not read (`decode-mime: no`).
    mime: Option<MimeConfig>,
    files: FileConfig,
    events: Vec<AppEvent>,
    pub(crate) frames: crate::frames::FrameLog,
    /// Where each side's line under way began in its stream, and its
    /// `command_line` or `response_line` frame (none for message lines).
    line: [Option<(u64, u32)>; 2],
    /// The message's `data` frame and where it began.
    data_frame: Option<(u64, u32)>,
    /// Bytes each side was offered.
    offered: [u64; 2],
    /// Each message as sent is a file of its mail, `rawmsg`
    /// (`raw-extraction`, with MIME reading off).
    pub raw_extraction: bool,
}

/// SMTP's frame types, by their place in [`super::PROTO`]'s.
const COMMAND_LINE: u8 = 0;
const DATA: u8 = 1;
const RESPONSE_LINE: u8 = 2;

fn command_of(line: &[u8]) -> (Command, &[u8]) {
    let word_end = line.iter().position(|&c| c == b' ').unwrap_or(line.len());
    let word = line[..word_end].to_ascii_uppercase();
    let rest = line[word_end..].trim_ascii();
    // The path after `FROM:` or `TO:`, its parameters (`SIZE=...`) off.
    let after = |prefix: &[u8]| -> &[u8] {
        let upper = rest.to_ascii_uppercase();
        let path = if upper.starts_with(prefix) { rest[prefix.len()..].trim_ascii() } else { rest };
        &path[..path.iter().position(u8::is_ascii_whitespace).unwrap_or(path.len())]
    };
    // The HELO name runs from the first character that is no space to the
    // next space, whatever else it holds (the CR a cut line kept
    // included), as Suricata reads it.
    let name = {
        let from = &line[word_end..];
        let from = &from[from.iter().position(|&c| c != b' ').unwrap_or(from.len())..];
        &from[..from.iter().position(|&c| c == b' ').unwrap_or(from.len())]
    };
    match &word[..] {
        b"HELO" | b"EHLO" => (Command::Helo, name),
        b"MAIL" => (Command::Mail, after(b"FROM:")),
        b"RCPT" => (Command::Rcpt, after(b"TO:")),
        b"DATA" => (Command::Data, rest),
        b"BDAT" if rest.split(|&c| c == b' ').any(|w| w.eq_ignore_ascii_case(b"LAST")) => (Command::BdatLast, rest),
        b"BDAT" => (Command::Bdat, rest),
        b"RSET" => (Command::Rset, rest),
        b"QUIT" => (Command::Quit, rest),
        b"STARTTLS" => (Command::StartTls, rest),
        // `MAIL FROM:<x>` with no space before the colon's word is still MAIL.
        w if w.starts_with(b"MAIL") => (Command::Mail, after(b"FROM:")),
        _ => (Command::Other, rest),
    }
}

impl SmtpParser {
    pub fn new(first_tx_id: u64, max_tx: usize, mime: Option<MimeConfig>, files: FileConfig) -> Self {
        SmtpParser {
            txs: TxQueue::new(first_tx_id, max_tx),
            helo: None,
            mode: Mode::Commands,
            commands: Lines::default(),
            message: Lines::default(),
            replies: Lines::default(),
            reply_code: None,
            pending: VecDeque::new(),
            greeted: false,
            skipping: [false, false],
            tunnel: false,
            opened: false,
            data_early_checked: false,
            closed: [false, false],
            mime,
            files: FileConfig { unstored_depth: 0, ..files },
            events: Vec::new(),
            frames: crate::frames::FrameLog::default(),
            line: [None; 2],
            data_frame: None,
            offered: [0; 2],
            raw_extraction: false,
        }
    }

    /// The transactions held, oldest first.
    pub fn txs(&self) -> impl Iterator<Item = &SmtpTx> {
        self.txs.iter()
    }

    fn event(&mut self, name: &'static str) {
        let bit = super::EVENTS.iter().position(|e| name.strip_prefix("smtp.") == Some(*e));
        let tx = self.txs.back_mut().filter(|t| !t.done || name.starts_with("smtp.mime"));
        let tx_id = tx.map(|t| {
            if let Some(b) = bit {
                t.events |= 1 << b;
            }
            t.id
        });
        self.events.push(AppEvent { name, tx_id });
    }

    /// The mail under way, opened when none is.
    fn current(&mut self) -> &mut SmtpTx {
        if self.txs.back().is_none_or(|t| t.done || t.ended) {
            self.opened = true;
            let helo = self.helo.clone();
            self.txs.push_with(|id| SmtpTx { id, helo, ..SmtpTx::default() });
        }
        self.txs.back_mut().expect("a transaction was just opened")
    }

    /// The mail under way ends.
    fn finish(&mut self) {
        self.end_message();
        if let Some(t) = self.txs.back_mut().filter(|t| !t.done) {
            t.done = true;
        }
    }

    /// The message of the mail under way ended (its lone dot, its last
    /// BDAT chunk): the mail is done once the server answers.
    fn end_message(&mut self) {
        if let Some(t) = self.txs.back_mut().filter(|t| !t.done && !t.ended) {
            if let Some(m) = t.mime.as_deref_mut() {
                let files = &mut t.files;
                let cfg = self.files;
                m.end(&mut |e| file_event(files, &cfg, e));
            }
            for f in t.files.iter_mut().filter(|f| f.is_open()) {
                f.close();
            }
            t.ended = true;
        }
    }

    /// The server answered the end of a message: that mail is done.
    fn answered_message(&mut self) {
        if let Some(t) = self.txs.iter_mut().find(|t| t.ended && !t.done) {
            t.done = true;
        }
    }

    fn expect_reply(&mut self, cmd: Command) {
        if self.pending.len() < MAX_PENDING {
            self.pending.push_back(cmd);
        }
    }

    fn command(&mut self, line: &[u8]) {
        let (cmd, arg) = command_of(line);
        self.expect_reply(cmd);
        match cmd {
            Command::Helo => {
                if self.helo.is_some() {
                    self.event("smtp.duplicate_fields");
                }
                // A new greeting resets a mail under way (RFC 5321 4.1.4).
                if self
                    .txs
                    .back()
                    .is_some_and(|t| !t.done && !t.ended && (t.mail_from.is_some() || !t.rcpt_to.is_empty() || t.data))
                {
                    self.finish();
                }
                // The name is the session's: Suricata logs it with every
                // transaction not yet logged, those before it included.
                self.helo = Some(arg.to_vec());
                self.current();
                for t in self.txs.iter_mut().filter(|t| t.helo.is_none() || !t.done) {
                    t.helo = Some(arg.to_vec());
                }
            }
            Command::Mail => {
                let tx = self.current();
                // The envelope starts: Suricata 8.0.7's firewall looks at
                // the mail's request side again here, not at each recipient.
                tx.envelopes += 1;
                if tx.mail_from.is_some() {
                    // A second MAIL FROM in one mail: the first one stays.
                    self.event("smtp.duplicate_fields");
                } else {
                    tx.mail_from = Some(arg.to_vec());
                }
            }
            Command::Rcpt => {
                let tx = self.current();
                if tx.rcpt_to.len() < MAX_RCPT {
                    tx.rcpt_to.push(arg.to_vec());
                }
            }
            Command::Data => {
                self.start_message();
                self.mode = Mode::Data;
                self.data_early_checked = false;
            }
            Command::Bdat | Command::BdatLast => {
                let mut words = arg.split(|&c| c == b' ').filter(|w| !w.is_empty());
                let size = words.next().and_then(|w| std::str::from_utf8(w).ok()?.parse::<u64>().ok());
                let tail = words.next();
                let last = tail.is_some_and(|w| w.eq_ignore_ascii_case(b"LAST"));
                // RFC 3030: `BDAT size [LAST]`; anything else sends no chunk.
                let (Some(left), true) = (size, (tail.is_none() || last) && words.next().is_none()) else {
                    self.event("smtp.invalid_bdat");
                    return;
                };
                if self.current().mime.is_none() {
                    self.start_message();
                }
                // No 354 comes: the server's side is in its data at once.
                self.current().go_ahead = true;
                if left == 0 {
                    if last {
                        self.end_message();
                    }
                } else {
                    self.mode = Mode::Bdat { left, last };
                }
            }
            // After a finished mail these open none (Suricata's rule). RSET
            // ends the mail once the server answers it: what a pipelining
            // client sends before that is still of this mail.
            Command::Rset => {
                if !self.opened {
                    self.current();
                }
                if let Some(t) = self.txs.back_mut().filter(|t| !t.done && !t.ended) {
                    t.reset = true;
                }
            }
            // The session ends: its mail is done once the server answers.
            Command::Quit => {
                if !self.opened || self.txs.back().is_some_and(|t| !t.done && !t.ended) {
                    self.current();
                    self.end_message();
                }
            }
            Command::DataEnd => {}
            Command::StartTls | Command::Other => {
                self.current();
            }
        }
    }

    fn start_message(&mut self) {
        let cfg = self.mime.clone();
        let tx = self.current();
        tx.data = true;
        tx.body_md5 = cfg.as_ref().filter(|c| c.body_md5).map(|_| md5::Md5::default());
        tx.mime = cfg.map(|c| Box::new(Mime::new(c)));
        if self.raw_extraction {
            let files = self.files;
            let tx = self.current();
            tx.files.push(File::open(b"rawmsg".to_vec(), 0, &files));
        }
    }

    /// A line of the message as sent (dot-stuffing and all), with `end`,
    /// its line end, when `whole`: into the body's MD5 once the message's
    /// header block was read, as Suricata takes it.
    fn hash_body(&mut self, line: &[u8], whole: bool, end: &[u8]) {
        use md5::Digest;
        let cfg = self.files;
        let raw = self.raw_extraction;
        let Some(t) = self.txs.back_mut().filter(|t| !t.done && !t.ended) else { return };
        if raw {
            file_event(&mut t.files, &cfg, Event::FileData(line));
            if whole {
                file_event(&mut t.files, &cfg, Event::FileData(end));
            }
        }
        if let (Some(h), true) = (t.body_md5.as_mut(), t.mime.as_deref().is_some_and(Mime::headers_done)) {
            h.update(line);
            if whole {
                h.update(end);
            }
        }
    }

    /// A line (or a piece of a longer one, `whole` false) of the message.
    fn message_line(&mut self, line: &[u8], whole: bool) {
        let Some(tx) = self.txs.back_mut().filter(|t| !t.done && !t.ended) else { return };
        let Some(mime) = tx.mime.as_deref_mut() else { return };
        let files = &mut tx.files;
        let cfg = self.files;
        let mut anomalies = Vec::new();
        mime.line(line, whole, &mut |e| match e {
            Event::Anomaly(a) => anomalies.push(a),
            other => file_event(files, &cfg, other),
        });
        for a in anomalies {
            self.event(mime_event(a));
        }
    }

    fn reply(&mut self, code: Option<[u8; 3]>) {
        if !self.greeted {
            self.greeted = true;
            return;
        }
        let Some(cmd) = self.pending.pop_front() else {
            self.event("smtp.unable_to_match_reply_with_request");
            return;
        };
        let ok = |c: &[u8]| code.is_some_and(|have| &have[..] == c);
        // The reply reaches the oldest mail not done (the answer to a
        // message, the mail that message ended).
        let answered = if matches!(cmd, Command::DataEnd | Command::BdatLast) {
            self.txs.iter_mut().find(|t| t.ended && !t.done)
        } else {
            self.txs.iter_mut().find(|t| !t.done)
        };
        if let Some(t) = answered.filter(|_| cmd == Command::Data && ok(b"354")) {
            t.go_ahead = true;
        }
        match cmd {
            Command::Data if !ok(b"354") => {
                self.event("smtp.data_command_rejected");
                // The client sends no message: its next lines are commands.
                if self.mode == Mode::Data {
                    self.mode = Mode::Commands;
                }
            }
            Command::DataEnd | Command::BdatLast => self.answered_message(),
            Command::Rset => {
                let cfg = self.files;
                if let Some(t) = self.txs.iter_mut().find(|t| t.reset && !t.done) {
                    if let Some(m) = t.mime.as_deref_mut() {
                        let files = &mut t.files;
                        m.end(&mut |e| file_event(files, &cfg, e));
                    }
                    for f in t.files.iter_mut().filter(|f| f.is_open()) {
                        f.close();
                    }
                    t.done = true;
                }
            }
            Command::Quit if ok(b"221") => self.answered_message(),
            Command::StartTls if ok(b"220") => self.tunnel = true,
            Command::StartTls => self.event("smtp.tls_rejected"),
            _ => {}
        }
    }

    fn reply_line(&mut self, line: &[u8]) {
        let code: Option<[u8; 3]> = line.get(..3).and_then(|c| c.try_into().ok()).filter(|c: &[u8; 3]| c.iter().all(u8::is_ascii_digit));
        let Some(c) = code else {
            self.event("smtp.invalid_reply");
            self.reply_code = None;
            return self.reply(None);
        };
        match (line.get(3), self.reply_code) {
            (Some(b'-'), _) => self.reply_code = Some(c),
            _ => {
                self.reply_code = None;
                self.reply(Some(c));
            }
        }
    }

    /// A line of side `i` may start at `rest` (the data left of a call
    /// whose first byte was at `base`): its frame is marked there.
    fn line_starts(&mut self, i: usize, base: u64, total: usize, rest: &[u8]) {
        if !self.frames.is_on() || rest.is_empty() || self.line[i].is_some() {
            return;
        }
        let at = total - rest.len();
        let pos = base + at as u64;
        let dir = if i == 0 { Direction::ToServer } else { Direction::ToClient };
        let handle = match (i, self.mode) {
            (0, Mode::Data) => {
                if self.data_frame.is_none() {
                    self.data_frame = Some((pos, self.frames.add(dir, at, None, DATA, None)));
                }
                0
            }
            (0, _) => self.frames.add(dir, at, None, COMMAND_LINE, None),
            _ => self.frames.add(dir, at, None, RESPONSE_LINE, None),
        };
        self.line[i] = Some((pos, handle));
    }

    /// The line of side `i` under way ended at stream offset `end` (`whole`:
    /// it was no piece of a longer one): its frame has its length and the
    /// transaction it went to. `dot`: the lone dot that ends a message,
    /// which ends the `data` frame before it.
    fn line_ends(&mut self, i: usize, end: u64, whole: bool, dot: bool) {
        if !self.frames.is_on() || !whole {
            return;
        }
        let Some((start, handle)) = self.line[i].take() else { return };
        let dir = if i == 0 { Direction::ToServer } else { Direction::ToClient };
        let tx = self.txs.back().map(|t| t.id);
        if handle != 0 {
            self.frames.set_len(dir, handle, end - start);
            if let Some(t) = tx {
                self.frames.set_tx(dir, handle, t);
            }
        }
        if dot {
            if let Some((from, data)) = self.data_frame.take() {
                self.frames.set_len(dir, data, start - from);
                if let Some(t) = tx {
                    self.frames.set_tx(dir, data, t);
                }
            }
        }
    }

    fn parse_commands(&mut self, mut data: &[u8]) -> usize {
        let total = data.len();
        let base = self.offered[0];
        self.offered[0] += total as u64;
        let mut lines = std::mem::take(&mut self.commands);
        loop {
            if let Mode::Bdat { left, last } = self.mode {
                let take = (left as usize).min(data.len());
                if take == 0 {
                    break;
                }
                let (chunk, rest) = data.split_at(take);
                data = rest;
                self.bdat_bytes(chunk);
                let left = left - take as u64;
                self.mode = if left == 0 { Mode::Commands } else { Mode::Bdat { left, last } };
                if left == 0 && last {
                    self.bdat_flush();
                    self.end_message();
                }
                continue;
            }
            self.line_starts(0, base, total, data);
            let data_mode = self.mode == Mode::Data;
            let max = if data_mode { MAX_DATA_PIECE } else { MAX_COMMAND_LINE };
            let Some((line, whole, ending)) = lines.next_ended(&mut data, max) else { break };
            let end = base + (total - data.len()) as u64;
            let dot = data_mode && !self.skipping[0] && whole && line == b".";
            if data_mode {
                self.line_ends(0, end, whole, dot);
            }
            if data_mode {
                let first_piece = !self.skipping[0];
                self.skipping[0] = !whole;
                // A client that sends its message before the server's 354
                // broke RFC 2920's rule that DATA ends a pipelined group.
                if !self.data_early_checked && self.pending.contains(&Command::Data) {
                    self.data_early_checked = true;
                    self.event("smtp.invalid_pipelined_sequence");
                }
                if first_piece && whole && line == b"." {
                    self.end_message();
                    self.mode = Mode::Commands;
                    self.expect_reply(Command::DataEnd);
                    continue;
                }
                self.hash_body(line, whole, ending);
                // Dot-stuffing undone.
                let line = if first_piece && line.first() == Some(&b'.') { &line[1..] } else { line };
                self.message_line(line, whole);
                continue;
            }
            if self.skipping[0] {
                self.skipping[0] = !whole;
                continue;
            }
            if !whole {
                self.skipping[0] = true;
                self.event("smtp.truncated_line");
            }
            // Suricata's limit counts the line's end: a line whose CR LF
            // does not fit is cut, its CR kept if that fits.
            if whole && line.len() + ending.len() > MAX_COMMAND_LINE {
                self.event("smtp.truncated_line");
                let mut cut = line.to_vec();
                if ending.len() == 2 {
                    cut.push(b'\r');
                }
                cut.truncate(MAX_COMMAND_LINE);
                self.command(&cut);
            } else {
                self.command(line);
            }
            self.line_ends(0, end, whole, false);
        }
        self.commands = lines;
        total - data.len()
    }

    /// BDAT chunk bytes, read as message lines (a chunk may end inside a line).
    fn bdat_bytes(&mut self, mut chunk: &[u8]) {
        let mut lines = std::mem::take(&mut self.message);
        while let Some((line, whole, ending)) = lines.next_ended(&mut chunk, MAX_DATA_PIECE) {
            self.hash_body(line, whole, ending);
            self.message_line(line, whole);
        }
        self.message = lines;
    }

    /// The last chunk ended: a last line without its line end is whole.
    fn bdat_flush(&mut self) {
        let mut end: &[u8] = b"\n";
        let mut lines = std::mem::take(&mut self.message);
        if let Some((line, _)) = lines.next(&mut end, MAX_DATA_PIECE) {
            if !line.is_empty() {
                // It had no line end.
                self.hash_body(line, false, b"");
                self.message_line(line, true);
            }
        }
    }

    fn parse_replies(&mut self, mut data: &[u8]) -> usize {
        let total = data.len();
        let base = self.offered[1];
        self.offered[1] += total as u64;
        let mut lines = std::mem::take(&mut self.replies);
        while !self.tunnel {
            self.line_starts(1, base, total, data);
            let Some((line, whole)) = lines.next(&mut data, MAX_REPLY_LINE) else { break };
            let end = base + (total - data.len()) as u64;
            if self.skipping[1] {
                self.skipping[1] = !whole;
                self.line_ends(1, end, whole, false);
                continue;
            }
            if !whole {
                self.skipping[1] = true;
                self.event("smtp.truncated_line");
            }
            self.reply_line(line);
            self.line_ends(1, end, whole, false);
        }
        self.replies = lines;
        total - data.len()
    }
}

/// A MIME reader's event for the transaction's files.
fn file_event(files: &mut Vec<File>, cfg: &FileConfig, e: Event<'_>) {
    match e {
        Event::FileOpen(name) => files.push(File::open(name.to_vec(), 0, cfg)),
        Event::FileData(d) => {
            if let Some(f) = files.last_mut().filter(|f| f.is_open()) {
                let room = FILE_WINDOW.saturating_sub(f.window.len());
                f.window.extend_from_slice(&d[..d.len().min(room)]);
                f.append(d, cfg);
            }
        }
        Event::FileClose => {
            if let Some(f) = files.last_mut().filter(|f| f.is_open()) {
                f.close();
            }
        }
        Event::HeadersDone | Event::Url(_) | Event::Text(_) | Event::Anomaly(_) => {}
    }
}

/// Suricata's SMTP event for a MIME anomaly.
fn mime_event(a: &str) -> &'static str {
    match a {
        "MIME_LONG_LINE" => "smtp.mime_long_line",
        "MIME_INVALID_BASE64" => "smtp.mime_invalid_base64",
        "MIME_INVALID_QP" => "smtp.mime_invalid_qp",
        "MIME_LONG_FILENAME" => "smtp.mime_long_filename",
        "MIME_LONG_ENC_LINE" => "smtp.mime_long_enc_line",
        "MIME_INVALID_HEADER" => "smtp.mime_parse_failed",
        "MIME_BOUNDARY_TOO_LONG" => "smtp.mime_long_boundary",
        _ => "smtp.mime_malformed_msg",
    }
}

impl ProtoParser for SmtpParser {
    fn parse(&mut self, dir: Direction, data: &[u8]) -> ParseResult {
        if self.tunnel {
            return ParseResult::Done;
        }
        let consumed = match dir {
            Direction::ToServer => self.parse_commands(data),
            Direction::ToClient => self.parse_replies(data),
        };
        if consumed < data.len() {
            // STARTTLS accepted: the rest belongs to what runs inside.
            ParseResult::Incomplete { consumed, needed: 1 }
        } else {
            ParseResult::Done
        }
    }

    fn on_gap(&mut self, dir: Direction, len: u64) -> bool {
        let i = usize::from(dir == Direction::ToClient);
        self.offered[i] += len;
        self.line[i] = None;
        if i == 0 {
            self.data_frame = None;
        }
        match dir {
            Direction::ToServer => {
                self.commands.clear();
                self.skipping[0] = false;
                if let Some(f) = self.txs.back_mut().and_then(|t| t.files.last_mut()) {
                    f.gap(len);
                }
            }
            Direction::ToClient => {
                self.replies.clear();
                self.skipping[1] = false;
            }
        }
        true
    }

    fn close(&mut self, dir: Direction, _held: &[u8]) {
        self.closed[usize::from(dir == Direction::ToClient)] = true;
        if dir == Direction::ToServer {
            // A message the client's end cut short: its last line is read
            // as far as it came, and its attachments stay unfinished (no
            // digests), as Suricata leaves them.
            if self.mode == Mode::Data && !self.skipping[0] {
                if let Some(rest) = self.commands.take_partial() {
                    self.hash_body(&rest, false, b"");
                    let rest = if rest.first() == Some(&b'.') { &rest[1..] } else { &rest[..] };
                    self.message_line(rest, true);
                }
            }
            if let Some(t) = self.txs.back_mut().filter(|t| !t.done && !t.ended) {
                for f in t.files.iter_mut() {
                    f.abandon();
                }
            }
            self.end_message();
        }
        // Both sides ended: every mail is as done as it will be.
        if self.closed == [true, true] || self.tunnel {
            self.finish();
            for t in self.txs.iter_mut() {
                t.done = true;
            }
        }
    }

    crate::proto::delegate_txs!(txs);

    fn take_frames(&mut self, out: &mut Vec<crate::frames::Mark>) -> u8 {
        self.frames.drain(out);
        self.frames.tx_base()
    }

    fn prune(&mut self, id: u64) {
        self.txs.prune_while(id, |t| t.done);
    }

    fn drain_events(&mut self, out: &mut Vec<AppEvent>) {
        out.append(&mut self.events);
    }

    fn tunnel(&self) -> bool {
        self.tunnel
    }

    fn store_files(&mut self, tx: Option<u64>, dirs: &[Direction], sid: u32) {
        if !dirs.is_empty() && !dirs.contains(&Direction::ToServer) {
            return;
        }
        for t in self.txs.iter_mut().filter(|t| tx.is_none_or(|id| t.id == id)) {
            for f in &mut t.files {
                f.mark_store(sid);
            }
        }
        if tx.is_none() {
            self.files.store_all = true;
        }
    }
}
