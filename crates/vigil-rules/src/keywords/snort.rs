//! Snort 2 and Snort 3 keywords that Suricata does not have. They are
//! recognised (so a Snort rule parses and the report can say exactly why it
//! cannot run) and always reported as errors by the rule checker, with what
//! Suricata offers instead where there is something.

use super::{kw, p_opt_text, KeywordDef, Kind};

macro_rules! snort {
    ($name:literal, $hint:literal) => {
        kw!($name, Kind::Snort($hint), Optional, p_opt_text, $hint)
    };
}

pub(crate) const ROWS: &[KeywordDef] = &[
    snort!("service", "Snort 3 keyword; in Suricata name the protocol in the rule header or use app-layer-protocol"),
    snort!("bufferlen", "Snort 3 keyword; Suricata uses bsize"),
    snort!("raw_data", "Snort 3 buffer; Suricata has no equivalent"),
    snort!("ber_data", "Snort 3 keyword; Suricata has no BER decoder keywords"),
    snort!("ber_skip", "Snort 3 keyword; Suricata has no BER decoder keywords"),
    snort!("js_data", "Snort 3 buffer; Suricata has no normalized JavaScript buffer"),
    snort!("vba_data", "Snort 3 buffer; Suricata has no VBA buffer"),
    snort!("http_param", "Snort 3 buffer; Suricata has no HTTP parameter buffer"),
    snort!("http_raw_body", "Snort 3 buffer; Suricata uses http.request_body/http.response_body"),
    snort!("http_raw_request", "Snort 3 buffer; Suricata uses http.request_line"),
    snort!("http_raw_status", "Snort 3 buffer; Suricata uses http.response_line"),
    snort!("http_raw_trailer", "Snort 3 buffer; Suricata has no trailer buffer"),
    snort!("http_trailer", "Snort 3 buffer; Suricata has no trailer buffer"),
    snort!("http_true_ip", "Snort 3 buffer; Suricata has no true-IP buffer"),
    snort!("http_version", "Snort 3 buffer; Suricata uses http.protocol"),
    snort!("http_raw_cookie", "Snort buffer; Suricata uses http.cookie"),
    snort!("http_encode", "Snort keyword; Suricata has no HTTP encoding check"),
    snort!("http_num_headers", "Snort 3 keyword; Suricata has no header count"),
    snort!("http_num_trailers", "Snort 3 keyword; Suricata has no trailer count"),
    snort!("http_max_header_line", "Snort 3 keyword; Suricata has no header line length"),
    snort!("http_max_trailer_line", "Snort 3 keyword; Suricata has no trailer line length"),
    snort!("http_header_test", "Snort 3 keyword; Suricata has no header test"),
    snort!("http_trailer_test", "Snort 3 keyword; Suricata has no trailer test"),
    snort!("sip_method", "Snort keyword; Suricata uses the sip.method buffer"),
    snort!("sip_stat_code", "Snort keyword; Suricata uses the sip.stat_code buffer"),
    snort!("sip_header", "Snort keyword; Suricata uses the sip.* header buffers"),
    snort!("sip_body", "Snort keyword; Suricata uses the sdp.* buffers"),
    snort!("sd_pattern", "Snort keyword; Suricata has no sensitive-data patterns"),
    snort!("file_type", "Snort 3 keyword; Suricata uses filemagic/file.magic"),
    snort!("file_meta", "Snort 3 keyword; Suricata has no equivalent"),
    snort!("file_id", "Snort 3 keyword; Suricata has no equivalent"),
    snort!("so", "Snort shared-object rule option; Suricata has no shared-object rules"),
    snort!("soid", "Snort shared-object rule id; Suricata has no shared-object rules"),
    snort!("rem", "Snort 3 comment option; Suricata has no equivalent"),
    snort!("appids", "Snort 3 AppId keyword; Suricata uses app-layer-protocol"),
    snort!("regex", "Snort 3 Hyperscan regex; Suricata uses pcre"),
    snort!("md5", "Snort 3 hash keyword; Suricata uses to_md5 with content"),
    snort!("sha256", "Snort 3 hash keyword; Suricata uses to_sha256 with content"),
    snort!("sha512", "Snort 3 hash keyword; Suricata has no SHA-512 transform"),
    snort!("cvs", "Snort keyword; Suricata has no CVS decoder"),
    snort!("gtp_info", "Snort keyword; Suricata has no GTP keywords"),
    snort!("gtp_type", "Snort keyword; Suricata has no GTP keywords"),
    snort!("gtp_version", "Snort keyword; Suricata has no GTP keywords"),
    snort!("modbus_func", "Snort keyword; Suricata uses modbus:function"),
    snort!("modbus_unit", "Snort keyword; Suricata uses modbus:unit"),
    snort!("modbus_data", "Snort keyword; Suricata uses modbus"),
    snort!("s7commplus_func", "Snort keyword; Suricata has no S7comm keywords"),
    snort!("s7commplus_opcode", "Snort keyword; Suricata has no S7comm keywords"),
    snort!("s7commplus_content", "Snort keyword; Suricata has no S7comm keywords"),
    snort!("session", "Snort keyword; Suricata has no session logging keyword"),
    snort!("resp", "Snort keyword; Suricata uses reject actions"),
    snort!("react", "Snort keyword; Suricata uses reject actions"),
    snort!("logto", "Snort keyword; Suricata has no per-rule log files"),
    snort!("activates", "Snort 2 dynamic rules; Suricata has no equivalent (use flowbits)"),
    snort!("activated_by", "Snort 2 dynamic rules; Suricata has no equivalent (use flowbits)"),
    snort!("count", "Snort 2 dynamic rules; Suricata has no equivalent"),
    snort!("pkt_num", "Snort 3 keyword; Suricata uses flow.pkts"),
    snort!("ssl_hello_type", "Snort keyword; Suricata uses ssl_state"),
    snort!("byte_convert", "Snort keyword; Suricata has no byte_convert"),
];
