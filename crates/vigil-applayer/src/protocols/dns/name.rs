//! Domain names on the wire (RFC 1035 4.1.4): length-prefixed labels, ended by a zero byte or by a
//! compression pointer to an earlier (or, tolerated like Suricata, later) spot in the message.
//!
//! Decoding is bounded three ways so a hostile message can neither loop nor grow a name without
//! limit: at most [`MAX_POINTERS`] pointers are followed (a loop shows up as too many pointers), at
//! most [`MAX_LABELS`] labels are read, and at most [`MAX_NAME_LEN`] bytes are kept. Hitting a
//! bound is not an error: the name keeps what was decoded and says which bound it hit.

/// Longest decoded name kept, as Suricata (which took the value from dnsmasq).
pub const MAX_NAME_LEN: usize = 1025;
/// Labels read per name; a legal name has at most 127.
pub const MAX_LABELS: usize = 255;
/// Compression pointers followed per name. Real names need one or two; more means a loop.
pub const MAX_POINTERS: usize = 32;

/// Which decoding bound a name hit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NameFlags {
    /// Longer than [`MAX_NAME_LEN`]; the value holds the first bytes (`dns.name_too_long`).
    pub truncated: bool,
    /// Pointers kept pointing at each other (`dns.infinite_loop`).
    pub infinite_loop: bool,
    /// More than [`MAX_LABELS`] labels (`dns.too_many_labels`).
    pub too_many_labels: bool,
}

impl NameFlags {
    pub(crate) fn merge(&mut self, other: NameFlags) {
        self.truncated |= other.truncated;
        self.infinite_loop |= other.infinite_loop;
        self.too_many_labels |= other.too_many_labels;
    }

    fn gave_up(&self) -> bool {
        self.truncated || self.too_many_labels
    }
}

/// A decoded name: labels joined by `.`, bytes as sent (no case folding, no escaping), no
/// trailing dot; the root name is empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DnsName {
    pub value: Vec<u8>,
    pub flags: NameFlags,
}

/// Why a name could not be decoded at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameError {
    /// A label or pointer runs past the end of its data.
    Truncated { offset: usize },
    /// A label type other than "label" (00) or "pointer" (11).
    BadLabelType { offset: usize },
    /// A pointer past the end of the message.
    BadPointer { offset: usize },
}

/// Decodes the name that starts at `start` in `msg`. The labels before the first pointer must end
/// by `end` (the end of the record data, or of the message); reaching `end` exactly ends the name,
/// which is how Suricata reads names in short record data. Returns the name and the offset just
/// past it on the wire.
pub fn parse_name(msg: &[u8], start: usize, end: usize) -> Result<(DnsName, usize), NameError> {
    let mut pos = start;
    let mut limit = end.min(msg.len());
    // Where the wire resumes once the first pointer has been taken.
    let mut resume: Option<usize> = None;
    let mut name = DnsName::default();
    let (mut labels, mut pointers) = (0usize, 0usize);

    while pos < limit {
        let len = msg[pos];
        match len >> 6 {
            0b00 if len == 0 => {
                pos += 1;
                break;
            }
            0b00 => {
                let len = usize::from(len);
                let label = msg.get(pos + 1..pos + 1 + len).filter(|_| pos + 1 + len <= limit);
                let label = label.ok_or(NameError::Truncated { offset: pos })?;
                pos += 1 + len;
                labels += 1;
                if labels > MAX_LABELS {
                    name.flags.too_many_labels = true;
                }
                if name.flags.gave_up() {
                    // Nothing more is kept; only the end of the name on the wire still matters,
                    // and after a pointer that is already known.
                    if resume.is_some() {
                        break;
                    }
                    continue;
                }
                if !name.value.is_empty() {
                    name.value.push(b'.');
                }
                name.value.extend_from_slice(label);
                if name.value.len() > MAX_NAME_LEN {
                    name.value.truncate(MAX_NAME_LEN);
                    name.flags.truncated = true;
                }
            }
            0b11 => {
                if pos + 1 >= limit {
                    return Err(NameError::Truncated { offset: pos });
                }
                let target = usize::from(len & 0x3f) << 8 | usize::from(msg[pos + 1]);
                if target >= msg.len() {
                    return Err(NameError::BadPointer { offset: pos });
                }
                if resume.is_none() {
                    resume = Some(pos + 2);
                }
                if name.flags.gave_up() {
                    break;
                }
                pointers += 1;
                if pointers > MAX_POINTERS {
                    name.flags.infinite_loop = true;
                    break;
                }
                pos = target;
                limit = msg.len();
            }
            _ => return Err(NameError::BadLabelType { offset: pos }),
        }
    }
    Ok((name, resume.unwrap_or(pos)))
}
