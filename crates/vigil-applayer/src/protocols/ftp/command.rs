//! FTP's command lines and the data-channel addresses of PORT, EPRT and
//! the 227/229 replies (RFC 959, RFC 2428).

use std::net::{IpAddr, Ipv4Addr};

/// What a command does with the data channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transfer {
    /// Sets up nothing and moves nothing.
    None,
    /// PORT or EPRT: the server is to connect to the client (active mode).
    Active,
    /// PASV or EPSV: the client is to connect to the server (passive mode).
    Passive,
    /// A file from the server (RETR).
    Download,
    /// A file to the server (STOR, APPE, STOU).
    Upload,
    /// A listing from the server (LIST, NLST, MLSD): data, not a file.
    Listing,
}

/// The commands Suricata 8 knows, by canonical name, with RFC 775's `X`
/// spellings as aliases. A line whose first word is none of them forms no
/// transaction, as in Suricata.
const COMMANDS: &[(&str, Transfer)] = &[
    ("ABOR", Transfer::None),
    ("ACCT", Transfer::None),
    ("ALLO", Transfer::None),
    ("APPE", Transfer::Upload),
    ("CDUP", Transfer::None),
    ("CHMOD", Transfer::None),
    ("CWD", Transfer::None),
    ("DELE", Transfer::None),
    ("EPRT", Transfer::Active),
    ("EPSV", Transfer::Passive),
    ("HELP", Transfer::None),
    ("IDLE", Transfer::None),
    ("LIST", Transfer::Listing),
    ("MAIL", Transfer::None),
    ("MDTM", Transfer::None),
    ("MKD", Transfer::None),
    ("MLFL", Transfer::None),
    ("MLSD", Transfer::Listing),
    ("MODE", Transfer::None),
    ("MRCP", Transfer::None),
    ("MRSQ", Transfer::None),
    ("MSAM", Transfer::None),
    ("MSND", Transfer::None),
    ("MSOM", Transfer::None),
    ("NLST", Transfer::Listing),
    ("NOOP", Transfer::None),
    ("PASS", Transfer::None),
    ("PASV", Transfer::Passive),
    ("PORT", Transfer::Active),
    ("PWD", Transfer::None),
    ("QUIT", Transfer::None),
    ("REIN", Transfer::None),
    ("REST", Transfer::None),
    ("RETR", Transfer::Download),
    ("RMD", Transfer::None),
    ("RNFR", Transfer::None),
    ("RNTO", Transfer::None),
    ("SITE", Transfer::None),
    ("SIZE", Transfer::None),
    ("SMNT", Transfer::None),
    ("STAT", Transfer::None),
    ("STOR", Transfer::Upload),
    ("STOU", Transfer::Upload),
    ("STRU", Transfer::None),
    ("SYST", Transfer::None),
    ("TYPE", Transfer::None),
    ("UMASK", Transfer::None),
    ("USER", Transfer::None),
];

const ALIASES: &[(&str, &str)] = &[("XCWD", "CWD"), ("XMKD", "MKD"), ("XPWD", "PWD"), ("XRMD", "RMD")];

/// A command line, split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command<'a> {
    /// The canonical name (`CWD` for `XCWD`).
    pub name: &'static str,
    pub transfer: Transfer,
    /// What follows the name and one separator, trailing white space off;
    /// empty when nothing does.
    pub data: &'a [u8],
}

/// Splits a command line (without its line end). Leading white space is
/// skipped; the name is matched without regard to case and must end the
/// word (any byte but a letter or digit ends it).
pub fn parse(line: &[u8]) -> Option<Command<'_>> {
    let start = line.iter().position(|b| !matches!(b, b' ' | b'\t' | 0))?;
    let rest = &line[start..];
    let word_len = rest.iter().position(|b| !b.is_ascii_alphanumeric()).unwrap_or(rest.len());
    let word = &rest[..word_len];
    let canonical = ALIASES.iter().find(|(a, _)| a.as_bytes().eq_ignore_ascii_case(word)).map(|(_, c)| *c);
    let (name, transfer) = COMMANDS
        .iter()
        .copied()
        .find(|(n, _)| canonical.map_or_else(|| n.as_bytes().eq_ignore_ascii_case(word), |c| c == *n))?;
    let data = rest.get(word_len + 1..).unwrap_or_default();
    let end = data.iter().rposition(|b| !b.is_ascii_whitespace()).map_or(0, |i| i + 1);
    Some(Command { name, transfer, data: &data[..end] })
}

