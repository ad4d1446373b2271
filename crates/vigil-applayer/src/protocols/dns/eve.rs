//! The EVE `dns` object, Suricata 8 format (version 3): one object per transaction, request or
//! response, with its header flags, questions, and the detailed record sections; responses with
//! answers also get the `grouped` view (record data by type).
//!
//! Each section only carries the fields Suricata 8's schema allows for it (answers have no
//! `*_truncated` flags, additionals no SOA/SRV/SSHFP objects), so records validate.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::Serialize;

use super::message::{DnsRecord, RData, Soa, Srv, Sshfp};
use super::name::DnsName;
use super::tx::DnsTx;

/// The `dns` object of an EVE record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DnsEve {
    pub version: u8,
    /// `request` or `response`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub tx_id: u64,
    /// The on-the-wire id.
    pub id: u16,
    /// The header flags word in lowercase hex without padding, e.g. `8180`.
    pub flags: String,
    #[serde(skip_serializing_if = "is_false")]
    pub qr: bool,
    #[serde(skip_serializing_if = "is_false")]
    pub aa: bool,
    #[serde(skip_serializing_if = "is_false")]
    pub tc: bool,
    #[serde(skip_serializing_if = "is_false")]
    pub rd: bool,
    #[serde(skip_serializing_if = "is_false")]
    pub ra: bool,
    #[serde(skip_serializing_if = "is_false")]
    pub z: bool,
    pub opcode: u8,
    pub rcode: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub queries: Vec<EveQuery>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub answers: Vec<EveRecord>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grouped: Option<BTreeMap<String, Vec<EveGrouped>>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub authorities: Vec<EveRecord>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub additionals: Vec<EveRecord>,
}

/// One question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EveQuery {
    pub rrname: String,
    #[serde(skip_serializing_if = "is_false")]
    pub rrname_truncated: bool,
    pub rrtype: String,
}

/// One record of the answer, authority or additional section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EveRecord {
    pub rrname: String,
    #[serde(skip_serializing_if = "is_false")]
    pub rrname_truncated: bool,
    pub rrtype: String,
    pub ttl: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rdata: Option<String>,
    #[serde(skip_serializing_if = "is_false")]
    pub rdata_truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub soa: Option<EveSoa>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub srv: Option<EveSrv>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sshfp: Option<EveSshfp>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub opt: Option<Vec<EveOpt>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EveSoa {
    pub mname: String,
    #[serde(skip_serializing_if = "is_false")]
    pub mname_truncated: bool,
    pub rname: String,
    pub serial: u32,
    pub refresh: u32,
    pub retry: u32,
    pub expire: u32,
    pub minimum: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EveSrv {
    pub priority: u16,
    pub weight: u16,
    pub port: u16,
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EveSshfp {
    /// Lowercase hex bytes joined by `:`.
    pub fingerprint: String,
    pub algo: u8,
    #[serde(rename = "type")]
    pub fp_type: u8,
}

/// One EDNS option: code and data as lowercase hex.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EveOpt {
    pub code: u16,
    pub data: String,
}

/// One value of the `grouped` view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum EveGrouped {
    Text(String),
    Soa(EveSoa),
    Srv(EveSrv),
    Sshfp(EveSshfp),
}

