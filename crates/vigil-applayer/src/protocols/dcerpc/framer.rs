//! DCE/RPC's parser while its PDUs are not parsed: it follows where each
//! PDU ends (the header says its length), so raw stream inspection runs
//! once a PDU is complete rather than wait for a chunk of bytes, as
//! Suricata's parser asks for it: a rule on the stream then sees each
//! request on its own, however small the requests are.

use super::{pdu_len, HEADER_LEN};
use crate::parser::{AppEvent, ParseResult};
use crate::proto::{ParserInit, ProtoParser, ProtoTx};
use vigil_types::{Direction, PerDir};

#[derive(Debug, Default)]
struct Side {
    /// The header of the next PDU, as far as it came.
    header: [u8; HEADER_LEN],
    have: usize,
    /// Bytes of the current PDU still to come, after its header.
    left: u64,
    /// A PDU ended since the trigger was last taken.
    ended: bool,
    /// Lost track (a gap, a header that makes no sense): no more triggers.
    lost: bool,
}

/// Follows the PDUs of both directions of one flow.
#[derive(Debug, Default)]
pub struct Framer {
    sides: PerDir<Side>,
    next_id: u64,
}

impl Framer {
    pub(crate) fn boxed(init: &ParserInit) -> Box<dyn ProtoParser> {
        Box::new(Framer { next_id: init.first_tx_id, ..Framer::default() })
    }

    /// The next in-order bytes of `dir`.
    fn feed(&mut self, dir: Direction, mut data: &[u8]) {
        let side = self.sides.get_mut(dir);
        while !data.is_empty() && !side.lost {
            if side.left > 0 {
                let n = side.left.min(data.len() as u64);
                side.left -= n;
                data = &data[n as usize..];
                side.ended |= side.left == 0;
                continue;
            }
            let n = (HEADER_LEN - side.have).min(data.len());
            side.header[side.have..side.have + n].copy_from_slice(&data[..n]);
            side.have += n;
            data = &data[n..];
            if side.have < HEADER_LEN {
                break;
            }
            match pdu_len(&side.header) {
                Some(len) => {
                    side.left = u64::from(len) - HEADER_LEN as u64;
                    side.ended |= side.left == 0;
                    side.have = 0;
                }
                None => side.lost = true,
            }
        }
    }

}

impl ProtoParser for Framer {
    fn parse(&mut self, dir: Direction, data: &[u8]) -> ParseResult {
        self.feed(dir, data);
        ParseResult::Done
    }

    /// Where the next PDU starts is unknown: that side is no longer followed.
    fn on_gap(&mut self, dir: Direction, _len: u64) -> bool {
        self.sides.get_mut(dir).lost = true;
        true
    }

    fn close(&mut self, _dir: Direction, _held: &[u8]) {}

    fn tx_count(&self) -> usize {
        0
    }

    fn tx(&self, _i: usize) -> Option<&dyn ProtoTx> {
        None
    }

    fn prune(&mut self, _id: u64) {}

    fn drain_events(&mut self, _out: &mut Vec<AppEvent>) {}

    fn next_tx_id(&self) -> u64 {
        self.next_id
    }

    /// While either direction's PDUs are still followed.
    fn wants_data(&self) -> bool {
        !self.sides.to_server.lost || !self.sides.to_client.lost
    }

    fn take_raw_trigger(&mut self, dir: Direction) -> bool {
        std::mem::take(&mut self.sides.get_mut(dir).ended)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Direction::*;

    fn framer() -> Framer {
        Framer::default()
    }

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
            let mut f = framer();
            f.feed(ToServer, &two[..cut]);
            let first = f.take_raw_trigger(ToServer);
            assert_eq!(first, cut >= 40, "cut {cut}");
            f.feed(ToServer, &two[cut..]);
            assert!(f.take_raw_trigger(ToServer), "cut {cut}");
            assert!(!f.take_raw_trigger(ToServer));
            assert!(!f.take_raw_trigger(ToClient));
        }
    }

    #[test]
    fn nonsense_or_a_gap_stops_the_triggers() {
        let mut f = framer();
        let mut bad = pdu(40);
        bad[0] = 4;
        f.feed(ToClient, &bad);
        f.feed(ToClient, &pdu(16));
        assert!(!f.take_raw_trigger(ToClient));
        let mut f = framer();
        f.feed(ToServer, &pdu(40)[..20]);
        f.on_gap(ToServer, 1);
        f.feed(ToServer, &pdu(16));
        assert!(!f.take_raw_trigger(ToServer));
    }
}
