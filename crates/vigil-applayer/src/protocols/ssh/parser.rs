//! The SSH parser of one flow: per side, the version banner (RFC 4253 4.2),
//! then the binary packets of the clear-text key exchange (4.1) until
//! NEWKEYS. Only KEXINIT packets are held whole; every other packet is
//! skipped as it passes, so a side never holds more than one KEXINIT.

use md5::{Digest, Md5};
use vigil_types::{Direction, PerDir};

use super::tx::SshTx;
use crate::parser::{AppEvent, ParseResult};
use crate::proto::{ProtoParser, ProtoTx};

/// Longest banner kept (RFC 4253: 255 characters with CR LF); the rest of a
/// longer line is skipped, with the `long_banner` event.
const MAX_BANNER: usize = 255;
/// Lines a server may send before its banner (RFC 4253 4.2), kept bounded.
const MAX_PRE_BANNER_LINES: u32 = 32;
/// A clear-text packet's length beyond which the side is not SSH.
const MAX_PACKET: u32 = 256 * 1024;
/// A KEXINIT held whole is at most this long; longer ones are skipped, with
/// the `long_kex_record` event.
const MAX_KEXINIT: u32 = 64 * 1024;

const MSG_KEXINIT: u8 = 20;
const MSG_NEWKEYS: u8 = 21;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum State {
    /// Waiting for the version line.
    #[default]
    Banner,
    /// Skipping the rest of an over-long banner line.
    BannerTail,
    /// Binary packets of the key exchange.
    Packets,
    /// NEWKEYS was sent: the rest is encrypted.
    Encrypted,
    /// The side made no sense: its bytes are dropped.
    Broken,
}

#[derive(Debug, Default)]
struct Side {
    state: State,
    /// Bytes of the current packet still to skip.
    skip: u64,
    pre_banner_lines: u32,
}

/// The SSH parser of one flow.
#[derive(Debug)]
pub struct SshParser {
    sides: PerDir<Side>,
    tx: Option<SshTx>,
    next_id: u64,
    events: Vec<AppEvent>,
    /// HASSH is computed: a side is complete at its KEXINIT, not its banner.
    hassh: bool,
}

impl SshParser {
    pub fn new(first_tx_id: u64) -> Self {
        SshParser {
            sides: PerDir::default(),
            tx: Some(SshTx { id: first_tx_id, ..SshTx::default() }),
            next_id: first_tx_id + 1,
            events: Vec::new(),
            hassh: false,
        }
    }

    /// Computes HASSH (`app-layer.protocols.ssh.hassh`, or a rule that uses it).
    pub fn with_hassh(mut self, on: bool) -> Self {
        self.hassh = on;
        self
    }

    /// Whether `dir` sends encrypted data now.
    pub fn encrypted(&self, dir: Direction) -> bool {
        self.sides.get(dir).state == State::Encrypted
    }

    fn event(&mut self, name: &'static str) {
        let tx_id = self.tx.as_ref().map(|t| t.id);
        let at = super::EVENTS.iter().position(|e| name.strip_prefix("ssh.") == Some(*e));
        if let (Some(tx), Some(i)) = (self.tx.as_mut(), at) {
            tx.events |= 1 << i;
        }
        self.events.push(AppEvent { name, tx_id });
    }

    fn tx_side(&mut self, dir: Direction) -> Option<&mut super::tx::SshSide> {
        self.tx.as_mut().map(|t| t.sides.get_mut(dir))
    }

    /// One step on `data`: how many bytes it used, or `Err(needed)` when it
    /// needs more than `data` holds.
    fn step(&mut self, dir: Direction, data: &[u8]) -> Result<usize, usize> {
        let side = self.sides.get_mut(dir);
        match side.state {
            State::Encrypted | State::Broken => Ok(data.len()),
            State::BannerTail => match data.iter().position(|&b| b == b'\n') {
                Some(eol) => {
                    side.state = State::Packets;
                    Ok(eol + 1)
                }
                None => Ok(data.len()),
            },
            State::Banner => self.banner(dir, data),
            State::Packets if side.skip > 0 => {
                let n = side.skip.min(data.len() as u64);
                side.skip -= n;
                Ok(n as usize)
            }
            State::Packets => self.packet(dir, data),
        }
    }

    fn banner(&mut self, dir: Direction, data: &[u8]) -> Result<usize, usize> {
        let eol = data.iter().take(MAX_BANNER + 1).position(|&b| b == b'\n');
        let (line, used, long) = match eol {
            Some(eol) => (&data[..eol], eol + 1, false),
            None if data.len() > MAX_BANNER => (&data[..MAX_BANNER], MAX_BANNER, true),
            None => {
                if b"SSH-".starts_with(&data[..data.len().min(4)]) {
                    if let Some(s) = self.tx_side(dir) {
                        s.banner_partial = true;
                    }
                }
                return Err(1);
            }
        };
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Some(version) = line.strip_prefix(b"SSH-") else {
            // Servers may say something first; a client may not.
            let side = self.sides.get_mut(dir);
            side.pre_banner_lines += 1;
            if dir == Direction::ToServer || long || side.pre_banner_lines > MAX_PRE_BANNER_LINES {
                side.state = State::Broken;
                self.event("ssh.invalid_banner");
            }
            return Ok(used);
        };
        let dash = version.iter().position(|&b| b == b'-');
        let (proto, rest) = match dash {
            Some(d) => (&version[..d], &version[d + 1..]),
            None => (version, &[][..]),
        };
        let software = rest.split(|&b| b == b' ').next().unwrap_or_default();
        if dash.is_none() || proto.is_empty() {
            self.event("ssh.invalid_banner");
        }
        if long {
            self.event("ssh.long_banner");
        }
        let (proto, software) = (proto.to_vec(), software.to_vec());
        let hassh = self.hassh;
        if let Some(s) = self.tx_side(dir) {
            s.banner = true;
            s.proto_version = proto;
            s.software_version = software;
            // Without HASSH, the banner is all this side's record says.
            s.done |= !hassh;
        }
        self.sides.get_mut(dir).state = if long { State::BannerTail } else { State::Packets };
        Ok(used)
    }

