//! File keywords on HTTP bodies: `filesize`.
//!
//! Suricata treats each HTTP body as a file (the request body to the server, the response body
//! to the client), sized by its decoded bytes plus the bytes lost to capture gaps. `filesize`
//! compares that size once the file is closed, as Suricata's matcher does: a body still
//! arriving could grow past any bound. A file cut short (a gap, the flow ending mid-body) is
//! "truncated"; only `>` and `>=` are decided on it, since what was seen is a lower bound. A
//! message without body bytes has no file, and no `filesize` matches it.

use vigil_applayer::http::HttpTx;
use vigil_applayer::Transaction;
use vigil_rules::{IntCmp, Value};
use vigil_types::Direction;

/// `filesize:[to_server|to_client,]cmp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileSize {
    pub cmp: IntCmp,
    /// The body it sizes; `None`: the side the rule inspects.
    pub side: Option<Direction>,
}

impl FileSize {
    pub(super) fn compile(value: &Value) -> Result<FileSize, String> {
        match value {
            Value::Int(cmp) => Ok(FileSize { cmp: *cmp, side: None }),
            // The rules parser validated the comparison after the direction.
            Value::Text(t) => {
                let (dir, cmp) = t.split_once(',').ok_or("expects [to_server|to_client,] and a comparison")?;
                let side = match dir.trim() {
                    "to_server" => Direction::ToServer,
                    "to_client" => Direction::ToClient,
                    other => return Err(format!("unknown direction '{other}'")),
                };
                let cmp = IntCmp::parse(cmp, u64::MAX).map_err(|e| e.to_string())?;
                Ok(FileSize { cmp, side: Some(side) })
            }
            _ => Err("expects an integer comparison".into()),
        }
    }

    /// Whether the body of `side` is a file whose size matches.
    pub fn matches(&self, tx: &HttpTx, side: Direction) -> bool {
        let size = match side {
            Direction::ToServer => tx.request_body_len(),
            Direction::ToClient => tx.response_body_len(),
        };
        if size == 0 || !tx.complete(side) {
            return false;
        }
        if tx.side_complete(side) {
            return self.cmp.matches(size);
        }
        matches!(self.cmp, IntCmp::Gt(_) | IntCmp::Ge(_)) && self.cmp.matches(size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vigil_applayer::http::{HttpConfig, HttpParser};
    use vigil_applayer::AppParser;
    use vigil_types::Direction::{ToClient, ToServer};

    fn filesize(opt: &str) -> FileSize {
        let rule = vigil_rules::Rule::parse(&format!("alert http any any -> any any (filesize:{opt}; sid:1;)"))
            .unwrap_or_else(|e| panic!("{opt}: {e}"));
        FileSize::compile(&rule.options[0].value).unwrap_or_else(|e| panic!("{opt}: {e}"))
    }

    fn exchange(segs: &[(Direction, &[u8])]) -> HttpParser {
        let mut p = HttpParser::new(HttpConfig::default());
        for (dir, bytes) in segs {
            p.parse(*dir, bytes);
        }
        p
    }

    #[test]
    fn forms() {
        assert_eq!(filesize(">100"), FileSize { cmp: IntCmp::Gt(100), side: None });
        assert_eq!(filesize("to_client, <100"), FileSize { cmp: IntCmp::Lt(100), side: Some(ToClient) });
        assert_eq!(filesize("to_server,100<>200"), FileSize { cmp: IntCmp::Range(100, 200), side: Some(ToServer) });
        assert!(FileSize::compile(&Value::Text("sideways, >1".into())).is_err());
        assert!(FileSize::compile(&Value::Text(">1".into())).is_err());
    }

    #[test]
    fn sizes_closed_bodies_of_either_side() {
        let p = exchange(&[
            (ToServer, b"POST /up HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc"),
            (ToClient, b"HTTP/1.1 200 OK\r\nContent-Length: 150\r\n\r\n"),
            (ToClient, &[b'x'; 150]),
        ]);
        let tx = &p.txs()[0];
        assert!(filesize("<100").matches(tx, ToServer));
        assert!(!filesize("<100").matches(tx, ToClient));
        assert!(filesize(">100").matches(tx, ToClient));
        assert!(filesize("150").matches(tx, ToClient));
    }

    #[test]
    fn open_empty_and_truncated_files() {
        // Half the body: still open, nothing decided.
        let p = exchange(&[
            (ToServer, b"GET / HTTP/1.1\r\nHost: h\r\n\r\n"),
            (ToClient, b"HTTP/1.1 200 OK\r\nContent-Length: 150\r\n\r\n"),
            (ToClient, &[b'x'; 75]),
        ]);
        assert!(!filesize(">10").matches(&p.txs()[0], ToClient));
        assert!(!filesize("<1000").matches(&p.txs()[0], ToClient));

        // No body, no file.
        let p = exchange(&[
            (ToServer, b"GET / HTTP/1.1\r\nHost: h\r\n\r\n"),
            (ToClient, b"HTTP/1.1 204 No Content\r\n\r\n"),
        ]);
        assert!(!filesize("<100").matches(&p.txs()[0], ToClient));

        // A gap inside the body: the file is truncated, only lower bounds are decided.
        let mut p = exchange(&[
            (ToServer, b"GET / HTTP/1.1\r\nHost: h\r\n\r\n"),
            (ToClient, b"HTTP/1.1 200 OK\r\nContent-Length: 150\r\n\r\n"),
            (ToClient, &[b'x'; 50]),
        ]);
        p.on_gap(ToClient, 100);
        let tx = &p.txs()[0];
        assert!(tx.complete(ToClient) && !tx.side_complete(ToClient));
        assert!(filesize(">=150").matches(tx, ToClient));
        assert!(!filesize("<1000").matches(tx, ToClient));
    }
}
