//! Which transaction buffer a sticky-buffer keyword names, on which side of
//! the transaction it lives, and how far that side must be parsed before the
//! buffer is final enough to inspect.

use vigil_applayer::proto::Sides;
use vigil_applayer::{BufferId, Progress};
use vigil_types::{AppProto, Direction};

/// What the engine needs to know about one sticky buffer keyword.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BufferDef {
    pub proto: AppProto,
    /// The buffer read when the rule inspects the request side.
    pub request: Option<BufferId>,
    /// The buffer read when the rule inspects the response side.
    pub response: Option<BufferId>,
    /// The side a rule uses it on when nothing else in the rule says.
    pub default: Direction,
    /// What the side must have reached: the start line and headers, or the whole message.
    pub need: Progress,
    /// It holds several values (each question name, each certificate), any of which may match.
    pub multi: bool,
    /// A rule that names no direction inspects it on both sides (Suricata
    /// registers such buffers for both; each protocol says so per buffer).
    pub both_ways: bool,
}

/// `file.data`, `file.name` and `file.magic`: the files of the side inspected, whole
/// once the side is, any of them; a rule naming no direction inspects both
/// sides and by default the response's. They belong to the protocol that
/// carries files ([`vigil_applayer::proto::files_proto`]), or to the one the
/// rule's header names when it carries files ([`BufferDef::carried_by`]).
fn file_buffer(id: BufferId) -> Option<BufferDef> {
    Some(BufferDef {
        proto: vigil_applayer::proto::files_proto()?.app_proto(),
        request: Some(id),
        response: Some(id),
        default: Direction::ToClient,
        need: Progress::Complete,
        multi: true,
        both_ways: true,
    })
}

/// A buffer of a protocol of the application layer's table.
fn table_buffer(name: &str) -> Option<BufferDef> {
    let (owner, b) = vigil_applayer::proto::buffer(name)?;
    let id = Some(BufferId::Proto(b.id));
    let (request, response) = match b.sides {
        Sides::ToServer => (id, None),
        Sides::ToClient => (None, id),
        Sides::Both => (id, id),
    };
    Some(BufferDef {
        proto: owner.app_proto(),
        request,
        response,
        default: b.default,
        need: b.need,
        multi: b.multi,
        both_ways: b.both_ways && b.sides == Sides::Both,
    })
}

/// The definition of a sticky buffer by its canonical keyword name; `None`
/// for buffers vigil has no parser for yet.
/// Suricata's list name for a sticky buffer (what engine analysis and
/// `entropy`'s flow variable call it): `file_data`, `http_uri`, `tls.sni`.
pub fn list_name(buffer: &str) -> String {
    match buffer {
        "http.request_body" | "http.client_body" => "http_client_body".into(),
        "http.response_body" | "file.data" => "file_data".into(),
        "dcerpc.stub_data" => "dce_stub_data".into(),
        b if b.starts_with("http.") => b.replace('.', "_"),
        b => b.to_string(),
    }
}

pub(crate) fn lookup(name: &str) -> Option<BufferDef> {
    match name {
        "file.data" => file_buffer(BufferId::FileData),
        "file.name" => file_buffer(BufferId::FileName),
        "file.magic" => file_buffer(BufferId::FileMagic),
        _ => table_buffer(name),
    }
}

impl BufferDef {
    /// A file buffer moved to `carrier`, the protocol whose files a rule inspects.
    pub(crate) fn carried_by(self, carrier: Option<AppProto>) -> BufferDef {
        let file = matches!(self.request, Some(BufferId::FileData | BufferId::FileName | BufferId::FileMagic));
        match carrier {
            Some(proto) if file => BufferDef { proto, ..self },
            _ => self,
        }
    }

    /// A buffer of another protocol moved to `header`, the protocol a
    /// rule's header names, when that protocol's transactions serve it too
    /// ([`vigil_applayer::proto::ProtoDef::borrows`]).
    pub(crate) fn borrowed_by(self, name: &str, header: Option<AppProto>) -> BufferDef {
        match header.and_then(vigil_applayer::proto::of) {
            Some(d) if d.borrows.contains(&name) => BufferDef { proto: d.app_proto(), ..self },
            _ => self,
        }
    }

    /// The buffer and the side it is read from when the rule inspects `side`.
    pub(crate) fn resolve(&self, side: Direction) -> (BufferId, Direction) {
        match (side, self.request, self.response) {
            (Direction::ToServer, Some(id), _) | (Direction::ToClient, Some(id), None) => (id, Direction::ToServer),
            (_, _, Some(id)) => (id, Direction::ToClient),
            // Every definition names at least one side.
            (_, None, None) => (BufferId::FileData, Direction::ToServer),
        }
    }

    /// Whether the buffer exists on one side only, which then decides the
    /// rule's side.
    pub(crate) fn one_sided(&self) -> Option<Direction> {
        match (self.request, self.response) {
            (Some(_), None) => Some(Direction::ToServer),
            (None, Some(_)) => Some(Direction::ToClient),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sides_follow_the_rule() {
        let header = BufferId::Proto(vigil_applayer::http::Buffer::Header as u8);
        let h = lookup("http.header").unwrap();
        assert_eq!(h.resolve(Direction::ToServer), (header, Direction::ToServer));
        assert_eq!(h.resolve(Direction::ToClient), (header, Direction::ToClient));
        // A request-only buffer is read from the request whatever side the rule inspects.
        let uri = BufferId::Proto(vigil_applayer::http::Buffer::Uri as u8);
        let u = lookup("http.uri").unwrap();
        assert_eq!(u.resolve(Direction::ToClient), (uri, Direction::ToServer));
        assert_eq!(lookup("file.data").unwrap().default, Direction::ToClient);
        assert!(lookup("dns.query").unwrap().multi);
        assert!(lookup("http2.header").is_some());
        assert!(lookup("ip.src").is_none());
    }
}