    fn packet(&mut self, dir: Direction, data: &[u8]) -> Result<usize, usize> {
        if data.len() < 6 {
            return Err(6 - data.len());
        }
        let len = u32::from_be_bytes([data[0], data[1], data[2], data[3]]);
        let padding = data[4];
        // The padding length byte and a message type at least, besides the padding.
        if !(2..=MAX_PACKET).contains(&len) || u32::from(padding) + 2 > len {
            self.sides.get_mut(dir).state = State::Broken;
            self.event("ssh.invalid_record");
            return Ok(data.len());
        }
        let total = 4 + len as usize;
        match data[5] {
            MSG_NEWKEYS => {
                self.sides.get_mut(dir).state = State::Encrypted;
                if let Some(s) = self.tx_side(dir) {
                    s.done = true;
                    s.finished = true;
                }
                Ok(data.len())
            }
            MSG_KEXINIT if len <= MAX_KEXINIT && self.hassh => {
                if data.len() < total {
                    return Err(total - data.len());
                }
                let payload = &data[6..total - usize::from(padding)];
                match hassh(dir, payload) {
                    Some(string) => {
                        let hash: Vec<u8> =
                            Md5::digest(&string).iter().flat_map(|b| format!("{b:02x}").into_bytes()).collect();
                        if let Some(s) = self.tx_side(dir) {
                            s.hassh.get_or_insert((string, hash));
                            s.done = true;
                        }
                    }
                    None => self.event("ssh.invalid_record"),
                }
                Ok(total)
            }
            kind => {
                if kind == MSG_KEXINIT && len > MAX_KEXINIT {
                    self.event("ssh.long_kex_record");
                }
                let n = total.min(data.len());
                self.sides.get_mut(dir).skip = (total - n) as u64;
                Ok(n)
            }
        }
    }
}

/// The HASSH string of a KEXINIT payload (after the message type): the key
/// exchange, encryption, MAC and compression lists of the sender's side,
/// `;` between them. `None` when the payload is cut short.
fn hassh(dir: Direction, payload: &[u8]) -> Option<Vec<u8>> {
    let mut rest = payload.get(16..)?; // the cookie
    let mut lists: Vec<&[u8]> = Vec::with_capacity(10);
    for _ in 0..10 {
        let n = u32::from_be_bytes(rest.get(..4)?.try_into().ok()?) as usize;
        lists.push(rest.get(4..4 + n)?);
        rest = &rest[4 + n..];
    }
    // Lists: kex, host key, enc c2s, enc s2c, mac c2s, mac s2c, comp c2s, comp s2c, lang c2s, lang s2c.
    let own = usize::from(dir == Direction::ToClient);
    let picked = [lists[0], lists[2 + own], lists[4 + own], lists[6 + own]];
    Some(picked.join(&b';'))
}

impl ProtoParser for SshParser {
    fn parse(&mut self, dir: Direction, data: &[u8]) -> ParseResult {
        let mut at = 0;
        while at < data.len() {
            match self.step(dir, &data[at..]) {
                Ok(used) => at += used.max(1).min(data.len() - at),
                Err(needed) => return ParseResult::Incomplete { consumed: at, needed },
            }
        }
        ParseResult::Done
    }

    fn on_gap(&mut self, dir: Direction, len: u64) -> bool {
        let side = self.sides.get_mut(dir);
        match side.state {
            State::Encrypted | State::Broken => true,
            State::Packets if side.skip >= len => {
                side.skip -= len;
                true
            }
            // Packet boundaries are lost: as Suricata's, the parser does not take gaps.
            _ => {
                side.state = State::Broken;
                false
            }
        }
    }

    fn close(&mut self, dir: Direction, _held: &[u8]) {
        if let Some(s) = self.tx_side(dir) {
            s.done = true;
            s.finished = true;
        }
    }

    fn tx_count(&self) -> usize {
        usize::from(self.tx.is_some())
    }

    fn tx(&self, i: usize) -> Option<&dyn ProtoTx> {
        self.tx.as_ref().filter(|_| i == 0).map(|t| t as &dyn ProtoTx)
    }

    fn prune(&mut self, id: u64) {
        // The one transaction stays, logged, until both sides encrypt: its
        // hook states (firewall rules) go on to `finished`.
        let finished = |t: &SshTx| t.sides.to_server.finished && t.sides.to_client.finished;
        if self.tx.as_ref().is_some_and(|t| t.id < id && finished(t)) {
            self.tx = None;
        }
    }

    fn drain_events(&mut self, out: &mut Vec<AppEvent>) {
        out.append(&mut self.events);
    }

    fn next_tx_id(&self) -> u64 {
        self.next_id
    }

    fn inspection_done(&self) -> bool {
        self.encrypted(Direction::ToServer) && self.encrypted(Direction::ToClient)
    }
}