/// The `dns` object of the old per-record format (`eve-log.types.dns.version: 2`, or
/// `SURICATA_EVE_DNS_VERSION=2`): a request logs one `query` record per question, a response
/// one `answer` record. Suricata writes these in the flow's direction (client as `src_ip`) for
/// both kinds, unlike version 3 records which follow the message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DnsEveV2 {
    pub version: u8,
    /// `query` or `answer`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The on-the-wire id.
    pub id: u16,
    /// Answers only: the header flags word in lowercase hex.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flags: Option<String>,
    #[serde(skip_serializing_if = "is_false")]
    pub qr: bool,
    #[serde(skip_serializing_if = "is_false")]
    pub aa: bool,
    #[serde(skip_serializing_if = "is_false")]
    pub tc: bool,
    #[serde(skip_serializing_if = "is_false")]
    pub rd: bool,
    #[serde(skip_serializing_if = "is_false")]
    pub ra: bool,
    /// The question (for an answer, its first question).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rrname: Option<String>,
    #[serde(skip_serializing_if = "is_false")]
    pub rrname_truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rrtype: Option<String>,
    /// Queries only: the flow's transaction id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tx_id: Option<u64>,
    #[serde(skip_serializing_if = "is_false")]
    pub z: bool,
    pub opcode: u8,
    /// Answers only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rcode: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub answers: Vec<EveRecord>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grouped: Option<BTreeMap<String, Vec<EveGrouped>>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub authorities: Vec<EveRecord>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub additionals: Vec<EveRecord>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Section {
    Answer,
    Authority,
    Additional,
    /// Version 2 records: every field in every section, as Suricata's old format had no schema
    /// restrictions.
    Any,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl DnsTx {
    /// The EVE `dns` object as a `dns` event record logs it (detailed and grouped answers).
    pub fn eve(&self) -> DnsEve {
        self.eve_with(true)
    }

    /// The EVE `dns` object; `grouped` adds the by-type view of the answers (Suricata's
    /// `formats: [detailed, grouped]`), which alert records leave out.
    pub fn eve_with(&self, grouped: bool) -> DnsEve {
        let m = &self.msg;
        let h = &m.header;
        let group = grouped && !m.answers.is_empty();
        DnsEve {
            version: 3,
            kind: if self.is_response() { "response" } else { "request" },
            tx_id: self.id(),
            id: h.id,
            flags: format!("{:x}", h.flags),
            qr: h.qr(),
            aa: h.aa(),
            tc: h.tc(),
            rd: h.rd(),
            ra: h.ra(),
            z: h.z(),
            opcode: h.opcode(),
            rcode: rcode_name(h.rcode()).into_owned(),
            queries: m
                .questions
                .iter()
                .map(|q| EveQuery {
                    rrname: json_string(&q.name.value),
                    rrname_truncated: q.name.flags.truncated,
                    rrtype: rrtype_name(q.rrtype).into_owned(),
                })
                .collect(),
            answers: m.answers.iter().map(|r| record(r, Section::Answer)).collect(),
            grouped: group.then(|| grouped_answers(&m.answers)),
            authorities: m.authorities.iter().map(|r| record(r, Section::Authority)).collect(),
            // OPT records without options say nothing; Suricata leaves them out.
            additionals: m
                .additionals
                .iter()
                .filter(|r| !matches!(&r.rdata, RData::Opt(o) if o.is_empty()))
                .map(|r| record(r, Section::Additional))
                .collect(),
        }
    }
}

