use std::fmt;

/// Why a view could not be made over a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireError {
    /// The buffer is shorter than the header (or a length field inside it) says.
    Truncated { need: usize, have: usize },
    /// A header length field is below the protocol's minimum.
    HeaderTooSmall { len: usize, min: usize },
    /// A version field holds a value this view does not decode.
    BadVersion(u8),
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            WireError::Truncated { need, have } => {
                write!(f, "truncated: needs {need} bytes, has {have}")
            }
            WireError::HeaderTooSmall { len, min } => {
                write!(f, "header length {len} below the minimum {min}")
            }
            WireError::BadVersion(v) => write!(f, "unsupported version {v}"),
        }
    }
}

impl std::error::Error for WireError {}

/// Fails unless `buf` holds at least `need` bytes.
#[inline]
pub(crate) fn need(buf: &[u8], need: usize) -> Result<(), WireError> {
    if buf.len() < need {
        Err(WireError::Truncated { need, have: buf.len() })
    } else {
        Ok(())
    }
}
