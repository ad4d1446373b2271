//! A TLS 1.2 handshake built by hand (records, hellos and a self-made
//! certificate, assembled as DER; x509-parser does not check signatures, so
//! the signature is a placeholder): the conversation the protocol test kit
//! runs, and the builders the parser's own tests use.

use vigil_types::Direction::{self, ToClient, ToServer};

// ---- record and handshake builders ----

/// A record: content type, version 3.x, body.
pub(crate) fn record(content_type: u8, minor: u8, body: &[u8]) -> Vec<u8> {
    let mut v = vec![content_type, 3, minor];
    v.extend(u16::try_from(body.len()).unwrap().to_be_bytes());
    v.extend_from_slice(body);
    v
}

/// A handshake message: type, 24-bit length, body.
pub(crate) fn hs(ty: u8, body: &[u8]) -> Vec<u8> {
    let mut v = vec![ty];
    v.extend(&u32::try_from(body.len()).unwrap().to_be_bytes()[1..]);
    v.extend_from_slice(body);
    v
}

pub(crate) fn u16s(values: &[u16]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_be_bytes()).collect()
}

/// A 16-bit length then `data`.
pub(crate) fn l16(data: &[u8]) -> Vec<u8> {
    [u16::try_from(data.len()).unwrap().to_be_bytes().to_vec(), data.to_vec()].concat()
}

/// An extensions block.
pub(crate) fn exts(list: &[(u16, Vec<u8>)]) -> Vec<u8> {
    l16(&list.iter().flat_map(|(id, data)| [id.to_be_bytes().to_vec(), l16(data)].concat()).collect::<Vec<_>>())
}

pub(crate) fn sni(host: &str) -> Vec<u8> {
    l16(&[vec![0], l16(host.as_bytes())].concat())
}

pub(crate) fn alpn(protos: &[&str]) -> Vec<u8> {
    l16(&protos
        .iter()
        .flat_map(|p| [vec![u8::try_from(p.len()).unwrap()], p.as_bytes().to_vec()].concat())
        .collect::<Vec<_>>())
}

/// ClientHello body: version 0x0303, random of 0x11, a 32-byte session id, ciphers, null
/// compression, extensions.
pub(crate) fn client_hello(ciphers: &[u16], ext: &[(u16, Vec<u8>)]) -> Vec<u8> {
    [vec![3, 3], vec![0x11; 32], vec![32], vec![0x22; 32], l16(&u16s(ciphers)), vec![1, 0], exts(ext)].concat()
}

/// ServerHello body with the given legacy version, session id, cipher and extensions.
pub(crate) fn server_hello(version: u16, random: &[u8; 32], session_id: &[u8], cipher: u16, ext: &[(u16, Vec<u8>)]) -> Vec<u8> {
    let sid = [vec![u8::try_from(session_id.len()).unwrap()], session_id.to_vec()].concat();
    [version.to_be_bytes().to_vec(), random.to_vec(), sid, cipher.to_be_bytes().to_vec(), vec![0], exts(ext)].concat()
}

/// Certificate message body: 24-bit list length, each certificate with a 24-bit length.
pub(crate) fn certificate_msg(certs: &[Vec<u8>]) -> Vec<u8> {
    let list: Vec<u8> = certs
        .iter()
        .flat_map(|c| [u32::try_from(c.len()).unwrap().to_be_bytes()[1..].to_vec(), c.clone()].concat())
        .collect();
    [u32::try_from(list.len()).unwrap().to_be_bytes()[1..].to_vec(), list].concat()
}

/// The ClientHello of suricata-verify's tls13-draft28 case, plus GREASE values JA3 must skip.
#[cfg(test)]
pub(crate) fn draft28_hello() -> Vec<u8> {
    let ciphers = [
        0x0a0a, 4866, 4867, 4865, 4868, 49196, 52393, 49325, 49162, 49195, 49324, 49161, 49200, 52392, 49172, 49199,
        49171, 157, 49309, 53, 156, 49308, 47, 159, 52394, 49311, 57, 158, 49310, 51,
    ];
    client_hello(
        &ciphers,
        &[
            (0x1a1a, vec![]),
            (5, vec![1, 0, 0, 0, 0]),
            (10, l16(&u16s(&[0x2a2a, 23]))),
            (11, vec![1, 0]),
            (13, l16(&u16s(&[0x0403, 0x0804]))),
            (22, vec![]),
            (23, vec![]),
            (35, vec![]),
            (51, l16(&[])),
            (43, [vec![4], u16s(&[0x7f1c, 0x0303])].concat()),
            (65281, vec![0]),
            (0, sni("localhost")),
            (45, vec![1, 1]),
        ],
    )
}

// ---- a self-made certificate ----

pub(crate) use crate::codecs::ber::tlv;

pub(crate) fn seq(parts: &[Vec<u8>]) -> Vec<u8> {
    tlv(0x30, &parts.concat())
}

