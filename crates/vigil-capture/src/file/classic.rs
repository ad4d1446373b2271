//! Classic libpcap files: a 24-byte global header, then records of a 16-byte
//! header and `caplen` bytes each.

use pcap_parser::{
    parse_pcap_frame, parse_pcap_frame_be, parse_pcap_frame_modified, parse_pcap_header, LegacyPcapBlock, PcapError,
};
use vigil_types::{LinkType, Timestamp};

use super::window::{Window, MAX_RECORD};
use super::{u32_at, Found};
use crate::CaptureError;

const HEADER_LEN: usize = 24;

// The magic numbers as a little-endian read of the file's first four bytes.
const MICROS_LE: u32 = 0xa1b2_c3d4;
const NANOS_LE: u32 = 0xa1b2_3c4d;
const MODIFIED_LE: u32 = 0xa1b2_cd34;
const MICROS_BE: u32 = MICROS_LE.swap_bytes();
const NANOS_BE: u32 = NANOS_LE.swap_bytes();
const MODIFIED_BE: u32 = MODIFIED_LE.swap_bytes();

/// libpcap refuses records longer than this whatever the snaplen says
/// (its `max_snaplen_for_dlt` for nearly every link type); a file whose
/// snaplen is larger still gets what it declares, up to [`MAX_RECORD`].
const LIBPCAP_MAX_SNAPLEN: u32 = 262_144;

type FrameParser = fn(&[u8]) -> pcap_parser::nom::IResult<&[u8], LegacyPcapBlock<'_>, PcapError<&[u8]>>;

pub(crate) fn is_magic(head: [u8; 4]) -> bool {
    matches!(u32::from_le_bytes(head), MICROS_LE | NANOS_LE | MODIFIED_LE | MICROS_BE | NANOS_BE | MODIFIED_BE)
}

pub(crate) struct Classic {
    big_endian: bool,
    nanos: bool,
    /// Record header length: 16, or 24 in the "modified" (Kuznetzov) format.
    record_header: usize,
    parse: FrameParser,
    linktype: LinkType,
    max_caplen: u32,
}

impl Classic {
    /// Reads and consumes the global header. The caller has seen the magic.
    pub(crate) fn start(w: &mut Window) -> Result<Classic, CaptureError> {
        if !w.fill(HEADER_LEN)? {
            return Err(CaptureError::Truncated {
                path: w.path().to_path_buf(),
                offset: 0,
                what: "pcap file header",
                needed: HEADER_LEN as u64,
                available: w.available() as u64,
            });
        }
        let unsupported = |what: String| CaptureError::Unsupported { path: w.path().to_path_buf(), offset: 0, what };
        let header = match parse_pcap_header(w.data()) {
            Ok((_, header)) => header,
            // pcap-parser knows the modified format only in little-endian.
            Err(_) => return Err(unsupported("big-endian modified pcap format".into())),
        };
        if header.version_major != 2 {
            return Err(unsupported(format!("pcap version {}.{}", header.version_major, header.version_minor)));
        }
        let big_endian = header.is_bigendian();
        let (record_header, parse): (usize, FrameParser) = if header.is_modified_format() {
            (24, parse_pcap_frame_modified)
        } else if big_endian {
            (16, parse_pcap_frame_be)
        } else {
            (16, parse_pcap_frame)
        };
        // The top bits of the link type field carry FCS information, not the
        // type (libpcap's LT_LINKTYPE mask).
        let dlt = (header.network.0 as u32) & 0x03ff_ffff;
        let max_caplen = header.snaplen.max(LIBPCAP_MAX_SNAPLEN).min((MAX_RECORD - record_header) as u32);
        let classic = Classic {
            big_endian,
            nanos: header.is_nanosecond_precision(),
            record_header,
            parse,
            linktype: LinkType::from_dlt(dlt),
            max_caplen,
        };
        w.consume(HEADER_LEN);
        Ok(classic)
    }

    /// Finds the next record; `Ok(None)` when the file ends cleanly between records.
    pub(crate) fn next(&mut self, w: &mut Window) -> Result<Option<Found>, CaptureError> {
        const WHAT: &str = "packet record";
        let offset = w.offset();
        let truncated = |w: &Window, needed: usize| CaptureError::Truncated {
            path: w.path().to_path_buf(),
            offset,
            what: WHAT,
            needed: needed as u64,
            available: w.available() as u64,
        };

        if !w.fill(self.record_header)? {
            return match w.available() {
                0 => Ok(None),
                _ => Err(truncated(w, self.record_header)),
            };
        }
        let caplen = u32_at(w.data(), 8, self.big_endian);
        if caplen > self.max_caplen {
            return Err(CaptureError::TooLarge {
                path: w.path().to_path_buf(),
                offset,
                what: WHAT,
                len: u64::from(caplen),
                limit: u64::from(self.max_caplen),
            });
        }
        let record_len = self.record_header + caplen as usize;
        if !w.fill(record_len)? {
            return Err(truncated(w, record_len));
        }

        let record = w.data().get(..record_len).unwrap_or_default();
        let frame = match (self.parse)(record) {
            Ok((_, frame)) => frame,
            // Unreachable once the record is whole (the parser only reads the
            // fields we checked), but hostile bytes get an error, not a panic.
            Err(_) => {
                return Err(CaptureError::Corrupt {
                    path: w.path().to_path_buf(),
                    offset,
                    what: WHAT,
                    reason: "pcap-parser rejected it".into(),
                })
            }
        };
        let secs = i64::from(frame.ts_sec);
        let ts = if self.nanos {
            Timestamp::from_secs_nanos(secs, frame.ts_usec)
        } else {
            Timestamp::from_micros(secs, frame.ts_usec)
        };
        Ok(Some(Found {
            ts,
            linktype: self.linktype,
            orig_len: frame.origlen,
            iface: 0,
            data: self.record_header..record_len,
            record_len,
        }))
    }
}
