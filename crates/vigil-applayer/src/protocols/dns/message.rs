//! One DNS message (RFC 1035 4.1): header, questions, and the answer, authority and additional
//! record sections, with record data decoded for the types Suricata logs.
//!
//! The parser mirrors Suricata's tolerance so EVE records and inspection buffers agree with it:
//! a header whose counts cannot fit the message is not DNS; a broken question or answer section
//! makes the message malformed; a broken authority or additional section only drops that
//! section (and what follows) and is flagged. Records with empty data are skipped and a TXT
//! record becomes one record per character-string, as Suricata does.

use super::name::{parse_name, DnsName, NameError, NameFlags};

/// DNS header length.
pub const HEADER_LEN: usize = 12;

/// Decoded names a single message may keep, in bytes. Compression lets a 64 KiB message name
/// thousands of records after the same long name; past this budget names are kept empty and
/// flagged truncated, so one message cannot grow into megabytes.
pub const MESSAGE_NAME_BUDGET: usize = 256 * 1024;

pub const TYPE_A: u16 = 1;
pub const TYPE_NS: u16 = 2;
pub const TYPE_CNAME: u16 = 5;
pub const TYPE_SOA: u16 = 6;
pub const TYPE_NULL: u16 = 10;
pub const TYPE_PTR: u16 = 12;
pub const TYPE_HINFO: u16 = 13;
pub const TYPE_MX: u16 = 15;
pub const TYPE_TXT: u16 = 16;
pub const TYPE_AAAA: u16 = 28;
pub const TYPE_SRV: u16 = 33;
pub const TYPE_OPT: u16 = 41;
pub const TYPE_SSHFP: u16 = 44;

/// The fixed 12-byte header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DnsHeader {
    /// The on-the-wire transaction id.
    pub id: u16,
    pub flags: u16,
    pub qdcount: u16,
    pub ancount: u16,
    pub nscount: u16,
    pub arcount: u16,
}

impl DnsHeader {
    pub fn parse(data: &[u8]) -> Option<Self> {
        let h = data.get(..HEADER_LEN)?;
        let word = |i: usize| u16::from_be_bytes([h[i], h[i + 1]]);
        Some(DnsHeader {
            id: word(0),
            flags: word(2),
            qdcount: word(4),
            ancount: word(6),
            nscount: word(8),
            arcount: word(10),
        })
    }

    /// Whether the counts could fit a message of `len` bytes. Suricata's test: every entry takes
    /// at least two bytes. Anything failing it is not treated as DNS at all.
    pub fn plausible(&self, len: usize) -> bool {
        let entries =
            [self.qdcount, self.ancount, self.nscount, self.arcount].iter().map(|&c| usize::from(c)).sum::<usize>();
        2 * entries <= len
    }

    /// QR: set on responses.
    pub fn qr(&self) -> bool {
        self.flags & 0x8000 != 0
    }
    pub fn opcode(&self) -> u8 {
        ((self.flags >> 11) & 0xf) as u8
    }
    pub fn aa(&self) -> bool {
        self.flags & 0x0400 != 0
    }
    pub fn tc(&self) -> bool {
        self.flags & 0x0200 != 0
    }
    pub fn rd(&self) -> bool {
        self.flags & 0x0100 != 0
    }
    pub fn ra(&self) -> bool {
        self.flags & 0x0080 != 0
    }
    /// The reserved Z bit.
    pub fn z(&self) -> bool {
        self.flags & 0x0040 != 0
    }
    /// The 4-bit RCODE of the header (extended RCODEs from OPT are not merged in).
    pub fn rcode(&self) -> u8 {
        (self.flags & 0xf) as u8
    }
}

/// One entry of the question section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DnsQuestion {
    pub name: DnsName,
    pub rrtype: u16,
    pub rrclass: u16,
}

/// SOA record data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Soa {
    pub mname: DnsName,
    pub rname: DnsName,
    pub serial: u32,
    pub refresh: u32,
    pub retry: u32,
    pub expire: u32,
    pub minimum: u32,
}

/// SRV record data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Srv {
    pub priority: u16,
    pub weight: u16,
    pub port: u16,
    pub target: DnsName,
}

/// SSHFP record data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sshfp {
    pub algo: u8,
    pub fp_type: u8,
    pub fingerprint: Vec<u8>,
}

/// One EDNS option of an OPT record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EdnsOption {
    pub code: u16,
    pub data: Vec<u8>,
}

