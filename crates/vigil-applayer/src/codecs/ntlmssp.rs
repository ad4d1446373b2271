//! NTLMSSP (MS-NLMP) and Kerberos AP-REQ tickets as authentication blobs
//! carry them: in SMB session setups now, in HTTP and DCE/RPC
//! authentication later. Only what logging and detection use is read:
//! the user, domain and host of an AUTHENTICATE message with the client's
//! version, and the realm and service names of a ticket. A blob may wrap
//! either in SPNEGO/GSS-API; the messages are found inside it by their
//! own signatures, so the wrapping's variants need no parsing.

use super::ber::Reader;
use super::find;

const SIGNATURE: &[u8; 8] = b"NTLMSSP\0";
const AUTHENTICATE: u32 = 3;
const NEGOTIATE_UNICODE: u32 = 0x0000_0001;
const NEGOTIATE_VERSION: u32 = 0x0200_0000;

/// What an AUTHENTICATE message says of its client.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Auth {
    pub domain: String,
    pub user: String,
    pub host: String,
    /// `major.minor build B rev R`, when the client sent its version.
    pub version: Option<String>,
}

fn le16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn le32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// Text as MS-NLMP sends it: UTF-16LE when Unicode was negotiated, else
/// bytes of the OEM code page (read as Latin-1).
pub fn text(b: &[u8], unicode: bool) -> String {
    if unicode {
        let units: Vec<u16> = b.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
        String::from_utf16_lossy(&units)
    } else {
        b.iter().map(|&c| char::from(c)).collect()
    }
}

/// The AUTHENTICATE message inside `blob`, if it holds one.
pub fn authenticate(blob: &[u8]) -> Option<Auth> {
    let m = &blob[find(blob, SIGNATURE)?..];
    if le32(m, 8)? != AUTHENTICATE {
        return None;
    }
    let flags = le32(m, 60)?;
    let unicode = flags & NEGOTIATE_UNICODE != 0;
    // A field: length, room, offset from the message's start.
    let field = |at: usize| -> Option<String> {
        let len = usize::from(le16(m, at)?);
        let off = le32(m, at + 4)? as usize;
        Some(text(m.get(off..off.checked_add(len)?)?, unicode))
    };
    let version = if flags & NEGOTIATE_VERSION != 0 {
        m.get(64..72).map(|v| format!("{}.{} build {} rev {}", v[0], v[1], u16::from_le_bytes([v[2], v[3]]), v[7]))
    } else {
        None
    };
    Some(Auth { domain: field(28)?, user: field(36)?, host: field(44)?, version })
}

/// The realm and service names of a Kerberos ticket.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ticket {
    pub realm: String,
    pub snames: Vec<String>,
}

/// Service name parts kept.
const MAX_SNAMES: usize = 16;

/// The Kerberos 5 mechanism's OIDs (RFC 4121's and Microsoft's), as DER.
const KRB5_OIDS: [&[u8]; 2] =
    [b"\x06\x09\x2a\x86\x48\x86\xf7\x12\x01\x02\x02", b"\x06\x09\x2a\x86\x48\x82\xf7\x12\x01\x02\x02"];

/// The ticket of the Kerberos AP-REQ inside `blob`: a GSS-API token of the
/// Kerberos 5 mechanism whose token id says AP-REQ (other mechanisms that
/// carry Kerberos messages, such as IAKERB, are not read).
pub fn ap_req_ticket(blob: &[u8]) -> Option<Ticket> {
    KRB5_OIDS.iter().find_map(|oid| {
        let mut at = 0;
        while let Some(i) = find(&blob[at..], oid) {
            let rest = &blob[at + i + oid.len()..];
            if let Some(t) = rest.strip_prefix(b"\x01\x00").and_then(ticket_of) {
                return Some(t);
            }
            at += i + 1;
        }
        None
    })
}

