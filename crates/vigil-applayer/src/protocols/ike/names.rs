//! The names Suricata's IKE records give payloads, exchanges, SA
//! attributes and their values.

/// Payload type names, IKEv1 (1-21) and IKEv2 (33-48).
pub fn payload(t: u8) -> String {
    let name = match t {
        1 => "SecurityAssociation",
        2 => "Proposal",
        3 => "Transform",
        4 => "KeyExchange",
        5 => "Identification",
        6 => "Certificate",
        7 => "CertificateRequest",
        8 => "Hash",
        9 => "Signature",
        10 => "Nonce",
        11 => "Notification",
        12 => "Delete",
        13 => "VendorID",
        20 => "NatDiscovery",
        21 => "NatOriginalAddress",
        33 => "SecurityAssociation",
        34 => "KeyExchange",
        35 => "IdentInitiator",
        36 => "IdentResponder",
        37 => "Certificate",
        38 => "CertificateRequest",
        39 => "Authentication",
        40 => "Nonce",
        41 => "Notify",
        42 => "Delete",
        43 => "VendorID",
        44 => "TrafficSelectorInitiator",
        45 => "TrafficSelectorResponder",
        46 => "EncryptedAndAuthenticated",
        47 => "Configuration",
        48 => "ExtensibleAuthentication",
        n => return format!("Unknown({n})"),
    };
    name.into()
}

pub fn exchange(major: u8, t: u8) -> String {
    let name = match (major, t) {
        (1, 0) => "None",
        (1, 1) => "Base",
        (1, 2) => "Identity Protection",
        (1, 3) => "Authentication Only",
        (1, 4) => "Aggressive",
        (1, 5) => "Informational",
        (1, 6) => "Transaction (Config Mode)",
        (1, 32) => "Quick Mode",
        (1, 33) => "New Group Mode",
        (2, 34) => "IKE_SA_INIT",
        (2, 35) => "IKE_AUTH",
        (2, 36) => "CREATE_CHILD_SA",
        (2, 37) => "INFORMATIONAL",
        (_, n) => return format!("Unknown({n})"),
    };
    name.into()
}

/// IKEv1 SA attribute keys, as `ike.chosen_sa_attribute` and the records name them.
pub fn v1_key(kind: u16) -> Option<&'static str> {
    Some(match kind {
        1 => "alg_enc",
        2 => "alg_hash",
        3 => "alg_auth",
        4 => "alg_dh",
        5 => "sa_group_type",
        6 => "sa_group_prime",
        7 => "sa_group_generator_one",
        8 => "sa_group_generator_two",
        9 => "sa_group_curve_a",
        10 => "sa_group_curve_b",
        11 => "sa_life_type",
        12 => "sa_life_duration",
        13 => "alg_prf",
        14 => "sa_key_length",
        15 => "sa_field_size",
        16 => "sa_group_order",
        _ => return None,
    })
}

/// An IKEv1 attribute value's name (`Unknown` for the numeric ones).
pub fn v1_value(kind: u16, v: u64) -> &'static str {
    match (kind, v) {
        (1, 1) => "EncDesCbc",
        (1, 2) => "EncIdeaCbc",
        (1, 3) => "EncBlowfishCbc",
        (1, 4) => "EncRc5R16B64Cbc",
        (1, 5) => "EncTripleDesCbc",
        (1, 6) => "EncCastCbc",
        (1, 7) => "EncAesCbc",
        (1, 8) => "EncCamelliaCbc",
        (2, 1) => "HashMd5",
        (2, 2) => "HashSha",
        (2, 3) => "HashTiger",
        (2, 4) => "HashSha2_256",
        (2, 5) => "HashSha2_384",
        (2, 6) => "HashSha2_512",
        (3, 1) => "AuthPreSharedKey",
        (3, 2) => "AuthDssSignatures",
        (3, 3) => "AuthRsaSignatures",
        (3, 4) => "AuthEncryptionWithRsa",
        (3, 5) => "AuthRevisedEncryptionWithRsa",
        (3, 9) => "AuthEcdsaSha256P256Curve",
        (3, 10) => "AuthEcdsaSha384P384Curve",
        (3, 11) => "AuthEcdsaSha512P521Curve",
        (4, 1) => "GroupDefault768BitModp",
        (4, 2) => "GroupAlternate1024BitModpGroup",
        (4, 3) => "GroupEc2nOnGp2p155",
        (4, 4) => "GroupEc2nOnGp2p185",
        (4, 5) => "GroupModp1536Bit",
        (4, 14) => "GroupModp2048Bit",
        (4, 15) => "GroupModp3072Bit",
        (4, 16) => "GroupModp4096Bit",
        (4, 17) => "GroupModp6144Bit",
        (4, 18) => "GroupModp8192Bit",
        (4, 19) => "GroupRandomEcp256",
        (4, 20) => "GroupRandomEcp384",
        (4, 21) => "GroupRandomEcp521",
        (11, 1) => "LifeTypeSeconds",
        (11, 2) => "LifeTypeKilobytes",
        _ => "Unknown",
    }
}

