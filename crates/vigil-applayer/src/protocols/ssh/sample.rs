//! A short SSH session (banners, KEXINITs, key exchange, NEWKEYS, then
//! encrypted bytes): the conversation the protocol test kit runs, and the
//! builders the parser's own tests use.

use vigil_types::Direction;

/// An SSH binary packet around `payload` (type byte first), padded to 8.
pub(super) fn packet(payload: &[u8]) -> Vec<u8> {
    let padding = 8 - (payload.len() + 5) % 8 + 4;
    let len = (payload.len() + padding + 1) as u32;
    let mut out = len.to_be_bytes().to_vec();
    out.push(padding as u8);
    out.extend_from_slice(payload);
    out.extend(std::iter::repeat_n(0u8, padding));
    out
}

/// A KEXINIT payload with these ten name-lists.
fn kexinit(lists: [&str; 10]) -> Vec<u8> {
    let mut p = vec![20];
    p.extend_from_slice(&[0xab; 16]);
    for l in lists {
        p.extend_from_slice(&(l.len() as u32).to_be_bytes());
        p.extend_from_slice(l.as_bytes());
    }
    p.extend_from_slice(&[0, 0, 0, 0, 0]);
    p
}

const CLIENT_LISTS: [&str; 10] = [
    "curve25519-sha256,ext-info-c",
    "ssh-ed25519",
    "aes128-ctr,aes256-ctr",
    "aes256-ctr",
    "hmac-sha2-256",
    "hmac-sha1",
    "none,zlib@openssh.com",
    "none",
    "",
    "",
];

pub(super) fn client_stream() -> Vec<u8> {
    let mut s = b"SSH-2.0-OpenSSH_8.9p1 Ubuntu-3\r\n".to_vec();
    s.extend(packet(&kexinit(CLIENT_LISTS)));
    s.extend(packet(&[30, 0, 0, 0, 4, 1, 2, 3, 4])); // KEX_ECDH_INIT
    s.extend(packet(&[21])); // NEWKEYS
    s.extend_from_slice(&[0x5a; 300]); // encrypted
    s
}

pub(super) fn server_stream() -> Vec<u8> {
    let mut s = b"Welcome\r\nSSH-1.99-Cisco-1.25\r\n".to_vec();
    let mut lists = CLIENT_LISTS;
    lists[7] = "zlib";
    s.extend(packet(&kexinit(lists)));
    s.extend(packet(&[21]));
    s
}

/// Both sides of [`client_stream`] and [`server_stream`], interleaved.
pub(super) fn conversation() -> Vec<(Direction, Vec<u8>)> {
    let (c, s) = (client_stream(), server_stream());
    let (c1, c2) = c.split_at(40);
    vec![(Direction::ToServer, c1.to_vec()), (Direction::ToClient, s), (Direction::ToServer, c2.to_vec())]
}
