//! SMB over TCP, detected but not parsed, on any port: a flow whose first
//! NetBIOS session message carries an SMB1, SMB2 or SMB3-transform header
//! speaks `smb`. On port 139 the session service's control messages (the
//! session request and its answer) may come first; elsewhere a first byte
//! like theirs is more likely a WebSocket frame. Rules written `alert smb ...` with
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

/// Control messages of the NetBIOS session service that may come first on port 139.
const MAX_CONTROL: usize = 2;

/// Probes the first bytes of one direction of a TCP flow: a session
/// message (type 0) whose payload starts with an SMB protocol id.
pub fn probe_tcp(data: &[u8]) -> SmbProbe {
    probe(data, 0)
}

/// [`probe_tcp`] for a flow on port 139, where control messages may come first.
pub fn probe_tcp_netbios(data: &[u8]) -> SmbProbe {
    probe(data, MAX_CONTROL)
}

fn probe(mut data: &[u8], control: usize) -> SmbProbe {
    for _ in 0..=control {
        match data.first() {
            None => return SmbProbe::NeedMore,
            Some(0) => return session_message(data),
            // Session request, positive/negative response, retarget, keepalive.
            Some(0x81..=0x85) if control > 0 => {
                let Some(h) = data.get(..4) else { return SmbProbe::NeedMore };
                let len = 4 + ((usize::from(h[1]) & 1) << 16 | usize::from(h[2]) << 8 | usize::from(h[3]));
                match data.get(len..) {
                    Some(rest) => data = rest,
                    None => return SmbProbe::NeedMore,
                }
            }
            Some(_) => return SmbProbe::No,
        }
    }
    SmbProbe::No
}

/// A session message: its payload must start with an SMB protocol id.
fn session_message(data: &[u8]) -> SmbProbe {
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
        assert_eq!(probe_tcp(b"\x86\x00\x00\x44"), SmbProbe::No);
        assert_eq!(probe_tcp(b"\x00\x00"), SmbProbe::NeedMore);
        assert_eq!(probe_tcp(b"\x00\x00\x00\x40\xfeS"), SmbProbe::NeedMore);
        assert_eq!(probe_tcp(b""), SmbProbe::NeedMore);
    }

    #[test]
    fn a_port_139_session_request_comes_first() {
        let mut d = vec![0x81, 0, 0, 4, 1, 2, 3, 4];
        assert_eq!(probe_tcp_netbios(&d), SmbProbe::NeedMore);
        assert_eq!(probe_tcp(&d), SmbProbe::No, "elsewhere such a byte starts no SMB");
        d.extend_from_slice(b"\x00\x00\x00\x40\xffSMB");
        assert_eq!(probe_tcp_netbios(&d), SmbProbe::Match);
        // The positive answer has no body.
        assert_eq!(probe_tcp_netbios(b"\x82\x00\x00\x00\x00\x00\x00\x40\xfeSMB"), SmbProbe::Match);
        assert_eq!(probe_tcp_netbios(b"\x82\x00\x00\x00\x82\x00\x00\x00\x82\x00\x00\x00"), SmbProbe::No);
        assert_eq!(probe_tcp_netbios(b"\x81\x00\x00\x44"), SmbProbe::NeedMore);
    }
}
