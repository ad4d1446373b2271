//! SMB over TCP (ports 445 and 139), detected but not parsed: a flow whose
//! first bytes are a NetBIOS session message carrying an SMB1, SMB2 or
//! SMB3-transform header speaks `smb`. Rules written `alert smb ...` with
//! payload keywords then apply to it; the `smb.*` keywords and file
//! extraction, which need the parsed commands, are not run yet.
//!
//! ```
//! use vigil_applayer::smb::{probe_tcp, SmbProbe};
//! let negotiate = [0, 0, 0, 0x2f, 0xff, b'S', b'M', b'B', 0x72];
//! assert_eq!(probe_tcp(&negotiate), SmbProbe::Match);
//! assert_eq!(probe_tcp(&negotiate[..5]), SmbProbe::NeedMore);
//! assert_eq!(probe_tcp(b"\x00\x00\x00\x10HTTP"), SmbProbe::No);
//! ```

/// What the first bytes of a direction say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SmbProbe {
    Match,
    NeedMore,
    No,
}

/// The protocol ids of SMB1 (`\xffSMB`), SMB2/3 (`\xfeSMB`) and an SMB3
/// transform header (`\xfdSMB`).
const MAGICS: [[u8; 4]; 3] = [*b"\xffSMB", *b"\xfeSMB", *b"\xfdSMB"];

/// Probes the first bytes of one direction of a TCP flow: a session
/// message (type 0) whose payload starts with an SMB protocol id.
pub fn probe_tcp(data: &[u8]) -> SmbProbe {
    match data.first() {
        None => return SmbProbe::NeedMore,
        Some(0) => {}
        Some(_) => return SmbProbe::No,
    }
    let magic = data.get(4..).unwrap_or_default();
    let n = magic.len().min(4);
    if !MAGICS.iter().any(|m| m[..n] == magic[..n]) {
        return SmbProbe::No;
    }
    if n < 4 {
        return SmbProbe::NeedMore;
    }
    SmbProbe::Match
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_dialect_is_found_and_nothing_else() {
        for m in MAGICS {
            let mut d = vec![0, 0, 0, 0x40];
            d.extend_from_slice(&m);
            assert_eq!(probe_tcp(&d), SmbProbe::Match);
        }
        assert_eq!(probe_tcp(b"\x00\x00\x00\x40\xffSMX"), SmbProbe::No);
        assert_eq!(probe_tcp(b"\x81\x00\x00\x44"), SmbProbe::No);
        assert_eq!(probe_tcp(b"\x00\x00"), SmbProbe::NeedMore);
        assert_eq!(probe_tcp(b"\x00\x00\x00\x40\xfeS"), SmbProbe::NeedMore);
        assert_eq!(probe_tcp(b""), SmbProbe::NeedMore);
    }
}