/// Decoded record data. Addresses are kept as sent: a wrong-length A or AAAA is still a record
/// (logged with an empty address, as Suricata does).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RData {
    A(Vec<u8>),
    Aaaa(Vec<u8>),
    Cname(DnsName),
    Ns(DnsName),
    Ptr(DnsName),
    Mx {
        preference: u16,
        exchange: DnsName,
    },
    /// One character-string of a TXT record.
    Txt(Vec<u8>),
    Soa(Soa),
    Srv(Srv),
    Sshfp(Sshfp),
    Null(Vec<u8>),
    Hinfo {
        cpu: Vec<u8>,
        os: Vec<u8>,
    },
    Opt(Vec<EdnsOption>),
    /// Any other type, or HINFO that does not decode: the raw bytes.
    Unknown(Vec<u8>),
}

/// One resource record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DnsRecord {
    pub name: DnsName,
    pub rrtype: u16,
    pub rrclass: u16,
    /// For OPT this holds the extended RCODE, version and flags, as on the wire.
    pub ttl: u32,
    pub rdata: RData,
}

/// A decoded message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DnsMessage {
    pub header: DnsHeader,
    pub questions: Vec<DnsQuestion>,
    pub answers: Vec<DnsRecord>,
    pub authorities: Vec<DnsRecord>,
    pub additionals: Vec<DnsRecord>,
    /// The authority section did not decode; it and the additional section are empty.
    pub invalid_authorities: bool,
    /// The additional section did not decode and is empty.
    pub invalid_additionals: bool,
    /// Bounds any name of the message hit.
    pub name_flags: NameFlags,
}

/// Why a message was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageError {
    /// Shorter than a header, or counts that cannot fit: not DNS.
    Header,
    /// A question or answer does not decode (`dns.malformed_data`). `offset` is where.
    Malformed { offset: usize },
}

impl From<NameError> for MessageError {
    fn from(e: NameError) -> Self {
        let offset = match e {
            NameError::Truncated { offset } | NameError::BadLabelType { offset } | NameError::BadPointer { offset } => {
                offset
            }
        };
        MessageError::Malformed { offset }
    }
}

/// Decodes one complete message (a UDP payload, or a TCP message without its length prefix).
pub fn parse_message(msg: &[u8]) -> Result<DnsMessage, MessageError> {
    let header = DnsHeader::parse(msg).ok_or(MessageError::Header)?;
    if !header.plausible(msg.len()) {
        return Err(MessageError::Header);
    }
    let mut r = Reader { msg, budget: MESSAGE_NAME_BUDGET, flags: NameFlags::default() };
    let mut pos = HEADER_LEN;

    let mut questions = Vec::new();
    for _ in 0..header.qdcount {
        let (name, p) = r.name(pos, msg.len())?;
        let rrtype = r.u16(p)?;
        let rrclass = r.u16(p + 2)?;
        questions.push(DnsQuestion { name, rrtype, rrclass });
        pos = p + 4;
    }
    let (answers, p) = r.records(pos, header.ancount)?;
    pos = p;

    let (mut authorities, mut additionals) = (Vec::new(), Vec::new());
    let (mut invalid_authorities, mut invalid_additionals) = (false, false);
    match r.records(pos, header.nscount) {
        Ok((recs, p)) => {
            authorities = recs;
            match r.records(p, header.arcount) {
                Ok((recs, _)) => additionals = recs,
                Err(_) => invalid_additionals = true,
            }
        }
        Err(_) => invalid_authorities = true,
    }

    Ok(DnsMessage {
        header,
        questions,
        answers,
        authorities,
        additionals,
        invalid_authorities,
        invalid_additionals,
        name_flags: r.flags,
    })
}

struct Reader<'a> {
    msg: &'a [u8],
    budget: usize,
    flags: NameFlags,
}

