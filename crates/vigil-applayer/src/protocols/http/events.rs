//! The HTTP anomalies this parser reports, under the names Suricata rules use
//! with `app-layer-event:http.<name>`.

/// One HTTP anomaly. The discriminant is a bit position in a transaction's
/// "already raised" mask, so each fits in a `u64`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Ev {
    GzipDecompressionFailed,
    RequestFieldMissingColon,
    ResponseFieldMissingColon,
    InvalidRequestChunkLen,
    InvalidResponseChunkLen,
    InvalidTransferEncodingValueInRequest,
    ResponseAbnormalTransferEncoding,
    InvalidContentLengthFieldInRequest,
    InvalidContentLengthFieldInResponse,
    Continue100AlreadySeen,
    UnableToMatchResponseToRequest,
    InvalidServerPortInRequest,
    InvalidAuthorityPort,
    RequestHeaderInvalid,
    ResponseHeaderInvalid,
    MissingHostHeader,
    HostHeaderAmbiguous,
    InvalidRequestFieldFolding,
    InvalidResponseFieldFolding,
    RequestFieldTooLong,
    ResponseFieldTooLong,
    RequestUriHostInvalid,
    RequestHeaderHostInvalid,
    UriDelimNonCompliant,
    MethodDelimNonCompliant,
    RequestLineLeadingWhitespace,
    TooManyEncodingLayers,
    AbnormalCeHeader,
    RequestHeaderRepetition,
    ResponseHeaderRepetition,
    ResponseChunkedOldProto,
    ResponseInvalidProtocol,
    ResponseInvalidStatus,
    RequestLineIncomplete,
    DoubleEncodedUri,
    RequestLineInvalid,
    DuplicateContentLengthFieldInRequest,
    DuplicateContentLengthFieldInResponse,
    CompressionBomb,
    RequestLineMissingProtocol,
    RequestTooManyHeaders,
    ResponseTooManyHeaders,
    RequestAuthUnrecognized,
}

