//! App-layer keywords that check a value of a transaction rather than open a buffer: the
//! file keywords `filesize` and the file hashes (see [`super::file`]), on the files of the
//! protocol that carries them; `app-layer-event` for the events a protocol raises on its
//! transactions; and each protocol's own checks ([`vigil_applayer::proto::CheckDef`]: DNS's
//! opcode and codes, TLS's versions and certificates, ...).

use super::file::{FileHash, FileSize};
use std::sync::Arc;
use vigil_applayer::proto::{CheckDef, TxCheck};
use vigil_applayer::{Progress, TxRef};
use vigil_rules::Value;
use vigil_types::{AppProto, Direction};

/// An app-layer keyword that checks a value of a transaction (not a buffer).
#[derive(Debug, Clone)]
pub enum AppCheck {
    /// `filesize`: the size of a file, once it is whole.
    FileSize { proto: AppProto, size: FileSize },
    /// `filemd5`/`filesha1`/`filesha256`: a file's digest in a list.
    FileHash { proto: AppProto, hash: FileHash },
    /// The side carries a file: what `filestore` asks of a rule that has
    /// no other file keyword (Suricata matches such a rule on files only).
    HasFile { proto: AppProto },
    /// A value check of a protocol of the application layer's table.
    Table { proto: AppProto, def: &'static CheckDef, check: Arc<dyn TxCheck> },
    /// `app-layer-event:<proto>.<event>`: the event's bit in the
    /// transaction's [`ProtoTx::events`](vigil_applayer::proto::ProtoTx::events),
    /// raised on `side` (`None`: the rule's), final once it reached `need`;
    /// `either`: the protocol's transactions are single messages of either
    /// side (DNS), so a rule naming no direction looks at both.
    Event { proto: AppProto, bit: u64, side: Option<Direction>, need: Progress, either: bool },
}

/// `app-layer-event` for a protocol of the table: `<name>.<event>` with
/// the event among the protocol's.
pub(super) fn table_event(value: &str) -> Option<AppCheck> {
    let (proto, event) = value.trim().split_once('.')?;
    let def = vigil_applayer::proto::find(proto)?;
    let listed = def.events.iter().position(|e| *e == event).filter(|&i| i < 64);
    let (bit, side, need) = match listed {
        Some(at) => (1 << at, None, Progress::Headers),
        None => {
            let e = (def.event)(event)?;
            (e.bit, e.side, e.need)
        }
    };
    let either = side.is_none() && def.name == "dns";
    Some(AppCheck::Event { proto: def.app_proto(), bit, side, need, either })
}

/// The protocol the file keywords inspect; `None` when no protocol of the
/// table carries files.
pub(super) fn files_proto() -> Option<AppProto> {
    vigil_applayer::proto::files_proto().map(|d| d.app_proto())
}

impl AppCheck {
    /// `name` = canonical keyword name, `value` its parsed value. Ok(None) if `name` is not one of
    /// the keywords this module handles; Err(reason) when it is but the form is unsupported.
    pub fn compile(name: &str, value: &Value) -> Result<Option<AppCheck>, String> {
        let check = match name {
            "filesize" => {
                let proto = files_proto().ok_or("no protocol carries files")?;
                AppCheck::FileSize { proto, size: FileSize::compile(value)? }
            }
            _ => match vigil_applayer::proto::check(name) {
                Some((owner, def)) => {
                    AppCheck::Table { proto: owner.app_proto(), def, check: Arc::from((def.compile)(value)?) }
                }
                None => return Ok(None),
            },
        };
        Ok(Some(check))
    }

    /// A file check moved to `carrier`, the protocol whose files a rule inspects.
    pub fn carried_by(self, carrier: Option<AppProto>) -> AppCheck {
        match (self, carrier) {
            (AppCheck::FileSize { size, .. }, Some(proto)) => AppCheck::FileSize { proto, size },
            (AppCheck::FileHash { hash, .. }, Some(proto)) => AppCheck::FileHash { proto, hash },
            (AppCheck::HasFile { .. }, Some(proto)) => AppCheck::HasFile { proto },
            (c, _) => c,
        }
    }

