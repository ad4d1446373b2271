//! Messages too big to hold (an SMB or NFS read's answer, a write of a
//! megabyte): held whole up to [`BIG`], past it read from their first
//! [`HEAD`] bytes (all the headers and names a read or write has), the
//! rest passed over on that side ([`Tail`]) with the file bytes in it fed
//! on to their file.

/// Messages up to this size are held whole (an SMB compound answer
/// listing a directory, then closing it, runs past 64 KiB; the app layer
/// holds at most 256 KiB by default).
pub const BIG: usize = 192 * 1024;
/// What is read of a bigger one.
pub const HEAD: usize = 4096;

/// How a message `rest` starts with, `total` bytes long with its `mark`
/// (the framing before it), is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Take {
    /// All of it is there.
    Whole,
    /// Wait for this many more bytes.
    Wait(usize),
    /// Read what is there (its head); the rest is passed over.
    Head,
}

pub fn take(have: usize, total: usize, mark: usize) -> Take {
    if have >= total {
        Take::Whole
    } else if total <= BIG {
        Take::Wait(total - have)
    } else if have < mark + HEAD {
        Take::Wait(mark + HEAD - have)
    } else {
        Take::Head
    }
}

/// File bytes in the part passed over: `left` of them, for the file of
/// transaction `id` from `offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Sink {
    id: u64,
    offset: u64,
    left: u64,
}

/// File bytes found in the part passed over: those of transaction `id`'s
/// file from `offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fed<'a> {
    pub id: u64,
    pub offset: u64,
    pub bytes: &'a [u8],
}

/// What is left of a message being passed over on one side.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tail {
    skip: usize,
    sink: Option<Sink>,
}

impl Tail {
    /// The next `n` bytes of the side are passed over.
    pub fn skip(&mut self, n: usize) {
        self.skip = n;
    }

    /// Of the bytes passed over, the first `left` are the file's of
    /// transaction `id`, from `offset` (nothing when none are passed over).
    pub fn feed(&mut self, id: u64, offset: u64, left: u64) {
        self.sink = (left > 0 && self.skip > 0).then_some(Sink { id, offset, left });
    }

    /// Passes over what `data` starts with of the bytes to pass over: how
    /// many, and the file bytes among them (their transaction and offset).
    pub fn pass<'a>(&mut self, data: &'a [u8]) -> (usize, Option<Fed<'a>>) {
        let n = self.skip.min(data.len());
        self.skip -= n;
        let Some(s) = self.sink.as_mut() else { return (n, None) };
        let m = n.min(usize::try_from(s.left).unwrap_or(usize::MAX));
        let file = Fed { id: s.id, offset: s.offset, bytes: &data[..m] };
        s.offset += m as u64;
        s.left -= m as u64;
        if s.left == 0 {
            self.sink = None;
        }
        (n, Some(file))
    }

    /// `len` bytes of the side were lost. `Ok`: they fell in the bytes
    /// passed over (the file fed has a hole there). `Err`: the message
    /// boundaries are lost with them; the transaction whose file was being
    /// fed, if any.
    pub fn gap(&mut self, len: u64) -> Result<(), Option<u64>> {
        if (self.skip as u64) >= len {
            self.skip -= len as usize;
            if let Some(s) = self.sink.as_mut() {
                // The next bytes land past the hole, which the file then records.
                let lost = len.min(s.left);
                s.left -= lost;
                s.offset += lost;
            }
            Ok(())
        } else {
            self.skip = 0;
            Err(self.sink.take().map(|s| s.id))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_is_held_whole_or_read_from_its_head() {
        assert_eq!(take(10, 10, 4), Take::Whole);
        assert_eq!(take(10, 100, 4), Take::Wait(90));
        assert_eq!(take(100, BIG + 1, 4), Take::Wait(4 + HEAD - 100));
        assert_eq!(take(4 + HEAD, BIG + 1, 4), Take::Head);
    }

    #[test]
    fn the_file_bytes_passed_over_are_handed_on_and_holes_kept() {
        let mut t = Tail::default();
        t.feed(7, 0, 10);
        assert_eq!(t, Tail::default(), "nothing to pass over, nothing to feed");
        t.skip(12);
        t.feed(7, 100, 10);
        assert_eq!(t.pass(b"abcd"), (4, Some(Fed { id: 7, offset: 100, bytes: b"abcd" })));
        assert_eq!(t.gap(2), Ok(()));
        assert_eq!(
            t.pass(b"efghijkl"),
            (6, Some(Fed { id: 7, offset: 106, bytes: b"efgh" })),
            "past the hole; then two bytes of padding"
        );
        assert_eq!(t.pass(b"next"), (0, None));
        t.skip(5);
        t.feed(8, 0, 5);
        assert_eq!(t.gap(9), Err(Some(8)));
    }
}
