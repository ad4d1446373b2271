//! Kerberos 5 messages (RFC 4120) as a KDC exchanges them: AS and TGS
//! requests and replies and errors, read with [`crate::codecs::ber`] for
//! what logging and detection use (names, realms, encryption types, error
//! codes). Encrypted parts are not opened.

use crate::codecs::ber::{self, Reader, Tlv};

pub const AS_REQ: u32 = 10;
pub const AS_REP: u32 = 11;
pub const TGS_REQ: u32 = 12;
pub const TGS_REP: u32 = 13;
pub const ERROR: u32 = 30;

/// Name parts kept of a principal.
const MAX_PARTS: usize = 16;

/// What a message says, as far as it is read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Message {
    pub msg_type: u32,
    pub cname: Vec<String>,
    pub realm: Option<String>,
    pub sname: Vec<String>,
    /// A reply's encryption type, and its ticket's.
    pub etype: Option<i64>,
    pub ticket_etype: Option<i64>,
    pub error_code: Option<i64>,
}

/// The message type of the application tag starting `data` (`[APPLICATION n]`, constructed).
pub fn app_type(data: &[u8]) -> Option<u32> {
    let t = *data.first()?;
    (t & 0xe0 == 0x60).then(|| u32::from(t & 0x1f)).filter(|n| matches!(*n, AS_REQ | AS_REP | TGS_REQ | TGS_REP | ERROR))
}

fn text(v: &[u8]) -> String {
    String::from_utf8_lossy(v).into_owned()
}

/// A KerberosString or Realm (GeneralString, or another string type some send).
fn string(inner: &[u8]) -> Option<String> {
    let t = Reader::new(inner).any().ok()?;
    matches!(t.tag, 0x1b | 0x16 | 0x0c | 0x13).then(|| text(t.value))
}

fn int(inner: &[u8]) -> Option<i64> {
    let v = Reader::new(inner).expect(ber::INTEGER).ok()?;
    if v.is_empty() || v.len() > 8 {
        return None;
    }
    // Two's complement: encryption types may be negative (local use).
    let first = if v[0] & 0x80 != 0 { -1i64 } else { 0 };
    Some(v.iter().fold(first, |a, &b| a << 8 | i64::from(b)))
}

/// A PrincipalName's parts.
fn principal(inner: &[u8]) -> Option<Vec<String>> {
    let mut fields = Reader::new(Reader::new(inner).expect(ber::SEQUENCE).ok()?);
    let mut parts = Vec::new();
    while !fields.is_empty() {
        let f = fields.any().ok()?;
        if f.tag == 0xa1 {
            let mut list = Reader::new(Reader::new(f.value).expect(ber::SEQUENCE).ok()?);
            while !list.is_empty() {
                let p = list.any().ok()?;
                if parts.len() < MAX_PARTS {
                    parts.push(text(p.value));
                }
            }
        }
    }
    Some(parts)
}

/// The context-tagged fields `[n]` of a SEQUENCE, in order.
fn fields(seq: &[u8]) -> Option<Vec<Tlv<'_>>> {
    let mut r = Reader::new(Reader::new(seq).expect(ber::SEQUENCE).ok()?);
    let mut out = Vec::new();
    while !r.is_empty() {
        out.push(r.any().ok()?);
        if out.len() > 32 {
            return None;
        }
    }
    Some(out)
}

fn field<'a>(fs: &[Tlv<'a>], n: u8) -> Option<&'a [u8]> {
    fs.iter().find(|f| f.tag == 0xa0 | n).map(|f| f.value)
}

/// An EncryptedData's type.
fn etype(inner: &[u8]) -> Option<i64> {
    int(field(&fields(inner)?, 0)?)
}

