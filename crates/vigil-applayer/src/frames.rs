//! Record boundaries of protocols vigil detects but does not parse
//! (DCE/RPC over TCP). Knowing where each PDU ends lets raw stream
//! inspection run once a PDU is complete rather than wait for a chunk of
//! bytes, as Suricata's parsers ask for it: a rule on the stream then sees
//! each request on its own, however small the requests are.

use vigil_types::{Direction, PerDir};

/// How a protocol's records say their length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    /// Connection-oriented DCE/RPC: a 16-byte header whose fragment length
    /// (bytes 8-9, in the byte order of the data representation at byte 4)
    /// covers the whole PDU.
    Dcerpc,
}

impl Framing {
    /// Header bytes needed to know a record's length.
    fn header_len(self) -> usize {
        match self {
            Framing::Dcerpc => 16,
        }
    }

    /// The whole record's length, from its header; `None` if it makes no sense.
    fn record_len(self, h: &[u8]) -> Option<u64> {
        match self {
            Framing::Dcerpc => {
                if h[0] != 5 {
                    return None;
                }
                let len = crate::dcerpc::frag_len(h)?;
                (len as usize >= self.header_len()).then_some(len as u64)
            }
        }
    }
}

#[derive(Debug, Default)]
struct Side {
    header: Vec<u8>,
    /// Bytes of the current record still to come, after its header.
    left: u64,
    /// A record ended since the trigger was last taken.
    ended: bool,
    /// Lost track (a gap, a header that makes no sense): no more triggers.
    lost: bool,
}

/// Follows the records of both directions of one flow.
#[derive(Debug)]
pub(crate) struct Framer {
    framing: Framing,
    sides: PerDir<Side>,
}

impl Framer {
    pub(crate) fn new(framing: Framing) -> Self {
        Framer { framing, sides: PerDir::default() }
    }

    /// The next in-order bytes of `dir`.
    pub(crate) fn feed(&mut self, dir: Direction, mut data: &[u8]) {
        let hlen = self.framing.header_len();
        let side = self.sides.get_mut(dir);
        while !data.is_empty() && !side.lost {
            if side.left > 0 {
                let n = side.left.min(data.len() as u64);
                side.left -= n;
                data = &data[n as usize..];
                side.ended |= side.left == 0;
                continue;
            }
            let n = (hlen - side.header.len()).min(data.len());
            side.header.extend_from_slice(&data[..n]);
            data = &data[n..];
            if side.header.len() < hlen {
                break;
            }
            match self.framing.record_len(&side.header) {
                Some(len) => {
                    side.left = len - hlen as u64;
                    side.ended |= side.left == 0;
                    side.header.clear();
                }
                None => side.lost = true,
            }
        }
    }

    /// Bytes of `dir` were lost: where the next record starts is unknown.
    pub(crate) fn gap(&mut self, dir: Direction) {
        self.sides.get_mut(dir).lost = true;
    }

    /// Whether either direction's records are still followed.
    pub(crate) fn following(&self) -> bool {
        !self.sides.to_server.lost || !self.sides.to_client.lost
    }

    /// Whether a record of `dir` ended since the last call.
    pub(crate) fn take_ended(&mut self, dir: Direction) -> bool {
        std::mem::take(&mut self.sides.get_mut(dir).ended)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Direction::*;

    fn pdu(len: u16) -> Vec<u8> {
        let mut p = vec![5, 0, 0, 3, 0x10, 0, 0, 0];
        p.extend_from_slice(&len.to_le_bytes());
        p.resize(len as usize, 0x41);
        p
    }

    #[test]
    fn a_record_ends_whatever_the_chunking() {
        let two: Vec<u8> = [pdu(40), pdu(24)].concat();
        for cut in 1..two.len() {
            let mut f = Framer::new(Framing::Dcerpc);
            f.feed(ToServer, &two[..cut]);
            let first = f.take_ended(ToServer);
            assert_eq!(first, cut >= 40, "cut {cut}");
            f.feed(ToServer, &two[cut..]);
            assert!(f.take_ended(ToServer), "cut {cut}");
            assert!(!f.take_ended(ToServer));
            assert!(!f.take_ended(ToClient));
        }
    }

    #[test]
    fn nonsense_or_a_gap_stops_the_triggers() {
        let mut f = Framer::new(Framing::Dcerpc);
        let mut bad = pdu(40);
        bad[0] = 4;
        f.feed(ToClient, &bad);
        f.feed(ToClient, &pdu(16));
        assert!(!f.take_ended(ToClient));
        let mut f = Framer::new(Framing::Dcerpc);
        f.feed(ToServer, &pdu(40)[..20]);
        f.gap(ToServer);
        f.feed(ToServer, &pdu(16));
        assert!(!f.take_ended(ToServer));
    }
}
