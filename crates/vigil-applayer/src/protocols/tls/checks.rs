//! TLS's value checks: `tls.version`, `ssl_version`, `ssl_state`, the
//! legacy `tls.subject` / `tls.issuerdn` / `tls.fingerprint`,
//! `tls_cert_notbefore` / `tls_cert_notafter`, `tls_cert_expired`,
//! `tls_cert_valid` and `tls.cert_chain_len`.
//!
//! Semantics follow Suricata 8's matchers, quirks included where they
//! change which rules alert: validity dates compare inclusively and an
//! all-digit date is epoch seconds (`>2015` is 2015 s after 1970),
//! `tls_cert_valid` only looks at notAfter, and an `ssl_version` list of
//! negated names only never matches (Suricata XORs the negation of the
//! *seen* version's own entry).
//!
//! Suricata evaluates the version keywords once per direction against that
//! side's version; as a check here sees the whole transaction, it matches
//! when either side's view matches, which gives the same alerts.
//! Certificate checks see the server's chain once that side's handshake is
//! done.

use vigil_rules::{IntCmp, Value};
use vigil_types::Direction;

use super::TlsTx;
use crate::progress::Progress;
use crate::proto::{CheckDef, ProtoTx, TxCheck};

/// A compiled TLS check.
#[derive(Debug, Clone)]
pub enum TlsCheck {
    /// `tls.version`: `raw` (written in hex) compares TLS 1.3 drafts as sent instead of as 1.3.
    Version { version: u16, raw: bool },
    /// `ssl_version`: bit sets over [`SSL_VERSIONS`].
    SslVersion { listed: u8, negated: u8 },
    /// `ssl_state` restricted to what the transaction records: bit 0 client_hello, bit 1
    /// server_hello, any of them seen.
    SslState(u8),
    /// `tls.subject` / `tls.issuerdn` / `tls.fingerprint`: the leaf field contains `needle`.
    CertContains { field: CertField, needle: String, negated: bool },
    /// `tls_cert_notbefore` / `tls_cert_notafter`.
    CertDate { field: CertDateField, cmp: DateCmp },
    /// `tls_cert_expired`: packet time is past notAfter.
    CertExpired,
    /// `tls_cert_valid`: packet time is not past notAfter.
    CertValid,
    /// `tls.cert_chain_len`: certificates the server sent.
    CertChainLen(IntCmp),
}

fn boxed(c: TlsCheck) -> Box<dyn TxCheck> {
    Box::new(c)
}

/// A check on the whole transaction, final once the side the rule inspects
/// has said hello.
const fn any_side(name: &'static str, compile: fn(&Value) -> Result<Box<dyn TxCheck>, String>) -> CheckDef {
    CheckDef { name, side: None, need: Progress::Headers, both_ways: false, compile }
}

/// A check of the server's certificates, final once its handshake is.
const fn server_cert(name: &'static str, compile: fn(&Value) -> Result<Box<dyn TxCheck>, String>) -> CheckDef {
    CheckDef { name, side: Some(Direction::ToClient), need: Progress::Complete, both_ways: false, compile }
}

pub(super) const CHECKS: &[CheckDef] = &[
    any_side("tls.version", |v| tls_version(text(v)?).map(boxed)),
    any_side("ssl_version", |v| ssl_version(v).map(boxed)),
    any_side("ssl_state", |v| ssl_state(text(v)?).map(boxed)),
    server_cert("tls.subject", |v| cert_contains(CertField::Subject, v).map(boxed)),
    server_cert("tls.issuerdn", |v| cert_contains(CertField::Issuer, v).map(boxed)),
    server_cert("tls.fingerprint", |v| cert_contains(CertField::Fingerprint, v).map(boxed)),
    server_cert("tls_cert_notbefore", |v| {
        Ok(boxed(TlsCheck::CertDate { field: CertDateField::NotBefore, cmp: date_cmp(v)? }))
    }),
    server_cert("tls_cert_notafter", |v| {
        Ok(boxed(TlsCheck::CertDate { field: CertDateField::NotAfter, cmp: date_cmp(v)? }))
    }),
    server_cert("tls_cert_expired", |_| Ok(boxed(TlsCheck::CertExpired))),
    server_cert("tls_cert_valid", |_| Ok(boxed(TlsCheck::CertValid))),
    server_cert("tls.cert_chain_len", |v| match v {
        Value::Int(c) if c.fits(u32::MAX.into()) => Ok(boxed(TlsCheck::CertChainLen(*c))),
        Value::Int(_) => Err("chain length comparison is out of the u32 range".into()),
        _ => Err("expects an integer comparison".into()),
    }),
];

