//! The multi-pattern prefilter: one scan of a buffer finds every pattern it
//! contains, so that only the signatures whose fast pattern occurs are
//! verified.
//!
//! Two matchers give identical answers (a test holds them to it):
//! Hyperscan's literal API through the system library (the default, cargo
//! feature `hyperscan`), and daachorse, pure Rust, for machines without
//! Hyperscan (it is x86-only) or `mpm-algo: ac`. A pattern is reported at
//! most once per scan, in no particular order.

mod daac;
#[cfg(feature = "hyperscan")]
mod hyperscan;

use std::fmt;

/// A literal to look for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Pattern {
    pub bytes: Vec<u8>,
    /// ASCII case-insensitive, as Suricata's `nocase`.
    pub nocase: bool,
}

impl Pattern {
    pub fn new(bytes: impl Into<Vec<u8>>, nocase: bool) -> Self {
        Pattern { bytes: bytes.into(), nocase }
    }
}

/// Which matcher a prefilter uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algo {
    /// Hyperscan (`mpm-algo: hs`), when built with the `hyperscan` feature.
    Hyperscan,
    /// daachorse Aho-Corasick (`mpm-algo: ac`).
    AhoCorasick,
}

impl Algo {
    /// The best matcher this build has.
    pub fn best() -> Algo {
        if cfg!(feature = "hyperscan") {
            Algo::Hyperscan
        } else {
            Algo::AhoCorasick
        }
    }

    /// Suricata's `mpm-algo` names: `hs`, `ac` (and its variants), `auto`.
    pub fn from_config(name: &str) -> Result<Algo, String> {
        match name {
            "auto" => Ok(Algo::best()),
            "hs" if cfg!(feature = "hyperscan") => Ok(Algo::Hyperscan),
            "hs" => Err("mpm-algo hs: this build has no Hyperscan (build with the `hyperscan` feature)".into()),
            "ac" | "ac-bs" | "ac-ks" => Ok(Algo::AhoCorasick),
            other => Err(format!("unknown mpm-algo {other:?} (expected auto, hs or ac)")),
        }
    }
}

/// Why a prefilter could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PrefilterError {
    EmptyPattern(u32),
    Unavailable(&'static str),
    Compile(String),
}

impl fmt::Display for PrefilterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PrefilterError::EmptyPattern(id) => write!(f, "pattern {id} is empty"),
            PrefilterError::Unavailable(what) => write!(f, "{what}"),
            PrefilterError::Compile(e) => write!(f, "prefilter compile error: {e}"),
        }
    }
}

impl std::error::Error for PrefilterError {}

/// An immutable matcher over a set of patterns; pattern ids are their
/// indexes in the slice it was built from. Shared by every worker.
pub struct Prefilter {
    inner: Inner,
    len: usize,
}

enum Inner {
    Empty,
    #[cfg(feature = "hyperscan")]
    Hyperscan(hyperscan::HsMatcher),
    AhoCorasick(daac::DaacMatcher),
}

/// Per-worker scan state: Hyperscan's scratch space, the lower-cased copy
/// daachorse scans, and the set of patterns already reported in this scan.
#[derive(Default)]
pub struct Scratch {
    #[cfg(feature = "hyperscan")]
    hs: hyperscan::HsScratch,
    daac: daac::DaacScratch,
}

impl Prefilter {
    pub fn build(patterns: &[Pattern], algo: Algo) -> Result<Prefilter, PrefilterError> {
        if let Some(i) = patterns.iter().position(|p| p.bytes.is_empty()) {
            return Err(PrefilterError::EmptyPattern(i as u32));
        }
        let inner = if patterns.is_empty() {
            Inner::Empty
        } else {
            match algo {
                #[cfg(feature = "hyperscan")]
                Algo::Hyperscan => Inner::Hyperscan(hyperscan::HsMatcher::build(patterns)?),
                #[cfg(not(feature = "hyperscan"))]
                Algo::Hyperscan => return Err(PrefilterError::Unavailable("this build has no Hyperscan")),
                Algo::AhoCorasick => Inner::AhoCorasick(daac::DaacMatcher::build(patterns)?),
            }
        };
        Ok(Prefilter { inner, len: patterns.len() })
    }

    /// How many patterns the prefilter holds.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Calls `on_match` once for each pattern that occurs in `hay`.
    #[inline]
    pub fn scan(&self, scratch: &mut Scratch, hay: &[u8], on_match: &mut dyn FnMut(u32)) {
        match &self.inner {
            Inner::Empty => {}
            #[cfg(feature = "hyperscan")]
            Inner::Hyperscan(m) => m.scan(&mut scratch.hs, hay, on_match),
            Inner::AhoCorasick(m) => m.scan(&mut scratch.daac, hay, on_match),
        }
    }

    /// The ids of the patterns found in `hay`, sorted (for tests and tools).
    pub fn matches(&self, scratch: &mut Scratch, hay: &[u8]) -> Vec<u32> {
        let mut v = Vec::new();
        self.scan(scratch, hay, &mut |id| v.push(id));
        v.sort_unstable();
        v
    }
}