impl DnsTx {
    /// The version 2 records of this message: one `query` per question of a request (none for a
    /// request without questions), or the one `answer` of a response.
    pub fn eve_v2(&self) -> Vec<DnsEveV2> {
        let m = &self.msg;
        let h = &m.header;
        let base = DnsEveV2 {
            version: 2,
            kind: "query",
            id: h.id,
            flags: None,
            qr: false,
            aa: false,
            tc: false,
            rd: false,
            ra: false,
            rrname: None,
            rrname_truncated: false,
            rrtype: None,
            tx_id: None,
            z: h.z(),
            opcode: h.opcode(),
            rcode: None,
            answers: Vec::new(),
            grouped: None,
            authorities: Vec::new(),
            additionals: Vec::new(),
        };
        if !self.is_response() {
            return m
                .questions
                .iter()
                .map(|q| DnsEveV2 {
                    rrname: Some(json_string(&q.name.value)),
                    rrname_truncated: q.name.flags.truncated,
                    rrtype: Some(rrtype_name(q.rrtype).into_owned()),
                    tx_id: Some(self.id()),
                    ..base.clone()
                })
                .collect();
        }
        let first = m.questions.first();
        vec![DnsEveV2 {
            kind: "answer",
            flags: Some(format!("{:x}", h.flags)),
            qr: h.qr(),
            aa: h.aa(),
            tc: h.tc(),
            rd: h.rd(),
            ra: h.ra(),
            rrname: first.map(|q| json_string(&q.name.value)),
            rrname_truncated: first.is_some_and(|q| q.name.flags.truncated),
            rrtype: first.map(|q| rrtype_name(q.rrtype).into_owned()),
            rcode: Some(rcode_name(h.rcode()).into_owned()),
            answers: m.answers.iter().map(|r| record(r, Section::Any)).collect(),
            grouped: (!m.answers.is_empty()).then(|| grouped_answers(&m.answers)),
            authorities: m.authorities.iter().map(|r| record(r, Section::Any)).collect(),
            additionals: m
                .additionals
                .iter()
                .filter(|r| !matches!(&r.rdata, RData::Opt(o) if o.is_empty()))
                .map(|r| record(r, Section::Any))
                .collect(),
            ..base
        }]
    }
}

fn record(r: &DnsRecord, section: Section) -> EveRecord {
    let any = section == Section::Any;
    let flags_allowed = section == Section::Authority || any;
    let mut out = EveRecord {
        rrname: json_string(&r.name.value),
        rrname_truncated: flags_allowed && r.name.flags.truncated,
        rrtype: rrtype_name(r.rrtype).into_owned(),
        ttl: r.ttl,
        rdata: None,
        rdata_truncated: false,
        soa: None,
        srv: None,
        sshfp: None,
        opt: None,
    };
    match &r.rdata {
        RData::A(a) | RData::Aaaa(a) => out.rdata = Some(address(a)),
        RData::Cname(n) | RData::Ns(n) | RData::Ptr(n) | RData::Mx { exchange: n, .. } => {
            out.rdata = Some(json_string(&n.value));
            out.rdata_truncated = flags_allowed && n.flags.truncated;
        }
        RData::Txt(b) | RData::Null(b) => out.rdata = Some(json_string(b)),
        RData::Soa(s) if section != Section::Additional => out.soa = Some(soa(s)),
        RData::Srv(s) if section == Section::Answer || any => out.srv = Some(srv(s)),
        RData::Sshfp(s) if section == Section::Answer || any => out.sshfp = Some(sshfp(s)),
        RData::Opt(o) if section == Section::Additional || any => {
            out.opt = Some(o.iter().map(|o| EveOpt { code: o.code, data: hex(&o.data, "") }).collect());
        }
        _ => {}
    }
    out
}

/// The answers' data by type name, for the types Suricata groups.
fn grouped_answers(answers: &[DnsRecord]) -> BTreeMap<String, Vec<EveGrouped>> {
    let mut out: BTreeMap<String, Vec<EveGrouped>> = BTreeMap::new();
    for r in answers {
        let value = match &r.rdata {
            RData::A(a) | RData::Aaaa(a) => EveGrouped::Text(address(a)),
            RData::Cname(n) | RData::Ns(n) | RData::Ptr(n) | RData::Mx { exchange: n, .. } => {
                EveGrouped::Text(json_string(&n.value))
            }
            RData::Txt(b) | RData::Null(b) => EveGrouped::Text(json_string(b)),
            RData::Soa(s) => EveGrouped::Soa(soa(s)),
            RData::Srv(s) => EveGrouped::Srv(srv(s)),
            RData::Sshfp(s) => EveGrouped::Sshfp(sshfp(s)),
            _ => continue,
        };
        out.entry(rrtype_name(r.rrtype).into_owned()).or_default().push(value);
    }
    out
}

fn soa(s: &Soa) -> EveSoa {
    EveSoa {
        mname: json_string(&s.mname.value),
        mname_truncated: s.mname.flags.truncated,
        rname: json_string(&s.rname.value),
        serial: s.serial,
        refresh: s.refresh,
        retry: s.retry,
        expire: s.expire,
        minimum: s.minimum,
    }
}

