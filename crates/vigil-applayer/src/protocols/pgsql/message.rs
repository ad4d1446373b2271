//! PostgreSQL's frontend/backend protocol (version 3.0) messages, as far as
//! Suricata 8 logs them: the untyped startup-phase messages a client sends
//! first, and the typed ones (a type byte, then a length that counts
//! itself).

/// What a client sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    SslRequest,
    GssEncRequest,
    Startup { major: u16, minor: u16, params: Vec<(Vec<u8>, Vec<u8>)> },
    Cancel { pid: u32, key: u32 },
    Password(Vec<u8>),
    SaslInitial { mechanism: Vec<u8>, param: Vec<u8> },
    SaslResponse(Vec<u8>),
    Query(Vec<u8>),
    /// CopyData messages of a COPY FROM STDIN: how many, how many bytes,
    /// and whether CopyDone ended them.
    CopyIn { count: u64, size: u64, done: bool },
    Terminate,
    /// A startup-phase code the protocol does not have.
    Unknown,
}

/// What a server answers, DataRow and CopyData messages consolidated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Response {
    Ssl(bool),
    /// An authentication request or result: its code and payload.
    Auth(u32, Vec<u8>),
    ParameterStatus(Vec<u8>, Vec<u8>),
    BackendKey { pid: u32, key: u32 },
    RowDescription(u16),
    DataRows { rows: u64, size: u64 },
    CommandComplete(Vec<u8>),
    /// ErrorResponse or NoticeResponse: its fields by type.
    Fields(Vec<(u8, Vec<u8>)>),
    CopyIn(u16),
    CopyOut(u16),
    CopyDataOut { rows: u64, size: u64 },
    CopyDone,
    Notification { pid: u32, channel: Vec<u8>, payload: Vec<u8> },
    ReadyForQuery,
    Other(u8),
}

pub const SSL_REQUEST: u32 = 80_877_103;
pub const CANCEL_REQUEST: u32 = 80_877_102;
pub const GSSENC_REQUEST: u32 = 80_877_104;

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    b.get(at..at + 2).map(|x| u16::from_be_bytes([x[0], x[1]]))
}

pub fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at + 4).map(|x| u32::from_be_bytes([x[0], x[1], x[2], x[3]]))
}

/// NUL-terminated strings from the start of `b`, up to an empty one or the end.
fn cstrings(b: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut rest = b;
    while let Some(end) = rest.iter().position(|&c| c == 0) {
        if end == 0 {
            break;
        }
        out.push(&rest[..end]);
        rest = &rest[end + 1..];
    }
    out
}

/// An untyped startup-phase message (its length and code included).
pub fn startup(msg: &[u8]) -> Option<Request> {
    let code = u32_at(msg, 4)?;
    Some(match code {
        SSL_REQUEST => Request::SslRequest,
        GSSENC_REQUEST => Request::GssEncRequest,
        CANCEL_REQUEST => Request::Cancel { pid: u32_at(msg, 8)?, key: u32_at(msg, 12)? },
        c if c >> 16 == 3 => {
            let strings = cstrings(&msg[8..]);
            let params = strings.chunks_exact(2).map(|kv| (kv[0].to_vec(), kv[1].to_vec())).collect();
            Request::Startup { major: 3, minor: c as u16, params }
        }
        _ => Request::Unknown,
    })
}

/// A typed message from the client: its type and body (after the length).
/// `sasl`: the server asked for SASL, so a `p` is a SASL message;
/// `initial`: none was sent yet.
pub fn request(kind: u8, body: &[u8], sasl: bool, initial: bool) -> Option<Request> {
    Some(match kind {
        b'p' if sasl && initial => {
            let mechanism = body.split(|&c| c == 0).next()?.to_vec();
            let at = mechanism.len() + 1;
            let len = u32_at(body, at)?;
            let param = if len == u32::MAX { Vec::new() } else { body.get(at + 4..)?.to_vec() };
            Request::SaslInitial { mechanism, param }
        }
        b'p' if sasl => Request::SaslResponse(body.to_vec()),
        b'p' => Request::Password(body.strip_suffix(&[0]).unwrap_or(body).to_vec()),
        b'Q' => Request::Query(body.strip_suffix(&[0]).unwrap_or(body).to_vec()),
        b'X' => Request::Terminate,
        _ => return None,
    })
}

