//! The certificate fields Suricata logs and matches, decoded from DER with x509-parser and
//! printed the way Suricata prints them (it uses the same library).

use sha1::{Digest, Sha1};
use x509_parser::extensions::GeneralName;

/// A decoded certificate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertInfo {
    /// Attributes in certificate order, `C=US, O=Example, CN=example.com`.
    pub subject: String,
    pub issuer: String,
    /// The DER INTEGER bytes as sent (a leading zero stays), uppercase hex joined by `:`.
    pub serial: String,
    /// SHA-1 of the DER, lowercase hex joined by `:`.
    pub fingerprint: String,
    /// Validity bounds in seconds since the Unix epoch (negative before 1970).
    pub not_before: i64,
    pub not_after: i64,
    /// DNS names and IP addresses of the subjectAltName extension.
    pub sans: Vec<String>,
}

impl CertInfo {
    /// Decodes one DER certificate; `None` if x509-parser rejects it.
    pub fn parse(der: &[u8]) -> Option<CertInfo> {
        let (_, cert) = x509_parser::parse_x509_certificate(der).ok()?;
        let tbs = &cert.tbs_certificate;
        let mut sans = Vec::new();
        if let Ok(Some(ext)) = cert.subject_alternative_name() {
            for name in &ext.value.general_names {
                match name {
                    GeneralName::DNSName(s) => sans.push((*s).to_owned()),
                    GeneralName::IPAddress(ip) => {
                        if let Some(ip) = ip_string(ip) {
                            sans.push(ip);
                        }
                    }
                    _ => {}
                }
            }
        }
        Some(CertInfo {
            subject: tbs.subject.to_string(),
            issuer: tbs.issuer.to_string(),
            serial: hex_join(tbs.raw_serial(), ":", true),
            fingerprint: fingerprint(der),
            not_before: tbs.validity.not_before.timestamp(),
            not_after: tbs.validity.not_after.timestamp(),
            sans,
        })
    }

    /// Past its notAfter at `now` (seconds since the epoch): `tls_cert_expired`.
    pub fn expired(&self, now: i64) -> bool {
        now > self.not_after
    }

    /// Within its validity at `now`: `tls_cert_valid`.
    pub fn valid(&self, now: i64) -> bool {
        (self.not_before..=self.not_after).contains(&now)
    }
}

/// SHA-1 of `der` as lowercase hex joined by `:`.
pub fn fingerprint(der: &[u8]) -> String {
    hex_join(&Sha1::digest(der), ":", false)
}

pub(crate) fn hex_join(bytes: &[u8], sep: &str, upper: bool) -> String {
    let parts: Vec<String> =
        bytes.iter().map(|b| if upper { format!("{b:02X}") } else { format!("{b:02x}") }).collect();
    parts.join(sep)
}

fn ip_string(b: &[u8]) -> Option<String> {
    match b.len() {
        4 => Some(std::net::Ipv4Addr::from(<[u8; 4]>::try_from(b).ok()?).to_string()),
        16 => Some(std::net::Ipv6Addr::from(<[u8; 16]>::try_from(b).ok()?).to_string()),
        _ => None,
    }
}

/// Seconds since the epoch as Suricata prints certificate dates: `2016-10-01T00:00:00`, UTC.
pub fn format_time(secs: i64) -> String {
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = vigil_types::civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}", rem / 3600, rem % 3600 / 60, rem % 60)
}