/// Reads one message; `None` when it is not a Kerberos 5 message of the KDC's.
pub fn parse(data: &[u8]) -> Option<Message> {
    let msg_type = app_type(data)?;
    let body = Reader::new(data).any().ok()?.value;
    let fs = fields(body)?;
    let mut m = Message { msg_type, ..Message::default() };
    match msg_type {
        AS_REQ | TGS_REQ => {
            if int(field(&fs, 1)?)? != 5 || int(field(&fs, 2)?)? != i64::from(msg_type) {
                return None;
            }
            let req = fields(field(&fs, 4)?)?;
            m.cname = field(&req, 1).and_then(principal).unwrap_or_default();
            m.realm = field(&req, 2).and_then(string);
            m.sname = field(&req, 3).and_then(principal).unwrap_or_default();
        }
        AS_REP | TGS_REP => {
            if int(field(&fs, 0)?)? != 5 || int(field(&fs, 1)?)? != i64::from(msg_type) {
                return None;
            }
            m.realm = field(&fs, 3).and_then(string);
            m.cname = field(&fs, 4).and_then(principal).unwrap_or_default();
            if let Some(t) = field(&fs, 5) {
                let ticket = Reader::new(t).expect(0x61).ok().and_then(fields).unwrap_or_default();
                m.sname = field(&ticket, 2).and_then(principal).unwrap_or_default();
                m.ticket_etype = field(&ticket, 3).and_then(etype);
            }
            m.etype = field(&fs, 6).and_then(etype);
        }
        _ => {
            if int(field(&fs, 0)?)? != 5 || int(field(&fs, 1)?)? != i64::from(ERROR) {
                return None;
            }
            m.error_code = Some(int(field(&fs, 6)?)?);
            m.realm = field(&fs, 7).and_then(string);
            m.cname = field(&fs, 8).and_then(principal).unwrap_or_default();
            m.sname = field(&fs, 10).and_then(principal).unwrap_or_default();
        }
    }
    Some(m)
}

pub fn type_name(t: u32) -> String {
    match t {
        AS_REQ => "KRB_AS_REQ".into(),
        AS_REP => "KRB_AS_REP".into(),
        TGS_REQ => "KRB_TGS_REQ".into(),
        TGS_REP => "KRB_TGS_REP".into(),
        14 => "KRB_AP_REQ".into(),
        15 => "KRB_AP_REP".into(),
        ERROR => "KRB_ERROR".into(),
        _ => t.to_string(),
    }
}

/// Encryption types (RFC 3961, 3962, 4757, 8009) by the names Suricata logs.
pub fn etype_name(e: i64) -> String {
    let n = match e {
        1 => "des-cbc-crc",
        2 => "des-cbc-md4",
        3 => "des-cbc-md5",
        4 => "des-cbc-raw",
        5 => "des3-cbc-md5",
        6 => "des3-cbc-raw",
        7 => "des3-cbc-sha1",
        8 => "dsaWithSHA1-CmsOID",
        9 => "md5WithRSAEncryption-CmsOID",
        10 => "sha1WithRSAEncryption-CmsOID",
        11 => "rc2CBC-EnvOID",
        12 => "rsaEncryption-EnvOID",
        13 => "rsaES-OAEP-ENV-OID",
        14 => "des-ede3-cbc-Env-OID",
        16 => "des3-cbc-sha1-kd",
        17 => "aes128-cts-hmac-sha1-96",
        18 => "aes256-cts-hmac-sha1-96",
        19 => "aes128-cts-hmac-sha256-128",
        20 => "aes256-cts-hmac-sha384-192",
        23 => "rc4-hmac",
        24 => "rc4-hmac-exp",
        25 => "camellia128-cts-cmac",
        26 => "camellia256-cts-cmac",
        65 => "subkey-keymaterial",
        -128 => "rc4-md4",
        -133 => "rc4-hmac-old-exp",
        _ => return e.to_string(),
    };
    n.into()
}

/// An encryption type by name or number, as rules write it.
pub fn etype_of(s: &str) -> Option<i64> {
    s.parse().ok().or_else(|| (-140..=70).find(|&e| etype_name(e).eq_ignore_ascii_case(s) && etype_name(e) != e.to_string()))
}

/// DES, single and triple, and RC4: what RFC 6649 and RFC 8429 deprecate.
pub fn weak(e: i64) -> bool {
    matches!(e, 1..=7 | 16 | 23 | 24 | -128 | -133)
}

