//! An HTTP/1.1 exchange: the conversation the protocol test kit runs.

use vigil_types::Direction;

/// A GET with a few headers and its answer with a body.
pub(crate) fn conversation() -> Vec<(Direction, Vec<u8>)> {
    let request = b"GET /index.html?q=1 HTTP/1.1\r\nHost: www.example.com\r\nUser-Agent: vigil-kit/1.0\r\nAccept: */*\r\n\r\n";
    let response = b"HTTP/1.1 200 OK\r\nServer: kit\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello";
    vec![(Direction::ToServer, request.to_vec()), (Direction::ToClient, response.to_vec())]
}