impl TxCheck for TlsCheck {
    fn matches(&self, tx: &dyn ProtoTx, _dir: Direction, now_secs: i64) -> bool {
        tx.as_any().downcast_ref::<TlsTx>().is_some_and(|tx| self.matches_tls(tx, now_secs))
    }
}

impl TlsCheck {
    /// `now_secs`: packet time (unix seconds), for expiry checks.
    pub fn matches_tls(&self, tx: &TlsTx, now_secs: i64) -> bool {
        match *self {
            TlsCheck::Version { version, raw } => side_versions(tx)
                .into_iter()
                .flatten()
                .any(|v| version == if !raw && v >> 8 == 0x7f { 0x0304 } else { v }),
            TlsCheck::SslVersion { listed, negated } => side_versions(tx)
                .into_iter()
                .flatten()
                .filter_map(ssl_version_bit)
                .any(|bit| (listed ^ negated) & bit != 0),
            TlsCheck::SslState(bits) => {
                (bits & 1 != 0 && tx.client_hello().is_some()) || (bits & 2 != 0 && tx.server_version().is_some())
            }
            // Suricata inspects certificates once the server's handshake is done, so a short
            // chain or a missing certificate is only final then.
            _ if !tx.complete(Direction::ToClient) => false,
            TlsCheck::CertContains { field, ref needle, negated } => tx.server_cert().is_some_and(|c| {
                let have = match field {
                    CertField::Subject => &c.subject,
                    CertField::Issuer => &c.issuer,
                    CertField::Fingerprint => &c.fingerprint,
                };
                have.contains(needle.as_str()) != negated
            }),
            TlsCheck::CertChainLen(c) => c.matches(tx.server_certs().certs.len() as u64),
            // Suricata takes a bound of 0 for "no certificate".
            TlsCheck::CertDate { field, cmp } => tx.cert_validity().is_some_and(|(nb, na)| {
                let v = if field == CertDateField::NotBefore { nb } else { na };
                v != 0 && cmp.matches(v)
            }),
            TlsCheck::CertExpired => tx.cert_validity().is_some_and(|(_, na)| na != 0 && now_secs > na),
            TlsCheck::CertValid => tx.cert_validity().is_some_and(|(_, na)| na != 0 && now_secs <= na),
        }
    }
}

fn text(value: &Value) -> Result<&str, String> {
    match value {
        Value::Text(t) | Value::Str(t) => Ok(t),
        _ => Err("expects a text value".into()),
    }
}

/// A text field of the server's leaf certificate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CertField {
    Subject,
    Issuer,
    Fingerprint,
}

/// A validity bound of the server's leaf certificate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CertDateField {
    NotBefore,
    NotAfter,
}

/// A date comparison in epoch seconds; all bounds inclusive, as in Suricata.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DateCmp {
    Eq(i64),
    /// `<date`: at or before.
    Le(i64),
    /// `>date`: at or after.
    Ge(i64),
    /// `a<>b`.
    Between(i64, i64),
}

impl DateCmp {
    fn matches(self, v: i64) -> bool {
        match self {
            DateCmp::Eq(a) => v == a,
            DateCmp::Le(a) => v <= a,
            DateCmp::Ge(a) => v >= a,
            DateCmp::Between(a, b) => (a..=b).contains(&v),
        }
    }
}

/// `ssl_version` names, by bit.
pub const SSL_VERSIONS: [&str; 6] = ["sslv2", "sslv3", "tls1.0", "tls1.1", "tls1.2", "tls1.3"];

fn tls_version(s: &str) -> Result<TlsCheck, String> {
    let t = s.trim();
    let t = t.strip_prefix('"').and_then(|r| r.strip_suffix('"')).unwrap_or(t);
    let version = match t {
        "1.0" => 0x0301,
        "1.1" => 0x0302,
        "1.2" => 0x0303,
        "1.3" => 0x0304,
        _ => {
            let hex = t.strip_prefix("0x").filter(|h| h.len() == 4 && h.bytes().all(|b| b.is_ascii_hexdigit()));
            let v = hex.and_then(|h| u16::from_str_radix(h, 16).ok());
            return v
                .map(|version| TlsCheck::Version { version, raw: true })
                .ok_or_else(|| format!("unknown TLS version '{t}': 1.0-1.3 or 0xNNNN"));
        }
    };
    Ok(TlsCheck::Version { version, raw: false })
}