impl Ev {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Ev::GzipDecompressionFailed => "http.gzip_decompression_failed",
            Ev::RequestFieldMissingColon => "http.request_field_missing_colon",
            Ev::ResponseFieldMissingColon => "http.response_field_missing_colon",
            Ev::InvalidRequestChunkLen => "http.invalid_request_chunk_len",
            Ev::InvalidResponseChunkLen => "http.invalid_response_chunk_len",
            Ev::InvalidTransferEncodingValueInRequest => "http.invalid_transfer_encoding_value_in_request",
            Ev::ResponseAbnormalTransferEncoding => "http.response_abnormal_transfer_encoding",
            Ev::InvalidContentLengthFieldInRequest => "http.invalid_content_length_field_in_request",
            Ev::InvalidContentLengthFieldInResponse => "http.invalid_content_length_field_in_response",
            Ev::Continue100AlreadySeen => "http.100_continue_already_seen",
            Ev::UnableToMatchResponseToRequest => "http.unable_to_match_response_to_request",
            Ev::InvalidServerPortInRequest => "http.invalid_server_port_in_request",
            Ev::InvalidAuthorityPort => "http.invalid_authority_port",
            Ev::RequestHeaderInvalid => "http.request_header_invalid",
            Ev::ResponseHeaderInvalid => "http.response_header_invalid",
            Ev::MissingHostHeader => "http.missing_host_header",
            Ev::HostHeaderAmbiguous => "http.host_header_ambiguous",
            Ev::InvalidRequestFieldFolding => "http.invalid_request_field_folding",
            Ev::InvalidResponseFieldFolding => "http.invalid_response_field_folding",
            Ev::RequestFieldTooLong => "http.request_field_too_long",
            Ev::ResponseFieldTooLong => "http.response_field_too_long",
            Ev::RequestUriHostInvalid => "http.request_uri_host_invalid",
            Ev::RequestHeaderHostInvalid => "http.request_header_host_invalid",
            Ev::UriDelimNonCompliant => "http.uri_delim_non_compliant",
            Ev::MethodDelimNonCompliant => "http.method_delim_non_compliant",
            Ev::RequestLineLeadingWhitespace => "http.request_line_leading_whitespace",
            Ev::TooManyEncodingLayers => "http.too_many_encoding_layers",
            Ev::AbnormalCeHeader => "http.abnormal_ce_header",
            Ev::RequestHeaderRepetition => "http.request_header_repetition",
            Ev::ResponseHeaderRepetition => "http.response_header_repetition",
            Ev::ResponseChunkedOldProto => "http.response_chunked_old_proto",
            Ev::ResponseInvalidProtocol => "http.response_invalid_protocol",
            Ev::ResponseInvalidStatus => "http.response_invalid_status",
            Ev::RequestLineIncomplete => "http.request_line_incomplete",
            Ev::DoubleEncodedUri => "http.double_encoded_uri",
            Ev::RequestLineInvalid => "http.request_line_invalid",
            Ev::DuplicateContentLengthFieldInRequest => "http.duplicate_content_length_field_in_request",
            Ev::DuplicateContentLengthFieldInResponse => "http.duplicate_content_length_field_in_response",
            Ev::CompressionBomb => "http.compression_bomb",
            Ev::RequestLineMissingProtocol => "http.request_line_missing_protocol",
            Ev::RequestTooManyHeaders => "http.request_too_many_headers",
            Ev::ResponseTooManyHeaders => "http.response_too_many_headers",
            Ev::RequestAuthUnrecognized => "http.request_auth_unrecognized",
        }
    }

    const ALL: [Ev; 43] = [
        Ev::GzipDecompressionFailed,
        Ev::RequestFieldMissingColon,
        Ev::ResponseFieldMissingColon,
        Ev::InvalidRequestChunkLen,
        Ev::InvalidResponseChunkLen,
        Ev::InvalidTransferEncodingValueInRequest,
        Ev::ResponseAbnormalTransferEncoding,
        Ev::InvalidContentLengthFieldInRequest,
        Ev::InvalidContentLengthFieldInResponse,
        Ev::Continue100AlreadySeen,
        Ev::UnableToMatchResponseToRequest,
        Ev::InvalidServerPortInRequest,
        Ev::InvalidAuthorityPort,
        Ev::RequestHeaderInvalid,
        Ev::ResponseHeaderInvalid,
        Ev::MissingHostHeader,
        Ev::HostHeaderAmbiguous,
        Ev::InvalidRequestFieldFolding,
        Ev::InvalidResponseFieldFolding,
        Ev::RequestFieldTooLong,
        Ev::ResponseFieldTooLong,
        Ev::RequestUriHostInvalid,
        Ev::RequestHeaderHostInvalid,
        Ev::UriDelimNonCompliant,
        Ev::MethodDelimNonCompliant,
        Ev::RequestLineLeadingWhitespace,
        Ev::TooManyEncodingLayers,
        Ev::AbnormalCeHeader,
        Ev::RequestHeaderRepetition,
        Ev::ResponseHeaderRepetition,
        Ev::ResponseChunkedOldProto,
        Ev::ResponseInvalidProtocol,
        Ev::ResponseInvalidStatus,
        Ev::RequestLineIncomplete,
        Ev::DoubleEncodedUri,
        Ev::RequestLineInvalid,
        Ev::DuplicateContentLengthFieldInRequest,
        Ev::DuplicateContentLengthFieldInResponse,
        Ev::CompressionBomb,
        Ev::RequestLineMissingProtocol,
        Ev::RequestTooManyHeaders,
        Ev::ResponseTooManyHeaders,
        Ev::RequestAuthUnrecognized,
    ];

    pub(crate) fn bit(self) -> u64 {
        1u64 << (self as u8)
    }

    /// Picks the request or the response flavour of a two-sided anomaly.
    pub(crate) fn sided(request: bool, req: Ev, res: Ev) -> Ev {
        if request {
            req
        } else {
            res
        }
    }
}

/// The bit [`HttpTx::has_events`](super::HttpTx::has_events) tests for
/// the event Suricata names `name` (`http.double_encoded_uri`); `None` for
/// an event this parser never raises.
pub fn event_bit(name: &str) -> Option<u64> {
    Ev::ALL.iter().find(|e| e.name() == name).map(|e| e.bit())
}

#[cfg(test)]
mod tests {
    use super::Ev;

    #[test]
    fn every_event_fits_the_mask_and_is_named_http_dot() {
        assert!((Ev::RequestAuthUnrecognized as u8) < 64);
        assert_eq!(Ev::CompressionBomb.name(), "http.compression_bomb");
        assert!(Ev::RequestLineInvalid.name().starts_with("http."));
    }

    #[test]
    fn names_map_back_to_distinct_bits() {
        for (i, e) in Ev::ALL.iter().enumerate() {
            assert_eq!(*e as usize, i, "ALL is in declaration order");
            assert_eq!(super::event_bit(e.name()), Some(e.bit()));
        }
        assert_eq!(super::event_bit("http.request_auth_nosuch"), None);
    }
}
