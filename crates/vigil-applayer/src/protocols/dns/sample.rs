//! A DNS exchange over TCP (each message behind its 2-byte length): the
//! conversation the protocol test kit runs, cut every way.

use vigil_types::Direction;

/// A query for `example.com` (A, IN) and its answer (one A record).
pub(crate) fn conversation() -> Vec<(Direction, Vec<u8>)> {
    let question = b"\x07example\x03com\x00\x00\x01\x00\x01";
    let mut query = b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00".to_vec();
    query.extend_from_slice(question);
    let mut answer = b"\x12\x34\x81\x80\x00\x01\x00\x01\x00\x00\x00\x00".to_vec();
    answer.extend_from_slice(question);
    // The answer's name points back at the question's (offset 12).
    answer.extend_from_slice(b"\xc0\x0c\x00\x01\x00\x01\x00\x00\x0e\x10\x00\x04\xc6\x12\x00\x01");
    let framed = |m: Vec<u8>| [(m.len() as u16).to_be_bytes().to_vec(), m].concat();
    vec![(Direction::ToServer, framed(query)), (Direction::ToClient, framed(answer))]
}
