//! Annotated conversations, each run whole, byte by byte and in random
//! chunks (several seeds): every cut must give the same transactions,
//! events and counters, and the caller never has to hold more than one
//! line's worth of bytes.

use std::io::Write;

use flate2::write::{DeflateEncoder, GzEncoder};
use flate2::Compression;
use vigil_types::Direction::{self, ToClient, ToServer};

use super::{probe, HttpConfig, HttpParser, HttpStats, HttpTx, Probe};
use super::Buffer;
use crate::parser::ParseResult;

/// One event of a conversation.
#[derive(Clone)]
enum Seg {
    Data(Direction, Vec<u8>),
    Gap(Direction, u64),
    Close(Direction),
}

fn c2s(s: impl AsRef<[u8]>) -> Seg {
    Seg::Data(ToServer, s.as_ref().to_vec())
}

fn s2c(s: impl AsRef<[u8]>) -> Seg {
    Seg::Data(ToClient, s.as_ref().to_vec())
}

#[derive(Clone, Copy)]
enum Mode {
    Whole,
    Bytes,
    /// Pieces of 1..=max bytes from a xorshift stream seeded with the value.
    Random(u64, usize),
}

#[derive(Debug, PartialEq)]
struct Outcome {
    txs: Vec<HttpTx>,
    events: Vec<(&'static str, Option<u64>)>,
    tunnel: bool,
    stats: HttpStats,
}

struct Caller {
    p: HttpParser,
    held: [Vec<u8>; 2],
    events: Vec<(&'static str, Option<u64>)>,
    max_held: usize,
}

fn slot(dir: Direction) -> usize {
    match dir {
        ToServer => 0,
        ToClient => 1,
    }
}

impl Caller {
    /// Does what an engine does: keeps the unconsumed tail and offers it
    /// again in front of the next chunk.
    fn feed(&mut self, dir: Direction, chunk: &[u8]) {
        let held = &mut self.held[slot(dir)];
        held.extend_from_slice(chunk);
        match self.p.parse(dir, held) {
            ParseResult::Done | ParseResult::Error => held.clear(),
            ParseResult::Incomplete { consumed, .. } => {
                held.drain(..consumed.min(held.len()));
            }
        }
        self.max_held = self.max_held.max(held.len());
        self.events.extend(self.p.take_events().into_iter().map(|e| (e.name, e.tx_id)));
    }
}

fn run(cfg: HttpConfig, segs: &[Seg], mode: Mode) -> (Outcome, usize) {
    let mut c = Caller { p: HttpParser::new(cfg), held: [Vec::new(), Vec::new()], events: Vec::new(), max_held: 0 };
    let mut rng = match mode {
        Mode::Random(seed, _) => seed | 1,
        _ => 1,
    };
    for seg in segs {
        match seg {
            Seg::Data(dir, bytes) => match mode {
                Mode::Whole => c.feed(*dir, bytes),
                Mode::Bytes => bytes.chunks(1).for_each(|b| c.feed(*dir, b)),
                Mode::Random(_, max) => {
                    let mut rest = bytes.as_slice();
                    while !rest.is_empty() {
                        rng ^= rng << 13;
                        rng ^= rng >> 7;
                        rng ^= rng << 17;
                        let n = (1 + (rng % max as u64) as usize).min(rest.len());
                        let (head, tail) = rest.split_at(n);
                        c.feed(*dir, head);
                        rest = tail;
                    }
                }
            },
            Seg::Gap(dir, len) => {
                c.held[slot(*dir)].clear();
                c.p.on_gap(*dir, *len);
            }
            Seg::Close(dir) => {
                let held = std::mem::take(&mut c.held[slot(*dir)]);
                c.p.close(*dir, &held);
            }
        }
        c.events.extend(c.p.take_events().into_iter().map(|e| (e.name, e.tx_id)));
    }
    c.events.sort();
    let out = Outcome { txs: c.p.txs().to_vec(), events: c.events, tunnel: c.p.tunnel(), stats: c.p.stats() };
    (out, c.max_held)
}

/// Runs every cut, checks they agree and the caller's buffer stayed within
/// one line, and returns the whole-stream outcome.
fn check_cfg(cfg: HttpConfig, segs: &[Seg], byte_mode: bool) -> Outcome {
    let (whole, held) = run(cfg, segs, Mode::Whole);
    let mut modes = vec![Mode::Random(7, 5), Mode::Random(99, 23), Mode::Random(12345, 700)];
    if byte_mode {
        modes.push(Mode::Bytes);
    }
    let mut max_held = held;
    for mode in modes {
        let (other, held) = run(cfg, segs, mode);
        max_held = max_held.max(held);
        if whole != other {
            let (a, b) = (format!("{whole:?}"), format!("{other:?}"));
            let at = a.bytes().zip(b.bytes()).position(|(x, y)| x != y).unwrap_or(0);
            let ctx = |s: &str| s.get(at.saturating_sub(100)..(at + 400).min(s.len())).unwrap_or("").to_string();
            panic!("a different cut gave different results\nwhole: ...{}\nother: ...{}", ctx(&a), ctx(&b));
        }
    }
    // Only a CONNECT awaiting its answer (or a tunnel) makes the caller keep more than a line.
    let connect = segs.iter().any(|s| matches!(s, Seg::Data(_, b) if b.windows(7).any(|w| w == b"CONNECT")));
    if !whole.tunnel && !connect {
        assert!(max_held <= cfg.max_header_bytes, "caller had to hold {max_held} bytes");
    }
    whole
}

fn check(segs: &[Seg]) -> Outcome {
    check_cfg(HttpConfig::default(), segs, true)
}

fn buf(tx: &HttpTx, (dir, id): (Direction, Buffer)) -> Option<&str> {
    tx.buffer(dir, id, 0).map(|b| std::str::from_utf8(b).expect("test buffers are text"))
}

fn has_event(o: &Outcome, name: &str) -> bool {
    o.events.iter().any(|(n, _)| *n == name)
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn with_body(head: &str, body: &[u8]) -> Vec<u8> {
    let mut v = head.as_bytes().to_vec();
    v.extend_from_slice(body);
    v
}

#[test]
fn simple_exchange_fills_every_buffer() {
    let o = check(&[
        // A plain request: host with a port, a cookie (kept out of http.header).
        c2s("GET /a/./b/../index.php?x=%41 HTTP/1.1\r\nHost: WWW.Example.com:8080\r\nUser-Agent: curl/8.0\r\n\
             Cookie: s=1\r\nAccept: */*\r\nAccept-Encoding: gzip\r\nAccept-Language: en\r\nReferer: http://r/\r\n\
             Connection: keep-alive\r\n\r\n"),
        s2c("HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Type: text/html; charset=utf-8\r\nSet-Cookie: id=2\r\n\
             Location: /next\r\nContent-Length: 5\r\n\r\nhello"),
    ]);
    assert_eq!(o.txs.len(), 1);
    let tx = &o.txs[0];
    assert!(tx.complete(ToServer) && tx.complete(ToClient));
    assert_eq!(buf(tx, (ToServer, Buffer::Uri)), Some("/a/index.php?x=A"));
    assert_eq!(buf(tx, (ToServer, Buffer::UriRaw)), Some("/a/./b/../index.php?x=%41"));
    assert_eq!(tx.uri_len(), Some(16));
    assert_eq!(buf(tx, (ToServer, Buffer::Method)), Some("GET"));
    assert_eq!(buf(tx, (ToServer, Buffer::Protocol)), Some("HTTP/1.1"));
    assert_eq!(buf(tx, (ToServer, Buffer::RequestLine)), Some("GET /a/./b/../index.php?x=%41 HTTP/1.1"));
    assert_eq!(buf(tx, (ToServer, Buffer::Host)), Some("www.example.com"));
    assert_eq!(buf(tx, (ToServer, Buffer::HostRaw)), Some("WWW.Example.com:8080"));
    assert_eq!(buf(tx, (ToServer, Buffer::UserAgent)), Some("curl/8.0"));
    assert_eq!(buf(tx, (ToServer, Buffer::Cookie)), Some("s=1"));
    assert_eq!(buf(tx, (ToServer, Buffer::Accept)), Some("*/*"));
    assert_eq!(buf(tx, (ToServer, Buffer::AcceptEnc)), Some("gzip"));
    assert_eq!(buf(tx, (ToServer, Buffer::AcceptLang)), Some("en"));
    assert_eq!(buf(tx, (ToServer, Buffer::Referer)), Some("http://r/"));
    assert_eq!(buf(tx, (ToServer, Buffer::Connection)), Some("keep-alive"));
    assert_eq!(
        buf(tx, (ToServer, Buffer::Header)),
        Some(
            "Host: WWW.Example.com:8080\r\nUser-Agent: curl/8.0\r\nAccept: */*\r\nAccept-Encoding: gzip\r\n\
             Accept-Language: en\r\nReferer: http://r/\r\nConnection: keep-alive\r\n"
        )
    );
    assert_eq!(
        buf(tx, (ToServer, Buffer::HeaderNames)),
        Some("\r\nHost\r\nUser-Agent\r\nCookie\r\nAccept\r\nAccept-Encoding\r\nAccept-Language\r\nReferer\r\nConnection\r\n\r\n")
    );
    let start = buf(tx, (ToServer, Buffer::Start)).unwrap();
    assert!(start.starts_with("GET /a/./b/../index.php?x=%41 HTTP/1.1\r\nHost: WWW.Example.com:8080\r\n"));
    assert!(start.contains("Cookie: s=1\r\n") && start.ends_with("Connection: keep-alive\r\n\r\n"));
    let raw = buf(tx, (ToServer, Buffer::HeaderRaw)).unwrap();
    assert!(raw.starts_with("Host: WWW.Example.com:8080\r\n") && raw.ends_with("keep-alive\r\n\r\n"));
    assert_eq!(buf(tx, (ToServer, Buffer::RequestBody)), None);
    assert_eq!(buf(tx, (ToServer, Buffer::ContentType)), None);
    assert_eq!(buf(tx, (ToClient, Buffer::StatCode)), Some("200"));
    assert_eq!(buf(tx, (ToClient, Buffer::StatMsg)), Some("OK"));
    assert_eq!(buf(tx, (ToClient, Buffer::ResponseLine)), Some("HTTP/1.1 200 OK"));
    assert_eq!(buf(tx, (ToClient, Buffer::Server)), Some("nginx"));
    assert_eq!(buf(tx, (ToClient, Buffer::Location)), Some("/next"));
    assert_eq!(buf(tx, (ToClient, Buffer::ContentType)), Some("text/html; charset=utf-8"));
    assert_eq!(buf(tx, (ToClient, Buffer::ContentLen)), Some("5"));
    assert_eq!(buf(tx, (ToClient, Buffer::Protocol)), Some("HTTP/1.1"));
    assert_eq!(buf(tx, (ToClient, Buffer::Cookie)), Some("id=2"));
    assert_eq!(buf(tx, (ToClient, Buffer::ResponseBody)), Some("hello"));
    let rh = buf(tx, (ToClient, Buffer::Header)).unwrap();
    assert!(rh.starts_with("Server: nginx\r\n") && !rh.contains("Set-Cookie"));
    assert!(buf(tx, (ToClient, Buffer::Start)).unwrap().starts_with("HTTP/1.1 200 OK\r\nServer: nginx\r\n"));
    assert!(buf(tx, (ToClient, Buffer::HeaderNames)).unwrap().contains("\r\nSet-Cookie\r\n"));
    assert!(buf(tx, (ToClient, Buffer::HeaderRaw)).unwrap().ends_with("Content-Length: 5\r\n\r\n"));
    assert_eq!(tx.buffer(Direction::ToServer, Buffer::Uri, 1), None, "single-valued buffers only answer index 0");
    assert_eq!((tx.status(), tx.response_body_len(), tx.port()), (Some(200), 5, Some(8080)));
    assert!(o.events.is_empty(), "{:?}", o.events);
}

#[test]
fn per_header_buffers_and_response_connection() {
    let o = check(&[
        c2s("GET / HTTP/1.1\r\nHost: h\r\nCookie: a=1\r\nX-A: 1\r\nx-a: 2\r\n\r\n"),
        s2c("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"),
    ]);
    let tx = &o.txs[0];
    let item = |(dir, id), i| tx.buffer(dir, id, i).map(|b| std::str::from_utf8(b).unwrap());
    // `http.request_header`: one `Name: value` per header, repeats joined, cookies included.
    assert_eq!(item((ToServer, Buffer::RequestHeader), 0), Some("Host: h"));
    assert_eq!(item((ToServer, Buffer::RequestHeader), 1), Some("Cookie: a=1"));
    assert_eq!(item((ToServer, Buffer::RequestHeader), 2), Some("X-A: 1, 2"));
    assert_eq!(item((ToServer, Buffer::RequestHeader), 3), None);
    assert_eq!(item((ToClient, Buffer::ResponseHeader), 0), Some("Connection: close"));
    assert_eq!(item((ToClient, Buffer::ResponseHeader), 1), Some("Content-Length: 0"));
    assert_eq!(buf(tx, (ToClient, Buffer::Connection)), Some("close"));
    assert_eq!(buf(tx, (ToServer, Buffer::Connection)), None, "the request named no Connection");

    // Before the headers are in, neither exists.
    let o = check(&[c2s("GET / HTTP/1.1\r\nHost: h\r\n")]);
    assert_eq!(o.txs[0].buffer(Direction::ToServer, Buffer::RequestHeader, 0), None);
}

#[test]
fn lines_after_a_response_are_more_of_its_body() {
    // libhtp's RES_FINALIZE: a CRLF (or any line that cannot start a status
    // line) after a Content-Length body belongs to that body; a status line
    // starts the next response as usual.
    let o = check(&[
        c2s("GET /1 HTTP/1.1\r\nHost: h\r\n\r\nGET /2 HTTP/1.1\r\nHost: h\r\n\r\n"),
        s2c("HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello World!\r\nmore\r\n"),
        s2c("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"),
    ]);
    assert_eq!(o.txs.len(), 2);
    assert!(o.txs[0].complete(ToClient));
    assert_eq!(buf(&o.txs[0], (ToClient, Buffer::ResponseBody)), Some("Hello World!\r\nmore\r\n"));
    assert_eq!(o.txs[0].response_body_len(), 20);
    assert_eq!(o.txs[0].response_message_len(), 20);
    assert_eq!(buf(&o.txs[1], (ToClient, Buffer::ResponseBody)), Some("hi"));
    assert_eq!(o.txs[1].status(), Some(200));

    // The response is complete as soon as its body is, before any such line.
    let mut p = HttpParser::new(HttpConfig::default());
    p.parse(ToServer, b"GET / HTTP/1.1\r\nHost: h\r\n\r\n");
    p.parse(ToClient, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi");
    assert!(p.txs()[0].complete(ToClient));

    // An HTTP/0.9 answer that follows is not taken for such a line.
    let o = check(&[
        c2s("GET /a HTTP/1.0\r\n\r\n"),
        s2c("HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx"),
        c2s("GET /09\r\n"),
        s2c("bare body\r\n"),
        Seg::Close(ToClient),
    ]);
    assert_eq!(buf(&o.txs[0], (ToClient, Buffer::ResponseBody)), Some("x"));
    assert_eq!(buf(&o.txs[1], (ToClient, Buffer::ResponseBody)), Some("bare body\r\n"));
}

#[test]
fn gaps_count_in_the_body_size_and_truncate_it() {
    let o = check(&[
        c2s("GET / HTTP/1.1\r\nHost: h\r\n\r\n"),
        s2c("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"),
        Seg::Gap(ToClient, 4),
        s2c("xyz"),
    ]);
    let tx = &o.txs[0];
    assert!(tx.complete(ToClient));
    assert_eq!((tx.response_body_len(), tx.body_bytes_lost(ToClient)), (10, 4));
    assert!(!tx.side_complete(ToClient));
}

#[test]
fn lenient_lines_folding_and_missing_colon() {
    let o = check(&[
        // Bare LF endings, extra spaces, a folded header, a line without colon,
        // repeated headers (joined), and a header value with trailing blanks.
        c2s("GET   /x    HTTP/1.0\nUser-Agent: A\n  B\nX-Rep: 1\nno colon here\nX-Rep: 2\nX-Pad: v  \t\n\n"),
        s2c("HTTP/1.0 204 No Content\n\n"),
    ]);
    let tx = &o.txs[0];
    assert_eq!(buf(tx, (ToServer, Buffer::Uri)), Some("/x"));
    assert_eq!(buf(tx, (ToServer, Buffer::UserAgent)), Some("A  B"));
    assert_eq!(tx.request_header("x-rep"), Some(&b"1, 2"[..]));
    assert_eq!(tx.request_header("x-pad"), Some(&b"v"[..]));
    assert_eq!(
        buf(tx, (ToServer, Buffer::Header)),
        Some("User-Agent: A  B\r\nX-Rep: 1, 2\r\n: no colon here\r\nX-Pad: v\r\n")
    );
    assert!(has_event(&o, "http.request_field_missing_colon"));
    assert!(!has_event(&o, "http.missing_host_header"), "HTTP/1.0 needs no Host");
    assert!(tx.complete(ToClient));
    assert_eq!(buf(tx, (ToClient, Buffer::ResponseBody)), None);

    // Folding with nothing to fold into, a name with a space before the colon.
    let o = check(&[c2s("GET / HTTP/1.1\r\n folded: first\r\nBad Name : x\r\nHost: h\r\n\r\n")]);
    assert!(has_event(&o, "http.invalid_request_field_folding"));
    assert!(has_event(&o, "http.request_header_invalid"));
}

#[test]
fn http09_simple_request_and_close_delimited_response() {
    let o = check(&[
        // No protocol: no headers follow, and the response has no status line.
        c2s("GET /old.html\r\n"),
        s2c("<html>\r\nancient\r\n</html>"),
        Seg::Close(ToClient),
    ]);
    let tx = &o.txs[0];
    assert!(tx.is_http09());
    assert_eq!(buf(tx, (ToServer, Buffer::Protocol)), None);
    assert_eq!(buf(tx, (ToClient, Buffer::ResponseBody)), Some("<html>\r\nancient\r\n</html>"));
    assert_eq!(buf(tx, (ToClient, Buffer::ResponseLine)), None);
    assert!(tx.complete(ToServer) && tx.complete(ToClient));
    assert!(has_event(&o, "http.request_line_missing_protocol"));
}

#[test]
fn the_end_of_the_stream_finishes_unfinished_lines() {
    // No line end before the client and the server close: what was kept
    // is the whole line (an HTTP/0.9 request, and a reply without status).
    let o = check(&[c2s("GET /"), s2c("<html>hi</html>"), Seg::Close(ToServer), Seg::Close(ToClient)]);
    let tx = &o.txs[0];
    assert_eq!((buf(tx, (ToServer, Buffer::Uri)), tx.is_http09()), (Some("/"), true));
    assert_eq!(buf(tx, (ToClient, Buffer::ResponseBody)), Some("<html>hi</html>"));
    assert!(tx.complete(ToServer) && tx.complete(ToClient));

    // A body cut short by the close still completes the transaction.
    let o = check(&[
        c2s("GET / HTTP/1.1\r\nHost: h\r\n\r\n"),
        s2c("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"),
        Seg::Close(ToClient),
    ]);
    assert!(o.txs[0].complete(ToClient));
    assert_eq!(buf(&o.txs[0], (ToClient, Buffer::ResponseBody)), Some("abc"));
}

#[test]
fn pipelined_requests_match_responses_in_order() {
    let o = check(&[
        c2s("GET /1 HTTP/1.1\r\nHost: a\r\n\r\nHEAD /2 HTTP/1.1\r\nHost: a\r\n\r\n\r\n\
             POST /3 HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\nbodyGET /4 HTTP/1.1\r\nHost: a\r\n\r\n"),
        // The HEAD response announces a length but carries no body.
        s2c("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nA\
             HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n\
             HTTP/1.1 201 Created\r\nContent-Length: 3\r\n\r\nCCC\
             HTTP/1.1 304 Not Modified\r\n\r\n"),
    ]);
    let uris: Vec<_> = o.txs.iter().map(|t| buf(t, (ToServer, Buffer::Uri))).collect();
    assert_eq!(uris, [Some("/1"), Some("/2"), Some("/3"), Some("/4")]);
    let status: Vec<_> = o.txs.iter().map(HttpTx::status).collect();
    assert_eq!(status, [Some(200), Some(200), Some(201), Some(304)]);
    assert_eq!(buf(&o.txs[0], (ToClient, Buffer::ResponseBody)), Some("A"));
    assert_eq!(buf(&o.txs[1], (ToClient, Buffer::ResponseBody)), None);
    assert_eq!(buf(&o.txs[2], (ToServer, Buffer::RequestBody)), Some("body"));
    assert_eq!(buf(&o.txs[2], (ToClient, Buffer::ResponseBody)), Some("CCC"));
    assert!(o.txs.iter().all(|t| t.complete(ToServer) && t.complete(ToClient)));
    assert_eq!(o.txs.iter().map(HttpTx::id).collect::<Vec<_>>(), [0, 1, 2, 3]);

    // libhtp reads a body after 204/304 when one is announced anyway (browsers do).
    let o = check(&[
        c2s("GET / HTTP/1.1\r\nHost: a\r\n\r\n"),
        s2c("HTTP/1.1 204 No Content\r\nContent-Length: 4\r\n\r\nbody"),
    ]);
    assert_eq!(buf(&o.txs[0], (ToClient, Buffer::ResponseBody)), Some("body"));
}

#[test]
fn chunked_bodies_with_extensions_and_trailers() {
    let o = check(&[
        c2s("POST /up HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n\
             5;name=val\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n"),
        s2c("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\nA\r\n0123456789\r\n0\r\n\r\n"),
    ]);
    let tx = &o.txs[0];
    assert_eq!(buf(tx, (ToServer, Buffer::RequestBody)), Some("hello world"));
    assert_eq!(tx.request_body_len(), 11);
    // Trailers join the header table, as libhtp does.
    assert_eq!(tx.request_header("x-trailer"), Some(&b"t"[..]));
    assert!(buf(tx, (ToServer, Buffer::Header)).unwrap().ends_with("X-Trailer: t\r\n"));
    assert_eq!(buf(tx, (ToClient, Buffer::ResponseBody)), Some("abc0123456789"));
    // Size lines, data, CRLFs and the last chunk's size line; not the
    // trailer section (libhtp's count, which Suricata's `length` is).
    assert_eq!(tx.response_message_len(), 3 + 5 + 3 + 12 + 3);
    assert!(tx.complete(ToServer) && tx.complete(ToClient));
    assert!(o.events.is_empty(), "{:?}", o.events);
}

#[test]
fn close_delimited_response_completes_on_close() {
    let segs = [
        c2s("GET / HTTP/1.1\r\nHost: h\r\n\r\n"),
        s2c("HTTP/1.1 200 OK\r\nServer: x\r\n\r\npart one, "),
        s2c("part two"),
    ];
    let o = check(&segs);
    assert!(!o.txs[0].complete(ToClient), "no length: the body runs until the connection closes");
    let mut closed = segs.to_vec();
    closed.push(Seg::Close(ToClient));
    let o = check(&closed);
    assert!(o.txs[0].complete(ToClient));
    assert_eq!(buf(&o.txs[0], (ToClient, Buffer::ResponseBody)), Some("part one, part two"));
    assert_eq!(o.txs[0].eve().length, 18);
}

#[test]
fn interim_responses_do_not_end_the_transaction() {
    let o = check(&[
        c2s("POST /form HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n"),
        s2c("HTTP/1.1 100 Continue\r\n\r\n"),
        c2s("a=b"),
        s2c("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\nServer: s\r\n\r\n"),
        c2s("GET /next HTTP/1.1\r\nHost: h\r\n\r\n"),
        s2c("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"),
    ]);
    assert_eq!(o.txs.len(), 2);
    let tx = &o.txs[0];
    assert_eq!(tx.status(), Some(204));
    assert_eq!(buf(tx, (ToClient, Buffer::ResponseLine)), Some("HTTP/1.1 204 No Content"));
    assert_eq!(buf(tx, (ToServer, Buffer::RequestBody)), Some("a=b"));
    assert_eq!(o.txs[1].status(), Some(404));
    assert!(has_event(&o, "http.100_continue_already_seen"));

    // A 4xx to `Expect: 100-continue` means the body never comes; a "100"
    // that announces a body is a final response (both as libhtp decides).
    let o = check(&[
        c2s("PUT /big HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 999\r\n\r\n"),
        s2c("HTTP/1.1 417 Expectation Failed\r\nContent-Length: 0\r\n\r\n"),
        c2s("GET /next HTTP/1.1\r\nHost: h\r\n\r\n"),
        s2c("HTTP/1.1 100 Continue\r\nContent-Length: 2\r\n\r\nhi"),
    ]);
    assert_eq!(o.txs.len(), 2);
    assert!(o.txs[0].complete(ToServer));
    assert_eq!(buf(&o.txs[1], (ToServer, Buffer::Uri)), Some("/next"));
    assert_eq!((o.txs[1].status(), buf(&o.txs[1], (ToClient, Buffer::ResponseBody))), (Some(100), Some("hi")));
}

#[test]
fn gzip_and_deflate_bodies_are_decoded() {
    let page = b"<html>compressed page body</html>".repeat(20);
    let mut d = DeflateEncoder::new(Vec::new(), Compression::default());
    d.write_all(b"name=value&other=1").unwrap();
    let deflated = d.finish().unwrap();
    let gz = gzip(&page);
    let o = check(&[
        c2s(with_body(
            &format!(
                "POST /p HTTP/1.1\r\nHost: h\r\nContent-Encoding: deflate\r\nContent-Length: {}\r\n\r\n",
                deflated.len()
            ),
            &deflated,
        )),
        s2c(with_body(
            &format!("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: {}\r\n\r\n", gz.len()),
            &gz,
        )),
    ]);
    let tx = &o.txs[0];
    assert_eq!(buf(tx, (ToServer, Buffer::RequestBody)), Some("name=value&other=1"));
    assert_eq!(tx.response_body_len(), page.len() as u64);
    assert_eq!(tx.buffer(Direction::ToClient, Buffer::ResponseBody, 0), Some(page.as_slice()));
    assert_eq!(tx.eve().length, gz.len() as u64, "EVE length counts wire bytes");
    assert!(o.events.is_empty(), "{:?}", o.events);

    // A body that claims gzip but is not: reported and passed through.
    let o = check(&[
        c2s("GET / HTTP/1.1\r\nHost: h\r\n\r\n"),
        s2c("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 14\r\n\r\nnot compressed"),
    ]);
    assert!(has_event(&o, "http.gzip_decompression_failed"));

    // suricata-verify http-encoding-gzip-uncompressed: JSON labelled gzip. Read as deflate it
    // gives garbage before an error; the request body must be the JSON as sent.
    let json =
        r#"{"sdk_version":11026,"app_package":"com.xcm.huasheng","app_version":"1.7.4","device_id":"350672920106648"}"#;
    let o = check(&[c2s(format!(
        "POST /api/sdk/init2 HTTP/1.1\r\nContent-Encoding: gzip\r\nHost: h\r\nContent-Length: {}\r\n\r\n{json}",
        json.len()
    ))]);
    assert_eq!(buf(&o.txs[0], (ToServer, Buffer::RequestBody)), Some(json));

    // Raw deflate labelled gzip, cut before its last block: the retry's output is held until
    // the body ends, then kept.
    let mut d = DeflateEncoder::new(Vec::new(), Compression::default());
    d.write_all(&page).unwrap();
    let mut deflated = d.finish().unwrap();
    deflated.truncate(deflated.len() - 4);
    let o = check(&[
        c2s("GET / HTTP/1.1\r\nHost: h\r\n\r\n"),
        s2c(with_body(
            &format!("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: {}\r\n\r\n", deflated.len()),
            &deflated,
        )),
    ]);
    let body = o.txs[0].buffer(Direction::ToClient, Buffer::ResponseBody, 0).unwrap_or_default();
    assert!(!body.is_empty() && page.starts_with(body), "{body:?}");
}

#[test]
fn connect_and_upgrade_end_http_parsing() {
    let o = check(&[
        c2s("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"),
        s2c("HTTP/1.1 200 Connection established\r\n\r\n"),
        c2s(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"),
        s2c(b"\x16\x03\x03\x00\x7a\x02"),
    ]);
    assert!(o.tunnel);
    assert_eq!(o.txs.len(), 1);
    let tx = &o.txs[0];
    assert_eq!((buf(tx, (ToServer, Buffer::Method)), tx.status()), (Some("CONNECT"), Some(200)));
    assert_eq!(buf(tx, (ToServer, Buffer::Host)), Some("example.com"));
    assert_eq!(tx.port(), Some(443));
    assert!(tx.complete(ToServer) && tx.complete(ToClient));

    // A refused CONNECT leaves the flow HTTP: the next request is parsed.
    let o = check(&[
        c2s("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com\r\n\r\n"),
        s2c("HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 4\r\n\r\ndeny"),
        c2s("GET / HTTP/1.1\r\nHost: h\r\n\r\n"),
        s2c("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"),
    ]);
    assert!(!o.tunnel);
    assert_eq!(o.txs.iter().map(HttpTx::status).collect::<Vec<_>>(), [Some(407), Some(200)]);

    let o = check(&[
        c2s("GET /chat HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"),
        s2c(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n\x81\x05hello"),
        c2s(b"\x81\x85\x00\x00\x00\x00hello"),
    ]);
    assert!(o.tunnel);
    assert_eq!(o.txs.len(), 1);
    assert_eq!(o.txs[0].status(), Some(101));

    // A 101 that still announces a body is an ordinary response to libhtp.
    let o = check(&[
        c2s("GET / HTTP/1.1\r\nHost: h\r\n\r\n"),
        s2c("HTTP/1.1 101 Switching Protocols\r\nContent-Length: 3\r\n\r\nabc"),
    ]);
    assert!(!o.tunnel);
    assert_eq!(buf(&o.txs[0], (ToClient, Buffer::ResponseBody)), Some("abc"));
}

#[test]
fn tunnel_leaves_the_bytes_after_the_switch_to_the_caller() {
    let mut p = HttpParser::new(HttpConfig::default());
    p.parse(ToServer, b"GET / HTTP/1.1\r\nHost: h\r\nUpgrade: h2c\r\n\r\n");
    let resp = b"HTTP/1.1 101 Switching Protocols\r\n\r\nPRI-bytes";
    let r = p.parse(ToClient, resp);
    assert_eq!(r, ParseResult::Incomplete { consumed: resp.len() - 9, needed: 1 });
    assert!(p.tunnel());
    assert_eq!(p.parse(ToClient, b"PRI-bytes"), ParseResult::Done);
}

#[test]
fn absolute_uri_and_host_resolution() {
    let o = check(&[c2s(
        "GET http://User@Example.COM:8080/a/%2e%2e/b/?q=%41#frag HTTP/1.1\r\nHost: other.example\r\n\r\n",
    )]);
    let tx = &o.txs[0];
    assert_eq!(buf(tx, (ToServer, Buffer::Uri)), Some("/b/?q=A#frag"));
    assert_eq!(buf(tx, (ToServer, Buffer::UriRaw)), Some("http://User@Example.COM:8080/a/%2e%2e/b/?q=%41#frag"));
    assert_eq!(buf(tx, (ToServer, Buffer::Host)), Some("example.com"));
    assert_eq!(buf(tx, (ToServer, Buffer::HostRaw)), Some("Example.COM"));
    assert_eq!(tx.port(), Some(8080));
    assert!(has_event(&o, "http.host_header_ambiguous"));

    // HTTP/1.1 without Host, an invalid Host, an out-of-range port.
    let o = check(&[c2s(
        "GET / HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\nHost: bad host!\r\n\r\nGET / HTTP/1.1\r\nHost: h:70000\r\n\r\n",
    )]);
    assert!(has_event(&o, "http.missing_host_header"));
    assert!(has_event(&o, "http.request_header_host_invalid"));
    assert!(has_event(&o, "http.invalid_server_port_in_request"));
    assert_eq!(buf(&o.txs[0], (ToServer, Buffer::Host)), None);
}

#[test]
fn uri_with_spaces_and_odd_delimiters() {
    let o =
        check(&[c2s(" GET\t/uri afterspace HTTP/1.1\r\nHost: h\r\n\r\nGET /%252e%252e/x HTTP/1.1\r\nHost: h\r\n\r\n")]);
    assert_eq!(buf(&o.txs[0], (ToServer, Buffer::Uri)), Some("/uri afterspace"));
    assert_eq!(buf(&o.txs[1], (ToServer, Buffer::Uri)), Some("/%2e%2e/x"));
    assert!(has_event(&o, "http.request_line_leading_whitespace"));
    assert!(has_event(&o, "http.method_delim_non_compliant"));
    assert!(has_event(&o, "http.double_encoded_uri"));
}

/// Response-side leniency that browsers have and libhtp copies, so that
/// what a browser would see is what gets inspected.
#[test]
fn lenient_response_framing() {
    let eicar_like = "4\r\nX5O!\r\n4\r\nP%@A\r\n0\r\n\r\n";
    let cases: &[&[u8]] = &[
        // Header lines ended by a lone CR, by LF CR, by the deformed CR LF CR CR LF.
        b"HTTP/1.1 200 ok\rTransfer-Encoding: chunked\r\n\r\n",
        b"HTTP/1.1 200 ok\n\rX: y\n\rTransfer-Encoding: chunked\n\r\n",
        b"HTTP/1.1 200 ok\r\nX: y\r\n\r\r\nTransfer-Encoding: chunked\r\n\r\n",
        // An indented line that is a header of its own, not a continuation.
        b"HTTP/1.1 200 ok\r\nX: y\r\n Transfer-Encoding: chunked\r\n\r\n",
        // NULs and odd bytes around the name, a value that only contains the token.
        b"HTTP/1.1 200 ok\r\nTransfer\0-Encoding\x0b: x-chunked\0\r\n\r\n",
        // Chunked on HTTP/1.0, and an invalid protocol.
        b"HTTP/1.0 200 ok\r\nTransfer-Encoding: chunked\r\n\r\n",
        b"HTTP/1.1foo 200 ok\r\nTransfer-Encoding: chunked\r\n\r\n",
        // A stray line before the status line.
        b"foobar\r\nHTTP/1.1 200 ok\r\nTransfer-Encoding: chunked\r\n\r\n",
    ];
    for head in cases {
        let o = check(&[c2s("GET / HTTP/1.1\r\nHost: h\r\n\r\n"), s2c(with_body_bytes(head, eicar_like.as_bytes()))]);
        let label = String::from_utf8_lossy(head);
        assert_eq!(buf(&o.txs[0], (ToClient, Buffer::ResponseBody)), Some("X5O!P%@A"), "{label}");
    }

    // A chunk size that cannot be one, even before its line ends: the rest is body.
    let o = check(&[
        c2s("GET / HTTP/1.1\r\nHost: h\r\n\r\n"),
        s2c("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 10\r\n\r\nX5O!P%@AP["),
    ]);
    assert_eq!(buf(&o.txs[0], (ToClient, Buffer::ResponseBody)), Some("X5O!P%@AP["));
    assert!(has_event(&o, "http.invalid_response_chunk_len"));
}

fn with_body_bytes(head: &[u8], body: &[u8]) -> Vec<u8> {
    let mut v = head.to_vec();
    v.extend_from_slice(body);
    v
}

#[test]
fn unmatched_and_non_http_responses() {
    let o = check(&[s2c("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")]);
    assert_eq!(o.txs.len(), 1);
    assert!(has_event(&o, "http.unable_to_match_response_to_request"));
    assert_eq!(buf(&o.txs[0], (ToServer, Buffer::RequestLine)), None);
    assert_eq!(buf(&o.txs[0], (ToClient, Buffer::ResponseBody)), Some("ok"));

    // A reply that is not a status line is body until close.
    let o = check(&[c2s("GET / HTTP/1.1\r\nHost: h\r\n\r\n"), s2c("garbage reply\r\nmore"), Seg::Close(ToClient)]);
    assert_eq!(buf(&o.txs[0], (ToClient, Buffer::ResponseBody)), Some("garbage reply\r\nmore"));
    assert!(o.txs[0].complete(ToClient));

    // A status that is not a number, an unknown protocol.
    let o = check(&[c2s("GET / HTTP/1.1\r\nHost: h\r\n\r\n"), s2c("HTTP/9.9 2XX Fine\r\nContent-Length: 0\r\n\r\n")]);
    let eve = o.txs[0].eve();
    assert_eq!((eve.status, eve.status_string.as_deref()), (None, Some("2XX")));
    assert!(has_event(&o, "http.response_invalid_status"));
    assert!(has_event(&o, "http.response_invalid_protocol"));
}

#[test]
fn framing_anomalies() {
    // An invalid chunk length: the rest is body until close.
    let o = check(&[
        c2s("GET / HTTP/1.1\r\nHost: h\r\n\r\n"),
        s2c("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nrest"),
        Seg::Close(ToClient),
    ]);
    assert!(has_event(&o, "http.invalid_response_chunk_len"));
    assert_eq!(buf(&o.txs[0], (ToClient, Buffer::ResponseBody)), Some("zz\r\nrest"));

    let o = check(&[c2s("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nxyz\r\n")]);
    assert!(has_event(&o, "http.invalid_request_chunk_len"));

    let o = check(&[
        c2s("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: abc\r\n\r\nPOST / HTTP/1.1\r\nHost: h\r\n\
             Content-Length: 1\r\nContent-Length: 2\r\n\r\nx"),
        s2c("HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
    ]);
    assert!(has_event(&o, "http.invalid_content_length_field_in_request"));
    assert!(has_event(&o, "http.duplicate_content_length_field_in_request"));
    assert!(has_event(&o, "http.response_chunked_old_proto"));
    assert_eq!(o.txs.len(), 2, "the bad length means no body, so the next request parses");
    assert_eq!(buf(&o.txs[1], (ToServer, Buffer::RequestBody)), Some("x"), "the first length wins");

    let o = check(&[c2s("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\nContent-Encoding: rot13\r\n\r\n")]);
    assert!(has_event(&o, "http.invalid_transfer_encoding_value_in_request"));
    assert!(has_event(&o, "http.abnormal_ce_header"));
}

#[test]
fn gaps_in_bodies_are_accounted_elsewhere_resync() {
    let o = check(&[
        c2s("POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nabc"),
        Seg::Gap(ToServer, 4),
        c2s("xyzGET /b HTTP/1.1\r\nHost: h\r\n\r\n"),
        s2c("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n"),
        Seg::Gap(ToClient, 4),
        s2c("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"),
    ]);
    assert_eq!(o.txs.len(), 2);
    assert_eq!(buf(&o.txs[0], (ToServer, Buffer::RequestBody)), Some("abcxyz"));
    assert_eq!(o.txs[0].body_bytes_lost(ToServer), 4);
    // Like a Suricata file, the body's size counts the bytes the gap took.
    assert_eq!(o.txs[0].request_body_len(), 10);
    assert!(!o.txs[0].side_complete(ToServer), "a body with a hole is logged as truncated");
    assert_eq!(o.txs[0].body_bytes_lost(ToClient), 4);
    assert_eq!(buf(&o.txs[1], (ToServer, Buffer::Uri)), Some("/b"));
    assert!(o.txs[1].complete(ToClient));

    // A gap in the headers gives the request up; parsing resumes at the next request line.
    let o = check(&[
        c2s("GET /first HTTP/1.1\r\nHost: h\r\nX-Long: aaa"),
        Seg::Gap(ToServer, 100),
        c2s("aaaa\r\n\r\njunk line\r\nGET /second HTTP/1.1\r\nHost: h\r\n\r\n"),
    ]);
    assert_eq!(o.txs.len(), 2);
    assert!(o.txs[0].complete(ToServer));
    assert_eq!(buf(&o.txs[1], (ToServer, Buffer::Uri)), Some("/second"));
    assert_eq!(o.stats.gaps, 1);
}

#[test]
fn limits_hold_for_huge_lines_endless_chunks_and_bombs() {
    // A 1 MB header line: cut, reported, skipped; the request still completes.
    let mut req = b"GET /big HTTP/1.1\r\nHost: h\r\nX-Big: ".to_vec();
    req.extend(std::iter::repeat_n(b'A', 1 << 20));
    req.extend_from_slice(b"\r\nUser-Agent: after\r\n\r\n");
    let cfg = HttpConfig::default();
    let o = check_cfg(cfg, &[c2s(&req)], false);
    let tx = &o.txs[0];
    assert!(tx.complete(ToServer));
    assert_eq!(tx.request_header("x-big"), None);
    assert_eq!(buf(tx, (ToServer, Buffer::UserAgent)), Some("after"));
    assert!(has_event(&o, "http.request_field_too_long"));
    assert_eq!(o.stats.lines_truncated, 1);
    assert!(buf(tx, (ToServer, Buffer::HeaderRaw)).unwrap().len() <= cfg.max_header_bytes);

    // The same with a small limit, byte by byte too; a huge request line is cut but keeps its method.
    let small = HttpConfig { max_header_bytes: 256, ..HttpConfig::default() };
    let mut line = b"GET /".to_vec();
    line.extend(std::iter::repeat_n(b'u', 5000));
    line.extend_from_slice(b" HTTP/1.1\r\nHost: h\r\n\r\n");
    let o = check_cfg(small, &[c2s(&line), s2c("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")], true);
    assert_eq!(o.txs.len(), 1);
    assert_eq!(buf(&o.txs[0], (ToServer, Buffer::Method)), Some("GET"));
    assert_eq!(o.txs[0].raw_uri_len(), Some(252));
    assert!(o.txs[0].complete(ToClient));

    // An endless chunked body: 5 MB in 1 KB chunks, only the limit is kept.
    let mut body = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    for _ in 0..5 * 1024 {
        body.extend_from_slice(b"400\r\n");
        body.extend(std::iter::repeat_n(b'z', 1024));
        body.extend_from_slice(b"\r\n");
    }
    let o = check_cfg(cfg, &[c2s("GET / HTTP/1.1\r\nHost: h\r\n\r\n"), s2c(&body)], false);
    let tx = &o.txs[0];
    assert!(!tx.complete(ToClient));
    assert_eq!(tx.response_body_len(), 5 << 20);
    assert_eq!(tx.buffer(Direction::ToClient, Buffer::ResponseBody, 0).map(<[u8]>::len), Some(cfg.response_body_limit));

    // A gzip bomb: 16 MB of zeros gzipped twice fits in a few hundred bytes
    // (one deflate layer cannot pass a ratio of ~1000). Decoding stops at the cap.
    let bomb = gzip(&gzip(&vec![0u8; 16 << 20]));
    let resp = with_body(
        &format!("HTTP/1.1 200 OK\r\nContent-Encoding: gzip, gzip\r\nContent-Length: {}\r\n\r\n", bomb.len()),
        &bomb,
    );
    let o = check_cfg(cfg, &[c2s("GET / HTTP/1.1\r\nHost: h\r\n\r\n"), s2c(&resp)], false);
    let tx = &o.txs[0];
    assert!(tx.complete(ToClient));
    assert_eq!(tx.response_body_len(), cfg.decompress_limit as u64);
    assert_eq!(tx.buffer(Direction::ToClient, Buffer::ResponseBody, 0).map(<[u8]>::len), Some(cfg.response_body_limit));
    assert!(has_event(&o, "http.compression_bomb"));
}

#[test]
fn header_budgets_and_counts() {
    let cfg = HttpConfig { max_headers: 3, ..HttpConfig::default() };
    let o = check_cfg(
        cfg,
        &[c2s("GET / HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: 2\r\nC: 3\r\nContent-Length: 2\r\n\r\nok")],
        true,
    );
    let tx = &o.txs[0];
    assert!(has_event(&o, "http.request_too_many_headers"));
    assert_eq!(tx.request_headers().len(), 4, "three kept, plus the framing header");
    assert_eq!(buf(tx, (ToServer, Buffer::RequestBody)), Some("ok"));

    let many: String = (0..80).map(|_| "X-Same: v\r\n").collect();
    let o = check(&[c2s(format!("GET / HTTP/1.1\r\nHost: h\r\n{many}\r\n"))]);
    assert!(has_event(&o, "http.request_header_repetition"));
}

#[test]
fn transaction_bound_evicts_the_oldest() {
    let cfg = HttpConfig { max_txs: 2, ..HttpConfig::default() };
    let reqs: String = (0..5).map(|i| format!("GET /{i} HTTP/1.1\r\nHost: h\r\n\r\n")).collect();
    let resps: String = (0..5).map(|i| format!("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n{i}")).collect();
    let o = check_cfg(cfg, &[c2s(reqs), s2c(resps)], true);
    assert_eq!(o.stats.txs_evicted, 3);
    assert_eq!(o.txs.iter().map(HttpTx::id).collect::<Vec<_>>(), [3, 4]);
    assert_eq!(buf(&o.txs[1], (ToClient, Buffer::ResponseBody)), Some("4"), "responses still pair in order");
}

#[test]
fn prune_and_events_carry_tx_ids() {
    let mut p = HttpParser::new(HttpConfig::default());
    p.parse(ToServer, b"GET / HTTP/1.1\r\n\r\nGET /2 HTTP/1.1\r\nHost: h\r\n\r\n");
    let evs = p.take_events();
    assert_eq!(evs.len(), 1);
    assert_eq!((evs[0].name, evs[0].tx_id), ("http.missing_host_header", Some(0)));
    assert!(p.take_events().is_empty(), "drained");
    p.prune(1);
    assert_eq!(p.txs().iter().map(HttpTx::id).collect::<Vec<_>>(), [1]);
}

#[test]
fn eve_uses_suricata_names_and_types() {
    let o = check(&[
        c2s(b"GET /index.php?a=1 HTTP/1.1\r\nHost: www.example.com:8080\r\nUser-Agent: UA\xff\r\nReferer: /r\r\n\r\n"),
        s2c("HTTP/1.1 302 Found\r\nLocation: /index.php?page=main.php\r\nContent-Type: text/html; charset=UTF-8\r\n\
             Content-Range: bytes 0-1/2\r\nContent-Length: 2\r\n\r\nhi"),
    ]);
    let v = serde_json::to_value(o.txs[0].eve()).unwrap();
    let want = serde_json::json!({
        "hostname": "www.example.com",
        "http_port": 8080,
        "url": "/index.php?a=1",
        "http_user_agent": "UA\\xff",
        "http_content_type": "text/html",
        "content_range": {"raw": "bytes 0-1/2", "start": 0, "end": 1, "size": 2},
        "http_refer": "/r",
        "http_method": "GET",
        "protocol": "HTTP/1.1",
        "status": 302,
        "redirect": "/index.php?page=main.php",
        "length": 2
    });
    assert_eq!(v, want);
    let full = serde_json::to_value(o.txs[0].eve_with_headers()).unwrap();
    assert_eq!(full["request_headers"][0], serde_json::json!({"name": "Host", "value": "www.example.com:8080"}));
    assert_eq!(full["response_headers"].as_array().map(Vec::len), Some(4));
    // Nothing absent is written, but `length` always is.
    let o = check(&[c2s("GET /x HTTP/1.0\r\n\r\n")]);
    assert_eq!(
        serde_json::to_value(o.txs[0].eve()).unwrap(),
        serde_json::json!({"url": "/x", "http_method": "GET", "protocol": "HTTP/1.0", "length": 0})
    );
}

#[test]
fn probing() {
    assert_eq!(probe(b"GET / HTTP/1.1\r\n", ToServer), Probe::Match);
    assert_eq!(probe(b"post /x", ToServer), Probe::Match);
    assert_eq!(probe(b"PROPFIND\t/", ToServer), Probe::Match);
    assert_eq!(probe(b"GE", ToServer), Probe::NeedMore);
    assert_eq!(probe(b"GET", ToServer), Probe::NeedMore);
    assert_eq!(probe(b"", ToServer), Probe::NeedMore);
    assert_eq!(probe(b"GETX /", ToServer), Probe::NoMatch);
    assert_eq!(probe(b"\x16\x03\x01", ToServer), Probe::NoMatch);
    assert_eq!(probe(b"HTTP/1.1 200 OK", ToClient), Probe::Match);
    assert_eq!(probe(b"HTT", ToClient), Probe::NeedMore);
    assert_eq!(probe(b"SSH-2.0", ToClient), Probe::NoMatch);
}

/// Streams stitched at random from HTTP-ish pieces (valid, broken and
/// hostile): whatever they mean, every cut must agree.
#[test]
fn random_conversations_do_not_depend_on_the_cut() {
    const REQ: &[&[u8]] = &[
        b"GET / HTTP/1.1\r\nHost: h\r\n\r\n",
        b"POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\n",
        b"PUT /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
        b"4\r\nabcd\r\n",
        b"0\r\nT: 1\r\n\r\n",
        b"hello",
        b"CONNECT h:443 HTTP/1.1\r\n\r\n",
        b"GET /09\r\n",
        b"X-Fold: a\r\n b\r\n",
        b"\r\n",
        b"junk without newline ",
        b"Content-Encoding: gzip\r\n",
        b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03",
        b"zz\r\n",
        b"Transfer\0-Encoding: x-chunked\r\n",
        b"Expect: 100-continue\r\n",
        b"X: a\n \n",
        b"\r",
    ];
    const RES: &[&[u8]] = &[
        b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc",
        b"HTTP/1.1 100 Continue\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
        b"3\r\nxyz\r\n0\r\n\r\n",
        b"HTTP/1.1 101 Switching Protocols\r\n\r\n",
        b"HTTP/1.0 200 OK\r\n\r\nclose-delimited",
        b"HTTP/1.1 204 No Content\r\n\r\n",
        b"Content-Encoding: deflate\r\n",
        b"<html>",
        b"\r\n",
        b"\r",
        b"\n\r",
        b"ok\r\n\r\r\nX: y",
        b"HTTP/1.1 100 Continue\r\nContent-Length: 2\r\n\r\nhi",
        b"HTTP/1.1 417 Expectation Failed\rServer: s\n\r\r\n\r\n",
        b"junk that is not a status line at all, long enough\r\n",
        b"SIP/2.0 200 OK\r\n",
        b"\0HTTP/1.0 200 ok\r\nX: a\r\n\0b\r\n\r\n",
    ];
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let cfg = HttpConfig { max_header_bytes: 64, max_txs: 8, request_body_limit: 16, ..HttpConfig::default() };
    for _ in 0..1000 {
        let mut segs = Vec::new();
        for _ in 0..(next() % 8) {
            let (dir, pool) = if next() % 2 == 0 { (ToServer, REQ) } else { (ToClient, RES) };
            let mut bytes = Vec::new();
            for _ in 0..=(next() % 4) {
                bytes.extend_from_slice(pool[(next() % pool.len() as u64) as usize]);
            }
            segs.push(Seg::Data(dir, bytes));
            match next() % 16 {
                0 => segs.push(Seg::Gap(dir, next() % 20)),
                1 => segs.push(Seg::Close(dir)),
                _ => {}
            }
        }
        check_cfg(cfg, &segs, true);
    }
}

fn file_cfg() -> HttpConfig {
    let files = crate::files::FileConfig {
        md5: true,
        sha1: true,
        sha256: true,
        keep: true,
        store_all: true,
        ..Default::default()
    };
    HttpConfig { files, ..HttpConfig::default() }
}

fn chunked(data: &[u8], piece: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for c in data.chunks(piece) {
        out.extend_from_slice(format!("{:x}\r\n", c.len()).as_bytes());
        out.extend_from_slice(c);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"0\r\n\r\n");
    out
}

/// Response bodies and POST and PUT bodies are files: named, sized and hashed on the
/// decoded bytes, the same however the stream is cut (the harness compares
/// every cut's files, digests and held bytes included).
#[test]
fn bodies_are_files_hashed_alike_however_cut() {
    use crate::files::{hex, FileState};
    use md5::Digest;
    let body: Vec<u8> = (0..3000u32).map(|i| (i * 31 % 251) as u8).collect();
    let head = "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Disposition: attachment; filename=\"r.pdf\"\r\nTransfer-Encoding: chunked\r\n\r\n";
    let o = check_cfg(
        file_cfg(),
        &[
            c2s("PUT /up/load.bin?v=2 HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello"),
            s2c(with_body(head, &chunked(&gzip(&body), 700))),
            c2s("POST /form HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc"),
            s2c("HTTP/1.1 204 No Content\r\n\r\n"),
        ],
        false,
    );
    let put = &o.txs[0];
    let up = &put.files(ToServer)[0];
    assert_eq!((up.name.as_slice(), up.size, up.state), (&b"/up/load.bin"[..], 5, FileState::Closed));
    assert_eq!(hex(&up.hashes.md5.unwrap()), "5d41402abc4b2a76b9719d911017c592");
    let down = &put.files(ToClient)[0];
    assert_eq!((down.name.as_slice(), down.size, down.gaps), (&b"r.pdf"[..], 3000, false));
    assert_eq!(down.hashes.md5.unwrap(), <[u8; 16]>::from(md5::Md5::digest(&body)));
    assert_eq!(down.kept, body);
    // A POST body is a file too, named by the URI path, as Suricata's are;
    // a 204 has no body to be one.
    let post = &o.txs[1].files(ToServer)[0];
    assert_eq!((post.name.as_slice(), post.size, post.state), (&b"/form"[..], 3, FileState::Closed));
    assert!(o.txs[1].files(ToClient).is_empty());
}

/// A body cut by the close is truncated (sha256 of what came, no md5); a
/// gap truncates too and leaves no digest at all; a body lost whole is
/// still a file, of lost bytes.
#[test]
fn cut_and_holed_bodies_are_truncated_files() {
    use crate::files::FileState;
    let o = check_cfg(
        file_cfg(),
        &[
            c2s("GET /a HTTP/1.1\r\nHost: h\r\n\r\n"),
            s2c("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"),
            Seg::Close(ToClient),
        ],
        true,
    );
    let f = &o.txs[0].files(ToClient)[0];
    assert_eq!((f.state, f.size, f.hashes.md5), (FileState::Truncated, 3, None));
    assert!(f.hashes.sha256.is_some());

    let o = check_cfg(
        file_cfg(),
        &[
            c2s("GET /b HTTP/1.1\r\nHost: h\r\n\r\n"),
            s2c("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"),
            Seg::Gap(ToClient, 4),
            s2c("xyz"),
            c2s("GET /c HTTP/1.1\r\nHost: h\r\n\r\n"),
            s2c("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n"),
            Seg::Gap(ToClient, 4),
        ],
        true,
    );
    let f = &o.txs[0].files(ToClient)[0];
    assert_eq!((f.state, f.size, f.gaps), (FileState::Truncated, 10, true));
    // The digest stops at the hole: that of the bytes before it.
    let before: [u8; 32] = {
        use sha2::Digest;
        sha2::Sha256::digest(b"abc").into()
    };
    assert_eq!((f.hashes.md5, f.hashes.sha256), (None, Some(before)));
    let f = &o.txs[1].files(ToClient)[0];
    assert_eq!((f.state, f.size, f.gaps, f.name.as_slice()), (FileState::Truncated, 4, true, &b"/c"[..]));
}

/// A multipart upload carries a file per part that names one; form fields
/// are not files; an upload cut before its closing delimiter leaves its
/// open part truncated.
#[test]
fn multipart_uploads_carry_a_file_per_named_part() {
    use crate::files::FileState;
    let body = "--AaB03x\r\nContent-Disposition: form-data; name=\"field\"\r\n\r\nJoe\r\n\
--AaB03x\r\nContent-Disposition: form-data; name=\"f1\"; filename=\"titi.txt\"\r\nContent-Type: text/plain\r\n\r\nbateau Titi\r\n\
--AaB03x\r\ncontent-disposition: form-data; name=\"f2\"; filename=toto.txt\r\n\r\nminet\r\n--AaB03x--\r\n";
    let head = format!(
        "POST /upload HTTP/1.1\r\nHost: h\r\nContent-Type: multipart/form-data; boundary=AaB03x\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let o = check_cfg(file_cfg(), &[c2s(format!("{head}{body}")), s2c("HTTP/1.1 204 No Content\r\n\r\n")], true);
    let files = o.txs[0].files(ToServer);
    let seen: Vec<(&[u8], u64, FileState)> = files.iter().map(|f| (f.name.as_slice(), f.size, f.state)).collect();
    assert_eq!(seen, vec![(&b"titi.txt"[..], 11, FileState::Closed), (&b"toto.txt"[..], 5, FileState::Closed)]);
    assert_eq!(files[1].kept, b"minet");
    // `file.data` is each file in turn; a form field is none of them.
    let tx = &o.txs[0];
    assert_eq!(tx.file_data(ToServer, 0), Some(&b"bateau Titi"[..]));
    assert_eq!(tx.file_data(ToServer, 1), Some(&b"minet"[..]));
    assert_eq!(tx.file_data(ToServer, 2), None);
    // The whole body stays the request body.
    assert_eq!(buf(&o.txs[0], (ToServer, Buffer::RequestBody)).map(str::len), Some(body.len()));

    let cut = &body[..body.find("minet").unwrap() + 3];
    let head = format!(
        "POST /upload HTTP/1.1\r\nHost: h\r\nContent-Type: multipart/form-data; boundary=AaB03x\r\nContent-Length: {}\r\n\r\n",
        cut.len()
    );
    let o = check_cfg(file_cfg(), &[c2s(format!("{head}{cut}"))], true);
    let last = o.txs[0].files(ToServer).last().unwrap();
    assert_eq!((last.name.as_slice(), last.state), (&b"toto.txt"[..], FileState::Truncated));
}

/// Files follow the body limits unless something asked to store them, as
/// Suricata's do; a body that decodes to nothing carries no file; a file
/// is named by the decoded URI path.
#[test]
fn files_follow_the_body_limit_and_need_a_byte() {
    use crate::files::FileState;
    let cfg = HttpConfig {
        response_file_limit: 10,
        files: crate::files::FileConfig { store_all: false, ..file_cfg().files },
        ..file_cfg()
    };
    let big = "HTTP/1.1 200 OK\r\nContent-Length: 25\r\n\r\n0123456789012345678901234";
    let empty_gzip = with_body("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 20\r\n\r\n", &gzip(b""));
    let o = check_cfg(
        cfg,
        &[
            c2s("GET /my%20file.bin?x=1 HTTP/1.1\r\nHost: h\r\n\r\n"),
            s2c(big),
            c2s("GET /nothing HTTP/1.1\r\nHost: h\r\n\r\n"),
            s2c(empty_gzip),
        ],
        false,
    );
    let f = &o.txs[0].files(ToClient)[0];
    assert_eq!((f.name.as_slice(), f.size, f.state), (&b"/my file.bin"[..], 10, FileState::Truncated));
    assert!(o.txs[1].files(ToClient).is_empty(), "{:?}", o.txs[1].files(ToClient));
}

#[test]
fn an_authorization_scheme_libhtp_does_not_know_is_an_event() {
    for (scheme, raised) in [("Basic Zm9vOmJhcg==", false), ("digest a=b", false), ("Bearer x", false), ("Turbo x", true)] {
        let o = check(&[c2s(format!("GET / HTTP/1.1\r\nHost: h\r\nAuthorization: {scheme}\r\n\r\n"))]);
        assert_eq!(has_event(&o, "http.request_auth_unrecognized"), raised, "{scheme}");
    }
    assert!(!has_event(&check(&[c2s("GET / HTTP/1.1\r\nHost: h\r\n\r\n")]), "http.request_auth_unrecognized"));
}

/// Each message's end asks for the side's raw stream to be inspected (as
/// Suricata's parser does), once, and nothing before it ends.
#[test]
fn a_messages_end_asks_for_raw_inspection() {
    let mut p = HttpParser::new(HttpConfig::default());
    p.parse(ToServer, b"GET / HTTP/1.1\r\nHost: a\r\n");
    assert!(!p.take_raw_trigger(ToServer), "the request is not whole yet");
    p.parse(ToServer, b"\r\nGET /b HTTP/1.1\r\nHost: a\r\n\r\n");
    assert!(p.take_raw_trigger(ToServer) && !p.take_raw_trigger(ToServer), "asked for once");
    assert!(!p.take_raw_trigger(ToClient));
    p.parse(ToClient, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    assert!(p.take_raw_trigger(ToClient));
}