fn ssl_version(value: &Value) -> Result<TlsCheck, String> {
    let items: Vec<&str> = match value {
        Value::List(l) => l.iter().map(String::as_str).collect(),
        Value::Text(t) => t.split(',').collect(),
        _ => return Err("expects a list of versions".into()),
    };
    let (mut listed, mut negated) = (0u8, 0u8);
    for item in items {
        let item = item.trim();
        let (neg, name) = item.strip_prefix('!').map_or((false, item), |r| (true, r.trim()));
        let i = SSL_VERSIONS
            .iter()
            .position(|v| v.eq_ignore_ascii_case(name))
            .ok_or_else(|| format!("unknown SSL/TLS version '{name}'"))?;
        let bit = 1 << i;
        if listed & bit != 0 {
            return Err(format!("'{name}' is listed twice"));
        }
        if listed != 0 && (negated != 0) != neg {
            return Err("cannot mix negated and plain versions".into());
        }
        listed |= bit;
        if neg {
            negated |= bit;
        }
    }
    if listed == 0 {
        return Err("needs a version".into());
    }
    Ok(TlsCheck::SslVersion { listed, negated })
}

fn ssl_state(s: &str) -> Result<TlsCheck, String> {
    let mut bits = 0u8;
    for part in s.split([',', '|']) {
        let part = part.trim();
        if part.starts_with('!') {
            // Suricata negates against the message being parsed right now, which a transaction
            // does not keep.
            return Err("negated ssl_state is not supported".into());
        }
        bits |= match part {
            "client_hello" => 1,
            "server_hello" => 2,
            "client_keyx" | "server_keyx" | "unknown" => {
                return Err(format!("ssl_state '{part}' is not supported: the transaction does not record it"))
            }
            _ => return Err(format!("unknown SSL state '{part}'")),
        };
    }
    Ok(TlsCheck::SslState(bits))
}

fn cert_contains(field: CertField, value: &Value) -> Result<TlsCheck, String> {
    let (needle, negated) = match value {
        Value::Str(s) => (s.clone(), false),
        Value::Text(t) => match t.trim().strip_prefix('!') {
            Some(rest) => (unquote(rest.trim()).ok_or("expects a quoted string after '!'")?, true),
            None => return Err("expects a quoted string".into()),
        },
        _ => return Err("expects a quoted string".into()),
    };
    if needle.is_empty() {
        return Err("empty string".into());
    }
    Ok(TlsCheck::CertContains { field, needle, negated })
}

/// `"..."` with the rule language's escapes (`\"`, `\\`, `\;`, `\:`); None if not quoted.
fn unquote(s: &str) -> Option<String> {
    let inner = s.strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(e @ ('"' | '\\' | ';' | ':')) => out.push(e),
                Some(e) => out.extend(['\\', e]),
                None => return None,
            },
            '"' => return None,
            _ => out.push(c),
        }
    }
    Some(out)
}

/// `[<|>]date` or `date<>date`.
fn date_cmp(value: &Value) -> Result<DateCmp, String> {
    let t = text(value)?.trim();
    let bad = || format!("invalid date '{t}': epoch seconds or YYYY-MM[-DD[(T| )HH[:MM[:SS]]]]");
    let date = |d: &str| parse_date(d).ok_or_else(bad);
    if let Some((a, b)) = t.split_once("<>") {
        if t.starts_with(['<', '>']) {
            return Err("a range cannot also have '<' or '>'".into());
        }
        let (a, b) = (date(a)?, date(b)?);
        if b <= a {
            return Err("the range's second date must be later than the first".into());
        }
        return Ok(DateCmp::Between(a, b));
    }
    Ok(match t.as_bytes().first() {
        Some(b'<') => DateCmp::Le(date(&t[1..])?),
        Some(b'>') => DateCmp::Ge(date(&t[1..])?),
        _ => DateCmp::Eq(date(t)?),
    })
}

