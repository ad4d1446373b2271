//! How far one side of a transaction got, which detection waits on.

/// Ordered: `None < Headers < Complete`, so "at least headers" is a comparison.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Progress {
    /// Nothing of that side was parsed yet.
    #[default]
    None,
    /// The side's start (HTTP start line and headers, TLS hello) is parsed: its header buffers are final.
    Headers,
    /// The side is complete: every buffer of it is final.
    Complete,
}
