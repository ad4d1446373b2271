//! What every application-layer parser shares: the result of offering it
//! bytes ([`ParseResult`], the streaming contract of
//! [`ProtoParser`](crate::proto::ProtoParser)), the anomalies it raises and
//! the buffer numbering detection uses.

/// What a parser did with the bytes it was offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParseResult {
    /// Every byte was consumed.
    Done,
    /// The first `consumed` bytes were used; the rest is an unfinished unit
    /// (a header line, a record) that needs at least `needed` more bytes.
    /// The caller keeps `data[consumed..]` and offers it again, followed by
    /// new data, once it has grown. The caller bounds what it keeps.
    Incomplete { consumed: usize, needed: usize },
    /// The data does not follow the protocol; the parser will not make sense
    /// of this direction again and the caller stops feeding it.
    Error,
}

/// An anomaly a parser found, under Suricata's event name (for
/// `app-layer-event` and EVE `anomaly` records), e.g. `http.request_field_too_long`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppEvent {
    pub name: &'static str,
    /// The transaction it belongs to, if any.
    pub tx_id: Option<u64>,
}

/// Every inspection buffer a rule can select with a sticky buffer keyword:
/// the file buffers every protocol with files answers, and each protocol's
/// own by its number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BufferId {
    /// `file.data`: the data of each file of the side inspected (an HTTP
    /// body, or each part of a multipart upload), as far as kept. Indexed.
    FileData,
    /// `file.name`: the name of each file of the side inspected, whatever
    /// the protocol (answered from the transaction's files). Indexed.
    FileName,
    /// `file.magic`: libmagic's description of each file of the side
    /// inspected, once looked up. Indexed.
    FileMagic,
    /// A buffer of a protocol of the table, by that protocol's own number
    /// ([`crate::proto::BufferDef::id`]); which protocol is the transaction's.
    Proto(u8),
}