/// Error codes of RFC 4120 and its extensions, by name.
pub fn error_name(code: i64) -> String {
    const NAMES: [&str; 77] = [
        "KDC_ERR_NONE",
        "KDC_ERR_NAME_EXP",
        "KDC_ERR_SERVICE_EXP",
        "KDC_ERR_BAD_PVNO",
        "KDC_ERR_C_OLD_MAST_KVNO",
        "KDC_ERR_S_OLD_MAST_KVNO",
        "KDC_ERR_C_PRINCIPAL_UNKNOWN",
        "KDC_ERR_S_PRINCIPAL_UNKNOWN",
        "KDC_ERR_PRINCIPAL_NOT_UNIQUE",
        "KDC_ERR_NULL_KEY",
        "KDC_ERR_CANNOT_POSTDATE",
        "KDC_ERR_NEVER_VALID",
        "KDC_ERR_POLICY",
        "KDC_ERR_BADOPTION",
        "KDC_ERR_ETYPE_NOSUPP",
        "KDC_ERR_SUMTYPE_NOSUPP",
        "KDC_ERR_PADATA_TYPE_NOSUPP",
        "KDC_ERR_TRTYPE_NOSUPP",
        "KDC_ERR_CLIENT_REVOKED",
        "KDC_ERR_SERVICE_REVOKED",
        "KDC_ERR_TGT_REVOKED",
        "KDC_ERR_CLIENT_NOTYET",
        "KDC_ERR_SERVICE_NOTYET",
        "KDC_ERR_KEY_EXPIRED",
        "KDC_ERR_PREAUTH_FAILED",
        "KDC_ERR_PREAUTH_REQUIRED",
        "KDC_ERR_SERVER_NOMATCH",
        "KDC_ERR_MUST_USE_USER2USER",
        "KDC_ERR_PATH_NOT_ACCEPTED",
        "KDC_ERR_SVC_UNAVAILABLE",
        "",
        "KRB_AP_ERR_BAD_INTEGRITY",
        "KRB_AP_ERR_TKT_EXPIRED",
        "KRB_AP_ERR_TKT_NYV",
        "KRB_AP_ERR_REPEAT",
        "KRB_AP_ERR_NOT_US",
        "KRB_AP_ERR_BADMATCH",
        "KRB_AP_ERR_SKEW",
        "KRB_AP_ERR_BADADDR",
        "KRB_AP_ERR_BADVERSION",
        "KRB_AP_ERR_MSG_TYPE",
        "KRB_AP_ERR_MODIFIED",
        "KRB_AP_ERR_BADORDER",
        "",
        "KRB_AP_ERR_BADKEYVER",
        "KRB_AP_ERR_NOKEY",
        "KRB_AP_ERR_MUT_FAIL",
        "KRB_AP_ERR_BADDIRECTION",
        "KRB_AP_ERR_METHOD",
        "KRB_AP_ERR_BADSEQ",
        "KRB_AP_ERR_INAPP_CKSUM",
        "KRB_AP_PATH_NOT_ACCEPTED",
        "KRB_ERR_RESPONSE_TOO_BIG",
        "",
        "",
        "",
        "",
        "",
        "",
        "",
        "KRB_ERR_GENERIC",
        "KRB_ERR_FIELD_TOOLONG",
        "KDC_ERROR_CLIENT_NOT_TRUSTED",
        "KDC_ERROR_KDC_NOT_TRUSTED",
        "KDC_ERROR_INVALID_SIG",
        "KDC_ERR_KEY_TOO_WEAK",
        "KDC_ERR_CERTIFICATE_MISMATCH",
        "KRB_AP_ERR_NO_TGT",
        "KDC_ERR_WRONG_REALM",
        "KRB_AP_ERR_USER_TO_USER_REQUIRED",
        "KDC_ERR_CANT_VERIFY_CERTIFICATE",
        "KDC_ERR_INVALID_CERTIFICATE",
        "KDC_ERR_REVOKED_CERTIFICATE",
        "KDC_ERR_REVOCATION_STATUS_UNKNOWN",
        "KDC_ERR_REVOCATION_STATUS_UNAVAILABLE",
        "KDC_ERR_CLIENT_NAME_MISMATCH",
        "KDC_ERR_KDC_NAME_MISMATCH",
    ];
    usize::try_from(code).ok().and_then(|i| NAMES.get(i)).filter(|n| !n.is_empty()).map_or_else(|| code.to_string(), |n| (*n).to_string())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A BER element.
    pub use crate::codecs::ber::tlv;

    pub fn int_tlv(n: i64) -> Vec<u8> {
        let bytes = n.to_be_bytes();
        let mut at = 0;
        while at < 7 && ((bytes[at] == 0 && bytes[at + 1] & 0x80 == 0) || (bytes[at] == 0xff && bytes[at + 1] & 0x80 != 0)) {
            at += 1;
        }
        tlv(0x02, &bytes[at..])
    }

    pub fn name(parts: &[&str]) -> Vec<u8> {
        let list: Vec<u8> = parts.iter().flat_map(|p| tlv(0x1b, p.as_bytes())).collect();
        tlv(0x30, &[tlv(0xa0, &int_tlv(1)), tlv(0xa1, &tlv(0x30, &list))].concat())
    }

    pub fn enc(etype: i64) -> Vec<u8> {
        tlv(0x30, &[tlv(0xa0, &int_tlv(etype)), tlv(0xa2, &tlv(0x04, b"cipher"))].concat())
    }

    /// An AS-REQ for `cname` of `realm`, for krbtgt.
    pub fn as_req(cname: &str, realm: &str) -> Vec<u8> {
        let body = tlv(
            0x30,
            &[
                tlv(0xa0, &tlv(0x03, &[0, 0x40, 0x81, 0, 0x10])),
                tlv(0xa1, &name(&[cname])),
                tlv(0xa2, &tlv(0x1b, realm.as_bytes())),
                tlv(0xa3, &name(&["krbtgt", realm])),
                tlv(0xa8, &tlv(0x30, &[int_tlv(18), int_tlv(23)].concat())),
            ]
            .concat(),
        );
        tlv(0x6a, &tlv(0x30, &[tlv(0xa1, &int_tlv(5)), tlv(0xa2, &int_tlv(10)), tlv(0xa4, &body)].concat()))
    }

    /// An AS-REP whose ticket and reply are encrypted with `etype`.
    pub fn as_rep(cname: &str, realm: &str, etype: i64) -> Vec<u8> {
        let ticket = tlv(
            0x61,
            &tlv(0x30, &[tlv(0xa0, &int_tlv(5)), tlv(0xa1, &tlv(0x1b, realm.as_bytes())), tlv(0xa2, &name(&["krbtgt", realm])), tlv(0xa3, &enc(etype))].concat()),
        );
        let fields = [
            tlv(0xa0, &int_tlv(5)),
            tlv(0xa1, &int_tlv(11)),
            tlv(0xa3, &tlv(0x1b, realm.as_bytes())),
            tlv(0xa4, &name(&[cname])),
            tlv(0xa5, &ticket),
            tlv(0xa6, &enc(etype)),
        ];
        tlv(0x6b, &tlv(0x30, &fields.concat()))
    }

    /// A KRB-ERROR with `code`.
    pub fn error(code: i64, realm: &str) -> Vec<u8> {
        let fields = [
            tlv(0xa0, &int_tlv(5)),
            tlv(0xa1, &int_tlv(30)),
            tlv(0xa4, &tlv(0x18, b"20240101000000Z")),
            tlv(0xa5, &int_tlv(0)),
            tlv(0xa6, &int_tlv(code)),
            tlv(0xa9, &tlv(0x1b, realm.as_bytes())),
            tlv(0xaa, &name(&["krbtgt", realm])),
        ];
        tlv(0x7e, &tlv(0x30, &fields.concat()))
    }

    #[test]
    fn kdc_messages_are_read() {
        let m = parse(&as_req("alice", "EXAMPLE.ORG")).unwrap();
        assert_eq!((m.msg_type, m.cname.clone(), m.realm.as_deref()), (AS_REQ, vec!["alice".to_string()], Some("EXAMPLE.ORG")));
        assert_eq!(m.sname, ["krbtgt", "EXAMPLE.ORG"]);
        let r = parse(&as_rep("alice", "EXAMPLE.ORG", 23)).unwrap();
        assert_eq!((r.etype, r.ticket_etype), (Some(23), Some(23)));
        let e = parse(&error(25, "EXAMPLE.ORG")).unwrap();
        assert_eq!((e.error_code, e.realm.clone()), (Some(25), None));
        assert_eq!(error_name(25), "KDC_ERR_PREAUTH_REQUIRED");
        assert_eq!(error_name(30), "30");
        assert_eq!(etype_name(18), "aes256-cts-hmac-sha1-96");
        assert_eq!(etype_of("rc4-hmac"), Some(23));
        assert_eq!(etype_of("23"), Some(23));
        assert!(weak(23) && !weak(18));
        // Damaged: a wrong pvno, a cut message.
        let mut bad = as_req("alice", "EXAMPLE.ORG");
        let at = bad.windows(3).position(|w| w == [0x02, 0x01, 0x05]).unwrap();
        bad[at + 2] = 4;
        assert_eq!(parse(&bad), None);
        let ok = as_req("alice", "EXAMPLE.ORG");
        assert_eq!(parse(&ok[..ok.len() - 3]), None);
    }
}
