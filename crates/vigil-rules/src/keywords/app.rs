//! Application-layer keywords that check a value rather than open a
//! buffer: TLS versions and states, file properties, protocol fields of
//! DNS, SMB, DCERPC, Kerberos, MQTT, ENIP, HTTP/2, ...
//!
//! Values of the enumerations are kept as text; integers use the shared
//! comparison.

use super::{
    kw, p_ftp_mode, p_ftpdata_command, p_int_or_name, p_int_with, p_none, p_string, p_text, p_u16, p_u32, p_u64, p_u8,
    p_yes_no, KeywordDef, Kind,
};
use crate::content::Content;
use crate::error::{verr, VResult};
use crate::lexer::{split_commas, trim};
use crate::options::Value;

pub(crate) const ROWS: &[KeywordDef] = &[
    // TLS / SSH
    kw!("ssl_version", Kind::App, Required, p_ssl_version, "TLS/SSL version(s): sslv2, sslv3, tls1.0-tls1.3"),
    kw!("ssl_state", Kind::App, Required, p_ssl_state, "TLS handshake state(s), | for any, ! to negate"),
    kw!("tls.version", Kind::App, Required, p_text, "TLS version: 1.0, 1.2, 0x0303, ..."),
    kw!("tls.fingerprint", Kind::App, Required, p_string, "TLS certificate SHA-1 fingerprint equals"),
    kw!("tls.subject", Kind::App, Required, p_string, "TLS certificate subject contains"),
    kw!("tls.issuerdn", Kind::App, Required, p_string, "TLS certificate issuer contains"),
    kw!("tls.store", Kind::Post, None, p_none, "store the TLS certificate chain"),
    kw!("tls_store" => "tls.store", Kind::Post, None, p_none, "store the TLS certificate chain"),
    kw!("tls_cert_notbefore", Kind::App, Required, p_text, "TLS certificate notBefore compared with a date"),
    kw!("tls_cert_notafter", Kind::App, Required, p_text, "TLS certificate notAfter compared with a date"),
    kw!("tls_cert_expired", Kind::App, None, p_none, "TLS certificate has expired"),
    kw!("tls_cert_valid", Kind::App, None, p_none, "TLS certificate is valid (not expired)"),
    kw!("tls.cert_chain_len", Kind::App, Required, p_u32, "number of certificates in the chain"),
    kw!("ssh.protoversion", Kind::App, Required, p_obsolete_protoversion, "obsolete: refused, use ssh.proto"),
    kw!("ssh.softwareversion", Kind::App, Required, p_obsolete_softwareversion, "obsolete: refused, use ssh.software"),
    // DNS
    kw!("dns.opcode", Kind::App, Required, p_int_or_name, "DNS opcode"),
    kw!("dns.rcode", Kind::App, Required, p_int_or_name, "DNS response code"),
    kw!("dns.rrtype", Kind::App, Required, p_int_or_name, "DNS record type"),
    // files
    kw!("filename", Kind::App, Required, p_file_string, "file name contains (no case; ! negates)"),
    kw!("fileext", Kind::App, Required, p_file_string, "file extension equals (no case; ! negates)"),
    kw!("filemagic", Kind::App, Required, p_file_string, "libmagic description contains (no case; ! negates)"),
    kw!("filemd5", Kind::App, Required, p_text, "file MD5 in a list file"),
    kw!("filesha1", Kind::App, Required, p_text, "file SHA-1 in a list file"),
    kw!("filesha256", Kind::App, Required, p_text, "file SHA-256 in a list file"),
    kw!("filesize", Kind::App, Required, p_filesize, "file size ([to_server|to_client,] comparison)"),
    // industrial
    kw!("modbus", Kind::App, Required, p_text, "Modbus function, unit, access"),
    kw!("dnp3_func", Kind::App, Required, p_text, "DNP3 function code"),
    kw!("dnp3.func" => "dnp3_func", Kind::App, Required, p_text, "DNP3 function code"),
    kw!("dnp3_ind", Kind::App, Required, p_text, "DNP3 internal indicators"),
    kw!("dnp3.ind" => "dnp3_ind", Kind::App, Required, p_text, "DNP3 internal indicators"),
    kw!("dnp3_obj", Kind::App, Required, p_text, "DNP3 object group,variation"),
    kw!("dnp3.obj" => "dnp3_obj", Kind::App, Required, p_text, "DNP3 object group,variation"),
    kw!("cip_service", Kind::App, Required, p_text, "CIP service, class, attribute"),
    kw!("enip_command", Kind::App, Required, p_int_or_name, "ENIP command"),
    kw!("enip.command" => "enip_command", Kind::App, Required, p_int_or_name, "ENIP command"),
    kw!("enip.status", Kind::App, Required, p_int_or_name, "ENIP status"),
    kw!("enip.protocol_version", Kind::App, Required, p_u16, "ENIP identity protocol version"),
    kw!("enip.revision", Kind::App, Required, p_u16, "ENIP identity revision"),
    kw!("enip.identity_status", Kind::App, Required, p_u16, "ENIP identity status"),
    kw!("enip.state", Kind::App, Required, p_u8, "ENIP identity state"),
    kw!("enip.serial", Kind::App, Required, p_u32, "ENIP identity serial"),
    kw!("enip.product_code", Kind::App, Required, p_u16, "ENIP identity product code"),
    kw!("enip.device_type", Kind::App, Required, p_u16, "ENIP identity device type"),
    kw!("enip.vendor_id", Kind::App, Required, p_u16, "ENIP identity vendor id"),
    kw!("enip.capabilities", Kind::App, Required, p_u16, "ENIP list-services capabilities"),
    kw!("enip.cip_attribute", Kind::App, Required, p_u32, "CIP attribute"),
    kw!("enip.cip_class", Kind::App, Required, p_u32, "CIP class"),
    kw!("enip.cip_instance", Kind::App, Required, p_u32, "CIP instance"),
    kw!("enip.cip_status", Kind::App, Required, p_u8, "CIP status"),
    kw!("enip.cip_extendedstatus", Kind::App, Required, p_u16, "CIP extended status"),
    // Kerberos, DCERPC, SMB, SNMP, NFS, RFB
    kw!("krb5_msg_type", Kind::App, Required, p_u32, "Kerberos message type"),
    kw!("krb5.msg_type" => "krb5_msg_type", Kind::App, Required, p_u32, "Kerberos message type"),
    kw!("krb5_err_code", Kind::App, Required, p_text, "Kerberos error code"),
    kw!("krb5.error_code" => "krb5_err_code", Kind::App, Required, p_text, "Kerberos error code"),
    kw!("snmp.trap_type", Kind::App, Required, p_text, "SNMP trap type"),
    kw!("krb5.weak_encryption", Kind::App, None, p_none, "Kerberos weak encryption in use"),
    kw!("krb5.ticket_encryption", Kind::App, Required, p_text, "Kerberos ticket encryption type(s)"),
    kw!("dcerpc.iface", Kind::App, Required, p_text, "DCERPC interface UUID[,version]"),
    kw!("dce_iface" => "dcerpc.iface", Kind::App, Required, p_text, "old name of dcerpc.iface"),
    kw!("dcerpc.opnum", Kind::App, Required, p_text, "DCERPC operation number(s)"),
    kw!("dce_opnum" => "dcerpc.opnum", Kind::App, Required, p_text, "old name of dcerpc.opnum"),
    kw!("smb.version", Kind::App, Required, p_text, "SMB version 1 or 2"),
    kw!("snmp.version", Kind::App, Required, p_u32, "SNMP version"),
    kw!("snmp.pdu_type", Kind::App, Required, p_int_or_name, "SNMP PDU type"),
    kw!("nfs_procedure", Kind::App, Required, p_int_or_name, "NFS procedure"),
    kw!("nfs.procedure" => "nfs_procedure", Kind::App, Required, p_int_or_name, "NFS procedure"),
    kw!("nfs_version", Kind::App, Required, p_u32, "NFS version"),
    kw!("nfs.version" => "nfs_version", Kind::App, Required, p_u32, "NFS version"),
    kw!("rfb.secresult", Kind::App, Required, p_int_or_name, "RFB security result"),
    kw!("rfb.sectype", Kind::App, Required, p_u32, "RFB security type"),
    // MQTT, IKE
    kw!("mqtt.protocol_version", Kind::App, Required, p_u8, "MQTT protocol version"),
    kw!("mqtt.type", Kind::App, Required, p_int_or_name, "MQTT message type"),
    kw!("mqtt.flags", Kind::App, Required, p_text, "MQTT header flags"),
    kw!("mqtt.qos", Kind::App, Required, p_u8, "MQTT QoS"),
    kw!("mqtt.reason_code", Kind::App, Required, p_int_or_name, "MQTT reason code"),
    kw!("mqtt.connack.return_code" => "mqtt.reason_code", Kind::App, Required, p_int_or_name, "MQTT reason code"),
    kw!("mqtt.connack.session_present", Kind::App, Required, p_text, "MQTT CONNACK session present: true/false"),
    kw!("mqtt.connect.flags", Kind::App, Required, p_text, "MQTT CONNECT flags"),
    kw!("ike.exchtype", Kind::App, Required, p_u8, "IKE exchange type"),
    kw!("ike.chosen_sa_attribute", Kind::App, Required, p_text, "IKE chosen SA attribute=value"),
    kw!("ike.key_exchange_payload_length", Kind::App, Required, p_u32, "IKE key exchange payload length"),
    kw!("ike.nonce_payload_length", Kind::App, Required, p_u32, "IKE nonce payload length"),
    // HTTP/2, DHCP, WebSocket, LDAP, FTP, NTP
    kw!("http2.frametype", Kind::App, Required, p_int_or_name, "HTTP/2 frame type"),
    kw!("http2.errorcode", Kind::App, Required, p_int_or_name, "HTTP/2 error code"),
    kw!("http2.priority", Kind::App, Required, p_int_with, "HTTP/2 stream priority"),
    kw!("http2.window", Kind::App, Required, p_int_with, "HTTP/2 window update"),
    kw!("http2.size_update", Kind::App, Required, p_int_with, "HTTP/2 HPACK table size update"),
    kw!("http2.settings", Kind::App, Required, p_text, "HTTP/2 setting id and value"),
    kw!("dhcp.leasetime", Kind::App, Required, p_u64, "DHCP lease time"),
    kw!("dhcp.rebinding_time", Kind::App, Required, p_u64, "DHCP rebinding time"),
    kw!("dhcp.renewal_time", Kind::App, Required, p_u64, "DHCP renewal time"),
    kw!("websocket.opcode", Kind::App, Required, p_int_or_name, "WebSocket opcode"),
    kw!("websocket.flags", Kind::App, Required, p_text, "WebSocket frame flags"),
    kw!("websocket.mask", Kind::App, Required, p_u32, "WebSocket masking key"),
    kw!("ldap.request.operation", Kind::App, Required, p_int_or_name, "LDAP request operation"),
    kw!("ldap.responses.operation", Kind::App, Required, p_text, "LDAP response operation[,index]"),
    kw!("ldap.responses.count", Kind::App, Required, p_int_with, "number of LDAP responses"),
    kw!("ldap.responses.result_code", Kind::App, Required, p_text, "LDAP response result code[,index]"),
    kw!("ftpbounce", Kind::App, None, p_none, "FTP PORT command to a third-party address"),
    kw!(
        "ftpdata_command",
        Kind::App,
        Required,
        p_ftpdata_command,
        "FTP data channel command: retr, stor, appe, stou, list, nlst or mlsd"
    ),
    kw!("ftp.dynamic_port", Kind::App, Required, p_u16, "FTP negotiated data port"),
    kw!("ftp.mode", Kind::App, Required, p_ftp_mode, "FTP mode: active or passive"),
    kw!("ftp.reply_received", Kind::App, Required, p_yes_no, "FTP reply received: yes or no"),
    kw!("ntp.version", Kind::App, Required, p_u8, "NTP version"),
    kw!("ntp.stratum", Kind::App, Required, p_u8, "NTP stratum"),
    kw!("ntp.mode", Kind::App, Required, p_int_or_name, "NTP mode"),
];

