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
    /// registers HTTP and DNS buffers that exist both ways, and the table's
    /// protocols say so per buffer).
    pub both_ways: bool,
}

const fn def(proto: AppProto, request: Option<BufferId>, response: Option<BufferId>, need: Progress) -> BufferDef {
    let default = if request.is_some() { Direction::ToServer } else { Direction::ToClient };
    let both_ways = request.is_some() && response.is_some();
    BufferDef { proto, request, response, default, need, multi: false, both_ways }
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

const fn req(id: BufferId) -> BufferDef {
    def(AppProto::Http, Some(id), None, Progress::Headers)
}

const fn resp(id: BufferId) -> BufferDef {
    def(AppProto::Http, None, Some(id), Progress::Headers)
}

const fn both(request: BufferId, response: BufferId) -> BufferDef {
    def(AppProto::Http, Some(request), Some(response), Progress::Headers)
}

const fn complete(mut d: BufferDef) -> BufferDef {
    d.need = Progress::Complete;
    d
}

const fn multi(mut d: BufferDef) -> BufferDef {
    d.multi = true;
    d
}

const fn default_to_client(mut d: BufferDef) -> BufferDef {
    d.default = Direction::ToClient;
    d
}

/// The definition of a sticky buffer by its canonical keyword name; `None`
/// for buffers vigil has no parser for yet.
pub(crate) fn lookup(name: &str) -> Option<BufferDef> {
    use BufferId as B;
    match name {
        "http.uri" => Some(req(B::HttpUri)),
        "http.uri.raw" => Some(req(B::HttpUriRaw)),
        "http.method" => Some(req(B::HttpMethod)),
        "http.request_line" => Some(req(B::HttpRequestLine)),
        "http.request_body" => Some(complete(req(B::HttpRequestBody))),
        "http.response_body" => Some(complete(resp(B::HttpResponseBody))),
        // HTTP bodies both ways; a rule without a direction means the response.
        // Each file's data; an HTTP body that is one file answers as one.
        "file.data" => Some(default_to_client(complete(multi(both(B::FileData, B::FileData))))),
        // Each file's name, request files and response files alike; whole
        // once the side is.
        "file.name" => Some(default_to_client(complete(multi(both(B::FileName, B::FileName))))),
        "http.header" => Some(both(B::HttpHeader, B::HttpResponseHeader)),
        "http.header.raw" => Some(both(B::HttpHeaderRaw, B::HttpResponseHeaderRaw)),
        "http.header_names" => Some(both(B::HttpHeaderNames, B::HttpResponseHeaderNames)),
        "http.cookie" => Some(both(B::HttpCookie, B::HttpResponseCookie)),
        "http.content_type" => Some(both(B::HttpContentType, B::HttpResponseContentType)),
        "http.content_len" => Some(both(B::HttpContentLen, B::HttpResponseContentLen)),
        "http.start" => Some(both(B::HttpStart, B::HttpResponseStart)),
        "http.protocol" => Some(both(B::HttpProtocol, B::HttpResponseProtocol)),
        "http.user_agent" => Some(req(B::HttpUserAgent)),
        "http.host" => Some(req(B::HttpHost)),
        "http.host.raw" => Some(req(B::HttpHostRaw)),
        "http.accept" => Some(req(B::HttpAccept)),
        "http.accept_enc" => Some(req(B::HttpAcceptEnc)),
        "http.accept_lang" => Some(req(B::HttpAcceptLang)),
        "http.referer" => Some(req(B::HttpReferer)),
        "http.connection" => Some(both(B::HttpConnection, B::HttpResponseConnection)),
        "http.request_header" => Some(multi(req(B::HttpRequestHeaderItem))),
        "http.response_header" => Some(multi(resp(B::HttpResponseHeaderItem))),
        "http.stat_code" => Some(resp(B::HttpStatCode)),
        "http.stat_msg" => Some(resp(B::HttpStatMsg)),
        "http.response_line" => Some(resp(B::HttpResponseLine)),
        "http.server" => Some(resp(B::HttpServer)),
        "http.location" => Some(resp(B::HttpLocation)),
        _ => table_buffer(name),
    }
}

impl BufferDef {
    /// The buffer and the side it is read from when the rule inspects `side`.
    pub(crate) fn resolve(&self, side: Direction) -> (BufferId, Direction) {
        match (side, self.request, self.response) {
            (Direction::ToServer, Some(id), _) | (Direction::ToClient, Some(id), None) => (id, Direction::ToServer),
            (_, _, Some(id)) => (id, Direction::ToClient),
            // Every definition names at least one side.
            (_, None, None) => (BufferId::HttpUri, Direction::ToServer),
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
        let h = lookup("http.header").unwrap();
        assert_eq!(h.resolve(Direction::ToServer), (BufferId::HttpHeader, Direction::ToServer));
        assert_eq!(h.resolve(Direction::ToClient), (BufferId::HttpResponseHeader, Direction::ToClient));
        // A request-only buffer is read from the request whatever side the rule inspects.
        let u = lookup("http.uri").unwrap();
        assert_eq!(u.resolve(Direction::ToClient), (BufferId::HttpUri, Direction::ToServer));
        assert_eq!(lookup("file.data").unwrap().default, Direction::ToClient);
        assert!(lookup("dns.query").unwrap().multi);
        assert!(lookup("http2.header").is_none());
    }
}