/// A typed message from the server (DataRow and CopyData are counted by
/// the parser, not read here).
pub fn response(kind: u8, body: &[u8]) -> Option<Response> {
    Some(match kind {
        b'R' => {
            let code = u32_at(body, 0)?;
            Response::Auth(code, body[4..].to_vec())
        }
        b'S' => {
            let kv = cstrings(body);
            Response::ParameterStatus(kv.first()?.to_vec(), kv.get(1).map(|v| v.to_vec()).unwrap_or_default())
        }
        b'K' => Response::BackendKey { pid: u32_at(body, 0)?, key: u32_at(body, 4)? },
        b'T' => Response::RowDescription(u16_at(body, 0)?),
        b'C' => Response::CommandComplete(body.strip_suffix(&[0]).unwrap_or(body).to_vec()),
        b'E' | b'N' => {
            let mut fields = Vec::new();
            let mut rest = body;
            while let Some((&t, r)) = rest.split_first() {
                if t == 0 {
                    break;
                }
                let end = r.iter().position(|&c| c == 0)?;
                fields.push((t, r[..end].to_vec()));
                rest = &r[end + 1..];
            }
            Response::Fields(fields)
        }
        b'G' => Response::CopyIn(u16_at(body, 1)?),
        b'H' => Response::CopyOut(u16_at(body, 1)?),
        b'c' => Response::CopyDone,
        b'A' => {
            let pid = u32_at(body, 0)?;
            let kv = cstrings(&body[4..]);
            Response::Notification { pid, channel: kv.first()?.to_vec(), payload: kv.get(1).map(|v| v.to_vec()).unwrap_or_default() }
        }
        b'Z' => Response::ReadyForQuery,
        other => Response::Other(other),
    })
}

/// Suricata's names of the fields of an ErrorResponse or NoticeResponse.
pub fn field_name(t: u8) -> Option<&'static str> {
    Some(match t {
        b'S' => "severity_localizable",
        b'V' => "severity_non_localizable",
        b'C' => "code",
        b'M' => "message",
        b'D' => "detail",
        b'H' => "hint",
        b'P' => "position",
        b'p' => "internal_position",
        b'q' => "internal_query",
        b'W' => "where",
        b's' => "schema_name",
        b't' => "table_name",
        b'c' => "column_name",
        b'd' => "data_type_name",
        b'n' => "constraint_name",
        b'F' => "file",
        b'L' => "line",
        b'R' => "routine",
        _ => return None,
    })
}

/// A parameter's name as Suricata logs it: `DateStyle` becomes `date_style`.
pub fn snake(name: &[u8]) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for (i, &c) in name.iter().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 && !name[i - 1].is_ascii_uppercase() && name[i - 1] != b'_' {
                out.push('_');
            }
            out.push(char::from(c.to_ascii_lowercase()));
        } else {
            out.push(char::from(c));
        }
    }
    if out.is_ascii() {
        out
    } else {
        crate::proto::escaped_text(name)
    }
}

/// The name of an authentication request or result, by code.
pub fn auth_name(code: u32) -> &'static str {
    match code {
        0 => "authentication_ok",
        2 => "authentication_kerberos_v5",
        3 => "authentication_cleartext_password",
        5 => "authentication_md5_password",
        6 => "authentication_scm_credential",
        7 => "authentication_gss",
        8 => "authentication_gss_continue",
        9 => "authentication_sspi",
        10 => "authentication_sasl",
        11 => "authentication_sasl_continue",
        12 => "authentication_sasl_final",
        _ => "authentication_unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn startup_messages_by_code() {
        let mut m = vec![0, 0, 0, 0, 0, 3, 0, 0];
        m.extend_from_slice(b"user\0bob\0database\0db\0\0");
        let Some(Request::Startup { params, .. }) = startup(&m) else { panic!() };
        assert_eq!(params, [(b"user".to_vec(), b"bob".to_vec()), (b"database".to_vec(), b"db".to_vec())]);
        assert_eq!(startup(&[0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]), Some(Request::SslRequest));
        assert_eq!(startup(&[0, 0, 0, 8, 0, 0xff, 0, 0xff]), Some(Request::Unknown));
        assert_eq!(startup(&[0, 0, 0, 16, 0x04, 0xd2, 0x16, 0x2e, 0, 0, 0, 1]), None);
    }

    #[test]
    fn names_and_sizes() {
        assert_eq!(snake(b"DateStyle"), "date_style");
        assert_eq!(snake(b"server_version"), "server_version");
        assert_eq!(snake(b"IntervalStyle"), "interval_style");
        let Some(Response::Fields(f)) = response(b'E', b"SERROR\0C57014\0Mstop\0\0") else { panic!() };
        assert_eq!(f[1], (b'C', b"57014".to_vec()));
    }
}