/// Suricata's date forms, UTC: all digits is epoch seconds, else `%Y-%m`, `%Y-%m-%d`, then an
/// hour, minute and second after a space or `T`. Its buffer holds 19 characters.
fn parse_date(s: &str) -> Option<i64> {
    let s = s.trim();
    if s.is_empty() || s.len() > 19 {
        return None;
    }
    if s.bytes().all(|b| b.is_ascii_digit()) {
        return s.parse().ok();
    }
    let (date, time) = match s.find([' ', 'T']) {
        Some(i) => (&s[..i], Some(s[i + 1..].trim_start())),
        None => (s, None),
    };
    let num = |p: &str, max_len: usize, range: std::ops::RangeInclusive<i64>| {
        let ok = !p.is_empty() && p.len() <= max_len && p.bytes().all(|b| b.is_ascii_digit());
        ok.then(|| p.parse().ok()).flatten().filter(|v| range.contains(v))
    };
    let d: Vec<&str> = date.split('-').collect();
    let (y, m) = (num(d.first()?, 4, 0..=9999)?, num(d.get(1)?, 2, 1..=12)?);
    let day = match (d.len(), time) {
        (2, None) => 1,
        (3, _) => num(d[2], 2, 1..=31)?,
        _ => return None,
    };
    let mut secs = vigil_types::days_from_civil(y, m, day) * 86_400;
    if let Some(time) = time {
        let parts: Vec<&str> = time.split(':').collect();
        if parts.len() > 3 {
            return None;
        }
        for (p, (unit, max)) in parts.iter().zip([(3600, 23), (60, 59), (1, 61)]) {
            secs += num(p, 2, 0..=max)? * unit;
        }
    }
    Some(secs)
}

/// The version each side announced, as Suricata keeps it: the client's first valid
/// supported_versions entry (else its hello version) and the server's negotiated one.
fn side_versions(tx: &TlsTx) -> [Option<u16>; 2] {
    let client = tx
        .client_hello()
        .map(|ch| ch.supported_versions.iter().copied().find(|&v| version_valid(v)).unwrap_or(ch.version));
    // SSLv2 is 0x0002 on the wire but 0x0200 in Suricata's constants.
    let norm = |v: u16| if v == 0x0002 { 0x0200 } else { v };
    [client.map(norm), tx.server_version().map(norm)]
}

/// Suricata's `TLSVersionValid`: versions it takes from a client's supported_versions.
fn version_valid(v: u16) -> bool {
    matches!(v, 0x0300..=0x0304 | 0x7f01 | 0x7f10..=0x7f1c | 0xfb14..=0xfb17 | 0xfb1a)
}

/// The [`SSL_VERSIONS`] bit of a version; Facebook drafts and unknown values have none.
fn ssl_version_bit(v: u16) -> Option<u8> {
    let i = match v {
        0x0200 => 0,
        0x0300 => 1,
        0x0301 => 2,
        0x0302 => 3,
        0x0303 => 4,
        0x0304 | 0x7f01 | 0x7f10..=0x7f1c => 5,
        _ => return None,
    };
    Some(1 << i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_kept_as_written() {
        let c = cert_contains(CertField::Issuer, &Value::Text("!\"a\\\"b\"".into())).unwrap();
        assert!(matches!(c, TlsCheck::CertContains { ref needle, negated: true, .. } if needle == "a\"b"), "{c:?}");
        assert!(matches!(tls_version("0x7f12"), Ok(TlsCheck::Version { version: 0x7f12, raw: true })));
        assert!(matches!(tls_version("\"1.3\""), Ok(TlsCheck::Version { version: 0x0304, raw: false })));
    }

    #[test]
    fn dates() {
        assert_eq!(parse_date("2016-10-01"), Some(1_475_280_000));
        assert_eq!(parse_date("2016-10"), Some(1_475_280_000));
        assert_eq!(parse_date("2016-10-01T01:02:03"), Some(1_475_283_723));
        assert_eq!(parse_date("2016-10-01 01:02"), Some(1_475_283_720));
        assert_eq!(parse_date("2000-03-01"), Some(951_868_800));
        assert_eq!(parse_date("1969-12-31"), Some(-86_400));
        assert_eq!(parse_date("2015"), Some(2015));
        for bad in ["", "2016-10-01T", "2016-10-01T25", "2016-1-1-1", "99999-01", "-2016-01", "2016-10-01T1:2:3:4"] {
            assert_eq!(parse_date(bad), None, "{bad}");
        }
        let cmp = |s: &str| date_cmp(&Value::Text(s.into()));
        assert_eq!(cmp("<2016-10-01"), Ok(DateCmp::Le(1_475_280_000)));
        assert_eq!(cmp(" 2015 <> 2016 "), Ok(DateCmp::Between(2015, 2016)));
    }
}
