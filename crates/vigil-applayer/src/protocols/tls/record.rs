//! Record framing: where the next record of a direction starts and ends.
//!
//! Two framings share a stream. TLS/SSLv3 records have a 5-byte header (content type 20..=24,
//! version 3.x, 16-bit length; parsed with tls-parser). SSLv2 records, used by old and
//! v2-compatible ClientHellos, have a 2-byte header whose top bit is set, which no TLS content
//! type has, so the first byte tells them apart.

/// Largest record body accepted: 2^14 plaintext plus the 2048 bytes of expansion TLS allows
/// ciphertext (RFC 5246 6.2.3). Anything longer is not TLS.
pub const MAX_RECORD_LEN: usize = (1 << 14) + 2048;

pub const CHANGE_CIPHER_SPEC: u8 = 20;
pub const ALERT: u8 = 21;
pub const HANDSHAKE: u8 = 22;
pub const APPLICATION_DATA: u8 = 23;
pub const HEARTBEAT: u8 = 24;

/// One whole record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Record<'a> {
    Tls {
        content_type: u8,
        version: u16,
        body: &'a [u8],
    },
    /// An SSLv2 record with a 2-byte header; `body` starts with the message type.
    Ssl2 {
        body: &'a [u8],
    },
}

/// What the start of a buffer holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame<'a> {
    /// A record and the bytes it takes, header included.
    Record(Record<'a>, usize),
    /// A record starts but needs this many more bytes.
    NeedMore(usize),
    /// Not a record; the event name says why.
    Bad(&'static str),
}

/// Frames the record at the start of `data` (which must not be empty).
pub fn next_record(data: &[u8]) -> Frame<'_> {
    let Some(&first) = data.first() else { return Frame::NeedMore(1) };
    if first & 0x80 != 0 {
        let Some(&second) = data.get(1) else { return Frame::NeedMore(1) };
        let len = usize::from(first & 0x7f) << 8 | usize::from(second);
        if len == 0 {
            return Frame::Bad(super::EVENT_INVALID_SSLV2_HEADER);
        }
        return match data.get(2..2 + len) {
            Some(body) => Frame::Record(Record::Ssl2 { body }, 2 + len),
            None => Frame::NeedMore(2 + len - data.len()),
        };
    }
    if !(CHANGE_CIPHER_SPEC..=HEARTBEAT).contains(&first) {
        return Frame::Bad(super::EVENT_INVALID_RECORD_TYPE);
    }
    if data.get(1).is_some_and(|&major| major != 3) {
        return Frame::Bad(super::EVENT_INVALID_RECORD_VERSION);
    }
    let Some(header) = data.get(..5) else { return Frame::NeedMore(5 - data.len()) };
    let Ok((_, hdr)) = tls_parser::parse_tls_record_header(header) else {
        return Frame::Bad(super::EVENT_INVALID_TLS_HEADER);
    };
    let len = usize::from(hdr.len);
    if len > MAX_RECORD_LEN {
        return Frame::Bad(super::EVENT_INVALID_RECORD_LENGTH);
    }
    match data.get(5..5 + len) {
        Some(body) => Frame::Record(Record::Tls { content_type: first, version: hdr.version.0, body }, 5 + len),
        None => Frame::NeedMore(5 + len - data.len()),
    }
}