    /// Which protocol the check belongs to.
    pub fn proto(&self) -> AppProto {
        match self {
            AppCheck::FileSize { proto, .. }
            | AppCheck::FileHash { proto, .. }
            | AppCheck::HasFile { proto }
            | AppCheck::Table { proto, .. }
            | AppCheck::Event { proto, .. } => *proto,
        }
    }

    /// Which side of the transaction it needs, or None if either. A DNS message is its own
    /// transaction and Suricata matches these keywords on requests and responses alike.
    pub fn side(&self) -> Option<Direction> {
        match self {
            AppCheck::FileSize { size, .. } => size.side,
            AppCheck::Event { side, .. } => *side,
            AppCheck::Table { def, .. } => def.side,
            AppCheck::FileHash { .. } | AppCheck::HasFile { .. } => None,
        }
    }

    /// A file check naming no side: it looks at the files of whichever
    /// side the rule inspects, and a rule naming no direction inspects both.
    pub fn either_side(&self) -> bool {
        match self {
            AppCheck::FileHash { .. } | AppCheck::HasFile { .. } => true,
            AppCheck::FileSize { size, .. } => size.side.is_none(),
            AppCheck::Table { def, .. } => def.both_ways && def.side.is_none(),
            AppCheck::Event { either, .. } => *either,
        }
    }

    /// The side the check reads must be parsed whole first (a file's size is known at its end).
    pub fn needs_complete(&self) -> bool {
        match self {
            AppCheck::Table { def, .. } => def.need == Progress::Complete,
            AppCheck::Event { need, .. } => *need == Progress::Complete,
            AppCheck::FileSize { .. } | AppCheck::FileHash { .. } => true,
            AppCheck::HasFile { .. } => false,
        }
    }