impl<'a> Reader<'a> {
    fn bytes(&self, at: usize, n: usize) -> Result<&'a [u8], MessageError> {
        self.msg.get(at..at.saturating_add(n)).ok_or(MessageError::Malformed { offset: at })
    }

    fn u16(&self, at: usize) -> Result<u16, MessageError> {
        let b = self.bytes(at, 2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    fn u32(&self, at: usize) -> Result<u32, MessageError> {
        let b = self.bytes(at, 4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn name(&mut self, at: usize, end: usize) -> Result<(DnsName, usize), MessageError> {
        let (mut name, next) = parse_name(self.msg, at, end)?;
        if name.value.len() > self.budget {
            name.value = Vec::new();
            name.flags.truncated = true;
        }
        self.budget -= name.value.len();
        self.flags.merge(name.flags);
        Ok((name, next))
    }

    /// Reads `count` records from `pos`; returns them and the offset after the last.
    fn records(&mut self, mut pos: usize, count: u16) -> Result<(Vec<DnsRecord>, usize), MessageError> {
        let mut out = Vec::new();
        for _ in 0..count {
            let (name, p) = self.name(pos, self.msg.len())?;
            let rrtype = self.u16(p)?;
            let rrclass = self.u16(p + 2)?;
            let ttl = self.u32(p + 4)?;
            let rdlen = usize::from(self.u16(p + 8)?);
            let start = p + 10;
            self.bytes(start, rdlen)?;
            let end = start + rdlen;
            // Suricata drops records with empty data rather than logging them empty.
            if rdlen > 0 {
                let record = |name, rdata| DnsRecord { name, rrtype, rrclass, ttl, rdata };
                if rrtype == TYPE_TXT {
                    for s in self.txt_strings(start, end)? {
                        out.push(record(name.clone(), RData::Txt(s)));
                    }
                } else {
                    out.push(record(name, self.rdata(rrtype, start, end)?));
                }
            }
            pos = end;
        }
        Ok((out, pos))
    }

    /// The character-strings of a TXT record; a broken tail after the first is dropped.
    fn txt_strings(&self, mut pos: usize, end: usize) -> Result<Vec<Vec<u8>>, MessageError> {
        let mut out = Vec::new();
        while pos < end {
            let len = usize::from(self.msg[pos]);
            match self.msg.get(pos + 1..pos + 1 + len).filter(|_| pos + 1 + len <= end) {
                Some(s) => out.push(s.to_vec()),
                None if out.is_empty() => return Err(MessageError::Malformed { offset: pos }),
                None => break,
            }
            pos += 1 + len;
        }
        Ok(out)
    }

    fn rdata(&mut self, rrtype: u16, start: usize, end: usize) -> Result<RData, MessageError> {
        let raw = &self.msg[start..end];
        let need = |n: usize| if raw.len() < n { Err(MessageError::Malformed { offset: start }) } else { Ok(()) };
        Ok(match rrtype {
            TYPE_A => RData::A(raw.to_vec()),
            TYPE_AAAA => RData::Aaaa(raw.to_vec()),
            TYPE_CNAME => RData::Cname(self.name(start, end)?.0),
            TYPE_NS => RData::Ns(self.name(start, end)?.0),
            TYPE_PTR => RData::Ptr(self.name(start, end)?.0),
            TYPE_MX => {
                need(2)?;
                RData::Mx { preference: self.u16(start)?, exchange: self.name(start + 2, end)?.0 }
            }
            TYPE_SOA => {
                let (mname, p) = self.name(start, end)?;
                let (rname, p) = self.name(p, end)?;
                if p + 20 > end {
                    return Err(MessageError::Malformed { offset: p });
                }
                RData::Soa(Soa {
                    mname,
                    rname,
                    serial: self.u32(p)?,
                    refresh: self.u32(p + 4)?,
                    retry: self.u32(p + 8)?,
                    expire: self.u32(p + 12)?,
                    minimum: self.u32(p + 16)?,
                })
            }
            TYPE_SRV => {
                need(6)?;
                RData::Srv(Srv {
                    priority: self.u16(start)?,
                    weight: self.u16(start + 2)?,
                    port: self.u16(start + 4)?,
                    target: self.name(start + 6, end)?.0,
                })
            }
            TYPE_SSHFP => {
                need(2)?;
                RData::Sshfp(Sshfp { algo: raw[0], fp_type: raw[1], fingerprint: raw[2..].to_vec() })
            }
            TYPE_NULL => RData::Null(raw.to_vec()),
            TYPE_HINFO => hinfo(raw).unwrap_or_else(|| RData::Unknown(raw.to_vec())),
            TYPE_OPT => RData::Opt(edns_options(raw).ok_or(MessageError::Malformed { offset: start })?),
            _ => RData::Unknown(raw.to_vec()),
        })
    }
}

fn hinfo(raw: &[u8]) -> Option<RData> {
    let cpu_len = usize::from(*raw.first()?);
    let cpu = raw.get(1..1 + cpu_len)?;
    let os_len = usize::from(*raw.get(1 + cpu_len)?);
    let os = raw.get(2 + cpu_len..2 + cpu_len + os_len)?;
    Some(RData::Hinfo { cpu: cpu.to_vec(), os: os.to_vec() })
}

/// EDNS options. The data must be whole options: a truncated one makes the record (and so its
/// section) invalid, as in Suricata, which flags it `dns.invalid_additionals`.
fn edns_options(mut raw: &[u8]) -> Option<Vec<EdnsOption>> {
    let mut out = Vec::new();
    while !raw.is_empty() {
        let head = raw.get(..4)?;
        let code = u16::from_be_bytes([head[0], head[1]]);
        let len = usize::from(u16::from_be_bytes([head[2], head[3]]));
        let data = raw.get(4..4 + len)?;
        out.push(EdnsOption { code, data: data.to_vec() });
        raw = &raw[4 + len..];
    }
    Some(out)
}
