//! The names Suricata writes for the numbers of a client's core data
//! (MS-RDPBCGR 2.2.1.3.2) and the negotiation (2.2.1.1.1, 2.2.1.2.1,
//! 2.2.1.2.2): protocol versions, Windows builds, keyboard layouts (MS-LCID
//! language identifiers), keyboard types, capability flags, connection
//! types, selected protocols and failure codes. A number without a name is
//! written `unknown`, so unusual clients stand out.

pub const UNKNOWN: &str = "unknown";

/// `TS_UD_CS_CORE.version`: RDP 4.0, 5.0 up to 8.1, then 10.0 onwards.
pub fn version(v: u32) -> String {
    match v {
        0x0008_0001 => "v4".into(),
        0x0008_0004 => "v5".into(),
        0x0008_0005..=0x0008_00ff => format!("v10.{}", v - 0x0008_0005),
        _ => UNKNOWN.into(),
    }
}

/// `clientBuild`: the Windows release a build number belongs to.
pub fn build(b: u32) -> &'static str {
    match b {
        528 => "Windows NT 3.1",
        807 => "Windows NT 3.5",
        1057 => "Windows NT 3.51",
        1381 => "Windows NT 4.0",
        2195 => "Windows 2000",
        2600 => "Windows XP",
        3790 => "Windows Server 2003",
        6000..=6003 => "Windows Vista",
        7600 | 7601 => "Windows 7",
        9200 => "Windows 8",
        9600 => "Windows 8.1",
        10240..=19045 => "Windows 10",
        20348 => "Windows Server 2022",
        22000.. => "Windows 11",
        _ => UNKNOWN,
    }
}

/// `keyboardType`.
pub fn keyboard_type(t: u32) -> &'static str {
    match t {
        1 => "xt",
        2 => "ico",
        3 => "at",
        4 => "enhanced",
        5 => "1050",
        6 => "9140",
        7 => "jp",
        _ => UNKNOWN,
    }
}

/// `keyboardLayout`: a language identifier's tag. Layouts with a variant
/// in the high word (`0x0001_0409`, US Dvorak) have none.
pub fn keyboard_layout(l: u32) -> &'static str {
    u16::try_from(l)
        .ok()
        .and_then(|id| LAYOUTS.binary_search_by_key(&id, |&(k, _)| k).ok())
        .map_or(UNKNOWN, |i| LAYOUTS[i].1)
}

/// `highColorDepth` as bits per pixel, else `postBeta2ColorDepth` or
/// `colorDepth` (`RNS_UD_COLOR_*`).
pub fn color_depth(high: Option<u16>, post_beta2: Option<u16>, base: u16) -> Option<u16> {
    let code = |c: u16| match c {
        0xca00 => Some(4),
        0xca01 => Some(8),
        0xca02 => Some(15),
        0xca03 => Some(16),
        0xca04 => Some(24),
        _ => None,
    };
    match high {
        Some(d @ (4 | 8 | 15 | 16 | 24)) => Some(d),
        _ => post_beta2.and_then(code).or_else(|| code(base)),
    }
}

/// `earlyCapabilityFlags`, bit by bit (`RNS_UD_CS_*`).
pub const CAPABILITIES: &[(u16, &str)] = &[
    (0x0001, "support_errinfo_pdf"),
    (0x0002, "want_32bpp_session"),
    (0x0004, "support_statusinfo_pdu"),
    (0x0008, "strong_asymmetric_keys"),
    (0x0020, "valid_connection_type"),
    (0x0040, "support_monitor_layout_pdu"),
    (0x0080, "support_netchar_autodetect"),
    (0x0100, "support_dynvc_gfx_protocol"),
    (0x0200, "support_dynamic_time_zone"),
    (0x0400, "support_heartbeat_pdu"),
];

/// `connectionType`; 0 is "not given" and has no name.
pub fn connection_hint(t: u8) -> Option<&'static str> {
    Some(match t {
        1 => "modem",
        2 => "low_broadband",
        3 => "satellite",
        4 => "high_broadband",
        5 => "wan",
        6 => "lan",
        7 => "autodetect",
        _ => return None,
    })
}

/// `RDP_NEG_RSP.flags`, in the order Suricata writes them (the reserved flag is not).
pub const SERVER_SUPPORTS: &[(u8, &str)] = &[
    (0x01, "extended_client_data"),
    (0x02, "dynvc_gfx"),
    (0x08, "restricted_admin"),
    (0x10, "redirected_authentication"),
];