/// IKEv2 transform types as keys (`0x100 | 14`: an encryption transform's key length).
pub fn v2_key(kind: u16) -> Option<&'static str> {
    Some(match kind {
        1 => "alg_enc",
        2 => "alg_prf",
        3 => "alg_auth",
        4 => "alg_dh",
        5 => "sa_esn",
        0x10e => "sa_key_length",
        _ => return None,
    })
}

/// Whether an IKEv2 transform is one Suricata calls weak: its event's name.
pub fn v2_weak(kind: u16, v: u64) -> Option<&'static str> {
    match (kind, v) {
        (1, 1..=9 | 11) => Some("weak_crypto_enc"),
        (2, 1 | 3) => Some("weak_crypto_prf"),
        (3, 0) => Some("weak_crypto_no_auth"),
        (3, 1 | 3 | 4 | 6) => Some("weak_crypto_auth"),
        (4, 0) => Some("weak_crypto_no_dh"),
        (4, 1 | 2 | 22) => Some("weak_crypto_dh"),
        _ => None,
    }
}

/// IKEv2 notify message type names.
pub fn notify(t: u16) -> String {
    let name = match t {
        1 => "UNSUPPORTED_CRITICAL_PAYLOAD",
        4 => "INVALID_IKE_SPI",
        5 => "INVALID_MAJOR_VERSION",
        7 => "INVALID_SYNTAX",
        9 => "INVALID_MESSAGE_ID",
        11 => "INVALID_SPI",
        14 => "NO_PROPOSAL_CHOSEN",
        17 => "INVALID_KE_PAYLOAD",
        24 => "AUTHENTICATION_FAILED",
        34 => "SINGLE_PAIR_REQUIRED",
        35 => "NO_ADDITIONAL_SAS",
        36 => "INTERNAL_ADDRESS_FAILURE",
        37 => "FAILED_CP_REQUIRED",
        38 => "TS_UNACCEPTABLE",
        39 => "INVALID_SELECTORS",
        43 => "TEMPORARY_FAILURE",
        44 => "CHILD_SA_NOT_FOUND",
        16384 => "INITIAL_CONTACT",
        16385 => "SET_WINDOW_SIZE",
        16386 => "ADDITIONAL_TS_POSSIBLE",
        16387 => "IPCOMP_SUPPORTED",
        16388 => "NAT_DETECTION_SOURCE_IP",
        16389 => "NAT_DETECTION_DESTINATION_IP",
        16390 => "COOKIE",
        16391 => "USE_TRANSPORT_MODE",
        16392 => "HTTP_CERT_LOOKUP_SUPPORTED",
        16393 => "REKEY_SA",
        16394 => "ESP_TFC_PADDING_NOT_SUPPORTED",
        16395 => "NON_FIRST_FRAGMENTS_ALSO",
        16404 => "MULTIPLE_AUTH_SUPPORTED",
        16406 => "EAP_ONLY_AUTHENTICATION",
        16417 => "IKEV2_MESSAGE_ID_SYNC_SUPPORTED",
        16430 => "IKEV2_FRAGMENTATION_SUPPORTED",
        16431 => "SIGNATURE_HASH_ALGORITHMS",
        n => return n.to_string(),
    };
    name.into()
}