fn ticket_of(b: &[u8]) -> Option<Ticket> {
    let ap = Reader::new(b).expect(0x6e).ok()?;
    let mut fields = Reader::new(Reader::new(ap).expect(0x30).ok()?);
    let mut ticket = None;
    let mut pvno_ok = false;
    while !fields.is_empty() {
        let f = fields.any().ok()?;
        match f.tag {
            0xa0 => pvno_ok = Reader::new(f.value).uint().ok()? == 5,
            0xa3 => ticket = Some(f.value),
            _ => {}
        }
    }
    if !pvno_ok {
        return None;
    }
    let t = Reader::new(ticket?).expect(0x61).ok()?;
    let mut fields = Reader::new(Reader::new(t).expect(0x30).ok()?);
    let mut out = Ticket::default();
    while !fields.is_empty() {
        let f = fields.any().ok()?;
        match f.tag {
            0xa1 => out.realm = text(Reader::new(f.value).expect(0x1b).ok()?, false),
            0xa2 => {
                let mut name = Reader::new(Reader::new(f.value).expect(0x30).ok()?);
                while !name.is_empty() {
                    let p = name.any().ok()?;
                    if p.tag != 0xa1 {
                        continue;
                    }
                    let mut parts = Reader::new(Reader::new(p.value).expect(0x30).ok()?);
                    while !parts.is_empty() {
                        let s = parts.expect(0x1b).ok()?;
                        if out.snames.len() < MAX_SNAMES {
                            out.snames.push(text(s, false));
                        }
                    }
                }
            }
            _ => {}
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::codecs::ber::tlv;

    #[test]
    fn an_authenticate_message_gives_its_names_and_version() {
        let utf16 = |s: &str| s.encode_utf16().flat_map(|u| u.to_le_bytes()).collect::<Vec<u8>>();
        let (domain, user, host) = (utf16("CORP"), utf16("alice"), utf16("WS01"));
        let mut m = SIGNATURE.to_vec();
        m.extend_from_slice(&3u32.to_le_bytes());
        let mut payload = Vec::new();
        let mut fields = Vec::new();
        let base = 88;
        for part in [&[][..], &[], &domain, &user, &host, &[]] {
            fields.extend_from_slice(&(part.len() as u16).to_le_bytes());
            fields.extend_from_slice(&(part.len() as u16).to_le_bytes());
            fields.extend_from_slice(&((base + payload.len()) as u32).to_le_bytes());
            payload.extend_from_slice(part);
        }
        m.extend_from_slice(&fields);
        m.extend_from_slice(&(NEGOTIATE_UNICODE | NEGOTIATE_VERSION).to_le_bytes());
        m.extend_from_slice(&[10, 0, 0x5a, 0x29, 0, 0, 0, 15]);
        m.resize(base, 0);
        m.extend_from_slice(&payload);
        // Wrapped as SPNEGO would wrap it.
        let blob = tlv(0xa1, &tlv(0x30, &tlv(0xa2, &tlv(0x04, &m))));
        let a = authenticate(&blob).unwrap();
        assert_eq!((a.domain.as_str(), a.user.as_str(), a.host.as_str()), ("CORP", "alice", "WS01"));
        assert_eq!(a.version.as_deref(), Some("10.0 build 10586 rev 15"));
        assert_eq!(authenticate(&blob[..blob.len() - 4]), None, "a field past the end");
        assert_eq!(authenticate(b"no signature here"), None);
    }

    #[test]
    fn a_tickets_realm_and_service_are_read() {
        let sname = tlv(
            0x30,
            &[
                tlv(0xa0, &tlv(0x02, &[2])),
                tlv(0xa1, &tlv(0x30, &[tlv(0x1b, b"cifs"), tlv(0x1b, b"dc.example.org")].concat())),
            ]
            .concat(),
        );
        let ticket = tlv(
            0x61,
            &tlv(
                0x30,
                &[tlv(0xa0, &tlv(0x02, &[5])), tlv(0xa1, &tlv(0x1b, b"EXAMPLE.ORG")), tlv(0xa2, &sname)].concat(),
            ),
        );
        let ap = tlv(
            0x6e,
            &tlv(0x30, &[tlv(0xa0, &tlv(0x02, &[5])), tlv(0xa1, &tlv(0x02, &[14])), tlv(0xa3, &ticket)].concat()),
        );
        let mut blob = vec![0x60, 0x00, 0x6e, 0x01];
        blob.extend_from_slice(KRB5_OIDS[1]);
        blob.extend_from_slice(&[1, 0]);
        blob.extend_from_slice(&ap);
        assert_eq!(ap_req_ticket(&ap), None, "no GSS-API token around it");
        let t = ap_req_ticket(&blob).unwrap();
        assert_eq!(t.realm, "EXAMPLE.ORG");
        assert_eq!(t.snames, ["cifs", "dc.example.org"]);
        assert_eq!(ap_req_ticket(&blob[..blob.len() - 3]), None);
    }
}
