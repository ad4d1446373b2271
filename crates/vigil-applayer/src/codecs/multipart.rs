//! A streaming `multipart/*` body reader (RFC 2046 §5.1): bytes in, in
//! chunks of any size; parts out, each with its header block and its data.
//! What it holds between chunks is bounded by the part-header limit and
//! the delimiter's length, so a hostile body cannot make it grow.

use super::{find, header_block_end};

/// What the reader found, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event<'a> {
    /// A part begins; its raw header block (without the blank line).
    Part(&'a [u8]),
    /// More of the current part's data.
    Data(&'a [u8]),
    /// The current part ended at a delimiter.
    End,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before the first delimiter.
    Preamble,
    /// After a delimiter: the rest of its line (`--` closes the body).
    DelimiterLine,
    /// Gathering a part's header block.
    Headers,
    Data,
    /// After the closing delimiter: the epilogue is ignored.
    Done,
}

/// The most header bytes a part may have; past it the part is taken as
/// having no headers and the rest as its data.
pub const MAX_PART_HEADERS: usize = 8 * 1024;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Multipart {
    /// `CRLF--boundary`: the first delimiter of the body is found as if a
    /// CRLF came before it (see [`Multipart::new`]).
    delim: Vec<u8>,
    state: State,
    held: Vec<u8>,
    /// A part is open (its `End` not yet given).
    in_part: bool,
}

impl Multipart {
    /// A reader for `boundary` (the `boundary=` parameter, unquoted).
    pub fn new(boundary: &[u8]) -> Multipart {
        let mut delim = b"\r\n--".to_vec();
        delim.extend_from_slice(boundary);
        Multipart { delim, state: State::Preamble, held: b"\r\n".to_vec(), in_part: false }
    }

    /// Whether a part is open.
    pub fn in_part(&self) -> bool {
        self.in_part
    }

    /// The closing delimiter was seen.
    pub fn done(&self) -> bool {
        self.state == State::Done
    }

    /// The next bytes of the body.
    pub fn feed(&mut self, data: &[u8], out: &mut dyn FnMut(Event<'_>)) {
        if self.state == State::Done {
            return;
        }
        let mut buf = std::mem::take(&mut self.held);
        buf.extend_from_slice(data);
        let mut at = 0;
        loop {
            let rest = &buf[at..];
            match self.state {
                State::Done => break,
                State::Preamble | State::Data => match find(rest, &self.delim) {
                    Some(i) if !is_delimiter(&rest[i + self.delim.len()..]).unwrap_or(true) => {
                        // The boundary's text inside the data: one byte of it is data.
                        if self.state == State::Data {
                            out(Event::Data(&rest[..i + 1]));
                        }
                        at += i + 1;
                    }
                    Some(i) if is_delimiter(&rest[i + self.delim.len()..]).is_none() => {
                        // Whether it is a delimiter shows in the next bytes.
                        if self.state == State::Data && i > 0 {
                            out(Event::Data(&rest[..i]));
                        }
                        at += i;
                        break;
                    }
                    Some(i) => {
                        if self.state == State::Data {
                            if i > 0 {
                                out(Event::Data(&rest[..i]));
                            }
                            out(Event::End);
                            self.in_part = false;
                        }
                        at += i + self.delim.len();
                        self.state = State::DelimiterLine;
                    }
                    None => {
                        // The tail may be the start of a delimiter.
                        let keep = (self.delim.len() - 1).min(rest.len());
                        let give = rest.len() - keep;
                        if self.state == State::Data && give > 0 {
                            out(Event::Data(&rest[..give]));
                        }
                        at += give;
                        break;
                    }
                },
                State::DelimiterLine => {
                    if rest.len() < 2 {
                        break;
                    }
                    if rest.starts_with(b"--") {
                        self.state = State::Done;
                        at = buf.len();
                        break;
                    }
                    // Transport padding, then the line's end.
                    match rest.iter().position(|&b| b == b'\n') {
                        Some(i) => {
                            at += i + 1;
                            self.state = State::Headers;
                        }
                        None if rest.len() > MAX_PART_HEADERS => {
                            at += rest.len();
                            self.state = State::Headers;
                        }
                        None => break,
                    }
                }
                State::Headers => {
                    let end = if rest.starts_with(b"\r\n") {
                        Some((0, 2))
                    } else if rest.starts_with(b"\n") {
                        Some((0, 1))
                    } else {
                        header_block_end(rest)
                    };
                    match end {
                        Some((len, skip)) => {
                            out(Event::Part(&rest[..len]));
                            self.in_part = true;
                            at += len + skip;
                            self.state = State::Data;
                        }
                        None if rest.len() > MAX_PART_HEADERS => {
                            out(Event::Part(&[]));
                            self.in_part = true;
                            self.state = State::Data;
                        }
                        None => break,
                    }
                }
            }
        }
        buf.drain(..at);
        self.held = buf;
    }
}

/// What follows a boundary's text makes it a delimiter: `--`, or blanks
/// up to the line's end. `None`: not enough bytes yet to tell.
fn is_delimiter(after: &[u8]) -> Option<bool> {
    if after.starts_with(b"--") {
        return Some(true);
    }
    let blanks = after.iter().take_while(|&&b| b == b' ' || b == b'\t').count();
    if blanks > 256 {
        return Some(false);
    }
    match after.get(blanks) {
        Some(b'\r' | b'\n') => Some(true),
        Some(b'-') if blanks == 0 && after.len() == 1 => None,
        Some(_) => Some(false),
        None => None,
    }
}

/// The `boundary` parameter of a `multipart/...` Content-Type, unquoted.
pub fn boundary(content_type: &[u8]) -> Option<Vec<u8>> {
    let lower = content_type.to_ascii_lowercase();
    if !lower.trim_ascii_start().starts_with(b"multipart/") {
        return None;
    }
    let at = find(&lower, b"boundary=")? + b"boundary=".len();
    let v = content_type[at..].trim_ascii_start();
    let b = match v.strip_prefix(b"\"") {
        Some(q) => &q[..q.iter().position(|&c| c == b'"')?],
        None => &v[..v.iter().position(|&c| c == b';' || c.is_ascii_whitespace()).unwrap_or(v.len())],
    };
    // RFC 2046: 1 to 70 characters.
    (!b.is_empty() && b.len() <= 70).then(|| b.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(body: &[u8], boundary: &[u8], cut: usize) -> Vec<(Vec<u8>, Vec<u8>, bool)> {
        let mut m = Multipart::new(boundary);
        let mut out: Vec<(Vec<u8>, Vec<u8>, bool)> = Vec::new();
        for chunk in body.chunks(cut.max(1)) {
            m.feed(chunk, &mut |e| match e {
                Event::Part(h) => out.push((h.to_vec(), Vec::new(), false)),
                Event::Data(d) => out.last_mut().unwrap().1.extend_from_slice(d),
                Event::End => out.last_mut().unwrap().2 = true,
            });
        }
        out
    }

    const BODY: &[u8] = b"preamble\r\n--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nvalue\r\n\
--XyZ  \r\nContent-Disposition: form-data; name=\"f\"; filename=\"titi.txt\"\r\nContent-Type: text/plain\r\n\r\n\
line one\r\n--XyZ is not the end\r\n--XyZ--\r\nepilogue";

    #[test]
    fn parts_are_the_same_however_cut() {
        let whole = parts(BODY, b"XyZ", BODY.len());
        assert_eq!(whole.len(), 2);
        assert_eq!(whole[0].1, b"value");
        assert!(whole[1].0.starts_with(b"Content-Disposition: form-data; name=\"f\"; filename=\"titi.txt\""));
        assert_eq!(whole[1].1, b"line one\r\n--XyZ is not the end");
        assert!(whole[0].2 && whole[1].2);
        for cut in 1..40 {
            assert_eq!(parts(BODY, b"XyZ", cut), whole, "cut {cut}");
        }
    }

    #[test]
    fn a_body_starting_with_its_delimiter_and_held_bytes_stay_bounded() {
        let body = b"--b\r\n\r\ndata\r\n--b--";
        assert_eq!(parts(body, b"b", 3), vec![(Vec::new(), b"data".to_vec(), true)]);
        let mut m = Multipart::new(b"b");
        m.feed(&vec![b'x'; 100_000], &mut |_| {});
        assert!(m.held.len() < 10);
        m.feed(b"\r\n--b\r\n", &mut |_| {});
        m.feed(&vec![b'h'; 100_000], &mut |_| {});
        assert!(m.held.len() <= MAX_PART_HEADERS + 8, "{}", m.held.len());
    }

    #[test]
    fn boundaries() {
        assert_eq!(boundary(b"multipart/form-data; boundary=----abc"), Some(b"----abc".to_vec()));
        assert_eq!(boundary(b"Multipart/Mixed; BOUNDARY=\"a b\"; x=1"), Some(b"a b".to_vec()));
        assert_eq!(boundary(b"text/plain; boundary=x"), None);
        assert_eq!(boundary(b"multipart/form-data"), None);
    }
}