pub(crate) const OID_C: &[u8] = &[0x55, 0x04, 0x06];
pub(crate) const OID_ST: &[u8] = &[0x55, 0x04, 0x08];
pub(crate) const OID_O: &[u8] = &[0x55, 0x04, 0x0a];
pub(crate) const OID_CN: &[u8] = &[0x55, 0x04, 0x03];
pub(crate) const OID_SHA256_RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0b];
pub(crate) const OID_RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];
pub(crate) const OID_SAN: &[u8] = &[0x55, 0x1d, 0x11];

/// A Name of (attribute OID, UTF8String value) RDNs, in order.
pub(crate) fn name(rdns: &[(&[u8], &str)]) -> Vec<u8> {
    seq(&rdns.iter().map(|(oid, v)| tlv(0x31, &seq(&[tlv(0x06, oid), tlv(0x0c, v.as_bytes())]))).collect::<Vec<_>>())
}

/// An X.509 v3 certificate: serial, subject, validity as given, issuer "C=FR, ST=IDF, O=Stamus,
/// CN=SELKS", an RSA key placeholder, a subjectAltName with two DNS names and an IP address.
pub(crate) fn make_cert(serial: &[u8], subject: &[(&[u8], &str)], not_before: Vec<u8>, not_after: Vec<u8>) -> Vec<u8> {
    let alg = seq(&[tlv(0x06, OID_SHA256_RSA), tlv(0x05, &[])]);
    let san = seq(&[tlv(0x82, b"example.com"), tlv(0x82, b"www.example.com"), tlv(0x87, &[10, 0, 0, 1])]);
    let extensions = tlv(0xa3, &seq(&[seq(&[tlv(0x06, OID_SAN), tlv(0x04, &san)])]));
    let tbs = seq(&[
        tlv(0xa0, &tlv(0x02, &[2])),
        tlv(0x02, serial),
        alg.clone(),
        name(&[(OID_C, "FR"), (OID_ST, "IDF"), (OID_O, "Stamus"), (OID_CN, "SELKS")]),
        seq(&[not_before, not_after]),
        name(subject),
        seq(&[
            seq(&[tlv(0x06, OID_RSA), tlv(0x05, &[])]),
            tlv(0x03, &[0, 0x30, 0x06, 0x02, 0x01, 0x05, 0x02, 0x01, 0x03]),
        ]),
        extensions,
    ]);
    seq(&[tbs, alg, tlv(0x03, &[0, 0xde, 0xad, 0xbe, 0xef])])
}

pub(crate) fn server_cert() -> Vec<u8> {
    make_cert(
        &[0x00, 0xc7, 0xd4, 0x28],
        &[(OID_C, "US"), (OID_O, "Example"), (OID_CN, "example.com")],
        tlv(0x17, b"161001000000Z"),
        tlv(0x17, b"261001000000Z"),
    )
}

pub(crate) fn ca_cert() -> Vec<u8> {
    make_cert(&[0x32], &[(OID_CN, "SELKS")], tlv(0x18, b"19691231000000Z"), tlv(0x18, b"20381231001003Z"))
}

/// A TLS 1.2 full handshake, as four flights: client hello; server hello + certificates +
/// hello done, cut into 60-byte records; client key exchange, CCS, encrypted finished and
/// data; server CCS and encrypted data.
pub(crate) fn tls12_flights() -> [(Direction, Vec<u8>); 4] {
    let ch = client_hello(
        &[0xc02f, 0x002f],
        &[(0, sni("example.com")), (16, alpn(&["h2", "http/1.1"])), (10, l16(&u16s(&[23]))), (11, vec![1, 0])],
    );
    let sh = server_hello(
        0x0303,
        &[0x33; 32],
        &[0x44; 32],
        0xc02f,
        &[(65281, vec![0]), (0, vec![]), (11, vec![1, 0]), (16, alpn(&["h2"])), (23, vec![])],
    );
    let server_hs = [hs(2, &sh), hs(11, &certificate_msg(&[server_cert(), ca_cert()])), hs(14, &[])].concat();
    let server1: Vec<u8> = server_hs.chunks(60).flat_map(|c| record(22, 3, c)).collect();
    let client2 = [
        record(22, 3, &hs(16, &[0x55; 66])),
        record(20, 3, &[1]),
        record(22, 3, &[0x99; 40]),
        record(23, 3, &[0x77; 30]),
    ]
    .concat();
    let server2 = [record(20, 3, &[1]), record(22, 3, &[0x98; 40]), record(23, 3, &[0x66; 50])].concat();
    [(ToServer, record(22, 1, &hs(1, &ch))), (ToClient, server1), (ToServer, client2), (ToClient, server2)]
}


/// The protocol's sample: [`tls12_flights`].
pub(crate) fn conversation() -> Vec<(Direction, Vec<u8>)> {
    tls12_flights().to_vec()
}
