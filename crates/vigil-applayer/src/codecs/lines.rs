//! Lines out of a byte stream cut anywhere, for the text protocols (FTP,
//! SMTP): each line without its end (LF, or CR LF), and a line longer than
//! the caller's limit in pieces of that limit, so what is held between
//! chunks never passes it. What a protocol does with the pieces (drops
//! the rest of a command, reads a mail line on) is its own.
//!
//! ```
//! use vigil_applayer::codecs::lines::Lines;
//! let mut l = Lines::default();
//! let mut data = &b"USER bob\r\nPA"[..];
//! assert_eq!(l.next(&mut data, 100), Some((&b"USER bob"[..], true)));
//! assert_eq!(l.next(&mut data, 100), None);
//! let mut more = &b"SS x\n"[..];
//! assert_eq!(l.next(&mut more, 100), Some((&b"PASS x"[..], true)));
//! ```

/// A line being read, between chunks.
#[derive(Debug, Default)]
pub struct Lines {
    buf: Vec<u8>,
    /// The last call handed out what `buf` holds: cleared on the next.
    handed: bool,
}

impl Lines {
    /// The next line of `data`, which it advances past: the line and
    /// whether it ended there (false: `max` bytes of a longer line, whose
    /// rest comes next). A line that ends may be one byte over `max` (room
    /// for its CR): callers that bound strictly check. `None`: `data` ran
    /// out inside a line, which is kept.
    pub fn next<'a>(&'a mut self, data: &mut &[u8], max: usize) -> Option<(&'a [u8], bool)> {
        self.next_ended(data, max).map(|(line, whole, _)| (line, whole))
    }

    /// As [`Lines::next`], with the line's end as it came (CR LF or LF;
    /// empty for a piece of a longer line).
    pub fn next_ended<'a>(&'a mut self, data: &mut &[u8], max: usize) -> Option<(&'a [u8], bool, &'static [u8])> {
        let max = max.max(1);
        if self.handed {
            self.buf.clear();
            self.handed = false;
        }
        let room = max - self.buf.len().min(max);
        match data.iter().position(|&b| b == b'\n') {
            Some(i) if i <= room + 1 => {
                self.buf.extend_from_slice(&data[..i]);
                *data = &data[i + 1..];
                let crlf = self.buf.last() == Some(&b'\r');
                if crlf {
                    self.buf.pop();
                }
                self.handed = true;
                Some((&self.buf[..], true, if crlf { b"\r\n" } else { b"\n" }))
            }
            found => {
                let before_end = found.unwrap_or(data.len());
                if self.buf.len() + before_end < max || (found.is_none() && self.buf.len() + data.len() <= max) {
                    self.buf.extend_from_slice(data);
                    *data = &[];
                    return None;
                }
                self.buf.extend_from_slice(&data[..room]);
                *data = &data[room..];
                self.handed = true;
                Some((&self.buf[..], false, b""))
            }
        }
    }

    /// The start of a line still held, whose end never came (the stream
    /// ended), taken out.
    pub fn take_partial(&mut self) -> Option<Vec<u8>> {
        if self.handed || self.buf.is_empty() {
            return None;
        }
        Some(std::mem::take(&mut self.buf))
    }

    /// Drops what is held (a capture gap lost the line's rest).
    pub fn clear(&mut self) {
        self.buf.clear();
        self.handed = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(input: &[u8], max: usize, cut: usize) -> Vec<(Vec<u8>, bool)> {
        let mut l = Lines::default();
        let mut out = Vec::new();
        for chunk in input.chunks(cut) {
            let mut d = chunk;
            while let Some((line, whole)) = l.next(&mut d, max) {
                out.push((line.to_vec(), whole));
            }
        }
        out
    }

    #[test]
    fn lines_and_pieces_are_the_same_however_cut() {
        let input = b"ab\r\nabcdefgh\r\nabcde\nabcdefghijk\r\n\r\nx";
        let want: Vec<(Vec<u8>, bool)> = vec![
            (b"ab".to_vec(), true),
            (b"abcde".to_vec(), false),
            (b"fgh".to_vec(), true),
            (b"abcde".to_vec(), true),
            (b"abcde".to_vec(), false),
            (b"fghij".to_vec(), false),
            (b"k".to_vec(), true),
            (b"".to_vec(), true),
        ];
        for cut in 1..input.len() {
            assert_eq!(all(input, 5, cut), want, "cut {cut}");
        }
    }
}
