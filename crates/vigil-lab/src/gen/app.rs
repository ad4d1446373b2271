//! Application payloads: HTTP/1.1, DNS, TLS hellos and records, RTP, SMTP,
//! Oracle TNS, DCE/RPC bind, filler. Well-formed, so Wireshark and vigil's parsers read them
//! without complaint. Names are under the reserved example domains.

use crate::rng::Rng;

/// Printable filler: what bulk data looks like to a protocol dissector that
/// does not know it (random bytes wake up binary heuristics).
pub fn filler(rng: &mut Rng, len: usize) -> Vec<u8> {
    const ALPHABET: &[u8; 64] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .";
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        let mut w = rng.next_u64();
        for _ in 0..10 {
            if out.len() == len {
                break;
            }
            out.push(ALPHABET[(w & 63) as usize]);
            w >>= 6;
        }
    }
    out
}

pub fn http_request(host: &str, path: &str) -> Vec<u8> {
    format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: vigil-lab/1\r\nAccept: */*\r\n\r\n").into_bytes()
}

/// A 200 response whose whole message (headers and body) is about `total` bytes.
pub fn http_response(rng: &mut Rng, total: usize) -> Vec<u8> {
    let head = |n: usize| format!("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {n}\r\n\r\n");
    let guess = total.saturating_sub(head(total).len());
    let mut out = head(guess).into_bytes();
    out.extend_from_slice(&filler(rng, guess));
    out
}

/// A DNS query for an A record of `name`.
pub fn dns_query(id: u16, name: &str) -> Vec<u8> {
    let mut q = Vec::with_capacity(18 + name.len());
    q.extend_from_slice(&id.to_be_bytes());
    q.extend_from_slice(&[0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]);
    for label in name.split('.') {
        q.push(label.len() as u8);
        q.extend_from_slice(label.as_bytes());
    }
    q.extend_from_slice(&[0, 0, 1, 0, 1]);
    q
}

/// The answer to `query`: one A record, `addr`, TTL one hour.
pub fn dns_answer(query: &[u8], addr: [u8; 4]) -> Vec<u8> {
    let mut a = query.to_vec();
    a[2] = 0x81;
    a[3] = 0x80;
    a[7] = 1;
    a.extend_from_slice(&[0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0x0e, 0x10, 0, 4]);
    a.extend_from_slice(&addr);
    a
}

fn u24(n: usize) -> [u8; 3] {
    [(n >> 16) as u8, (n >> 8) as u8, n as u8]
}

/// A TLS record of `kind` holding `body`.
fn record(kind: u8, version: [u8; 2], body: &[u8]) -> Vec<u8> {
    let mut r = vec![kind, version[0], version[1]];
    r.extend_from_slice(&(body.len() as u16).to_be_bytes());
    r.extend_from_slice(body);
    r
}

/// A TLS 1.2-style ClientHello (in a TLS 1.0 record) with the SNI `host`.
pub fn tls_client_hello(rng: &mut Rng, host: &str) -> Vec<u8> {
    let mut hello = vec![0x03, 0x03];
    let mut random = [0u8; 32];
    rng.fill(&mut random);
    hello.extend_from_slice(&random);
    hello.push(0); // session id
    let suites: [u16; 4] = [0x1301, 0xc02f, 0xc030, 0x009e];
    hello.extend_from_slice(&((suites.len() * 2) as u16).to_be_bytes());
    for s in suites {
        hello.extend_from_slice(&s.to_be_bytes());
    }
    hello.extend_from_slice(&[1, 0]); // compression: null
    let name = host.as_bytes();
    let mut sni = Vec::new();
    sni.extend_from_slice(&((name.len() + 3) as u16).to_be_bytes());
    sni.push(0);
    sni.extend_from_slice(&(name.len() as u16).to_be_bytes());
    sni.extend_from_slice(name);
    let mut ext = Vec::new();
    ext.extend_from_slice(&0u16.to_be_bytes());
    ext.extend_from_slice(&(sni.len() as u16).to_be_bytes());
    ext.extend_from_slice(&sni);
    hello.extend_from_slice(&(ext.len() as u16).to_be_bytes());
    hello.extend_from_slice(&ext);
    let mut hs = vec![1];
    hs.extend_from_slice(&u24(hello.len()));
    hs.extend_from_slice(&hello);
    record(22, [3, 1], &hs)
}

/// The ServerHello choosing TLS_AES_128_GCM... style suite 0xc02f.
pub fn tls_server_hello(rng: &mut Rng) -> Vec<u8> {
    let mut hello = vec![0x03, 0x03];
    let mut random = [0u8; 32];
    rng.fill(&mut random);
    hello.extend_from_slice(&random);
    hello.push(0);
    hello.extend_from_slice(&0xc02fu16.to_be_bytes());
    hello.push(0);
    hello.extend_from_slice(&0u16.to_be_bytes()); // no extensions
    let mut hs = vec![2];
    hs.extend_from_slice(&u24(hello.len()));
    hs.extend_from_slice(&hello);
    record(22, [3, 3], &hs)
}

/// Encrypted-looking application data in one record of `len` bytes in all
/// (at least the 5-byte header and one byte).
pub fn tls_app_data(rng: &mut Rng, len: usize) -> Vec<u8> {
    let mut body = vec![0u8; len.saturating_sub(5).max(1)];
    rng.fill(&mut body);
    record(23, [3, 3], &body)
}

/// An RTP packet (G.711 µ-law, 160 samples) of stream `ssrc`.
pub fn rtp(rng: &mut Rng, seq: u16, timestamp: u32, ssrc: u32) -> Vec<u8> {
    let mut p = vec![0x80, 0x00];
    p.extend_from_slice(&seq.to_be_bytes());
    p.extend_from_slice(&timestamp.to_be_bytes());
    p.extend_from_slice(&ssrc.to_be_bytes());
    let mut samples = [0u8; 160];
    rng.fill(&mut samples);
    p.extend_from_slice(&samples);
    p
}

/// An Oracle TNS Data packet carrying `data`.
pub fn tns_data(data: &[u8]) -> Vec<u8> {
    let len = 10 + data.len();
    let mut p = Vec::with_capacity(len);
    p.extend_from_slice(&(len.min(0xffff) as u16).to_be_bytes());
    // packet checksum, type 6 (Data), reserved, header checksum
    p.extend_from_slice(&[0, 0, 6, 0, 0, 0]);
    p.extend_from_slice(&[0, 0]); // data flags
    p.extend_from_slice(data);
    p
}

/// DCE/RPC (little-endian) PDU header: version 5.0, `ptype`, first and last fragment.
fn dcerpc_header(ptype: u8, frag_len: usize, call_id: u32) -> Vec<u8> {
    let mut h = vec![5, 0, ptype, 0x03, 0x10, 0, 0, 0];
    h.extend_from_slice(&(frag_len as u16).to_le_bytes());
    h.extend_from_slice(&0u16.to_le_bytes());
    h.extend_from_slice(&call_id.to_le_bytes());
    h
}

/// The endpoint mapper's interface (e1af8308-5d1f-11c9-91a4-08002b14a0fa v3.0), little-endian.
const EPM_UUID: [u8; 16] =
    [0x08, 0x83, 0xaf, 0xe1, 0x1f, 0x5d, 0xc9, 0x11, 0x91, 0xa4, 0x08, 0x00, 0x2b, 0x14, 0xa0, 0xfa];
/// NDR transfer syntax (8a885d04-1ceb-11c9-9fe8-08002b104860 v2).
const NDR_UUID: [u8; 16] =
    [0x04, 0x5d, 0x88, 0x8a, 0xeb, 0x1c, 0xc9, 0x11, 0x9f, 0xe8, 0x08, 0x00, 0x2b, 0x10, 0x48, 0x60];

/// A DCE/RPC bind to the endpoint mapper (what an Outlook client sends to port 135 first).
pub fn dcerpc_bind(call_id: u32) -> Vec<u8> {
    let mut b = dcerpc_header(11, 72, call_id);
    b.extend_from_slice(&4280u16.to_le_bytes());
    b.extend_from_slice(&4280u16.to_le_bytes());
    b.extend_from_slice(&0u32.to_le_bytes()); // association group
    b.extend_from_slice(&[1, 0, 0, 0]); // one context element
    b.extend_from_slice(&0u16.to_le_bytes()); // context id
    b.extend_from_slice(&[1, 0]); // one transfer syntax
    b.extend_from_slice(&EPM_UUID);
    b.extend_from_slice(&[3, 0, 0, 0]);
    b.extend_from_slice(&NDR_UUID);
    b.extend_from_slice(&[2, 0, 0, 0]);
    b
}

/// The server's bind_ack accepting NDR.
pub fn dcerpc_bind_ack(call_id: u32) -> Vec<u8> {
    let mut b = dcerpc_header(12, 60, call_id);
    b.extend_from_slice(&4280u16.to_le_bytes());
    b.extend_from_slice(&4280u16.to_le_bytes());
    b.extend_from_slice(&0x1234u32.to_le_bytes()); // association group
    b.extend_from_slice(&4u16.to_le_bytes());
    b.extend_from_slice(b"135\0");
    b.extend_from_slice(&[0, 0]); // align to 4
    b.extend_from_slice(&[1, 0, 0, 0]); // one result
    b.extend_from_slice(&[0, 0, 0, 0]); // acceptance, no reason
    b.extend_from_slice(&NDR_UUID);
    b.extend_from_slice(&[2, 0, 0, 0]);
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dns_query_hex_fixture() {
        // id 0x1234, RD, one question: A IN demo.example.
        let q = dns_query(0x1234, "demo.example");
        assert_eq!(
            q,
            [
                0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, // header
                4, b'd', b'e', b'm', b'o', 7, b'e', b'x', b'a', b'm', b'p', b'l', b'e', 0, // name
                0, 1, 0, 1, // A IN
            ]
        );
    }

    #[test]
    fn tns_data_hex_fixture() {
        // length 13, checksum 0, type 6 (Data), reserved, header checksum 0, data flags 0, "abc".
        assert_eq!(tns_data(b"abc"), [0, 13, 0, 0, 6, 0, 0, 0, 0, 0, b'a', b'b', b'c']);
    }

    #[test]
    fn dcerpc_lengths_agree() {
        for pdu in [dcerpc_bind(1), dcerpc_bind_ack(1)] {
            assert_eq!(usize::from(u16::from_le_bytes([pdu[8], pdu[9]])), pdu.len());
        }
    }

    #[test]
    fn client_hello_lengths_agree() {
        let mut rng = Rng::new(1);
        let r = tls_client_hello(&mut rng, "www.example.net");
        assert_eq!(&r[..3], &[22, 3, 1]);
        assert_eq!(usize::from(u16::from_be_bytes([r[3], r[4]])), r.len() - 5);
        assert_eq!(r[5], 1);
        let hs_len = (usize::from(r[6]) << 16) | (usize::from(r[7]) << 8) | usize::from(r[8]);
        assert_eq!(hs_len, r.len() - 9);
        assert!(r.windows(15).any(|w| w == b"www.example.net"));
    }

    #[test]
    fn http_response_is_about_the_size_asked_and_says_its_length() {
        let mut rng = Rng::new(1);
        let r = http_response(&mut rng, 1000);
        let text = String::from_utf8(r.clone()).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(head.contains(&format!("Content-Length: {}", body.len())));
        assert!((995..=1000).contains(&r.len()));
    }
}
