//! File keywords: `filesize` on HTTP bodies; `filemd5`, `filesha1`,
//! `filesha256` against hash lists; `filestore`, what a match stores.
//!
//! Suricata treats each HTTP body as a file (the request body to the server, the response body
//! to the client), sized by its decoded bytes plus the bytes lost to capture gaps. `filesize`
//! compares that size once the file is closed, as Suricata's matcher does: a body still
//! arriving could grow past any bound. A file cut short (a gap, the flow ending mid-body) is
//! "truncated"; only `>` and `>=` are decided on it, since what was seen is a lower bound. A
//! message without body bytes has no file, and no `filesize` matches it.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;
use vigil_applayer::files::Hashes;
use vigil_applayer::File;
use vigil_applayer::TxRef;
use vigil_rules::{IntCmp, Value};
use vigil_types::Direction;

/// Which digest a hash list holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HashKind {
    Md5,
    Sha1,
    Sha256,
}

impl HashKind {
    fn len(self) -> usize {
        match self {
            HashKind::Md5 => 16,
            HashKind::Sha1 => 20,
            HashKind::Sha256 => 32,
        }
    }

    fn of(self, h: &Hashes) -> Option<&[u8]> {
        match self {
            HashKind::Md5 => h.md5.as_ref().map(|h| &h[..]),
            HashKind::Sha1 => h.sha1.as_ref().map(|h| &h[..]),
            HashKind::Sha256 => h.sha256.as_ref().map(|h| &h[..]),
        }
    }
}

/// `filemd5`/`filesha1`/`filesha256:[!]list`: a file whose digest is (or,
/// negated, is not) in the list. A file without that digest (still open,
/// or with gaps) matches neither way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileHash {
    pub kind: HashKind,
    pub negated: bool,
    pub list: Arc<HashSet<Vec<u8>>>,
}

impl FileHash {
    /// Reads the list: one hex digest per line (what follows it on the
    /// line, blank lines and `#` comments are ignored); a relative path is
    /// taken from the rule file's folder, as Suricata does.
    pub(super) fn compile(name: &str, value: &Value, rule_file: &str) -> Result<FileHash, String> {
        let kind = match name {
            "filemd5" => HashKind::Md5,
            "filesha1" => HashKind::Sha1,
            _ => HashKind::Sha256,
        };
        let text = match value {
            Value::Text(t) | Value::Str(t) => t.trim(),
            _ => return Err("expects a list file name".into()),
        };
        let (negated, file) = match text.strip_prefix('!') {
            Some(f) => (true, f.trim()),
            None => (false, text),
        };
        let file = file.trim_matches('"');
        let path = match Path::new(rule_file).parent() {
            Some(dir) if Path::new(file).is_relative() => dir.join(file),
            _ => Path::new(file).to_path_buf(),
        };
        let body = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut list = HashSet::new();
        for (n, line) in body.lines().enumerate() {
            let Some(word) = line.split_whitespace().next().filter(|w| !w.starts_with('#')) else { continue };
            match decode_hex(word).filter(|h| h.len() == kind.len()) {
                Some(h) => {
                    list.insert(h);
                }
                None => return Err(format!("{}:{}: not a {name} digest: {word}", path.display(), n + 1)),
            }
        }
        Ok(FileHash { kind, negated, list: Arc::new(list) })
    }

    /// Whether one of a side's files matches; `complete`: that side's
    /// transfer is over (an open file then counts as whole).
    pub fn matches(&self, files: &[File], complete: bool) -> bool {
        files.iter().any(|f| {
            let (_, hashes) = f.settled(complete);
            self.kind.of(&hashes).is_some_and(|h| self.list.contains(h) != self.negated)
        })
    }
}

fn decode_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
}

/// `filestore[:direction[,scope]]`: a match asks the file store to keep
/// files. `dirs` empty: the side the rule inspected. `flow`: every file of
/// the flow (scope `ssn`/`flow`), not only the matching transaction's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStoreSpec {
    pub dirs: Vec<Direction>,
    pub flow: bool,
}