    /// Whether `tx` matches, inspected from `side` at packet time `now_secs`.
    pub fn matches(&self, tx: TxRef<'_>, side: Direction, now_secs: i64) -> bool {
        match self {
            AppCheck::Table { def, check, .. } => check.matches(tx.tx, def.side.unwrap_or(side), now_secs),
            AppCheck::Event { bit, .. } => tx.tx.events() & bit != 0,
            AppCheck::FileSize { size, .. } => size.matches(tx, size.side.unwrap_or(side)),
            AppCheck::FileHash { hash, .. } => hash.matches(tx.files(side), tx.complete(side)),
            AppCheck::HasFile { .. } => !tx.files(side).is_empty(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vigil_applayer::dns::{DnsParser, DnsTx};
    use vigil_applayer::tls::{TlsParser, TlsTx};
    use vigil_applayer::ParseResult;
    use vigil_types::Direction::{ToClient, ToServer};

    /// Whether `c` matches `tx`, inspected from the client's side.
    fn hit(c: &AppCheck, tx: &dyn vigil_applayer::proto::ProtoTx, now_secs: i64) -> bool {
        let def = vigil_applayer::proto::of(c.proto()).expect("a protocol of the table");
        c.matches(vigil_applayer::TxRef::new(def, tx), ToServer, now_secs)
    }

    /// Compiles the first option of a rule, as the engine would.
    fn compile(opt: &str) -> Result<Option<AppCheck>, String> {
        let rule = vigil_rules::Rule::parse(&format!("alert tcp any any -> any any ({opt}; sid:1;)"))
            .map_err(|e| format!("rule: {e}"))?;
        let o = &rule.options[0];
        AppCheck::compile(o.keyword.canonical, &o.value)
    }

    fn check(opt: &str) -> AppCheck {
        compile(opt).unwrap_or_else(|e| panic!("{opt}: {e}")).unwrap_or_else(|| panic!("{opt}: not handled"))
    }

    #[test]
    fn table_protocol_events() {
        let AppCheck::Event { proto, bit, .. } = table_event("ssh.long_banner").unwrap() else { panic!() };
        assert_eq!((proto.name(), bit), ("ssh", 2));
        assert!(table_event("ssh.nosuch").is_none());
        assert!(table_event("nosuch.long_banner").is_none());
        assert!(table_event("long_banner").is_none());
        // DNS raises its events on the message's own side, request or response.
        let dns = table_event("dns.z_flag_set").unwrap();
        assert!(matches!(dns, AppCheck::Event { bit: 8, side: None, .. }) && dns.either_side());
        assert!(!table_event("ssh.long_banner").unwrap().either_side());
        // Suricata's name is `not_request`; `not_a_request` is no event of it.
        assert!(table_event("dns.not_request").is_some() && table_event("dns.not_a_request").is_none());
    }

    #[test]
    fn compile_forms() {
        for good in [
            "dns.opcode:4",
            "dns.opcode:!0",
            "dns.opcode:7-15",
            "dns.rcode:nxdomain",
            "dns.rcode:!NOERROR",
            "dns.rcode:>2",
            "dns.rrtype:TXT",
            "dns.rrtype:!a",
            "tls.version:1.2",
            "tls.version:\"1.3\"",
            "tls.version:0x7f12",
            "ssl_version:sslv2,sslv3",
            "ssl_version:!tls1.2,!tls1.3",
            "ssl_state:client_hello|server_hello",
            "ssl_state:server_hello, client_hello",
            "tls.subject:\"CN=*.googleusercontent.com\"",
            "tls.issuerdn:!\"CN=Google-Internet-Authority\"",
            "tls.fingerprint:!\"f3:40:21\"",
            "tls_cert_notbefore:1998-05-01<>2008-05-01",
            "tls_cert_notafter:>2015",
            "tls_cert_notafter:<2015-10-22T23:59:59",
            "tls_cert_notbefore:2015-10-22 12",
            "tls_cert_notbefore:2015-10",
            "tls_cert_notafter:1445852105",
            "tls_cert_expired",
            "tls_cert_valid",
            "tls.cert_chain_len:>1",
        ] {
            assert!(matches!(compile(good), Ok(Some(_))), "{good}: {:?}", compile(good));
        }
        for bad in [
            "dns.opcode:query",
            "dns.opcode:300",
            "dns.rcode:bogus",
            "dns.rrtype:1,any",
            "tls.version:1.4",
            "tls.version:0x123",
            "ssl_version:tls1.0,!tls1.1",
            "ssl_version:tls1.1,tls1.1",
            "ssl_state:client_keyx",
            "ssl_state:!client_hello",
            "ssl_state:server_keyx|client_hello",
            "tls.subject:CN=foo",
            "tls.issuerdn:!CN=foo",
            "tls_cert_notbefore:>2015<>2016",
            "tls_cert_notbefore:2016<>2015",
            "tls_cert_notbefore:12:00",
            "tls_cert_notbefore:2015-13-01",
            "tls_cert_notbefore:2015-10 12:00",
            "tls_cert_notbefore:yesterday",
        ] {
            assert!(compile(bad).is_err(), "{bad}: {:?}", compile(bad));
        }
        assert!(matches!(compile("dns.query"), Ok(None)));
        assert!(matches!(compile("http.method"), Ok(None)));
        assert_eq!(check("tls.subject:\"x\"").side(), Some(ToClient));
        assert_eq!(check("dns.opcode:0").proto().name(), "dns");
        assert_eq!(check("ssl_state:client_hello").proto().name(), "tls");
        let size = check("filesize:to_client, >100");
        assert_eq!((size.proto().name(), size.side(), size.needs_complete()), ("http", Some(ToClient), true));
        assert_eq!(check("filesize:<5").side(), None);
        assert!(compile("filesize:upwards, >1").is_err());
    }

    // ---- DNS ----

    fn dns_txs(msgs: &[(Direction, Vec<u8>)]) -> Vec<DnsTx> {
        let mut p = DnsParser::udp();
        for (dir, m) in msgs {
            assert_eq!(p.parse(*dir, m), ParseResult::Done);
        }
        p.txs().to_vec()
    }

    /// Header, then one question for example.com of `qtype`, then `rest` (answers).
    fn dns_msg(flags: u16, an: u16, qtype: u16, rest: &[u8]) -> Vec<u8> {
        let mut m = [0x12, 0x34].to_vec();
        m.extend(flags.to_be_bytes());
        m.extend([0, 1]);
        m.extend(an.to_be_bytes());
        m.extend([0, 0, 0, 0]);
        m.extend(b"\x07example\x03com\x00");
        m.extend(qtype.to_be_bytes());
        m.extend([0, 1]);
        m.extend_from_slice(rest);
        m
    }

    /// An answer pointing at the question name.
    fn answer(rrtype: u16, rdata: &[u8]) -> Vec<u8> {
        let mut a = vec![0xc0, 0x0c];
        a.extend(rrtype.to_be_bytes());
        a.extend([0, 1, 0, 0, 0, 60]);
        a.extend(u16::try_from(rdata.len()).unwrap().to_be_bytes());
        a.extend_from_slice(rdata);
        a
    }

    #[test]
    fn dns_checks() {
        let txs = dns_txs(&[
            (ToServer, dns_msg(0x0100, 0, 16, &[])),
            (ToClient, dns_msg(0x8183, 0, 16, &[])),
            (ToClient, dns_msg(0x8180, 1, 16, &answer(5, b"\x03www\xc0\x0c"))),
            (ToServer, dns_msg(0x2000, 0, 6, &[])),
        ]);
        let [query, nx, cname, notify] = &txs[..] else { panic!("{} txs", txs.len()) };
        let yes = |opt: &str, tx: &DnsTx| hit(&check(opt), tx, 0);
        assert!(yes("dns.opcode:0", query) && yes("dns.opcode:0", nx) && !yes("dns.opcode:0", notify));
        assert!(yes("dns.opcode:4", notify) && yes("dns.opcode:!0", notify) && yes("dns.opcode:3-5", notify));
        assert!(yes("dns.rcode:nxdomain", nx) && yes("dns.rcode:3", nx) && !yes("dns.rcode:3", cname));
        assert!(yes("dns.rcode:!nxdomain", cname) && yes("dns.rcode:noerror", query));
        // Requests answer from their questions, responses from their answers.
        assert!(yes("dns.rrtype:TXT", query) && !yes("dns.rrtype:A", query));
        assert!(!yes("dns.rrtype:TXT", nx) && !yes("dns.rrtype:TXT", cname) && yes("dns.rrtype:CNAME", cname));
        assert!(yes("dns.rrtype:6", notify));
        assert!(!hit(&check("dns.opcode:0"), &TlsTx::default(), 0));
        assert!(!hit(&check("tls.version:1.2"), query, 0));
        assert_eq!(check("dns.rcode:0").side(), None);
    }

    // ---- TLS fixtures, as in vigil-applayer's TLS tests ----

    fn record(content_type: u8, body: &[u8]) -> Vec<u8> {
        [vec![content_type, 3, 3], u16::try_from(body.len()).unwrap().to_be_bytes().to_vec(), body.to_vec()].concat()
    }

    fn hs(ty: u8, body: &[u8]) -> Vec<u8> {
        [vec![ty], u32::try_from(body.len()).unwrap().to_be_bytes()[1..].to_vec(), body.to_vec()].concat()
    }

    fn l16(data: &[u8]) -> Vec<u8> {
        [u16::try_from(data.len()).unwrap().to_be_bytes().to_vec(), data.to_vec()].concat()
    }

    fn exts(list: &[(u16, Vec<u8>)]) -> Vec<u8> {
        l16(&list.iter().flat_map(|(id, data)| [id.to_be_bytes().to_vec(), l16(data)].concat()).collect::<Vec<_>>())
    }

    fn u16s(values: &[u16]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_be_bytes()).collect()
    }

    fn client_hello(ext: &[(u16, Vec<u8>)]) -> Vec<u8> {
        hs(1, &[vec![3, 3], vec![0x11; 32], vec![0], l16(&u16s(&[0x002f])), vec![1, 0], exts(ext)].concat())
    }

    fn server_hello(ext: &[(u16, Vec<u8>)]) -> Vec<u8> {
        hs(2, &[vec![3, 3], vec![0x33; 32], vec![0], vec![0x00, 0x2f, 0], exts(ext)].concat())
    }

    fn certificate_msg(certs: &[Vec<u8>]) -> Vec<u8> {
        let list: Vec<u8> = certs
            .iter()
            .flat_map(|c| [u32::try_from(c.len()).unwrap().to_be_bytes()[1..].to_vec(), c.clone()].concat())
            .collect();
        hs(11, &[u32::try_from(list.len()).unwrap().to_be_bytes()[1..].to_vec(), list].concat())
    }

    fn tlv(tag: u8, content: &[u8]) -> Vec<u8> {
        let n = content.len();
        let len = match n {
            0..=127 => vec![n as u8],
            128..=255 => vec![0x81, n as u8],
            _ => vec![0x82, (n >> 8) as u8, n as u8],
        };
        [vec![tag], len, content.to_vec()].concat()
    }

    fn seq(parts: &[Vec<u8>]) -> Vec<u8> {
        tlv(0x30, &parts.concat())
    }

    fn name(rdns: &[(u8, &str)]) -> Vec<u8> {
        let rdn = |(attr, v): &(u8, &str)| tlv(0x31, &seq(&[tlv(0x06, &[0x55, 0x04, *attr]), tlv(0x0c, v.as_bytes())]));
        seq(&rdns.iter().map(rdn).collect::<Vec<_>>())
    }

    /// A v3 certificate (x509-parser does not check the placeholder key or signature).
    fn make_cert(serial: u8, subject: &str, issuer: &str, not_before: &[u8], not_after: &[u8]) -> Vec<u8> {
        let alg = seq(&[tlv(0x06, &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0b]), tlv(0x05, &[])]);
        let rsa = seq(&[tlv(0x06, &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01]), tlv(0x05, &[])]);
        let tbs = seq(&[
            tlv(0xa0, &tlv(0x02, &[2])),
            tlv(0x02, &[serial]),
            alg.clone(),
            name(&[(0x0a, "Stamus"), (0x03, issuer)]),
            seq(&[tlv(0x17, not_before), tlv(0x17, not_after)]),
            name(&[(0x06, "US"), (0x03, subject)]),
            seq(&[rsa, tlv(0x03, &[0, 0x30, 0x06, 0x02, 0x01, 0x05, 0x02, 0x01, 0x03])]),
        ]);
        seq(&[tbs, alg, tlv(0x03, &[0, 0xde, 0xad, 0xbe, 0xef])])
    }

