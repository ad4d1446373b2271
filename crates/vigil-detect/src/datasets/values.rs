//! A set's values as its files write them, one a line: strings in base64,
//! digests in hex, IPv4 addresses dotted, IPv6 ones with every group's four
//! digits (as Suricata writes them); a reputation after a comma.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use vigil_rules::keywords::dataset::SetKind;

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn base64(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(B64[(n >> (18 - 6 * i)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn hex(data: &[u8], want: usize) -> Result<Vec<u8>, String> {
    let s = data.trim_ascii();
    if s.len() != want * 2 {
        return Err(format!("expected {} hex digits, got {}", want * 2, s.len()));
    }
    let digit =
        |c: u8| (c as char).to_digit(16).map(|d| d as u8).ok_or_else(|| format!("'{}' is no hex digit", c as char));
    s.chunks(2).map(|p| Ok(digit(p[0])? << 4 | digit(p[1])?)).collect()
}

/// One line of a set's file: its value in the set's form, and its
/// reputation (0 in a set without them).
pub fn parse_line(kind: SetKind, rep: bool, line: &str) -> Result<(Vec<u8>, u16), String> {
    let (value, reputation) = match rep {
        true => {
            let (v, r) = line.rsplit_once(',').ok_or("expected a value and a reputation")?;
            let r = r.trim();
            let r: u16 = r.parse().map_err(|_| format!("invalid datarep value '{r}' (0 to 65535)"))?;
            (v.trim(), r)
        }
        false => (line, 0),
    };
    let bytes = match kind {
        SetKind::String => {
            let mut out = Vec::new();
            let alphabet = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'=');
            if !value.bytes().all(alphabet) || !crate::transform::decode_rfc4648(value.as_bytes(), &mut out) {
                return Err(format!("'{value}' is not base64"));
            }
            out
        }
        SetKind::Md5 => hex(value.as_bytes(), 16)?,
        SetKind::Sha256 => hex(value.as_bytes(), 32)?,
        SetKind::Ipv4 => {
            value.parse::<Ipv4Addr>().map_err(|_| format!("'{value}' is no IPv4 address"))?.octets().to_vec()
        }
        // An IPv4 address in an `ip` set: its four bytes, then zeros, as Suricata keeps it.
        SetKind::Ip => match value.parse::<IpAddr>().map_err(|_| format!("'{value}' is no IP address"))? {
            IpAddr::V4(a) => {
                let mut v = a.octets().to_vec();
                v.resize(16, 0);
                v
            }
            IpAddr::V6(a) => a.octets().to_vec(),
        },
    };
    Ok((bytes, reputation))
}

/// A value as its set's file writes it.
pub fn format_value(kind: SetKind, value: &[u8]) -> String {
    match kind {
        SetKind::String => base64(value),
        SetKind::Md5 | SetKind::Sha256 => value.iter().map(|b| format!("{b:02x}")).collect(),
        SetKind::Ipv4 => match <[u8; 4]>::try_from(value) {
            Ok(a) => Ipv4Addr::from(a).to_string(),
            Err(_) => base64(value),
        },
        // Four bytes and twelve zeros are an IPv4 address there (Suricata
        // writes them so, whatever IPv6 address has that form).
        SetKind::Ip if value.len() == 16 && value[4..].iter().all(|&b| b == 0) => {
            Ipv4Addr::new(value[0], value[1], value[2], value[3]).to_string()
        }
        SetKind::Ip => match <[u8; 16]>::try_from(value) {
            Ok(a) => {
                let groups = Ipv6Addr::from(a).segments();
                groups.iter().map(|g| format!("{g:04x}")).collect::<Vec<_>>().join(":")
            }
            Err(_) => base64(value),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_both_ways() {
        let round = |kind, line: &str| {
            let (v, _) = parse_line(kind, false, line).unwrap();
            assert_eq!(format_value(kind, &v), line, "{kind:?}");
            v
        };
        assert_eq!(round(SetKind::String, "ZXhhbXBsZS5jb20="), b"example.com");
        assert_eq!(round(SetKind::String, "cGFyYW0="), b"param");
        assert_eq!(round(SetKind::String, "cGFyYW0z"), b"param3");
        round(SetKind::Md5, "1d5920f4b44b27a802bd77c4f0536f5a");
        assert_eq!(round(SetKind::Ipv4, "198.18.0.1"), [198, 18, 0, 1]);
        round(SetKind::Ip, "2001:0db8:0000:0000:0000:0000:0000:0001");
        let (v, _) = parse_line(SetKind::Ip, false, "4:5::6").unwrap();
        assert_eq!(format_value(SetKind::Ip, &v), "0004:0005:0000:0000:0000:0000:0000:0006");
        let (v, _) = parse_line(SetKind::Ip, false, "198.18.0.1").unwrap();
        assert_eq!(v[..4], [198, 18, 0, 1]);
        assert_eq!(format_value(SetKind::Ip, &v), "198.18.0.1");
    }

    #[test]
    fn reputations_and_bad_lines() {
        assert_eq!(parse_line(SetKind::Md5, true, "1d5920f4b44b27a802bd77c4f0536f5a,200").unwrap().1, 200);
        let e = parse_line(SetKind::Md5, true, "5ababd603b22780302dd8d83498e5172,65536").unwrap_err();
        assert!(e.contains("invalid datarep value"), "{e}");
        assert!(parse_line(SetKind::Md5, true, "5ababd603b22780302dd8d83498e5172,111.0").is_err());
        assert!(parse_line(SetKind::Md5, false, "1d59").is_err());
        assert!(parse_line(SetKind::String, false, "not base64!").is_err());
        assert!(parse_line(SetKind::Ipv4, false, "::1").is_err());
    }
}