impl FileStoreSpec {
    pub(super) fn compile(value: &Value) -> Result<FileStoreSpec, String> {
        let text = match value {
            Value::None => return Ok(FileStoreSpec { dirs: Vec::new(), flow: false }),
            Value::Text(t) | Value::Str(t) => t,
            _ => return Err("expects direction,scope".into()),
        };
        let mut words = text.split(',').map(str::trim);
        let dirs = match words.next().unwrap_or("") {
            "" => Vec::new(),
            "request" | "to_server" => vec![Direction::ToServer],
            "response" | "to_client" => vec![Direction::ToClient],
            "both" => vec![Direction::ToServer, Direction::ToClient],
            other => return Err(format!("unknown direction '{other}'")),
        };
        let flow = match words.next().unwrap_or("file") {
            "file" | "tx" => false,
            "ssn" | "flow" => true,
            other => return Err(format!("unknown scope '{other}'")),
        };
        if words.next().is_some() {
            return Err("expects at most direction,scope".into());
        }
        Ok(FileStoreSpec { dirs, flow })
    }
}

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

    /// Whether the file of `side` has a size that matches: a whole file's
    /// exactly, a truncated one's only where more bytes cannot unmatch it.
    pub fn matches(&self, tx: TxRef<'_>, side: Direction) -> bool {
        match tx.file_size(side) {
            None => false,
            Some((size, true)) => self.cmp.matches(size),
            Some((size, false)) => matches!(self.cmp, IntCmp::Gt(_) | IntCmp::Ge(_)) && self.cmp.matches(size),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vigil_applayer::http::{HttpConfig, HttpParser, PROTO};
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
        assert!(filesize("<100").matches(TxRef::new(&PROTO, tx), ToServer));
        assert!(!filesize("<100").matches(TxRef::new(&PROTO, tx), ToClient));
        assert!(filesize(">100").matches(TxRef::new(&PROTO, tx), ToClient));
        assert!(filesize("150").matches(TxRef::new(&PROTO, tx), ToClient));
    }

    #[test]
    fn open_empty_and_truncated_files() {
        // Half the body: still open, nothing decided.
        let p = exchange(&[
            (ToServer, b"GET / HTTP/1.1\r\nHost: h\r\n\r\n"),
            (ToClient, b"HTTP/1.1 200 OK\r\nContent-Length: 150\r\n\r\n"),
            (ToClient, &[b'x'; 75]),
        ]);
        assert!(!filesize(">10").matches(TxRef::new(&PROTO, &p.txs()[0]), ToClient));
        assert!(!filesize("<1000").matches(TxRef::new(&PROTO, &p.txs()[0]), ToClient));

        // No body, no file.
        let p = exchange(&[
            (ToServer, b"GET / HTTP/1.1\r\nHost: h\r\n\r\n"),
            (ToClient, b"HTTP/1.1 204 No Content\r\n\r\n"),
        ]);
        assert!(!filesize("<100").matches(TxRef::new(&PROTO, &p.txs()[0]), ToClient));

        // A gap inside the body: the file is truncated, only lower bounds are decided.
        let mut p = exchange(&[
            (ToServer, b"GET / HTTP/1.1\r\nHost: h\r\n\r\n"),
            (ToClient, b"HTTP/1.1 200 OK\r\nContent-Length: 150\r\n\r\n"),
            (ToClient, &[b'x'; 50]),
        ]);
        p.on_gap(ToClient, 100);
        let tx = &p.txs()[0];
        assert!(tx.complete(ToClient) && !tx.side_complete(ToClient));
        assert!(filesize(">=150").matches(TxRef::new(&PROTO, tx), ToClient));
        assert!(!filesize("<1000").matches(TxRef::new(&PROTO, tx), ToClient));
    }
}
