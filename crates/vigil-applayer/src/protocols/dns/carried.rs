//! DNS that another protocol carries (DNS over HTTPS, RFC 8484): a request
//! and its response that are one transaction to DNS rules, each side's
//! buffers and value checks reading that side's message, as Suricata
//! inspects the DNS of a DoH stream.

use serde_json::Value;
use vigil_types::{Direction, PerDir};

use super::{message::parse_message, Buffer, DnsTx};
use crate::progress::Progress;
use crate::proto::ProtoTx;

/// The largest DNS message: its length is a 16-bit number on every transport.
pub const MAX_MESSAGE: usize = 65_535;

/// Each side's message, where it carried one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CarriedDns {
    /// The carrying transaction's id.
    id: u64,
    sides: PerDir<Option<DnsTx>>,
}

impl CarriedDns {
    pub fn new(id: u64) -> CarriedDns {
        CarriedDns { id, sides: PerDir::default() }
    }

    /// Takes `data` as side `dir`'s message: a request (no QR) to the
    /// server, any message to the client. False when it is none.
    pub fn take(&mut self, dir: Direction, data: &[u8]) -> bool {
        if data.len() > MAX_MESSAGE {
            return false;
        }
        let Ok(msg) = parse_message(data) else { return false };
        if dir == Direction::ToServer && msg.header.qr() {
            return false;
        }
        // Records give the carried message transaction id 0, as Suricata's.
        *self.sides.get_mut(dir) = Some(DnsTx { id: 0, dir, msg, events: Vec::new() });
        true
    }

    /// The message side `dir` carried.
    pub fn side(&self, dir: Direction) -> Option<&DnsTx> {
        self.sides.get(dir).as_ref()
    }

    pub fn is_empty(&self) -> bool {
        self.sides.to_server.is_none() && self.sides.to_client.is_none()
    }

    /// The message records show: the response once there is one.
    pub fn shown(&self) -> Option<&DnsTx> {
        self.sides.to_client.as_ref().or(self.sides.to_server.as_ref())
    }

    /// The `dns` object of records other than `dns` ones (alerts, files):
    /// without the grouped answers.
    pub fn eve_brief(&self) -> Value {
        self.shown().map_or(Value::Null, |t| serde_json::to_value(t.eve_with(false)).unwrap_or(Value::Null))
    }
}

impl ProtoTx for CarriedDns {
    fn id(&self) -> u64 {
        self.id
    }

    fn progress(&self, dir: Direction) -> Progress {
        if self.side(dir).is_some() {
            Progress::Complete
        } else {
            Progress::None
        }
    }

    fn finished(&self) -> bool {
        true
    }

    fn buffer(&self, dir: Direction, id: u8, index: usize) -> Option<&[u8]> {
        self.side(dir)?.buffer(Buffer::from_id(id)?, index)
    }

    fn eve(&self) -> Value {
        self.shown().map_or(Value::Null, |t| serde_json::to_value(t.eve()).unwrap_or(Value::Null))
    }

    fn eve_metadata(&self, _opts: Option<&crate::proto::RecordOptions>) -> Value {
        self.eve_brief()
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// id 0, RD, one question: example.com A IN; and its answer.
    const QUERY: &[u8] = b"\x00\x00\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07example\x03com\x00\x00\x01\x00\x01";

    fn answer() -> Vec<u8> {
        let mut a = QUERY.to_vec();
        a[2] = 0x81;
        a[3] = 0x80;
        a[7] = 1;
        a.extend_from_slice(b"\xc0\x0c\x00\x01\x00\x01\x00\x00\x00\x3c\x00\x04\xc6\x12\x00\x01");
        a
    }

    #[test]
    fn each_side_reads_its_own_message() {
        let mut d = CarriedDns::new(7);
        assert!(d.take(Direction::ToServer, QUERY));
        assert_eq!(d.buffer(Direction::ToServer, Buffer::Query as u8, 0), Some(&b"example.com"[..]));
        assert_eq!(d.buffer(Direction::ToClient, Buffer::AnswersRrname as u8, 0), None);
        assert_eq!(d.eve()["type"], "request");
        assert!(d.take(Direction::ToClient, &answer()));
        assert_eq!(d.buffer(Direction::ToClient, Buffer::AnswersRrname as u8, 0), Some(&b"example.com"[..]));
        assert_eq!(d.eve()["type"], "response");
        assert_eq!(d.eve()["tx_id"], 0);
        assert!(d.eve().get("grouped").is_some() && d.eve_brief().get("grouped").is_none());
    }

    #[test]
    fn a_response_sent_to_the_server_or_junk_is_no_message() {
        let mut d = CarriedDns::new(0);
        assert!(!d.take(Direction::ToServer, &answer()));
        assert!(!d.take(Direction::ToClient, b"\x00\x01"));
        assert!(d.is_empty());
    }
}