/// Suricata 8 keeps these names only to refuse them.
fn p_obsolete_protoversion(_: &str) -> VResult<Value> {
    verr(0, "ssh.protoversion is obsolete, use now ssh.proto")
}

fn p_obsolete_softwareversion(_: &str) -> VResult<Value> {
    verr(0, "ssh.softwareversion is obsolete, use now ssh.software")
}

fn p_filesize(s: &str) -> VResult<Value> {
    let (off, t) = trim(s);
    for dir in ["to_server", "to_client"] {
        if let Some(rest) = t.strip_prefix(dir).and_then(|r| r.trim_start().strip_prefix(',')) {
            crate::intcmp::IntCmp::parse(rest, u64::MAX).map_err(|e| e.shift(off + t.len() - rest.len()))?;
            return Ok(Value::Text(t.to_string()));
        }
    }
    p_u64(s)
}

fn p_ssl_version(s: &str) -> VResult<Value> {
    let mut out = Vec::new();
    for (at, item) in split_commas(s) {
        let (o, t) = trim(item);
        let name = t.strip_prefix('!').unwrap_or(t);
        if !matches!(name, "sslv2" | "sslv3" | "tls1.0" | "tls1.1" | "tls1.2" | "tls1.3") {
            return verr(at + o, format!("unknown SSL/TLS version '{t}'"));
        }
        out.push(t.to_string());
    }
    Ok(Value::List(out))
}

fn p_ssl_state(s: &str) -> VResult<Value> {
    let (off, t) = trim(s);
    for part in t.split([',', '|']) {
        let name = part.trim().trim_start_matches('!');
        if !matches!(name, "client_hello" | "server_hello" | "client_keyx" | "server_keyx" | "unknown") {
            return verr(off, format!("unknown SSL state '{}'", part.trim()));
        }
    }
    Ok(Value::Text(t.to_string()))
}

/// `filename`, `fileext`, `filemagic`: a content (quoted, `|hex|`, `!` to
/// negate) or a bare word, matched against the file's name or magic.
fn p_file_string(s: &str) -> VResult<Value> {
    let (off, t) = trim(s);
    if t.is_empty() {
        return verr(off, "needs a value");
    }
    if t.starts_with('"') || t.starts_with("!") {
        return Content::parse(s).map(Value::Content);
    }
    Ok(Value::Content(Content { negated: false, bytes: t.as_bytes().to_vec(), inline: Vec::new() }))
}