/// `RDP_NEG_REQ.flags`.
pub const REQUEST_FLAGS: &[(u8, &str)] = &[
    (0x01, "restricted_admin_mode_required"),
    (0x02, "redirected_authentication_mode_required"),
    (0x08, "correlation_info_present"),
];

/// `selectedProtocol`.
pub fn protocol(p: u32) -> Option<&'static str> {
    Some(match p {
        0 => "rdp",
        1 => "ssl",
        2 => "hybrid",
        4 => "rds_tls",
        8 => "hybrid_ex",
        _ => return None,
    })
}

/// `RDP_NEG_FAILURE.failureCode`.
pub fn failure(code: u32) -> Option<&'static str> {
    Some(match code {
        1 => "ssl required by server",
        2 => "ssl not allowed by server",
        3 => "ssl cert not on server",
        4 => "inconsistent flags",
        5 => "hybrid required by server",
        6 => "ssl with user auth required by server",
        _ => return None,
    })
}

/// Language identifiers and their tags, sorted by identifier.
#[rustfmt::skip]
const LAYOUTS: &[(u16, &str)] = &[
    (0x0401, "ar-SA"), (0x0402, "bg-BG"), (0x0403, "ca-ES"), (0x0404, "zh-TW"), (0x0405, "cs-CZ"),
    (0x0406, "da-DK"), (0x0407, "de-DE"), (0x0408, "el-GR"), (0x0409, "en-US"), (0x040a, "es-ES_tradnl"),
    (0x040b, "fi-FI"), (0x040c, "fr-FR"), (0x040d, "he-IL"), (0x040e, "hu-HU"), (0x040f, "is-IS"),
    (0x0410, "it-IT"), (0x0411, "ja-JP"), (0x0412, "ko-KR"), (0x0413, "nl-NL"), (0x0414, "nb-NO"),
    (0x0415, "pl-PL"), (0x0416, "pt-BR"), (0x0417, "rm-CH"), (0x0418, "ro-RO"), (0x0419, "ru-RU"),
    (0x041a, "hr-HR"), (0x041b, "sk-SK"), (0x041c, "sq-AL"), (0x041d, "sv-SE"), (0x041e, "th-TH"),
    (0x041f, "tr-TR"), (0x0420, "ur-PK"), (0x0421, "id-ID"), (0x0422, "uk-UA"), (0x0423, "be-BY"),
    (0x0424, "sl-SI"), (0x0425, "et-EE"), (0x0426, "lv-LV"), (0x0427, "lt-LT"), (0x0428, "tg-Cyrl-TJ"),
    (0x0429, "fa-IR"), (0x042a, "vi-VN"), (0x042b, "hy-AM"), (0x042c, "az-Latn-AZ"), (0x042d, "eu-ES"),
    (0x042e, "hsb-DE"), (0x042f, "mk-MK"), (0x0432, "tn-ZA"), (0x0434, "xh-ZA"), (0x0435, "zu-ZA"),
    (0x0436, "af-ZA"), (0x0437, "ka-GE"), (0x0438, "fo-FO"), (0x0439, "hi-IN"), (0x043a, "mt-MT"),
    (0x043b, "se-NO"), (0x043e, "ms-MY"), (0x043f, "kk-KZ"), (0x0440, "ky-KG"), (0x0441, "sw-KE"),
    (0x0442, "tk-TM"), (0x0443, "uz-Latn-UZ"), (0x0444, "tt-RU"), (0x0445, "bn-IN"), (0x0446, "pa-IN"),
    (0x0447, "gu-IN"), (0x0448, "or-IN"), (0x0449, "ta-IN"), (0x044a, "te-IN"), (0x044b, "kn-IN"),
    (0x044c, "ml-IN"), (0x044d, "as-IN"), (0x044e, "mr-IN"), (0x044f, "sa-IN"), (0x0450, "mn-MN"),
    (0x0451, "bo-CN"), (0x0452, "cy-GB"), (0x0453, "km-KH"), (0x0454, "lo-LA"), (0x0456, "gl-ES"),
    (0x0457, "kok-IN"), (0x045a, "syr-SY"), (0x045b, "si-LK"), (0x045d, "iu-Cans-CA"), (0x045e, "am-ET"),
    (0x0461, "ne-NP"), (0x0462, "fy-NL"), (0x0463, "ps-AF"), (0x0464, "fil-PH"), (0x0465, "dv-MV"),
    (0x0468, "ha-Latn-NG"), (0x046a, "yo-NG"), (0x046b, "quz-BO"), (0x046c, "nso-ZA"), (0x046d, "ba-RU"),
    (0x046e, "lb-LU"), (0x046f, "kl-GL"), (0x0470, "ig-NG"), (0x0478, "ii-CN"), (0x047a, "arn-CL"),
    (0x047c, "moh-CA"), (0x047e, "br-FR"), (0x0480, "ug-CN"), (0x0481, "mi-NZ"), (0x0482, "oc-FR"),
    (0x0483, "co-FR"), (0x0484, "gsw-FR"), (0x0485, "sah-RU"), (0x0486, "qut-GT"), (0x0487, "rw-RW"),
    (0x0488, "wo-SN"), (0x048c, "prs-AF"), (0x0801, "ar-IQ"), (0x0804, "zh-CN"), (0x0807, "de-CH"),
    (0x0809, "en-GB"), (0x080a, "es-MX"), (0x080c, "fr-BE"), (0x0810, "it-CH"), (0x0813, "nl-BE"),
    (0x0814, "nn-NO"), (0x0816, "pt-PT"), (0x081a, "sr-Latn-CS"), (0x081d, "sv-FI"), (0x082c, "az-Cyrl-AZ"),
    (0x083b, "se-SE"), (0x083e, "ms-BN"), (0x0843, "uz-Cyrl-UZ"), (0x0845, "bn-BD"), (0x0850, "mn-Mong-CN"),
    (0x085d, "iu-Latn-CA"), (0x086b, "quz-EC"), (0x0c01, "ar-EG"), (0x0c04, "zh-HK"), (0x0c07, "de-AT"),
    (0x0c09, "en-AU"), (0x0c0a, "es-ES"), (0x0c0c, "fr-CA"), (0x0c1a, "sr-Cyrl-CS"), (0x0c3b, "se-FI"),
    (0x0c6b, "quz-PE"), (0x1001, "ar-LY"), (0x1004, "zh-SG"), (0x1007, "de-LU"), (0x1009, "en-CA"),
    (0x100a, "es-GT"), (0x100c, "fr-CH"), (0x101a, "hr-BA"), (0x1401, "ar-DZ"), (0x1404, "zh-MO"),
    (0x1407, "de-LI"), (0x1409, "en-NZ"), (0x140a, "es-CR"), (0x140c, "fr-LU"), (0x1801, "ar-MA"),
    (0x1809, "en-IE"), (0x180a, "es-PA"), (0x180c, "fr-MC"), (0x1c01, "ar-TN"), (0x1c09, "en-ZA"),
    (0x1c0a, "es-DO"), (0x2001, "ar-OM"), (0x2009, "en-JM"), (0x200a, "es-VE"), (0x2401, "ar-YE"),
    (0x2409, "en-029"), (0x240a, "es-CO"), (0x2801, "ar-SY"), (0x2809, "en-BZ"), (0x280a, "es-PE"),
    (0x2c01, "ar-JO"), (0x2c09, "en-TT"), (0x2c0a, "es-AR"), (0x3001, "ar-LB"), (0x3009, "en-ZW"),
    (0x300a, "es-EC"), (0x3401, "ar-KW"), (0x3409, "en-PH"), (0x340a, "es-CL"), (0x3801, "ar-AE"),
    (0x380a, "es-UY"), (0x3c01, "ar-BH"), (0x3c0a, "es-PY"), (0x4001, "ar-QA"), (0x4009, "en-IN"),
    (0x400a, "es-BO"), (0x4409, "en-MY"), (0x440a, "es-SV"), (0x4809, "en-SG"), (0x480a, "es-HN"),
    (0x4c0a, "es-NI"), (0x500a, "es-PR"), (0x540a, "es-US"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_the_numbers() {
        assert!(LAYOUTS.windows(2).all(|w| w[0].0 < w[1].0), "sorted for the search");
        assert_eq!(keyboard_layout(0x409), "en-US");
        assert_eq!(keyboard_layout(0x0004_041e), UNKNOWN, "a layout variant");
        assert_eq!(version(0x0008_0004), "v5");
        assert_eq!(version(0x0008_000c), "v10.7");
        assert_eq!(build(2600), "Windows XP");
        assert_eq!(build(9600), "Windows 8.1");
        assert_eq!(color_depth(Some(15), Some(0xca01), 0xca01), Some(15));
        assert_eq!(color_depth(None, None, 0xca01), Some(8));
        assert_eq!(color_depth(Some(3), Some(0xca03), 0xca01), Some(16), "an odd high depth falls back");
    }
}