/// PORT's `h1,h2,h3,h4,p1,p2`.
pub fn port_command(data: &[u8]) -> Option<(IpAddr, u16)> {
    let n = numbers(data)?;
    let [a, b, c, d, p1, p2] = n[..] else { return None };
    Some((IpAddr::V4(Ipv4Addr::new(a, b, c, d)), u16::from(p1) << 8 | u16::from(p2)))
}

/// EPRT's `|af|address|port|` (any delimiter, as RFC 2428 allows).
pub fn eprt_command(data: &[u8]) -> Option<(IpAddr, u16)> {
    let text = std::str::from_utf8(data).ok()?;
    let delim = text.chars().next()?;
    let mut parts = text.split(delim);
    let (_, af, addr, port) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    let addr: IpAddr = addr.parse().ok()?;
    match (af, addr) {
        ("1", IpAddr::V4(_)) | ("2", IpAddr::V6(_)) => Some((addr, port.parse().ok()?)),
        _ => None,
    }
}

/// The port of a 227 reply's `(h1,h2,h3,h4,p1,p2)`.
pub fn pasv_reply(text: &[u8]) -> Option<u16> {
    let open = text.iter().position(|&b| b == b'(')?;
    let close = open + text[open..].iter().position(|&b| b == b')')?;
    let n = numbers(&text[open + 1..close])?;
    let [_, _, _, _, p1, p2] = n[..] else { return None };
    Some(u16::from(p1) << 8 | u16::from(p2))
}

/// The port of a 229 reply's `(|||port|)`.
pub fn epsv_reply(text: &[u8]) -> Option<u16> {
    let open = text.iter().position(|&b| b == b'(')?;
    let close = open + text[open..].iter().position(|&b| b == b')')?;
    let inner = std::str::from_utf8(&text[open + 1..close]).ok()?;
    let delim = inner.chars().next()?;
    let parts: Vec<&str> = inner.split(delim).collect();
    match parts[..] {
        ["", "", "", port, ""] => port.parse().ok(),
        _ => None,
    }
}

/// Comma-separated numbers below 256.
fn numbers(data: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(data).ok()?;
    text.split(',').map(|n| n.trim().parse::<u8>().ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(line: &str) -> Option<(&'static str, String)> {
        parse(line.as_bytes()).map(|c| (c.name, String::from_utf8_lossy(c.data).into_owned()))
    }

    #[test]
    fn names_are_known_words_in_any_case() {
        assert_eq!(split("USER bob"), Some(("USER", "bob".into())));
        assert_eq!(split("noop extra  args "), Some(("NOOP", "extra  args".into())));
        assert_eq!(split("\tUSER  spaced"), Some(("USER", " spaced".into())));
        assert_eq!(split("XCWD /tmp"), Some(("CWD", "/tmp".into())));
        assert_eq!(split("PWD"), Some(("PWD", String::new())));
        assert_eq!(split("USER\0bin"), Some(("USER", "bin".into())));
        for unknown in ["FEAT", "OPTS UTF8 ON", "AUTH TLS", "XYZW foo", "A", "", "   ", "PASSWORD x", "XCUP"] {
            assert_eq!(split(unknown), None, "{unknown}");
        }
    }

    #[test]
    fn data_channel_addresses() {
        let v4 = |s: &str| s.parse::<IpAddr>().unwrap();
        assert_eq!(port_command(b"198,18,0,1,4,1"), Some((v4("198.18.0.1"), 1025)));
        assert_eq!(port_command(b"1,2,3"), None);
        assert_eq!(port_command(b"1,2,3,4,5,256"), None);
        assert_eq!(eprt_command(b"|1|198.18.0.1|2000|"), Some((v4("198.18.0.1"), 2000)));
        assert_eq!(eprt_command(b"|2|2001:db8::1|3000|"), Some((v4("2001:db8::1"), 3000)));
        assert_eq!(eprt_command(b"|2|198.18.0.1|3000|"), None);
        assert_eq!(pasv_reply(b"Entering Passive Mode (198,18,0,2,19,137)."), Some(5001));
        assert_eq!(pasv_reply(b"=198,18,0,2,19,138"), None);
        assert_eq!(epsv_reply(b"Entering Extended Passive Mode (|||6446|)"), Some(6446));
        assert_eq!(epsv_reply(b"Entering Extended Passive Mode (||6446|)"), None);
    }
}