    fn tls(flights: &[(Direction, Vec<u8>)]) -> TlsTx {
        let mut p = TlsParser::new();
        for (dir, bytes) in flights {
            assert_eq!(p.parse(*dir, bytes), ParseResult::Done);
        }
        p.tx().clone()
    }

    const NOT_BEFORE: i64 = 1_475_280_000; // 2016-10-01
    const NOT_AFTER: i64 = 1_790_812_800; // 2026-10-01

    /// A TLS 1.2 handshake up to the server's certificates.
    fn tls12() -> TlsTx {
        let leaf = make_cert(7, "example.com", "SELKS", b"161001000000Z", b"261001000000Z");
        let ca = make_cert(1, "SELKS", "SELKS", b"100101000000Z", b"300101000000Z");
        let server = [server_hello(&[]), certificate_msg(&[leaf, ca]), hs(14, &[])].concat();
        tls(&[(ToServer, record(22, &client_hello(&[]))), (ToClient, record(22, &server))])
    }

    #[test]
    fn tls12_checks() {
        let tx = tls12();
        assert_eq!(tx.cert_validity(), Some((NOT_BEFORE, NOT_AFTER)));
        let yes = |opt: &str| hit(&check(opt), &tx, 1_600_000_000);
        for opt in [
            "tls.version:1.2",
            "tls.version:0x0303",
            "ssl_version:tls1.2",
            "ssl_version:tls1.0,tls1.2",
            "ssl_state:client_hello",
            "ssl_state:server_hello|client_hello",
            "tls.subject:\"CN=example.com\"",
            "tls.subject:!\"CN=other\"",
            "tls.issuerdn:\"O=Stamus, CN=SELKS\"",
            "tls.cert_chain_len:2",
            "tls.cert_chain_len:>1",
            "tls_cert_notbefore:2016-10-01",
            "tls_cert_notbefore:<2016-10-01",
            "tls_cert_notbefore:>2016-10",
            "tls_cert_notbefore:2016-01-01<>2016-12-31T23:59:59",
            "tls_cert_notafter:>2015",
            "tls_cert_notafter:1790812800",
            "tls_cert_valid",
        ] {
            assert!(yes(opt), "{opt}");
        }
        for opt in [
            "tls.version:1.3",
            "tls.version:1.0",
            "ssl_version:tls1.3",
            // Suricata never matches a list of only negated versions.
            "ssl_version:!tls1.2",
            "ssl_version:!tls1.0",
            "tls.subject:!\"CN=example.com\"",
            "tls.subject:\"cn=example.com\"",
            "tls.issuerdn:\"CN=example.com\"",
            "tls.cert_chain_len:1",
            "tls_cert_notbefore:>2016-10-01T00:00:01",
            "tls_cert_notafter:<2026-09-30",
            "tls_cert_expired",
        ] {
            assert!(!yes(opt), "{opt}");
        }
        let fp = &tx.server_cert().unwrap().fingerprint;
        assert!(hit(&check(&format!("tls.fingerprint:\"{fp}\"")), &tx, 0));
        assert!(hit(&check(&format!("tls.fingerprint:\"{}\"", &fp[..8])), &tx, 0));
        assert!(!hit(&check(&format!("tls.fingerprint:!\"{fp}\"")), &tx, 0));
        // Expiry is against packet time; tls_cert_valid ignores notBefore, as Suricata does.
        assert!(hit(&check("tls_cert_expired"), &tx, NOT_AFTER + 1));
        assert!(!hit(&check("tls_cert_valid"), &tx, NOT_AFTER + 1));
        assert!(hit(&check("tls_cert_valid"), &tx, NOT_AFTER));
        assert!(hit(&check("tls_cert_valid"), &tx, NOT_BEFORE - 1));
    }