fn srv(s: &Srv) -> EveSrv {
    EveSrv { priority: s.priority, weight: s.weight, port: s.port, name: name_string(&s.target) }
}

fn sshfp(s: &Sshfp) -> EveSshfp {
    EveSshfp { fingerprint: hex(&s.fingerprint, ":"), algo: s.algo, fp_type: s.fp_type }
}

fn name_string(n: &DnsName) -> String {
    json_string(&n.value)
}

/// An address as Suricata prints it: dotted quad, or eight groups of four lowercase hex digits
/// (no `::` compression); empty for any other length.
pub fn address(a: &[u8]) -> String {
    match a.len() {
        4 => format!("{}.{}.{}.{}", a[0], a[1], a[2], a[3]),
        16 => a.chunks(2).map(|p| format!("{:02x}{:02x}", p[0], p[1])).collect::<Vec<_>>().join(":"),
        _ => String::new(),
    }
}

fn hex(bytes: &[u8], sep: &str) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(sep)
}

/// Bytes as a JSON string the way Suricata's JSON builder renders them: valid UTF-8 as is,
/// otherwise ASCII bytes kept and every other byte written as `\xNN`.
pub fn json_string(bytes: &[u8]) -> String {
    crate::proto::escaped_text(bytes)
}

/// Suricata's name for a record type; unnamed types print as their number.
pub fn rrtype_name(t: u16) -> Cow<'static, str> {
    let name = match t {
        1 => "A",
        2 => "NS",
        3 => "MD",
        4 => "MF",
        5 => "CNAME",
        6 => "SOA",
        7 => "MB",
        8 => "MG",
        9 => "MR",
        10 => "NULL",
        11 => "WKS",
        12 => "PTR",
        13 => "HINFO",
        14 => "MINFO",
        15 => "MX",
        16 => "TXT",
        17 => "RP",
        18 => "AFSDB",
        19 => "X25",
        20 => "ISDN",
        21 => "RT",
        22 => "NSAP",
        23 => "NSAPPTR",
        24 => "SIG",
        25 => "KEY",
        26 => "PX",
        27 => "GPOS",
        28 => "AAAA",
        29 => "LOC",
        30 => "NXT",
        33 => "SRV",
        34 => "ATMA",
        35 => "NAPTR",
        36 => "KX",
        37 => "CERT",
        38 => "A6",
        39 => "DNAME",
        41 => "OPT",
        42 => "APL",
        43 => "DS",
        44 => "SSHFP",
        45 => "IPSECKEY",
        46 => "RRSIG",
        47 => "NSEC",
        48 => "DNSKEY",
        49 => "DHCID",
        50 => "NSEC3",
        51 => "NSEC3PARAM",
        52 => "TLSA",
        55 => "HIP",
        59 => "CDS",
        60 => "CDNSKEY",
        64 => "SVCB",
        65 => "HTTPS",
        99 => "SPF",
        249 => "TKEY",
        250 => "TSIG",
        254 => "MAILA",
        255 => "ANY",
        256 => "URI",
        _ => return Cow::Owned(t.to_string()),
    };
    Cow::Borrowed(name)
}

/// Suricata's name for a header RCODE; others print as their number.
pub fn rcode_name(rcode: u8) -> Cow<'static, str> {
    let name = match rcode {
        0 => "NOERROR",
        1 => "FORMERR",
        2 => "SERVFAIL",
        3 => "NXDOMAIN",
        4 => "NOTIMP",
        5 => "REFUSED",
        6 => "YXDOMAIN",
        7 => "YXRRSET",
        8 => "NXRRSET",
        9 => "NOTAUTH",
        10 => "NOTZONE",
        _ => return Cow::Owned(rcode.to_string()),
    };
    Cow::Borrowed(name)
}