    #[test]
    fn client_side_only() {
        let tx = tls(&[(ToServer, record(22, &client_hello(&[])))]);
        let yes = |opt: &str| hit(&check(opt), &tx, 1_600_000_000);
        assert!(yes("tls.version:1.2") && yes("ssl_version:tls1.2") && yes("ssl_state:client_hello"));
        assert!(!yes("ssl_state:server_hello") && !yes("tls.cert_chain_len:0") && !yes("tls.subject:!\"x\""));
        assert!(!yes("tls_cert_valid") && !yes("tls_cert_expired"));
    }

    #[test]
    fn tls13_versions() {
        // GREASE first, then 1.3: the client's version is its first real one.
        let ch = client_hello(&[(43, [vec![6], u16s(&[0x0a0a, 0x0304, 0x0303])].concat())]);
        let tx = tls(&[(ToServer, record(22, &ch))]);
        assert!(hit(&check("tls.version:1.3"), &tx, 0));
        assert!(!hit(&check("tls.version:1.2"), &tx, 0));
        assert!(hit(&check("ssl_version:tls1.3"), &tx, 0));

        let sh = server_hello(&[(43, u16s(&[0x7f1c]))]);
        let tx = tls(&[(ToServer, record(22, &client_hello(&[]))), (ToClient, record(22, &sh))]);
        // Drafts count as 1.3 unless the version is written raw.
        assert!(hit(&check("tls.version:1.3"), &tx, 0) && hit(&check("tls.version:0x7f1c"), &tx, 0));
        assert!(!hit(&check("tls.version:0x0304"), &tx, 0));
        assert!(hit(&check("ssl_version:tls1.3"), &tx, 0) && hit(&check("ssl_version:tls1.2"), &tx, 0));
        assert!(hit(&check("ssl_state:server_hello"), &tx, 0));
        // No certificate in the clear: nothing to compare, but the chain is final and empty.
        assert!(hit(&check("tls.cert_chain_len:0"), &tx, 0));
        assert!(!hit(&check("tls_cert_valid"), &tx, 0));
    }

    #[test]
    fn resumed_session_has_empty_chain() {
        let ch = (ToServer, record(22, &client_hello(&[])));
        let sh = (ToClient, record(22, &server_hello(&[])));
        let tx = tls(&[ch.clone(), sh.clone()]);
        assert!(!hit(&check("tls.cert_chain_len:0"), &tx, 0));
        let tx = tls(&[ch, sh, (ToClient, record(20, &[1]))]);
        assert!(tx.session_resumed() && hit(&check("tls.cert_chain_len:0"), &tx, 0));
        assert!(!hit(&check("tls.subject:!\"x\""), &tx, 0));
    }
}
